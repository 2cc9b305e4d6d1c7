// stft, istft and the window functions, as torch 1.13 defines them: stft frames the (centre-
// padded) signal with unfold, windows it and runs one r2c/c2c primitive; istft runs the inverse
// primitive and overlap-adds the frames with index_add, dividing by the summed squared window.
// The windows are computed with ember ops in their own dtype, in torch's order of operations.
#include <cmath>
#include <string>
#include <vector>

#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/fft.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ops/call_path.h"
#include "ops/fft/fft_internal.h"

namespace ember {

namespace {

std::string opt_str(std::optional<int64_t> v) { return v ? std::to_string(*v) : "None"; }

/// The pair (real, imag) along a new last dim: torch's view_as_real, as a copy.
Tensor as_real_pairs(const Tensor& z) { return stack({z.real(), z.imag()}, -1); }

/// A complex tensor from (real, imag) pairs along the last dim (size 2).
Tensor from_real_pairs(const Tensor& x) {
  const ScalarType ct = toComplexType(x.dtype());
  return x.select(-1, 0).to(ct).add(x.select(-1, 1).to(ct).mul(Scalar(complex<double>(0, 1))));
}

/// `w` (length win) zero-padded on both sides to n_fft, centred as torch centres it.
Tensor center_window(const Tensor& w, int64_t n_fft) {
  const int64_t win = w.size(0);
  if (win == n_fft) return w;
  const int64_t left = (n_fft - win) / 2;
  return constant_pad_nd(w, {left, n_fft - win - left});
}

void check_signal_dtype(const Tensor& t, const char* op) {
  const ScalarType dt = t.dtype();
  EMBER_CHECK(isFloatingType(dt) || isComplexType(dt), "[", op,
              "] expected a tensor of floating point or complex values, got ", toString(dt));
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kComplexFloat || dt == kComplexDouble, "[", op,
              "] Unsupported dtype ", toString(dt));
}

}  // namespace

// ---- stft ----

Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length,
            std::optional<int64_t> win_length, const std::optional<Tensor>& window, bool center,
            std::string_view pad_mode, bool normalized, std::optional<bool> onesided,
            std::optional<bool> return_complex) {
  EMBER_OP_CAST(stft, stft, self, n_fft, hop_length, win_length, window, center, pad_mode,
                normalized, onesided, return_complex);
  const char* op = "stft";
  const Tensor* win_t = window && window->defined() ? &*window : nullptr;
  const bool rc = return_complex.value_or(self.is_complex() || (win_t && win_t->is_complex()));
  const int64_t hop = hop_length.value_or(n_fft >> 2);
  const int64_t win = win_length.value_or(n_fft);
  const std::string repr =
      detail::str_cat("stft(", toString(self.dtype()), shape_str(self.sizes()), ", n_fft=", n_fft,
                      ", hop_length=", hop, ", win_length=", win, ", normalized=", normalized,
                      ", onesided=", onesided ? (*onesided ? "True" : "False") : "None",
                      ", return_complex=", rc, ")");
  check_signal_dtype(self, op);
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "[", op, "] ", repr,
              ": expected a 1D or 2D tensor, got ", self.dim(), "D");
  Tensor input = self;
  if (center) {
    EMBER_CHECK_T(NotImplementedError,
                  pad_mode == "constant" || pad_mode == "reflect" || pad_mode == "replicate" ||
                      pad_mode == "circular",
                  "[", op, "] Unrecognised padding mode ", pad_mode);
    // Pad as F.pad does on a (1, batch, length) view.
    const int64_t p = n_fft / 2;
    std::vector<int64_t> shape3(size_t(3 - self.dim()), 1);
    for (int64_t s : self.sizes()) shape3.push_back(s);
    const int64_t len = self.size(-1);
    EMBER_CHECK(pad_mode != "reflect" || (p < len && len > 0), "[", op,
                "] Padding size should be less than the corresponding input dimension, but got: "
                "padding (",
                p, ", ", p, ") at dimension 2 of input ", shape_str(shape3));
    input = pad(input.reshape(shape3), {p, p}, pad_mode);
    input = self.dim() == 1 ? input.reshape({input.size(-1)}) : input.squeeze(0);
  }
  if (input.dim() == 1) input = input.unsqueeze(0);
  const int64_t len = input.size(1);
  EMBER_CHECK(n_fft > 0 && n_fft <= len, "[", op, "] ", repr, ": expected 0 < n_fft < ", len,
              ", but got n_fft=", n_fft);
  EMBER_CHECK(hop > 0, "[", op, "] ", repr, ": expected hop_length > 0, but got hop_length=", hop);
  EMBER_CHECK(win > 0 && win <= n_fft, "[", op, "] ", repr,
              ": expected 0 < win_length <= n_fft, but got win_length=", win);
  if (win_t) {
    EMBER_CHECK(win_t->dim() == 1 && win_t->size(0) == win, "[", op, "] ", repr,
                ": expected a 1D window tensor of size equal to win_length=", win,
                ", but got window with size ", shape_str(win_t->sizes()));
  }
  Tensor w;
  if (win_t) {
    w = center_window(*win_t, n_fft);
  } else if (win < n_fft) {
    w = center_window(ones({win}, TensorOptions(self.dtype()).device(self.device())), n_fft);
  }
  // (batch, n_frames, n_fft) views of the signal, windowed.
  Tensor frames = input.unfold(1, n_fft, hop);
  if (w.defined()) frames = frames.mul(w);
  const bool complex_fft = frames.is_complex();
  const bool side = onesided.value_or(!complex_fft);
  const int64_t norm = normalized ? int64_t(FftNorm::ByRootN) : int64_t(FftNorm::None);
  Tensor out;
  if (complex_fft) {
    EMBER_CHECK(!side, "[", op, "] Cannot have onesided output if window or input is complex");
    out = _fft_c2c(frames, {2}, norm, true);
  } else {
    out = _fft_r2c(frames, {2}, norm, side);
  }
  out = out.transpose(1, 2);
  if (self.dim() == 1) out = out.squeeze(0);
  return rc ? out : as_real_pairs(out);
}

