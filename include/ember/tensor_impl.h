#pragma once
/// TensorImpl: the object behind a Tensor handle.
///
/// Note [Tensor invariants]
/// - `sizes_`/`strides_` have `dim()` entries; strides are in elements and may be 0 (expanded)
///   but never negative. `numel_` is the product of sizes (cached).
/// - The elements live at `storage.data() + (storage_offset_ + sum(i_k * stride_k)) * itemsize`;
///   every reachable element lies inside the storage.
/// - Views share the storage *and* the version counter: an in-place write through any view bumps
///   the one counter, which is what autograd checks saved tensors against.
/// - `is_conj_` marks a lazy conjugate view: the stored values are the conjugates of the
///   tensor's values. Kernels see resolved tensors (the op layer materialises the conjugate).
/// - Autograd metadata is allocated on first use (`requires_grad_(true)`), so plain tensors
///   pay one null pointer for it.

#include <atomic>
#include <memory>

#include "ember/array_ref.h"
#include "ember/dtype.h"
#include "ember/storage.h"

namespace ember {

/// Version counter shared by a tensor and all its views.
struct VersionCounter : intrusive_ptr_target {
  std::atomic<uint32_t> version{0};
  /// Name of the in-place op that last bumped the counter (for autograd's error messages).
  std::atomic<const char*> last_writer{nullptr};
};

/// Autograd state of a tensor; src/autograd/meta.h holds the one implementation.
class AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl : public intrusive_ptr_target {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);
  /// A contiguous tensor over `storage`.
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes);
  ~TensorImpl() override;

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return int64_t(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  size_t itemsize() const { return elementSize(dtype_); }
  Device device() const { return storage_.device(); }
  const Storage& storage() const { return storage_; }
  bool is_contiguous() const { return is_contiguous_; }
  bool is_conj() const { return is_conj_; }
  void set_conj(bool c) { is_conj_ = c; }
  /// A tensor made from a Python/C++ number: promotes weakly (`torch.result_type`).
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool w) { is_wrapped_number_ = w; }

  /// Address of element 0 (storage data + offset).
  void* data() const {
    return static_cast<char*>(storage_.data()) + storage_offset_ * int64_t(itemsize());
  }

  /// Replaces the geometry (for in-place view ops such as `t_()`, `squeeze_()`).
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t offset);

  /// Replaces the storage (out= resizing); the caller sets the geometry next.
  void set_storage(Storage s) { storage_ = std::move(s); }
  /// Takes `src`'s storage, dtype, geometry and conjugate bit, keeping this tensor's identity,
  /// version counter and autograd state (`Tensor.data = src`; Module::to(dtype) in place).
  void set_data_from(const TensorImpl& src);

  uint32_t version() const { return version_->version.load(std::memory_order_relaxed); }
  /// Bumps the shared version; `op` names the in-place op for autograd's error messages.
  void bump_version(const char* op = nullptr) {
    version_->version.fetch_add(1, std::memory_order_relaxed);
    if (op) version_->last_writer.store(op, std::memory_order_relaxed);
  }
  const intrusive_ptr<VersionCounter>& version_counter() const { return version_; }
  /// Makes this tensor share `vc` (used when creating a view of another tensor).
  void set_version_counter(intrusive_ptr<VersionCounter> vc) { version_ = std::move(vc); }

  /// The tensor this one is a view of (the root base, never itself a view), or null.
  TensorImpl* view_base() const { return view_base_.get(); }
  const intrusive_ptr<TensorImpl>& view_base_ptr() const { return view_base_; }
  void set_view_base(intrusive_ptr<TensorImpl> b) { view_base_ = std::move(b); }
  /// Created under InferenceMode: may not take part in autograd later.
  bool is_inference() const { return is_inference_; }
  void set_inference(bool v) { is_inference_ = v; }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) {
    autograd_meta_ = std::move(m);
  }

 private:
  void refresh();
  /// Tells the call path a tensor was created (device tensors, the Coverage layer).
  void note_created() const;

  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;
  intrusive_ptr<VersionCounter> version_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  intrusive_ptr<TensorImpl> view_base_;
  ScalarType dtype_;
  bool is_contiguous_ = true;
  bool is_conj_ = false;
  bool is_wrapped_number_ = false;
  bool is_inference_ = false;
};

/// Row-major contiguous strides for `sizes` (size-1 dims get the stride they would have).
DimVector contiguous_strides(IntArrayRef sizes);
/// Whether `sizes`/`strides` describe a row-major contiguous layout (size-1 dims ignored).
bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides);

}  // namespace ember
