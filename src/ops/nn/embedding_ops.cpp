// embedding, embedding_renorm_ and embedding_bag. embedding records its own rule (an index_add
// of the gradient rows, skipping padding_idx and optionally scaled by index frequency), written
// with ember ops so that it is itself differentiable. embedding_bag composes embedding with
// index_add (sum / mean) or a recorded per-bag max.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/sort.h"
#include "kernels/stubs/embedding.h"
#include "ops/call_path.h"

namespace ember {

using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

/// The indices as a flat contiguous int64 tensor after checking dtype and range.
Tensor flat_indices(const Tensor& indices, int64_t num, const char* op) {
  EMBER_CHECK(indices.defined(), "[", op, "] indices must be defined");
  EMBER_CHECK(indices.dtype() == kLong || indices.dtype() == kInt,
              "Expected tensor for argument #1 'indices' to have one of the following scalar "
              "types: Long, Int; but got ",
              dtype_name(indices.dtype()),
              " instead (while "
              "checking arguments for ",
              op, ")");
  Tensor idx = indices.to(kLong).contiguous().reshape({-1});
  embedding_check_indices_stub(idx.device().type(), idx, num);
  return idx;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  EMBER_OP(embedding, weight, indices, padding_idx, scale_grad_by_freq, sparse);
  EMBER_CHECK(weight.defined(), "[embedding] weight must be defined");
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  const int64_t num = weight.size(0), D = weight.size(1);
  Tensor idx = flat_indices(indices, num, "embedding");
  DimVector out_shape(indices.sizes());
  out_shape.push_back(D);
  OpRecorder rec("embedding", {weight});
  Tensor out = weight.index_select(0, idx).view(out_shape);
  if (rec) {
    rec.args(num, D, padding_idx, scale_grad_by_freq);
    rec.record(out,
               [](VjpCtx& c) {
                 const int64_t num = c.args().i(0), D = c.args().i(1);
                 const int64_t padding_idx = c.args().i(2);
                 const bool scale_grad_by_freq = c.args().b(3);
                 const Tensor& ix = c.saved[0];
                 Tensor g = c.grads[0].reshape({-1, D});
                 if (scale_grad_by_freq) {
                   Tensor counts =
                       zeros({num}, g.options()).index_add(0, ix, ones({ix.numel()}, g.options()));
                   g = g / counts.index_select(0, ix).unsqueeze(1);
                 }
                 if (padding_idx >= 0) g = g.masked_fill((ix == padding_idx).unsqueeze(1), 0);
                 return variable_list{zeros({num, D}, g.options()).index_add(0, ix, g)};
               },
               {idx});
  }
  return out;
}

Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  EMBER_OP(embedding_renorm_, self, indices, max_norm, norm_type);
  EMBER_CHECK(self.defined() && self.dim() == 2, "[embedding_renorm_] weight must be 2-D");
  Tensor idx = flat_indices(indices, self.size(0), "embedding_renorm_");
  if (idx.numel() == 0) return self;
  NoGradGuard ng;
  Tensor uniq = std::get<0>(_unique2(idx, true));
  Tensor rows = self.index_select(0, uniq);
  const int64_t dims[1] = {1};
  Tensor norms = linalg_vector_norm(rows, norm_type, IntArrayRef(dims, 1), true);
  Tensor scale = where(norms > max_norm, max_norm / (norms + 1e-7), ones_like(norms));
  self.index_copy_(0, uniq, rows * scale);
  return self;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool sparse, const Tensor& per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx) {
  EMBER_OP(embedding_bag, weight, indices, offsets, scale_grad_by_freq, mode, sparse,
           per_sample_weights, include_last_offset, padding_idx);
  const char* op = "embedding_bag";
  EMBER_CHECK(weight.defined() && weight.dim() == 2, "[embedding_bag] weight must be 2-D");
  EMBER_CHECK(mode >= 0 && mode <= 2,
              "[embedding_bag] mode must be 0 (sum), 1 (mean) or 2 "
              "(max), got ",
              mode);
  const int64_t num = weight.size(0), D = weight.size(1);
  Tensor idx, offs;
  if (indices.dim() == 2) {
    EMBER_CHECK(!offsets.defined(), "[embedding_bag] offsets must be undefined for 2-D indices");
    const int64_t B = indices.size(0), Lb = indices.size(1);
    idx = flat_indices(indices, num, op);
    offs = arange(0, B * Lb + (include_last_offset ? Lb : 0), std::max<int64_t>(Lb, 1),
                  TensorOptions(kLong));
    if (Lb == 0) offs = zeros({B + (include_last_offset ? 1 : 0)}, TensorOptions(kLong));
  } else {
    EMBER_CHECK(indices.dim() == 1,
                "input has to be 1D or 2D Tensor, but got Tensor of "
                "dimension ",
                indices.dim());
    EMBER_CHECK(offsets.defined() && offsets.dim() == 1, "offsets has to be a 1D Tensor");
    idx = flat_indices(indices, num, op);
    EMBER_CHECK(offsets.dtype() == kLong || offsets.dtype() == kInt,
                "[embedding_bag] offsets must be int32 or int64");
    offs = offsets.to(kLong).contiguous();
  }
  const int64_t L = idx.numel();
  const int64_t nb = offs.numel() - (include_last_offset ? 1 : 0);
  EMBER_CHECK(nb >= 0, "[embedding_bag] include_last_offset needs at least one offset");
  embedding_bag_check_offsets_stub(offs.device().type(), offs, L);
  if (per_sample_weights.defined()) {
    EMBER_CHECK(mode == 0, "embedding_bag: per_sample_weights is only supported for mode='sum'");
    EMBER_CHECK(per_sample_weights.numel() == L, "[embedding_bag] per_sample_weights must have ", L,
                " elements, got ", per_sample_weights.numel());
  }
  int64_t pad = padding_idx.value_or(-1);
  if (pad < 0 && padding_idx) pad += num;

  // offset2bag, bag sizes and the kept (non-padding) positions.
  Tensor offset2bag = empty({L}, TensorOptions(kLong));
  Tensor bag_size = zeros({nb}, TensorOptions(kLong));
  Tensor kpos = empty({L}, TensorOptions(kLong)), kbag = empty({L}, TensorOptions(kLong));
  const int64_t kept = embedding_bag_bags_stub(idx.device().type(), offset2bag, bag_size, kpos,
                                               kbag, idx, offs, nb, pad, include_last_offset);
  kpos = kpos.narrow(0, 0, kept);
  kbag = kbag.narrow(0, 0, kept);
  Tensor kidx = idx.index_select(0, kpos);
  Tensor rows = embedding(weight, kidx, -1, scale_grad_by_freq, sparse);  // (K, D)
  Tensor out, max_indices;
  if (mode == 2) {
    // Per-bag max with the argmax row recorded for the gradient.
    OpRecorder rec("embedding_bag_max", {rows});
    Tensor rc = rows.contiguous();
    out = zeros({nb, D}, weight.options());
    max_indices = full({nb, D}, -1, TensorOptions(kLong));
    Tensor arg = full({nb, D}, -1, TensorOptions(kLong));  // position in rows
    const int64_t K = kpos.numel();
    Tensor rd = rc.to(kDouble).contiguous(), od = zeros({nb, D}, TensorOptions(kDouble));
    embedding_bag_max_stub(rd.device().type(), od, arg, max_indices, rd, kbag.contiguous(),
                           kidx.contiguous());
    out = od.to(weight.dtype());
    if (rec) {
      rec.args(K, D);
      rec.record(
          out,
          [](VjpCtx& c) {
            const int64_t K = c.args().i(0), D = c.args().i(1);
            const Tensor& a = c.saved[0];
            Tensor g = c.grads[0].reshape({-1});
            Tensor valid = (a >= 0).reshape({-1});
            Tensor flat = (a.clamp_min(0) * D + arange(0, D, TensorOptions(kLong))).reshape({-1});
            Tensor gv = g.masked_fill(valid.logical_not(), 0);
            return variable_list{zeros({K * D}, g.options()).index_add(0, flat, gv).view({K, D})};
          },
          {arg});
    }
  } else {
    Tensor r = rows;
    if (per_sample_weights.defined())
      r = r * per_sample_weights.reshape({-1}).index_select(0, kpos).unsqueeze(1);
    out = zeros({nb, D}, r.options()).index_add(0, kbag, r);
    if (mode == 1) {
      Tensor cnt = bag_size.clamp_min(1).to(out.dtype()).unsqueeze(1);
      out = out / cnt;
    }
    max_indices = zeros({mode == 1 ? nb : 0}, TensorOptions(kLong));
    if (mode == 0) max_indices = zeros({0}, TensorOptions(kLong));
  }
  return {out, offset2bag, bag_size, max_indices};
}

}  // namespace ember
