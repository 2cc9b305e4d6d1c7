#pragma once
/// Adamax (torch.optim.Adamax): Adam with the infinity norm.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `AdamaxOptions(2e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(0)`.
struct AdamaxOptions : public OptimizerCloneableOptions<AdamaxOptions> {
  AdamaxOptions(double lr = 2e-3);  // NOLINT
  typedef std::tuple<double, double> betas_t;
  EMBER_ARG(double, lr) = 2e-3;
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
  friend bool operator==(const AdamaxOptions& a, const AdamaxOptions& b);
};

struct AdamaxParamState : public OptimizerCloneableParamState<AdamaxParamState> {
  EMBER_ARG(int64_t, step) = 0;
  EMBER_ARG(Tensor, exp_avg);
  EMBER_ARG(Tensor, exp_inf);

 public:
  template <class F>
  void visit(F& f) {
    f("step", step_), f("exp_avg", exp_avg_), f("exp_inf", exp_inf_);
  }
};

class Adamax : public Optimizer {
 public:
  explicit Adamax(std::vector<OptimizerParamGroup> param_groups, AdamaxOptions defaults = {});
  explicit Adamax(std::vector<Tensor> params, AdamaxOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
