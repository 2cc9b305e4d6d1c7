#pragma once
/// `ember::linalg`: decompositions, solvers, inverses, norms and matrix functions through LAPACKE,
/// batched over leading dims, with libtorch's names (`ember::linalg::solve` = `torch::linalg::solve`,
/// also spelled `ember::linalg_solve`) (linalg_ops.cpp).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

namespace linalg {}  // namespace linalg

}  // namespace ember
