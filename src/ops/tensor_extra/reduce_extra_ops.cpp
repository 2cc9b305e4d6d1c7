// index_reduce and segment_reduce: primitives with their own kernels
// (kernels/stubs/tensor_extra.h) and backward rules written with ember ops, as PyTorch 1.13's
// index_reduce_backward and _segment_reduce_backward. Validation and messages follow PyTorch.
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"
#include "ember/tensor_extra.h"
#include "kernels/stubs/index.h"
#include "kernels/stubs/tensor_extra.h"
#include "ops/call_path.h"

namespace ember {

using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

/// The value that leaves every element unchanged under `op` in dtype `dt` (amax: the lowest).
Scalar reduce_identity(ExtraReduce op, ScalarType dt) {
  const bool mx = op == ExtraReduce::Max;
  switch (op) {
    case ExtraReduce::Sum:
      return dt == kBool ? Scalar(false) : Scalar(int64_t(0));
    case ExtraReduce::Prod:
      return dt == kBool ? Scalar(true) : Scalar(int64_t(1));
    case ExtraReduce::Max:
    case ExtraReduce::Min:
      break;
  }
  if (isFloatingType(dt)) {
    const double inf = std::numeric_limits<double>::infinity();
    return mx ? -inf : inf;
  }
  switch (dt) {
    case kBool:
      return Scalar(!mx);
    case kByte:
      return Scalar(int64_t(mx ? 0 : 255));
    case kChar:
      return Scalar(int64_t(mx ? -128 : 127));
    case kShort:
      return Scalar(int64_t(mx ? -32768 : 32767));
    case kInt:
      return Scalar(
          int64_t(mx ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max()));
    default:
      return Scalar(mx ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max());
  }
}

/// A 1-D view for 0-dim tensors (index_reduce treats them as one-element vectors).
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

/// The number of contributions to each slot of index_reduce's "mean" (at least 1), in `like`'s
/// dtype and shape.
Tensor mean_counts(const Tensor& like, int64_t dim, const Tensor& index, const Tensor& source,
                   bool include_self) {
  Tensor n = include_self ? ones_like(like) : zeros_like(like);
  n = as_1d(n)
          .index_add(dim, index, ones_like(as_1d(source), like.options()))
          .reshape(like.sizes());
  return n.masked_fill(n.eq(Scalar(0)), Scalar(1));
}

/// PyTorch's index_reduce_backward. saved: index, self, source, result.
variable_list index_reduce_backward(VjpCtx& c) {
  const int64_t dim = c.args().i(0);
  const std::string& reduce = c.args().str(1);
  const bool include_self = c.args().b(2);
  const Tensor& index = c.saved[0];
  const Tensor self = as_1d(c.saved[1]);
  const Tensor source = as_1d(c.saved[2]);
  const Tensor result = as_1d(c.saved[3]);
  const Tensor g = as_1d(c.grads[0]);
  Tensor gs, gsrc;
  if (reduce == "mean") {
    Tensor n = mean_counts(self, dim, index, source, include_self);
    gs = g.div(n);
    gsrc = gs.index_select(dim, index);
  } else if (reduce == "prod") {
    // A lone zero gets the product of the others, computed directly; a division otherwise.
    Tensor masked_self = self.masked_fill(self.eq(Scalar(0)), Scalar(1));
    Tensor masked_self_result = masked_self.index_reduce(dim, index, source, reduce, include_self);
    gs = g.mul(masked_self_result.conj()).div(masked_self.conj());
    Tensor src_zero = source.eq(Scalar(0));
    Tensor nz =
        zeros_like(self).index_add(dim, index, src_zero.to(self.dtype())).index_select(dim, index);
    Tensor single_zero = logical_and(src_zero, nz.eq(Scalar(1)));
    Tensor masked_src = source.masked_fill(single_zero, Scalar(1));
    Tensor masked_src_result = self.index_reduce(dim, index, masked_src, reduce, include_self);
    Tensor a = g.mul(masked_src_result.conj()).index_select(dim, index);
    Tensor b = g.mul(result.conj())
                   .index_select(dim, index)
                   .div(source.masked_fill(src_zero, Scalar(1)).conj());
    gsrc = where(single_zero, a, b);
  } else {  // amax / amin: the gradient is shared evenly among the elements equal to the result
    Tensor value = result.index_select(dim, index);
    Tensor self_is = self.eq(result);
    if (!include_self) self_is = self_is.index_fill(dim, index, Scalar(false));
    Tensor src_is = source.eq(value);
    Tensor n = self_is.to(g.dtype()).index_add(dim, index, src_is.to(g.dtype()));
    Tensor share = g.div(n.masked_fill(n.eq(Scalar(0)), Scalar(1)));
    gs = self_is.to(g.dtype()).mul(share);
    gsrc = src_is.to(g.dtype()).mul(share.index_select(dim, index));
  }
  if (!include_self) gs = gs.index_fill(dim, index, Scalar(0));
  variable_list r(2);
  if (c.needs(0)) r[0] = gs.reshape(c.saved[1].sizes());
  if (c.needs(1)) r[1] = gsrc.reshape(c.saved[2].sizes());
  return r;
}

}  // namespace

