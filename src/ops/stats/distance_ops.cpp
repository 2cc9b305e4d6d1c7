// Pairwise distances: cdist (the direct primitive _cdist_forward with its own kernel, and the
// matrix-product form for Euclidean distances) and pdist.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/stats.h"
#include "kernels/stubs/stats.h"
#include "ops/call_path.h"

namespace ember {

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

/// d dist(i, j) / d x1(i, k) for every (i, j, k): a (..., P, R, M) tensor, with PyTorch's
/// subgradients: 0 where the distance is 0, and for p < 1 where the coordinates agree; p = inf
/// gives sign(d) to every coordinate whose |d| is the largest; p = 0 has none.
Tensor cdist_partial(const Tensor& x1, const Tensor& x2, const Tensor& dist, double p) {
  Tensor diff = x1.unsqueeze(-2) - x2.unsqueeze(-3);
  Tensor d = dist.unsqueeze(-1);
  if (p == 0) return zeros_like(diff);
  if (p == 1) return diff.sign();
  if (std::isinf(p)) return diff.sign() * (diff.abs() == d).to(diff.dtype());
  Tensor zero = d == 0;
  Tensor d_safe = where(zero, 1.0, d);
  Tensor r;
  if (p == 2) {
    r = diff / d_safe;
  } else if (p < 2) {
    Tensor a = diff.abs();
    Tensor a_safe = where(a == 0, 1.0, a);
    r = where(a == 0, 0.0, diff.sign() * a_safe.pow(p - 1)) / d_safe.pow(p - 1);
  } else {
    r = diff * diff.abs().pow(p - 2) / d_safe.pow(p - 1);
  }
  return where(zero, 0.0, r);
}

/// g / dist with 0 where the distance is 0 (the Euclidean subgradient).
Tensor euclid_ratio(const Tensor& g, const Tensor& dist) {
  Tensor zero = dist == 0;
  return where(zero, 0.0, g / where(zero, 1.0, dist));
}

/// How many rows of x1 the rules take at a time: the (..., rows, R, M) partials hold about
/// kPartialElems elements (at least one row).
constexpr int64_t kPartialElems = int64_t(1) << 22;
int64_t partial_rows(const Tensor& x1, const Tensor& x2) {
  int64_t per_row = x2.size(-2) * x2.size(-1);
  for (int64_t i = 0; i < x1.dim() - 2; ++i) per_row *= x1.size(i);
  return std::max<int64_t>(1, kPartialElems / std::max<int64_t>(1, per_row));
}

variable_list cdist_vjp(VjpCtx& c) {
  const double p = c.args().f(0);
  const Tensor &x1 = c.saved[0], &x2 = c.saved[1], &dist = c.saved[2];
  const Tensor& g = c.grads[0];
  variable_list r(2);
  if (p == 2) {
    Tensor ratio = euclid_ratio(g, dist);
    if (c.needs(0)) r[0] = x1 * ratio.sum(-1, true) - ratio.matmul(x2);
    if (c.needs(1)) r[1] = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT().matmul(x1);
    return r;
  }
  // The per-coordinate partials are (..., P, R, M): they are formed for a block of x1's rows
  // at a time, so the rule's memory stays near kPartialElems elements.
  const int64_t P = x1.size(-2), step = partial_rows(x1, x2);
  std::vector<Tensor> g1;
  Tensor g2;
  for (int64_t i = 0; i < P || (P == 0 && i == 0); i += step) {
    const int64_t n = std::min(step, P - i);
    const Tensor a = x1.narrow(-2, i, n);
    const Tensor wg =
        cdist_partial(a, x2, dist.narrow(-2, i, n), p) * g.narrow(-2, i, n).unsqueeze(-1);
    if (c.needs(0)) g1.push_back(wg.sum(-2));
    if (c.needs(1)) g2 = g2.defined() ? g2 - wg.sum(-3) : wg.sum(-3).neg();
  }
  if (c.needs(0)) r[0] = g1.size() == 1 ? g1[0] : cat(g1, -2);
  if (c.needs(1)) r[1] = g2;
  return r;
}

variable_list cdist_jvp(JvpCtx& c) {
  const double p = c.args().f(0);
  const Tensor &x1 = c.inputs[0], &x2 = c.inputs[1], &dist = c.outputs[0];
  const Tensor t1 = c.tangent_or_zeros(0), t2 = c.tangent_or_zeros(1);
  if (p == 2) {
    Tensor num = (x1 * t1).sum(-1).unsqueeze(-1) + (x2 * t2).sum(-1).unsqueeze(-2) -
                 x1.matmul(t2.mT()) - t1.matmul(x2.mT());
    return {euclid_ratio(num, dist)};
  }
  const int64_t P = x1.size(-2), step = partial_rows(x1, x2);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < P || (P == 0 && i == 0); i += step) {
    const int64_t n = std::min(step, P - i);
    const Tensor dt = t1.narrow(-2, i, n).unsqueeze(-2) - t2.unsqueeze(-3);
    parts.push_back(
        (cdist_partial(x1.narrow(-2, i, n), x2, dist.narrow(-2, i, n), p) * dt).sum(-1));
  }
  return {parts.size() == 1 ? parts[0] : cat(parts, -2)};
}

