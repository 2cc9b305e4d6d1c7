#pragma once
/// Scalar: a number of any dtype category (bool, integer, floating, complex), as libtorch's.

#include <type_traits>

#include "ember/dtype.h"
#include "ember/error.h"

namespace ember {

/// A dynamically typed number. Integers are held as int64, floats as double, complex as
/// complex<double>; `type()` says which (kBool, kLong, kDouble, kComplexDouble).
class Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : tag_(kBool) { v_.i = v; }  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(kLong) {  // NOLINT
    v_.i = static_cast<int64_t>(v);
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : tag_(kDouble) {  // NOLINT
    v_.d = static_cast<double>(v);
  }
  Scalar(Half v) : Scalar(float(v)) {}      // NOLINT
  Scalar(BFloat16 v) : Scalar(float(v)) {}  // NOLINT
  template <class T>
  Scalar(complex<T> v) : tag_(kComplexDouble) {  // NOLINT
    v_.z[0] = double(v.real());
    v_.z[1] = double(v.imag());
  }

  /// kBool, kLong, kDouble or kComplexDouble.
  ScalarType type() const { return tag_; }
  bool isBoolean() const { return tag_ == kBool; }
  bool isIntegral(bool include_bool) const {
    return tag_ == kLong || (include_bool && tag_ == kBool);
  }
  bool isFloatingPoint() const { return tag_ == kDouble; }
  bool isComplex() const { return tag_ == kComplexDouble; }

  /// The value converted to `T` (complex to real drops the imaginary part, as C++ casts do).
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, complex<float>> || std::is_same_v<T, complex<double>>) {
      using V = typename T::value_type;
      switch (tag_) {
        case kComplexDouble: return T(V(v_.z[0]), V(v_.z[1]));
        case kDouble: return T(V(v_.d), V(0));
        default: return T(V(v_.i), V(0));
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      switch (tag_) {
        case kComplexDouble: return v_.z[0] != 0 || v_.z[1] != 0;
        case kDouble: return v_.d != 0;
        default: return v_.i != 0;
      }
    } else {
      switch (tag_) {
        case kComplexDouble: return static_cast<T>(v_.z[0]);
        case kDouble: return static_cast<T>(v_.d);
        default: return static_cast<T>(v_.i);
      }
    }
  }
  double toDouble() const { return to<double>(); }
  float toFloat() const { return to<float>(); }
  int64_t toLong() const { return to<int64_t>(); }
  int toInt() const { return to<int>(); }
  bool toBool() const { return to<bool>(); }
  complex<double> toComplexDouble() const { return to<complex<double>>(); }

  Scalar operator-() const;
  /// Same tag and value (NaN != NaN).
  bool equal(const Scalar& o) const;

 private:
  ScalarType tag_;
  union {
    int64_t i;
    double d;
    double z[2];
  } v_;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace ember
