#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of gradient scaling (src/ops/amp/amp_ops.cpp). `found_inf` and `inv_scale` /
// `scale` are 1-element float32 tensors and `growth_tracker` a 1-element int32 tensor, on the
// device of the kernel; they stay there (no host read), as a CUDA kernel would leave them.

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Sets *found_inf to 1 when the contiguous floating tensor `t` holds an inf or NaN, and
/// multiplies every element of `t` by *inv_scale (in the element type's math precision) unless
/// *inv_scale is 1.
EMBER_DECLARE_KERNEL(amp_non_finite_check_and_unscale_stub,
                     void(Tensor& t, Tensor& found_inf, const Tensor& inv_scale));
/// One step of the loss-scale state machine (Note [Loss scale update] in
/// src/kernels/cpu/amp/amp.cpp).
EMBER_DECLARE_KERNEL(amp_update_scale_stub,
                     void(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf,
                          double growth_factor, double backoff_factor, int64_t growth_interval));

}  // namespace ember
