// View ops of ember::Tensor: they change sizes/strides/offset only and share storage and the
// version counter with their base (Note [Tensor invariants]). Semantics follow PyTorch 1.13.

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ember/tensor.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {
namespace {

/// Sizes/strides/offset of a view under construction.
struct Geometry {
  DimVector sizes;
  DimVector strides;
  int64_t offset;
};

Geometry geometry_of(const Tensor& t) { return {t.sizes(), t.strides(), t.storage_offset()}; }

Tensor view_of(const Tensor& base, const Geometry& g) {
  return make_view(base, g.sizes, g.strides, g.offset);
}

// In-place view ops (t_, squeeze_, ...) change the geometry of a tensor that may sit in a
// graph; ember does not rebase history for them yet, so they refuse rather than mislead.
void set_geometry(Tensor& t, const Geometry& g) {
  EMBER_CHECK(!(GradMode::is_enabled() && t.requires_grad()),
              "[view_] in-place view "
              "operations (t_, transpose_, squeeze_, unsqueeze_) on a tensor that requires grad "
              "are not supported by autograd; use the out-of-place form (x = x.t())");
  t.unsafeGetTensorImpl()->set_sizes_and_strides(g.sizes, g.strides, g.offset);
}

using autograd::JvpCtx;
using autograd::variable_list;
using autograd::VjpCtx;

// Note [View rules]: a view's vjp maps the gradient back to the input's shape with ember ops
// (reshape, permute, sum, *_scatter), its jvp applies the same view to the tangent. The rules
// read the view's arguments, given to with_rule after them, from `c.args()`.
template <class... A>
Tensor with_rule(const char* name, const Tensor& self, Tensor out, autograd::VjpFn vjp,
                 autograd::JvpFn jvp, const A&... args) {
  autograd::OpRecorder rec(name, {self});
  if (rec) {
    rec.args(args...);
    rec.record(out, vjp, {}, jvp);
  }
  return out;
}

Tensor reshape_rule(const char* name, const Tensor& self, Tensor out, int overload = 0) {
  autograd::OpRecorder rec(name, {self});
  if (rec) {
    rec.set_overload(overload);
    rec.args(self.sizes(), out.sizes());
    rec.record(
        out, [](VjpCtx& c) { return variable_list{c.grads[0].reshape(c.args().ints(0))}; }, {},
        [](JvpCtx& c) { return variable_list{c.tangents[0].reshape(c.args().ints(1))}; });
  }
  return out;
}

/// a * b, RuntimeError on int64 overflow (sizes come from the user).
int64_t checked_mul(int64_t a, int64_t b, const char* op, IntArrayRef shape) {
  int64_t r;
  EMBER_CHECK(!__builtin_mul_overflow(a, b, &r), "[", op, "] the number of elements of shape ",
              shape_str(shape), " overflows int64");
  return r;
}

/// The shape with its one -1 replaced so that it holds `numel` elements (PyTorch infer_size).
DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector res(shape);
  int64_t newsize = 1;
  std::optional<size_t> infer_dim;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      EMBER_CHECK(!infer_dim, "[", op, "] only one dimension can be inferred, got shape ",
                  shape_str(shape));
      infer_dim = d;
    } else {
      EMBER_CHECK(shape[d] >= 0, "[", op, "] invalid shape dimension ", shape[d], " in shape ",
                  shape_str(shape));
      newsize = checked_mul(newsize, shape[d], op, shape);
    }
  }
  if (numel == newsize || (infer_dim && newsize > 0 && numel % newsize == 0)) {
    if (infer_dim) {
      // As NumPy: a 0-element tensor leaves the -1 undetermined.
      EMBER_CHECK(newsize != 0, "[", op, "] cannot reshape tensor of 0 elements into shape ",
                  shape_str(shape),
                  " because the unspecified dimension size -1 can be any value and is ambiguous");
      res[*infer_dim] = numel / newsize;
    }
    return res;
  }
  EMBER_THROW(Error, "[", op, "] shape '", shape_str(shape), "' is invalid for input of size ",
              numel);
}

