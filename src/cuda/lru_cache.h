#pragma once
// Plain C++ (no CUDA): a bounded least-recently-used map, for library plans (cuFFT) that are
// costly to build and hold device resources. Not thread-safe: the owner locks.

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <utility>

namespace ember::cuda {

/// At most `capacity` entries; a lookup or insert makes its entry the most recent, and an insert
/// beyond the capacity drops the least recent. Values are shared_ptrs, so an entry evicted
/// while a caller still uses it lives until that caller lets go.
template <class K, class V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  /// The value of `key`, made most recent; null when absent.
  std::shared_ptr<V> find(const K& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  /// Inserts (or replaces) `key`, most recent, evicting beyond the capacity.
  void insert(const K& key, std::shared_ptr<V> value) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
    } else {
      order_.emplace_front(key, std::move(value));
      index_.emplace(key, order_.begin());
    }
    trim();
  }

  /// Changes the bound (0 keeps nothing), evicting the least recent entries beyond it.
  void set_capacity(size_t capacity) {
    capacity_ = capacity;
    trim();
  }
  size_t capacity() const { return capacity_; }
  size_t size() const { return order_.size(); }
  void clear() {
    index_.clear();
    order_.clear();
  }

 private:
  void trim() {
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  size_t capacity_;
  std::list<std::pair<K, std::shared_ptr<V>>> order_;
  std::map<K, typename std::list<std::pair<K, std::shared_ptr<V>>>::iterator> index_;
};

}  // namespace ember::cuda
