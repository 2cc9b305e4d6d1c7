// The rest of torch.linalg (vander, vecdot, tensorinv, tensorsolve, the LDLᵀ pair) and the
// LAPACK-style legacy functions (geqrf, ormqr, lu, lu_solve, symeig, svd_lowrank, pca_lowrank).
// The composites are written with recorded ember ops and differentiate through them; the LAPACK
// ops run their kernels (kernels/stubs/linalg_extra.h) on column-major workspaces and, as torch
// 1.13, have no derivative.
#include <numeric>

#include "autograd/record.h"
#include "ember/blas.h"
#include "ember/linalg_extra.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "kernels/stubs/linalg_extra.h"
#include "ops/call_path.h"
#include "ops/linalg/linalg_util.h"
#include "ops/linalg/symeig.h"

namespace ember {
using namespace linalg_detail;
using autograd::OpRecorder;
using linalg_ad::mH;

namespace {

int64_t prod_of(IntArrayRef s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

/// Outputs of the LAPACK ops: a backward through them raises, as torch's.
void no_derivative(const char* op, std::initializer_list<Tensor> inputs,
                   const autograd::variable_list& outputs) {
  OpRecorder rec(op, inputs);
  if (rec) rec.record_not_implemented(outputs);
}

}  // namespace

namespace linalg {

Tensor vander(const Tensor& x, std::optional<int64_t> N) {
  EMBER_OP(linalg_vander, x, N);
  const char* op = "linalg.vander";
  const ScalarType dt = x.dtype();
  EMBER_CHECK(dt != kBool, "[", op, "] supports floating point, complex, and integer tensors, ",
              "but got Bool");
  // A 0-dim x counts as one point, as torch's.
  const Tensor x1 = x.dim() == 0 ? x.reshape({1}) : x;
  const int64_t n = N ? *N : x1.size(-1);
  EMBER_CHECK(n > 1, "[", op, "] N must be greater than 1, got ", n);
  // Integer inputs give int64 powers, as torch's cumprod.
  const Tensor xs = isIntegralType(dt, false) ? x1.to(kLong) : x1;
  DimVector shape(xs.sizes());
  shape.push_back(n - 1);
  Tensor powers = xs.unsqueeze(-1).expand(shape).cumprod(-1);
  return cat({ones_like(xs).unsqueeze(-1), powers}, -1);
}

Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  EMBER_OP(linalg_vecdot, x, y, dim);
  const char* op = "linalg.vecdot";
  EMBER_CHECK(x.dtype() == y.dtype(), "[", op,
              "] Expected x and y to have the same dtype, but found x of type ",
              dtype_name(x.dtype()), " and y of type ", dtype_name(y.dtype()), " instead");
  EMBER_CHECK(isFloatingType(x.dtype()) || isComplexType(x.dtype()), "[", op,
              "] Expected a floating point or complex tensor as input. Got ",
              dtype_name(x.dtype()));
  const Tensor xc = isComplexType(x.dtype()) ? x.conj() : x;
  return xc.mul(y).sum(IntArrayRef{dim});
}

Tensor tensorinv(const Tensor& A, int64_t ind) {
  EMBER_OP_CAST(linalg_tensorinv, tensorinv, A, ind);
  const char* op = "linalg.tensorinv";
  EMBER_CHECK(ind > 0, "[", op, "] Expected a strictly positive integer for 'ind', but got ", ind);
  EMBER_CHECK(ind <= A.dim(), "[", op, "] ind (", ind, ") exceeds the number of dims of A (",
              A.dim(), ")");
  const IntArrayRef s = A.sizes();
  const int64_t rows = prod_of(s, 0, size_t(ind)), cols = prod_of(s, size_t(ind), s.size());
  EMBER_CHECK(rows == cols, "[", op,
              "] Expected self to satisfy the requirement prod(self.shape[ind:]) == "
              "prod(self.shape[:ind]), but got ",
              cols, " != ", rows);
  std::vector<int64_t> out(s.begin() + ind, s.end());
  out.insert(out.end(), s.begin(), s.begin() + ind);
  return inv(A.reshape({rows, cols})).reshape(out);
}

Tensor tensorsolve(const Tensor& A, const Tensor& B, OptionalIntArrayRef dims) {
  EMBER_OP_CAST(linalg_tensorsolve, tensorsolve, A, B, dims);
  const char* op = "linalg.tensorsolve";
  Tensor a = A;
  if (dims && !dims->empty()) {
    std::vector<int64_t> dst;
    for (size_t i = 0; i < dims->size(); ++i)
      dst.push_back(A.dim() - int64_t(dims->size()) + int64_t(i));
    a = A.movedim(*dims, dst);
  }
  EMBER_CHECK(B.dim() <= a.dim(), "[", op, "] B has more dims (", B.dim(), ") than A (", a.dim(),
              ")");
  const IntArrayRef s = a.sizes();
  const int64_t rows = prod_of(s, 0, size_t(B.dim())), cols = prod_of(s, size_t(B.dim()), s.size());
  EMBER_CHECK(rows == cols, "[", op,
              "] Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
              "prod(self.shape[:other.ndim]), but got ",
              cols, " != ", rows);
  std::vector<int64_t> out(s.begin() + B.dim(), s.end());
  return solve(a.reshape({rows, cols}), B.reshape({rows})).reshape(out);
}

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian,
                                                 bool check_errors) {
  EMBER_OP(linalg_ldl_factor_ex, A, hermitian, check_errors);
  const char* op = "linalg.ldl_factor_ex";
  check_square(A, op);
  check_dtype(A, op);
  const int64_t n = A.size(-1), batch = batch_count(A);
  Tensor LD = colmajor_copy(A, A.dtype());
  Tensor piv = empty_tensor(cat_shape(batch_shape(A), {n}), kInt);
  std::vector<int> infos(size_t(batch), 0);
  if (n > 0 && batch > 0) linalg_ldl_factor_stub(A.device().type(), LD, piv, hermitian, infos);
  if (check_errors) {
    raise_infos(infos, A.dim() > 2, op, [](int info) {
      return "The factorization could not be completed because the input is singular (D[" +
             std::to_string(info) + ", " + std::to_string(info) + "] is exactly zero).";
    });
  }
  Tensor info = info_tensor(infos, batch_shape(A));
  no_derivative(op, {A}, {LD});
  return {LD, piv, info};
}

std::tuple<Tensor, Tensor> ldl_factor(const Tensor& A, bool hermitian) {
  EMBER_OP(linalg_ldl_factor, A, hermitian);
  auto [LD, piv, info] = ldl_factor_ex(A, hermitian, true);
  return {LD, piv};
}

Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  EMBER_OP(linalg_ldl_solve, LD, pivots, B, hermitian);
  const char* op = "linalg.ldl_solve";
  check_square(LD, op, "LD");
  check_matrix(B, op, "B");
  check_dtype(LD, op);
  EMBER_CHECK(LD.dtype() == B.dtype(), "[", op,
              "] Expected B and LD to have the same dtype, but found B of type ",
              dtype_name(B.dtype()), " and LD of type ", dtype_name(LD.dtype()), " instead");
  EMBER_CHECK(pivots.dtype() == kInt || pivots.dtype() == kLong, "[", op,
              "] pivots should be an integer tensor, got ", dtype_name(pivots.dtype()));
  const int64_t n = LD.size(-1);
  EMBER_CHECK(pivots.dim() == LD.dim() - 1 && pivots.size(-1) == n, "[", op,
              "] Expected pivots of shape LD.shape[:-1], got LD ", shape_str(LD.sizes()),
              " and pivots ", shape_str(pivots.sizes()));
  EMBER_CHECK(B.size(-2) == n, "[", op, "] Incompatible matrix sizes: each LD matrix is ", n,
              " by ", n, " but each B matrix is ", B.size(-2), " by ", B.size(-1));
  // Batch dims broadcast between (LD, pivots) and B.
  const DimVector batch = broadcast_shapes(batch_shape(LD), batch_shape(B));
  DimVector ld_shape = batch, piv_shape = batch, b_shape = batch;
  ld_shape.push_back(n);
  ld_shape.push_back(n);
  piv_shape.push_back(n);
  b_shape.push_back(n);
  b_shape.push_back(B.size(-1));
  Tensor X = colmajor_copy(B, B.dtype(), b_shape);
  if (X.numel() > 0 && n > 0) {
    Tensor L = colmajor_copy(LD, LD.dtype(), ld_shape);
    Tensor P = pivots.to(kInt).expand(piv_shape).contiguous();
    linalg_ldl_solve_stub(LD.device().type(), L, P, X, hermitian);
  }
  no_derivative(op, {LD, B}, {X});
  return X;
}

}  // namespace linalg

