// Sums, products, extrema (with and without indices), all/any and count_nonzero on the
// reduction engine (Note [Reductions] in kernels/cpu/reduce.cpp). PyTorch 1.13's rules: integer
// and bool sums/products are int64, half/bfloat16 accumulate in float32, NaN wins in max/min,
// indices point at the first occurrence, empty reductions give the identity or an error.
#include <algorithm>
#include <limits>
#include <numeric>

#include "autograd/record.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "kernels/stubs/reduce.h"
#include "ops/call_path.h"
#include "ops/reduce/reduce_core.h"

namespace ember {
namespace reduce_detail {

uint64_t dim_mask(const Tensor& x, IntArrayRef dims, const char* op) {
  const int64_t nd = x.dim();
  EMBER_CHECK(nd <= 64, "[", op, "] supports tensors of at most 64 dims, got ", nd);
  if (dims.empty()) return nd == 0 ? 0 : (nd == 64 ? ~uint64_t(0) : (uint64_t(1) << nd) - 1);
  uint64_t m = 0;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd, op);
    EMBER_CHECK(!((m >> w) & 1), "[", op, "] dim ", w,
                " appears multiple times in the list of dims");
    m |= uint64_t(1) << w;
  }
  return nd == 0 ? 0 : m;
}

DimVector reduced_shape(const Tensor& x, uint64_t mask, bool keepdim) {
  DimVector s;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!((mask >> d) & 1))
      s.push_back(x.size(d));
    else if (keepdim)
      s.push_back(1);
  }
  return s;
}

int64_t reduced_count(const Tensor& x, uint64_t mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if ((mask >> d) & 1) n *= x.size(d);
  return n;
}

void write_out(Tensor& out, const Tensor& result, const char* op) {
  EMBER_CHECK(out.defined(), "[", op, "] out= tensor is undefined");
  if (out.sizes() != result.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(result.sizes()),
                "; pass an empty tensor or one of the result's shape");
    resize_output(out, result.sizes());
  }
  out.copy_(result);
}

bool is_dense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> d;  // (stride, size)
  for (int64_t i = 0; i < t.dim(); ++i)
    if (t.size(i) != 1) d.push_back({t.stride(i), t.size(i)});
  std::sort(d.begin(), d.end(), [](auto a, auto b) { return a.first < b.first; });
  int64_t expect = 1;
  for (auto [st, sz] : d) {
    if (st != expect) return false;
    expect *= sz;
  }
  return true;
}

ReduceLayout reduce_layout(const Tensor& x, uint64_t mask, IntArrayRef shape) {
  ReduceLayout L;
  L.input = (x.numel() == 0 || is_dense(x)) ? x : x.contiguous();
  L.shape = shape;
  const Tensor& in = L.input;
  const int64_t nd = in.dim();
  // Memory order, as the kernels' plan (make_plan in kernels/cpu/reduce.cpp): larger strides
  // first, ties in dim order.
  std::vector<int64_t> order(static_cast<size_t>(nd));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return in.stride(a) > in.stride(b); });
  for (int64_t d : order) {
    if ((mask >> d) & 1) continue;
    L.out_perm.push_back(d);
    L.num_out *= in.size(d);
  }
  for (size_t i = 1; i < L.out_perm.size(); ++i)
    if (L.out_perm[i] < L.out_perm[i - 1]) L.out_identity = false;
  return L;
}

Tensor ReduceLayout::output(ScalarType dtype) const {
  if (out_identity) return empty_tensor({num_out}, dtype, input.device());
  DimVector s;
  for (int64_t d : out_perm) s.push_back(input.size(d));
  return empty_tensor(s, dtype, input.device());
}

Tensor ReduceLayout::finish(const Tensor& raw) const {
  if (out_identity) return raw.view(shape);
  // raw has the kept dims in memory order; put them in logical order.
  DimVector inv(out_perm.size());
  std::vector<int64_t> sorted(out_perm.begin(), out_perm.end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < out_perm.size(); ++i) {
    const int64_t pos =
        std::lower_bound(sorted.begin(), sorted.end(), out_perm[i]) - sorted.begin();
    inv[size_t(pos)] = int64_t(i);
  }
  return raw.permute(inv).contiguous().view(shape);
}

}  // namespace reduce_detail

