// Diagonals and writes into views: diag, diag_embed, diagflat, the *_scatter ops, one_hot.
// Each builds its result by copy_ into a view of a fresh tensor (diagonal/select/slice), so
// strided inputs and every dtype come from copy_.
#include <algorithm>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "kernels/stubs/linalg.h"
#include "ops/call_path.h"

namespace ember {
namespace {

Tensor materialize(const Tensor& v) {
  Tensor o = empty(v.sizes(), v.options());
  return o.copy_(v);
}

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

/// The view of a *_scatter op (the slot it writes) and the op itself, given its arguments.
using SlotFn = Tensor (*)(const Tensor& t, const autograd::RuleArgs& a);
using ScatterFn = Tensor (*)(const Tensor& base, const Tensor& src, const autograd::RuleArgs& a);

/// The *_scatter ops: a copy of `self` with `view_of(copy)` replaced by `src` (same shape).
/// Gradients: self gets g with the slot zeroed (`scatter(g, zeros)`), src gets the slot of g.
/// `args` are the op's arguments, read by view_of and scatter.
template <SlotFn view_of, ScatterFn scatter, class... A>
Tensor scatter_into_view(const Tensor& self, const Tensor& src, const char* op, const A&... args) {
  OpRecorder rec(op, {self, src});
  autograd::RuleArgs a;
  a.set(args...);
  Tensor out = materialize(self);
  Tensor slot = view_of(out, a);
  EMBER_CHECK(slot.sizes() == src.sizes(), "[", op,
              "] expected src to have a size equal to the "
              "slice of self. src size = ",
              shape_str(src.sizes()), ", slice size = ", shape_str(slot.sizes()));
  slot.copy_(src);
  if (rec) {
    rec.args(args...);
    rec.record(
        out,
        [](VjpCtx& c) {
          const Tensor& g = c.grads[0];
          Tensor gs = c.needs(1) ? view_of(g, c.args()) : Tensor();
          Tensor gi =
              c.needs(0) ? scatter(g, zeros_like(view_of(g, c.args())), c.args()) : Tensor();
          return variable_list{gi, gs};
        },
        {},
        [](JvpCtx& c) {
          return variable_list{scatter(c.tangent_or_zeros(0), c.tangent_or_zeros(1), c.args())};
        });
  }
  return out;
}

/// An optional int argument (None or an int).
std::optional<int64_t> opt_int(const autograd::RuleArgs& a, size_t k) {
  if (a.is_none(k)) return std::nullopt;
  return a.i(k);
}

// The slots and scatters of diagonal_scatter (offset, dim1, dim2), select_scatter (dim, index)
// and slice_scatter (dim, start, end, step).
Tensor diagonal_slot(const Tensor& t, const autograd::RuleArgs& a) {
  return t.diagonal(a.i(0), a.i(1), a.i(2));
}
Tensor diagonal_fill(const Tensor& base, const Tensor& s, const autograd::RuleArgs& a) {
  return base.diagonal_scatter(s, a.i(0), a.i(1), a.i(2));
}
Tensor select_slot(const Tensor& t, const autograd::RuleArgs& a) {
  return t.select(a.i(0), a.i(1));
}
Tensor select_fill(const Tensor& base, const Tensor& s, const autograd::RuleArgs& a) {
  return base.select_scatter(s, a.i(0), a.i(1));
}
Tensor slice_slot(const Tensor& t, const autograd::RuleArgs& a) {
  return t.slice(a.i(0), opt_int(a, 1), opt_int(a, 2), a.i(3));
}
Tensor slice_fill(const Tensor& base, const Tensor& s, const autograd::RuleArgs& a) {
  return base.slice_scatter(s, a.i(0), opt_int(a, 1), opt_int(a, 2), a.i(3));
}

}  // namespace

namespace {
Tensor diag_impl(const Tensor& self, int64_t diagonal);
Tensor diag_embed_impl(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2);
Tensor diagflat_impl(const Tensor& self, int64_t offset);
}  // namespace

// diag of a vector builds a matrix (the gradient is its diagonal); diag of a matrix reads the
// diagonal (the gradient is scattered back onto a zero matrix).
Tensor diag(const Tensor& self, int64_t diagonal) {
  EMBER_OP(diag, self, diagonal);
  OpRecorder rec("diag", {self});
  Tensor out = diag_impl(self, diagonal);
  if (rec) {
    rec.args(self.sizes(), diagonal);
    rec.record(
        out,
        [](VjpCtx& c) {
          const std::vector<int64_t>& sizes = c.args().ints(0);
          const int64_t diagonal = c.args().i(1);
          const Tensor& g = c.grads[0];
          if (sizes.size() == 1) return variable_list{g.diagonal(diagonal, 0, 1)};
          return variable_list{zeros(sizes, g.options()).diagonal_scatter(g, diagonal, 0, 1)};
        },
        {},
        [](JvpCtx& c) { return variable_list{ember::diag(c.tangent_or_zeros(0), c.args().i(1))}; });
  }
  return out;
}

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_OP(diag_embed, self, offset, dim1, dim2);
  OpRecorder rec("diag_embed", {self});
  Tensor out = diag_embed_impl(self, offset, dim1, dim2);
  if (rec) {
    rec.args(offset, dim1, dim2);
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t offset = c.args().i(0), dim1 = c.args().i(1), dim2 = c.args().i(2);
          return variable_list{c.grads[0].diagonal(offset, dim1, dim2)};
        },
        {},
        [](JvpCtx& c) {
          const int64_t offset = c.args().i(0), dim1 = c.args().i(1), dim2 = c.args().i(2);
          return variable_list{ember::diag_embed(c.tangent_or_zeros(0), offset, dim1, dim2)};
        });
  }
  return out;
}