// ---- istft ----

Tensor istft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length,
             std::optional<int64_t> win_length, const std::optional<Tensor>& window, bool center,
             bool normalized, std::optional<bool> onesided, std::optional<int64_t> length,
             bool return_complex) {
  EMBER_OP(istft, self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
           return_complex);
  const char* op = "istft";
  const Tensor* win_t = window && window->defined() ? &*window : nullptr;
  const int64_t hop = hop_length.value_or(n_fft >> 2);
  const int64_t win = win_length.value_or(n_fft);
  const std::string repr = detail::str_cat(
      "istft(", toString(self.dtype()), shape_str(self.sizes()), ", n_fft=", n_fft,
      ", hop_length=", hop, ", win_length=", win, ", center=", center, ", normalized=", normalized,
      ", onesided=", onesided ? (*onesided ? "True" : "False") : "None",
      ", length=", opt_str(length), ", return_complex=", return_complex, ")");
  check_signal_dtype(self, op);
  // The dims as torch counts them: those of the (real, imag) view of a complex input.
  const int64_t input_dim = self.is_complex() ? self.dim() + 1 : self.dim();
  EMBER_CHECK_INDEX(input_dim >= 3, "[", op, "] ", repr,
                    ": Dimension out of range: expected the spectrum with at least 2 dims "
                    "(complex) or 3 dims (real pairs), got ",
                    self.dim());
  EMBER_CHECK(self.numel() > 0, "[", op, "] ", repr, ": input tensor cannot be empty.");
  EMBER_CHECK(input_dim == 3 || input_dim == 4, "[", op, "] ", repr,
              ": expected a tensor with 3 or 4 dimensions of real, or 2 or 3 dimensions of "
              "complex, but got ",
              input_dim);
  if (!self.is_complex()) {
    EMBER_CHECK(self.size(-1) == 2, "[", op, "] ", repr,
                ": expected the last dimension to be 2 (corresponding to real and imaginary "
                "parts), but got ",
                self.size(-1));
  }
  Tensor spec = self.is_complex() ? self : from_real_pairs(self);
  const int64_t n_frames = spec.size(-1);
  const int64_t fft_size = spec.size(-2);
  const bool side = onesided.value_or(fft_size != n_fft);
  if (side) {
    EMBER_CHECK(n_fft / 2 + 1 == fft_size, "[", op, "] ", repr,
                ": expected the frequency dimension (3rd to the last) of the input tensor to "
                "match n_fft / 2 + 1 when onesided=True, but got ",
                fft_size);
  } else {
    EMBER_CHECK(n_fft == fft_size, "[", op, "] ", repr,
                ": expected the frequency dimension (3rd to the last) of the input tensor to "
                "match n_fft when onesided=False, but got ",
                fft_size);
  }
  EMBER_CHECK(0 < hop && hop <= win, "[", op, "] ", repr,
              ": expected 0 < hop_length <= win_length");
  EMBER_CHECK(0 < win && win <= n_fft, "[", op, "] ", repr, ": expected 0 < win_length <= n_fft");
  if (win_t) {
    EMBER_CHECK(win_t->dim() == 1 && win_t->size(0) == win, "[", op, "] ", repr,
                ": expected a 1D window tensor of size equal to win_length=", win,
                ", but got window with size ", shape_str(win_t->sizes()));
  }
  const ScalarType real_t = toRealValueType(spec.dtype());
  Tensor w = win_t ? *win_t : ones({win}, TensorOptions(real_t).device(self.device()));
  w = center_window(w, n_fft);

  if (input_dim == 3) spec = spec.unsqueeze(0);
  spec = spec.transpose(1, 2);  // (channel, n_frames, fft_size)
  const int64_t norm = normalized ? int64_t(FftNorm::ByRootN) : int64_t(FftNorm::ByN);
  Tensor frames;
  if (return_complex) {
    EMBER_CHECK(!side, "[", op, "] Cannot have onesided output if window or input is complex");
    frames = _fft_c2c(spec, {2}, norm, false);
  } else {
    EMBER_CHECK(!win_t || !win_t->is_complex(), "[", op,
                "] Complex windows are incompatible with return_complex=False");
    if (!side) spec = spec.narrow(-1, 0, n_fft / 2 + 1);
    frames = _fft_c2r(spec, {2}, norm, n_fft);
  }
  frames = frames.mul(w.view({1, 1, n_fft}));  // (channel, n_frames, n_fft)

  // Overlap-add: frame f sample k lands at f * hop + k.
  const int64_t channels = frames.size(0);
  const int64_t total = n_fft + hop * (n_frames - 1);
  const TensorOptions lo = TensorOptions(kLong).device(self.device());
  Tensor index = arange(Scalar(n_frames), lo)
                     .mul(Scalar(hop))
                     .unsqueeze(1)
                     .add(arange(Scalar(n_fft), lo).unsqueeze(0))
                     .reshape({n_frames * n_fft});
  Tensor y = zeros({channels, total}, frames.options())
                 .index_add(1, index, frames.reshape({channels, n_frames * n_fft}));
  Tensor wsq = w.pow(Scalar(int64_t(2))).expand({n_frames, n_fft}).reshape({1, n_frames * n_fft});
  Tensor envelope = zeros({1, total}, wsq.options()).index_add(1, index, wsq);

  const int64_t start = center ? n_fft / 2 : 0;
  const int64_t end = length ? start + *length : (center ? -(n_fft / 2) : total);
  y = y.slice(1, start, end);
  envelope = envelope.slice(1, start, end);
  if (envelope.numel() > 0) {
    const double lowest = envelope.abs().min().item<double>();
    EMBER_CHECK(!(lowest < 1e-11), "[", op, "] ", repr, " window overlap add min: ", lowest,
                " (the window's squares must not add up to zero at any output sample; check "
                "the window and hop_length)");
  }
  y = y.div(envelope);
  if (input_dim == 3) y = y.squeeze(0);
  if (end > total) y = constant_pad_nd(y, {0, end - total});
  return y;
}

