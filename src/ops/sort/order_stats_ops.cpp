// kthvalue, median/nanmedian, mode, quantile/nanquantile. Each slice along `dim` becomes a
// contiguous row (sort_internal.h) that the kernels reduce (kernels/cpu/sort/order_stats.cpp).
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"
#include "kernels/stubs/sort.h"
#include "ops/call_path.h"
#include "ops/reduce/reduce_core.h"
#include "ops/sort/sort_internal.h"

namespace ember {
namespace {

using namespace sort_detail;

std::tuple<Tensor, Tensor> kthvalue_impl(const Tensor& self, int64_t k, int64_t dim, bool keepdim);

void check_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined(), "[", op, "] input tensor is undefined");
}

/// PyTorch's check that a reduction over `dim` has something to reduce.
void check_nonzero_dim(const Tensor& x, int64_t dim, const char* op) {
  if (x.dim() > 0)
    EMBER_CHECK_INDEX(x.size(dim) != 0, "[", op, "] expected reduction dim ", dim,
                      " to have non-zero size, got input of shape ", shape_str(x.sizes()));
}

[[noreturn]] void not_implemented(const char* kernel, ScalarType t) {
  EMBER_THROW(Error, "[", kernel, "] \"", kernel, "\" not implemented for '", dtype_name(t), "'");
}

/// Integer and floating dtypes except float16 (PyTorch's kthvalue/median CPU kernels).
void check_select_dtype(ScalarType t, const char* kernel) {
  if (t == kBool || t == kHalf || isComplexType(t)) not_implemented(kernel, t);
}

/// The reduced (values, indices) pair along `dim`: `kernel(rows, values, indices)` reduces the
/// rows.
template <class Kernel>
std::tuple<Tensor, Tensor> dim_reduce(const Tensor& self, int64_t dim, bool keepdim,
                                      const Kernel& kernel) {
  Rows r = to_rows(self, dim);
  DimVector shape = r.moved;
  shape.pop_back();
  Tensor v = empty_tensor(shape, self.dtype(), self.device());
  Tensor i = empty_tensor(shape, kLong, self.device());
  // nothing to reduce: no kernel and so no dtype check (PyTorch's mode accepts any dtype here)
  if (r.rows > 0) kernel(r.data, v, i);
  return {reduced_from_rows(v, self, dim, keepdim), reduced_from_rows(i, self, dim, keepdim)};
}

std::tuple<Tensor, Tensor> median_dim_impl(const Tensor& self, int64_t dim, bool keepdim,
                                           bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  check_nonzero_dim(self, dim, op);
  check_select_dtype(self.dtype(), "median_out");
  return dim_reduce(self, dim, keepdim, [&](const Tensor& rows, Tensor& values, Tensor& indices) {
    median_dim_stub(self.device().type(), rows, values, indices, ignore_nan);
  });
}

/// The value PyTorch gives for the median of an empty tensor: NaN converted to the dtype the way
/// x86 converts it (the integer conversion's "indefinite" value, truncated for narrow types).
Tensor empty_median(const Tensor& self) {
  Tensor out = empty_tensor({}, self.dtype());
  switch (self.dtype()) {
    case kBool:
      out.fill_(true);
      break;
    case kByte:
    case kChar:
    case kShort:
      out.fill_(0);
      break;
    case kInt:
      out.fill_(std::numeric_limits<int32_t>::min());
      break;
    case kLong:
      out.fill_(std::numeric_limits<int64_t>::min());
      break;
    default:
      out.fill_(std::numeric_limits<double>::quiet_NaN());
      break;
  }
  return out;
}

Tensor median_all_impl(const Tensor& self, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  check_input(self, op);
  if (self.numel() == 0) return empty_median(self);
  check_select_dtype(self.dtype(), "median_cpu");
  Tensor out = empty_tensor({}, self.dtype());
  Tensor flat = self.reshape({-1}).contiguous();
  median_all_stub(self.device().type(), flat, out, ignore_nan);
  return out;
}

