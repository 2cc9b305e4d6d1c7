// scatter / scatter_ (src or value, reduce "add" / "multiply"), scatter_add and scatter_reduce.
// Duplicated indices accumulate deterministically (Note [Deterministic index accumulation]).
#include <climits>
#include <limits>
#include <string>
#include <string_view>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "kernels/stubs/index.h"
#include "ops/call_path.h"

namespace ember {

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

void bump(Tensor& t, const char* op) { t.unsafeGetTensorImpl()->bump_version(op); }

/// The index as saved for a rule: an empty index of another dtype becomes int64.
Tensor saved_index(const Tensor& index) {
  return index.numel() == 0 && index.dtype() != kLong ? index.to(kLong) : index;
}

/// Validates a scatter and runs the kernel: `src` (may be undefined, then `value`).
void scatter_impl(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                  const Scalar& value, ScatterOp op, const char* name) {
  dim = wrap_dim(dim, self.dim(), name);
  EMBER_CHECK(index.dtype() == kLong, "[", name, "] ", name, "(): Expected dtype int64 for index");
  EMBER_CHECK(!self.is_conj(), "[", name,
              "] writing into a lazily conjugated tensor is not "
              "supported; call resolve_conj() first");
  Tensor s1 = self.dim() == 0 ? self.reshape({1}) : self;
  Tensor idx = index.contiguous();
  Tensor i1 = idx.dim() == 0 ? idx.reshape({1}) : idx;
  Tensor src1;
  if (src.defined()) {
    EMBER_CHECK(src.dtype() == self.dtype(), "[", name, "] ", name,
                "(): Expected self.dtype to "
                "be equal to src.dtype (got ",
                dtype_name(self.dtype()), " and ", dtype_name(src.dtype()), ")");
    src1 = src.resolve_conj();
    if (src1.dim() == 0) src1 = src1.reshape({1});
    if (src1.is_alias_of(self)) src1 = src1.clone();
  }
  if (idx.numel() == 0) return;
  EMBER_CHECK(i1.dim() == s1.dim() && (!src1.defined() || src1.dim() == s1.dim()), "[", name,
              "] Index tensor must have the same number of dimensions as self tensor",
              src.defined() ? " and src tensor" : "", " (shapes ", shape_str(index.sizes()),
              " and ", shape_str(self.sizes()), ")");
  for (int64_t d = 0; d < s1.dim(); ++d) {
    EMBER_CHECK(d == dim || i1.size(d) <= s1.size(d), "[", name, "] Expected index ",
                shape_str(index.sizes()), " to be smaller than self ", shape_str(self.sizes()),
                " apart from dimension ", dim);
    EMBER_CHECK(!src1.defined() || i1.size(d) <= src1.size(d), "[", name, "] Expected index ",
                shape_str(index.sizes()), " to be smaller size than src ", shape_str(src.sizes()));
  }
  index_check_stub(self.device().type(), idx, s1.size(dim), false, name, dim,
                   /*runtime_error=*/true);
  Tensor v;
  if (!src1.defined()) {
    v = empty({}, TensorOptions(self.dtype()));
    v.fill_(value);
  }
  scatter_stub(self.device().type(), s1, dim, i1, src1, v, op);
}

ScatterOp legacy_reduce(std::string_view reduce) {
  if (reduce == "add") return ScatterOp::Sum;
  if (reduce == "multiply") return ScatterOp::Prod;
  EMBER_THROW(Error, "[scatter_] reduce argument must be either add or multiply. Got ",
              std::string(reduce));
}

}  // namespace

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP(scatter_, *this, dim, index, src);
  OpRecorder rec("scatter_", {*this, src});
  scatter_impl(*this, dim, index, src, Scalar(0), ScatterOp::Assign, "scatter_");
  bump(*this, "scatter_");
  if (rec) {
    rec.args(wrap_dim(dim, this->dim(), "scatter_"));
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const int64_t d = c.args().i(0);
          const Tensor& g = c.grads[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = g.scatter(d, c.saved[0], Scalar(0));
          if (c.needs(1)) r[1] = g.gather(d, c.saved[0]);
          return r;
        },
        {saved_index(index)},
        [](JvpCtx& c) {
          const int64_t d = c.args().i(0);
          return variable_list{c.tangent_or_zeros(0).scatter(d, c.saved[0], c.tangent_or_zeros(1))};
        });
  }
  return *this;
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) {
  EMBER_OP(scatter__1, *this, dim, index, value);
  OpRecorder rec("scatter_", {*this});
  scatter_impl(*this, dim, index, Tensor(), value, ScatterOp::Assign, "scatter_");
  bump(*this, "scatter_");
  if (rec) {
    rec.args(wrap_dim(dim, this->dim(), "scatter_"));
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const int64_t d = c.args().i(0);
          return variable_list{c.grads[0].scatter(d, c.saved[0], Scalar(0))};
        },
        {saved_index(index)},
        [](JvpCtx& c) {
          const int64_t d = c.args().i(0);
          return variable_list{c.tangents[0].scatter(d, c.saved[0], Scalar(0))};
        });
  }
  return *this;
}
// The legacy reduce= forms are not differentiable in PyTorch either.
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src,
                         std::string_view reduce) {
  EMBER_OP(scatter__2, *this, dim, index, src, reduce);
  OpRecorder rec("scatter_", {*this, src});
  scatter_impl(*this, dim, index, src, Scalar(0), legacy_reduce(reduce), "scatter_");
  bump(*this, "scatter_");
  if (rec) rec.record_not_implemented({*this});
  return *this;
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value,
                         std::string_view reduce) {
  EMBER_OP(scatter__3, *this, dim, index, value, reduce);
  OpRecorder rec("scatter_", {*this});
  scatter_impl(*this, dim, index, Tensor(), value, legacy_reduce(reduce), "scatter_");
  bump(*this, "scatter_");
  if (rec) rec.record_not_implemented({*this});
  return *this;
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP(scatter_add_, *this, dim, index, src);
  OpRecorder rec("scatter_add_", {*this, src});
  scatter_impl(*this, dim, index, src, Scalar(0), ScatterOp::Sum, "scatter_add_");
  bump(*this, "scatter_add_");
  if (rec) {
    rec.args(wrap_dim(dim, this->dim(), "scatter_add_"));
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          const int64_t d = c.args().i(0);
          const Tensor& g = c.grads[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = g;
          if (c.needs(1)) r[1] = g.gather(d, c.saved[0]);
          return r;
        },
        {saved_index(index)},
        [](JvpCtx& c) {
          const int64_t d = c.args().i(0);
          return variable_list{
              c.tangent_or_zeros(0).scatter_add(d, c.saved[0], c.tangent_or_zeros(1))};
        });
  }
  return *this;
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP(scatter, self, dim, index, src);
  return self.clone().scatter_(dim, index, src);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  EMBER_OP(scatter_1, self, dim, index, value);
  return self.clone().scatter_(dim, index, value);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               std::string_view reduce) {
  EMBER_OP(scatter_2, self, dim, index, src, reduce);
  return self.clone().scatter_(dim, index, src, reduce);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               std::string_view reduce) {
  EMBER_OP(scatter_3, self, dim, index, value, reduce);
  return self.clone().scatter_(dim, index, value, reduce);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_OP_CAST(scatter_add, scatter_add, self, dim, index, src);
  return self.clone().scatter_add_(dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::scatter(*this, dim, index, value);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}

namespace {

/// PyTorch's scatter_reduce_backward. saved: index, src, self before the write (prod/amax/amin).
variable_list scatter_reduce_backward(VjpCtx& c, int64_t dim, const std::string& reduce,
                                      bool include_self) {
  const Tensor& g = c.grads[0];
  const Tensor& index = c.saved[0];
  const Tensor& src = c.saved[1];
  Tensor gs, gsrc;
  if (reduce == "sum") {
    gs = g;
    gsrc = g.gather(dim, index);
  } else if (reduce == "mean") {
    Tensor n = include_self ? ones_like(g) : zeros_like(g);
    n = n.scatter_add(dim, index, ones_like(src, g.options()));
    n = n.masked_fill(n.eq(Scalar(0)), Scalar(1));
    gs = g.div(n);
    gsrc = g.gather(dim, index).div(n.gather(dim, index));
  } else if (reduce == "prod") {
    const Tensor& self = c.saved[2];
    // Zeros divide out badly: a lone zero gets the product of the others, computed directly.
    Tensor result = self.scatter_reduce(dim, index, src, "prod", include_self);
    Tensor masked_self = self.masked_fill(self.eq(Scalar(0)), Scalar(1));
    Tensor masked_self_result = masked_self.scatter_reduce(dim, index, src, "prod", include_self);
    gs = g.mul(masked_self_result.conj()).div(masked_self.conj());
    Tensor src_zero = src.eq(Scalar(0));
    Tensor nz =
        zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype())).gather(dim, index);
    Tensor single_zero = logical_and(src_zero, nz.eq(Scalar(1)));
    Tensor masked_src = src.masked_fill(single_zero, Scalar(1));
    Tensor masked_src_result = self.scatter_reduce(dim, index, masked_src, "prod", include_self);
    Tensor a = g.mul(masked_src_result.conj()).gather(dim, index);
    Tensor b =
        g.mul(result.conj()).gather(dim, index).div(src.masked_fill(src_zero, Scalar(1)).conj());
    gsrc = ember::where(single_zero, a, b);
  } else {  // amax / amin: the gradient is shared evenly among the elements equal to the result
    const Tensor& self = c.saved[2];
    Tensor result = self.scatter_reduce(dim, index, src, reduce, include_self);
    Tensor value = result.gather(dim, index);
    Tensor self_is = self.eq(result);
    if (!include_self) self_is = self_is.scatter(dim, index, Scalar(false));
    Tensor src_is = src.eq(value);
    Tensor n = self_is.to(g.dtype()).scatter_add(dim, index, src_is.to(g.dtype()));
    Tensor share = g.div(n);
    gs = self_is.to(g.dtype()).mul(share);
    gsrc = src_is.to(g.dtype()).mul(share.gather(dim, index));
  }
  if (!include_self) gs = gs.scatter(dim, index, Scalar(0));
  variable_list r(2);
  if (c.needs(0)) r[0] = gs;
  if (c.needs(1)) r[1] = gsrc;
  return r;
}

}  // namespace

