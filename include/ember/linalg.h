#pragma once
/// `ember::linalg`: decompositions, solvers, inverses, norms and matrix functions through
/// LAPACKE, batched over leading dims, with libtorch's names (`ember::linalg::solve` =
/// `torch::linalg::solve`, also spelled `ember::linalg_solve`) (src/ops/linalg_*.cpp).
///
/// Every function takes float32, float64, complex64 and complex128 matrices in the last two dims
/// (RuntimeError for other dtypes, as PyTorch 1.13; matrix_exp also takes bfloat16), batched over
/// any leading dims; results are
/// new tensors. Failures that depend on the values (a singular matrix, a matrix that is not
/// positive-definite, no convergence) throw `LinAlgError` (Python: `ember.linalg.LinAlgError`, a
/// RuntimeError) naming the batch element; the `_ex` variants return the LAPACK info instead.

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

/// A value-dependent failure of a linear-algebra routine (torch.linalg.LinAlgError).
class LinAlgError : public Error {
 public:
  explicit LinAlgError(const std::string& m) : Error(m, ErrorKind::Runtime) {}
};

namespace linalg {

// ---- factorizations (linalg_factor.cpp) ----
/// Cholesky factor L (A = L Lᴴ), or U (A = Uᴴ U) when `upper`; LinAlgError if not
/// positive-definite.
Tensor cholesky(const Tensor& A, bool upper = false);
/// (L, info): info[b] > 0 is the order of the first leading minor that is not positive-definite.
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false,
                                       bool check_errors = false);
/// QR decomposition; mode "reduced" (Q m×k, R k×n), "complete" (Q m×m, R m×n) or "r" (Q empty).
std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode = "reduced");
/// LU with partial pivoting, packed: (LU, pivots) with 1-based int32 pivots as LAPACK's getrf.
/// A RuntimeError (`Error`, not LinAlgError, as PyTorch) when some U[i,i] is zero.
std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot = true);
/// (LU, pivots, info) without raising on a singular U.
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot = true,
                                                bool check_errors = false);
/// (P, L, U) with A = P L U, L unit lower triangular m×k, U upper triangular k×n.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true);
/// The first n columns of the product of Householder reflectors (LAPACK orgqr / ungqr).
Tensor householder_product(const Tensor& A, const Tensor& tau);

// ---- solvers and inverses (linalg_solve.cpp) ----
/// Inverse of square matrices (solves A X = I); LinAlgError for a singular one.
Tensor inv(const Tensor& A);
/// (inverse, info) without raising for a singular matrix (whose inverse holds LAPACK's inf/nan).
std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors = false);
/// Solves A X = B (X A = B when !left). B is a batch of vectors when B.dim() == 1 or B.shape ==
/// A.shape[:-1]; batch dims broadcast. A and B must have the same dtype.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
/// (result, info) without raising for a singular A.
std::tuple<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left = true,
                                    bool check_errors = false);
/// Solves a triangular system (no check for singular A: zeros on the diagonal give inf/nan).
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true,
                        bool unitriangular = false);
/// Solves A X = B (or Aᴴ X = B with `adjoint`, X A = B when !left) from lu_factor's output.
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true,
                bool adjoint = false);
/// Least squares min ||A X - B||: (solution, residuals, rank, singular_values) as PyTorch 1.13
/// fills them per driver ("gelsy" default, "gels", "gelsd", "gelss"). B is a (batch of)
/// vector(s) when it has one dim less than A. A rank-deficient A is not an error with "gels"
/// (the solution is LAPACK's output), as PyTorch.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(
    const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
    std::optional<std::string_view> driver = std::nullopt);

// ---- spectral (linalg_spectral.cpp) ----
/// (U, S, Vh) with A = U diag(S) Vh; S real, descending. U m×m / Vh n×n when full_matrices.
/// LinAlgError for NaN or inf entries (as PyTorch for NaN; inf gives PyTorch undefined values).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true,
                                       std::optional<std::string_view> driver = std::nullopt);
