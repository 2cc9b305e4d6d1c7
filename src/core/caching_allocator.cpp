// The stream-aware caching allocator's bookkeeping (Note [CUDA caching allocator]).
#include "core/caching_allocator.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "core/memory_observer.h"
#include "ember/error.h"

namespace ember::caching {

size_t round_size(size_t n) {
  if (n < kMinBlockSize) return kMinBlockSize;
  return (n + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

std::string format_size(uint64_t bytes) {
  char buf[64];
  if (bytes <= 1024) {
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  } else if (bytes <= 1048576) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", double(bytes) / 1024.0);
  } else if (bytes <= 1073741824) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / 1048576.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / 1073741824.0);
  }
  return buf;
}

// ---- blocks and pools ----

struct CachingAllocator::Block {
  int device;
  void* stream;     // the stream the block belongs to
  size_t size;      // rounded size
  BlockPool* pool;  // where it returns when freed
  char* ptr;
  bool allocated = false;
  Block* prev = nullptr;  // neighbours within the segment
  Block* next = nullptr;
  int event_count = 0;             // events still pending since its free
  std::vector<void*> stream_uses;  // other streams recorded with record_stream

  Block(int dev, void* s, size_t n, BlockPool* p, char* at)
      : device(dev), stream(s), size(n), pool(p), ptr(at) {}
  bool is_split() const { return prev != nullptr || next != nullptr; }
};

namespace {
// Free blocks ordered by (stream, size, address): lower_bound finds the best fit of a stream.
template <class B>
struct BlockLess {
  bool operator()(const B* a, const B* b) const {
    auto sa = reinterpret_cast<uintptr_t>(a->stream), sb = reinterpret_cast<uintptr_t>(b->stream);
    if (sa != sb) return sa < sb;
    if (a->size != b->size) return a->size < b->size;
    return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
  }
};

void update(Stat& s, int64_t amount) {
  s.current += amount;
  s.peak = std::max(s.peak, s.current);
  if (amount > 0) s.allocated += amount;
  if (amount < 0) s.freed -= amount;
}
}  // namespace

struct CachingAllocator::BlockPool {
  std::set<Block*, BlockLess<Block>> blocks;
  bool is_small;
  PrivatePool* owner;
  BlockPool(bool small, PrivatePool* o) : is_small(small), owner(o) {}
};

struct CachingAllocator::PrivatePool {
  int use_count = 1;      // graphs using the pool
  int segment_count = 0;  // segments held from the backend
  BlockPool large{false, this};
  BlockPool small{true, this};
};

struct CachingAllocator::DeviceState {
  int index = 0;
  std::mutex mu;
  BlockPool large{false, nullptr};
  BlockPool small{true, nullptr};
  DeviceStats stats;
  size_t reserved = 0;  // bytes held from the backend
  bool capped = false;
  size_t allowed = SIZE_MAX;
  std::vector<std::pair<void*, Block*>> events;  // (event, freed block waiting for it)
  std::vector<Block*> deferred;  // freed with stream uses while a capture was under way
  std::map<PoolId, std::unique_ptr<PrivatePool>> graph_pools;
  std::vector<std::pair<PoolId, void*>> capturing;  // (pool, stream) being captured to
};

namespace {
// The statistics a block of `pool` updates: the aggregate and its pool's.
template <class Pool, class F>
void for_stats(const Pool& pool, F f) {
  f(kAggregate);
  f(pool.is_small ? kSmallPool : kLargePool);
}
}  // namespace

CachingAllocator::CachingAllocator(DeviceMemoryBackend* backend, int num_devices, std::string name,
                                   DeviceType device_type)
    : backend_(backend), name_(std::move(name)), device_type_(device_type) {
  for (int i = 0; i < num_devices; ++i) {
    devices_.push_back(std::make_unique<DeviceState>());
    devices_.back()->index = i;
  }
}

CachingAllocator::~CachingAllocator() {
  // The backend may be gone at exit: only the bookkeeping is dropped, never device memory.
  for (auto& d : devices_) {
    std::set<Block*> all;
    auto collect = [&](BlockPool& p) { all.insert(p.blocks.begin(), p.blocks.end()); };
    collect(d->large);
    collect(d->small);
    for (auto& [id, pp] : d->graph_pools) {
      collect(pp->large);
      collect(pp->small);
    }
    for (auto& [ev, b] : d->events) all.insert(b);
    all.insert(d->deferred.begin(), d->deferred.end());
    for (Block* b : all) delete b;
  }
  for (auto& [p, b] : live_) delete b;
}

