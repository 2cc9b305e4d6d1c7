// torch.fft (NumPy's numpy.fft semantics) as composites of the three primitives of
// fft_primitives.cpp: argument checks, dtype promotion, zero-padding or trimming to n / s, and
// the normalisation mode, then one or two primitive calls. Autograd comes from the primitives.
#include <algorithm>
#include <numeric>
#include <vector>

#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/fft.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ops/call_path.h"
#include "ops/fft/fft_internal.h"

namespace ember::fft {

namespace {

/// ATen's norm_from_string: what `norm` means for a transform in direction `forward`.
int64_t norm_mode(Norm norm, bool forward, const char* op) {
  if (!norm || *norm == "backward") return int64_t(forward ? FftNorm::None : FftNorm::ByN);
  if (*norm == "forward") return int64_t(forward ? FftNorm::ByN : FftNorm::None);
  if (*norm == "ortho") return int64_t(FftNorm::ByRootN);
  EMBER_THROW(Error, "[", op, "] Invalid normalization mode: \"", *norm,
              "\"; expected \"backward\", \"forward\" or \"ortho\"");
}

/// The dtype an FFT computes in: integers and bool take the default float dtype; only
/// float32/float64 and their complex types have kernels (as torch on CPU).
ScalarType promote_type_fft(ScalarType t, bool require_complex, const char* op) {
  if (isComplexType(t)) {
    EMBER_CHECK(t == kComplexFloat || t == kComplexDouble, "[", op, "] Unsupported dtype ",
                toString(t));
    return t;
  }
  if (!isFloatingType(t)) t = get_default_dtype();
  EMBER_CHECK(t == kFloat || t == kDouble, "[", op, "] Unsupported dtype ", toString(t));
  return require_complex ? toComplexType(t) : t;
}

Tensor promote_fft(const Tensor& x, bool require_complex, const char* op) {
  const ScalarType t = promote_type_fft(x.dtype(), require_complex, op);
  return x.dtype() == t ? x : x.to(t);
}

/// Zero-pads or trims `x` to `n` points along `dim`.
Tensor resize_dim(const Tensor& x, int64_t dim, int64_t n) {
  const int64_t have = x.size(dim);
  if (have == n) return x;
  if (have > n) return x.slice(dim, 0, n);
  std::vector<int64_t> pad(size_t(2 * (x.dim() - dim)), 0);
  pad.back() = n - have;
  return constant_pad_nd(x, pad);
}

Tensor resize_fft_input(Tensor x, IntArrayRef dims, IntArrayRef sizes) {
  for (size_t i = 0; i < dims.size(); ++i) x = resize_dim(x, dims[i], sizes[i]);
  return x;
}

void check_points(int64_t n, const char* op) {
  EMBER_CHECK(n >= 1, "[", op, "] Invalid number of data points (", n, ") specified");
}

/// The wrapped dim of a one-dimensional transform; a 0-dim input has no points to transform.
int64_t fft_dim(const Tensor& x, int64_t dim, const char* op) {
  EMBER_CHECK(x.dim() > 0, "[", op,
              "] Invalid number of data points (0) specified: expected a tensor with at least "
              "one dimension, got a 0-dim tensor");
  return wrap_dim(dim, x.dim(), op);
}

struct ShapeAndDims {
  DimVector shape, dim;
};

/// ATen's canonicalize_fft_shape_and_dim_args: dims default to the last len(s) dims (all dims
/// without s); s entries of -1 keep the input's size.
ShapeAndDims canonicalize(const Tensor& x, OptionalIntArrayRef s, OptionalIntArrayRef dim,
                          const char* op) {
  const int64_t nd = x.dim();
  ShapeAndDims r;
  if (dim.has_value()) {
    for (int64_t d : *dim) {
      EMBER_CHECK_INDEX(nd > 0, "[", op, "] dimension specified as ", d,
                        " but tensor has no dimensions");
      r.dim.push_back(wrap_dim(d, nd, op));
    }
    std::vector<int64_t> sorted(r.dim.begin(), r.dim.end());
    std::sort(sorted.begin(), sorted.end());
    EMBER_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "[", op,
                "] FFT dims must be unique, got ", shape_str(*dim));
  }
  if (s.has_value()) {
    EMBER_CHECK(!dim.has_value() || dim->size() == s->size(), "[", op,
                "] When given, dim and shape arguments must have the same length: got s=",
                shape_str(*s), " and dim=", shape_str(dim.has_value() ? *dim : IntArrayRef()));
    const int64_t k = int64_t(s->size());
    EMBER_CHECK(k <= nd, "[", op, "] Got shape with ", k, " values but input tensor only has ", nd,
                " dimensions.");
    if (!dim.has_value())
      for (int64_t i = 0; i < k; ++i) r.dim.push_back(nd - k + i);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t n = (*s)[size_t(i)];
      r.shape.push_back(n == -1 ? x.size(r.dim[size_t(i)]) : n);
    }
  } else if (!dim.has_value()) {
    for (int64_t i = 0; i < nd; ++i) {
      r.dim.push_back(i);
      r.shape.push_back(x.size(i));
    }
  } else {
    for (int64_t d : r.dim) r.shape.push_back(x.size(d));
  }
  for (int64_t n : r.shape) check_points(n, op);
  return r;
}