Tensor diagflat(const Tensor& self, int64_t offset) {
  EMBER_OP(diagflat, self, offset);
  OpRecorder rec("diagflat", {self});
  Tensor out = diagflat_impl(self, offset);
  if (rec) {
    rec.args(offset, self.sizes());
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t offset = c.args().i(0);
          return variable_list{c.grads[0].diagonal(offset, 0, 1).reshape(c.args().ints(1))};
        },
        {},
        [](JvpCtx& c) {
          return variable_list{ember::diagflat(c.tangent_or_zeros(0), c.args().i(0))};
        });
  }
  return out;
}

namespace {
Tensor diag_impl(const Tensor& self, int64_t diagonal) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "[diag] matrix or a vector expected, got shape ",
              shape_str(self.sizes()));
  // PyTorch 1.13 has no float16 diag kernel on the CPU.
  EMBER_CHECK(self.dtype() != kHalf, "[diag] \"diag\" not implemented for 'Half'");
  if (self.dim() == 2) {
    // PyTorch 1.13 sizes the result min(rows + k, cols) / min(rows, cols - k) and fails when
    // that is negative (an offset past the matrix), rather than returning an empty diagonal.
    const int64_t rows = self.size(0), cols = self.size(1);
    const int64_t len =
        diagonal >= 0 ? std::min(rows, cols - diagonal) : std::min(rows + diagonal, cols);
    EMBER_CHECK(len >= 0, "[diag] offset ", diagonal, " is outside a matrix of shape ",
                shape_str(self.sizes()));
    return materialize(self.diagonal(diagonal, 0, 1));
  }
  const int64_t n = self.size(0) + std::abs(diagonal);
  Tensor out = zeros({n, n}, self.options());
  out.diagonal(diagonal, 0, 1).copy_(self);
  return out;
}
}  // namespace

Tensor& diag_out(Tensor& out, const Tensor& self, int64_t diagonal) {
  EMBER_OP(diag_out, out, self, diagonal);
  autograd::check_out_not_differentiable("diag", {self});
  Tensor r = diag(self, diagonal);
  EMBER_CHECK(out.dtype() == r.dtype(), "[diag] expected out dtype ", dtype_name(r.dtype()),
              ", got ", dtype_name(out.dtype()));
  if (out.sizes() != r.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[diag] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(r.sizes()));
    resize_output(out, r.sizes());
  }
  return out.copy_(r);
}

