#pragma once
/// Storage: a reference-counted block of device memory shared by a tensor and its views.

#include <utility>

#include "ember/allocator.h"
#include "ember/intrusive_ptr.h"

namespace ember {

/// The memory behind tensors. Views of one tensor share one StorageImpl.
class StorageImpl : public intrusive_ptr_target {
 public:
  StorageImpl(DataPtr data, size_t nbytes, Allocator* alloc)
      : data_(std::move(data)), nbytes_(nbytes), allocator_(alloc) {}
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  Allocator* allocator() const { return allocator_; }  ///< null for from_blob memory
  /// Replaces the memory (same size) behind every tensor of this storage, e.g. to move it into
  /// shared memory; returns the old block. The caller copies the bytes and keeps views valid.
  DataPtr exchange_data(DataPtr data, Allocator* alloc) {
    std::swap(data_, data);
    allocator_ = alloc;
    return data;
  }

 private:
  DataPtr data_;
  size_t nbytes_;
  Allocator* allocator_;
};

/// Handle to a StorageImpl.
class Storage {
 public:
  Storage() = default;
  explicit Storage(intrusive_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  /// Allocates `nbytes` on `device` with that device's allocator.
  static Storage allocate(size_t nbytes, Device device);
  void* data() const { return impl_->data(); }
  size_t nbytes() const { return impl_->nbytes(); }
  Device device() const { return impl_->device(); }
  bool defined() const { return bool(impl_); }
  StorageImpl* unsafeGetStorageImpl() const { return impl_.get(); }
  size_t use_count() const { return impl_.use_count(); }
  bool is_alias_of(const Storage& o) const { return impl_ == o.impl_; }

 private:
  intrusive_ptr<StorageImpl> impl_;
};

}  // namespace ember