using namespace reduce_detail;

namespace {

ScalarType sum_out_dtype(const Tensor& x, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return isIntegralType(x.dtype(), /*include_bool=*/true) ? kLong : x.dtype();
}

Tensor prepare(const Tensor& x, std::optional<ScalarType> dtype) {
  Tensor in = (dtype && *dtype != x.dtype()) ? x.to(*dtype) : x;
  return in.is_conj() ? in.resolve_conj() : in;
}

// sum / nansum / mean share this: dtype promotion, then the kernel of the reduction.
template <bool kNan, bool kMean>
Tensor sum_impl(const Tensor& x0, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype,
                const char* op) {
  EMBER_CHECK(x0.defined(), "[", op, "] input is undefined");
  const uint64_t mask = dim_mask(x0, dim, op);
  const ScalarType od = sum_out_dtype(x0, dtype);
  if constexpr (kMean) {
    EMBER_CHECK(isFloatingType(od) || isComplexType(od), "[", op,
                "] could not infer output "
                "dtype. Input dtype must be either a floating point or complex dtype. Got: ",
                dtype_name(od));
  }
  if constexpr (kNan) {
    EMBER_CHECK(!isComplexType(x0.dtype()) && !isComplexType(od), "[", op,
                "] does not support complex inputs (got ", dtype_name(x0.dtype()), ")");
  }
  const Tensor x = prepare(x0, dtype);
  // nansum of integers is sum; mean has a floating or complex input by now.
  if (kNan && !kMean && !x.is_floating_point())
    return sum_impl<false, false>(x, dim, keepdim, od, op);
  const ReduceLayout L = reduce_layout(x, mask, reduced_shape(x, mask, keepdim));
  Tensor out = L.output(od);
  const DeviceType dev = L.input.device().type();
  if constexpr (kMean)
    mean_stub(dev, L.input, mask, out);
  else if constexpr (kNan)
    nansum_stub(dev, L.input, mask, out);
  else
    sum_stub(dev, L.input, mask, out);
  return L.finish(out);
}

template <bool Max>
Tensor extreme_impl(const Tensor& x0, IntArrayRef dim, bool keepdim, const char* op) {
  EMBER_CHECK(x0.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(!x0.is_complex(), "[", op, "] is not supported for complex inputs (got ",
              dtype_name(x0.dtype()), ")");
  const uint64_t mask = dim_mask(x0, dim, op);
  if (x0.numel() == 0) {
    EMBER_CHECK(dim.size() != 0 && x0.dim() > 0, "[", op,
                "] Expected reduction dim to be "
                "specified for input.numel() == 0. Specify the reduction dim with the 'dim' "
                "argument.");
    for (int64_t d = 0; d < x0.dim(); ++d)
      EMBER_CHECK_INDEX(!((mask >> d) & 1) || x0.size(d) != 0, "[", op,
                        "] Expected reduction "
                        "dim ",
                        d, " to have non-zero size (input shape ", shape_str(x0.sizes()), ")");
  }
  const ReduceLayout L = reduce_layout(x0, mask, reduced_shape(x0, mask, keepdim));
  Tensor out = L.output(x0.dtype());
  (Max ? amax_stub : amin_stub)(L.input.device().type(), L.input, mask, out);
  return L.finish(out);
}

// max(dim)/min(dim) and argmax/argmin over one dim of a tensor with at least one dim.
template <bool Max, bool kValues>
std::tuple<Tensor, Tensor> arg_impl(const Tensor& x, int64_t dim, bool keepdim, const char* op) {
  EMBER_CHECK(x.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(!x.is_complex(), "[", op, "] is not supported for complex inputs (got ",
              dtype_name(x.dtype()), ")");
  const int64_t d = wrap_dim(dim, x.dim(), op);
  if (x.numel() == 0 && x.dim() > 0) {
    EMBER_CHECK_INDEX(x.size(d) != 0, "[", op, "] cannot compute ", op,
                      " over an empty dimension "
                      "as the operation has no identity (dim ",
                      d, " of shape ", shape_str(x.sizes()), ")");
  }
  const uint64_t mask = x.dim() == 0 ? 0 : uint64_t(1) << d;
  const ReduceLayout L = reduce_layout(x, mask, reduced_shape(x, mask, keepdim));
  const DeviceType dev = L.input.device().type();
  if constexpr (kValues) {
    Tensor values = L.output(x.dtype()), indices = L.output(kLong);
    (Max ? max_dim_stub : min_dim_stub)(dev, L.input, mask, values, indices);
    return {L.finish(values), L.finish(indices)};
  } else {
    Tensor out = L.output(kLong);
    (Max ? argmax_stub : argmin_stub)(dev, L.input, mask, out);
    return {L.finish(out), Tensor()};
  }
}

}  // namespace

namespace {

// ---- autograd rules (derivatives.yaml of PyTorch 1.13) ----

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

Tensor prod_impl(const Tensor& x0, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype);

// sum / nansum / mean: the gradient is broadcast back over the reduced dims.
template <bool kNan, bool kMean>
Tensor sum_rec(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype,
               const char* op, int overload = 0) {
  OpRecorder rec(op, {x});
  Tensor out = sum_impl<kNan, kMean>(x, dim, keepdim, dtype, op);
  if (rec) {
    rec.set_overload(overload);
    const uint64_t mask = dim_mask(x, dim, op);
    const int64_t nd = x.dim();
    const double count = double(reduced_count(x, mask));
    rec.args(mask, nd, keepdim, x.sizes(), count, mask_dims(mask, nd), dtype);
    rec.record(
        out,
        [](VjpCtx& c) {
          const uint64_t mask = uint64_t(c.args().i(0));
          const int64_t nd = c.args().i(1);
          const bool keepdim = c.args().b(2);
          const std::vector<int64_t>& sizes = c.args().ints(3);
          const double count = c.args().f(4);
          Tensor g = restore_dims(c.grads[0], mask, nd, keepdim).expand(sizes);
          if constexpr (kMean) g = g / Scalar(count);
          if constexpr (kNan) g = where(isnan(c.saved[0]), Scalar(0.0), g);
          return variable_list{g};
        },
        kNan ? variable_list{x} : variable_list{},
        [](JvpCtx& c) {
          const bool keepdim = c.args().b(2);
          const std::vector<int64_t>& dims = c.args().ints(5);
          const std::optional<ScalarType> dtype = opt_dtype(c.args(), 6);
          Tensor t = c.tangent_or_zeros(0);
          if constexpr (kNan) t = where(isnan(c.inputs[0]), Scalar(0.0), t);
          if constexpr (kMean) return variable_list{ember::mean(t, dims, keepdim, dtype)};
          return variable_list{ember::sum(t, dims, keepdim, dtype)};
        });
  }
  return out;
}

// PyTorch's prod_safe_zeros_backward: the product of everything but one element, from an
// exclusive cumprod in both directions (exact with zeros, and differentiable again).
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& inp, int64_t dim) {
  if (inp.numel() == 0) return grad.expand(inp.sizes());
  std::vector<int64_t> ones_size = inp.sizes().vec();
  ones_size[size_t(dim)] = 1;
  const int64_t n = inp.size(dim);
  Tensor ones_t = ones(ones_size, inp.options());
  Tensor excl_normal = cat({ones_t, inp.narrow(dim, 0, n - 1)}, dim).cumprod(dim);
  Tensor narrow_reverse = inp.narrow(dim, 1, n - 1).flip({dim});
  Tensor excl_reverse = cat({ones_t, narrow_reverse}, dim).cumprod(dim).flip({dim});
  return grad * (excl_normal * excl_reverse).conj();
}

/// prod over every element (all) or over `dim`, as PyTorch's prod_backward.
Tensor prod_backward(const Tensor& grad0, const Tensor& input, const Tensor& result0,
                     std::optional<int64_t> dim, bool keepdim) {
  if (input.dim() == 0) return grad0;
  Tensor grad = grad0, result = result0;
  if (dim && !keepdim) {
    grad = grad.unsqueeze(*dim);
    result = result.unsqueeze(*dim);
  }
  const int64_t zeros_n = eq(input, Scalar(0)).sum().item().toLong();
  if (zeros_n == 0) return grad * (result / input).conj();
  if (!dim) {
    if (zeros_n > 1) return zeros_like(input);
    return prod_safe_zeros_backward(grad, input.contiguous().view({-1}), 0).view(input.sizes());
  }
  return prod_safe_zeros_backward(grad, input, *dim);
}

/// prod's optional dim, recorded as its first rule argument.
std::optional<int64_t> prod_dim(const autograd::RuleArgs& a) {
  if (a.is_none(0)) return std::nullopt;
  return a.i(0);
}

Tensor prod_rec(const Tensor& x, std::optional<int64_t> dim0, bool keepdim,
                std::optional<ScalarType> dtype) {
  OpRecorder rec("prod", {x});
  Tensor out = dim0 ? prod_impl(x, {*dim0}, keepdim, dtype) : prod_impl(x, {}, false, dtype);
  if (rec) {
    rec.set_overload(dim0 ? 1 : 0);
    std::optional<int64_t> dim;
    if (dim0) dim = wrap_dim(*dim0, x.dim(), "prod");
    rec.args(dim, keepdim);
    rec.record(
        out,
        [](VjpCtx& c) {
          const std::optional<int64_t> dim = prod_dim(c.args());
          const bool keepdim = c.args().b(1);
          const Tensor& in = c.saved[0];
          return variable_list{
              prod_backward(c.grads[0], in.to(c.saved[1].dtype()), c.saved[1], dim, keepdim)};
        },
        {x, out},
        [](JvpCtx& c) {
          const std::optional<int64_t> dim = prod_dim(c.args());
          const bool keepdim = c.args().b(1);
          const Tensor& res = c.outputs[0];
          Tensor w = prod_backward(ones_like(res), c.inputs[0].to(res.dtype()), res, dim, keepdim);
          Tensor t = (w * c.tangent_or_zeros(0).conj());
          if (c.inputs[0].dim() == 0) return variable_list{t.conj().to(res.dtype())};
          t = dim ? t.sum({*dim}, keepdim) : t.sum();
          return variable_list{t.conj().to(res.dtype())};
        });
  }
  return out;
}

}  // namespace

namespace reduce_detail {
void record_evenly_distributed(autograd::OpRecorder& rec, const Tensor& input, const Tensor& out) {
  rec.record(
      out,
      [](VjpCtx& c) {
        // PyTorch's evenly_distribute: the ties of the result (NaN matches NaN) share it.
        const Tensor &in = c.saved[0], &value = c.saved[1];
        Tensor mask = where(isnan(value), isnan(in), eq(in, value));
        return variable_list{mask * (c.grads[0] / mask.sum())};
      },
      {input, out},
      [](JvpCtx& c) {
        // PyTorch's evenly_read_jvp: plain equality (a NaN result reads NaN).
        if (c.inputs[0].numel() == 0) return variable_list{zeros_like(c.outputs[0])};
        Tensor mask = eq(c.inputs[0], c.outputs[0]);
        return variable_list{(c.tangent_or_zeros(0) * mask).sum() / mask.sum()};
      });
}
}  // namespace reduce_detail

namespace {

// max() / min() / median() over everything: the gradient is split evenly among the ties.
template <bool Max>
Tensor extreme_all_rec(const Tensor& x, const char* op) {
  OpRecorder rec(op, {x});
  Tensor out = extreme_impl<Max>(x, {}, false, op);
  rec.set_overload(1);  // PyTorch's MaxBackward1 / MinBackward1 (max(dim) is overload 0)
  if (rec) record_evenly_distributed(rec, x, out);
  return out;
}

// amax / amin: the gradient is shared evenly among the elements equal to the result.
template <bool Max>
Tensor amaxmin_rec(const Tensor& x, IntArrayRef dim, bool keepdim, const char* op) {
  OpRecorder rec(op, {x});
  Tensor out = extreme_impl<Max>(x, dim, keepdim, op);
  if (rec) {
    const uint64_t mask = dim_mask(x, dim, op);
    const int64_t nd = x.dim();
    rec.args(mask, nd, keepdim, mask_dims(mask, nd));
    rec.record(
        out,
        [](VjpCtx& c) {
          const uint64_t mask = uint64_t(c.args().i(0));
          const int64_t nd = c.args().i(1);
          const bool keepdim = c.args().b(2);
          const std::vector<int64_t>& dims = c.args().ints(3);
          Tensor m = eq(c.saved[0], restore_dims(c.saved[1], mask, nd, keepdim));
          Tensor g = restore_dims(c.grads[0], mask, nd, keepdim);
          return variable_list{(g / m.sum(dims, true)) * m};
        },
        {x, out},
        [](JvpCtx& c) {
          const uint64_t mask = uint64_t(c.args().i(0));
          const int64_t nd = c.args().i(1);
          const bool keepdim = c.args().b(2);
          const std::vector<int64_t>& dims = c.args().ints(3);
          Tensor m = eq(c.inputs[0], restore_dims(c.outputs[0], mask, nd, keepdim));
          Tensor t = where(m, c.tangent_or_zeros(0), Scalar(0.0));
          return variable_list{t.sum(dims, keepdim) / m.sum(dims, keepdim)};
        });
  }
  return out;
}

// max(dim) / min(dim): the gradient goes to the selected index only.
template <bool Max>
std::tuple<Tensor, Tensor> arg_rec(const Tensor& x, int64_t dim0, bool keepdim, const char* op) {
  OpRecorder rec(op, {x});
  auto [v, idx] = arg_impl<Max, true>(x, dim0, keepdim, op);
  if (rec) {
    rec.args(wrap_dim(dim0, x.dim(), op), keepdim, x.sizes(), x.dim() == 0);
    rec.record(
        v,
        [](VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          const bool keepdim = c.args().b(1), scalar = c.args().b(3);
          const std::vector<int64_t>& sizes = c.args().ints(2);
          if (scalar) return variable_list{c.grads[0]};
          Tensor g = keepdim ? c.grads[0] : c.grads[0].unsqueeze(dim);
          Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
          return variable_list{zeros(sizes, g.options()).scatter(dim, i, g)};
        },
        {idx},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const bool keepdim = c.args().b(1), scalar = c.args().b(3);
          if (scalar) return variable_list{c.tangent_or_zeros(0)};
          Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
          Tensor t = c.tangent_or_zeros(0).gather(dim, i);
          return variable_list{keepdim ? t : t.squeeze(dim)};
        });
  }
  return {v, idx};
}
}  // namespace

