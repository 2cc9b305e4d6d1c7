#pragma once
/// ember::nn::functional::pad with Options.

#include "ember/nn/options/padding.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

/// Pads (constant: negative pads crop) or reflects / replicates / wraps the trailing dims.
Tensor pad(const Tensor& input, const PadFuncOptions& options);

}  // namespace ember::nn::functional
