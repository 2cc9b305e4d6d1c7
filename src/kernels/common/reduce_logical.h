#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The accumulation of all / any / count_nonzero (kKind 0, 1, 2), shared by the CPU reduction
// (kernels/cpu/reduce/logical.cpp) and the CUDA one (kernels/cuda/reduce_misc.cu). Namespace
// and linkage: Note [Shared scalar rules] (kernels/common/elementwise_scalar.h).

#include <cstdint>
#include <type_traits>

#include "kernels/common/scalar_ns.h"

EMBER_SCALAR_NS_BEGIN

/// The accumulator: a count for count_nonzero, a truth value for all / any.
template <int kKind>
using logical_acc_t = std::conditional_t<kKind == 2, int64_t, bool>;

/// Folds one element's "is nonzero" into the accumulator.
template <int kKind>
EMBER_SCALAR_HD logical_acc_t<kKind> logical_step(logical_acc_t<kKind> a, bool nz) {
  if constexpr (kKind == 0)
    return a && nz;
  else if constexpr (kKind == 1)
    return a || nz;
  else
    return a + (nz ? 1 : 0);
}
/// Merges two partial accumulators.
template <int kKind>
EMBER_SCALAR_HD logical_acc_t<kKind> logical_combine(logical_acc_t<kKind> a,
                                                     logical_acc_t<kKind> b) {
  if constexpr (kKind == 0)
    return a && b;
  else if constexpr (kKind == 1)
    return a || b;
  else
    return a + b;
}

EMBER_SCALAR_NS_END
