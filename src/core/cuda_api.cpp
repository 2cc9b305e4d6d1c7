// ember/cuda.h: the public CUDA API, forwarded to the backend's hooks (Note [CUDA hooks]).
#include "core/cuda_hooks.h"
#include "ember/error.h"

namespace ember::cuda {
namespace {
const CudaHooks& h() { return cuda_hooks(); }
}  // namespace

int current_device() { return load_cuda() ? h().current_device() : 0; }
void set_device(int index) {
  const int n = h().device_count();
  if (n == 0) no_cuda("cuda.set_device");
  EMBER_CHECK_INDEX(index >= 0 && index < n, "[cuda.set_device] device index ", index,
                    " is out of range for ", n, " CUDA device(s)");
  h().set_device(index);
}
void synchronize(int device) { h().synchronize(device); }
void manual_seed(uint64_t seed) { h().manual_seed(seed, -1); }
void manual_seed_all(uint64_t seed) {
  const int n = load_cuda() ? h().device_count() : 0;
  for (int i = 0; i < n; ++i) h().manual_seed(seed, i);
}
DeviceProperties get_device_properties(int index) { return h().device_properties(index); }
std::string get_device_name(int index) { return h().device_properties(index).name; }
std::pair<int, int> get_device_capability(int index) {
  DeviceProperties p = h().device_properties(index);
  return {p.major, p.minor};
}
std::pair<int64_t, int64_t> mem_get_info(int index) { return h().mem_get_info(index); }

bool Stream::query() const { return h().stream_query(*this); }
void Stream::synchronize() const { h().stream_synchronize(*this); }
int Stream::priority() const { return h().stream_priority(*this); }
Stream getStreamFromPool(bool high_priority, int device) {
  return h().stream_from_pool(high_priority, device);
}
Stream create_stream(int device, int priority) { return h().create_stream(device, priority); }
Stream getCurrentCUDAStream(int device) { return h().current_stream(device); }
Stream getDefaultCUDAStream(int device) { return h().default_stream(device); }
void setCurrentCUDAStream(const Stream& s) { h().set_current_stream(s); }

DeviceGuard::DeviceGuard(int index) {
  const int prev = h().exchange_device(index);
  prev_ = prev == index ? -1 : prev;
}
DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) {
    try {
      h().exchange_device(prev_);
    } catch (...) {  // a destructor must not throw; the device stays selected
    }
  }
}

// As c10::cuda::CUDAStreamGuard: a stream of another device selects that device too, and the
// destructor restores both that device's previous stream and the previous device.
StreamGuard::StreamGuard(const Stream& s) {
  Stream prev = h().current_stream(s.device_index());
  const int prev_device = h().exchange_device(s.device_index());
  try {
    h().set_current_stream(s);
  } catch (...) {
    h().exchange_device(prev_device);
    throw;
  }
  prev_stream_ = prev;
  prev_device_ = prev_device;
}
StreamGuard::~StreamGuard() {
  try {
    h().set_current_stream(prev_stream_);
    h().exchange_device(prev_device_);
  } catch (...) {  // a destructor must not throw
  }
}

