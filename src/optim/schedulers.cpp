// LR schedulers. The arithmetic of each rule is written in the same order as torch 1.13's so that
// the rates agree to the last bit (the recursive forms accumulate rounding).
#include "ember/optim/schedulers.h"

#include <algorithm>
#include <cmath>

#include "ember/factory.h"
#include "ember/optim.h"

namespace ember::optim {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Python's `a % b` for integers (the result has the sign of b).
int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Momentum of a group's options, for the schedulers that cycle it: `momentum` (SGD, RMSprop)
// or beta1 (the Adam family). Returns false when the optimizer has neither.
bool get_momentum(OptimizerOptions& o, double& m, bool allow_betas) {
  if (auto* s = dynamic_cast<SGDOptions*>(&o)) return m = s->momentum(), true;
  if (auto* s = dynamic_cast<RMSpropOptions*>(&o)) return m = s->momentum(), true;
  if (!allow_betas) return false;
  if (auto* s = dynamic_cast<AdamOptions*>(&o)) return m = std::get<0>(s->betas()), true;
  if (auto* s = dynamic_cast<AdamWOptions*>(&o)) return m = std::get<0>(s->betas()), true;
  if (auto* s = dynamic_cast<AdamaxOptions*>(&o)) return m = std::get<0>(s->betas()), true;
  if (auto* s = dynamic_cast<NAdamOptions*>(&o)) return m = std::get<0>(s->betas()), true;
  if (auto* s = dynamic_cast<RAdamOptions*>(&o)) return m = std::get<0>(s->betas()), true;
  return false;
}

void set_momentum(OptimizerOptions& o, double m) {
  auto set_beta = [m](auto* s) { s->betas(std::make_tuple(m, std::get<1>(s->betas()))); };
  if (auto* s = dynamic_cast<SGDOptions*>(&o)) {
    s->momentum(m);
  } else if (auto* s = dynamic_cast<RMSpropOptions*>(&o)) {
    s->momentum(m);
  } else if (auto* s = dynamic_cast<AdamOptions*>(&o)) {
    set_beta(s);
  } else if (auto* s = dynamic_cast<AdamWOptions*>(&o)) {
    set_beta(s);
  } else if (auto* s = dynamic_cast<AdamaxOptions*>(&o)) {
    set_beta(s);
  } else if (auto* s = dynamic_cast<NAdamOptions*>(&o)) {
    set_beta(s);
  } else if (auto* s = dynamic_cast<RAdamOptions*>(&o)) {
    set_beta(s);
  }
}

Tensor doubles(const std::vector<double>& v) { return tensor(v, TensorOptions(kDouble)); }
std::vector<double> to_doubles(const Tensor& t) {
  Tensor c = t.to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Base
// ---------------------------------------------------------------------------------------------

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (auto& g : optimizer.param_groups()) {
    if (!g.initial_lr()) g.initial_lr() = g.options().get_lr();
    base_lrs_.push_back(*g.initial_lr());
  }
}

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> out;
  for (const auto& g : optimizer_.param_groups()) out.push_back(g.options().get_lr());
  return out;
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = current_lrs();
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  set_lrs(get_lrs());
}

void LRScheduler::step_epoch(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  std::vector<double> lrs = closed_form_lrs();
  set_lrs(lrs.empty() ? get_lrs() : lrs);
}

TensorDict LRScheduler::state_dict() const {
  TensorDict d("Key");
  d.insert("last_epoch", scalar_tensor(Scalar(last_epoch_), TensorOptions(kLong)));
  d.insert("_step_count", scalar_tensor(Scalar(step_count_), TensorOptions(kLong)));
  d.insert("base_lrs", doubles(base_lrs_));
  d.insert("_last_lr", doubles(last_lr_));
  return d;
}

