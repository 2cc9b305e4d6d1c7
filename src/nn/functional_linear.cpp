// ember::nn::functional::linear and bilinear: the functional names of the ember ops.
#include "ember/nn/functional/linear.h"

#include "ember/nn_ops.h"

namespace ember::nn::functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return ember::linear(input, weight, bias);
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
  return ember::bilinear(input1, input2, weight, bias);
}

}  // namespace ember::nn::functional
