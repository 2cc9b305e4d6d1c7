#include "ember/context.h"

#include <atomic>
#include <cstring>

#include "ember/error.h"

namespace ember {
namespace {
// Read by kernels on any thread; relaxed is enough for a setting that changes between ops.
std::atomic<bool> g_deterministic{false};
std::atomic<bool> g_warn_only{false};
std::atomic<int> g_matmul_precision{0};
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

void set_float32_matmul_precision(const char* precision) {
  static const char* const names[] = {"highest", "high", "medium"};
  for (int i = 0; i < 3; ++i) {
    if (std::strcmp(precision, names[i]) == 0) {
      g_matmul_precision.store(i, std::memory_order_relaxed);
      return;
    }
  }
  EMBER_THROW(ValueError,
              "[set_float32_matmul_precision] expected one of \"highest\", "
              "\"high\" or \"medium\", got \"",
              precision, "\"");
}

const char* get_float32_matmul_precision() {
  static const char* const names[] = {"highest", "high", "medium"};
  return names[g_matmul_precision.load(std::memory_order_relaxed)];
}

MatmulPrecision float32_matmul_precision() {
  return MatmulPrecision(g_matmul_precision.load(std::memory_order_relaxed));
}

}  // namespace ember
