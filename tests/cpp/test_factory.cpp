// Factories: shapes, dtype inference, values and errors. Expected values come from PyTorch 1.13
// (Debian's python3-torch) and libtorch 1.13 (dtype rules of torch::tensor), pasted as literals.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

// Restores the default dtype when a test changes it.
struct DefaultDtypeGuard {
  ScalarType saved = get_default_dtype();
  ~DefaultDtypeGuard() { set_default_dtype(saved); }
};

template <class T>
std::vector<T> values(const Tensor& t) {
  Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

template <class T>
void expect_values(const Tensor& t, const std::vector<T>& want) {
  ASSERT_EQ(t.numel(), int64_t(want.size()));
  std::vector<T> got = values<T>(t);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "at " << i;
}

template <class T>
void expect_near(const Tensor& t, const std::vector<T>& want, double tol) {
  ASSERT_EQ(t.numel(), int64_t(want.size()));
  std::vector<T> got = values<T>(t);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// The error's Python kind must be RuntimeError (a plain ember::Error).
template <class F>
void expect_runtime_error(F&& f) {
  try {
    f();
    ADD_FAILURE() << "expected an ember::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime) << e.what();
  }
}

}  // namespace

TEST(Factory, EmptyShapesAndDtypes) {
  Tensor t = empty({2, 3});
  EXPECT_EQ(t.sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(t.dtype(), kFloat);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.is_cpu());
  EXPECT_EQ(empty({4}, kLong).dtype(), kLong);
  EXPECT_EQ(empty({}, kDouble).dim(), 0);
  EXPECT_EQ(empty({0, 5}).numel(), 0);
  expect_runtime_error([] { empty({2, -1}); });
  expect_runtime_error([] { zeros({-3}); });
}

TEST(Factory, EmptyStrided) {
  Tensor t = empty_strided({2, 3}, {1, 2});
  EXPECT_EQ(t.strides(), IntArrayRef({1, 2}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.storage().nbytes(), 6 * sizeof(float));  // torch: storage().size() == 6
  EXPECT_EQ(empty_strided({3, 2}, {0, 1}).storage().nbytes(), 2 * sizeof(float));
  EXPECT_EQ(empty_strided({2, 0}, {5, 1}).storage().nbytes(), 0u);
  expect_runtime_error([] { empty_strided({2, 3}, {1, -2}); });
  expect_runtime_error([] { empty_strided({2, 3}, {1}); });
}

TEST(Factory, ZerosOnesFull) {
  expect_values<float>(zeros({2, 2}), {0, 0, 0, 0});
  expect_values<int64_t>(ones({3}, kLong), {1, 1, 1});
  expect_values<bool>(ones({2}, kBool), {true, true});
  expect_values<double>(full({2}, 2.5, kDouble), {2.5, 2.5});
  expect_values<complex<float>>(zeros({1}, kComplexFloat), {complex<float>(0, 0)});
  expect_values<Half>(ones({1}, kHalf), {Half(1.0f)});
  Tensor z = zeros({2}, TensorOptions(kFloat).requires_grad(true));
  EXPECT_TRUE(z.requires_grad());
  EXPECT_FALSE(zeros({2}).requires_grad());
  // torch: "Only Tensors of floating point and complex dtype can require gradients".
  expect_runtime_error([] { empty({2}, TensorOptions(kLong).requires_grad(true)); });
}

TEST(Factory, FullInfersDtypeFromValue) {
  // torch.full((2,), 3).dtype == int64; 3.0 -> float32; True -> bool; 1+2j -> complex64.
  EXPECT_EQ(full({2}, 3).dtype(), kLong);
  EXPECT_EQ(full({2}, 3.0).dtype(), kFloat);
  EXPECT_EQ(full({2}, true).dtype(), kBool);
  EXPECT_EQ(full({2}, complex<double>(1, 2)).dtype(), kComplexFloat);
  expect_values<complex<float>>(full({2}, complex<double>(1, 2)),
                                {complex<float>(1, 2), complex<float>(1, 2)});
  EXPECT_EQ(full({2}, 3, kFloat).dtype(), kFloat);
  DefaultDtypeGuard guard;
  set_default_dtype(kDouble);
  EXPECT_EQ(full({2}, 1.5).dtype(), kDouble);
  EXPECT_EQ(full({2}, complex<double>(1, 2)).dtype(), kComplexDouble);
  EXPECT_EQ(full({2}, 1).dtype(), kLong);
}

TEST(Factory, LikeFactories) {
  Tensor base = ones({2, 3}, kInt);
  EXPECT_EQ(zeros_like(base).dtype(), kInt);
  EXPECT_EQ(zeros_like(base).sizes(), IntArrayRef({2, 3}));
  expect_values<int32_t>(ones_like(base), {1, 1, 1, 1, 1, 1});
  EXPECT_EQ(ones_like(base, kDouble).dtype(), kDouble);
  expect_values<float>(full_like(base, 7, kFloat), {7, 7, 7, 7, 7, 7});
  expect_values<int32_t>(full_like(base, 7), {7, 7, 7, 7, 7, 7});
  // torch.empty_like(torch.empty(2, 3).t()).stride() == (1, 3): dense layouts are preserved.
  Tensor tt = empty({2, 3}).t();
  EXPECT_EQ(empty_like(tt).strides(), IntArrayRef({1, 3}));
  // Non-dense inputs give contiguous results: torch gives (2, 1) for x[:, ::2] of a 2x3.
  Tensor sl = empty({2, 3}).slice(1, 0, std::nullopt, 2);
  EXPECT_EQ(empty_like(sl).strides(), IntArrayRef({2, 1}));
  EXPECT_TRUE(zeros_like(base, TensorOptions(kFloat).requires_grad(true)).requires_grad());
}

TEST(Factory, ArangeIntegers) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), kLong);
  expect_values<int64_t>(a, {0, 1, 2, 3, 4});
  expect_values<int64_t>(arange(10, 0, -3), {10, 7, 4, 1});
  expect_values<int64_t>(arange(2, 3), {2});
  EXPECT_EQ(arange(3, 3).numel(), 0);
  // torch.arange(0, 5.5, 1.5, dtype=int64): the step truncates to 1 -> [0, 1, 2, 3, 4];
  // with int32 the size is computed in double -> [0, 1, 2, 3].
  expect_values<int64_t>(arange(0, 5.5, 1.5, kLong), {0, 1, 2, 3, 4});
  expect_values<int32_t>(arange(0, 5.5, 1.5, kInt), {0, 1, 2, 3});
}

