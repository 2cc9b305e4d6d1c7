#pragma once
/// ember::save / ember::load of modules and optimizers (libtorch's `torch::save(model, path)`),
/// as safetensors files of their state dicts.

#include <string>

#include "ember/nn/module.h"
#include "ember/nn/pimpl.h"
#include "ember/serialize.h"

namespace ember {
namespace optim {
class Optimizer;
}

/// Writes the module's state_dict(); `metadata["format"]` records "ember.module".
void save(const nn::Module& module, const std::string& path);
/// Loads a file written by save(module) (strict: every key must match).
void load(nn::Module& module, const std::string& path);
/// Writes the optimizer's state_dict().
void save(const optim::Optimizer& optimizer, const std::string& path);
/// Loads a file written by save(optimizer).
void load(optim::Optimizer& optimizer, const std::string& path);

template <typename M>
void save(const nn::ModuleHolder<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <typename M>
void load(nn::ModuleHolder<M>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}

}  // namespace ember