CachingAllocator::DeviceState& CachingAllocator::dev(int device) {
  EMBER_CHECK(device >= 0 && device < num_devices(), "[", name_, " allocator] invalid device ",
              device, " (", num_devices(), " device", num_devices() == 1 ? "" : "s", ")");
  return *devices_[size_t(device)];
}

CachingAllocator::BlockPool& CachingAllocator::pool_for(DeviceState& d, size_t size, void* stream) {
  for (auto& [id, s] : d.capturing) {
    if (s == stream) {
      PrivatePool& pp = *d.graph_pools.at(id);
      return size <= kSmallSize ? pp.small : pp.large;
    }
  }
  return size <= kSmallSize ? d.small : d.large;
}

CachingAllocator::Block* CachingAllocator::find_free_block(BlockPool& pool, size_t size,
                                                           void* stream) {
  Block key(0, stream, size, nullptr, nullptr);
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  // An oversize block never serves a request under max_split_size, nor one much smaller than
  // itself: that would pin a huge segment for a small tensor.
  if (size < max_split_size_ && b->size >= max_split_size_) return nullptr;
  if (size >= max_split_size_ && b->size >= size + kLargeBuffer) return nullptr;
  pool.blocks.erase(it);
  return b;
}

CachingAllocator::Block* CachingAllocator::alloc_segment(DeviceState& d, BlockPool& pool,
                                                         size_t bytes, void* stream, bool retry) {
  if (retry) ++d.stats.num_alloc_retries;
  if (d.capped && d.reserved + bytes > d.allowed) return nullptr;
  void* p = backend_->raw_malloc(bytes, d.index);
  if (!p) return nullptr;
  if (pool.owner) ++pool.owner->segment_count;
  d.reserved += bytes;
  auto* b = new Block(d.index, stream, bytes, &pool, static_cast<char*>(p));
  for_stats(pool, [&](int t) {
    update(d.stats.segment[t], 1);
    update(d.stats.reserved_bytes[t], int64_t(bytes));
  });
  if (bytes >= max_split_size_) update(d.stats.oversize_segments, 1);
  return b;
}

CachingAllocator::Block* CachingAllocator::take_block(DeviceState& d, BlockPool& pool, Block* block,
                                                      size_t size, void* stream) {
  const bool already_split = block->is_split();
  const size_t rest = block->size - size;
  const bool split =
      pool.is_small ? rest >= kMinBlockSize : (size < max_split_size_ && rest > kSmallSize);
  if (split) {
    Block* remaining = block;
    block = new Block(d.index, stream, size, &pool, remaining->ptr);
    block->prev = remaining->prev;
    if (block->prev) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr += size;
    remaining->size = rest;
    pool.blocks.insert(remaining);
    if (already_split) {
      // A free piece of a split segment shrinks by the block handed out.
      for_stats(pool, [&](int t) { update(d.stats.inactive_split_bytes[t], -int64_t(size)); });
    } else {
      // A whole free segment becomes split: its rest is a new inactive piece.
      for_stats(pool, [&](int t) {
        update(d.stats.inactive_split_bytes[t], int64_t(rest));
        update(d.stats.inactive_split[t], 1);
      });
    }
  } else if (already_split) {
    for_stats(pool, [&](int t) {
      update(d.stats.inactive_split_bytes[t], -int64_t(block->size));
      update(d.stats.inactive_split[t], -1);
    });
  }
  block->allocated = true;
  for_stats(pool, [&](int t) {
    update(d.stats.allocation[t], 1);
    update(d.stats.allocated_bytes[t], int64_t(block->size));
    update(d.stats.active[t], 1);
    update(d.stats.active_bytes[t], int64_t(block->size));
  });
  if (block->size >= max_split_size_) update(d.stats.oversize_allocations, 1);
  return block;
}

