// Loading libember_cuda.so and the no-GPU stand-in of the CUDA hooks (Note [CUDA hooks],
// Note [CUDA backend library]).
#include "core/cuda_hooks.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "ember/error.h"
#include "ember/version.h"

namespace ember::cuda {
namespace {

std::atomic<const CudaHooks*> g_hooks{nullptr};
std::string g_load_error;

// The directory libember.so was loaded from (its own address resolved by dladdr), with a slash.
std::string own_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&load_cuda), &info) || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

bool try_load() {
  if (const char* off = std::getenv("EMBER_DISABLE_CUDA"); off && *off && std::string(off) != "0") {
    g_load_error = "EMBER_DISABLE_CUDA is set";
    return false;
  }
  std::string path;
  if (const char* p = std::getenv("EMBER_CUDA_LIBRARY"); p && *p)
    path = p;
  else
    path = own_directory() + "libember_cuda.so";
  // RTLD_GLOBAL: the backend's kernels and Python extensions built against it see one copy of
  // its symbols. Its static initialisers install the hooks (or leave them out without a GPU).
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char* e = dlerror();
    g_load_error = std::string("could not load ") + path + ": " + (e ? e : "unknown error");
    return false;
  }
  if (!g_hooks.load()) {
    // libember_cuda installs its hooks only when a GPU is present; it says why not.
    using ReasonFn = const char* (*)();
    auto reason = reinterpret_cast<ReasonFn>(dlsym(h, "ember_cuda_unavailable_reason"));
    const char* why = reason ? reason() : nullptr;
    g_load_error = path + " found no CUDA device" + (why && *why ? ": " : "") + (why ? why : "");
    return false;
  }
  return true;
}

const CudaHooks& stand_in() {
  static const CudaHooks* h = new CudaHooks();  // leaked: used until exit
  return *h;
}

}  // namespace

// Note [Loading the CUDA backend]
// The first caller loads the library under a mutex; everyone after reads the cached answer.
// The library's static initialisers run inside dlopen and may reach code that asks about CUDA
// again (a DeviceGuard, an allocation): on the loading thread such a nested call answers from
// what is installed so far instead of waiting for itself (std::call_once would deadlock).
bool load_cuda() {
  static std::mutex mu;
  static std::atomic<int> state{0};  // 0: not tried, 2: done
  static bool available = false;
  thread_local bool loading = false;
  if (state.load(std::memory_order_acquire) == 2) return available;
  if (loading) {
    const CudaHooks* h = g_hooks.load(std::memory_order_acquire);
    return h && h->device_count() > 0;
  }
  std::lock_guard<std::mutex> g(mu);
  if (state.load(std::memory_order_relaxed) != 2) {
    loading = true;
    const bool ok = try_load();
    loading = false;
    const CudaHooks* h = g_hooks.load(std::memory_order_acquire);
    available = ok && h && h->device_count() > 0;
    state.store(2, std::memory_order_release);
  }
  return available;
}

std::string cuda_load_error() {
  load_cuda();
  return g_load_error;
}

const CudaHooks& cuda_hooks() {
  if (const CudaHooks* h = g_hooks.load(std::memory_order_acquire)) return *h;
  load_cuda();
  const CudaHooks* h = g_hooks.load(std::memory_order_acquire);
  return h ? *h : stand_in();
}

void register_cuda_hooks(const CudaHooks* h) { g_hooks.store(h, std::memory_order_release); }

void no_cuda(const char* what) {
  std::string why = cuda_load_error();
  EMBER_THROW(Error, "[", what, "] no CUDA GPU is available",
              why.empty() ? std::string() : " (" + why + ")",
              "; check torch.cuda.is_available() before using cuda tensors");
}

// ---- the stand-in: everything that needs a GPU raises ----

void CudaHooks::set_device(int) const { no_cuda("cuda.set_device"); }
int CudaHooks::exchange_device(int) const { no_cuda("cuda.device"); }
void CudaHooks::synchronize(int) const { no_cuda("cuda.synchronize"); }
DeviceProperties CudaHooks::device_properties(int) const { no_cuda("cuda.get_device_properties"); }
std::pair<int64_t, int64_t> CudaHooks::mem_get_info(int) const { no_cuda("cuda.mem_get_info"); }
Stream CudaHooks::stream_from_pool(bool, int) const { no_cuda("cuda.Stream"); }
Stream CudaHooks::create_stream(int, int) const { no_cuda("cuda.Stream"); }
Stream CudaHooks::current_stream(int) const { no_cuda("cuda.current_stream"); }
Stream CudaHooks::default_stream(int) const { no_cuda("cuda.default_stream"); }
void CudaHooks::set_current_stream(const Stream&) const { no_cuda("cuda.set_stream"); }
bool CudaHooks::stream_query(const Stream&) const { no_cuda("cuda.Stream.query"); }
void CudaHooks::stream_synchronize(const Stream&) const { no_cuda("cuda.Stream.synchronize"); }
int CudaHooks::stream_priority(const Stream&) const { no_cuda("cuda.Stream.priority"); }
void* CudaHooks::event_create(int, unsigned) const { no_cuda("cuda.Event"); }
void CudaHooks::event_destroy(void*, int) const {}
void CudaHooks::event_record(void*, const Stream&) const { no_cuda("cuda.Event.record"); }
void CudaHooks::event_block(void*, const Stream&) const { no_cuda("cuda.Event.wait"); }
bool CudaHooks::event_query(void*) const { no_cuda("cuda.Event.query"); }
void CudaHooks::event_synchronize(void*) const { no_cuda("cuda.Event.synchronize"); }
float CudaHooks::event_elapsed_ms(void*, void*) const { no_cuda("cuda.Event.elapsed_time"); }
std::map<std::string, int64_t> CudaHooks::memory_stats(int) const { return {}; }
void CudaHooks::reset_peak_memory_stats(int) const {}
std::string CudaHooks::memory_summary(int, bool) const {
  return "No CUDA GPU is available: the CUDA caching allocator holds no memory.\n";
}
void CudaHooks::set_memory_fraction(double, int) const {
  no_cuda("cuda.set_per_process_memory_fraction");
}
void CudaHooks::record_stream(const Tensor&, const Stream&) const {
  no_cuda("Tensor.record_stream");
}
Tensor CudaHooks::pin_memory(const Tensor&) const { no_cuda("Tensor.pin_memory"); }
void CudaHooks::manual_seed(uint64_t, int) const {}
MempoolId CudaHooks::graph_pool_handle() const { no_cuda("cuda.graph_pool_handle"); }
void* CudaHooks::graph_create() const { no_cuda("cuda.CUDAGraph"); }
void CudaHooks::graph_destroy(void*) const {}
void CudaHooks::graph_capture_begin(void*, MempoolId) const { no_cuda("CUDAGraph.capture_begin"); }
void CudaHooks::graph_capture_end(void*) const { no_cuda("CUDAGraph.capture_end"); }
void CudaHooks::graph_replay(void*) const { no_cuda("CUDAGraph.replay"); }
void CudaHooks::graph_reset(void*) const {}
MempoolId CudaHooks::graph_pool(void*) const { no_cuda("CUDAGraph.pool"); }

}  // namespace ember::cuda

namespace ember {
bool cuda_is_available() { return cuda::load_cuda(); }
int cuda_device_count() { return cuda::load_cuda() ? cuda::cuda_hooks().device_count() : 0; }
}  // namespace ember