/// Strides that make `newshape` a view of (`oldshape`, `oldstride`), or nullopt when some new
/// dim would span two non-mergeable chunks (PyTorch's computeStride, NumPy's _attempt_nocopy).
std::optional<DimVector> compute_stride(IntArrayRef oldshape, IntArrayRef oldstride,
                                        IntArrayRef newshape) {
  const int64_t nnew = int64_t(newshape.size());
  if (oldshape.empty()) return DimVector(newshape.size(), 1);
  int64_t numel = 1;
  for (int64_t s : oldshape) numel *= s;
  // Strides are arbitrary for 0 elements: keep them for the same shape (as NumPy), else use
  // contiguous ones (size-0 dims counted as 1).
  if (numel == 0 && oldshape.equals(newshape)) return DimVector(oldstride);
  DimVector newstride(newshape.size());
  if (numel == 0) {
    for (int64_t d = nnew - 1; d >= 0; --d) {
      newstride[d] = d == nnew - 1 ? 1 : std::max<int64_t>(newshape[d + 1], 1) * newstride[d + 1];
    }
    return newstride;
  }
  int64_t view_d = nnew - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = int64_t(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    // At the end of a chunk of mergeable old dims, the new dims must tile it exactly.
    if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 &&
                          oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

Geometry transpose_geometry(const Tensor& t, int64_t d0, int64_t d1, const char* op) {
  Geometry g = geometry_of(t);
  int64_t n = t.dim();
  d0 = wrap_dim(d0, n, op);
  d1 = wrap_dim(d1, n, op);
  if (n > 0) {
    std::swap(g.sizes[d0], g.sizes[d1]);
    std::swap(g.strides[d0], g.strides[d1]);
  }
  return g;
}

void check_t(const Tensor& t, const char* op) {
  EMBER_CHECK(t.dim() <= 2, "[", op, "] expects a tensor with <= 2 dimensions, but self is ",
              t.dim(), "D (shape ", shape_str(t.sizes()), ")");
}

Geometry squeeze_geometry(const Tensor& t) {
  Geometry g{{}, {}, t.storage_offset()};
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] != 1) {
      g.sizes.push_back(t.sizes()[d]);
      g.strides.push_back(t.strides()[d]);
    }
  }
  return g;
}

Geometry squeeze_geometry(const Tensor& t, int64_t d) {
  Geometry g = geometry_of(t);
  d = wrap_dim(d, t.dim(), "squeeze");
  if (t.dim() > 0 && g.sizes[d] == 1) {
    g.sizes.erase(d);
    g.strides.erase(d);
  }
  return g;
}

Geometry unsqueeze_geometry(const Tensor& t, int64_t d) {
  Geometry g = geometry_of(t);
  d = wrap_dim(d, t.dim() + 1, "unsqueeze");
  // The new dim's stride is the one it would have in a contiguous layout of its neighbours.
  int64_t stride = d >= t.dim() ? 1 : g.sizes[d] * g.strides[d];
  g.sizes.insert(d, 1);
  g.strides.insert(d, stride);
  return g;
}

}  // namespace

// ---- metadata ----

int64_t Tensor::size(int64_t d) const {
  EMBER_CHECK_INDEX(dim() > 0, "[size] dimension specified as ", d,
                    " but tensor has no dimensions");
  return sizes()[wrap_dim(d, dim(), "size")];
}

int64_t Tensor::stride(int64_t d) const {
  EMBER_CHECK_INDEX(dim() > 0, "[stride] dimension specified as ", d,
                    " but tensor has no dimensions");
  return strides()[wrap_dim(d, dim(), "stride")];
}

// ---- reshaping ----

Tensor Tensor::view(IntArrayRef sizes_in) const {
  EMBER_OP(view, *this, sizes_in);
  DimVector shape = infer_size(sizes_in, numel(), "view");
  auto st = compute_stride(sizes(), strides(), shape);
  EMBER_CHECK(st.has_value(),
              "[view] view size is not compatible with input tensor's size and stride (at least "
              "one dimension spans across two contiguous subspaces): input size ",
              shape_str(sizes()), ", stride ", shape_str(strides()), ", requested ",
              shape_str(sizes_in), ". Use .reshape(...) instead.");
  return reshape_rule("view", *this, make_view(*this, shape, *st, storage_offset()));
}

Tensor Tensor::reshape(IntArrayRef sizes_in) const {
  EMBER_OP(reshape, *this, sizes_in);
  DimVector shape = infer_size(sizes_in, numel(), "reshape");
  if (auto st = compute_stride(sizes(), strides(), shape)) {
    // PyTorch 1.13 records a reshape without a copy as _reshape_alias (Note [Node names]).
    return reshape_rule("_reshape_alias", *this, make_view(*this, shape, *st, storage_offset()));
  }
  return contiguous().view(shape);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  EMBER_OP(flatten, *this, start_dim, end_dim);
  start_dim = wrap_dim(start_dim, dim(), "flatten");
  end_dim = wrap_dim(end_dim, dim(), "flatten");
  EMBER_CHECK(start_dim <= end_dim, "[flatten] invalid args: start_dim (", start_dim,
              ") cannot come after end_dim (", end_dim, ") for shape ", shape_str(sizes()));
  if (dim() == 0) return reshape({1});
  if (start_dim == end_dim) return *this;  // as PyTorch: the input itself
  // Not reshape(-1 in the middle): with a size-0 dim elsewhere the -1 would be ambiguous.
  DimVector shape;
  int64_t merged = 1;
  for (int64_t d = 0; d < dim(); ++d) {
    if (d < start_dim || d > end_dim) {
      shape.push_back(sizes()[d]);
    } else {
      merged *= sizes()[d];
      if (d == end_dim) shape.push_back(merged);
    }
  }
  return reshape(shape);
}

