// The C++ nn layers (conv, pooling, normalization, dropout, embedding, losses, resampling,
// padding, distances, recurrent): shapes, values against the underlying ops or hand-computed
// cases, PyTorch 1.13's reprs and state_dict keys (strings pasted from torch 1.13), train/eval,
// clone() and option checks.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ember/conv.h"
#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/nn_ops.h"
#include "ember/rnn.h"
#include "ember/shape_ops.h"

using namespace ember;
namespace nn = ember::nn;
namespace F = ember::nn::functional;

namespace {
std::vector<double> vals(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

void expect_vals(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  auto v = vals(t);
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], tol) << "at " << i;
}

void expect_close(const Tensor& a, const Tensor& b, double tol = 1e-6) {
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec());
  auto va = vals(a), vb = vals(b);
  for (size_t i = 0; i < va.size(); ++i)
    EXPECT_NEAR(va[i], vb[i], tol * (1 + std::abs(vb[i]))) << "at " << i;
}

// PyTorch's Python repr (extra_repr); libtorch's C++ printing is checked in test_nn_print.cpp.
template <typename M>
std::string repr(const M& m) {
  return nn::python_repr(*m);
}

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> k;
  for (const auto& item : m.state_dict()) k.push_back(item.key());
  return k;
}

double max_abs(const Tensor& t) { return abs(t).max().item<double>(); }

Tensor dtensor(std::vector<double> v, std::vector<int64_t> shape) {
  return tensor(v, TensorOptions(kDouble)).reshape(shape);
}

// The deterministic inputs and weights of the torch 1.13 oracle script (values pasted below):
//   def inp(*shape, s=0.3): return (torch.arange(prod(shape)) * s).cos().reshape(shape)
//   def fill(m): parameter i (named_parameters order) = (arange(numel) * 0.1 + i).sin() * 0.5
Tensor inp(std::vector<int64_t> shape, double s = 0.3) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return (arange(n, TensorOptions(kDouble)) * s).cos().reshape(shape);
}

void fill(nn::Module& m) {
  NoGradGuard g;
  int64_t i = 0;
  for (const auto& item : m.named_parameters()) {
    Tensor p = item.value();
    Tensor v = ((arange(p.numel(), TensorOptions(kDouble)) * 0.1 + double(i++)).sin() * 0.5);
    p.copy_(v.reshape(p.sizes().vec()));
  }
}

// Modules built inside get float64 parameters (the oracle runs in float64).
struct DoubleDefault {
  DoubleDefault() { set_default_dtype(kDouble); }
  ~DoubleDefault() { set_default_dtype(kFloat); }
};
}  // namespace

// ---------------------------------------------------------------- convolution

TEST(NNLayersConv, ReprMatchesTorch) {
  EXPECT_EQ(repr(nn::Conv2d(1, 32, 3)), "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(repr(nn::Conv1d(nn::Conv1dOptions(2, 4, 3)
                                .stride(2)
                                .padding(1)
                                .dilation(2)
                                .groups(2)
                                .bias(false)
                                .padding_mode(kReflect))),
            "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, "
            "bias=False, padding_mode=reflect)");
  EXPECT_EQ(repr(nn::Conv3d(nn::Conv3dOptions(2, 2, {1, 2, 3}).padding(kSame))),
            "Conv3d(2, 2, kernel_size=(1, 2, 3), stride=(1, 1, 1), padding=same)");
  EXPECT_EQ(
      repr(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 3, 3).stride(2).output_padding(1))),
      "ConvTranspose2d(2, 3, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))");
}

TEST(NNLayersConv, ParametersAndInit) {
  nn::Conv2d conv(nn::Conv2dOptions(4, 8, {3, 5}).groups(2));
  EXPECT_EQ(conv->weight.sizes().vec(), (std::vector<int64_t>{8, 2, 3, 5}));
  EXPECT_EQ(conv->bias.sizes().vec(), (std::vector<int64_t>{8}));
  EXPECT_TRUE(conv->weight.requires_grad());
  EXPECT_EQ(keys(*conv), (std::vector<std::string>{"weight", "bias"}));
  // kaiming_uniform_(a = sqrt(5)) and the bias are both U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  double bound = 1.0 / std::sqrt(2.0 * 3 * 5);
  EXPECT_LE(max_abs(conv->weight), bound);
  EXPECT_GT(max_abs(conv->weight), 0.8 * bound);
  EXPECT_LE(max_abs(conv->bias), bound);
  nn::Conv2d nobias(nn::Conv2dOptions(1, 2, 2).bias(false));
  EXPECT_FALSE(nobias->bias.defined());
  EXPECT_EQ(keys(*nobias), (std::vector<std::string>{"weight"}));
  nn::ConvTranspose2d tconv(nn::ConvTranspose2dOptions(4, 6, 3).groups(2));
  EXPECT_EQ(tconv->weight.sizes().vec(), (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_LE(max_abs(tconv->weight), 1.0 / std::sqrt(27.0));
}

TEST(NNLayersConv, ForwardMatchesOp) {
  manual_seed(0);
  nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3).stride(2).padding(1).dilation(1));
  Tensor x = randn({2, 3, 7, 6});
  Tensor y = conv(x);
  expect_close(y, conv2d(x, conv->weight, conv->bias, 2, 1), 1e-5);
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{2, 4, 4, 3}));
  // Strided (non-contiguous) input and an unbatched one.
  Tensor xt = randn({2, 3, 6, 7}).transpose(2, 3);
  expect_close(conv(xt), conv2d(xt.contiguous(), conv->weight, conv->bias, 2, 1), 1e-5);
  expect_close(conv(x[0]), y[0], 1e-5);
  // Functional form with options.
  expect_close(
      F::conv2d(x, conv->weight, F::Conv2dFuncOptions().bias(conv->bias).stride(2).padding(1)), y,
      1e-6);
  // Gradients reach the parameters.
  conv(x).sum().backward();
  EXPECT_TRUE(conv->weight.grad().defined());
  EXPECT_EQ(conv->bias.grad().sizes().vec(), (std::vector<int64_t>{4}));
}

TEST(NNLayersConv, PaddingModesByHand) {
  // Kernel of ones over x = [1, 2, 3, 4] with one element of padding on each side.
  auto run = [](nn::Conv1dOptions::padding_t pad, nn::detail::conv_padding_mode_t mode) {
    nn::Conv1d conv(nn::Conv1dOptions(1, 1, 3).padding(pad).bias(false).padding_mode(mode));
    {
      NoGradGuard g;
      conv->weight.fill_(1.0);
    }
    return conv(dtensor({1, 2, 3, 4}, {1, 1, 4}).to(kFloat));
  };
  expect_vals(run(1, kZeros), {3, 6, 9, 7});
  expect_vals(run(1, kReflect), {5, 6, 9, 10});
  expect_vals(run(1, kReplicate), {4, 6, 9, 11});
  expect_vals(run(1, kCircular), {7, 6, 9, 8});
  expect_vals(run(kSame, kCircular), {7, 6, 9, 8});
  expect_vals(run(kSame, kZeros), {3, 6, 9, 7});
  expect_vals(run(kValid, kZeros), {6, 9});
}

TEST(NNLayersConv, SamePaddingKeepsSize) {
  manual_seed(1);
  for (auto mode : std::vector<nn::detail::conv_padding_mode_t>{kZeros, kReflect}) {
    nn::Conv2d conv(
        nn::Conv2dOptions(2, 3, {3, 4}).padding(kSame).dilation({1, 2}).padding_mode(mode));
    Tensor y = conv(randn({1, 2, 9, 10}));
    EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{1, 3, 9, 10}));
  }
  // 'same' with an even kernel puts the extra element on the right, as PyTorch.
  nn::Conv1d a(nn::Conv1dOptions(1, 1, 2).padding(kSame).bias(false));
  nn::Conv1d b(nn::Conv1dOptions(1, 1, 2).padding(kSame).bias(false).padding_mode(kReplicate));
  {
    NoGradGuard g;
    a->weight.copy_(tensor({1.0f, 10.0f}).reshape({1, 1, 2}));
    b->weight.copy_(a->weight);
  }
  Tensor x = tensor({1.0f, 2.0f, 3.0f}).reshape({1, 1, 3});
  expect_vals(a(x), {21, 32, 3});
  expect_vals(b(x), {21, 32, 33});
}

TEST(NNLayersConv, BadOptions) {
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)), ValueError);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(4, 3, 3).groups(2)), ValueError);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(4, 4, 3).groups(0)), ValueError);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding(kSame).stride(2)), ValueError);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(4, 4, 0)), ValueError);
  EXPECT_THROW(nn::Conv1d(nn::Conv1dOptions(1, 1, 3).padding(-1)), ValueError);
  EXPECT_THROW(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 2, 3).padding_mode(kReflect)),
               ValueError);
  nn::Conv2d conv(2, 3, 3);
  EXPECT_THROW(conv(randn({1, 5, 8, 8})), Error);  // wrong channel count
}

