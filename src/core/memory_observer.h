#pragma once
// Allocators report every allocation and free here while an observer (the profiler with
// profile_memory) is installed; with none, the cost is one relaxed load per allocation.

#include <atomic>
#include <cstdint>

#include "ember/device.h"

namespace ember {

/// One allocation (bytes > 0) or free (bytes < 0), with the allocator's totals after it.
struct MemoryReport {
  const void* ptr;
  int64_t bytes;
  int64_t total_allocated;
  int64_t total_reserved;
  Device device;
};
using MemoryObserver = void (*)(const MemoryReport&);

/// The installed observer (null when none).
extern std::atomic<MemoryObserver> g_memory_observer;
inline void report_memory(const MemoryReport& r) {
  if (MemoryObserver o = g_memory_observer.load(std::memory_order_relaxed)) o(r);
}

}  // namespace ember
