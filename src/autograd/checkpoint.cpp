// Activation checkpointing: the forward runs without recording; the node reruns it under grad
// mode in backward (with the RNG state of the first run) and backpropagates through the rerun.

#include "autograd/meta.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/generator.h"
#include "ember/ops.h"

namespace ember::utils {

using autograd::variable_list;

variable_list checkpoint(const std::function<variable_list(const variable_list&)>& fn,
                         const variable_list& inputs, bool preserve_rng_state) {
  Tensor rng_state;
  if (preserve_rng_state) rng_state = default_generator().get_state();
  auto ctx = std::make_shared<autograd::AutogradContext>();
  autograd::CppFunctionImpl::prepare(*ctx, inputs);
  variable_list outs;
  {
    NoGradGuard ng;
    outs = fn(inputs);
  }
  auto backward = [fn, inputs, rng_state, preserve_rng_state](autograd::AutogradContext*,
                                                              variable_list grads) {
    variable_list detached;
    for (const Tensor& t : inputs) {
      if (!t.defined()) {
        detached.push_back(t);
        continue;
      }
      Tensor d = t.detach();
      d.set_requires_grad(t.requires_grad());
      detached.push_back(d);
    }
    Tensor saved_state;
    if (preserve_rng_state) {
      saved_state = default_generator().get_state();
      default_generator().set_state(rng_state);
    }
    variable_list outs;
    try {
      AutoGradMode on(true);
      outs = fn(detached);
    } catch (...) {
      if (preserve_rng_state) default_generator().set_state(saved_state);
      throw;
    }
    if (preserve_rng_state) default_generator().set_state(saved_state);
    variable_list roots, root_grads, wrt;
    for (size_t i = 0; i < outs.size() && i < grads.size(); ++i) {
      if (outs[i].defined() && outs[i].requires_grad() && grads[i].defined()) {
        roots.push_back(outs[i]);
        root_grads.push_back(grads[i]);
      }
    }
    std::vector<size_t> pos;
    for (size_t i = 0; i < detached.size(); ++i) {
      if (detached[i].defined() && detached[i].requires_grad()) {
        wrt.push_back(detached[i]);
        pos.push_back(i);
      }
    }
    variable_list res(inputs.size());
    if (roots.empty() || wrt.empty()) return res;
    variable_list g = autograd::grad(roots, wrt, root_grads, false, GradMode::is_enabled(), true);
    for (size_t k = 0; k < pos.size(); ++k) res[pos[k]] = g[k];
    return res;
  };
  return autograd::CppFunctionImpl::wrap_outputs("CheckpointFunctionBackward", inputs, outs, ctx,
                                                 backward, {});
}

}  // namespace ember::utils
