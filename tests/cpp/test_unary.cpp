// Unary math, predicates and activations: special values (NaN, infinities, signed zeros,
// denormals, integer minimum) against values printed by PyTorch 1.13, half/bfloat16 results,
// parameterised activations, both gelu forms, round with decimals, logit, nan_to_num, out= and
// in-place forms, and the exact exception types for unsupported dtypes and bad arguments.
// Every float case runs on a contiguous input (vector body) and a strided one (scalar loop).
// The exhaustive dtype x op sweep against torch lives in test_ops_oracle.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/tensor_util.h"
#include "elementwise_test_util.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember_test;

namespace {

constexpr double kDen = 1.401298464324817e-45;  // the smallest float32 denormal
using I64 = std::vector<int64_t>;
using Fn = std::function<Tensor(const Tensor&)>;


/// The same values in every other element of a larger buffer: kernels take the strided loop.
Tensor strided(const Tensor& t) {
  Tensor big = empty_tensor({2 * t.numel()}, t.dtype());
  Tensor v = big.slice(0, 0, std::nullopt, 2);
  v.copy_(t);
  return v;
}

/// |got - want| <= atol + rtol |want|; NaN and infinities must match exactly.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                  double atol, const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": got " << got[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], atol + rtol * std::abs(want[i])) << what << " at " << i;
    }
  }
}

/// Runs `f` on `x` contiguous and strided; both results must have dtype `dt` and be exactly
/// `want` (or close, when rtol > 0).
void check_both(const Fn& f, const Tensor& x, const std::vector<double>& want, ScalarType dt,
                double rtol, const std::string& what) {
  for (bool s : {false, true}) {
    Tensor r = f(s ? strided(x) : x);
    std::string w = what + (s ? " (strided)" : " (contiguous)");
    EXPECT_EQ(r.dtype(), dt) << w;
    if (rtol == 0)
      expect_same(dv(r), want, w);
    else
      expect_close(dv(r), want, rtol, 1e-30, w);
  }
}

// Float32 inputs shared by the tables below (PyTorch printed the expected values).
const std::vector<double> kSpecial = {
    kNaN, kInf, -kInf, 0,   -0.0, kDen, -kDen, 1,
    -1,   0.5,  -0.5,  2.5, -2.5, 100,  -100,  3.3999999521443642e+38};
const std::vector<double> kAct = {kNaN, kInf, -kInf, 0,    -0.0, 1,  -1,
                                  0.5,  -0.5, 2.5,   -2.5, 7,    -7, 25};

struct Case {
  const char* name;
  Fn f;
  std::vector<double> want;
};

}  // namespace

// ---- float math on special values ----

TEST(UnaryFloat, ExactOpsOnSpecialValues) {
  const double r25 = 0.4000000059604645, r100 = 0.009999999776482582;
  const double big = 3.3999999521443642e+38;
  const std::vector<Case> cases = {
      {"neg",
       [](const Tensor& x) { return neg(x); },
       {kNaN, -kInf, kInf, -0.0, 0, -kDen, kDen, -1, 1, -0.5, 0.5, -2.5, 2.5, -100, 100, -big}},
      {"abs",
       [](const Tensor& x) { return abs(x); },
       {kNaN, kInf, kInf, 0, 0, kDen, kDen, 1, 1, 0.5, 0.5, 2.5, 2.5, 100, 100, big}},
      {"sign",
       [](const Tensor& x) { return sign(x); },
       {0, 1, -1, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1}},
      {"sgn",
       [](const Tensor& x) { return sgn(x); },
       {0, 1, -1, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1}},
      {"reciprocal",
       [](const Tensor& x) { return reciprocal(x); },
       {kNaN, 0, -0.0, kInf, -kInf, kInf, -kInf, 1, -1, 2, -2, r25, -r25, r100, -r100,
        2.9411769389805726e-39}},
      {"sqrt",
       [](const Tensor& x) { return sqrt(x); },
       {kNaN, kInf, kNaN, 0, -0.0, 3.743392066509216e-23, kNaN, 1, kNaN, 0.7071067690849304, kNaN,
        1.5811388492584229, kNaN, 10, kNaN, 1.8439089273756975e+19}},
      {"rsqrt",
       [](const Tensor& x) { return rsqrt(x); },
       {kNaN, 0, kNaN, kInf, -kInf, 2.671373844909537e+22, kNaN, 1, kNaN, 1.4142135381698608, kNaN,
        0.6324555277824402, kNaN, 0.10000000149011612, kNaN, 5.423261052187608e-20}},
      {"square",
       [](const Tensor& x) { return square(x); },
       {kNaN, kInf, kInf, 0, 0, 0, 0, 1, 1, 0.25, 0.25, 6.25, 6.25, 10000, 10000, kInf}},
      {"floor",
       [](const Tensor& x) { return floor(x); },
       {kNaN, kInf, -kInf, 0, -0.0, 0, -1, 1, -1, 0, -1, 2, -3, 100, -100, big}},
      {"ceil",
       [](const Tensor& x) { return ceil(x); },
       {kNaN, kInf, -kInf, 0, -0.0, 1, -0.0, 1, -1, 1, -0.0, 3, -2, 100, -100, big}},
      {"trunc",
       [](const Tensor& x) { return trunc(x); },
       {kNaN, kInf, -kInf, 0, -0.0, 0, -0.0, 1, -1, 0, -0.0, 2, -2, 100, -100, big}},
      {"frac",
       [](const Tensor& x) { return frac(x); },
       {kNaN, kNaN, kNaN, 0, 0, kDen, -kDen, 0, 0, 0.5, -0.5, 0.5, -0.5, 0, 0, 0}},
      {"round",
       [](const Tensor& x) { return round(x); },
       {kNaN, kInf, -kInf, 0, -0.0, 0, -0.0, 1, -1, 0, -0.0, 2, -2, 100, -100, big}},
  };
  Tensor x = F(kSpecial);
  for (const Case& c : cases) check_both(c.f, x, c.want, kFloat, 0, c.name);
}