void LRScheduler::load_state_dict(const TensorDict& dict) {
  for (const char* k : {"last_epoch", "_step_count", "base_lrs", "_last_lr"})
    EMBER_CHECK(dict.contains(k), "[LRScheduler.load_state_dict] missing key '", k, "'");
  last_epoch_ = dict["last_epoch"].item<int64_t>();
  step_count_ = dict["_step_count"].item<int64_t>();
  base_lrs_ = to_doubles(dict["base_lrs"]);
  last_lr_ = to_doubles(dict["_last_lr"]);
}

// ---------------------------------------------------------------------------------------------
// LambdaLR, MultiplicativeLR
// ---------------------------------------------------------------------------------------------

static std::vector<std::function<double(int64_t)>> check_lambdas(
    Optimizer& o, std::vector<std::function<double(int64_t)>> l) {
  EMBER_CHECK_VALUE(l.size() == o.param_groups().size(), "Expected ", o.param_groups().size(),
                    " lr_lambdas, but got ", l.size());
  return l;
}

LambdaLR::LambdaLR(Optimizer& optimizer, Lambda lr_lambda)
    : LambdaLR(optimizer, std::vector<Lambda>(optimizer.param_groups().size(), lr_lambda)) {}
LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas)
    : LRScheduler(optimizer), lambdas_(check_lambdas(optimizer, std::move(lr_lambdas))) {
  initial_step();
}
std::vector<double> LambdaLR::get_lrs() {
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i)
    out.push_back(base_lrs_[i] * lambdas_[i](last_epoch_));
  return out;
}

MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, Lambda lr_lambda)
    : MultiplicativeLR(optimizer, std::vector<Lambda>(optimizer.param_groups().size(), lr_lambda)) {
}
MultiplicativeLR::MultiplicativeLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas)
    : LRScheduler(optimizer), lambdas_(check_lambdas(optimizer, std::move(lr_lambdas))) {
  initial_step();
}
std::vector<double> MultiplicativeLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ > 0)
    for (size_t i = 0; i < lrs.size(); ++i) lrs[i] = lrs[i] * lambdas_[i](last_epoch_);
  return lrs;
}

// ---------------------------------------------------------------------------------------------
// StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR, PolynomialLR
// ---------------------------------------------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK_VALUE(step_size > 0, "[StepLR] step_size must be positive, got ", step_size);
  initial_step();
}
std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0 || py_mod(last_epoch_, step_size_) != 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  initial_step();
}
std::vector<double> MultiStepLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return lrs;
  for (double& lr : lrs) lr = lr * std::pow(gamma_, double(count));
  return lrs;
}

ConstantLR::ConstantLR(Optimizer& optimizer, double factor, int64_t total_iters)
    : LRScheduler(optimizer), factor_(factor), total_iters_(total_iters) {
  EMBER_CHECK_VALUE(factor <= 1.0 && factor >= 0,
                    "Constant multiplicative factor expected to be between 0 and 1.");
  initial_step();
}
std::vector<double> ConstantLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr = lr * factor_;
  } else if (last_epoch_ == total_iters_) {
    for (double& lr : lrs) lr = lr * (1.0 / factor_);
  }
  return lrs;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer), start_(start_factor), end_(end_factor), total_iters_(total_iters) {
  EMBER_CHECK_VALUE(start_factor <= 1.0 && start_factor >= 0,
                    "Starting multiplicative factor expected to be between 0 and 1.");
  EMBER_CHECK_VALUE(end_factor <= 1.0 && end_factor >= 0,
                    "Ending multiplicative factor expected to be between 0 and 1.");
  initial_step();
}
std::vector<double> LinearLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr = lr * start_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double ratio = 1. + (end_ - start_) / (double(total_iters_) * start_ +
                                               double(last_epoch_ - 1) * (end_ - start_));
  for (double& lr : lrs) lr = lr * ratio;
  return lrs;
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}
std::vector<double> ExponentialLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ != 0)
    for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

