// ember::nn::Module: registration, traversal, state dicts, printing and forward hooks.
#include "ember/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <sstream>
#include <unordered_set>

#include "ember/autograd.h"
#include "ember/nn/cloneable.h"
#include "ember/ops.h"

namespace ember::nn {

namespace {

std::string& module_namespace_storage() {
  static std::string ns = "ember";
  return ns;
}

// libtorch's Module::name(): the demangled dynamic type ("NetImpl", "ember::nn::LinearImpl"),
// with ember's own namespace shown as module_namespace().
std::string type_name(const std::type_info& type) {
  int status = 0;
  char* d = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string full = (status == 0 && d) ? d : type.name();
  std::free(d);
  const std::string& ns = module_namespace_storage();
  if (ns != "ember" && full.rfind("ember::", 0) == 0) full = ns + full.substr(5);
  return full;
}

// The short form PyTorch's Python repr and ember's messages use: "ember::nn::LinearImpl" ->
// "Linear"; "(anonymous namespace)::NetImpl" -> "Net".
std::string short_name(const std::string& full) {
  auto pos = full.rfind("::");
  std::string name = pos == std::string::npos ? full : full.substr(pos + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0)
    name.resize(name.size() - 4);
  return name;
}

void check_name(const std::string& kind, const std::string& name) {
  EMBER_CHECK_VALUE(!name.empty(), "[nn] ", kind, " name must not be empty");
  EMBER_CHECK_VALUE(name.find('.') == std::string::npos, "[nn] ", kind, " name '", name,
                    "' must not contain a dot");
}

std::string join(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
  return s;
}

std::string size_repr(IntArrayRef sizes) {
  std::ostringstream os;
  os << "ember.Size([";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  os << "])";
  return os.str();
}

}  // namespace

namespace detail {

void set_data(Tensor& dst, const Tensor& src) {
  EMBER_CHECK(dst.defined() && src.defined(), "[set_data] both tensors must be defined");
  EMBER_CHECK(dst.is_leaf(), "[set_data] only a leaf tensor can take new data in place");
  dst.unsafeGetTensorImpl()->set_data_from(*src.unsafeGetTensorImpl());
}

std::string repr_bool(bool b) { return b ? "True" : "False"; }

std::string repr_tuple(IntArrayRef v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// Python's repr of a float: shortest round-trip digits, always with a '.' or exponent.
std::string repr_double(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace detail

Module::Module(std::string name) : name_(std::move(name)) {}
Module::Module() = default;

const std::string& Module::name() const noexcept {
  if (!name_) name_ = type_name(typeid(*this));
  return *name_;
}

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  EMBER_THROW(NotImplementedError, "[clone] ", short_name(name()),
              " does not support clone(): derive it from ember::nn::Cloneable<", short_name(name()),
              "Impl> and implement reset()");
}

void Module::clone_from_(const Module& other, const std::optional<Device>&) {
  EMBER_THROW(NotImplementedError, "[clone] ", short_name(name()),
              " does not support clone(): derive it from ember::nn::Cloneable");
}

void Module::apply(const ModuleApplyFunction& fn) {
  for (auto& child : children_) child.value()->apply(fn);
  fn(*this);
}

void Module::apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix) {
  for (auto& child : children_)
    child.value()->apply(fn, name_prefix.empty() ? child.key() : name_prefix + "." + child.key());
  fn(name_prefix, *this);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  return named_parameters(recurse).values();
}

// A tensor shared by two modules (tied weights) is listed once, under its first name.
OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> out("Parameter");
  std::unordered_set<const TensorImpl*> seen;
  auto add = [&](const std::string& prefix, const Module& m) {
    for (const auto& p : m.parameters_) {
      if (!p.value().defined() || !seen.insert(p.value().unsafeGetTensorImpl()).second) continue;
      out.insert(prefix.empty() ? p.key() : prefix + "." + p.key(), p.value());
    }
  };
  if (!recurse) {
    add("", *this);
    return out;
  }
  for (const auto& m : named_modules()) add(m.key(), *m.value());
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out("Buffer");
  std::unordered_set<const TensorImpl*> seen;
  auto add = [&](const std::string& prefix, const Module& m) {
    for (const auto& b : m.buffers_) {
      if (!b.value().defined() || !seen.insert(b.value().unsafeGetTensorImpl()).second) continue;
      out.insert(prefix.empty() ? b.key() : prefix + "." + b.key(), b.value());
    }
  };
  if (!recurse) {
    add("", *this);
    return out;
  }
  for (const auto& m : named_modules()) add(m.key(), *m.value());
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(
    const std::string& name_prefix, bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Module");
  std::unordered_set<const Module*> seen;
  // A module not owned by a shared_ptr (on the stack) is listed through an aliasing pointer.
  std::shared_ptr<Module> self = std::const_pointer_cast<Module>(weak_from_this().lock());
  if (!self) self = std::shared_ptr<Module>(std::shared_ptr<Module>(), const_cast<Module*>(this));
  std::function<void(const std::string&, const std::shared_ptr<Module>&, bool)> walk =
      [&](const std::string& prefix, const std::shared_ptr<Module>& m, bool include) {
        if (!seen.insert(m.get()).second) return;
        if (include) out.insert(prefix, m);
        for (const auto& c : m->children_)
          walk(prefix.empty() ? c.key() : prefix + "." + c.key(), c.value(), true);
      };
  walk(name_prefix, self, include_self);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  return children_;
}

void Module::train(bool on) {
  for (auto& child : children_) child.value()->train(on);
  is_training_ = on;
}

// Only floating-point (and complex) tensors change dtype, as PyTorch's Module.to(dtype).
void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  NoGradGuard no_grad;
  for (const auto& m : modules()) {
    for (auto* dict : {&m->parameters_, &m->buffers_})
      for (auto& item : *dict) {
        Tensor& t = item.value();
        if (!t.defined()) continue;
        bool convert = t.is_floating_point() || t.is_complex();
        detail::set_data(t, convert ? t.to(device, dtype, non_blocking) : t.to(device));
        if (t.grad().defined())
          detail::set_data(t.mutable_grad(),
                           convert ? t.grad().to(device, dtype) : t.grad().to(device));
      }
  }
}

void Module::to(ScalarType dtype, bool non_blocking) {
  EMBER_CHECK_TYPE(isFloatingType(dtype) || isComplexType(dtype),
                   "[Module.to] nn.Module.to only accepts floating point or complex dtypes, but "
                   "got desired dtype=",
                   dtype);
  for (const auto& p : parameters())
    if (p.defined()) return to(p.device(), dtype, non_blocking);
  for (const auto& b : buffers())
    if (b.defined()) return to(b.device(), dtype, non_blocking);
}

void Module::to(Device device, bool non_blocking) {
  NoGradGuard no_grad;
  for (const auto& m : modules())
    for (auto* dict : {&m->parameters_, &m->buffers_})
      for (auto& item : *dict)
        if (item.value().defined())
          detail::set_data(item.value(), item.value().to(device, non_blocking));
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      if (g.grad_fn())
        g.detach_();
      else
        g.set_requires_grad(false);
      g.zero_();
    }
  }
}