TEST(Factory, ArangeFloats) {
  Tensor a = arange(1, 2.5);
  EXPECT_EQ(a.dtype(), kFloat);
  expect_values<float>(a, {1.0f, 2.0f});
  expect_values<float>(arange(-3, 3, 2.5), {-3.0f, -0.5f, 2.0f});
  expect_values<double>(arange(0, 10, 3, kDouble), {0, 3, 6, 9});
  // torch.arange(0, 1, 0.1)
  expect_values<float>(
      arange(0, 1, 0.1),
      {0.0f, 0.10000000149011612f, 0.20000000298023224f, 0.30000001192092896f, 0.4000000059604645f,
       0.5f, 0.6000000238418579f, 0.699999988079071f, 0.800000011920929f, 0.8999999761581421f});
  // torch.arange(-3.3, 7.9, 0.37, dtype=float64); PyTorch's vectorised loop may differ in the
  // last bit, so compare to 1e-15.
  expect_near<double>(arange(-3.3, 7.9, 0.37, kDouble),
                      {-3.3,
                       -2.9299999999999997,
                       -2.5599999999999996,
                       -2.19,
                       -1.8199999999999998,
                       -1.4499999999999997,
                       -1.0799999999999998,
                       -0.7099999999999999,
                       -0.33999999999999986,
                       0.030000000000000138,
                       0.40000000000000013,
                       0.7700000000000001,
                       1.1400000000000001,
                       1.5100000000000002,
                       1.8800000000000001,
                       2.25,
                       2.62,
                       2.99,
                       3.3600000000000003,
                       3.73,
                       4.1,
                       4.47,
                       4.84,
                       5.21,
                       5.58,
                       5.95,
                       6.32,
                       6.69,
                       7.0600000000000005,
                       7.43,
                       7.8},
                      1e-14);
  expect_values<Half>(arange(0, 1, 0.25, kHalf),
                      {Half(0.0f), Half(0.25f), Half(0.5f), Half(0.75f)});
}

