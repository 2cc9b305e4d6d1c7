#pragma once
/// Adagrad (torch.optim.Adagrad / torch::optim::Adagrad). States are created at construction,
/// holding `initial_accumulator_value`.

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `AdagradOptions(1e-2).lr_decay(0).weight_decay(0).initial_accumulator_value(0).eps(1e-10)`.
struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2);  // NOLINT
  EMBER_ARG(double, lr) = 1e-2;
  EMBER_ARG(double, lr_decay) = 0;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(double, initial_accumulator_value) = 0;
  EMBER_ARG(double, eps) = 1e-10;
  EMBER_ARG(bool, maximize) = false;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("lr_decay", lr_decay_), f("weight_decay", weight_decay_);
    f("initial_accumulator_value", initial_accumulator_value_), f("eps", eps_);
    f("maximize", maximize_);
  }
  friend bool operator==(const AdagradOptions& a, const AdagradOptions& b);
};

struct AdagradParamState : public OptimizerCloneableParamState<AdagradParamState> {
  EMBER_ARG(Tensor, sum);
  EMBER_ARG(int64_t, step) = 0;

 public:
  template <class F>
  void visit(F& f) {
    f("sum", sum_), f("step", step_);
  }
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  explicit Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
};

}  // namespace ember::optim