TEST(NNLayersConv, CloneIsDeep) {
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding(1).padding_mode(kCircular));
  auto copy = std::dynamic_pointer_cast<nn::Conv2dImpl>(conv->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(copy->weight.equal(conv->weight));
  {
    NoGradGuard g;
    copy->weight.add_(1.0);
  }
  EXPECT_FALSE(copy->weight.equal(conv->weight));
  EXPECT_TRUE(copy->weight.requires_grad());
  Tensor x = randn({1, 2, 5, 5});
  EXPECT_EQ(copy->forward(x).sizes().vec(), (std::vector<int64_t>{1, 3, 5, 5}));
  EXPECT_EQ(repr(copy), repr(conv.ptr()));
}

TEST(NNLayersConv, TransposeAndOutputSize) {
  manual_seed(2);
  nn::ConvTranspose2d t(nn::ConvTranspose2dOptions(3, 2, 3).stride(2).padding(1));
  Tensor x = randn({1, 3, 4, 5});
  Tensor y = t(x);
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{1, 2, 7, 9}));
  expect_close(y, conv_transpose2d(x, t->weight, t->bias, 2, 1), 1e-5);
  // output_size picks output_padding 1; spatial or full shape.
  Tensor y2 = t->forward(x, std::vector<int64_t>{8, 10});
  EXPECT_EQ(y2.sizes().vec(), (std::vector<int64_t>{1, 2, 8, 10}));
  expect_close(y2, conv_transpose2d(x, t->weight, t->bias, 2, 1, 1), 1e-5);
  EXPECT_EQ(t->forward(x, std::vector<int64_t>{1, 2, 8, 9}).sizes().vec(),
            (std::vector<int64_t>{1, 2, 8, 9}));
  EXPECT_THROW(t->forward(x, std::vector<int64_t>{9, 9}), ValueError);
  EXPECT_THROW(t->forward(x, std::vector<int64_t>{8}), ValueError);
  nn::ConvTranspose1d t1(nn::ConvTranspose1dOptions(2, 4, 3).groups(2).bias(false));
  Tensor x1 = randn({2, 2, 5});
  expect_close(t1(x1),
               F::conv_transpose1d(x1, t1->weight, F::ConvTranspose1dFuncOptions().groups(2)));
  nn::ConvTranspose3d t3(1, 1, 2);
  EXPECT_EQ(t3(randn({1, 1, 2, 2, 2})).sizes().vec(), (std::vector<int64_t>{1, 1, 3, 3, 3}));
}

TEST(NNLayersConv, Float64AndZeroBatch) {
  nn::Conv2d conv(1, 2, 3);
  {
    NoGradGuard g;
    conv->weight = conv->weight.to(kDouble);
    conv->bias = conv->bias.to(kDouble);
  }
  Tensor x = randn({2, 1, 5, 5}, TensorOptions(kDouble));
  Tensor y = conv(x);
  EXPECT_EQ(y.scalar_type(), kDouble);
  expect_close(y, conv2d(x, conv->weight, conv->bias), 1e-12);
  EXPECT_EQ(conv(randn({0, 1, 5, 5}, TensorOptions(kDouble))).sizes().vec(),
            (std::vector<int64_t>{0, 2, 3, 3}));
}

// ---------------------------------------------------------------- pooling

TEST(NNLayersPool, MaxPoolReprAndValues) {
  EXPECT_EQ(repr(nn::MaxPool2d(2)),
            "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(nn::MaxPool1d(nn::MaxPool1dOptions(3).stride(2).padding(1))),
            "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(nn::MaxPool3d(nn::MaxPool3dOptions({1, 2, 2}))),
            "MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2), padding=0, dilation=1, "
            "ceil_mode=False)");
  nn::MaxPool2d pool(2);
  Tensor x = arange(16, TensorOptions(kFloat)).reshape({1, 1, 4, 4});
  expect_vals(pool(x), {5, 7, 13, 15});
  auto [out, idx] = pool->forward_with_indices(x);
  expect_vals(idx, {5, 7, 13, 15});
  EXPECT_EQ(idx.scalar_type(), kLong);
  expect_vals(F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(1).padding(1)),
              {5, 6, 7, 7, 9, 10, 11, 11, 13, 14, 15, 15, 13, 14, 15, 15});
  nn::MaxPool1d p1(nn::MaxPool1dOptions(2).ceil_mode(true));
  expect_vals(p1(tensor({1.0, 3.0, 2.0, 5.0, 4.0}).reshape({1, 1, 5})), {3, 5, 4});
  nn::MaxPool3d p3(2);
  EXPECT_EQ(p3(randn({2, 3, 4, 4, 4})).sizes().vec(), (std::vector<int64_t>{2, 3, 2, 2, 2}));
}

// ---------------------------------------------------------------- losses

TEST(NNLayersLoss, CrossEntropyAndNLL) {
  EXPECT_EQ(repr(nn::CrossEntropyLoss()), "CrossEntropyLoss()");
  EXPECT_EQ(repr(nn::NLLLoss()), "NLLLoss()");
  Tensor logits = dtensor({0, 0, 1, 2, 0, 0}, {2, 3});
  Tensor target = tensor({int64_t(0), int64_t(2)});
  // Row losses: log(1 + 1 + e) - 0 and log(e^2 + 1 + 1) - 0.
  double l0 = std::log(2 + std::exp(1.0)), l1 = std::log(std::exp(2.0) + 2);
  nn::CrossEntropyLoss ce;
  EXPECT_NEAR(ce(logits, target).item<double>(), (l0 + l1) / 2, 1e-12);
  nn::CrossEntropyLoss ce_sum(nn::CrossEntropyLossOptions().reduction(kSum));
  EXPECT_NEAR(ce_sum(logits, target).item<double>(), l0 + l1, 1e-12);
  expect_vals(F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().reduction(kNone)),
              {l0, l1}, 1e-12);
  // Class weights: mean divides by the summed weight of the targets.
  nn::CrossEntropyLoss cew(nn::CrossEntropyLossOptions().weight(dtensor({1, 2, 3}, {3})));
  EXPECT_NEAR(cew(logits, target).item<double>(), (1 * l0 + 3 * l1) / 4, 1e-12);
  EXPECT_EQ(keys(*cew), (std::vector<std::string>{"weight"}));
  EXPECT_TRUE(keys(*ce).empty());
  nn::CrossEntropyLoss ign(nn::CrossEntropyLossOptions().ignore_index(2));
  EXPECT_NEAR(ign(logits, target).item<double>(), l0, 1e-12);
  // NLLLoss on log_softmax equals cross entropy.
  nn::NLLLoss nll;
  Tensor logp = log_softmax(logits, 1);
  EXPECT_NEAR(nll(logp, target).item<double>(), (l0 + l1) / 2, 1e-12);
  EXPECT_NEAR(F::nll_loss(logp, target, F::NLLLossFuncOptions().reduction(kSum)).item<double>(),
              l0 + l1, 1e-12);
  EXPECT_THROW(nll(logp, tensor({int64_t(0), int64_t(5)})), IndexError);
  // Gradient of the mean cross entropy: (softmax - onehot) / N.
  Tensor xl = logits.clone().requires_grad_();
  ce(xl, target).backward();
  Tensor expect = (softmax(logits, 1) - one_hot(target, 3).to(kDouble)) / 2.0;
  expect_close(xl.grad(), expect, 1e-12);
}

