#pragma once
// Helpers shared by the unary and binary op tests: small tensors from literal values and their
// values back as vectors (through float64 / int64 / complex128 casts).

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <limits>
#include <vector>

#include "core/tensor_util.h"
#include "ember/ember.h"

namespace ember_test {

using namespace ember;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A 1-D tensor of `dt` from doubles (through a float64 tensor and a cast).
inline Tensor F(const std::vector<double>& v, ScalarType dt = kFloat) {
  Tensor t = empty_tensor({int64_t(v.size())}, kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return dt == kDouble ? t : t.to(dt);
}
/// A 1-D tensor of `dt` from int64 values (the cast wraps, e.g. 255 -> int8 -1).
inline Tensor I(const std::vector<int64_t>& v, ScalarType dt = kLong) {
  Tensor t = empty_tensor({int64_t(v.size())}, kLong);
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return dt == kLong ? t : t.to(dt);
}
inline Tensor B(const std::vector<int64_t>& v) { return I(v, kBool); }
inline Tensor Z(const std::vector<std::complex<double>>& v, ScalarType dt = kComplexFloat) {
  Tensor t = empty_tensor({int64_t(v.size())}, kComplexDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<complex<double>>());
  return dt == kComplexDouble ? t : t.to(dt);
}

inline std::vector<double> dv(const Tensor& t) {
  Tensor c = t.to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}
inline std::vector<int64_t> iv(const Tensor& t) {
  Tensor c = t.to(kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}
inline std::vector<std::complex<double>> cv(const Tensor& t) {
  Tensor c = t.to(kComplexDouble).contiguous();
  auto* p = c.data_ptr<complex<double>>();
  return std::vector<std::complex<double>>(p, p + c.numel());
}

/// Exact comparison that also matches NaN with NaN and tells -0 from +0.
inline void expect_same(const std::vector<double>& got, const std::vector<double>& want,
                        const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": got " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " sign at " << i;
    }
  }
}

}  // namespace ember_test
