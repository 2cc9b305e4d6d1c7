#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the linalg ops (src/ops/linalg_*.cpp), of tril/triu and of one_hot.
//
// A "workspace" is a fresh tensor whose last two dims are column-major (strides (1, m)), one
// matrix every m*n elements (Note [Linalg workspaces] in src/ops/linalg/linalg_util.h); the kernels
// read and overwrite it in place. Its dtype is float, double, complex<float> or complex<double>.
// `infos` holds one LAPACK info per batch element (sized by the caller; 0 is success).

#include <cstdint>
#include <utility>
#include <vector>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// The matrix norms (linalg.matrix_norm's `ord`).
enum class MatrixNormKind { Fro, Nuc, One, NegOne, Two, NegTwo, Inf, NegInf };

/// The drivers of linalg.lstsq.
enum class LstsqDriver { Gels, Gelsy, Gelsd, Gelss };

// ---- shared ----

/// Writes `infos` into `info`, a contiguous int32 tensor of infos.size() elements.
EMBER_DECLARE_KERNEL(linalg_info_stub, void(Tensor& info, const std::vector<int>& infos));
/// The first batch element of workspace `w` holding a NaN or inf, or -1 when all are finite.
EMBER_DECLARE_KERNEL(linalg_first_nonfinite_stub, int64_t(const Tensor& w));
/// C = op(A) op(B) per batch element, op the conjugate transpose where `adj_a` / `adj_b`: A, B
/// and C are workspaces of equal batch and dtype, C fresh; C nonempty and the inner dim > 0.
EMBER_DECLARE_KERNEL(linalg_gemm_stub,
                     void(const Tensor& A, const Tensor& B, Tensor& C, bool adj_a, bool adj_b));

// ---- factorizations ----

/// Cholesky (potrf) of the n×n workspace `L` in place, the other triangle zeroed; n > 0.
EMBER_DECLARE_KERNEL(linalg_cholesky_stub, void(Tensor& L, bool upper, std::vector<int>& infos));
/// LU with partial pivoting (getrf) of the m×n workspace `LU` in place; `pivots` is a contiguous
/// int32 tensor of min(m, n) per batch element (1-based); min(m, n) > 0.
EMBER_DECLARE_KERNEL(linalg_lu_factor_stub,
                     void(Tensor& LU, Tensor& pivots, std::vector<int>& infos));
/// QR (geqrf) of the first n columns of the m×wcols workspace `W`: R (a zeroed rrows×n
/// workspace) receives the upper triangle, and with `compute_q` Q (an m×qcols workspace,
/// qcols <= wcols) the first qcols columns of Q (orgqr/ungqr, formed in W). min(m, n) > 0.
EMBER_DECLARE_KERNEL(linalg_qr_stub,
                     void(Tensor& W, Tensor& R, Tensor& Q, int64_t n, bool compute_q));
/// Q from Householder reflectors (orgqr/ungqr) in the m×n workspace `Q`, with `tau` contiguous
/// (k per batch element); m, n > 0.
EMBER_DECLARE_KERNEL(linalg_householder_product_stub, void(Tensor& Q, const Tensor& tau));
/// The permutation matrices P of LU pivots (A = P L U) into `P`, a zeroed contiguous batch of
/// m×m matrices (any dtype); `pivots` contiguous int32 (k per batch element, 1-based). A pivot
/// outside [1, m] raises "[op] pivot p out of range [1, m]" before anything is written.
EMBER_DECLARE_KERNEL(linalg_lu_pivots_stub, void(const Tensor& pivots, Tensor& P, const char* op));

// ---- solvers ----

/// A X = B (or Aᵀ X = B with `transpose`) through getrf + getrs: `LU` (n×n, n > 0) holds A and
/// receives its factors, `X` (n×k) holds B and receives X (left alone when k == 0).
EMBER_DECLARE_KERNEL(linalg_solve_stub,
                     void(Tensor& LU, Tensor& X, bool transpose, std::vector<int>& infos));
/// op(A) X = B (left) or X op(A) = B (trsm), op(A) = A or Aᵀ (`trans`), A triangular (`upper`,
/// `unit` diagonal): `A` an n×n workspace, `X` the m×k workspace of B, solved in place.
/// X nonempty, n > 0.
EMBER_DECLARE_KERNEL(linalg_triangular_solve_stub, void(const Tensor& A, Tensor& X, bool upper,
                                                        bool left, bool unit, bool trans));
/// op(A) X = B from A's packed LU factors (getrs), op the conjugate transpose with `conj_trans`:
/// `LU` n×n workspace, `pivots` contiguous int32 (n per batch element), `X` the n×k workspace of
/// B solved in place; X nonempty, n > 0. A pivot outside [1, n] raises "[op] pivot p out of
/// range [1, n]" before anything is solved.
EMBER_DECLARE_KERNEL(linalg_lu_solve_stub, void(const Tensor& LU, const Tensor& pivots, Tensor& X,
                                                bool conj_trans, const char* op));
/// Least squares min |A X - B| per batch element with `driver`: `A` an m×n workspace
/// (overwritten), `X` a max(m, n)×k workspace holding B in its first m rows (receives X in its
/// first n rows). `rank` (int64, one per batch element) is written for all drivers but gels and
/// `sv` (A's real dtype, min(m, n) per batch element) for gelsd / gelss; both contiguous.
/// m, n, k > 0.
EMBER_DECLARE_KERNEL(linalg_lstsq_stub,
                     void(Tensor& A, Tensor& X, Tensor& rank, Tensor& sv, LstsqDriver driver,
                          double rcond, std::vector<int>& infos));
