// Scaled dot-product attention: the public op (PyTorch 2.1), PyTorch 1.13's
// _scaled_dot_product_attention, the reference decomposition, and the fused CPU primitive with
// its backward (Note [Fused attention]).
#include <cmath>
#include <limits>
#include <string>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/blas.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"
#include "kernels/stubs/attention.h"
#include "ops/call_path.h"

namespace ember {

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

// Note [Fused attention]
// scaled_dot_product_attention runs the fused primitive when it can (no dropout, float32 /
// bfloat16 / float64, CPU): the kernel walks the keys in tiles with an online softmax and keeps
// only the logsumexp of each query's scores, so memory is O(L·E), not O(L·S). Its backward
// recomputes the score tiles from that logsumexp. Everything else (dropout, other dtypes,
// create_graph through the backward) runs the decomposition _scaled_dot_product_attention_math,
// which is also the reference the tests hold the kernel to. bfloat16 is computed in float32.

namespace {

constexpr const char* kSdpa = "scaled_dot_product_attention";

std::string shapes_str(const Tensor& q, const Tensor& k, const Tensor& v) {
  return "query " + shape_str(q.sizes()) + ", key " + shape_str(k.sizes()) + ", value " +
         shape_str(v.sizes());
}

/// The leading (batch) dims of `t`: all but the last two.
IntArrayRef batch_dims(const Tensor& t) { return t.sizes().slice(0, size_t(t.dim() - 2)); }

/// Whether `a` broadcasts with `b` (numpy rules); fills `out` with the result.
bool broadcast_into(IntArrayRef a, IntArrayRef b, DimVector& out) {
  const size_t n = std::max(a.size(), b.size());
  out.assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    out[i] = x == 1 ? y : x;
  }
  return true;
}

/// Checks query/key/value and returns their broadcast leading dims.
DimVector check_qkv(const Tensor& q, const Tensor& k, const Tensor& v, const char* op) {
  EMBER_CHECK(q.defined() && k.defined() && v.defined(), "[", op,
              "] query, key and value must be defined");
  EMBER_CHECK_INDEX(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, "[", op,
                    "] query, key and value must have at least 2 dims (*, L, E), (*, S, E), "
                    "(*, S, Ev); got ",
                    shapes_str(q, k, v));
  EMBER_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), "[", op,
              "] Expected query, key, and value to have the same dtype, but got query.dtype: ",
              dtype_name(q.dtype()), ", key.dtype: ", dtype_name(k.dtype()),
              ", value.dtype: ", dtype_name(v.dtype()));
  EMBER_CHECK(isFloatingType(q.dtype()), "[", op,
              "] expects floating-point query, key and value, got ", dtype_name(q.dtype()));
  EMBER_CHECK(q.device() == k.device() && q.device() == v.device(), "[", op,
              "] query, key and value must be on one device");
  EMBER_CHECK(q.size(-1) == k.size(-1), "[", op,
              "] query and key must have the same embedding dim E (last dim); got ",
              shapes_str(q, k, v));
  EMBER_CHECK(k.size(-2) == v.size(-2), "[", op,
              "] key and value must have the same sequence length S (dim -2); got ",
              shapes_str(q, k, v));
  DimVector qk, all;
  const bool ok = broadcast_into(batch_dims(q), batch_dims(k), qk) &&
                  broadcast_into(IntArrayRef(qk), batch_dims(v), all);
  EMBER_CHECK(ok, "[", op,
              "] the leading (batch) dims of query, key and value must broadcast; got ",
              shapes_str(q, k, v));
  return all;
}

/// Checks the mask's dtype and that it broadcasts to (*batch, L, S).
void check_mask(const Tensor& mask, const Tensor& q, IntArrayRef batch, int64_t L, int64_t S,
                bool is_causal, const char* op) {
  if (!mask.defined()) return;
  EMBER_CHECK(!is_causal, "[", op,
              "] Explicit attn_mask should not be set when is_causal=True (pass one or the other)");
  EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == q.dtype(), "[", op,
              "] Expected attn_mask dtype to be bool or to match query dtype (",
              dtype_name(q.dtype()), "), got ", dtype_name(mask.dtype()));
  DimVector full(batch);
  full.push_back(L);
  full.push_back(S);
  DimVector b;
  EMBER_CHECK(broadcast_into(mask.sizes(), IntArrayRef(full), b) && b.size() == full.size() &&
                  std::equal(b.data(), b.data() + b.size(), full.data()),
              "[", op, "] attn_mask of shape ", shape_str(mask.sizes()),
              " does not broadcast to the attention weights' shape ", shape_str(IntArrayRef(full)));
}