// ---- sums and means ----

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(sum, sum, self, dtype);
  return sum_rec<false, false>(self, {}, false, dtype, "sum");
}
Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
           std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(sum_1, sum, self, dim, keepdim, dtype);
  return sum_rec<false, false>(self, dim.value_or_empty(), keepdim, dtype, "sum",
                               dim.has_value() && !dim->empty() ? 1 : 0);
}
Tensor& sum_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                std::optional<ScalarType> dtype) {
  EMBER_OP(sum_out, out, self, dim, keepdim, dtype);
  autograd::check_out_not_differentiable("sum", {self});
  write_out(out,
            sum_impl<false, false>(self, dim.value_or_empty(), keepdim, dtype ? dtype : out.dtype(),
                                   "sum"),
            "sum");
  return out;
}
Tensor nansum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
              std::optional<ScalarType> dtype) {
  EMBER_OP(nansum, self, dim, keepdim, dtype);
  return sum_rec<true, false>(self, dim.value_or_empty(), keepdim, dtype, "nansum");
}
Tensor& nansum_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  EMBER_OP(nansum_out, out, self, dim, keepdim, dtype);
  autograd::check_out_not_differentiable("nansum", {self});
  write_out(out,
            sum_impl<true, false>(self, dim.value_or_empty(), keepdim, dtype ? dtype : out.dtype(),
                                  "nansum"),
            "nansum");
  return out;
}
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(mean, mean, self, dtype);
  return sum_rec<false, true>(self, {}, false, dtype, "mean");
}
Tensor mean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(mean_1, mean, self, dim, keepdim, dtype);
  return sum_rec<false, true>(self, dim.value_or_empty(), keepdim, dtype, "mean",
                              dim.has_value() && !dim->empty() ? 1 : 0);
}
Tensor& mean_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  EMBER_OP(mean_out, out, self, dim, keepdim, dtype);
  autograd::check_out_not_differentiable("mean", {self});
  write_out(out,
            sum_impl<false, true>(self, dim.value_or_empty(), keepdim, dtype ? dtype : out.dtype(),
                                  "mean"),
            "mean");
  return out;
}
Tensor nanmean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
               std::optional<ScalarType> dtype) {
  EMBER_OP(nanmean, self, dim, keepdim, dtype);
  EMBER_CHECK(self.defined(), "[nanmean] input is undefined");
  EMBER_CHECK(self.is_floating_point(), "[nanmean] expects a floating point input tensor, got ",
              dtype_name(self.dtype()));
  const Tensor notnan = logical_not(isnan(self));
  return nansum(self, dim, keepdim, dtype).div(sum(notnan, dim, keepdim));
}
Tensor& nanmean_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                    std::optional<ScalarType> dtype) {
  EMBER_OP(nanmean_out, out, self, dim, keepdim, dtype);
  autograd::check_out_not_differentiable("nanmean", {self});
  write_out(out, nanmean(self, dim, keepdim, dtype ? dtype : out.dtype()), "nanmean");
  return out;
}