// ---- quantile ----

using Interp = QuantileInterp;

Interp parse_interpolation(std::string_view s) {
  if (s == "linear") return Interp::Linear;
  if (s == "lower") return Interp::Lower;
  if (s == "higher") return Interp::Higher;
  if (s == "midpoint") return Interp::Midpoint;
  if (s == "nearest") return Interp::Nearest;
  EMBER_THROW(Error,
              "[quantile] interpolation must be one of linear, lower, higher, midpoint or "
              "nearest, but got ",
              s);
}

Tensor quantile_impl(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                     std::string_view interpolation, bool ignore_nan) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  check_input(self, op);
  EMBER_CHECK(q.defined(), "[", op, "] q tensor is undefined");
  const Interp mode = parse_interpolation(interpolation);
  EMBER_CHECK(self.numel() > 0, "[", op, "] input tensor must be non-empty");
  EMBER_CHECK(q.dim() <= 1, "[", op, "] q must be a scalar or 1D tensor, got shape ",
              shape_str(q.sizes()));
  EMBER_CHECK(self.dtype() == kFloat || self.dtype() == kDouble, "[", op,
              "] input tensor must be either float or double dtype, got ",
              dtype_name(self.dtype()));
  EMBER_CHECK(q.dtype() == self.dtype(), "[", op,
              "] q tensor must be same dtype as the input "
              "tensor, got q ",
              dtype_name(q.dtype()), " and input ", dtype_name(self.dtype()));
  const int64_t wrapped = wrap_dim(dim.value_or(0), self.dim(), op);

  // output shape: q's size (for 1-D q) then the reduced shape
  DimVector shape;
  if (q.dim() > 0) shape.push_back(q.numel());
  if (dim && self.dim() > 0) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (d != wrapped)
        shape.push_back(self.size(d));
      else if (keepdim)
        shape.push_back(1);
    }
  } else if (keepdim) {
    for (int64_t d = 0; d < self.dim(); ++d) shape.push_back(1);
  }

  Tensor result = empty_tensor(shape, self.dtype());
  const Tensor qc = q.resolve_conj().contiguous();
  Rows r = dim ? to_rows(self, wrapped) : to_rows(self.reshape({-1}), 0);
  // the kernel checks the q values and the row length, in that order
  quantile_stub(self.device().type(), r.data, qc, result, mode, ignore_nan);
  return result;
}

Tensor quantile_rec(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                    std::string_view interpolation, bool ignore_nan);

Tensor quantile_scalar(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                       std::string_view interpolation, bool ignore_nan) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  check_input(self, op);
  EMBER_CHECK(q >= 0 && q <= 1, "[", op, "] q must be in the range [0, 1] but got ", q);
  // q becomes a 0-dim tensor of the input's dtype, so it is rounded to float32 for float input
  Tensor qt = empty_tensor({}, self.dtype());
  if (self.dtype() == kFloat || self.dtype() == kDouble) qt.fill_(q);
  return quantile_rec(self, qt, dim, keepdim, interpolation, ignore_nan);
}

// ---- autograd rules ----

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

/// Records `values` = self at `indices` along `dim`: the gradient goes back to the selected
/// positions (PyTorch's value_selecting_reduction_backward), the tangent is gathered there.
void record_selected(OpRecorder& rec, const Tensor& self, const Tensor& values,
                     const Tensor& indices, int64_t dim, bool keepdim) {
  rec.args(dim, keepdim, self.sizes(), self.dim() == 0);
  rec.record(
      values,
      [](VjpCtx& c) {
        const int64_t dim = c.args().i(0);
        const bool keepdim = c.args().b(1), scalar = c.args().b(3);
        const std::vector<int64_t>& sizes = c.args().ints(2);
        if (scalar) return variable_list{c.grads[0]};
        Tensor g = keepdim ? c.grads[0] : c.grads[0].unsqueeze(dim);
        Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
        return variable_list{zeros(sizes, g.options()).scatter(dim, i, g)};
      },
      {indices},
      [](JvpCtx& c) {
        const int64_t dim = c.args().i(0);
        const bool keepdim = c.args().b(1), scalar = c.args().b(3);
        if (scalar) return variable_list{c.tangent_or_zeros(0)};
        Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
        Tensor t = c.tangent_or_zeros(0).gather(dim, i);
        return variable_list{keepdim ? t : t.squeeze(dim)};
      });
}

