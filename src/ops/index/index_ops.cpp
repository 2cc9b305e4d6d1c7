// index_select, gather, take / take_along_dim, the index_{copy,add,fill} family, masked_*,
// nonzero / argwhere and put. Validation follows PyTorch 1.13 (messages, error types, which
// ops wrap negative indices); every index is checked before the first write, except that the
// CPU kernels of index_select and gather check theirs as they copy (Note [Fused index checks]
// in kernels/cpu/index/index_loops.cpp). The loops are the kernels of kernels/stubs/index.h.
#include <tuple>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "kernels/stubs/index.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

/// The conjugate of a coefficient (the gradient of alpha * x is conj(alpha) * grad).
Scalar conj_scalar(const Scalar& a) {
  return a.isComplex() ? Scalar(std::conj(a.toComplexDouble())) : a;
}

void bump(Tensor& t, const char* op) { t.unsafeGetTensorImpl()->bump_version(op); }

/// `index` as a contiguous int64 tensor, after checking its dtype (int64, or int32 too);
/// `keep_int` leaves an int32 index int32 (for kernels that read both).
Tensor long_index(const Tensor& index, bool allow_int, const char* op, const char* what,
                  bool keep_int = false) {
  EMBER_CHECK(index.defined(), "[", op, "] index is undefined");
  EMBER_CHECK(index.dtype() == kLong || (allow_int && index.dtype() == kInt), "[", op,
              "] Expected dtype ", allow_int ? "int32 or int64" : "int64", " for ", what,
              " but got ", dtype_name(index.dtype()));
  if (keep_int && index.dtype() == kInt) return index.contiguous();
  return index.to(kLong).contiguous();
}

/// A 1-D view for 0-dim tensors (the index_* family treats them as one-element vectors).
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* what) {
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op, "] self (", dtype_name(a.dtype()), ") and ", what,
              " (", dtype_name(b.dtype()), ") must have the same scalar type");
}

/// Validation shared by index_copy_/index_add_: a 1-D index along `dim`, a source of self's
/// shape except source.size(dim) == index.numel().
void check_index_source(const Tensor& self, int64_t dim, const Tensor& idx, const Tensor& source,
                        const char* op) {
  EMBER_CHECK_INDEX(idx.dim() <= 1, "[", op, "] Index should have dimension 1 or 0 (got ",
                    idx.dim(), ")");
  const Tensor s1 = as_1d(self), src1 = as_1d(source);
  EMBER_CHECK(src1.dim() == s1.dim() || (self.dim() == 0 && source.numel() == 1) ||
                  (source.dim() == 0 && self.numel() == 1),
              "[", op, "] source (shape ", shape_str(source.sizes()), ") and self (shape ",
              shape_str(self.sizes()), ") must have the same number of dimensions");
  EMBER_CHECK(src1.size(dim) == idx.numel() || source.dim() == 0, "[", op, "] Number of indices (",
              idx.numel(), ") should be equal to source.size(dim) (", src1.size(dim), ")");
  for (int64_t d = 0; d < s1.dim() && src1.dim() == s1.dim(); ++d) {
    EMBER_CHECK(d == dim || s1.size(d) == src1.size(d), "[", op,
                "] self and source must match "
                "in every dim but ",
                dim, " (shapes ", shape_str(self.sizes()), " and ", shape_str(source.sizes()), ")");
  }
}

}  // namespace

// ---- index_select ----

