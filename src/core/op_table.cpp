#include "core/op_table.h"

#include <utility>

#include "ember/error.h"

namespace ember {

namespace {
using R = DtypeRule;
// One row per op, in OpId order (checked at start-up by checked_table()).
#define EMBER_ROW(op, arity, rule) {#op, arity, rule},
constexpr OpDef kOps[] = {
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
    EMBER_ROW(lgamma, 1, R::IntToFloat) EMBER_ROW(digamma, 1, R::IntToFloat)
    EMBER_ROW(i0, 1, R::IntToFloat) EMBER_ROW(sinc, 1, R::IntToFloat)
    EMBER_ROW(deg2rad, 1, R::IntToFloat) EMBER_ROW(rad2deg, 1, R::IntToFloat)
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
    EMBER_ROW(logaddexp, 2, R::Keep) EMBER_ROW(logaddexp2, 2, R::Keep)
    EMBER_ROW(heaviside, 2, R::Keep) EMBER_ROW(gcd, 2, R::Keep) EMBER_ROW(lcm, 2, R::Keep)
    EMBER_ROW(igamma, 2, R::Keep) EMBER_ROW(igammac, 2, R::Keep)
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
                                                    copy, 1, R::Keep) EMBER_ROW(fill, 0, R::Keep)
    EMBER_ROW(polygamma, 1, R::IntToFloat) EMBER_ROW(mvlgamma, 1, R::IntToFloat)
    // torch.special (EMBER_SPECIAL_UNARY_OPS, EMBER_SPECIAL_BINARY_OPS): integers compute in the
    // default float dtype.
#define EMBER_SPECIAL_ROW1(op) EMBER_ROW(op, 1, R::IntToFloat)
#define EMBER_SPECIAL_ROW2(op) EMBER_ROW(op, 2, R::IntToFloat)
    EMBER_SPECIAL_UNARY_OPS(EMBER_SPECIAL_ROW1) EMBER_SPECIAL_BINARY_OPS(EMBER_SPECIAL_ROW2)};
#undef EMBER_SPECIAL_ROW1
#undef EMBER_SPECIAL_ROW2
#undef EMBER_ROW
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumElementwiseOps,
              "every OpId needs exactly one row in kOps (same order)");

// Names in enum order, to verify the rows follow it.
constexpr const char* kEnumNames[] = {
#define EMBER_OP_NAME(op) #op,
    EMBER_UNARY_OPS(EMBER_OP_NAME) EMBER_UNARY_PREDICATE_OPS(EMBER_OP_NAME)
        EMBER_BINARY_OPS(EMBER_OP_NAME) EMBER_COMPARISON_OPS(EMBER_OP_NAME)
            EMBER_EXTRA_ELEMENTWISE_OPS(EMBER_OP_NAME)
#undef EMBER_OP_NAME
};

constexpr bool rows_in_enum_order() {
  for (int i = 0; i < kNumElementwiseOps; ++i)
    if (std::string_view(kOps[i].name) != kEnumNames[i]) return false;
  return true;
}
static_assert(rows_in_enum_order(), "the kOps rows must follow the OpId order");

// Every op's identity row, in OpId order (both come from the same X-macro lists).
using namespace op_trait;
constexpr OpInfo kInfos[] = {
#define EMBER_EW_INFO(op) {#op, nullptr, kElementwise},
#define EMBER_INFO(op, schema, traits) {#op, schema, traits},
    EMBER_UNARY_OPS(EMBER_EW_INFO) EMBER_UNARY_PREDICATE_OPS(EMBER_EW_INFO)
        EMBER_BINARY_OPS(EMBER_EW_INFO) EMBER_COMPARISON_OPS(EMBER_EW_INFO)
            EMBER_EXTRA_ELEMENTWISE_OPS(EMBER_EW_INFO) EMBER_NON_ELEMENTWISE_OPS(EMBER_INFO)
#undef EMBER_EW_INFO
#undef EMBER_INFO
};
static_assert(sizeof(kInfos) / sizeof(kInfos[0]) == kNumOps, "one OpInfo row per OpId");

// PyTorch's name of an elementwise op whose id differs from it (a lookup rather than a switch:
// switches over OpId list every op, Note [Op list]).
const char* elementwise_aten_name(OpId op) {
  static constexpr std::pair<OpId, const char*> kRenames[] = {
      {OpId::true_divide, "div"},  {OpId::div_trunc, "div"},     {OpId::div_floor, "div"},
      {OpId::round_decimals, "round"}, {OpId::lerp_scalar, "lerp"}, {OpId::lerp_tensor, "lerp"},
      {OpId::clamp_tensor, "clamp"}, {OpId::gelu_tanh, "gelu"},   {OpId::copy, "copy_"},
      {OpId::fill, "fill_"}};
  for (const auto& [o, name] : kRenames)
    if (o == op) return name;
  return op_def(op).name;
}