// median() / nanmedian() over everything: the gradient is split evenly among the ties.
Tensor median_all_rec(const Tensor& self, bool ignore_nan) {
  OpRecorder rec(ignore_nan ? "nanmedian" : "median", {self});
  Tensor out = median_all_impl(self, ignore_nan);
  if (rec) reduce_detail::record_evenly_distributed(rec, self, out);
  return out;
}

std::tuple<Tensor, Tensor> median_dim_rec(const Tensor& self, int64_t dim, bool keepdim,
                                          bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  OpRecorder rec(op, {self});
  auto [v, i] = median_dim_impl(self, dim, keepdim, ignore_nan);
  rec.set_overload(1);  // MedianBackward1 (median() is overload 0)
  if (rec) record_selected(rec, self, v, i, wrap_dim(dim, self.dim(), op), keepdim);
  return {v, i};
}

/// Where quantile reads each q in a sorted row: the positions below and above and the
/// interpolation weight of the one above, as PyTorch's composite quantile (NaN rows read the
/// last element; nanquantile interpolates among the non-NaN values only).
struct QuantilePlan {
  Tensor x2;      ///< the input with the reduced dim last (or flattened)
  Tensor lo, hi;  ///< input positions along the last dim of x2, shape [rows..., nq]
  Tensor w;       ///< weight of `hi`
  Tensor dw;      ///< d w / d q (broadcasts against w); undefined where w does not depend on q
};

QuantilePlan quantile_plan(const Tensor& x, const Tensor& q, std::optional<int64_t> dim,
                           std::string_view interpolation, bool ignore_nan) {
  QuantilePlan P;
  // A 0-dim input is one row of one element.
  P.x2 = dim && x.dim() > 0 ? x.movedim(wrap_dim(*dim, x.dim(), "quantile"), -1) : x.reshape({-1});
  const int64_t n = P.x2.size(-1);
  const Tensor order = argsort(P.x2, int64_t(-1));  // stable; NaN sorts last
  const Tensor nan_row = isnan(P.x2).any(-1, true);
  const Tensor qv = q.reshape({-1}).to(x.dtype());
  Tensor ranks, drank;  // drank: d ranks / d q, zero where the rank was clamped
  if (ignore_nan) {
    const Tensor valid = logical_not(isnan(P.x2)).sum({-1}, true).to(x.dtype());
    ranks = qv * (valid - Scalar(1.0));
    const Tensor clamped = lt(ranks, Scalar(0.0));
    ranks = where(clamped, Scalar(0.0), ranks);
    drank = where(clamped, Scalar(0.0), valid - Scalar(1.0));
  } else {
    std::vector<int64_t> rs = P.x2.sizes().vec();
    rs.back() = qv.numel();
    ranks = where(nan_row, Scalar(double(n - 1)), qv * Scalar(double(n - 1))).expand(rs);
    drank = where(nan_row, Scalar(0.0), Scalar(double(n - 1))).to(x.dtype());
  }
  Tensor below = floor(ranks), above = ceil(ranks);
  Tensor w = zeros_like(ranks);
  if (interpolation == "lower") {
    above = below;
  } else if (interpolation == "higher") {
    below = above;
  } else if (interpolation == "nearest") {
    below = above = round(ranks);
  } else if (interpolation == "midpoint") {
    w = where(eq(above, below), Scalar(0.0), Scalar(0.5)).to(x.dtype());
  } else {
    w = ranks - below;
    P.dw = drank;
  }
  P.lo = order.gather(-1, below.to(kLong));
  P.hi = order.gather(-1, above.to(kLong));
  P.w = w;
  return P;
}

