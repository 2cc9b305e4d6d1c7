// The caching allocator's bookkeeping (Note [CUDA caching allocator]) on a fake backend of host
// memory with hand-completed events, so that it runs without a GPU; expected statistics are
// derived by hand from PyTorch's rules. The CachingAllocatorCuda tests check the real allocator
// through ember/cuda.h and skip without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "core/caching_allocator.h"
#include "core/memory_observer.h"
#include "ember/cuda.h"
#include "ember/ember.h"

using namespace ember;
using caching::CachingAllocator;
using caching::PoolId;

namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;

// Host memory with a capacity, and events completed by the test (or by synchronize_event).
class FakeBackend final : public caching::DeviceMemoryBackend {
 public:
  struct Event {
    void* stream = nullptr;
    bool done = false;
  };

  explicit FakeBackend(size_t capacity = 1024 * MiB) : capacity_(capacity) {}
  ~FakeBackend() override {
    for (auto& [p, n] : live_) std::free(p);
    for (Event* e : events_) delete e;
  }

  void* raw_malloc(size_t bytes, int) override {
    std::lock_guard<std::mutex> g(mu_);
    if (used_ + bytes > capacity_) return nullptr;
    void* p = std::malloc(bytes);
    if (!p) return nullptr;
    used_ += bytes;
    live_[p] = bytes;
    ++mallocs_;
    return p;
  }
  void raw_free(void* ptr, int) override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = live_.find(ptr);
    ASSERT_NE(it, live_.end()) << "raw_free of a pointer the backend never gave";
    used_ -= it->second;
    live_.erase(it);
    std::free(ptr);
    ++frees_;
  }
  void* create_event(int) override {
    std::lock_guard<std::mutex> g(mu_);
    auto* e = new Event();
    events_.push_back(e);
    ++events_created_;
    return e;
  }
  void record_event(void* event, void* stream, int) override {
    std::lock_guard<std::mutex> g(mu_);
    static_cast<Event*>(event)->stream = stream;
  }
  bool query_event(void* event) override {
    std::lock_guard<std::mutex> g(mu_);
    return static_cast<Event*>(event)->done;
  }
  void synchronize_event(void* event) override {
    std::lock_guard<std::mutex> g(mu_);
    static_cast<Event*>(event)->done = true;
    ++syncs_;
  }
  void destroy_event(void* event, int) override {
    std::lock_guard<std::mutex> g(mu_);
    auto* e = static_cast<Event*>(event);
    events_.erase(std::find(events_.begin(), events_.end(), e));
    delete e;
    ++events_destroyed_;
  }
  void mem_get_info(int, size_t* free_bytes, size_t* total_bytes) override {
    std::lock_guard<std::mutex> g(mu_);
    *free_bytes = capacity_ - used_;
    *total_bytes = capacity_;
  }

  // Completes the events recorded on `stream` (the stream's work has finished).
  void complete(void* stream) {
    std::lock_guard<std::mutex> g(mu_);
    for (Event* e : events_)
      if (e->stream == stream) e->done = true;
  }
  void complete_all() {
    std::lock_guard<std::mutex> g(mu_);
    for (Event* e : events_) e->done = true;
  }

  size_t used() {
    std::lock_guard<std::mutex> g(mu_);
    return used_;
  }
  size_t live_count() {
    std::lock_guard<std::mutex> g(mu_);
    return live_.size();
  }
  int mallocs_ = 0, frees_ = 0, events_created_ = 0, events_destroyed_ = 0, syncs_ = 0;

 private:
  std::mutex mu_;
  size_t capacity_;
  size_t used_ = 0;
  std::map<void*, size_t> live_;
  std::vector<Event*> events_;
};

void* stream(int i) { return reinterpret_cast<void*>(uintptr_t(i)); }
char* cp(void* p) { return static_cast<char*>(p); }

// One statistic by its memory_stats key.
int64_t stat(CachingAllocator& a, const std::string& key, int device = 0) {
  auto s = a.memory_stats(device);
  auto it = s.find(key);
  EXPECT_NE(it, s.end()) << "no statistic " << key;
  return it == s.end() ? -12345 : it->second;
}

// Catches the error of `f` and returns its message; fails unless it is exactly ember::Error.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    EXPECT_EQ(typeid(e), typeid(ember::Error)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error was raised";
  return "";
}

}  // namespace

