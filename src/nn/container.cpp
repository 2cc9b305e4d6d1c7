// Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict.
#include "ember/nn/modules/container.h"

#include <ostream>
#include <sstream>

namespace ember::nn {

namespace {
int64_t wrap_index(const char* who, int64_t index, size_t size) {
  int64_t n = int64_t(size);
  int64_t i = index < 0 ? index + n : index;
  EMBER_CHECK_INDEX(i >= 0 && i < n, "[", who, "] index ", index, " is out of range for ", n,
                    " modules");
  return i;
}

std::string param_line(const Tensor& p) {
  std::ostringstream os;
  os << "Parameter containing: [ember." << p.dtype() << " of size ";
  for (int64_t d = 0; d < p.dim(); ++d) os << (d ? "x" : "") << p.size(d);
  os << "]";
  return os.str();
}
}  // namespace

SequentialImpl::SequentialImpl(std::vector<std::pair<std::string, AnyModule>> named_modules) {
  for (auto& [name, m] : named_modules) push_back(name, std::move(m));
}

void SequentialImpl::push_back(std::string name, AnyModule module) {
  EMBER_CHECK(!module.is_empty(), "[Sequential] cannot add an empty module");
  register_module(std::move(name), module.ptr());
  modules_.push_back(std::move(module));
}

void SequentialImpl::extend(const SequentialImpl& other) {
  for (const AnyModule& m : other.modules_) push_back(std::to_string(modules_.size()), m);
}

int64_t SequentialImpl::normalize(int64_t index) const {
  return wrap_index("Sequential", index, modules_.size());
}

std::shared_ptr<Module> SequentialImpl::ptr(int64_t index) const {
  return modules_[size_t(normalize(index))].ptr();
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const AnyModule& m : modules_) x = m.forward(x);
  return x;
}

// Each layer is cloned and re-wrapped; the names are kept.
std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  auto names = children_.keys();
  for (size_t i = 0; i < modules_.size(); ++i) {
    std::shared_ptr<Module> c = modules_[i].ptr()->clone(device);
    copy->register_module(names[i], c);
    copy->modules_.push_back(modules_[i].rebind(c));
  }
  copy->is_training_ = is_training_;
  return copy;
}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, "[ModuleList] cannot add a null module");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  for (const auto& m : other.modules_) push_back(m);
}

void ModuleListImpl::insert(int64_t index, std::shared_ptr<Module> module) {
  int64_t n = int64_t(modules_.size());
  int64_t i = index < 0 ? std::max<int64_t>(0, index + n) : std::min(index, n);
  modules_.insert(modules_.begin() + i, std::move(module));
  renumber();
}

void ModuleListImpl::renumber() {
  children_.clear();
  for (size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
}

std::shared_ptr<Module> ModuleListImpl::ptr(int64_t index) const {
  return modules_[size_t(wrap_index("ModuleList", index, modules_.size()))];
}

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& m : modules_) copy->push_back(m->clone(device));
  copy->is_training_ = is_training_;
  return copy;
}

ModuleDictImpl::ModuleDictImpl(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [k, m] : modules) insert(k, m);
}

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, "[ModuleDict] cannot add a null module under '", key, "'");
  if (children_.contains(key))
    replace_module(key, std::move(module));
  else
    register_module(key, std::move(module));
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const auto* m = children_.find(key);
  EMBER_CHECK_INDEX(m != nullptr, "[ModuleDict] no module under key '", key, "'");
  return *m;
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> m = (*this)[key];
  children_.erase(key);
  return m;
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& item : children_) copy->insert(item.key(), item.value()->clone(device));
  copy->is_training_ = is_training_;
  return copy;
}

void ParameterListImpl::append(Tensor param) {
  EMBER_CHECK(param.defined(), "[ParameterList] cannot append an undefined tensor");
  bool rg = param.requires_grad() || param.is_leaf();
  register_parameter(std::to_string(parameters_.size()), std::move(param), rg);
}

void ParameterListImpl::extend(const std::vector<Tensor>& params) {
  for (const Tensor& p : params) append(p);
}

Tensor& ParameterListImpl::operator[](int64_t index) {
  return parameters_[size_t(wrap_index("ParameterList", index, parameters_.size()))].value();
}

void ParameterListImpl::pretty_print(std::ostream& stream) const {
  stream << "ParameterList(";
  for (const auto& p : parameters_) stream << "\n    (" << p.key() << "): " << param_line(*p);
  stream << (parameters_.is_empty() ? ")" : "\n)");
}

ParameterDictImpl::ParameterDictImpl(const OrderedDict<std::string, Tensor>& params) {
  for (const auto& p : params) insert(p.key(), p.value());
}

Tensor& ParameterDictImpl::insert(const std::string& key, Tensor param) {
  return register_parameter(key, std::move(param), true);
}

Tensor ParameterDictImpl::pop(const std::string& key) {
  Tensor t = parameters_[key];
  parameters_.erase(key);
  return t;
}

void ParameterDictImpl::pretty_print(std::ostream& stream) const {
  stream << "ParameterDict(";
  for (const auto& p : parameters_) stream << "\n    (" << p.key() << "): " << param_line(*p);
  stream << (parameters_.is_empty() ? ")" : "\n)");
}

}  // namespace ember::nn