Tensor& index_select_out(Tensor& out, const Tensor& self_in, int64_t dim, const Tensor& index) {
  EMBER_OP(index_select_out, out, self_in, dim, index);
  const char* op = "index_select";
  autograd::check_out_not_differentiable(op, {self_in});
  EMBER_CHECK_INDEX(index.defined() && index.dim() <= 1, "[", op,
                    "] Index is supposed to be a vector (got shape ", shape_str(index.sizes()),
                    ")");
  // The CPU kernel reads int32 indices as they are and checks every index as it copies.
  const bool cpu = self_in.is_cpu();
  Tensor idx = long_index(index, true, op, "index", /*keep_int=*/cpu);
  dim = wrap_dim(dim, self_in.dim(), op);
  EMBER_CHECK(out.dtype() == self_in.dtype(), "[", op, "] out dtype ", dtype_name(out.dtype()),
              " does not match self dtype ", dtype_name(self_in.dtype()));
  Tensor self = as_1d(self_in.resolve_conj());
  DimVector shape;
  shape.assign(self_in.sizes());
  if (self_in.dim() > 0) shape[size_t(dim)] = idx.numel();
  EMBER_CHECK(self_in.dim() > 0 || idx.numel() == 1, "[", op,
              "] index_select(): Index to "
              "scalar can have only 1 value, got ",
              idx.numel(), " value(s)");
  EMBER_CHECK(self.size(dim) > 0 || idx.numel() == 0, "[", op,
              "] index_select(): self indexing "
              "axis dim should be positive");
  if (!cpu) index_check_stub(self.device().type(), idx, self.size(dim), false, op, dim, false);
  if (!out.sizes().equals(shape)) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(shape));
    resize_output(out, shape);
  }
  Tensor o = as_1d(out);
  index_select_stub(self.device().type(), o, self, dim, idx);
  return out;
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  EMBER_OP(index_select, self, dim, index);
  OpRecorder rec("index_select", {self});
  Tensor out = empty({0}, TensorOptions(self.dtype()).device(self.device()));
  index_select_out(out, self, dim, index);
  if (rec) {
    rec.args(wrap_dim(dim, self.dim(), "index_select"), self.sizes());
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t d = c.args().i(0);
          const std::vector<int64_t>& sizes = c.args().ints(1);
          return variable_list{
              zeros(sizes, c.grads[0].options()).index_add(d, c.saved[0], c.grads[0])};
        },
        {index},
        [](JvpCtx& c) {
          const int64_t d = c.args().i(0);
          return variable_list{index_select(c.tangents[0], d, c.saved[0])};
        });
  }
  return out;
}

// ---- gather / take_along_dim ----

Tensor& gather_out(Tensor& out, const Tensor& self_in, int64_t dim, const Tensor& index,
                   bool /*sparse_grad*/) {
  EMBER_OP(gather_out, out, self_in, dim, index);
  const char* op = "gather";
  autograd::check_out_not_differentiable(op, {self_in});
  // An empty index of any dtype gives an empty result (PyTorch checks nothing then).
  Tensor idx = index.numel() == 0 ? index.to(kLong) : long_index(index, false, op, "index");
  dim = wrap_dim(dim, self_in.dim(), op);
  Tensor self = as_1d(self_in.resolve_conj());
  Tensor idx1 = as_1d(idx);
  EMBER_CHECK(idx1.dim() == self.dim(), "[", op,
              "] Index tensor must have the same number of "
              "dimensions as input tensor (index shape ",
              shape_str(index.sizes()), ", input shape ", shape_str(self_in.sizes()), ")");
  if (idx.numel() > 0) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      EMBER_CHECK(d == dim || idx1.size(d) <= self.size(d), "[", op,
                  "] Size does not match at "
                  "dimension ",
                  d, " expected index ", shape_str(index.sizes()), " to be smaller than self ",
                  shape_str(self_in.sizes()), " apart from dimension ", dim);
    }
  }
  EMBER_CHECK(out.dtype() == self.dtype(), "[", op, "] Expected out tensor to have dtype ",
              dtype_name(self.dtype()), ", but got ", dtype_name(out.dtype()), " instead");
  // The CPU kernel checks every index as it copies.
  if (!self.is_cpu())
    index_check_stub(self.device().type(), idx, self.size(dim), false, op, dim,
                     /*runtime_error=*/true);
  if (!out.sizes().equals(index.sizes())) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(index.sizes()));
    resize_output(out, index.sizes());
  }
  if (idx.numel() == 0) return out;
  Tensor o = as_1d(out);
  gather_stub(self.device().type(), o, self, dim, idx1);
  return out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad) {
  EMBER_OP(gather, self, dim, index, sparse_grad);
  OpRecorder rec("gather", {self});
  Tensor out = empty({0}, TensorOptions(self.dtype()).device(self.device()));
  gather_out(out, self, dim, index, sparse_grad);
  if (rec) {
    rec.args(wrap_dim(dim, self.dim(), "gather"), self.sizes());
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t d = c.args().i(0);
          const std::vector<int64_t>& sizes = c.args().ints(1);
          return variable_list{
              zeros(sizes, c.grads[0].options()).scatter_add(d, c.saved[0], c.grads[0])};
        },
        {index.numel() == 0 ? index.to(kLong) : index},
        [](JvpCtx& c) {
          const int64_t d = c.args().i(0);
          return variable_list{gather(c.tangents[0], d, c.saved[0])};
        });
  }
  return out;
}