PolynomialLR::PolynomialLR(Optimizer& optimizer, int64_t total_iters, double power)
    : LRScheduler(optimizer), total_iters_(total_iters), power_(power) {
  initial_step();
}
std::vector<double> PolynomialLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0 || last_epoch_ > total_iters_) return lrs;
  const double t = double(last_epoch_), n = double(total_iters_);
  const double decay = std::pow((1.0 - t / n) / (1.0 - (t - 1) / n), power_);
  for (double& lr : lrs) lr = lr * decay;
  return lrs;
}

// ---------------------------------------------------------------------------------------------
// Cosine schedules
// ---------------------------------------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK_VALUE(T_max > 0, "[CosineAnnealingLR] T_max must be positive, got ", T_max);
  initial_step();
}
std::vector<double> CosineAnnealingLR::get_lrs() {
  std::vector<double> lrs = current_lrs();
  const double t = double(last_epoch_), T = double(T_max_), lo = eta_min_;
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0) {
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = lo + (base_lrs_[i] - lo) * (1 + std::cos(t * kPi / T)) / 2;
  } else if (py_mod(last_epoch_ - 1 - T_max_, 2 * T_max_) == 0) {
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = lrs[i] + (base_lrs_[i] - lo) * (1 - std::cos(kPi / T)) / 2;
  } else {
    for (double& lr : lrs)
      lr = (1 + std::cos(kPi * t / T)) / (1 + std::cos(kPi * (t - 1) / T)) * (lr - lo) + lo;
  }
  return lrs;
}

std::vector<double> StepLR::closed_form_lrs() {
  std::vector<double> out;
  for (double b : base_lrs_) out.push_back(b * std::pow(gamma_, double(last_epoch_ / step_size_)));
  return out;
}
std::vector<double> MultiStepLR::closed_form_lrs() {
  std::vector<int64_t> ms = milestones_;
  std::sort(ms.begin(), ms.end());
  auto k = std::upper_bound(ms.begin(), ms.end(), last_epoch_) - ms.begin();
  std::vector<double> out;
  for (double b : base_lrs_) out.push_back(b * std::pow(gamma_, double(k)));
  return out;
}
std::vector<double> ConstantLR::closed_form_lrs() {
  std::vector<double> out;
  for (double b : base_lrs_)
    out.push_back(b * (factor_ + double(last_epoch_ >= total_iters_) * (1 - factor_)));
  return out;
}
std::vector<double> LinearLR::closed_form_lrs() {
  std::vector<double> out;
  for (double b : base_lrs_)
    out.push_back(b * (start_ + (end_ - start_) * double(std::min(total_iters_, last_epoch_)) /
                                    double(total_iters_)));
  return out;
}
std::vector<double> ExponentialLR::closed_form_lrs() {
  std::vector<double> out;
  for (double b : base_lrs_) out.push_back(b * std::pow(gamma_, double(last_epoch_)));
  return out;
}
std::vector<double> PolynomialLR::closed_form_lrs() {
  std::vector<double> out;
  const double t = double(std::min(total_iters_, last_epoch_));
  for (double b : base_lrs_) out.push_back(b * std::pow(1.0 - t / double(total_iters_), power_));
  return out;
}
std::vector<double> CosineAnnealingLR::closed_form_lrs() {
  std::vector<double> out;
  const double c = (1 + std::cos(kPi * double(last_epoch_) / double(T_max_))) / 2;
  for (double b : base_lrs_) out.push_back(eta_min_ + (b - eta_min_) * c);
  return out;
}

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0,
                                                         int64_t T_mult, double eta_min)
    : LRScheduler(optimizer), T_0_(T_0), T_i_(T_0), T_mult_(T_mult), eta_min_(eta_min) {
  EMBER_CHECK_VALUE(T_0 > 0, "Expected positive integer T_0, but got ", T_0);
  EMBER_CHECK_VALUE(T_mult >= 1, "Expected integer T_mult >= 1, but got ", T_mult);
  initial_step();
}
void CosineAnnealingWarmRestarts::step() {
  ++step_count_;
  if (last_epoch_ < 0) {
    last_epoch_ = 0;
    T_i_ = T_0_;
    T_cur_ = 0;
  } else {
    ++last_epoch_;
    T_cur_ += 1;
    if (T_cur_ >= T_i_) {
      T_cur_ -= T_i_;
      T_i_ *= T_mult_;
    }
  }
  set_lrs(get_lrs());
}
std::vector<double> CosineAnnealingWarmRestarts::get_lrs() {
  std::vector<double> out;
  const double c = (1 + std::cos(kPi * double(T_cur_) / double(T_i_))) / 2;
  for (double b : base_lrs_) out.push_back(eta_min_ + (b - eta_min_) * c);
  return out;
}
TensorDict CosineAnnealingWarmRestarts::state_dict() const {
  TensorDict d = LRScheduler::state_dict();
  d.insert("T_i", scalar_tensor(Scalar(T_i_), TensorOptions(kLong)));
  d.insert("T_cur", scalar_tensor(Scalar(T_cur_), TensorOptions(kLong)));
  return d;
}
void CosineAnnealingWarmRestarts::load_state_dict(const TensorDict& dict) {
  LRScheduler::load_state_dict(dict);
  T_i_ = dict["T_i"].item<int64_t>();
  T_cur_ = dict["T_cur"].item<int64_t>();
}