void check_cdist_inputs(const Tensor& x1, const Tensor& x2, double p) {
  EMBER_CHECK(x1.dim() >= 2, "[cdist] cdist only supports at least 2D tensors, X1 got: ", x1.dim(),
              "D");
  EMBER_CHECK(x2.dim() >= 2, "[cdist] cdist only supports at least 2D tensors, X2 got: ", x2.dim(),
              "D");
  EMBER_CHECK(x1.size(-1) == x2.size(-1),
              "[cdist] X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  EMBER_CHECK(x1.is_floating_point(), "[cdist] cdist only supports floating-point dtypes, X1 got: ",
              dtype_name(x1.dtype()));
  EMBER_CHECK(x2.is_floating_point(), "[cdist] cdist only supports floating-point dtypes, X2 got: ",
              dtype_name(x2.dtype()));
  EMBER_CHECK(p >= 0, "[cdist] cdist only supports non-negative p values, got ", p);
  EMBER_CHECK(x1.dtype() == x2.dtype(), "[cdist] expected X1 and X2 to have the same dtype, got ",
              dtype_name(x1.dtype()), " and ", dtype_name(x2.dtype()));
}

/// Euclidean distances through one matrix product of [-2 x1, |x1|^2, 1] and [x2, 1, |x2|^2];
/// squared distances that round below zero are clamped to 0 (and get the zero subgradient).
Tensor euclid_mm(const Tensor& x1, const Tensor& x2) {
  Tensor n1 = x1.mul(x1).sum(-1, true), n2 = x2.mul(x2).sum(-1, true);
  Tensor a = cat({x1.mul(-2), n1, ones_like(n1)}, -1);
  Tensor b = cat({x2, ones_like(n2), n2}, -1);
  Tensor sq = a.matmul(b.mT());
  const autograd::AutogradTLS& t = autograd::tls();
  const bool differentiable =
      autograd::recording_possible() &&
      (t.fw_levels > 0 || (t.grad_enabled && (x1.requires_grad() || x2.requires_grad())));
  // Nothing to differentiate: two in-place passes over the fresh product.
  if (!differentiable) return sq.clamp_min_(0).sqrt_();
  Tensor pos = sq > 0;
  return where(pos, where(pos, sq, 1.0).sqrt(), 0.0);
}

}  // namespace

CdistMode cdist_mode_from_string(std::string_view mode) {
  if (mode == "use_mm_for_euclid_dist_if_necessary") return CdistMode::kMmIfNecessary;
  if (mode == "use_mm_for_euclid_dist") return CdistMode::kMm;
  if (mode == "donot_use_mm_for_euclid_dist") return CdistMode::kNoMm;
  EMBER_THROW(ValueError, mode, " is not a valid value for compute_mode");
}