Tensor Tensor::unflatten(int64_t d, IntArrayRef sizes_in) const {
  EMBER_OP(unflatten, *this, d, sizes_in);
  EMBER_CHECK(!sizes_in.empty(), "[unflatten] sizes must be non-empty");
  EMBER_CHECK_INDEX(dim() > 0, "[unflatten] dimension specified as ", d,
                    " but tensor has no dimensions");
  d = wrap_dim(d, dim(), "unflatten");
  DimVector inferred;
  try {
    inferred = infer_size(sizes_in, sizes()[d], "unflatten");
  } catch (const Error&) {
    EMBER_THROW(Error, "[unflatten] provided sizes ", shape_str(sizes_in),
                " don't multiply up to the size of dim ", d, " (", sizes()[d],
                ") in the input tensor of shape ", shape_str(sizes()));
  }
  DimVector shape;
  for (int64_t i = 0; i < dim(); ++i) {
    if (i == d) {
      for (int64_t s : inferred) shape.push_back(s);
    } else {
      shape.push_back(sizes()[i]);
    }
  }
  return view(shape);
}

// ---- dim permutations ----

Tensor Tensor::permute(IntArrayRef dims) const {
  EMBER_OP(permute, *this, dims);
  const int64_t n = dim();
  EMBER_CHECK(int64_t(dims.size()) == n, "[permute] number of dims don't match: input.dim() = ", n,
              " (shape ", shape_str(sizes()), ") is not equal to len(dims) = ", dims.size(),
              " (dims ", shape_str(dims), ")");
  Geometry g = geometry_of(*this);
  std::vector<bool> seen(size_t(n), false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, "permute");
    EMBER_CHECK(!seen[d], "[permute] duplicate dims are not allowed: ", shape_str(dims));
    seen[d] = true;
    g.sizes[i] = sizes()[d];
    g.strides[i] = strides()[d];
  }
  std::vector<int64_t> fwd(static_cast<size_t>(n)), inv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    fwd[size_t(i)] = wrap_dim(dims[i], n, "permute");
    inv[size_t(fwd[size_t(i)])] = i;
  }
  return with_rule(
      "permute", *this, view_of(*this, g),
      [](VjpCtx& c) { return variable_list{c.grads[0].permute(c.args().ints(0))}; },
      [](JvpCtx& c) { return variable_list{c.tangents[0].permute(c.args().ints(1))}; }, inv, fwd);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  EMBER_OP(transpose, *this, d0, d1);
  Tensor r = view_of(*this, transpose_geometry(*this, d0, d1, "transpose"));
  return with_rule(
      "transpose", *this, std::move(r),
      [](VjpCtx& c) {
        const int64_t d0 = c.args().i(0), d1 = c.args().i(1);
        return variable_list{c.grads[0].transpose(d0, d1)};
      },
      [](JvpCtx& c) {
        const int64_t d0 = c.args().i(0), d1 = c.args().i(1);
        return variable_list{c.tangents[0].transpose(d0, d1)};
      },
      d0, d1);
}

Tensor& Tensor::transpose_(int64_t d0, int64_t d1) {
  EMBER_OP(transpose_, *this, d0, d1);
  set_geometry(*this, transpose_geometry(*this, d0, d1, "transpose_"));
  return *this;
}

Tensor Tensor::t() const {
  EMBER_OP(t, *this);
  check_t(*this, "t");
  const int64_t d1 = dim() < 2 ? 0 : 1;
  Tensor r = view_of(*this, transpose_geometry(*this, 0, d1, "t"));
  return with_rule(
      "t", *this, std::move(r),
      [](VjpCtx& c) { return variable_list{c.grads[0].transpose(0, c.args().i(0))}; },
      [](JvpCtx& c) { return variable_list{c.tangents[0].transpose(0, c.args().i(0))}; }, d1);
}

Tensor& Tensor::t_() {
  EMBER_OP(t_, *this);
  check_t(*this, "t_");
  return transpose_(0, dim() < 2 ? 0 : 1);
}

Tensor Tensor::mT() const {
  if (dim() == 0) return *this;  // as PyTorch: a 0-dim tensor is its own transpose
  EMBER_CHECK(dim() >= 2, "[mT] only supported on matrices or batches of matrices. Got a ", dim(),
              "-D tensor of shape ", shape_str(sizes()));
  return transpose(-2, -1);
}

Tensor Tensor::movedim(int64_t src, int64_t dst) const {
  return movedim(IntArrayRef(src), IntArrayRef(dst));
}

