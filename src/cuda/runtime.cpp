// The CUDA hooks (Note [CUDA hooks]): devices, streams, events, memory, pinned copies and
// generators, and the registration of the hooks when libember_cuda.so is loaded on a machine
// with a GPU. Graphs are in graphs.cpp, library handles in handles.cpp.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "core/cuda_hooks.h"
#include "cuda/cuda_context.h"
#include "cuda/runtime_internal.h"
#include "ember/generator.h"
#include "ember/storage.h"
#include "ember/tensor_impl.h"

namespace ember::cuda {

// ---- devices ----

// cudaGetDeviceCount fails (no driver, stub libcuda, no device) without printing anything; any
// failure means "no GPU". Cached: the answer cannot change within a process.
namespace {
cudaError_t g_count_error = cudaSuccess;
}  // namespace

int raw_device_count() {
  static const int n = [] {
    int count = 0;
    g_count_error = cudaGetDeviceCount(&count);
    if (g_count_error != cudaSuccess) {
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

int checked_device(int device, const char* op) {
  check_not_forked();
  if (device < 0) return raw_current_device();
  const int n = raw_device_count();
  EMBER_CHECK_INDEX(device < n, "[", op, "] invalid device index ", device, ": there ",
                    n == 1 ? "is " : "are ", n, " CUDA device", n == 1 ? "" : "s",
                    " (valid indices 0..", n - 1, ")");
  return device;
}

RawDeviceGuard::RawDeviceGuard(int device) {
  const int cur = raw_current_device();
  if (cur != device) {
    EMBER_CUDA_CHECK(cudaSetDevice(device));
    prev_ = cur;
  }
}
RawDeviceGuard::~RawDeviceGuard() {
  if (prev_ >= 0) (void)cudaSetDevice(prev_);
}

// ---- fork safety (Note [CUDA in forked children]) ----

namespace {
std::atomic<bool> g_initialized{false};
std::atomic<bool> g_bad_fork{false};

void on_fork_child() {
  if (g_initialized.load(std::memory_order_relaxed)) g_bad_fork.store(true);
}
}  // namespace

void check_not_forked() {
  if (g_bad_fork.load(std::memory_order_relaxed))
    EMBER_THROW(Error,
                "[cuda] cannot re-initialise CUDA in a forked subprocess: the parent used CUDA "
                "before fork(). Use CUDA only in the parent, or start workers with the 'spawn' "
                "start method");
}

void lazy_init() {
  check_not_forked();
  if (!g_initialized.load(std::memory_order_relaxed))
    g_initialized.store(true, std::memory_order_relaxed);
}

// ---- streams ----

namespace {

// Note [CUDA stream ids]
// A Stream names its stream by (device, id) and carries the cudaStream_t. Id 0 is the legacy
// default stream (handle null); ids 1..32 are the low-priority pool, 33..64 the high-priority
// pool (cudaStreamNonBlocking, created on first use, handed out round robin as
// c10::cuda::getStreamFromPool); ids from 65 on are streams made by create_stream, kept for the
// rest of the process. Every id maps back to its handle, so a Stream whose handle does not
// match its id (a stale or forged value) is refused instead of queuing work on a wrong stream.
constexpr int kPoolSize = 32;
constexpr int64_t kLowBase = 1, kHighBase = kLowBase + kPoolSize,
                  kCreatedBase = kHighBase + kPoolSize;

struct DeviceStreams {
  std::once_flag pool_once;
  cudaStream_t low[kPoolSize] = {};
  cudaStream_t high[kPoolSize] = {};
  std::atomic<uint32_t> next_low{0}, next_high{0};
  std::atomic<bool> pool_ready{false};
  std::once_flag range_once;
  int least = 0, greatest = 0;  // priority range: least is the largest number
  std::mutex mu;
  std::unordered_map<int64_t, cudaStream_t> created;
};

std::atomic<int64_t> g_next_stream_id{kCreatedBase};

DeviceStreams& streams_of(int device) {
  // Leaked: streams stay valid for static destructors that still queue work.
  static DeviceStreams* all = new DeviceStreams[std::max(raw_device_count(), 1)];
  return all[device];
}

void init_priority_range(DeviceStreams& ds, int device) {
  std::call_once(ds.range_once, [&] {
    RawDeviceGuard g(device);
    EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&ds.least, &ds.greatest));
  });
}

void init_pool(DeviceStreams& ds, int device) {
  if (ds.pool_ready.load(std::memory_order_acquire)) return;
  std::call_once(ds.pool_once, [&] {
    init_priority_range(ds, device);
    RawDeviceGuard g(device);
    for (int i = 0; i < kPoolSize; ++i) {
      EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&ds.low[i], cudaStreamNonBlocking, ds.least));
      EMBER_CUDA_CHECK(
          cudaStreamCreateWithPriority(&ds.high[i], cudaStreamNonBlocking, ds.greatest));
    }
    ds.pool_ready.store(true, std::memory_order_release);
  });
}

// The current stream of each device on this thread (default: the legacy stream).
std::vector<Stream>& thread_streams() {
  thread_local std::vector<Stream> v = [] {
    std::vector<Stream> s;
    for (int d = 0; d < raw_device_count(); ++d) s.emplace_back(d, 0, nullptr);
    return s;
  }();
  return v;
}

Stream current_stream_of(int device) { return thread_streams()[size_t(device)]; }

}  // namespace

