// ember::linalg through the libtorch-spelled C++ API, on hand-derived values and identities.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "view_test_util.h"

using namespace ember;

namespace {

template <class T>
std::vector<T> values(const Tensor& t) {
  return ember_test::values<T>(t.resolve_conj());
}

TensorOptions f64() { return TensorOptions().dtype(kDouble); }

// Rows of a small float64 matrix.
Tensor mat(std::initializer_list<std::initializer_list<double>> rows) {
  return tensor<double>(rows, f64());
}

void expect_near(const Tensor& a, const Tensor& b, double tol = 1e-12) {
  ASSERT_EQ(a.sizes(), b.sizes());
  const std::vector<double> x = values<double>(a.to(kDouble)), y = values<double>(b.to(kDouble));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tol) << "at " << i;
}

}  // namespace

TEST(Linalg, SolveAndInverse) {
  // [[3, 1], [1, 2]] x = [9, 8] -> x = [2, 3].
  Tensor A = mat({{3, 1}, {1, 2}});
  Tensor b = tensor<double>({9, 8}, f64());
  expect_near(linalg::solve(A, b), tensor<double>({2, 3}, f64()));
  // X A = B (left = false) with B = [[9, 8]]: X = [[2, 3]] as A is symmetric.
  expect_near(linalg::solve(A, b.unsqueeze(0), /*left=*/false), mat({{2, 3}}));
  // inv([[4, 7], [2, 6]]) = [[0.6, -0.7], [-0.2, 0.4]]; the transposed view gives its transpose.
  Tensor B = mat({{4, 7}, {2, 6}});
  expect_near(linalg::inv(B), mat({{0.6, -0.7}, {-0.2, 0.4}}));
  expect_near(linalg::inv(B.t()), mat({{0.6, -0.2}, {-0.7, 0.4}}));
  expect_near(matmul(B, inverse(B)), eye(2, f64()));
  // A batch with one singular matrix: solve_ex reports it in info without raising.
  auto [X, info] = linalg::solve_ex(stack({A, zeros({2, 2}, f64())}), b);
  EXPECT_EQ(values<int32_t>(info), (std::vector<int32_t>{0, 1}));
  expect_near(X[0], tensor<double>({2, 3}, f64()));
}

