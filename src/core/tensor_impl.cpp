#include "ember/tensor_impl.h"

#include "ember/error.h"

namespace ember {

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

bool& inference_mode_tls() {
  static thread_local bool on = false;
  return on;
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      storage_offset_(storage_offset),
      version_(make_intrusive<VersionCounter>()),
      dtype_(dtype),
      is_inference_(inference_mode_tls()) {
  EMBER_INTERNAL_ASSERT(sizes.size() == strides.size());
  refresh();
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(contiguous_strides(sizes)),
      version_(make_intrusive<VersionCounter>()),
      dtype_(dtype),
      is_inference_(inference_mode_tls()) {
  refresh();
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  EMBER_INTERNAL_ASSERT(sizes.size() == strides.size());
  sizes_.assign(sizes);
  strides_.assign(strides);
  storage_offset_ = offset;
  refresh();
}

void TensorImpl::set_data_from(const TensorImpl& src) {
  storage_ = src.storage_;
  dtype_ = src.dtype_;
  sizes_ = src.sizes_;
  strides_ = src.strides_;
  storage_offset_ = src.storage_offset_;
  is_conj_ = src.is_conj_;
  refresh();
}

void TensorImpl::refresh() {
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  numel_ = n;
  is_contiguous_ = compute_contiguous(sizes_, strides_);
}

}  // namespace ember
