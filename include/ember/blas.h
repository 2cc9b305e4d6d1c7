#pragma once
/// Matrix products: matmul, mm, bmm, addmm, addmv, addr, baddbmm, addbmm, mv, dot, vdot, outer,
/// inner, tensordot, einsum, kron, cross, trace, chain_matmul (blas_ops.cpp, einsum.cpp).
/// Float and complex dtypes run through BLAS, integers through a blocked kernel, float16 and
/// bfloat16 through float32 BLAS (accumulation in float32).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// Matrix product with PyTorch's rules: 1-D·1-D is a dot product, a 1-D operand gets a dim
/// prepended (left) or appended (right) that is removed from the result, batch dims broadcast.
Tensor matmul(const Tensor& self, const Tensor& other);
/// matmul into `out` (resized when empty; dtype must match the inputs').
Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other);
/// 2-D × 2-D matrix product.
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2);
/// Batched 3-D × 3-D matrix product (same batch size, no broadcasting).
Tensor bmm(const Tensor& self, const Tensor& mat2);
Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2);
/// beta * self + alpha * (mat1 @ mat2); self broadcasts to the result. beta == 0 ignores self
/// (NaN in self does not propagate).
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  const Scalar& beta = 1, const Scalar& alpha = 1);
/// beta * self + alpha * (mat @ vec).
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor& addmv_out(Tensor& out, const Tensor& self, const Tensor& mat, const Tensor& vec,
                  const Scalar& beta = 1, const Scalar& alpha = 1);
/// beta * self + alpha * outer(vec1, vec2).
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
            const Scalar& alpha = 1);
Tensor& addr_out(Tensor& out, const Tensor& self, const Tensor& vec1, const Tensor& vec2,
                 const Scalar& beta = 1, const Scalar& alpha = 1);
/// beta * self + alpha * sum_b(batch1[b] @ batch2[b]).
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
              const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor& addbmm_out(Tensor& out, const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                   const Scalar& beta = 1, const Scalar& alpha = 1);
/// beta * self + alpha * bmm(batch1, batch2); self broadcasts to [b, n, p].
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
               const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor& baddbmm_out(Tensor& out, const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                    const Scalar& beta = 1, const Scalar& alpha = 1);
/// Matrix × vector.
Tensor mv(const Tensor& self, const Tensor& vec);
Tensor& mv_out(Tensor& out, const Tensor& self, const Tensor& vec);
/// Dot product of two 1-D tensors of the same dtype and size (0-dim result).
Tensor dot(const Tensor& self, const Tensor& other);
Tensor& dot_out(Tensor& out, const Tensor& self, const Tensor& other);
/// Dot product conjugating the first argument.
Tensor vdot(const Tensor& self, const Tensor& other);
Tensor& vdot_out(Tensor& out, const Tensor& self, const Tensor& other);
/// Outer product of two 1-D tensors (dtypes promote).
Tensor outer(const Tensor& self, const Tensor& vec2);
Tensor& outer_out(Tensor& out, const Tensor& self, const Tensor& vec2);
/// Alias of outer.
Tensor ger(const Tensor& self, const Tensor& vec2);
Tensor& ger_out(Tensor& out, const Tensor& self, const Tensor& vec2);
/// Inner product over the last dims (a scalar times a tensor when one is 0-dim).
Tensor inner(const Tensor& self, const Tensor& other);
Tensor& inner_out(Tensor& out, const Tensor& self, const Tensor& other);
/// Contracts dims `dims_a` of `a` with `dims_b` of `b`.
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
/// Contracts the last `dims` dims of `a` with the first `dims` of `b`.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
Tensor& tensordot_out(Tensor& out, const Tensor& a, const Tensor& b, IntArrayRef dims_a,
                      IntArrayRef dims_b);
/// Einstein summation ("ij,jk->ik", ellipsis "...", repeated indices take diagonals). With three
/// or more operands the contraction order is chosen greedily by intermediate size.
Tensor einsum(std::string_view equation, ArrayRef<Tensor> tensors);
/// Kronecker product.
Tensor kron(const Tensor& self, const Tensor& other);
Tensor& kron_out(Tensor& out, const Tensor& self, const Tensor& other);
/// 3-vector cross product along `dim`; without `dim`, the first dim of size 3 (deprecated
/// PyTorch rule).
Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim = std::nullopt);
Tensor& cross_out(Tensor& out, const Tensor& self, const Tensor& other,
                  std::optional<int64_t> dim = std::nullopt);
/// Cross product along `dim` (default -1), inputs broadcast.
Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim = -1);
Tensor& linalg_cross_out(Tensor& out, const Tensor& self, const Tensor& other, int64_t dim = -1);
/// Sum of the main diagonal of a 2-D tensor (integers give int64).
Tensor trace(const Tensor& self);
/// Product of a chain of 2-D matrices, parenthesised for the fewest flops (deprecated alias of
/// linalg_multi_dot for 2-D inputs).
Tensor chain_matmul(ArrayRef<Tensor> matrices);
Tensor& chain_matmul_out(Tensor& out, ArrayRef<Tensor> matrices);
/// Product of a chain of matrices (first may be 1-D, last may be 1-D), optimal order.
Tensor linalg_multi_dot(ArrayRef<Tensor> tensors);
Tensor& linalg_multi_dot_out(Tensor& out, ArrayRef<Tensor> tensors);
/// Alias of matmul.
Tensor linalg_matmul(const Tensor& self, const Tensor& other);
Tensor& linalg_matmul_out(Tensor& out, const Tensor& self, const Tensor& other);

namespace linalg {
/// torch::linalg::matmul.
inline Tensor matmul(const Tensor& a, const Tensor& b) { return ember::linalg_matmul(a, b); }
/// torch::linalg::multi_dot.
inline Tensor multi_dot(ArrayRef<Tensor> ts) { return ember::linalg_multi_dot(ts); }
/// torch::linalg::cross.
inline Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1) {
  return ember::linalg_cross(a, b, dim);
}
}  // namespace linalg

}  // namespace ember
