// The C++ Transformer modules: options, forward shapes, PyTorch's state_dict keys, the fused
// inference path against the composite one (train mode with dropout 0), the packed path of
// TransformerEncoder, and _add_layer_norm against layer_norm(x + r). The Python suite compares
// the same modules with PyTorch 1.13.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/modules/transformer.h"

using namespace ember;
namespace nn = ember::nn;

namespace {

void expect_close(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec());
  if (a.numel() == 0) return;
  EXPECT_LE((a.to(kDouble) - b.to(kDouble)).abs().max().item<double>(), tol);
}

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> k;
  for (const auto& item : m.named_parameters()) k.push_back(item.key());
  return k;
}

}  // namespace

TEST(Transformer, OptionsDefaults) {
  nn::TransformerEncoderLayerOptions o(16, 4);
  EXPECT_EQ(o.dim_feedforward(), 2048);
  EXPECT_DOUBLE_EQ(o.dropout(), 0.1);
  EXPECT_DOUBLE_EQ(o.layer_norm_eps(), 1e-5);
  EXPECT_FALSE(o.batch_first());
  EXPECT_FALSE(o.norm_first());
  EXPECT_TRUE(std::holds_alternative<enumtype::kReLU>(o.activation()));
  o.activation(ember::kGELU).dim_feedforward(32).norm_first(true);
  EXPECT_TRUE(std::holds_alternative<enumtype::kGELU>(o.activation()));
  nn::TransformerOptions t(32, 4, 2, 3);
  EXPECT_EQ(t.num_encoder_layers(), 2);
  EXPECT_EQ(t.num_decoder_layers(), 3);
}

TEST(Transformer, EncoderLayerKeysAndShapes) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  std::vector<std::string> want = {"self_attn.in_proj_weight",
                                   "self_attn.in_proj_bias",
                                   "self_attn.out_proj.weight",
                                   "self_attn.out_proj.bias",
                                   "linear1.weight",
                                   "linear1.bias",
                                   "linear2.weight",
                                   "linear2.bias",
                                   "norm1.weight",
                                   "norm1.bias",
                                   "norm2.weight",
                                   "norm2.bias"};
  EXPECT_EQ(keys(*layer), want);
  EXPECT_EQ(layer->self_attn->in_proj_weight.sizes().vec(), (std::vector<int64_t>{24, 8}));
  EXPECT_EQ(layer->linear1->weight.sizes().vec(), (std::vector<int64_t>{16, 8}));
  Tensor x = randn({5, 3, 8});
  EXPECT_EQ(layer(x).sizes().vec(), (std::vector<int64_t>{5, 3, 8}));
  EXPECT_EQ(layer(randn({5, 8})).sizes().vec(), (std::vector<int64_t>{5, 8}));
}

TEST(Transformer, DecoderAndFullModelKeys) {
  nn::Transformer t(nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16).dropout(0.0));
  auto k = keys(*t);
  EXPECT_EQ(k.front(), "encoder.layers.0.self_attn.in_proj_weight");
  EXPECT_NE(std::find(k.begin(), k.end(), "encoder.layers.1.norm2.bias"), k.end());
  EXPECT_NE(std::find(k.begin(), k.end(), "encoder.norm.weight"), k.end());
  EXPECT_NE(std::find(k.begin(), k.end(), "decoder.layers.0.multihead_attn.out_proj.weight"),
            k.end());
  EXPECT_NE(std::find(k.begin(), k.end(), "decoder.layers.0.norm3.weight"), k.end());
  EXPECT_EQ(k.back(), "decoder.norm.bias");
  Tensor src = randn({6, 2, 8}), tgt = randn({4, 2, 8});
  Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(4);
  EXPECT_TRUE(std::isinf(mask[0][1].item<double>()));
  EXPECT_EQ(mask[1][0].item<double>(), 0.0);
  Tensor out = t(src, tgt, Tensor(), mask);
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{4, 2, 8}));
  EXPECT_THROW(t(src, randn({4, 3, 8})), ember::Error);
}

TEST(Transformer, EncoderClonesLayers) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(layer, 3).norm(
      nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
  EXPECT_EQ(enc->layers->size(), 3u);
  auto p = enc->parameters();
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i + 1; j < p.size(); ++j) EXPECT_NE(p[i].data_ptr(), p[j].data_ptr());
  EXPECT_EQ(keys(*enc).back(), "norm.bias");
}

class FastPath : public ::testing::TestWithParam<std::tuple<bool, bool, int>> {};

