// Searching and counting: searchsorted / bucketize (binary search per value), histc (equal-width
// bins) and bincount. Each follows PyTorch 1.13's checks, result dtypes and NaN placement.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "kernels/stubs/search.h"
#include "ops/call_path.h"

namespace ember {
namespace {

constexpr const char* kSS = "searchsorted";

/// Validates searchsorted arguments; returns whether the search is for the right side.
bool searchsorted_check(const Tensor& seq, const Tensor& values, bool out_int32, bool right,
                        std::optional<std::string_view> side, const std::optional<Tensor>& sorter,
                        bool scalar_value) {
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right", "[", kSS,
                "] side can only be 'left' or "
                "'right' but got ",
                *side);
    EMBER_CHECK(!(right && *side == "left"), "[", kSS,
                "] side and right can't be set to "
                "opposites, got side of ",
                *side, " while right was True");
  }
  EMBER_CHECK(seq.device() == values.device(), "[", kSS,
              "] boundaries and input value tensors "
              "should be on the same device");
  if (sorter) {
    EMBER_CHECK(sorter->dtype() == kLong, "[", kSS,
                "] sorter must be a tensor of long dtype but "
                "got dtype ",
                dtype_name(sorter->dtype()));
    EMBER_CHECK(sorter->sizes() == seq.sizes(), "[", kSS,
                "] boundary and sorter must have the "
                "same size, but got boundary tensor ",
                shape_str(seq.sizes()), " and got sorter tensor ", shape_str(sorter->sizes()));
  }
  EMBER_CHECK(!scalar_value || seq.dim() == 1, "[", kSS,
              "] input value can be a scalar only when "
              "boundaries tensor dimension is 1, but we got boundaries tensor dim(",
              seq.dim(), ") and input value's dim(0) numel(1)");
  EMBER_CHECK(seq.dim() != 0, "[", kSS,
              "] boundaries tensor should have positive dimension, but "
              "got 0 dimension");
  bool match = seq.dim() == values.dim();
  for (int64_t d = 0; match && d + 1 < seq.dim(); ++d) match = seq.size(d) == values.size(d);
  EMBER_CHECK(seq.dim() == 1 || match, "[", kSS,
              "] boundaries tensor should be 1 dimension or "
              "the first N-1 dimensions of boundaries tensor and input value tensor must match, "
              "but we got boundaries tensor ",
              shape_str(seq.sizes()), " and input value tensor ", shape_str(values.sizes()));
  (void)out_int32;
  return right || (side && *side == "right");
}

Tensor searchsorted_impl(const Tensor& seq, const Tensor& values, bool out_int32, bool right,
                         std::optional<std::string_view> side, const std::optional<Tensor>& sorter,
                         bool scalar_value) {
  right = searchsorted_check(seq, values, out_int32, right, side, sorter, scalar_value);
  ScalarType ct = promoteTypes(seq.dtype(), values.dtype());
  EMBER_CHECK(ct != kBool && !isComplexType(ct), "[", kSS,
              "] \"searchsorted_out_cpu\" not "
              "implemented for '",
              dtype_name(ct), "'");
  // 16-bit floats convert exactly to float32, which keeps every comparison.
  if (ct == kHalf || ct == kBFloat16) ct = kFloat;
  Tensor out =
      empty(values.sizes(), TensorOptions(out_int32 ? kInt : kLong).device(values.device()));
  if (values.numel() == 0) return out;
  const Tensor s = seq.to(ct).contiguous();
  const Tensor v = values.to(ct).contiguous();
  const Tensor so = sorter ? sorter->contiguous() : Tensor();
  // the kernel checks the sorter's entries as it reads them
  searchsorted_stub(seq.device().type(), s, v, so, out, right);
  return out;
}

Tensor& write_result(Tensor& out, const Tensor& r, const char* op) {
  if (out.sizes() != r.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(r.sizes()));
    resize_output(out, r.sizes());
  }
  return out.copy_(r);
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  EMBER_OP(searchsorted, sorted_sequence, self, out_int32, right, side, sorter);
  return searchsorted_impl(sorted_sequence, self, out_int32, right, side, sorter, false);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  EMBER_OP(searchsorted_1, sorted_sequence, self, out_int32, right, side, sorter);
  // The scalar joins the sequence's device (a no-op for CPU).
  return searchsorted_impl(sorted_sequence, scalar_tensor(self).to(sorted_sequence.device()),
                           out_int32, right, side, sorter, true);
}

Tensor& searchsorted_out(Tensor& out, const Tensor& sorted_sequence, const Tensor& self,
                         bool out_int32, bool right, std::optional<std::string_view> side,
                         const std::optional<Tensor>& sorter) {
  EMBER_OP(searchsorted_out, out, sorted_sequence, self, out_int32, right, side, sorter);
  EMBER_CHECK(out.dtype() == (out_int32 ? kInt : kLong), "[", kSS,
              "] output tensor's dtype is "
              "wrong, it can only be Int(int32) or Long(int64) depending on whether out_int32 "
              "flag is True, but we got output tensor's dtype ",
              dtype_name(out.dtype()), " and out_int32 flag is ", out_int32 ? "True" : "False");
  return write_result(out, searchsorted(sorted_sequence, self, out_int32, right, side, sorter),
                      kSS);
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_OP(bucketize, self, boundaries, out_int32, right);
  EMBER_CHECK(boundaries.dim() == 1,
              "[bucketize] boundaries tensor must be 1 dimension, but got "
              "dim(",
              boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right);
}

Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_OP(bucketize_1, self, boundaries, out_int32, right);
  return bucketize(scalar_tensor(self).to(boundaries.device()), boundaries, out_int32, right);
}

