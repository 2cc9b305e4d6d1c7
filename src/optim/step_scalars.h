#pragma once
// The per-parameter scalars of the optimizer steps (bias corrections, step sizes, RAdam's
// rectification, NAdam's mu products), computed in double once per parameter and step. The CPU
// loops (functional.cpp), the generic steps (functional_device.cpp) and the fused CUDA kernels
// (kernels/cuda/optim_fused.cu) all take them from here.

#include <cmath>

namespace ember::optim::functional {

/// lr / (1 - beta1^step): Adam's and Adamax's step size.
inline double bias_corrected_lr(double lr, double beta1, double step) {
  return lr / (1 - std::pow(beta1, step));
}

/// Adam's per-step scalars.
struct AdamScalars {
  double step_size, bias_correction2_sqrt;
};
inline AdamScalars adam_scalars(double step, double lr, double beta1, double beta2) {
  return {bias_corrected_lr(lr, beta1, step), std::sqrt(1 - std::pow(beta2, step))};
}

/// Adagrad's decayed learning rate.
inline double adagrad_lr(double lr, double lr_decay, double step) {
  return lr / (1 + (step - 1) * lr_decay);
}

/// NAdam's per-step scalars; updates `mu_product` (kept in float32 precision, as torch 1.13
/// keeps it in a float32 tensor and uses mu_product * mu * mu_next for the next product).
struct NadamScalars {
  double bias_correction2, grad_coef, avg_coef;
};
inline NadamScalars nadam_scalars(double& mu_product, double step, double lr, double beta1,
                                  double beta2, double momentum_decay) {
  const double mu = beta1 * (1. - 0.5 * std::pow(0.96, step * momentum_decay));
  const double mu_next = beta1 * (1. - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
  const float prod = float(mu_product) * float(mu);
  const float prod_next = prod * float(mu) * float(mu_next);
  mu_product = prod;
  return {1 - std::pow(beta2, step), -lr * (1. - mu) / (1. - double(prod)),
          -lr * mu_next / (1. - double(prod_next))};
}

/// RAdam's per-step scalars; `rect` < 0 marks the un-rectified update of the first steps.
struct RadamScalars {
  double bias_correction1, bias_correction2_sqrt, rect;
};
inline RadamScalars radam_scalars(double step, double beta1, double beta2) {
  const double rho_inf = 2 / (1 - beta2) - 1;
  const double bc2 = 1 - std::pow(beta2, step);
  const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bc2;
  const double rect =
      rho_t > 5.
          ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
          : -1;
  return {1 - std::pow(beta1, step), std::sqrt(bc2), rect};
}

}  // namespace ember::optim::functional
