#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of grid_sampler (src/ops/nn/grid_ops.cpp) and of fractional max pooling
// (src/ops/nn/fractional_pool_ops.cpp). All tensors are contiguous and float or double.

#include <cstdint>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// The sampling geometry of grid_sampler: interpolation 0 bilinear, 1 nearest, 2 bicubic
/// (2-D only); padding 0 zeros, 1 border, 2 reflection.
struct GridSampleArgs {
  int interpolation = 0;
  int padding = 0;
  bool align_corners = false;
};

/// out (N, C, *out) from input (N, C, *in) sampled at grid (N, *out, nd), nd = 2 or 3 spatial
/// dims; grid[..., 0] indexes the last (width) dim.
EMBER_DECLARE_KERNEL(grid_sampler_stub, void(const Tensor& input, const Tensor& grid, Tensor& out,
                                             const GridSampleArgs& args));
/// The gradients of grid_sampler from grad_out (N, C, *out): grad_input (zeroed, input's shape;
/// undefined when not wanted) and grad_grid (grid's shape; undefined when not wanted).
EMBER_DECLARE_KERNEL(grid_sampler_backward_stub,
                     void(const Tensor& grad_out, const Tensor& input, const Tensor& grid,
                          Tensor& grad_input, Tensor& grad_grid, const GridSampleArgs& args));
/// Fractional max pooling of input (N, C, *in) (nd = 2 or 3 spatial dims) with windows
/// `kernel` placed by `samples` (N, C, nd) in [0, 1): out (N, C, *out) and indices (int64, the
/// flat offset of each maximum within its input plane).
EMBER_DECLARE_KERNEL(fractional_max_pool_stub,
                     void(const Tensor& input, const Tensor& samples, Tensor& out, Tensor& indices,
                          IntArrayRef kernel));

}  // namespace ember