// scatter_reduce: include_self=false first resets the scattered-to positions to the identity
// of the reduction; "mean" sums, then divides by the number of contributions (floor division
// for integers), as PyTorch.
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                                std::string_view reduce, bool include_self) {
  EMBER_OP(scatter_reduce_, *this, dim, index, src, reduce, include_self);
  const char* name = "scatter_reduce_";
  ScatterOp op;
  if (reduce == "sum" || reduce == "mean") {
    op = ScatterOp::Sum;
  } else if (reduce == "prod") {
    op = ScatterOp::Prod;
  } else if (reduce == "amax") {
    op = ScatterOp::Max;
  } else if (reduce == "amin") {
    op = ScatterOp::Min;
  } else {
    EMBER_THROW(Error, "[", name,
                "] reduce argument must be either sum, prod, mean, amax or "
                "amin, got ",
                std::string(reduce));
  }
  EMBER_CHECK(!isComplexType(dtype()) || op == ScatterOp::Sum || op == ScatterOp::Prod, "[", name,
              "] ", std::string(reduce), " is not supported for complex tensors");
  EMBER_CHECK(src.defined() && src.dtype() == dtype(), "[", name, "] ", name,
              "(): Expected self.dtype to be equal to src.dtype");
  OpRecorder rec(name, {*this, src});
  // prod / amax / amin read self before the write.
  Tensor self_before;
  if (rec && op != ScatterOp::Sum) self_before = clone();
  if (!include_self) {
    Scalar identity = 0;
    if (op == ScatterOp::Prod) identity = 1;
    if (op == ScatterOp::Max || op == ScatterOp::Min) {
      const bool mx = op == ScatterOp::Max;
      if (isFloatingType(dtype())) {
        identity =
            mx ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
      } else if (dtype() == kBool) {
        identity = !mx;
      } else {
        // Integer extremes: the dtype's lowest / highest value.
        switch (dtype()) {
          case kByte:
            identity = mx ? 0 : 255;
            break;
          case kChar:
            identity = mx ? -128 : 127;
            break;
          case kShort:
            identity = mx ? -32768 : 32767;
            break;
          case kInt:
            identity = mx ? int64_t(INT32_MIN) : int64_t(INT32_MAX);
            break;
          default:
            identity = mx ? INT64_MIN : INT64_MAX;
            break;
        }
      }
    }
    scatter_impl(*this, dim, index, Tensor(), identity, ScatterOp::Assign, name);
  }
  scatter_impl(*this, dim, index, src, Scalar(0), op, name);
  if (reduce == "mean") {
    Tensor count = include_self ? ones_like(*this) : zeros_like(*this);
    count.scatter_add_(dim, index, ones_like(src));
    count.masked_fill_(count.eq(Scalar(0)), Scalar(1));
    if (isFloatingType(dtype()) || isComplexType(dtype())) {
      div_(count);
    } else {
      div_(count, "floor");
    }
  }
  bump(*this, name);
  if (rec) {
    std::string red(reduce);
    rec.args(wrap_dim(dim, this->dim(), name), red, include_self);
    rec.record_inplace(
        *this,
        [](VjpCtx& c) {
          return scatter_reduce_backward(c, c.args().i(0), c.args().str(1), c.args().b(2));
        },
        self_before.defined() ? variable_list{saved_index(index), src, self_before}
                              : variable_list{saved_index(index), src},
        red == "sum" || red == "mean" ? autograd::JvpFn([](JvpCtx& c) {
          const int64_t d = c.args().i(0);
          return variable_list{c.tangent_or_zeros(0).scatter_reduce(
              d, c.saved[0], c.tangent_or_zeros(1), c.args().str(1), c.args().b(2))};
        })
                                      : autograd::JvpFn());
  }
  return *this;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self) {
  EMBER_OP(scatter_reduce, self, dim, index, src, reduce, include_self);
  return self.clone().scatter_reduce_(dim, index, src, reduce, include_self);
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                              std::string_view reduce, bool include_self) const {
  return ember::scatter_reduce(*this, dim, index, src, reduce, include_self);
}

}  // namespace ember