TEST_P(FastPath, MatchesSlowPath) {
  auto [gelu, norm_first, mask_kind] = GetParam();
  manual_seed(0);
  nn::TransformerEncoderLayerOptions o(8, 2);
  o.dim_feedforward(16).dropout(0.0).batch_first(true).norm_first(norm_first);
  if (gelu) o.activation(ember::kGELU);
  nn::TransformerEncoderLayer layer(o);
  Tensor x = randn({3, 5, 8});
  Tensor kpm;
  if (mask_kind > 0) {
    kpm = zeros({3, 5}, TensorOptions(kBool));
    kpm.narrow(1, 3, 2).select(0, 1).fill_(true);
    if (mask_kind == 2) kpm = zeros({3, 5}).masked_fill(kpm, -INFINITY);
  }
  NoGradGuard g;
  layer->train();  // dropout 0: the composite path, deterministic
  EXPECT_FALSE(layer->fast_path_blocker(x, {}, kpm).empty());
  Tensor slow = layer(x, Tensor(), kpm);
  layer->eval();
  EXPECT_TRUE(layer->fast_path_blocker(x, {}, kpm).empty());
  Tensor fast = layer(x, Tensor(), kpm);
  expect_close(fast, slow, 2e-5);
  // The same layer on packed rows gives the slow path's values at the real positions.
  if (mask_kind == 1) {
    auto [packed, lengths] = _transformer_pack_padded(x, kpm);
    Tensor out = _transformer_unpack_padded(layer->forward_packed(packed, lengths), kpm);
    Tensor keep = logical_not(kpm).unsqueeze(-1);
    expect_close(out, slow.masked_fill(logical_not(keep), 0.0), 2e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Transformer, FastPath,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(0, 1, 2)));

TEST(Transformer, EncoderPacksPadding) {
  manual_seed(0);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0).batch_first(true));
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(layer, 2));
  Tensor x = randn({3, 6, 8});
  Tensor kpm = zeros({3, 6}, TensorOptions(kBool));
  kpm.select(0, 0).narrow(0, 4, 2).fill_(true);
  kpm.select(0, 2).narrow(0, 1, 5).fill_(true);
  NoGradGuard g;
  enc->train();
  Tensor slow = enc(x, Tensor(), kpm);
  enc->eval();
  Tensor fast = enc(x, Tensor(), kpm);
  Tensor pad = kpm.unsqueeze(-1).expand({3, 6, 8});
  EXPECT_EQ(fast.masked_select(pad).abs().sum().item<double>(), 0.0);
  expect_close(fast, slow.masked_fill(pad, 0.0), 2e-5);
}

TEST(Transformer, FastPathRefusesGrad) {
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).batch_first(true));
  layer->eval();
  Tensor x = randn({2, 3, 8});
  EXPECT_FALSE(layer->fast_path_blocker(x, {}, {}).empty());  // parameters require grad
  Tensor y = layer(x);
  EXPECT_TRUE(y.requires_grad());
  auto* l = layer.get();
  EXPECT_THROW(_transformer_encoder_layer_fwd(
                   x, 8, 2, l->self_attn->in_proj_weight, l->self_attn->in_proj_bias,
                   l->self_attn->out_proj->weight, l->self_attn->out_proj->bias, false, false, 1e-5,
                   l->norm1->weight, l->norm1->bias, l->norm2->weight, l->norm2->bias,
                   l->linear1->weight, l->linear1->bias, l->linear2->weight, l->linear2->bias),
               ember::Error);
}

TEST(Transformer, AddLayerNorm) {
  for (ScalarType dt : {kFloat, kDouble, kBFloat16}) {
    Tensor x = randn({7, 33}).to(dt), r = randn({7, 33}).to(dt);
    Tensor w = randn({33}).to(dt), b = randn({33}).to(dt);
    NoGradGuard g;
    Tensor y = _add_layer_norm(x, r, {33}, w, b, 1e-5);
    EXPECT_EQ(y.dtype(), dt);
    Tensor ref =
        layer_norm((x.to(kDouble) + r.to(kDouble)), {33}, w.to(kDouble), b.to(kDouble), 1e-5);
    expect_close(y, ref, dt == kBFloat16 ? 5e-2 : (dt == kFloat ? 1e-5 : 1e-12));
  }
  Tensor x = randn({2, 4});
  EXPECT_THROW(_add_layer_norm(x, x.to(kDouble), {4}, {}, {}, 1e-5), ember::TypeError);
  EXPECT_THROW(_add_layer_norm(x, x, {3}, {}, {}, 1e-5), ember::Error);
}
