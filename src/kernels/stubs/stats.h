#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the statistics ops (src/ops/stats/): direct p-norm distances and histogram
// binning (Note [Kernel stubs]).

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// p-norm distances between the rows of the contiguous (B, P, M) `x1` and (B, R, M) `x2` (same
/// float or double dtype) into the contiguous (B, P, R) `out`: p = 0 counts differing
/// coordinates, p = inf takes the largest difference, any other p >= 0 is (sum |d|^p)^(1/p).
EMBER_DECLARE_KERNEL(cdist_stub, void(const Tensor& x1, const Tensor& x2, double p, Tensor& out));

/// Adds each point (row) of the contiguous (N, D) `input` whose every coordinate lies within
/// its dim's outer edges to its bin of the zeroed contiguous double `hist` (bins of dim d:
/// edges[d].numel() - 1; the last bin includes its right edge), with the matching value of the
/// contiguous (N) `weight` when defined, else 1. `edges` are contiguous 1-D tensors of the
/// input's dtype (float or double); `uniform`: they are equally spaced, so a bin is found by
/// division and a local check instead of a binary search. A NaN coordinate counts in its dim's last
/// bin (as PyTorch's).
EMBER_DECLARE_KERNEL(histogramdd_stub, void(const Tensor& input, const Tensor& weight,
                                            ArrayRef<Tensor> edges, bool uniform, Tensor& hist));

}  // namespace ember
