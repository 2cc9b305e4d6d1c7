#pragma once
/// Stochastic gradient descent (torch.optim.SGD / torch::optim::SGD), with momentum, dampening,
/// Nesterov momentum, L2 weight decay and maximize.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `SGDOptions(lr).momentum(0.9).dampening(0).weight_decay(0).nesterov(false)`.
struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr);  // NOLINT
  EMBER_ARG(double, lr);
  EMBER_ARG(double, momentum) = 0;
  EMBER_ARG(double, dampening) = 0;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, nesterov) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("momentum", momentum_), f("dampening", dampening_);
    f("weight_decay", weight_decay_), f("nesterov", nesterov_), f("maximize", maximize_);
  }
  friend bool operator==(const SGDOptions& a, const SGDOptions& b);
};

/// The momentum buffer (undefined until the first step with momentum).
struct SGDParamState : public OptimizerCloneableParamState<SGDParamState> {
  EMBER_ARG(Tensor, momentum_buffer);

 public:
  template <class F>
  void visit(F& f) {
    f("momentum_buffer", momentum_buffer_);
  }
};

class SGD : public Optimizer {
 public:
  /// ValueError for a negative lr, momentum or weight_decay, or Nesterov without momentum or
  /// with dampening (torch's checks and messages).
  explicit SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  explicit SGD(std::vector<Tensor> params, SGDOptions defaults);
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