Tensor Tensor::movedim(IntArrayRef src, IntArrayRef dst) const {
  EMBER_OP(movedim, *this, src, dst);
  EMBER_CHECK(src.size() == dst.size(), "[movedim] invalid source or destination dims: source (",
              shape_str(src), ") should contain the same number of dims as destination (",
              shape_str(dst), ")");
  const int64_t n = dim();
  std::vector<int64_t> nsrc(src.size()), ndst(dst.size());
  for (size_t i = 0; i < src.size(); ++i) {
    nsrc[i] = wrap_dim(src[i], n, "movedim");
    ndst[i] = wrap_dim(dst[i], n, "movedim");
  }
  auto has_repeat = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) != v.end();
  };
  EMBER_CHECK(!has_repeat(nsrc), "[movedim] repeated dim in `source` (", shape_str(src), ")");
  EMBER_CHECK(!has_repeat(ndst), "[movedim] repeated dim in `destination` (", shape_str(dst), ")");
  if (n <= 1) return view_of(*this, geometry_of(*this));
  // order[d] = which input dim lands at output dim d; unnamed dims keep their relative order.
  std::vector<int64_t> order(n, -1), rest_src(n), rest_dst(n);
  std::iota(rest_src.begin(), rest_src.end(), 0);
  std::iota(rest_dst.begin(), rest_dst.end(), 0);
  for (size_t i = 0; i < nsrc.size(); ++i) {
    order[ndst[i]] = nsrc[i];
    rest_src[nsrc[i]] = -1;
    rest_dst[ndst[i]] = -1;
  }
  std::erase(rest_src, -1);
  std::erase(rest_dst, -1);
  for (size_t i = 0; i < rest_src.size(); ++i) order[rest_dst[i]] = rest_src[i];
  return permute(order);
}

// ---- size-1 dims and broadcasting ----

Tensor Tensor::expand(IntArrayRef sizes_in, bool /*implicit*/) const {
  EMBER_OP(expand, *this, sizes_in);
  const int64_t n = int64_t(sizes_in.size());
  const int64_t tdim = dim();
  EMBER_CHECK(n >= tdim, "[expand] the number of sizes provided (", n,
              ") must be greater or equal to the number of dimensions in the tensor (", tdim,
              "): target ", shape_str(sizes_in), ", tensor ", shape_str(sizes()));
  Geometry g{DimVector(size_t(n)), DimVector(size_t(n)), storage_offset()};
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t d = tdim - n + i;  // matching input dim, aligned from the right
    int64_t size = d >= 0 ? sizes()[d] : 1;
    int64_t stride = d >= 0 ? strides()[d] : (i + 1 < n ? g.sizes[i + 1] * g.strides[i + 1] : 0);
    int64_t target = sizes_in[i];
    if (target == -1) {
      EMBER_CHECK(d >= 0,
                  "[expand] the expanded size of the tensor (-1) isn't allowed in a "
                  "leading, non-existing dimension ",
                  i, ": target ", shape_str(sizes_in), ", tensor ", shape_str(sizes()));
      target = size;
    }
    EMBER_CHECK(target >= 0, "[expand] invalid target size ", target, " at dimension ", i,
                ": target ", shape_str(sizes_in), ", tensor ", shape_str(sizes()));
    if (size != target) {
      EMBER_CHECK(size == 1, "[expand] the expanded size of the tensor (", target,
                  ") must match the existing size (", size, ") at non-singleton dimension ", i,
                  ".  Target sizes: ", shape_str(sizes_in),
                  ".  Tensor sizes: ", shape_str(sizes()));
      size = target;
      stride = 0;  // every index along a broadcast dim reads the same element
    }
    g.sizes[i] = size;
    g.strides[i] = stride;
  }
  // The element count is cached as int64: reject target shapes that overflow it.
  int64_t total = 1;
  for (int64_t s : g.sizes) total = checked_mul(total, s, "expand", g.sizes);
  return with_rule(
      "expand", *this, view_of(*this, g),
      [](VjpCtx& c) { return variable_list{autograd::sum_to(c.grads[0], c.args().ints(0))}; },
      [](JvpCtx& c) { return variable_list{c.tangents[0].expand(c.args().ints(1))}; }, sizes(),
      g.sizes);
}

Tensor Tensor::squeeze() const {
  EMBER_OP(squeeze, *this);
  return reshape_rule("squeeze", *this, view_of(*this, squeeze_geometry(*this)));
}

Tensor Tensor::squeeze(int64_t d) const {
  EMBER_OP(squeeze_1, *this, d);
  return reshape_rule("squeeze", *this, view_of(*this, squeeze_geometry(*this, d)), 1);
}

Tensor& Tensor::squeeze_() {
  EMBER_OP(squeeze_, *this);
  set_geometry(*this, squeeze_geometry(*this));
  return *this;
}