Tensor Tensor::stft(int64_t n_fft, std::optional<int64_t> hop_length,
                    std::optional<int64_t> win_length, const std::optional<Tensor>& window,
                    bool center, std::string_view pad_mode, bool normalized,
                    std::optional<bool> onesided, std::optional<bool> return_complex) const {
  return ember::stft(*this, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                     onesided, return_complex);
}

Tensor Tensor::istft(int64_t n_fft, std::optional<int64_t> hop_length,
                     std::optional<int64_t> win_length, const std::optional<Tensor>& window,
                     bool center, bool normalized, std::optional<bool> onesided,
                     std::optional<int64_t> length, bool return_complex) const {
  return ember::istft(*this, n_fft, hop_length, win_length, window, center, normalized, onesided,
                      length, return_complex);
}

// ---- windows ----

namespace {

/// torch's window_function_checks, plus the dtypes torch 1.13 has no CPU kernel for.
void check_window(const char* op, const TensorOptions& options, int64_t n, bool half_ok) {
  const ScalarType dt = options.dtype();
  EMBER_CHECK(isFloatingType(dt), "[", op, "] ", op,
              " expects floating point dtypes, got: ", toString(dt));
  EMBER_CHECK(half_ok || dt != kHalf, "[", op, "] not implemented for 'Half'");
  EMBER_CHECK(n >= 0, "[", op, "] ", op,
              " requires non-negative window_length, got window_length=", n);
}

/// The window of length 0 or 1 (no formula needed), else undefined.
Tensor trivial_window(int64_t n, const TensorOptions& o) {
  if (n == 0) return empty({0}, o);
  if (n == 1) return ones({1}, o);
  return Tensor();
}

Tensor finish_window(Tensor w, bool periodic, int64_t n, const TensorOptions& options) {
  if (periodic) w = w.narrow(0, 0, n - 1);
  if (options.requires_grad()) w.requires_grad_(true);
  return w;
}

Tensor hamming_impl(const char* op, int64_t n, bool periodic, double alpha, double beta,
                    const TensorOptions& options) {
  check_window(op, options, n, false);
  const TensorOptions o = options.requires_grad(false);
  if (Tensor t = trivial_window(n, o); t.defined()) return finish_window(t, false, n, options);
  if (periodic) n += 1;
  Tensor w = arange(Scalar(n), o).mul(Scalar(2.0 * M_PI / double(n - 1))).cos().mul(Scalar(-beta));
  return finish_window(w.add(Scalar(alpha)), periodic, n, options);
}

}  // namespace

