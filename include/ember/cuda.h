#pragma once
/// The CUDA runtime API: devices, streams, events, the caching allocator's statistics, pinned
/// host memory and CUDA Graphs (libtorch: torch/cuda.h, c10/cuda/CUDAStream.h, CUDAGuard.h,
/// ATen/cuda/CUDAEvent.h, CUDAGraph.h, c10/cuda/CUDACachingAllocator.h).
///
/// Note [CUDA backend library]
/// The CUDA backend is its own shared library, libember_cuda.so, next to libember.so. libember
/// loads it (dlopen) the first time anything asks about CUDA: is_available(), a "cuda" tensor,
/// one of the functions below. Loading fails quietly without a CUDA runtime or without a GPU,
/// and ember is then a CPU-only library: is_available() is false, device_count() is 0, and the
/// functions here that need a GPU raise ember::Error ("[cuda] no CUDA GPU is available ...").
/// EMBER_CUDA_LIBRARY names another file to load; EMBER_DISABLE_CUDA=1 skips loading.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/device.h"
#include "ember/tensor.h"
#include "ember/utils.h"

namespace ember::cuda {

// is_available(), device_count() and cudnn_is_available() are in ember/utils.h.

/// The device selected on this thread (0 without a GPU).
int current_device();
/// Selects device `index` on this thread (IndexError outside [0, device_count())).
void set_device(int index);
/// Waits for all work on `device` (-1: the current device).
void synchronize(int device = -1);
/// Seeds the default CUDA generator of the current device / of every device.
void manual_seed(uint64_t seed);
void manual_seed_all(uint64_t seed);

/// What cudaGetDeviceProperties reports, with torch.cuda's field names.
struct DeviceProperties {
  std::string name;
  int major = 0;
  int minor = 0;
  int64_t total_memory = 0;
  int multi_processor_count = 0;
  int is_integrated = 0;
  int is_multi_gpu_board = 0;
  int max_threads_per_multi_processor = 0;
  int warp_size = 32;
  int64_t l2_cache_size = 0;
};
/// Properties of device `index` (-1: current).
DeviceProperties get_device_properties(int index = -1);
/// The device's name, e.g. "NVIDIA H100 80GB HBM3".
std::string get_device_name(int index = -1);
/// (major, minor) compute capability.
std::pair<int, int> get_device_capability(int index = -1);
/// (free, total) bytes of device memory, as cudaMemGetInfo.
std::pair<int64_t, int64_t> mem_get_info(int index = -1);

/// A CUDA stream: a value type naming (device, stream), as c10::cuda::CUDAStream. The default
/// stream of a device is the legacy default stream (handle null, id 0).
class Stream {
 public:
  Stream() = default;
  Stream(int device, int64_t id, void* handle) : device_(device), id_(id), handle_(handle) {}
  /// The stream's device index.
  int device_index() const { return device_; }
  Device device() const { return Device(kCUDA, int8_t(device_)); }
  /// ember's id of the stream (0: the default stream).
  int64_t id() const { return id_; }
  /// The cudaStream_t, as void*.
  void* stream() const { return handle_; }
  /// True when all work queued on the stream has finished.
  bool query() const;
  /// Waits for all work queued on the stream.
  void synchronize() const;
  /// The stream's priority (lower is higher priority).
  int priority() const;
  bool operator==(const Stream& o) const { return device_ == o.device_ && id_ == o.id_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  int device_ = 0;
  int64_t id_ = 0;
  void* handle_ = nullptr;
};
using CUDAStream = Stream;

/// A stream from the device's pool (round robin over 32 streams per priority), as
/// c10::cuda::getStreamFromPool.
Stream getStreamFromPool(bool high_priority = false, int device = -1);
/// A new stream owned by the caller's program for the rest of the process (torch.cuda.Stream()).
Stream create_stream(int device = -1, int priority = 0);
/// The stream work is queued on, on this thread, for `device` (-1: current).
Stream getCurrentCUDAStream(int device = -1);
/// The default (null) stream of `device`.
Stream getDefaultCUDAStream(int device = -1);
/// Makes `s` the current stream of its device on this thread.
void setCurrentCUDAStream(const Stream& s);
inline Stream current_stream(int device = -1) { return getCurrentCUDAStream(device); }
inline Stream default_stream(int device = -1) { return getDefaultCUDAStream(device); }
inline void set_stream(const Stream& s) { setCurrentCUDAStream(s); }

/// Selects a device for a scope and restores the previous one (c10::cuda::CUDAGuard).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  /// Index -1 ("cuda") keeps the current device.
  explicit DeviceGuard(Device device) : DeviceGuard(int(device.index())) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
};
using CUDAGuard = DeviceGuard;

/// Makes `s` current (and selects its device) for a scope (c10::cuda::CUDAStreamGuard).
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& s);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream prev_stream_;
  int prev_device_ = -1;
};
using CUDAStreamGuard = StreamGuard;

