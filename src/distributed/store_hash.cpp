// HashStore: an in-process map guarded by a mutex; waiters sleep on one condition variable that
// every insertion wakes.
#include <condition_variable>
#include <map>
#include <mutex>

#include "store_common.h"

namespace ember::distributed {

using namespace store_detail;

struct HashStore::Impl {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::vector<uint8_t>> map;

  std::vector<std::string> missing(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    for (const auto& k : keys)
      if (!map.count(k)) out.push_back(k);
    return out;
  }
  // Waits (lock held) until every key exists; throws DistStoreError at the deadline.
  void wait_locked(std::unique_lock<std::mutex>& l, const char* op,
                   const std::vector<std::string>& keys, Milliseconds t) {
    auto deadline = deadline_after(t);
    auto ready = [&] { return missing(keys).empty(); };
    if (deadline == Clock::time_point::max()) {
      cv.wait(l, ready);
    } else if (!cv.wait_until(l, deadline, ready)) {
      throw DistStoreError(timeout_message(op, t, keys, missing(keys)));
    }
  }
};

HashStore::HashStore() : impl_(std::make_unique<Impl>()) {}
HashStore::~HashStore() = default;

void HashStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    impl_->map[key] = value;
  }
  impl_->cv.notify_all();
}

std::vector<uint8_t> HashStore::get(const std::string& key) {
  auto t = resolve_timeout("HashStore.get", kUnsetTimeout, timeout_);
  std::unique_lock<std::mutex> l(impl_->mu);
  impl_->wait_locked(l, "HashStore.get", {key}, t);
  return impl_->map.at(key);
}

std::vector<uint8_t> HashStore::compare_set(const std::string& key,
                                            const std::vector<uint8_t>& expected,
                                            const std::vector<uint8_t>& desired) {
  std::unique_lock<std::mutex> l(impl_->mu);
  auto it = impl_->map.find(key);
  if (it == impl_->map.end()) {
    // c10d: a missing key is set only when `expected` is empty; otherwise `expected` returns.
    if (!expected.empty()) return expected;
    impl_->map[key] = desired;
  } else if (it->second == expected) {
    it->second = desired;
  } else {
    return it->second;
  }
  l.unlock();
  impl_->cv.notify_all();
  return desired;
}

int64_t HashStore::add(const std::string& key, int64_t value) {
  int64_t sum;
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    auto it = impl_->map.find(key);
    int64_t cur =
        parse_counter("HashStore.add", key, it == impl_->map.end() ? nullptr : &it->second);
    sum = static_cast<int64_t>(static_cast<uint64_t>(cur) + static_cast<uint64_t>(value));
    impl_->map[key] = to_bytes(std::to_string(sum));
  }
  impl_->cv.notify_all();
  return sum;
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->map.erase(key) > 0;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->missing(keys).empty();
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> l(impl_->mu);
  return static_cast<int64_t>(impl_->map.size());
}

void HashStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  auto t = resolve_timeout("HashStore.wait", timeout, timeout_);
  std::unique_lock<std::mutex> l(impl_->mu);
  impl_->wait_locked(l, "HashStore.wait", keys, t);
}

}  // namespace ember::distributed