// ---- index_reduce ----

// include_self=false first sets the indexed slices to the reduction's identity; "mean" sums,
// then divides by the number of contributions (rounding down for integers), as PyTorch.
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    std::string_view reduce, bool include_self) {
  EMBER_OP(index_reduce, self, dim, index, source, reduce, include_self);
  const char* op = "index_reduce";
  ExtraReduce r;
  if (reduce == "prod") {
    r = ExtraReduce::Prod;
  } else if (reduce == "mean") {
    r = ExtraReduce::Sum;
  } else if (reduce == "amax") {
    r = ExtraReduce::Max;
  } else if (reduce == "amin") {
    r = ExtraReduce::Min;
  } else {
    EMBER_THROW(Error, "[", op,
                "] index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ",
                std::string(reduce), ".");
  }
  EMBER_CHECK(self.defined() && index.defined() && source.defined(), "[", op,
              "] undefined tensor argument");
  dim = wrap_dim(dim, self.dim(), op);
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, "[", op,
              "] index_reduce_(): Expected dtype int32/int64 for index but got: ",
              dtype_name(index.dtype()));
  EMBER_CHECK_INDEX(index.dim() <= 1, "[", op,
                    "] index_reduce_(): Index is supposed to be a vector, but got dim: ",
                    index.dim(), " with size: ", shape_str(index.sizes()));
  EMBER_CHECK(self.dtype() == source.dtype(), "[", op, "] index_reduce_(): self (",
              dtype_name(self.dtype()), ") and source (", dtype_name(source.dtype()),
              ") must have the same scalar type");
  EMBER_CHECK(!isComplexType(self.dtype()) || r == ExtraReduce::Prod || reduce == "mean", "[", op,
              "] ", std::string(reduce), " is not supported for complex tensors");
  const Tensor s1 = as_1d(self);
  Tensor src1 = as_1d(source);
  EMBER_CHECK(src1.dim() == s1.dim(), "[", op, "] source (shape ", shape_str(source.sizes()),
              ") and self (shape ", shape_str(self.sizes()),
              ") must have the same number of dimensions");
  EMBER_CHECK(src1.size(dim) == index.numel(), "[", op, "] index_reduce_(): Number of indices (",
              index.numel(), ") should be equal to source.size(dim): (", src1.size(dim),
              "), for dim: ", dim);
  for (int64_t d = 0; d < s1.dim(); ++d) {
    EMBER_CHECK(d == dim || s1.size(d) == src1.size(d), "[", op,
                "] self and source must match in every dim but ", dim, " (shapes ",
                shape_str(self.sizes()), " and ", shape_str(source.sizes()), ")");
  }
  Tensor idx = index.to(kLong).contiguous().reshape({-1});
  index_check_stub(self.device().type(), idx, s1.size(dim), false, op, dim, false);

  OpRecorder rec(op, {self, source});
  Tensor out = self.resolve_conj().clone();
  Tensor o1 = as_1d(out);
  src1 = src1.resolve_conj();
  if (!include_self) o1.index_fill_(dim, idx, reduce_identity(r, self.dtype()));
  index_reduce_stub(self.device().type(), o1, dim, idx, src1, r);
  if (reduce == "mean") {
    Tensor n = mean_counts(self, dim, idx, source, include_self);
    if (isFloatingType(self.dtype()) || isComplexType(self.dtype())) {
      out.div_(n);
    } else {
      out.div_(n, "floor");
    }
  }
  if (rec) {
    rec.args(dim, std::string(reduce), include_self);
    rec.record(out, index_reduce_backward, {idx, self, source, out});
  }
  return out;
}

Tensor Tensor::index_reduce(int64_t dim, const Tensor& index, const Tensor& source,
                            std::string_view reduce, bool include_self) const {
  return ember::index_reduce(*this, dim, index, source, reduce, include_self);
}

// The in-place form writes the out-of-place result back: copy_ records the write, so the
// primitive keeps one rule. When recording, the primitive reads a clone: the tensor it saves
// must not be the one copy_ then overwrites.
Tensor& Tensor::index_reduce_(int64_t dim, const Tensor& index, const Tensor& source,
                              std::string_view reduce, bool include_self) {
  const bool rec = autograd::any_needs_recording({*this, source});
  Tensor r = ember::index_reduce(rec ? clone() : *this, dim, index, source, reduce, include_self);
  copy_(r);
  return *this;
}

