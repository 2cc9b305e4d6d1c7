// Transformer layers and stacks: PyTorch 1.13's nn.Transformer* built from the MultiheadAttention,
// Linear, Dropout and LayerNorm layers, so that parameter names and initialisation match. The
// inference fast path lives in transformer_fast.cpp.
#include "ember/nn/modules/transformer.h"

#include <limits>

#include "ember/amp.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/init.h"
#include "ember/ops.h"

namespace ember::nn {

namespace {

Tensor run_activation(const transformer_activation_t& a, const Tensor& x) {
  if (std::holds_alternative<enumtype::kReLU>(a)) return ember::relu(x);
  if (std::holds_alternative<enumtype::kGELU>(a)) return ember::gelu(x);
  const auto& f = std::get<std::function<Tensor(const Tensor&)>>(a);
  EMBER_CHECK(f != nullptr, "[TransformerLayer] the activation function is empty");
  return f(x);
}

void check_key_padding_mask(const Tensor& m, const char* who) {
  EMBER_CHECK(!m.defined() || m.scalar_type() == kBool || m.is_floating_point(), "[", who,
              "] only bool and floating types of key_padding_mask are supported");
}

}  // namespace

// ---- TransformerEncoderLayer ----

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(TransformerEncoderLayerOptions options_)
    : options(std::move(options_)) {
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  const auto& o = options;
  self_attn = register_module("self_attn",
                              MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead())
                                                     .dropout(o.dropout())
                                                     .batch_first(o.batch_first())));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 =
      register_module("norm1", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  norm2 =
      register_module("norm2", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->_reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

Tensor TransformerEncoderLayerImpl::activation(const Tensor& x) const {
  return run_activation(options.activation(), x);
}

Tensor TransformerEncoderLayerImpl::sa_block(const Tensor& x, const Tensor& mask,
                                             const Tensor& key_padding_mask) {
  Tensor a = std::get<0>(self_attn(x, x, x, key_padding_mask, /*need_weights=*/false, mask));
  return dropout1(a);
}

Tensor TransformerEncoderLayerImpl::ff_block(const Tensor& x) {
  return dropout2(linear2(dropout(activation(linear1(x)))));
}

std::string TransformerEncoderLayerImpl::fast_path_blocker(
    const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) const {
  // PyTorch 1.13's conditions, in its order.
  if (src.dim() != 3) return "input not batched";
  if (is_training()) return "training is enabled";
  if (!options.batch_first()) return "self_attn.batch_first was not True";
  if (!self_attn->_qkv_same_embed_dim) return "self_attn._qkv_same_embed_dim was not True";
  if (std::holds_alternative<std::function<Tensor(const Tensor&)>>(options.activation()))
    return "activation_relu_or_gelu was not True";
  if (norm1->options.eps() != norm2->options.eps()) return "norm1.eps is not equal to norm2.eps";
  if (src_mask.defined()) return "src_mask is not supported for fastpath";
  if (options.nhead() % 2 == 1) return "num_head is odd";
  if (autocast::is_enabled(kCPU) || autocast::is_enabled(kCUDA)) return "autocast is enabled";
  if (!self_attn->in_proj_bias.defined() || !norm1->weight.defined() || !norm2->weight.defined())
    return "a bias or layer norm weight is missing";
  if (has_forward_hooks() || self_attn->has_forward_hooks())
    return "the layer or its attention has hooks";
  if (GradMode::is_enabled()) {
    if (src.requires_grad()) return "grad is enabled and src requires_grad";
    for (const Tensor& p : parameters())
      if (p.requires_grad()) return "grad is enabled and a parameter requires_grad";
  }
  return "";
}

Tensor TransformerEncoderLayerImpl::fast_forward(const Tensor& src, const Tensor& mask,
                                                 std::optional<int64_t> mask_type,
                                                 const Tensor& seq_lengths) {
  const bool gelu = std::holds_alternative<enumtype::kGELU>(options.activation());
  return _transformer_encoder_layer_fwd(
      src, options.d_model(), options.nhead(), self_attn->in_proj_weight, self_attn->in_proj_bias,
      self_attn->out_proj->weight, self_attn->out_proj->bias, gelu, options.norm_first(),
      norm1->options.eps(), norm1->weight, norm1->bias, norm2->weight, norm2->bias, linear1->weight,
      linear1->bias, linear2->weight, linear2->bias, mask, mask_type, seq_lengths);
}

Tensor TransformerEncoderLayerImpl::forward_packed(const Tensor& packed,
                                                   const Tensor& seq_lengths) {
  return fast_forward(packed, {}, std::nullopt, seq_lengths);
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  check_key_padding_mask(src_key_padding_mask, "TransformerEncoderLayer");
  if (fast_path_blocker(src, src_mask, src_key_padding_mask).empty()) {
    if (src_key_padding_mask.defined()) return fast_forward(src, src_key_padding_mask, 1, {});
    return fast_forward(src, {}, std::nullopt, {});
  }
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa_block(norm1(x), src_mask, src_key_padding_mask);
    x = x + ff_block(norm2(x));
  } else {
    x = norm1(x + sa_block(x, src_mask, src_key_padding_mask));
    x = norm2(x + ff_block(x));
  }
  return x;
}

// ---- TransformerDecoderLayer ----

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(TransformerDecoderLayerOptions options_)
    : options(std::move(options_)) {
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  const auto& o = options;
  auto mha = [&] {
    return MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead())
                                  .dropout(o.dropout())
                                  .batch_first(o.batch_first()));
  };
  auto ln = [&] { return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())); };
  self_attn = register_module("self_attn", mha());
  multihead_attn = register_module("multihead_attn", mha());
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", ln());
  norm2 = register_module("norm2", ln());
  norm3 = register_module("norm3", ln());
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn->_reset_parameters();
  multihead_attn->_reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
  norm3->reset_parameters();
}

