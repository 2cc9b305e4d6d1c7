// PrefixStore: forwards every call to the underlying store with "<prefix>/" before each key, so
// groups and jobs can share one store without their keys meeting.
#include "store_common.h"

namespace ember::distributed {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store ? store->timeout() : kDefaultStoreTimeout),
      prefix_(std::move(prefix)),
      store_(std::move(store)) {
  EMBER_CHECK_VALUE(store_ != nullptr, "[PrefixStore] the underlying store is null (prefix '",
                    prefix_, "')");
}

void PrefixStore::set(const std::string& k, const std::vector<uint8_t>& value) {
  store_->set(key(k), value);
}

// The prefix store's own timeout applies (it may differ from the underlying store's).
std::vector<uint8_t> PrefixStore::get(const std::string& k) {
  if (timeout_ != store_->timeout()) {
    try {
      store_->wait({key(k)}, timeout_);
    } catch (const DistStoreError& e) {
      // Report the call the user made ("[TCPStore.get] timed out ...").
      std::string m = e.what();
      auto at = m.find(".wait] ");
      if (at != std::string::npos) m.replace(at, 7, ".get] ");
      throw DistStoreError(m);
    }
  }
  return store_->get(key(k));
}

std::vector<uint8_t> PrefixStore::compare_set(const std::string& k,
                                              const std::vector<uint8_t>& expected,
                                              const std::vector<uint8_t>& desired) {
  return store_->compare_set(key(k), expected, desired);
}

int64_t PrefixStore::add(const std::string& k, int64_t value) { return store_->add(key(k), value); }

bool PrefixStore::delete_key(const std::string& k) { return store_->delete_key(key(k)); }

bool PrefixStore::check(const std::vector<std::string>& keys) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(key(k));
  return store_->check(full);
}

// As c10d: the underlying store's count (every prefix's keys together).
int64_t PrefixStore::num_keys() { return store_->num_keys(); }

void PrefixStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(key(k));
  store_->wait(full, timeout == kUnsetTimeout ? timeout_ : timeout);
}

}  // namespace ember::distributed