TEST(NNLayersLoss, EveryLossMatchesItsOp) {
  manual_seed(3);
  Tensor x = randn({4, 5}, TensorOptions(kDouble)), y = randn({4, 5}, TensorOptions(kDouble));
  auto near = [](const Tensor& a, const Tensor& b) { expect_close(a, b, 1e-12); };
  near(nn::L1Loss()(x, y), l1_loss(x, y));
  near(nn::L1Loss(nn::L1LossOptions(kSum))(x, y), abs(x - y).sum());
  near(nn::MSELoss()(x, y), pow(x - y, 2).mean());
  near(nn::MSELoss(nn::MSELossOptions(kNone))(x, y), pow(x - y, 2));
  near(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(x, y),
       smooth_l1_loss(x, y, Reduction::Mean, 0.5));
  near(nn::HuberLoss(nn::HuberLossOptions(kSum).delta(2.0))(x, y),
       huber_loss(x, y, Reduction::Sum, 2.0));
  Tensor p = sigmoid(x), t = rand({4, 5}, TensorOptions(kDouble));
  near(nn::BCELoss()(p, t), binary_cross_entropy(p, t));
  Tensor w = rand({5}, TensorOptions(kDouble));
  nn::BCEWithLogitsLoss bcel(nn::BCEWithLogitsLossOptions().pos_weight(w).weight(w));
  near(bcel(x, t), binary_cross_entropy_with_logits(x, t, w, w));
  EXPECT_EQ(keys(*bcel), (std::vector<std::string>{"weight", "pos_weight"}));
  near(nn::KLDivLoss(nn::KLDivLossOptions(kSum).log_target(true))(x, y),
       kl_div(x, y, Reduction::Sum, true));
  Tensor var = rand({4, 5}, TensorOptions(kDouble)) + 0.1;
  near(nn::GaussianNLLLoss()(x, y, var), gaussian_nll_loss(x, y, var));
  Tensor sgn = sign(randn({4}, TensorOptions(kDouble)));
  near(nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.2))(x, y, sgn),
       cosine_embedding_loss(x, y, sgn, 0.2));
  near(nn::MarginRankingLoss()(x[0], y[0], sign(y[1])),
       margin_ranking_loss(x[0], y[0], sign(y[1])));
  near(nn::HingeEmbeddingLoss()(x, sign(y)), hinge_embedding_loss(x, sign(y)));
  Tensor cls = tensor({int64_t(1), int64_t(0), int64_t(4), int64_t(2)});
  near(nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(2).margin(0.5))(x, cls),
       multi_margin_loss(x, cls, 2, 0.5));
  Tensor ml = tensor({int64_t(1), int64_t(3), int64_t(-1), int64_t(0), int64_t(0)})
                  .reshape({1, 5})
                  .expand({4, 5})
                  .contiguous();
  near(nn::MultiLabelMarginLoss()(x, ml), multilabel_margin_loss(x, ml));
  near(nn::MultiLabelSoftMarginLoss()(x, t.round()), multilabel_soft_margin_loss(x, t.round()));
  near(nn::SoftMarginLoss()(x, sign(y)), soft_margin_loss(x, sign(y)));
  Tensor z = randn({4, 5}, TensorOptions(kDouble));
  near(nn::TripletMarginLoss(nn::TripletMarginLossOptions().swap(true).p(1))(x, y, z),
       triplet_margin_loss(x, y, z, 1.0, 1, 1e-6, true));
  // CTC: (T, N, C) log-probs, padded targets.
  Tensor lp = log_softmax(randn({6, 2, 4}, TensorOptions(kDouble)), 2);
  Tensor tg = tensor({int64_t(1), int64_t(2), int64_t(3), int64_t(1)}).reshape({2, 2});
  Tensor il = tensor({int64_t(6), int64_t(5)}), tl = tensor({int64_t(2), int64_t(1)});
  near(nn::CTCLoss(nn::CTCLossOptions().reduction(kSum))(lp, tg, il, tl),
       ctc_loss(lp, tg, il, tl, 0, Reduction::Sum));
}

TEST(NNLayersLoss, PoissonNLL) {
  manual_seed(8);
  Tensor x = randn({4, 5}, TensorOptions(kDouble)), t = rand({4, 5}, TensorOptions(kDouble)) * 3;
  // log_input: exp(x) - t * x.
  expect_close(nn::PoissonNLLLoss()(x, t), (exp(x) - t * x).mean(), 1e-12);
  nn::PoissonNLLLoss raw(nn::PoissonNLLLossOptions().log_input(false).eps(0.5).reduction(kSum));
  expect_close(raw(exp(x), t), (exp(x) - t * log(exp(x) + 0.5)).sum(), 1e-12);
}

TEST(NNLayersLoss, ComposedLossesMatchTorch) {
  // kl_div 'batchmean' and triplet_margin_with_distance_loss (swap) against torch 1.13.
  Tensor kl = F::kl_div(log_softmax(inp({3, 4}), 1), softmax(inp({3, 4}, 0.5), 1),
                        F::KLDivFuncOptions(kBatchMean));
  expect_vals(kl, {0.0654083021074}, 1e-10);
  nn::KLDivLoss klm{nn::KLDivLossOptions(kBatchMean)};
  expect_close(klm(log_softmax(inp({3, 4}), 1), softmax(inp({3, 4}, 0.5), 1)), kl, 1e-12);
  nn::TripletMarginWithDistanceLoss tm(nn::TripletMarginWithDistanceLossOptions().swap(true));
  expect_vals(tm(inp({3, 4}), inp({3, 4}, 0.5), inp({3, 4}, 0.8)), {0.620477105609}, 1e-10);
  // A custom distance.
  nn::TripletMarginWithDistanceLoss l1d(
      nn::TripletMarginWithDistanceLossOptions()
          .distance_function([](const Tensor& a, const Tensor& b) { return abs(a - b).sum(1); })
          .margin(0.5)
          .reduction(kNone));
  Tensor a = dtensor({0, 0}, {1, 2}), pp = dtensor({1, 0}, {1, 2}), n = dtensor({1, 1}, {1, 2});
  expect_vals(l1d(a, pp, n), {0.0});  // max(1 - 2 + 0.5, 0)
  expect_vals(l1d(a, n, pp), {1.5});  // max(2 - 1 + 0.5, 0)
  EXPECT_THROW(F::triplet_margin_with_distance_loss(
                   a, pp, n, F::TripletMarginWithDistanceLossFuncOptions().margin(0)),
               ValueError);
  EXPECT_THROW(F::multi_margin_loss(a, tensor({int64_t(0)}), F::MultiMarginLossFuncOptions().p(3)),
               ValueError);
}

// ---------------------------------------------------------------- more pooling

TEST(NNLayersPool, AvgAdaptiveUnpoolLP) {
  EXPECT_EQ(repr(nn::AvgPool1d(2)), "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))");
  EXPECT_EQ(repr(nn::AvgPool2d(2)), "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(repr(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({5, std::nullopt}))),
            "AdaptiveAvgPool2d(output_size=(5, None))");
  EXPECT_EQ(repr(nn::AdaptiveAvgPool1d(3)), "AdaptiveAvgPool1d(output_size=3)");
  EXPECT_EQ(repr(nn::AdaptiveMaxPool2d(3)), "AdaptiveMaxPool2d(output_size=3)");
  EXPECT_EQ(repr(nn::MaxUnpool2d(2)),
            "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))");
  EXPECT_EQ(repr(nn::MaxUnpool1d(2)), "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))");
  EXPECT_EQ(repr(nn::LPPool1d(nn::LPPool1dOptions(2.5, 3).stride(2))),
            "LPPool1d(norm_type=2.5, kernel_size=3, stride=2, ceil_mode=False)");

  Tensor x = arange(16, TensorOptions(kDouble)).reshape({1, 1, 4, 4});
  expect_vals(nn::AvgPool2d(2)(x), {2.5, 4.5, 10.5, 12.5});
  expect_vals(nn::AvgPool2d(nn::AvgPool2dOptions(2).divisor_override(1))(x), {10, 18, 42, 50});
  expect_vals(
      nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(3).padding(1).count_include_pad(false))(x),
      {2.5, 4.5, 10.5, 12.5});
  expect_vals(nn::AvgPool1d(2)(dtensor({1, 2, 3, 5}, {1, 1, 4})), {1.5, 4});
  EXPECT_EQ(nn::AvgPool3d(2)(randn({1, 2, 4, 4, 4})).sizes().vec(),
            (std::vector<int64_t>{1, 2, 2, 2, 2}));
  // Adaptive: None keeps the input size.
  Tensor a = nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({2, std::nullopt}))(x);
  EXPECT_EQ(a.sizes().vec(), (std::vector<int64_t>{1, 1, 2, 4}));
  expect_vals(a, {2, 3, 4, 5, 10, 11, 12, 13});
  expect_vals(nn::AdaptiveAvgPool1d(3)(inp({1, 1, 5})),
              {0.977668244563, 0.800760690769, 0.491983861374}, 1e-10);
  nn::AdaptiveMaxPool2d amp(2);
  expect_vals(amp(x), {5, 7, 13, 15});
  auto [am, ai] = amp->forward_with_indices(x);
  expect_vals(ai, {5, 7, 13, 15});
  EXPECT_EQ(
      nn::AdaptiveMaxPool3d(nn::AdaptiveMaxPool3dOptions({1, std::nullopt, 2}))(randn({2, 3, 4, 5}))
          .sizes()
          .vec(),
      (std::vector<int64_t>{2, 1, 4, 2}));
  EXPECT_EQ(nn::AdaptiveAvgPool3d(1)(randn({1, 2, 3, 4, 5})).sizes().vec(),
            (std::vector<int64_t>{1, 2, 1, 1, 1}));
  EXPECT_EQ(nn::AdaptiveMaxPool1d(2)(randn({3, 6})).sizes().vec(), (std::vector<int64_t>{3, 2}));
  // Unpool puts the maxima back.
  nn::MaxPool2d mp(2);
  auto [pooled, idx] = mp->forward_with_indices(x);
  nn::MaxUnpool2d up(2);
  Tensor un = up(pooled, idx);
  EXPECT_EQ(un.sizes().vec(), (std::vector<int64_t>{1, 1, 4, 4}));
  expect_vals(un, {0, 0, 0, 0, 0, 5, 0, 7, 0, 0, 0, 0, 0, 13, 0, 15});
  EXPECT_EQ(up->forward(pooled, idx, std::vector<int64_t>{5, 5}).sizes().vec(),
            (std::vector<int64_t>{1, 1, 5, 5}));
  EXPECT_THROW(up->forward(pooled, idx, std::vector<int64_t>{7, 7}), ValueError);
  nn::MaxPool1d mp1(2);
  auto [p1, i1] = mp1->forward_with_indices(dtensor({1, 4, 2, 3, 9}, {1, 1, 5}));
  expect_vals(nn::MaxUnpool1d(2)(p1, i1), {0, 4, 0, 3});
  nn::MaxPool3d mp3(2);
  Tensor x3 = randn({1, 1, 4, 4, 4});
  auto [p3, i3] = mp3->forward_with_indices(x3);
  Tensor u3 = nn::MaxUnpool3d(2)(p3, i3);
  expect_close(mp3(u3), p3);
  // LPPool against torch 1.13.
  expect_vals(nn::LPPool2d(2, 2)(abs(inp({1, 1, 4, 4})) + 0.1),
              {1.60208020724, 1.36009814629, 1.83985885678, 1.67800409974}, 1e-10);
  expect_vals(
      nn::LPPool1d(nn::LPPool1dOptions(3, 2).ceil_mode(true))(abs(inp({1, 2, 5})) + 0.1),
      {1.35835970349, 1.05314922838, 0.582534267447, 0.342017546886, 0.931586414875, 1.26505162734},
      1e-10);
  EXPECT_THROW(nn::AdaptiveAvgPool2d(2)(randn({4})), Error);
}

