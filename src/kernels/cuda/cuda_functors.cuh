#pragma once
// Scalar math of the CUDA kernels as small __host__ __device__ functors (DESIGN.md §5): the
// device element types, the compute ("opmath") type of each, conversions that match the CPU
// cast rules (kernels/cpu/loops.h convert()), and one functor per op. Host-callable so tests and
// the code generator can evaluate the same expressions.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cuda {

// Device element types. ember::Half / BFloat16 are 2-byte structs with the same bits as __half /
// __nv_bfloat16, and std::complex<T> has the layout of cuda::std::complex<T>.
using c32 = ::cuda::std::complex<float>;
using c64 = ::cuda::std::complex<double>;

template <class T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}) with T the device type of `t`; false for dtypes without one.
template <class F>
bool dispatch_dtype(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Bool:
      f(TypeTag<bool>{});
      return true;
    case ScalarType::Byte:
      f(TypeTag<uint8_t>{});
      return true;
    case ScalarType::Char:
      f(TypeTag<int8_t>{});
      return true;
    case ScalarType::Short:
      f(TypeTag<int16_t>{});
      return true;
    case ScalarType::Int:
      f(TypeTag<int32_t>{});
      return true;
    case ScalarType::Long:
      f(TypeTag<int64_t>{});
      return true;
    case ScalarType::Half:
      f(TypeTag<__half>{});
      return true;
    case ScalarType::BFloat16:
      f(TypeTag<__nv_bfloat16>{});
      return true;
    case ScalarType::Float:
      f(TypeTag<float>{});
      return true;
    case ScalarType::Double:
      f(TypeTag<double>{});
      return true;
    case ScalarType::ComplexFloat:
      f(TypeTag<c32>{});
      return true;
    case ScalarType::ComplexDouble:
      f(TypeTag<c64>{});
      return true;
    default:
      return false;
  }
}

template <class T>
inline constexpr bool is_complex_v =
    ::cuda::std::is_same_v<T, c32> || ::cuda::std::is_same_v<T, c64>;
template <class T>
inline constexpr bool is_reduced_float_v =
    ::cuda::std::is_same_v<T, __half> || ::cuda::std::is_same_v<T, __nv_bfloat16>;

/// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise.
template <class T>
using opmath_t = ::cuda::std::conditional_t<is_reduced_float_v<T>, float, T>;

/// Converts between device element types with the CPU kernels' rules: complex -> real keeps the
/// real part, -> bool is "!= 0", 16-bit floats go through float, floating -> integer goes through
/// int64 (so out-of-range values wrap or give INT64_MIN as on CPU instead of saturating).
template <class To, class From>
__host__ __device__ inline To convert(From v) {
  if constexpr (::cuda::std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_reduced_float_v<From>) {
    if constexpr (::cuda::std::is_same_v<From, __half>)
      return convert<To>(__half2float(v));
    else
      return convert<To>(__bfloat162float(v));
  } else if constexpr (is_complex_v<From>) {
    if constexpr (::cuda::std::is_same_v<To, bool>)
      return v.real() != 0 || v.imag() != 0;
    else if constexpr (is_complex_v<To>) {
      using V = typename To::value_type;
      return To(V(v.real()), V(v.imag()));
    } else {
      return convert<To>(v.real());
    }
  } else if constexpr (::cuda::std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_complex_v<To>) {
    using V = typename To::value_type;
    return To(V(v), V(0));
  } else if constexpr (::cuda::std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (::cuda::std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (::cuda::std::is_integral_v<To> && ::cuda::std::is_floating_point_v<From>) {
    if (!(v >= From(-9.2233720368547758e18) && v < From(9.2233720368547758e18)))
      return static_cast<To>(static_cast<uint64_t>(0x8000000000000000ull));
    return static_cast<To>(static_cast<int64_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

/// fill: out = v.
template <class T>
struct FillOp {
  T v;
  __host__ __device__ T operator()() const { return v; }
};

/// add: a + alpha * b, computed in opmath_t<T> (bool: a || (alpha && b), as on CPU).
template <class T>
struct AddOp {
  using C = opmath_t<T>;
  C alpha;
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (::cuda::std::is_same_v<T, bool>) {
      return a || (alpha && b);
    } else {
      return convert<T>(static_cast<C>(convert<C>(a) + alpha * convert<C>(b)));
    }
  }
};

/// Same-size raw element types: same-dtype copies and fills move bits, not values. The 16-byte
/// one is only 8-byte aligned, as a complex128 element may be.
struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};
template <size_t N>
struct RawType;
template <>
struct RawType<1> {
  using type = uint8_t;
};
template <>
struct RawType<2> {
  using type = uint16_t;
};
template <>
struct RawType<4> {
  using type = uint32_t;
};
template <>
struct RawType<8> {
  using type = uint64_t;
};
template <>
struct RawType<16> {
  using type = Bytes16;
};

/// Calls f(TypeTag<RawType<n>>{}) for element size n; false for other sizes.
template <class F>
bool dispatch_size(size_t n, F&& f) {
  switch (n) {
    case 1:
      f(TypeTag<uint8_t>{});
      return true;
    case 2:
      f(TypeTag<uint16_t>{});
      return true;
    case 4:
      f(TypeTag<uint32_t>{});
      return true;
    case 8:
      f(TypeTag<uint64_t>{});
      return true;
    case 16:
      f(TypeTag<Bytes16>{});
      return true;
    default:
      return false;
  }
}

}  // namespace ember::cuda
