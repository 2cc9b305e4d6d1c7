// cumsum / cumprod / cummax / cummin / logcumsumexp: validation, PyTorch 1.13's dtype rules and
// out= handling; the loops are behind kernels/stubs/scan.h (Note [Scan layout]).
//
// dtype rules (as PyTorch): cumsum/cumprod give int64 for bool and integer inputs unless `dtype`
// is given; `dtype` (or, for out=, out's dtype) casts the input first. A 0-dim input is copied
// and a zero-size one gives an empty result before any dtype check, so e.g. a 0-dim
// cumsum(dtype=bool) works while a 1-D one is "not implemented", as with PyTorch's kernels.
#include <limits>
#include <optional>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/sort.h"
#include "kernels/stubs/scan.h"
#include "ops/call_path.h"

namespace ember {
namespace {

/// Which running reduction a scan computes.
enum class ScanKind : uint8_t { Sum, Prod, Max, Min, LogSumExp };

/// The dtypes each scan takes: sum/prod integers, floating and complex types; max/min bool,
/// integers and floating types; logsumexp floating types (PyTorch 1.13's CPU set plus float16,
/// which it lacks).
bool scan_supported(ScanKind kind, ScalarType dt) {
  switch (kind) {
    case ScanKind::Sum:
    case ScanKind::Prod:
      return isIntegralType(dt, false) || isFloatingType(dt) || dt == kComplexFloat ||
             dt == kComplexDouble;
    case ScanKind::Max:
    case ScanKind::Min:
      return isIntegralType(dt, true) || isFloatingType(dt);
    case ScanKind::LogSumExp:
      return isFloatingType(dt);
  }
  return false;
}

void check_input(const Tensor& self, const char* op) {
  EMBER_CHECK(self.defined(), "[", op, "] input tensor is undefined");
}

void check_kernel(ScanKind kind, ScalarType dt, const char* op) {
  EMBER_CHECK(scan_supported(kind, dt), "[", op, "] \"", op, "\" not implemented for '",
              toString(dt), "' on CPU");
}

/// The result dtype of cumsum/cumprod without out=.
ScalarType cum_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return isIntegralType(self.dtype(), true) ? kLong : self.dtype();
}

/// Scans `self` (cast to `dt`) along `dim` into `dst`, a contiguous tensor of self's shape and
/// dtype `dt`; `idx` likewise for cummax/cummin. `dst` may share memory with `self` only as
/// the very same contiguous tensor (in-place).
void scan_into(Tensor& dst, Tensor* idx, const Tensor& self, int64_t dim, ScalarType dt,
               ScanKind kind, const char* op) {
  // PyTorch copies a 0-dim input and returns a zero-size one untouched, before its dtype checks
  // (logcumsumexp alone always checks).
  if (kind == ScanKind::LogSumExp) check_kernel(kind, dt, op);
  if (self.dim() == 0) {
    dst.copy_(self);
    if (idx) idx->fill_(0);
    return;
  }
  if (self.numel() == 0) return;
  check_kernel(kind, dt, op);
  const Tensor x = self.to(dt).resolve_conj().contiguous();
  const DeviceType dev = x.device().type();
  switch (kind) {
    case ScanKind::Sum:
      return cumsum_stub(dev, x, dst, dim);
    case ScanKind::Prod:
      return cumprod_stub(dev, x, dst, dim);
    case ScanKind::LogSumExp:
      return logcumsumexp_stub(dev, x, dst, dim);
    case ScanKind::Max:
      return cummax_stub(dev, x, dst, *idx, dim);
    case ScanKind::Min:
      return cummin_stub(dev, x, dst, *idx, dim);
  }
}

Tensor scan_new(const Tensor& self, int64_t& dim, ScalarType dt, ScanKind kind, const char* op,
                Tensor* idx = nullptr) {
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  Tensor y = empty_tensor(self.sizes(), dt, self.device());
  if (idx) *idx = empty_tensor(self.sizes(), kLong, self.device());
  scan_into(y, idx, self, dim, dt, kind, op);
  return y;
}

/// Checks out= against `self` (same device) and `dt`, and resizes an empty one to self's sizes;
/// a non-empty one must already have them (ember's out= rule, as reduce_detail::write_out).
void prepare_out(Tensor& out, const Tensor& self, ScalarType dt, const char* op,
                 const char* what = "out") {
  const IntArrayRef sizes = self.sizes();
  EMBER_CHECK(out.defined(), "[", op, "] ", what, "= tensor is undefined");
  EMBER_CHECK(out.device() == self.device(), "[", op, "] expected ", what, "= on ",
              self.device().str(), ", got ", out.device().str());
  EMBER_CHECK(out.dtype() == dt, "[", op, "] expected ", what, " tensor to have dtype ",
              dtype_name(dt), ", but got ", dtype_name(out.dtype()), " instead");
  if (out.sizes() != sizes) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] ", what, "= tensor has shape ",
                shape_str(out.sizes()), " but the result has shape ", shape_str(sizes),
                "; pass an empty tensor or one of the result's shape");
    resize_output(out, sizes);
  }
}

