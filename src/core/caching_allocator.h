#pragma once
// Note [CUDA caching allocator]
// Device memory is expensive to obtain (cudaMalloc synchronises the device and costs tens of
// microseconds) and cheap to keep, so freed blocks stay with the allocator and serve later
// requests, as PyTorch's CUDACachingAllocator does. The bookkeeping is plain C++ over a small
// DeviceMemoryBackend interface, so that it is tested on machines without a GPU; the cudart
// backend lives in src/cuda/cuda_allocator.cpp.
//
// - Sizes round up to 512 B. Requests up to 1 MiB come from the small pool, carved from 2 MiB
//   segments; larger ones from the large pool, whose segments are 20 MiB for requests under
//   10 MiB and the request rounded up to 2 MiB otherwise.
// - A request takes the smallest free block of its pool that belongs to the same stream and is
//   large enough (best fit on (stream, size)); the block is split when the rest is worth keeping
//   (small pool: at least 512 B; large pool: more than 1 MiB). A freed block merges with free
//   neighbours of its segment. Blocks belong to the stream they were allocated for: work queued
//   on that stream is ordered after the previous user's, so reuse needs no synchronisation.
// - record_stream(ptr, s): the block is used on another stream too. At its free, an event is
//   recorded on each such stream, and the block returns to its pool only once they have all
//   completed (polled on later allocations; empty_cache waits for them).
// - When the backend has no memory left (or the cap of set_memory_fraction is reached), every
//   cached segment holding no live block is returned and the request tried once more; then an
//   error says how much was asked for and where the memory is.
// - Graph private pools: between begin_allocate_to_pool and end_allocate_to_pool, allocations
//   on the capturing stream come from (and are freed back to) the pool's own segments, which
//   captured work keeps using on replay; they are returned only after release_pool, once no
//   graph uses the pool. While a capture is under way, events are neither queried nor recorded
//   and nothing is returned to the backend (the capture forbids both).
// - Statistics use PyTorch's memory_stats keys: "<stat>.<all|small_pool|large_pool>.<current|
//   peak|allocated|freed>", plus num_alloc_retries and num_ooms. allocated_bytes counts blocks
//   handed out (rounded sizes); active_bytes also counts freed blocks still waiting for their
//   events; reserved_bytes counts segments held from the backend; inactive_split_bytes counts
//   free blocks of partly used segments (fragmentation).

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/device.h"

namespace ember::caching {

/// What the caching allocator needs from a device runtime. Streams and events are opaque.
/// Called with the allocator's device lock held.
class DeviceMemoryBackend {
 public:
  virtual ~DeviceMemoryBackend() = default;
  /// `bytes` of device memory on `device`, or nullptr when the device is out of memory.
  virtual void* raw_malloc(size_t bytes, int device) = 0;
  virtual void raw_free(void* ptr, int device) = 0;
  /// A new event on `device`.
  virtual void* create_event(int device) = 0;
  /// Records `event` after the work queued so far on `stream` of `device`.
  virtual void record_event(void* event, void* stream, int device) = 0;
  /// True when the work recorded before `event` has completed.
  virtual bool query_event(void* event) = 0;
  /// Waits for the work recorded before `event`.
  virtual void synchronize_event(void* event) = 0;
  virtual void destroy_event(void* event, int device) = 0;
  /// Free and total bytes of `device`.
  virtual void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) = 0;
};

/// One statistic: its value now, its high-water mark, and the sums of increases and decreases.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;
};

/// Index into the per-pool arrays of DeviceStats.
enum StatType : int { kAggregate = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;

/// A device's statistics (memory_stats keys in brackets).
struct DeviceStats {
  StatArray allocation;            ///< blocks handed out ("allocation")
  StatArray segment;               ///< segments held from the backend ("segment")
  StatArray active;                ///< blocks handed out or waiting for events ("active")
  StatArray inactive_split;        ///< free blocks of partly used segments ("inactive_split")
  StatArray allocated_bytes;       ///< "allocated_bytes"
  StatArray reserved_bytes;        ///< "reserved_bytes"
  StatArray active_bytes;          ///< "active_bytes"
  StatArray inactive_split_bytes;  ///< "inactive_split_bytes"
  Stat oversize_allocations;       ///< blocks of at least max_split_size handed out
  Stat oversize_segments;          ///< segments of at least max_split_size
  int64_t num_alloc_retries = 0;   ///< backend allocations retried after freeing the cache
  int64_t num_ooms = 0;            ///< out-of-memory errors raised
};

/// The id of a graph's private pool (ember::cuda::MempoolId's two words).
struct PoolId {
  uint64_t a = 0, b = 0;
  bool operator<(const PoolId& o) const { return a != o.a ? a < o.a : b < o.b; }
  bool operator==(const PoolId& o) const { return a == o.a && b == o.b; }
};

constexpr size_t kMinBlockSize = 512;              ///< every size is a multiple of this
constexpr size_t kSmallSize = size_t(1) << 20;     ///< largest request of the small pool
constexpr size_t kSmallBuffer = size_t(2) << 20;   ///< small pool segment size
constexpr size_t kLargeBuffer = size_t(20) << 20;  ///< large pool segment for requests < 10 MiB
constexpr size_t kMinLargeAlloc = size_t(10) << 20;
constexpr size_t kRoundLarge = size_t(2) << 20;  ///< larger segments round up to this

/// `n` rounded up to kMinBlockSize (at least one).
size_t round_size(size_t n);
/// The segment size requested from the backend for a block of rounded size `size`.
size_t segment_size(size_t size);
/// PyTorch's format_size: "512 bytes", "1.50 KiB", "20.00 MiB", "3.25 GiB".
std::string format_size(uint64_t bytes);

/// The stream-aware caching allocator over a backend (thread-safe; one lock per device).
class CachingAllocator {
 public:
  /// `name` is the device kind in messages ("CUDA"), `device_type` the one reported to the
  /// memory observer; `backend` is not owned.
  CachingAllocator(DeviceMemoryBackend* backend, int num_devices, std::string name = "CUDA",
                   DeviceType device_type = kCUDA);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  int num_devices() const { return int(devices_.size()); }

