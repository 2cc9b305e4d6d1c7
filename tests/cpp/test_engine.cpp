// The elementwise loop engine: layout cases, broadcasting, threading, out=, in-place and
// overlap checks, promotion of mixed inputs. Uses add/mul, whose values are easy to derive.
#include <gtest/gtest.h>

#include <vector>

#include "ember/ember.h"

using namespace ember;
using namespace ember::indexing;

namespace {
std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}
}  // namespace

TEST(Engine, ContiguousTransposedSteppedBroadcast) {
  Tensor a = arange(12, kFloat).view({3, 4});
  Tensor b = arange(12, kFloat).view({3, 4}).mul(10);
  EXPECT_EQ(values(add(a, b)), (std::vector<double>{0, 11, 22, 33, 44, 55, 66, 77, 88, 99, 110, 121}));
  // Transposed inputs: out[i][j] = a[j][i] + b[j][i].
  Tensor t = add(a.t(), b.t());
  EXPECT_EQ(t.sizes(), IntArrayRef({4, 3}));
  EXPECT_EQ(t.strides(), IntArrayRef({1, 4}));  // the output follows the inputs' layout
  EXPECT_EQ(values(t), (std::vector<double>{0, 44, 88, 11, 55, 99, 22, 66, 110, 33, 77, 121}));
  // Stepped slice: every other column.
  Tensor s = a.slice(1, 0, 4, 2);
  EXPECT_EQ(values(add(s, s)), (std::vector<double>{0, 4, 8, 12, 16, 20}));
  // Broadcast (3,1) + (1,4) and a stride-0 expanded operand.
  Tensor col = arange(3, kFloat).view({3, 1});
  Tensor row = arange(4, kFloat).view({1, 4}).mul(100);
  EXPECT_EQ(values(add(col, row)),
            (std::vector<double>{0, 100, 200, 300, 1, 101, 201, 301, 2, 102, 202, 302}));
  Tensor e = arange(4, kFloat).expand({3, 4});
  EXPECT_EQ(values(add(a, e)), (std::vector<double>{0, 2, 4, 6, 4, 6, 8, 10, 8, 10, 12, 14}));
}

TEST(Engine, ZeroSizeAndZeroDim) {
  Tensor z = zeros({0, 3});
  Tensor r = add(z, ones({3}));
  EXPECT_EQ(r.sizes(), IntArrayRef({0, 3}));
  Tensor s = full({}, 2.0, kFloat);
  Tensor rs = mul(s, s);
  EXPECT_EQ(rs.dim(), 0);
  EXPECT_EQ(rs.item<float>(), 4.0f);
  EXPECT_EQ(add(s, arange(3, kFloat)).sizes(), IntArrayRef({3}));
}