TEST(CachingAllocator, RoundingAndSegmentSizes) {
  EXPECT_EQ(caching::round_size(1), 512u);
  EXPECT_EQ(caching::round_size(512), 512u);
  EXPECT_EQ(caching::round_size(513), 1024u);
  EXPECT_EQ(caching::round_size(1048577), 1049088u);
  EXPECT_EQ(caching::segment_size(512), 2 * MiB);
  EXPECT_EQ(caching::segment_size(1 * MiB), 2 * MiB);
  EXPECT_EQ(caching::segment_size(1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(caching::segment_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(caching::segment_size(10 * MiB), 10 * MiB);
  EXPECT_EQ(caching::segment_size(10 * MiB + 512), 12 * MiB);
  EXPECT_EQ(caching::format_size(1024), "1024 bytes");
  EXPECT_EQ(caching::format_size(1536), "1.50 KiB");
  EXPECT_EQ(caching::format_size(1048576), "1024.00 KiB");
  EXPECT_EQ(caching::format_size(20 * MiB), "20.00 MiB");
  EXPECT_EQ(caching::format_size(3 * 1024 * MiB / 2), "1.50 GiB");

  FakeBackend be;
  CachingAllocator a(&be, 1);
  EXPECT_EQ(a.malloc(0, 0, stream(1)), nullptr);
  EXPECT_EQ(be.mallocs_, 0);
  void* p = a.malloc(1000, 0, stream(1));
  EXPECT_EQ(a.block_size(p), 1024u);
  EXPECT_EQ(stat(a, "allocated_bytes.small_pool.current"), 1024);
  EXPECT_EQ(stat(a, "reserved_bytes.small_pool.current"), int64_t(2 * MiB));
  EXPECT_EQ(stat(a, "reserved_bytes.large_pool.current"), 0);
  void* q = a.malloc(1 * MiB + 1, 0, stream(1));
  EXPECT_EQ(a.block_size(q), 1 * MiB + 512);
  EXPECT_EQ(stat(a, "allocated_bytes.large_pool.current"), int64_t(1 * MiB + 512));
  EXPECT_EQ(stat(a, "reserved_bytes.large_pool.current"), int64_t(20 * MiB));
  EXPECT_EQ(stat(a, "max_split_size"), -1);
  a.free(p);
  a.free(q);
  a.free(nullptr);
  EXPECT_THROW(a.free(p), ember::Error);                  // no longer live
  EXPECT_THROW(a.malloc(8, 1, stream(1)), ember::Error);  // one device only
}

// A scripted sequence; each expected number follows from the rules of the Note.
TEST(CachingAllocator, ScriptedStatistics) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  void* s = stream(1);
  char* p1 = cp(a.malloc(1, 0, s));  // 512 B from a new 2 MiB small segment, split
  EXPECT_EQ(stat(a, "inactive_split_bytes.all.current"), 2097152 - 512);
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 1);
  char* p2 = cp(a.malloc(1048576, 0, s));  // 1 MiB, the next piece of the same segment
  EXPECT_EQ(p2, p1 + 512);
  EXPECT_EQ(stat(a, "inactive_split_bytes.small_pool.current"), 1048064);
  EXPECT_EQ(stat(a, "segment.all.current"), 1);
  char* p3 = cp(a.malloc(1048577, 0, s));  // 1049088 B from a new 20 MiB large segment
  EXPECT_EQ(stat(a, "inactive_split_bytes.large_pool.current"), 19922432);
  char* p4 = cp(a.malloc(12 * MiB, 0, s));  // best fit: the rest of that segment
  EXPECT_EQ(p4, p3 + 1049088);
  EXPECT_EQ(stat(a, "inactive_split_bytes.large_pool.current"), 7339520);
  EXPECT_EQ(stat(a, "segment.all.current"), 2);
  char* p5 = cp(a.malloc(11 * MiB, 0, s));  // a 12 MiB segment; 1 MiB left is not split off
  EXPECT_EQ(a.block_size(p5), 12 * MiB);
  EXPECT_EQ(stat(a, "allocated_bytes.all.current"), 27264000);
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), 35651584);
  EXPECT_EQ(stat(a, "segment.large_pool.current"), 2);
  EXPECT_EQ(stat(a, "inactive_split_bytes.all.current"), 8387584);

  a.free(p4);  // merges with the free rest of its segment
  EXPECT_EQ(stat(a, "inactive_split_bytes.large_pool.current"), 19922432);
  EXPECT_EQ(stat(a, "inactive_split.large_pool.current"), 1);
  a.free(p3);  // the whole 20 MiB segment is free again: no longer split
  EXPECT_EQ(stat(a, "inactive_split_bytes.large_pool.current"), 0);
  EXPECT_EQ(stat(a, "inactive_split.large_pool.current"), 0);
  a.free(p5);
  a.free(p1);
  EXPECT_EQ(stat(a, "inactive_split.small_pool.current"), 2);
  EXPECT_EQ(stat(a, "inactive_split_bytes.small_pool.current"), 1048576);
  a.free(p2);

  auto st = a.memory_stats(0);
  EXPECT_EQ(st["allocated_bytes.all.current"], 0);
  EXPECT_EQ(st["allocated_bytes.all.peak"], 27264000);
  EXPECT_EQ(st["allocated_bytes.all.allocated"], 27264000);
  EXPECT_EQ(st["allocated_bytes.all.freed"], 27264000);
  EXPECT_EQ(st["allocated_bytes.large_pool.peak"], 26214912);
  EXPECT_EQ(st["allocated_bytes.small_pool.peak"], 1049088);
  EXPECT_EQ(st["active_bytes.all.peak"], 27264000);
  EXPECT_EQ(st["active_bytes.all.current"], 0);
  EXPECT_EQ(st["allocation.all.current"], 0);
  EXPECT_EQ(st["allocation.all.peak"], 5);
  EXPECT_EQ(st["allocation.all.allocated"], 5);
  EXPECT_EQ(st["allocation.all.freed"], 5);
  EXPECT_EQ(st["active.all.peak"], 5);
  EXPECT_EQ(st["reserved_bytes.all.current"], 35651584);
  EXPECT_EQ(st["reserved_bytes.all.peak"], 35651584);
  EXPECT_EQ(st["reserved_bytes.all.allocated"], 35651584);
  EXPECT_EQ(st["reserved_bytes.all.freed"], 0);
  EXPECT_EQ(st["reserved_bytes.small_pool.current"], 2097152);
  EXPECT_EQ(st["segment.all.current"], 3);
  EXPECT_EQ(st["segment.small_pool.current"], 1);
  EXPECT_EQ(st["segment.large_pool.current"], 2);
  EXPECT_EQ(st["inactive_split_bytes.all.current"], 0);
  EXPECT_EQ(st["inactive_split_bytes.all.peak"], 20970496);
  EXPECT_EQ(st["inactive_split_bytes.all.allocated"], 34602496);
  EXPECT_EQ(st["inactive_split_bytes.all.freed"], 34602496);
  EXPECT_EQ(st["inactive_split.all.peak"], 2);
  EXPECT_EQ(st["num_alloc_retries"], 0);
  EXPECT_EQ(st["num_ooms"], 0);
  EXPECT_EQ(be.mallocs_, 3);

  // Best fit among the free segments: the 12 MiB one, not the 20 MiB one.
  char* again = cp(a.malloc(1048577, 0, s));
  EXPECT_EQ(again, p5);

  a.reset_peak(0);
  EXPECT_EQ(stat(a, "allocated_bytes.all.peak"), 1049088);
  EXPECT_EQ(stat(a, "reserved_bytes.all.peak"), 35651584);
  a.reset_accumulated(0);
  EXPECT_EQ(stat(a, "allocated_bytes.all.allocated"), 0);
  EXPECT_EQ(stat(a, "allocated_bytes.all.current"), 1049088);
  a.free(again);

  a.empty_cache();
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), 0);
  EXPECT_EQ(stat(a, "segment.all.current"), 0);
  EXPECT_EQ(stat(a, "reserved_bytes.all.freed"), 35651584);
  EXPECT_EQ(be.frees_, 3);
  EXPECT_EQ(be.used(), 0u);
}

