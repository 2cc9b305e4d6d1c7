#pragma once
/// ember::OrderedDict: an insertion-ordered key → value map (libtorch's torch::OrderedDict).
/// Modules return their parameters and state dicts in one; ember::save writes one.

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/error.h"

namespace ember {

/// Keys keep the order of first insertion; lookup by key is O(1).
template <typename Key, typename Value>
class OrderedDict {
 public:
  /// One entry: `key()` and `value()`, as libtorch's OrderedDict::Item.
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return pair_.first; }
    Value& value() noexcept { return pair_.second; }
    const Value& value() const noexcept { return pair_.second; }
    Value& operator*() noexcept { return pair_.second; }
    const Value& operator*() const noexcept { return pair_.second; }
    Value* operator->() noexcept { return &pair_.second; }
    const Value* operator->() const noexcept { return &pair_.second; }
    const std::pair<Key, Value>& pair() const noexcept { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };
  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  /// `key_description` names the keys in error messages ("Parameter", "Buffer").
  explicit OrderedDict(std::string key_description = "Key")
      : key_description_(std::move(key_description)) {}
  OrderedDict(std::initializer_list<Item> items) : OrderedDict() {
    for (const Item& it : items) insert(it.key(), it.value());
  }

  const std::string& key_description() const noexcept { return key_description_; }

  /// Inserts a new key; a key already present is an error.
  template <typename V>
  Value& insert(Key key, V&& value) {
    EMBER_CHECK(index_.count(key) == 0, "[OrderedDict] ", key_description_, " '", key,
                "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), Value(std::forward<V>(value)));
    return items_.back().value();
  }
  /// Inserts or replaces the value of `key` (the position of an existing key is kept).
  template <typename V>
  Value& insert_or_assign(Key key, V&& value) {
    if (Value* v = find(key)) return *v = Value(std::forward<V>(value));
    return insert(std::move(key), std::forward<V>(value));
  }
  /// insert_or_assign for every item of `other`, in its order.
  void update(const OrderedDict& other) {
    for (const Item& it : other) insert_or_assign(it.key(), it.value());
  }

  /// The value of `key`, or nullptr.
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }

  /// The value of `key`; a missing key is an error naming it.
  Value& operator[](const Key& key) {
    Value* v = find(key);
    EMBER_CHECK(v != nullptr, "[OrderedDict] ", key_description_, " '", key, "' is not defined");
    return *v;
  }
  const Value& operator[](const Key& key) const {
    const Value* v = find(key);
    EMBER_CHECK(v != nullptr, "[OrderedDict] ", key_description_, " '", key, "' is not defined");
    return *v;
  }
  /// The item at insertion position `i`.
  Item& operator[](size_t i) {
    EMBER_CHECK_INDEX(i < items_.size(), "[OrderedDict] index ", i, " is out of range for ",
                      items_.size(), " items");
    return items_[i];
  }
  const Item& operator[](size_t i) const {
    EMBER_CHECK_INDEX(i < items_.size(), "[OrderedDict] index ", i, " is out of range for ",
                      items_.size(), " items");
    return items_[i];
  }

  /// Removes `key` (an error when missing); later items keep their order.
  void erase(const Key& key) {
    auto it = index_.find(key);
    EMBER_CHECK(it != index_.end(), "[OrderedDict] ", key_description_, " '", key,
                "' is not defined");
    size_t pos = it->second;
    index_.erase(it);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
    for (auto& kv : index_)
      if (kv.second > pos) --kv.second;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  bool empty() const noexcept { return items_.empty(); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& it : items_) out.push_back(it.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& it : items_) out.push_back(it.value());
    return out;
  }

 private:
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
  std::string key_description_;
};

}  // namespace ember
