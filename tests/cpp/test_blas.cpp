// Matrix products through the libtorch-spelled C++ API, on hand-derived values.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "ember/ember.h"
#include "view_test_util.h"

using namespace ember;

namespace {

template <class T>
std::vector<T> values(const Tensor& t) {
  return ember_test::values<T>(t.resolve_conj());
}

// [[1, 2, 3], [4, 5, 6]] in `dt`.
Tensor m23(ScalarType dt = kFloat) { return arange(1, 7).to(dt).view({2, 3}); }

}  // namespace

TEST(Blas, MmAndMatmulRules) {
  // [[1,2,3],[4,5,6]] @ [[1,2,3],[4,5,6]]^T = [[14, 32], [32, 77]]
  Tensor a = m23();
  EXPECT_EQ(values<float>(mm(a, a.t())), (std::vector<float>{14, 32, 32, 77}));
  EXPECT_EQ(values<float>(a.matmul(a.t())), (std::vector<float>{14, 32, 32, 77}));
  // 1-D · 1-D is a 0-dim dot; 2-D · 1-D a vector; 1-D · 2-D drops the prepended dim.
  Tensor v = arange(1, 4).to(kFloat);
  EXPECT_EQ(matmul(v, v).dim(), 0);
  EXPECT_FLOAT_EQ(matmul(v, v).item<float>(), 14.f);
  EXPECT_EQ(values<float>(matmul(a, v)), (std::vector<float>{14, 32}));
  EXPECT_EQ(values<float>(matmul(arange(1, 3).to(kFloat), a)), (std::vector<float>{9, 12, 15}));
  // Batch dims broadcast: [2,1,2,3] @ [3,3,2] -> [2,3,2,2].
  Tensor b = matmul(a.expand({2, 1, 2, 3}), a.t().expand({3, 3, 2}));
  EXPECT_EQ(b.sizes(), IntArrayRef({2, 3, 2, 2}));
  EXPECT_EQ(values<float>(b[1][2]), (std::vector<float>{14, 32, 32, 77}));
  // Integer and half products.
  EXPECT_EQ(values<int64_t>(mm(m23(kLong), m23(kLong).t())),
            (std::vector<int64_t>{14, 32, 32, 77}));
  EXPECT_EQ(values<int8_t>(mm(m23(kChar), m23(kChar).t())), (std::vector<int8_t>{14, 32, 32, 77}));
  Tensor h = mm(m23(kHalf), m23(kHalf).t());
  EXPECT_EQ(h.dtype(), kHalf);
  EXPECT_EQ(values<float>(h.to(kFloat)), (std::vector<float>{14, 32, 32, 77}));
}

TEST(Blas, AddFamilies) {
  Tensor a = m23(kDouble);
  Tensor c = ones({2, 2}, TensorOptions().dtype(kDouble));
  // 2 * 1 + 3 * [[14,32],[32,77]]
  EXPECT_EQ(values<double>(addmm(c, a, a.t(), 2, 3)), (std::vector<double>{44, 98, 98, 233}));
  // beta = 0 ignores NaN in the input.
  Tensor n = full({2, 2}, NAN, TensorOptions().dtype(kDouble));
  EXPECT_EQ(values<double>(addmm(n, a, a.t(), 0, 1)), (std::vector<double>{14, 32, 32, 77}));
  Tensor c2 = c.clone();
  c2.addmm_(a, a.t());
  EXPECT_EQ(values<double>(c2), (std::vector<double>{15, 33, 33, 78}));
  Tensor v = arange(1, 4).to(kDouble);
  EXPECT_EQ(values<double>(addmv(ones({2}, TensorOptions().dtype(kDouble)), a, v, 1, 2)),
            (std::vector<double>{29, 65}));
  EXPECT_EQ(values<double>(mv(a, v)), (std::vector<double>{14, 32}));
  EXPECT_EQ(values<double>(
                addr(zeros({2, 3}, TensorOptions().dtype(kDouble)), arange(1, 3).to(kDouble), v)),
            (std::vector<double>{1, 2, 3, 2, 4, 6}));
  Tensor b = a.expand({4, 2, 3});
  Tensor bt = a.t().expand({4, 3, 2});
  EXPECT_EQ(values<double>(bmm(b, bt)[3]), (std::vector<double>{14, 32, 32, 77}));
  EXPECT_EQ(values<double>(baddbmm(c, b, bt, 1, 1)[0]), (std::vector<double>{15, 33, 33, 78}));
  EXPECT_EQ(values<double>(addbmm(c, b, bt, 1, 1)), (std::vector<double>{57, 129, 129, 309}));
}