namespace {
/// take_along_dim as a gather of broadcast views: (self, dim, index) for gather.
std::tuple<Tensor, int64_t, Tensor> take_along_dim_args(const Tensor& self, const Tensor& indices,
                                                        std::optional<int64_t> dim) {
  const char* op = "take_along_dim";
  EMBER_CHECK(indices.dtype() == kLong, "[", op,
              "] torch.take_along_dim(): dtype of indices "
              "should be Long but got ",
              dtype_name(indices.dtype()));
  // As PyTorch 1.13, dim=None views (not reshapes) both tensors as 1-D.
  if (!dim) return {self.view({-1}), 0, indices.view({-1})};
  EMBER_CHECK(self.dim() == indices.dim(), "[", op,
              "] torch.take_along_dim(): input and "
              "indices should have the same number of dimensions, but got ",
              self.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  const int64_t d = wrap_dim(*dim, self.dim(), op);
  DimVector ss, is;
  ss.assign(self.sizes());
  is.assign(indices.sizes());
  ss[size_t(d)] = 1;
  is[size_t(d)] = 1;
  DimVector b =
      broadcast_all({empty(ss, TensorOptions(kBool)), empty(is, TensorOptions(kBool))}, op);
  b[size_t(d)] = self.size(d);
  Tensor s = self.expand(b);
  b[size_t(d)] = indices.size(d);
  Tensor i = indices.expand(b);
  return {s, d, i};
}
}  // namespace

Tensor& take_along_dim_out(Tensor& out, const Tensor& self, const Tensor& indices,
                           std::optional<int64_t> dim) {
  EMBER_OP(take_along_dim_out, out, self, indices, dim);
  autograd::check_out_not_differentiable("take_along_dim", {self});
  auto [s, d, i] = take_along_dim_args(self, indices, dim);
  return gather_out(out, s, d, i);
}

// A composite of recorded ops: the broadcast views and gather.
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  EMBER_OP(take_along_dim, self, indices, dim);
  auto [s, d, i] = take_along_dim_args(self, indices, dim);
  return gather(s, d, i);
}

// ---- take / put ----

Tensor& take_out(Tensor& out, const Tensor& self_in, const Tensor& index) {
  EMBER_OP(take_out, out, self_in, index);
  const char* op = "take";
  autograd::check_out_not_differentiable(op, {self_in});
  EMBER_CHECK(index.dtype() == kLong, "[", op,
              "] take(): Expected a long tensor for index, "
              "but got ",
              dtype_name(index.dtype()));
  EMBER_CHECK(out.dtype() == self_in.dtype(), "[", op,
              "] take(): self and out expected to have "
              "the same dtype, but got self.dtype = ",
              dtype_name(self_in.dtype()), " and out.dtype = ", dtype_name(out.dtype()));
  Tensor self = self_in.resolve_conj().contiguous();
  Tensor idx = index.contiguous();
  EMBER_CHECK_INDEX(!(self.numel() == 0 && idx.numel() > 0), "[", op,
                    "] take(): tried to take from an empty tensor");
  index_check_stub(self.device().type(), idx, self.numel(), true, op, 0, false);
  if (!out.sizes().equals(index.sizes())) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(index.sizes()));
    resize_output(out, index.sizes());
  }
  Tensor o = out.is_contiguous()
                 ? out
                 : empty(index.sizes(), TensorOptions(out.dtype()).device(out.device()));
  take_stub(self.device().type(), o, self, idx);
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