Tensor& Tensor::squeeze_(int64_t d) {
  EMBER_OP(squeeze__1, *this, d);
  set_geometry(*this, squeeze_geometry(*this, d));
  return *this;
}

Tensor Tensor::unsqueeze(int64_t d) const {
  EMBER_OP(unsqueeze, *this, d);
  return reshape_rule("unsqueeze", *this, view_of(*this, unsqueeze_geometry(*this, d)));
}

Tensor& Tensor::unsqueeze_(int64_t d) {
  EMBER_OP(unsqueeze_, *this, d);
  set_geometry(*this, unsqueeze_geometry(*this, d));
  return *this;
}

// ---- sub-ranges ----

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  EMBER_OP(slice, *this, d, start, end, step);
  EMBER_CHECK_INDEX(dim() > 0, "[slice] cannot be applied to a 0-dim tensor");
  d = wrap_dim(d, dim(), "slice");
  EMBER_CHECK_VALUE(step > 0, "[slice] step must be greater than zero, got ", step);
  const int64_t len = sizes()[d];
  // Python slice bounds: negative counts from the end, then clamp to [0, len].
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(std::numeric_limits<int64_t>::max());
  if (s < 0) s += len;
  if (e < 0) e += len;
  s = std::clamp<int64_t>(s, 0, len);
  e = std::clamp<int64_t>(e, s, len);
  Geometry g = geometry_of(*this);
  g.offset += s * g.strides[d];
  g.sizes[d] = (e - s + step - 1) / step;
  g.strides[d] *= step;
  return with_rule(
      "slice", *this, view_of(*this, g),
      [](VjpCtx& c) {
        const int64_t d = c.args().i(1), s = c.args().i(2), e = c.args().i(3), step = c.args().i(4);
        const Tensor& gr = c.grads[0];
        return variable_list{
            ember::slice_scatter(zeros(c.args().ints(0), gr.options()), gr, d, s, e, step)};
      },
      [](JvpCtx& c) {
        const int64_t d = c.args().i(1), s = c.args().i(2), e = c.args().i(3), step = c.args().i(4);
        return variable_list{c.tangents[0].slice(d, s, e, step)};
      },
      sizes(), d, s, e, step);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  EMBER_OP(narrow, *this, d, start, length);
  EMBER_CHECK(dim() > 0, "[narrow] cannot be applied to a 0-dim tensor");
  d = wrap_dim(d, dim(), "narrow");
  const int64_t cur = sizes()[d];
  // start == size is a valid (empty) start, but not a valid index.
  if (start != cur) start = wrap_dim(start, cur, "narrow");
  EMBER_CHECK(length >= 0 && start <= cur - length, "[narrow] start (", start, ") + length (",
              length, ") exceeds dimension size (", cur, ") of dim ", d, " in shape ",
              shape_str(sizes()));
  return slice(d, start, start + length, 1);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  EMBER_OP(select, *this, d, index);
  EMBER_CHECK_INDEX(dim() > 0, "[select] cannot be applied to a 0-dim tensor");
  d = wrap_dim(d, dim(), "select");
  const int64_t size = sizes()[d];
  EMBER_CHECK_INDEX(index >= -size && index < size, "[select] index ", index,
                    " out of range for tensor of size ", shape_str(sizes()), " at dimension ", d);
  if (index < 0) index += size;
  Geometry g = geometry_of(*this);
  g.offset += index * g.strides[d];
  g.sizes.erase(d);
  g.strides.erase(d);
  return with_rule(
      "select", *this, view_of(*this, g),
      [](VjpCtx& c) {
        const int64_t d = c.args().i(1), index = c.args().i(2);
        const Tensor& gr = c.grads[0];
        return variable_list{
            ember::select_scatter(zeros(c.args().ints(0), gr.options()), gr, d, index)};
      },
      [](JvpCtx& c) {
        const int64_t d = c.args().i(1), index = c.args().i(2);
        return variable_list{c.tangents[0].select(d, index)};
      },
      sizes(), d, index);
}

namespace {
// Whether two elements of a view with these sizes and strides share a storage location: the
// dims sorted by stride must each step past everything the smaller-stride dims reach.
bool has_internal_overlap(const std::vector<int64_t>& sz, const std::vector<int64_t>& st) {
  std::vector<size_t> dims;
  for (size_t i = 0; i < sz.size(); ++i) {
    if (sz[i] == 0) return false;
    if (sz[i] > 1) dims.push_back(i);
  }
  std::sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return st[a] < st[b]; });
  int64_t reach = 0;
  for (size_t d : dims) {
    if (st[d] <= reach) return true;
    reach += (sz[d] - 1) * st[d];
  }
  return false;
}
}  // namespace

