#pragma once
/// Multi-tensor optimizer steps: the update of all parameters of a group in one call, one pass
/// over memory per tensor, parallel over elements. The optimizers and the Python binding
/// (ember._C._optim) call these; the math equals torch 1.13's single-tensor step.
///
/// Common rules: lists have one entry per parameter (states of the parameter's shape and
/// dtype, grads of its shape and dtype); float32, float64, bfloat16 and float16 parameters
/// (half types compute in float). Parameters and states are written in place (their version
/// counters are bumped) without recording autograd history. `steps` are the step counts after
/// this step's increment (1 on the first step).

#include <cstdint>
#include <vector>

#include "ember/tensor.h"

namespace ember::optim::functional {

/// Adam (decoupled = false) and AdamW (decoupled = true, weight decay applied to the param).
/// `max_exp_avg_sqs` is used (and may be empty) only when amsgrad.
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled);

/// SGD with momentum, dampening, Nesterov. An undefined entry of `momentum_buffers` (first
/// step) is created here, holding the (decayed) gradient as torch does; unused when
/// momentum == 0.
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize);

/// Adagrad (`state_sums` accumulate the squared gradients).
void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& state_sums, const std::vector<double>& steps,
                  double lr, double weight_decay, double lr_decay, double eps, bool maximize);

/// RMSprop; `grad_avgs` used when centered, `momentum_buffers` when momentum > 0.
void rmsprop_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                  const std::vector<Tensor>& momentum_buffers, double lr, double alpha, double eps,
                  double weight_decay, double momentum, bool centered, bool maximize);

/// Adadelta.
void adadelta_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& acc_deltas,
                   double lr, double rho, double eps, double weight_decay, bool maximize);

/// Adamax (infinity-norm Adam).
void adamax_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_infs,
                 const std::vector<double>& steps, double lr, double beta1, double beta2,
                 double eps, double weight_decay, bool maximize);

/// NAdam. `mu_products` (one per parameter, updated here) are kept in float32 precision, as
/// torch keeps them in a float32 tensor.
void nadam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                std::vector<double>& mu_products, const std::vector<double>& steps, double lr,
                double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                bool maximize);

/// RAdam (rectified Adam).
void radam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<double>& steps, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool maximize);

}  // namespace ember::optim::functional