void* CachingAllocator::malloc(size_t nbytes, int device, void* stream) {
  if (nbytes == 0) return nullptr;
  DeviceState& d = dev(device);
  Block* block = nullptr;
  void* ptr = nullptr;
  size_t size = 0;
  int64_t allocated_now = 0, reserved_now = 0;
  {
    std::unique_lock<std::mutex> lock(d.mu);
    const bool capturing = !d.capturing.empty();
    // Querying an event recorded during a capture is an error: events wait for its end.
    if (!capturing) process_events(d);
    const size_t rounded = round_size(nbytes);
    BlockPool& pool = pool_for(d, rounded, stream);
    const size_t alloc_size = segment_size(rounded);
    block = find_free_block(pool, rounded, stream);
    if (!block) {
      block = alloc_segment(d, pool, alloc_size, stream, false);
      // Returning memory to the backend would break a capture under way.
      if (!block && !capturing) {
        release_cached(d);
        block = alloc_segment(d, pool, alloc_size, stream, true);
      }
      if (!block) throw_oom(d, alloc_size);
    }
    block = take_block(d, pool, block, rounded, stream);
    {
      std::lock_guard<std::mutex> g(live_mu_);
      live_[reinterpret_cast<uintptr_t>(block->ptr)] = block;
    }
    ptr = block->ptr;
    size = block->size;
    allocated_now = d.stats.allocated_bytes[kAggregate].current;
    reserved_now = d.stats.reserved_bytes[kAggregate].current;
  }
  report_memory(
      {ptr, int64_t(size), allocated_now, reserved_now, Device(device_type_, int8_t(device))});
  return ptr;
}

void CachingAllocator::throw_oom(DeviceState& d, size_t alloc_size) {
  size_t dev_free = 0, dev_total = 0;
  backend_->mem_get_info(d.index, &dev_free, &dev_total);
  ++d.stats.num_ooms;
  std::string allowed;
  if (d.capped) allowed = format_size(d.allowed) + " allowed; ";
  EMBER_THROW(::ember::Error, "[", name_, " allocator] ", name_,
              " out of memory. Tried to allocate ", format_size(alloc_size), " (GPU ", d.index,
              "; ", format_size(dev_total), " total capacity; ",
              format_size(uint64_t(d.stats.allocated_bytes[kAggregate].current)),
              " already allocated; ", format_size(dev_free), " free; ", allowed,
              format_size(uint64_t(d.stats.reserved_bytes[kAggregate].current)),
              " reserved in total by ember) If reserved memory is >> allocated memory, call "
              "empty_cache() to return cached blocks, or set max_split_size_mb "
              "(EMBER_CUDA_ALLOC_CONF) to limit fragmentation.");
}

void CachingAllocator::free(void* ptr) {
  if (!ptr) return;
  Block* block = nullptr;
  {
    std::lock_guard<std::mutex> g(live_mu_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
    EMBER_CHECK(it != live_.end(), "[", name_, " allocator] free of a pointer (", ptr,
                ") that is not a live block of this allocator");
    block = it->second;
    live_.erase(it);
  }
  DeviceState& d = dev(block->device);
  const size_t size = block->size;
  int64_t allocated_now = 0, reserved_now = 0;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    block->allocated = false;
    for_stats(*block->pool, [&](int t) {
      update(d.stats.allocation[t], -1);
      update(d.stats.allocated_bytes[t], -int64_t(size));
    });
    if (size >= max_split_size_) update(d.stats.oversize_allocations, -1);
    const bool private_pool = block->pool->owner != nullptr;
    if (!block->stream_uses.empty()) {
      if (!d.capturing.empty()) {
        d.deferred.push_back(block);
      } else {
        insert_events(d, block);
      }
    } else {
      free_block(d, block);
    }
    if (private_pool && d.capturing.empty()) release_freeable_pools(d);
    allocated_now = d.stats.allocated_bytes[kAggregate].current;
    reserved_now = d.stats.reserved_bytes[kAggregate].current;
  }
  report_memory(
      {ptr, -int64_t(size), allocated_now, reserved_now, Device(device_type_, int8_t(d.index))});
}

size_t CachingAllocator::try_merge(Block* dst, Block* src, BlockPool& pool) {
  if (!src || src->allocated || src->event_count > 0 || !src->stream_uses.empty()) return 0;
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  const size_t subsumed = src->size;
  dst->size += subsumed;
  pool.blocks.erase(src);
  delete src;
  return subsumed;
}