TEST(Blas, VectorProductsAndFriends) {
  Tensor v = arange(1, 4).to(kFloat);
  EXPECT_FLOAT_EQ(dot(v, v).item<float>(), 14.f);
  using cd = std::complex<double>;
  Tensor z = ones({2}, TensorOptions().dtype(kComplexDouble)).mul(Scalar(cd(1, 2)));
  // vdot conjugates the first argument: 2 * (1-2i)(1+2i) = 10; dot: 2 * (1+2i)^2 = -6+8i.
  EXPECT_EQ(vdot(z, z).item<cd>(), cd(10, 0));
  EXPECT_EQ(dot(z, z).item<cd>(), cd(-6, 8));
  EXPECT_EQ(dot(z.conj(), z).item<cd>(), cd(10, 0));
  EXPECT_EQ(values<float>(outer(v, arange(1, 3).to(kFloat))),
            (std::vector<float>{1, 2, 2, 4, 3, 6}));
  EXPECT_EQ(values<float>(inner(v, v)), (std::vector<float>{14}));
  EXPECT_EQ(values<float>(tensordot(m23(), m23(), {0, 1}, {0, 1})), (std::vector<float>{91}));
  EXPECT_EQ(values<float>(kron(eye(2), ones({1, 2}))),
            (std::vector<float>{1, 1, 0, 0, 0, 0, 1, 1}));
  Tensor x = tensor({1.f, 0.f, 0.f}), y = tensor({0.f, 1.f, 0.f});
  EXPECT_EQ(values<float>(linalg::cross(x, y)), (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(values<float>(cross(x, y)), (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(trace(m23(kInt)).dtype(), kLong);
  EXPECT_EQ(trace(m23(kInt)).item<int64_t>(), 6);
  EXPECT_EQ(values<float>(einsum("ij,kj->ik", {m23(), m23()})),
            (std::vector<float>{14, 32, 32, 77}));
  EXPECT_FLOAT_EQ(einsum("ii", {eye(3)}).item<float>(), 3.f);
  EXPECT_EQ(values<float>(linalg::multi_dot({m23(), m23().t(), m23()})),
            values<float>(mm(mm(m23(), m23().t()), m23())));
  EXPECT_EQ(values<float>(chain_matmul({m23().t(), m23()})), values<float>(mm(m23().t(), m23())));
}

TEST(Blas, ZeroSizeAndErrors) {
  EXPECT_EQ(values<float>(mm(ones({2, 0}), ones({0, 2}))), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(mm(ones({0, 3}), ones({3, 2})).sizes(), IntArrayRef({0, 2}));
  EXPECT_THROW(mm(ones({2, 3}), ones({2, 3})), Error);
  EXPECT_THROW(mm(ones({2, 3}), ones({3, 2}, TensorOptions().dtype(kDouble))), Error);
  EXPECT_THROW(matmul(ones({}), ones({2})), Error);
  EXPECT_THROW(bmm(ones({2, 2, 3}), ones({3, 3, 2})), Error);
  EXPECT_THROW(dot(ones({3}), ones({2})), Error);
  EXPECT_THROW(
      mm(ones({2, 2}, TensorOptions().dtype(kBool)), ones({2, 2}, TensorOptions().dtype(kBool))),
      Error);
  EXPECT_THROW(linalg_multi_dot({ones({2, 3})}), Error);
  EXPECT_THROW(einsum("ij,jk", {ones({2, 3})}), Error);
  try {
    mm(ones({2, 3}), ones({2, 3}));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[mm]"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("2x3 and 2x3"), std::string::npos);
  }
}
