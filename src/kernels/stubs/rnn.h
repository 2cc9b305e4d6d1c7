#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The fused recurrent gate kernels of lstm_fused_gates / gru_fused_gates (src/ops/nn/rnn_ops.cpp;
// Note [Kernel stubs]). Every tensor is contiguous, row-major and of one float or double dtype;
// B and H come from the state's shape [B, H].

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// LSTM step from the gate projections ig, hg [B, 4H] and the cell state cx [B, H]: writes hy and
/// cy [B, H] and, when `ws` is defined ([B, 4H]), the activated gates for the backward.
EMBER_DECLARE_KERNEL(lstm_gates_fwd_stub, void(const Tensor& ig, const Tensor& hg, const Tensor& cx,
                                               Tensor& hy, Tensor& cy, Tensor& ws));

/// LSTM step backward from the gates `ws` kept by the forward: writes the pre-activation gate
/// gradient dgates [B, 4H] and dcx [B, H] from ghy, gcy, cx and cy [B, H].
EMBER_DECLARE_KERNEL(lstm_gates_bwd_stub,
                     void(const Tensor& ghy, const Tensor& gcy, const Tensor& ws, const Tensor& cx,
                          const Tensor& cy, Tensor& dgates, Tensor& dcx));

/// GRU step from ig, hg [B, 3H] and hx [B, H]: writes hy [B, H] and, when `ws` is defined
/// ([B, 4H]), the gates (r, z, n, hg_n) for the backward.
EMBER_DECLARE_KERNEL(gru_gates_fwd_stub, void(const Tensor& ig, const Tensor& hg, const Tensor& hx,
                                              Tensor& hy, Tensor& ws));

/// GRU step backward from the forward's `ws`: writes dig, dhg [B, 3H] (the pre-activation
/// gradients of the input and hidden projections) and dhx [B, H] from ghy and hx [B, H].
EMBER_DECLARE_KERNEL(gru_gates_bwd_stub, void(const Tensor& ghy, const Tensor& ws, const Tensor& hx,
                                              Tensor& dig, Tensor& dhg, Tensor& dhx));

}  // namespace ember
