// The first-order optimizers: option checks (torch's messages), state creation, and one call of
// the group's fused multi-tensor kernel per step (src/optim/functional.cpp).
#include <sstream>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/optim.h"

namespace ember::optim {
namespace {

// Formats a number as Python's str(float) would for the usual values ("-1.0", "0.001").
std::string num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

void check_lr(double lr) { EMBER_CHECK_VALUE(lr >= 0.0, "Invalid learning rate: ", num(lr)); }
void check_eps(double eps) { EMBER_CHECK_VALUE(eps >= 0.0, "Invalid epsilon value: ", num(eps)); }
void check_wd(double wd) { EMBER_CHECK_VALUE(wd >= 0.0, "Invalid weight_decay value: ", num(wd)); }
void check_betas(const std::tuple<double, double>& b) {
  EMBER_CHECK_VALUE(std::get<0>(b) >= 0.0 && std::get<0>(b) < 1.0,
                    "Invalid beta parameter at index 0: ", num(std::get<0>(b)));
  EMBER_CHECK_VALUE(std::get<1>(b) >= 0.0 && std::get<1>(b) < 1.0,
                    "Invalid beta parameter at index 1: ", num(std::get<1>(b)));
}

// Checks the defaults and every group's own options with `check`.
template <class Opt, class F>
void check_all(Optimizer& o, const F& check) {
  check(static_cast<Opt&>(o.defaults()));
  for (auto& g : o.param_groups()) check(static_cast<Opt&>(g.options()));
}

// Parameters of a group that have a gradient, with their gradients.
struct Live {
  std::vector<Tensor> params, grads;
};
Live live_params(OptimizerParamGroup& g, const char*) {
  Live l;
  for (Tensor& p : g.params()) {
    const Tensor& grad = p.grad();
    if (!grad.defined()) continue;
    l.params.push_back(p);
    l.grads.push_back(grad);
  }
  return l;
}

template <class S>
S& state_of(std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state, const Tensor& p,
            bool& created) {
  auto& slot = state[p.unsafeGetTensorImpl()];
  created = slot == nullptr;
  if (created) slot = std::make_unique<S>();
  return static_cast<S&>(*slot);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SGD
// ---------------------------------------------------------------------------------------------

SGDOptions::SGDOptions(double lr) : lr_(lr) {}
bool operator==(const SGDOptions& a, const SGDOptions& b) {
  return a.lr() == b.lr() && a.momentum() == b.momentum() && a.dampening() == b.dampening() &&
         a.weight_decay() == b.weight_decay() && a.nesterov() == b.nesterov() &&
         a.maximize() == b.maximize();
}

static void check_sgd(const SGDOptions& o) {
  check_lr(o.lr());
  EMBER_CHECK_VALUE(o.momentum() >= 0.0, "Invalid momentum value: ", num(o.momentum()));
  check_wd(o.weight_decay());
  EMBER_CHECK_VALUE(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
                    "Nesterov momentum requires a momentum and zero dampening");
}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {
  check_all<SGDOptions>(*this, check_sgd);
}
SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

std::unique_ptr<OptimizerParamState> SGD::make_param_state() const {
  return std::make_unique<SGDParamState>();
}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    auto& o = static_cast<SGDOptions&>(g.options());
    Live l = live_params(g, "SGD");
    std::vector<Tensor> bufs;
    for (const Tensor& p : l.params) {
      bool created;
      bufs.push_back(state_of<SGDParamState>(state_, p, created).momentum_buffer());
    }
    functional::sgd_step(l.params, l.grads, bufs, o.lr(), o.momentum(), o.dampening(),
                         o.weight_decay(), o.nesterov(), o.maximize());
    if (o.momentum() != 0)
      for (size_t i = 0; i < l.params.size(); ++i)
        find_state<SGDParamState>(l.params[i])->momentum_buffer(bufs[i]);
  }
  return loss;
}

// ---------------------------------------------------------------------------------------------
// Adam and AdamW
// ---------------------------------------------------------------------------------------------

AdamOptions::AdamOptions(double lr) : lr_(lr) {}
AdamWOptions::AdamWOptions(double lr) : lr_(lr) {}
bool operator==(const AdamOptions& a, const AdamOptions& b) {
  return a.lr() == b.lr() && a.betas() == b.betas() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.amsgrad() == b.amsgrad() &&
         a.maximize() == b.maximize();
}
bool operator==(const AdamWOptions& a, const AdamWOptions& b) {
  return a.lr() == b.lr() && a.betas() == b.betas() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.amsgrad() == b.amsgrad() &&
         a.maximize() == b.maximize();
}

template <class O>
static void check_adam(const O& o) {
  check_lr(o.lr());
  check_eps(o.eps());
  check_betas(o.betas());
  check_wd(o.weight_decay());
}

// The Adam/AdamW step of one optimizer (S: its param state type).
template <class O, class S>
static void adam_family_step(std::vector<OptimizerParamGroup>& groups,
                             std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& st,
                             bool decoupled) {
  for (auto& g : groups) {
    auto& o = static_cast<O&>(g.options());
    Live l = live_params(g, decoupled ? "AdamW" : "Adam");
    std::vector<Tensor> m, v, vmax;
    std::vector<double> steps;
    for (const Tensor& p : l.params) {
      bool created;
      S& s = state_of<S>(st, p, created);
      if (created) {
        s.exp_avg(zeros_like(p));
        s.exp_avg_sq(zeros_like(p));
      }
      if (o.amsgrad() && !s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(zeros_like(p));
      s.step(s.step() + 1);
      steps.push_back(double(s.step()));
      m.push_back(s.exp_avg());
      v.push_back(s.exp_avg_sq());
      if (o.amsgrad()) vmax.push_back(s.max_exp_avg_sq());
    }
    functional::adam_step(l.params, l.grads, m, v, vmax, steps, o.lr(), std::get<0>(o.betas()),
                          std::get<1>(o.betas()), o.eps(), o.weight_decay(), o.amsgrad(),
                          o.maximize(), decoupled);
  }
}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {
  check_all<AdamOptions>(*this, check_adam<AdamOptions>);
}
Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
std::unique_ptr<OptimizerParamState> Adam::make_param_state() const {
  return std::make_unique<AdamParamState>();
}
Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  adam_family_step<AdamOptions, AdamParamState>(param_groups_, state_, false);
  return loss;
}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {
  check_all<AdamWOptions>(*this, check_adam<AdamWOptions>);
}
AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
std::unique_ptr<OptimizerParamState> AdamW::make_param_state() const {
  return std::make_unique<AdamWParamState>();
}
Tensor AdamW::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  adam_family_step<AdamWOptions, AdamWParamState>(param_groups_, state_, true);
  return loss;
}