Tensor Tensor::as_strided(IntArrayRef sizes_in, IntArrayRef strides_in,
                          std::optional<int64_t> storage_offset_in) const {
  EMBER_OP(as_strided, *this, sizes_in, strides_in, storage_offset_in);
  const int64_t off = storage_offset_in.value_or(storage_offset());
  EMBER_CHECK(sizes_in.size() == strides_in.size(),
              "[as_strided] mismatch in length of strides and shape: size ", shape_str(sizes_in),
              ", stride ", shape_str(strides_in));
  EMBER_CHECK(off >= 0, "[as_strided] invalid storage offset ", off);
  bool empty = false;
  for (size_t i = 0; i < sizes_in.size(); ++i) {
    EMBER_CHECK(sizes_in[i] >= 0, "[as_strided] negative size in ", shape_str(sizes_in));
    EMBER_CHECK(strides_in[i] >= 0, "[as_strided] negative strides are not supported, got ",
                shape_str(strides_in));
    empty = empty || sizes_in[i] == 0;
  }
  // Every reachable element must lie inside the storage (Note [Tensor invariants]).
  if (!empty) {
    int64_t last = off;  // index of the furthest element, in elements
    bool overflow = false;
    for (size_t i = 0; i < sizes_in.size(); ++i) {
      int64_t step;
      overflow |= __builtin_mul_overflow(sizes_in[i] - 1, strides_in[i], &step);
      overflow |= __builtin_add_overflow(last, step, &last);
    }
    int64_t need_bytes = 0;
    overflow |= __builtin_mul_overflow(last + 1, int64_t(itemsize()), &need_bytes);
    EMBER_CHECK(!overflow, "[as_strided] storage size overflows for size ", shape_str(sizes_in),
                ", stride ", shape_str(strides_in), ", offset ", off);
    EMBER_CHECK(size_t(need_bytes) <= storage().nbytes(), "[as_strided] size ", shape_str(sizes_in),
                ", stride ", shape_str(strides_in), ", storage offset ", off, " and itemsize ",
                itemsize(), " require a storage of ", need_bytes,
                " bytes, out of bounds for a storage of ", storage().nbytes(), " bytes");
  }
  Tensor r = make_view(*this, sizes_in, strides_in, off);
  // Gradient: accumulate into a buffer laid out like self's storage region, by element offset
  // (index_add), so overlapping windows sum as in PyTorch.
  return with_rule(
      "as_strided", *this, std::move(r),
      [](VjpCtx& c) {
        const std::vector<int64_t>& in_sz = c.args().ints(0);
        const std::vector<int64_t>& in_st = c.args().ints(1);
        const int64_t in_off = c.args().i(2);
        const std::vector<int64_t>& sz = c.args().ints(3);
        const std::vector<int64_t>& st = c.args().ints(4);
        const int64_t off = c.args().i(5);
        const Tensor& gr = c.grads[0];
        int64_t span = 1;
        for (size_t i = 0; i < in_sz.size(); ++i)
          span += std::max<int64_t>(in_sz[i] - 1, 0) * in_st[i];
        for (size_t i = 0; i < sz.size(); ++i)
          span = std::max(span, off - in_off + 1 + std::max<int64_t>(sz[i] - 1, 0) * st[i]);
        // The storage offset of every element of a view with sizes `z` and strides `t`.
        auto offsets = [](const std::vector<int64_t>& z, const std::vector<int64_t>& t,
                          int64_t base) {
          Tensor idx = full({}, base, TensorOptions().dtype(kLong));
          for (size_t i = 0; i < z.size(); ++i) {
            std::vector<int64_t> shape(z.size(), 1);
            shape[i] = z[i];
            idx = idx + arange(z[i], TensorOptions().dtype(kLong)).reshape(shape) * t[i];
          }
          return idx.expand(z).reshape({-1});
        };
        Tensor flat = zeros({span}, gr.options())
                          .index_add(0, offsets(sz, st, off - in_off), gr.reshape({-1}));
        // An input whose elements alias (an expanded tensor) shares each location's gradient
        // among its aliases, so that the input's own backward (expand's sum) counts it once.
        if (has_internal_overlap(in_sz, in_st)) {
          Tensor in_idx = offsets(in_sz, in_st, 0);
          Tensor count = zeros({span}, gr.options())
                             .index_add(0, in_idx, ones({in_idx.numel()}, gr.options()));
          flat = flat / count.clamp_min(1);
        }
        return variable_list{flat.as_strided(in_sz, in_st, 0).clone()};
      },
      [](JvpCtx& c) {
        const std::vector<int64_t>& in_st = c.args().ints(1);
        const std::vector<int64_t>& sz = c.args().ints(3);
        const std::vector<int64_t>& st = c.args().ints(4);
        const int64_t in_off = c.args().i(2), off = c.args().i(5);
        const Tensor& t = c.tangents[0];
        EMBER_CHECK(t.strides() == IntArrayRef(in_st),
                    "[as_strided] forward AD needs a tangent "
                    "with the strides of the primal");
        return variable_list{t.as_strided(sz, st, off - in_off + t.storage_offset())};
      },
      sizes(), strides(), storage_offset(), sizes_in, strides_in, off);
}

