// Forward-mode AD levels and dual tensors. A tangent lives in the primal's autograd meta,
// keyed by level; ops propagate it through their jvp rules (Note [Recording an op]).

#include <algorithm>

#include "autograd/meta.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {
std::vector<uint64_t>& levels() {
  static thread_local std::vector<uint64_t> v;
  return v;
}
// Per-level generation: a level number is reused after exit, its old tangents must not be.
std::vector<uint64_t>& generations() {
  static thread_local std::vector<uint64_t> g;
  return g;
}
uint64_t& generation_counter() {
  static thread_local uint64_t c = 0;
  return c;
}
}  // namespace

const std::vector<uint64_t>& active_levels() { return levels(); }

uint64_t level_key(uint64_t level) {
  auto& g = generations();
  if (level >= g.size()) return UINT64_MAX;
  return (g[level] << 8) | level;
}

namespace forward_ad {

uint64_t enter_dual_level() {
  auto& v = levels();
  uint64_t l = v.empty() ? 0 : v.back() + 1;
  EMBER_CHECK(l < 64, "[enter_dual_level] too many nested forward-AD levels (at most 64)");
  v.push_back(l);
  generations().push_back(++generation_counter());
  tls().fw_levels = int(v.size());
  return l;
}

void exit_dual_level(uint64_t level) {
  auto& v = levels();
  EMBER_CHECK(!v.empty() && v.back() == level,
              "[exit_dual_level] Trying to exit a forward AD "
              "level that was not the last one that was created. This is not supported.");
  v.pop_back();
  generations().pop_back();
  tls().fw_levels = int(v.size());
  // Tangents of this level on live tensors are unreachable from now on; tensors drop them
  // lazily (fw_grad() only reads active levels).
}

uint64_t current_level() {
  auto& v = levels();
  EMBER_CHECK(!v.empty(),
              "[forward_ad] no forward AD level is active; enter one with "
              "dual_level first");
  return v.back();
}

dual_level::dual_level() : level_(enter_dual_level()) {}
dual_level::~dual_level() { exit_dual_level(level_); }

Tensor make_dual(const Tensor& primal, const Tensor& tangent, std::optional<uint64_t> level) {
  uint64_t l = level ? *level : current_level();
  EMBER_CHECK(std::find(levels().begin(), levels().end(), l) != levels().end(),
              "[make_dual] level ", l, " is not active");
  EMBER_CHECK(primal.is_floating_point() || primal.is_complex(),
              "[make_dual] Expected primal to "
              "be floating point or complex, but got: ",
              primal.dtype());
  EMBER_CHECK(tangent.is_floating_point() || tangent.is_complex(),
              "[make_dual] Expected tangent "
              "to be floating point or complex, but got: ",
              tangent.dtype());
  // A view of the primal: the dual shares its data but carries its own tangent, and its
  // reverse-mode history goes through the primal.
  Tensor dual;
  {
    AutoGradMode g(GradMode::is_enabled());
    dual = primal.view_as(primal);
  }
  dual._set_fw_grad(tangent, l);
  return dual;
}

std::pair<Tensor, Tensor> unpack_dual(const Tensor& t, std::optional<uint64_t> level) {
  auto& v = levels();
  if (v.empty()) return {t, Tensor()};
  uint64_t l = level ? *level : v.back();
  Tensor tangent = fw_grad(t, l);
  if (!tangent.defined()) return {t, Tensor()};
  Tensor primal;
  {
    // The primal is a view without this level's tangent.
    AutogradTLS& s = tls();
    uint64_t bit = uint64_t(1) << l;
    s.fw_suppressed |= bit;
    primal = t.view_as(t);
    s.fw_suppressed &= ~bit;
  }
  AutogradMeta* m = meta(primal);
  uint64_t key = level_key(l);
  if (m) std::erase_if(m->fw_grads, [&](auto& p) { return p.first == key; });
  return {primal, tangent};
}

}  // namespace forward_ad
}  // namespace ember::autograd
