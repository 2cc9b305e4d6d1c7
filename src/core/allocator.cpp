#include "ember/allocator.h"
#include "core/cuda_hooks.h"

#include "core/memory_observer.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/storage.h"

namespace ember {

namespace {

std::array<Allocator*, kMaxDeviceTypes>& allocator_table() {
  static std::array<Allocator*, kMaxDeviceTypes> t{};
  return t;
}

}  // namespace

// Physical memory plus swap. A larger request can never be backed: refused up front, because
// under memory overcommit the allocation itself may succeed and the first write then wakes the
// OOM killer instead of raising an error (see Note [Checked storage sizes]).
size_t host_memory_bytes() {
  static const size_t n = [] {
    struct sysinfo si {};
    if (sysinfo(&si) != 0) return SIZE_MAX;
    return size_t(si.totalram + si.totalswap) * size_t(si.mem_unit);
  }();
  return n;
}

namespace {

// Note [CPU caching allocator]
// Freed blocks are kept in per-size free lists and handed out again, so a loop that allocates
// fresh outputs writes into memory that is already mapped instead of paying page faults on
// every call (the reason fresh-output ops are several times faster than in PyTorch 1.13, which
// returns large blocks to the OS). Sizes are rounded to buckets (powers of two up to 1 MiB,
// then multiples of 1 MiB up to 64 MiB, then 8 MiB) so near sizes share blocks. The cache is
// bounded: a freed block that would push cached bytes past the limit goes back to the system.
// Blocks over 64 MiB always go back: they are one-off buffers (a data set being converted, an
// evaluation batch) that, kept, stay resident for the life of the process and raise its peak
// memory above PyTorch's, while their page faults are small next to the work that fills them.
class CpuCachingAllocator final : public Allocator {
 public:
  static constexpr size_t kAlign = 64;
  static constexpr size_t kMaxCachedBlock = size_t(64) << 20;  // Note [CPU caching allocator]

  DataPtr allocate(size_t nbytes) override {
    EMBER_CHECK(nbytes <= host_memory_bytes(), "[CPUAllocator] out of memory: tried to allocate ",
                nbytes, " bytes, more than the machine's memory (", host_memory_bytes(), " bytes)");
    size_t size = bucket(nbytes);
    void* p = nullptr;
    MemoryStats after;  // the totals after this allocation, kept only for an observer
    const bool observed = g_memory_observer.load(std::memory_order_relaxed) != nullptr;
    {
      std::lock_guard<std::mutex> g(mu_);
      ++stats_.num_allocs;
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= size;
        ++stats_.num_cache_hits;
        count_allocated(size);
        if (observed) after = stats_;
      }
    }
    if (!p) {
      p = std::aligned_alloc(kAlign, size);
      if (!p) {
        empty_cache();
        p = std::aligned_alloc(kAlign, size);
      }
      EMBER_CHECK(p, "[CPUAllocator] out of memory: tried to allocate ", nbytes, " bytes");
      // Large blocks: ask for transparent huge pages (fewer TLB misses and page faults).
      if (size >= (size_t(2) << 20)) madvise(p, size, MADV_HUGEPAGE);
      std::lock_guard<std::mutex> g(mu_);
      stats_.reserved += int64_t(size);
      count_allocated(size);
      if (observed) after = stats_;
    }
    // The profiler counts requested bytes, as PyTorch's CPU allocator reports them.
    if (observed)
      report_memory({p, int64_t(nbytes), after.allocated, after.reserved, Device(kCPU)});
    // ctx is the requested size: the bucket follows from it.
    return DataPtr(p, reinterpret_cast<void*>(nbytes), &CpuCachingAllocator::release, Device(kCPU));
  }

  void copy_data(void* dst, const void* src, size_t n) const override {
    if (n) std::memcpy(dst, src, n);
  }

