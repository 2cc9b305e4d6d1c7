#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Derivative rules of the elementwise ops (elementwise_grad.cpp), used by elementwise().

#include "core/op_table.h"
#include "ember/tensor.h"

namespace ember {

/// How an elementwise op differentiates.
enum class GradKind : uint8_t {
  None,            ///< not differentiable (bool or integer results): no node
  Zero,            ///< differentiable with a zero gradient (floor, sign, ...)
  NotImplemented,  ///< backward raises
  Partials,        ///< elementwise_partial() gives ∂out/∂x_k
};
GradKind elementwise_grad_kind(OpId op);

/// Which tensors the rule reads: bit k for input k, bit 3 for the output.
uint8_t elementwise_saves(OpId op);

/// ∂out/∂input_k at the saved inputs `x` (three slots) and output `o`; may be a 0-dim tensor.
Tensor elementwise_partial(OpId op, int k, const Tensor* x, const Tensor& o, const OpParams& p);

/// relu's vjp at its saved output `out`: `grad` where out > 0, else 0. `through_out`: the result
/// must also be differentiable in `out` (create_graph, forward AD), which the composite form
/// gives; otherwise contiguous CPU operands take one fused pass (relu_backward_stub).
Tensor relu_backward(const Tensor& grad, const Tensor& out, bool through_out);

}  // namespace ember
