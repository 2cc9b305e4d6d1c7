// Indexing (`x.index({...})`, `x.index_put_({...}, v)`) as Python's `x[...]` in PyTorch 1.13.
// Basic indices (ints, slices, None, Ellipsis) give a view of `x`; tensor indices are then
// applied to that view by advanced_indexing.cpp (Note [Advanced index placement]).

#include "ember/indexing.h"
#include "ops/call_path.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/tensor.h"

namespace ember {

// advanced_indexing.cpp
Tensor advanced_index(const Tensor& view, const std::vector<Tensor>& adv);
void advanced_index_put(const Tensor& view, const std::vector<Tensor>& adv, const Tensor& values,
                        bool accumulate);

namespace indexing {

TensorIndex::TensorIndex(const char* s) : kind_(Kind::Ellipsis) {
  EMBER_CHECK(s != nullptr && std::strcmp(s, "...") == 0,
              "[index] expected \"...\" to represent an ellipsis index, but got \"",
              s ? s : "(null)", "\"");
}

}  // namespace indexing

using indexing::TensorIndex;

namespace {

// Note [Boolean indices as views]
// In PyTorch `x[True]` / `x[False]` are advanced indices: each inserts a size-1 dim indexed by
// [0] (True) or [] (False), all such index tensors broadcast together, and the result is a
// copy. The indexed dims collapse into one dim of size 1 (all True) or 0 (any False), placed
// where the first one was when they are adjacent, else in front. The shape is the same as a
// view, so ember returns a view: reads agree, and writes through `index_put_` land in `x` as
// PyTorch's setitem does.

/// Geometry of `self` after applying `indices` (all of which are basic).
struct IndexedGeometry {
  DimVector sizes;
  DimVector strides;
  int64_t offset;
  /// With tensor indices: one entry per dim of the view, the long index tensor of that dim
  /// (undefined for dims taken whole). Empty when there are none.
  std::vector<Tensor> adv;
};

IndexedGeometry apply_indices(const Tensor& self, ArrayRef<TensorIndex> indices) {
  const int64_t ndim = self.dim();
  int64_t specified = 0;
  bool has_integer = false, has_tensor = false;
  for (const TensorIndex& ix : indices) {
    if (ix.is_integer() || ix.is_slice()) ++specified;
    if (ix.is_tensor()) {
      const Tensor& t = ix.tensor();
      EMBER_CHECK(t.defined(), "[index] an index tensor is undefined");
      const bool mask = t.dtype() == kBool || t.dtype() == kByte;
      specified += mask ? t.dim() : 1;
      has_tensor = true;
    }
    has_integer = has_integer || ix.is_integer();
  }
  EMBER_CHECK_INDEX(!(ndim == 0 && has_integer),
                    "[index] invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  EMBER_CHECK_INDEX(specified <= ndim, "[index] too many indices for tensor of dimension ", ndim,
                    " (shape ", shape_str(self.sizes()), "): got ", specified);

  IndexedGeometry g{self.sizes(), self.strides(), self.storage_offset(), {}};
  std::vector<Tensor>& adv = g.adv;
  if (has_tensor) adv.resize(size_t(ndim));
  std::vector<int64_t> bool_dims;  // positions of the dims inserted by bool indices
  bool all_true = true;
  int64_t dim = 0;
  // Every Ellipsis skips the unspecified dims (as PyTorch 1.13, which accepts several; then
  // the later ones skip past the end and a following index is out of range).
  auto check_dim = [&](int64_t d, int64_t extent) {
    EMBER_CHECK_INDEX(d < extent, "[index] dimension ", d,
                      " is out of range for an indexed "
                      "tensor with ",
                      g.sizes.size(), " dims (several Ellipsis in ", "the index?)");
  };
  auto insert_unit_dim = [&](int64_t d) {
    check_dim(d, int64_t(g.sizes.size()) + 1);
    int64_t stride = d >= int64_t(g.sizes.size()) ? 1 : g.sizes[d] * g.strides[d];
    g.sizes.insert(size_t(d), 1);
    g.strides.insert(size_t(d), stride);
    if (has_tensor) adv.insert(adv.begin() + d, Tensor());
  };
  for (const TensorIndex& ix : indices) {
    switch (ix.kind()) {
      case TensorIndex::Kind::Integer: {
        check_dim(dim, int64_t(g.sizes.size()));
        const int64_t size = g.sizes[dim];
        int64_t i = ix.integer();
        EMBER_CHECK_INDEX(i >= -size && i < size, "[index] index ", i,
                          " is out of bounds for dimension ", dim, " with size ", size, " (shape ",
                          shape_str(self.sizes()), ")");
        if (i < 0) i += size;
        g.offset += i * g.strides[dim];
        g.sizes.erase(size_t(dim));
        g.strides.erase(size_t(dim));
        if (has_tensor) adv.erase(adv.begin() + dim);
        break;
      }
      case TensorIndex::Kind::Slice: {
        check_dim(dim, int64_t(g.sizes.size()));
        const auto& s = ix.slice();
        const int64_t step = s.step().value_or(1);
        EMBER_CHECK_VALUE(step > 0, "[index] step must be greater than zero, got ", step);
        const int64_t len = g.sizes[dim];
        int64_t start = s.start().value_or(0);
        int64_t stop = s.stop().value_or(len);
        if (start < 0) start += len;
        if (stop < 0) stop += len;
        start = std::clamp<int64_t>(start, 0, len);
        stop = std::clamp<int64_t>(stop, start, len);
        g.offset += start * g.strides[dim];
        g.sizes[dim] = (stop - start + step - 1) / step;
        g.strides[dim] *= step;
        ++dim;
        break;
      }
      case TensorIndex::Kind::None:
        insert_unit_dim(dim);
        ++dim;
        break;
      case TensorIndex::Kind::Ellipsis:
        dim += ndim - specified;
        break;
      case TensorIndex::Kind::Boolean:
        insert_unit_dim(dim);
        if (has_tensor) {  // with tensor indices a bool is one more: [0] or []
          adv[size_t(dim)] =
              ix.boolean() ? zeros({1}, TensorOptions(kLong)) : empty({0}, TensorOptions(kLong));
          ++dim;
          break;
        }
        bool_dims.push_back(dim);
        all_true = all_true && ix.boolean();
        ++dim;
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = ix.tensor();
        if (t.dtype() == kBool || t.dtype() == kByte) {
          if (t.dim() == 0) {  // a 0-dim mask is a bool
            insert_unit_dim(dim);
            adv[size_t(dim)] = t.item().toBool() ? zeros({1}, TensorOptions(kLong))
                                                 : empty({0}, TensorOptions(kLong));
            ++dim;
            break;
          }
          // A mask stands for its nonzero() coordinates over the next t.dim() dims.
          check_dim(dim + t.dim() - 1, int64_t(g.sizes.size()));
          for (int64_t k = 0; k < t.dim(); ++k) {
            EMBER_CHECK_INDEX(t.size(k) == g.sizes[size_t(dim + k)],
                              "[index] The shape of the mask ", shape_str(t.sizes()), " at index ",
                              k, " does not match the shape of the indexed tensor ",
                              shape_str(g.sizes), " at index ", dim + k);
          }
          std::vector<Tensor> nz = nonzero_numpy(t);
          for (int64_t k = 0; k < t.dim(); ++k) adv[size_t(dim + k)] = nz[size_t(k)];
          dim += t.dim();
          break;
        }
        check_dim(dim, int64_t(g.sizes.size()));
        EMBER_CHECK_INDEX(isIntegralType(t.dtype(), /*include_bool=*/false),
                          "[index] tensors used as indices must be long, int, byte or bool "
                          "tensors (got ",
                          dtype_name(t.dtype()), ")");
        adv[size_t(dim)] = t;
        ++dim;
        break;
      }
    }
  }

