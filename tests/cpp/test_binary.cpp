// Binary and ternary elementwise ops: edge cases against values printed by PyTorch 1.13 (NaN,
// signed zeros, infinities, integer wrap-around, division by zero, shifts, pow, clamp, where,
// isclose), out= and in-place forms, broadcasting and exact exception types. The exhaustive
// dtype x op sweep against torch lives in test_ops_oracle.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "core/tensor_util.h"
#include "elementwise_test_util.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember_test;

namespace {



void expect_near(const std::vector<double>& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], rel * std::max(1.0, std::abs(want[i]))) << "at " << i;
    }
  }
}

using I64 = std::vector<int64_t>;

/// A non-contiguous view (every other element of a larger buffer) holding `t`'s values, so that
/// kernels take their strided scalar loop.
Tensor stack_like_strided(const Tensor& t) {
  Tensor big = empty_tensor({2 * t.numel()}, t.dtype());
  Tensor v = big.slice(0, 0, std::nullopt, 2);
  v.copy_(t);
  return v;
}

}  // namespace

// ---- division family ----

TEST(BinaryDiv, TrueDivideFloatSpecials) {
  Tensor r = div(F({1, -1, 0, -0.0, kInf, 6}), F({0, 0, 0, 1, kInf, -4}));
  EXPECT_EQ(r.dtype(), kFloat);
  expect_same(dv(r), {kInf, -kInf, kNaN, -0.0, kNaN, -1.5});
  // Integer and bool inputs promote to the default float dtype.
  Tensor q = I({1, 2, 3}) / 2;
  EXPECT_EQ(q.dtype(), kFloat);
  expect_same(dv(q), {0.5, 1, 1.5});
  expect_same(dv(2 / I({1, 2, 4})), {2, 1, 0.5});
  expect_same(dv(true_divide(B({1}), B({0}))), {kInf});
  EXPECT_EQ(div(I({1}, kInt), F({2}, kDouble)).dtype(), kDouble);
}

TEST(BinaryDiv, ComplexDivisionByZeroIsNaN) {
  // PyTorch 1.13 divides complex numbers with the textbook formula: 1/0j is nan+nanj.
  auto r = cv(div(Z({{1, 1}, {1, 0}, {0, 0}, {3, 4}}), Z({{0, 0}, {0, 0}, {0, 0}, {1, 2}})));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(r[i].real()) && std::isnan(r[i].imag()));
  EXPECT_NEAR(r[3].real(), 2.2, 1e-6);
  EXPECT_NEAR(r[3].imag(), -0.4, 1e-6);
}

