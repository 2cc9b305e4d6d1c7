#pragma once
/// ember::optim::Optimizer: the base of the optimizers, with libtorch's C++ API
/// (`torch::optim::Optimizer`): parameter groups with their own options, per-parameter state
/// keyed by the parameter, `zero_grad`, `step(closure)`, and a tensor-only state dict.
///
/// Note [Optimizer state dict]
/// `state_dict()` flattens everything into an OrderedDict<std::string, Tensor> so that any
/// tensor writer (safetensors) can save it:
/// - "state.<i>.<name>": the state of parameter i (global index over all groups, in order),
///   e.g. "state.0.exp_avg", "state.0.step" (0-dim int64), "state.0.mu_product" (0-dim double);
/// - "param_groups.<g>.<option>": the options of group g as 0-dim float64 (bool options as 0-dim
///   bool, tuple options such as betas as 1-dim float64);
/// - "param_groups.<g>.params": an int64 tensor of the group's parameter indices.
/// `load_state_dict` checks the group and parameter counts and the state shapes first and
/// changes nothing when they do not match.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ember/nn/options.h"  // EMBER_ARG, shared with the nn Options
#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::optim {

/// A flat tensor dictionary (the optimizer and scheduler state dicts).
using TensorDict = OrderedDict<std::string, Tensor>;

namespace detail {
/// Writes/reads option and state fields to/from a TensorDict (see Note [Optimizer state dict]).
struct FieldWriter {
  TensorDict& out;
  std::string prefix;
  void operator()(const char* name, double v);
  void operator()(const char* name, bool v);
  void operator()(const char* name, int64_t v);
  void operator()(const char* name, const std::optional<int64_t>& v);
  void operator()(const char* name, const std::tuple<double, double>& v);
  void operator()(const char* name, const std::optional<std::string>& v);
  void operator()(const char* name, const Tensor& v);
  void operator()(const char* name, const std::vector<Tensor>& v);
};
struct FieldReader {
  const TensorDict& in;
  std::string prefix;
  void operator()(const char* name, double& v) const;
  void operator()(const char* name, bool& v) const;
  void operator()(const char* name, int64_t& v) const;
  void operator()(const char* name, std::optional<int64_t>& v) const;
  void operator()(const char* name, std::tuple<double, double>& v) const;
  void operator()(const char* name, std::optional<std::string>& v) const;
  void operator()(const char* name, Tensor& v) const;
  void operator()(const char* name, std::vector<Tensor>& v) const;
};
struct FieldCaster {
  const Tensor& like;
  template <class T>
  void operator()(const char*, T&) const {}
  void operator()(const char* name, Tensor& v) const;
};
}  // namespace detail

/// Per-parameter state of an optimizer (exp_avg, step, ...).
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const;
  /// Adds this state's fields under `prefix` ("state.3.").
  virtual void serialize(TensorDict& out, const std::string& prefix) const;
  /// Reads the fields written by serialize (missing keys are errors).
  virtual void deserialize(const TensorDict& in, const std::string& prefix);
  /// Casts floating tensor fields to the dtype of `param` (after a load).
  virtual void cast_like(const Tensor& param);
  /// Whether the tensor fields have the parameter's shape (checked by load_state_dict).
  virtual bool param_shaped() const { return true; }
};

/// CRTP helper: clone(), serialize() and deserialize() from `Derived::visit(f)`, which calls
/// `f("name", field)` for each field.
template <typename Derived>
class OptimizerCloneableParamState : public OptimizerParamState {
 public:
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  void serialize(TensorDict& out, const std::string& prefix) const override {
    detail::FieldWriter w{out, prefix};
    const_cast<Derived&>(static_cast<const Derived&>(*this)).visit(w);
  }
  void deserialize(const TensorDict& in, const std::string& prefix) override {
    detail::FieldReader r{in, prefix};
    static_cast<Derived&>(*this).visit(r);
  }
  void cast_like(const Tensor& param) override {
    detail::FieldCaster c{param};
    static_cast<Derived&>(*this).visit(c);
  }
};