  // Collapse the bool dims into one (Note [Boolean indices as views]).
  if (!bool_dims.empty() && !has_tensor) {
    const bool adjacent = bool_dims.back() - bool_dims.front() == int64_t(bool_dims.size()) - 1;
    const int64_t stride = g.strides[bool_dims.front()];
    for (auto it = bool_dims.rbegin(); it != bool_dims.rend(); ++it) {
      g.sizes.erase(size_t(*it));
      g.strides.erase(size_t(*it));
    }
    const size_t pos = adjacent ? size_t(bool_dims.front()) : 0;
    g.sizes.insert(pos, all_true ? 1 : 0);
    g.strides.insert(pos, stride);
  }
  return g;
}

/// Writes `value` into `dst` as PyTorch's setitem: leading size-1 dims of the value are
/// dropped, then it must broadcast to `dst`.
void copy_to(Tensor& dst, const Tensor& value) {
  if (dst.sizes().equals(value.sizes())) {
    dst.copy_(value);
    return;
  }
  if (value.dim() == 0 && value.is_cpu()) {
    dst.fill_(value);
    return;
  }
  size_t k = 0;
  while (k < size_t(value.dim()) && value.sizes()[k] == 1) ++k;
  IntArrayRef vs = value.sizes().slice(k);
  bool ok = vs.size() <= size_t(dst.dim());
  for (size_t i = 0; ok && i < vs.size(); ++i) {
    int64_t ds = dst.sizes()[dst.dim() - vs.size() + i];
    ok = vs[i] == ds || vs[i] == 1;
  }
  EMBER_CHECK(ok, "[index_put_] shape mismatch: value tensor of shape ", shape_str(value.sizes()),
              " cannot be broadcast to indexing result of shape ", shape_str(dst.sizes()));
  dst.copy_(make_view(value, vs, value.strides().slice(k), value.storage_offset()));
}

}  // namespace

