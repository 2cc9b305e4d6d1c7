#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Note [Shared element rules]
// The element rules every backend's kernels follow, written once for the CPU (kernels/cpu/
// loops.h) and CUDA (kernels/cuda/cuda_functors.cuh): the compute ("opmath") type of each
// element type and the conversions between element types (PyTorch's CPU cast rules). A backend
// names its own 16-bit float and complex types (ember::Half or __half, std::complex or
// cuda::std::complex) by specialising ElementTraits; the rules are the same code.
// - complex -> real keeps the real part; -> bool is "!= 0" (NaN is true);
// - 16-bit floats go through float both ways (double -> half rounds twice, as PyTorch's CPU);
// - floating -> integer goes through int64, so an out-of-range value wraps or gives INT64_MIN
//   instead of being undefined behaviour.

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember::kernels {

/// What the shared rules need to know of an element type. A backend specialises it for its
/// 16-bit floats (kReduced, to_float, from_float) and complex types (kComplex, with value_type,
/// real() and imag()).
template <class T>
struct ElementTraits {
  static constexpr bool kComplex = false;
  static constexpr bool kReduced = false;
};

template <class T>
inline constexpr bool is_complex_element_v = ElementTraits<T>::kComplex;
template <class T>
inline constexpr bool is_reduced_float_v = ElementTraits<T>::kReduced;

/// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise.
template <class T>
using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

/// Converts one element (Note [Shared element rules]).
template <class To, class From>
EMBER_HOST_DEVICE inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(ElementTraits<From>::to_float(v));
  } else if constexpr (is_complex_element_v<From>) {
    if constexpr (std::is_same_v<To, bool>) {
      return v.real() != 0 || v.imag() != 0;
    } else if constexpr (is_complex_element_v<To>) {
      using V = typename To::value_type;
      return To(V(v.real()), V(v.imag()));
    } else {
      return convert<To>(v.real());
    }
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_complex_element_v<To>) {
    using V = typename To::value_type;
    return To(V(v), V(0));
  } else if constexpr (is_reduced_float_v<To>) {
    return ElementTraits<To>::from_float(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!(v >= From(-9.2233720368547758e18) && v < From(9.2233720368547758e18)))
      return static_cast<To>(static_cast<int64_t>(static_cast<uint64_t>(0x8000000000000000ull)));
    return static_cast<To>(static_cast<int64_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

/// A type carried as a value, for generic lambdas (`f(TypeTag<T>{})`).
template <class T>
struct TypeTag {
  using type = T;
};

}  // namespace ember::kernels