void Module::collect_state(const std::string& prefix, OrderedDict<std::string, Tensor>& out) const {
  for (const auto& p : parameters_)
    if (p.value().defined()) out.insert_or_assign(prefix + p.key(), p.value().detach());
  for (const auto& b : buffers_)
    if (b.value().defined() && !non_persistent_buffers_.count(b.key()))
      out.insert_or_assign(prefix + b.key(), b.value().detach());
  for (const auto& c : children_) c.value()->collect_state(prefix + c.key() + ".", out);
}

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out("Key");
  collect_state("", out);
  return out;
}

LoadStateDictResult Module::load_state_dict(const OrderedDict<std::string, Tensor>& dict,
                                            bool strict) {
  LoadStateDictResult result;
  std::vector<std::string> mismatches;
  OrderedDict<std::string, Tensor> own("Key");
  // The module's own (undetached) tensors by key, to copy into.
  std::function<void(const std::string&, Module&)> walk = [&](const std::string& prefix,
                                                              Module& m) {
    for (auto& p : m.parameters_)
      if (p.value().defined()) own.insert_or_assign(prefix + p.key(), p.value());
    for (auto& b : m.buffers_)
      if (b.value().defined() && !m.non_persistent_buffers_.count(b.key()))
        own.insert_or_assign(prefix + b.key(), b.value());
    for (auto& c : m.children_) walk(prefix + c.key() + ".", *c.value());
  };
  walk("", *this);
  for (const auto& item : own) {
    const Tensor* src = dict.find(item.key());
    if (!src) {
      result.missing_keys.push_back(item.key());
    } else if (!src->defined() || src->sizes() != item.value().sizes()) {
      mismatches.push_back("size mismatch for " + item.key() + ": copying a param with shape " +
                           (src->defined() ? size_repr(src->sizes()) : "None") +
                           " from checkpoint, the shape in current model is " +
                           size_repr(item.value().sizes()) + ".");
    }
  }
  for (const auto& item : dict)
    if (!own.contains(item.key())) result.unexpected_keys.push_back(item.key());
  bool fail = !mismatches.empty() ||
              (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty()));
  if (fail) {
    std::string msg =
        "[load_state_dict] Error(s) in loading state_dict for " + short_name(name()) + ":";
    if (strict && !result.unexpected_keys.empty())
      msg += "\n\tUnexpected key(s) in state_dict: " + join(result.unexpected_keys) + ". ";
    if (strict && !result.missing_keys.empty())
      msg += "\n\tMissing key(s) in state_dict: " + join(result.missing_keys) + ". ";
    for (const auto& m : mismatches) msg += "\n\t" + m;
    EMBER_THROW(Error, msg);
  }
  NoGradGuard no_grad;
  for (auto& item : own)
    if (const Tensor* src = dict.find(item.key())) item.value().copy_(*src);
  return result;
}