// ---------------------------------------------------------------------------------------------
// CyclicLR, OneCycleLR
// ---------------------------------------------------------------------------------------------

CyclicLR::CyclicLR(Optimizer& optimizer, double base_lr, double max_lr, CyclicLROptions options)
    : LRScheduler(optimizer), o_(std::move(options)) {
  const size_t n = optimizer.param_groups().size();
  base_lrs_.assign(n, base_lr);
  for (auto& g : optimizer.param_groups()) g.options().set_lr(base_lr);
  max_lrs_.assign(n, max_lr);
  const double up = o_.step_size_up();
  const double down = o_.step_size_down() ? *o_.step_size_down() : up;
  total_size_ = up + down;
  step_ratio_ = up / total_size_;
  EMBER_CHECK_VALUE(
      o_.mode() == "triangular" || o_.mode() == "triangular2" || o_.mode() == "exp_range",
      "mode is invalid and scale_fn is None");
  if (o_.cycle_momentum()) {
    for (auto& g : optimizer.param_groups()) {
      double m;
      EMBER_CHECK_VALUE(get_momentum(g.options(), m, false),
                        "optimizer must support momentum with `cycle_momentum` option enabled");
      set_momentum(g.options(), o_.base_momentum());
      base_momentums_.push_back(o_.base_momentum());
    }
    max_momentums_.assign(n, o_.max_momentum());
  }
  initial_step();
}
double CyclicLR::scale_fn(double x) const {
  if (o_.mode() == "triangular") return 1.;
  if (o_.mode() == "triangular2") return 1 / std::pow(2., x - 1);
  return std::pow(o_.gamma(), x);
}
std::vector<double> CyclicLR::get_lrs() {
  const double t = double(last_epoch_);
  const double cycle = std::floor(1 + t / total_size_);
  const double x = 1. + t / total_size_ - cycle;
  const double scale = x <= step_ratio_ ? x / step_ratio_ : (x - 1) / (step_ratio_ - 1);
  const double arg = o_.mode() == "exp_range" ? t : cycle;
  std::vector<double> lrs;
  for (size_t i = 0; i < base_lrs_.size(); ++i) {
    double height = (max_lrs_[i] - base_lrs_[i]) * scale;
    lrs.push_back(base_lrs_[i] + height * scale_fn(arg));
  }
  if (o_.cycle_momentum()) {
    auto& groups = optimizer_.param_groups();
    for (size_t i = 0; i < groups.size(); ++i) {
      double height = (max_momentums_[i] - base_momentums_[i]) * scale;
      set_momentum(groups[i].options(), max_momentums_[i] - height * scale_fn(arg));
    }
  }
  return lrs;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps,
                       OneCycleLROptions options)
    : LRScheduler(optimizer), total_steps_(total_steps), o_(std::move(options)) {
  EMBER_CHECK_VALUE(total_steps > 0, "Expected positive integer total_steps, but got ",
                    total_steps);
  const double pct = o_.pct_start();
  EMBER_CHECK_VALUE(pct >= 0 && pct <= 1, "Expected float between 0 and 1 pct_start, but got ",
                    pct);
  EMBER_CHECK_VALUE(o_.anneal_strategy() == "cos" || o_.anneal_strategy() == "linear",
                    "anneal_strategy must by one of 'cos' or 'linear', instead got ",
                    o_.anneal_strategy());
  const double n = double(total_steps);
  if (o_.three_phase()) {
    phases_ = {{pct * n - 1, 0, 1, 0, 1}, {2 * pct * n - 2, 1, 0, 1, 0}, {n - 1, 0, 2, 0, 0}};
  } else {
    phases_ = {{pct * n - 1, 0, 1, 0, 1}, {n - 1, 1, 2, 1, 0}};
  }
  for (auto& g : optimizer.param_groups()) {
    initial_lrs_.push_back(max_lr / o_.div_factor());
    max_lrs_.push_back(max_lr);
    min_lrs_.push_back(initial_lrs_.back() / o_.final_div_factor());
    if (o_.cycle_momentum()) {
      double m;
      EMBER_CHECK_VALUE(get_momentum(g.options(), m, true),
                        "optimizer must support momentum with `cycle_momentum` option enabled");
      set_momentum(g.options(), o_.max_momentum());
      max_moms_.push_back(o_.max_momentum());
      base_moms_.push_back(o_.base_momentum());
    }
  }
  base_lrs_ = initial_lrs_;
  for (size_t i = 0; i < initial_lrs_.size(); ++i)
    optimizer.param_groups()[i].initial_lr() = initial_lrs_[i];
  initial_step();
}
double OneCycleLR::anneal(double start, double end, double pct) const {
  if (o_.anneal_strategy() == "cos") return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1);
  return (end - start) * pct + start;
}
std::vector<double> OneCycleLR::get_lrs() {
  EMBER_CHECK_VALUE(last_epoch_ <= total_steps_, "Tried to step ", last_epoch_ + 1,
                    " times. The specified number of total steps is ", total_steps_);
  const double t = double(last_epoch_);
  std::vector<double> lrs;
  auto& groups = optimizer_.param_groups();
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const double lr_of[3] = {initial_lrs_[gi], max_lrs_[gi], min_lrs_[gi]};
    double start = 0, lr = 0, mom = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (t <= ph.end_step || i + 1 == phases_.size()) {
        const double pct = (t - start) / (ph.end_step - start);
        lr = anneal(lr_of[ph.start_lr], lr_of[ph.end_lr], pct);
        if (o_.cycle_momentum()) {
          const double mom_of[2] = {max_moms_[gi], base_moms_[gi]};
          mom = anneal(mom_of[ph.start_mom], mom_of[ph.end_mom], pct);
        }
        break;
      }
      start = ph.end_step;
    }
    lrs.push_back(lr);
    if (o_.cycle_momentum()) set_momentum(groups[gi].options(), mom);
  }
  return lrs;
}

