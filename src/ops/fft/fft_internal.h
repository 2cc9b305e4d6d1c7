#pragma once
// The FFT primitives under torch.fft, stft and istft (fft_primitives.cpp). Their arguments are
// ATen's: `normalization` is 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n), where n is the number
// of points of the transformed signal (the output's for _fft_c2r).

#include <cstdint>

#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// How an FFT result is scaled (ATen's fft_norm_mode).
enum class FftNorm : int64_t { None = 0, ByRootN = 1, ByN = 2 };

/// Complex-to-complex transform of a complex tensor over `dim` (any order; distinct).
Tensor _fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward);
/// Real-to-complex forward transform of a float32/float64 tensor over `dim`; with `onesided`
/// the last of `dim` keeps n / 2 + 1 bins.
Tensor _fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided);
/// Complex-to-real backward transform over `dim`: the last of `dim` holds last_dim_size / 2 + 1
/// Hermitian bins and becomes last_dim_size real points.
Tensor _fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size);

}  // namespace ember