/// The mask as an additive bias of `dtype`: bool masks become 0 / -inf.
Tensor additive_mask(const Tensor& mask, ScalarType dtype) {
  if (mask.dtype() != kBool) return mask;
  return zeros(mask.sizes(), mask.options().dtype(dtype))
      .masked_fill(mask.logical_not(), -std::numeric_limits<double>::infinity());
}

/// PyTorch's top-left causal mask (L, S): query i sees keys j <= i.
Tensor causal_mask(int64_t L, int64_t S, const Tensor& like) {
  return ones({L, S}, like.options().dtype(kBool)).tril();
}

double default_scale(const Tensor& q, std::optional<double> scale) {
  return scale ? *scale : 1.0 / std::sqrt(double(q.size(-1)));
}

/// softmax(scale q kᵀ + bias) with ember ops (materialised); `mask`/`causal` as the primitive.
Tensor attention_weights(const Tensor& q, const Tensor& k, const Tensor& mask, bool causal,
                         double scale) {
  Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;
  if (causal) scores = scores + additive_mask(causal_mask(q.size(-2), k.size(-2), q), q.dtype());
  if (mask.defined()) scores = scores + additive_mask(mask, q.dtype());
  return softmax(scores, -1);
}

/// The gradients of the fused primitive written with ember ops, so that they are differentiable
/// again (create_graph).
variable_list fused_math_vjp(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor& mask, bool causal, double scale) {
  Tensor p = attention_weights(q, k, mask, causal, scale);
  Tensor gv = matmul(p.transpose(-2, -1), g);
  Tensor gp = matmul(g, v.transpose(-2, -1));
  Tensor gs = p * (gp - (gp * p).sum(IntArrayRef{-1}, true));
  Tensor gq = matmul(gs, k) * scale;
  Tensor gk = matmul(gs.transpose(-2, -1), q) * scale;
  return variable_list{gq, gk, gv};
}

Tensor as_compute(const Tensor& t) {
  Tensor c = t.dtype() == kBFloat16 ? t.to(kFloat) : t;
  return c.contiguous();
}

// The mask as the kernels read it: broadcast to (batch..., L, S), bfloat16 widened to float32.
Tensor kernel_mask(const Tensor& attn_mask, const DimVector& batch, int64_t L, int64_t S) {
  if (!attn_mask.defined()) return {};
  DimVector ms(batch);
  ms.push_back(L);
  ms.push_back(S);
  return (attn_mask.dtype() == kBFloat16 ? attn_mask.to(kFloat) : attn_mask)
      .expand(IntArrayRef(ms));
}
}  // namespace

// ---- the reference decomposition ----

std::tuple<Tensor, Tensor> _scaled_dot_product_attention_math(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    double dropout_p, bool is_causal, const Tensor& dropout_mask, std::optional<double> scale) {
  EMBER_OP(_scaled_dot_product_attention_math, query, key, value, attn_mask, dropout_p, is_causal,
           dropout_mask, scale);
  const char* op = "_scaled_dot_product_attention_math";
  DimVector batch = check_qkv(query, key, value, op);
  const int64_t L = query.size(-2), S = key.size(-2);
  check_mask(attn_mask, query, IntArrayRef(batch), L, S, is_causal, op);
  // The scale is split between q and k (sqrt each) to keep the products in range, as ATen.
  const double s = default_scale(query, scale);
  const double rs = std::sqrt(std::abs(s));
  Tensor attn = matmul(query * (s < 0 ? -rs : rs), key.transpose(-2, -1) * rs);
  if (is_causal) attn = attn + additive_mask(causal_mask(L, S, query), query.dtype());
  if (attn_mask.defined()) attn = attn + additive_mask(attn_mask, query.dtype());
  attn = softmax(attn, -1);
  if (dropout_p > 0.0) {
    if (dropout_mask.defined()) {
      Tensor keep = dropout_mask.dtype() == kBool ? dropout_mask : dropout_mask != 0;
      attn = attn.masked_fill(keep.logical_not(), 0.0);
      return {matmul(attn, value * (1.0 / (1.0 - dropout_p))), attn};
    }
    attn = dropout(attn, dropout_p, true);
  }
  return {matmul(attn, value), attn};
}

// ---- PyTorch 1.13's API ----

