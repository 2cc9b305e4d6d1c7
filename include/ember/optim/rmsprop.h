#pragma once
/// RMSprop (torch.optim.RMSprop / torch::optim::RMSprop), plain or centered, with momentum.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `RMSpropOptions(1e-2).alpha(0.99).eps(1e-8).weight_decay(0).momentum(0).centered(false)`.
struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2);  // NOLINT
  EMBER_ARG(double, lr) = 1e-2;
  EMBER_ARG(double, alpha) = 0.99;
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(double, momentum) = 0;
  EMBER_ARG(bool, centered) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("alpha", alpha_), f("eps", eps_), f("weight_decay", weight_decay_);
    f("momentum", momentum_), f("centered", centered_), f("maximize", maximize_);
  }
  friend bool operator==(const RMSpropOptions& a, const RMSpropOptions& b);
};

/// grad_avg only when centered, momentum_buffer only with momentum.
struct RMSpropParamState : public OptimizerCloneableParamState<RMSpropParamState> {
  EMBER_ARG(int64_t, step) = 0;
  EMBER_ARG(Tensor, square_avg);
  EMBER_ARG(Tensor, momentum_buffer) = {};
  EMBER_ARG(Tensor, grad_avg) = {};

 public:
  template <class F>
  void visit(F& f) {
    f("step", step_), f("square_avg", square_avg_), f("momentum_buffer", momentum_buffer_);
    f("grad_avg", grad_avg_);
  }
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});
  explicit RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
