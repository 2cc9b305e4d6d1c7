#pragma once
/// Cloneable<Derived>: the base of layers; gives Module::clone() a deep copy by copy-constructing
/// Derived, re-running reset() and copying every parameter, buffer and submodule.

#include <memory>
#include <optional>

#include "ember/autograd.h"
#include "ember/nn/module.h"

namespace ember::nn {

namespace detail {
/// Makes `dst` (a handle others may hold) take `src`'s data, dtype and shape in place.
void set_data(Tensor& dst, const Tensor& src);
}  // namespace detail

template <typename Derived>
class Cloneable : public Module {
 public:
  using Module::Module;

  /// (Re)creates the parameters, buffers and submodules from the options.
  virtual void reset() = 0;

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    NoGradGuard no_grad;
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->parameters_.clear();
    copy->buffers_.clear();
    copy->children_.clear();
    copy->reset();
    EMBER_CHECK(copy->parameters_.size() == parameters_.size() &&
                    copy->buffers_.size() == buffers_.size() &&
                    copy->children_.size() == children_.size(),
                "[clone] ", name(), "::reset() registers different parameters, buffers or ",
                "submodules than the module holds; clone() needs reset() to recreate them all");
    auto copy_tensors = [&](const OrderedDict<std::string, Tensor>& from,
                            OrderedDict<std::string, Tensor>& to) {
      for (const auto& item : from) {
        Tensor& dst = to[item.key()];
        if (!item.value().defined()) continue;
        Tensor data = device ? item.value().to(*device).clone() : item.value().clone();
        if (dst.defined())
          detail::set_data(dst, data);
        else
          dst = data;
        dst.set_requires_grad(item.value().requires_grad());
      }
    };
    copy_tensors(parameters_, copy->parameters_);
    copy_tensors(buffers_, copy->buffers_);
    for (const auto& child : children_) {
      // The copy's holder member (e.g. `conv1`) shares the slot's module: refill it in place.
      copy->children_[child.key()]->clone_from_(*child.value(), device);
    }
    copy->is_training_ = is_training_;
    return copy;
  }

  void clone_from_(const Module& other, const std::optional<Device>& device) final {
    auto cloned = std::dynamic_pointer_cast<Derived>(other.clone(device));
    EMBER_CHECK(cloned != nullptr, "[clone] cannot clone a ", other.name(), " into a ", name());
    static_cast<Derived&>(*this) = *cloned;
  }
};

}  // namespace ember::nn
