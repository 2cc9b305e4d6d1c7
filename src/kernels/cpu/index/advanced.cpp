// CPU kernels of advanced indexing (Note [Advanced index placement] in
// src/ops/index/advanced_indexing.cpp): the index tensors become one offset per entry of the
// broadcast index shape, and the read or the write is one IndexLoop (index_loops.h) with those
// offsets on the indexed side and the dense result geometry on the other.
#include <vector>

#include "ember/tensor.h"
#include "kernels/cpu/index/index_loops.h"
#include "kernels/stubs/index.h"

namespace ember {

EMBER_DEFINE_KERNEL(advanced_index_stub);
EMBER_DEFINE_KERNEL(advanced_index_put_stub);

namespace cpu {
namespace {

/// Contiguous strides (products of the later sizes, size-1 dims included).
DimVector dense_strides(IntArrayRef sizes) {
  DimVector st(sizes.size(), 1);
  for (int64_t d = int64_t(sizes.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * sizes[d + 1];
  return st;
}

/// The indexed side: offset of each entry (the sum over indexed dims of index * stride), and the
/// sizes / strides of `self`'s dims that are not indexed.
struct IndexedSide {
  std::vector<int64_t> offsets;
  DimVector rest_sizes, rest_strides;
  int64_t index_dims = 0;  // dims of the broadcast index shape
};

IndexedSide indexed_side(const Tensor& self, const std::vector<Tensor>& indices) {
  IndexedSide s;
  bool first = true;
  for (size_t d = 0; d < indices.size(); ++d) {
    const Tensor& ix = indices[d];
    if (!ix.defined()) continue;
    const int64_t n = ix.numel();
    if (first) {
      s.offsets.assign(size_t(n), 0);
      s.index_dims = ix.dim();
      first = false;
    }
    const int64_t size = self.size(int64_t(d)), stride = self.stride(int64_t(d));
    const int64_t* v = ix.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      s.offsets[size_t(i)] += (v[i] < 0 ? v[i] + size : v[i]) * stride;
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (indices[size_t(d)].defined()) continue;
    s.rest_sizes.push_back(self.size(d));
    s.rest_strides.push_back(self.stride(d));
  }
  return s;
}

/// The result-side geometry: stride between entries, strides of the rest dims.
void result_side(IntArrayRef result_sizes, int64_t block_pos, const IndexedSide& s,
                 IndexSide& side) {
  DimVector st = dense_strides(result_sizes);
  const int64_t nb = s.index_dims;
  side.istride = nb > 0 ? st[size_t(block_pos + nb - 1)] : 0;
  side.rest_strides.clear();
  for (int64_t k = 0; k < int64_t(s.rest_sizes.size()); ++k) {
    side.rest_strides.push_back(st[size_t(k < block_pos ? k : k + nb)]);
  }
}

void advanced_index_cpu(Tensor& out, const Tensor& self, const std::vector<Tensor>& indices,
                        int64_t block_pos) {
  IndexedSide s = indexed_side(self, indices);
  IndexLoop l;
  l.n = int64_t(s.offsets.size());
  l.rest_sizes = s.rest_sizes;
  l.src.rest_strides = s.rest_strides;
  l.elsize = self.element_size();
  l.src.data = static_cast<char*>(self.data_ptr());
  l.src.off = s.offsets.data();
  l.dst.data = static_cast<char*>(out.data_ptr());
  result_side(out.sizes(), block_pos, s, l.dst);
  index_copy_bytes(l);
}

void advanced_index_put_cpu(Tensor& self, const std::vector<Tensor>& indices, int64_t block_pos,
                            const Tensor& values, bool accumulate) {
  IndexedSide s = indexed_side(self, indices);
  IndexLoop l;
  l.n = int64_t(s.offsets.size());
  l.rest_sizes = s.rest_sizes;
  l.dst.rest_strides = s.rest_strides;
  l.elsize = self.element_size();
  l.dst.data = static_cast<char*>(self.data_ptr());
  l.dst.off = s.offsets.data();
  l.src.data = static_cast<char*>(values.data_ptr());
  result_side(values.sizes(), block_pos, s, l.src);
  if (accumulate) {
    index_accumulate(l, self.dtype(), Scalar(1));
  } else {
    index_copy_bytes(l);
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(advanced_index_stub, kCPU, cpu::advanced_index_cpu);
EMBER_REGISTER_KERNEL(advanced_index_put_stub, kCPU, cpu::advanced_index_put_cpu);

}  // namespace ember
