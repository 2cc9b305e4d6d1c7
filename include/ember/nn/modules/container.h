#pragma once
/// Containers: AnyModule (a type-erased Tensor → Tensor layer), Sequential, ModuleList,
/// ModuleDict, ParameterList, ParameterDict and Functional (a function as a layer).

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/cloneable.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// Any layer whose forward maps one Tensor to one Tensor, behind one type.
class AnyModule {
 public:
  AnyModule() = default;
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, M>>>
  AnyModule(std::shared_ptr<M> module)  // NOLINT: implicit, as libtorch
      : module_(module),
        forward_([m = module.get()](const Tensor& x) -> Tensor {
          if (m->has_forward_hooks()) {
            Tensor in = m->run_forward_pre_hooks(x);
            return m->run_forward_hooks(in, m->forward(in));
          }
          return m->forward(x);
        }),
        rebind_([](std::shared_ptr<Module> other) {
          return AnyModule(std::static_pointer_cast<M>(std::move(other)));
        }) {}
  template <typename M>
  AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}  // NOLINT
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>,
            typename = void>
  AnyModule(M&& module)  // NOLINT: a layer by value
      : AnyModule(std::make_shared<std::decay_t<M>>(std::forward<M>(module))) {}

  Tensor forward(const Tensor& input) const {
    EMBER_CHECK(forward_ != nullptr, "[AnyModule] forward() on an empty AnyModule");
    return forward_(input);
  }
  const std::shared_ptr<Module>& ptr() const { return module_; }
  /// The module as `T` (its Impl class); an error when it is not one.
  template <typename T>
  T& get() const {
    auto* m = dynamic_cast<T*>(module_.get());
    EMBER_CHECK_TYPE(m != nullptr, "[AnyModule] the module is a ",
                     module_ ? module_->name() : std::string("null"), ", not the type asked for");
    return *m;
  }
  bool is_empty() const noexcept { return module_ == nullptr; }
  /// The same kind of AnyModule around `other` (a clone of this one's module).
  AnyModule rebind(std::shared_ptr<Module> other) const { return rebind_(std::move(other)); }

 private:
  std::shared_ptr<Module> module_;
  std::function<Tensor(const Tensor&)> forward_;
  std::function<AnyModule(std::shared_ptr<Module>)> rebind_;
};

/// Runs its layers in order; each output feeds the next.
class SequentialImpl : public Cloneable<SequentialImpl> {
 public:
  SequentialImpl() = default;
  template <typename... Modules>
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  /// Named layers, in order.
  explicit SequentialImpl(std::vector<std::pair<std::string, AnyModule>> named_modules);

  void reset() override {}
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  Tensor forward(const Tensor& input);

  /// Appends a layer named by its position ("0", "1", ...).
  template <typename M>
  void push_back(M&& module) {
    push_back(std::to_string(modules_.size()), AnyModule(std::forward<M>(module)));
  }
  void push_back(std::string name, AnyModule module);
  void extend(const SequentialImpl& other);
  /// The layer at `index` (negative counts from the end).
  std::shared_ptr<Module> operator[](int64_t index) const { return ptr(index); }
  std::shared_ptr<Module> ptr(int64_t index) const;
  template <typename T>
  T& at(int64_t index) const {
    return modules_.at(size_t(normalize(index))).get<T>();
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::vector<AnyModule>::const_iterator begin() const { return modules_.begin(); }
  std::vector<AnyModule>::const_iterator end() const { return modules_.end(); }

 private:
  int64_t normalize(int64_t index) const;
  std::vector<AnyModule> modules_;
};
EMBER_MODULE(Sequential);

/// A list of layers, registered as "0", "1", ...; forward is the user's.
class ModuleListImpl : public Cloneable<ModuleListImpl> {
 public:
  ModuleListImpl() = default;
  template <typename... Modules>
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  void reset() override {}
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

  void push_back(std::shared_ptr<Module> module);
  template <typename M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, M>>>
  void push_back(std::shared_ptr<M> module) {
    push_back(std::static_pointer_cast<Module>(std::move(module)));
  }
  void extend(const ModuleListImpl& other);
  /// Inserts before position `index` (the later ones are renumbered).
  void insert(int64_t index, std::shared_ptr<Module> module);
  std::shared_ptr<Module> operator[](int64_t index) const { return ptr(index); }
  std::shared_ptr<Module> ptr(int64_t index) const;
  template <typename T>
  T* at(int64_t index) const {
    return dynamic_cast<T*>(ptr(index).get());
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

 private:
  void renumber();
  std::vector<std::shared_ptr<Module>> modules_;
};
EMBER_MODULE(ModuleList);

/// Layers by name, in insertion order.
class ModuleDictImpl : public Cloneable<ModuleDictImpl> {
 public:
  ModuleDictImpl() = default;
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  void reset() override {}
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

  void insert(const std::string& key, std::shared_ptr<Module> module);
  template <typename M>
  void insert(const std::string& key, const ModuleHolder<M>& holder) {
    insert(key, std::static_pointer_cast<Module>(holder.ptr()));
  }
  std::shared_ptr<Module> operator[](const std::string& key) const;
  bool contains(const std::string& key) const { return children_.contains(key); }
  /// Removes and returns the layer under `key`.
  std::shared_ptr<Module> pop(const std::string& key);
  std::vector<std::string> keys() const { return children_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return children_.values(); }
  size_t size() const noexcept { return children_.size(); }
  bool empty() const noexcept { return children_.is_empty(); }
  void clear() { children_.clear(); }
};
EMBER_MODULE(ModuleDict);

/// Parameters registered as "0", "1", ...
class ParameterListImpl : public Cloneable<ParameterListImpl> {
 public:
  ParameterListImpl() = default;
  template <typename... Tensors>
  explicit ParameterListImpl(Tensors&&... params) {
    (append(std::forward<Tensors>(params)), ...);
  }
  void reset() override {}
  void append(Tensor param);
  void extend(const std::vector<Tensor>& params);
  Tensor& operator[](int64_t index);
  size_t size() const noexcept { return parameters_.size(); }
  bool is_empty() const noexcept { return parameters_.is_empty(); }
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(ParameterList);

/// Parameters by name.
class ParameterDictImpl : public Cloneable<ParameterDictImpl> {
 public:
  ParameterDictImpl() = default;
  explicit ParameterDictImpl(const OrderedDict<std::string, Tensor>& params);
  void reset() override {}
  Tensor& insert(const std::string& key, Tensor param);
  Tensor& operator[](const std::string& key) { return parameters_[key]; }
  bool contains(const std::string& key) const { return parameters_.contains(key); }
  Tensor pop(const std::string& key);
  std::vector<std::string> keys() const { return parameters_.keys(); }
  std::vector<Tensor> values() const { return parameters_.values(); }
  size_t size() const noexcept { return parameters_.size(); }
  bool empty() const noexcept { return parameters_.is_empty(); }
  void clear() { parameters_.clear(); }
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(ParameterDict);

/// A function as a layer: `Functional(ember::relu)`.
class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function) : function_(std::move(function)) {}
  void reset() override {}
  Tensor forward(const Tensor& input) { return function_(input); }

 private:
  Function function_;
};
EMBER_MODULE(Functional);

}  // namespace ember::nn