Tensor _cdist_forward(const Tensor& x1, const Tensor& x2, double p,
                      std::optional<int64_t> compute_mode) {
  EMBER_OP(_cdist_forward, x1, x2, p, compute_mode);
  check_cdist_inputs(x1, x2, p);
  const int64_t nd = x1.dim();
  EMBER_CHECK(x2.dim() == nd && x1.sizes().slice(0, nd - 2) == x2.sizes().slice(0, nd - 2),
              "[_cdist_forward] expected X1 and X2 with the same batch dims, got ",
              shape_str(x1.sizes()), " and ", shape_str(x2.sizes()));
  const int64_t P = x1.size(-2), R = x2.size(-2), M = x1.size(-1);
  int64_t B = 1;
  DimVector out_shape;
  for (int64_t i = 0; i < nd - 2; ++i) {
    B *= x1.size(i);
    out_shape.push_back(x1.size(i));
  }
  out_shape.push_back(P);
  out_shape.push_back(R);
  OpRecorder rec("_cdist_forward", {x1, x2});
  Tensor out = empty(out_shape, x1.options());
  if (out.numel() > 0) {
    Tensor a = x1.reshape({B, P, M}).contiguous(), b = x2.reshape({B, R, M}).contiguous();
    Tensor o = out.view({B, P, R});
    cdist_stub(x1.device().type(), a, b, p, o);
  }
  if (rec) {
    rec.args(p);
    rec.record(out, cdist_vjp, {x1, x2, out}, cdist_jvp);
  }
  return out;
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  EMBER_OP_CAST(cdist, cdist, x1, x2, p, compute_mode);
  check_cdist_inputs(x1, x2, p);
  const int64_t mode = compute_mode.value_or(0);
  EMBER_CHECK_VALUE(mode >= 0 && mode <= 2, "[cdist] ", mode,
                    " is not a valid value for compute_mode");
  // Batch dims broadcast.
  const int64_t b1 = x1.dim() - 2, b2 = x2.dim() - 2, nb = std::max(b1, b2);
  DimVector batch(size_t(nb), 1);
  for (int64_t i = 0; i < nb; ++i) {
    const int64_t s1 = i - (nb - b1) >= 0 ? x1.size(i - (nb - b1)) : 1;
    const int64_t s2 = i - (nb - b2) >= 0 ? x2.size(i - (nb - b2)) : 1;
    EMBER_CHECK(s1 == s2 || s1 == 1 || s2 == 1, "[cdist] the batch dims of X1 ",
                shape_str(x1.sizes()), " and X2 ", shape_str(x2.sizes()), " do not broadcast");
    batch[i] = s1 == 1 ? s2 : s1;
  }
  DimVector s1(batch), s2(batch);
  s1.push_back(x1.size(-2));
  s1.push_back(x1.size(-1));
  s2.push_back(x2.size(-2));
  s2.push_back(x2.size(-1));
  Tensor a = x1.sizes() == IntArrayRef(s1) ? x1 : x1.expand(s1);
  Tensor b = x2.sizes() == IntArrayRef(s2) ? x2 : x2.expand(s2);
  if (a.numel() == 0 || b.numel() == 0) return _cdist_forward(a, b, p, compute_mode);
  const int64_t P = x1.size(-2), R = x2.size(-2);
  if (p == 2 && (mode == 1 || (mode == 0 && (P > 25 || R > 25)))) return euclid_mm(a, b);
  return _cdist_forward(a, b, p, compute_mode);
}

Tensor pdist(const Tensor& input, double p) {
  EMBER_OP(pdist, input, p);
  EMBER_CHECK(input.dim() == 2, "[pdist] pdist only supports 2D tensors, got: ", input.dim(), "D");
  EMBER_CHECK(input.is_floating_point(), "[pdist] pdist only supports floating-point dtypes, got ",
              dtype_name(input.dtype()));
  EMBER_CHECK(p >= 0, "[pdist] pdist only supports non-negative p values, got ", p);
  const int64_t n = input.size(0);
  Tensor x = input.unsqueeze(0);
  Tensor d = _cdist_forward(x, x, p, int64_t(CdistMode::kNoMm)).squeeze(0);
  // The upper triangle in row-major order: pairs (0, 1), (0, 2), ..., (n - 2, n - 1).
  Tensor mask = ones({n, n}, TensorOptions(kBool).device(input.device())).triu(1);
  return d.masked_select(mask);
}

}  // namespace ember
