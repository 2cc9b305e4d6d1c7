// CPU kernels of embedding / embedding_bag: the index and offset checks, the split of the
// indices into bags, and the per-bag max of mode "max".
#include <algorithm>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/tensor.h"
#include "kernels/stubs/embedding.h"

namespace ember {

EMBER_DEFINE_KERNEL(embedding_check_indices_stub);
EMBER_DEFINE_KERNEL(embedding_bag_check_offsets_stub);
EMBER_DEFINE_KERNEL(embedding_bag_bags_stub);
EMBER_DEFINE_KERNEL(embedding_bag_max_stub);

namespace cpu {
namespace {

void embedding_check_indices_cpu(const Tensor& indices, int64_t num) {
  const int64_t* p = indices.data_ptr<int64_t>();
  for (int64_t i = 0, n = indices.numel(); i < n; ++i)
    EMBER_CHECK_INDEX(p[i] >= 0 && p[i] < num, "index out of range in self");
}

void embedding_bag_check_offsets_cpu(const Tensor& offsets, int64_t num_indices) {
  const int64_t L = num_indices;
  const int64_t* op_ = offsets.data_ptr<int64_t>();
  if (offsets.numel() > 0)
    EMBER_CHECK(op_[0] == 0,
                "offsets[0] has to be 0, i.e., the first sequence in the "
                "mini-batch has to start from position 0. However, got ",
                op_[0]);
  for (int64_t b = 1; b < offsets.numel(); ++b)
    EMBER_CHECK(op_[b] >= op_[b - 1] && op_[b] <= L,
                "[embedding_bag] offsets must be "
                "non-decreasing and at most the number of indices (",
                L, "), got ", shape_str(IntArrayRef(op_, size_t(offsets.numel()))));
}

int64_t embedding_bag_bags_cpu(Tensor& offset2bag, Tensor& bag_size, Tensor& keep_pos,
                               Tensor& keep_bag, const Tensor& indices, const Tensor& offsets,
                               int64_t num_bags, int64_t padding_idx, bool include_last_offset) {
  const int64_t L = indices.numel(), nb = num_bags, pad = padding_idx;
  const int64_t* op_ = offsets.data_ptr<int64_t>();
  const int64_t* ip = indices.data_ptr<int64_t>();
  int64_t* o2b = offset2bag.data_ptr<int64_t>();
  int64_t* bs = bag_size.data_ptr<int64_t>();
  int64_t* kp = keep_pos.data_ptr<int64_t>();
  int64_t* kb = keep_bag.data_ptr<int64_t>();
  int64_t kept = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t end = (b + 1 < offsets.numel()) ? op_[b + 1] : L;
    for (int64_t i = op_[b]; i < std::min(end, L); ++i) {
      o2b[i] = b;
      if (ip[i] == pad) continue;
      kp[kept] = i;
      kb[kept] = b;
      ++kept;
      ++bs[b];
    }
  }
  // Positions after the last bag (include_last_offset with a short last offset) are ignored.
  for (int64_t i = (offsets.numel() ? op_[offsets.numel() - 1] : 0); i < L && include_last_offset;
       ++i)
    o2b[i] = std::max<int64_t>(nb - 1, 0);
  return kept;
}

void embedding_bag_max_cpu(Tensor& out, Tensor& arg, Tensor& max_indices, const Tensor& rows,
                           const Tensor& bags, const Tensor& row_indices) {
  const int64_t K = rows.size(0), D = rows.size(1);
  const int64_t* kb = bags.data_ptr<int64_t>();
  const int64_t* ki = row_indices.data_ptr<int64_t>();
  const double* rp = rows.data_ptr<double>();
  double* outp = out.data_ptr<double>();
  int64_t* ap = arg.data_ptr<int64_t>();
  int64_t* mp = max_indices.data_ptr<int64_t>();
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t d = 0; d < D; ++d) {
      const int64_t o = kb[k] * D + d;
      if (ap[o] < 0 || rp[k * D + d] > outp[o]) {
        outp[o] = rp[k * D + d];
        ap[o] = k;
        mp[o] = ki[k];
      }
    }
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(embedding_check_indices_stub, kCPU, cpu::embedding_check_indices_cpu);
EMBER_REGISTER_KERNEL(embedding_bag_check_offsets_stub, kCPU, cpu::embedding_bag_check_offsets_cpu);
EMBER_REGISTER_KERNEL(embedding_bag_bags_stub, kCPU, cpu::embedding_bag_bags_cpu);
EMBER_REGISTER_KERNEL(embedding_bag_max_stub, kCPU, cpu::embedding_bag_max_cpu);

}  // namespace ember
