#pragma once
// What code inside libember_cuda.so (src/cuda/*.cpp and src/kernels/cuda/*.cu) shares: error
// checks, the current stream, library handles bound to it, scratch memory from the caching
// allocator, and the hooks into the allocator that streams and graphs need. Nothing outside
// libember_cuda includes this (Note [CUDA backend library] in ember/cuda.h).
//
// Note [CUDA kernels and streams]
// Every kernel launch, cuBLAS/cuDNN/cuFFT/cuSOLVER call and async copy goes to
// current_raw_stream(): the thread's current stream of the current device (the default stream
// unless a StreamGuard / torch.cuda.stream() chose another). A kernel entry selects the device
// of its output first (DeviceGuard), so cuda:1 tensors run on cuda:1. Host synchronisation
// (a copy to pageable memory, item(), nonzero's count) calls check_not_capturing(op) first:
// inside a graph capture it raises instead of invalidating the capture.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "ember/allocator.h"
#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/tensor.h"

// Forward declarations of the libraries' handle types, so that this header stays light.
struct cublasContext;
struct cublasLtContext;
struct cusolverDnContext;
struct cudnnContext;

namespace ember::cuda {

/// Throws ember::Error naming `what` when a CUDA runtime call failed (and clears the error).
inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    EMBER_THROW(::ember::Error, "[cuda] ", what, " failed: ", cudaGetErrorString(err));
  }
}
#ifndef EMBER_CUDA_CHECK
#define EMBER_CUDA_CHECK(expr) ::ember::cuda::check((expr), #expr)
#endif

// ---- devices and streams (src/cuda/runtime.cpp) ----

/// Number of devices (0 without a GPU); cached.
int raw_device_count();
/// The current device of this thread (cudaGetDevice).
int raw_current_device();
/// The cudaStream_t work goes to on this thread for `device` (-1: current device).
cudaStream_t current_raw_stream(int device = -1);
/// Raises "[op] cannot run while a CUDA graph is being captured: it synchronises with the
/// host" when the current stream is capturing.
void check_not_capturing(const char* op);
/// Waits for the current stream (a synchronising copy or item()).
void sync_current_stream();

// ---- library handles, one per (thread, device), bound to current_raw_stream() on each call
//      (src/cuda/handles.cpp) ----

cublasContext* cublas_handle();
cublasLtContext* cublaslt_handle();
cusolverDnContext* cusolver_handle();
cudnnContext* cudnn_handle();

// ---- the caching allocator (src/cuda/cuda_allocator.cpp) ----

/// The CUDA caching allocator (allocates on the current device, for the current stream).
Allocator* caching_allocator();
/// Scratch memory for a library call or a kernel's temporary (freed when the DataPtr dies,
/// reusable once the current stream has passed that point).
DataPtr scratch(size_t nbytes);
/// Allocator statistics with torch.cuda.memory_stats' keys.
std::map<std::string, int64_t> allocator_stats(int device);
void allocator_reset_peak(int device);
void allocator_empty_cache();
std::string allocator_summary(int device, bool abbreviated);
void allocator_set_fraction(double fraction, int device);
/// Tensor.record_stream: the block of `ptr` (a pointer the allocator handed out) is not reused
/// after its free until the work queued on `stream` by then has finished.
void allocator_record_stream(void* ptr, cudaStream_t stream, int device);
/// Graph pools: allocations on `stream` of `device` between begin and end come from `pool`'s
/// private blocks; release_pool returns them once no graph uses the pool.
void allocator_begin_pool(int device, MempoolId pool, cudaStream_t stream);
void allocator_end_pool(int device, MempoolId pool);
void allocator_release_pool(int device, MempoolId pool);

// ---- pinned host memory (src/cuda/pinned.cpp) ----

/// The allocator of page-locked host memory (cudaHostAlloc, cached; a freed block is reused
/// only after the copies that read it have finished).
Allocator* pinned_allocator();
/// Whether `p` points into a block of the pinned allocator.
bool is_pinned_ptr(const void* p);
/// Records that the pinned block holding `p` is read/written by work queued on `stream`.
void pinned_record_use(const void* p, cudaStream_t stream);

}  // namespace ember::cuda