namespace {
Tensor diag_embed_impl(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = self.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, nd, "diag_embed");
  const int64_t d2 = wrap_dim(dim2, nd, "diag_embed");
  EMBER_CHECK(d1 != d2, "[diag_embed] diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = self.size(-1) + std::abs(offset);
  DimVector shape;
  shape.assign(self.sizes());
  shape.pop_back();
  const int64_t lo = std::min(d1, d2), hi = std::max(d1, d2);
  shape.insert(size_t(lo), n);
  shape.insert(size_t(hi), n);
  Tensor out = zeros(shape, self.options());
  out.diagonal(offset, d1, d2).copy_(self);
  return out;
}

Tensor diagflat_impl(const Tensor& self, int64_t offset) {
  EMBER_CHECK(self.dtype() != kHalf, "[diagflat] \"diag\" not implemented for 'Half'");
  const Tensor flat = self.reshape({self.numel()});
  const int64_t n = flat.size(0) + std::abs(offset);
  Tensor out = zeros({n, n}, self.options());
  out.diagonal(offset, 0, 1).copy_(flat);
  return out;
}
}  // namespace

Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2) {
  EMBER_OP(diagonal_scatter, self, src, offset, dim1, dim2);
  return scatter_into_view<diagonal_slot, diagonal_fill>(self, src, "diagonal_scatter", offset,
                                                         dim1, dim2);
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  EMBER_OP(select_scatter, self, src, dim, index);
  EMBER_CHECK_INDEX(self.dim() > 0,
                    "[select_scatter] select() cannot be applied to a 0-dim "
                    "tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "select_scatter");
  const int64_t n = self.size(d);
  EMBER_CHECK_INDEX(index >= -n && index < n, "[select_scatter] select(): index ", index,
                    " out of range for tensor of size ", shape_str(self.sizes()), " at dimension ",
                    d);
  return scatter_into_view<select_slot, select_fill>(self, src, "select_scatter", d, index);
}

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  EMBER_OP(slice_scatter, self, src, dim, start, end, step);
  EMBER_CHECK(self.dim() > 0, "[slice_scatter] slice() cannot be applied to a 0-dim tensor");
  EMBER_CHECK(step > 0, "[slice_scatter] slice step must be positive, got ", step);
  const int64_t d = wrap_dim(dim, self.dim(), "slice_scatter");
  return scatter_into_view<slice_slot, slice_fill>(self, src, "slice_scatter", d, start, end, step);
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  EMBER_OP(one_hot, self, num_classes);
  EMBER_CHECK(self.dtype() == kLong, "[one_hot] one_hot is only applicable to index tensor, got ",
              dtype_name(self.dtype()));
  const Tensor idx = self.contiguous();
  const int64_t n = idx.numel();
  if (num_classes == -1) {
    EMBER_CHECK(n > 0, "[one_hot] Can not infer total number of classes from empty tensor.");
  }
  const auto [lo, hi] = one_hot_bounds_stub(self.device().type(), idx);
  EMBER_CHECK(lo >= 0, "[one_hot] Class values must be non-negative, got ", lo);
  if (num_classes == -1) num_classes = hi + 1;
  EMBER_CHECK(n == 0 || hi < num_classes,
              "[one_hot] Class values must be smaller than "
              "num_classes (",
              num_classes, "), got ", hi);
  DimVector shape;
  shape.assign(self.sizes());
  shape.push_back(num_classes);
  // An empty input with a negative num_classes is shape-checked by zeros().
  Tensor out = zeros(shape, TensorOptions(kLong));
  one_hot_stub(self.device().type(), idx, out, num_classes);
  return out;
}

Tensor Tensor::diag(int64_t diagonal) const { return ember::diag(*this, diagonal); }
Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2) const {
  return ember::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::diagflat(int64_t offset) const { return ember::diagflat(*this, offset); }
Tensor Tensor::diagonal_scatter(const Tensor& src, int64_t offset, int64_t dim1,
                                int64_t dim2) const {
  return ember::diagonal_scatter(*this, src, offset, dim1, dim2);
}
Tensor Tensor::select_scatter(const Tensor& src, int64_t dim, int64_t index) const {
  return ember::select_scatter(*this, src, dim, index);
}
Tensor Tensor::slice_scatter(const Tensor& src, int64_t dim, std::optional<int64_t> start,
                             std::optional<int64_t> end, int64_t step) const {
  return ember::slice_scatter(*this, src, dim, start, end, step);
}

}  // namespace ember