/// Whether a kernel may write `out` directly while reading `self`: out is contiguous and does
/// not overlap self, or is self itself (same dtype, contiguous: the scan reads each element
/// before writing it).
bool writes_directly(const Tensor& out, const Tensor& self) {
  if (!out.is_contiguous()) return false;
  if (!out.is_alias_of(self)) return true;
  return out.storage_offset() == self.storage_offset() && self.is_contiguous() &&
         out.dtype() == self.dtype() && !self.is_conj();
}

Tensor& scan_out(Tensor& out, const Tensor& self, int64_t dim, ScalarType dt, ScanKind kind,
                 const char* op) {
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  prepare_out(out, self, dt, op);
  if (writes_directly(out, self)) {
    scan_into(out, nullptr, self, dim, dt, kind, op);
    out.unsafeGetTensorImpl()->bump_version();
    return out;
  }
  Tensor y = empty_tensor(self.sizes(), dt, self.device());
  scan_into(y, nullptr, self, dim, dt, kind, op);
  return out.copy_(y);
}

std::tuple<Tensor&, Tensor&> extremum_out(Tensor& values, Tensor& indices, const Tensor& self,
                                          int64_t dim, bool is_max) {
  const char* op = is_max ? "cummax" : "cummin";
  const ScanKind kind = is_max ? ScanKind::Max : ScanKind::Min;
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  prepare_out(values, self, self.dtype(), op, "values");
  prepare_out(indices, self, kLong, op, "indices");
  EMBER_CHECK(!values.is_alias_of(indices), "[", op,
              "] the values and indices out= tensors must not share memory");
  if (writes_directly(values, self) && writes_directly(indices, self)) {
    scan_into(values, &indices, self, dim, self.dtype(), kind, op);
    values.unsafeGetTensorImpl()->bump_version();
    indices.unsafeGetTensorImpl()->bump_version();
    return {values, indices};
  }
  Tensor i;
  Tensor v = scan_new(self, dim, self.dtype(), kind, op, &i);
  values.copy_(v);
  indices.copy_(i);
  return {values, indices};
}

/// In-place cumsum_/cumprod_: the result dtype is self's (a different `dtype` is an error).
Tensor& scan_inplace(Tensor& self, int64_t dim, std::optional<ScalarType> dtype, ScanKind kind,
                     const char* op) {
  check_input(self, op);
  const ScalarType dt = dtype.value_or(self.dtype());
  EMBER_CHECK(dt == self.dtype(), "[", op, "] bad in-place call: input tensor dtype ",
              dtype_name(self.dtype()), " and output tensor dtype ", dtype_name(dt),
              " should match");
  return scan_out(self, self, dim, dt, kind, op);
}

// ---- autograd rules (PyTorch 1.13's cumsum/cumprod/cummaxmin/logcumsumexp backward) ----

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

Tensor reversed_cumsum(const Tensor& w, int64_t dim) {
  return w.flip({dim}).cumsum(dim).flip({dim});
}

Tensor cumsum_backward(const Tensor& g, int64_t dim) {
  if (g.dim() == 0 || g.numel() == 0) return g;
  return reversed_cumsum(g, dim);
}