TEST(UnaryFloat, TranscendentalsOnSpecialValues) {
  const std::vector<Case> cases = {
      {"exp",
       [](const Tensor& x) { return exp(x); },
       {kNaN, kInf, 0, 1, 1, 1, 1, 2.7182817459106445, 0.3678794503211975, 1.6487212181091309,
        0.6065306663513184, 12.182494163513184, 0.08208499848842621, kInf, 3.783505853677006e-44,
        kInf}},
      {"exp2",
       [](const Tensor& x) { return exp2(x); },
       {kNaN, kInf, 0, 1, 1, 1, 1, 2, 0.5, 1.4142135381698608, 0.7071067690849304,
        5.656854152679443, 0.1767766922712326, 1.2676506002282294e+30, 7.888609052210118e-31,
        kInf}},
      {"expm1",
       [](const Tensor& x) { return expm1(x); },
       {kNaN, kInf, -1, 0, -0.0, kDen, -kDen, 1.718281865119934, -0.6321205496788025,
        0.6487212777137756, -0.39346933364868164, 11.182494163513184, -0.9179149866104126, kInf, -1,
        kInf}},
      {"log",
       [](const Tensor& x) { return log(x); },
       {kNaN, kInf, kNaN, -kInf, -kInf, -103.2789306640625, kNaN, 0, kNaN, -0.6931471824645996,
        kNaN, 0.9162907600402832, kNaN, 4.605170249938965, kNaN, 88.72200775146484}},
      {"log2",
       [](const Tensor& x) { return log2(x); },
       {kNaN, kInf, kNaN, -kInf, -kInf, -149, kNaN, 0, kNaN, -1, kNaN, 1.3219281435012817, kNaN,
        6.643856048583984, kNaN, 127.9988021850586}},
      {"log10",
       [](const Tensor& x) { return log10(x); },
       {kNaN, kInf, kNaN, -kInf, -kInf, -44.85346984863281, kNaN, 0, kNaN, -0.3010300099849701,
        kNaN, 0.3979400098323822, kNaN, 2, kNaN, 38.53147888183594}},
      // log1p(3.4e38) is inf in PyTorch 1.13 (its vector log1p overflows 1 + x); 88.72 is right.
      {"log1p",
       [](const Tensor& x) { return log1p(x); },
       {kNaN, kInf, kNaN, 0, -0.0, kDen, -kDen, 0.6931471824645996, -kInf, 0.40546509623527527,
        -0.6931471824645996, 1.2527629137039185, kNaN, 4.6151204109191895, kNaN,
        88.72200775146484}},
      {"sin",
       [](const Tensor& x) { return sin(x); },
       {kNaN, kNaN, kNaN, 0, -0.0, kDen, -kDen, 0.8414709568023682, -0.8414709568023682,
        0.4794255495071411, -0.4794255495071411, 0.5984721183776855, -0.5984721183776855,
        -0.5063656568527222, 0.5063656568527222, -0.24408487975597382}},
      {"cos",
       [](const Tensor& x) { return cos(x); },
       {kNaN, kNaN, kNaN, 1, 1, 1, 1, 0.5403023362159729, 0.5403023362159729, 0.8775825500488281,
        0.8775825500488281, -0.8011435866355896, -0.8011435866355896, 0.8623188734054565,
        0.8623188734054565, 0.9697538614273071}},
      {"tan",
       [](const Tensor& x) { return tan(x); },
       {kNaN, kNaN, kNaN, 0, -0.0, kDen, -kDen, 1.5574077367782593, -1.5574077367782593,
        0.5463024973869324, -0.5463024973869324, -0.7470223307609558, 0.7470223307609558,
        -0.587213933467865, 0.587213933467865, -0.25169774889945984}},
      {"asin",
       [](const Tensor& x) { return asin(x); },
       {kNaN, kNaN, kNaN, 0, -0.0, kDen, -kDen, 1.5707963705062866, -1.5707963705062866,
        0.5235987901687622, -0.5235987901687622, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"acos",
       [](const Tensor& x) { return acos(x); },
       {kNaN, kNaN, kNaN, 1.5707963705062866, 1.5707963705062866, 1.5707963705062866,
        1.5707963705062866, 0, 3.1415927410125732, 1.0471975803375244, 2.094395160675049, kNaN,
        kNaN, kNaN, kNaN, kNaN}},
      {"atan",
       [](const Tensor& x) { return atan(x); },
       {kNaN, 1.5707963705062866, -1.5707963705062866, 0, -0.0, kDen, -kDen, 0.7853981256484985,
        -0.7853981256484985, 0.46364760398864746, -0.46364760398864746, 1.1902899742126465,
        -1.1902899742126465, 1.5607966184616089, -1.5607966184616089, 1.5707963705062866}},
      {"sinh",
       [](const Tensor& x) { return sinh(x); },
       {kNaN, kInf, -kInf, 0, -0.0, kDen, -kDen, 1.175201177597046, -1.175201177597046,
        0.5210952758789062, -0.5210952758789062, 6.050204277038574, -6.050204277038574, kInf, -kInf,
        kInf}},
      {"cosh",
       [](const Tensor& x) { return cosh(x); },
       {kNaN, kInf, kInf, 1, 1, 1, 1, 1.5430806875228882, 1.5430806875228882, 1.1276259422302246,
        1.1276259422302246, 6.132289409637451, 6.132289409637451, kInf, kInf, kInf}},
      {"tanh",
       [](const Tensor& x) { return tanh(x); },
       {kNaN, 1, -1, 0, -0.0, kDen, -kDen, 0.7615941762924194, -0.7615941762924194,
        0.46211716532707214, -0.46211716532707214, 0.9866142868995667, -0.9866142868995667, 1, -1,
        1}},
      {"asinh",
       [](const Tensor& x) { return asinh(x); },
       {kNaN, kInf, -kInf, 0, -0.0, kDen, -kDen, 0.8813735842704773, -0.8813735842704773,
        0.4812118411064148, -0.4812118411064148, 1.6472312211990356, -1.6472312211990356,
        5.298342227935791, -5.298342227935791, 89.41515350341797}},
      {"acosh",
       [](const Tensor& x) { return acosh(x); },
       {kNaN, kInf, kNaN, kNaN, kNaN, kNaN, kNaN, 0, kNaN, kNaN, kNaN, 1.566799283027649, kNaN,
        5.29829216003418, kNaN, 89.41515350341797}},
      {"atanh",
       [](const Tensor& x) { return atanh(x); },
       {kNaN, kNaN, kNaN, 0, -0.0, kDen, -kDen, kInf, -kInf, 0.5493061542510986,
        -0.5493061542510986, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {"sigmoid",
       [](const Tensor& x) { return sigmoid(x); },
       {kNaN, 1, 0, 0.5, 0.5, 0.5, 0.5, 0.7310585975646973, 0.2689414322376251, 0.622459352016449,
        0.3775406777858734, 0.9241418242454529, 0.07585817575454712, 1, 0, 1}},
      {"erf",
       [](const Tensor& x) { return erf(x); },
       {kNaN, 1, -1, 0, -0.0, kDen, -kDen, 0.8427007794380188, -0.8427007794380188,
        0.5204998850822449, -0.5204998850822449, 0.9995930194854736, -0.9995930194854736, 1, -1,
        1}},
      {"erfc",
       [](const Tensor& x) { return erfc(x); },
       {kNaN, 0, 2, 1, 1, 1, 1, 0.15729920566082, 1.8427008390426636, 0.4795001149177551,
        1.5204999446868896, 0.00040695202187635005, 1.9995930194854736, 0, 2, 0}},
      {"erfinv",
       [](const Tensor& x) { return erfinv(x); },
       {kNaN, kNaN, kNaN, 0, -0.0, kDen, -kDen, kInf, -kInf, 0.4769362807273865,
        -0.4769362807273865, kNaN, kNaN, kNaN, kNaN, kNaN}},
  };
  Tensor x = F(kSpecial);
  // SLEEF u10 is within 1 ULP; 2.5e-7 leaves room for PyTorch's own rounding.
  for (const Case& c : cases) check_both(c.f, x, c.want, kFloat, 2.5e-7, c.name);
}

TEST(UnaryFloat, DoubleAgreesWithLibm) {
  std::vector<double> xs;
  for (int i = -40; i <= 40; ++i) xs.push_back(i * 0.173 + (i % 3) * 1e-3);
  Tensor x = F(xs, kDouble);
  struct D {
    const char* name;
    Fn f;
    double (*ref)(double);
  };
  const std::vector<D> ds = {
      {"exp", [](const Tensor& t) { return exp(t); }, [](double v) { return std::exp(v); }},
      {"expm1", [](const Tensor& t) { return expm1(t); }, [](double v) { return std::expm1(v); }},
      {"log1p", [](const Tensor& t) { return log1p(abs(t)); },
       [](double v) { return std::log1p(std::abs(v)); }},
      {"sin", [](const Tensor& t) { return sin(t); }, [](double v) { return std::sin(v); }},
      {"tanh", [](const Tensor& t) { return tanh(t); }, [](double v) { return std::tanh(v); }},
      {"atan", [](const Tensor& t) { return atan(t); }, [](double v) { return std::atan(v); }},
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); },
       [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"erf", [](const Tensor& t) { return erf(t); }, [](double v) { return std::erf(v); }},
      {"erfc", [](const Tensor& t) { return erfc(t); }, [](double v) { return std::erfc(v); }},
      {"sqrt", [](const Tensor& t) { return sqrt(abs(t)); },
       [](double v) { return std::sqrt(std::abs(v)); }},
  };
  for (const D& d : ds) {
    std::vector<double> want;
    for (double v : xs) want.push_back(d.ref(v));
    check_both(d.f, x, want, kDouble, 6e-16, d.name);  // SLEEF u10 vs glibc: <= 2.7 ULP
  }
}

TEST(UnaryFloat, ErfinvIsAccurateInDouble) {
  // erf(erfinv(y)) == y, and in the tails erfc(erfinv(y)) == 1 - y where erf would cancel.
  std::vector<double> ys;
  for (int i = -99; i <= 99; ++i) ys.push_back(i / 100.0);
  Tensor x = F(ys, kDouble);
  auto r = dv(erfinv(x));
  for (size_t i = 0; i < ys.size(); ++i) EXPECT_NEAR(std::erf(r[i]), ys[i], 4e-16) << ys[i];
  for (double tail : {1e-3, 1e-6, 1e-9, 1e-12, 1e-15}) {
    double y = 1 - tail, got = dv(erfinv(F({y, -y}, kDouble)))[0];
    EXPECT_NEAR(std::erfc(got) / (1 - y), 1.0, 1e-12) << tail;
  }
  expect_same(dv(erfinv(F({1, -1, 1.5, -0.0, kNaN, 0.5}, kDouble))),
              {kInf, -kInf, kNaN, -0.0, kNaN, 0.47693627620446987});
  // Denormals keep their value scaled by sqrt(pi) / 2.
  EXPECT_EQ(dv(erfinv(F({1e-310}, kDouble)))[0], 1e-310 * 0.88622692545275801365);
}

TEST(UnaryFloat, TranscendentalsAgreeAcrossVectorBodyAndTail) {
  // Lengths around the vector width exercise the SLEEF body, the scalar tail and both.
  for (int64_t n : {1, 3, 7, 8, 15, 16, 17, 31, 33, 257}) {
    std::vector<double> xs;
    for (int64_t i = 0; i < n; ++i) xs.push_back(-4 + 8.0 * double(i) / double(n));
    Tensor x = F(xs);
    auto e = dv(exp(x)), t = dv(tanh(x)), s = dv(sigmoid(x)), g = dv(gelu(x));
    for (int64_t i = 0; i < n; ++i) {
      double v = float(xs[i]);
      EXPECT_NEAR(e[i], std::exp(v), 2.5e-7 * std::exp(v)) << n << " " << i;
      EXPECT_NEAR(t[i], std::tanh(v), 2.5e-7) << n << " " << i;
      EXPECT_NEAR(s[i], 1 / (1 + std::exp(-v)), 2.5e-7) << n << " " << i;
      double gw = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      EXPECT_NEAR(g[i], gw, 2e-6 * std::abs(gw) + 1e-30) << n << " " << i;
    }
  }
}

// ---- integers and bool ----

TEST(UnaryInt, WrapAroundAndKeepDtype) {
  Tensor i8 = I({-128, -1, 0, 127}, kChar);
  EXPECT_EQ(abs(i8).dtype(), kChar);
  EXPECT_EQ(iv(abs(i8)), (I64{-128, 1, 0, 127}));
  EXPECT_EQ(iv(neg(i8)), (I64{-128, 1, 0, -127}));
  EXPECT_EQ(iv(square(i8)), (I64{0, 1, 0, 1}));
  EXPECT_EQ(iv(sign(i8)), (I64{-1, -1, 0, 1}));
  EXPECT_EQ(iv(sgn(i8)), (I64{-1, -1, 0, 1}));
  Tensor u8 = I({0, 1, 255}, kByte);
  EXPECT_EQ(iv(abs(u8)), (I64{0, 1, 255}));
  EXPECT_EQ(iv(neg(u8)), (I64{0, 255, 1}));
  EXPECT_EQ(iv(square(u8)), (I64{0, 1, 1}));
  EXPECT_EQ(iv(sign(u8)), (I64{0, 1, 1}));
  EXPECT_EQ(iv(bitwise_not(u8)), (I64{255, 254, 0}));
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Tensor i64 = I({mn, int64_t(1) << 62, -5});
  EXPECT_EQ(iv(abs(i64)), (I64{mn, int64_t(1) << 62, 5}));
  EXPECT_EQ(iv(neg(i64)), (I64{mn, -(int64_t(1) << 62), 5}));
  EXPECT_EQ(iv(square(i64)), (I64{0, 0, 25}));
  EXPECT_EQ(iv(bitwise_not(i64)),
            (I64{std::numeric_limits<int64_t>::max(), -(int64_t(1) << 62) - 1, 4}));
  Tensor i32 = I({INT32_MIN, -7, 46341}, kInt);
  EXPECT_EQ(iv(abs(i32)), (I64{INT32_MIN, 7, 46341}));
  EXPECT_EQ(iv(square(i32)), (I64{0, 49, -2147479015}));
  // Rounding ops are the identity on integers and keep the dtype.
  for (ScalarType dt : {kByte, kChar, kShort, kInt, kLong}) {
    Tensor x = I({0, 1, 5, 100}, dt);
    for (const Fn& f : std::vector<Fn>{
             [](const Tensor& t) { return floor(t); }, [](const Tensor& t) { return ceil(t); },
             [](const Tensor& t) { return trunc(t); }, [](const Tensor& t) { return round(t); },
             [](const Tensor& t) { return relu(t); },
             [](const Tensor& t) { return nan_to_num(t); }}) {
      Tensor r = f(x);
      EXPECT_EQ(r.dtype(), dt);
      EXPECT_EQ(iv(r), (I64{0, 1, 5, 100}));
    }
  }
  EXPECT_EQ(iv(relu(I({-3, -1, 0, 2}, kShort))), (I64{0, 0, 0, 2}));
}

TEST(UnaryInt, FloatOpsPromoteToDefaultFloat) {
  Tensor e = exp(I({0, 1}));
  EXPECT_EQ(e.dtype(), kFloat);
  expect_same(dv(e), {1, 2.7182817459106445});
  expect_same(dv(sqrt(I({4, 2}, kByte))), {2, 1.4142135381698608});
  expect_same(dv(reciprocal(I({0, 2, -4}, kInt))), {kInf, 0.5, -0.25});
  expect_same(dv(exp(B({1, 0}))), {2.7182817459106445, 1});
  EXPECT_EQ(sigmoid(B({1})).dtype(), kFloat);
  EXPECT_EQ(logit(I({0})).dtype(), kFloat);
  EXPECT_EQ(softsign(I({3}, kChar)).dtype(), kFloat);
  expect_same(dv(softsign(I({3, -1}, kChar))), {0.75, -0.5});
  // The default dtype decides: float64 default gives float64 results.
  set_default_dtype(kDouble);
  Tensor d = exp(I({1}));
  set_default_dtype(kFloat);
  EXPECT_EQ(d.dtype(), kDouble);
  EXPECT_EQ(dv(d)[0], std::exp(1.0));
}

TEST(UnaryBool, SupportedAndRejectedOps) {
  Tensor b = B({1, 0});
  EXPECT_EQ(sign(b).dtype(), kBool);
  EXPECT_EQ(iv(sign(b)), (I64{1, 0}));
  EXPECT_EQ(iv(sgn(b)), (I64{1, 0}));
  EXPECT_EQ(iv(bitwise_not(b)), (I64{0, 1}));
  EXPECT_EQ(iv(logical_not(b)), (I64{0, 1}));
  EXPECT_EQ(iv(nan_to_num(b)), (I64{1, 0}));
  EXPECT_EQ(nan_to_num(b).dtype(), kBool);
  // PyTorch 1.13 has no bool kernel for these.
  EXPECT_THROW(neg(b), Error);
  EXPECT_THROW(abs(b), Error);
  EXPECT_THROW(relu(b), Error);
  EXPECT_THROW(relu6(b), Error);
  EXPECT_THROW(floor(b), Error);
  EXPECT_THROW(ceil(b), Error);
  EXPECT_THROW(trunc(b), Error);
  EXPECT_THROW(round(b), Error);
  EXPECT_THROW(frac(b), Error);
  EXPECT_THROW(hardtanh(b), Error);
  EXPECT_THROW(threshold(b, 0, 1), Error);
  EXPECT_THROW(bitwise_not(F({1})), Error);
  EXPECT_THROW(frac(I({1})), Error);
}

// ---- half, bfloat16, complex ----

TEST(UnaryHalf, Float16KernelsAsPyTorch) {
  // PyTorch 1.13 CPU has float16 kernels only for a few unary ops.
  expect_same(dv(exp2(F({1, -1, 0.5}, kHalf))), {2, 0.5, 1.4140625});
  expect_same(dv(reciprocal(F({2, 0, 3}, kHalf))), {0.5, kInf, 0.333251953125});
  expect_same(dv(frac(F({2.5, -1.25}, kHalf))), {0.5, -0.25});
  expect_same(dv(softsign(F({1, -3}, kHalf))), {0.5, -0.75});
  expect_same(dv(neg(F({1.5, -0.0}, kHalf))), {-1.5, 0});
  expect_same(dv(abs(F({-1.5}, kHalf))), {1.5});
  expect_same(dv(square(F({300}, kHalf))), {kInf});  // 90000 overflows float16
  EXPECT_EQ(exp2(F({1}, kHalf)).dtype(), kHalf);
  expect_same(dv(nan_to_num(F({kNaN, kInf, -kInf}, kHalf))), {0, 65504, -65504});
  EXPECT_EQ(iv(isnan(F({kNaN, 1}, kHalf))), (I64{1, 0}));
  EXPECT_EQ(iv(signbit(F({-0.0, 1}, kHalf))), (I64{1, 0}));
  for (const Fn& f : std::vector<Fn>{
           [](const Tensor& t) { return sqrt(t); }, [](const Tensor& t) { return exp(t); },
           [](const Tensor& t) { return tanh(t); }, [](const Tensor& t) { return sigmoid(t); },
           [](const Tensor& t) { return floor(t); }, [](const Tensor& t) { return round(t); },
           [](const Tensor& t) { return relu(t); }, [](const Tensor& t) { return gelu(t); },
           [](const Tensor& t) { return erfinv(t); }, [](const Tensor& t) { return silu(t); }}) {
    EXPECT_THROW(f(F({1}, kHalf)), Error);
  }
}

TEST(UnaryHalf, BFloat16ComputesInFloatAndRounds) {
  Tensor x = F({1, 2}, kBFloat16);
  EXPECT_EQ(exp(x).dtype(), kBFloat16);
  expect_same(dv(exp(x)), {2.71875, 7.375});
  expect_same(dv(sqrt(F({2}, kBFloat16))), {1.4140625});
  expect_same(dv(tanh(F({0.5}, kBFloat16))), {0.462890625});
  Tensor y = F({1, -1, 0.5}, kBFloat16);
  expect_same(dv(sigmoid(y)), {0.73046875, 0.26953125, 0.62109375});
  expect_same(dv(silu(y)), {0.73046875, -0.26953125, 0.310546875});
  expect_same(dv(gelu(y)), {0.83984375, -0.158203125, 0.345703125});
  // PyTorch 1.13 rounds to bfloat16 between steps and gets {0.84375, -0.158203125, ...}; one
  // rounding of the float result gives the nearest bfloat16 values of gelu_tanh(1) = 0.841192
  // and gelu_tanh(-1) = -0.158808.
  expect_same(dv(gelu(y, "tanh")), {0.83984375, -0.1591796875, 0.345703125});
  expect_same(dv(nan_to_num(F({kNaN, kInf, -kInf}, kBFloat16))),
              {0, 3.3895313892515355e+38, -3.3895313892515355e+38});
  EXPECT_THROW(mish(y), Error);  // no bfloat16 mish kernel in PyTorch 1.13
}

TEST(UnaryComplex, ValuesAndResultDtypes) {
  const double pi = 3.14159265358979323846;
  Tensor a = abs(Z({{3, 4}, {0, 0}, {kInf, 1}, {-0.0, -2}}));
  EXPECT_EQ(a.dtype(), kFloat);
  expect_same(dv(a), {5, 0, kInf, 2});
  EXPECT_EQ(abs(Z({{3, 4}}, kComplexDouble)).dtype(), kDouble);
  auto s = cv(sqrt(Z({{-4, 0}, {-4, -0.0}, {3, 4}}, kComplexDouble)));
  EXPECT_EQ(s[0], std::complex<double>(0, 2));
  EXPECT_EQ(s[1], std::complex<double>(0, -2));  // the branch cut follows the sign of zero
  EXPECT_EQ(s[2], std::complex<double>(2, 1));
  auto g = cv(sgn(Z({{3, -4}, {0, 0}})));
  EXPECT_NEAR(g[0].real(), 0.6, 1e-7);
  EXPECT_NEAR(g[0].imag(), -0.8, 1e-7);
  EXPECT_EQ(g[1], std::complex<double>(0, 0));
  // 1 / 0 is NaN + NaN j in PyTorch (not C's complex infinity).
  auto r = cv(reciprocal(Z({{0, 0}, {1, 1}})));
  EXPECT_TRUE(std::isnan(r[0].real()) && std::isnan(r[0].imag()));
  EXPECT_EQ(r[1], std::complex<double>(0.5, -0.5));
  auto q = cv(rsqrt(Z({{-4, 0}, {0, 0}}, kComplexDouble)));
  EXPECT_EQ(q[0], std::complex<double>(0, -0.5));
  EXPECT_TRUE(std::isnan(q[1].real()));
  auto e = cv(exp(Z({{0, pi}}, kComplexDouble)));
  EXPECT_NEAR(e[0].real(), -1, 1e-15);
  EXPECT_NEAR(e[0].imag(), 0, 1e-15);
  auto l = cv(log(Z({{-1, 0}})));
  EXPECT_EQ(l[0].real(), 0);
  EXPECT_NEAR(l[0].imag(), pi, 1e-6);
  EXPECT_NEAR(cv(log2(Z({{4, 0}})))[0].real(), 2, 1e-6);
  EXPECT_EQ(cv(sigmoid(Z({{0, 0}})))[0], std::complex<double>(0.5, 0));
  struct C {
    const char* name;
    Fn f;
    std::complex<double> want;  // at 1 + 1j (complex128), from PyTorch
  };
  const std::vector<C> cs = {
      {"tanh", [](const Tensor& t) { return tanh(t); }, {1.0839233273386946, 0.2717525853195118}},
      {"silu", [](const Tensor& t) { return silu(t); }, {0.5800933429757364, 0.9839897982917621}},
      {"tanhshrink",
       [](const Tensor& t) { return tanhshrink(t); },
       {-0.08392332733869456, 0.7282474146804883}},
      {"asinh", [](const Tensor& t) { return asinh(t); }, {1.0612750619050357, 0.6662394324925153}},
      {"softsign",
       [](const Tensor& t) { return softsign(t); },
       {0.4142135623730951, 0.4142135623730951}},
  };
  for (const C& c : cs) {
    auto v = cv(c.f(Z({{1, 1}}, kComplexDouble)))[0];
    EXPECT_NEAR(v.real(), c.want.real(), 1e-15) << c.name;
    EXPECT_NEAR(v.imag(), c.want.imag(), 1e-15) << c.name;
  }
  Tensor z = Z({{0, 0}, {1, 0}, {0, 1}, {kNaN, 0}, {1, kInf}});
  EXPECT_EQ(iv(logical_not(z)), (I64{1, 0, 0, 0, 0}));
  EXPECT_EQ(iv(isreal(z)), (I64{1, 1, 0, 1, 0}));
  EXPECT_EQ(iv(isnan(z)), (I64{0, 0, 0, 1, 0}));
  EXPECT_EQ(iv(isinf(z)), (I64{0, 0, 0, 0, 1}));
  EXPECT_EQ(iv(isfinite(z)), (I64{1, 1, 1, 0, 0}));
  // No complex kernels in PyTorch 1.13 for these.
  for (const Fn& f : std::vector<Fn>{
           [](const Tensor& t) { return sign(t); }, [](const Tensor& t) { return floor(t); },
           [](const Tensor& t) { return exp2(t); }, [](const Tensor& t) { return expm1(t); },
           [](const Tensor& t) { return log1p(t); }, [](const Tensor& t) { return erf(t); },
           [](const Tensor& t) { return relu(t); }, [](const Tensor& t) { return isposinf(t); },
           [](const Tensor& t) { return signbit(t); }, [](const Tensor& t) { return gelu(t); },
           [](const Tensor& t) { return nan_to_num(t); }, [](const Tensor& t) { return frac(t); },
           [](const Tensor& t) { return bitwise_not(t); }}) {
    EXPECT_THROW(f(z), Error);
  }
}

// ---- predicates ----

TEST(UnaryPredicates, FloatIntAndBool) {
  Tensor x = F({kNaN, -kNaN, kInf, -kInf, 0, -0.0, -kDen, 1});
  EXPECT_EQ(isnan(x).dtype(), kBool);
  EXPECT_EQ(iv(isnan(x)), (I64{1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(iv(isinf(x)), (I64{0, 0, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(iv(isfinite(x)), (I64{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(iv(isposinf(x)), (I64{0, 0, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(iv(isneginf(x)), (I64{0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(iv(signbit(x)), (I64{0, 1, 0, 1, 0, 1, 1, 0}));
  EXPECT_EQ(iv(isreal(x)), (I64{1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(iv(logical_not(x)), (I64{0, 0, 0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(iv(signbit(strided(x))), (I64{0, 1, 0, 1, 0, 1, 1, 0}));
  for (ScalarType dt : {kBool, kByte, kChar, kShort, kInt, kLong}) {
    Tensor t = I({0, 1}, dt);
    EXPECT_EQ(iv(isnan(t)), (I64{0, 0})) << dt;
    EXPECT_EQ(iv(isinf(t)), (I64{0, 0})) << dt;
    EXPECT_EQ(iv(isfinite(t)), (I64{1, 1})) << dt;
    EXPECT_EQ(iv(isposinf(t)), (I64{0, 0})) << dt;
    EXPECT_EQ(iv(isreal(t)), (I64{1, 1})) << dt;
  }
  EXPECT_EQ(iv(signbit(I({-3, 0, 3}, kChar))), (I64{1, 0, 0}));
  EXPECT_EQ(iv(signbit(I({0, 200}, kByte))), (I64{0, 0}));
  EXPECT_EQ(iv(signbit(B({1, 0}))), (I64{0, 0}));
  Tensor out = empty_tensor({0}, kBool);
  isnan_out(out, F({kNaN, 2}));
  EXPECT_EQ(iv(out), (I64{1, 0}));
  Tensor x2 = F({kNaN});
  EXPECT_EQ(iv(x2.isnan()), (I64{1}));
}

// ---- activations ----

TEST(UnaryActivation, ValuesOnSpecialInputs) {
  const std::vector<Case> exact = {
      {"relu",
       [](const Tensor& x) { return relu(x); },
       {kNaN, kInf, 0, 0, -0.0, 1, 0, 0.5, 0, 2.5, 0, 7, 0, 25}},
      {"relu6",
       [](const Tensor& x) { return relu6(x); },
       {kNaN, 6, 0, 0, -0.0, 1, 0, 0.5, 0, 2.5, 0, 6, 0, 6}},
      {"hardtanh",
       [](const Tensor& x) { return hardtanh(x); },
       {kNaN, 1, -1, 0, -0.0, 1, -1, 0.5, -0.5, 1, -1, 1, -1, 1}},
      {"hardtanh(-2, 3)",
       [](const Tensor& x) { return hardtanh(x, -2, 3); },
       {kNaN, 3, -2, 0, -0.0, 1, -1, 0.5, -0.5, 2.5, -2, 3, -2, 3}},
      // min > max: clamp semantics, max wins.
      {"hardtanh(2, 1)",
       [](const Tensor& x) { return hardtanh(x, 2, 1); },
       {kNaN, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
      {"leaky_relu",
       [](const Tensor& x) { return leaky_relu(x); },
       {kNaN, kInf, -kInf, 0, -0.0, 1, -0.009999999776482582, 0.5, -0.004999999888241291, 2.5,
        -0.02499999850988388, 7, -0.07000000029802322, 25}},
      {"leaky_relu(0.2)",
       [](const Tensor& x) { return leaky_relu(x, 0.2); },
       {kNaN, kInf, -kInf, 0, -0.0, 1, -0.20000000298023224, 0.5, -0.10000000149011612, 2.5, -0.5,
        7, -1.399999976158142, 25}},
      {"hardshrink",
       [](const Tensor& x) { return hardshrink(x); },
       {kNaN, kInf, -kInf, 0, 0, 1, -1, 0, 0, 2.5, -2.5, 7, -7, 25}},
      {"hardshrink(1)",
       [](const Tensor& x) { return hardshrink(x, 1); },
       {kNaN, kInf, -kInf, 0, 0, 0, 0, 0, 0, 2.5, -2.5, 7, -7, 25}},
      // NaN gives 0 in PyTorch 1.13's softshrink.
      {"softshrink",
       [](const Tensor& x) { return softshrink(x); },
       {0, kInf, -kInf, 0, 0, 0.5, -0.5, 0, 0, 2, -2, 6.5, -6.5, 24.5}},
      {"softshrink(1)",
       [](const Tensor& x) { return softshrink(x, 1); },
       {0, kInf, -kInf, 0, 0, 0, 0, 0, 0, 1.5, -1.5, 6, -6, 24}},
      {"threshold(0.5, -7)",
       [](const Tensor& x) { return threshold(x, 0.5, -7); },
       {kNaN, kInf, -7, -7, -7, 1, -7, -7, -7, 2.5, -7, 7, -7, 25}},
      {"hardsigmoid",
       [](const Tensor& x) { return hardsigmoid(x); },
       {kNaN, 1, 0, 0.5, 0.5, 0.6666666865348816, 0.3333333432674408, 0.5833333134651184,
        0.4166666567325592, 0.9166666865348816, 0.0833333358168602, 1, 0, 1}},
      {"hardswish",
       [](const Tensor& x) { return hardswish(x); },
       {kNaN, kInf, kNaN, 0, -0.0, 0.6666666865348816, -0.3333333432674408, 0.2916666567325592,
        -0.2083333283662796, 2.2916667461395264, -0.2083333283662796, 7, -0.0, 25}},
  };
  const std::vector<Case> close = {
      // elu family: PyTorch 1.13 computes exp(x) - 1, ember expm1 (same to 1e-7 absolute).
      {"elu",
       [](const Tensor& x) { return elu(x); },
       {kNaN, kInf, -1, 0, 0, 1, -0.6321205496788025, 0.5, -0.39346933364868164, 2.5,
        -0.9179149866104126, 7, -0.9990881085395813, 25}},
      {"elu(0.5, 2, 1.5)",
       [](const Tensor& x) { return elu(x, 0.5, 2, 1.5); },
       {kNaN, kInf, -1, 0, 0, 2, -0.7768698334693909, 1, -0.5276334285736084, 5,
        -0.9764822721481323, 14, -0.9999724626541138, 50}},
      {"selu",
       [](const Tensor& x) { return selu(x); },
       {kNaN, kInf, -1.7580993175506592, 0, 0, 1.0507010221481323, -1.1113307476043701,
        0.5253505110740662, -0.6917581558227539, 2.6267526149749756, -1.613785743713379,
        7.354907035827637, -1.7564960718154907, 26.26752471923828}},
      {"celu(2)",
       [](const Tensor& x) { return celu(x, 2); },
       {kNaN, kInf, -2, 0, 0, 1, -0.7869386672973633, 0.5, -0.44239842891693115, 2.5,
        -1.4269903898239136, 7, -1.9396052360534668, 25}},
      {"softplus",
       [](const Tensor& x) { return softplus(x); },
       {kNaN, kInf, 0, 0.6931471824645996, 0.6931471824645996, 1.31326162815094, 0.3132616877555847,
        0.9740769863128662, 0.4740769863128662, 2.578889846801758, 0.07888973504304886,
        7.000911712646484, 0.000911466486286372, 25}},
      {"softplus(2, 3)",
       [](const Tensor& x) { return softplus(x, 2, 3); },
       {kNaN, kInf, 0, 0.3465735912322998, 0.3465735912322998, 1.0634640455245972,
        0.06346400082111359, 0.65663081407547, 0.15663084387779236, 2.5, 0.003357674228027463, 7,
        4.1576419107514084e-07, 25}},
      {"silu",
       [](const Tensor& x) { return silu(x); },
       {kNaN, kInf, kNaN, 0, -0.0, 0.7310585975646973, -0.2689414322376251, 0.3112296760082245,
        -0.1887703388929367, 2.310354471206665, -0.189645454287529, 6.993622779846191,
        -0.006377358455210924, 25}},
      {"mish",
       [](const Tensor& x) { return mish(x); },
       {kNaN, kInf, kNaN, 0, -0.0, 0.8650983572006226, -0.3034014403820038, 0.37524524331092834,
        -0.22074376046657562, 2.4713923931121826, -0.19681619107723236, 6.999988555908203,
        -0.006380263715982437, 25}},
      {"softsign",
       [](const Tensor& x) { return softsign(x); },
       {kNaN, kNaN, kNaN, 0, -0.0, 0.5, -0.5, 0.3333333432674408, -0.3333333432674408,
        0.7142857313156128, -0.7142857313156128, 0.875, -0.875, 0.9615384340286255}},
      {"tanhshrink",
       [](const Tensor& x) { return tanhshrink(x); },
       {kNaN, kInf, -kInf, 0, 0, 0.23840582370758057, -0.23840582370758057, 0.037882834672927856,
        -0.037882834672927856, 1.5133857727050781, -1.5133857727050781, 6.000001907348633,
        -6.000001907348633, 24}},
      {"logsigmoid",
       [](const Tensor& x) { return logsigmoid(x); },
       {kNaN, 0, -kInf, -0.6931471824645996, -0.6931471824645996, -0.3132616877555847,
        -1.3132617473602295, -0.4740769863128662, -0.9740769863128662, -0.07888973504304886,
        -2.578889846801758, -0.000911466486286372, -7.000911235809326, -1.3887943746404563e-11}},
  };
  Tensor x = F(kAct);
  for (const Case& c : exact) check_both(c.f, x, c.want, kFloat, 0, c.name);
  for (const Case& c : close) {
    for (bool s : {false, true}) {
      Tensor r = c.f(s ? strided(x) : x);
      EXPECT_EQ(r.dtype(), kFloat) << c.name;
      expect_close(dv(r), c.want, 1e-6, 1e-7, std::string(c.name) + (s ? " strided" : ""));
    }
  }
}

TEST(UnaryActivation, GeluBothForms) {
  Tensor x = F(kAct);
  // Reference values in float64 from 0.5 x erfc(-x / sqrt(2)) and x sigmoid(2y): PyTorch's
  // own formulas cancel for x < 0 (its float64 gelu(-7) is -8.958667e-12, its float32 0; the
  // answer is -8.958688e-12).
  const std::vector<double> erf_form = {kNaN,
                                        kInf,
                                        kNaN,
                                        0,
                                        -0.0,
                                        0.8413447460685429,
                                        -0.15865525393145707,
                                        0.34573123063700656,
                                        -0.15426876936299344,
                                        2.4844758366855597,
                                        -0.015524163314440348,
                                        6.999999999991041,
                                        -8.958687807200846e-12,
                                        25};
  const std::vector<double> tanh_form = {kNaN,
                                         kInf,
                                         kNaN,
                                         0,
                                         -0.0,
                                         0.8411919906082768,
                                         -0.15880800939172326,
                                         0.34571400982514394,
                                         -0.15428599017485609,
                                         2.484915733910001,
                                         -0.01508426608999857,
                                         6.999999999999998,
                                         -2.315442262072538e-15,
                                         25};
  for (bool s : {false, true}) {
    Tensor in = s ? strided(x) : x;
    expect_close(dv(gelu(in)), erf_form, 1e-6, 1e-30, "gelu float");
    expect_close(dv(gelu(in, "none")), erf_form, 1e-6, 1e-30, "gelu none");
    // gelu_tanh(-7) = -2.3e-15 is ill-conditioned in float (exp(35.7) of a rounded argument).
    expect_close(dv(gelu(in, "tanh")), tanh_form, 1e-6, 1e-12, "gelu tanh float");
    Tensor d = s ? strided(F(kAct, kDouble)) : F(kAct, kDouble);
    // (The float64 erf form uses PyTorch's formula, which cancels in the tail: absolute error.)
    expect_close(dv(gelu(d)), erf_form, 1e-14, 1e-16, "gelu double");
    expect_close(dv(gelu(d, "tanh")), tanh_form, 1e-14, 1e-300, "gelu tanh double");
  }
  // The float erf form is relatively accurate (a few ULP) over the whole normal range, the
  // x < 0 tail included (gelu(-12) = -7e-33; PyTorch returns 0 below about -5.5).
  std::vector<double> xs;
  for (int i = -1200; i <= 1400; ++i) xs.push_back(i / 100.0);
  for (bool s : {false, true}) {
    auto g = dv(gelu(s ? strided(F(xs)) : F(xs)));
    for (size_t i = 0; i < xs.size(); ++i) {
      double v = float(xs[i]), want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      EXPECT_NEAR(g[i], want, 1e-6 * std::abs(want)) << v << (s ? " strided" : "");
    }
  }
  // PyTorch raises RuntimeError for an unknown approximation.
  try {
    gelu(x, "foo");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  EXPECT_THROW(gelu(x, "Tanh"), Error);
  Tensor y = F({1, -1});
  EXPECT_THROW(gelu_(y, ""), Error);
  EXPECT_THROW(gelu(I({1})), Error);
  Tensor z = F({1, -1});
  gelu_(z, "tanh");
  expect_close(dv(z), {0.8411919906082768, -0.1588080093917233}, 1e-6, 0, "gelu_");
}

TEST(UnaryActivation, IntegerParametersAreCastFirst) {
  Tensor x = I({-3, -1, 0, 1, 2, 5, 7}, kInt);
  // threshold and bounds are cast to the dtype before comparing (-0.5 -> 0, 1.5 -> 1).
  EXPECT_EQ(iv(threshold(x, -0.5, 9)), (I64{9, 9, 9, 1, 2, 5, 7}));
  EXPECT_EQ(iv(threshold(x, 1.5, 9)), (I64{9, 9, 9, 9, 2, 5, 7}));
  EXPECT_EQ(iv(threshold(x, 1, 2.7)), (I64{2, 2, 2, 2, 2, 5, 7}));
  EXPECT_EQ(iv(hardtanh(x, -1.5, 2.5)), (I64{-1, -1, 0, 1, 2, 2, 2}));
  EXPECT_EQ(iv(relu6(x)), (I64{0, 0, 0, 1, 2, 5, 6}));
  EXPECT_EQ(hardtanh(x).dtype(), kInt);
  Tensor u = I({1, 2, 3}, kByte);
  EXPECT_EQ(iv(hardtanh(u, 0, 2)), (I64{1, 2, 2}));
  EXPECT_EQ(iv(relu6(I({1, 200}, kByte))), (I64{1, 6}));
  EXPECT_THROW(hardtanh(u), Error);  // negative limits on an unsigned type
  EXPECT_THROW(hardtanh_(u, -1, 1), Error);
  for (const Fn& f : std::vector<Fn>{
           [](const Tensor& t) { return leaky_relu(t); }, [](const Tensor& t) { return elu(t); },
           [](const Tensor& t) { return celu(t); }, [](const Tensor& t) { return selu(t); },
           [](const Tensor& t) { return softplus(t); }, [](const Tensor& t) { return silu(t); },
           [](const Tensor& t) { return mish(t); }, [](const Tensor& t) { return hardshrink(t); },
           [](const Tensor& t) { return softshrink(t); },
           [](const Tensor& t) { return hardsigmoid(t); },
           [](const Tensor& t) { return hardswish(t); },
           [](const Tensor& t) { return logsigmoid(t); }}) {
    EXPECT_THROW(f(x), Error);
  }
}

TEST(UnaryActivation, ArgumentErrorsAndInPlace) {
  Tensor x = F({-1, 1});
  try {
    celu(x, 0);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("alpha cannot be 0"), std::string::npos);
  }
  Tensor c = x.clone();
  EXPECT_THROW(celu_(c, 0.0), Error);
  try {
    softshrink(x, -1);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  // In-place forms write into self and return it.
  Tensor a = F({-2, 3});
  EXPECT_TRUE(leaky_relu_(a, 0.5).is_same(a));
  expect_same(dv(a), {-1, 3});
  Tensor b = F({-2, 3});
  elu_(b, 2);
  expect_close(dv(b), {2 * std::expm1(-2.0), 3}, 1e-6, 0);
  Tensor h = F({-2, 3, 0.5});
  hardtanh_(h, -1, 2);
  expect_same(dv(h), {-1, 2, 0.5});
  Tensor t = F({-2, 3, 0.5});
  threshold_(t, 0.5, 10);
  expect_same(dv(t), {10, 3, 10});
  Tensor r = I({-2, 3}, kInt);
  relu_(r);
  EXPECT_EQ(iv(r), (I64{0, 3}));
  Tensor s = F({0.0});
  s.sigmoid_();
  expect_same(dv(s), {0.5});
}

TEST(UnaryActivation, ParametersAreRangeChecked) {
  // Note [Checked parameter conversion] in activation_ops.cpp: PyTorch's checked_convert.
  Tensor u = I({1, 2}, kByte), c = I({1, 2}, kChar), f = F({1, -1});
  EXPECT_THROW(threshold(u, 0.5, -1.0), Error);     // -1.0 does not fit uint8
  EXPECT_EQ(iv(threshold(u, 0, -1)), (I64{1, 2}));  // integer -1 wraps (255), as in C
  EXPECT_EQ(iv(threshold(u, 1, -1)), (I64{255, 2}));
  EXPECT_THROW(threshold(u, -0.5, 5.0), Error);
  EXPECT_THROW(threshold(c, 127.9, 0.0), Error);
  EXPECT_THROW(threshold(c, kNaN, 0.0), Error);
  EXPECT_THROW(threshold(f, 1e300, 0.0), Error);
  EXPECT_EQ(dv(threshold(F({1}, kDouble), 1e300, 0.0))[0], 0);
  expect_same(dv(threshold(f, kNaN, 0.0)), {1, -1});
  // hardtanh truncates integer bounds through int64 first.
  EXPECT_EQ(iv(hardtanh(u, -0.5, 1.0)), (I64{1, 1}));
  EXPECT_EQ(iv(hardtanh(c, -128.5, 1.0)), (I64{1, 1}));
  EXPECT_THROW(hardtanh(c, -200.0, 2.0), Error);
  EXPECT_THROW(hardtanh(u, 0.0, 300.0), Error);
  EXPECT_THROW(hardtanh(u, -1, 2), Error);
  EXPECT_THROW(hardtanh(f, -1e300, 1e300), Error);
  // Float activations check against float (also for bfloat16), not for float64.
  EXPECT_THROW(leaky_relu(f, 1e300), Error);
  EXPECT_THROW(leaky_relu(F({1}, kBFloat16), 1e39), Error);
  EXPECT_NO_THROW(leaky_relu(F({1}, kDouble), 1e300));
  EXPECT_THROW(elu(f, 1e300), Error);
  EXPECT_NO_THROW(elu(f, kInf));
  EXPECT_NO_THROW(celu(f, 1e-320));
  EXPECT_THROW(softplus(f, 1e300), Error);
  EXPECT_THROW(hardshrink(f, 1e300), Error);
  EXPECT_THROW(softshrink(f, 1e300), Error);
  EXPECT_THROW(logit(f, 1e300), Error);
  EXPECT_NO_THROW(nan_to_num(f, 1e300));
}

// ---- round, logit, nan_to_num ----

TEST(UnaryRound, HalfToEvenAndDecimals) {
  expect_same(dv(round(F({0.5, 1.5, 2.5, -0.5, -2.5, 3.5}))), {0, 2, 2, -0.0, -2, 4});
  expect_same(dv(round(strided(F({0.5, 1.5, 2.5, -0.5})))), {0, 2, 2, -0.0});
  expect_same(dv(round(F({0.125, 1.005, 2.675}), 2)), {0.11999999731779099, 1, 2.680000066757202});
  expect_same(dv(round(F({1.5, 2.5, -0.5, 0.125, 1234.5678}, kDouble), 2)),
              {1.5, 2.5, -0.5, 0.12, 1234.57});
  // Negative decimals divide first: round(x / 10) * 10.
  expect_same(dv(round(F({15, 25, -35, 1234.5678, 1e300}, kDouble), -1)),
              {20, 20, -40, 1230, 1e300});
  // bfloat16 rounds x * 10^d to bfloat16 before rint, as PyTorch 1.13 (2.671875 * 100 -> 268).
  expect_same(dv(round(F({0.125, 1.005, 2.675}, kBFloat16), 2)), {0.1201171875, 1.0078125, 2.6875});
  // 10^400 is inf: PyTorch's formula gives NaN.
  expect_same(dv(round(F({1, 2}), 400)), {kNaN, kNaN});
  expect_same(dv(round(F({1, 2}, kDouble), -400)), {kNaN, kNaN});
  Tensor i = I({-7, 12}, kShort);
  EXPECT_EQ(round(i).dtype(), kShort);
  EXPECT_EQ(iv(round(i)), (I64{-7, 12}));
  EXPECT_THROW(round(i, 1), Error);
  EXPECT_THROW(round(I({1}), -2), Error);
  EXPECT_THROW(round(F({1}, kHalf)), Error);
  EXPECT_THROW(round(Z({{1, 1}})), Error);
  Tensor x = F({2.75, -0.25});
  EXPECT_TRUE(x.round_(1).is_same(x));
  expect_same(dv(x), {2.799999952316284, -0.20000000298023224});
  Tensor y = F({2.7});
  y.round_();
  expect_same(dv(y), {3});
  Tensor out = empty_tensor({0}, kFloat);
  round_out(out, F({1.25, 1.35}), 1);
  expect_same(dv(out), {1.2000000476837158, 1.399999976158142});
  Tensor od = empty_tensor({2}, kDouble);
  EXPECT_THROW(round_out(od, F({1.25, 1.35}), 1), Error);  // round's out= dtype must match
  EXPECT_THROW(round_out(od, F({1.25, 1.35})), Error);
  expect_same(dv(F({12.5}).round(-1)), {10});
}

TEST(UnaryLogit, WithAndWithoutEps) {
  Tensor x = F({0, 0.1, 0.25, 0.5, 0.75, 0.9, 1, -0.5, 1.5, kNaN});
  expect_close(dv(logit(x)),
               {-kInf, -2.1972246170043945, -1.0986123085021973, 0, 1.0986123085021973,
                2.1972243785858154, kInf, kNaN, kNaN, kNaN},
               2.5e-7, 1e-7, "logit");
  expect_close(
      dv(logit(strided(x), 0.2)),
      {-1.3862943649291992, -1.3862943649291992, -1.0986123085021973, 0, 1.0986123085021973,
       1.3862944841384888, 1.3862944841384888, -1.3862943649291992, 1.3862944841384888, kNaN},
      2.5e-7, 1e-7, "logit eps");
  // eps = 0 clamps to [0, 1].
  expect_close(dv(x.logit(0.0)),
               {-kInf, -2.1972246170043945, -1.0986123085021973, 0, 1.0986123085021973,
                2.1972243785858154, kInf, -kInf, kInf, kNaN},
               2.5e-7, 1e-7, "logit eps 0");
  Tensor y = F({0.5, 0.75});
  y.logit_();
  expect_close(dv(y), {0, 1.0986123085021973}, 2.5e-7, 1e-7, "logit_");
  EXPECT_EQ(logit(I({0, 1})).dtype(), kFloat);
  Tensor iy = I({0, 1});
  EXPECT_THROW(iy.logit_(), Error);  // Float result can't be written into Long
  EXPECT_THROW(logit(F({0.5}, kHalf)), Error);
  // bfloat16 takes its bounds in bfloat16: 1 - 1e-6 is 1, so 1 maps to inf (as PyTorch).
  expect_same(dv(logit(F({1, 0.5}, kBFloat16), 1e-6)), {kInf, 0});
}

TEST(UnaryNanToNum, DefaultsFollowTheDtype) {
  const double fmax = std::numeric_limits<float>::max();
  const double dmax = std::numeric_limits<double>::max();
  expect_same(dv(nan_to_num(F({kNaN, kInf, -kInf, 1.5, -0.0}))), {0, fmax, -fmax, 1.5, -0.0});
  expect_same(dv(nan_to_num(F({kNaN, kInf, -kInf}, kDouble))), {0, dmax, -dmax});
  expect_same(dv(nan_to_num(strided(F({kNaN, kInf, -kInf})), 1.5, 100, -7)), {1.5, 100, -7});
  // Replacement values are cast to the dtype (1e300 is inf in float32).
  expect_same(dv(nan_to_num(F({kNaN, kInf, -kInf}), 1.5, 1e300, -1e300)), {1.5, kInf, -kInf});
  // A NaN replacement that is itself infinite is not replaced again.
  expect_same(dv(nan_to_num(F({kNaN, kInf}), kInf, 3.0)), {kInf, 3});
  Tensor i = I({1, -2}, kChar);
  EXPECT_EQ(nan_to_num(i, 1.5, 1e300, -1e300).dtype(), kChar);
  EXPECT_EQ(iv(nan_to_num(i, 1.5, 1e300, -1e300)), (I64{1, -2}));
  Tensor x = F({kNaN, 2});
  EXPECT_TRUE(x.nan_to_num_(-1.0).is_same(x));
  expect_same(dv(x), {-1, 2});
  expect_same(dv(F({kInf}).nan_to_num(std::nullopt, 5.0)), {5});
  // Integer in-place is a no-op, so an expanded (self-overlapping) tensor is fine, as PyTorch.
  Tensor e = I({1, 2}, kByte).expand({3, 2});
  EXPECT_NO_THROW(e.nan_to_num_());
  Tensor ef = F({1, 2}).expand({3, 2});
  EXPECT_THROW(ef.nan_to_num_(), Error);
}

// ---- out= and in-place through the generic path ----

TEST(UnaryOut, OutAndInPlaceRules) {
  // out= of a wider dtype receives the float result (PyTorch computes in float here too).
  Tensor od = empty_tensor({2}, kDouble);
  exp_out(od, F({1, 0.5}));
  expect_same(dv(od), {2.7182817459106445, 1.6487212181091309});
  Tensor os = empty_tensor({2}, kDouble);
  sqrt_out(os, I({2, 3}));
  expect_same(dv(os), {1.4142135381698608, 1.7320507764816284});
  // An empty out= is resized; a wrong non-empty shape is an error.
  Tensor oe = empty_tensor({0}, kFloat);
  tanh_out(oe, F({0, 1, 2}));
  EXPECT_EQ(oe.numel(), 3);
  Tensor bad = empty_tensor({2}, kFloat);
  EXPECT_THROW(tanh_out(bad, F({0, 1, 2})), Error);
  // A float result can't be written into an integer tensor.
  Tensor ol = empty_tensor({2}, kLong);
  EXPECT_THROW(sqrt_out(ol, I({2, 3})), Error);
  Tensor il = I({1, 2});
  EXPECT_THROW(exp_(il), Error);
  EXPECT_THROW(il.sigmoid_(), Error);
  Tensor ib = B({1});
  EXPECT_THROW(neg_(ib), Error);
  // Integer in-place forms that keep the dtype work.
  Tensor ia = I({-4, 5}, kInt);
  abs_(ia);
  EXPECT_EQ(iv(ia), (I64{4, 5}));
  ia.neg_();
  EXPECT_EQ(iv(ia), (I64{-4, -5}));
  // In-place on a strided view touches only the view's elements.
  Tensor base = F({-1, -2, -3, -4, -5, -6});
  Tensor v = base.slice(0, 0, std::nullopt, 2);
  v.abs_();
  expect_same(dv(base), {1, -2, 3, -4, 5, -6});
  uint32_t ver = base._version();
  relu_(v);
  EXPECT_GT(base._version(), ver);
  // Methods.
  expect_same(dv(F({4}).sqrt()), {2});
  Tensor m = F({-1});
  EXPECT_TRUE(m.exp_().is_same(m));
}

TEST(UnaryOut, LayoutsAndSizes) {
  // Transposed input: same values as the contiguous computation, in the input's layout.
  std::vector<double> vals;
  for (int i = 0; i < 12; ++i) vals.push_back(i * 0.37 - 2);
  Tensor m = F(vals).view({3, 4});
  Tensor mt = m.t();
  Tensor r = exp(mt);
  EXPECT_EQ(r.sizes(), mt.sizes());
  expect_same(dv(r), dv(exp(mt.contiguous())));
  // Broadcast (stride 0) input.
  Tensor e = F({0.5}).expand({5});
  expect_same(dv(sigmoid(e)), std::vector<double>(5, dv(sigmoid(F({0.5})))[0]));
  // Zero-size and 0-dim.
  Tensor z = exp(empty_tensor({0, 3}, kFloat));
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(z.dim(), 2);
  Tensor s = empty_tensor({}, kDouble);
  *s.data_ptr<double>() = 0.25;
  Tensor sr = logit(s);
  EXPECT_EQ(sr.dim(), 0);
  EXPECT_EQ(sr.item<double>(), std::log(0.25 / 0.75));
  // Large inputs run in parallel and give the same values as small ones.
  const int64_t n = 200003;
  std::vector<double> big(n);
  for (int64_t i = 0; i < n; ++i) big[i] = double(i % 1000) / 125.0 - 4;
  auto g = dv(gelu(F(big))), sg = dv(silu(F(big)));
  auto g0 = dv(gelu(F(std::vector<double>(big.begin(), big.begin() + 1000))));
  auto s0 = dv(silu(F(std::vector<double>(big.begin(), big.begin() + 1000))));
  // (Not bitwise: an element may fall in the vector body in one call, the scalar tail in the
  // other.)
  for (int64_t i = 0; i < n; i += 997) {
    EXPECT_NEAR(g[i], g0[i % 1000], 3e-7 * std::abs(g0[i % 1000])) << i;
    EXPECT_NEAR(sg[i], s0[i % 1000], 3e-7 * std::abs(s0[i % 1000])) << i;
  }
}