std::tuple<Tensor, Tensor> geqrf(const Tensor& self) {
  EMBER_OP_CAST(geqrf, geqrf, self);
  const char* op = "geqrf";
  EMBER_CHECK(self.dim() >= 2, "[", op, "] input must have at least 2 dimensions, got shape ",
              shape_str(self.sizes()));
  check_dtype(self, op);
  const int64_t m = self.size(-2), n = self.size(-1), k = std::min(m, n);
  Tensor a = colmajor_copy(self, self.dtype());
  Tensor tau = empty_tensor(cat_shape(batch_shape(self), {k}), self.dtype());
  if (k > 0 && batch_count(self) > 0) linalg_geqrf_stub(self.device().type(), a, tau);
  no_derivative(op, {self}, {a, tau});
  return {a, tau};
}

Tensor ormqr(const Tensor& self, const Tensor& tau, const Tensor& other, bool left,
             bool transpose) {
  EMBER_OP_CAST(ormqr, ormqr, self, tau, other, left, transpose);
  const char* op = "ormqr";
  EMBER_CHECK(self.dim() >= 2, "[", op, "] input must have at least 2 dimensions.");
  EMBER_CHECK(other.dim() >= 2, "[", op, "] other must have at least 2 dimensions.");
  const int64_t side = left ? other.size(-2) : other.size(-1);
  EMBER_CHECK(side == self.size(-2), "[", op, "] other.shape[", left ? -2 : -1,
              "] must be equal to input.shape[-2], got ", shape_str(other.sizes()), " and ",
              shape_str(self.sizes()));
  EMBER_CHECK(tau.size(-1) <= self.size(-1), "[", op,
              "] tau.shape[-1] must be less than or equal to input.shape[-1]");
  EMBER_CHECK(tau.size(-1) <= self.size(-2), "[", op,
              "] tau.shape[-1] must be less than or equal to input.shape[-2]");
  EMBER_CHECK(self.dim() - tau.dim() == 1, "[", op,
              "] Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", self.dim());
  EMBER_CHECK(self.dim() == other.dim(), "[", op,
              "] Expected other to have the same number of dimensions as input, but got "
              "other.ndim equal to ",
              other.dim(), " and input.ndim is equal to ", self.dim());
  for (int64_t d = 0; d + 2 < self.dim(); ++d) {
    EMBER_CHECK(self.size(d) == tau.size(d) && self.size(d) == other.size(d), "[", op,
                "] Expected batch dimensions of input, tau and other to be equal, got ",
                shape_str(self.sizes()), ", ", shape_str(tau.sizes()), " and ",
                shape_str(other.sizes()));
  }
  EMBER_CHECK(self.dtype() == other.dtype() && self.dtype() == tau.dtype(), "[", op,
              "] Expected input, tau and other to have the same dtype, but got ",
              dtype_name(self.dtype()), ", ", dtype_name(tau.dtype()), " and ",
              dtype_name(other.dtype()));
  check_dtype(self, op);
  Tensor C = colmajor_copy(other, other.dtype());
  if (C.numel() > 0 && tau.size(-1) > 0) {
    Tensor A = colmajor_copy(self, self.dtype());
    Tensor T = fresh_copy(tau);
    linalg_ormqr_stub(self.device().type(), A, T, C, left, transpose);
  }
  no_derivative(op, {self, tau, other}, {C});
  return C;
}