  /// A block of at least `nbytes` on `device` for work on `stream` (nullptr for 0 bytes).
  /// Throws ember::Error "[<name> allocator] <name> out of memory. ..." when the backend has
  /// no memory left even after returning the cache.
  void* malloc(size_t nbytes, int device, void* stream);
  /// Frees a block malloc returned (null is ignored; a foreign pointer is an error).
  void free(void* ptr);
  /// The block holding `ptr` (any address inside it) is also used by work on `stream`: after
  /// its free it is reused only once that work has completed. Pointers the allocator did not
  /// hand out are ignored.
  void record_stream(void* ptr, void* stream);
  /// The size the block of `ptr` was rounded to (0 when `ptr` is not a live block).
  size_t block_size(void* ptr);

  /// Waits for the events of freed blocks and returns every segment without a live block (except
  /// those of graph pools in use) to the backend, on every device.
  void empty_cache();
  /// Caps the bytes reserved on `device` at `fraction` (0..1) of its total memory.
  void set_memory_fraction(double fraction, int device);
  /// Blocks of at least `bytes` are never split and never serve much smaller requests
  /// (PYTORCH_CUDA_ALLOC_CONF's max_split_size_mb); SIZE_MAX (the default) turns this off.
  void set_max_split_size(size_t bytes);

  DeviceStats stats(int device);
  /// The statistics with torch.cuda.memory_stats' keys.
  std::map<std::string, int64_t> memory_stats(int device);
  /// Resets every peak to its current value.
  void reset_peak(int device);
  /// Resets the sums of increases and decreases, num_alloc_retries and num_ooms.
  void reset_accumulated(int device);
  /// torch.cuda.memory_summary's table.
  std::string memory_summary(int device, bool abbreviated);

  /// Allocations on `stream` of `device` come from pool `id` until end_allocate_to_pool (a
  /// capture). The pool is created on first use; each begin counts one more graph using it.
  void begin_allocate_to_pool(int device, PoolId id, void* stream);
  void end_allocate_to_pool(int device, PoolId id);
  /// One graph using `id` no longer does: when none does, the pool's segments are returned as
  /// soon as they hold no live block.
  void release_pool(int device, PoolId id);

 private:
  struct Block;
  struct BlockPool;
  struct PrivatePool;
  struct DeviceState;

  DeviceState& dev(int device);
  BlockPool& pool_for(DeviceState& d, size_t size, void* stream);
  Block* find_free_block(BlockPool& pool, size_t size, void* stream);
  Block* alloc_segment(DeviceState& d, BlockPool& pool, size_t bytes, void* stream, bool retry);
  Block* take_block(DeviceState& d, BlockPool& pool, Block* block, size_t size, void* stream);
  void free_block(DeviceState& d, Block* block);
  size_t try_merge(Block* dst, Block* src, BlockPool& pool);
  void insert_events(DeviceState& d, Block* block);
  void process_events(DeviceState& d);
  void synchronize_and_free_events(DeviceState& d);
  void release_segments(DeviceState& d, BlockPool& pool);
  void release_cached(DeviceState& d);
  void release_freeable_pools(DeviceState& d);
  void release_segment(DeviceState& d, Block* block);
  [[noreturn]] void throw_oom(DeviceState& d, size_t alloc_size);

  DeviceMemoryBackend* backend_;
  std::string name_;
  DeviceType device_type_;
  size_t max_split_size_ = SIZE_MAX;
  std::vector<std::unique_ptr<DeviceState>> devices_;
  // Live blocks by address, for free() and record_stream() (taken after a device lock, never
  // before one).
  std::mutex live_mu_;
  std::map<uintptr_t, Block*> live_;
};

}  // namespace ember::caching
