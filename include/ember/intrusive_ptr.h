#pragma once
/// A minimal intrusive reference-counted pointer: the count lives in the object, so a handle is
/// one pointer wide and copying it is one atomic increment.

#include <atomic>
#include <cstddef>
#include <utility>

namespace ember {

/// Base for intrusively counted objects.
class intrusive_ptr_target {
 public:
  intrusive_ptr_target() = default;
  intrusive_ptr_target(const intrusive_ptr_target&) : refcount_(0) {}
  intrusive_ptr_target& operator=(const intrusive_ptr_target&) { return *this; }
  virtual ~intrusive_ptr_target() = default;
  size_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  template <class T>
  friend class intrusive_ptr;
  mutable std::atomic<size_t> refcount_{0};
};

/// Owning handle to a `T` derived from intrusive_ptr_target.
template <class T>
class intrusive_ptr {
 public:
  intrusive_ptr() = default;
  intrusive_ptr(std::nullptr_t) {}  // NOLINT
  /// Takes a new reference to `p` (which may already be owned by other handles).
  explicit intrusive_ptr(T* p) : p_(p) { retain(); }
  intrusive_ptr(const intrusive_ptr& o) : p_(o.p_) { retain(); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  intrusive_ptr(intrusive_ptr<U> o) : p_(o.release()) {}  // NOLINT
  ~intrusive_ptr() { reset(); }
  intrusive_ptr& operator=(const intrusive_ptr& o) {
    intrusive_ptr tmp(o);
    swap(tmp);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept {
    intrusive_ptr tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  template <class... Args>
  static intrusive_ptr make(Args&&... args) {
    return intrusive_ptr(new T(std::forward<Args>(args)...));
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  size_t use_count() const { return p_ ? p_->use_count() : 0; }
  void reset() {
    if (p_ && p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
    p_ = nullptr;
  }
  /// Gives up ownership without decrementing (the caller owns one reference).
  T* release() {
    T* p = p_;
    p_ = nullptr;
    return p;
  }
  void swap(intrusive_ptr& o) noexcept { std::swap(p_, o.p_); }
  bool operator==(const intrusive_ptr& o) const { return p_ == o.p_; }
  bool operator!=(const intrusive_ptr& o) const { return p_ != o.p_; }

 private:
  template <class U>
  friend class intrusive_ptr;
  struct adopt_t {};
  void retain() {
    if (p_) p_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  T* p_ = nullptr;
};

template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>::make(std::forward<Args>(args)...);
}

}  // namespace ember