TEST(CachingAllocator, SplitAndMerge) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  void* s = stream(1);
  char* x = cp(a.malloc(512 * KiB, 0, s));
  char* y = cp(a.malloc(512 * KiB, 0, s));
  char* z = cp(a.malloc(512 * KiB, 0, s));
  EXPECT_EQ(y, x + 512 * KiB);
  EXPECT_EQ(z, x + 1024 * KiB);
  EXPECT_EQ(stat(a, "inactive_split_bytes.all.current"), int64_t(512 * KiB));
  a.free(y);  // between two live blocks: stays a piece of its own
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 2);
  EXPECT_EQ(stat(a, "inactive_split_bytes.all.current"), int64_t(1024 * KiB));
  a.free(x);  // merges with y
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 2);
  EXPECT_EQ(stat(a, "inactive_split_bytes.all.current"), int64_t(1536 * KiB));
  // The merged x+y serves 1 MiB from its start.
  char* m = cp(a.malloc(1 * MiB, 0, s));
  EXPECT_EQ(m, x);
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 1);
  a.free(m);
  a.free(z);  // merges with both neighbours: one whole free segment
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 0);
  EXPECT_EQ(stat(a, "inactive_split_bytes.all.current"), 0);
  EXPECT_EQ(stat(a, "segment.all.current"), 1);
  EXPECT_EQ(stat(a, "active.all.current"), 0);
  char* m1 = cp(a.malloc(1 * MiB, 0, s));
  char* m2 = cp(a.malloc(1 * MiB, 0, s));
  EXPECT_EQ(m1, x);
  EXPECT_EQ(m2, x + 1 * MiB);
  EXPECT_EQ(stat(a, "segment.all.current"), 1);
  EXPECT_EQ(be.mallocs_, 1);
  // Large pool: a remainder of at most 1 MiB is not split off.
  char* big = cp(a.malloc(19 * MiB, 0, s));
  EXPECT_EQ(a.block_size(big), 20 * MiB);
  a.free(big);
  char* b1 = cp(a.malloc(19 * MiB + 512, 0, s));  // leaves 1 MiB - 512: not split
  EXPECT_EQ(b1, big);
  EXPECT_EQ(a.block_size(b1), 20 * MiB);
  a.free(b1);
  char* b2 = cp(a.malloc(18 * MiB, 0, s));  // leaves 2 MiB: split
  EXPECT_EQ(a.block_size(b2), 18 * MiB);
  EXPECT_EQ(stat(a, "inactive_split_bytes.large_pool.current"), int64_t(2 * MiB));
  a.free(b2);
  a.free(m1);
  a.free(m2);
}