Tensor take(const Tensor& self, const Tensor& index) {
  EMBER_OP(take, self, index);
  OpRecorder rec("take", {self});
  Tensor out = empty({0}, TensorOptions(self.dtype()).device(self.device()));
  take_out(out, self, index);
  if (rec) {
    rec.args(self.sizes());
    rec.record(
        out,
        [](VjpCtx& c) {
          const std::vector<int64_t>& sizes = c.args().ints(0);
          return variable_list{
              zeros(sizes, c.grads[0].options()).put(c.saved[0], c.grads[0], true)};
        },
        {index}, [](JvpCtx& c) { return variable_list{take(c.tangents[0], c.saved[0])}; });
  }
  return out;
}

Tensor& Tensor::put_(const Tensor& index, const Tensor& source, bool accumulate) {
  EMBER_OP(put_, *this, index, source, accumulate);
  const char* op = "put_";
  EMBER_CHECK(index.dtype() == kLong, "[", op,
              "] put_(): Expected a long tensor for index, "
              "but got ",
              dtype_name(index.dtype()));
  EMBER_CHECK(source.dtype() == dtype(), "[", op,
              "] put_(): self and source expected to have "
              "the same dtype, but got self.dtype = ",
              dtype_name(dtype()), " and source.dtype = ", dtype_name(source.dtype()));
  EMBER_CHECK_INDEX(source.numel() == index.numel(), "[", op,
                    "] put_(): Expected source and index to "
                    "have the same number of elements, but got source.numel() = ",
                    source.numel(), ", index.numel() = ", index.numel());
  Tensor idx = index.contiguous();
  EMBER_CHECK_INDEX(!(numel() == 0 && idx.numel() > 0), "[", op,
                    "] put_(): Tried to put elements into an empty tensor");
  OpRecorder rec(op, {*this, source});
  index_check_stub(device().type(), idx, numel(), true, op, 0, false);
  Tensor src = source.resolve_conj().contiguous();
  if (src.is_alias_of(*this)) src = src.clone();
  put_stub(device().type(), *this, idx, src, accumulate);
  bump(*this, op);
  if (rec) {
    // self: the positions written are overwritten unless accumulating; source: what it wrote.
    rec.args(accumulate, source.sizes());
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const bool accumulate = c.args().b(0);
          const std::vector<int64_t>& ssizes = c.args().ints(1);
          const Tensor& g = c.grads[0];
          const Tensor& ix = c.saved[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = accumulate ? g : g.put(ix, zeros(ssizes, g.options()), false);
          if (c.needs(1)) r[1] = g.take(ix).reshape(ssizes);
          return r;
        },
        {index},
        [](JvpCtx& c) {
          const bool accumulate = c.args().b(0);
          return variable_list{
              c.tangent_or_zeros(0).put(c.saved[0], c.tangent_or_zeros(1), accumulate)};
        });
  }
  return *this;
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  EMBER_OP(put, self, index, source, accumulate);
  Tensor r = self.clone();
  r.put_(index, source, accumulate);
  return r;
}