std::tuple<Tensor, Tensor> Tensor::geqrf() const { return ember::geqrf(*this); }
Tensor Tensor::ormqr(const Tensor& input2, const Tensor& input3, bool left, bool transpose) const {
  return ember::ormqr(*this, input2, input3, left, transpose);
}
Tensor Tensor::lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const {
  return ember::lu_solve(*this, LU_data, LU_pivots);
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot, bool get_infos) {
  EMBER_OP(lu, A, pivot, get_infos);
  auto [LU, piv, info] = linalg::lu_factor_ex(A, pivot, false);
  return {LU, piv, get_infos ? info : Tensor()};
}

Tensor lu_solve(const Tensor& b, const Tensor& LU_data, const Tensor& LU_pivots) {
  EMBER_OP_CAST(lu_solve, lu_solve, b, LU_data, LU_pivots);
  return linalg::lu_solve(LU_data, LU_pivots, b);
}

std::tuple<Tensor, Tensor> symeig(const Tensor& self, bool eigenvectors, bool upper) {
  EMBER_OP_CAST(symeig, symeig, self, eigenvectors, upper);
  const std::string_view uplo = upper ? "U" : "L";
  if (!eigenvectors) {
    return {linalg::eigvalsh(self, uplo), empty_tensor({0}, self.dtype())};
  }
  return linalg::eigh(self, uplo);
}