TEST(CachingAllocator, BlocksBelongToTheirStream) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  void* p = a.malloc(4096, 0, stream(1));
  a.free(p);
  void* q = a.malloc(4096, 0, stream(2));  // not the block freed on stream 1
  EXPECT_NE(q, p);
  EXPECT_EQ(stat(a, "segment.all.current"), 2);
  void* r = a.malloc(4096, 0, stream(1));
  EXPECT_EQ(r, p);
  void* big1 = a.malloc(5 * MiB, 0, stream(1));
  a.free(big1);
  void* big2 = a.malloc(5 * MiB, 0, stream(2));
  EXPECT_NE(big2, big1);
  EXPECT_EQ(stat(a, "segment.large_pool.current"), 2);
  a.free(big2);
  a.free(q);
  a.free(r);
}

TEST(CachingAllocator, RecordStreamDelaysReuse) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  void* s1 = stream(1);
  char* p = cp(a.malloc(512, 0, s1));
  a.record_stream(p, stream(2));
  a.record_stream(p + 100, stream(3));  // any address inside the block
  a.record_stream(p, s1);               // its own stream needs no event
  a.record_stream(p, stream(2));        // once per stream
  int host = 0;
  a.record_stream(&host, stream(2));  // not the allocator's: ignored
  a.free(p);
  EXPECT_EQ(be.events_created_, 2);
  EXPECT_EQ(stat(a, "allocated_bytes.all.current"), 0);
  EXPECT_EQ(stat(a, "active_bytes.all.current"), 512);
  EXPECT_EQ(stat(a, "active.all.current"), 1);
  char* q = cp(a.malloc(512, 0, s1));
  EXPECT_EQ(q, p + 512);  // p waits for streams 2 and 3
  be.complete(stream(2));
  char* r = cp(a.malloc(512, 0, s1));
  EXPECT_EQ(r, p + 1024);  // still waits for stream 3
  EXPECT_EQ(be.events_destroyed_, 1);
  be.complete(stream(3));
  char* t = cp(a.malloc(512, 0, s1));
  EXPECT_EQ(t, p);
  EXPECT_EQ(be.events_destroyed_, 2);
  EXPECT_EQ(stat(a, "active.all.current"), 3);
  EXPECT_EQ(stat(a, "active_bytes.all.current"), 1536);
  a.free(q);
  a.free(r);
  a.free(t);
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 0);
}

