// The three FFT primitives (_fft_c2c, _fft_r2c, _fft_c2r): every torch.fft function, stft and
// istft is a composite of these. Each validates, allocates a contiguous output and runs the
// kernel stub (src/kernels/stubs/fft.h), which wants distinct ascending dims; the rules are
// written with the primitives themselves, so higher derivatives come for free.
#include "ops/fft/fft_internal.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "kernels/stubs/fft.h"
#include "ops/call_path.h"

namespace ember {

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

/// `dim` wrapped against `self`, in the given order; distinct.
std::vector<int64_t> wrap_fft_dims(const Tensor& self, IntArrayRef dim, const char* op) {
  std::vector<int64_t> dims;
  dims.reserve(dim.size());
  for (int64_t d : dim) {
    EMBER_CHECK_INDEX(self.dim() > 0, "[", op, "] dimension specified as ", d,
                      " but tensor has no dimensions");
    dims.push_back(wrap_dim(d, self.dim(), op));
  }
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  EMBER_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "[", op,
              "] FFT dims must be unique, got ", shape_str(dim));
  return dims;
}

std::vector<int64_t> sorted_copy(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// The factor applied to every output element for a transform of `n` points.
double fft_scale(int64_t normalization, int64_t n, const char* op) {
  switch (normalization) {
    case int64_t(FftNorm::None):
      return 1.0;
    case int64_t(FftNorm::ByRootN):
      return 1.0 / std::sqrt(double(n));
    case int64_t(FftNorm::ByN):
      return 1.0 / double(n);
    default:
      EMBER_THROW(ValueError, "[", op, "] normalization must be 0, 1 or 2, got ", normalization);
  }
}

int64_t signal_numel(IntArrayRef sizes, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[d];
  return n;
}

void check_complex_input(const Tensor& self, const char* op) {
  EMBER_CHECK(self.dtype() == kComplexFloat || self.dtype() == kComplexDouble, "[", op,
              "] expects a complex64 or complex128 input, got ", dtype_name(self.dtype()));
}

void check_real_input(const Tensor& self, const char* op) {
  EMBER_CHECK(self.dtype() == kFloat || self.dtype() == kDouble, "[", op,
              "] expects a float32 or float64 input, got ", dtype_name(self.dtype()));
}

/// `t` with `extra` zeros appended along `dim`.
Tensor pad_end(const Tensor& t, int64_t dim, int64_t extra) {
  if (extra == 0) return t;
  std::vector<int64_t> pad(size_t(2 * (t.dim() - dim)), 0);
  pad.back() = extra;
  return constant_pad_nd(t, pad);
}

/// The c2c transform over `dims` (sorted) into a new contiguous tensor; a copy when no dims.
Tensor run_c2c(const Tensor& x, const std::vector<int64_t>& dims, double scale, bool forward) {
  Tensor out = empty(x.sizes(), x.options());
  if (out.numel() == 0) return out;
  if (dims.empty()) return out.copy_(x);
  fft_c2c_stub(x.device().type(), x.resolve_conj(), out, IntArrayRef(dims), scale, forward);
  return out;
}

}  // namespace

// ---- _fft_c2c ----

Tensor _fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  EMBER_OP(_fft_c2c, self, dim, normalization, forward);
  const char* op = "_fft_c2c";
  check_complex_input(self, op);
  std::vector<int64_t> dims = wrap_fft_dims(self, dim, op);
  const double scale = fft_scale(normalization, signal_numel(self.sizes(), dims), op);
  OpRecorder rec("_fft_c2c", {self});
  Tensor out = run_c2c(self, sorted_copy(dims), scale, forward);
  if (rec) {
    rec.args(dims, normalization, forward);
    // y = s F x is linear with adjoint s F^H: the transform of the other sign.
    rec.record(
        out,
        [](VjpCtx& c) {
          return variable_list{
              _fft_c2c(c.grads[0], c.args().ints(0), c.args().i(1), !c.args().b(2))};
        },
        {},
        [](JvpCtx& c) {
          return variable_list{
              _fft_c2c(c.tangent_or_zeros(0), c.args().ints(0), c.args().i(1), c.args().b(2))};
        });
  }
  return out;
}

// ---- _fft_r2c ----