std::tuple<Tensor, Tensor> _scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                                         const Tensor& value,
                                                         const Tensor& attn_mask, double dropout_p,
                                                         bool need_attn_weights, bool is_causal) {
  EMBER_OP(_scaled_dot_product_attention, query, key, value, attn_mask, dropout_p,
           need_attn_weights, is_causal);
  // As PyTorch 1.13: q and k are each divided by E^(1/4), a bool mask becomes 0 / -inf, the
  // mask is added in place (so it must broadcast to the scores' shape), and the weights are
  // returned whether or not `need_attn_weights` asks for them.
  const char* op = "_scaled_dot_product_attention";
  (void)need_attn_weights;
  EMBER_CHECK_INDEX(query.dim() >= 1 && key.dim() >= 2, "[", op,
                    "] Dimension out of range: query, key and value need at least 2 dims; got ",
                    shapes_str(query, key, value));
  EMBER_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(), "[", op,
              "] expected scalar type ", dtype_name(query.dtype()), " but found ",
              dtype_name(query.dtype() == key.dtype() ? value.dtype() : key.dtype()));
  const double f = std::sqrt(std::sqrt(double(query.size(-1))));
  Tensor mask = attn_mask;
  if (is_causal) {
    EMBER_CHECK(!mask.defined(), "[", op,
                "] Explicit attn_mask should not be set when is_causal=True");
    mask = causal_mask(query.size(-2), key.size(-2), query);
  }
  if (mask.defined()) mask = additive_mask(mask, query.dtype());
  Tensor attn = matmul(query / f, key.transpose(-2, -1) / f);
  if (mask.defined()) attn.add_(mask);
  attn = softmax(attn, -1);
  if (dropout_p > 0.0) attn = dropout(attn, dropout_p, true);
  return {matmul(attn, value), attn};
}

// ---- the public op ----

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  EMBER_OP_CAST(scaled_dot_product_attention, scaled_dot_product_attention, query, key, value,
                attn_mask, dropout_p, is_causal, scale);
  DimVector batch = check_qkv(query, key, value, kSdpa);
  const int64_t L = query.size(-2), S = key.size(-2);
  check_mask(attn_mask, query, IntArrayRef(batch), L, S, is_causal, kSdpa);
  EMBER_CHECK_VALUE(dropout_p >= 0.0 && dropout_p <= 1.0, "[", kSdpa,
                    "] dropout probability has to be between 0 and 1, but got ", dropout_p);
  const ScalarType dt = query.dtype();
  // A mask that requires grad takes the decomposition: the fused rule has no mask gradient.
  const bool fused = dropout_p == 0.0 && query.device().is_cpu() &&
                     (dt == kFloat || dt == kBFloat16 || dt == kDouble) &&
                     !(attn_mask.defined() && attn_mask.requires_grad());
  if (!fused)
    return std::get<0>(_scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p,
                                                          is_causal, Tensor(), scale));
  auto full = [&](const Tensor& t) {
    DimVector s(batch);
    s.push_back(t.size(-2));
    s.push_back(t.size(-1));
    return t.sizes() == IntArrayRef(s) ? t : t.expand(IntArrayRef(s));
  };
  return std::get<0>(_scaled_dot_product_flash_attention_for_cpu(
      full(query), full(key), full(value), 0.0, is_causal, attn_mask, scale));
}

// ---- the fused primitive ----