// Neighbours whose events complete in the same poll merge into one block.
TEST(CachingAllocator, NeighboursWaitingForEventsMerge) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  char* p = cp(a.malloc(512, 0, stream(1)));
  char* q = cp(a.malloc(512, 0, stream(1)));
  ASSERT_EQ(q, p + 512);
  a.record_stream(p, stream(2));
  a.record_stream(q, stream(2));
  a.free(q);
  a.free(p);
  EXPECT_EQ(stat(a, "active.all.current"), 2);
  be.complete(stream(2));
  char* r = cp(a.malloc(1024, 0, stream(1)));
  EXPECT_EQ(r, p);
  EXPECT_EQ(stat(a, "active.all.current"), 1);
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 1);
  EXPECT_EQ(stat(a, "inactive_split_bytes.all.current"), int64_t(2 * MiB - 1024));
  a.free(r);
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 0);
}

TEST(CachingAllocator, EmptyCacheWaitsForEvents) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  void* p = a.malloc(3 * MiB, 0, stream(1));
  void* live = a.malloc(4096, 0, stream(1));
  a.record_stream(p, stream(2));
  a.free(p);
  EXPECT_EQ(stat(a, "active_bytes.large_pool.current"), int64_t(3 * MiB));
  a.empty_cache();
  EXPECT_EQ(be.syncs_, 1);
  EXPECT_EQ(be.events_destroyed_, 1);
  EXPECT_EQ(stat(a, "active_bytes.large_pool.current"), 0);
  // The large segment went back; the small one holds a live block and stays.
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), int64_t(2 * MiB));
  EXPECT_EQ(stat(a, "segment.all.current"), 1);
  EXPECT_EQ(be.live_count(), 1u);
  a.free(live);
  a.empty_cache();
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), 0);
  EXPECT_EQ(be.used(), 0u);
}