/// canonicalize for the complex-to-real transforms: the last dim's output length
/// (`last_dim_size`, 2 * (m - 1) by default) and its n / 2 + 1 input bins.
ShapeAndDims canonicalize_c2r(const Tensor& x, OptionalIntArrayRef s, OptionalIntArrayRef dim,
                              const char* op, int64_t& last_dim_size) {
  ShapeAndDims r = canonicalize(x, s, dim, op);
  EMBER_CHECK(r.shape.size() > 0, "[", op, "] ", op, " must transform at least one axis");
  if (!s.has_value() || s->back() == -1) {
    last_dim_size = 2 * (x.size(r.dim[r.dim.size() - 1]) - 1);
  } else {
    last_dim_size = r.shape[r.shape.size() - 1];
  }
  check_points(last_dim_size, op);
  r.shape[r.shape.size() - 1] = last_dim_size / 2 + 1;
  return r;
}

std::vector<int64_t> to_vec(const DimVector& v) { return std::vector<int64_t>(v.begin(), v.end()); }

// ---- the shared bodies ----

Tensor c2c_1d(const char* op, const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm,
              bool forward) {
  Tensor x = promote_fft(self, true, op);
  const int64_t d = fft_dim(x, dim, op);
  const int64_t len = n.value_or(x.size(d));
  check_points(len, op);
  const int64_t mode = norm_mode(norm, forward, op);
  if (n) x = resize_dim(x, d, len);
  return _fft_c2c(x, {d}, mode, forward);
}

Tensor r2c_1d(const char* op, const char* name, const Tensor& self, std::optional<int64_t> n,
              int64_t dim, Norm norm, bool forward) {
  EMBER_CHECK(!self.is_complex(), "[", op, "] ", name, " expects a real input tensor, but got ",
              toString(self.dtype()));
  Tensor x = promote_fft(self, false, op);
  const int64_t d = fft_dim(x, dim, op);
  const int64_t len = n.value_or(x.size(d));
  check_points(len, op);
  const int64_t mode = norm_mode(norm, forward, op);
  if (n) x = resize_dim(x, d, len);
  Tensor r = _fft_r2c(x, {d}, mode, true);
  // The inverse of a real signal is the conjugate of its forward transform.
  return forward ? r : r.conj();
}

Tensor c2r_1d(const char* op, const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm,
              bool forward) {
  Tensor x = promote_fft(self, true, op);
  const int64_t d = fft_dim(x, dim, op);
  const int64_t len = n.value_or(2 * (x.size(d) - 1));
  check_points(len, op);
  const int64_t mode = norm_mode(norm, forward, op);
  if (n) x = resize_dim(x, d, len / 2 + 1);
  // hfft is the inverse transform of the conjugate, scaled as a forward transform.
  if (forward) x = x.conj();
  return _fft_c2r(x, {d}, mode, len);
}

Tensor c2c_nd(const char* op, const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim,
              Norm norm, bool forward) {
  Tensor x = promote_fft(self, true, op);
  ShapeAndDims desc = canonicalize(x, s, dim, op);
  EMBER_CHECK(x.dim() > 0, "[", op, "] ndim must be >= 1: a 0-dim tensor has no dims to transform");
  const int64_t mode = norm_mode(norm, forward, op);
  x = resize_fft_input(x, IntArrayRef(desc.dim), IntArrayRef(desc.shape));
  return _fft_c2c(x, IntArrayRef(desc.dim), mode, forward);
}

Tensor rfftn_impl(const char* op, const Tensor& self, OptionalIntArrayRef s,
                  OptionalIntArrayRef dim, Norm norm) {
  EMBER_CHECK(!self.is_complex(), "[", op, "] ", op,
              " expects a real-valued input tensor, but got ", toString(self.dtype()));
  ShapeAndDims desc = canonicalize(self, s, dim, op);
  EMBER_CHECK(!desc.shape.empty(), "[", op, "] ", op, " must transform at least one axis");
  Tensor x = promote_fft(self, false, op);
  const int64_t mode = norm_mode(norm, true, op);
  x = resize_fft_input(x, IntArrayRef(desc.dim), IntArrayRef(desc.shape));
  return _fft_r2c(x, IntArrayRef(desc.dim), mode, true);
}

