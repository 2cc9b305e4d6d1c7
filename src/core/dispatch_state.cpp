#include "core/dispatch_state.h"

namespace ember::dispatch {

std::atomic<uint32_t> g_layers{0};

ThreadState& thread_state() {
  static thread_local ThreadState s;
  return s;
}

void on_tensor_created(bool on_cpu) {
  if (!on_cpu && !(g_layers.load(std::memory_order_relaxed) & kDevice))
    g_layers.fetch_or(kDevice, std::memory_order_relaxed);
  ThreadState& t = thread_state();
  if ((active_layers() & kCoverage) && t.depth == 0) ++t.uncovered;
}

}  // namespace ember::dispatch
