#pragma once
/// AdamW (torch.optim.AdamW / torch::optim::AdamW): Adam with decoupled weight decay.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `AdamWOptions(1e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(1e-2).amsgrad(false)`.
struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3);  // NOLINT
  typedef std::tuple<double, double> betas_t;
  EMBER_ARG(double, lr) = 1e-3;
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 1e-2;
  EMBER_ARG(bool, amsgrad) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("betas", betas_), f("eps", eps_), f("weight_decay", weight_decay_);
    f("amsgrad", amsgrad_), f("maximize", maximize_);
  }
  friend bool operator==(const AdamWOptions& a, const AdamWOptions& b);
};

/// Same fields as AdamParamState.
struct AdamWParamState : public OptimizerCloneableParamState<AdamWParamState> {
  EMBER_ARG(int64_t, step) = 0;
  EMBER_ARG(Tensor, exp_avg);
  EMBER_ARG(Tensor, exp_avg_sq);
  EMBER_ARG(Tensor, max_exp_avg_sq) = {};

 public:
  template <class F>
  void visit(F& f) {
    f("step", step_), f("exp_avg", exp_avg_), f("exp_avg_sq", exp_avg_sq_);
    f("max_exp_avg_sq", max_exp_avg_sq_);
  }
};

class AdamW : public Optimizer {
 public:
  explicit AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  explicit AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