/// Singular values, descending.
Tensor svdvals(const Tensor& A);
/// Eigen-decomposition of Hermitian matrices from the `uplo` triangle: (ascending real
/// eigenvalues, orthonormal eigenvectors in columns).
std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view uplo = "L");
/// Eigenvalues of Hermitian matrices, ascending.
Tensor eigvalsh(const Tensor& A, std::string_view uplo = "L");
/// General eigen-decomposition: complex (eigenvalues, unit-norm eigenvectors). A RuntimeError
/// (not LinAlgError) for NaN or inf entries, as PyTorch.
std::tuple<Tensor, Tensor> eig(const Tensor& A);
/// Complex eigenvalues of general square matrices.
Tensor eigvals(const Tensor& A);

// ---- functions of matrices (linalg_func.cpp) ----
/// Determinant (1 for 0×0 matrices).
Tensor det(const Tensor& A);
/// (sign, log|det|): sign has A's dtype (a unit complex number for complex A, 0 when singular).
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
/// Pseudo-inverse through the SVD (the eigendecomposition when `hermitian`); singular values
/// at most max(atol, rtol * σ_max) are dropped. rtol defaults to eps * max(m, n) when neither
/// tolerance is given, else to 0.
Tensor pinv(const Tensor& A, std::optional<double> atol = std::nullopt,
            std::optional<double> rtol = std::nullopt, bool hermitian = false);
/// pinv with the legacy relative cutoff `rcond`.
Tensor pinv(const Tensor& A, double rcond, bool hermitian = false);
/// Number of singular values above max(atol, rtol * σ_max) (int64).
Tensor matrix_rank(const Tensor& A, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);
/// matrix_rank with the legacy absolute tolerance `tol`.
Tensor matrix_rank(const Tensor& A, double tol, bool hermitian = false);
/// pinv / matrix_rank with tolerance tensors broadcast against the batch shape (the result's
/// batch shape is the broadcast one).
Tensor pinv(const Tensor& A, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
            bool hermitian = false);
Tensor matrix_rank(const Tensor& A, const std::optional<Tensor>& atol,
                   const std::optional<Tensor>& rtol, bool hermitian = false);
