#pragma once
/// Scalar types (dtypes), their C++ types, categories and type promotion.

#include <complex>
#include <cstdint>
#include <ostream>
#include <string>

#include "ember/half.h"

namespace ember {

template <class T>
using complex = std::complex<T>;

/// The element types (complex32 computes in complex64: src/core/complex_half.h). Order is ember's.
enum class ScalarType : int8_t {
  Bool = 0,
  Byte,        // uint8
  Char,        // int8
  Short,       // int16
  Int,         // int32
  Long,        // int64
  Half,        // float16
  BFloat16,    // bfloat16
  Float,       // float32
  Double,      // float64
  ComplexHalf, // complex32
  ComplexFloat,
  ComplexDouble,
  Undefined,
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kUInt8 = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kInt8 = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt16 = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kFloat64 = ScalarType::Double;
constexpr ScalarType kComplexHalf = ScalarType::ComplexHalf;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat;
constexpr ScalarType kComplexDouble = ScalarType::ComplexDouble;

/// libtorch's name: "Float", "Long", ...
const char* toString(ScalarType t);
/// PyTorch's Python name without the module: "float32", "int64", ...
const char* dtype_name(ScalarType t);
std::ostream& operator<<(std::ostream& os, ScalarType t);

/// Size of one element in bytes.
constexpr size_t elementSize(ScalarType t) {
  constexpr size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 4, 8, 16, 0};
  return sizes[static_cast<int>(t)];
}
constexpr bool isComplexType(ScalarType t) {
  return t == kComplexHalf || t == kComplexFloat || t == kComplexDouble;
}
constexpr bool isFloatingType(ScalarType t) {
  return t == kHalf || t == kBFloat16 || t == kFloat || t == kDouble;
}
/// Integral types; bool counts only when `include_bool`.
constexpr bool isIntegralType(ScalarType t, bool include_bool) {
  return (include_bool && t == kBool) || t == kByte || t == kChar || t == kShort || t == kInt ||
         t == kLong;
}
constexpr bool isSignedType(ScalarType t) { return t != kBool && t != kByte; }
/// Float types that are reduced-precision (computed in float32).
constexpr bool isReducedFloatingType(ScalarType t) { return t == kHalf || t == kBFloat16; }
/// float32 -> complex64, float64 -> complex128, float16 -> complex32; complex unchanged.
ScalarType toComplexType(ScalarType t);
/// complex64 -> float32, complex128 -> float64; others unchanged.
ScalarType toRealValueType(ScalarType t);
/// The smallest type both `a` and `b` convert to, as `torch.promote_types`.
ScalarType promoteTypes(ScalarType a, ScalarType b);
/// Whether a value of type `from` may be written into `to` by an op's out= (`torch.can_cast`).
bool canCast(ScalarType from, ScalarType to);

/// Default floating dtype for factories and for promoting Python floats (float32 at start).
ScalarType get_default_dtype();
/// Sets the default floating dtype; only float16/bfloat16/float32/float64 are accepted.
void set_default_dtype(ScalarType t);
/// The complex dtype matching the default floating dtype.
ScalarType get_default_complex_dtype();

template <class T>
struct CppTypeToScalarType;
#define EMBER_FORALL_SCALAR_TYPES(_)           \
  _(bool, Bool)                                \
  _(uint8_t, Byte)                             \
  _(int8_t, Char)                              \
  _(int16_t, Short)                            \
  _(int32_t, Int)                              \
  _(int64_t, Long)                             \
  _(::ember::Half, Half)                       \
  _(::ember::BFloat16, BFloat16)               \
  _(float, Float)                              \
  _(double, Double)                            \
  _(::ember::complex<float>, ComplexFloat)     \
  _(::ember::complex<double>, ComplexDouble)

#define EMBER_DEFINE_CPP_TO_ST(T, N) \
  template <>                        \
  struct CppTypeToScalarType<T> {    \
    static constexpr ScalarType value = ScalarType::N; \
  };
EMBER_FORALL_SCALAR_TYPES(EMBER_DEFINE_CPP_TO_ST)
#undef EMBER_DEFINE_CPP_TO_ST
/// `ScalarType` of C++ type `T` (e.g. `scalar_type_of<float> == kFloat`).
template <class T>
constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

}  // namespace ember