// ---- index_copy / index_add / index_fill ----

Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
  EMBER_OP(index_copy_, *this, dim, index, source);
  const char* op = "index_copy_";
  dim = wrap_dim(dim, this->dim(), op);
  EMBER_CHECK(index.dtype() == kLong, "[", op,
              "] index_copy_(): Expected a long tensor for "
              "index, but got ",
              dtype_name(index.dtype()));
  check_same_dtype(*this, source, op, "source");
  check_index_source(*this, dim, index, source, op);
  OpRecorder rec(op, {*this, source});
  Tensor idx = index.contiguous();
  Tensor self = as_1d(*this);
  index_check_stub(device().type(), idx, self.size(dim), false, op, dim, false);
  Tensor src = as_1d(source.resolve_conj());
  if (src.is_alias_of(*this)) src = src.clone();
  if (src.dim() == 0 ||
      src.numel() != idx.numel() * (self.numel() / std::max<int64_t>(self.size(dim), 1))) {
    if (self.size(dim) > 0) {
      DimVector sh;
      sh.assign(self.sizes());
      sh[size_t(dim)] = idx.numel();
      src = src.reshape(sh);
    }
  }
  index_copy_stub(device().type(), self, dim, idx, src);
  bump(*this, op);
  if (rec) {
    rec.args(dim, source.sizes());
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          const std::vector<int64_t>& ssizes = c.args().ints(1);
          const Tensor& g = c.grads[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = g.index_fill(dim, c.saved[0], Scalar(0));
          if (c.needs(1)) r[1] = g.index_select(dim, c.saved[0]).reshape(ssizes);
          return r;
        },
        {index},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          return variable_list{
              c.tangent_or_zeros(0).index_copy(dim, c.saved[0], c.tangent_or_zeros(1))};
        });
  }
  return *this;
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  EMBER_OP_CAST(index_copy, index_copy, self, dim, index, source);
  return self.clone().index_copy_(dim, index, source);
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return ember::index_copy(*this, dim, index, source);
}

Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source,
                           const Scalar& alpha) {
  EMBER_OP(index_add_, *this, dim, index, source, alpha);
  const char* op = "index_add_";
  dim = wrap_dim(dim, this->dim(), op);
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, "[", op,
              "] index_add_(): "
              "Expected dtype int32/int64 for index but got ",
              dtype_name(index.dtype()));
  check_same_dtype(*this, source, op, "source");
  check_index_source(*this, dim, index, source, op);
  OpRecorder rec(op, {*this, source});
  Tensor idx = index.to(kLong).contiguous();
  Tensor self = as_1d(*this);
  index_check_stub(device().type(), idx, self.size(dim), false, op, dim, false);
  Tensor src = as_1d(source.resolve_conj());
  if (src.is_alias_of(*this)) src = src.clone();
  if (src.numel() == 1 && src.dim() != self.dim())
    src = src.reshape(DimVector(size_t(self.dim()), 1));
  index_add_stub(device().type(), self, dim, idx, src, alpha);
  bump(*this, op);
  if (rec) {
    rec.args(dim, alpha, source.sizes());
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Scalar& alpha = c.args().scalar(1);
          const std::vector<int64_t>& ssizes = c.args().ints(2);
          const Tensor& g = c.grads[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = g;
          if (c.needs(1)) {
            r[1] = g.index_select(dim, c.saved[0]).reshape(ssizes);
            if (!alpha.equal(Scalar(int64_t(1)))) r[1] = r[1].mul(conj_scalar(alpha));
          }
          return r;
        },
        {index},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          const Scalar& alpha = c.args().scalar(1);
          return variable_list{
              c.tangent_or_zeros(0).index_add(dim, c.saved[0], c.tangent_or_zeros(1), alpha)};
        });
  }
  return *this;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha) {
  EMBER_OP(index_add, self, dim, index, source, alpha);
  return self.clone().index_add_(dim, index, source, alpha);
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source,
                         const Scalar& alpha) const {
  return ember::index_add(*this, dim, index, source, alpha);
}

Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Scalar& value) {
  EMBER_OP(index_fill_, *this, dim, index, value);
  const char* op = "index_fill_";
  dim = wrap_dim(dim, this->dim(), op);
  EMBER_CHECK_INDEX(index.dtype() == kLong, "[", op,
                    "] index_fill_(): Expected dtype int64 "
                    "for index.");
  EMBER_CHECK_INDEX(index.dim() <= 1, "[", op, "] Index has to be a vector/scalar (got ",
                    index.dim(), " dims)");
  OpRecorder rec(op, {*this});
  Tensor idx = index.contiguous();
  Tensor self = as_1d(*this);
  index_check_stub(device().type(), idx, self.size(dim), true, op, dim, false);
  Tensor v = empty({}, TensorOptions(dtype()));
  v.fill_(value);
  index_fill_stub(device().type(), self, dim, idx, v);
  bump(*this, op);
  if (rec) {
    rec.args(dim);
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const int64_t dim = c.args().i(0);
          return variable_list{c.grads[0].index_fill(dim, c.saved[0], Scalar(0))};
        },
        {index},
        [](JvpCtx& c) {
          const int64_t dim = c.args().i(0);
          return variable_list{c.tangents[0].index_fill(dim, c.saved[0], Scalar(0))};
        });
  }
  return *this;
}

Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Tensor& value) {
  EMBER_OP(index_fill__1, *this, dim, index, value);
  EMBER_CHECK(value.dim() == 0,
              "[index_fill_] index_fill_ only supports a 0-dimensional value "
              "tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  OpRecorder rec("index_fill_", {*this, value});
  index_fill_(dim, index, value.item());
  if (rec) {
    // value: every filled position once (duplicated indices fill it once).
    rec.args(wrap_dim(dim, this->dim(), "index_fill_"));
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const int64_t d = c.args().i(0);
          const Tensor& g = c.grads[0];
          Tensor rest = g.index_fill(d, c.saved[0], Scalar(0));
          variable_list r(2);
          if (c.needs(0)) r[0] = rest;
          if (c.needs(1)) r[1] = g.sub(rest).sum();
          return r;
        },
        {index},
        [](JvpCtx& c) {
          const int64_t d = c.args().i(0);
          Tensor t = c.tangent_or_zeros(0);
          Tensor tv = c.tangent_or_zeros(1);
          Tensor mask = zeros_like(t, TensorOptions(kBool)).index_fill(d, c.saved[0], Scalar(true));
          return variable_list{ember::where(mask, tv.to(t.dtype()), t)};
        });
  }
  return *this;
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  EMBER_OP(index_fill, self, dim, index, value);
  return self.clone().index_fill_(dim, index, value);
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  EMBER_OP(index_fill_1, self, dim, index, value);
  return self.clone().index_fill_(dim, index, value);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::index_fill(*this, dim, index, value);
}

