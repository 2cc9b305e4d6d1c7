// The CUDA caching allocator on the device memory backend (Note [CUDA caching allocator]): the
// cudart calls behind caching::DeviceMemoryBackend, the ember::Allocator of kCUDA, and the
// allocator functions of cuda_context.h.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/caching_allocator.h"
#include "cuda/cuda_context.h"

namespace ember::cuda {

namespace {

// Selects `device` for a scope with the bare runtime calls (no hooks: this runs under the
// allocator's lock).
class RawDeviceGuard {
 public:
  explicit RawDeviceGuard(int device) {
    EMBER_CUDA_CHECK(cudaGetDevice(&prev_));
    if (prev_ != device) EMBER_CUDA_CHECK(cudaSetDevice(device));
  }
  ~RawDeviceGuard() {
    int now = prev_;
    if (cudaGetDevice(&now) == cudaSuccess && now != prev_) (void)cudaSetDevice(prev_);
  }
  RawDeviceGuard(const RawDeviceGuard&) = delete;
  RawDeviceGuard& operator=(const RawDeviceGuard&) = delete;

 private:
  int prev_ = 0;
};

class CudaMemoryBackend final : public caching::DeviceMemoryBackend {
 public:
  void* raw_malloc(size_t bytes, int device) override {
    RawDeviceGuard g(device);
    // cudaMalloc is allowed while another thread captures a graph only in relaxed mode; it
    // is not recorded into the graph either way.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    EMBER_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, bytes);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // out of memory: the caller frees its cache and retries
      return nullptr;
    }
    check(err, "cudaMalloc");
    return p;
  }
  void raw_free(void* ptr, int device) override {
    RawDeviceGuard g(device);
    EMBER_CUDA_CHECK(cudaFree(ptr));
  }
  void* create_event(int device) override {
    RawDeviceGuard g(device);
    cudaEvent_t ev = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    return ev;
  }
  void record_event(void* event, void* stream, int device) override {
    RawDeviceGuard g(device);
    EMBER_CUDA_CHECK(
        cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
  }
  bool query_event(void* event) override {
    cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err, "cudaEventQuery");
    return true;
  }
  void synchronize_event(void* event) override {
    EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }
  void destroy_event(void* event, int device) override {
    RawDeviceGuard g(device);
    EMBER_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  }
  void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) override {
    RawDeviceGuard g(device);
    EMBER_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  }
};

// EMBER_CUDA_ALLOC_CONF="max_split_size_mb:N" (PYTORCH_CUDA_ALLOC_CONF's option of that name).
size_t max_split_size_from_env() {
  const char* conf = std::getenv("EMBER_CUDA_ALLOC_CONF");
  if (!conf) return SIZE_MAX;
  const char* key = "max_split_size_mb:";
  const char* at = std::strstr(conf, key);
  if (!at) return SIZE_MAX;
  const long long mb = std::atoll(at + std::strlen(key));
  EMBER_CHECK_VALUE(mb > 20,
                    "[CUDA allocator] EMBER_CUDA_ALLOC_CONF: max_split_size_mb must be "
                    "more than 20 (the large segment size), got ",
                    mb);
  return size_t(mb) << 20;
}

caching::CachingAllocator& core() {
  // Leaked on purpose: tensors in static storage may be freed after main returns.
  static auto* a = [] {
    static CudaMemoryBackend backend;
    auto* c = new caching::CachingAllocator(&backend, raw_device_count(), "CUDA", kCUDA);
    c->set_max_split_size(max_split_size_from_env());
    return c;
  }();
  return *a;
}

int resolve(int device) { return device < 0 ? raw_current_device() : device; }

caching::PoolId pool_id(MempoolId id) { return caching::PoolId{id.a, id.b}; }

class CudaCachingAllocator final : public Allocator {
 public:
  // The current device's block, for work on its current stream (Storage::allocate selects the
  // tensor's device first).
  DataPtr allocate(size_t nbytes) override {
    const int dev = raw_current_device();
    const Device device(kCUDA, int8_t(dev));
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device);
    void* p = core().malloc(nbytes, dev, current_raw_stream(dev));
    return DataPtr(p, nullptr, &CudaCachingAllocator::release, device);
  }

  void copy_data(void* dst, const void* src, size_t n) const override {
    if (n == 0) return;
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, current_raw_stream()));
  }

 private:
  // A deleter runs in destructors: a failure (a broken context at exit) is reported, not thrown.
  static void release(void*, void* p) {
    try {
      core().free(p);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ember: warning: freeing CUDA memory failed: %s\n", e.what());
    }
  }
};

}  // namespace

Allocator* caching_allocator() {
  static auto* a = new CudaCachingAllocator();
  return a;
}

DataPtr scratch(size_t nbytes) { return caching_allocator()->allocate(nbytes); }

std::map<std::string, int64_t> allocator_stats(int device) {
  return core().memory_stats(resolve(device));
}
void allocator_reset_peak(int device) { core().reset_peak(resolve(device)); }
void allocator_empty_cache() { core().empty_cache(); }
std::string allocator_summary(int device, bool abbreviated) {
  return core().memory_summary(resolve(device), abbreviated);
}
void allocator_set_fraction(double fraction, int device) {
  core().set_memory_fraction(fraction, resolve(device));
}
void allocator_record_stream(void* ptr, cudaStream_t stream, int) {
  core().record_stream(ptr, stream);
}
void allocator_begin_pool(int device, MempoolId pool, cudaStream_t stream) {
  core().begin_allocate_to_pool(resolve(device), pool_id(pool), stream);
}
void allocator_end_pool(int device, MempoolId pool) {
  core().end_allocate_to_pool(resolve(device), pool_id(pool));
}
void allocator_release_pool(int device, MempoolId pool) {
  core().release_pool(resolve(device), pool_id(pool));
}

namespace {
[[maybe_unused]] const bool g_register_allocator = [] {
  if (raw_device_count() > 0) set_allocator(kCUDA, caching_allocator());
  return true;
}();
}  // namespace

}  // namespace ember::cuda