Tensor irfftn_impl(const char* op, const Tensor& self, OptionalIntArrayRef s,
                   OptionalIntArrayRef dim, Norm norm) {
  int64_t last_dim_size = 0;
  ShapeAndDims desc = canonicalize_c2r(self, s, dim, op, last_dim_size);
  Tensor x = promote_fft(self, true, op);
  const int64_t mode = norm_mode(norm, false, op);
  x = resize_fft_input(x, IntArrayRef(desc.dim), IntArrayRef(desc.shape));
  return _fft_c2r(x, IntArrayRef(desc.dim), mode, last_dim_size);
}

Tensor hfftn_impl(const char* op, const Tensor& self, OptionalIntArrayRef s,
                  OptionalIntArrayRef dim, Norm norm) {
  int64_t last_dim_size = 0;
  ShapeAndDims desc = canonicalize_c2r(self, s, dim, op, last_dim_size);
  Tensor x = promote_fft(self, true, op);
  const int64_t mode = norm_mode(norm, true, op);
  x = resize_fft_input(x, IntArrayRef(desc.dim), IntArrayRef(desc.shape));
  const std::vector<int64_t> dims = to_vec(desc.dim);
  const std::vector<int64_t> head(dims.begin(), dims.end() - 1);
  // conj(F x) = F^H conj(x): forward transforms over the leading dims, then the Hermitian
  // inverse of the conjugate over the last.
  Tensor tmp = head.empty() ? x : _fft_c2c(x, head, mode, true);
  return _fft_c2r(tmp.conj(), {dims.back()}, mode, last_dim_size);
}

Tensor ihfftn_impl(const char* op, const Tensor& self, OptionalIntArrayRef s,
                   OptionalIntArrayRef dim, Norm norm) {
  EMBER_CHECK(!self.is_complex(), "[", op, "] ", op, " expects a real input tensor, but got ",
              toString(self.dtype()));
  ShapeAndDims desc = canonicalize(self, s, dim, op);
  EMBER_CHECK(!desc.shape.empty(), "[", op, "] ", op, " must transform at least one axis");
  Tensor x = promote_fft(self, false, op);
  const int64_t mode = norm_mode(norm, false, op);
  x = resize_fft_input(x, IntArrayRef(desc.dim), IntArrayRef(desc.shape));
  const std::vector<int64_t> dims = to_vec(desc.dim);
  Tensor tmp = _fft_r2c(x, {dims.back()}, mode, true);
  if (dims.size() == 1) return tmp.conj();
  const std::vector<int64_t> head(dims.begin(), dims.end() - 1);
  return _fft_c2c(tmp.conj_physical(), head, mode, false);
}

}  // namespace

// ---- one-dimensional ----

Tensor fft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  EMBER_OP_CAST(fft_fft, fft, self, n, dim, norm);
  return c2c_1d("fft.fft", self, n, dim, norm, true);
}

Tensor ifft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  EMBER_OP_CAST(fft_ifft, ifft, self, n, dim, norm);
  return c2c_1d("fft.ifft", self, n, dim, norm, false);
}

Tensor rfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  EMBER_OP_CAST(fft_rfft, rfft, self, n, dim, norm);
  return r2c_1d("fft.rfft", "rfft", self, n, dim, norm, true);
}

Tensor irfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  EMBER_OP_CAST(fft_irfft, irfft, self, n, dim, norm);
  return c2r_1d("fft.irfft", self, n, dim, norm, false);
}

Tensor hfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  EMBER_OP_CAST(fft_hfft, hfft, self, n, dim, norm);
  return c2r_1d("fft.hfft", self, n, dim, norm, true);
}

Tensor ihfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, Norm norm) {
  EMBER_OP_CAST(fft_ihfft, ihfft, self, n, dim, norm);
  return r2c_1d("fft.ihfft", "ihfft", self, n, dim, norm, false);
}

// ---- two-dimensional ----

Tensor fft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_fft2, fft2, self, s, dim, norm);
  return c2c_nd("fft.fft2", self, s, dim, norm, true);
}

Tensor ifft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_ifft2, ifft2, self, s, dim, norm);
  return c2c_nd("fft.ifft2", self, s, dim, norm, false);
}

Tensor rfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_rfft2, rfft2, self, s, dim, norm);
  return rfftn_impl("rfft2", self, s, dim, norm);
}