// ---- products ----

namespace {
Tensor prod_impl(const Tensor& x0, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_CHECK(x0.defined(), "[prod] input is undefined");
  const uint64_t mask = dim_mask(x0, dim, "prod");
  const ScalarType od = sum_out_dtype(x0, dtype);
  const Tensor x = prepare(x0, dtype);
  const ReduceLayout L = reduce_layout(x, mask, reduced_shape(x, mask, keepdim));
  Tensor out = L.output(od);
  prod_stub(L.input.device().type(), L.input, mask, out);
  return L.finish(out);
}
}  // namespace

Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(prod, prod, self, dtype);
  return prod_rec(self, std::nullopt, false, dtype);
}
Tensor prod(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(prod_1, prod, self, dim, keepdim, dtype);
  return prod_rec(self, dim, keepdim, dtype);
}
Tensor& prod_out(Tensor& out, const Tensor& self, int64_t dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  EMBER_OP(prod_out, out, self, dim, keepdim, dtype);
  autograd::check_out_not_differentiable("prod", {self});
  write_out(out, prod_impl(self, {dim}, keepdim, dtype ? dtype : out.dtype()), "prod");
  return out;
}

// ---- extrema ----

Tensor max(const Tensor& self) {
  EMBER_OP(max, self);
  EMBER_CHECK(self.defined(), "[max] input is undefined");
  EMBER_CHECK(self.numel() > 0,
              "[max] max(): Expected reduction dim to be specified for "
              "input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
  return extreme_all_rec<true>(self, "max");
}
Tensor min(const Tensor& self) {
  EMBER_OP(min, self);
  EMBER_CHECK(self.defined(), "[min] input is undefined");
  EMBER_CHECK(self.numel() > 0,
              "[min] min(): Expected reduction dim to be specified for "
              "input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
  return extreme_all_rec<false>(self, "min");
}
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(max_1, self, dim, keepdim);
  return arg_rec<true>(self, dim, keepdim, "max");
}
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(min_1, self, dim, keepdim);
  return arg_rec<false>(self, dim, keepdim, "min");
}
namespace {
std::tuple<Tensor&, Tensor&> arg_out(Tensor& values, Tensor& indices, std::tuple<Tensor, Tensor> r,
                                     const char* op) {
  EMBER_CHECK(values.dtype() == std::get<0>(r).dtype(), "[", op, "] expected out values dtype ",
              dtype_name(std::get<0>(r).dtype()), " but got ", dtype_name(values.dtype()));
  EMBER_CHECK(indices.dtype() == kLong, "[", op, "] expected out indices dtype int64 but got ",
              dtype_name(indices.dtype()));
  write_out(values, std::get<0>(r), op);
  write_out(indices, std::get<1>(r), op);
  return {values, indices};
}
}  // namespace
std::tuple<Tensor&, Tensor&> max_out(Tensor& values, Tensor& indices, const Tensor& self,
                                     int64_t dim, bool keepdim) {
  EMBER_OP(max_out, values, indices, self, dim, keepdim);
  autograd::check_out_not_differentiable("max", {self});
  return arg_out(values, indices, max(self, dim, keepdim), "max");
}
std::tuple<Tensor&, Tensor&> min_out(Tensor& values, Tensor& indices, const Tensor& self,
                                     int64_t dim, bool keepdim) {
  EMBER_OP(min_out, values, indices, self, dim, keepdim);
  autograd::check_out_not_differentiable("min", {self});
  return arg_out(values, indices, min(self, dim, keepdim), "min");
}
Tensor max(const Tensor& self, const Tensor& other) {
  EMBER_OP(max_2, self, other);
  return maximum(self, other);
}
Tensor min(const Tensor& self, const Tensor& other) {
  EMBER_OP(min_2, self, other);
  return minimum(self, other);
}

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_OP(amax, self, dim, keepdim);
  return amaxmin_rec<true>(self, dim, keepdim, "amax");
}
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_OP(amin, self, dim, keepdim);
  return amaxmin_rec<false>(self, dim, keepdim, "amin");
}
Tensor& amax_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_OP(amax_out, out, self, dim, keepdim);
  autograd::check_out_not_differentiable("amax", {self});
  write_out(out, amax(self, dim, keepdim), "amax");
  return out;
}
Tensor& amin_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_OP(amin_out, out, self, dim, keepdim);
  autograd::check_out_not_differentiable("amin", {self});
  write_out(out, amin(self, dim, keepdim), "amin");
  return out;
}

