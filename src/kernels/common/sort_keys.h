#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The unsigned sort keys of Note [Sort keys] (kernels/cpu/sort/sort.cpp), shared by the CPU
// radix sort and the CUDA segmented radix sort (kernels/cuda/sort_cuda.cu). Namespace and
// linkage: Note [Shared scalar rules] (kernels/common/elementwise_scalar.h).

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/scalar_ns.h"

EMBER_SCALAR_NS_BEGIN

/// The unsigned sort key type of `T`.
template <class T>
using KeyOf = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

/// The key of a bool or integer: signed integers flip the sign bit.
template <class T>
EMBER_SCALAR_HD KeyOf<T> integer_sort_key(T v) {
  using K = KeyOf<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return K(v);
  } else {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>)
      return K(U(v) ^ (U(1) << (sizeof(T) * 8 - 1)));
    else
      return K(v);
  }
}

/// The key of a float or double `f` (K: the key type of its element type): negatives flip all
/// bits, the rest the sign bit; -0.0 becomes +0.0 and every NaN the largest key.
template <class K, class F>
EMBER_SCALAR_HD K float_sort_key(F f) {
  static_assert(sizeof(K) == sizeof(F));
  if (f != f) return ~K(0);
  if (f == 0) f = 0;
  K b;
  memcpy(&b, &f, sizeof(K));
  constexpr K sign = K(1) << (sizeof(K) * 8 - 1);
  return (b & sign) ? ~b : (b | sign);
}

EMBER_SCALAR_NS_END