// ---- masked_fill / masked_select / masked_scatter ----

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  EMBER_OP(masked_fill, self, mask, value);
  EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == kByte,
              "[masked_fill] masked_fill_ only supports boolean masks, "
              "but got mask with dtype ",
              dtype_name(mask.dtype()));
  Tensor v = empty({}, TensorOptions(self.dtype()));
  v.fill_(value);
  return where(mask.to(kBool), v, self);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  EMBER_OP(masked_fill_1, self, mask, value);
  EMBER_CHECK(value.dim() == 0,
              "[masked_fill] masked_fill_ only supports a 0-dimensional value "
              "tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (autograd::any_needs_recording({self, value})) {
    // A composite of recorded ops so that value gets its gradient.
    EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == kByte,
                "[masked_fill] masked_fill_ only supports boolean masks, "
                "but got mask with dtype ",
                dtype_name(mask.dtype()));
    return where(mask.to(kBool), value.to(self.dtype()), self);
  }
  return masked_fill(self, mask, value.item());
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  EMBER_OP(masked_fill_, *this, mask, value);
  EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == kByte,
              "[masked_fill_] masked_fill_ only supports boolean masks, "
              "but got mask with dtype ",
              dtype_name(mask.dtype()));
  DimVector b = broadcast_all({*this, mask}, "masked_fill_");
  EMBER_CHECK(sizes().equals(b), "[masked_fill_] mask of shape ", shape_str(mask.sizes()),
              " cannot be broadcast to self of shape ", shape_str(sizes()));
  OpRecorder rec("masked_fill_", {*this});
  Tensor m = mask.expand(sizes()).to(kBool);
  Tensor v = empty({}, TensorOptions(dtype()));
  v.fill_(value);
  masked_fill_stub(device().type(), *this, m.contiguous(), v);
  bump(*this, "masked_fill_");
  if (rec) {
    rec.record_inplace(
        *this,
        [](VjpCtx& c) { return variable_list{c.grads[0].masked_fill(c.saved[0], Scalar(0))}; }, {m},
        [](JvpCtx& c) { return variable_list{c.tangents[0].masked_fill(c.saved[0], Scalar(0))}; });
  }
  return *this;
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  EMBER_OP(masked_fill__1, *this, mask, value);
  EMBER_CHECK(value.dim() == 0,
              "[masked_fill_] masked_fill_ only supports a 0-dimensional "
              "value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  OpRecorder rec("masked_fill_", {*this, value});
  masked_fill_(mask, value.item());
  if (rec) {
    Tensor m = mask.to(kBool);
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const Tensor& g = c.grads[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = g.masked_fill(c.saved[0], Scalar(0));
          if (c.needs(1)) r[1] = ember::where(c.saved[0], g, Scalar(0)).sum();
          return r;
        },
        {m},
        [](JvpCtx& c) {
          Tensor t = c.tangent_or_zeros(0);
          return variable_list{ember::where(c.saved[0], c.tangent_or_zeros(1).to(t.dtype()), t)};
        });
  }
  return *this;
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return ember::masked_fill(*this, mask, value);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return ember::masked_fill(*this, mask, value);
}