TEST(Factory, ArangeErrors) {
  expect_runtime_error([] { arange(0, 5, 0); });             // step must be nonzero
  expect_runtime_error([] { arange(5, 0, 1); });             // inconsistent with step sign
  expect_runtime_error([] { arange(0, 0.5, 0.5, kLong); });  // step truncates to 0
  expect_runtime_error([] { arange(0.0, INFINITY); });       // unsupported range
  expect_runtime_error([] { arange(5, kBool); });            // not implemented for Bool
  expect_runtime_error([] { arange(3, kComplexFloat); });
}

TEST(Factory, Linspace) {
  expect_values<float>(linspace(0, 1, 5), {0.0f, 0.25f, 0.5f, 0.75f, 1.0f});
  EXPECT_EQ(linspace(0, 1, 5).dtype(), kFloat);
  // torch.linspace(-3.3, 7.9, 7) and its float64 version.
  expect_near<float>(
      linspace(-3.3, 7.9, 7),
      {-3.299999952316284f, -1.4333332777023315f, 0.4333333969116211f, 2.3000001907348633f,
       4.1666669845581055f, 6.0333333015441895f, 7.900000095367432f},
      1e-6);
  expect_near<double>(linspace(-3.3, 7.9, 7, kDouble),
                      {-3.3, -1.4333333333333333, 0.4333333333333331, 2.3000000000000007,
                       4.166666666666668, 6.033333333333334, 7.9},
                      1e-15);
  // Both ends are exact.
  Tensor l = linspace(0.1, 0.7, 1001, kDouble);
  EXPECT_EQ(l.data_ptr<double>()[0], 0.1);
  EXPECT_EQ(l.data_ptr<double>()[1000], 0.7);
  expect_values<int32_t>(linspace(2, -1, 4, kInt), {2, 1, 0, -1});
  expect_values<int64_t>(linspace(0, 10, 7, kLong), {0, 1, 3, 5, 6, 8, 10});
  expect_values<float>(linspace(3, 9, 1), {3.0f});
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  expect_runtime_error([] { linspace(0, 1, -1); });
  // torch.linspace(1+1j, 2, 3) -> complex64 [1+1j, 1.5+0.5j, 2+0j]
  Tensor c = linspace(complex<double>(1, 1), 2, 3);
  EXPECT_EQ(c.dtype(), kComplexFloat);
  expect_values<complex<float>>(c, {{1, 1}, {1.5f, 0.5f}, {2, 0}});
  // torch.linspace(-3.3, 7.9, 7, dtype=float16)
  expect_values<Half>(linspace(-3.3, 7.9, 7, kHalf),
                      {Half(-3.30078125f), Half(-1.43359375f), Half(0.43359375f), Half(2.296875f),
                       Half(4.1640625f), Half(6.03125f), Half(7.8984375f)});
}

TEST(Factory, Logspace) {
  expect_near<double>(logspace(0, 2, 5, 10.0, kDouble),
                      {1.0, 3.1622776601683795, 10.0, 31.622776601683793, 100.0}, 1e-13);
  expect_values<float>(logspace(0, 2, 5, 2.0),
                       {1.0f, 1.4142135381698608f, 2.0f, 2.8284270763397217f, 4.0f});
  expect_near<float>(logspace(-1, 1, 4),
                     {0.10000000149011612f, 0.46415889263153076f, 2.1544346809387207f, 10.0f},
                     1e-6);
  expect_values<int64_t>(logspace(0, 3, 4, 10.0, kLong), {1, 10, 100, 1000});
  expect_values<int64_t>(logspace(0, 2, 5, 10.0, kLong), {1, 3, 10, 31, 100});
  expect_values<float>(logspace(2, 5, 1), {100.0f});
  EXPECT_EQ(logspace(0, 1, 0).numel(), 0);
  expect_runtime_error([] { logspace(0, 1, -2); });
}

