#pragma once
/// ember::nn::Module: the base of every layer (libtorch's torch::nn::Module).
///
/// Note [Modules]
/// - A module owns named parameters, buffers and submodules, each in an OrderedDict in
///   registration order. Dotted names ("conv1.weight") address nested entries, as PyTorch's
///   state_dict keys do.
/// - Layers are written as `class LinearImpl : public Cloneable<LinearImpl>` holding their
///   parameters as Tensor members (handles that share the registered tensors) plus
///   `EMBER_MODULE(Linear)`, which makes `Linear` a shared-pointer holder (libtorch's
///   TORCH_MODULE). `forward` is not virtual: each layer has its own signature; the holder's
///   call operator runs the forward hooks around it.
/// - An undefined tensor may be registered (a Linear without bias): it is skipped by
///   parameters(), state_dict() and friends, as PyTorch skips None.
/// - `to(dtype)` converts in place (Tensor::set_data), so handles held by layers and optimizers
///   stay valid.

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::nn {

template <typename Contained>
class ModuleHolder;

/// Keys that load_state_dict(strict = false) could not match.
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;     ///< in the module, not in the dict
  std::vector<std::string> unexpected_keys;  ///< in the dict, not in the module
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  using ModuleApplyFunction = std::function<void(Module&)>;
  using NamedModuleApplyFunction = std::function<void(const std::string&, Module&)>;
  /// Runs before forward with the input; may return a replacement input.
  using ForwardPreHook = std::function<std::optional<Tensor>(Module&, const Tensor& input)>;
  /// Runs after forward; may return a replacement output.
  using ForwardHook =
      std::function<std::optional<Tensor>(Module&, const Tensor& input, const Tensor& output)>;

  /// `name` is what printing shows; without one, the demangled class name as libtorch has it
  /// ("NetImpl", "ember::nn::LinearImpl"; see set_module_namespace).
  explicit Module(std::string name);
  Module();
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  virtual ~Module() = default;

  /// The module's type name (libtorch's Module::name()): the demangled dynamic type,
  /// "NetImpl" or "ember::nn::LinearImpl" ("torch::nn::LinearImpl" under the libtorch
  /// compatibility headers), unless the constructor was given one.
  const std::string& name() const noexcept;

  /// A deep copy (parameters and buffers copied); only modules deriving from Cloneable.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  /// Makes this module a deep copy of `other` in place (clone() uses it for submodules).
  virtual void clone_from_(const Module& other, const std::optional<Device>& device);

  /// Calls `fn` on this module and every submodule, depth first, children before parents
  /// (PyTorch's Module.apply order).
  void apply(const ModuleApplyFunction& fn);
  /// Same, with each module's dotted name ("" for this one).
  void apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix = "");

  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  /// This module (when include_self) and every descendant, each once, in pre-order.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(
      const std::string& name_prefix = "", bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;

  /// Sets training mode here and in every submodule.
  virtual void train(bool on = true);
  void eval() { train(false); }
  virtual bool is_training() const noexcept { return is_training_; }

  /// Converts parameters and buffers in place (floating-point ones only for a dtype).
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void to(Device device, bool non_blocking = false);

  /// Clears the gradients of all parameters (sets them undefined, or zeroes them).
  virtual void zero_grad(bool set_to_none = true);

  /// Parameters and persistent buffers under their dotted names (detached, sharing storage).
  OrderedDict<std::string, Tensor> state_dict() const;
  /// Copies `dict` into the parameters and buffers. With `strict`, missing or unexpected keys
  /// are an error listing them all; a shape mismatch is always an error.
  LoadStateDictResult load_state_dict(const OrderedDict<std::string, Tensor>& dict,
                                      bool strict = true);

  /// The one-line description of this module alone, in libtorch's format: built-in layers
  /// print as "ember::nn::Linear(in_features=2, out_features=3, bias=true)", other modules as
  /// their name() (followed by extra_repr() in parentheses when it is not empty).
  virtual void pretty_print(std::ostream& stream) const;
  /// The arguments of PyTorch's Python repr ("in_features=2, out_features=3, bias=True"), used
  /// by python_repr().
  virtual std::string extra_repr() const { return ""; }

  /// Registers a parameter (requires_grad set as asked); returns the stored handle.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  /// Registers a buffer; a non-persistent one is left out of state_dict().
  Tensor& register_buffer(std::string name, Tensor tensor, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    register_module_impl(std::move(name), module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, ModuleHolder<M> holder) {
    return register_module(std::move(name), holder.ptr());
  }
  /// Replaces an already registered submodule.
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_module_impl(name, module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, ModuleHolder<M> holder) {
    return replace_module(name, holder.ptr());
  }
  void unregister_module(const std::string& name);

  /// This module as `M` (an Impl class or a holder's contained type), or nullptr.
  template <typename M>
  M* as() noexcept {
    return dynamic_cast<M*>(this);
  }

  /// Hooks run by the holder's call operator (ModuleHolder::operator()) around forward when it
  /// takes a Tensor and returns one. Returns a handle for remove_hook.
  int64_t register_forward_pre_hook(ForwardPreHook hook);
  int64_t register_forward_hook(ForwardHook hook);
  void remove_hook(int64_t handle);
  bool has_forward_hooks() const noexcept { return !pre_hooks_.empty() || !hooks_.empty(); }
  Tensor run_forward_pre_hooks(const Tensor& input);
  Tensor run_forward_hooks(const Tensor& input, const Tensor& output);

 protected:
  /// Registered parameters (undefined ones included, skipped by the accessors).
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  std::set<std::string> non_persistent_buffers_;
  bool is_training_ = true;

  template <typename Derived>
  friend class Cloneable;
  friend std::ostream& operator<<(std::ostream& stream, const Module& module);

 private:
  void register_module_impl(std::string name, std::shared_ptr<Module> module);
  void replace_module_impl(const std::string& name, std::shared_ptr<Module> module);
  void print_tree(std::ostream& stream, int indent) const;
  void print_python_tree(std::ostream& stream, int indent) const;
  friend std::string python_repr(const Module& module);
  void collect_state(const std::string& prefix, OrderedDict<std::string, Tensor>& out) const;

  mutable std::optional<std::string> name_;
  std::vector<std::pair<int64_t, ForwardPreHook>> pre_hooks_;
  std::vector<std::pair<int64_t, ForwardHook>> hooks_;
};

/// libtorch's module printing: pretty_print(), then each child "(name): ..." indented on its
/// own line.
std::ostream& operator<<(std::ostream& stream, const Module& module);

/// PyTorch's Python repr of the module tree: "Net(\n  (fc): Linear(in_features=3, ...,
/// bias=True)\n)", from the short type names and extra_repr().
std::string python_repr(const Module& module);

/// The namespace that module names and built-in layers print under: "ember" (the default) or
/// "torch" (set by the libtorch compatibility headers, Note [libtorch compatibility headers]).
/// Takes effect for modules whose name() has not been read yet; set it before building models.
void set_module_namespace(std::string ns);
/// The namespace set by set_module_namespace().
const std::string& module_namespace();

/// Python-style rendering of values in extra_repr(): "True"/"False", "(3, 3)".
namespace detail {
std::string repr_bool(bool b);
std::string repr_tuple(IntArrayRef v);
std::string repr_double(double v);
/// Prints a built-in layer in libtorch's format ("ember::nn::Linear(...)"); false when `module`
/// is not one of ember's layers.
bool print_builtin(const Module& module, std::ostream& stream);
/// libtorch's rendering of a double in a module description (ostream's default: "1e-05", "1").
std::string print_double(double v);
}  // namespace detail

}  // namespace ember::nn
