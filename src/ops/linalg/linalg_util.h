#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Shared pieces of the linalg ops: input checks, column-major batch workspaces and
// info-to-error translation. The LAPACK calls are kernels (kernels/stubs/linalg.h).
//
// Note [Linalg workspaces]
// LAPACK wants column-major matrices. Every op copies each input matrix into a fresh tensor whose
// last two dims have strides (1, m) (`colmajor_copy`): its data is a row of column-major matrices,
// one every m*n elements, which LAPACK overwrites in place. Results are returned in that layout
// (PyTorch's linalg does the same), so no copy back is needed. The kernels' batch loop runs
// matrices in parallel; OpenBLAS's OpenMP build runs single-threaded inside a parallel region.

#include <string>
#include <vector>

#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/ops.h"
#include "kernels/stubs/linalg.h"

namespace ember::linalg_detail {

// ---- checks ----

/// float32/float64/complex64/complex128 only, with PyTorch's two messages (both RuntimeError).
void check_dtype(const Tensor& a, const char* op, const char* arg = "input");
/// At least 2 dims.
void check_matrix(const Tensor& a, const char* op, const char* arg = "A");
/// At least 2 dims and square.
void check_square(const Tensor& a, const char* op, const char* arg = "A");

// ---- shapes and workspaces ----

/// Product of all dims but the last two.
int64_t batch_count(const Tensor& a);
/// The leading (batch) dims.
DimVector batch_shape(const Tensor& a);
/// `batch` followed by `tail`.
DimVector cat_shape(IntArrayRef batch, std::initializer_list<int64_t> tail);
/// A fresh tensor of `shape` on `device` whose last two dims are column-major (see Note [Linalg
/// workspaces]).
Tensor colmajor_empty(IntArrayRef shape, ScalarType dt, Device device = Device(kCPU));
/// A column-major copy of `a` on its device (conj resolved, cast to `dt`), broadcast to `shape`
/// when given.
Tensor colmajor_copy(const Tensor& a, ScalarType dt);
Tensor colmajor_copy(const Tensor& a, ScalarType dt, IntArrayRef shape);
/// A fresh contiguous copy on `a`'s device (row-major; for vectors of results such as
/// eigenvalues).
Tensor fresh_copy(const Tensor& a);

/// Turns LAPACK infos into a LinAlgError (or `Err`, where PyTorch raises a plain RuntimeError)
/// naming the first failing batch element: the message is "[op] (Batch element b): " + what(info)
/// (no batch prefix for a single matrix).
template <class Err = LinAlgError, class What>
void raise_infos(const std::vector<int>& infos, bool batched, const char* op, const What& what) {
  for (size_t b = 0; b < infos.size(); ++b) {
    if (infos[b] == 0) continue;
    EMBER_CHECK(infos[b] > 0, "[", op, "] internal LAPACK error: argument ", -infos[b],
                " has an illegal value");
    std::string prefix = std::string("[") + op + "] ";
    if (batched) prefix += "(Batch element " + std::to_string(b) + "): ";
    throw Err(prefix + what(infos[b]));
  }
}
/// The info tensor of the `_ex` variants: int32 of the batch shape, on `device`.
Tensor info_tensor(const std::vector<int>& infos, IntArrayRef batch, Device device = Device(kCPU));

/// Machine epsilon of a real or complex dtype's value type.
double eps_of(ScalarType dt);

/// Batched column-major product C[b] = op(A[b]) op(B[b]) of workspaces (batch dims equal).
Tensor batched_gemm(const Tensor& A, const Tensor& B, bool adj_a = false, bool adj_b = false);

}  // namespace ember::linalg_detail

// Derivative formulas shared by the linalg ops (PyTorch's FunctionsManual). All are written
// with recorded ember ops, so a backward under create_graph can be differentiated again.
namespace ember::linalg_ad {

/// The conjugate transpose of the last two dims.
Tensor mH(const Tensor& t);
/// The gradient of prod over `dim` that stays finite with zeros in `inp`.
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& inp, int64_t dim);
/// A = U diag(S) Vh (reduced): the gradient from those of U, S, Vh (any may be undefined).
Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U,
                    const Tensor& S, const Tensor& Vh);
/// A V = V diag(L): the gradient from those of L and V (hermitian: eigh).
Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V,
                    bool hermitian);
/// A = P L U: the gradient from those of L and U.
Tensor lu_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L,
                   const Tensor& U, bool pivot);
/// The gradient of pinv(A) from that of its result.
Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A);
/// Q = H_0 ⋯ H_{k-1} I[:, :n], H_i = I - tau_i v_i v_iᴴ: the gradients of A (its strictly lower
/// triangle holds the v_i) and of tau from that of Q.
std::tuple<Tensor, Tensor> householder_product_backward(const Tensor& grad, const Tensor& A,
                                                        const Tensor& tau);

}  // namespace ember::linalg_ad