// ---------------------------------------------------------------------------------------------
// Adagrad
// ---------------------------------------------------------------------------------------------

AdagradOptions::AdagradOptions(double lr) : lr_(lr) {}
bool operator==(const AdagradOptions& a, const AdagradOptions& b) {
  return a.lr() == b.lr() && a.lr_decay() == b.lr_decay() && a.weight_decay() == b.weight_decay() &&
         a.initial_accumulator_value() == b.initial_accumulator_value() && a.eps() == b.eps() &&
         a.maximize() == b.maximize();
}

static void check_adagrad(const AdagradOptions& o) {
  check_lr(o.lr());
  EMBER_CHECK_VALUE(o.lr_decay() >= 0.0, "Invalid lr_decay value: ", num(o.lr_decay()));
  check_wd(o.weight_decay());
  EMBER_CHECK_VALUE(
      o.initial_accumulator_value() >= 0.0,
      "Invalid initial_accumulator_value value: ", num(o.initial_accumulator_value()));
  check_eps(o.eps());
}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdagradOptions>(defaults)) {
  check_all<AdagradOptions>(*this, check_adagrad);
  // torch creates the accumulators up front (they can be shared before the first step).
  for (auto& g : param_groups_) {
    auto& o = static_cast<AdagradOptions&>(g.options());
    for (const Tensor& p : g.params()) {
      auto s = std::make_unique<AdagradParamState>();
      s->sum(full_like(p, Scalar(o.initial_accumulator_value())));
      state_[p.unsafeGetTensorImpl()] = std::move(s);
    }
  }
}
Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
std::unique_ptr<OptimizerParamState> Adagrad::make_param_state() const {
  return std::make_unique<AdagradParamState>();
}
Tensor Adagrad::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    auto& o = static_cast<AdagradOptions&>(g.options());
    Live l = live_params(g, "Adagrad");
    std::vector<Tensor> sums;
    std::vector<double> steps;
    for (const Tensor& p : l.params) {
      bool created;
      auto& s = state_of<AdagradParamState>(state_, p, created);
      if (created) s.sum(full_like(p, Scalar(o.initial_accumulator_value())));
      s.step(s.step() + 1);
      steps.push_back(double(s.step()));
      sums.push_back(s.sum());
    }
    functional::adagrad_step(l.params, l.grads, sums, steps, o.lr(), o.weight_decay(), o.lr_decay(),
                             o.eps(), o.maximize());
  }
  return loss;
}

// ---------------------------------------------------------------------------------------------
// RMSprop
// ---------------------------------------------------------------------------------------------

RMSpropOptions::RMSpropOptions(double lr) : lr_(lr) {}
bool operator==(const RMSpropOptions& a, const RMSpropOptions& b) {
  return a.lr() == b.lr() && a.alpha() == b.alpha() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.momentum() == b.momentum() &&
         a.centered() == b.centered() && a.maximize() == b.maximize();
}