cudaStream_t stream_handle(const Stream& s, const char* op) {
  EMBER_CHECK_INDEX(s.device_index() >= 0, "[", op, "] the stream names no device (index ",
                    s.device_index(), ")");
  const int d = checked_device(s.device_index(), op);
  const int64_t id = s.id();
  if (id == 0) return nullptr;
  DeviceStreams& ds = streams_of(d);
  cudaStream_t h = nullptr;
  if (id >= kLowBase && id < kCreatedBase) {
    if (ds.pool_ready.load(std::memory_order_acquire))
      h = id < kHighBase ? ds.low[id - kLowBase] : ds.high[id - kHighBase];
  } else {
    std::lock_guard<std::mutex> g(ds.mu);
    auto it = ds.created.find(id);
    if (it != ds.created.end()) h = it->second;
  }
  EMBER_CHECK(h && (s.stream() == nullptr || s.stream() == h), "[", op, "] stream id ", id,
              " on cuda:", d, " is not a stream this process created");
  return h;
}

bool stream_is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t err = cudaStreamIsCapturing(stream, &status);
  if (err == cudaErrorStreamCaptureImplicit) {
    (void)cudaGetLastError();
    return true;
  }
  check(err, "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

cudaStream_t current_raw_stream(int device) {
  lazy_init();  // every launch comes here: a context exists from now on
  const int d = device < 0 ? raw_current_device() : device;
  std::vector<Stream>& v = thread_streams();
  EMBER_CHECK_INDEX(d < int(v.size()), "[cuda] invalid device index ", d, " for ", v.size(),
                    " CUDA device(s)");
  return static_cast<cudaStream_t>(v[size_t(d)].stream());
}

void check_not_capturing(const char* op) {
  if (stream_is_capturing(current_raw_stream()))
    EMBER_THROW(Error, "[", op,
                "] cannot run while a CUDA graph is being captured: it synchronises with the "
                "host, which a graph cannot record; run it before capture_begin() or after "
                "capture_end()");
}

void sync_current_stream() {
  check_not_capturing("synchronize");
  EMBER_CUDA_CHECK(cudaStreamSynchronize(current_raw_stream()));
}

namespace {

// The flags ember::Event passes are the runtime's own (cuda_api.cpp).
static_assert(cudaEventBlockingSync == 1u && cudaEventDisableTiming == 2u &&
              cudaEventInterprocess == 4u);

// A copy of `t`'s geometry for a pinned buffer: the same strides when they describe a dense,
// non-overlapping layout (a permutation of contiguous strides), else contiguous strides.
std::vector<int64_t> pinned_strides(const Tensor& t) {
  const int64_t nd = t.dim();
  std::vector<int64_t> perm(static_cast<size_t>(nd));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return t.stride(a) < t.stride(b); });
  bool dense = true;
  int64_t expected = 1;
  for (int64_t k : perm) {
    if (t.size(k) == 1) continue;
    if (t.stride(k) != expected) {
      dense = false;
      break;
    }
    expected *= t.size(k);
  }
  if (dense) return std::vector<int64_t>(t.strides().begin(), t.strides().end());
  std::vector<int64_t> st(static_cast<size_t>(nd));
  int64_t s = 1;
  for (int64_t i = nd - 1; i >= 0; --i) {
    st[size_t(i)] = s;
    s *= std::max<int64_t>(t.size(i), 1);
  }
  return st;
}