// cudaEventDisableTiming, cudaEventBlockingSync, cudaEventInterprocess.
Event::Event(bool enable_timing, bool blocking, bool interprocess)
    : flags_((enable_timing ? 0u : 2u) | (blocking ? 1u : 0u) | (interprocess ? 4u : 0u)),
      timing_(enable_timing) {
  // cudaEventInterprocess requires cudaEventDisableTiming.
  EMBER_CHECK(!(enable_timing && interprocess),
              "[cuda.Event] an interprocess event cannot record timing: pass "
              "enable_timing=false with interprocess=true");
}
Event::~Event() {
  if (handle_) h().event_destroy(handle_, device_);  // never throws
}
Event::Event(Event&& o) noexcept { *this = std::move(o); }
Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (handle_) h().event_destroy(handle_, device_);
    handle_ = o.handle_;
    device_ = o.device_;
    flags_ = o.flags_;
    timing_ = o.timing_;
    o.handle_ = nullptr;
  }
  return *this;
}
void Event::record() { record(getCurrentCUDAStream(-1)); }
void Event::record(const Stream& s) {
  if (!handle_) {
    handle_ = h().event_create(s.device_index(), flags_);
    device_ = s.device_index();
  }
  EMBER_CHECK(device_ == s.device_index(),
              "[cuda.Event.record] the event was created on cuda:", device_,
              " and cannot be recorded on a stream of cuda:", s.device_index());
  h().event_record(handle_, s);
}
void Event::block(const Stream& s) const {
  if (handle_) h().event_block(handle_, s);
}
void Event::wait() const {
  if (handle_) block(getCurrentCUDAStream(-1));  // nothing recorded: nothing to wait for
}
bool Event::query() const { return handle_ ? h().event_query(handle_) : true; }
void Event::synchronize() const {
  if (handle_) h().event_synchronize(handle_);
}
float Event::elapsed_time(const Event& end) const {
  EMBER_CHECK_VALUE(timing_ && end.timing_,
                    "[cuda.Event.elapsed_time] both events must be created with "
                    "enable_timing=True");
  EMBER_CHECK(handle_ && end.handle_,
              "[cuda.Event.elapsed_time] both events must be recorded before calling "
              "elapsed_time");
  EMBER_CHECK(device_ == end.device_, "[cuda.Event.elapsed_time] the events were recorded on ",
              "different devices (cuda:", device_, " and cuda:", end.device_, ")");
  return h().event_elapsed_ms(handle_, end.handle_);
}

int64_t memory_allocated(int device) { return memory_stats(device)["allocated_bytes.all.current"]; }
int64_t max_memory_allocated(int device) {
  return memory_stats(device)["allocated_bytes.all.peak"];
}
int64_t memory_reserved(int device) { return memory_stats(device)["reserved_bytes.all.current"]; }
int64_t max_memory_reserved(int device) { return memory_stats(device)["reserved_bytes.all.peak"]; }
void reset_peak_memory_stats(int device) { h().reset_peak_memory_stats(device); }
void empty_cache() { h().empty_cache(); }
std::map<std::string, int64_t> memory_stats(int device) { return h().memory_stats(device); }
std::string memory_summary(int device, bool abbreviated) {
  return h().memory_summary(device, abbreviated);
}
void set_per_process_memory_fraction(double fraction, int device) {
  EMBER_CHECK_VALUE(fraction >= 0 && fraction <= 1,
                    "[cuda.set_per_process_memory_fraction] invalid fraction ", fraction,
                    ": it must be between 0 and 1");
  h().set_memory_fraction(fraction, device);
}
void record_stream(const Tensor& t, const Stream& s) {
  EMBER_CHECK(t.defined(), "[record_stream] expected a cuda tensor, got an undefined tensor");
  EMBER_CHECK(t.is_cuda(), "[record_stream] expected a cuda tensor, got one on ", t.device());
  h().record_stream(t, s);
}

Tensor pin_memory(const Tensor& t) {
  EMBER_CHECK(t.defined(), "[pin_memory] expected a CPU tensor, got an undefined tensor");
  EMBER_CHECK(t.is_cpu(), "[pin_memory] cannot pin a '", t.device(),
              "' tensor: only dense CPU tensors can be pinned");
  if (is_pinned(t)) return t;  // as PyTorch: already page-locked
  return h().pin_memory(t);
}
bool is_pinned(const Tensor& t) {
  return t.defined() && t.is_cpu() && load_cuda() && h().is_pinned(t.data_ptr());
}

MempoolId graph_pool_handle() { return h().graph_pool_handle(); }

struct CUDAGraph::Impl {
  void* graph = nullptr;
};
CUDAGraph::CUDAGraph() : impl_(std::make_unique<Impl>()) { impl_->graph = h().graph_create(); }
CUDAGraph::~CUDAGraph() {
  if (impl_ && impl_->graph) h().graph_destroy(impl_->graph);
}
void CUDAGraph::capture_begin(MempoolId pool) { h().graph_capture_begin(impl_->graph, pool); }
void CUDAGraph::capture_end() { h().graph_capture_end(impl_->graph); }
void CUDAGraph::replay() { h().graph_replay(impl_->graph); }
void CUDAGraph::reset() { h().graph_reset(impl_->graph); }
MempoolId CUDAGraph::pool() const { return h().graph_pool(impl_->graph); }
bool is_current_stream_capturing() { return load_cuda() && h().is_current_stream_capturing(); }

}  // namespace ember::cuda
