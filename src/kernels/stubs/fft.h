#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The FFT kernels behind _fft_c2c / _fft_r2c / _fft_c2r (src/ops/fft). Each transforms `self`
// over `dims` (distinct, wrapped, ascending; at least one), unnormalised, then multiplies every
// output element by `scale`. `self` may have any strides; `out` is allocated by the op,
// contiguous, and never overlaps `self`. Batches (the dims not transformed) are threaded.
// dtypes: complex64/complex128 (c2c, c2r input), float32/float64 (r2c input, c2r output).

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// Complex-to-complex: `out` has `self`'s shape and dtype. forward: exponent sign -1.
EMBER_DECLARE_KERNEL(fft_c2c_stub, void(const Tensor& self, Tensor& out, IntArrayRef dims,
                                        double scale, bool forward));
/// Real-to-complex, forward: `out` has `self`'s shape except the last of `dims`, which is
/// n / 2 + 1 (the onesided half; the op mirrors it for onesided = false).
EMBER_DECLARE_KERNEL(fft_r2c_stub,
                     void(const Tensor& self, Tensor& out, IntArrayRef dims, double scale));
/// Complex-to-real, backward (exponent sign +1): `out` has `self`'s shape except the last of
/// `dims`, which is the signal length n (`self` holds n / 2 + 1 there; Hermitian symmetry
/// supplies the rest; the imaginary parts of the zero and Nyquist bins are ignored).
EMBER_DECLARE_KERNEL(fft_c2r_stub,
                     void(const Tensor& self, Tensor& out, IntArrayRef dims, double scale));

}  // namespace ember
