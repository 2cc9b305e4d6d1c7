#pragma once
// The optimizer steps of include/ember/optim/functional.h for parameters off the CPU
// (Note [Device optimizer step] in functional_device.cpp), and the group validation that the CPU
// loops and the device paths share.

#include <initializer_list>
#include <vector>

#include "ember/optim/functional.h"
#include "ember/tensor.h"
#include "optim/step_scalars.h"

namespace ember::optim::functional {

/// Validates a group with the rules of include/ember/optim/functional.h: `grads`, the non-null
/// `states` and the `sizes` of the other per-parameter lists have one entry per parameter
/// (ValueError); every parameter is a defined floating tensor of a supported dtype, all of one
/// dtype and one device; each grad and state has its parameter's shape, dtype and device. State
/// entries must be defined unless `optional_states` (SGD's buffers before the first step).
void check_group(const char* op, const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 std::initializer_list<const std::vector<Tensor>*> states,
                 std::initializer_list<size_t> sizes = {}, bool optional_states = false);

/// Whether a group's step takes the device path: its first parameter is not on the CPU.
inline bool on_device(const std::vector<Tensor>& params) {
  return !params.empty() && params[0].defined() && !params[0].device().is_cpu();
}

// The device path of a validated group: the fused kernel of the device when it has one for the
// case, else the generic step. Same signatures as the public functions.
namespace device {
decltype(functional::adam_step) adam_step;
decltype(functional::sgd_step) sgd_step;
}  // namespace device

/// The generic steps: torch 1.13's single-tensor update written with tensor ops, for any
/// device (tests run them on CPU tensors against the fused CPU loops). They validate the group;
/// same signatures as the public functions.
namespace generic {
decltype(functional::adam_step) adam_step;
decltype(functional::sgd_step) sgd_step;
decltype(functional::adagrad_step) adagrad_step;
decltype(functional::rmsprop_step) rmsprop_step;
decltype(functional::adadelta_step) adadelta_step;
decltype(functional::adamax_step) adamax_step;
decltype(functional::nadam_step) nadam_step;
decltype(functional::radam_step) radam_step;
}  // namespace generic

}  // namespace ember::optim::functional