TEST(CachingAllocator, OutOfMemoryRetriesThenRaises) {
  FakeBackend be(30 * MiB);
  CachingAllocator a(&be, 1);
  void* p = a.malloc(8 * MiB, 0, stream(1));  // a 20 MiB segment
  a.free(p);
  // 20 + 12 MiB do not fit: the cached segment is returned and the request retried.
  void* q = a.malloc(12 * MiB, 0, stream(2));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(stat(a, "num_alloc_retries"), 1);
  EXPECT_EQ(stat(a, "num_ooms"), 0);
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), int64_t(12 * MiB));
  EXPECT_EQ(be.frees_, 1);
  // 12 + 20 MiB do not fit and nothing is cached: an error.
  std::string msg = error_of([&] { a.malloc(8 * MiB, 0, stream(1)); });
  EXPECT_EQ(msg.rfind("[CUDA allocator] CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
                      "30.00 MiB total capacity; 12.00 MiB already allocated; 18.00 MiB free; "
                      "12.00 MiB reserved in total by ember)",
                      0),
            0u)
      << msg;
  EXPECT_NE(msg.find("empty_cache"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max_split_size"), std::string::npos) << msg;
  EXPECT_EQ(stat(a, "num_alloc_retries"), 2);
  EXPECT_EQ(stat(a, "num_ooms"), 1);
  EXPECT_EQ(stat(a, "allocated_bytes.all.current"), int64_t(12 * MiB));
  EXPECT_EQ(stat(a, "allocation.all.current"), 1);
  // Still usable: after q's free its segment is returned to make room.
  a.free(q);
  void* r = a.malloc(8 * MiB, 0, stream(1));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(stat(a, "num_alloc_retries"), 3);
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), int64_t(20 * MiB));
  a.free(r);

  // The error names the device.
  FakeBackend be2(4 * MiB);
  CachingAllocator two(&be2, 2);
  msg = error_of([&] { two.malloc(3 * MiB, 1, stream(1)); });
  EXPECT_NE(msg.find("Tried to allocate 20.00 MiB (GPU 1; 4.00 MiB total capacity; 0 bytes "
                     "already allocated; 4.00 MiB free; 0 bytes reserved in total by ember)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(stat(two, "num_ooms", 1), 1);
  EXPECT_EQ(stat(two, "num_ooms", 0), 0);
}

TEST(CachingAllocator, MemoryFractionCapsReserved) {
  FakeBackend be(100 * MiB);
  CachingAllocator a(&be, 1);
  EXPECT_THROW(a.set_memory_fraction(1.5, 0), ember::ValueError);
  EXPECT_THROW(a.set_memory_fraction(-0.1, 0), ember::ValueError);
  a.set_memory_fraction(0.25, 0);  // 25 MiB
  void* p = a.malloc(8 * MiB, 0, stream(1));
  std::string msg = error_of([&] { a.malloc(8 * MiB, 0, stream(2)); });
  EXPECT_NE(msg.find("Tried to allocate 20.00 MiB (GPU 0; 100.00 MiB total capacity; 8.00 MiB "
                     "already allocated; 80.00 MiB free; 25.00 MiB allowed; 20.00 MiB reserved "
                     "in total by ember)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(stat(a, "num_ooms"), 1);
  EXPECT_EQ(be.mallocs_, 1);                   // the cap refused before the backend was asked
  void* small = a.malloc(4096, 0, stream(2));  // 20 + 2 MiB fit under the cap
  ASSERT_NE(small, nullptr);
  a.set_memory_fraction(1.0, 0);
  void* q = a.malloc(8 * MiB, 0, stream(2));
  ASSERT_NE(q, nullptr);
  a.free(p);
  a.free(q);
  a.free(small);
}

TEST(CachingAllocator, GraphPoolKeepsItsBlocks) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  void* cap = stream(2);
  void* x = a.malloc(4096, 0, cap);
  a.free(x);  // a free block of the capture stream in the ordinary pool
  const PoolId pool{7, 0};
  a.begin_allocate_to_pool(0, pool, cap);
  void* y = a.malloc(4096, 0, cap);  // from the graph's own segment
  EXPECT_NE(y, x);
  EXPECT_EQ(stat(a, "segment.all.current"), 2);
  void* z = a.malloc(4096, 0, stream(1));  // another stream: the ordinary pool
  EXPECT_EQ(stat(a, "segment.all.current"), 3);
  a.free(y);  // back to the graph's pool
  void* w = a.malloc(4096, 0, cap);
  EXPECT_EQ(w, y);
  a.record_stream(w, stream(3));
  a.free(w);  // its event waits for the capture's end
  EXPECT_EQ(be.events_created_, 0);
  a.empty_cache();  // nothing is returned while a capture is under way
  EXPECT_EQ(stat(a, "segment.all.current"), 3);
  a.end_allocate_to_pool(0, pool);
  EXPECT_EQ(be.events_created_, 1);
  be.complete(stream(3));
  void* v = a.malloc(4096, 0, cap);  // the ordinary pool again
  EXPECT_EQ(v, x);
  a.free(v);
  a.free(z);
  a.empty_cache();  // the ordinary segments go, the graph's stays
  EXPECT_EQ(stat(a, "segment.all.current"), 1);
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), int64_t(2 * MiB));
  a.release_pool(0, pool);
  EXPECT_EQ(stat(a, "segment.all.current"), 0);
  EXPECT_EQ(be.used(), 0u);
  EXPECT_THROW(a.release_pool(0, pool), ember::Error);
}

