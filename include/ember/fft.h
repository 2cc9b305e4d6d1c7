#pragma once
/// torch.fft as libtorch's torch::fft (NumPy's numpy.fft semantics), stft/istft and the window
/// functions. `norm` is "backward" (default), "ortho" or "forward".

#include <cstdint>
#include <optional>
#include <string_view>

#include "ember/tensor.h"
#include "ember/tensor_options.h"

namespace ember::fft {

using Norm = std::optional<std::string_view>;

Tensor fft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           Norm norm = std::nullopt);
Tensor ifft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = std::nullopt);
Tensor rfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = std::nullopt);
Tensor irfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             Norm norm = std::nullopt);
Tensor hfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = std::nullopt);
Tensor ihfft(const Tensor& self, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             Norm norm = std::nullopt);

Tensor fft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
            Norm norm = std::nullopt);
Tensor ifft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             Norm norm = std::nullopt);
Tensor rfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             Norm norm = std::nullopt);
Tensor irfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
              IntArrayRef dim = {-2, -1}, Norm norm = std::nullopt);
Tensor hfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt, IntArrayRef dim = {-2, -1},
             Norm norm = std::nullopt);
Tensor ihfft2(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
              IntArrayRef dim = {-2, -1}, Norm norm = std::nullopt);

Tensor fftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
            OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
Tensor ifftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
             OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
Tensor rfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
             OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
Tensor irfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
              OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
Tensor hfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
             OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);
Tensor ihfftn(const Tensor& self, OptionalIntArrayRef s = std::nullopt,
              OptionalIntArrayRef dim = std::nullopt, Norm norm = std::nullopt);

/// Sample frequencies of an n-point transform with sample spacing d.
Tensor fftfreq(int64_t n, double d = 1.0, const TensorOptions& options = {});
Tensor rfftfreq(int64_t n, double d = 1.0, const TensorOptions& options = {});
/// Moves the zero-frequency term to the centre of `dim` (all dims when none).
Tensor fftshift(const Tensor& self, OptionalIntArrayRef dim = std::nullopt);
Tensor ifftshift(const Tensor& self, OptionalIntArrayRef dim = std::nullopt);

}  // namespace ember::fft

namespace ember {

/// Short-time Fourier transform, as torch.stft.
Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
            std::optional<int64_t> win_length = std::nullopt,
            const std::optional<Tensor>& window = std::nullopt, bool center = true,
            std::string_view pad_mode = "reflect", bool normalized = false,
            std::optional<bool> onesided = std::nullopt,
            std::optional<bool> return_complex = std::nullopt);
/// Inverse short-time Fourier transform, as torch.istft.
Tensor istft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
             std::optional<int64_t> win_length = std::nullopt,
             const std::optional<Tensor>& window = std::nullopt, bool center = true,
             bool normalized = false, std::optional<bool> onesided = std::nullopt,
             std::optional<int64_t> length = std::nullopt, bool return_complex = false);

/// The window functions (periodic by default), libtorch's overloads.
Tensor hann_window(int64_t window_length, const TensorOptions& options = {});
Tensor hann_window(int64_t window_length, bool periodic, const TensorOptions& options = {});
Tensor hamming_window(int64_t window_length, const TensorOptions& options = {});
Tensor hamming_window(int64_t window_length, bool periodic, const TensorOptions& options = {});
Tensor hamming_window(int64_t window_length, bool periodic, double alpha,
                      const TensorOptions& options = {});
Tensor blackman_window(int64_t window_length, const TensorOptions& options = {});
Tensor bartlett_window(int64_t window_length, const TensorOptions& options = {});
Tensor kaiser_window(int64_t window_length, const TensorOptions& options = {});
Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta,
                      const TensorOptions& options = {});
Tensor blackman_window(int64_t window_length, bool periodic, const TensorOptions& options = {});
Tensor bartlett_window(int64_t window_length, bool periodic, const TensorOptions& options = {});
Tensor kaiser_window(int64_t window_length, bool periodic, double beta = 12.0,
                     const TensorOptions& options = {});

}  // namespace ember