Tensor Tensor::unfold(int64_t d, int64_t size, int64_t step) const {
  EMBER_OP(unfold, *this, d, size, step);
  const int64_t n = dim();
  d = wrap_dim(d, n, "unfold");
  const int64_t max_size = n == 0 ? 1 : sizes()[d];
  EMBER_CHECK(size >= 0, "[unfold] size is ", size, " but must be >= 0");
  EMBER_CHECK(size <= max_size, "[unfold] maximum size for tensor at dimension ", d, " is ",
              max_size, " but size is ", size, " (shape ", shape_str(sizes()), ")");
  EMBER_CHECK(step > 0, "[unfold] step is ", step, " but must be > 0");
  Geometry g = geometry_of(*this);
  if (n > 0) {
    g.sizes[d] = (sizes()[d] - size) / step + 1;
    g.strides[d] = step * strides()[d];
  }
  g.sizes.push_back(size);
  g.strides.push_back(n == 0 ? 1 : strides()[d]);
  // Windows overlap when step < size: the gradient accumulates with index_add.
  return with_rule(
      "unfold", *this, view_of(*this, g),
      [](VjpCtx& c) {
        const std::vector<int64_t>& in = c.args().ints(0);
        const int64_t d = c.args().i(1), size = c.args().i(2), step = c.args().i(3),
                      n = c.args().i(4);
        const Tensor& gr = c.grads[0];
        if (n == 0) return variable_list{gr.reshape(in)};
        int64_t nw = gr.size(d);
        Tensor idx = (arange(nw, TensorOptions().dtype(kLong)).unsqueeze(1) * step +
                      arange(size, TensorOptions().dtype(kLong)).unsqueeze(0))
                         .reshape({-1});
        Tensor moved = gr.movedim(-1, d + 1);  // [..., nw, size, ...]
        DimVector shp(moved.sizes());
        shp[d] = nw * size;
        shp.erase(d + 1);
        return variable_list{zeros(in, gr.options()).index_add(d, idx, moved.reshape(shp))};
      },
      [](JvpCtx& c) {
        const int64_t d = c.args().i(1), size = c.args().i(2), step = c.args().i(3);
        return variable_list{c.tangents[0].unfold(d, size, step)};
      },
      sizes(), d, size, step, n);
}

Tensor Tensor::diagonal(int64_t offset, int64_t d1_in, int64_t d2_in) const {
  EMBER_OP(diagonal, *this, offset, d1_in, d2_in);
  const int64_t d1 = wrap_dim(d1_in, dim(), "diagonal");
  const int64_t d2 = wrap_dim(d2_in, dim(), "diagonal");
  EMBER_CHECK(d1 != d2, "[diagonal] diagonal dimensions cannot be identical ", d1_in, ", ", d2_in,
              " (shape ", shape_str(sizes()), ")");
  const int64_t s1 = sizes()[d1], s2 = sizes()[d2];
  // offset > 0 drops leading columns (along d2), offset < 0 leading rows (along d1).
  int64_t diag = offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2);
  diag = std::max<int64_t>(diag, 0);
  Geometry g = geometry_of(*this);
  if (diag > 0) g.offset += offset >= 0 ? offset * strides()[d2] : -offset * strides()[d1];
  g.sizes.erase(std::max(d1, d2));
  g.strides.erase(std::max(d1, d2));
  g.sizes.erase(std::min(d1, d2));
  g.strides.erase(std::min(d1, d2));
  g.sizes.push_back(diag);
  g.strides.push_back(strides()[d1] + strides()[d2]);
  return with_rule(
      "diagonal", *this, view_of(*this, g),
      [](VjpCtx& c) {
        const int64_t offset = c.args().i(1), d1 = c.args().i(2), d2 = c.args().i(3);
        const Tensor& gr = c.grads[0];
        return variable_list{
            ember::diagonal_scatter(zeros(c.args().ints(0), gr.options()), gr, offset, d1, d2)};
      },
      [](JvpCtx& c) {
        const int64_t offset = c.args().i(1), d1 = c.args().i(2), d2 = c.args().i(3);
        return variable_list{c.tangents[0].diagonal(offset, d1, d2)};
      },
      sizes(), offset, d1, d2);
}

