#pragma once
/// Building blocks of the nn Options structs: EMBER_ARG (a member with a chained setter, as
/// libtorch's TORCH_ARG) and ExpandingArray (one value, or one per spatial dimension).

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "ember/array_ref.h"
#include "ember/error.h"

/// Declares `name_` of type T with a chained setter `name(value)` and a getter `name()`.
#define EMBER_ARG(T, name)                                        \
 public:                                                          \
  inline auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                                   \
    return *this;                                                 \
  }                                                               \
  inline auto name(T&& new_##name)->decltype(*this) {             \
    this->name##_ = std::move(new_##name);                        \
    return *this;                                                 \
  }                                                               \
  inline const T& name() const noexcept { return this->name##_; } \
  inline T& name() noexcept { return this->name##_; }             \
                                                                  \
 private:                                                         \
  T name##_ /* NOLINT */

namespace ember {

/// D values of T, built from one value (repeated) or from exactly D values.
template <size_t D, typename T = int64_t>
class ExpandingArray {
 public:
  ExpandingArray(T single) { values_.fill(single); }  // NOLINT: implicit, as libtorch
  ExpandingArray(std::initializer_list<T> list) : ExpandingArray(ArrayRef<T>(list)) {}
  ExpandingArray(std::vector<T> list) : ExpandingArray(ArrayRef<T>(list)) {}  // NOLINT
  ExpandingArray(ArrayRef<T> list) {                                          // NOLINT
    EMBER_CHECK_VALUE(list.size() == D, "[nn] expected ", D, " values, got ", list.size());
    std::copy(list.begin(), list.end(), values_.begin());
  }
  ExpandingArray(const std::array<T, D>& values) : values_(values) {}  // NOLINT

  T& operator[](size_t i) { return values_[i]; }
  const T& operator[](size_t i) const { return values_[i]; }
  T* data() { return values_.data(); }
  const T* data() const { return values_.data(); }
  static constexpr size_t size() { return D; }
  operator ArrayRef<T>() const { return ArrayRef<T>(values_.data(), D); }  // NOLINT
  ArrayRef<T> ref() const { return ArrayRef<T>(values_.data(), D); }
  std::vector<T> vec() const { return std::vector<T>(values_.begin(), values_.end()); }
  bool operator==(const ExpandingArray& o) const { return values_ == o.values_; }

 private:
  std::array<T, D> values_{};
};

/// ExpandingArray whose entries may be missing (adaptive pooling's output_size).
template <size_t D, typename T = int64_t>
using ExpandingArrayWithOptionalElem = ExpandingArray<D, std::optional<T>>;

}  // namespace ember