TEST(BinaryDiv, RoundingModes) {
  Tensor a = I({7, -7, 7, -7}), b = I({2, 2, -2, -2});
  Tensor t = div(a, b, "trunc"), f = div(a, b, "floor");
  EXPECT_EQ(t.dtype(), kLong);
  EXPECT_EQ(f.dtype(), kLong);
  EXPECT_EQ(iv(t), (I64{3, -3, -3, 3}));
  EXPECT_EQ(iv(f), (I64{3, -4, -4, 3}));
  EXPECT_EQ(iv(floor_divide(a, b)), (I64{3, -4, -4, 3}));
  EXPECT_EQ(div(a, 2, "trunc").dtype(), kLong);
  EXPECT_EQ(div(a, 2.0, "trunc").dtype(), kFloat);
  expect_same(dv(div(F({5, -5, 1, -1, 0}), F({3, 3, 0, 0, -3}), "trunc")),
              {1, -1, kInf, -kInf, -0.0});
  // PyTorch raises RuntimeError (not ValueError) for a bad rounding_mode.
  try {
    div(a, b, "round");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  EXPECT_THROW(a.div(2, "bogus"), Error);
}

TEST(BinaryDiv, FloorDivideFloatMatchesPython) {
  std::vector<double> a = {5, -5, 5, -5, 1, -1, 0, 0, 7.5, -7.5},
                      b = {3, 3, -3, -3, 0, 0, 0, -3, 2, 2};
  std::vector<double> want = {1, -2, -2, 1, kInf, -kInf, kNaN, -0.0, 3, -4};
  expect_same(dv(floor_divide(F(a), F(b))), want, "float");
  expect_same(dv(div(F(a, kDouble), F(b, kDouble), "floor")), want, "double");
  expect_same(dv(floor_divide(F(a, kHalf), F(b, kHalf))), want, "half");
}

TEST(BinaryDiv, IntegerDivisionByZeroThrows) {
  for (ScalarType dt : {kByte, kChar, kShort, kInt, kLong}) {
    Tensor a = I({1, 2, 3}, dt), z = I({1, 0, 1}, dt);
    EXPECT_THROW(floor_divide(a, z), Error) << dt;
    EXPECT_THROW(div(a, z, "trunc"), Error) << dt;
    EXPECT_THROW(div(a, z, "floor"), Error) << dt;
    EXPECT_THROW(remainder(a, z), Error) << dt;
    EXPECT_THROW(fmod(a, z), Error) << dt;
    EXPECT_THROW(remainder(a, 0), Error) << dt;
  }
  try {
    floor_divide(I({1}), I({0}));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ZeroDivisionError"), std::string::npos);
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  // The error also comes out of the parallel path (large input, one zero divisor).
  Tensor big = I(std::vector<int64_t>(300000, 3));
  Tensor den = I(std::vector<int64_t>(300000, 1));
  den.data_ptr<int64_t>()[250000] = 0;
  EXPECT_THROW(remainder(big, den), Error);
}

TEST(BinaryDiv, IntegerMinByMinusOneWraps) {
  // x86 traps on INT_MIN / -1; PyTorch's result wraps (and must not crash here).
  EXPECT_EQ(iv(floor_divide(I({-128}, kChar), I({-1}, kChar))), (I64{-128}));
  EXPECT_EQ(iv(remainder(I({-128}, kChar), I({-1}, kChar))), (I64{0}));
  const int64_t mn = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(iv(div(I({mn}), I({-1}), "trunc")), (I64{mn}));
  EXPECT_EQ(iv(div(I({mn}), I({-1}), "floor")), (I64{mn}));
  EXPECT_EQ(iv(fmod(I({mn}), I({-1}))), (I64{0}));
  EXPECT_EQ(iv(floor_divide(I({INT32_MIN}, kInt), I({-1}, kInt))), (I64{INT32_MIN}));
}

TEST(BinaryDiv, RemainderAndFmodSigns) {
  Tensor a = I({7, -7, 7, -7}), b = I({2, 2, -2, -2});
  EXPECT_EQ(iv(remainder(a, b)), (I64{1, 1, -1, -1}));
  EXPECT_EQ(iv(fmod(a, b)), (I64{1, -1, 1, -1}));
  EXPECT_EQ(iv(a % b), (I64{1, 1, -1, -1}));
  EXPECT_EQ(iv(remainder(I({5}, kByte), I({3}, kByte))), (I64{2}));
  expect_same(dv(remainder(F({5, -5, 5, -5, 0, -0.0}), F({kInf, kInf, -kInf, -kInf, 3, 3}))),
              {5, kInf, -kInf, -5, 0, -0.0});
  expect_same(dv(remainder(F({5, -5, 5, -5, -0.0}), F({3, 3, -3, -3, -3}))), {2, 1, -1, -2, -0.0});
  expect_same(dv(fmod(F({5, -5, 5, -5}), F({3, 3, -3, -3}))), {2, -2, 2, -2});
  expect_same(dv(remainder(F({-7.5, 7.5}), F({2, -2}))), {0.5, -0.5});
  expect_same(dv(fmod(F({1, kInf}), F({0, 2}))), {kNaN, kNaN});
}

// Debian's SLEEF vector fmod returns NaN when |a / b| is huge; the kernels must not.
TEST(BinaryDiv, FmodHugeRatioVectorPath) {
  std::vector<double> a(37, 1e30), b(37, 1e-30), want(37, double(std::fmod(1e30f, 1e-30f)));
  expect_same(dv(fmod(F(a), F(b))), want, "float fmod");
  expect_same(dv(remainder(F(a), F(b))), want, "float remainder");
  std::vector<double> a2(37, 3.0), b2(37, 1e-310), want2(37, std::fmod(3.0, 1e-310));
  expect_same(dv(fmod(F(a2, kDouble), F(b2, kDouble))), want2, "double fmod");
  std::vector<double> a3(37, 0.5), b3(37, 7.346839692639297e-40);  // a bfloat16 subnormal
  expect_same(dv(fmod(F(a3, kBFloat16), F(b3, kBFloat16))), std::vector<double>(37, 0.0), "bf16");
  EXPECT_FALSE(std::isnan(dv(floor_divide(F(a), F(b)))[0]));
}

// Float kernels have a vector body and a scalar tail / strided loop: both must agree.
TEST(BinaryDiv, VectorAndScalarPathsAgree) {
  std::vector<double> a, b;
  for (int i = 0; i < 101; ++i) {
    a.push_back((i % 13 - 6) * 1.75 + (i % 5 == 0 ? -0.0 : 0.0));
    b.push_back(i % 11 == 0 ? 0.0 : (i % 7 - 3.5) * (i % 3 == 0 ? -1 : 1));
  }
  a[7] = kNaN;
  b[9] = kInf;
  for (ScalarType dt : {kFloat, kDouble}) {
    Tensor x = F(a, dt), y = F(b, dt);
    // Strided views take the scalar loop.
    Tensor xs = stack_like_strided(x), ys = stack_like_strided(y);
    expect_same(dv(floor_divide(x, y)), dv(floor_divide(xs, ys)), "floor_divide");
    expect_same(dv(remainder(x, y)), dv(remainder(xs, ys)), "remainder");
    expect_same(dv(fmod(x, y)), dv(fmod(xs, ys)), "fmod");
    expect_same(dv(div(x, y, "trunc")), dv(div(xs, ys, "trunc")), "trunc");
    expect_same(dv(minimum(x, y)), dv(minimum(xs, ys)), "minimum");
    expect_same(dv(maximum(x, y)), dv(maximum(xs, ys)), "maximum");
    expect_same(dv(fmin(x, y)), dv(fmin(xs, ys)), "fmin");
    expect_same(dv(fmax(x, y)), dv(fmax(xs, ys)), "fmax");
    expect_same(dv(copysign(x, y)), dv(copysign(xs, ys)), "copysign");
    expect_same(dv(clamp(x, -3.0, 4.0)), dv(clamp(xs, -3.0, 4.0)), "clamp");
    expect_same(dv(lerp(x, y, 0.25)), dv(lerp(xs, ys, 0.25)), "lerp");
    expect_near(dv(xlogy(x, y)), dv(xlogy(xs, ys)), 1e-6);
    expect_near(dv(atan2(x, y)), dv(atan2(xs, ys)), 1e-6);
    expect_near(dv(pow(x, y)), dv(pow(xs, ys)), 1e-5);
  }
}

// ---- pow ----

TEST(BinaryPow, IntegerEdgeCases) {
  // Tensor exponents: negative powers truncate (1, +-1 or 0), as PyTorch's powi.
  EXPECT_EQ(iv(pow(I({2, 1, -1, -1, 0}), I({-1, -3, -3, -2, -1}))), (I64{0, 1, -1, 1, 0}));
  EXPECT_EQ(iv(pow(I({2, 3}, kByte), I({8, 3}, kByte))), (I64{0, 27}));
  EXPECT_EQ(iv(pow(I({3}, kChar), I({5}, kChar))), (I64{-13}));
  EXPECT_EQ(iv(pow(I({-2}, kInt), I({31}, kInt))), (I64{INT32_MIN}));
  EXPECT_EQ(iv(pow(I({3}), I({40}))), (I64{-6289078614652622815LL}));
  EXPECT_EQ(iv(pow(I({0, 5, -3}), I({0, 0, 3}))), (I64{1, 1, -27}));
  EXPECT_EQ(pow(I({2}), I({3})).dtype(), kLong);
  Tensor f = pow(I({2, 3}), 2.5);
  EXPECT_EQ(f.dtype(), kFloat);
  expect_near(dv(f), {5.656854, 15.588457}, 1e-6);
  EXPECT_THROW(pow(B({1}), B({1})), Error);  // no bool kernel, as PyTorch
}

TEST(BinaryPow, FloatSpecials) {
  expect_same(dv(pow(F({0, -1, kNaN, 1, 2, 0}), F({0, kInf, 0, kNaN, -2, -1}))),
              {1, 1, 1, 1, 0.25, kInf});
  Tensor fp = float_power(I({2}), I({-2}));
  EXPECT_EQ(fp.dtype(), kDouble);
  expect_same(dv(fp), {0.25});
  EXPECT_EQ(float_power(F({2}), Z({{0, 1}})).dtype(), kComplexDouble);
  EXPECT_EQ(float_power(F({2}, kHalf), 2).dtype(), kDouble);
  auto c = cv(pow(Z({{1, 1}}), Z({{2, 0}})));
  EXPECT_NEAR(c[0].real(), 0, 1e-6);
  EXPECT_NEAR(c[0].imag(), 2, 1e-6);
}

// ---- min / max ----

TEST(BinaryMinMax, NaNHandling) {
  std::vector<double> a = {1, kNaN, 3, kNaN}, b = {2, 1, kNaN, kNaN};
  expect_same(dv(minimum(F(a), F(b))), {1, kNaN, kNaN, kNaN});
  expect_same(dv(maximum(F(a), F(b))), {2, kNaN, kNaN, kNaN});
  expect_same(dv(fmin(F(a), F(b))), {1, 1, 3, kNaN});
  expect_same(dv(fmax(F(a), F(b))), {2, 1, 3, kNaN});
  expect_same(dv(maximum(F(a, kHalf), F(b, kHalf))), {2, kNaN, kNaN, kNaN});
  expect_same(dv(minimum(F({0, -0.0}), F({-0.0, 0}))), {0, -0.0});
  EXPECT_EQ(iv(maximum(I({-5, 7}, kChar), I({3, -9}, kChar))), (I64{3, 7}));
  EXPECT_EQ(iv(minimum(B({1, 0, 1}), B({0, 0, 1}))), (I64{0, 0, 1}));
  EXPECT_EQ(iv(fmax(B({1, 0, 0}), B({0, 0, 1}))), (I64{1, 0, 1}));
  EXPECT_THROW(maximum(Z({{1, 0}}), Z({{1, 0}})), Error);
}

// ---- bitwise, shifts, logical, comparisons ----

TEST(BinaryBitwise, ValuesAndDtypes) {
  EXPECT_EQ(iv(bitwise_xor(I({5, -1}), I({3, 1}))), (I64{6, -2}));
  EXPECT_EQ(iv(I({12}) & I({10})), (I64{8}));
  EXPECT_EQ(iv(I({12}, kByte) | I({3}, kByte)), (I64{15}));
  Tensor bb = bitwise_and(B({1, 1}), B({0, 1}));
  EXPECT_EQ(bb.dtype(), kBool);
  EXPECT_EQ(iv(bb), (I64{0, 1}));
  EXPECT_THROW(bitwise_and(F({1}), F({1})), Error);
  EXPECT_THROW(bitwise_left_shift(B({1}), B({1})), Error);
}

TEST(BinaryBitwise, ShiftsByLargeAmounts) {
  // Shifting by >= the bit width or by a negative amount: left gives 0, right the sign fill.
  EXPECT_EQ(iv(bitwise_left_shift(I({1, -1, 5, -128}, kChar), I({7, 7, 7, 7}, kChar))),
            (I64{-128, -128, -128, 0}));
  for (int64_t s : {8, 9, 31, 64, 100, -1}) {
    EXPECT_EQ(iv(bitwise_left_shift(I({1, -1, 5, -128}, kChar), I({s, s, s, s}, kChar))),
              (I64{0, 0, 0, 0}))
        << s;
    EXPECT_EQ(iv(bitwise_right_shift(I({1, -1, 5, -128}, kChar), I({s, s, s, s}, kChar))),
              (I64{0, -1, 0, -1}))
        << s;
  }
  EXPECT_EQ(iv(I({1, 200}, kByte) >> I({8, 255}, kByte)), (I64{0, 0}));
  EXPECT_EQ(iv(I({1, 200}, kByte) << I({7, 9}, kByte)), (I64{128, 0}));
  EXPECT_EQ(iv(I({1, -4}, kInt) << I({31, 1}, kInt)), (I64{INT32_MIN, -8}));
  EXPECT_EQ(iv(I({1, -4}, kInt) >> I({32, 1}, kInt)), (I64{0, -2}));
  EXPECT_EQ(iv(I({1, -1}) << I({63, 64})), (I64{std::numeric_limits<int64_t>::min(), 0}));
  EXPECT_EQ(iv(I({-1, 8}) >> I({64, 63})), (I64{-1, 0}));
  EXPECT_EQ(iv(I({-1}) >> 200), (I64{-1}));
}

TEST(BinaryLogical, AnyDtypeToBool) {
  Tensor r = logical_or(F({0, kNaN, 0}), F({0, 0, -0.0}));
  EXPECT_EQ(r.dtype(), kBool);
  EXPECT_EQ(iv(r), (I64{0, 1, 0}));
  EXPECT_EQ(iv(logical_and(Z({{0, 1}, {0, 0}}), I({1, 1}))), (I64{1, 0}));
  EXPECT_EQ(iv(logical_xor(I({3, 0, 0}, kChar), F({0, 0, 2}))), (I64{1, 0, 1}));
  // In-place keeps self's dtype.
  Tensor x = F({0, 2, 3});
  x.logical_and_(F({1, 1, 0}));
  EXPECT_EQ(x.dtype(), kFloat);
  expect_same(dv(x), {0, 1, 0});
}

TEST(BinaryCompare, ValuesDtypesAndComplex) {
  Tensor a = F({1, kNaN, 3}), b = F({1, kNaN, 2});
  EXPECT_EQ(iv(eq(a, b)), (I64{1, 0, 0}));
  EXPECT_EQ(iv(ne(a, b)), (I64{0, 1, 1}));
  EXPECT_EQ(iv(a >= b), (I64{1, 0, 1}));
  EXPECT_EQ(iv(I({1, 2, 3}) < 2.5), (I64{1, 1, 0}));
  EXPECT_EQ(iv(eq(Z({{1, 2}, {1, 2}}), Z({{1, 2}, {1, -2}}))), (I64{1, 0}));
  EXPECT_THROW(lt(Z({{1, 0}}), Z({{2, 0}})), Error);
  Tensor z = F({1, 2, 3});
  z.lt_(2.0);
  EXPECT_EQ(z.dtype(), kFloat);
  expect_same(dv(z), {1, 0, 0});
  EXPECT_EQ(iv(gt(I({-1}, kChar), I({255}, kByte))), (I64{0}));  // promotes to int16
}

// ---- float-only binary ops ----

TEST(BinaryFloatOps, Specials) {
  expect_same(dv(xlogy(F({0, 0, 1, 0, 0}), F({kNaN, 0, 0, kInf, 5}))), {kNaN, 0, -kInf, 0, 0});
  expect_near(dv(xlogy(F({2}), F({3}))), {2.1972246}, 1e-6);
  EXPECT_EQ(xlogy(I({1}), I({1})).dtype(), kFloat);
  expect_near(dv(atan2(I({1, 0}), I({0, 0}))), {M_PI / 2, 0}, 1e-6);
  expect_near(dv(atan2(F({0, -0.0}), F({-0.0, -0.0}))), {M_PI, -M_PI}, 1e-6);
  expect_same(dv(hypot(F({kInf, kNaN, 3}), F({kNaN, kInf, 4}))), {kInf, kInf, 5});
  expect_same(dv(hypot(F({3}, kBFloat16), F({4}, kBFloat16))), {5});
  expect_same(dv(copysign(I({1, 2}), F({-0.0, 0}))), {-1, 2});
  expect_same(dv(copysign(I({1, 2}), -1)), {-1, -2});
  expect_same(dv(nextafter(F({1}), F({2}))), {1.0000001192092896});
  expect_same(dv(nextafter(F({0}, kDouble), F({1}, kDouble))), {5e-324});
  expect_same(dv(nextafter(F({1, 0}, kBFloat16), F({2, -1}, kBFloat16))),
              {1.0078125, -9.183549615799121e-41});
  EXPECT_THROW(hypot(F({1}, kHalf), F({1}, kHalf)), Error);  // not in PyTorch 1.13 either
  EXPECT_THROW(atan2(F({1}, kHalf), F({1}, kHalf)), Error);
  EXPECT_THROW(hypot(I({3}), I({4})), Error);
}

// ---- integer wrap-around ----

TEST(BinaryArith, IntegerOverflowWraps) {
  EXPECT_EQ(iv(add(I({INT32_MAX}, kInt), 1)), (I64{INT32_MIN}));
  EXPECT_EQ(iv(mul(I({100}, kChar), 3)), (I64{44}));
  EXPECT_EQ(iv(sub(I({0}, kByte), I({1}, kByte))), (I64{255}));
  const int64_t mx = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(iv(add(I({mx}), I({1}))), (I64{std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(iv(mul(I({mx}), I({2}))), (I64{-2}));
  EXPECT_EQ(iv(addcmul(I({1}, kShort), I({300}, kShort), I({300}, kShort))), (I64{int16_t(90001)}));
}

// ---- clamp ----

TEST(BinaryClamp, ScalarBounds) {
  expect_same(dv(clamp(F({1, 5, kNaN, -kInf}), 2.0, 4.0)), {2, 4, kNaN, 2});
  // min > max: every element becomes max.
  expect_same(dv(clamp(F({1, 5, kNaN}), 6.0, 2.0)), {2, 2, kNaN});
  // A NaN bound alone is ignored; with both bounds it makes everything NaN.
  expect_same(dv(clamp(F({1, 5, kNaN}), kNaN)), {1, 5, kNaN});
  expect_same(dv(clamp(F({1, 5}), std::nullopt, kNaN)), {1, 5});
  expect_same(dv(clamp(F({1, 5, kNaN}), kNaN, 2.0)), {kNaN, kNaN, kNaN});
  expect_same(dv(F({1, 5}).clamp_min(3)), {3, 5});
  expect_same(dv(F({1, 5}).clamp_max(3)), {1, 3});
  // Integer input with a float bound computes in float.
  Tensor r = clamp(I({1, 5, 9}), 2.5, 7);
  EXPECT_EQ(r.dtype(), kFloat);
  expect_same(dv(r), {2.5, 5, 7});
  EXPECT_EQ(clamp(B({1, 0}), 0, 1).dtype(), kLong);
  EXPECT_EQ(iv(clamp(I({1, 2, 3}, kByte), 2, 2)), (I64{2, 2, 2}));
  EXPECT_EQ(iv(clamp(I({-5, 0, 5}, kChar), -1, 1)), (I64{-1, 0, 1}));
}

TEST(BinaryClamp, Errors) {
  EXPECT_THROW(clamp(F({1}), std::optional<Scalar>(), std::optional<Scalar>()), Error);
  EXPECT_THROW(clamp(F({1}), std::optional<Tensor>(), std::optional<Tensor>()), Error);
  EXPECT_THROW(clamp(Z({{1, 0}}), 0, 1), Error);
  EXPECT_THROW(clamp(I({1, 2, 3}, kByte), -1, 300), Error);  // 300 overflows uint8
  EXPECT_THROW(clamp(B({1}), true, false), Error);           // no bool kernel (PyTorch too)
  EXPECT_THROW(clamp(F({1}, kHalf), 0, 1), Error);           // no half kernel (PyTorch too)
  Tensor x = I({1, 5, 9});
  EXPECT_THROW(x.clamp_(2.5, 7), Error);  // float result into an int64 tensor
  EXPECT_EQ(iv(x), (I64{1, 5, 9}));
}

TEST(BinaryClamp, TensorBounds) {
  expect_same(dv(clamp(F({1, 5, kNaN}), std::optional<Tensor>(F({kNaN}).squeeze()),
                       std::optional<Tensor>(F({2}).squeeze()))),
              {kNaN, kNaN, kNaN});
  expect_same(dv(clamp(F({1, 5, kNaN}), std::optional<Tensor>(), F({2, 2, 2}))), {1, 2, kNaN});
  Tensor r = clamp(I({1, 5, 9}), std::optional<Tensor>(F({7.5})), F({2.5}));
  EXPECT_EQ(r.dtype(), kFloat);
  expect_same(dv(r), {2.5, 2.5, 2.5});
  EXPECT_EQ(iv(clamp(I({1, 5, 9}), std::optional<Tensor>(I({7, 7, 7})), I({2, 2, 2}))),
            (I64{2, 2, 2}));
  // Only one bound given: maximum / minimum, which also serve half.
  expect_same(dv(clamp(F({1, 2}, kHalf), std::optional<Tensor>(F({1.5}).squeeze()))), {1.5, 2});
  Tensor x = F({-1, 0.5, 3});
  x.clamp_(std::optional<Tensor>(F({0, 0, 0})), std::optional<Tensor>(F({1, 1, 1})));
  expect_same(dv(x), {0, 0.5, 1});
  Tensor out = empty_tensor({0}, kFloat);
  clamp_out(out, F({-1, 2}), std::optional<Scalar>(0), std::optional<Scalar>(1));
  expect_same(dv(out), {0, 1});
}

// ---- lerp, addcmul, addcdiv ----

TEST(BinaryTernary, Lerp) {
  expect_near(dv(lerp(F({1, 2}), F({3, 4}), 0.7)), {2.4, 3.4}, 1e-6);
  expect_same(dv(lerp(F({1, 1}), F({3, 3}), F({1, 0}))), {3, 1});
  // weight == 1 gives end exactly (the second formula).
  expect_same(dv(lerp(F({0.1}), F({0.7}), 1.0)), dv(F({0.7})));
  expect_same(dv(lerp(F({1}), F({3, 5})[0].unsqueeze(0), -1.0)), {-1});
  // Real weights below 0.5 (negative ones included) take start + w * (end - start).
  expect_same(dv(lerp(F({0.5}), F({kInf}), -1.0)), {-kInf});
  expect_same(dv(lerp(F(std::vector<double>(37, 0.5)), F(std::vector<double>(37, kInf)),
                      F(std::vector<double>(37, -1.0)))),
              std::vector<double>(37, -kInf));
  Tensor s = F({0, 0});
  s.lerp_(F({2, 4}), 0.5);
  expect_same(dv(s), {1, 2});
  EXPECT_THROW(lerp(F({1}), F({1}, kDouble), 0.5), Error);
  EXPECT_THROW(lerp(F({1}), F({1}), F({0.5}, kDouble).squeeze()), Error);
  EXPECT_THROW(lerp(I({1}), I({2}), 0.5), Error);
  EXPECT_THROW(lerp(F({1}, kHalf), F({2}, kHalf), 0.5), Error);
  auto c = cv(lerp(Z({{0, 0}}), Z({{2, 2}}), 0.5));
  EXPECT_NEAR(c[0].real(), 1, 1e-6);
  EXPECT_NEAR(c[0].imag(), 1, 1e-6);
}

TEST(BinaryTernary, AddcmulAddcdiv) {
  expect_same(dv(addcmul(F({1, 2}), F({3, 4}), F({5, 6}), 0.5)), {8.5, 14});
  expect_same(dv(addcdiv(F({1, 2}), F({3, 4}), F({2, 8}), 2)), {4, 3});
  EXPECT_EQ(iv(addcmul(I({1, 2}), I({3, 4}), I({3, 4}), 2)), (I64{19, 34}));
  EXPECT_EQ(addcmul(F({1}), F({3}), F({3}, kDouble)).dtype(), kDouble);
  EXPECT_EQ(addcmul(F({1}), F({3}), F({3}, kDouble).squeeze()).dtype(), kFloat);
  EXPECT_THROW(addcdiv(I({1}), I({3}), I({3})), Error);
  EXPECT_THROW(addcdiv(F({1}), I({3}), I({3})), Error);
  expect_same(dv(addcdiv(F({1, 2}), F({3, 4}), I({3, 4}))), {2, 3});
  EXPECT_THROW(addcmul(F({1}), F({3}), F({3}), Scalar(std::complex<double>(0, 1))), Error);
  Tensor x = F({1, 1});
  x.addcmul_(F({2, 3}), F({4, 5}));
  expect_same(dv(x), {9, 16});
  x.addcdiv_(F({2, 3}), F({4, 6}), -2);
  expect_same(dv(x), {8, 15});
}

// ---- where ----

TEST(BinaryWhere, BroadcastingScalarsAndDtypes) {
  Tensor cond = B({1, 0}).unsqueeze(1);  // [2, 1]
  Tensor r = where(cond, F({1, 2, 3}), 0);
  EXPECT_EQ(r.sizes().vec(), (I64{2, 3}));
  EXPECT_EQ(r.dtype(), kFloat);
  expect_same(dv(r), {1, 2, 3, 0, 0, 0});
  Tensor c3 = B({1, 0, 1});
  EXPECT_EQ(where(c3, 1.0, 0).dtype(), kFloat);
  EXPECT_EQ(where(c3, 1, 0).dtype(), kLong);
  EXPECT_EQ(where(c3, true, false).dtype(), kBool);
  expect_same(dv(where(c3, I({1, 2, 3}), 2.5)), {1, 2.5, 3});
  EXPECT_EQ(where(c3, I({1, 2, 3}, kChar), F({1, 2, 3}, kHalf)).dtype(), kHalf);
  EXPECT_EQ(where(c3, I({1, 2, 3}, kChar), I({5}).squeeze()).dtype(), kChar);
  expect_same(dv(F({1, 2, 3}).where(c3, F({-1, -2, -3}))), {1, -2, 3});
  auto z = cv(where(c3, Z({{1, 1}, {2, 2}, {3, 3}}), 0));
  EXPECT_EQ(z[1], std::complex<double>(0, 0));
  EXPECT_EQ(z[2], std::complex<double>(3, 3));
  // uint8 conditions are still accepted by PyTorch 1.13 (deprecated); others are errors.
  EXPECT_EQ(iv(where(I({1, 0, 7}, kByte), I({1, 2, 3}), 5)), (I64{1, 5, 3}));
  EXPECT_THROW(where(I({1, 0, 1}), I({1, 2, 3}), 5), Error);
  EXPECT_THROW(where(F({1, 0, 1}), 1, 0), Error);
  EXPECT_THROW(where(B({1, 0}), F({1, 2, 3}), 0), Error);  // not broadcastable
  EXPECT_EQ(where(B({}), F({}), F({})).numel(), 0);
}

// ---- isclose / allclose / equal ----

TEST(BinaryClose, IsCloseAllCloseEqual) {
  EXPECT_EQ(iv(isclose(F({1, kInf, -kInf, kNaN, 1}), F({1 + 1e-6, kInf, kInf, kNaN, 1.1}))),
            (I64{1, 1, 0, 0, 0}));
  EXPECT_EQ(iv(isclose(F({kInf, -kInf, kNaN}), F({kInf, kInf, kNaN}), 1e-5, 1e-8, true)),
            (I64{1, 0, 1}));
  EXPECT_EQ(iv(isclose(F({1, 2}), F({1.05, 2}), 0, 0.1)), (I64{1, 1}));
  EXPECT_EQ(iv(isclose(F({1, 2}), F({1.05, 2}), 0, 0)), (I64{0, 1}));
  // Integers compare in float: no wrap-around in the difference.
  EXPECT_EQ(iv(isclose(I({-128}, kChar), I({127}, kChar), 1e-5, 10)), (I64{0}));
  EXPECT_EQ(iv(isclose(I({1, 2, 100}), I({1, 3, 101}), 0.01, 0)), (I64{1, 0, 1}));
  EXPECT_EQ(iv(isclose(B({1, 0}), B({0, 0}))), (I64{0, 1}));
  EXPECT_EQ(iv(isclose(B({1, 0}), B({0, 0}), 1e-5, 1)), (I64{1, 1}));
  EXPECT_EQ(iv(isclose(Z({{kNaN, 0}}), Z({{0, kNaN}}), 1e-5, 1e-8, true)), (I64{1}));
  EXPECT_EQ(iv(isclose(Z({{kNaN, 0}}), Z({{kNaN, 0}}))), (I64{0}));
  EXPECT_EQ(isclose(F({1, 2}), F({1, 2}).unsqueeze(1)).sizes().vec(), (I64{2, 2}));
  EXPECT_THROW(isclose(I({1}), F({1})), Error);
  EXPECT_THROW(isclose(F({1}), F({1}), -1), Error);
  EXPECT_THROW(isclose(F({1}), F({1}), 1e-5, -1), Error);

  EXPECT_TRUE(allclose(F({1, 2}), F({1, 2 + 1e-6})));
  EXPECT_FALSE(F({1, 2}).allclose(F({1, 2.1})));
  EXPECT_TRUE(allclose(F({kNaN}), F({kNaN}), 1e-5, 1e-8, true));
  EXPECT_THROW(allclose(F({1}), I({1})), Error);

  EXPECT_TRUE(equal(F({1, 2}), I({1, 2})));  // promotes
  EXPECT_FALSE(equal(F({1, 2}), F({1, 2, 3})));
  EXPECT_FALSE(equal(F({kNaN}), F({kNaN})));
  EXPECT_FALSE(F({1, 2}).equal(F({1, 2}).unsqueeze(0)));
  EXPECT_TRUE(equal(F({}), F({})));
}

// ---- out= and in-place forms, broadcasting, errors ----

TEST(BinaryForms, OutAndInPlace) {
  Tensor out = empty_tensor({0}, kFloat);
  div_out(out, I({1, 2}), I({2, 2}));
  EXPECT_EQ(out.sizes().vec(), (I64{2}));
  expect_same(dv(out), {0.5, 1});
  Tensor iout = empty_tensor({2}, kLong);
  EXPECT_THROW(div_out(iout, I({1, 2}), I({2, 2})), Error);  // float result into int64
  div_out(iout, I({7, -7}), I({2, 2}), "floor");
  EXPECT_EQ(iv(iout), (I64{3, -4}));
  Tensor wrong = empty_tensor({3}, kFloat);
  EXPECT_THROW(remainder_out(wrong, F({1, 2}), F({1, 2})), Error);
  Tensor dout = empty_tensor({2}, kDouble);
  maximum_out(dout, F({1, 5}), F({3, 2}));  // float result cast into a float64 out=
  expect_same(dv(dout), {3, 5});

  Tensor y = I({7, 8, 9});
  y.div_(2, "floor");
  EXPECT_EQ(iv(y), (I64{3, 4, 4}));
  EXPECT_THROW(y.div_(2), Error);  // true division of an int64 tensor in place
  Tensor x = F({1, 2, 3});
  x.div_(F({2}));
  expect_same(dv(x), {0.5, 1, 1.5});
  x.pow_(2);
  expect_same(dv(x), {0.25, 1, 2.25});
  x /= 0.5;
  expect_same(dv(x), {0.5, 2, 4.5});
  uint32_t v0 = x._version();
  x.fmod_(2);
  EXPECT_GT(x._version(), v0);
  expect_same(dv(x), {0.5, 0, 0.5});
}

TEST(BinaryForms, BroadcastingAndOverlapErrors) {
  Tensor a = F({1, 2, 3}), m = F({1, 2, 3, 4, 5, 6}).view({2, 3});
  EXPECT_EQ(atan2(a, m).sizes().vec(), (I64{2, 3}));
  EXPECT_THROW(remainder(F({1, 2, 3}), F({1, 2, 3, 4})), Error);
  EXPECT_THROW(a.mul_(m), Error);  // in-place result must keep self's shape
  // Writing into an expanded view (several elements share memory) is refused.
  Tensor e = F({1}).expand({3});
  EXPECT_THROW(e.mul_(F({1, 2, 3})), Error);
  EXPECT_THROW(e.clamp_(0, 1), Error);
  EXPECT_THROW(e.lerp_(F({1, 2, 3}), 0.5), Error);
  EXPECT_THROW(e.addcmul_(F({1, 2, 3}), F({1, 2, 3})), Error);
  EXPECT_THROW(e.div_(2, "floor"), Error);
  // Partial overlap of out= and an input.
  Tensor base = F({1, 2, 3, 4});
  Tensor lo = base.slice(0, 0, 3), hi = base.slice(0, 1, 4);
  EXPECT_THROW(mul_out(hi, lo, F({2})), Error);
  // Strided, transposed and 0-dim operands.
  Tensor mt = m.t();
  expect_same(dv(maximum(mt, F({2, 5}))), {2, 5, 2, 5, 3, 6});
  Tensor s0 = F({4}).squeeze();
  EXPECT_EQ(floor_divide(s0, F({3})).dim(), 1);
  EXPECT_EQ(floor_divide(s0, s0).dim(), 0);
}

TEST(BinaryForms, ZeroSizeAndDtypeErrors) {
  EXPECT_EQ(remainder(F({}), F({})).numel(), 0);
  EXPECT_EQ(floor_divide(I({}), I({})).numel(), 0);  // no ZeroDivisionError on empty
  EXPECT_EQ(clamp(F({}), 0, 1).numel(), 0);
  EXPECT_THROW(remainder(Z({{1, 0}}), Z({{1, 0}})), Error);
  EXPECT_THROW(floor_divide(B({1}), B({1})), Error);
  EXPECT_THROW(logical_and(F({1, 2, 3}), F({1, 2})), Error);
}