Tensor Tensor::index(ArrayRef<TensorIndex> indices) const {
  EMBER_OP(index_1, *this, indices);
  IndexedGeometry g = apply_indices(*this, indices);
  // Under autograd the basic part is the recorded view op as_strided (a differentiable view);
  // the tensor indices then record their own node (advanced_index).
  Tensor view = autograd::any_needs_recording({*this})
                    ? as_strided(g.sizes, g.strides, g.offset)
                    : make_view(*this, g.sizes, g.strides, g.offset);
  return g.adv.empty() ? view : advanced_index(view, g.adv);
}

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index(ArrayRef<TensorIndex>(indices));
}

namespace {
void bump(Tensor& t) { t.unsafeGetTensorImpl()->bump_version("index_put_"); }

/// The tensor indices of `ix`, in order: saved for backward (version-checked, as PyTorch).
autograd::variable_list index_tensors(ArrayRef<TensorIndex> ix) {
  autograd::variable_list r;
  for (const TensorIndex& i : ix)
    if (i.is_tensor()) r.push_back(i.tensor());
  return r;
}

/// `ix` as a rule argument: per index, its kind then its values (an integer, a bool, or a
/// slice's (has_value, value) for start, stop and step). Tensor indices are saved instead.
std::vector<std::vector<int64_t>> encode_indices(ArrayRef<TensorIndex> ix) {
  std::vector<std::vector<int64_t>> r;
  for (const TensorIndex& i : ix) {
    std::vector<int64_t> e{int64_t(i.kind())};
    if (i.is_integer()) e.push_back(i.integer());
    if (i.is_boolean()) e.push_back(i.boolean());
    if (i.is_slice()) {
      for (std::optional<int64_t> v : {i.slice().start(), i.slice().stop(), i.slice().step()}) {
        e.push_back(v.has_value());
        e.push_back(v.value_or(0));
      }
    }
    r.push_back(std::move(e));
  }
  return r;
}

/// The index list of encode_indices, its tensor indices taken in order from `saved` (their
/// unpacked copies).
std::vector<TensorIndex> decode_indices(const std::vector<std::vector<int64_t>>& enc,
                                        const autograd::variable_list& saved) {
  using Kind = TensorIndex::Kind;
  std::vector<TensorIndex> r;
  size_t k = 0;
  for (const std::vector<int64_t>& e : enc) {
    auto opt = [&e](size_t j) {
      return e[j] ? std::optional<int64_t>(e[j + 1]) : std::optional<int64_t>();
    };
    switch (Kind(e[0])) {
      case Kind::None:
        r.emplace_back(indexing::None);
        break;
      case Kind::Ellipsis:
        r.emplace_back(indexing::Ellipsis);
        break;
      case Kind::Integer:
        r.emplace_back(e[1]);
        break;
      case Kind::Boolean:
        r.emplace_back(e[1] != 0);
        break;
      case Kind::Slice:
        r.emplace_back(indexing::Slice(opt(1), opt(3), opt(5)));
        break;
      case Kind::Tensor:
        r.emplace_back(saved[k++]);
        break;
    }
  }
  return r;
}

/// `t` with zeros written at the index list of args(0) (Tensor::index_put_ with a Scalar).
autograd::variable_list zero_at(const Tensor& t, const autograd::RuleArgs& a,
                                const autograd::variable_list& saved) {
  Tensor r = t.clone();
  const std::vector<TensorIndex> ixs = decode_indices(a.int_lists(0), saved);
  r.index_put_(ArrayRef<TensorIndex>(ixs.data(), ixs.size()), Scalar(0));
  return autograd::variable_list{r};
}
}  // namespace

