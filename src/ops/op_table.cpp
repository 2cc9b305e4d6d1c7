#include "ops/op_table.h"

#include "ember/error.h"

namespace ember {

namespace {
using R = DtypeRule;
// One row per op, in OpId order (checked at start-up by checked_table()).
#define EMBER_ROW(op, arity, rule) {#op, arity, rule},
const OpDef kOps[] = {
    // unary: EMBER_UNARY_OPS
    EMBER_ROW(neg, 1, R::Keep) EMBER_ROW(abs, 1, R::ComplexToReal) EMBER_ROW(
        sign, 1, R::Keep) EMBER_ROW(sgn, 1, R::Keep) EMBER_ROW(reciprocal, 1, R::IntToFloat)
        EMBER_ROW(sqrt, 1, R::IntToFloat) EMBER_ROW(rsqrt, 1, R::IntToFloat) EMBER_ROW(
            square, 1, R::BoolToLong) EMBER_ROW(exp, 1, R::IntToFloat)
            EMBER_ROW(exp2, 1, R::IntToFloat) EMBER_ROW(expm1, 1, R::IntToFloat) EMBER_ROW(
                log, 1, R::IntToFloat) EMBER_ROW(log2, 1, R::IntToFloat)
                EMBER_ROW(log10, 1, R::IntToFloat) EMBER_ROW(log1p, 1, R::IntToFloat) EMBER_ROW(
                    sin, 1, R::IntToFloat) EMBER_ROW(cos, 1, R::IntToFloat)
                    EMBER_ROW(tan, 1, R::IntToFloat) EMBER_ROW(asin, 1, R::IntToFloat) EMBER_ROW(
                        acos, 1, R::IntToFloat) EMBER_ROW(atan, 1, R::IntToFloat)
                        EMBER_ROW(sinh, 1, R::IntToFloat) EMBER_ROW(cosh, 1, R::IntToFloat)
                            EMBER_ROW(tanh, 1, R::IntToFloat) EMBER_ROW(asinh, 1, R::IntToFloat)
                                EMBER_ROW(acosh, 1, R::IntToFloat) EMBER_ROW(
                                    atanh, 1, R::IntToFloat) EMBER_ROW(sigmoid, 1, R::IntToFloat)
                                    EMBER_ROW(erf, 1, R::IntToFloat) EMBER_ROW(
                                        erfc, 1, R::IntToFloat) EMBER_ROW(erfinv, 1, R::IntToFloat)
                                        EMBER_ROW(floor, 1, R::Keep) EMBER_ROW(ceil, 1, R::Keep)
                                            EMBER_ROW(trunc, 1, R::Keep) EMBER_ROW(
                                                frac, 1, R::Keep) EMBER_ROW(bitwise_not, 1, R::Keep)
                                                EMBER_ROW(logical_not, 1, R::Predicate) EMBER_ROW(
                                                    relu, 1, R::Keep) EMBER_ROW(relu6, 1, R::Keep)
                                                    EMBER_ROW(selu, 1, R::Keep) EMBER_ROW(silu, 1,
                                                                                          R::Keep)
                                                        EMBER_ROW(mish, 1, R::Keep) EMBER_ROW(
                                                            softsign, 1, R::IntToFloatNoBool)
                                                            EMBER_ROW(hardsigmoid, 1, R::Keep)
                                                                EMBER_ROW(hardswish, 1, R::Keep)
                                                                    EMBER_ROW(tanhshrink, 1,
                                                                              R::IntToFloatNoBool)
                                                                        EMBER_ROW(logsigmoid, 1,
                                                                                  R::Keep)
    // predicates: EMBER_UNARY_PREDICATE_OPS
    EMBER_ROW(isnan, 1, R::Predicate) EMBER_ROW(isinf, 1, R::Predicate)
        EMBER_ROW(isfinite, 1, R::Predicate) EMBER_ROW(isposinf, 1, R::Predicate)
            EMBER_ROW(isneginf, 1, R::Predicate) EMBER_ROW(isreal, 1, R::Predicate)
                EMBER_ROW(signbit, 1, R::Predicate)
    // binary: EMBER_BINARY_OPS
    EMBER_ROW(mul, 2, R::Keep) EMBER_ROW(true_divide, 2, R::IntToFloat) EMBER_ROW(
        floor_divide, 2, R::Keep) EMBER_ROW(remainder, 2, R::Keep) EMBER_ROW(fmod, 2, R::Keep)
        EMBER_ROW(pow, 2, R::Keep) EMBER_ROW(float_power, 2, R::Double) EMBER_ROW(
            atan2, 2, R::IntToFloat) EMBER_ROW(minimum, 2, R::Keep) EMBER_ROW(maximum, 2, R::Keep)
            EMBER_ROW(fmin, 2, R::Keep) EMBER_ROW(fmax, 2, R::Keep) EMBER_ROW(hypot, 2, R::Keep)
                EMBER_ROW(copysign, 2, R::IntToFloat) EMBER_ROW(nextafter, 2, R::Keep) EMBER_ROW(
                    xlogy, 2, R::IntToFloat) EMBER_ROW(logical_and, 2, R::Predicate)
                    EMBER_ROW(logical_or, 2, R::Predicate) EMBER_ROW(logical_xor, 2, R::Predicate)
                        EMBER_ROW(bitwise_and, 2, R::Keep) EMBER_ROW(bitwise_or, 2, R::Keep)
                            EMBER_ROW(bitwise_xor, 2, R::Keep)
                                EMBER_ROW(bitwise_left_shift, 2, R::Keep)
                                    EMBER_ROW(bitwise_right_shift, 2, R::Keep)
    // comparisons: EMBER_COMPARISON_OPS
    EMBER_ROW(eq, 2, R::Predicate) EMBER_ROW(ne, 2, R::Predicate) EMBER_ROW(lt, 2, R::Predicate)
        EMBER_ROW(le, 2, R::Predicate) EMBER_ROW(gt, 2, R::Predicate) EMBER_ROW(ge, 2, R::Predicate)
    // EMBER_EXTRA_ELEMENTWISE_OPS
    EMBER_ROW(add, 2, R::Keep) EMBER_ROW(sub, 2, R::Keep) EMBER_ROW(div_trunc, 2, R::Keep)
        EMBER_ROW(div_floor, 2, R::Keep) EMBER_ROW(round_decimals, 1, R::Keep) EMBER_ROW(
            clamp, 1, R::Keep) EMBER_ROW(logit, 1, R::IntToFloat) EMBER_ROW(nan_to_num, 1, R::Keep)
            EMBER_ROW(leaky_relu, 1, R::Keep) EMBER_ROW(elu, 1, R::Keep) EMBER_ROW(celu, 1, R::Keep)
                EMBER_ROW(gelu, 1, R::Keep) EMBER_ROW(gelu_tanh, 1, R::Keep)
                    EMBER_ROW(softplus, 1, R::Keep) EMBER_ROW(hardtanh, 1, R::Keep)
                        EMBER_ROW(hardshrink, 1, R::Keep) EMBER_ROW(softshrink, 1, R::Keep)
                            EMBER_ROW(threshold, 1, R::Keep) EMBER_ROW(lerp_scalar, 2, R::Keep)
                                EMBER_ROW(lerp_tensor, 3, R::Keep) EMBER_ROW(addcmul, 3, R::Keep)
                                    EMBER_ROW(addcdiv, 3, R::Keep) EMBER_ROW(where, 3, R::Keep)
                                        EMBER_ROW(isclose, 2, R::Predicate)
                                            EMBER_ROW(conj_physical, 1, R::Keep)
                                                EMBER_ROW(clamp_tensor, 3, R::Keep) EMBER_ROW(
                                                    copy, 1, R::Keep) EMBER_ROW(fill, 0, R::Keep)};
#undef EMBER_ROW
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps,
              "every OpId needs exactly one row in kOps (same order)");

// Names in enum order, to verify the rows follow it.
const char* const kEnumNames[] = {
#define EMBER_OP_NAME(op) #op,
    EMBER_UNARY_OPS(EMBER_OP_NAME) EMBER_UNARY_PREDICATE_OPS(EMBER_OP_NAME)
        EMBER_BINARY_OPS(EMBER_OP_NAME) EMBER_COMPARISON_OPS(EMBER_OP_NAME)
            EMBER_EXTRA_ELEMENTWISE_OPS(EMBER_OP_NAME)
#undef EMBER_OP_NAME
};

bool rows_in_enum_order() {
  for (int i = 0; i < kNumOps; ++i)
    if (std::string_view(kOps[i].name) != kEnumNames[i]) return false;
  return true;
}
}  // namespace

