#pragma once
// The rest of torch.linalg and the LAPACK-style legacy functions (geqrf, ormqr, lu, lu_solve,
// the randomized low-rank factorizations), and the sampling ops of nn.functional
// (grid_sample, affine_grid, fractional max pooling).

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <tuple>

#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {
namespace linalg {

/// The Vandermonde matrix of x (..., n): columns x^0, x^1, ..., x^(N-1) (N defaults to n).
Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt);
/// sum(conj(x) * y, dim) with x and y broadcast together.
Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1);
/// The inverse of A for tensordot(., ., ind): shape A.shape[ind:] + A.shape[:ind].
Tensor tensorinv(const Tensor& A, int64_t ind = 2);
/// X with tensordot(A, X, X.dim()) = B; `dims` of A are moved to the end first.
Tensor tensorsolve(const Tensor& A, const Tensor& B, OptionalIntArrayRef dims = std::nullopt);
/// Bunch-Kaufman LDLᵀ (LDLᴴ with `hermitian`) of symmetric A from its lower triangle (sytrf /
/// hetrf): (LD compact factors, pivots int32 as LAPACK, info int32 of the batch shape).
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian = false,
                                                 bool check_errors = false);
/// ldl_factor_ex with check_errors: raises LinAlgError when D is singular.
std::tuple<Tensor, Tensor> ldl_factor(const Tensor& A, bool hermitian = false);
/// Solves A X = B from ldl_factor's (LD, pivots) (sytrs / hetrs); batch dims broadcast.
Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian = false);

}  // namespace linalg

/// QR in LAPACK's compact form: (a with R on and above the diagonal and the reflectors below,
/// tau). No gradient, as torch.
std::tuple<Tensor, Tensor> geqrf(const Tensor& self);
/// op(Q) C (left) or C op(Q) with Q = householder_product(input2, tau), op = conjugate transpose
/// when `transpose` (ormqr / unmqr).
Tensor ormqr(const Tensor& self, const Tensor& input2, const Tensor& input3, bool left = true,
             bool transpose = false);
/// torch.lu: (LU, pivots) or (LU, pivots, infos) with get_infos (infos empty otherwise).
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true, bool get_infos = false);
/// torch.lu_solve: solves A X = b from A's LU factors.
Tensor lu_solve(const Tensor& b, const Tensor& LU_data, const Tensor& LU_pivots);
/// Randomized SVD of A (or A - M): (U, S, V) of rank q, A ≈ U diag(S) Vᴴ.
std::tuple<Tensor, Tensor, Tensor> svd_lowrank(const Tensor& A, std::optional<int64_t> q = 6,
                                               std::optional<int64_t> niter = 2,
                                               const Tensor& M = {});
/// Randomized PCA: svd_lowrank of the column-centred A (q defaults to min(6, m, n)).
std::tuple<Tensor, Tensor, Tensor> pca_lowrank(const Tensor& A,
                                               std::optional<int64_t> q = std::nullopt,
                                               bool center = true, int64_t niter = 2);

/// The grid sampler of ATen: interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
/// 1 border, 2 reflection. input (N, C, [D,] H, W), grid (N, [D,] H, W, 2 or 3).
Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                    int64_t padding_mode, bool align_corners);
/// nn.functional.grid_sample with string modes; align_corners defaults to false.
Tensor grid_sample(const Tensor& input, const Tensor& grid, std::string_view mode = "bilinear",
                   std::string_view padding_mode = "zeros",
                   std::optional<bool> align_corners = std::nullopt);
/// The sampling grid of the affine maps theta (N, 2, 3) or (N, 3, 4) for an output of `size`
/// (N, C, H, W) or (N, C, D, H, W).
Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners);
/// nn.functional.affine_grid (align_corners defaults to false).
Tensor affine_grid(const Tensor& theta, IntArrayRef size,
                   std::optional<bool> align_corners = std::nullopt);
/// Fractional max pooling of (N, C, H, W) or (C, H, W) with the random samples (N, C, 2) in
/// [0, 1): (output, indices into each H*W plane).
std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size,
                                                 const Tensor& random_samples);
/// The same for (N, C, T, H, W) or (C, T, H, W) with samples (N, C, 3).
std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size,
                                                 const Tensor& random_samples);

}  // namespace ember