// d out_j / d x_k = prod_{i <= j, i != k} x_i for j >= k. Without zeros that is out_j / x_k;
// with zeros the products are formed explicitly (O(n^2), differentiable again).
Tensor cumprod_backward(const Tensor& grad, const Tensor& input, int64_t dim,
                        const Tensor& output) {
  if (input.numel() <= 1 || input.dim() == 0) return grad;
  const int64_t n = input.size(dim);
  if (n == 1) return grad;
  const Tensor in_c = input.conj(), out_c = output.conj();
  const bool has_zero = eq(input, Scalar(0)).any().item().toBool();
  if (!has_zero) return reversed_cumsum(out_c * grad, dim).div(in_c);
  std::vector<int64_t> ones_size = input.sizes().vec();
  ones_size[size_t(dim)] = 1;
  const Tensor one = ones(ones_size, grad.options());
  std::vector<Tensor> grads;
  for (int64_t k = 0; k < n; ++k) {
    Tensor omitted;
    if (k == 0) {
      omitted = cat({one, in_c.narrow(dim, 1, n - 1).cumprod(dim)}, dim);
    } else if (k == n - 1) {
      omitted = in_c.narrow(dim, 0, k).prod(dim, true);
    } else {
      const Tensor until_k = in_c.narrow(dim, 0, k).prod(dim, true);
      const Tensor from_k1 = in_c.narrow(dim, k + 1, n - k - 1).cumprod(dim);
      omitted = cat({until_k, until_k * from_k1}, dim);
    }
    grads.push_back((grad.narrow(dim, k, n - k) * omitted).sum({dim}));
  }
  return stack(grads, dim);
}

// Forward derivative of cumprod: out_j' = sum_{k <= j} t_k prod_{i <= j, i != k} x_i.
Tensor cumprod_jvp(const Tensor& t, const Tensor& input, int64_t dim, const Tensor& output) {
  if (input.dim() == 0 || input.numel() == 0) return t.to(output.dtype());
  const bool has_zero = eq(input, Scalar(0)).any().item().toBool();
  if (!has_zero) return (t / input).cumsum(dim) * output;
  const int64_t n = input.size(dim);
  std::vector<int64_t> ones_size = input.sizes().vec();
  ones_size[size_t(dim)] = 1;
  const Tensor one = ones(ones_size, output.options());
  Tensor acc;
  for (int64_t k = 0; k < n; ++k) {
    std::vector<Tensor> parts;
    if (k > 0) parts.push_back(input.narrow(dim, 0, k));
    parts.push_back(one);
    if (k < n - 1) parts.push_back(input.narrow(dim, k + 1, n - k - 1));
    Tensor cp = cat(parts, dim).cumprod(dim).narrow(dim, k, n - k) * t.narrow(dim, k, 1);
    if (k > 0) {
      std::vector<int64_t> zs = input.sizes().vec();
      zs[size_t(dim)] = k;
      cp = cat({zeros(zs, cp.options()), cp}, dim);
    }
    acc = acc.defined() ? acc + cp : cp;
  }
  return acc;
}

Tensor cumsum_rec(const Tensor& self, int64_t dim0, std::optional<ScalarType> dtype) {
  OpRecorder rec("cumsum", {self});
  int64_t dim = dim0;
  Tensor out = scan_new(self, dim, cum_dtype(self, dtype), ScanKind::Sum, "cumsum");
  if (rec) {
    rec.args(dim, dtype);
    rec.record(
        out, [](VjpCtx& c) { return variable_list{cumsum_backward(c.grads[0], c.args().i(0))}; },
        {},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const std::optional<ScalarType> dtype =
              c.args().is_none(1) ? std::nullopt : std::optional<ScalarType>(c.args().dtype(1));
          return variable_list{ember::cumsum(c.tangent_or_zeros(0), dim, dtype)};
        });
  }
  return out;
}