TEST(Factory, Eye) {
  expect_values<float>(eye(3), {1, 0, 0, 0, 1, 0, 0, 0, 1});
  Tensor e = eye(2, 3, kLong);
  EXPECT_EQ(e.sizes(), IntArrayRef({2, 3}));
  expect_values<int64_t>(e, {1, 0, 0, 0, 1, 0});
  expect_values<bool>(eye(2, 1, kBool), {true, false});
  EXPECT_EQ(eye(0).numel(), 0);
  expect_runtime_error([] { eye(-1); });
  expect_runtime_error([] { eye(2, -1); });
}

TEST(Factory, FromBlobWrapsWithoutCopy) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(data, {2, 3});
  EXPECT_EQ(t.data_ptr(), static_cast<void*>(data));
  EXPECT_EQ(t.dtype(), kFloat);
  EXPECT_EQ(t.storage().unsafeGetStorageImpl()->allocator(), nullptr);
  data[4] = 50;
  EXPECT_EQ(t.data_ptr<float>()[4], 50.0f);
  // Strided: a column-major view of the same memory.
  Tensor s = from_blob(data, {3, 2}, {1, 3});
  expect_values<float>(s, {1, 4, 2, 50, 3, 6});
  int64_t longs[3] = {7, 8, 9};
  expect_values<int64_t>(from_blob(longs, {3}, kLong), {7, 8, 9});
}

TEST(Factory, FromBlobDeleterRunsOnce) {
  int calls = 0;
  void* seen = nullptr;
  std::vector<double> buf = {1.5, 2.5};
  {
    Tensor t = from_blob(
        buf.data(), {2},
        [&](void* p) {
          ++calls;
          seen = p;
        },
        kDouble);
    Tensor view = t.view({1, 2});
    t = Tensor();
    EXPECT_EQ(calls, 0);  // the view still holds the storage
    EXPECT_EQ(view.data_ptr<double>()[1], 2.5);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, static_cast<void*>(buf.data()));
  // Strided variant with a deleter; a failure before wrapping never calls the deleter.
  int calls2 = 0;
  {
    Tensor t = from_blob(
        buf.data(), {2}, {1}, [&](void*) { ++calls2; }, kDouble);
  }
  EXPECT_EQ(calls2, 1);
  EXPECT_THROW(from_blob(
                   buf.data(), {2}, {-1}, [&](void*) { ++calls2; }, kDouble),
               Error);
  EXPECT_EQ(calls2, 1);
}

TEST(Factory, ScalarTensorAndTensorFromScalar) {
  Tensor s = scalar_tensor(3);  // torch.scalar_tensor(3).dtype == float32
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), kFloat);
  EXPECT_EQ(s.item<float>(), 3.0f);
  EXPECT_EQ(scalar_tensor(2.5, kDouble).item<double>(), 2.5);
  // libtorch: torch::tensor(3) -> kLong, tensor(3.0) -> kFloat, tensor(true) -> kBool.
  EXPECT_EQ(tensor(3).dtype(), kLong);
  EXPECT_EQ(tensor(3).item<int64_t>(), 3);
  EXPECT_EQ(tensor(3.5).dtype(), kFloat);
  EXPECT_EQ(tensor(true).dtype(), kBool);
  EXPECT_EQ(tensor(complex<double>(1, 2)).dtype(), kComplexDouble);
  EXPECT_EQ(tensor(3, kDouble).dtype(), kDouble);
}