namespace {
template <bool Max>
Tensor argext(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const char* op) {
  EMBER_CHECK(self.defined(), "[", op, "] input is undefined");
  if (!dim) {
    EMBER_CHECK_INDEX(self.numel() > 0, "[", op,
                      "] Expected reduction dim to be specified for "
                      "input.numel() == 0.");
    EMBER_CHECK(self.dtype() != kBool, "[", op, "] not implemented for 'Bool'");
    Tensor r = std::get<0>(arg_impl<Max, false>(self.reshape({-1}), 0, false, op));
    if (keepdim) r = r.reshape(DimVector(size_t(self.dim()), 1));
    return r;
  }
  // Empty inputs: an IndexError for an empty reduced dim, else an empty result (any dtype).
  if (self.dim() > 0 && self.numel() == 0)
    return std::get<0>(arg_impl<Max, false>(self, *dim, keepdim, op));
  EMBER_CHECK(self.dtype() != kBool, "[", op, "] not implemented for 'Bool'");
  if (self.dim() == 0) {
    wrap_dim(*dim, 0, op);
    return zeros({}, TensorOptions(kLong).device(self.device()));
  }
  return std::get<0>(arg_impl<Max, false>(self, *dim, keepdim, op));
}
}  // namespace

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_OP(argmax, self, dim, keepdim);
  return argext<true>(self, dim, keepdim, "argmax");
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_OP(argmin, self, dim, keepdim);
  return argext<false>(self, dim, keepdim, "argmin");
}
Tensor& argmax_out(Tensor& out, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_OP(argmax_out, out, self, dim, keepdim);
  write_out(out, argmax(self, dim, keepdim), "argmax");
  return out;
}
Tensor& argmin_out(Tensor& out, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_OP(argmin_out, out, self, dim, keepdim);
  write_out(out, argmin(self, dim, keepdim), "argmin");
  return out;
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_OP(aminmax, self, dim, keepdim);
  EMBER_CHECK(self.defined(), "[aminmax] input is undefined");
  if (!dim) {
    EMBER_CHECK(self.numel() > 0,
                "[aminmax] cannot compute aminmax over an empty tensor as the "
                "operation has no identity");
    Tensor lo = amin(self), hi = amax(self);
    if (keepdim) {
      DimVector ones(size_t(self.dim()), 1);
      lo = lo.reshape(ones);
      hi = hi.reshape(ones);
    }
    return {lo, hi};
  }
  const int64_t d = wrap_dim(*dim, self.dim(), "aminmax");
  if (self.dim() > 0)
    EMBER_CHECK_INDEX(self.size(d) != 0,
                      "[aminmax] cannot compute aminmax over an empty "
                      "dimension as the operation has no identity (dim ",
                      d, ")");
  if (self.dim() == 0 && keepdim) return {self.reshape({1}), self.reshape({1})};  // as PyTorch
  return {amin(self, {d}, keepdim), amax(self, {d}, keepdim)};
}