/// Options of an optimizer (learning rate and the rest), one copy per parameter group.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const;
  /// The learning rate (read and set by the LR schedulers).
  virtual double get_lr() const;
  virtual void set_lr(const double lr);
  /// Adds the options under `prefix` ("param_groups.0.").
  virtual void serialize(TensorDict& out, const std::string& prefix) const;
  /// Reads the options written by serialize.
  virtual void deserialize(const TensorDict& in, const std::string& prefix);
};

/// CRTP helper as OptimizerCloneableParamState, for options (get_lr/set_lr use `lr()`).
template <typename Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return static_cast<const Derived&>(*this).lr(); }
  void set_lr(const double lr) override { static_cast<Derived&>(*this).lr(lr); }
  void serialize(TensorDict& out, const std::string& prefix) const override {
    detail::FieldWriter w{out, prefix};
    const_cast<Derived&>(static_cast<const Derived&>(*this)).visit(w);
  }
  void deserialize(const TensorDict& in, const std::string& prefix) override {
    detail::FieldReader r{in, prefix};
    static_cast<Derived&>(*this).visit(r);
  }
};

/// A list of parameters optimized with the same options. A group made without options takes
/// the optimizer's defaults when added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(const OptimizerParamGroup& g);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& g);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  /// The rate the first LR scheduler found (torch's group['initial_lr']); schedulers made later
  /// start from it.
  std::optional<double>& initial_lr() { return initial_lr_; }
  const std::optional<double>& initial_lr() const { return initial_lr_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

/// The base optimizer. Subclasses implement step(); the update runs under NoGradGuard.
class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = default;
  virtual ~Optimizer() = default;

  /// Groups without options get a copy of `defaults`. Every parameter must be a floating
  /// tensor and appear once over all groups (ValueError otherwise).
  Optimizer(std::vector<OptimizerParamGroup> param_groups,
            std::unique_ptr<OptimizerOptions> defaults);
  Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults);

  /// Adds a group (options default to the optimizer's defaults).
  void add_param_group(const OptimizerParamGroup& param_group);
  /// Adds parameters to the first group (libtorch's add_parameters).
  void add_parameters(const std::vector<Tensor>& parameters);

  /// One optimization step. `closure` (re-evaluates the loss with grad mode on) is called first
  /// when given; its result is returned (an undefined tensor without a closure).
  virtual Tensor step(LossClosure closure = nullptr) = 0;

  /// Clears the gradients: `.grad` becomes undefined (set_to_none) or is zeroed in place.
  void zero_grad(bool set_to_none = true);

  /// The parameters of the first group (libtorch).
  const std::vector<Tensor>& parameters() const noexcept;
  std::vector<Tensor>& parameters() noexcept;
  /// The number of parameters over all groups.
  size_t size() const noexcept;

  OptimizerOptions& defaults() noexcept { return *defaults_; }
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() noexcept { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return param_groups_; }
  /// Per-parameter state, keyed by the parameter's TensorImpl (as libtorch).
  std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state() noexcept {
    return state_;
  }
  const std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state() const noexcept {
    return state_;
  }

  /// See Note [Optimizer state dict].
  virtual TensorDict state_dict() const;
  /// Restores a dict from state_dict(): the same number of groups and of parameters per group,
  /// states of the parameters' shapes; Error otherwise, with nothing changed.
  virtual void load_state_dict(const TensorDict& dict);

 protected:
  /// A fresh, empty state for this optimizer (used by load_state_dict).
  virtual std::unique_ptr<OptimizerParamState> make_param_state() const = 0;
  /// The state of `p`, or nullptr.
  template <typename S>
  S* find_state(const Tensor& p) {
    auto it = state_.find(p.unsafeGetTensorImpl());
    return it == state_.end() ? nullptr : static_cast<S*>(it->second.get());
  }
  /// Runs the closure (if any) with grad mode on.
  static Tensor run_closure(const LossClosure& closure);

  std::vector<OptimizerParamGroup> param_groups_;
  std::unordered_map<void*, std::unique_ptr<OptimizerParamState>> state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

}  // namespace ember::optim
