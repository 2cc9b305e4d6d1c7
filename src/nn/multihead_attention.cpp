// Multi-head attention: PyTorch 1.13's F.multi_head_attention_forward (its shape assertions,
// mask conventions and weight averaging) and the MultiheadAttention layer, shared by the C++
// and Python front ends. Built from ember ops, so every gradient comes from its parts.
#include <cmath>
#include <limits>

#include "ember/blas.h"
#include "ember/factory.h"
#include "ember/nn/diagnostics.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/init.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"

namespace ember::nn {

namespace functional {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// torch's _mha_shape_check: whether the query is batched, with its assertions.
bool batched_shapes(const Tensor& query, const Tensor& key, const Tensor& value,
                    const Tensor& key_padding_mask, const Tensor& attn_mask, int64_t num_heads) {
  const char* fn = "[multi_head_attention_forward] ";
  if (query.dim() == 3) {
    EMBER_NN_ASSERT(key.dim() == 3 && value.dim() == 3, fn,
                    "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found ",
                    key.dim(), "-D and ", value.dim(), "-D tensors respectively");
    EMBER_NN_ASSERT(!key_padding_mask.defined() || key_padding_mask.dim() == 2, fn,
                    "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                    "but found ",
                    key_padding_mask.dim(), "-D tensor instead");
    EMBER_NN_ASSERT(!attn_mask.defined() || attn_mask.dim() == 2 || attn_mask.dim() == 3, fn,
                    "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                    "found ",
                    attn_mask.dim(), "-D tensor instead");
    return true;
  }
  EMBER_NN_ASSERT(query.dim() == 2, fn,
                  "query should be unbatched 2D or batched 3D tensor but received ", query.dim(),
                  "-D query tensor");
  EMBER_NN_ASSERT(key.dim() == 2 && value.dim() == 2, fn,
                  "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found ",
                  key.dim(), "-D and ", value.dim(), "-D tensors respectively");
  EMBER_NN_ASSERT(!key_padding_mask.defined() || key_padding_mask.dim() == 1, fn,
                  "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                  "but found ",
                  key_padding_mask.dim(), "-D tensor instead");
  if (attn_mask.defined()) {
    EMBER_NN_ASSERT(attn_mask.dim() == 2 || attn_mask.dim() == 3, fn,
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    "but found ",
                    attn_mask.dim(), "-D tensor instead");
    if (attn_mask.dim() == 3) {
      std::vector<int64_t> want = {num_heads, query.size(0), key.size(0)};
      EMBER_NN_ASSERT(attn_mask.sizes().vec() == want, fn, "Expected `attn_mask` shape to be ",
                      detail::repr_tuple(want), " but got ", detail::repr_tuple(attn_mask.sizes()));
    }
  }
  return false;
}

// Appends one zero column to the last dim of a mask.
Tensor pad_last(const Tensor& mask) {
  return mask.defined() ? ember::pad(mask, {0, 1}, "constant", 0.0) : mask;
}
}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
    const MultiheadAttentionForwardFuncOptions& o) {
  const char* fn = "[multi_head_attention_forward] ";
  Tensor query = query_in, key = key_in, value = value_in;
  Tensor key_padding_mask = o.key_padding_mask(), attn_mask = o.attn_mask();
  const int64_t heads = o.num_heads();
  EMBER_NN_ASSERT(!key_padding_mask.defined() || key_padding_mask.scalar_type() == kBool ||
                      key_padding_mask.is_floating_point(),
                  fn, "only bool and floating types of key_padding_mask are supported");
  const bool batched = batched_shapes(query, key, value, key_padding_mask, attn_mask, heads);
  // The (L, N, E) view of an input (or of its projection: projections are row-wise, so they run
  // on the caller's layout, where a batch-first input is contiguous and folds into one GEMM).
  auto to_lne = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(1);
    return o.batch_first() ? t.transpose(1, 0) : t;
  };
  query = to_lne(query);
  key = to_lne(key);
  value = to_lne(value);
  if (!batched && key_padding_mask.defined()) key_padding_mask = key_padding_mask.unsqueeze(0);
  const int64_t tgt_len = query.size(0), bsz = query.size(1), embed_dim = query.size(2);
  const int64_t src_len = key.size(0);
  EMBER_NN_ASSERT(embed_dim == o.embed_dim_to_check(), fn, "was expecting embedding dimension of ",
                  o.embed_dim_to_check(), ", but got ", embed_dim);
  EMBER_NN_ASSERT(heads > 0 && embed_dim % heads == 0, fn, "embed_dim ", embed_dim,
                  " not divisible by num_heads ", heads);
  const int64_t head_dim = embed_dim / heads;

  // Input projections.
  Tensor w_q, w_k, w_v;
  if (!o.use_separate_proj_weight()) {
    EMBER_NN_ASSERT(key.sizes().vec() == value.sizes().vec(), fn, "key shape ",
                    detail::repr_tuple(key.sizes()), " does not match value shape ",
                    detail::repr_tuple(value.sizes()));
    auto w = o.in_proj_weight().chunk(3);
    w_q = w[0], w_k = w[1], w_v = w[2];
  } else {
    EMBER_NN_ASSERT(key.size(0) == value.size(0) && key.size(1) == value.size(1), fn,
                    "key's sequence and batch dims (", key.size(0), ", ", key.size(1),
                    ") do not match value's (", value.size(0), ", ", value.size(1), ")");
    w_q = o.q_proj_weight(), w_k = o.k_proj_weight(), w_v = o.v_proj_weight();
  }
  Tensor b_q, b_k, b_v;
  if (o.in_proj_bias().defined()) {
    auto b = o.in_proj_bias().chunk(3);
    b_q = b[0], b_k = b[1], b_v = b[2];
  }
  // Self-attention projects with the packed weight in one product (as PyTorch's
  // _in_projection_packed); key == value shares one product for both.
  Tensor q, k, v;
  if (!o.use_separate_proj_weight() && query_in.is_same(key_in) && key_in.is_same(value_in)) {
    auto qkv = to_lne(ember::linear(query_in, o.in_proj_weight(), o.in_proj_bias())).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else if (!o.use_separate_proj_weight() && key_in.is_same(value_in)) {
    const int64_t e = w_q.size(0);
    Tensor b_kv = o.in_proj_bias().defined() ? o.in_proj_bias().narrow(0, e, 2 * e) : Tensor();
    q = to_lne(ember::linear(query_in, w_q, b_q));
    auto kv =
        to_lne(ember::linear(key_in, o.in_proj_weight().narrow(0, e, 2 * e), b_kv)).chunk(2, -1);
    k = kv[0], v = kv[1];
  } else {
    q = to_lne(ember::linear(query_in, w_q, b_q));
    k = to_lne(ember::linear(key_in, w_k, b_k));
    v = to_lne(ember::linear(value_in, w_v, b_v));
  }

  if (attn_mask.defined()) {
    if (attn_mask.scalar_type() == kByte) {
      warn(
          "Byte tensor for attn_mask in nn.MultiheadAttention is deprecated. Use bool tensor "
          "instead.");
      attn_mask = attn_mask.to(kBool);
    } else {
      EMBER_NN_ASSERT(attn_mask.is_floating_point() || attn_mask.scalar_type() == kBool, fn,
                      "Only float, byte, and bool types are supported for attn_mask, not ",
                      attn_mask.scalar_type());
    }
    if (attn_mask.dim() == 2) {
      EMBER_CHECK(attn_mask.size(0) == tgt_len && attn_mask.size(1) == src_len, fn,
                  "The shape of the 2D attn_mask is ", attn_mask.sizes(), ", but should be (",
                  tgt_len, ", ", src_len, ").");
      attn_mask = attn_mask.unsqueeze(0);
    } else {
      std::vector<int64_t> want = {bsz * heads, tgt_len, src_len};
      EMBER_CHECK(attn_mask.sizes().vec() == want, fn, "The shape of the 3D attn_mask is ",
                  attn_mask.sizes(), ", but should be ", detail::repr_tuple(want), ".");
    }
  }
  if (o.bias_k().defined() || o.bias_v().defined()) {
    EMBER_NN_ASSERT(o.bias_k().defined() && o.bias_v().defined(), fn,
                    "bias_k and bias_v must be given together");
    EMBER_NN_ASSERT(!o.static_k().defined() && !o.static_v().defined(), fn,
                    "bias cannot be added to static key or value.");
    k = cat({k, o.bias_k().repeat({1, bsz, 1})});
    v = cat({v, o.bias_v().repeat({1, bsz, 1})});
    attn_mask = pad_last(attn_mask);
    key_padding_mask = pad_last(key_padding_mask);
  }

  // (L, N, E) -> (N * heads, L, head_dim).
  // Scaling q here makes the one copy its strided projection needs anyway.
  q = (q / std::sqrt(double(head_dim))).reshape({tgt_len, bsz * heads, head_dim}).transpose(0, 1);
  auto heads_view = [&](const Tensor& t, const Tensor& fixed, const char* name) {
    if (!fixed.defined())
      return t.contiguous().view({t.size(0), bsz * heads, head_dim}).transpose(0, 1);
    EMBER_NN_ASSERT(fixed.size(0) == bsz * heads && fixed.size(2) == head_dim, fn, "expecting ",
                    name, " of shape (", bsz * heads, ", *, ", head_dim, "), but got ",
                    fixed.sizes());
    return fixed;
  };
  k = heads_view(k, o.static_k(), "static_k");
  v = heads_view(v, o.static_v(), "static_v");
  if (o.add_zero_attn()) {
    Tensor z = zeros({bsz * heads, 1, head_dim}, k.options());
    k = cat({k, z}, 1);
    v = cat({v, z}, 1);
    attn_mask = pad_last(attn_mask);
    key_padding_mask = pad_last(key_padding_mask);
  }
  const int64_t kv_len = k.size(1);

  // One additive float mask from attn_mask and key_padding_mask.
  if (key_padding_mask.defined()) {
    EMBER_NN_ASSERT(key_padding_mask.size(0) == bsz && key_padding_mask.size(1) == kv_len, fn,
                    "expecting key_padding_mask shape of (", bsz, ", ", kv_len, "), but got ",
                    detail::repr_tuple(key_padding_mask.sizes()));
    Tensor kpm = key_padding_mask.view({bsz, 1, 1, kv_len})
                     .expand({-1, heads, -1, -1})
                     .reshape({bsz * heads, 1, kv_len});
    if (!attn_mask.defined())
      attn_mask = kpm;
    else if (attn_mask.scalar_type() == kBool && kpm.scalar_type() == kBool)
      attn_mask = attn_mask.logical_or(kpm);
    else if (kpm.scalar_type() == kBool)
      attn_mask = where(kpm, Scalar(kNegInf), attn_mask.to(q.scalar_type()));
    else
      attn_mask = (attn_mask.scalar_type() == kBool
                       ? zeros_like(attn_mask, q.options()).masked_fill(attn_mask, kNegInf)
                       : attn_mask) +
                  kpm;
  }
  if (attn_mask.defined() && attn_mask.scalar_type() == kBool)
    attn_mask = zeros_like(attn_mask, q.options()).masked_fill(attn_mask, kNegInf);

  const double dropout_p = o.training() ? o.dropout_p() : 0.0;
  Tensor weights, ctx;  // ctx: (N * heads, L, head_dim)
  if (!o.need_weights()) {
    // No weights to return: the fused kernel, which never forms the L x S matrix (q is scaled).
    ctx = ember::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, false, 1.0);
  } else {
    weights = attn_mask.defined() ? baddbmm(attn_mask, q, k.transpose(-2, -1))
                                  : bmm(q, k.transpose(-2, -1));
    weights = ember::softmax(weights, -1);
    if (dropout_p > 0.0) weights = ember::dropout(weights, dropout_p, true);
    ctx = bmm(weights, v);
  }
  Tensor out;
  if (batched && o.batch_first()) {
    // Gathered straight into the caller's (N, L, E) layout.
    ctx = ctx.view({bsz, heads, tgt_len, head_dim}).permute({0, 2, 1, 3}).contiguous();
    out =
        ember::linear(ctx.view({bsz * tgt_len, embed_dim}), o.out_proj_weight(), o.out_proj_bias());
    out = out.view({bsz, tgt_len, out.size(1)});
  } else {
    out = ctx.transpose(0, 1).contiguous().view({tgt_len * bsz, embed_dim});
    out = ember::linear(out, o.out_proj_weight(), o.out_proj_bias());
    out = out.view({tgt_len, bsz, out.size(1)});
    if (!batched) out = out.squeeze(1);
  }
  if (!o.need_weights()) return {out, Tensor()};
  weights = weights.view({bsz, heads, tgt_len, kv_len});
  if (o.average_attn_weights()) weights = weights.sum(1) / double(heads);
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace functional

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_)
    : options(options_) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const auto& o = options;
  const int64_t e = o.embed_dim();
  EMBER_NN_ASSERT(o.num_heads() > 0 && e % o.num_heads() == 0,
                  "[MultiheadAttention] embed_dim must be divisible by num_heads");
  head_dim = e / o.num_heads();
  _qkv_same_embed_dim = o.kdim() == e && o.vdim() == e;
  if (!_qkv_same_embed_dim) {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, o.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, o.vdim()}));
    in_proj_weight = register_parameter("in_proj_weight", Tensor(), false);
  } else {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
    q_proj_weight = register_parameter("q_proj_weight", Tensor(), false);
    k_proj_weight = register_parameter("k_proj_weight", Tensor(), false);
    v_proj_weight = register_parameter("v_proj_weight", Tensor(), false);
  }
  in_proj_bias = register_parameter("in_proj_bias", o.bias() ? empty({3 * e}) : Tensor(), o.bias());
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(o.bias())));
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  } else {
    bias_k = Tensor();
    bias_v = Tensor();
  }
  _reset_parameters();
}

void MultiheadAttentionImpl::_reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights) {
  const auto& o = options;
  functional::MultiheadAttentionForwardFuncOptions f(
      o.embed_dim(), o.num_heads(), in_proj_weight, in_proj_bias, bias_k, bias_v, o.add_zero_attn(),
      o.dropout(), out_proj->weight, out_proj->bias);
  f.training(is_training())
      .key_padding_mask(key_padding_mask)
      .need_weights(need_weights)
      .attn_mask(attn_mask)
      .use_separate_proj_weight(!_qkv_same_embed_dim)
      .q_proj_weight(q_proj_weight)
      .k_proj_weight(k_proj_weight)
      .v_proj_weight(v_proj_weight)
      .average_attn_weights(average_attn_weights)
      .batch_first(o.batch_first());
  return functional::multi_head_attention_forward(query, key, value, f);
}

}  // namespace ember::nn