TEST(Factory, TensorFromValuesFollowsLibtorchDtypes) {
  // Checked against libtorch 1.13: {1, 2} -> Long; {1.0, 2.0} and {1.0f} -> Float;
  // {true} -> Bool; Half/complex keep their dtype; vector<int> -> Long; nested -> 2-D.
  Tensor a = tensor({1, 2, 3});
  EXPECT_EQ(a.dtype(), kLong);
  expect_values<int64_t>(a, {1, 2, 3});
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), kFloat);
  expect_values<float>(tensor({1.5f, -2.0f}), {1.5f, -2.0f});
  EXPECT_EQ(tensor({int64_t(1)}).dtype(), kLong);
  expect_values<bool>(tensor({true, false}), {true, false});
  EXPECT_EQ(tensor({Half(1.0f)}).dtype(), kHalf);
  EXPECT_EQ(tensor({BFloat16(1.0f)}).dtype(), kBFloat16);
  EXPECT_EQ(tensor({uint8_t(3)}).dtype(), kByte);
  EXPECT_EQ(tensor({complex<float>(1, 2)}).dtype(), kComplexFloat);
  expect_values<complex<double>>(tensor({complex<double>(1, 2)}), {complex<double>(1, 2)});
  EXPECT_EQ(tensor(std::vector<int>{4, 5}).dtype(), kLong);
  expect_values<float>(tensor(std::vector<double>{0.5, 1.5}), {0.5f, 1.5f});
  expect_values<bool>(tensor(std::vector<bool>{false, true}), {false, true});
  Tensor m = tensor({{1, 2}, {3, 4}});
  EXPECT_EQ(m.sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(m.dtype(), kLong);
  expect_values<int64_t>(m, {1, 2, 3, 4});
  EXPECT_EQ(tensor({{1.0, 2.0}}).sizes(), IntArrayRef({1, 2}));
  EXPECT_THROW(tensor({{1, 2}, {3}}), ValueError);
  expect_values<double>(tensor({1, 2}, kDouble), {1.0, 2.0});
  EXPECT_TRUE(tensor({1.0, 2.0}, TensorOptions().requires_grad(true)).requires_grad());
  EXPECT_EQ(tensor(std::vector<float>{}).sizes(), IntArrayRef({0}));
  DefaultDtypeGuard guard;
  set_default_dtype(kDouble);
  EXPECT_EQ(tensor({1.0f}).dtype(), kDouble);  // libtorch: float -> default dtype
  EXPECT_EQ(tensor({1}).dtype(), kLong);
}

// Sizes whose byte count overflows int64 are an error, never a too-small storage.
TEST(Factory, StorageSizeOverflow) {
  const int64_t big = int64_t(1) << 62;
  EXPECT_THROW(empty({big, 4}), Error);
  EXPECT_THROW(zeros({int64_t(1) << 31, int64_t(1) << 31}), Error);
  EXPECT_THROW(empty_strided({big, 2}, {4, 1}), Error);
  EXPECT_THROW(empty_strided({4, 2}, {big, big}), Error);
  EXPECT_EQ(empty({big, 0}).numel(), 0);  // zero elements: no storage, no overflow
}

// fill_ values outside the target's range are rejected as PyTorch does (values checked by
// hand against torch 1.13: uint8 accepts -255..255, inf fills floats, 1+0j fills reals).
TEST(Factory, FillValueRange) {
  EXPECT_THROW(zeros({2}, kByte).fill_(300), Error);
  EXPECT_THROW(zeros({2}, kByte).fill_(-256), Error);
  EXPECT_EQ(zeros({1}, kByte).fill_(-255).item<int64_t>(), 1);
  EXPECT_THROW(zeros({1}, kChar).fill_(128), Error);
  EXPECT_THROW(zeros({1}, kInt).fill_(std::nan("")), Error);
  EXPECT_THROW(zeros({1}, kInt).fill_(INFINITY), Error);
  EXPECT_THROW(zeros({1}, kFloat).fill_(1e40), Error);
  EXPECT_THROW(zeros({1}, kHalf).fill_(70000.0), Error);
  EXPECT_TRUE(std::isinf(zeros({1}, kFloat).fill_(INFINITY).item<double>()));
  EXPECT_EQ(zeros({1}, kFloat).fill_(complex<double>(1, 0)).item<double>(), 1.0);
  EXPECT_THROW(zeros({1}, kFloat).fill_(complex<double>(1, 1)), Error);
  EXPECT_TRUE(zeros({1}, kBool).fill_(complex<double>(1, 2)).item<bool>());
  EXPECT_EQ(zeros({1}, kLong).fill_(INT64_MAX).item<int64_t>(), INT64_MAX);
  EXPECT_THROW(full({1}, 300, kByte), Error);
}