const OpDef& op_def(OpId op) {
  static const bool ok = rows_in_enum_order();
  EMBER_INTERNAL_ASSERT(ok, "op table rows are not in OpId order");
  return kOps[static_cast<int>(op)];
}

bool strict_out_dtype(OpId op) {
  switch (op) {
    case OpId::neg:
    case OpId::abs:
    case OpId::sign:
    case OpId::sgn:
    case OpId::square:
    case OpId::floor:
    case OpId::ceil:
    case OpId::trunc:
    case OpId::frac:
    case OpId::bitwise_not:
    case OpId::isposinf:
    case OpId::isneginf:
    case OpId::signbit:
    case OpId::round_decimals:
    case OpId::float_power:
    case OpId::logsigmoid:
      return true;
    default:
      return false;
  }
}

ScalarType compute_dtype(OpId op, ScalarType promoted) {
  switch (op_def(op).rule) {
    case R::IntToFloat:
      return isIntegralType(promoted, true) ? get_default_dtype() : promoted;
    case R::IntToFloatNoBool:
      if (promoted == kBool) return ScalarType::Undefined;  // the op layer reports it
      return isIntegralType(promoted, false) ? get_default_dtype() : promoted;
    case R::Double:
      return isComplexType(promoted) ? kComplexDouble : kDouble;
    case R::BoolToLong:
      return promoted == kBool ? kLong : promoted;
    case R::Keep:
    case R::Predicate:
    case R::ComplexToReal:
      return promoted;
  }
  return promoted;
}

ScalarType result_dtype(OpId op, ScalarType compute) {
  switch (op_def(op).rule) {
    case R::Predicate:
      return kBool;
    case R::ComplexToReal:
      return toRealValueType(compute);
    case R::Keep:
    case R::IntToFloat:
    case R::IntToFloatNoBool:
    case R::Double:
    case R::BoolToLong:
      return compute;
  }
  return compute;
}

}  // namespace ember
