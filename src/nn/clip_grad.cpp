// Gradient clipping and parameter/vector conversion (torch.nn.utils, PyTorch 1.13 formulas).
#include <cmath>
#include <limits>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/utils.h"
#include "ember/ops.h"
#include "ember/reduce.h"

namespace ember::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  // One norm per gradient, then the norm of the norms: the same value as one long vector.
  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  for (const Tensor& g : grads) norms.push_back(linalg_vector_norm(g, norm_type).to(kDouble));
  Tensor total = linalg_vector_norm(stack(norms), norm_type);
  double total_norm = total.item<double>();
  EMBER_CHECK(!error_if_nonfinite || std::isfinite(total_norm),
              "[clip_grad_norm_] The total norm of order ", norm_type,
              " for gradients from `parameters` is non-finite, so it cannot be clipped. To "
              "disable this error and scale the gradients by the non-finite norm anyway, set "
              "`error_if_nonfinite=False`");
  double coef = std::min(max_norm / (total_norm + 1e-6), 1.0);
  for (Tensor& g : grads) g.mul_(coef);
  return total_norm;
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) {
      Tensor g = p.grad();
      g.clamp_(Scalar(-clip_value), Scalar(clip_value));
    }
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> flat;
  flat.reserve(parameters.size());
  for (const Tensor& p : parameters) flat.push_back(p.reshape({-1}));
  return cat(flat);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  EMBER_CHECK_TYPE(vec.dim() == 1, "[vector_to_parameters] expected a 1-D vector, got ", vec.dim(),
                   "-D");
  int64_t total = 0;
  for (const Tensor& p : parameters) total += p.numel();
  EMBER_CHECK(total == vec.numel(), "[vector_to_parameters] the vector has ", vec.numel(),
              " elements but the parameters need ", total);
  NoGradGuard no_grad;
  int64_t offset = 0;
  for (Tensor p : parameters) {
    p.copy_(vec.slice(0, offset, offset + p.numel()).view_as(p));
    offset += p.numel();
  }
}

}  // namespace ember::nn::utils
