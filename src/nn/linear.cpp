// Identity, Linear, Bilinear, Flatten, Unflatten: PyTorch 1.13's initialisation and reprs.
#include "ember/nn/modules/linear.h"

#include <cmath>

#include "ember/factory.h"
#include "ember/nn/init.h"
#include "ember/nn_ops.h"

namespace ember::nn {

LinearImpl::LinearImpl(const LinearOptions& options) : options(options) { reset(); }

void LinearImpl::reset() {
  EMBER_CHECK_VALUE(options.in_features() >= 0 && options.out_features() >= 0,
                    "[Linear] in_features and out_features must be non-negative, got ",
                    options.in_features(), " and ", options.out_features());
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor(),
                            options.bias());
  reset_parameters();
}

// kaiming_uniform_(a = sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as the bias.
void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = options.in_features();
    double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

std::string LinearImpl::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features()) +
         ", out_features=" + std::to_string(options.out_features()) +
         ", bias=" + detail::repr_bool(options.bias());
}

Tensor LinearImpl::forward(const Tensor& input) { return linear(input, weight, bias); }

BilinearImpl::BilinearImpl(const BilinearOptions& options) : options(options) { reset(); }

void BilinearImpl::reset() {
  weight = register_parameter(
      "weight", empty({options.out_features(), options.in1_features(), options.in2_features()}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor(),
                            options.bias());
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  double bound = options.in1_features() > 0 ? 1.0 / std::sqrt(double(options.in1_features())) : 0;
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

std::string BilinearImpl::extra_repr() const {
  return "in1_features=" + std::to_string(options.in1_features()) +
         ", in2_features=" + std::to_string(options.in2_features()) +
         ", out_features=" + std::to_string(options.out_features()) +
         ", bias=" + detail::repr_bool(options.bias());
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return bilinear(input1, input2, weight, bias);
}

std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(options.start_dim()) +
         ", end_dim=" + std::to_string(options.end_dim());
}

Tensor FlattenImpl::forward(const Tensor& input) {
  return input.flatten(options.start_dim(), options.end_dim());
}

std::string UnflattenImpl::extra_repr() const {
  return "dim=" + std::to_string(options.dim()) +
         ", unflattened_size=" + detail::repr_tuple(options.sizes());
}

Tensor UnflattenImpl::forward(const Tensor& input) {
  return input.unflatten(options.dim(), options.sizes());
}

}  // namespace ember::nn
