#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Plans of ember's FFT engine (fft.cpp) and the per-capability butterfly kernels that run them
// (fft_kernels.cpp, compiled once per CPU capability). Complex data are interleaved (re, im)
// pairs of T; a "column block" is [rows][bw] complex numbers, row-major: bw independent
// transforms side by side, so every butterfly works on contiguous vectors (Note [FFT layout]).

#include <cstdint>
#include <memory>
#include <vector>

namespace ember::cpu {

/// One Stockham pass of radix `radix`: transforms of the current length `radix * m`, each
/// `run` complex numbers apart (run = l * bw, l the product of the earlier radices).
struct FftStage {
  int radix = 0;
  int64_t m = 0;     // butterflies per transform in this pass
  int64_t l = 0;     // product of the radices of the earlier passes
  size_t tw = 0;     // offset (in T) of this pass's twiddles [m][radix - 1] in ColPlan::tw
  size_t roots = 0;  // offset (in T) of W_radix^k, k < radix, in ColPlan::tw (generic radix)
};

/// The mixed-radix Stockham schedule of one length and direction.
template <class T>
struct ColPlan {
  int64_t n = 1;
  bool forward = true;
  std::vector<FftStage> stages;
  std::vector<T> tw;  // interleaved twiddles of every pass
};

/// The kernels of one real type (float for complex64, double for complex128).
template <class T>
struct FftKernelsT {
  /// Complex numbers per vector of this capability: column blocks are a multiple of it wide.
  int lanes = 1;
  /// Runs `p` over the column block x [n][bw] (bw a multiple of `lanes`), using y [n][bw] as the
  /// ping-pong buffer; returns x or y, whichever holds the result.
  T* (*col)(const ColPlan<T>& p, T* x, T* y, int64_t bw) = nullptr;
  /// x[i][j] *= w[i] (complex) for a column block [n][bw].
  void (*mul_rows)(T* x, const T* w, int64_t n, int64_t bw) = nullptr;
  /// Column block x [rows][bw] from lines j < jn: x[i][j] = src[j][i * stride] (a complex
  /// number at every `stride` T, conjugated when `conj`); columns jn.. are zeroed.
  void (*gather)(T* x, int64_t bw, const T* const* src, int64_t jn, int64_t rows, int64_t stride,
                 bool conj) = nullptr;
  /// The inverse of gather: dst[j][i * stride] = r[i][j] * scale for j < jn.
  void (*scatter)(const T* r, int64_t bw, T* const* dst, int64_t jn, int64_t rows, int64_t stride,
                  T scale) = nullptr;
  /// Real forward transform of even length 2h from Z = FFT_h(x[2j] + i x[2j+1]) (contiguous):
  /// out[k] = (X[k]) * scale for k <= h, w[k] = W_2h^k (forward).
  void (*r2c_post)(const T* z, T* out, int64_t h, const T* w, T scale) = nullptr;
  /// Its inverse's first step: from X[k], k <= h (contiguous), z[k] for k < h such that the
  /// backward FFT_h of z holds (x[2j], x[2j+1]) * 2h; w[k] = W_2h^-k.
  void (*c2r_pre)(const T* x, T* z, int64_t h, const T* w) = nullptr;
  /// The four-step's first store: dst[(c0 + j) n1 + k] = r[k][j] * ta[k] * tb[k][j] for
  /// k < n1, j < jn (r and tb are [n1][bw]).
  void (*twiddle_transpose)(const T* r, int64_t bw, const T* ta, const T* tb, T* dst, int64_t n1,
                            int64_t c0, int64_t jn) = nullptr;
};

struct FftKernels {
  FftKernelsT<float> f;
  FftKernelsT<double> d;
};

namespace cap_default {
void register_fft_kernels(FftKernels& k);
}
namespace cap_avx2 {
void register_fft_kernels(FftKernels& k);
}
namespace cap_avx512 {
void register_fft_kernels(FftKernels& k);
}

}  // namespace ember::cpu