// ---------------------------------------------------------------------------------------------
// SequentialLR, ChainedScheduler
// ---------------------------------------------------------------------------------------------

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  EMBER_CHECK_VALUE(!schedulers_.empty(), "SequentialLR needs at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i)
    EMBER_CHECK_VALUE(&schedulers_[i]->optimizer() == &optimizer,
                      "Sequential Schedulers expects all schedulers to belong to the same "
                      "optimizer, but got schedulers at index ",
                      i, " to be different than the optimizer passed in.");
  EMBER_CHECK_VALUE(milestones_.size() + 1 == schedulers_.size(),
                    "Sequential Schedulers expects number of schedulers provided to be one more "
                    "than the number of milestone points, but got number of schedulers ",
                    schedulers_.size(), " and the number of milestones to be equal to ",
                    milestones_.size());
  last_epoch_ = 0;
  // Undo the schedulers' own first steps and restart the first one from the initial rates.
  base_lrs_ = schedulers_[0]->base_lrs();
  for (size_t i = 0; i < base_lrs_.size(); ++i)
    optimizer.param_groups()[i].options().set_lr(base_lrs_[i]);
  for (LRScheduler* s : schedulers_) s->last_epoch_ -= 1;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}
std::vector<double> SequentialLR::get_lrs() { return current_lrs(); }
void SequentialLR::step() {
  ++last_epoch_;
  size_t idx = size_t(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                      milestones_.begin());
  LRScheduler* s = schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    s->step_epoch(0);
  } else {
    s->step();
  }
  last_lr_ = s->get_last_lr();
}