/// A CUDA event (at::cuda::CUDAEvent / torch.cuda.Event). Created lazily on the first record.
class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false, bool interprocess = false);
  ~Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  /// Records the event on `s` (default: the current stream).
  void record();
  void record(const Stream& s);
  /// Makes `s` (default: current) wait for the work recorded before this event.
  void block(const Stream& s) const;
  void wait() const;
  /// True when the recorded work has finished (true if never recorded).
  bool query() const;
  /// Waits for the recorded work.
  void synchronize() const;
  /// Milliseconds from this event to `end` (both recorded with enable_timing; ValueError
  /// otherwise).
  float elapsed_time(const Event& end) const;
  bool is_created() const { return handle_ != nullptr; }
  /// The cudaEvent_t, as void*.
  void* event() const { return handle_; }

 private:
  void* handle_ = nullptr;
  int device_ = -1;
  unsigned flags_ = 0;
  bool timing_ = false;
};
using CUDAEvent = Event;

// ---- the caching allocator (Note [CUDA caching allocator] in src/core/caching_allocator.h) ----

/// Bytes in blocks handed out to tensors on `device` (-1: current).
int64_t memory_allocated(int device = -1);
/// Peak of memory_allocated since the start or reset_peak_memory_stats().
int64_t max_memory_allocated(int device = -1);
/// Bytes held from cudaMalloc (allocated + cached).
int64_t memory_reserved(int device = -1);
int64_t max_memory_reserved(int device = -1);
/// Resets the peaks to the current values.
void reset_peak_memory_stats(int device = -1);
/// Returns cached blocks that hold no tensor to the driver.
void empty_cache();
/// torch.cuda.memory_stats: "allocated_bytes.all.current", "reserved_bytes.all.peak",
/// "num_alloc_retries", "num_ooms", ... (PyTorch's keys).
std::map<std::string, int64_t> memory_stats(int device = -1);
/// torch.cuda.memory_summary's table.
std::string memory_summary(int device = -1, bool abbreviated = false);
/// Caps the memory the allocator may reserve on `device` to `fraction` of its total.
void set_per_process_memory_fraction(double fraction, int device = -1);
/// Marks `t`'s memory as used by `s`: its block is not reused until the work queued on `s`
/// when the tensor is freed has finished (Tensor.record_stream).
void record_stream(const Tensor& t, const Stream& s);

// ---- pinned host memory ----

/// A copy of CPU tensor `t` in page-locked memory (Tensor.pin_memory()). RuntimeError without a
/// GPU, as PyTorch.
Tensor pin_memory(const Tensor& t);
/// Whether `t` is a CPU tensor in page-locked memory.
bool is_pinned(const Tensor& t);

// ---- CUDA Graphs ----

/// An opaque id of a graph's private memory pool (torch.cuda.graph_pool_handle()).
struct MempoolId {
  uint64_t a = 0, b = 0;
};
/// A new id for a pool graphs may share.
MempoolId graph_pool_handle();

/// Captures the work queued on a stream and replays it (at::cuda::CUDAGraph). Capture must run
/// on a stream other than the default one; memory allocated during capture comes from a private
/// pool that stays reserved until reset(). Ops that synchronise the host raise during capture.
class CUDAGraph {
 public:
  CUDAGraph();
  ~CUDAGraph();
  CUDAGraph(const CUDAGraph&) = delete;
  CUDAGraph& operator=(const CUDAGraph&) = delete;
  /// Starts capturing the current stream's work (pool: share another graph's pool).
  void capture_begin(MempoolId pool = {});
  void capture_end();
  /// Launches the captured work on the current stream.
  void replay();
  /// Frees the graph and its pool.
  void reset();
  /// The id of the graph's memory pool.
  MempoolId pool() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Whether the current stream is capturing a graph.
bool is_current_stream_capturing();

}  // namespace ember::cuda