static void check_rmsprop(const RMSpropOptions& o) {
  check_lr(o.lr());
  check_eps(o.eps());
  EMBER_CHECK_VALUE(o.momentum() >= 0.0, "Invalid momentum value: ", num(o.momentum()));
  check_wd(o.weight_decay());
  EMBER_CHECK_VALUE(o.alpha() >= 0.0, "Invalid alpha value: ", num(o.alpha()));
}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<RMSpropOptions>(defaults)) {
  check_all<RMSpropOptions>(*this, check_rmsprop);
}
RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
std::unique_ptr<OptimizerParamState> RMSprop::make_param_state() const {
  return std::make_unique<RMSpropParamState>();
}
Tensor RMSprop::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    auto& o = static_cast<RMSpropOptions&>(g.options());
    Live l = live_params(g, "RMSprop");
    std::vector<Tensor> sq, ga, mb;
    for (const Tensor& p : l.params) {
      bool created;
      auto& s = state_of<RMSpropParamState>(state_, p, created);
      if (created) s.square_avg(zeros_like(p));
      if (o.momentum() > 0 && !s.momentum_buffer().defined()) s.momentum_buffer(zeros_like(p));
      if (o.centered() && !s.grad_avg().defined()) s.grad_avg(zeros_like(p));
      s.step(s.step() + 1);
      sq.push_back(s.square_avg());
      if (o.centered()) ga.push_back(s.grad_avg());
      if (o.momentum() > 0) mb.push_back(s.momentum_buffer());
    }
    functional::rmsprop_step(l.params, l.grads, sq, ga, mb, o.lr(), o.alpha(), o.eps(),
                             o.weight_decay(), o.momentum(), o.centered(), o.maximize());
  }
  return loss;
}

// ---------------------------------------------------------------------------------------------
// Adadelta
// ---------------------------------------------------------------------------------------------

AdadeltaOptions::AdadeltaOptions(double lr) : lr_(lr) {}
bool operator==(const AdadeltaOptions& a, const AdadeltaOptions& b) {
  return a.lr() == b.lr() && a.rho() == b.rho() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.maximize() == b.maximize();
}

static void check_adadelta(const AdadeltaOptions& o) {
  check_lr(o.lr());
  EMBER_CHECK_VALUE(o.rho() >= 0.0 && o.rho() <= 1.0, "Invalid rho value: ", num(o.rho()));
  check_eps(o.eps());
  check_wd(o.weight_decay());
}

Adadelta::Adadelta(std::vector<OptimizerParamGroup> param_groups, AdadeltaOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdadeltaOptions>(defaults)) {
  check_all<AdadeltaOptions>(*this, check_adadelta);
}
Adadelta::Adadelta(std::vector<Tensor> params, AdadeltaOptions defaults)
    : Adadelta(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {
}
std::unique_ptr<OptimizerParamState> Adadelta::make_param_state() const {
  return std::make_unique<AdadeltaParamState>();
}
Tensor Adadelta::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    auto& o = static_cast<AdadeltaOptions&>(g.options());
    Live l = live_params(g, "Adadelta");
    std::vector<Tensor> sq, acc;
    for (const Tensor& p : l.params) {
      bool created;
      auto& s = state_of<AdadeltaParamState>(state_, p, created);
      if (created) {
        s.square_avg(zeros_like(p));
        s.acc_delta(zeros_like(p));
      }
      s.step(s.step() + 1);
      sq.push_back(s.square_avg());
      acc.push_back(s.acc_delta());
    }
    functional::adadelta_step(l.params, l.grads, sq, acc, o.lr(), o.rho(), o.eps(),
                              o.weight_decay(), o.maximize());
  }
  return loss;
}

// ---------------------------------------------------------------------------------------------
// Adamax
// ---------------------------------------------------------------------------------------------

AdamaxOptions::AdamaxOptions(double lr) : lr_(lr) {}
bool operator==(const AdamaxOptions& a, const AdamaxOptions& b) {
  return a.lr() == b.lr() && a.betas() == b.betas() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.maximize() == b.maximize();
}

