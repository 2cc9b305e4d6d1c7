// ember::nn::init: the formulas of torch.nn.init (PyTorch 1.13), run under NoGradGuard.
#include "ember/nn/init.h"

#include <cmath>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/ops.h"
#include "ember/random.h"

namespace ember::nn::init {

namespace {

double fan_for(const Tensor& tensor, const FanModeType& mode) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  return double(std::holds_alternative<enumtype::kFanIn>(mode) ? fan_in : fan_out);
}

}  // namespace

double calculate_gain(NonlinearityType nonlinearity, double param) {
  if (std::holds_alternative<enumtype::kTanh>(nonlinearity)) return 5.0 / 3;
  if (std::holds_alternative<enumtype::kReLU>(nonlinearity)) return std::sqrt(2.0);
  if (std::holds_alternative<enumtype::kLeakyReLU>(nonlinearity))
    return std::sqrt(2.0 / (1 + param * param));
  if (std::holds_alternative<enumtype::kSELU>(nonlinearity)) return 3.0 / 4;
  return 1.0;  // linear, conv*, sigmoid
}

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK_VALUE(tensor.dim() >= 2,
                    "[init] Fan in and fan out can not be computed for tensor with fewer than 2 "
                    "dimensions (got ",
                    tensor.dim(), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

Tensor constant_(Tensor tensor, Scalar value) {
  NoGradGuard g;
  tensor.fill_(value);
  return tensor;
}

Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }
Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }

Tensor eye_(Tensor matrix) {
  EMBER_CHECK_VALUE(matrix.dim() == 2, "[init.eye_] Only tensors with 2 dimensions are supported",
                    " (got ", matrix.dim(), ")");
  NoGradGuard g;
  matrix.copy_(eye(matrix.size(0), matrix.size(1), matrix.options()));
  return matrix;
}

Tensor dirac_(Tensor tensor, int64_t groups) {
  int64_t d = tensor.dim();
  EMBER_CHECK_VALUE(d >= 3 && d <= 5,
                    "[init.dirac_] Only tensors with 3, 4, or 5 dimensions are "
                    "supported (got ",
                    d, ")");
  EMBER_CHECK_VALUE(groups > 0 && tensor.size(0) % groups == 0,
                    "[init.dirac_] dim 0 must be divisible by groups (", tensor.size(0), " by ",
                    groups, ")");
  NoGradGuard g;
  int64_t out_per_group = tensor.size(0) / groups;
  int64_t min_dim = std::min(out_per_group, tensor.size(1));
  tensor.zero_();
  for (int64_t gi = 0; gi < groups; ++gi)
    for (int64_t k = 0; k < min_dim; ++k) {
      std::vector<indexing::TensorIndex> idx{gi * out_per_group + k, k};
      for (int64_t s = 2; s < d; ++s) idx.emplace_back(tensor.size(s) / 2);
      tensor.index_put_(idx, Scalar(1));
    }
  return tensor;
}

Tensor uniform_(Tensor tensor, double low, double high) {
  NoGradGuard g;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard g;
  tensor.normal_(mean, std);
  return tensor;
}

// Inverse-CDF sampling, as torch.nn.init.trunc_normal_: uniform in CDF space, then erfinv.
Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  NoGradGuard g;
  auto norm_cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  double l = norm_cdf((a - mean) / std), u = norm_cdf((b - mean) / std);
  tensor.uniform_(2 * l - 1, 2 * u - 1);
  tensor.erfinv_();
  tensor.mul_(std * std::sqrt(2.0));
  tensor.add_(mean);
  tensor.clamp_(Scalar(a), Scalar(b));
  return tensor;
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / double(fan_in + fan_out));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / double(fan_in + fan_out));
  return normal_(std::move(tensor), 0, std);
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  if (tensor.numel() == 0) return tensor;  // PyTorch warns and skips
  double std = calculate_gain(nonlinearity, a) / std::sqrt(fan_for(tensor, mode));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  if (tensor.numel() == 0) return tensor;
  double std = calculate_gain(nonlinearity, a) / std::sqrt(fan_for(tensor, mode));
  return normal_(std::move(tensor), 0, std);
}

Tensor orthogonal_(Tensor tensor, double gain) {
  EMBER_CHECK_VALUE(tensor.dim() >= 2,
                    "[init.orthogonal_] Only tensors with 2 or more dimensions are supported");
  if (tensor.numel() == 0) return tensor;
  NoGradGuard g;
  int64_t rows = tensor.size(0), cols = tensor.numel() / rows;
  Tensor flat = randn({rows, cols}, tensor.options());
  if (rows < cols) flat = flat.t();
  auto [q, r] = linalg::qr(flat);
  q = q * r.diagonal().sign();  // makes the decomposition unique
  if (rows < cols) q = q.t();
  tensor.view_as(q).copy_(q);
  tensor.mul_(gain);
  return tensor;
}

Tensor sparse_(Tensor tensor, double sparsity, double std) {
  EMBER_CHECK_VALUE(tensor.dim() == 2,
                    "[init.sparse_] Only tensors with 2 dimensions are "
                    "supported (got ",
                    tensor.dim(), ")");
  NoGradGuard g;
  int64_t rows = tensor.size(0), cols = tensor.size(1);
  auto num_zeros = int64_t(std::ceil(sparsity * double(rows)));
  tensor.normal_(0, std);
  for (int64_t c = 0; c < cols; ++c) {
    Tensor zero_rows = randperm(rows).slice(0, 0, num_zeros);
    tensor.index_put_({zero_rows, c}, Scalar(0));
  }
  return tensor;
}

}  // namespace ember::nn::init
