#pragma once
/// Adam (torch.optim.Adam / torch::optim::Adam), with AMSGrad, L2 weight decay and maximize.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `AdamOptions(1e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(0).amsgrad(false)`.
struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3);  // NOLINT
  typedef std::tuple<double, double> betas_t;
  EMBER_ARG(double, lr) = 1e-3;
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, amsgrad) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("betas", betas_), f("eps", eps_), f("weight_decay", weight_decay_);
    f("amsgrad", amsgrad_), f("maximize", maximize_);
  }
  friend bool operator==(const AdamOptions& a, const AdamOptions& b);
};

/// Step count and moment estimates of one parameter (max_exp_avg_sq only with amsgrad).
struct AdamParamState : public OptimizerCloneableParamState<AdamParamState> {
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

class Adam : public Optimizer {
 public:
  /// ValueError for invalid options, with torch's messages ("Invalid learning rate: -1").
  explicit Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  explicit Adam(std::vector<Tensor> params, AdamOptions defaults = {});
  /// One step for every group, each group's update in one fused multi-tensor kernel.
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
