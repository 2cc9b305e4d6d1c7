// Library handles of cuBLAS, cuBLASLt, cuSOLVER and cuDNN: one per (thread, device), created on
// first use and bound to the thread's current stream on every call (Note [CUDA kernels and
// streams]), with cuBLAS workspaces from the caching allocator.
//
// Note [Library handle pools]
// Handles are expensive to create and are not thread-safe to share while a call is being set
// up (the stream and workspace are per-handle state). Each thread borrows one handle per device
// from a process-wide pool and gives it back when the thread exits, so short-lived threads (the
// autograd engine's, a DataLoader's) reuse handles instead of creating new ones. Handles are
// never destroyed: at process exit the libraries may already be unloaded.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <cusolverDn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_context.h"
#include "cuda/runtime_internal.h"

namespace ember::cuda {
namespace {

void check_cublas_status(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    EMBER_THROW(Error, "[cuda] ", what, " failed: ", cublasGetStatusName(s), " (",
                cublasGetStatusString(s), ")");
}
void check_cudnn_status(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS)
    EMBER_THROW(Error, "[cuda] ", what, " failed: ", cudnnGetErrorString(s));
}
void check_cusolver_status(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    EMBER_THROW(Error, "[cuda] ", what, " failed: cusolver status ", int(s));
}

// The handles of one kind not in use by any thread, per device (leaked on purpose).
template <class H>
struct HandlePool {
  std::mutex mu;
  std::map<int, std::vector<H>> free;
};

// A thread's handles of one kind, by device; returned to the pool at thread exit.
template <class H>
struct ThreadHandles {
  HandlePool<H>* pool = nullptr;
  std::vector<H> by_device;
  ~ThreadHandles() {
    if (!pool) return;
    std::lock_guard<std::mutex> g(pool->mu);
    for (size_t d = 0; d < by_device.size(); ++d)
      if (by_device[d]) pool->free[int(d)].push_back(by_device[d]);
  }
};

// This thread's handle of kind H for `device`, created by `create()` when the pool has none.
template <class H, class Create>
H thread_handle(int device, Create create) {
  static auto* pool = new HandlePool<H>();
  thread_local ThreadHandles<H> mine;
  mine.pool = pool;
  if (mine.by_device.size() <= size_t(device)) mine.by_device.resize(size_t(device) + 1);
  H& slot = mine.by_device[size_t(device)];
  if (slot) return slot;
  {
    std::lock_guard<std::mutex> g(pool->mu);
    auto& avail = pool->free[device];
    if (!avail.empty()) {
      slot = avail.back();
      avail.pop_back();
      return slot;
    }
  }
  lazy_init();
  slot = create();
  return slot;
}

// Workspace bytes: CUBLAS_WORKSPACE_CONFIG (":SIZE_KIB:COUNT" pairs, as PyTorch reads it) or
// cuBLAS's recommendation (32 MiB on Hopper and later, 4 MiB before).
size_t cublas_workspace_bytes(int device) {
  if (const char* cfg = std::getenv("CUBLAS_WORKSPACE_CONFIG"); cfg && *cfg) {
    size_t total = 0;
    const char* p = cfg;
    while (*p == ':') {
      char* end = nullptr;
      const unsigned long long kib = std::strtoull(p + 1, &end, 10);
      if (end == p + 1 || *end != ':') break;
      const char* q = end;
      const unsigned long long count = std::strtoull(q + 1, &end, 10);
      if (end == q + 1) break;
      total += size_t(kib) * 1024 * size_t(count);
      p = end;
    }
    if (total > 0) return total;
  }
  int major = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9 ? (size_t(32) << 20) : (size_t(4) << 20);
}

struct Workspaces {
  std::mutex mu;
  std::map<std::pair<cublasHandle_t, cudaStream_t>, std::pair<DataPtr, size_t>> by_key;
};
Workspaces& workspaces() {
  static auto* w = new Workspaces();  // leaked: its blocks must not be freed after teardown
  return *w;
}

// The workspace of (handle, stream), allocated from the caching allocator for that stream on
// first use; the same memory is used by every call of that handle on that stream.
std::pair<void*, size_t> cublas_workspace(cublasHandle_t h, cudaStream_t s, int device) {
  Workspaces& w = workspaces();
  std::lock_guard<std::mutex> g(w.mu);
  auto it = w.by_key.find({h, s});
  if (it == w.by_key.end()) {
    const size_t n = cublas_workspace_bytes(device);
    it = w.by_key.emplace(std::make_pair(h, s), std::make_pair(caching_allocator()->allocate(n), n))
             .first;
  }
  return {it->second.first.get(), it->second.second};
}

}  // namespace

void clear_cublas_workspaces() {
  Workspaces& w = workspaces();
  std::map<std::pair<cublasHandle_t, cudaStream_t>, std::pair<DataPtr, size_t>> old;
  {
    std::lock_guard<std::mutex> g(w.mu);
    old.swap(w.by_key);
  }
  // `old` frees the blocks here, back to the caching allocator for their streams.
}

cublasContext* cublas_handle() {
  const int d = raw_current_device();
  cublasHandle_t h = thread_handle<cublasHandle_t>(d, [] {
    cublasHandle_t created = nullptr;
    check_cublas_status(cublasCreate(&created), "cublasCreate");
    return created;
  });
  cudaStream_t s = current_raw_stream(d);
  check_cublas_status(cublasSetStream(h, s), "cublasSetStream");
  // cublasSetStream resets the workspace to cuBLAS's own pool: set ours again every time.
  const auto [ws, n] = cublas_workspace(h, s, d);
  check_cublas_status(cublasSetWorkspace(h, ws, n), "cublasSetWorkspace");
  return h;
}

cublasLtContext* cublaslt_handle() {
  // cuBLASLt takes the stream and workspace with each call.
  return thread_handle<cublasLtHandle_t>(raw_current_device(), [] {
    cublasLtHandle_t created = nullptr;
    check_cublas_status(cublasLtCreate(&created), "cublasLtCreate");
    return created;
  });
}

cusolverDnContext* cusolver_handle() {
  const int d = raw_current_device();
  cusolverDnHandle_t h = thread_handle<cusolverDnHandle_t>(d, [] {
    cusolverDnHandle_t created = nullptr;
    check_cusolver_status(cusolverDnCreate(&created), "cusolverDnCreate");
    return created;
  });
  check_cusolver_status(cusolverDnSetStream(h, current_raw_stream(d)), "cusolverDnSetStream");
  return h;
}

cudnnContext* cudnn_handle() {
  const int d = raw_current_device();
  cudnnHandle_t h = thread_handle<cudnnHandle_t>(d, [] {
    cudnnHandle_t created = nullptr;
    check_cudnn_status(cudnnCreate(&created), "cudnnCreate");
    return created;
  });
  check_cudnn_status(cudnnSetStream(h, current_raw_stream(d)), "cudnnSetStream");
  return h;
}

}  // namespace ember::cuda
