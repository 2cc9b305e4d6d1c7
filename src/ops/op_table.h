#pragma once
// Note [Op table]
// Every elementwise op has one OpId and one OpDef row: its name, arity and dtype rule. The op
// functions (elementwise.cpp) read the row to promote and validate; kernels are registered per
// (OpId, compute dtype) by the per-ISA kernel files; a missing kernel is the op's "not
// implemented for dtype" error. The table is tied to the enum by a static_assert and by the
// exhaustive switch in op_def(). Autograd, vmap and the compiler attach their rules to the same
// OpId as they arrive.

#include <cstdint>

#include "ember/op_list.h"
#include "ember/dtype.h"
#include "ember/scalar.h"

namespace ember {

#define EMBER_EXTRA_ELEMENTWISE_OPS(_)                                                  \
  _(add) _(sub) _(div_trunc) _(div_floor) _(round_decimals) _(clamp) _(logit)          \
  _(nan_to_num) _(leaky_relu) _(elu) _(celu) _(gelu) _(gelu_tanh) _(softplus)          \
  _(hardtanh) _(hardshrink) _(softshrink) _(threshold) _(lerp_scalar) _(lerp_tensor)   \
  _(addcmul) _(addcdiv) _(where) _(isclose) _(conj_physical) _(clamp_tensor) _(copy) _(fill)

enum class OpId : uint16_t {
#define EMBER_OP_ENUM(op) op,
  EMBER_UNARY_OPS(EMBER_OP_ENUM) EMBER_UNARY_PREDICATE_OPS(EMBER_OP_ENUM)
      EMBER_BINARY_OPS(EMBER_OP_ENUM) EMBER_COMPARISON_OPS(EMBER_OP_ENUM)
          EMBER_EXTRA_ELEMENTWISE_OPS(EMBER_OP_ENUM)
#undef EMBER_OP_ENUM
              kCount
};
constexpr int kNumOps = static_cast<int>(OpId::kCount);

/// How an op's compute and result dtypes follow from the promoted input dtype.
enum class DtypeRule : uint8_t {
  Keep,           ///< compute and result in the promoted dtype
  IntToFloat,     ///< bool/integer inputs compute in the default float dtype
  Predicate,      ///< compute in the promoted dtype, result bool
  ComplexToReal,  ///< result is the real value type (abs of complex)
  Double,         ///< compute in float64 / complex128 (float_power)
  BoolToLong,     ///< as Keep, but bool computes in int64 (ops defined as pow(x, 2): square)
  IntToFloatNoBool,  ///< as IntToFloat, but bool inputs are not supported (softsign, ...)
};

struct OpDef {
  const char* name;
  int8_t arity;  ///< number of tensor inputs
  DtypeRule rule;
};

/// The row of `op`.
const OpDef& op_def(OpId op);
inline const char* op_name(OpId op) { return op_def(op).name; }

/// Extra arguments of an elementwise op (alpha, bounds, slopes...), in op-specific order.
struct OpParams {
  Scalar s[4];
};

/// Whether an out= tensor must have exactly the result dtype (PyTorch's structured unary ops
/// check that all operands share one dtype; most other ops cast into out=).
bool strict_out_dtype(OpId op);

/// Compute dtype for `op` given the promoted input dtype.
ScalarType compute_dtype(OpId op, ScalarType promoted);
/// Result dtype for `op` given its compute dtype.
ScalarType result_dtype(OpId op, ScalarType compute);

}  // namespace ember
