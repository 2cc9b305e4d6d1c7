// Modules and optimizers to and from safetensors files: their state dicts plus a format tag.
#include "ember/nn/serialize.h"

#include "ember/optim/optimizer.h"

namespace ember {

namespace {
void check_format(const std::map<std::string, std::string>& meta, const std::string& want,
                  const std::string& path) {
  auto it = meta.find("format");
  EMBER_CHECK(it == meta.end() || it->second == want, "[load] ", path, " holds a '", it->second,
              "' state, not an '", want, "' one");
}
}  // namespace

void save(const nn::Module& module, const std::string& path) {
  save(module.state_dict(), path, {{"format", "ember.module"}, {"module", module.name()}});
}

void load(nn::Module& module, const std::string& path) {
  std::map<std::string, std::string> meta;
  auto dict = load_dict(path, &meta);
  check_format(meta, "ember.module", path);
  module.load_state_dict(dict);
}

void save(const optim::Optimizer& optimizer, const std::string& path) {
  save(optimizer.state_dict(), path, {{"format", "ember.optimizer"}});
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  std::map<std::string, std::string> meta;
  auto dict = load_dict(path, &meta);
  check_format(meta, "ember.optimizer", path);
  optimizer.load_state_dict(dict);
}

}  // namespace ember
