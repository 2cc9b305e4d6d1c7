#pragma once
/// ember::nn::functional::linear and bilinear (libtorch's F::linear, F::bilinear).

#include "ember/tensor.h"

namespace ember::nn::functional {

/// input @ weight.T + bias; input (*, in), weight (out, in), bias (out) or undefined.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
/// y_k = x1^T W_k x2 + b_k; input1 (*, in1), input2 (*, in2), weight (out, in1, in2).
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias = {});

}  // namespace ember::nn::functional