void CachingAllocator::free_block(DeviceState& d, Block* block) {
  const size_t original = block->size;
  BlockPool& pool = *block->pool;
  int64_t split_blocks = 0, split_bytes = 0;
  for (Block* neighbour : {block->prev, block->next}) {
    const size_t subsumed = try_merge(block, neighbour, pool);
    if (subsumed > 0) {
      split_blocks -= 1;
      split_bytes -= int64_t(subsumed);
    }
  }
  pool.blocks.insert(block);
  if (block->is_split()) {
    split_blocks += 1;
    split_bytes += int64_t(block->size);
  }
  for_stats(pool, [&](int t) {
    update(d.stats.inactive_split[t], split_blocks);
    update(d.stats.inactive_split_bytes[t], split_bytes);
    update(d.stats.active[t], -1);
    update(d.stats.active_bytes[t], -int64_t(original));
  });
}

void CachingAllocator::insert_events(DeviceState& d, Block* block) {
  std::vector<void*> streams;
  streams.swap(block->stream_uses);
  for (void* s : streams) {
    void* ev = backend_->create_event(d.index);
    backend_->record_event(ev, s, d.index);
    ++block->event_count;
    d.events.emplace_back(ev, block);
  }
}

void CachingAllocator::process_events(DeviceState& d) {
  if (d.events.empty()) return;
  std::vector<std::pair<void*, Block*>> events, pending;
  events.swap(d.events);
  bool freed = false;
  size_t i = 0;
  try {
    for (; i < events.size(); ++i) {
      auto [ev, block] = events[i];
      if (!backend_->query_event(ev)) {
        pending.emplace_back(ev, block);
        continue;
      }
      backend_->destroy_event(ev, d.index);
      // Freed at once, as its count reaches zero: a block not yet back in its pool must not
      // look mergeable to a neighbour freed in the same pass.
      if (--block->event_count == 0) {
        free_block(d, block);
        freed = true;
      }
    }
  } catch (...) {
    // A failed query (a broken device) keeps the events not yet seen for a later pass.
    pending.insert(pending.end(), events.begin() + long(i), events.end());
    d.events.swap(pending);
    throw;
  }
  d.events.swap(pending);
  if (freed) release_freeable_pools(d);
}

void CachingAllocator::synchronize_and_free_events(DeviceState& d) {
  std::vector<std::pair<void*, Block*>> events;
  events.swap(d.events);
  for (auto& [ev, block] : events) {
    backend_->synchronize_event(ev);
    backend_->destroy_event(ev, d.index);
    if (--block->event_count == 0) free_block(d, block);
  }
}

void CachingAllocator::release_segment(DeviceState& d, Block* block) {
  BlockPool& pool = *block->pool;
  backend_->raw_free(block->ptr, d.index);
  d.reserved -= block->size;
  if (pool.owner) --pool.owner->segment_count;
  for_stats(pool, [&](int t) {
    update(d.stats.segment[t], -1);
    update(d.stats.reserved_bytes[t], -int64_t(block->size));
  });
  if (block->size >= max_split_size_) update(d.stats.oversize_segments, -1);
  pool.blocks.erase(block);
  delete block;
}

void CachingAllocator::release_segments(DeviceState& d, BlockPool& pool) {
  std::vector<Block*> whole;
  for (Block* b : pool.blocks)
    if (!b->is_split()) whole.push_back(b);
  for (Block* b : whole) release_segment(d, b);
}

void CachingAllocator::release_freeable_pools(DeviceState& d) {
  for (auto it = d.graph_pools.begin(); it != d.graph_pools.end();) {
    PrivatePool& pp = *it->second;
    if (pp.use_count > 0) {
      ++it;
      continue;
    }
    release_segments(d, pp.small);
    release_segments(d, pp.large);
    it = pp.segment_count == 0 ? d.graph_pools.erase(it) : std::next(it);
  }
}

void CachingAllocator::release_cached(DeviceState& d) {
  synchronize_and_free_events(d);
  release_segments(d, d.large);
  release_segments(d, d.small);
  release_freeable_pools(d);
}