// One in-place node for the whole write (basic and tensor indices alike): self's gradient is
// zero where values were written (unless accumulating), values get the indexed gradient.
Tensor& index_put_with(Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& v,
                       bool accumulate) {
  EMBER_CHECK(v.defined(), "[index_put_] the value tensor is undefined");
  autograd::OpRecorder rec("index_put_", {self, v});
  IndexedGeometry g = apply_indices(self, indices);
  Tensor dst = make_view(self, g.sizes, g.strides, g.offset);
  // As PyTorch's setitem, leading size-1 dims of the value are dropped.
  Tensor value = v;
  while (value.dim() > 0 && value.size(0) == 1) value = value.squeeze(0);
  if (g.adv.empty()) {
    if (accumulate) {
      dst.add_(v);
    } else {
      copy_to(dst, v);
    }
  } else {
    advanced_index_put(dst, g.adv, value, accumulate);
  }
  bump(self);
  if (rec) {
    rec.args(encode_indices(indices), accumulate, v.sizes(), value.sizes());
    rec.record_inplace(
        self,
        [](autograd::VjpCtx& c) {
          const bool accumulate = c.args().b(1);
          const std::vector<int64_t>& vsizes = c.args().ints(2);
          const std::vector<int64_t>& stripped = c.args().ints(3);
          const Tensor& gr = c.grads[0];
          const std::vector<TensorIndex> ixs = decode_indices(c.args().int_lists(0), c.saved);
          ArrayRef<TensorIndex> ixr(ixs.data(), ixs.size());
          autograd::variable_list r(2);
          if (c.needs(0)) {
            if (accumulate) {
              r[0] = gr;
            } else {
              r[0] = gr.clone();
              r[0].index_put_(ixr, Scalar(0));
            }
          }
          if (c.needs(1)) r[1] = autograd::sum_to(gr.index(ixr), stripped).reshape(vsizes);
          return r;
        },
        index_tensors(indices),
        [](autograd::JvpCtx& c) {
          const bool accumulate = c.args().b(1);
          Tensor r = c.tangent_or_zeros(0).clone();
          const std::vector<TensorIndex> ixs = decode_indices(c.args().int_lists(0), c.saved);
          index_put_with(r, ArrayRef<TensorIndex>(ixs.data(), ixs.size()), c.tangent_or_zeros(1),
                         accumulate);
          return autograd::variable_list{r};
        });
  }
  return self;
}

Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Tensor& v) {
  EMBER_OP(index_put__1, *this, indices, v);
  return index_put_with(*this, indices, v, /*accumulate=*/false);
}

Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Scalar& v) {
  EMBER_OP(index_put__2, *this, indices, v);
  autograd::OpRecorder rec("index_put_", {*this});
  IndexedGeometry g = apply_indices(*this, indices);
  Tensor dst = make_view(*this, g.sizes, g.strides, g.offset);
  if (g.adv.empty()) {
    dst.fill_(v);
  } else {
    Tensor value = empty({}, TensorOptions(dtype()));
    value.fill_(v);
    advanced_index_put(dst, g.adv, value, false);
  }
  bump(*this);
  if (rec) {
    rec.args(encode_indices(indices));
    rec.record_inplace(
        *this, [](autograd::VjpCtx& c) { return zero_at(c.grads[0], c.args(), c.saved); },
        index_tensors(indices),
        [](autograd::JvpCtx& c) { return zero_at(c.tangents[0], c.args(), c.saved); });
  }
  return *this;
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& v) {
  return index_put_(ArrayRef<TensorIndex>(indices), v);
}

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& v) {
  return index_put_(ArrayRef<TensorIndex>(indices), v);
}

}  // namespace ember
