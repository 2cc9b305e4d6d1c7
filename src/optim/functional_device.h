#pragma once
// The optimizer steps of include/ember/optim/functional.h for parameters off the CPU
// (Note [Device optimizer step] in functional_device.cpp), and the per-parameter scalars that
// the CPU loops and the device paths share.

#include <cmath>
#include <vector>

#include "ember/tensor.h"

namespace ember::optim::functional {

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

/// Whether a group's step takes the device path: its first parameter is not on the CPU.
inline bool on_device(const std::vector<Tensor>& params) {
  return !params.empty() && params[0].defined() && !params[0].device().is_cpu();
}

// The device path of each step: validation, then the fused kernel of the device when it has
// one for the case, else the generic tensor-op step. Same arguments as the public functions.
namespace device {
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled);
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize);
}  // namespace device

/// The generic steps: torch 1.13's single-tensor update written with tensor ops, for any
/// device (tests run them on CPU tensors against the fused CPU loops).
namespace generic {
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled);
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize);
void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& state_sums, const std::vector<double>& steps,
                  double lr, double weight_decay, double lr_decay, double eps, bool maximize);
void rmsprop_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                  const std::vector<Tensor>& momentum_buffers, double lr, double alpha, double eps,
                  double weight_decay, double momentum, bool centered, bool maximize);
void adadelta_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& acc_deltas,
                   double lr, double rho, double eps, double weight_decay, bool maximize);
void adamax_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_infs,
                 const std::vector<double>& steps, double lr, double beta1, double beta2,
                 double eps, double weight_decay, bool maximize);
void nadam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                std::vector<double>& mu_products, const std::vector<double>& steps, double lr,
                double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                bool maximize);
void radam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<double>& steps, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool maximize);
}  // namespace generic

}  // namespace ember::optim::functional
