#pragma once
// torch.symeig, deprecated in PyTorch 1.13 (and gone in 2.0): bound in Python only, so it is not
// part of the C++ API (libtorch has it as a Tensor method, which ember does not add).

#include <tuple>

#include "ember/tensor.h"

namespace ember {

/// Ascending eigenvalues and, with `eigenvectors`, the vectors (else an empty tensor); `upper`
/// picks the triangle read.
std::tuple<Tensor, Tensor> symeig(const Tensor& self, bool eigenvectors = false, bool upper = true);

}  // namespace ember