void CachingAllocator::record_stream(void* ptr, void* stream) {
  if (!ptr) return;
  int device = -1;
  auto find = [&]() -> Block* {
    std::lock_guard<std::mutex> g(live_mu_);
    auto it = live_.upper_bound(reinterpret_cast<uintptr_t>(ptr));
    if (it == live_.begin()) return nullptr;
    --it;
    Block* b = it->second;
    if (reinterpret_cast<uintptr_t>(ptr) >= it->first + b->size) return nullptr;
    return b;
  };
  Block* block = find();
  if (!block) return;  // not ours (from_blob memory, say): nothing to keep alive
  device = block->device;
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  block = find();                                 // still live: the caller holds the tensor
  if (!block || stream == block->stream) return;  // its own stream orders itself
  auto& uses = block->stream_uses;
  if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
}

size_t CachingAllocator::block_size(void* ptr) {
  std::lock_guard<std::mutex> g(live_mu_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
  return it == live_.end() ? 0 : it->second->size;
}

void CachingAllocator::empty_cache() {
  for (auto& dp : devices_) {
    DeviceState& d = *dp;
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.capturing.empty()) continue;  // freeing would invalidate the capture
    release_cached(d);
  }
}

void CachingAllocator::set_memory_fraction(double fraction, int device) {
  EMBER_CHECK_VALUE(fraction >= 0.0 && fraction <= 1.0,
                    "[set_per_process_memory_fraction] "
                    "invalid fraction ",
                    fraction, ": it must be within [0, 1]");
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  size_t free_bytes = 0, total = 0;
  backend_->mem_get_info(device, &free_bytes, &total);
  d.capped = true;
  d.allowed = size_t(fraction * double(total));
}

void CachingAllocator::set_max_split_size(size_t bytes) {
  for (auto& dp : devices_) dp->mu.lock();
  max_split_size_ = bytes;
  for (auto& dp : devices_) dp->mu.unlock();
}

DeviceStats CachingAllocator::stats(int device) {
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  return d.stats;
}

std::map<std::string, int64_t> CachingAllocator::memory_stats(int device) {
  const DeviceStats s = stats(device);
  std::map<std::string, int64_t> out;
  auto add = [&](const std::string& key, const Stat& st) {
    out[key + ".current"] = st.current;
    out[key + ".peak"] = st.peak;
    out[key + ".allocated"] = st.allocated;
    out[key + ".freed"] = st.freed;
  };
  auto add_array = [&](const std::string& name, const StatArray& a) {
    add(name + ".all", a[kAggregate]);
    add(name + ".small_pool", a[kSmallPool]);
    add(name + ".large_pool", a[kLargePool]);
  };
  add_array("allocation", s.allocation);
  add_array("segment", s.segment);
  add_array("active", s.active);
  add_array("inactive_split", s.inactive_split);
  add_array("allocated_bytes", s.allocated_bytes);
  add_array("reserved_bytes", s.reserved_bytes);
  add_array("active_bytes", s.active_bytes);
  add_array("inactive_split_bytes", s.inactive_split_bytes);
  add("oversize_allocations", s.oversize_allocations);
  add("oversize_segments", s.oversize_segments);
  out["num_alloc_retries"] = s.num_alloc_retries;
  out["num_ooms"] = s.num_ooms;
  // PyTorch reports the unlimited split size as SIZE_MAX cast to int64: -1.
  out["max_split_size"] = static_cast<int64_t>(max_split_size_);
  return out;
}

namespace {
template <class F>
void for_each_stat(DeviceStats& s, F f) {
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
                       &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes})
    for (Stat& st : *a) f(st);
  f(s.oversize_allocations);
  f(s.oversize_segments);
}
}  // namespace

void CachingAllocator::reset_peak(int device) {
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  for_each_stat(d.stats, [](Stat& s) { s.peak = s.current; });
}

void CachingAllocator::reset_accumulated(int device) {
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  for_each_stat(d.stats, [](Stat& s) { s.allocated = s.freed = 0; });
  d.stats.num_alloc_retries = 0;
  d.stats.num_ooms = 0;
}

void CachingAllocator::begin_allocate_to_pool(int device, PoolId id, void* stream) {
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  auto& pp = d.graph_pools[id];
  if (!pp) {
    pp = std::make_unique<PrivatePool>();
  } else {
    ++pp->use_count;  // another graph shares the pool (or a released one is revived)
  }
  d.capturing.emplace_back(id, stream);
}

