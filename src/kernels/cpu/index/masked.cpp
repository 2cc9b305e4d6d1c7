// CPU kernels of masked_fill_ / masked_select / masked_scatter_ and nonzero. The masked ops
// list the offsets of the true mask elements once, then run one IndexLoop (index_loops.h).
#include <vector>

#include "ember/error.h"
#include "ember/tensor.h"
#include "kernels/cpu/index/index_loops.h"
#include "kernels/stubs/index.h"

namespace ember {

EMBER_DEFINE_KERNEL(nonzero_count_stub);
EMBER_DEFINE_KERNEL(nonzero_stub);
EMBER_DEFINE_KERNEL(masked_fill_stub);
EMBER_DEFINE_KERNEL(masked_select_stub);
EMBER_DEFINE_KERNEL(masked_scatter_stub);

namespace cpu {
namespace {

/// Offsets (in `target`'s strides) of the true elements of the contiguous bool `mask` of
/// target's shape, in row-major order; `expected` (when known) is their count.
std::vector<int64_t> true_offsets(const Tensor& mask, const Tensor& target, int64_t expected = 0) {
  const bool* p = mask.data_ptr<bool>();
  const int64_t n = mask.numel();
  std::vector<int64_t> off;
  off.reserve(size_t(expected));
  if (target.is_contiguous()) {
    for (int64_t i = 0; i < n; ++i) {
      if (p[i]) off.push_back(i);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      if (p[i]) off.push_back(flat_offset(i, target.sizes(), target.strides()));
    }
  }
  return off;
}

int64_t nonzero_count_cpu(const Tensor& mask) {
  const bool* p = mask.data_ptr<bool>();
  const int64_t n = mask.numel();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += p[i];
  return count;
}

void nonzero_cpu(Tensor& out, const Tensor& mask) {
  const bool* p = mask.data_ptr<bool>();
  const int64_t n = mask.numel(), nd = mask.dim();
  int64_t* q = out.data_ptr<int64_t>();
  DimVector ctr(size_t(nd), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i]) {
      for (int64_t d = 0; d < nd; ++d) *q++ = ctr[size_t(d)];
    }
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++ctr[size_t(d)] < mask.size(d)) break;
      ctr[size_t(d)] = 0;
    }
  }
}

void masked_fill_cpu(Tensor& self, const Tensor& mask, const Tensor& value) {
  std::vector<int64_t> off = true_offsets(mask, self);
  IndexLoop l;
  l.n = int64_t(off.size());
  l.elsize = self.element_size();
  l.dst.data = static_cast<char*>(self.data_ptr());
  l.dst.off = off.data();
  index_fill_bytes(l, value.data_ptr());
}

void masked_select_cpu(Tensor& out, const Tensor& self, const Tensor& mask) {
  std::vector<int64_t> off = true_offsets(mask, self, out.numel());
  IndexLoop l;
  l.n = int64_t(off.size());
  l.elsize = self.element_size();
  l.src.data = static_cast<char*>(self.data_ptr());
  l.src.off = off.data();
  l.dst.data = static_cast<char*>(out.data_ptr());
  l.dst.istride = out.dim() == 1 ? out.stride(0) : 1;
  index_copy_bytes(l);
}

void masked_scatter_cpu(Tensor& self, const Tensor& mask, const Tensor& source) {
  std::vector<int64_t> off = true_offsets(mask, self);
  EMBER_CHECK(int64_t(off.size()) <= source.numel(),
              "[masked_scatter_] masked_scatter: expected "
              "source to have at least as many elements as the ones in mask (",
              off.size(), "), got ", source.numel());
  IndexLoop l;
  l.n = int64_t(off.size());
  l.elsize = self.element_size();
  l.dst.data = static_cast<char*>(self.data_ptr());
  l.dst.off = off.data();
  l.src.data = static_cast<char*>(source.data_ptr());
  l.src.istride = 1;
  index_copy_bytes(l);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(nonzero_count_stub, kCPU, cpu::nonzero_count_cpu);
EMBER_REGISTER_KERNEL(nonzero_stub, kCPU, cpu::nonzero_cpu);
EMBER_REGISTER_KERNEL(masked_fill_stub, kCPU, cpu::masked_fill_cpu);
EMBER_REGISTER_KERNEL(masked_select_stub, kCPU, cpu::masked_select_cpu);
EMBER_REGISTER_KERNEL(masked_scatter_stub, kCPU, cpu::masked_scatter_cpu);

}  // namespace ember
