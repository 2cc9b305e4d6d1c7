#pragma once
/// ModuleHolder and EMBER_MODULE: the shared-pointer handles of layers (libtorch's
/// torch::nn::ModuleHolder and TORCH_MODULE). `Linear fc(3, 4)` constructs a LinearImpl;
/// `fc->weight` reaches it; `fc(x)` runs its forward (and its forward hooks).

#include <memory>
#include <ostream>
#include <type_traits>
#include <utility>

#include "ember/error.h"
#include "ember/nn/module.h"

namespace ember::nn {

namespace detail {
struct ModuleHolderIndicator {};
template <typename T>
inline constexpr bool is_module_holder_v =
    std::is_base_of_v<ModuleHolderIndicator, std::decay_t<T>>;
}  // namespace detail

template <typename Contained>
class ModuleHolder : detail::ModuleHolderIndicator {
 public:
  using ContainedType = Contained;

  /// Default-constructs the module when it has a default constructor (libtorch's rule);
  /// otherwise the holder starts empty.
  ModuleHolder() {
    if constexpr (std::is_default_constructible_v<Contained>) impl_ = std::make_shared<Contained>();
  }
  /// An empty holder (assign a module later).
  ModuleHolder(std::nullptr_t) {}
  /// Constructs the module from its constructor arguments (a lone argument that is itself a
  /// holder of this module type is a copy instead, as libtorch).
  template <typename Head, typename... Tail,
            typename = std::enable_if_t<
                !(sizeof...(Tail) == 0 &&
                  (std::is_base_of_v<ModuleHolder, std::decay_t<Head>> ||
                   std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                   std::is_convertible_v<std::decay_t<Head>, std::shared_ptr<Contained>>))>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  /// Wraps an existing module.
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}

  explicit operator bool() const noexcept { return impl_ != nullptr; }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  const std::shared_ptr<Contained>& ptr() const {
    check();
    return impl_;
  }
  Contained* get() {
    check();
    return impl_.get();
  }
  const Contained* get() const {
    check();
    return impl_.get();
  }

  /// Runs forward; for a Tensor → Tensor forward, the module's forward hooks run around it.
  template <typename... Args, typename C = Contained>
  auto operator()(Args&&... args)
      -> decltype(std::declval<C&>().forward(std::forward<Args>(args)...)) {
    using R = decltype(std::declval<C&>().forward(std::forward<Args>(args)...));
    C& m = *get();
    if constexpr (sizeof...(Args) == 1 && std::is_same_v<R, Tensor> &&
                  (std::is_convertible_v<Args&&, const Tensor&> && ...)) {
      if (m.has_forward_hooks()) {
        Tensor in = m.run_forward_pre_hooks(std::forward<Args>(args)...);
        Tensor out = m.forward(in);
        return m.run_forward_hooks(in, out);
      }
    }
    return m.forward(std::forward<Args>(args)...);
  }
  /// Indexing forwarded to the module (Sequential, ModuleList).
  template <typename Arg, typename C = Contained>
  auto operator[](Arg&& arg) -> decltype(std::declval<C&>()[std::forward<Arg>(arg)]) {
    return (*get())[std::forward<Arg>(arg)];
  }

 protected:
  void check() const {
    EMBER_CHECK(impl_ != nullptr, "[nn] accessing an empty ModuleHolder of ",
                typeid(Contained).name(), ": construct it, or assign a module to it first");
  }
  std::shared_ptr<Contained> impl_;
};

/// Prints the held module (PyTorch's repr).
template <typename Contained>
std::ostream& operator<<(std::ostream& stream, const ModuleHolder<Contained>& holder) {
  return stream << static_cast<const Module&>(*holder);
}

}  // namespace ember::nn

/// Defines `Name` as the holder of `ImplType` (libtorch's TORCH_MODULE_IMPL).
#define EMBER_MODULE_IMPL(Name, ImplType)                                  \
  class Name : public ::ember::nn::ModuleHolder<ImplType> {                \
   public:                                                                 \
    using ::ember::nn::ModuleHolder<ImplType>::ModuleHolder;               \
    Name() : ::ember::nn::ModuleHolder<ImplType>() {}                      \
    Name(std::nullptr_t) : ::ember::nn::ModuleHolder<ImplType>(nullptr) {} \
  }
/// `EMBER_MODULE(Linear)` makes `Linear` the holder of `LinearImpl` (libtorch's TORCH_MODULE).
#define EMBER_MODULE(Name) EMBER_MODULE_IMPL(Name, Name##Impl)
