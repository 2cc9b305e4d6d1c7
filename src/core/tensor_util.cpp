#include "core/tensor_util.h"

#include <sstream>

#include "ember/error.h"

namespace ember {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);
  EMBER_CHECK_INDEX(dim >= -n && dim < n, "[", op,
                    "] dimension out of range (expected to be in "
                    "range of [",
                    -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return make_view_with_dtype(base, base.dtype(), sizes, strides, offset);
}

Tensor make_view_with_dtype(const Tensor& base, ScalarType dtype, IntArrayRef sizes,
                            IntArrayRef strides, int64_t offset) {
  TensorImpl* b = base.unsafeGetTensorImpl();
  auto impl = make_intrusive<TensorImpl>(b->storage(), dtype, sizes, strides, offset);
  impl->set_version_counter(b->version_counter());
  impl->set_conj(b->is_conj() && isComplexType(dtype));
  impl->set_view_base(b->view_base() ? b->view_base_ptr() : base.impl());
  impl->set_inference(b->is_inference());
  return Tensor(std::move(impl));
}

size_t storage_nbytes(IntArrayRef sizes, ScalarType dtype) {
  bool zero = false;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "[empty] negative dimension ", s, " in size ", shape_str(sizes));
    zero = zero || s == 0;
  }
  if (zero) return 0;
  // Checked: a silently wrapped product would give a too-small storage.
  int64_t n = int64_t(elementSize(dtype));
  for (int64_t s : sizes) {
    EMBER_CHECK(!__builtin_mul_overflow(n, s, &n),
                "[empty] Storage size calculation overflowed with sizes=", shape_str(sizes));
  }
  return size_t(n);
}

void resize_output(Tensor& out, IntArrayRef sizes) {
  Tensor fresh = empty_tensor(sizes, out.dtype(), out.device());
  TensorImpl* impl = out.unsafeGetTensorImpl();
  impl->set_storage(fresh.storage());
  impl->set_sizes_and_strides(sizes, fresh.strides(), 0);
}

Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  Storage st = Storage::allocate(storage_nbytes(sizes, dtype), device);
  return Tensor(make_intrusive<TensorImpl>(std::move(st), dtype, sizes));
}

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream os;
  os << sizes;
  return os.str();
}

}  // namespace ember