Adamax::Adamax(std::vector<OptimizerParamGroup> param_groups, AdamaxOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamaxOptions>(defaults)) {
  check_all<AdamaxOptions>(*this, check_adam<AdamaxOptions>);
}
Adamax::Adamax(std::vector<Tensor> params, AdamaxOptions defaults)
    : Adamax(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
std::unique_ptr<OptimizerParamState> Adamax::make_param_state() const {
  return std::make_unique<AdamaxParamState>();
}
Tensor Adamax::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    auto& o = static_cast<AdamaxOptions&>(g.options());
    Live l = live_params(g, "Adamax");
    std::vector<Tensor> m, u;
    std::vector<double> steps;
    for (const Tensor& p : l.params) {
      bool created;
      auto& s = state_of<AdamaxParamState>(state_, p, created);
      if (created) {
        s.exp_avg(zeros_like(p));
        s.exp_inf(zeros_like(p));
      }
      s.step(s.step() + 1);
      steps.push_back(double(s.step()));
      m.push_back(s.exp_avg());
      u.push_back(s.exp_inf());
    }
    functional::adamax_step(l.params, l.grads, m, u, steps, o.lr(), std::get<0>(o.betas()),
                            std::get<1>(o.betas()), o.eps(), o.weight_decay(), o.maximize());
  }
  return loss;
}

// ---------------------------------------------------------------------------------------------
// NAdam
// ---------------------------------------------------------------------------------------------

NAdamOptions::NAdamOptions(double lr) : lr_(lr) {}
bool operator==(const NAdamOptions& a, const NAdamOptions& b) {
  return a.lr() == b.lr() && a.betas() == b.betas() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.momentum_decay() == b.momentum_decay() &&
         a.maximize() == b.maximize();
}

static void check_nadam(const NAdamOptions& o) {
  check_adam(o);
  EMBER_CHECK_VALUE(o.momentum_decay() >= 0.0,
                    "Invalid momentum_decay value: ", num(o.momentum_decay()));
}

NAdam::NAdam(std::vector<OptimizerParamGroup> param_groups, NAdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<NAdamOptions>(defaults)) {
  check_all<NAdamOptions>(*this, check_nadam);
}
NAdam::NAdam(std::vector<Tensor> params, NAdamOptions defaults)
    : NAdam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
std::unique_ptr<OptimizerParamState> NAdam::make_param_state() const {
  return std::make_unique<NAdamParamState>();
}
Tensor NAdam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    auto& o = static_cast<NAdamOptions&>(g.options());
    Live l = live_params(g, "NAdam");
    std::vector<Tensor> m, v;
    std::vector<double> steps, mu;
    std::vector<NAdamParamState*> states;
    for (const Tensor& p : l.params) {
      bool created;
      auto& s = state_of<NAdamParamState>(state_, p, created);
      if (created) {
        s.exp_avg(zeros_like(p));
        s.exp_avg_sq(zeros_like(p));
      }
      s.step(s.step() + 1);
      steps.push_back(double(s.step()));
      mu.push_back(s.mu_product());
      m.push_back(s.exp_avg());
      v.push_back(s.exp_avg_sq());
      states.push_back(&s);
    }
    functional::nadam_step(l.params, l.grads, m, v, mu, steps, o.lr(), std::get<0>(o.betas()),
                           std::get<1>(o.betas()), o.eps(), o.weight_decay(), o.momentum_decay(),
                           o.maximize());
    for (size_t i = 0; i < states.size(); ++i) states[i]->mu_product(mu[i]);
  }
  return loss;
}

// ---------------------------------------------------------------------------------------------
// RAdam
// ---------------------------------------------------------------------------------------------

RAdamOptions::RAdamOptions(double lr) : lr_(lr) {}
bool operator==(const RAdamOptions& a, const RAdamOptions& b) {
  return a.lr() == b.lr() && a.betas() == b.betas() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay() && a.maximize() == b.maximize();
}

RAdam::RAdam(std::vector<OptimizerParamGroup> param_groups, RAdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<RAdamOptions>(defaults)) {
  check_all<RAdamOptions>(*this, check_adam<RAdamOptions>);
}
RAdam::RAdam(std::vector<Tensor> params, RAdamOptions defaults)
    : RAdam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
std::unique_ptr<OptimizerParamState> RAdam::make_param_state() const {
  return std::make_unique<RAdamParamState>();
}
Tensor RAdam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& g : param_groups_) {
    auto& o = static_cast<RAdamOptions&>(g.options());
    Live l = live_params(g, "RAdam");
    std::vector<Tensor> m, v;
    std::vector<double> steps;
    for (const Tensor& p : l.params) {
      bool created;
      auto& s = state_of<RAdamParamState>(state_, p, created);
      if (created) {
        s.exp_avg(zeros_like(p));
        s.exp_avg_sq(zeros_like(p));
      }
      s.step(s.step() + 1);
      steps.push_back(double(s.step()));
      m.push_back(s.exp_avg());
      v.push_back(s.exp_avg_sq());
    }
    functional::radam_step(l.params, l.grads, m, v, steps, o.lr(), std::get<0>(o.betas()),
                           std::get<1>(o.betas()), o.eps(), o.weight_decay(), o.maximize());
  }
  return loss;
}

}  // namespace ember::optim
