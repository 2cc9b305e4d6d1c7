#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The binary search of searchsorted / bucketize, shared by the CPU kernel (kernels/cpu/sort/
// search.cpp) and the CUDA one (kernels/cuda/sort_search_cuda.cu). Namespace and linkage:
// Note [Shared scalar rules] (kernels/common/elementwise_scalar.h).

#include <cstdint>

#include "kernels/common/scalar_ns.h"

EMBER_SCALAR_NS_BEGIN

/// The insertion position of `v` in a sorted row of `len` elements, each read by
/// `load(position, element)`; a load that returns false ends the search at the current lower
/// bound. PyTorch's comparisons, so NaN values land past every element; `right` puts `v` after
/// its equals.
template <class T, class Load>
EMBER_SCALAR_HD int64_t sorted_position(int64_t len, T v, bool right, Load load) {
  int64_t lo = 0, hi = len;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    T m;
    if (!load(mid, m)) break;
    const bool go_right = right ? !(m > v) : !(m >= v);
    if (go_right)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

EMBER_SCALAR_NS_END