  MemoryStats stats() {
    std::lock_guard<std::mutex> g(mu_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> g(mu_);
    stats_.peak_allocated = stats_.allocated;
  }
  void empty_cache() {
    std::unordered_map<size_t, std::vector<void*>> blocks;
    {
      std::lock_guard<std::mutex> g(mu_);
      blocks.swap(free_);
      stats_.reserved -= int64_t(cached_bytes_);
      cached_bytes_ = 0;
    }
    for (auto& [size, list] : blocks)
      for (void* p : list) std::free(p);
  }
  void set_limit(size_t bytes) {
    std::lock_guard<std::mutex> g(mu_);
    limit_ = bytes;
  }

  static CpuCachingAllocator& get() {
    // Leaked on purpose: tensors in static storage may be freed after main returns.
    static auto* a = new CpuCachingAllocator();
    return *a;
  }

 private:
  static size_t bucket(size_t n) {
    if (n <= kAlign) return kAlign;
    constexpr size_t kMiB = size_t(1) << 20;
    if (n <= kMiB) return size_t(1) << (64 - __builtin_clzll(n - 1));
    if (n <= 64 * kMiB) return (n + kMiB - 1) / kMiB * kMiB;
    return (n + 8 * kMiB - 1) / (8 * kMiB) * (8 * kMiB);
  }

  void count_allocated(size_t size) {
    stats_.allocated += int64_t(size);
    if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
  }

  static void release(void* ctx, void* p) {
    auto& self = get();
    size_t nbytes = reinterpret_cast<size_t>(ctx);
    size_t size = bucket(nbytes);
    MemoryStats after;
    bool cached = false;
    const bool observed = g_memory_observer.load(std::memory_order_relaxed) != nullptr;
    {
      std::lock_guard<std::mutex> g(self.mu_);
      self.stats_.allocated -= int64_t(size);
      if (size <= kMaxCachedBlock && self.cached_bytes_ + size <= self.limit_) {
        self.free_[size].push_back(p);
        self.cached_bytes_ += size;
        cached = true;
      } else {
        self.stats_.reserved -= int64_t(size);
      }
      if (observed) after = self.stats_;
    }
    if (observed)
      report_memory({p, -int64_t(nbytes), after.allocated, after.reserved, Device(kCPU)});
    if (!cached) std::free(p);
  }

  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_bytes_ = 0;
  size_t limit_ = size_t(4) << 30;
  MemoryStats stats_;
};

struct RegisterCpu {
  RegisterCpu() { allocator_table()[static_cast<int>(kCPU)] = &CpuCachingAllocator::get(); }
} g_register_cpu;

}  // namespace

std::atomic<MemoryObserver> g_memory_observer{nullptr};

Allocator* get_allocator(DeviceType t) {
  int i = static_cast<int>(t);
  Allocator* a = (i >= 0 && i < kMaxDeviceTypes) ? allocator_table()[i] : nullptr;
  if (!a && t == kCPU) a = &CpuCachingAllocator::get();
  // The CUDA backend registers its allocator when it is loaded (Note [CUDA backend library]).
  if (!a && t == kCUDA && cuda::load_cuda()) a = allocator_table()[i];
  if (!a && t == kCUDA) cuda::no_cuda("allocator");
  EMBER_CHECK(a, "[allocator] no allocator registered for device type '", device_type_name(t), "'");
  return a;
}

void set_allocator(DeviceType t, Allocator* a) {
  int i = static_cast<int>(t);
  EMBER_CHECK_VALUE(i >= 0 && i < kMaxDeviceTypes, "[set_allocator] bad device type ", i);
  allocator_table()[i] = a;
}

Storage Storage::allocate(size_t nbytes, Device device) {
  Allocator* a = get_allocator(device.type());
  DataPtr p;
  if (device.is_cuda()) {
    // The CUDA allocator serves the current device, as PyTorch's: select the tensor's.
    const int n = cuda::cuda_hooks().device_count();
    EMBER_CHECK(device.index() < n, "[allocate] CUDA error: invalid device ordinal: ", device,
                " does not exist (", n, " CUDA device", n == 1 ? "" : "s", " visible)");
    cuda::DeviceGuard guard(device.index() < 0 ? cuda::current_device() : device.index());
    p = a->allocate(nbytes);
  } else {
    EMBER_CHECK(device.is_cpu() || device.index() <= 0, "[allocate] only index 0 of device type ",
                device_type_name(device.type()), " is supported so far, got ", device);
    p = a->allocate(nbytes);
  }
  return Storage(make_intrusive<StorageImpl>(std::move(p), nbytes, a));
}

namespace cpu {
MemoryStats memory_stats() { return CpuCachingAllocator::get().stats(); }
void reset_peak_memory_stats() { CpuCachingAllocator::get().reset_peak(); }
void empty_cache() { CpuCachingAllocator::get().empty_cache(); }
void set_cache_limit(size_t bytes) { CpuCachingAllocator::get().set_limit(bytes); }
}  // namespace cpu

}  // namespace ember