TEST(Linalg, QrReconstructs) {
  Tensor A = mat({{1, 2}, {3, 4}, {5, 6}});
  auto [Q, R] = linalg::qr(A);
  EXPECT_EQ(Q.sizes(), IntArrayRef({3, 2}));
  EXPECT_EQ(R.sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(R[1][0].item<double>(), 0.0);
  expect_near(matmul(Q, R), A);
  expect_near(matmul(Q.t(), Q), eye(2, f64()));
  // |R[0, 0]| is the norm of the first column: sqrt(35).
  EXPECT_NEAR(std::abs(R[0][0].item<double>()), std::sqrt(35.0), 1e-12);
  auto [Qc, Rc] = linalg::qr(A, "complete");
  EXPECT_EQ(Qc.sizes(), IntArrayRef({3, 3}));
  expect_near(matmul(Qc, Rc), A);
  auto [Qr, Rr] = linalg::qr(A, "r");
  EXPECT_EQ(Qr.numel(), 0);
  expect_near(Rr, R);
  EXPECT_THROW(linalg::qr(A, "full"), Error);
}

TEST(Linalg, SvdValuesAndReconstruction) {
  // Singular values of [[3, 0], [0, -4]] are 4 and 3.
  expect_near(linalg::svdvals(mat({{3, 0}, {0, -4}})), tensor<double>({4, 3}, f64()));
  Tensor A = mat({{2, 0, 1}, {-1, 3, 0}});
  auto [U, S, Vh] = linalg::svd(A, /*full_matrices=*/false);
  EXPECT_EQ(Vh.sizes(), IntArrayRef({2, 3}));
  expect_near(matmul(U * S.unsqueeze(0), Vh), A);
  expect_near(matmul(U.t(), U), eye(2, f64()));
  auto [Uf, Sf, Vhf] = linalg::svd(A);
  EXPECT_EQ(Vhf.sizes(), IntArrayRef({3, 3}));
  expect_near(matmul(Vhf, Vhf.t()), eye(3, f64()));
  // Float32 in, float32 values out (complex in, real values out).
  EXPECT_EQ(linalg::svdvals(A.to(kComplexFloat)).dtype(), kFloat);
}

TEST(Linalg, EighAscending) {
  // [[2, 1], [1, 2]]: eigenvalues 1, 3.
  Tensor A = mat({{2, 1}, {1, 2}});
  auto [w, V] = linalg::eigh(A);
  expect_near(w, tensor<double>({1, 3}, f64()));
  expect_near(matmul(A, V), V * w.unsqueeze(0));
  expect_near(matmul(V.t(), V), eye(2, f64()));
  // Only the named triangle is read: junk above the diagonal is ignored with "L".
  expect_near(linalg::eigvalsh(mat({{2, 100}, {1, 2}}), "L"), w);
  expect_near(linalg::eigvalsh(mat({{2, 1}, {100, 2}}), "U"), w);
  EXPECT_THROW(linalg::eigh(A, "X"), Error);
}

TEST(Linalg, DetAndSlogdet) {
  Tensor A = mat({{1, 2}, {3, 4}});
  EXPECT_NEAR(linalg::det(A).item<double>(), -2.0, 1e-12);
  auto [sign, logabs] = linalg::slogdet(A);
  EXPECT_EQ(sign.item<double>(), -1.0);
  EXPECT_NEAR(logabs.item<double>(), std::log(2.0), 1e-12);
  // det of a 0x0 matrix is 1; a singular one has sign 0 and log|det| -inf.
  EXPECT_EQ(linalg::det(zeros({0, 0}, f64())).item<double>(), 1.0);
  auto [s0, l0] = linalg::slogdet(zeros({2, 2}, f64()));
  EXPECT_EQ(s0.item<double>(), 0.0);
  EXPECT_EQ(l0.item<double>(), -std::numeric_limits<double>::infinity());
  // Complex: det(diag(i, 2)) = 2i, so sign = i and log|det| = log 2.
  using cd = std::complex<double>;
  Tensor C = zeros({2, 2}, TensorOptions().dtype(kComplexDouble));
  C.diagonal().copy_(tensor<cd>({cd(0, 1), cd(2, 0)}, TensorOptions().dtype(kComplexDouble)));
  auto [sc, lc] = linalg::slogdet(C);
  EXPECT_NEAR(std::abs(sc.item<cd>() - cd(0, 1)), 0.0, 1e-12);
  EXPECT_NEAR(lc.item<double>(), std::log(2.0), 1e-12);
}

TEST(Linalg, CholeskyAndErrors) {
  Tensor A = mat({{4, 2}, {2, 5}});
  // L = [[2, 0], [1, 2]].
  expect_near(linalg::cholesky(A), mat({{2, 0}, {1, 2}}));
  expect_near(linalg::cholesky(A, /*upper=*/true), mat({{2, 1}, {0, 2}}));
  // Not positive-definite: LinAlgError (a RuntimeError) naming the batch element.
  Tensor bad = stack({A, -eye(2, f64())});
  try {
    linalg::cholesky(bad);
    FAIL() << "cholesky of a negative-definite matrix did not throw";
  } catch (const LinAlgError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[linalg.cholesky] (Batch element 1)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("leading minor of order 1"), std::string::npos) << msg;
  }
  auto [L, info] = linalg::cholesky_ex(bad);
  EXPECT_EQ(values<int32_t>(info), (std::vector<int32_t>{0, 1}));
  EXPECT_THROW(linalg::inv(zeros({3, 3}, f64())), LinAlgError);
  // Shape and dtype mistakes are plain errors, not LinAlgError; so is a singular lu_factor.
  try {
    linalg::cholesky(ones({2, 3}, f64()));
    FAIL() << "cholesky of a 2x3 matrix did not throw";
  } catch (const LinAlgError&) {
    FAIL() << "shape error raised as LinAlgError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  EXPECT_THROW(linalg::inv(ones({2, 2}, TensorOptions().dtype(kLong))), Error);
  EXPECT_THROW(linalg::solve(eye(2, f64()), ones({3}, f64())), Error);
  try {
    linalg::lu_factor(zeros({2, 2}, f64()));
    FAIL() << "lu_factor of a zero matrix did not throw";
  } catch (const LinAlgError&) {
    FAIL() << "lu_factor raised LinAlgError (PyTorch raises a plain RuntimeError)";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("U[1,1] is zero"), std::string::npos) << e.what();
  }
}

TEST(Linalg, LuAndMatrixFunctions) {
  Tensor A = mat({{0, 1}, {2, 3}});
  auto [P, L, U] = linalg::lu(A);
  expect_near(matmul(matmul(P, L), U), A);
  // Partial pivoting swaps the rows: U = [[2, 3], [0, 1]].
  expect_near(U, mat({{2, 3}, {0, 1}}));
  // exp of a diagonal matrix; cond of a singular matrix is inf in every norm but 2.
  expect_near(linalg::matrix_exp(mat({{1, 0}, {0, 0}})), mat({{std::exp(1.0), 0}, {0, 1}}));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(linalg::cond(zeros({3, 3}, f64()), 1.0).item<double>(), inf);
  EXPECT_EQ(linalg::cond(zeros({3, 3}, f64()), "fro").item<double>(), inf);
  // bfloat16 matrix_exp runs in float32.
  Tensor e = linalg::matrix_exp(zeros({2, 2}, TensorOptions().dtype(kBFloat16)));
  EXPECT_EQ(e.dtype(), kBFloat16);
  expect_near(e, eye(2, f64()));
  EXPECT_THROW(linalg::matrix_exp(ones({2, 2}, TensorOptions().dtype(kHalf))), Error);
}
