#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// The generic elementwise op path (DESIGN.md §2 "the op function makes inputs tidy"): type
// promotion, broadcasting, output allocation and checks, then the device kernel. Every
// elementwise public function is a thin call into `elementwise()`.

#include <initializer_list>

#include "core/op_table.h"
#include "ember/tensor.h"

namespace ember {

/// Where the result goes.
enum class OutMode : uint8_t {
  Functional,  ///< a new tensor
  Out,         ///< an `out=` tensor (resized when empty)
  InPlace,     ///< inputs[0]
};

/// Runs elementwise op `op` on `inputs`. For OutMode::Out, `out` is the destination.
/// `name` overrides the op name in error messages (e.g. "add_" for in-place forms).
Tensor elementwise(OpId op, std::initializer_list<Tensor> inputs, const OpParams& params = {},
                   OutMode mode = OutMode::Functional, Tensor* out = nullptr);

/// "add_" for OpId::add (a string with static storage, for in-place error messages).
const char* inplace_name(OpId op);

/// `pow(base, exponent)` with a scalar exponent: PyTorch's special cases (exponent 0, ±0.5, -1,
/// negative integer powers of integers) on top of the generic path (binary_ops.cpp).
Tensor pow_tensor_scalar(const Tensor& base, const Scalar& exp, OutMode mode, Tensor* out);

/// A 0-dim tensor holding `s` that promotes like a Python number (a "wrapped number").
Tensor wrap_scalar(const Scalar& s);
/// wrap_scalar(s), stored in `other`'s dtype when that is the dtype `other op s` computes in
/// (s an integer, floating or complex number of `other`'s category or a lower one, `other`
/// neither bool nor complex32): for add, sub and mul, whose kernels run in the result dtype, this
/// is the one conversion the op would make of it later.
Tensor wrap_scalar_like(const Scalar& s, const Tensor& other);

/// `t` on `device`. A 0-dim CPU tensor (a scalar operand) is filled in on the device, by a
/// kernel that takes its value as an argument: no host synchronisation, so it can be captured
/// in a CUDA graph, where a copy from pageable memory cannot.
Tensor operand_on_device(const Tensor& t, Device device);

/// `torch.result_type` over tensors (0-dim and wrapped numbers promote weakly).
ScalarType result_type(ArrayRef<Tensor> tensors);

/// Broadcast shape of all `tensors`; RuntimeError naming `op` when incompatible.
DimVector broadcast_all(ArrayRef<Tensor> tensors, const char* op);

/// Error unless `t` can be written elementwise (no two elements share memory).
void check_no_internal_overlap(const Tensor& t, const char* op);
/// Error when `out` and `in` partly overlap in memory (full aliasing is allowed).
void check_no_partial_overlap(const Tensor& out, const Tensor& in, const char* op);

/// Runs the elementwise kernel of `op` on `out`'s device: the CPU kernel table entry of
/// (`op`, `dtype`), or the device's backend. Inputs are already in the compute dtype and on the
/// device; errors name `name` ("add", or "add_" when `inplace`).
void run_elementwise_kernel(OpId op, ScalarType dtype, const Tensor& out,
                            ArrayRef<const Tensor*> inputs, const OpParams& params,
                            const char* name, bool inplace = false);

/// A new tensor of `sizes` whose memory layout follows `like` when `like` has those sizes and
/// is dense (so transposed inputs give transposed, still contiguous-in-memory, outputs).
Tensor empty_like_layout(IntArrayRef sizes, ScalarType dtype, Device device, ArrayRef<Tensor> like);

}  // namespace ember