Tensor cumprod_rec(const Tensor& self, int64_t dim0, std::optional<ScalarType> dtype) {
  OpRecorder rec("cumprod", {self});
  int64_t dim = dim0;
  Tensor out = scan_new(self, dim, cum_dtype(self, dtype), ScanKind::Prod, "cumprod");
  if (rec) {
    rec.args(dim);
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Tensor& o = c.saved[1];
          return variable_list{cumprod_backward(c.grads[0], c.saved[0].to(o.dtype()), dim, o)};
        },
        {self, out},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Tensor& o = c.outputs[0];
          return variable_list{
              cumprod_jvp(c.tangent_or_zeros(0).to(o.dtype()), c.inputs[0].to(o.dtype()), dim, o)};
        });
  }
  return out;
}

// cummax / cummin: each output is one input element, so the gradient is scattered (and summed)
// onto the index it came from.
std::tuple<Tensor, Tensor> cumext_rec(const Tensor& self, int64_t dim0, bool is_max) {
  const char* op = is_max ? "cummax" : "cummin";
  OpRecorder rec(op, {self});
  int64_t dim = dim0;
  Tensor i;
  Tensor v = scan_new(self, dim, self.dtype(), is_max ? ScanKind::Max : ScanKind::Min, op, &i);
  if (rec) {
    rec.args(dim, self.dim() == 0);
    rec.record(
        v,
        [](VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          const bool scalar = c.args().b(1);
          if (scalar) return variable_list{c.grads[0]};
          return variable_list{zeros_like(c.grads[0]).scatter_add(dim, c.saved[0], c.grads[0])};
        },
        {i},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const bool scalar = c.args().b(1);
          if (scalar) return variable_list{c.tangent_or_zeros(0)};
          return variable_list{c.tangent_or_zeros(0).gather(dim, c.saved[0])};
        });
  }
  return {v, i};
}

// d out_j / d x_k = exp(x_k - out_j) for j >= k; the positive and negative parts of the
// gradient are summed in log space (PyTorch's logcumsumexp_backward) so nothing overflows.
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result,
                             int64_t dim) {
  if (grad.dim() == 0 || grad.numel() == 0) return grad;
  const Scalar lowest = grad.dtype() == kDouble
                            ? Scalar(std::numeric_limits<double>::lowest())
                            : Scalar(double(std::numeric_limits<float>::lowest()));
  auto rev_lcse = [dim](const Tensor& x) { return x.flip({dim}).logcumsumexp(dim).flip({dim}); };
  const Tensor log_abs = log(abs(grad));
  const Tensor pos = where(gt(grad, Scalar(0)), log_abs, lowest);
  const Tensor neg = where(lt(grad, Scalar(0)), log_abs, lowest);
  return exp(rev_lcse(pos - result) + self) - exp(rev_lcse(neg - result) + self);
}

Tensor logcumsumexp_rec(const Tensor& self, int64_t dim0) {
  OpRecorder rec("logcumsumexp", {self});
  int64_t dim = dim0;
  Tensor out = scan_new(self, dim, self.dtype(), ScanKind::LogSumExp, "logcumsumexp");
  if (rec) {
    rec.args(dim);
    rec.record(
        out,
        [](VjpCtx& c) {
          return variable_list{
              logcumsumexp_backward(c.grads[0], c.saved[0], c.saved[1], c.args().i(0))};
        },
        {self, out},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Tensor& x = c.inputs[0];
          if (x.dim() == 0 || x.numel() == 0) return variable_list{c.tangent_or_zeros(0)};
          Tensor m = amax(x, {dim}, true);
          m = where(isinf(m), Scalar(0.0), m);
          const Tensor e = exp(x - m);
          return variable_list{(e * c.tangent_or_zeros(0)).cumsum(dim) / e.cumsum(dim)};
        });
  }
  return out;
}

