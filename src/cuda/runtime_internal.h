#pragma once
// What the runtime pieces of libember_cuda share (src/cuda/runtime.cpp, graphs.cpp,
// handles.cpp): device checks, the fork guard, stream ids, the raw device guard and the graph
// entry points the hooks forward to. Kernel files use cuda/cuda_context.h instead; random
// kernels also call check_random_not_capturing() from here.

#include <cuda_runtime.h>

#include "ember/cuda.h"

namespace ember::cuda {

/// Resolves -1 to the current device and checks that `device` exists (IndexError naming `op`).
int checked_device(int device, const char* op);

/// Note [CUDA in forked children]
/// A child forked after the parent created a CUDA context cannot use CUDA (the driver state is
/// not fork-safe): every runtime entry calls lazy_init(), which raises a clear error in such a
/// child instead of hanging or crashing inside the driver, and otherwise records that CUDA is
/// in use, so that children forked from now on are refused (PyTorch's "Cannot re-initialize
/// CUDA in forked subprocess").
void lazy_init();
/// Raises in a child forked after CUDA was initialised, without marking CUDA as in use.
void check_not_forked();

/// The cudaStream_t of `s`: null for the default stream (id 0), else the handle of a pool or
/// created stream with that id; Error naming `op` for an id the runtime never handed out.
cudaStream_t stream_handle(const Stream& s, const char* op);

/// Whether `stream` is capturing a graph. The legacy default stream counts as capturing while
/// another stream captures in global mode (using it then would invalidate that capture).
bool stream_is_capturing(cudaStream_t stream);

/// Selects `device` for a scope with the runtime directly (no hooks, no fork check).
class RawDeviceGuard {
 public:
  explicit RawDeviceGuard(int device);
  ~RawDeviceGuard();
  RawDeviceGuard(const RawDeviceGuard&) = delete;
  RawDeviceGuard& operator=(const RawDeviceGuard&) = delete;

 private:
  int prev_ = -1;
};

/// Raises "[op] cannot be captured in a CUDA graph ..." when the current stream is capturing:
/// a replay would repeat the random numbers drawn at capture (Note [Random ops in CUDA graphs]
/// in graphs.cpp). Random kernels call it before reserving numbers from a generator.
void check_random_not_capturing(const char* op);

// ---- CUDA Graphs (graphs.cpp); the hooks forward to these ----

MempoolId new_graph_pool_handle();
void* graph_new();
void graph_delete(void* graph);
void graph_begin(void* graph, MempoolId pool);
void graph_end(void* graph);
void graph_launch(void* graph);
void graph_clear(void* graph);
MempoolId graph_pool_of(void* graph);

// ---- library handles (handles.cpp) ----

/// Frees the cuBLAS workspaces cached per (handle, stream), as a capture begins and ends
/// (Note [cuBLAS workspaces and graphs] in graphs.cpp).
void clear_cublas_workspaces();

}  // namespace ember::cuda
