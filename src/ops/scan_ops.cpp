// cumsum / cumprod / cummax / cummin / logcumsumexp: validation, PyTorch 1.13's dtype rules and
// out= handling; the loops are in kernels/cpu/scan.cpp (Note [Scan layout]).
//
// dtype rules (as PyTorch): cumsum/cumprod give int64 for bool and integer inputs unless `dtype`
// is given; `dtype` (or, for out=, out's dtype) casts the input first. A 0-dim input is copied
// and a zero-size one gives an empty result before any dtype check, so e.g. a 0-dim
// cumsum(dtype=bool) works while a 1-D one is "not implemented", as with PyTorch's kernels.
#include <optional>

#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/sort.h"
#include "kernels/cpu/scan.h"

namespace ember {
namespace {

using cpu::ScanKind;

void check_input(const Tensor& self, const char* op) {
  EMBER_CHECK(self.defined(), "[", op, "] input tensor is undefined");
  EMBER_CHECK(self.is_cpu(), "[", op, "] only CPU tensors are supported, got ",
              self.device().str());
}

void check_kernel(ScanKind kind, ScalarType dt, const char* op) {
  EMBER_CHECK(cpu::scan_supported(kind, dt), "[", op, "] \"", op, "\" not implemented for '",
              toString(dt), "' on CPU");
}

/// The result dtype of cumsum/cumprod without out=.
ScalarType cum_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return isIntegralType(self.dtype(), true) ? kLong : self.dtype();
}

/// The contiguous (outer, n, inner) view of a scan of `x` along `dim` (x.dim() > 0).
struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
};
Geom geom(const Tensor& x, int64_t dim) {
  Geom g;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) g.outer *= x.size(d);
    if (d > dim) g.inner *= x.size(d);
  }
  g.n = x.size(dim);
  return g;
}

/// Scans `self` (cast to `dt`) along `dim` into `dst`, a contiguous tensor of self's shape and
/// dtype `dt`; `idx` likewise for cummax/cummin. `dst` may share memory with `self` only as
/// the very same contiguous tensor (in-place).
void scan_into(Tensor& dst, Tensor* idx, const Tensor& self, int64_t dim, ScalarType dt,
               ScanKind kind, const char* op) {
  const bool extremum = kind == ScanKind::Max || kind == ScanKind::Min;
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
  const Geom g = geom(x, dim);
  cpu::scan_contiguous(kind, dt, x.data_ptr(), dst.data_ptr(),
                       extremum ? idx->data_ptr<int64_t>() : nullptr, g.outer, g.n, g.inner);
}

Tensor scan_new(const Tensor& self, int64_t& dim, ScalarType dt, ScanKind kind, const char* op,
                Tensor* idx = nullptr) {
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  Tensor y = empty_tensor(self.sizes(), dt);
  if (idx) *idx = empty_tensor(self.sizes(), kLong);
  scan_into(y, idx, self, dim, dt, kind, op);
  return y;
}

/// Resizes an empty out= to `sizes`; a non-empty one must already have them (ember's out= rule,
/// as reduce_detail::write_out).
void prepare_out(Tensor& out, IntArrayRef sizes, ScalarType dt, const char* op,
                 const char* what = "out") {
  EMBER_CHECK(out.defined(), "[", op, "] ", what, "= tensor is undefined");
  EMBER_CHECK(out.is_cpu(), "[", op, "] expected ", what, "= on cpu, got ", out.device().str());
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
  return out.data_ptr() == self.data_ptr() && self.is_contiguous() && out.dtype() == self.dtype() &&
         !self.is_conj();
}

Tensor& scan_out(Tensor& out, const Tensor& self, int64_t dim, ScalarType dt, ScanKind kind,
                 const char* op) {
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  prepare_out(out, self.sizes(), dt, op);
  if (writes_directly(out, self)) {
    scan_into(out, nullptr, self, dim, dt, kind, op);
    out.unsafeGetTensorImpl()->bump_version();
    return out;
  }
  Tensor y = empty_tensor(self.sizes(), dt);
  scan_into(y, nullptr, self, dim, dt, kind, op);
  return out.copy_(y);
}

std::tuple<Tensor&, Tensor&> extremum_out(Tensor& values, Tensor& indices, const Tensor& self,
                                          int64_t dim, bool is_max) {
  const char* op = is_max ? "cummax" : "cummin";
  const ScanKind kind = is_max ? ScanKind::Max : ScanKind::Min;
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  prepare_out(values, self.sizes(), self.dtype(), op, "values");
  prepare_out(indices, self.sizes(), kLong, op, "indices");
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

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  check_input(self, "cumsum");
  return scan_new(self, dim, cum_dtype(self, dtype), ScanKind::Sum, "cumsum");
}
Tensor& cumsum_out(Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_CHECK(out.defined(), "[cumsum] out= tensor is undefined");
  return scan_out(out, self, dim, dtype.value_or(out.dtype()), ScanKind::Sum, "cumsum");
}
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  check_input(self, "cumprod");
  return scan_new(self, dim, cum_dtype(self, dtype), ScanKind::Prod, "cumprod");
}
Tensor& cumprod_out(Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  EMBER_CHECK(out.defined(), "[cumprod] out= tensor is undefined");
  return scan_out(out, self, dim, dtype.value_or(out.dtype()), ScanKind::Prod, "cumprod");
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  check_input(self, "cummax");
  Tensor i;
  Tensor v = scan_new(self, dim, self.dtype(), ScanKind::Max, "cummax", &i);
  return {v, i};
}
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  check_input(self, "cummin");
  Tensor i;
  Tensor v = scan_new(self, dim, self.dtype(), ScanKind::Min, "cummin", &i);
  return {v, i};
}
std::tuple<Tensor&, Tensor&> cummax_out(Tensor& values, Tensor& indices, const Tensor& self,
                                        int64_t dim) {
  return extremum_out(values, indices, self, dim, true);
}
std::tuple<Tensor&, Tensor&> cummin_out(Tensor& values, Tensor& indices, const Tensor& self,
                                        int64_t dim) {
  return extremum_out(values, indices, self, dim, false);
}

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  check_input(self, "logcumsumexp");
  return scan_new(self, dim, self.dtype(), ScanKind::LogSumExp, "logcumsumexp");
}
Tensor& logcumsumexp_out(Tensor& out, const Tensor& self, int64_t dim) {
  check_input(self, "logcumsumexp");
  // PyTorch requires out's dtype to be the input's (no cast on the way in).
  return scan_out(out, self, dim, self.dtype(), ScanKind::LogSumExp, "logcumsumexp");
}

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::cumsum(*this, dim, dtype);
}
Tensor& Tensor::cumsum_(int64_t dim, std::optional<ScalarType> dtype) {
  return scan_inplace(*this, dim, dtype, ScanKind::Sum, "cumsum_");
}
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::cumprod(*this, dim, dtype);
}
Tensor& Tensor::cumprod_(int64_t dim, std::optional<ScalarType> dtype) {
  return scan_inplace(*this, dim, dtype, ScanKind::Prod, "cumprod_");
}
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return ember::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return ember::cummin(*this, dim); }
Tensor Tensor::logcumsumexp(int64_t dim) const { return ember::logcumsumexp(*this, dim); }

}  // namespace ember
