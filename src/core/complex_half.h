#pragma once
// The element type of complex32 (torch.chalf, ScalarType::ComplexHalf): two IEEE binary16
// values, real part first (4 bytes, 4-byte aligned, as c10::complex<c10::Half>).
//
// Note [complex32]
// complex32 is a storage format, as in PyTorch 1.13 on CPU: tensors of it can be created,
// filled, copied, converted to and from every dtype, viewed (view_as_real gives float16) and
// printed. The few elementwise ops PyTorch 1.13 runs on it (add, sub, mul, neg, abs, sgn,
// conj_physical, eq, ne, isclose, isnan, isinf, isfinite, isreal, where) compute in complex64
// and round back once (src/ops/elementwise/elementwise_core.cpp); every other op raises
// "not implemented for 'ComplexHalf'" as PyTorch does.

#include <complex>

#include "ember/dtype.h"
#include "ember/half.h"

namespace ember {

/// One complex32 element. Arithmetic is not defined on it: convert to complex<float>.
struct alignas(4) ComplexHalf {
  using value_type = Half;
  Half re;
  Half im;
  ComplexHalf() = default;
  ComplexHalf(Half r, Half i) : re(r), im(i) {}
  /// Rounds both parts to the nearest binary16 (ties to even).
  explicit ComplexHalf(complex<float> v) : re(v.real()), im(v.imag()) {}
  explicit ComplexHalf(complex<double> v) : re(float(v.real())), im(float(v.imag())) {}
  Half real() const { return re; }
  Half imag() const { return im; }
  explicit operator complex<float>() const { return {float(re), float(im)}; }
};
static_assert(sizeof(ComplexHalf) == 4, "complex32 is two binary16 values");

template <>
struct CppTypeToScalarType<ComplexHalf> {
  static constexpr ScalarType value = ScalarType::ComplexHalf;
};

}  // namespace ember