Tensor _fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  EMBER_OP(_fft_r2c, self, dim, normalization, onesided);
  const char* op = "_fft_r2c";
  check_real_input(self, op);
  std::vector<int64_t> dims = wrap_fft_dims(self, dim, op);
  EMBER_CHECK(!dims.empty(), "[", op, "] expects at least one dim to transform");
  const double scale = fft_scale(normalization, signal_numel(self.sizes(), dims), op);
  const int64_t last = dims.back();
  const int64_t n = self.size(last);
  OpRecorder rec("_fft_r2c", {self});
  const ScalarType ct = toComplexType(self.dtype());
  Tensor out;
  if (!onesided) {
    // The full spectrum: the complex transform of the promoted input.
    out = run_c2c(self.to(ct), sorted_copy(dims), scale, true);
  } else {
    DimVector half(self.sizes());
    half[last] = n / 2 + 1;
    out = empty(IntArrayRef(half), self.options().dtype(ct));
    if (out.numel() > 0) {
      std::vector<int64_t> sorted = sorted_copy(dims);
      if (sorted.back() == last) {
        fft_r2c_stub(self.device().type(), self, out, IntArrayRef(sorted), scale);
      } else {
        // The halved dim is not the highest: r2c along it, then c2c along the others.
        Tensor tmp = empty(IntArrayRef(half), out.options());
        const std::vector<int64_t> one{last};
        fft_r2c_stub(self.device().type(), self, tmp, IntArrayRef(one), scale);
        std::vector<int64_t> rest;
        for (int64_t d : sorted)
          if (d != last) rest.push_back(d);
        fft_c2c_stub(self.device().type(), tmp, out, IntArrayRef(rest), 1.0, true);
      }
    }
  }
  if (rec) {
    rec.args(dims, normalization, onesided, n);
    rec.record(
        out,
        [](VjpCtx& c) {
          // The adjoint of "transform, keep half": zero-fill the dropped bins, transform back,
          // keep the real part (the input is real).
          const std::vector<int64_t>& d = c.args().ints(0);
          Tensor g = c.grads[0];
          if (c.args().b(2)) g = pad_end(g, d.back(), c.args().i(3) - g.size(d.back()));
          return variable_list{_fft_c2c(g, d, c.args().i(1), false).real()};
        },
        {},
        [](JvpCtx& c) {
          return variable_list{
              _fft_r2c(c.tangent_or_zeros(0), c.args().ints(0), c.args().i(1), c.args().b(2))};
        });
  }
  return out;
}

// ---- _fft_c2r ----

Tensor _fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  EMBER_OP(_fft_c2r, self, dim, normalization, last_dim_size);
  const char* op = "_fft_c2r";
  check_complex_input(self, op);
  std::vector<int64_t> dims = wrap_fft_dims(self, dim, op);
  EMBER_CHECK(!dims.empty(), "[", op, "] expects at least one dim to transform");
  EMBER_CHECK(last_dim_size >= 1, "[", op, "] Invalid number of data points (", last_dim_size,
              ") specified");
  const int64_t last = dims.back();
  EMBER_CHECK(self.size(last) == last_dim_size / 2 + 1, "[", op, "] expected ",
              last_dim_size / 2 + 1, " Hermitian bins along dim ", last,
              " for last_dim_size=", last_dim_size, ", got ", self.size(last));
  DimVector full(self.sizes());
  full[last] = last_dim_size;
  const double scale = fft_scale(normalization, signal_numel(IntArrayRef(full), dims), op);
  OpRecorder rec("_fft_c2r", {self});
  const ScalarType rt = toRealValueType(self.dtype());
  Tensor out = empty(IntArrayRef(full), self.options().dtype(rt));
  if (out.numel() > 0) {
    std::vector<int64_t> sorted = sorted_copy(dims);
    Tensor x = self.resolve_conj();
    if (sorted.back() == last) {
      fft_c2r_stub(self.device().type(), x, out, IntArrayRef(sorted), scale);
    } else {
      // The Hermitian dim is not the highest: c2c back along the others, then c2r along it.
      std::vector<int64_t> rest;
      for (int64_t d : sorted)
        if (d != last) rest.push_back(d);
      Tensor tmp = run_c2c(x, rest, 1.0, false);
      const std::vector<int64_t> one{last};
      fft_c2r_stub(self.device().type(), tmp, out, IntArrayRef(one), scale);
    }
  }
  if (rec) {
    rec.args(dims, normalization, last_dim_size);
    rec.record(
        out,
        [](VjpCtx& c) {
          // The adjoint of c2r: r2c of the gradient, with the bins that stand for two
          // (conjugate) bins of the full spectrum counted twice.
          const std::vector<int64_t>& d = c.args().ints(0);
          const int64_t last = d.back();
          const Tensor& g = c.grads[0];
          Tensor gi = _fft_r2c(g, d, c.args().i(1), true);
          const int64_t m = gi.size(last);
          const int64_t doubled = g.size(last) - m;
          if (doubled > 0) {
            Tensor w = ones({m}, TensorOptions(g.dtype()).device(g.device()));
            w.narrow(0, 1, doubled).fill_(2);
            std::vector<int64_t> shape(size_t(gi.dim()), 1);
            shape[size_t(last)] = m;
            gi = gi.mul(w.view(shape));
          }
          return variable_list{gi};
        },
        {},
        [](JvpCtx& c) {
          return variable_list{
              _fft_c2r(c.tangent_or_zeros(0), c.args().ints(0), c.args().i(1), c.args().i(2))};
        });
  }
  return out;
}

}  // namespace ember
