#pragma once
// Note [CUDA hooks]
// libember never links the CUDA runtime (Note [CUDA backend library] in ember/cuda.h). What the
// core and the public API need from the GPU goes through this interface: libember_cuda.so
// implements it and installs it from a static initialiser when it is loaded, together with its
// allocator, device backend and kernel registrations. Without it, cuda_hooks() returns the
// stand-in whose device_count() is 0 and whose other functions raise "no CUDA GPU".
//
// Calls are virtual: none of them is on a per-element path. A kernel file inside libember_cuda
// uses src/cuda/cuda_context.h instead (the current cudaStream_t, the device guard, handles).

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "ember/cuda.h"

namespace ember::cuda {

class CudaHooks {
 public:
  virtual ~CudaHooks() = default;

  // ---- devices ----
  virtual int device_count() const { return 0; }
  virtual int current_device() const { return 0; }
  virtual void set_device(int index) const;
  /// Selects `index` and returns the previously selected device.
  virtual int exchange_device(int index) const;
  virtual void synchronize(int device) const;
  virtual DeviceProperties device_properties(int index) const;
  virtual std::pair<int64_t, int64_t> mem_get_info(int index) const;

  // ---- streams (Stream is a value type; the hooks own the cudaStream_t) ----
  virtual Stream stream_from_pool(bool high_priority, int device) const;
  virtual Stream create_stream(int device, int priority) const;
  virtual Stream current_stream(int device) const;
  virtual Stream default_stream(int device) const;
  virtual void set_current_stream(const Stream& s) const;
  virtual bool stream_query(const Stream& s) const;
  virtual void stream_synchronize(const Stream& s) const;
  virtual int stream_priority(const Stream& s) const;
  virtual bool is_current_stream_capturing() const { return false; }

  // ---- events (handles are cudaEvent_t as void*) ----
  virtual void* event_create(int device, unsigned flags) const;
  virtual void event_destroy(void* event, int device) const;
  virtual void event_record(void* event, const Stream& s) const;
  virtual void event_block(void* event, const Stream& s) const;
  virtual bool event_query(void* event) const;
  virtual void event_synchronize(void* event) const;
  virtual float event_elapsed_ms(void* start, void* end) const;

  // ---- the caching allocator ----
  virtual std::map<std::string, int64_t> memory_stats(int device) const;
  virtual void reset_peak_memory_stats(int device) const;
  virtual void empty_cache() const {}
  virtual std::string memory_summary(int device, bool abbreviated) const;
  virtual void set_memory_fraction(double fraction, int device) const;
  virtual void record_stream(const Tensor& t, const Stream& s) const;

  // ---- pinned host memory ----
  virtual Tensor pin_memory(const Tensor& t) const;
  virtual bool is_pinned(const void* host_ptr) const { return false; }

  // ---- generators ----
  virtual void manual_seed(uint64_t seed, int device) const;

  // ---- CUDA Graphs (the graph object is the hooks' own, as void*) ----
  virtual MempoolId graph_pool_handle() const;
  virtual void* graph_create() const;
  virtual void graph_destroy(void* graph) const;
  virtual void graph_capture_begin(void* graph, MempoolId pool) const;
  virtual void graph_capture_end(void* graph) const;
  virtual void graph_replay(void* graph) const;
  virtual void graph_reset(void* graph) const;
  virtual MempoolId graph_pool(void* graph) const;
};

/// The installed hooks (loading libember_cuda.so on the first call), or the no-GPU stand-in.
const CudaHooks& cuda_hooks();
/// Installs `h` (not owned): called by libember_cuda.so's static initialiser.
void register_cuda_hooks(const CudaHooks* h);
/// Loads libember_cuda.so once (thread-safe); true when the hooks are installed and a GPU is
/// present. Everything that may meet a "cuda" tensor first calls this.
bool load_cuda();
/// Why loading failed ("" when loaded or not yet tried): shown in "no GPU" errors.
std::string cuda_load_error();

/// Raises "[what] no CUDA GPU is available (...)" with the load error.
[[noreturn]] void no_cuda(const char* what);

}  // namespace ember::cuda
