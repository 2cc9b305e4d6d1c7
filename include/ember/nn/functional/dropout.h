#pragma once
/// ember::nn::functional dropouts with Options (libtorch's F::dropout, F::dropout2d, ...).

#include "ember/nn/options/dropout.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

/// Zeros elements with probability p and scales the rest by 1 / (1 - p) when training.
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options = {});
/// Channel dropout of (N, C, L) or unbatched (C, L).
Tensor dropout1d(const Tensor& input, const Dropout1dFuncOptions& options = {});
/// Channel dropout of (N, C, H, W) (or (N, C, L), as PyTorch 1.13).
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {});
/// Channel dropout of (N, C, D, H, W) or unbatched (C, D, H, W).
Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options = {});
Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options = {});
Tensor feature_alpha_dropout(const Tensor& input,
                             const FeatureAlphaDropoutFuncOptions& options = {});

}  // namespace ember::nn::functional