Tensor& masked_select_out(Tensor& out, const Tensor& self_in, const Tensor& mask) {
  EMBER_OP(masked_select_out, out, self_in, mask);
  const char* op = "masked_select";
  autograd::check_out_not_differentiable(op, {self_in});
  EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == kByte, "[", op,
              "] masked_select: "
              "expected BoolTensor or ByteTensor for mask (got ",
              dtype_name(mask.dtype()), ")");
  EMBER_CHECK(out.dtype() == self_in.dtype(), "[", op,
              "] masked_select(): self and result must "
              "have the same scalar type");
  DimVector b = broadcast_all({self_in, mask}, op);
  Tensor self = self_in.resolve_conj().expand(b);
  Tensor m = mask.expand(b).to(kBool).contiguous();
  const int64_t n = nonzero_count_stub(self.device().type(), m);
  if (!(out.dim() == 1 && out.size(0) == n)) resize_output(out, {n});
  masked_select_stub(self.device().type(), out, self, m);
  return out;
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  EMBER_OP(masked_select, self, mask);
  OpRecorder rec("masked_select", {self});
  Tensor out = empty({0}, TensorOptions(self.dtype()).device(self.device()));
  masked_select_out(out, self, mask);
  if (rec) {
    DimVector b = broadcast_all({self, mask}, "masked_select");
    Tensor m = mask.to(kBool).expand(b);
    // The gradient scatters back into the broadcast shape; the node sums it to self's.
    rec.record(
        out,
        [](VjpCtx& c) {
          return variable_list{
              zeros_like(c.saved[0], c.grads[0].options()).masked_scatter(c.saved[0], c.grads[0])};
        },
        {m}, [](JvpCtx& c) { return variable_list{masked_select(c.tangents[0], c.saved[0])}; });
  }
  return out;
}
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }

Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  EMBER_OP(masked_scatter_, *this, mask, source);
  const char* op = "masked_scatter_";
  EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == kByte, "[", op,
              "] masked_scatter_ only "
              "supports boolean masks, but got mask with dtype ",
              dtype_name(mask.dtype()));
  EMBER_CHECK(source.dtype() == dtype(), "[", op,
              "] masked_scatter: expected self and source "
              "to have same dtypes but got ",
              dtype_name(dtype()), " and ", dtype_name(source.dtype()));
  DimVector b = broadcast_all({*this, mask}, op);
  EMBER_CHECK(sizes().equals(b), "[", op, "] mask of shape ", shape_str(mask.sizes()),
              " cannot be broadcast to self of shape ", shape_str(sizes()));
  OpRecorder rec(op, {*this, source});
  Tensor m = mask.expand(sizes()).to(kBool);
  Tensor src = source.resolve_conj().contiguous();
  if (src.is_alias_of(*this)) src = src.clone();
  // Raises when source has fewer elements than mask has true ones.
  masked_scatter_stub(device().type(), *this, m.contiguous(), src);
  bump(*this, op);
  if (rec) {
    rec.args(source.sizes());
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const std::vector<int64_t>& ssizes = c.args().ints(0);
          const Tensor& g = c.grads[0];
          const Tensor& msk = c.saved[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = g.masked_fill(msk, Scalar(0));
          if (c.needs(1)) {
            // The selected gradient, padded with zeros to source's size.
            Tensor s = g.masked_select(msk);
            int64_t n = 1;
            for (int64_t x : ssizes) n *= x;
            if (n > s.numel()) s = cat({s, zeros({n - s.numel()}, g.options())});
            r[1] = s.reshape(ssizes);
          }
          return r;
        },
        {m},
        [](JvpCtx& c) {
          return variable_list{
              c.tangent_or_zeros(0).masked_scatter(c.saved[0], c.tangent_or_zeros(1))};
        });
  }
  return *this;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  EMBER_OP(masked_scatter, self, mask, source);
  DimVector b = broadcast_all({self, mask}, "masked_scatter");
  Tensor r = self.expand(b).clone();
  return r.masked_scatter_(mask, source);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return ember::masked_scatter(*this, mask, source);
}

