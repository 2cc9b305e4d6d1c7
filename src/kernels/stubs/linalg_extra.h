#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the LAPACK-style ops of src/ops/linalg/linalg_extra.cpp: LDLᵀ (sytrf/hetrf,
// sytrs/hetrs), geqrf and ormqr/unmqr. Matrices are column-major workspaces (Note [Linalg
// workspaces] in src/ops/linalg/linalg_util.h), read and overwritten in place.

#include <vector>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Bunch-Kaufman factorization of the lower triangle of each n×n workspace `LD` (n > 0), the
/// strict upper triangle zeroed; `pivots` contiguous int32 (n per batch element).
EMBER_DECLARE_KERNEL(linalg_ldl_factor_stub,
                     void(Tensor& LD, Tensor& pivots, bool hermitian, std::vector<int>& infos));
/// A X = B from the factors of linalg_ldl_factor_stub: `X` the n×k workspace of B (k, n > 0).
EMBER_DECLARE_KERNEL(linalg_ldl_solve_stub,
                     void(const Tensor& LD, const Tensor& pivots, Tensor& X, bool hermitian));
/// geqrf of each m×n workspace `A` in place; `tau` contiguous (min(m, n) per batch element).
EMBER_DECLARE_KERNEL(linalg_geqrf_stub, void(Tensor& A, Tensor& tau));
/// C <- op(Q) C (left) or C op(Q), Q from the reflectors of the workspace `A` (mq×k, mq the
/// side of Q) and `tau` (contiguous, k per batch element); C an m×n workspace, m, n > 0.
EMBER_DECLARE_KERNEL(linalg_ormqr_stub, void(const Tensor& A, const Tensor& tau, Tensor& C,
                                             bool left, bool transpose));

}  // namespace ember