/// A^n by repeated squaring; n < 0 inverts first, n == 0 is the identity (any dtype for n >= 0).
Tensor matrix_power(const Tensor& A, int64_t n);
/// Matrix norm over `dim` for a numeric ord: 1, -1, 2, -2, inf, -inf.
Tensor matrix_norm(const Tensor& A, double ord, std::vector<int64_t> dim = {-2, -1},
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
/// Matrix norm over `dim` for ord "fro" or "nuc".
Tensor matrix_norm(const Tensor& A, std::string_view ord = "fro",
                   std::vector<int64_t> dim = {-2, -1}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
/// torch.linalg.norm with a numeric (or no) ord: a vector norm when dim has one entry or ord and
/// dim are both absent (the flattened input), else a matrix norm.
Tensor norm(const Tensor& A, std::optional<double> ord = std::nullopt,
            std::optional<std::vector<int64_t>> dim = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
/// torch.linalg.norm with ord "fro" or "nuc" (matrix norms).
Tensor norm(const Tensor& A, std::string_view ord,
            std::optional<std::vector<int64_t>> dim = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
/// Condition number in the p-norm (p nullopt = 2: σ_max / σ_min). For p = ±1, ±inf it is
/// norm(A) norm(A⁻¹): inf for a singular matrix or NaN entries, as PyTorch.
Tensor cond(const Tensor& A, std::optional<double> p = std::nullopt);
/// Condition number in the "fro" or "nuc" norm: inf for a singular matrix (nan for a zero
/// matrix in "nuc", as PyTorch 1.13).
Tensor cond(const Tensor& A, std::string_view p);
/// Matrix exponential (Padé approximant with scaling and squaring, degree chosen by the 1-norm).
/// Also takes bfloat16 (computed in float32); float16 raises unless the input is empty.
Tensor matrix_exp(const Tensor& A);

}  // namespace linalg

// ---- flat spellings (torch::linalg_<name>) and the legacy top-level functions ----
inline Tensor linalg_inv(const Tensor& A) { return linalg::inv(A); }
inline Tensor linalg_det(const Tensor& A) { return linalg::det(A); }
inline Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left = true) {
  return linalg::solve(A, B, left);
}
inline Tensor linalg_cholesky(const Tensor& A, bool upper = false) {
  return linalg::cholesky(A, upper);
}
inline std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode = "reduced") {
  return linalg::qr(A, mode);
}
inline std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices = true) {
  return linalg::svd(A, full_matrices);
}
inline Tensor linalg_svdvals(const Tensor& A) { return linalg::svdvals(A); }
inline std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, std::string_view uplo = "L") {
  return linalg::eigh(A, uplo);
}
inline Tensor linalg_eigvalsh(const Tensor& A, std::string_view uplo = "L") {
  return linalg::eigvalsh(A, uplo);
}
inline std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A) { return linalg::slogdet(A); }
inline Tensor linalg_matrix_power(const Tensor& A, int64_t n) { return linalg::matrix_power(A, n); }
inline Tensor linalg_matrix_exp(const Tensor& A) { return linalg::matrix_exp(A); }
inline Tensor linalg_pinv(const Tensor& A, double rcond = 1e-15, bool hermitian = false) {
  return linalg::pinv(A, rcond, hermitian);
}

/// Determinant (torch.det).
inline Tensor det(const Tensor& A) { return linalg::det(A); }
/// Inverse (torch.inverse).
inline Tensor inverse(const Tensor& A) { return linalg::inv(A); }
/// log(det(A)): nan for a negative real determinant, -inf for a singular matrix.
Tensor logdet(const Tensor& A);
/// (sign, log|det|) (torch.slogdet).
inline std::tuple<Tensor, Tensor> slogdet(const Tensor& A) { return linalg::slogdet(A); }
/// Cholesky factor (torch.cholesky).
inline Tensor cholesky(const Tensor& A, bool upper = false) { return linalg::cholesky(A, upper); }
/// QR (torch.qr): reduced when `some`, complete otherwise.
std::tuple<Tensor, Tensor> qr(const Tensor& A, bool some = true);
/// SVD (torch.svd): (U, S, V) with A = U diag(S) Vᴴ; reduced when `some`; without compute_uv,
/// U and V are zero-filled.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool some = true, bool compute_uv = true);
/// Pseudo-inverse with relative cutoff rcond (torch.pinverse).
inline Tensor pinverse(const Tensor& A, double rcond = 1e-15) { return linalg::pinv(A, rcond); }
/// torch.matrix_power.
inline Tensor matrix_power(const Tensor& A, int64_t n) { return linalg::matrix_power(A, n); }
/// torch.matrix_exp.
inline Tensor matrix_exp(const Tensor& A) { return linalg::matrix_exp(A); }
/// (P, L, U) from lu_factor's (LU, pivots); P and/or L, U are empty tensors when not asked for.
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots,
                                             bool unpack_data = true, bool unpack_pivots = true);
/// Solves A X = B given A's Cholesky factor (lower, or upper when `upper`).
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
/// Inverse of A given its Cholesky factor.
Tensor cholesky_inverse(const Tensor& L, bool upper = false);
/// torch.triangular_solve: (solution of op(A) X = B, clone of A); op is A or Aᵀ (transpose).
std::tuple<Tensor, Tensor> triangular_solve(const Tensor& B, const Tensor& A, bool upper = true,
                                            bool transpose = false, bool unitriangular = false);

}  // namespace ember