TEST(CachingAllocator, SharedGraphPoolIsReleasedByItsLastUser) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  const PoolId pool{1, 2};
  a.begin_allocate_to_pool(0, pool, stream(2));
  void* big = a.malloc(1 * MiB + 1, 0, stream(2));  // a large segment of the pool
  a.end_allocate_to_pool(0, pool);
  a.begin_allocate_to_pool(0, pool, stream(3));  // a second graph shares the pool
  void* small = a.malloc(4096, 0, stream(3));
  a.end_allocate_to_pool(0, pool);
  EXPECT_EQ(stat(a, "segment.all.current"), 2);
  a.release_pool(0, pool);  // the second graph still uses it
  a.free(small);
  EXPECT_EQ(stat(a, "segment.all.current"), 2);
  a.release_pool(0, pool);  // unused: the free segment goes, the live one stays
  EXPECT_EQ(stat(a, "segment.all.current"), 1);
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), int64_t(20 * MiB));
  a.free(big);  // returned as soon as it holds no live block
  EXPECT_EQ(stat(a, "segment.all.current"), 0);
  EXPECT_EQ(be.used(), 0u);
}

TEST(CachingAllocator, MaxSplitSize) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  a.set_max_split_size(40 * MiB);
  void* big = a.malloc(50 * MiB, 0, stream(1));  // an oversize segment
  EXPECT_EQ(stat(a, "oversize_segments.current"), 1);
  EXPECT_EQ(stat(a, "oversize_allocations.current"), 1);
  a.free(big);
  void* mid = a.malloc(30 * MiB, 0, stream(1));  // never served by the oversize block
  EXPECT_NE(mid, big);
  void* big2 = a.malloc(45 * MiB, 0, stream(1));  // within 20 MiB of it: reused, unsplit
  EXPECT_EQ(big2, big);
  EXPECT_EQ(a.block_size(big2), 50 * MiB);
  EXPECT_EQ(stat(a, "max_split_size"), int64_t(40 * MiB));
  a.free(mid);
  a.free(big2);
}

TEST(CachingAllocator, Summary) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  void* p = a.malloc(3 * MiB, 0, stream(1));
  std::string s = a.memory_summary(0, false);
  EXPECT_NE(s.find("ember CUDA memory summary, device ID 0"), std::string::npos) << s;
  EXPECT_NE(s.find("| Allocated memory      |    3072 KB |    3072 KB |    3072 KB |       0 B  |"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("from large pool"), std::string::npos);
  EXPECT_NE(s.find("| GPU reserved memory   |   20480 KB |"), std::string::npos) << s;
  // Every line is as wide as the frame.
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    EXPECT_EQ(end - start, 77u) << s.substr(start, end - start);
    start = end + 1;
  }
  std::string brief = a.memory_summary(0, true);
  EXPECT_EQ(brief.find("from large pool"), std::string::npos);
  a.free(p);
}

std::vector<MemoryReport> g_reports;
void record_report(const MemoryReport& r) { g_reports.push_back(r); }

// The profiler's memory observer sees each block with the totals after it.
TEST(CachingAllocator, ReportsToMemoryObserver) {
  FakeBackend be;
  CachingAllocator a(&be, 2);
  g_reports.clear();
  g_memory_observer.store(&record_report);
  void* p = a.malloc(1000, 1, stream(1));
  a.free(p);
  g_memory_observer.store(nullptr);
  ASSERT_EQ(g_reports.size(), 2u);
  EXPECT_EQ(g_reports[0].ptr, p);
  EXPECT_EQ(g_reports[0].bytes, 1024);
  EXPECT_EQ(g_reports[0].total_allocated, 1024);
  EXPECT_EQ(g_reports[0].total_reserved, int64_t(2 * MiB));
  EXPECT_EQ(g_reports[0].device, Device(kCUDA, 1));
  EXPECT_EQ(g_reports[1].bytes, -1024);
  EXPECT_EQ(g_reports[1].total_allocated, 0);
}