Tensor irfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_irfft2, irfft2, self, s, dim, norm);
  return irfftn_impl("irfft2", self, s, dim, norm);
}

Tensor hfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  EMBER_OP(fft_hfft2, self, s, dim, norm);
  return hfftn_impl("hfft2", self, s, dim, norm);
}

Tensor ihfft2(const Tensor& self, OptionalIntArrayRef s, IntArrayRef dim, Norm norm) {
  EMBER_OP(fft_ihfft2, self, s, dim, norm);
  return ihfftn_impl("ihfft2", self, s, dim, norm);
}

// ---- n-dimensional ----

Tensor fftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_fftn, fftn, self, s, dim, norm);
  return c2c_nd("fft.fftn", self, s, dim, norm, true);
}

Tensor ifftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_ifftn, ifftn, self, s, dim, norm);
  return c2c_nd("fft.ifftn", self, s, dim, norm, false);
}

Tensor rfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_rfftn, rfftn, self, s, dim, norm);
  return rfftn_impl("rfftn", self, s, dim, norm);
}

Tensor irfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  EMBER_OP_CAST(fft_irfftn, irfftn, self, s, dim, norm);
  return irfftn_impl("irfftn", self, s, dim, norm);
}

Tensor hfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  EMBER_OP(fft_hfftn, self, s, dim, norm);
  return hfftn_impl("hfftn", self, s, dim, norm);
}

Tensor ihfftn(const Tensor& self, OptionalIntArrayRef s, OptionalIntArrayRef dim, Norm norm) {
  EMBER_OP(fft_ihfftn, self, s, dim, norm);
  return ihfftn_impl("ihfftn", self, s, dim, norm);
}

// ---- frequencies and shifts ----

namespace {

Tensor freq_options_check(int64_t n, const TensorOptions& options, const char* op) {
  const ScalarType dt = options.dtype();
  EMBER_CHECK(isFloatingType(dt), "[", op, "] ", op, " requires a floating point dtype, got ",
              toString(dt));
  EMBER_CHECK(n >= 0, "[", op, "] Trying to create tensor with negative dimension ", n, ": [", n,
              "]");
  return Tensor();
}

TensorOptions without_grad(const TensorOptions& o) { return o.requires_grad(false); }

}  // namespace

Tensor fftfreq(int64_t n, double d, const TensorOptions& options) {
  EMBER_OP(fft_fftfreq, n, d, options);
  freq_options_check(n, options, "fftfreq");
  const TensorOptions o = without_grad(options);
  // [0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (d * n)
  Tensor r = cat({arange(Scalar(int64_t(0)), Scalar((n + 1) / 2), o),
                  arange(Scalar(-(n / 2)), Scalar(int64_t(0)), o)});
  r = r.mul(Scalar(1.0 / (double(n) * d)));
  if (options.requires_grad()) r.requires_grad_(true);
  return r;
}

Tensor rfftfreq(int64_t n, double d, const TensorOptions& options) {
  EMBER_OP(fft_rfftfreq, n, d, options);
  freq_options_check(n, options, "rfftfreq");
  Tensor r = arange(Scalar(n / 2 + 1), without_grad(options)).mul(Scalar(1.0 / (double(n) * d)));
  if (options.requires_grad()) r.requires_grad_(true);
  return r;
}

namespace {

Tensor shift_impl(const Tensor& self, OptionalIntArrayRef dim, bool inverse, const char* op) {
  std::vector<int64_t> dims;
  if (dim.has_value()) {
    for (int64_t d : *dim) dims.push_back(wrap_dim(d, self.dim(), op));
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  }
  EMBER_CHECK(!dims.empty(), "[", op, "] `shifts` required: there is no dim to shift (a 0-dim ",
              "tensor or an empty dim list)");
  EMBER_CHECK(self.dim() > 0, "[", op, "] `shifts` required: a 0-dim tensor has no dim to shift");
  std::vector<int64_t> shifts;
  for (int64_t d : dims) shifts.push_back(inverse ? (self.size(d) + 1) / 2 : self.size(d) / 2);
  return roll(self, shifts, dims);
}

}  // namespace

Tensor fftshift(const Tensor& self, OptionalIntArrayRef dim) {
  EMBER_OP(fft_fftshift, self, dim);
  return shift_impl(self, dim, false, "fft.fftshift");
}

Tensor ifftshift(const Tensor& self, OptionalIntArrayRef dim) {
  EMBER_OP(fft_ifftshift, self, dim);
  return shift_impl(self, dim, true, "fft.ifftshift");
}

}  // namespace ember::fft