// ---------------------------------------------------------------- normalization

TEST(NNLayersNorm, BatchNormStateAndRepr) {
  EXPECT_EQ(repr(nn::BatchNorm2d(3)),
            "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  EXPECT_EQ(repr(nn::BatchNorm1d(nn::BatchNorm1dOptions(3).momentum(std::nullopt).affine(false))),
            "BatchNorm1d(3, eps=1e-05, momentum=None, affine=False, track_running_stats=True)");
  nn::BatchNorm2d bn(3);
  EXPECT_EQ(keys(*bn), (std::vector<std::string>{"weight", "bias", "running_mean", "running_var",
                                                 "num_batches_tracked"}));
  expect_vals(bn->weight, {1, 1, 1});
  expect_vals(bn->bias, {0, 0, 0});
  EXPECT_EQ(bn->num_batches_tracked.scalar_type(), kLong);
  EXPECT_EQ(bn->num_batches_tracked.dim(), 0);
  EXPECT_EQ(bn->buffers().size(), 3u);
  nn::BatchNorm2d nostats(nn::BatchNorm2dOptions(3).track_running_stats(false).affine(false));
  EXPECT_TRUE(keys(*nostats).empty());

  manual_seed(4);
  Tensor x = randn({4, 3, 2, 2}) * 2 + 1;
  Tensor y = bn(x);
  // Training uses batch statistics: per-channel mean 0, biased variance 1.
  expect_close(y.mean({0, 2, 3}), zeros({3}), 1e-5);
  expect_close(y.var(IntArrayRef({0, 2, 3}), false), ones({3}), 1e-3);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  expect_close(bn->running_mean, x.mean({0, 2, 3}) * 0.1, 1e-5);
  expect_close(bn->running_var, x.var(IntArrayRef({0, 2, 3}), true) * 0.1 + 0.9, 1e-5);
  // Eval uses the running statistics and does not update them.
  bn->eval();
  Tensor rm = bn->running_mean.clone();
  Tensor ye = bn(x);
  expect_close(ye,
               (x - rm.reshape({1, 3, 1, 1})) / sqrt(bn->running_var.reshape({1, 3, 1, 1}) + 1e-5),
               1e-5);
  EXPECT_TRUE(bn->running_mean.equal(rm));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  // Without running stats, eval still uses batch statistics.
  nostats->eval();
  expect_close(nostats(x).mean({0, 2, 3}), zeros({3}), 1e-5);
  bn->train();
  bn->reset_running_stats();
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0);
  expect_vals(bn->running_var, {1, 1, 1});
  EXPECT_THROW(bn(randn({2, 3, 4})), ValueError);
  nn::BatchNorm1d bn1(3);
  EXPECT_THROW(bn1(randn({1, 3})), ValueError);  // one value per channel in training
  EXPECT_EQ(bn1(randn({2, 3, 5})).sizes().vec(), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(nn::BatchNorm3d(2)(randn({2, 2, 2, 2, 2})).sizes().vec(),
            (std::vector<int64_t>{2, 2, 2, 2, 2}));
}

TEST(NNLayersNorm, BatchNormCumulativeAverageMatchesTorch) {
  DoubleDefault dd;
  nn::BatchNorm1d bn(nn::BatchNorm1dOptions(2).momentum(std::nullopt));
  bn(inp({4, 2}));
  bn(inp({3, 2}, 0.9));
  expect_vals(bn->running_mean, {0.224401324165, 0.0606450321118}, 1e-10);
  expect_vals(bn->running_var, {0.613205478544, 0.497173226273}, 1e-10);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  bn->eval();
  expect_vals(bn(inp({2, 2}, 0.4)), {0.990445320936, 1.22025395644, 0.603137516065, 0.427893204542},
              1e-9);
  // Clone copies the buffers deeply.
  auto copy = std::dynamic_pointer_cast<nn::BatchNorm1dImpl>(bn->clone());
  EXPECT_TRUE(copy->running_mean.equal(bn->running_mean));
  EXPECT_EQ(copy->num_batches_tracked.item<int64_t>(), 2);
  EXPECT_FALSE(copy->is_training());
  copy->reset_running_stats();
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
}

TEST(NNLayersNorm, OtherNormsMatchTorch) {
  DoubleDefault dd;
  EXPECT_EQ(repr(nn::LayerNorm(std::vector<int64_t>{4})),
            "LayerNorm((4,), eps=1e-05, elementwise_affine=True)");
  EXPECT_EQ(repr(nn::LayerNorm(nn::LayerNormOptions({2, 3}).elementwise_affine(false))),
            "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False)");
  EXPECT_EQ(repr(nn::GroupNorm(2, 4)), "GroupNorm(2, 4, eps=1e-05, affine=True)");
  EXPECT_EQ(repr(nn::InstanceNorm2d(3)),
            "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)");
  EXPECT_EQ(repr(nn::LocalResponseNorm(2)), "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");

  nn::LayerNorm ln(std::vector<int64_t>{3, 2});
  EXPECT_EQ(keys(*ln), (std::vector<std::string>{"weight", "bias"}));
  expect_vals(ln(inp({2, 3, 2})),
              {1.08372691251, 0.949561149571, 0.559048488782, -0.0529277369147, -0.831701513896,
               -1.70770730005, 1.78362489474, 0.789146446533, -0.0438035866466, -0.640820259066,
               -0.948573849445, -0.93957364612},
              1e-9);
  nn::GroupNorm gn(2, 4);
  {
    NoGradGuard g;
    gn->weight.copy_(inp({4}));
    gn->bias.copy_(inp({4}, 0.2));
  }
  expect_vals(gn(inp({2, 4, 3})),
              {2.08372691251,   1.94956114957,  1.55904848878,   0.92950277948,   0.185511773555,
               -0.651368518642, 2.39315014327,  1.57237166171,   0.884908333883,  0.426995354004,
               0.235692654454,  0.241287270557, -0.317627230096, 0.0657922784817, 0.594757335491,
               1.1921675839,    1.83178749261,  2.45464785813,   -0.628833067595, 0.712005353334,
               1.55301282879,   1.50167627415,  1.25112289471,   0.572017658123},
              1e-9);
  EXPECT_THROW(nn::GroupNorm(3, 4), ValueError);
  nn::InstanceNorm1d in(2);
  EXPECT_TRUE(keys(*in).empty());
  std::vector<double> inorm = {0.985878241676,  0.383591195048, -1.36946943672,  1.19994807093,
                               0.0479436221571, -1.24789169309, 1.25904705408,   -0.0720689520131,
                               -1.18697810207,  1.40933266355,  -0.736036821307, -0.673295842245};
  expect_vals(in(inp({2, 2, 3})), inorm, 1e-9);
  // Unbatched input (C, L) is the first sample.
  expect_vals(in(inp({2, 2, 3})[0]), std::vector<double>(inorm.begin(), inorm.begin() + 6), 1e-9);
  nn::InstanceNorm2d inr(nn::InstanceNorm2dOptions(2).track_running_stats(true).affine(true));
  EXPECT_EQ(keys(*inr), (std::vector<std::string>{"weight", "bias", "running_mean", "running_var",
                                                  "num_batches_tracked"}));
  Tensor xi = inp({3, 2, 2, 2});
  inr(xi);
  expect_close(inr->running_mean, xi.mean({2, 3}).mean(0) * 0.1, 1e-10);
  EXPECT_THROW(inr(inp({3, 5, 2, 2})), ValueError);
  EXPECT_EQ(nn::InstanceNorm3d(2)(randn({2, 2, 2, 2})).sizes().vec(),
            (std::vector<int64_t>{2, 2, 2, 2}));
  expect_vals(nn::LocalResponseNorm(3)(inp({1, 4, 3}) * 2),
              {1.99972276505, 1.91047353383, 1.65055797269, 1.24304118905, 0.724621394226,
               0.141457005441, -0.454347153374, -1.00955428119, -1.47456273267, -1.80798717815,
               -1.97974050924, -1.97465962312},
              1e-9);
  expect_close(F::normalize(inp({2, 3}), F::NormalizeFuncOptions().p(1).dim(0)),
               normalize(inp({2, 3}), 1, 0));
}

