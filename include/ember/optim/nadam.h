#pragma once
/// NAdam (torch.optim.NAdam): Adam with Nesterov momentum and momentum decay.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `NAdamOptions(2e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(0).momentum_decay(4e-3)`.
struct NAdamOptions : public OptimizerCloneableOptions<NAdamOptions> {
  NAdamOptions(double lr = 2e-3);  // NOLINT
  typedef std::tuple<double, double> betas_t;
  EMBER_ARG(double, lr) = 2e-3;
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(double, momentum_decay) = 4e-3;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("betas", betas_), f("eps", eps_), f("weight_decay", weight_decay_);
    f("momentum_decay", momentum_decay_), f("maximize", maximize_);
  }
  friend bool operator==(const NAdamOptions& a, const NAdamOptions& b);
};

/// `mu_product` is the running product of the momentum coefficients (float32 precision, as
/// torch keeps it).
struct NAdamParamState : public OptimizerCloneableParamState<NAdamParamState> {
  EMBER_ARG(int64_t, step) = 0;
  EMBER_ARG(double, mu_product) = 1.0;
  EMBER_ARG(Tensor, exp_avg);
  EMBER_ARG(Tensor, exp_avg_sq);

 public:
  template <class F>
  void visit(F& f) {
    f("step", step_), f("mu_product", mu_product_), f("exp_avg", exp_avg_);
    f("exp_avg_sq", exp_avg_sq_);
  }
};

class NAdam : public Optimizer {
 public:
  explicit NAdam(std::vector<OptimizerParamGroup> param_groups, NAdamOptions defaults = {});
  explicit NAdam(std::vector<Tensor> params, NAdamOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
