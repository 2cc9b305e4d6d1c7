#pragma once
// Note [Call path layers]
// Every op call enters through one scope (EMBER_OP, src/ops/call_path.h). Whether anything
// beyond the op body runs is decided by one word: the thread's active layers OR the process-wide
// ones. With no layer active the cost of the call path is that load and one branch.
//
// Layers are visited in this fixed order on entry, and in reverse on exit:
//   1. Tracer     graph capture for export / compile
//   2. Vmap       function-transform levels, innermost first
//   3. Autocast   mixed precision (the op's autocast trait)
//   4. Autograd   reverse and forward recording
//   5. Profiler   reads the call (op id, boxed arguments); no op has profiler code
//   6. Coverage   test-only: notes tensors created outside any op (an op missing from the list)
// and then the kernel, chosen by (device, OpId, dtype). `Device` is not a visited layer: it is
// set process-wide once a non-CPU tensor exists, and makes the entry check that the device has a
// kernel for the op (Note [Kernels per device] in src/ops/device_kernels.h).

#include <atomic>
#include <cstdint>

namespace ember::dispatch {

enum Layer : uint32_t {
  kTracer = 1u << 0,
  kVmap = 1u << 1,
  kAutocast = 1u << 2,
  kAutograd = 1u << 3,
  kProfiler = 1u << 4,
  kCoverage = 1u << 5,
  kNumVisitedLayers = 6,
  kDevice = 1u << 6,  ///< a non-CPU tensor exists: entries check the device has a kernel
  kThreadLayers = 1u << 7,  ///< some thread has layers of its own: read the thread's word
};

/// Per-thread state of the call path.
struct ThreadState {
  uint32_t layers = 0;    ///< layers active on this thread only
  int32_t depth = 0;      ///< op scopes entered on the slow path (open ops) on this thread
  int64_t uncovered = 0;  ///< tensors created outside any op while Coverage was active
};

/// This thread's state.
ThreadState& thread_state();
/// Layers active on every thread (the profiler, once a device tensor exists: kDevice).
extern std::atomic<uint32_t> g_layers;

/// The layers active for this thread: its own and the process-wide ones.
inline uint32_t active_layers() {
  uint32_t g = g_layers.load(std::memory_order_relaxed);
  if (g & kThreadLayers) g = (g & ~uint32_t(kThreadLayers)) | thread_state().layers;
  return g;
}
/// Whether the call path must do more than run the op body: the one branch, on one global
/// word (thread-local layers set its kThreadLayers bit, so no thread-local read is needed).
inline bool slow_path() { return g_layers.load(std::memory_order_relaxed) != 0; }

/// Called by TensorImpl's constructor on the slow path: notes device tensors and, under the
/// Coverage layer, tensors created outside any op.
void on_tensor_created(bool on_cpu);

}  // namespace ember::dispatch