/// d out / d q in rows layout: (x[hi] - x[lo]) d w / d q, zero where the rank was pinned (a NaN
/// row) even though x there is NaN, as the masked_fill in PyTorch's composite.
Tensor quantile_slope(const QuantilePlan& P, const Tensor& x2) {
  Tensor s = (x2.gather(-1, P.hi) - x2.gather(-1, P.lo)) * P.dw;
  return where(eq(P.dw, Scalar(0.0)), Scalar(0.0), s);
}

/// [rows..., nq] <-> the result's layout ([nq,] reduced shape).
Tensor to_rows_layout(const Tensor& g, const QuantilePlan& P, bool q_scalar) {
  Tensor r = q_scalar ? g.unsqueeze(0) : g;
  std::vector<int64_t> rs = P.lo.sizes().vec();
  rs.pop_back();
  rs.insert(rs.begin(), r.size(0));
  return r.reshape(rs).movedim(0, -1);
}

/// quantile's wrapped dim, recorded as its first rule argument (None: over everything).
std::optional<int64_t> quantile_dim(const autograd::RuleArgs& a) {
  if (a.is_none(0)) return std::nullopt;
  return a.i(0);
}

Tensor quantile_rec(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                    std::string_view interpolation, bool ignore_nan) {
  // q is differentiable as in PyTorch's composite, where only the linear weight
  // q * (n - 1) - floor depends on it (the other modes only index with it).
  const bool linear = interpolation == "linear";
  OpRecorder rec(ignore_nan ? "nanquantile" : "quantile",
                 linear ? variable_list{self, q} : variable_list{self});
  Tensor out = quantile_impl(self, q, dim, keepdim, interpolation, ignore_nan);
  if (rec) {
    const std::optional<int64_t> wd =
        dim ? std::optional<int64_t>(wrap_dim(*dim, self.dim(), "quantile")) : std::nullopt;
    rec.args(wd, std::string(interpolation), ignore_nan, q.dim() == 0, self.sizes(), out.sizes());
    rec.record(
        out,
        [](VjpCtx& c) {
          const std::optional<int64_t> wd = quantile_dim(c.args());
          const std::string& interp = c.args().str(1);
          const bool ignore_nan = c.args().b(2), q_scalar = c.args().b(3);
          const bool linear = interp == "linear";
          const std::vector<int64_t>& sizes = c.args().ints(4);
          const Tensor &x = c.saved[0], &qq = c.saved[1];
          QuantilePlan P = quantile_plan(x, qq, wd, interp, ignore_nan);
          Tensor g = to_rows_layout(c.grads[0], P, q_scalar);
          variable_list r(linear ? 2 : 1);
          if (c.needs(0)) {
            Tensor gx = zeros(P.x2.sizes().vec(), g.options())
                            .scatter_add(-1, P.lo, g * (Scalar(1.0) - P.w))
                            .scatter_add(-1, P.hi, g * P.w);
            r[0] = wd && !sizes.empty() ? gx.movedim(-1, *wd) : gx.reshape(sizes);
          }
          if (c.needs(1)) {
            if (P.dw.defined()) {
              Tensor slope = quantile_slope(P, P.x2);
              int64_t rows = 1;  // explicit: reshape cannot infer -1 for an empty q
              for (int64_t d = 0; d + 1 < slope.dim(); ++d) rows *= slope.size(d);
              Tensor gq = (g * slope).reshape({rows, slope.size(-1)}).sum({0});
              r[1] = gq.reshape(qq.sizes());
            } else {
              r[1] = zeros_like(qq);
            }
          }
          return r;
        },
        {self, q},
        [](JvpCtx& c) {
          const std::optional<int64_t> wd = quantile_dim(c.args());
          const std::string& interp = c.args().str(1);
          const bool ignore_nan = c.args().b(2);
          const std::vector<int64_t>& out_sizes = c.args().ints(5);
          const Tensor& qq = c.saved[1];
          QuantilePlan P = quantile_plan(c.inputs[0], qq, wd, interp, ignore_nan);
          Tensor t = c.tangent_or_zeros(0);
          Tensor t2 = wd && t.dim() > 0 ? t.movedim(*wd, -1) : t.reshape({-1});
          Tensor r = t2.gather(-1, P.lo) * (Scalar(1.0) - P.w) + t2.gather(-1, P.hi) * P.w;
          if (c.tangents.size() > 1 && c.tangents[1].defined() && P.dw.defined()) {
            // Unmasked: PyTorch's tangent there is 0 * (NaN - NaN).
            Tensor slope = (P.x2.gather(-1, P.hi) - P.x2.gather(-1, P.lo)) * P.dw;
            r = r + slope * c.tangents[1].reshape({-1});
          }
          return variable_list{r.movedim(-1, 0).reshape(out_sizes)};
        });
  }
  return out;
}
}  // namespace

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  EMBER_OP(kthvalue, self, k, dim, keepdim);
  OpRecorder rec("kthvalue", {self});
  auto [v, i] = kthvalue_impl(self, k, dim, keepdim);
  if (rec) record_selected(rec, self, v, i, wrap_dim(dim, self.dim(), "kthvalue"), keepdim);
  return {v, i};
}