// ---- splitting ----

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t d) const {
  EMBER_OP(split, *this, split_size, d);
  EMBER_CHECK(dim() != 0, "[split] expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0,
              "[split] expects split_size be non-negative, but got split_size=", split_size);
  const int64_t dim_size = size(d);
  EMBER_CHECK(split_size > 0 || dim_size == 0,
              "[split] split_size can only be 0 if dimension size is 0, but got dimension size of ",
              dim_size);
  // At least one piece, even when split_size exceeds the dim (PyTorch keeps this for BC).
  int64_t num =
      split_size == 0 ? 1 : std::max<int64_t>((dim_size + split_size - 1) / split_size, 1);
  int64_t last = split_size - (split_size * num - dim_size);
  std::vector<Tensor> out;
  out.reserve(size_t(num));
  for (int64_t i = 0; i < num; ++i) {
    out.push_back(narrow(d, i * split_size, i < num - 1 ? split_size : last));
  }
  return out;
}

std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, int64_t d) const {
  EMBER_OP(split_1, *this, split_sizes, d);
  return split_with_sizes(split_sizes, d);
}

std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef split_sizes, int64_t d) const {
  EMBER_OP(split_with_sizes, *this, split_sizes, d);
  EMBER_CHECK(dim() != 0, "[split_with_sizes] expects at least a 1-dimensional tensor");
  const int64_t dim_size = size(d);
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0,
                "[split_with_sizes] expects split_sizes have only non-negative entries, "
                "but got split_sizes=",
                shape_str(split_sizes));
    EMBER_CHECK(!__builtin_add_overflow(total, s, &total),
                "[split_with_sizes] split_sizes overflow: ", shape_str(split_sizes));
  }
  EMBER_CHECK(total == dim_size, "[split_with_sizes] expects split_sizes to sum exactly to ",
              dim_size, " (input tensor's size at dimension ", d,
              "), but got split_sizes=", shape_str(split_sizes));
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const {
  EMBER_OP(chunk, *this, chunks, d);
  EMBER_CHECK(dim() > 0, "[chunk] expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "[chunk] expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t dim_size = size(d);
  const int64_t split_size = (dim_size + chunks - 1) / chunks;
  // A 0-size dim yields `chunks` empty pieces, not split()'s single one.
  if (split_size == 0 && dim_size == 0) {
    // One tensor per chunk: bound the count as tensor_split does, so 2**62 fails cleanly.
    EMBER_CHECK(chunks <= (int64_t(1) << 24), "[chunk] cannot split a 0-size dim into ", chunks,
                " empty pieces (at most 2**24)");
    return split_with_sizes(std::vector<int64_t>(size_t(chunks), 0), d);
  }
  return split(split_size, d);
}

std::vector<Tensor> Tensor::unbind(int64_t d) const {
  EMBER_OP(unbind, *this, d);
  EMBER_CHECK_INDEX(dim() > 0, "[unbind] dimension specified as ", d,
                    " but tensor has no dimensions");
  d = wrap_dim(d, dim(), "unbind");
  std::vector<Tensor> out;
  out.reserve(size_t(sizes()[d]));
  for (int64_t i = 0; i < sizes()[d]; ++i) out.push_back(select(d, i));
  return out;
}

// ---- complex parts ----

Tensor Tensor::real() const {
  EMBER_OP(real, *this);
  if (!is_complex()) return *this;
  // A complex element is (re, im) in two real slots: double the strides and the offset. The
  // real part of a lazy conjugate equals the stored real part, so the conj bit just drops.
  Geometry g = geometry_of(*this);
  for (auto& s : g.strides) s *= 2;
  return with_rule(
      "real", *this,
      make_view_with_dtype(*this, toRealValueType(dtype()), g.sizes, g.strides, g.offset * 2),
      [](VjpCtx& c) { return variable_list{c.grads[0].to(c.args().dtype(0))}; },
      [](JvpCtx& c) { return variable_list{c.tangents[0].real()}; }, dtype());
}

Tensor Tensor::imag() const {
  EMBER_OP(imag, *this);
  EMBER_CHECK(is_complex(), "[imag] imag is not implemented for tensors with non-complex dtypes.",
              " Got dtype ", dtype_name(dtype()));
  // PyTorch returns a negative-bit view here; ember has no neg bit, so a lazy conjugate is
  // materialised first (the result then does not alias self).
  if (is_conj()) return resolve_conj().imag();
  Geometry g = geometry_of(*this);
  for (auto& s : g.strides) s *= 2;
  return with_rule(
      "imag", *this,
      make_view_with_dtype(*this, toRealValueType(dtype()), g.sizes, g.strides, g.offset * 2 + 1),
      [](VjpCtx& c) {
        return variable_list{c.grads[0].to(c.args().dtype(0)) *
                             wrap_scalar(Scalar(complex<double>(0, 1)))};
      },
      [](JvpCtx& c) { return variable_list{c.tangents[0].imag()}; }, dtype());
}

Tensor real(const Tensor& x) {
  EMBER_OP(real_1, x);
  return x.real();
}
Tensor imag(const Tensor& x) {
  EMBER_OP(imag_1, x);
  return x.imag();
}

}  // namespace ember
