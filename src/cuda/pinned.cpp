// Page-locked host memory for fast, asynchronous host<->device copies (Tensor.pin_memory()).
//
// Note [Pinned memory cache]
// cudaHostAlloc is slow (it maps and locks pages), so freed blocks are kept and reused for
// requests of the same rounded size (powers of two from 512 B). A copy queued on a stream may
// still read or write a pinned block after its tensor dies: pinned_record_use remembers the
// streams, their events are recorded at the free, and the block is reused only once they have
// all completed (polled on later allocations).
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda/cuda_context.h"

namespace ember::cuda {

namespace {

struct HostBlock {
  size_t size = 0;
  bool allocated = false;
  int event_count = 0;
  std::vector<std::pair<cudaStream_t, int>> uses;  // (stream, device) since the allocation
};

class PinnedAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(kCPU));
    const size_t size = bucket(nbytes);
    std::lock_guard<std::mutex> lock(mu_);
    process_events();
    void* p = nullptr;
    auto& list = free_[size];
    if (!list.empty()) {
      p = list.back();
      list.pop_back();
    } else {
      cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocDefault);
      if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        release_cached();
        err = cudaHostAlloc(&p, size, cudaHostAllocDefault);
      }
      if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        EMBER_THROW(::ember::Error,
                    "[pin_memory] out of page-locked host memory: tried to "
                    "allocate ",
                    size, " bytes");
      }
      check(err, "cudaHostAlloc");
      blocks_[reinterpret_cast<uintptr_t>(p)].size = size;
    }
    HostBlock& b = blocks_.at(reinterpret_cast<uintptr_t>(p));
    b.allocated = true;
    b.uses.clear();
    return DataPtr(p, nullptr, &PinnedAllocator::release, Device(kCPU));
  }

  void copy_data(void* dst, const void* src, size_t n) const override {
    if (n) std::memcpy(dst, src, n);
  }

  bool contains(const void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    return find(p) != nullptr;
  }

  void record_use(const void* p, cudaStream_t stream) {
    const int device = raw_current_device();
    std::lock_guard<std::mutex> lock(mu_);
    HostBlock* b = find(p);
    if (!b || !b->allocated) return;
    for (auto& u : b->uses)
      if (u.first == stream && u.second == device) return;
    b->uses.emplace_back(stream, device);
  }

  static PinnedAllocator& get() {
    // Leaked on purpose: pinned tensors in static storage may die after main returns.
    static auto* a = new PinnedAllocator();
    return *a;
  }

 private:
  static size_t bucket(size_t n) {
    size_t s = 512;
    while (s < n) s <<= 1;
    return s;
  }

  // The block holding `p` (any address inside it), or null.
  HostBlock* find(const void* p) {
    const auto addr = reinterpret_cast<uintptr_t>(p);
    auto it = blocks_.upper_bound(addr);
    if (it == blocks_.begin()) return nullptr;
    --it;
    return addr < it->first + it->second.size ? &it->second : nullptr;
  }

  static void release(void*, void* p) {
    try {
      get().free(p);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ember: warning: freeing pinned memory failed: %s\n", e.what());
    }
  }

  void free(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    HostBlock& b = blocks_.at(reinterpret_cast<uintptr_t>(p));
    b.allocated = false;
    std::vector<std::pair<cudaStream_t, int>> uses;
    uses.swap(b.uses);
    for (auto& [stream, device] : uses) {
      int prev = 0;
      EMBER_CUDA_CHECK(cudaGetDevice(&prev));
      if (prev != device) EMBER_CUDA_CHECK(cudaSetDevice(device));
      cudaEvent_t ev = nullptr;
      cudaError_t err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
      if (err == cudaSuccess) err = cudaEventRecord(ev, stream);
      if (prev != device) (void)cudaSetDevice(prev);
      check(err, "recording a pinned block's event");
      ++b.event_count;
      events_.emplace_back(ev, p);
    }
    if (b.event_count == 0) free_[b.size].push_back(p);
  }

  void process_events() {
    std::vector<std::pair<cudaEvent_t, void*>> pending;
    cudaError_t failure = cudaSuccess;
    for (auto& [ev, p] : events_) {
      cudaError_t err = cudaEventQuery(ev);
      if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        pending.emplace_back(ev, p);
        continue;
      }
      // An error other than "not ready" means the device is broken: the block is not reused,
      // and the error is raised once the bookkeeping is consistent.
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        if (failure == cudaSuccess) failure = err;
        continue;
      }
      (void)cudaEventDestroy(ev);
      HostBlock& b = blocks_.at(reinterpret_cast<uintptr_t>(p));
      if (--b.event_count == 0) free_[b.size].push_back(p);
    }
    events_.swap(pending);
    check(failure, "cudaEventQuery of a pinned block's event");
  }

  // Returns every free block to the driver (out of memory).
  void release_cached() {
    for (auto& [size, list] : free_) {
      for (void* p : list) {
        (void)cudaFreeHost(p);
        blocks_.erase(reinterpret_cast<uintptr_t>(p));
      }
      list.clear();
    }
  }

  std::mutex mu_;
  std::map<uintptr_t, HostBlock> blocks_;                // every block, by address
  std::unordered_map<size_t, std::vector<void*>> free_;  // reusable blocks by size
  std::vector<std::pair<cudaEvent_t, void*>> events_;    // (event, freed block)
};

}  // namespace

Allocator* pinned_allocator() { return &PinnedAllocator::get(); }

bool is_pinned_ptr(const void* p) { return p && PinnedAllocator::get().contains(p); }

void pinned_record_use(const void* p, cudaStream_t stream) {
  if (p) PinnedAllocator::get().record_use(p, stream);
}

}  // namespace ember::cuda
