#pragma once
// Scalar math of the CUDA kernels as small __host__ __device__ functors (DESIGN.md §5): the
// device element types, and one functor per op. The compute ("opmath") type and the conversions
// are the CPU's own code (Note [Shared element rules], kernels/common/element.h), and the dtype
// dispatch is the CPU's EMBER_DISPATCH_* with device_t mapping each type. Host-callable so tests
// and the code generator can evaluate the same expressions.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include <cstdint>

#include "ember/dispatch_type.h"
#include "ember/dtype.h"
#include "ember/half.h"
#include "kernels/common/element.h"

// Device element types. ember::Half / BFloat16 are 2-byte structs with the same bits as __half /
// __nv_bfloat16, and std::complex<T> has the layout of cuda::std::complex<T>.
namespace ember::cuda {
using c32 = ::cuda::std::complex<float>;
using c64 = ::cuda::std::complex<double>;
}  // namespace ember::cuda

namespace ember::kernels {
// The device's 16-bit float and complex element types (Note [Shared element rules]).
template <>
struct ElementTraits<__half> {
  static constexpr bool kComplex = false;
  static constexpr bool kReduced = true;
  __host__ __device__ static float to_float(__half v) { return __half2float(v); }
  __host__ __device__ static __half from_float(float f) { return __float2half_rn(f); }
};
template <>
struct ElementTraits<__nv_bfloat16> {
  static constexpr bool kComplex = false;
  static constexpr bool kReduced = true;
  __host__ __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  __host__ __device__ static __nv_bfloat16 from_float(float f) { return __float2bfloat16_rn(f); }
};
template <class V>
struct ElementTraits<::cuda::std::complex<V>> {
  static constexpr bool kComplex = true;
  static constexpr bool kReduced = false;
};
}  // namespace ember::kernels

namespace ember::cuda {

using kernels::convert;
using kernels::opmath_t;
using kernels::TypeTag;
template <class T>
inline constexpr bool is_complex_v = kernels::is_complex_element_v<T>;

/// The device element type of a host element type (ember::Half -> __half, ...).
template <class T>
struct DeviceType {
  using type = T;
};
template <>
struct DeviceType<Half> {
  using type = __half;
};
template <>
struct DeviceType<BFloat16> {
  using type = __nv_bfloat16;
};
template <class V>
struct DeviceType<complex<V>> {
  using type = ::cuda::std::complex<V>;
};
template <class T>
using device_t = typename DeviceType<T>::type;

/// Calls f(TypeTag<T>{}) with T the device type of `t` (EMBER_DISPATCH_ALL_TYPES's dtypes);
/// false for dtypes without one (complex32).
template <class F>
bool dispatch_dtype(ScalarType t, F&& f) {
  if (t == ScalarType::ComplexHalf || t == ScalarType::Undefined) return false;
  EMBER_DISPATCH_ALL_TYPES(t, "cuda", [&] { f(TypeTag<device_t<scalar_t>>{}); });
  return true;
}

/// fill: out = v.
template <class T>
struct FillOp {
  T v;
  __host__ __device__ T operator()() const { return v; }
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
