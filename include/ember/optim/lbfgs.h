#pragma once
/// L-BFGS (torch.optim.LBFGS / torch::optim::LBFGS), with an optional strong-Wolfe line search.
/// One parameter group only; step() needs a closure that re-evaluates the loss (and its
/// gradients) and may call it up to max_eval times.

#include <optional>
#include <string>
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// `LBFGSOptions(1).max_iter(20).max_eval(25).tolerance_grad(1e-7).tolerance_change(1e-9)
///  .history_size(100).line_search_fn("strong_wolfe")`; max_eval defaults to max_iter * 5 / 4.
struct LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
  LBFGSOptions(double lr = 1);  // NOLINT
  EMBER_ARG(double, lr) = 1;
  EMBER_ARG(int64_t, max_iter) = 20;
  EMBER_ARG(std::optional<int64_t>, max_eval) = std::nullopt;
  EMBER_ARG(double, tolerance_grad) = 1e-7;
  EMBER_ARG(double, tolerance_change) = 1e-9;
  EMBER_ARG(int64_t, history_size) = 100;
  EMBER_ARG(std::optional<std::string>, line_search_fn) = std::nullopt;

 public:
  template <class F>
  void visit(F& f) {
    f("lr", lr_), f("max_iter", max_iter_), f("max_eval", max_eval_);
    f("tolerance_grad", tolerance_grad_), f("tolerance_change", tolerance_change_);
    f("history_size", history_size_), f("line_search_fn", line_search_fn_);
  }
  friend bool operator==(const LBFGSOptions& a, const LBFGSOptions& b);
};

/// The optimizer's state (kept on the first parameter, as torch): the last direction and step,
/// the curvature pairs (old_dirs = y, old_stps = s, ro = 1 / y.s), and counters.
struct LBFGSParamState : public OptimizerCloneableParamState<LBFGSParamState> {
  EMBER_ARG(int64_t, func_evals) = 0;
  EMBER_ARG(int64_t, n_iter) = 0;
  EMBER_ARG(double, t) = 0;
  EMBER_ARG(double, prev_loss) = 0;
  EMBER_ARG(double, H_diag) = 1;
  EMBER_ARG(Tensor, d) = {};
  EMBER_ARG(Tensor, prev_flat_grad) = {};
  EMBER_ARG(std::vector<Tensor>, old_dirs);
  EMBER_ARG(std::vector<Tensor>, old_stps);
  EMBER_ARG(std::vector<Tensor>, ro);

 public:
  template <class F>
  void visit(F& f) {
    f("func_evals", func_evals_), f("n_iter", n_iter_), f("t", t_), f("prev_loss", prev_loss_);
    f("H_diag", H_diag_), f("d", d_), f("prev_flat_grad", prev_flat_grad_);
    f("old_dirs", old_dirs_), f("old_stps", old_stps_), f("ro", ro_);
  }
  bool param_shaped() const override { return false; }
};

class LBFGS : public Optimizer {
 public:
  /// ValueError with more than one group (torch's check), or a line search other than
  /// "strong_wolfe".
  explicit LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults = {});
  explicit LBFGS(std::vector<Tensor> params, LBFGSOptions defaults = {});
  /// Up to max_iter L-BFGS iterations; returns the loss of the first closure call. The closure
  /// is required (Error without one).
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;

 private:
  Tensor gather_flat_grad() const;
  void add_grad(double step_size, const Tensor& update);
  double directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x, double t,
                              const Tensor& d, Tensor& flat_grad);
  int64_t numel() const;
};

}  // namespace ember::optim
