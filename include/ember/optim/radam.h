#pragma once
/// RAdam (torch.optim.RAdam): Adam with a rectified adaptive learning rate.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `RAdamOptions(1e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(0)`.
struct RAdamOptions : public OptimizerCloneableOptions<RAdamOptions> {
  RAdamOptions(double lr = 1e-3);  // NOLINT
  typedef std::tuple<double, double> betas_t;
  EMBER_ARG(double, lr) = 1e-3;
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("betas", betas_), f("eps", eps_), f("weight_decay", weight_decay_);
    f("maximize", maximize_);
  }
  friend bool operator==(const RAdamOptions& a, const RAdamOptions& b);
};

struct RAdamParamState : public OptimizerCloneableParamState<RAdamParamState> {
  EMBER_ARG(int64_t, step) = 0;
  EMBER_ARG(Tensor, exp_avg);
  EMBER_ARG(Tensor, exp_avg_sq);

 public:
  template <class F>
  void visit(F& f) {
    f("step", step_), f("exp_avg", exp_avg_), f("exp_avg_sq", exp_avg_sq_);
  }
};

class RAdam : public Optimizer {
 public:
  explicit RAdam(std::vector<OptimizerParamGroup> param_groups, RAdamOptions defaults = {});
  explicit RAdam(std::vector<Tensor> params, RAdamOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
