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

size_t checked_nbytes(const char* op, IntArrayRef sizes, size_t itemsize) {
  bool zero = false;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "[", op, "] Trying to create tensor with negative dimension ", s, ": ",
                shape_str(sizes));
    zero = zero || s == 0;
  }
  if (zero) return 0;
  int64_t n = int64_t(itemsize);
  for (int64_t s : sizes) {
    EMBER_CHECK(!__builtin_mul_overflow(n, s, &n), "[", op,
                "] Storage size calculation overflowed with sizes=", shape_str(sizes));
  }
  if (n > kMaxStorageBytes) throw_out_of_memory(op, size_t(n));
  return size_t(n);
}

size_t storage_nbytes(IntArrayRef sizes, ScalarType dtype) {
  return checked_nbytes("empty", sizes, elementSize(dtype));
}

void throw_out_of_memory(const char* op, size_t nbytes) {
  EMBER_THROW(Error, "[", op, "] out of memory: tried to allocate ", nbytes, " bytes");
}

void resize_output(Tensor& out, IntArrayRef sizes) {
  Tensor fresh = empty_tensor(sizes, out.dtype(), out.device());
  TensorImpl* impl = out.unsafeGetTensorImpl();
  impl->set_storage(fresh.storage());
  impl->set_sizes_and_strides(sizes, fresh.strides(), 0);
}

Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  return empty_tensor("empty", sizes, dtype, device);
}

Tensor empty_tensor(const char* op, IntArrayRef sizes, ScalarType dtype, Device device) {
  const size_t nbytes = checked_nbytes(op, sizes, elementSize(dtype));
  if (device.is_cpu() && nbytes > host_memory_bytes()) throw_out_of_memory(op, nbytes);
  Storage st = Storage::allocate(nbytes, device);
  return Tensor(make_intrusive<TensorImpl>(std::move(st), dtype, sizes));
}

std::string shape_str(IntArrayRef sizes) {
  std::ostringstream os;
  os << sizes;
  return os.str();
}

}  // namespace ember
