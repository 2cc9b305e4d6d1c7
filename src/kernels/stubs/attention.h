#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The fused attention kernels of _scaled_dot_product_flash_attention_for_cpu and its backward
// (src/ops/nn/attention_ops.cpp; Note [Kernel stubs]). q (*, L, E), k (*, S, E), v (*, S, Ev),
// out / grad_out (*, L, Ev) are contiguous with the same leading dims and one dtype (float or
// double); lse (*, L) has that dtype too. `mask` is undefined or a view expanded to (*, L, S)
// (any strides) of dtype bool (true = takes part) or of q's dtype (added to the scores). L >= 1
// and S >= 1.

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// out = softmax(scale q kᵀ + mask) v and lse = the logsumexp of each query's scores, tiled over
/// keys with an online softmax (the L×S matrix is never built).
EMBER_DECLARE_KERNEL(flash_attention_fwd_stub,
                     void(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                          Tensor& out, Tensor& lse, bool causal, double scale));

/// The gradients gq, gk, gv (preallocated like q, k, v) from grad_out, recomputing the score
/// tiles from lse.
EMBER_DECLARE_KERNEL(flash_attention_bwd_stub,
                     void(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                          const Tensor& out, const Tensor& lse, const Tensor& mask, Tensor& gq,
                          Tensor& gk, Tensor& gv, bool causal, double scale));

}  // namespace ember