// ---------------------------------------------------------------- dropout

TEST(NNLayersDropout, TrainEvalAndRepr) {
  EXPECT_EQ(repr(nn::Dropout()), "Dropout(p=0.5, inplace=False)");
  EXPECT_EQ(repr(nn::Dropout2d(nn::Dropout2dOptions(0.2).inplace(true))),
            "Dropout2d(p=0.2, inplace=True)");
  EXPECT_EQ(repr(nn::AlphaDropout()), "AlphaDropout(p=0.5, inplace=False)");
  EXPECT_EQ(repr(nn::FeatureAlphaDropout()), "FeatureAlphaDropout(p=0.5, inplace=False)");
  EXPECT_EQ(repr(nn::Dropout1d()), "Dropout1d(p=0.5, inplace=False)");
  manual_seed(5);
  nn::Dropout d(0.25);
  Tensor x = ones({200, 50});
  Tensor y = d(x);
  // Kept elements are scaled by 1 / (1 - p); about p of them are dropped.
  Tensor kept = y.ne(0);
  expect_close(y.masked_select(kept), full({kept.sum().item<int64_t>()}, 1 / 0.75), 1e-6);
  double frac = 1 - kept.to(kDouble).mean().item<double>();
  EXPECT_NEAR(frac, 0.25, 0.03);
  d->eval();
  EXPECT_TRUE(d(x).equal(x));
  // Channel dropout: whole (n, c) planes are zero or scaled.
  nn::Dropout2d d2(0.5);
  Tensor y2 = d2(ones({8, 16, 3, 3}));
  Tensor plane_max = y2.amax({2, 3}), plane_min = y2.amin({2, 3});
  EXPECT_TRUE(plane_max.equal(plane_min));
  nn::Dropout3d d3(0.5);
  Tensor y3 = d3(ones({16, 2, 2, 2}));  // unbatched (C, D, H, W)
  EXPECT_TRUE(y3.amax({1, 2, 3}).equal(y3.amin({1, 2, 3})));
  nn::Dropout1d d1(0.5);
  Tensor y1 = d1(ones({8, 5}));
  EXPECT_TRUE(y1.amax(1).equal(y1.amin(1)));
  EXPECT_THROW(d1(ones({2, 2, 2, 2})), Error);
  nn::AlphaDropout ad(0.2);
  ad->eval();
  EXPECT_TRUE(ad(x).equal(x));
  ad->train();
  EXPECT_FALSE(ad(x).equal(x));
  nn::FeatureAlphaDropout fad(0.2);
  EXPECT_EQ(fad(ones({2, 3, 4})).sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  // In place.
  Tensor z = ones({10, 10});
  nn::Dropout dip(nn::DropoutOptions(0.5).inplace(true));
  Tensor r = dip(z);
  EXPECT_TRUE(r.equal(z));
  EXPECT_GT(z.eq(0).sum().item<int64_t>(), 0);
  // The functional default trains; p outside [0, 1] is a ValueError.
  EXPECT_FALSE(F::dropout(x, F::DropoutFuncOptions().p(0.5)).equal(x));
  EXPECT_TRUE(F::dropout(x, F::DropoutFuncOptions().p(0.5).training(false)).equal(x));
  EXPECT_THROW(nn::Dropout(-0.1), ValueError);
  EXPECT_THROW(nn::Dropout2d(1.5), ValueError);
  EXPECT_THROW(F::dropout(x, F::DropoutFuncOptions().p(2)), ValueError);
  EXPECT_THROW(F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(-1)), ValueError);
}

// ---------------------------------------------------------------- embedding

TEST(NNLayersEmbedding, LookupPaddingMaxNorm) {
  EXPECT_EQ(repr(nn::Embedding(10, 3)), "Embedding(10, 3)");
  EXPECT_EQ(repr(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0).max_norm(1.0))),
            "Embedding(10, 3, padding_idx=0, max_norm=1.0)");
  EXPECT_EQ(repr(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(-1))),
            "Embedding(10, 3, padding_idx=9)");
  EXPECT_EQ(repr(nn::EmbeddingBag(10, 3)), "EmbeddingBag(10, 3, mode=mean)");
  EXPECT_EQ(repr(nn::EmbeddingBag(nn::EmbeddingBagOptions(10, 3).mode(kSum).max_norm(2.0))),
            "EmbeddingBag(10, 3, max_norm=2.0, mode=sum)");
  manual_seed(6);
  nn::Embedding e(nn::EmbeddingOptions(6, 4).padding_idx(2));
  EXPECT_EQ(keys(*e), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(e->weight.sizes().vec(), (std::vector<int64_t>{6, 4}));
  expect_vals(e->weight[2], {0, 0, 0, 0});
  Tensor idx = tensor({int64_t(1), int64_t(2), int64_t(5), int64_t(1)}).reshape({2, 2});
  Tensor out = e(idx);
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{2, 2, 4}));
  expect_close(out[1][0], e->weight[5]);
  out.sum().backward();
  expect_vals(e->weight.grad()[1], {2, 2, 2, 2});
  expect_vals(e->weight.grad()[2], {0, 0, 0, 0});
  EXPECT_THROW(e(tensor({int64_t(6)})), IndexError);
  EXPECT_THROW(nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)), ValueError);
  EXPECT_THROW(nn::Embedding(nn::EmbeddingOptions(4, 2).sparse(true)), ValueError);
  // max_norm renormalizes the looked-up rows in place (torch 1.13 values).
  Tensor w = inp({5, 3}, 0.9) * 3;
  Tensor eo = F::embedding(tensor({int64_t(0), int64_t(2), int64_t(2), int64_t(4)}).reshape({2, 2}),
                           w, F::EmbeddingFuncOptions().max_norm(1.0));
  expect_vals(eo,
              {0.833906892404, 0.518364836928, -0.189465392733, 0.476708495613, 0.750979134071,
               0.45692373579, 0.476708495613, 0.750979134071, 0.45692373579, -0.161048528697,
               0.53668753015, 0.828269165873},
              1e-9);
  expect_vals(w[1], {-2.71221642605, -2.690275249, -0.632387398292}, 1e-9);
  // from_pretrained shares the table and freezes it by default.
  Tensor table = inp({3, 2});
  nn::Embedding pre = nn::Embedding::from_pretrained(table);
  EXPECT_FALSE(pre->weight.requires_grad());
  expect_close(pre(tensor({int64_t(2)})), table[2].unsqueeze(0));
  nn::Embedding thawed = nn::Embedding::from_pretrained(
      table, nn::EmbeddingFromPretrainedOptions().freeze(false).padding_idx(0));
  EXPECT_TRUE(thawed->weight.requires_grad());
  EXPECT_EQ(repr(thawed), "Embedding(3, 2, padding_idx=0)");
  EXPECT_THROW(nn::Embedding::from_pretrained(inp({3})), ValueError);
  // clone() does not share the table.
  auto copy = std::dynamic_pointer_cast<nn::EmbeddingImpl>(pre->clone());
  {
    NoGradGuard g;
    copy->weight.zero_();
  }
  EXPECT_NE(table.abs().sum().item<double>(), 0.0);
}