// ---- segment_reduce ----

namespace {

/// Validates lengths or offsets against `data` and returns the offsets as a contiguous int64
/// tensor of shape (outer, S + 1).
Tensor segment_offsets(const Tensor& data, const Tensor& t, bool is_lengths, int64_t axis,
                       bool unsafe, const char* op) {
  const char* what = is_lengths ? "lengths" : "offsets";
  EMBER_CHECK(t.dtype() == kLong || t.dtype() == kInt, "[", op, "] segment_reduce(): ", what,
              " must be int32 or int64, got ", dtype_name(t.dtype()));
  EMBER_CHECK(t.dim() >= 1 && data.dim() >= t.dim(), "[", op, "] segment_reduce(): ", what,
              " (shape ", shape_str(t.sizes()), ") must have between 1 and data.dim() (",
              data.dim(), ") dims");
  EMBER_CHECK(axis == t.dim() - 1, "[", op,
              "] segment_reduce(): Expected axis to be the last dimension of ", what, " but got ",
              axis, ".");
  for (int64_t d = 0; d < axis; ++d) {
    EMBER_CHECK(t.size(d) == data.size(d), "[", op, "] segment_reduce(): ", what, " (shape ",
                shape_str(t.sizes()), ") must match data (shape ", shape_str(data.sizes()),
                ") in the dims before axis");
  }
  const int64_t n = data.size(axis);
  Tensor v = t.to(kLong).contiguous();
  Tensor off;
  if (is_lengths) {
    EMBER_CHECK(v.numel() == 0 || v.min().item().toLong() >= 0, "[", op,
                "] lengths contains negative value!");
    Tensor cs = v.cumsum(-1);
    DimVector zs;
    zs.assign(v.sizes());
    zs.back() = 1;
    off = cat({zeros(zs, TensorOptions(kLong)), cs}, -1);
    Tensor total = off.select(-1, off.size(-1) - 1);
    if (!unsafe) {
      EMBER_CHECK(total.eq(Scalar(n)).all().item().toBool(), "[", op,
                  "] segment_reduce(): Expected all rows of lengths along axis to sum to "
                  "data.size(lengths.dim()-1) when !unsafe.");
    } else {
      // Even unsafe calls never read past the data.
      EMBER_CHECK(total.le(Scalar(n)).all().item().toBool(), "[", op,
                  "] segment_reduce(): the lengths of a row sum to more than data.size(axis) (", n,
                  ")");
    }
  } else {
    EMBER_CHECK(v.size(-1) >= 1, "[", op, "] segment_reduce(): offsets must not be empty");
    const bool in_range =
        v.numel() == 0 || (v.min().item().toLong() >= 0 && v.max().item().toLong() <= n);
    const bool sorted = v.size(-1) < 2 || v.diff(1, -1).ge(Scalar(0)).all().item().toBool();
    EMBER_CHECK(in_range && sorted, "[", op,
                "] segment_reduce(): offsets must be nondecreasing and within [0, ", n, "]");
    off = v;
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.size(d);
  return off.reshape({outer, off.size(-1)}).contiguous();
}

/// PyTorch's _segment_reduce_backward. saved: data, offsets (outer, S + 1), result.
variable_list segment_reduce_backward(VjpCtx& c) {
  const std::string& reduce = c.args().str(0);
  const int64_t axis = c.args().i(1);
  const std::optional<Scalar> initial =
      c.args().is_none(2) ? std::nullopt : std::optional<Scalar>(c.args().scalar(2));
  const Tensor& data = c.saved[0];
  const Tensor& off = c.saved[1];
  const Tensor& out = c.saved[2];
  const Tensor& g = c.grads[0];
  const int64_t n = data.size(axis);
  const int64_t nseg = off.size(1) - 1;
  if (nseg == 0) return variable_list{zeros_like(data, g.options())};
  // seg[o, r]: the segment of element r of row o; `covered`: whether r lies in any segment.
  Tensor pos = arange(n, TensorOptions(kLong)).expand({off.size(0), n});
  Tensor ends = off.slice(1, 1, std::nullopt).contiguous();
  Tensor seg = searchsorted(ends, pos.contiguous(), false, true);
  Tensor covered = logical_and(pos.ge(off.slice(1, 0, 1)), pos.lt(off.slice(1, nseg, nseg + 1)));
  seg = seg.clamp_max(Scalar(nseg - 1));
  // Broadcast both to data's shape: (lead..., n, inner...).
  DimVector shp;
  shp.assign(data.sizes());
  DimVector s2;
  for (int64_t d = 0; d <= axis; ++d) s2.push_back(data.size(d));
  for (int64_t d = axis + 1; d < data.dim(); ++d) s2.push_back(1);
  seg = seg.reshape(s2).expand(shp);
  covered = covered.reshape(s2).expand(shp);
  Tensor zero = zeros({}, g.options());
  Tensor gd;
  if (reduce == "sum") {
    gd = g.gather(axis, seg);
  } else if (reduce == "mean") {
    DimVector ls;
    ls.assign(out.sizes());
    for (int64_t d = axis + 1; d < out.dim(); ++d) ls[size_t(d)] = 1;
    ls[size_t(axis)] = nseg;
    Tensor len = off.slice(1, 1, std::nullopt)
                     .sub(off.slice(1, 0, nseg))
                     .clamp_min(Scalar(1))
                     .reshape(ls)
                     .to(g.dtype());
    gd = g.div(len).gather(axis, seg);
  } else if (reduce == "max" || reduce == "min") {
    Tensor is = logical_and(data.eq(out.gather(axis, seg)), covered);
    Tensor cnt = zeros_like(out).scatter_add(axis, seg, is.to(out.dtype()));
    Tensor share = g.div(cnt.clamp_min(Scalar(1)));
    gd = where(is, share.gather(axis, seg), zero);
  } else {  // prod
    Tensor z = logical_and(data.eq(Scalar(0)), covered);
    Tensor nz = zeros_like(out).scatter_add(axis, seg, z.to(out.dtype())).gather(axis, seg);
    Tensor single = logical_and(z, nz.eq(Scalar(1)));
    Tensor masked = data.masked_fill(single, Scalar(1));
    DimVector os;
    for (int64_t d = 0; d < axis; ++d) os.push_back(data.size(d));
    os.push_back(nseg + 1);
    Tensor masked_out = segment_reduce(masked, "prod", std::nullopt, std::nullopt, off.reshape(os),
                                       axis, true, initial);
    Tensor a = g.mul(masked_out).gather(axis, seg);
    Tensor b = g.mul(out).gather(axis, seg).div(data.masked_fill(z, Scalar(1)));
    gd = where(single, a, b);
  }
  return variable_list{where(covered, gd, zero)};
}

}  // namespace

Tensor segment_reduce(const Tensor& data, std::string_view reduce,
                      const std::optional<Tensor>& lengths, const std::optional<Tensor>& indices,
                      const std::optional<Tensor>& offsets, int64_t axis, bool unsafe,
                      const std::optional<Scalar>& initial) {
  EMBER_OP(segment_reduce, data, reduce, lengths, indices, offsets, axis, unsafe, initial);
  const char* op = "segment_reduce";
  ExtraReduce r;
  const bool mean = reduce == "mean";
  if (reduce == "sum" || mean) {
    r = ExtraReduce::Sum;
  } else if (reduce == "prod") {
    r = ExtraReduce::Prod;
  } else if (reduce == "max") {
    r = ExtraReduce::Max;
  } else if (reduce == "min") {
    r = ExtraReduce::Min;
  } else {
    EMBER_THROW(Error, "[", op, "] unsupported reduction given! ", std::string(reduce));
  }
  EMBER_CHECK(data.defined(), "[", op, "] undefined data");
  EMBER_CHECK(data.numel() > 0, "[", op,
              "] segment_reduce(): Expected data.numel() > 0 (data shape ", shape_str(data.sizes()),
              ")");
  EMBER_CHECK(data.dim() > 0, "[", op, "] segment_reduce(): data must have at least one dim");
  axis = wrap_dim(axis, data.dim(), op);
  const bool has_len = lengths.has_value() && lengths->defined();
  const bool has_off = offsets.has_value() && offsets->defined();
  EMBER_CHECK(has_len || has_off || !(indices && indices->defined()), "[", op,
              "] segment_reduce(): indices based reduction is not supported yet.");
  EMBER_CHECK(has_len || has_off, "[", op,
              "] segment_reduce(): Either lengths or offsets must be defined.");
  EMBER_CHECK(isFloatingType(data.dtype()), "[", op,
              "] \"_segment_reduce_cpu\" not implemented for '", dtype_name(data.dtype()), "'");
  Tensor off = has_len ? segment_offsets(data, *lengths, true, axis, unsafe, op)
                       : segment_offsets(data, *offsets, false, axis, unsafe, op);
  const int64_t nseg = off.size(1) - 1;
  DimVector shape;
  shape.assign(data.sizes());
  shape[size_t(axis)] = nseg;

  OpRecorder rec(op, {data});
  Tensor x = data.contiguous();
  Tensor out = empty(shape, data.options());
  segment_reduce_stub(data.device().type(), out, x, off, axis, r, mean, initial);
  if (rec) {
    rec.args(std::string(reduce), axis, initial);
    rec.record(out, segment_reduce_backward, {data, off, out});
  }
  return out;
}

}  // namespace ember
