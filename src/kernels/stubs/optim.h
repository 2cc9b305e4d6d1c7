#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Fused optimizer kernels for parameters off the CPU (src/optim/functional_device.cpp calls
// them; Note [Device optimizer step]). Every list entry is a contiguous tensor on one device,
// all of the parameters' dtype (float32, float64, float16 or bfloat16); the math is the CPU
// fused loop's (Note [Fused optimizer step] in src/optim/functional.cpp).

#include <vector>

#include "core/kernel_stub.h"
#include "ember/tensor.h"

namespace ember {

/// Adam / AdamW over a group (the arguments of optim::functional::adam_step); entries of
/// `max_exp_avg_sqs` are read only when amsgrad.
EMBER_DECLARE_KERNEL(fused_adam_stub,
                     void(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<Tensor>& exp_avgs,
                          const std::vector<Tensor>& exp_avg_sqs,
                          const std::vector<Tensor>& max_exp_avg_sqs,
                          const std::vector<double>& steps, double lr, double beta1, double beta2,
                          double eps, double weight_decay, bool amsgrad, bool maximize,
                          bool decoupled));
/// SGD over a group; `momentum_buffers` are all defined when momentum != 0 (unused otherwise),
/// and `first_step[i] != 0` marks a buffer created for this step (it receives the gradient).
EMBER_DECLARE_KERNEL(fused_sgd_stub,
                     void(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<Tensor>& momentum_buffers,
                          const std::vector<char>& first_step, double lr, double momentum,
                          double dampening, double weight_decay, bool nesterov, bool maximize));

}  // namespace ember
