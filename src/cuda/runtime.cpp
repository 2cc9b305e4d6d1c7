// The CUDA hooks (Note [CUDA hooks]): devices, streams, events, graphs, and the registration of
// libember_cuda.so's pieces when it is loaded.
#include <cuda_runtime.h>

#include "core/cuda_hooks.h"
#include "cuda/cuda_context.h"

namespace ember::cuda {

// cudaGetDeviceCount fails (no driver, stub libcuda, no device) without printing anything; any
// failure means "no GPU". Cached: the answer cannot change within a process.
int raw_device_count() {
  static const int n = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return count;
  }();
  return n;
}

int raw_current_device() {
  int d = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

cudaStream_t current_raw_stream(int) { return nullptr; }

void sync_current_stream() { EMBER_CUDA_CHECK(cudaStreamSynchronize(current_raw_stream())); }

namespace {

class Hooks final : public CudaHooks {
 public:
  int device_count() const override { return raw_device_count(); }
  int current_device() const override { return raw_current_device(); }
  void set_device(int index) const override { EMBER_CUDA_CHECK(cudaSetDevice(index)); }
  int exchange_device(int index) const override {
    int prev = raw_current_device();
    if (prev != index) EMBER_CUDA_CHECK(cudaSetDevice(index));
    return prev;
  }
};

[[maybe_unused]] const bool g_register_hooks = [] {
  static Hooks hooks;
  register_cuda_hooks(&hooks);
  return true;
}();

}  // namespace
}  // namespace ember::cuda