Tensor hann_window(int64_t window_length, const TensorOptions& options) {
  return hann_window(window_length, true, options);
}

Tensor hann_window(int64_t window_length, bool periodic, const TensorOptions& options) {
  EMBER_OP(hann_window, window_length, periodic, options);
  return hamming_impl("hann_window", window_length, periodic, 0.5, 0.5, options);
}

Tensor hamming_window(int64_t window_length, const TensorOptions& options) {
  return hamming_window(window_length, true, 0.54, 0.46, options);
}

Tensor hamming_window(int64_t window_length, bool periodic, const TensorOptions& options) {
  return hamming_window(window_length, periodic, 0.54, 0.46, options);
}

Tensor hamming_window(int64_t window_length, bool periodic, double alpha,
                      const TensorOptions& options) {
  return hamming_window(window_length, periodic, alpha, 0.46, options);
}

Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta,
                      const TensorOptions& options) {
  EMBER_OP(hamming_window, window_length, periodic, alpha, beta, options);
  return hamming_impl("hamming_window", window_length, periodic, alpha, beta, options);
}

Tensor blackman_window(int64_t window_length, const TensorOptions& options) {
  return blackman_window(window_length, true, options);
}

Tensor blackman_window(int64_t window_length, bool periodic, const TensorOptions& options) {
  EMBER_OP(blackman_window, window_length, periodic, options);
  const char* op = "blackman_window";
  int64_t n = window_length;
  check_window(op, options, n, false);
  const TensorOptions o = options.requires_grad(false);
  if (Tensor t = trivial_window(n, o); t.defined()) return finish_window(t, false, n, options);
  if (periodic) n += 1;
  Tensor x = arange(Scalar(n), o).mul(Scalar(M_PI / double(n - 1)));
  Tensor w =
      x.mul(Scalar(4.0)).cos().mul(Scalar(0.08)).sub(x.mul(Scalar(2.0)).cos().mul(Scalar(0.5)));
  return finish_window(w.add(Scalar(0.42)), periodic, n, options);
}

Tensor bartlett_window(int64_t window_length, const TensorOptions& options) {
  return bartlett_window(window_length, true, options);
}

Tensor bartlett_window(int64_t window_length, bool periodic, const TensorOptions& options) {
  EMBER_OP(bartlett_window, window_length, periodic, options);
  const char* op = "bartlett_window";
  int64_t n = window_length;
  check_window(op, options, n, true);
  const TensorOptions o = options.requires_grad(false);
  if (Tensor t = trivial_window(n, o); t.defined()) return finish_window(t, false, n, options);
  if (periodic) n += 1;
  Tensor x = arange(Scalar(n), o).mul(Scalar(2.0 / double(n - 1)));
  const int64_t first_half = ((n - 1) >> 1) + 1;
  Tensor w = cat({x.narrow(0, 0, first_half),
                  x.narrow(0, first_half, n - first_half).mul(Scalar(-1.0)).add(Scalar(2.0))});
  return finish_window(w, periodic, n, options);
}

Tensor kaiser_window(int64_t window_length, const TensorOptions& options) {
  return kaiser_window(window_length, true, 12.0, options);
}

Tensor kaiser_window(int64_t window_length, bool periodic, double beta,
                     const TensorOptions& options) {
  EMBER_OP(kaiser_window, window_length, periodic, beta, options);
  const char* op = "kaiser_window";
  int64_t n = window_length;
  check_window(op, options, n, false);
  const TensorOptions o = options.requires_grad(false);
  if (Tensor t = trivial_window(n, o); t.defined()) return finish_window(t, false, n, options);
  if (periodic) n += 1;
  // I0(beta * sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (n - 1) / 2.
  const double a = double(n - 1) / 2.0;
  Tensor r = arange(Scalar(n), o).sub(Scalar(a)).div(Scalar(a));
  Tensor arg = r.mul(r).neg().add(Scalar(1.0)).clamp_min(Scalar(0.0)).sqrt().mul(Scalar(beta));
  Tensor w = arg.i0().div(scalar_tensor(Scalar(beta), o).i0());
  return finish_window(w, periodic, n, options);
}

}  // namespace ember
