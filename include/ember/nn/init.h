#pragma once
/// ember::nn::init: in-place parameter initialisations (libtorch's torch::nn::init, PyTorch's
/// torch.nn.init). Each runs without recording autograd and returns the tensor it filled.

#include <tuple>
#include <variant>

#include "ember/nn/enum.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember::nn::init {

using NonlinearityType =
    std::variant<enumtype::kLinear, enumtype::kConv1D, enumtype::kConv2D, enumtype::kConv3D,
                 enumtype::kConvTranspose1D, enumtype::kConvTranspose2D, enumtype::kConvTranspose3D,
                 enumtype::kSigmoid, enumtype::kTanh, enumtype::kReLU, enumtype::kLeakyReLU,
                 enumtype::kSELU>;
using FanModeType = std::variant<enumtype::kFanIn, enumtype::kFanOut>;

/// The recommended gain for a nonlinearity (`param` is leaky_relu's negative slope).
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);
/// (fan_in, fan_out) of a weight of >= 2 dims: (size(1), size(0)) times the receptive field.
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor constant_(Tensor tensor, Scalar value);
Tensor ones_(Tensor tensor);
Tensor zeros_(Tensor tensor);
/// The identity matrix (2-D only).
Tensor eye_(Tensor matrix);
/// The Dirac delta (3-5 dims): convolutions that preserve their input (per group).
Tensor dirac_(Tensor tensor, int64_t groups = 1);
Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
/// Normal(mean, std) truncated to [a, b] (inverse-CDF sampling).
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2);
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                        NonlinearityType nonlinearity = kLeakyReLU);
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = kFanIn,
                       NonlinearityType nonlinearity = kLeakyReLU);
/// A (semi-)orthogonal matrix from the QR decomposition of a normal sample, times `gain`.
Tensor orthogonal_(Tensor tensor, double gain = 1.0);
/// A 2-D sparse normal matrix: a fraction `sparsity` of each column is zero.
Tensor sparse_(Tensor tensor, double sparsity, double std = 0.01);

}  // namespace ember::nn::init