// ---- nonzero / argwhere ----

Tensor& nonzero_out(Tensor& out, const Tensor& self) {
  EMBER_OP(nonzero_out, out, self);
  EMBER_CHECK(out.dtype() == kLong,
              "[nonzero] Expected object of scalar type Long as out, but "
              "got ",
              dtype_name(out.dtype()));
  Tensor m = self.to(kBool).contiguous();
  const int64_t count = nonzero_count_stub(m.device().type(), m);
  Tensor r = empty({count, self.dim()}, TensorOptions(kLong).device(m.device()));
  nonzero_stub(m.device().type(), r, m);
  if (!out.sizes().equals(r.sizes())) resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

Tensor nonzero(const Tensor& self) {
  EMBER_OP(nonzero, self);
  Tensor out = empty({0}, TensorOptions(kLong).device(self.device()));
  return nonzero_out(out, self);
}

std::vector<Tensor> nonzero_numpy(const Tensor& self) {
  EMBER_OP(nonzero_numpy, self);
  Tensor nz = nonzero(self);
  std::vector<Tensor> r;
  if (self.dim() == 0) {  // a 0-dim tensor counts as one element at position 0
    r.push_back(zeros({nz.size(0)}, TensorOptions(kLong).device(self.device())));
  }
  for (int64_t d = 0; d < self.dim(); ++d) r.push_back(nz.select(1, d).contiguous());
  return r;
}

Tensor argwhere(const Tensor& self) {
  EMBER_OP(argwhere, self);
  return nonzero(self);
}
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }
Tensor Tensor::argwhere() const {
  EMBER_OP(argwhere_1, *this);
  return ember::nonzero(*this);
}

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index, bool sparse_grad) const {
  return ember::gather(*this, dim, index, sparse_grad);
}
Tensor Tensor::take(const Tensor& index) const { return ember::take(*this, index); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return ember::take_along_dim(*this, indices, dim);
}
Tensor Tensor::put(const Tensor& index, const Tensor& source, bool accumulate) const {
  return ember::put(*this, index, source, accumulate);
}

}  // namespace ember
