// CPU kernels of the index checks, index_select, take / put and the index_{copy,add,fill}
// family: each turns its indices into element offsets and runs one IndexLoop (index_loops.h).
#include <vector>

#include "ember/error.h"
#include "ember/tensor.h"
#include "kernels/cpu/index/index_loops.h"
#include "kernels/stubs/index.h"

namespace ember {

EMBER_DEFINE_KERNEL(index_check_stub);
EMBER_DEFINE_KERNEL(index_select_stub);
EMBER_DEFINE_KERNEL(take_stub);
EMBER_DEFINE_KERNEL(put_stub);
EMBER_DEFINE_KERNEL(index_copy_stub);
EMBER_DEFINE_KERNEL(index_add_stub);
EMBER_DEFINE_KERNEL(index_fill_stub);

namespace cpu {
namespace {

DimVector without(IntArrayRef v, int64_t dim) {
  DimVector r;
  for (int64_t d = 0; d < int64_t(v.size()); ++d) {
    if (d != dim) r.push_back(v[size_t(d)]);
  }
  return r;
}

/// Element offsets of checked indices along a dim of the given stride (negatives wrapped).
std::vector<int64_t> dim_offsets(const Tensor& idx, int64_t size, int64_t stride) {
  const int64_t n = idx.numel();
  const int64_t* p = idx.data_ptr<int64_t>();
  std::vector<int64_t> off(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) off[size_t(i)] = (p[i] < 0 ? p[i] + size : p[i]) * stride;
  return off;
}

/// The IndexLoop writing entry i of `src` (along dim) to `dst` at `off[i]`.
IndexLoop along_dim_loop(const Tensor& dst, int64_t dim, const std::vector<int64_t>& off,
                         const Tensor& src) {
  IndexLoop l;
  l.n = int64_t(off.size());
  l.rest_sizes = without(dst.sizes(), dim);
  l.elsize = dst.element_size();
  l.dst.data = static_cast<char*>(dst.data_ptr());
  l.dst.off = off.data();
  l.dst.rest_strides = without(dst.strides(), dim);
  if (src.defined()) {
    l.src.data = static_cast<char*>(src.data_ptr());
    l.src.istride = src.stride(dim);
    l.src.rest_strides = without(src.strides(), dim);
  }
  return l;
}

void index_check_cpu(const Tensor& index, int64_t size, bool wrap, const char* op, int64_t dim,
                     bool runtime_error) {
  check_indices(index.data_ptr<int64_t>(), index.numel(), size, wrap, op, dim, runtime_error);
}

void index_select_cpu(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  // The indices (int64 or int32) are checked as they are used (Note [Fused index checks]).
  IndexLoop l;
  l.n = index.numel();
  l.rest_sizes = without(self.sizes(), dim);
  l.elsize = self.element_size();
  l.src.data = static_cast<char*>(self.data_ptr());
  l.src.istride = self.stride(dim);
  l.src.rest_strides = without(self.strides(), dim);
  l.dst.data = static_cast<char*>(out.data_ptr());
  l.dst.istride = out.stride(dim);
  l.dst.rest_strides = without(out.strides(), dim);
  index_select_checked(std::move(l), index.data_ptr(), index.dtype() == kInt, self.size(dim), dim);
}

void take_cpu(Tensor& out, const Tensor& self, const Tensor& index) {
  std::vector<int64_t> off = dim_offsets(index, self.numel(), 1);
  IndexLoop l;
  l.n = int64_t(off.size());
  l.elsize = self.element_size();
  l.src.data = static_cast<char*>(self.data_ptr());
  l.src.off = off.data();
  l.dst.data = static_cast<char*>(out.data_ptr());
  l.dst.istride = 1;
  index_copy_bytes(l);
}

void put_cpu(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  const int64_t n = index.numel();
  std::vector<int64_t> off(static_cast<size_t>(n));
  const int64_t* p = index.data_ptr<int64_t>();
  const int64_t numel = self.numel();
  const bool contiguous = self.is_contiguous();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t flat = p[i] < 0 ? p[i] + numel : p[i];
    off[size_t(i)] = contiguous ? flat : flat_offset(flat, self.sizes(), self.strides());
  }
  IndexLoop l;
  l.n = n;
  l.elsize = self.element_size();
  l.dst.data = static_cast<char*>(self.data_ptr());
  l.dst.off = off.data();
  l.src.data = static_cast<char*>(source.data_ptr());
  l.src.istride = 1;
  if (accumulate) {
    index_accumulate(l, self.dtype(), Scalar(1));
  } else {
    index_copy_bytes(l);
  }
}

void index_copy_cpu(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  std::vector<int64_t> off = dim_offsets(index, self.size(dim), self.stride(dim));
  index_copy_bytes(along_dim_loop(self, dim, off, source));
}

void index_add_cpu(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha) {
  std::vector<int64_t> off = dim_offsets(index, self.size(dim), self.stride(dim));
  index_accumulate(along_dim_loop(self, dim, off, source), self.dtype(), alpha);
}

void index_fill_cpu(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  std::vector<int64_t> off = dim_offsets(index, self.size(dim), self.stride(dim));
  index_fill_bytes(along_dim_loop(self, dim, off, Tensor()), value.data_ptr());
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(index_check_stub, kCPU, cpu::index_check_cpu);
EMBER_REGISTER_KERNEL(index_select_stub, kCPU, cpu::index_select_cpu);
EMBER_REGISTER_KERNEL(take_stub, kCPU, cpu::take_cpu);
EMBER_REGISTER_KERNEL(put_stub, kCPU, cpu::put_cpu);
EMBER_REGISTER_KERNEL(index_copy_stub, kCPU, cpu::index_copy_cpu);
EMBER_REGISTER_KERNEL(index_add_stub, kCPU, cpu::index_add_cpu);
EMBER_REGISTER_KERNEL(index_fill_stub, kCPU, cpu::index_fill_cpu);

}  // namespace ember
