#pragma once
/// ArrayRef (a non-owning view of a contiguous array, constructible from an initializer list,
/// as libtorch's IntArrayRef) and DimVector (sizes/strides with inline storage).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

/// Non-owning view of `size()` contiguous `T`s. Valid only while the referenced array lives.
template <class T>
class ArrayRef {
 public:
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: implicit as libtorch
  constexpr ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  /// Views the list's array: valid for the full-expression, as for a function argument.
  constexpr ArrayRef(std::initializer_list<T> il)  // NOLINT
      : data_(il.begin() == il.end() ? nullptr : il.begin()), size_(il.size()) {}
#pragma GCC diagnostic pop
  template <class A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <class C, class = decltype(std::declval<const C&>().data()),
            class = std::enable_if_t<!std::is_same_v<C, std::vector<T>>>>
  ArrayRef(const C& c) : data_(c.data()), size_(c.size()) {}  // NOLINT

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  ArrayRef slice(size_t start, size_t n) const { return ArrayRef(data_ + start, n); }
  ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }
  friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;

template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

/// Sizes/strides vector: up to 6 dims inline (no heap), more spill to the heap.
class DimVector {
 public:
  static constexpr size_t kInline = 6;
  DimVector() = default;
  explicit DimVector(size_t n, int64_t v = 0) { assign(n, v); }
  DimVector(IntArrayRef a) { assign(a); }  // NOLINT
  DimVector(std::initializer_list<int64_t> il) { assign(IntArrayRef(il)); }
  DimVector(const DimVector& o) { assign(IntArrayRef(o.data(), o.size())); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(IntArrayRef(o.data(), o.size()));
    return *this;
  }
  DimVector(DimVector&& o) noexcept { steal(o); }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~DimVector() { release(); }

  void assign(IntArrayRef a) {
    reserve(a.size());
    if (a.size()) std::memmove(data(), a.data(), a.size() * sizeof(int64_t));
    size_ = a.size();
  }
  void assign(size_t n, int64_t v) {
    reserve(n);
    std::fill(data(), data() + n, v);
    size_ = n;
  }
  void resize(size_t n, int64_t v = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, v);
    size_ = n;
  }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(int64_t));
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }

  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& back() { return data()[size_ - 1]; }
  operator IntArrayRef() const { return IntArrayRef(data(), size_); }  // NOLINT
  IntArrayRef ref() const { return IntArrayRef(data(), size_); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

 private:
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    auto* p = new int64_t[cap];
    if (size_) std::memcpy(p, data(), size_ * sizeof(int64_t));
    delete[] heap_;
    heap_ = p;
    cap_ = cap;
  }
  void release() {
    delete[] heap_;
    heap_ = nullptr;
    cap_ = kInline;
    size_ = 0;
  }
  void steal(DimVector& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.cap_ = kInline;
    } else {
      heap_ = nullptr;
      cap_ = kInline;
      std::memcpy(inline_, o.inline_, size_ * sizeof(int64_t));
    }
    o.size_ = 0;
  }

  int64_t inline_[kInline];
  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = kInline;
};

/// An optional ArrayRef (libtorch's c10::OptionalArrayRef): nullopt, or a view of a list that
/// must outlive it (a function argument is fine). It converts in one step from one element, a
/// braced list, an ArrayRef or any container, so `t.std(2, false)` picks the dim overload as in
/// libtorch. (std::optional<IntArrayRef> built from an int would view a dead temporary.)
template <class T>
class OptionalArrayRef {
 public:
  constexpr OptionalArrayRef() noexcept = default;
  constexpr OptionalArrayRef(std::nullopt_t) noexcept {}  // NOLINT: implicit as libtorch
  constexpr OptionalArrayRef(const std::optional<ArrayRef<T>>& o) noexcept : v_(o) {}  // NOLINT
  /// One element, viewed in place: the argument's temporary lives to the end of the call.
  constexpr OptionalArrayRef(const T& one) noexcept : v_(ArrayRef<T>(one)) {}  // NOLINT
  constexpr OptionalArrayRef(const std::initializer_list<T>& il)               // NOLINT
      : v_(ArrayRef<T>(il)) {}
  /// ArrayRef, std::vector, DimVector, ...: anything that converts to ArrayRef<T> but not to T.
  template <class U,
            std::enable_if_t<!std::is_same_v<std::decay_t<U>, OptionalArrayRef> &&
                                 !std::is_same_v<std::decay_t<U>, std::nullopt_t> &&
                                 !std::is_same_v<std::decay_t<U>, std::optional<ArrayRef<T>>> &&
                                 std::is_convertible_v<U&&, ArrayRef<T>> &&
                                 !std::is_convertible_v<U&&, T>,
                             int> = 0>
  constexpr OptionalArrayRef(U&& v) : v_(ArrayRef<T>(std::forward<U>(v))) {}  // NOLINT

  constexpr bool has_value() const noexcept { return v_.has_value(); }
  constexpr explicit operator bool() const noexcept { return v_.has_value(); }
  constexpr const ArrayRef<T>& value() const { return v_.value(); }
  constexpr const ArrayRef<T>& operator*() const { return *v_; }
  constexpr const ArrayRef<T>* operator->() const { return &*v_; }
  constexpr ArrayRef<T> value_or(ArrayRef<T> other) const { return v_ ? *v_ : other; }
  /// The list, or an empty one for nullopt (what "every dim" reductions take).
  constexpr ArrayRef<T> value_or_empty() const { return v_ ? *v_ : ArrayRef<T>(); }

 private:
  std::optional<ArrayRef<T>> v_;
};

/// libtorch's at::OptionalIntArrayRef: a reduction's `dim` where nullopt means every dim.
using OptionalIntArrayRef = OptionalArrayRef<int64_t>;

}  // namespace ember
