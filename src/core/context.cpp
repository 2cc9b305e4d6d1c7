#include "ember/context.h"

#include <atomic>

namespace ember {
namespace {
// Read by kernels on any thread; relaxed is enough for a setting that changes between ops.
std::atomic<bool> g_deterministic{false};
std::atomic<bool> g_warn_only{false};
}  // namespace

void use_deterministic_algorithms(bool mode, bool warn_only) {
  g_deterministic.store(mode, std::memory_order_relaxed);
  g_warn_only.store(mode && warn_only, std::memory_order_relaxed);
}

bool are_deterministic_algorithms_enabled() {
  return g_deterministic.load(std::memory_order_relaxed);
}

bool is_deterministic_algorithms_warn_only_enabled() {
  return g_warn_only.load(std::memory_order_relaxed);
}

}  // namespace ember