// ---- logical ----

namespace {
template <int kKind>
Tensor logical_impl(const Tensor& x0, IntArrayRef dim, bool keepdim, const char* op) {
  EMBER_CHECK(x0.defined(), "[", op, "] input is undefined");
  const uint64_t mask = dim_mask(x0, dim, op);
  const Tensor x = x0.is_conj() ? x0.resolve_conj() : x0;
  const ScalarType od = kKind == 2 ? kLong : x.dtype() == kByte ? kByte : kBool;
  const ReduceLayout L = reduce_layout(x, mask, reduced_shape(x, mask, keepdim));
  Tensor out = L.output(od);
  (kKind == 0   ? all_stub
   : kKind == 1 ? any_stub
                : count_nonzero_stub)(L.input.device().type(), L.input, mask, out);
  return L.finish(out);
}
}  // namespace

Tensor all(const Tensor& self) {
  EMBER_OP(all, self);
  return logical_impl<0>(self, {}, false, "all");
}
Tensor all(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(all_1, self, dim, keepdim);
  return logical_impl<0>(self, {dim}, keepdim, "all");
}
Tensor& all_out(Tensor& out, const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(all_out, out, self, dim, keepdim);
  write_out(out, all(self, dim, keepdim), "all");
  return out;
}
Tensor any(const Tensor& self) {
  EMBER_OP(any, self);
  return logical_impl<1>(self, {}, false, "any");
}
Tensor any(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(any_1, self, dim, keepdim);
  return logical_impl<1>(self, {dim}, keepdim, "any");
}
Tensor& any_out(Tensor& out, const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_OP(any_out, out, self, dim, keepdim);
  write_out(out, any(self, dim, keepdim), "any");
  return out;
}
Tensor count_nonzero(const Tensor& self, IntArrayRef dim) {
  EMBER_OP(count_nonzero, self, dim);
  return logical_impl<2>(self, dim, false, "count_nonzero");
}
Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim) {
  EMBER_OP(count_nonzero_1, self, dim);
  if (!dim) return count_nonzero(self, IntArrayRef{});
  return count_nonzero(self, IntArrayRef{*dim});
}

// ---- Tensor methods ----

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return ember::sum(*this, dtype); }
Tensor Tensor::sum(OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::nansum(OptionalIntArrayRef dim, bool keepdim,
                      std::optional<ScalarType> dtype) const {
  return ember::nansum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return ember::mean(*this, dtype); }
Tensor Tensor::mean(OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::nanmean(OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) const {
  return ember::nanmean(*this, dim, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return ember::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::prod(*this, dim, keepdim, dtype);
}
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return ember::max(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return ember::min(*this, dim, keepdim);
}
Tensor Tensor::max(const Tensor& other) const {
  EMBER_OP(max_3, *this, other);
  return ember::maximum(*this, other);
}
Tensor Tensor::min(const Tensor& other) const {
  EMBER_OP(min_3, *this, other);
  return ember::minimum(*this, other);
}
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const {
  return ember::amax(*this, dim, keepdim);
}
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const {
  return ember::amin(*this, dim, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmin(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::aminmax(*this, dim, keepdim);
}
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return ember::all(*this, dim, keepdim); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return ember::any(*this, dim, keepdim); }
Tensor Tensor::count_nonzero(IntArrayRef dim) const { return ember::count_nonzero(*this, dim); }

}  // namespace ember
