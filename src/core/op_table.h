#pragma once
// Note [Op table]
// Every elementwise op has one OpId and one OpDef row: its name, arity and dtype rule. The op
// functions (elementwise.cpp) read the row to promote and validate; kernels are registered per
// (OpId, compute dtype) by the per-ISA kernel files; a missing kernel is the op's "not
// implemented for dtype" error. The table is tied to the enum by a static_assert and by the
// exhaustive switch in op_def(). Autograd, vmap and the compiler attach their rules to the same
// OpId as they arrive.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ember/op_list.h"
#include "ember/dtype.h"
#include "ember/scalar.h"

namespace ember {

#define EMBER_EXTRA_ELEMENTWISE_OPS(_)                                                  \
  _(add) _(sub) _(div_trunc) _(div_floor) _(round_decimals) _(clamp) _(logit)          \
  _(nan_to_num) _(leaky_relu) _(elu) _(celu) _(gelu) _(gelu_tanh) _(softplus)          \
  _(hardtanh) _(hardshrink) _(softshrink) _(threshold) _(lerp_scalar) _(lerp_tensor)   \
  _(addcmul) _(addcdiv) _(where) _(isclose) _(conj_physical) _(clamp_tensor) _(copy) _(fill) \
  _(polygamma) _(mvlgamma) EMBER_SPECIAL_UNARY_OPS(_) EMBER_SPECIAL_BINARY_OPS(_)

// torch.special's elementwise functions that have no Tensor method (ATen's special_* names):
// public functions in include/ember/special.h (namespace ember::special).
#define EMBER_SPECIAL_UNARY_OPS(_)                                                            \
  _(special_i0e) _(special_i1) _(special_i1e) _(special_ndtr) _(special_ndtri)               \
  _(special_log_ndtr) _(special_erfcx) _(special_bessel_j0) _(special_bessel_j1)             \
  _(special_bessel_y0) _(special_bessel_y1) _(special_modified_bessel_i0)                    \
  _(special_modified_bessel_i1) _(special_modified_bessel_k0) _(special_modified_bessel_k1)  \
  _(special_scaled_modified_bessel_k0) _(special_scaled_modified_bessel_k1)                  \
  _(special_spherical_bessel_j0) _(special_airy_ai) _(special_entr)
#define EMBER_SPECIAL_BINARY_OPS(_)                                                           \
  _(special_xlog1py) _(special_zeta) _(special_chebyshev_polynomial_t)                       \
  _(special_chebyshev_polynomial_u) _(special_chebyshev_polynomial_v)                        \
  _(special_chebyshev_polynomial_w) _(special_shifted_chebyshev_polynomial_t)                \
  _(special_shifted_chebyshev_polynomial_u) _(special_shifted_chebyshev_polynomial_v)        \
  _(special_shifted_chebyshev_polynomial_w) _(special_hermite_polynomial_h)                  \
  _(special_hermite_polynomial_he) _(special_laguerre_polynomial_l)                          \
  _(special_legendre_polynomial_p)

#include "core/op_list.def"

// Note [Op list]
// OpId names every op: first the elementwise families (their rows below carry the dtype rule
// the generic elementwise path reads), then every other op function, one row each in
// src/core/op_list.def: _(id, schema, traits).
// - schema: the op's ATen-style signature, "name.overload(Type arg=default, ...) -> Returns"
//   (op_schema() parses it).
// - traits: OpTrait bits. A composite op is made of other ops and has no rules of its own; a
//   primitive has kVjp / kJvp when it has a backward / forward rule.
// Tables indexed by OpId are tied to it with static_asserts, and switches over OpId list every
// case (no default:, -Werror=switch), so a new op without its rows fails to compile.
enum class OpId : uint16_t {
#define EMBER_OP_ENUM(op) op,
#define EMBER_OP_ENUM3(op, schema, traits) op,
  EMBER_UNARY_OPS(EMBER_OP_ENUM) EMBER_UNARY_PREDICATE_OPS(EMBER_OP_ENUM)
      EMBER_BINARY_OPS(EMBER_OP_ENUM) EMBER_COMPARISON_OPS(EMBER_OP_ENUM)
          EMBER_EXTRA_ELEMENTWISE_OPS(EMBER_OP_ENUM)
              EMBER_NON_ELEMENTWISE_OPS(EMBER_OP_ENUM3)
#undef EMBER_OP_ENUM
#undef EMBER_OP_ENUM3
                  kCount
};
/// Number of ops.
constexpr int kNumOps = static_cast<int>(OpId::kCount);
#define EMBER_OP_COUNT(op) +1
/// Number of elementwise ops: they come first in OpId and have an OpDef row.
constexpr int kNumElementwiseOps =
    0 EMBER_UNARY_OPS(EMBER_OP_COUNT) EMBER_UNARY_PREDICATE_OPS(EMBER_OP_COUNT)
        EMBER_BINARY_OPS(EMBER_OP_COUNT) EMBER_COMPARISON_OPS(EMBER_OP_COUNT)
            EMBER_EXTRA_ELEMENTWISE_OPS(EMBER_OP_COUNT);
#undef EMBER_OP_COUNT
/// Whether `op` is one of the elementwise family (has an OpDef row).
constexpr bool is_elementwise(OpId op) { return static_cast<int>(op) < kNumElementwiseOps; }

/// What an op is (Note [Op list]); in a namespace of its own, as the bits have short names.
namespace op_trait {
enum OpTrait : uint32_t {
  kNone = 0,
  kView = 1u << 0,              ///< the output shares the input's storage
  kInplace = 1u << 1,           ///< writes its first argument
  kOut = 1u << 2,               ///< writes an out= argument
  kRandom = 1u << 3,            ///< draws from a generator
  kDynamicShape = 1u << 4,      ///< the output shape depends on the data
  kNondeterministic = 1u << 5,  ///< the result may depend on thread scheduling
  kComposite = 1u << 6,         ///< made of other ops; no rules or kernels of its own
  kVjp = 1u << 7,               ///< has a backward rule
  kJvp = 1u << 8,               ///< has a forward rule
  kFactory = 1u << 9,           ///< creates a tensor from no tensor input
  kElementwise = 1u << 10,      ///< the generic elementwise path (OpDef row)
  kAutocastLower = 1u << 11,    ///< CUDA autocast runs it in the lower-precision dtype
  kAutocastFp32 = 1u << 12,     ///< CUDA autocast runs it in float32
  kAutocastPromote = 1u << 13,  ///< CUDA autocast promotes its inputs to the widest dtype
  kAllocOnly = 1u << 14,        ///< allocates, reads and writes no tensor data (empty)
  kAutocastCpuLower = 1u << 15,    ///< CPU autocast runs it in the lower-precision dtype
  kAutocastCpuFp32 = 1u << 16,     ///< CPU autocast runs it in float32
  kAutocastCpuPromote = 1u << 17,  ///< CPU autocast promotes its inputs to the widest dtype
};
}  // namespace op_trait

/// An op's identity: its id as written, its schema and its traits.
struct OpInfo {
  const char* id;
  const char* schema;
  uint32_t traits;
};
/// The row of `op` (every op, elementwise included).
const OpInfo& op_info(OpId op);
/// "aten::<name>" as PyTorch's profiler names the op.
const char* op_qualified_name(OpId op);
/// The op named `id` (as written in the list), or OpId::kCount.
OpId op_from_id(std::string_view id);

/// One argument of a schema.
struct SchemaArgument {
  std::string type;     ///< "Tensor", "int[]", "Scalar?", ...
  std::string name;
  std::string default_value;  ///< as written; empty when none
  bool has_default = false;
};
/// A parsed schema.
struct FunctionSchema {
  std::string name;      ///< "sum"
  std::string overload;  ///< "dim_IntList" or ""
  std::vector<SchemaArgument> arguments;
  std::string returns;   ///< "Tensor", "(Tensor, Tensor)", ...
};
/// The parsed schema of `op` (parsed once, on first use).
const FunctionSchema& op_schema(OpId op);

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

/// The elementwise row of `op` (is_elementwise(op) must hold).
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