class Hooks final : public CudaHooks {
 public:
  // ---- devices ----
  int device_count() const override { return raw_device_count(); }
  int current_device() const override {
    check_not_forked();
    return raw_current_device();
  }
  void set_device(int index) const override {
    const int d = checked_device(index, "cuda.set_device");
    lazy_init();
    EMBER_CUDA_CHECK(cudaSetDevice(d));
  }
  int exchange_device(int index) const override {
    lazy_init();  // before any runtime call: the driver is unusable in a forked child
    const int prev = raw_current_device();
    if (index < 0 || index == prev) return prev;
    checked_device(index, "cuda.device");
    EMBER_CUDA_CHECK(cudaSetDevice(index));
    return prev;
  }
  void synchronize(int device) const override {
    const int d = checked_device(device, "cuda.synchronize");
    lazy_init();
    check_not_capturing("cuda.synchronize");
    RawDeviceGuard g(d);
    EMBER_CUDA_CHECK(cudaDeviceSynchronize());
  }
  DeviceProperties device_properties(int index) const override {
    const int d = checked_device(index, "cuda.get_device_properties");
    check_not_forked();
    static std::mutex mu;
    static std::unordered_map<int, DeviceProperties> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(d);
    if (it != cache.end()) return it->second;
    cudaDeviceProp p{};
    EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    DeviceProperties out;
    out.name = p.name;
    out.major = p.major;
    out.minor = p.minor;
    out.total_memory = int64_t(p.totalGlobalMem);
    out.multi_processor_count = p.multiProcessorCount;
    out.is_integrated = p.integrated;
    out.is_multi_gpu_board = p.isMultiGpuBoard;
    out.max_threads_per_multi_processor = p.maxThreadsPerMultiProcessor;
    out.warp_size = p.warpSize;
    out.l2_cache_size = p.l2CacheSize;
    cache.emplace(d, out);
    return out;
  }
  std::pair<int64_t, int64_t> mem_get_info(int index) const override {
    const int d = checked_device(index, "cuda.mem_get_info");
    lazy_init();
    RawDeviceGuard g(d);
    size_t free_b = 0, total_b = 0;
    EMBER_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return {int64_t(free_b), int64_t(total_b)};
  }