std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(
    const Tensor& query, const Tensor& key, const Tensor& value, double dropout_p, bool is_causal,
    const Tensor& attn_mask, std::optional<double> scale) {
  EMBER_OP(_scaled_dot_product_flash_attention_for_cpu, query, key, value, dropout_p, is_causal,
           attn_mask, scale);
  const char* op = "_scaled_dot_product_flash_attention_for_cpu";
  DimVector batch = check_qkv(query, key, value, op);
  EMBER_CHECK(batch_dims(query) == IntArrayRef(batch) && batch_dims(key) == IntArrayRef(batch) &&
                  batch_dims(value) == IntArrayRef(batch),
              "[", op, "] query, key and value must have the same leading dims; got ",
              shapes_str(query, key, value));
  const int64_t L = query.size(-2), S = key.size(-2), Ev = value.size(-1);
  check_mask(attn_mask, query, IntArrayRef(batch), L, S, false, op);
  EMBER_CHECK(dropout_p == 0.0, "[", op,
              "] the fused kernel has no dropout; use _scaled_dot_product_attention_math");
  const ScalarType dt = query.dtype();
  EMBER_CHECK_T(NotImplementedError, dt == kFloat || dt == kBFloat16 || dt == kDouble, "[", op,
                "] supports float32, bfloat16 and float64, got ", dtype_name(dt));
  const double s = default_scale(query, scale);
  OpRecorder rec("_scaled_dot_product_flash_attention_for_cpu", {query, key, value});
  const ScalarType ct = dt == kDouble ? kDouble : kFloat;
  DimVector out_shape(batch);
  out_shape.push_back(L);
  DimVector lse_shape = out_shape;
  out_shape.push_back(Ev);
  Tensor out = empty(IntArrayRef(out_shape), query.options().dtype(ct));
  Tensor lse = empty(IntArrayRef(lse_shape), query.options().dtype(ct));
  if (out.numel() > 0 || lse.numel() > 0) {
    if (S == 0) {
      out.zero_();
      lse.fill_(-std::numeric_limits<double>::infinity());
    } else if (L > 0) {
      Tensor mask = kernel_mask(attn_mask, batch, L, S);
      flash_attention_fwd_stub(query.device().type(), as_compute(query), as_compute(key),
                               as_compute(value), mask, out, lse, is_causal, s);
    }
  }
  if (ct != dt) out = out.to(dt);
  if (rec) {
    const bool has_mask = attn_mask.defined();
    rec.args(is_causal, s, has_mask);
    variable_list saved{query, key, value, out, lse};
    if (has_mask) saved.push_back(attn_mask);
    rec.record(
        out,
        [](VjpCtx& c) {
          const Tensor &q = c.saved[0], &k = c.saved[1], &v = c.saved[2];
          const bool causal = c.args().b(0);
          const double sc = c.args().f(1);
          Tensor m = c.args().b(2) ? c.saved[5] : Tensor();
          // create_graph: the math form, which is differentiable again.
          if (GradMode::is_enabled()) return fused_math_vjp(c.grads[0], q, k, v, m, causal, sc);
          auto [gq, gk, gv] = _scaled_dot_product_flash_attention_for_cpu_backward(
              c.grads[0], q, k, v, c.saved[3], c.saved[4], 0.0, causal, m, sc);
          return variable_list{gq, gk, gv};
        },
        saved,
        [](JvpCtx& c) {
          // d out = dP v + P dv with dP = P ∘ (dS − rowsum(P ∘ dS)), dS = scale (dq kᵀ + q dkᵀ).
          const Tensor &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
          const bool causal = c.args().b(0);
          const double sc = c.args().f(1);
          Tensor m = c.args().b(2) ? c.saved[5] : Tensor();
          Tensor p = attention_weights(q, k, m, causal, sc);
          Tensor ds;
          if (c.tangents[0].defined()) ds = matmul(c.tangents[0], k.transpose(-2, -1));
          if (c.tangents[1].defined()) {
            Tensor t = matmul(q, c.tangents[1].transpose(-2, -1));
            ds = ds.defined() ? ds + t : t;
          }
          Tensor dout;
          if (ds.defined()) {
            ds = ds * sc;
            Tensor dp = p * (ds - (p * ds).sum(IntArrayRef{-1}, true));
            dout = matmul(dp, v);
          }
          if (c.tangents[2].defined()) {
            Tensor t = matmul(p, c.tangents[2]);
            dout = dout.defined() ? dout + t : t;
          }
          if (!dout.defined()) dout = zeros_like(c.outputs[0]);
          return variable_list{dout};
        });
  }
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value,
    const Tensor& out, const Tensor& logsumexp, double dropout_p, bool is_causal,
    const Tensor& attn_mask, std::optional<double> scale) {
  EMBER_OP(_scaled_dot_product_flash_attention_for_cpu_backward, grad_out, query, key, value, out,
           logsumexp, dropout_p, is_causal, attn_mask, scale);
  const char* op = "_scaled_dot_product_flash_attention_for_cpu_backward";
  DimVector batch = check_qkv(query, key, value, op);
  const int64_t L = query.size(-2), S = key.size(-2);
  check_mask(attn_mask, query, IntArrayRef(batch), L, S, false, op);
  EMBER_CHECK(dropout_p == 0.0, "[", op, "] the fused kernel has no dropout");
  EMBER_CHECK(grad_out.sizes() == out.sizes() && batch_dims(query) == IntArrayRef(batch) &&
                  batch_dims(key) == IntArrayRef(batch) && batch_dims(value) == IntArrayRef(batch),
              "[", op, "] grad_out ", shape_str(grad_out.sizes()), " must match out ",
              shape_str(out.sizes()),
              " and q/k/v share their leading dims: ", shapes_str(query, key, value));
  const ScalarType dt = query.dtype();
  EMBER_CHECK_T(NotImplementedError, dt == kFloat || dt == kBFloat16 || dt == kDouble, "[", op,
                "] supports float32, bfloat16 and float64, got ", dtype_name(dt));
  const double s = default_scale(query, scale);
  const ScalarType ct = dt == kDouble ? kDouble : kFloat;
  Tensor gq = zeros(query.sizes(), query.options().dtype(ct));
  Tensor gk = zeros(key.sizes(), key.options().dtype(ct));
  Tensor gv = zeros(value.sizes(), value.options().dtype(ct));
  if (L > 0 && S > 0 && gq.numel() + gk.numel() + gv.numel() > 0) {
    Tensor mask = kernel_mask(attn_mask, batch, L, S);
    flash_attention_bwd_stub(query.device().type(), as_compute(grad_out), as_compute(query),
                             as_compute(key), as_compute(value), as_compute(out),
                             logsumexp.to(ct).contiguous(), mask, gq, gk, gv, is_causal, s);
  }
  if (ct != dt) return {gq.to(dt), gk.to(dt), gv.to(dt)};
  return {gq, gk, gv};
}

}  // namespace ember