TEST(CachingAllocator, ThreadsAllocateAndFree) {
  FakeBackend be;
  CachingAllocator a(&be, 1);
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> bad(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      void* s = stream(100 + t);
      std::vector<std::pair<char*, size_t>> live;
      for (int i = 0; i < 400; ++i) {
        if (live.size() < 8 && (rng() % 3 != 0 || live.empty())) {
          size_t n = 1 + rng() % (rng() % 4 == 0 ? 3 * MiB : 64 * KiB);
          char* p = cp(a.malloc(n, 0, s));
          std::memset(p, t + 1, n);
          if (rng() % 5 == 0) a.record_stream(p, stream(200 + t));
          live.emplace_back(p, n);
        } else {
          size_t k = rng() % live.size();
          auto [p, n] = live[k];
          // A block shared with another thread would have been overwritten.
          if (p[0] != t + 1 || p[n / 2] != t + 1 || p[n - 1] != t + 1) ++bad[size_t(t)];
          a.free(p);
          live.erase(live.begin() + long(k));
          if (rng() % 7 == 0) be.complete(stream(200 + t));
        }
      }
      for (auto [p, n] : live) a.free(p);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[size_t(t)], 0) << "thread " << t;
  EXPECT_EQ(stat(a, "allocation.all.current"), 0);
  EXPECT_EQ(stat(a, "allocated_bytes.all.current"), 0);
  be.complete_all();
  a.empty_cache();
  EXPECT_EQ(stat(a, "active.all.current"), 0);
  EXPECT_EQ(stat(a, "reserved_bytes.all.current"), 0);
  EXPECT_EQ(stat(a, "inactive_split.all.current"), 0);
  EXPECT_EQ(be.used(), 0u);
}

// ---- the real allocator (needs a GPU) ----

TEST(CachingAllocatorCuda, TracksTensors) {
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device";
  const Device dev("cuda");
  cuda::empty_cache();
  const int64_t before = cuda::memory_allocated();
  {
    Tensor t = empty({1000}, TensorOptions().dtype(kFloat).device(dev));  // 4000 B -> 4096
    EXPECT_EQ(cuda::memory_allocated() - before, 4096);
    EXPECT_GE(cuda::memory_reserved(), int64_t(2 * MiB));
    EXPECT_GE(cuda::max_memory_allocated(), before + 4096);
    auto st = cuda::memory_stats();
    EXPECT_GE(st["allocation.all.current"], 1);
    EXPECT_GE(st["allocated_bytes.small_pool.current"], 4096);
    Tensor z = empty({0}, TensorOptions().dtype(kFloat).device(dev));  // no block
    EXPECT_EQ(cuda::memory_allocated() - before, 4096);
  }
  EXPECT_EQ(cuda::memory_allocated(), before);
  cuda::reset_peak_memory_stats();
  EXPECT_EQ(cuda::max_memory_allocated(), before);
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_stats()["inactive_split_bytes.all.current"], 0);
  const std::string summary = cuda::memory_summary();
  EXPECT_NE(summary.find("memory summary, device ID"), std::string::npos) << summary;
}

TEST(CachingAllocatorCuda, OutOfMemoryRaises) {
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device";
  const Device dev("cuda");
  const int64_t ooms = cuda::memory_stats()["num_ooms"];
  const int64_t total = cuda::mem_get_info().second;
  try {
    Tensor t = empty({total * 2}, TensorOptions().dtype(kByte).device(dev));
    ADD_FAILURE() << "allocating twice the device memory succeeded";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cuda::memory_stats()["num_ooms"], ooms + 1);
  Tensor ok = empty({16}, TensorOptions().dtype(kFloat).device(dev));  // still usable
  EXPECT_EQ(ok.numel(), 16);
}

TEST(CachingAllocatorCuda, RecordStreamKeepsBlockUntilStreamFinishes) {
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device";
  const Device dev("cuda");
  cuda::Stream side = cuda::getStreamFromPool();
  const int64_t active = cuda::memory_stats()["active_bytes.all.current"];
  {
    Tensor t = empty({256}, TensorOptions().dtype(kFloat).device(dev));
    cuda::record_stream(t, side);
  }
  // Freed, but active until the side stream's work is seen finished (nothing polled yet).
  EXPECT_EQ(cuda::memory_stats()["active_bytes.all.current"], active + 1024);
  side.synchronize();
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_stats()["active_bytes.all.current"], active);
}

TEST(CachingAllocatorCuda, PinnedMemory) {
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device";
  Tensor t = arange(1000, TensorOptions().dtype(kFloat));
  EXPECT_FALSE(cuda::is_pinned(t));
  Tensor p = cuda::pin_memory(t);
  EXPECT_TRUE(cuda::is_pinned(p));
  EXPECT_TRUE(p.is_cpu());
  EXPECT_TRUE(equal(p, t));
  EXPECT_TRUE(cuda::is_pinned(p.slice(0, 10, 20)));  // a view into the pinned block
  Tensor back = p.to(Device("cuda")).to(Device(kCPU));
  EXPECT_TRUE(equal(back, t));
}