ChainedScheduler::ChainedScheduler(std::vector<LRScheduler*> schedulers)
    : schedulers_(std::move(schedulers)) {
  EMBER_CHECK_VALUE(!schedulers_.empty(), "ChainedScheduler needs at least one scheduler");
  for (size_t i = 1; i < schedulers_.size(); ++i)
    EMBER_CHECK_VALUE(&schedulers_[i]->optimizer() == &schedulers_[0]->optimizer(),
                      "ChainedScheduler expects all schedulers to belong to the same optimizer, "
                      "but got schedulers at index 0 and ",
                      i, " to be different");
  for (const auto& g : schedulers_[0]->optimizer().param_groups())
    last_lr_.push_back(g.options().get_lr());
}
void ChainedScheduler::step() {
  for (LRScheduler* s : schedulers_) s->step();
  last_lr_.clear();
  for (const auto& g : schedulers_.back()->optimizer().param_groups())
    last_lr_.push_back(g.options().get_lr());
}

// ---------------------------------------------------------------------------------------------
// ReduceLROnPlateau
// ---------------------------------------------------------------------------------------------

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options)
    : optimizer_(optimizer), o_(std::move(options)) {
  EMBER_CHECK_VALUE(o_.factor() < 1.0, "Factor should be < 1.0.");
  EMBER_CHECK_VALUE(o_.mode() == "min" || o_.mode() == "max", "mode ", o_.mode(), " is unknown!");
  EMBER_CHECK_VALUE(o_.threshold_mode() == "rel" || o_.threshold_mode() == "abs", "threshold mode ",
                    o_.threshold_mode(), " is unknown!");
  best_ = o_.mode() == "min" ? INFINITY : -INFINITY;
  for (const auto& g : optimizer.param_groups()) last_lr_.push_back(g.options().get_lr());
}
bool ReduceLROnPlateau::is_better(double a, double best) const {
  if (o_.mode() == "min")
    return o_.threshold_mode() == "rel" ? a < best * (1. - o_.threshold())
                                        : a < best - o_.threshold();
  return o_.threshold_mode() == "rel" ? a > best * (o_.threshold() + 1.)
                                      : a > best + o_.threshold();
}
void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric, best_)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > o_.patience()) {
    for (auto& g : optimizer_.param_groups()) {
      const double old_lr = g.options().get_lr();
      const double new_lr = std::max(old_lr * o_.factor(), o_.min_lr());
      if (old_lr - new_lr > o_.eps()) g.options().set_lr(new_lr);
    }
    cooldown_counter_ = o_.cooldown();
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const auto& g : optimizer_.param_groups()) last_lr_.push_back(g.options().get_lr());
}

}  // namespace ember::optim