TEST(Engine, BroadcastErrorNamesShapes) {
  try {
    add(zeros({2, 3}), zeros({4}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[add]"), std::string::npos) << m;
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4]"), std::string::npos) << m;
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
}

TEST(Engine, ResultsDoNotDependOnThreadCount) {
  int saved = get_num_threads();
  Tensor a = arange(300001, kDouble).mul(0.5).view({300001});
  Tensor b = arange(300001, kDouble).slice(0, 0, 300001).mul(-0.25);
  set_num_threads(1);
  Tensor one = add(a, b, 3);
  set_num_threads(2);
  Tensor two = add(a, b, 3);
  set_num_threads(saved);
  EXPECT_TRUE(equal(one, two));
  EXPECT_EQ(one.select(0, 300000).item<double>(), 300000 * 0.5 - 3 * 300000 * 0.25);
}

TEST(Engine, LargeStridedAndBroadcastThreaded) {
  int saved = get_num_threads();
  set_num_threads(2);
  Tensor a = arange(512 * 300, kFloat).view({512, 300});
  Tensor r = add(a.t(), arange(512, kFloat));  // (300, 512) + (512,)
  Tensor expect = empty({300, 512});
  float* p = expect.data_ptr<float>();
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j < 512; ++j) p[i * 512 + j] = float(j * 300 + i + j);
  EXPECT_TRUE(equal(r, expect));
  set_num_threads(saved);
}

TEST(Engine, PromotionOfMixedInputs) {
  Tensor i = arange(3, kInt);
  EXPECT_EQ(add(i, 1.5).dtype(), kFloat);                       // int tensor + float scalar
  EXPECT_EQ(add(i, full({}, 1, kLong)).dtype(), kInt);          // 0-dim is weak
  EXPECT_EQ(add(i, arange(3, kLong)).dtype(), kLong);           // both dim>0
  EXPECT_EQ(add(arange(3, kHalf), arange(3, kBFloat16)).dtype(), kFloat);
  EXPECT_EQ(add(arange(3, kFloat), full({}, 1, kDouble)).dtype(), kFloat);
  EXPECT_EQ(mul(full({2}, true, kBool), 3).dtype(), kLong);
  EXPECT_EQ(values(add(i, 1.5)), (std::vector<double>{1.5, 2.5, 3.5}));
  EXPECT_EQ(result_type(arange(3, kByte), arange(3, kChar)), kShort);
}

TEST(Engine, OutVariants) {
  Tensor a = arange(4, kFloat), b = ones({4});
  Tensor out = empty({4});
  add_out(out, a, b);
  EXPECT_EQ(values(out), (std::vector<double>{1, 2, 3, 4}));
  Tensor empty_out = empty({0});
  add_out(empty_out, a, b);  // an empty out= is resized
  EXPECT_EQ(empty_out.sizes(), IntArrayRef({4}));
  Tensor wrong_shape = empty({3});
  EXPECT_THROW(add_out(wrong_shape, a, b), Error);
  Tensor wrong_dtype = empty({4}, kLong);
  EXPECT_THROW(add_out(wrong_dtype, a, b), Error);  // float result into int64
  Tensor wider = empty({4}, kDouble);
  add_out(wider, a, b);                                // castable: computed then cast
  EXPECT_EQ(values(wider), (std::vector<double>{1, 2, 3, 4}));
  Tensor strided = zeros({4, 2}).select(1, 0);
  add_out(strided, a, b);
  EXPECT_EQ(values(strided), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Engine, InPlaceChecks) {
  Tensor a = arange(4, kFloat);
  uint32_t v = a._version();
  a.add_(1);
  EXPECT_GT(a._version(), v);
  EXPECT_EQ(values(a), (std::vector<double>{1, 2, 3, 4}));
  Tensor i = arange(4, kLong);
  EXPECT_THROW(i.add_(1.5), Error);                 // result Float can't be cast to Long
  Tensor small = zeros({3});
  EXPECT_THROW(small.add_(zeros({2, 3})), Error);   // in-place cannot broadcast self
  Tensor ex = zeros({1}).expand({4});
  EXPECT_THROW(ex.add_(1), Error);                  // internal overlap
  EXPECT_THROW(ex.mul_(ones({4})), Error);
  Tensor base = arange(6, kFloat);
  Tensor lo = base.slice(0, 0, 4), hi = base.slice(0, 2, 6);
  EXPECT_THROW(add_out(lo, hi, hi), Error);          // partial overlap of out and input
}

TEST(Engine, HalfAndComplexArithmetic) {
  Tensor h = arange(4, kHalf);
  EXPECT_EQ(values(mul(h, h)), (std::vector<double>{0, 1, 4, 9}));
  Tensor bf = full({3}, 1.5, kBFloat16);
  EXPECT_EQ(values(add(bf, bf)), (std::vector<double>{3, 3, 3}));
  Tensor z = full({2}, complex<double>(1, 2), kComplexFloat);
  Tensor zz = mul(z, z);  // (1+2i)^2 = -3+4i
  EXPECT_EQ(zz.dtype(), kComplexFloat);
  EXPECT_EQ(zz.slice(0, 1, 2).item().toComplexDouble(), complex<double>(-3, 4));
  // Lazy conjugates are resolved before the kernel: (1-2i)(1+2i) = 5.
  EXPECT_EQ(mul(z.conj(), z).slice(0, 0, 1).item().toComplexDouble(), complex<double>(5, 0));
}

TEST(Engine, BoolAndIntegerAlpha) {
  Tensor t = full({2}, true, kBool);
  EXPECT_EQ(add(t, t).dtype(), kBool);
  EXPECT_THROW(sub(t, t), Error);  // bool subtraction is not supported
  EXPECT_THROW(add(arange(3, kLong), arange(3, kLong), 1.5), Error);  // float alpha, int inputs
  EXPECT_EQ(values(sub(arange(3, kLong), ones({3}, kLong), 2)), (std::vector<double>{-2, -1, 0}));
}