// cumsum_ / cumprod_: the in-place scan, recorded onto self's history.
Tensor& scan_inplace_rec(Tensor& self, int64_t dim0, std::optional<ScalarType> dtype, ScanKind kind,
                         const char* op) {
  const bool prod = kind == ScanKind::Prod;
  // cumprod_'s rule needs the input as it was: a clone taken while recording, so the rule can
  // be differentiated again through it.
  Tensor before = (prod && autograd::any_needs_recording({self})) ? self.clone() : Tensor();
  OpRecorder rec(op, {self});
  scan_inplace(self, dim0, dtype, kind, op);
  if (rec) {
    rec.args(wrap_dim(dim0, self.dim(), op));
    if (!prod)
      rec.record_inplace(
          self, [](VjpCtx& c) { return variable_list{cumsum_backward(c.grads[0], c.args().i(0))}; },
          {}, [](JvpCtx& c) { return variable_list{c.tangent_or_zeros(0).cumsum(c.args().i(0))}; });
    else
      rec.record_inplace(
          self,
          [](VjpCtx& c) {
            const int64_t dim = c.args().i(0);
            const Tensor& x = c.saved[0];
            return variable_list{cumprod_backward(c.grads[0], x, dim, x.cumprod(dim))};
          },
          {before},
          [](JvpCtx& c) {
            const int64_t dim = c.args().i(0);
            const Tensor& x = c.saved[0];
            return variable_list{cumprod_jvp(c.tangent_or_zeros(0), x, dim, x.cumprod(dim))};
          });
  }
  return self;
}
}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(cumsum, cumsum, self, dim, dtype);
  check_input(self, "cumsum");
  return cumsum_rec(self, dim, dtype);
}
Tensor& cumsum_out(Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(cumsum_out, out, self, dim, dtype);
  autograd::check_out_not_differentiable("cumsum", {self});
  EMBER_CHECK(out.defined(), "[cumsum] out= tensor is undefined");
  return scan_out(out, self, dim, dtype.value_or(out.dtype()), ScanKind::Sum, "cumsum");
}
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(cumprod, cumprod, self, dim, dtype);
  check_input(self, "cumprod");
  return cumprod_rec(self, dim, dtype);
}
Tensor& cumprod_out(Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(cumprod_out, out, self, dim, dtype);
  autograd::check_out_not_differentiable("cumprod", {self});
  EMBER_CHECK(out.defined(), "[cumprod] out= tensor is undefined");
  return scan_out(out, self, dim, dtype.value_or(out.dtype()), ScanKind::Prod, "cumprod");
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  EMBER_OP(cummax, self, dim);
  check_input(self, "cummax");
  return cumext_rec(self, dim, true);
}
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  EMBER_OP(cummin, self, dim);
  check_input(self, "cummin");
  return cumext_rec(self, dim, false);
}
std::tuple<Tensor&, Tensor&> cummax_out(Tensor& values, Tensor& indices, const Tensor& self,
                                        int64_t dim) {
  EMBER_OP(cummax_out, values, indices, self, dim);
  autograd::check_out_not_differentiable("cummax", {self});
  return extremum_out(values, indices, self, dim, true);
}
std::tuple<Tensor&, Tensor&> cummin_out(Tensor& values, Tensor& indices, const Tensor& self,
                                        int64_t dim) {
  EMBER_OP(cummin_out, values, indices, self, dim);
  autograd::check_out_not_differentiable("cummin", {self});
  return extremum_out(values, indices, self, dim, false);
}

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  EMBER_OP(logcumsumexp, self, dim);
  check_input(self, "logcumsumexp");
  return logcumsumexp_rec(self, dim);
}
Tensor& logcumsumexp_out(Tensor& out, const Tensor& self, int64_t dim) {
  EMBER_OP(logcumsumexp_out, out, self, dim);
  autograd::check_out_not_differentiable("logcumsumexp", {self});
  check_input(self, "logcumsumexp");
  // PyTorch requires out's dtype to be the input's (no cast on the way in).
  return scan_out(out, self, dim, self.dtype(), ScanKind::LogSumExp, "logcumsumexp");
}

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::cumsum(*this, dim, dtype);
}
Tensor& Tensor::cumsum_(int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(cumsum_, *this, dim, dtype);
  return scan_inplace_rec(*this, dim, dtype, ScanKind::Sum, "cumsum_");
}
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::cumprod(*this, dim, dtype);
}
Tensor& Tensor::cumprod_(int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_OP(cumprod_, *this, dim, dtype);
  return scan_inplace_rec(*this, dim, dtype, ScanKind::Prod, "cumprod_");
}
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return ember::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return ember::cummin(*this, dim); }
Tensor Tensor::logcumsumexp(int64_t dim) const { return ember::logcumsumexp(*this, dim); }

}  // namespace ember