Tensor TransformerDecoderLayerImpl::activation(const Tensor& x) const {
  return run_activation(options.activation(), x);
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  auto sa = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn(x, x, x, tgt_key_padding_mask, false, tgt_mask)));
  };
  auto mha = [&](const Tensor& x) {
    return dropout2(std::get<0>(
        multihead_attn(x, memory, memory, memory_key_padding_mask, false, memory_mask)));
  };
  auto ff = [&](const Tensor& x) { return dropout3(linear2(dropout(activation(linear1(x))))); };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + sa(norm1(x));
    x = x + mha(norm2(x));
    x = x + ff(norm3(x));
  } else {
    x = norm1(x + sa(x));
    x = norm2(x + mha(x));
    x = norm3(x + ff(x));
  }
  return x;
}

// ---- TransformerEncoder / TransformerDecoder ----

namespace {
/// `n` deep copies of `layer` (PyTorch's _get_clones).
template <typename Holder>
ModuleList clones(const Holder& layer, int64_t n, const char* who) {
  EMBER_CHECK(!layer.is_empty(), "[", who, "] the layer to clone is empty");
  EMBER_CHECK(n >= 0, "[", who, "] num_layers must be non-negative, got ", n);
  ModuleList list;
  for (int64_t i = 0; i < n; ++i) list->push_back(layer->clone());
  return list;
}

// A stack (encoder or decoder): its clones of the layer and its own copy of the final norm.
template <class Stack, class Holder>
void reset_stack(Stack& stack, const Holder& layer, const char* who) {
  stack.layers = stack.register_module("layers", clones(layer, stack.options.num_layers(), who));
  if (!stack.options.norm().is_empty()) {
    stack.norm = stack.options.norm().rebind(stack.options.norm().ptr()->clone());
    stack.register_module("norm", stack.norm.ptr());
  }
}

template <class LayerImpl, class Stack>
void reset_stack_parameters(Stack& stack) {
  for (const auto& m : *stack.layers) std::dynamic_pointer_cast<LayerImpl>(m)->reset_parameters();
  if (!stack.norm.is_empty())
    if (auto* ln = dynamic_cast<LayerNormImpl*>(stack.norm.ptr().get())) ln->reset_parameters();
}
}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options_)
    : options(std::move(options_)) {
  reset();
}

void TransformerEncoderImpl::reset() {
  reset_stack(*this, options.encoder_layer(), "TransformerEncoder");
}

void TransformerEncoderImpl::reset_parameters() {
  reset_stack_parameters<TransformerEncoderLayerImpl>(*this);
}

bool TransformerEncoderImpl::packing_ok(const Tensor& src, const Tensor& src_mask,
                                        const Tensor& src_key_padding_mask) const {
  // PyTorch 1.13's conditions for its nested-tensor path: the first layer post-LN and fast, a
  // left-aligned padding mask; here every layer must be fast too.
  if (!options.enable_nested_tensor() || !src_key_padding_mask.defined() || src_mask.defined() ||
      src.dim() != 3 || layers->size() == 0)
    return false;
  for (size_t i = 0; i < layers->size(); ++i) {
    auto* layer = layers->at<TransformerEncoderLayerImpl>(int64_t(i));
    if (!layer || (i == 0 && layer->options.norm_first()) ||
        !layer->fast_path_blocker(src, src_mask, src_key_padding_mask).empty())
      return false;
  }
  NoGradGuard no_grad;
  const Tensor& m = src_key_padding_mask;
  Tensor keep = m.scalar_type() == kBool ? logical_not(m) : eq(m, Scalar(0.0));
  Tensor len = keep.sum(std::vector<int64_t>{1}, true, kLong);
  Tensor left = lt(arange(m.size(1), TensorOptions(kLong)).unsqueeze(0), len);
  return equal(left, keep);
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask,
                                       const Tensor& src_key_padding_mask) {
  check_key_padding_mask(src_key_padding_mask, "TransformerEncoder");
  Tensor out = src;
  bool packed = false;
  Tensor lengths;
  if (packing_ok(src, src_mask, src_key_padding_mask)) {
    std::tie(out, lengths) = _transformer_pack_padded(src, src_key_padding_mask);
    packed = true;
  }
  for (const auto& m : *layers) {
    auto* layer = dynamic_cast<TransformerEncoderLayerImpl*>(m.get());
    EMBER_CHECK(layer != nullptr,
                "[TransformerEncoder] its layers must be TransformerEncoderLayers");
    out = packed ? layer->forward_packed(out, lengths)
                 : layer->forward(out, src_mask, src_key_padding_mask);
  }
  if (packed) out = _transformer_unpack_padded(out, src_key_padding_mask);
  if (!norm.is_empty()) out = norm.forward(out);
  return out;
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions options_)
    : options(std::move(options_)) {
  reset();
}

