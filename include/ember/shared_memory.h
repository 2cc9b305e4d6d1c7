#pragma once
/// Shared-memory storages: moving a CPU tensor's storage into memory that other processes can
/// map, exporting it as a file descriptor, and mapping a received descriptor back into a tensor.
///
/// Note [Shared-memory storages]
/// `share_memory_(t)` swaps the memory behind `t`'s StorageImpl for an anonymous shared file
/// (memfd_create; shm_open + unlink where memfd is missing) mapped MAP_SHARED, after copying the
/// bytes. The StorageImpl stays the same object, so every view, Parameter and optimizer state
/// that holds it sees the shared block. A shared block owns one descriptor (close-on-exec) and
/// one mapping; the storage's deleter unmaps and closes both. Descriptors travel between
/// processes by SCM_RIGHTS or inheritance (Python's multiprocessing does this); the receiver
/// maps them with `storage_from_fd`, which returns the storage already mapped in this process
/// when the same file (device, inode) arrives twice, so views stay views. Forked children
/// inherit the mappings: writes on either side are seen by both.

#include <cstddef>
#include <cstdint>

#include "ember/array_ref.h"
#include "ember/dtype.h"
#include "ember/storage.h"
#include "ember/tensor.h"

namespace ember {

/// Moves the storage of CPU tensor `t` into shared memory in place (bytes copied; every tensor
/// sharing the storage follows). No-op when it is already shared. Error for non-CPU tensors.
void share_memory_(const Tensor& t);
/// Whether `t`'s storage lives in shared memory (false for non-CPU tensors).
bool is_shared(const Tensor& t);
/// Whether `s` is a shared-memory storage.
bool is_shared(const Storage& s);

namespace shm {

/// What another process needs to map a shared storage.
struct Handle {
  int fd = -1;        ///< owned by the storage: dup it before handing it on
  size_t nbytes = 0;  ///< the storage's size in bytes
  uint64_t dev = 0;   ///< st_dev of the file (with `inode`, identifies the block)
  uint64_t inode = 0;
};

/// The handle of shared storage `s`; error when `s` is not shared.
Handle handle(const Storage& s);
/// The storage for a received descriptor: the one already mapped here when the same file
/// arrived before, else a new mapping of its first `nbytes` bytes. Does not take `fd` (the
/// caller still closes it); error when the file is smaller than `nbytes`.
Storage storage_from_fd(int fd, size_t nbytes);
/// A new shared storage of `nbytes` bytes (zeroed).
Storage allocate(size_t nbytes);
/// A tensor of `dtype` viewing `storage` with the given geometry; error when an element would
/// lie outside the storage.
Tensor tensor_from_storage(const Storage& storage, ScalarType dtype, IntArrayRef sizes,
                           IntArrayRef strides, int64_t storage_offset);
/// Number of shared storages this process remembers for `storage_from_fd` (for tests).
size_t cached_storage_count();

}  // namespace shm
}  // namespace ember