/// The squared norms of rows n.. of each column of the lstsq workspace `X` (m×k, m > n) into
/// `residuals`, contiguous of the real dtype (k per batch element).
EMBER_DECLARE_KERNEL(linalg_lstsq_residuals_stub,
                     void(const Tensor& X, int64_t n, Tensor& residuals));
/// (L Lᴴ) X = B (potrs; `upper`: Uᴴ U): `L` an n×n workspace, `X` the n×k workspace of B solved
/// in place; X nonempty, n > 0.
EMBER_DECLARE_KERNEL(linalg_cholesky_solve_stub, void(const Tensor& L, Tensor& X, bool upper));
/// (L Lᴴ)⁻¹ (potri, the Hermitian result mirrored) from the n×n workspace `X` holding L, in
/// place; X nonempty.
EMBER_DECLARE_KERNEL(linalg_cholesky_inverse_stub,
                     void(Tensor& X, bool upper, std::vector<int>& infos));

// ---- functions of matrices ----

/// det from getrf of the n×n workspace `LU` (overwritten): `out` contiguous of LU's dtype, one
/// per batch element (1 for n == 0).
EMBER_DECLARE_KERNEL(linalg_det_stub, void(Tensor& LU, Tensor& out));
/// sign and log|det| from getrf of the n×n workspace `LU` (overwritten): `sign` contiguous of
/// LU's dtype, `logabs` of its real dtype, one per batch element.
EMBER_DECLARE_KERNEL(linalg_slogdet_stub, void(Tensor& LU, Tensor& sign, Tensor& logabs));
/// Scales by 1 / value the parts of pinv's factors whose value passes the cutoff
/// max(atol, rtol * largest |value|), zeroes the others: with `hermitian` the n columns of the
/// n×n workspace `X` by the eigenvalues `vals`, else the k rows of the k×n workspace `X` by the
/// (descending) singular values `vals`; `vals` contiguous of X's real dtype.
EMBER_DECLARE_KERNEL(linalg_pinv_scale_stub,
                     void(Tensor& X, const Tensor& vals, double atol, double rtol, bool hermitian));
/// The number of |S| above max(atol, rtol * max |S|) per batch element: `S` contiguous float64
/// (k per batch element), `out` contiguous int64.
EMBER_DECLARE_KERNEL(linalg_matrix_rank_stub,
                     void(const Tensor& S, Tensor& out, double atol, double rtol));
/// A matrix norm per batch element into `out` (contiguous float64): for Nuc / Two / NegTwo `x`
/// holds the singular values (contiguous float64, descending), else |A| (contiguous float64,
/// m×n row-major per batch element; m > 0 or n > 0 as the norm needs).
EMBER_DECLARE_KERNEL(linalg_matrix_norm_stub,
                     void(const Tensor& x, Tensor& out, MatrixNormKind kind));
/// Zeroes the n×n matrices of the workspace `X` whose `info` (contiguous int32) is positive.
EMBER_DECLARE_KERNEL(linalg_zero_failed_stub, void(Tensor& X, const Tensor& info));
/// exp of each n×n matrix of the workspace `X` (double or complex<double>), in place; X nonempty.
EMBER_DECLARE_KERNEL(linalg_matrix_exp_stub, void(Tensor& X));

// ---- spectral decompositions ----

/// SVD (gesdd) of the m×n workspace `W` (overwritten), min(m, n) = k > 0: `S` contiguous of
/// W's real dtype (k per batch element); with `uv` also `U` (m×m when `full`, else m×k) and `Vh`
/// (n×n or k×n), workspaces.
EMBER_DECLARE_KERNEL(linalg_svd_stub, void(Tensor& W, Tensor& S, Tensor& U, Tensor& Vh, bool uv,
                                           bool full, std::vector<int>& infos));
/// Hermitian eigendecomposition (syevd / heevd) of the n×n workspace `V` reading its `upper` or
/// lower triangle: `w` (contiguous, real dtype, n per batch element) receives the eigenvalues
/// and, with `vectors`, V the eigenvectors. n > 0.
EMBER_DECLARE_KERNEL(linalg_eigh_stub,
                     void(Tensor& V, Tensor& w, bool vectors, bool upper, std::vector<int>& infos));
/// Eigendecomposition (geev) of the n×n workspace `W` (overwritten): `w` (contiguous, complex,
/// n per batch element) receives the eigenvalues and, with `vectors`, `V` (an n×n complex
/// workspace) the right eigenvectors. n > 0.
EMBER_DECLARE_KERNEL(linalg_eig_stub,
                     void(Tensor& W, Tensor& w, Tensor& V, bool vectors, std::vector<int>& infos));

// ---- tril / triu, one_hot ----

/// Zeroes, in the contiguous nonempty `out` (any dtype), the elements of each matrix (last two
/// dims) outside the lower (`lower`: j <= i + k) or upper (j >= i + k) triangle.
EMBER_DECLARE_KERNEL(triangle_stub, void(Tensor& out, int64_t k, bool lower));
/// The smallest and largest value of the contiguous int64 `idx`, or (0, -1) when it is empty.
EMBER_DECLARE_KERNEL(one_hot_bounds_stub, std::pair<int64_t, int64_t>(const Tensor& idx));
/// Sets out[i, idx[i]] = 1 in the zeroed contiguous int64 `out` (num_classes columns), for
/// the contiguous int64 `idx` with values in [0, num_classes).
EMBER_DECLARE_KERNEL(one_hot_stub, void(const Tensor& idx, Tensor& out, int64_t num_classes));

}  // namespace ember
