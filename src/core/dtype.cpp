#include "ember/dtype.h"

#include <atomic>

#include "ember/error.h"

namespace ember {

namespace {
struct TypeNames {
  const char* lib;
  const char* py;
};
constexpr TypeNames kNames[] = {
    {"Bool", "bool"},         {"Byte", "uint8"},          {"Char", "int8"},
    {"Short", "int16"},       {"Int", "int32"},           {"Long", "int64"},
    {"Half", "float16"},      {"BFloat16", "bfloat16"},   {"Float", "float32"},
    {"Double", "float64"},    {"ComplexHalf", "complex32"}, {"ComplexFloat", "complex64"},
    {"ComplexDouble", "complex128"}, {"Undefined", "undefined"},
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumScalarTypes + 1);

std::atomic<ScalarType> g_default_dtype{kFloat};

// Rank within a category, for "wider wins" promotion.
int int_rank(ScalarType t) {
  switch (t) {
    case kChar: return 0;
    case kShort: return 1;
    case kInt: return 2;
    case kLong: return 3;
    default: return -1;
  }
}
}  // namespace

const char* toString(ScalarType t) { return kNames[static_cast<int>(t)].lib; }
const char* dtype_name(ScalarType t) { return kNames[static_cast<int>(t)].py; }
std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

ScalarType toComplexType(ScalarType t) {
  switch (t) {
    case kHalf: return kComplexHalf;
    case kBFloat16:  // bfloat16 has float32's range; there is no complex bfloat16
    case kFloat: return kComplexFloat;
    case kDouble: return kComplexDouble;
    case kComplexHalf:
    case kComplexFloat:
    case kComplexDouble: return t;
    default: EMBER_THROW(TypeError, "[toComplexType] no complex type for ", t);
  }
}

ScalarType toRealValueType(ScalarType t) {
  switch (t) {
    case kComplexHalf: return kHalf;
    case kComplexFloat: return kFloat;
    case kComplexDouble: return kDouble;
    default: return t;
  }
}

// Note [Type promotion]
// Categories bool < integral < floating < complex; within floats half+bfloat16 meet in float32;
// uint8 with int8 meets in int16; complex results take the wider of the two value types.
ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  if (isComplexType(a) || isComplexType(b)) {
    ScalarType ra = isComplexType(a) ? toRealValueType(a) : a;
    ScalarType rb = isComplexType(b) ? toRealValueType(b) : b;
    ScalarType r = promoteTypes(ra, rb);
    if (!isFloatingType(r)) r = isComplexType(a) ? toRealValueType(a) : toRealValueType(b);
    return toComplexType(r);
  }
  if (isFloatingType(a) && isFloatingType(b)) {
    if ((a == kHalf && b == kBFloat16) || (a == kBFloat16 && b == kHalf)) return kFloat;
    auto rank = [](ScalarType t) { return t == kDouble ? 3 : t == kFloat ? 2 : 1; };
    return rank(a) >= rank(b) ? a : b;
  }
  if (isFloatingType(a)) return a;
  if (isFloatingType(b)) return b;
  if (a == kBool) return b;
  if (b == kBool) return a;
  if (a == kByte || b == kByte) {
    ScalarType other = a == kByte ? b : a;
    return other == kChar ? kShort : other;
  }
  return int_rank(a) >= int_rank(b) ? a : b;
}

bool canCast(ScalarType from, ScalarType to) {
  // Same rule as torch.can_cast: no complex -> non-complex, no float -> integral,
  // no non-bool -> bool.
  if (isComplexType(from) && !isComplexType(to)) return false;
  if (isFloatingType(from) && isIntegralType(to, /*include_bool=*/true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(ScalarType t) {
  EMBER_CHECK_TYPE(isFloatingType(t),
                   "[set_default_dtype] only floating-point types are supported as the default "
                   "type, got ", t);
  g_default_dtype.store(t, std::memory_order_relaxed);
}

ScalarType get_default_complex_dtype() {
  ScalarType d = get_default_dtype();
  return d == kDouble ? kComplexDouble : d == kHalf ? kComplexHalf : kComplexFloat;
}

}  // namespace ember