TEST(NNLayersEmbedding, EmbeddingBagMatchesTorch) {
  Tensor w = inp({5, 3});
  nn::EmbeddingBag bag = nn::EmbeddingBag::from_pretrained(w);
  Tensor idx = tensor({int64_t(1), int64_t(2), int64_t(4), int64_t(0), int64_t(3)});
  Tensor off = tensor({int64_t(0), int64_t(2)});
  std::vector<double> mean = {0.197203936789, -0.0712441750616, -0.333328256937,
                              -0.26694351945, -0.253529437225,  -0.217468325447};
  expect_vals(bag(idx, off), mean, 1e-10);
  expect_vals(F::embedding_bag(idx, w, F::EmbeddingBagFuncOptions().offsets(off)), mean, 1e-10);
  Tensor idx2 = tensor({int64_t(1), int64_t(2), int64_t(4), int64_t(0)}).reshape({2, 2});
  expect_vals(F::embedding_bag(idx2, w, F::EmbeddingBagFuncOptions().mode(kMax)),
              {0.621609968271, 0.362357754477, 0.0707372016677, 1, 0.955336489126, 0.82533561491},
              1e-10);
  // Sum with per-sample weights equals the weighted sum of rows.
  Tensor psw = dtensor({1, 2, 3, 4}, {2, 2});
  Tensor s =
      F::embedding_bag(idx2, w, F::EmbeddingBagFuncOptions().mode(kSum).per_sample_weights(psw));
  expect_close(s[0], w[1] + w[2] * 2.0, 1e-12);
  EXPECT_THROW(F::embedding_bag(idx2, w, F::EmbeddingBagFuncOptions().per_sample_weights(psw)),
               NotImplementedError);
  EXPECT_THROW(F::embedding_bag(idx, w), ValueError);  // 1-D without offsets
  EXPECT_THROW(F::embedding_bag(idx2, w, F::EmbeddingBagFuncOptions().offsets(off)), ValueError);
  nn::EmbeddingBag fresh(nn::EmbeddingBagOptions(7, 2).mode(kSum));
  EXPECT_EQ(fresh(idx2).sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(fresh->weight.requires_grad());
}

// ---------------------------------------------------------------- resampling, blocks, padding

TEST(NNLayersVision, InterpolateMatchesTorch) {
  EXPECT_EQ(repr(nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2}))),
            "Upsample(scale_factor=2.0, mode=nearest)");
  EXPECT_EQ(repr(nn::Upsample(nn::UpsampleOptions()
                                  .size(std::vector<int64_t>{3, 4})
                                  .mode(kBilinear)
                                  .align_corners(true))),
            "Upsample(size=(3, 4), mode=bilinear)");
  expect_vals(
      F::interpolate(
          inp({1, 1, 2, 3}),
          F::InterpolateFuncOptions().scale_factor(std::vector<double>{1.5, 2}).mode(kBilinear)),
      {1, 0.988834122281, 0.966502366844, 0.922836270572, 0.857835833464, 0.82533561491,
       0.810804984135, 0.772815518552, 0.696836587385, 0.606144443423, 0.500739086667,
       0.448036408289, 0.621609968271, 0.556796914822, 0.427170807925, 0.289452616274,
       0.14364233987, 0.0707372016677},
      1e-9);
  nn::Upsample up(
      nn::UpsampleOptions().size(std::vector<int64_t>{3, 4}).mode(kBilinear).align_corners(true));
  expect_vals(up(inp({1, 1, 2, 3})),
              {1, 0.970224326084, 0.912002864387, 0.82533561491, 0.810804984135, 0.709499742579,
               0.588576883964, 0.448036408289, 0.621609968271, 0.448775159075, 0.26515090354,
               0.0707372016677},
              1e-9);
  expect_vals(F::interpolate(inp({1, 1, 3}),
                             F::InterpolateFuncOptions().scale_factor(std::vector<double>{1.7})),
              {1, 1, 0.955336489126, 0.955336489126, 0.82533561491}, 1e-10);
  expect_vals(
      F::interpolate(inp({1, 1, 3, 3}),
                     F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 5}).mode(kBicubic)),
      {1.02996887814,   1.02433141821,   0.997898927599,   0.923331193818,  0.868132261283,
       0.868487494449,  0.798684517319,  0.671312429507,   0.511558518101,  0.408414255937,
       0.301955738582,  0.182601899041,  -0.0152871006476, -0.212438702703, -0.331033295792,
       -0.261347013994, -0.379927509227, -0.567091694094,  -0.726901308432, -0.817316727341},
      1e-9);
  expect_vals(F::interpolate(inp({1, 1, 5}),
                             F::InterpolateFuncOptions().size(std::vector<int64_t>{3}).mode(kArea)),
              {0.977668244563, 0.800760690769, 0.491983861374}, 1e-10);
  EXPECT_EQ(F::interpolate(
                randn({1, 2, 2, 2, 2}),
                F::InterpolateFuncOptions().scale_factor(std::vector<double>{2}).mode(kTrilinear))
                .sizes()
                .vec(),
            (std::vector<int64_t>{1, 2, 4, 4, 4}));
  EXPECT_EQ(F::interpolate(randn({1, 2, 3}), F::InterpolateFuncOptions()
                                                 .size(std::vector<int64_t>{7})
                                                 .mode(kLinear)
                                                 .align_corners(false))
                .sizes()
                .vec(),
            (std::vector<int64_t>{1, 2, 7}));
  Tensor x = randn({1, 1, 4, 4});
  EXPECT_THROW(F::interpolate(x, F::InterpolateFuncOptions()), ValueError);
  EXPECT_THROW(F::interpolate(x, F::InterpolateFuncOptions()
                                     .size(std::vector<int64_t>{2, 2})
                                     .scale_factor(std::vector<double>{2})),
               ValueError);
  EXPECT_THROW(
      F::interpolate(
          x, F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 2}).align_corners(true)),
      ValueError);
  EXPECT_THROW(
      F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{2}).mode(kLinear)),
      NotImplementedError);
  EXPECT_THROW(F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 2, 2})),
               ValueError);
}

TEST(NNLayersVision, ShuffleFoldPadDistance) {
  EXPECT_EQ(repr(nn::PixelShuffle(2)), "PixelShuffle(upscale_factor=2)");
  EXPECT_EQ(repr(nn::PixelUnshuffle(2)), "PixelUnshuffle(downscale_factor=2)");
  EXPECT_EQ(repr(nn::Fold(nn::FoldOptions({4, 5}, 2))),
            "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)");
  EXPECT_EQ(repr(nn::Unfold(2)), "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)");
  Tensor x = arange(16, TensorOptions(kDouble)).reshape({1, 4, 2, 2});
  Tensor s = nn::PixelShuffle(2)(x);
  EXPECT_EQ(s.sizes().vec(), (std::vector<int64_t>{1, 1, 4, 4}));
  expect_vals(s[0][0][0], {0, 4, 1, 5});
  EXPECT_TRUE(nn::PixelUnshuffle(2)(s).equal(x));
  // Unfold then fold sums each pixel once per block covering it.
  Tensor img = ones({1, 1, 3, 3}, TensorOptions(kDouble));
  Tensor cols = nn::Unfold(2)(img);
  EXPECT_EQ(cols.sizes().vec(), (std::vector<int64_t>{1, 4, 4}));
  expect_vals(nn::Fold(nn::FoldOptions(3, 2))(cols), {1, 2, 1, 2, 4, 2, 1, 2, 1});
  // Padding layers.
  EXPECT_EQ(repr(nn::ZeroPad2d(1)), "ZeroPad2d((1, 1, 1, 1))");
  EXPECT_EQ(repr(nn::ConstantPad1d(2, 3.5)), "ConstantPad1d(padding=(2, 2), value=3.5)");
  EXPECT_EQ(repr(nn::ConstantPad3d(1, 0.0)),
            "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0.0)");
  EXPECT_EQ(repr(nn::ReflectionPad1d(2)), "ReflectionPad1d((2, 2))");
  EXPECT_EQ(repr(nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2, 3, 4}))),
            "ReflectionPad2d((1, 2, 3, 4))");
  EXPECT_EQ(repr(nn::ReplicationPad3d(1)), "ReplicationPad3d((1, 1, 1, 1, 1, 1))");
  Tensor v = dtensor({1, 2, 3}, {1, 1, 3});
  expect_vals(nn::ReflectionPad1d(2)(v), {3, 2, 1, 2, 3, 2, 1});
  expect_vals(nn::ReplicationPad1d(nn::ReplicationPad1dOptions({1, 2}))(v), {1, 1, 2, 3, 3, 3});
  expect_vals(nn::ConstantPad1d(nn::ConstantPad1dOptions({1, 0}, -1.0))(v), {-1, 1, 2, 3});
  expect_vals(nn::ZeroPad2d(nn::ZeroPad2dOptions({1, 0, 0, 1}))(dtensor({5}, {1, 1, 1})),
              {0, 5, 0, 0});
  EXPECT_EQ(nn::ReflectionPad3d(1)(randn({1, 2, 2, 2})).sizes().vec(),
            (std::vector<int64_t>{1, 4, 4, 4}));
  EXPECT_EQ(nn::ReflectionPad2d(1)(randn({1, 3, 3})).sizes().vec(),
            (std::vector<int64_t>{1, 5, 5}));
  EXPECT_EQ(nn::ReplicationPad2d(1)(randn({1, 3, 3})).sizes().vec(),
            (std::vector<int64_t>{1, 5, 5}));
  EXPECT_EQ(nn::ConstantPad2d(1, 2.0)(randn({3, 3})).sizes().vec(), (std::vector<int64_t>{5, 5}));
  expect_vals(F::pad(v, F::PadFuncOptions({1, 1}).mode(kCircular)), {3, 1, 2, 3, 1});
  expect_vals(F::pad(v, F::PadFuncOptions({0, 1}).value(7)), {1, 2, 3, 7});
  // libtorch's TORCH_CHECK: a RuntimeError, not a ValueError.
  try {
    F::pad(v, F::PadFuncOptions({1, 1}).mode(kReflect).value(1));
    ADD_FAILURE() << "reflect padding with a value did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  EXPECT_THROW(nn::ReflectionPad1d(3)(v), Error);  // reflection pad must be < the size
  // Distances.
  EXPECT_EQ(repr(nn::PairwiseDistance()), "PairwiseDistance()");
  EXPECT_EQ(repr(nn::CosineSimilarity()), "CosineSimilarity()");
  Tensor a = dtensor({0, 0, 3, 0}, {2, 2}), b = dtensor({3, 4, 0, 4}, {2, 2});
  expect_vals(nn::PairwiseDistance(nn::PairwiseDistanceOptions().eps(0))(a, b), {5, 5});
  expect_vals(nn::PairwiseDistance(nn::PairwiseDistanceOptions().p(1).eps(0).keepdim(true))(a, b),
              {7, 7});
  expect_vals(nn::CosineSimilarity()(dtensor({1, 0, 1, 1}, {2, 2}), dtensor({0, 1, 2, 2}, {2, 2})),
              {0, 1}, 1e-12);
  expect_vals(nn::CosineSimilarity(nn::CosineSimilarityOptions().dim(0))(
                  dtensor({1, 0, 1, 1}, {2, 2}), dtensor({0, 1, 2, 2}, {2, 2})),
              {1 / std::sqrt(2.0), 2 / std::sqrt(5.0)}, 1e-12);
}