namespace {

/// An orthonormal basis Q (m×q) of the range of A - M by subspace iteration from a Gaussian
/// sketch (Halko, Martinsson, Tropp 2011, algorithm 4.4).
Tensor approximate_basis(const Tensor& A, const Tensor& M, int64_t q, int64_t niter) {
  DimVector rs = batch_shape(A);
  rs.push_back(A.size(-1));
  rs.push_back(q);
  Tensor R = randn(rs, TensorOptions(A.dtype()));
  auto apply = [&](const Tensor& X, bool adj) {
    Tensor y = matmul(adj ? mH(A) : A, X);
    return M.defined() ? y.sub(matmul(adj ? mH(M) : M, X)) : y;
  };
  Tensor Q = std::get<0>(linalg::qr(apply(R, false)));
  for (int64_t i = 0; i < niter; ++i) {
    Q = std::get<0>(linalg::qr(apply(Q, true)));
    Q = std::get<0>(linalg::qr(apply(Q, false)));
  }
  return Q;
}

std::tuple<Tensor, Tensor, Tensor> svd_lowrank_impl(const Tensor& A, int64_t q, int64_t niter,
                                                    const Tensor& M) {
  const int64_t m = A.size(-2), n = A.size(-1);
  if (m < n) {
    // Factor Aᴴ so that the small side is sketched: its U and V swap roles.
    auto [U, S, V] = svd_lowrank_impl(mH(A), q, niter, M.defined() ? mH(M) : M);
    return {V, S, U};
  }
  Tensor Q = approximate_basis(A, M, q, niter);
  Tensor B = matmul(mH(Q), A);
  if (M.defined()) B = B.sub(matmul(mH(Q), M));
  auto [Ub, S, Vh] = linalg::svd(B, false);
  return {matmul(Q, Ub), S, mH(Vh)};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd_lowrank(const Tensor& A, std::optional<int64_t> q,
                                               std::optional<int64_t> niter, const Tensor& M) {
  EMBER_OP(svd_lowrank, A, q, niter, M);
  const char* op = "svd_lowrank";
  check_matrix(A, op);
  check_dtype(A, op);
  const int64_t qq = q.value_or(6), it = niter.value_or(2);
  const int64_t m = A.size(-2), n = A.size(-1);
  EMBER_CHECK_VALUE(
      qq >= 0 && qq <= std::min(m, n), "[", op, "] q(=", qq,
      ") must be non-negative integer and not greater than min(m, n)=", std::min(m, n));
  EMBER_CHECK_VALUE(it >= 0, "[", op, "] niter(=", it, ") must be non-negative integer");
  Tensor Mb = M.defined() ? M.broadcast_to(A.sizes()) : M;
  return svd_lowrank_impl(A, qq, it, Mb);
}

std::tuple<Tensor, Tensor, Tensor> pca_lowrank(const Tensor& A, std::optional<int64_t> q,
                                               bool center, int64_t niter) {
  EMBER_OP(pca_lowrank, A, q, center, niter);
  const char* op = "pca_lowrank";
  check_matrix(A, op);
  const int64_t m = A.size(-2), n = A.size(-1);
  const int64_t qq = q.value_or(std::min<int64_t>({6, m, n}));
  EMBER_CHECK_VALUE(
      qq >= 0 && qq <= std::min(m, n), "q(=", qq,
      ") must be non-negative integer and not greater than min(m, n)=", std::min(m, n));
  EMBER_CHECK_VALUE(niter >= 0, "niter(=", niter, ") must be non-negative integer");
  if (!center) return svd_lowrank(A, qq, niter);
  return svd_lowrank(A.sub(A.mean(IntArrayRef{-2}, true)), qq, niter);
}

}  // namespace ember