void TransformerDecoderImpl::reset() {
  reset_stack(*this, options.decoder_layer(), "TransformerDecoder");
}

void TransformerDecoderImpl::reset_parameters() {
  reset_stack_parameters<TransformerDecoderLayerImpl>(*this);
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor out = tgt;
  for (const auto& m : *layers) {
    auto* layer = dynamic_cast<TransformerDecoderLayerImpl*>(m.get());
    EMBER_CHECK(layer != nullptr,
                "[TransformerDecoder] its layers must be TransformerDecoderLayers");
    out = layer->forward(out, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                         memory_key_padding_mask);
  }
  if (!norm.is_empty()) out = norm.forward(out);
  return out;
}

// ---- Transformer ----

TransformerImpl::TransformerImpl(TransformerOptions options_) : options(std::move(options_)) {
  reset();
}

namespace {
// The options of the Transformer's own encoder or decoder layer, from its options.
template <class LayerOptions>
LayerOptions layer_options(const TransformerOptions& o) {
  LayerOptions l(o.d_model(), o.nhead());
  l.dim_feedforward(o.dim_feedforward())
      .dropout(o.dropout())
      .activation(o.activation())
      .layer_norm_eps(o.layer_norm_eps())
      .batch_first(o.batch_first())
      .norm_first(o.norm_first());
  return l;
}

// A clone of a custom encoder or decoder, which must be a `StackImpl`.
template <class StackImpl>
std::shared_ptr<StackImpl> clone_custom(const std::shared_ptr<Module>& custom, const char* what,
                                        const char* type) {
  auto stack = std::dynamic_pointer_cast<StackImpl>(custom->clone());
  EMBER_CHECK_TYPE(stack != nullptr, "[Transformer] ", what, " must be a ", type, ", got a ",
                   custom->name());
  return stack;
}
}  // namespace

void TransformerImpl::reset() {
  const auto& o = options;
  auto ln = [&] { return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())); };
  if (o.custom_encoder()) {
    encoder = TransformerEncoder(clone_custom<TransformerEncoderImpl>(
        o.custom_encoder(), "custom_encoder", "TransformerEncoder"));
  } else {
    TransformerEncoderLayer layer(layer_options<TransformerEncoderLayerOptions>(o));
    encoder = TransformerEncoder(
        TransformerEncoderOptions(layer, o.num_encoder_layers()).norm(AnyModule(ln())));
  }
  register_module("encoder", encoder);
  if (o.custom_decoder()) {
    decoder = TransformerDecoder(clone_custom<TransformerDecoderImpl>(
        o.custom_decoder(), "custom_decoder", "TransformerDecoder"));
  } else {
    TransformerDecoderLayer layer(layer_options<TransformerDecoderLayerOptions>(o));
    decoder = TransformerDecoder(
        TransformerDecoderOptions(layer, o.num_decoder_layers()).norm(AnyModule(ln())));
  }
  register_module("decoder", decoder);
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) {
  const bool batched = src.dim() == 3;
  const int64_t bdim = options.batch_first() ? 0 : 1;
  EMBER_CHECK(!batched || src.size(bdim) == tgt.size(bdim),
              "[Transformer] the batch number of src and tgt must be equal");
  EMBER_CHECK(src.size(-1) == options.d_model() && tgt.size(-1) == options.d_model(),
              "[Transformer] the feature number of src and tgt must be equal to d_model");
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                          memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  EMBER_CHECK_VALUE(sz >= 0,
                    "[Transformer] generate_square_subsequent_mask: sz must be "
                    "non-negative, got ",
                    sz);
  return ember::triu(full({sz, sz}, -std::numeric_limits<double>::infinity()), 1);
}

}  // namespace ember::nn