// The schema of an elementwise op, from its arity.
std::string elementwise_schema(OpId op) {
  static const char* const kArgs[] = {"", "Tensor self", "Tensor self, Tensor other",
                                      "Tensor self, Tensor tensor1, Tensor tensor2"};
  const OpDef& d = op_def(op);
  const char* ret = d.rule == DtypeRule::Predicate ? "Tensor" : "Tensor";
  std::string extra = op == OpId::add || op == OpId::sub ? ", *, Scalar alpha=1" : "";
  return std::string(elementwise_aten_name(op)) + "(" + kArgs[d.arity] + extra + ") -> " + ret;
}

FunctionSchema parse_schema(const std::string& text) {
  FunctionSchema s;
  size_t open = text.find('('), close = std::string::npos;
  for (size_t i = open, depth = 0; open != std::string::npos && i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) {
      close = i;
      break;
    }
  }
  EMBER_INTERNAL_ASSERT(open != std::string::npos && close != std::string::npos && close > open,
                        "malformed schema ", text);
  std::string head = text.substr(0, open);
  size_t dot = head.find('.');
  s.name = head.substr(0, dot);
  if (dot != std::string::npos) s.overload = head.substr(dot + 1);
  size_t arrow = text.find("->", close);
  if (arrow != std::string::npos) {
    s.returns = text.substr(arrow + 2);
    s.returns.erase(0, s.returns.find_first_not_of(' '));
  }
  // split the arguments at top-level commas
  std::string body = text.substr(open + 1, close - open - 1);
  int depth = 0;
  std::string cur;
  auto flush = [&] {
    size_t b = cur.find_first_not_of(' ');
    if (b == std::string::npos || cur.substr(b) == "*") {
      cur.clear();
      return;
    }
    std::string a = cur.substr(b);
    cur.clear();
    SchemaArgument arg;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      arg.default_value = a.substr(eq + 1);
      arg.has_default = true;
      a = a.substr(0, eq);
    }
    size_t sp = a.rfind(' ');
    arg.type = sp == std::string::npos ? "Any" : a.substr(0, sp);
    arg.name = a.substr(sp == std::string::npos ? 0 : sp + 1);
    s.arguments.push_back(std::move(arg));
  };
  for (char ch : body) {
    if (ch == '(' || ch == '[' || ch == '<') ++depth;
    if (ch == ')' || ch == ']' || ch == '>') --depth;
    if (ch == ',' && depth == 0) {
      flush();
      continue;
    }
    cur += ch;
  }
  flush();
  return s;
}
}  // namespace

const OpDef& op_def(OpId op) {
  EMBER_INTERNAL_ASSERT(is_elementwise(op), "op_def of a non-elementwise op");
  return kOps[static_cast<int>(op)];
}

const OpInfo& op_info(OpId op) { return kInfos[static_cast<int>(op)]; }

const char* op_qualified_name(OpId op) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    v.reserve(kNumOps);
    for (int i = 0; i < kNumOps; ++i) v.push_back("aten::" + op_schema(OpId(i)).name);
    return v;
  }();
  return names[static_cast<size_t>(op)].c_str();
}

OpId op_from_id(std::string_view id) {
  for (int i = 0; i < kNumOps; ++i)
    if (id == kInfos[i].id) return OpId(i);
  return OpId::kCount;
}

const FunctionSchema& op_schema(OpId op) {
  static const std::vector<FunctionSchema> schemas = [] {
    std::vector<FunctionSchema> v;
    v.reserve(kNumOps);
    for (int i = 0; i < kNumOps; ++i) {
      OpId o = OpId(i);
      v.push_back(parse_schema(is_elementwise(o) ? elementwise_schema(o) : kInfos[i].schema));
    }
    return v;
  }();
  return schemas[static_cast<size_t>(op)];
}

bool strict_out_dtype(OpId op) {
  static constexpr OpId kStrict[] = {
      OpId::neg,      OpId::abs,         OpId::sign,     OpId::sgn,           OpId::square,
      OpId::floor,    OpId::ceil,        OpId::trunc,    OpId::frac,          OpId::bitwise_not,
      OpId::isposinf, OpId::isneginf,    OpId::signbit,  OpId::round_decimals, OpId::float_power,
      OpId::logsigmoid};
  for (OpId o : kStrict)
    if (o == op) return true;
  return false;
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