void Module::pretty_print(std::ostream& stream) const {
  if (detail::print_builtin(*this, stream)) return;
  stream << name();
  std::string extra = extra_repr();
  if (!extra.empty()) stream << "(" << extra << ")";
}

void Module::print_tree(std::ostream& stream, int indent) const {
  // libtorch's pretty_print_recursive: "Name(" on the first line, one "(key): child" line per
  // child, then ")"; a module without children prints its description alone.
  pretty_print(stream);
  if (children_.is_empty()) return;
  stream << "(\n";
  std::string pad(size_t(indent + 2), ' ');
  for (const auto& c : children_) {
    stream << pad << "(" << c.key() << "): ";
    c.value()->print_tree(stream, indent + 2);
    stream << "\n";
  }
  stream << std::string(size_t(indent), ' ') << ")";
}

void Module::print_python_tree(std::ostream& stream, int indent) const {
  std::string short_ = short_name(name());
  if (children_.is_empty()) {
    stream << short_ << "(" << extra_repr() << ")";
    return;
  }
  // PyTorch: "Name(" + extra_repr on its own line + "(child): repr" lines + ")".
  stream << short_ << "(";
  std::string pad(size_t(indent + 2), ' ');
  std::string extra = extra_repr();
  if (!extra.empty()) stream << "\n" << pad << extra;
  for (const auto& c : children_) {
    stream << "\n" << pad << "(" << c.key() << "): ";
    c.value()->print_python_tree(stream, indent + 2);
  }
  stream << "\n" << std::string(size_t(indent), ' ') << ")";
}

std::ostream& operator<<(std::ostream& stream, const Module& module) {
  module.print_tree(stream, 0);
  return stream;
}

std::string python_repr(const Module& module) {
  std::ostringstream os;
  module.print_python_tree(os, 0);
  return os.str();
}

void set_module_namespace(std::string ns) { module_namespace_storage() = std::move(ns); }

const std::string& module_namespace() { return module_namespace_storage(); }

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name("parameter", name);
  EMBER_CHECK(!buffers_.contains(name) && !children_.contains(name), "[register_parameter] '", name,
              "' is already registered as a buffer or submodule");
  if (tensor.defined()) {
    EMBER_CHECK(tensor.is_leaf(), "[register_parameter] cannot register '", name,
                "': parameters must be leaf tensors (detach() it first)");
    tensor.set_requires_grad(requires_grad);
  }
  return parameters_.insert_or_assign(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_name("buffer", name);
  EMBER_CHECK(!parameters_.contains(name) && !children_.contains(name), "[register_buffer] '", name,
              "' is already registered as a parameter or submodule");
  if (persistent)
    non_persistent_buffers_.erase(name);
  else
    non_persistent_buffers_.insert(name);
  return buffers_.insert_or_assign(std::move(name), std::move(tensor));
}

void Module::register_module_impl(std::string name, std::shared_ptr<Module> module) {
  check_name("submodule", name);
  EMBER_CHECK(module != nullptr, "[register_module] submodule '", name, "' is null");
  EMBER_CHECK(!parameters_.contains(name) && !buffers_.contains(name), "[register_module] '", name,
              "' is already registered as a parameter or buffer");
  children_.insert(std::move(name), std::move(module));
}

void Module::replace_module_impl(const std::string& name, std::shared_ptr<Module> module) {
  EMBER_CHECK(children_.contains(name), "[replace_module] there is no submodule '", name, "'");
  children_[name] = std::move(module);
}

void Module::unregister_module(const std::string& name) {
  EMBER_CHECK(children_.contains(name), "[unregister_module] there is no submodule '", name, "'");
  children_.erase(name);
}

int64_t Module::register_forward_pre_hook(ForwardPreHook hook) {
  static std::atomic<int64_t> next{0};
  int64_t id = next++;
  pre_hooks_.emplace_back(id, std::move(hook));
  return id;
}

int64_t Module::register_forward_hook(ForwardHook hook) {
  static std::atomic<int64_t> next{1ll << 40};
  int64_t id = next++;
  hooks_.emplace_back(id, std::move(hook));
  return id;
}

void Module::remove_hook(int64_t handle) {
  std::erase_if(pre_hooks_, [&](const auto& h) { return h.first == handle; });
  std::erase_if(hooks_, [&](const auto& h) { return h.first == handle; });
}

Tensor Module::run_forward_pre_hooks(const Tensor& input) {
  Tensor x = input;
  for (auto& h : std::vector(pre_hooks_))
    if (auto r = h.second(*this, x)) x = *r;
  return x;
}

Tensor Module::run_forward_hooks(const Tensor& input, const Tensor& output) {
  Tensor y = output;
  for (auto& h : std::vector(hooks_))
    if (auto r = h.second(*this, input, y)) y = *r;
  return y;
}

}  // namespace ember::nn