  // ---- streams ----
  Stream stream_from_pool(bool high_priority, int device) const override {
    const int d = checked_device(device, "cuda.getStreamFromPool");
    lazy_init();
    DeviceStreams& ds = streams_of(d);
    init_pool(ds, d);
    const uint32_t i =
        (high_priority ? ds.next_high : ds.next_low).fetch_add(1, std::memory_order_relaxed) %
        kPoolSize;
    return high_priority ? Stream(d, kHighBase + i, ds.high[i])
                         : Stream(d, kLowBase + i, ds.low[i]);
  }
  Stream create_stream(int device, int priority) const override {
    const int d = checked_device(device, "cuda.Stream");
    lazy_init();
    DeviceStreams& ds = streams_of(d);
    init_priority_range(ds, d);
    // Lower numbers are higher priorities; the runtime accepts [greatest, least].
    const int p = std::clamp(priority, ds.greatest, ds.least);
    RawDeviceGuard g(d);
    cudaStream_t h = nullptr;
    EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&h, cudaStreamNonBlocking, p));
    const int64_t id = g_next_stream_id.fetch_add(1);
    std::lock_guard<std::mutex> lock(ds.mu);
    ds.created.emplace(id, h);
    return Stream(d, id, h);
  }
  Stream current_stream(int device) const override {
    const int d = checked_device(device, "cuda.current_stream");
    check_not_forked();
    return current_stream_of(d);
  }
  Stream default_stream(int device) const override {
    const int d = checked_device(device, "cuda.default_stream");
    check_not_forked();
    return Stream(d, 0, nullptr);
  }
  void set_current_stream(const Stream& s) const override {
    check_not_forked();
    cudaStream_t h = stream_handle(s, "cuda.set_stream");
    thread_streams()[size_t(s.device_index())] = Stream(s.device_index(), s.id(), h);
  }
  bool stream_query(const Stream& s) const override {
    cudaStream_t h = stream_handle(s, "cuda.Stream.query");
    lazy_init();
    RawDeviceGuard g(s.device_index());
    cudaError_t err = cudaStreamQuery(h);
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err, "cudaStreamQuery");
    return true;
  }
  void stream_synchronize(const Stream& s) const override {
    cudaStream_t h = stream_handle(s, "cuda.Stream.synchronize");
    lazy_init();
    RawDeviceGuard g(s.device_index());
    if (stream_is_capturing(h))
      EMBER_THROW(Error,
                  "[cuda.Stream.synchronize] cannot run while a CUDA graph is being captured: "
                  "it synchronises with the host; synchronise after capture_end()");
    EMBER_CUDA_CHECK(cudaStreamSynchronize(h));
  }
  int stream_priority(const Stream& s) const override {
    cudaStream_t h = stream_handle(s, "cuda.Stream.priority");
    if (!h) return 0;
    lazy_init();
    int p = 0;
    EMBER_CUDA_CHECK(cudaStreamGetPriority(h, &p));
    return p;
  }
  bool is_current_stream_capturing() const override {
    return stream_is_capturing(current_raw_stream());
  }

  // ---- events ----
  void* event_create(int device, unsigned flags) const override {
    const int d = checked_device(device, "cuda.Event");
    lazy_init();
    RawDeviceGuard g(d);
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    return e;
  }
  void event_destroy(void* event, int device) const override {
    // Called from destructors (also at exit, after the runtime may be gone): errors are dropped.
    if (!event || g_bad_fork.load()) return;
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    if (device >= 0 && device != cur) (void)cudaSetDevice(device);
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
    if (device >= 0 && device != cur) (void)cudaSetDevice(cur);
    (void)cudaGetLastError();
  }
  void event_record(void* event, const Stream& s) const override {
    cudaStream_t h = stream_handle(s, "cuda.Event.record");
    lazy_init();
    RawDeviceGuard g(s.device_index());
    EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), h));
  }
  void event_block(void* event, const Stream& s) const override {
    cudaStream_t h = stream_handle(s, "cuda.Event.wait");
    lazy_init();
    RawDeviceGuard g(s.device_index());
    EMBER_CUDA_CHECK(cudaStreamWaitEvent(h, static_cast<cudaEvent_t>(event), 0));
  }
  bool event_query(void* event) const override {
    lazy_init();
    cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err, "cudaEventQuery");
    return true;
  }
  void event_synchronize(void* event) const override {
    lazy_init();
    check_not_capturing("cuda.Event.synchronize");
    EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }
  float event_elapsed_ms(void* start, void* end) const override {
    lazy_init();
    float ms = 0;
    cudaError_t err =
        cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      EMBER_THROW(Error,
                  "[cuda.Event.elapsed_time] the work recorded before an event has not finished "
                  "yet: call synchronize() on the end event first");
    }
    check(err, "cudaEventElapsedTime");
    return ms;
  }

  // ---- the caching allocator (src/cuda/cuda_allocator.cpp) ----
  std::map<std::string, int64_t> memory_stats(int device) const override {
    return allocator_stats(checked_device(device, "cuda.memory_stats"));
  }
  void reset_peak_memory_stats(int device) const override {
    allocator_reset_peak(checked_device(device, "cuda.reset_peak_memory_stats"));
  }
  void empty_cache() const override {
    check_not_forked();
    allocator_empty_cache();
  }
  std::string memory_summary(int device, bool abbreviated) const override {
    return allocator_summary(checked_device(device, "cuda.memory_summary"), abbreviated);
  }
  void set_memory_fraction(double fraction, int device) const override {
    allocator_set_fraction(fraction,
                           checked_device(device, "cuda.set_per_process_memory_fraction"));
  }
  void record_stream(const Tensor& t, const Stream& s) const override {
    cudaStream_t h = stream_handle(s, "Tensor.record_stream");
    lazy_init();
    void* block = t.storage().defined() ? t.storage().data() : nullptr;
    if (!block) return;  // an empty tensor holds no block
    allocator_record_stream(block, h,
                            t.device().index() < 0 ? raw_current_device() : t.device().index());
  }

  // ---- pinned host memory ----
  Tensor pin_memory(const Tensor& t) const override {
    lazy_init();
    const std::vector<int64_t> strides = pinned_strides(t);
    size_t nbytes = 0;
    if (t.numel() > 0) {
      int64_t extent = 1;
      for (int64_t i = 0; i < t.dim(); ++i) extent += (t.size(i) - 1) * strides[size_t(i)];
      nbytes = size_t(extent) * t.element_size();
    }
    Allocator* a = pinned_allocator();
    Storage st(make_intrusive<StorageImpl>(a->allocate(nbytes), nbytes, a));
    Tensor out(make_intrusive<TensorImpl>(std::move(st), t.dtype(), t.sizes(), strides, 0));
    if (t.numel() > 0) out.copy_(t);
    return out;
  }
  bool is_pinned(const void* host_ptr) const override {
    return host_ptr && is_pinned_ptr(host_ptr);
  }

  // ---- generators ----
  void manual_seed(uint64_t seed, int device) const override {
    const int d = checked_device(device, "cuda.manual_seed");
    default_generator(Device(kCUDA, int8_t(d))).manual_seed(seed);
  }

  // ---- CUDA Graphs (graphs.cpp) ----
  MempoolId graph_pool_handle() const override {
    check_not_forked();
    return new_graph_pool_handle();
  }
  void* graph_create() const override { return graph_new(); }
  void graph_destroy(void* graph) const override { graph_delete(graph); }
  void graph_capture_begin(void* graph, MempoolId pool) const override { graph_begin(graph, pool); }
  void graph_capture_end(void* graph) const override { graph_end(graph); }
  void graph_replay(void* graph) const override { graph_launch(graph); }
  void graph_reset(void* graph) const override { graph_clear(graph); }
  MempoolId graph_pool(void* graph) const override { return graph_pool_of(graph); }
};

// Installed only with a GPU: without one, libember keeps its stand-in (whose functions raise
// "no CUDA GPU") and asks ember_cuda_unavailable_reason() why.
[[maybe_unused]] const bool g_register_hooks = [] {
  if (raw_device_count() <= 0) return false;
  static Hooks hooks;
  pthread_atfork(nullptr, nullptr, &on_fork_child);
  register_cuda_hooks(&hooks);
  return true;
}();

}  // namespace
}  // namespace ember::cuda

// Why no hooks were installed: libember looks this up with dlsym after loading the library
// (Note [CUDA backend library]) and shows it in "no CUDA GPU" errors.
extern "C" __attribute__((visibility("default"))) const char* ember_cuda_unavailable_reason() {
  using namespace ember::cuda;
  if (raw_device_count() > 0) return "";
  if (g_count_error != cudaSuccess) return cudaGetErrorString(g_count_error);
  return "cudaGetDeviceCount reports no device";
}
