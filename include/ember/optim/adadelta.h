#pragma once
/// Adadelta (torch.optim.Adadelta).

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `AdadeltaOptions(1.0).rho(0.9).eps(1e-6).weight_decay(0)`.
struct AdadeltaOptions : public OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0);  // NOLINT
  EMBER_ARG(double, lr) = 1.0;
  EMBER_ARG(double, rho) = 0.9;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("rho", rho_), f("eps", eps_), f("weight_decay", weight_decay_);
    f("maximize", maximize_);
  }
  friend bool operator==(const AdadeltaOptions& a, const AdadeltaOptions& b);
};

struct AdadeltaParamState : public OptimizerCloneableParamState<AdadeltaParamState> {
  EMBER_ARG(int64_t, step) = 0;
  EMBER_ARG(Tensor, square_avg);
  EMBER_ARG(Tensor, acc_delta);

 public:
  template <class F>
  void visit(F& f) {
    f("step", step_), f("square_avg", square_avg_), f("acc_delta", acc_delta_);
  }
};

class Adadelta : public Optimizer {
 public:
  explicit Adadelta(std::vector<OptimizerParamGroup> param_groups, AdadeltaOptions defaults = {});
  explicit Adadelta(std::vector<Tensor> params, AdadeltaOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