void CachingAllocator::end_allocate_to_pool(int device, PoolId id) {
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  auto& c = d.capturing;
  c.erase(std::remove_if(c.begin(), c.end(), [&](const auto& e) { return e.first == id; }),
          c.end());
  if (!c.empty()) return;
  // No capture is under way any more: blocks freed during it get their events now.
  std::vector<Block*> deferred;
  deferred.swap(d.deferred);
  for (Block* b : deferred) insert_events(d, b);
  release_freeable_pools(d);
}

void CachingAllocator::release_pool(int device, PoolId id) {
  DeviceState& d = dev(device);
  std::lock_guard<std::mutex> lock(d.mu);
  auto it = d.graph_pools.find(id);
  EMBER_CHECK(it != d.graph_pools.end() && it->second->use_count > 0, "[", name_,
              " allocator] release of graph pool (", id.a, ", ", id.b,
              ") that no graph uses on device ", device);
  --it->second->use_count;
  if (d.capturing.empty()) release_freeable_pools(d);
}

// ---- memory_summary ----

namespace {
// A byte count as torch.cuda.memory_summary prints it: scaled down while it is >= 768 of a unit.
std::string summary_bytes(int64_t v, int64_t ref) {
  static const char* units[] = {"B ", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  double r = double(ref);
  while (u < 5 && r >= 768.0 * 1024.0) {
    v /= 1024;
    r /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%7lld %s", static_cast<long long>(v), units[u]);
  return buf;
}
std::string summary_count(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%10lld", static_cast<long long>(v));
  return buf;
}
}  // namespace

std::string CachingAllocator::memory_summary(int device, bool abbreviated) {
  const DeviceStats s = stats(device);
  const std::string rule(75, '-'), bold(75, '=');
  std::string out;
  auto line = [&](const std::string& text) { out += "|" + text + "|\n"; };
  auto centre = [](const std::string& text, size_t width) {
    size_t left = text.size() < width ? (width - text.size()) / 2 : 0;
    std::string r = std::string(left, ' ') + text;
    if (r.size() < width) r += std::string(width - r.size(), ' ');
    return r;
  };
  auto pad = [](std::string text, size_t width) {
    if (text.size() < width) text += std::string(width - text.size(), ' ');
    return text;
  };
  auto row = [&](const std::string& label, const Stat& st, bool bytes) {
    auto cell = [&](int64_t v, int64_t ref) {
      return " " + (bytes ? summary_bytes(v, ref) : summary_count(v)) + " ";
    };
    line(" " + pad(label, 21) + " |" + cell(st.current, st.current) + "|" + cell(st.peak, st.peak) +
         "|" + cell(st.allocated, st.allocated) + "|" + cell(st.freed, st.freed));
  };
  auto group = [&](const std::string& label, const StatArray& a, bool bytes) {
    row(label, a[kAggregate], bytes);
    if (!abbreviated) {
      row("      from large pool", a[kLargePool], bytes);
      row("      from small pool", a[kSmallPool], bytes);
    }
    line(rule);
  };
  std::string lower = name_;
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  line(bold);
  line(centre("ember " + name_ + " memory summary, device ID " + std::to_string(device), 75));
  line(rule);
  line(pad("            " + name_ + " OOMs: " + std::to_string(s.num_ooms), 37) + "|" +
       pad("        " + lower + "Malloc retries: " + std::to_string(s.num_alloc_retries), 37));
  line(bold);
  line("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
  line(rule);
  group("Allocated memory", s.allocated_bytes, true);
  group("Active memory", s.active_bytes, true);
  group("GPU reserved memory", s.reserved_bytes, true);
  group("Non-releasable memory", s.inactive_split_bytes, true);
  group("Allocations", s.allocation, false);
  group("Active allocs", s.active, false);
  group("GPU reserved segments", s.segment, false);
  group("Non-releasable allocs", s.inactive_split, false);
  row("Oversize allocations", s.oversize_allocations, false);
  row("Oversize GPU segments", s.oversize_segments, false);
  line(bold);
  return out;
}

}  // namespace ember::caching
