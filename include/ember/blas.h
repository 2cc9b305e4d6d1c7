#pragma once
/// Matrix products: matmul, mm, bmm, addmm, addmv, addr, baddbmm, addbmm, mv, dot, vdot, outer, inner, tensordot, einsum, kron, cross, trace, chain_matmul (blas_ops.cpp).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

}  // namespace ember