// ---------------------------------------------------------------- recurrent

TEST(NNLayersRNN, NamesShapesInitAndRepr) {
  EXPECT_EQ(repr(nn::RNN(10, 20)), "RNN(10, 20)");
  EXPECT_EQ(repr(nn::RNN(nn::RNNOptions(10, 20)
                             .num_layers(2)
                             .nonlinearity(kReLU)
                             .bias(false)
                             .batch_first(true)
                             .dropout(0.5)
                             .bidirectional(true))),
            "RNN(10, 20, num_layers=2, bias=False, batch_first=True, dropout=0.5, "
            "bidirectional=True)");
  EXPECT_EQ(repr(nn::LSTM(nn::LSTMOptions(10, 20).proj_size(5))), "LSTM(10, 20, proj_size=5)");
  EXPECT_EQ(repr(nn::GRU(3, 4)), "GRU(3, 4)");
  EXPECT_EQ(repr(nn::RNNCell(10, 20)), "RNNCell(10, 20)");
  EXPECT_EQ(repr(nn::RNNCell(nn::RNNCellOptions(3, 4).bias(false).nonlinearity(kReLU))),
            "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  EXPECT_EQ(repr(nn::LSTMCell(3, 4)), "LSTMCell(3, 4)");
  EXPECT_EQ(repr(nn::GRUCell(nn::GRUCellOptions(3, 4).bias(false))), "GRUCell(3, 4, bias=False)");

  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  EXPECT_EQ(keys(*lstm), (std::vector<std::string>{
                             "weight_ih_l0",         "weight_hh_l0",         "bias_ih_l0",
                             "bias_hh_l0",           "weight_hr_l0",         "weight_ih_l0_reverse",
                             "weight_hh_l0_reverse", "bias_ih_l0_reverse",   "bias_hh_l0_reverse",
                             "weight_hr_l0_reverse", "weight_ih_l1",         "weight_hh_l1",
                             "bias_ih_l1",           "bias_hh_l1",           "weight_hr_l1",
                             "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse",
                             "bias_hh_l1_reverse",   "weight_hr_l1_reverse"}));
  auto params = lstm->named_parameters();
  EXPECT_EQ(params["weight_ih_l0"].sizes().vec(), (std::vector<int64_t>{16, 3}));
  EXPECT_EQ(params["weight_hh_l0"].sizes().vec(), (std::vector<int64_t>{16, 2}));
  EXPECT_EQ(params["weight_hr_l0"].sizes().vec(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(params["weight_ih_l1"].sizes().vec(), (std::vector<int64_t>{16, 4}));
  for (const auto& p : lstm->parameters()) EXPECT_LE(max_abs(p), 0.5);  // 1/sqrt(4)
  EXPECT_EQ(lstm->all_weights().size(), 20u);
  nn::GRU gru(nn::GRUOptions(3, 5).bias(false));
  EXPECT_EQ(keys(*gru), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"}));
  EXPECT_EQ(gru->named_parameters()["weight_ih_l0"].sizes().vec(), (std::vector<int64_t>{15, 3}));
  nn::GRUCell cell(3, 4);
  EXPECT_EQ(keys(*cell),
            (std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}));
  EXPECT_EQ(cell->weight_ih.sizes().vec(), (std::vector<int64_t>{12, 3}));
  EXPECT_THROW(nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)), ValueError);
  EXPECT_THROW(nn::LSTM(nn::LSTMOptions(3, 4).proj_size(-1)), ValueError);
  EXPECT_THROW(nn::GRU(nn::GRUOptions(3, 4).dropout(1.5)), ValueError);
  EXPECT_THROW(nn::RNN(nn::RNNOptions(3, 4).num_layers(0)), ValueError);
}

TEST(NNLayersRNN, ForwardMatchesTorch) {
  DoubleDefault dd;
  nn::LSTM lstm(
      nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2).batch_first(true));
  fill(*lstm);
  auto [out, hc] = lstm(inp({2, 3, 3}));
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  expect_vals(out, {0.423447789128, 0.385986563987, -0.0342480377956, -0.080669657238,
                    0.664882145176, 0.6042310313,   -0.0320831328287, -0.0765507914964,
                    0.754038363748, 0.68384648692,  -0.025722289934,  -0.0634898190579,
                    0.443749462944, 0.404968472278, -0.0321334904432, -0.0807771082358,
                    0.670729247133, 0.6101615958,   -0.0305889095736, -0.078183337205,
                    0.751630153345, 0.681729577085, -0.0253741612734, -0.06309416431},
              1e-9);
  expect_vals(std::get<0>(hc),
              {0.185767991582, 0.213969946045, 0.160006183957, 0.187530631437, 0.273956915287,
               -0.113721392241, -0.0990684637562, 0.0599652211866, 0.754038363748, 0.68384648692,
               0.751630153345, 0.681729577085, -0.0342480377956, -0.080669657238, -0.0321334904432,
               -0.0807771082358},
              1e-9);
  EXPECT_EQ(std::get<1>(hc).sizes().vec(), (std::vector<int64_t>{4, 2, 4}));
  expect_vals(std::get<1>(hc)[0][0],
              {-0.15466598812, -0.187664827142, -0.243065738452, -0.289660549395}, 1e-9);

  nn::GRU gru(3, 4);
  fill(*gru);
  auto [gout, gh] = gru(inp({3, 2, 3}), inp({1, 2, 4}, 0.7));
  expect_vals(gh,
              {-0.298435139327, -0.217902730151, -0.107435861477, 0.0258760758705, -0.188852860635,
               -0.138682043988, -0.0247467902767, 0.109259670614},
              1e-9);
  expect_vals(gout[0][0], {0.908425179553, 0.591445524449, -0.0263948582092, -0.617088337482},
              1e-9);

  // Unbatched bidirectional relu RNN.
  nn::RNN rnn(nn::RNNOptions(2, 3).nonlinearity(kReLU).bidirectional(true));
  fill(*rnn);
  auto [rout, rh] = rnn(inp({4, 2}));
  EXPECT_EQ(rout.sizes().vec(), (std::vector<int64_t>{4, 6}));
  expect_vals(rout,
              {0.572895970321,
               0.692890298287,
               0.798776656774,
               0,
               0,
               0,
               1.4782751084,
               1.64203003958,
               1.70359607579,
               0,
               0,
               0,
               2.67630618437,
               2.86977717953,
               2.8450877121,
               0,
               0,
               0,
               4.23067520941,
               4.47760916121,
               4.35565673405,
               0.481311112363,
               0.603676590682,
               0.710143358783},
              1e-9);
  expect_vals(rh, {4.23067520941, 4.47760916121, 4.35565673405, 0, 0, 0}, 1e-9);

  nn::LSTMCell lc(3, 2);
  fill(*lc);
  auto [hy, cy] = lc(inp({2, 3}));
  expect_vals(hy, {0.426882145631, 0.431155375165, 0.233193585807, 0.212768613993}, 1e-9);
  expect_vals(cy, {0.600595410793, 0.66007158809, 0.386929132057, 0.373256424457}, 1e-9);
  nn::GRUCell gc(nn::GRUCellOptions(3, 2).bias(false));
  fill(*gc);
  expect_vals(gc(inp({3}), inp({2}, 0.5)), {0.994787543241, 0.887459755806}, 1e-9);
}

