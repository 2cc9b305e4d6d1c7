#pragma once
/// Learning-rate schedulers (torch.optim.lr_scheduler / torch::optim::LRScheduler). A scheduler
/// rewrites the learning rate of every parameter group of its optimizer on each `step()`, with
/// the same values as torch 1.13 epoch by epoch (the chainable forms multiply the current rate,
/// so several schedulers can act on one optimizer).
///
/// Schedulers are built at `last_epoch = -1` and take their first step in the constructor (as
/// torch's), so right after construction `get_last_lr()` holds the epoch-0 rates.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// The base class: `step()` advances `last_epoch` and writes `get_lrs()` into the groups.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;

  /// Advances one epoch.
  virtual void step();
  /// Jumps to `epoch` (torch's deprecated step(epoch)): the closed form where the rule has one,
  /// else the chainable rule.
  void step_epoch(int64_t epoch);
  /// The rates set by the last step, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  /// The epoch reached (0 after construction).
  int64_t last_epoch() const { return last_epoch_; }
  /// The groups' rates when the scheduler was made (torch's initial_lr).
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() { return optimizer_; }

  /// last_epoch, step count, base and last rates (plus the subclass's counters), as tensors.
  virtual TensorDict state_dict() const;
  virtual void load_state_dict(const TensorDict& dict);

 protected:
  friend class SequentialLR;
  /// The rates of this epoch (last_epoch() already advanced).
  virtual std::vector<double> get_lrs() = 0;
  /// The closed-form rates at last_epoch() (empty when the rule has none).
  virtual std::vector<double> closed_form_lrs() { return {}; }
  /// Runs the first step; every subclass constructor calls it last.
  void initial_step();
  std::vector<double> current_lrs() const;
  void set_lrs(const std::vector<double>& lrs);

  Optimizer& optimizer_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
};

/// lr = base_lr * lambda(epoch).
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, Lambda lr_lambda);
  /// One lambda per group (ValueError when the count differs).
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<Lambda> lambdas_;
};

/// lr *= lambda(epoch) each epoch after the first.
class MultiplicativeLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  MultiplicativeLR(Optimizer& optimizer, Lambda lr_lambda);
  MultiplicativeLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<Lambda> lambdas_;
};

/// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  int64_t step_size_;
  double gamma_;
};

/// lr *= gamma at each milestone (a repeated milestone multiplies again).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  std::vector<int64_t> milestones_;
  double gamma_;
};

/// lr = base_lr * factor until total_iters, then base_lr.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& optimizer, double factor = 1.0 / 3, int64_t total_iters = 5);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  double factor_;
  int64_t total_iters_;
};

/// Multiplies the rate by a factor going linearly from start_factor to end_factor.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  double start_, end_;
  int64_t total_iters_;
};

/// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  double gamma_;
};

/// Polynomial decay to zero over total_iters.
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(Optimizer& optimizer, int64_t total_iters = 5, double power = 1.0);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  int64_t total_iters_;
  double power_;
};

/// Cosine annealing to eta_min over T_max epochs, in torch's recursive form.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> get_lrs() override;
  std::vector<double> closed_form_lrs() override;
  int64_t T_max_;
  double eta_min_;
};

/// Cosine annealing restarted every T_i epochs (T_i *= T_mult after each restart).
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1,
                              double eta_min = 0);
  void step() override;
  TensorDict state_dict() const override;
  void load_state_dict(const TensorDict& dict) override;

 protected:
  std::vector<double> get_lrs() override;
  int64_t T_0_, T_i_, T_mult_;
  double eta_min_;
  int64_t T_cur_ = -1;
};

/// Options of CyclicLR (torch's arguments).
struct CyclicLROptions {
  EMBER_ARG(double, step_size_up) = 2000;
  EMBER_ARG(std::optional<double>, step_size_down) = std::nullopt;
  /// "triangular", "triangular2" or "exp_range".
  EMBER_ARG(std::string, mode) = "triangular";
  EMBER_ARG(double, gamma) = 1.0;
  EMBER_ARG(bool, cycle_momentum) = true;
  EMBER_ARG(double, base_momentum) = 0.8;
  EMBER_ARG(double, max_momentum) = 0.9;
};

/// Cyclical learning rate between base_lr and max_lr; momentum (SGD, RMSprop) cycled inversely.
class CyclicLR : public LRScheduler {
 public:
  CyclicLR(Optimizer& optimizer, double base_lr, double max_lr, CyclicLROptions options = {});

 protected:
  std::vector<double> get_lrs() override;
  double scale_fn(double x) const;
  std::vector<double> max_lrs_, base_momentums_, max_momentums_;
  double total_size_, step_ratio_;
  CyclicLROptions o_;
};

/// Options of OneCycleLR (torch's arguments).
struct OneCycleLROptions {
  EMBER_ARG(double, pct_start) = 0.3;
  /// "cos" or "linear".
  EMBER_ARG(std::string, anneal_strategy) = "cos";
  EMBER_ARG(bool, cycle_momentum) = true;
  EMBER_ARG(double, base_momentum) = 0.85;
  EMBER_ARG(double, max_momentum) = 0.95;
  EMBER_ARG(double, div_factor) = 25.;
  EMBER_ARG(double, final_div_factor) = 1e4;
  EMBER_ARG(bool, three_phase) = false;
};

/// The 1cycle policy over total_steps; momentum (or Adam's beta1) cycled inversely.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps,
             OneCycleLROptions options = {});

 protected:
  std::vector<double> get_lrs() override;
  struct Phase {
    double end_step;
    int start_lr, end_lr, start_mom, end_mom;  // 0 initial, 1 max, 2 min / 0 max, 1 base mom
  };
  double anneal(double start, double end, double pct) const;
  int64_t total_steps_;
  std::vector<Phase> phases_;
  std::vector<double> initial_lrs_, max_lrs_, min_lrs_, max_moms_, base_moms_;
  OneCycleLROptions o_;
};

/// Runs schedulers one after another, switching at the milestones. The schedulers must act on
/// `optimizer` and outlive this one.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers,
               std::vector<int64_t> milestones);
  void step() override;

 protected:
  std::vector<double> get_lrs() override;
  std::vector<LRScheduler*> schedulers_;
  std::vector<int64_t> milestones_;
};

/// Steps all schedulers at each step (their effects compose).
class ChainedScheduler {
 public:
  explicit ChainedScheduler(std::vector<LRScheduler*> schedulers);
  void step();
  const std::vector<double>& get_last_lr() const { return last_lr_; }

 private:
  std::vector<LRScheduler*> schedulers_;
  std::vector<double> last_lr_;
};

/// Options of ReduceLROnPlateau (torch's arguments).
struct ReduceLROnPlateauOptions {
  /// "min" or "max".
  EMBER_ARG(std::string, mode) = "min";
  EMBER_ARG(double, factor) = 0.1;
  EMBER_ARG(int64_t, patience) = 10;
  EMBER_ARG(double, threshold) = 1e-4;
  /// "rel" or "abs".
  EMBER_ARG(std::string, threshold_mode) = "rel";
  EMBER_ARG(int64_t, cooldown) = 0;
  EMBER_ARG(double, min_lr) = 0;
  EMBER_ARG(double, eps) = 1e-8;
};

/// Divides the rate by 1/factor when a metric stops improving for `patience` epochs.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  void step(double metric);
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  double best() const { return best_; }

 private:
  bool is_better(double a, double best) const;
  Optimizer& optimizer_;
  ReduceLROnPlateauOptions o_;
  double best_;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace ember::optim