namespace {
std::tuple<Tensor, Tensor> kthvalue_impl(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  const char* op = "kthvalue";
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  check_nonzero_dim(self, dim, op);
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  EMBER_CHECK(k >= 1 && k <= n, "[", op, "] selected number k out of range for dimension ", dim,
              ": k = ", k, ", dimension size ", n);
  check_select_dtype(self.dtype(), "kthvalue_cpu");
  return dim_reduce(self, dim, keepdim, [&](const Tensor& rows, Tensor& values, Tensor& indices) {
    kthvalue_stub(self.device().type(), rows, values, indices, k);
  });
}
}  // namespace

Tensor median(const Tensor& self) {
  EMBER_OP(median, self);
  return median_all_rec(self, false);
}
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(median_1, self, dim, keepdim);
  return median_dim_rec(self, dim, keepdim, false);
}
Tensor nanmedian(const Tensor& self) {
  EMBER_OP(nanmedian, self);
  return median_all_rec(self, true);
}
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(nanmedian_1, self, dim, keepdim);
  return median_dim_rec(self, dim, keepdim, true);
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(mode, self, dim, keepdim);
  const char* op = "mode";
  OpRecorder rec(op, {self});
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  check_nonzero_dim(self, dim, op);
  if (isComplexType(self.dtype()) && self.numel() > 0) not_implemented("mode_cpu", self.dtype());
  auto [v, i] =
      dim_reduce(self, dim, keepdim, [&](const Tensor& rows, Tensor& values, Tensor& indices) {
        mode_stub(self.device().type(), rows, values, indices);
      });
  if (rec) record_selected(rec, self, v, i, dim, keepdim);
  return {v, i};
}

Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  EMBER_OP_CAST(quantile, quantile, self, q, dim, keepdim, interpolation);
  return quantile_rec(self, q, dim, keepdim, interpolation, false);
}
Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  EMBER_OP_CAST(quantile_1, quantile, self, q, dim, keepdim, interpolation);
  return quantile_scalar(self, q, dim, keepdim, interpolation, false);
}
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  EMBER_OP_CAST(nanquantile, nanquantile, self, q, dim, keepdim, interpolation);
  return quantile_rec(self, q, dim, keepdim, interpolation, true);
}
Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  EMBER_OP_CAST(nanquantile_1, nanquantile, self, q, dim, keepdim, interpolation);
  return quantile_scalar(self, q, dim, keepdim, interpolation, true);
}

std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return ember::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::median() const { return ember::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const {
  return ember::median(*this, dim, keepdim);
}
Tensor Tensor::nanmedian() const { return ember::nanmedian(*this); }
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const {
  return ember::nanmedian(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const {
  return ember::mode(*this, dim, keepdim);
}

}  // namespace ember