TEST(NNLayersRNN, StatesChecksAndGrad) {
  manual_seed(7);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  Tensor x = randn({5, 2, 3});
  auto [o1, s1] = lstm(x);
  // Default states are zeros.
  auto [o2, s2] = lstm(x, std::make_tuple(zeros({2, 2, 4}), zeros({2, 2, 4})));
  expect_close(o1, o2);
  // Unbatched input equals the batched run of one sample.
  auto [ou, su] = lstm(x.select(1, 0));
  expect_close(ou, o1.select(1, 0), 1e-6);
  expect_close(std::get<0>(su), std::get<0>(s1).select(1, 0), 1e-6);
  EXPECT_THROW(lstm(randn({5, 2, 4})), Error);          // input_size
  try {  // rank: a RuntimeError, as PyTorch 1.13
    lstm(randn({2, 5, 2, 3}));
    ADD_FAILURE() << "a 4-D input did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  EXPECT_THROW(lstm(x, std::make_tuple(zeros({1, 2, 4}), zeros({2, 2, 4}))), Error);
  EXPECT_THROW(lstm(x.select(1, 0), std::make_tuple(zeros({2, 1, 4}), zeros({2, 1, 4}))), Error);
  // Gradients reach every parameter.
  std::get<0>(lstm(x)).sum().backward();
  for (const auto& p : lstm->parameters()) EXPECT_TRUE(p.grad().defined());
  // Dropout between layers only in training: eval is deterministic.
  nn::GRU g(nn::GRUOptions(3, 4).num_layers(2).dropout(0.5));
  g->eval();
  expect_close(std::get<0>(g(x)), std::get<0>(g(x)));
  // Cells: zero default state, unbatched input, checks.
  nn::RNNCell rc(3, 4);
  Tensor h = rc(x[0]);
  expect_close(h, rnn_tanh_cell(x[0], zeros({2, 4}), rc->weight_ih, rc->weight_hh, rc->bias_ih,
                                rc->bias_hh));
  expect_close(rc(x[0][1]), h[1], 1e-6);
  EXPECT_THROW(rc(x[0], zeros({3, 4})), Error);
  EXPECT_THROW(rc(randn({2, 5})), Error);
  EXPECT_THROW(rc(x), ValueError);
  nn::LSTMCell lc(3, 4);
  auto [hy, cy] = lc(x[0][0]);
  EXPECT_EQ(hy.sizes().vec(), (std::vector<int64_t>{4}));
  // clone() gives an independent copy that computes the same.
  auto copy = std::dynamic_pointer_cast<nn::LSTMImpl>(lstm->clone());
  expect_close(std::get<0>(copy->forward(x)), o1, 1e-6);
  {
    NoGradGuard ng;
    for (auto& p : copy->parameters()) p.zero_();
  }
  EXPECT_GT(max_abs(lstm->parameters()[0]), 0.0);
  expect_close(std::get<0>(lstm(x)), o1, 1e-6);
}

// ---------------------------------------------------------------- gradients against torch

TEST(NNLayersGrad, CircularConvAndLSTMMatchTorch) {
  DoubleDefault dd;
  // Conv2d(2, 2, (2, 3), padding=(1, 1), padding_mode='circular', groups=2); loss sum(y^2).
  nn::Conv2d conv(
      nn::Conv2dOptions(2, 2, {2, 3}).padding({1, 1}).padding_mode(kCircular).groups(2));
  fill(*conv);
  Tensor x = inp({1, 2, 3, 4}).requires_grad_();
  pow(conv(x), 2).sum().backward();
  expect_vals(
      conv->weight.grad(),
      {-7.92626350708, -7.6776274523, -7.59751191344, 11.0716136352, 11.3582932963, 11.3827076376,
       14.8668513162, 15.1841020131, 15.0835373967, 11.8300254923, 12.2497447757, 11.973301588},
      1e-8);
  expect_vals(conv->bias.grad(), {15.5905001075, 30.4140468208}, 1e-8);
  expect_vals(x.grad(),
              {2.01575048522,  2.00548172019,  1.94981864731,  1.9048548127,   0.61168129236,
               0.581653770599, 0.518940528338, 0.496022335031, 0.372632756387, 0.347094467945,
               0.304028819891, 0.295453138329, 3.65861839524,  3.89036863732,  4.16320212493,
               4.4154579778,   4.94215286761,  5.17615130243,  5.39037439043,  5.52076957656,
               7.34693631004,  7.53540564836,  7.70196034885,  7.81156885674},
              1e-8);
  // LSTM(2, 3); loss = sum(output) + sum(c_n).
  nn::LSTM lstm(2, 3);
  fill(*lstm);
  Tensor xs = inp({3, 1, 2}).requires_grad_();
  auto [o, hc] = lstm(xs);
  (o.sum() + std::get<1>(hc).sum()).backward();
  expect_vals(
      xs.grad(),
      {0.838517291555, 0.870899526679, 1.2084357515, 1.23445905884, 1.65936020964, 1.69117327032},
      1e-8);
  expect_vals(lstm->named_parameters()["weight_hh_l0"].grad().slice(0, 0, 4),
              {0.0817278960412, 0.0749132608339, 0.0646767090021, 0.0507996515262, 0.0472773652969,
               0.0415789949572, 0.0165960829912, 0.0168071400516, 0.0162135233227, 0.114313305156,
               0.100829266501, 0.082831080463},
              1e-8);
}

// ---------------------------------------------------------------- layouts and empty inputs

TEST(NNLayersLayout, StridedAndZeroSizeInputs) {
  manual_seed(9);
  // Non-contiguous inputs give the same results as their contiguous copies.
  Tensor xt = randn({2, 3, 6, 5}).transpose(2, 3);
  ASSERT_FALSE(xt.is_contiguous());
  nn::MaxPool2d mp(2);
  expect_close(mp(xt), mp(xt.contiguous()));
  nn::AvgPool2d ap(nn::AvgPool2dOptions(3).stride(1).padding(1));
  expect_close(ap(xt), ap(xt.contiguous()), 1e-6);
  nn::BatchNorm2d bn(3);
  bn->eval();
  expect_close(bn(xt), bn(xt.contiguous()), 1e-6);
  nn::LayerNorm ln(std::vector<int64_t>{6});
  expect_close(ln(xt), ln(xt.contiguous()), 1e-6);
  nn::GRU gru(nn::GRUOptions(4, 3).batch_first(true));
  Tensor seq = randn({5, 2, 4}).transpose(0, 1);  // (B, T, I), strided
  expect_close(std::get<0>(gru(seq)), std::get<0>(gru(seq.contiguous())), 1e-6);
  nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>{2}).mode(kBilinear));
  expect_close(up(xt), up(xt.contiguous()), 1e-6);
  // Zero-size batches keep their shapes.
  EXPECT_EQ(mp(randn({0, 3, 4, 4})).sizes().vec(), (std::vector<int64_t>{0, 3, 2, 2}));
  EXPECT_EQ(bn(randn({0, 3, 4, 4})).sizes().vec(), (std::vector<int64_t>{0, 3, 4, 4}));
  EXPECT_EQ(ln(randn({0, 6})).sizes().vec(), (std::vector<int64_t>{0, 6}));
  nn::Dropout d(0.5);
  EXPECT_EQ(d(randn({0, 4})).sizes().vec(), (std::vector<int64_t>{0, 4}));
  nn::ReflectionPad2d rp(1);
  EXPECT_EQ(rp(randn({0, 2, 3, 3})).sizes().vec(), (std::vector<int64_t>{0, 2, 5, 5}));
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions().reduction(kSum));
  EXPECT_EQ(ce(randn({0, 3}), zeros({0}, TensorOptions(kLong))).item<double>(), 0.0);
}

TEST(NNLayersGrad, GradcheckComposites) {
  using autograd::gradcheck;
  using autograd::gradgradcheck;
  manual_seed(10);
  auto opts = TensorOptions(kDouble);
  // lp_pool (sign * relu(|.|) composite) on positive inputs.
  Tensor x = (rand({1, 2, 4, 4}, opts) + 0.5).requires_grad_();
  auto lp = [](const autograd::variable_list& v) {
    return autograd::variable_list{F::lp_pool2d(v[0], F::LPPool2dFuncOptions(2, 2))};
  };
  EXPECT_TRUE(gradcheck(lp, {x}));
  // Circular-padded convolution through the layer's padding path.
  nn::Conv1d conv(nn::Conv1dOptions(2, 3, 3).padding(2).dilation(2).padding_mode(kCircular));
  Tensor w = randn({3, 2, 3}, opts).requires_grad_(), b = randn({3}, opts).requires_grad_();
  Tensor xc = randn({2, 2, 6}, opts).requires_grad_();
  auto cf = [&](const autograd::variable_list& v) {
    conv->weight = v[1];
    conv->bias = v[2];
    return autograd::variable_list{conv(v[0])};
  };
  EXPECT_TRUE(gradcheck(cf, {xc, w, b}));
  EXPECT_TRUE(gradgradcheck(cf, {xc, w, b}));
  // Triplet loss with a swapped custom distance, and kl_div batchmean.
  Tensor a = randn({3, 4}, opts).requires_grad_(), p = randn({3, 4}, opts).requires_grad_(),
         n = randn({3, 4}, opts).requires_grad_();
  EXPECT_TRUE(gradcheck(
      [](const autograd::variable_list& v) {
        return autograd::variable_list{F::triplet_margin_with_distance_loss(
            v[0], v[1], v[2], F::TripletMarginWithDistanceLossFuncOptions().swap(true).margin(2))};
      },
      {a, p, n}));
  Tensor t = softmax(randn({3, 4}, opts), 1);
  EXPECT_TRUE(gradcheck(
      [&](const autograd::variable_list& v) {
        return autograd::variable_list{F::kl_div(v[0], t, F::KLDivFuncOptions(kBatchMean))};
      },
      {a}));
}
