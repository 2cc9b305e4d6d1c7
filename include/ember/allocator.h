#pragma once
/// Pluggable per-device allocators and the CPU caching allocator's statistics.

#include <cstddef>
#include <cstdint>

#include "ember/device.h"

namespace ember {

/// Frees a block handed out by an allocator (or a user buffer given to from_blob).
using DeleterFn = void (*)(void* ctx, void* ptr);

/// Owning pointer to device memory: `ptr` is the data, `ctx` is what the deleter needs.
class DataPtr {
 public:
  DataPtr() = default;
  DataPtr(void* ptr, void* ctx, DeleterFn deleter, Device device)
      : ptr_(ptr), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = o.ptr_;
      ctx_ = o.ctx_;
      deleter_ = o.deleter_;
      device_ = o.device_;
      o.ptr_ = o.ctx_ = nullptr;
      o.deleter_ = nullptr;
    }
    return *this;
  }
  ~DataPtr() { reset(); }
  void reset() {
    if (deleter_) deleter_(ctx_, ptr_);
    ptr_ = ctx_ = nullptr;
    deleter_ = nullptr;
  }
  void* get() const { return ptr_; }
  Device device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

/// A device's memory allocator. Implementations must be thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Allocates `nbytes` (may be 0). Throws `ember::Error` when out of memory.
  virtual DataPtr allocate(size_t nbytes) = 0;
  /// Copies `n` bytes between two blocks of this device.
  virtual void copy_data(void* dst, const void* src, size_t n) const = 0;
};

/// The allocator for a device type (throws if none is registered).
Allocator* get_allocator(DeviceType t);
/// Installs `a` (not owned; must outlive its use) as the allocator of device type `t`.
void set_allocator(DeviceType t, Allocator* a);

/// Memory statistics of a caching allocator, in bytes.
struct MemoryStats {
  int64_t allocated = 0;       ///< bytes in live blocks handed out
  int64_t reserved = 0;        ///< bytes held from the system (live + cached)
  int64_t peak_allocated = 0;  ///< high-water mark of `allocated`
  int64_t num_allocs = 0;      ///< allocate() calls
  int64_t num_cache_hits = 0;  ///< allocate() calls served from the cache
};

namespace cpu {
/// The CPU caching allocator's statistics.
MemoryStats memory_stats();
/// Resets the peak to the current allocation.
void reset_peak_memory_stats();
/// Returns every cached (free) block to the system.
void empty_cache();
/// Bounds the bytes kept in the cache (default 4 GiB); freed blocks beyond it go to the system.
void set_cache_limit(size_t bytes);
}  // namespace cpu

}  // namespace ember