Tensor& bucketize_out(Tensor& out, const Tensor& self, const Tensor& boundaries, bool out_int32,
                      bool right) {
  EMBER_OP(bucketize_out, out, self, boundaries, out_int32, right);
  EMBER_CHECK(boundaries.dim() == 1,
              "[bucketize] boundaries tensor must be 1 dimension, but got "
              "dim(",
              boundaries.dim(), ")");
  return searchsorted_out(out, boundaries, self, out_int32, right);
}

// ---- histc ----

Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  EMBER_OP(histc, self, bins, min, max);
  const ScalarType dt = self.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kBFloat16,
              "[histc] \"histogram_cpu\" not "
              "implemented for '",
              dtype_name(dt), "'");
  EMBER_CHECK(bins > 0, "[histc] torch.histogram(): bins must be > 0, but got ", bins,
              " for dimension 0");
  double lo = min.to<double>(), hi = max.to<double>();
  EMBER_CHECK(!(lo > hi), "[histc] torch.histc: max must be larger than min (min ", lo, ", max ",
              hi, ")");
  const Tensor x = self.contiguous();
  const int64_t n = x.numel();
  if (lo == hi && n > 0) std::tie(lo, hi) = histc_range_stub(x.device().type(), x);
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "[histc] torch.histc: range of [", lo, ", ",
              hi, "] is not finite");
  // sized by the checked rule under histc's name (Note [Checked storage sizes])
  Tensor c = empty_tensor("histc", {bins}, kLong);
  histc_stub(x.device().type(), x, c, bins, lo, hi);
  return c.to(dt);
}

Tensor& histc_out(Tensor& out, const Tensor& self, int64_t bins, const Scalar& min,
                  const Scalar& max) {
  EMBER_OP(histc_out, out, self, bins, min, max);
  EMBER_CHECK(out.dtype() == self.dtype(),
              "[histc] torch.histogram: input tensor and hist tensor "
              "should have the same dtype, but got input ",
              dtype_name(self.dtype()), " and hist ", dtype_name(out.dtype()));
  Tensor r = histc(self, bins, min, max);
  // PyTorch resizes a histc out= of any shape (it is an output of known size).
  if (out.sizes() != r.sizes()) resize_output(out, r.sizes());
  return out.copy_(r);
}

// ---- bincount ----

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  EMBER_OP(bincount, self, weights, minlength);
  EMBER_CHECK(isIntegralType(self.dtype(), false),
              "[bincount] \"bincount_cpu\" not implemented "
              "for '",
              dtype_name(self.dtype()), "'");
  EMBER_CHECK(minlength >= 0, "[bincount] minlength should be >= 0, got ", minlength);
  if (self.dim() == 1 && self.numel() == 0) return zeros({minlength}, TensorOptions(kLong));
  EMBER_CHECK(self.dim() == 1,
              "[bincount] bincount only supports 1-d non-negative integral "
              "inputs (got shape ",
              shape_str(self.sizes()), ")");
  const Tensor idx = self.to(kLong).contiguous();
  const int64_t n = idx.numel();
  const auto [lo, hi] = bincount_range_stub(idx.device().type(), idx);
  EMBER_CHECK(lo >= 0,
              "[bincount] bincount only supports 1-d non-negative integral inputs (got "
              "value ",
              lo, ")");
  if (weights) {
    EMBER_CHECK(weights->dim() == 1 && weights->size(0) == n,
                "[bincount] weights should be 1-d "
                "and have the same length as input (weights ",
                shape_str(weights->sizes()), ", input ", shape_str(self.sizes()), ")");
  }
  const int64_t len = std::max(hi + 1, minlength);
  if (!weights) {
    Tensor out = zeros({len}, TensorOptions(kLong));
    bincount_stub(idx.device().type(), idx, Tensor(), out);
    return out;
  }
  // Weighted counts have no derivative in PyTorch: a differentiable weights tensor gets a node
  // that raises in backward.
  autograd::OpRecorder rec("bincount", {*weights});
  // float32 weights sum in float32 (in input order, as PyTorch); everything else in float64.
  const ScalarType wt = weights->dtype() == kFloat ? kFloat : kDouble;
  const Tensor w = (weights->is_complex() ? weights->real() : *weights).to(wt).contiguous();
  Tensor out = zeros({len}, TensorOptions(wt));
  bincount_stub(idx.device().type(), idx, w, out);
  if (rec) rec.record_not_implemented({out});
  return out;
}

Tensor Tensor::histc(int64_t bins, const Scalar& min, const Scalar& max) const {
  return ember::histc(*this, bins, min, max);
}
Tensor Tensor::bincount(const std::optional<Tensor>& weights, int64_t minlength) const {
  return ember::bincount(*this, weights, minlength);
}

}  // namespace ember
