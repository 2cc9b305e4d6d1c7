#include "ember/tensor_impl.h"

#include "core/dispatch_state.h"

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

namespace {

/// prod(sizes), RuntimeError when it overflows int64 (a view or expand of impossible sizes would
/// otherwise report a wrapped numel); a zero size makes any product 0, as PyTorch's numel.
int64_t checked_numel(IntArrayRef sizes) {
  int64_t n = 1;
  bool overflow = false, zero = false;
  for (int64_t s : sizes) {
    overflow |= __builtin_mul_overflow(n, s, &n);
    zero |= s == 0;
  }
  if (zero) return 0;
  EMBER_CHECK(!overflow, "[numel] integer multiplication overflow with sizes=", sizes);
  return n;
}

}  // namespace

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
  note_created();
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(contiguous_strides(sizes)),
      version_(make_intrusive<VersionCounter>()),
      dtype_(dtype),
      is_inference_(inference_mode_tls()) {
  refresh();
  note_created();
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::note_created() const {
  bool cpu = !storage_.defined() || storage_.device().is_cpu();
  if (!cpu || dispatch::slow_path()) [[unlikely]]
    dispatch::on_tensor_created(cpu);
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  EMBER_INTERNAL_ASSERT(sizes.size() == strides.size());
  checked_numel(sizes);  // before any member changes
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
  numel_ = checked_numel(sizes_);
  is_contiguous_ = compute_contiguous(sizes_, strides_);
}

}  // namespace ember
