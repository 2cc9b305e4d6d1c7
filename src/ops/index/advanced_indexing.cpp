// Advanced (tensor) indexing: `x[idx]`, `x[mask]`, `x[:, i, j] = v`, index_put_ with accumulate.
// Basic indices are applied first as a view (indexing.cpp); what remains is one optional long
// index tensor per view dim, handled here by PyTorch 1.13's rules.
//
// Note [Advanced index placement]
// The index tensors broadcast to one shape B. When the indexed dims are adjacent, the result
// has B in their place; when a non-indexed dim separates them, B goes first and the other dims
// follow in order. Either way each entry i of B selects one block of the non-indexed ("rest")
// dims at element offset off[i] = sum_k idx_k[i] * stride_k, so the copy is one loop with an
// offset array on the indexed side (advanced_index_stub). Every index is checked before anything
// is written.
#include <algorithm>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/indexing.h"
#include "kernels/stubs/index.h"
#include "ops/call_path.h"

namespace ember {

// Shared with indexing.cpp (the basic-indexing half of Tensor::index / index_put_).
Tensor advanced_index(const Tensor& view, const std::vector<Tensor>& adv);
Tensor advanced_index_impl(const Tensor& view, const std::vector<Tensor>& adv);
void advanced_index_put(const Tensor& view, const std::vector<Tensor>& adv, const Tensor& values,
                        bool accumulate);
Tensor& index_put_with(Tensor& self, ArrayRef<indexing::TensorIndex> indices, const Tensor& v,
                       bool accumulate);

namespace {

struct AdvancedPlan {
  DimVector result_sizes;
  int64_t block_pos = 0;  // where the broadcast index dims start in the result
  // Per view dim: its index as a checked contiguous int64 tensor of the broadcast index shape,
  // or undefined when the dim is not indexed.
  std::vector<Tensor> indices;
};

AdvancedPlan make_plan(const Tensor& view, const std::vector<Tensor>& adv, const char* op) {
  AdvancedPlan p;
  std::vector<int64_t> dims;
  std::vector<Tensor> idx;
  for (size_t d = 0; d < adv.size(); ++d) {
    if (!adv[d].defined()) continue;
    const Tensor& t = adv[d];
    EMBER_CHECK_INDEX(isIntegralType(t.dtype(), /*include_bool=*/false), "[", op,
                      "] tensors used as indices must be long, int, byte or bool tensors "
                      "(got ",
                      dtype_name(t.dtype()), ")");
    dims.push_back(int64_t(d));
    idx.push_back(t);
  }
  // Broadcast the index shapes (IndexError on mismatch, as PyTorch).
  DimVector b;
  for (const Tensor& t : idx) {
    const size_t nd = std::max(b.size(), size_t(t.dim()));
    DimVector r(nd, 1);
    bool ok = true;
    for (size_t k = 0; k < nd; ++k) {
      const int64_t x = k + b.size() >= nd ? b[k + b.size() - nd] : 1;
      const int64_t y = k + size_t(t.dim()) >= nd ? t.size(int64_t(k + t.dim() - nd)) : 1;
      ok = ok && (x == y || x == 1 || y == 1);
      r[k] = x == 1 ? y : x;
    }
    if (!ok) {
      std::string shapes;
      for (const Tensor& u : idx) shapes += (shapes.empty() ? "" : ", ") + shape_str(u.sizes());
      EMBER_THROW(IndexError, "[", op,
                  "] shape mismatch: indexing tensors could not be "
                  "broadcast together with shapes ",
                  shapes);
    }
    b = r;
  }
  p.indices.resize(adv.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    const int64_t d = dims[k];
    // Indices live where the kernel reads them: a CPU index of a CUDA tensor is uploaded.
    Tensor ix = idx[k].to(view.device(), kLong).expand(b).contiguous();
    index_check_stub(view.device().type(), ix, view.size(d), /*wrap=*/true, op, d, false);
    p.indices[size_t(d)] = ix;
  }
  const bool adjacent = dims.back() - dims.front() == int64_t(dims.size()) - 1;
  p.block_pos = adjacent ? dims.front() : 0;
  DimVector rest_sizes;
  for (int64_t d = 0; d < view.dim(); ++d) {
    if (!adv[size_t(d)].defined()) rest_sizes.push_back(view.size(d));
  }
  for (int64_t k = 0; k < p.block_pos; ++k) p.result_sizes.push_back(rest_sizes[size_t(k)]);
  for (int64_t s : b) p.result_sizes.push_back(s);
  for (size_t k = size_t(p.block_pos); k < rest_sizes.size(); ++k) {
    p.result_sizes.push_back(rest_sizes[k]);
  }
  return p;
}

}  // namespace

namespace {
std::vector<std::optional<Tensor>> optional_indices(const std::vector<Tensor>& adv) {
  std::vector<std::optional<Tensor>> r;
  for (const Tensor& t : adv) {
    if (t.defined()) {
      r.emplace_back(t);
    } else {
      r.emplace_back(std::nullopt);
    }
  }
  return r;
}
}  // namespace

// Backward scatters the gradient into zeros with accumulate (repeated indices add up).
Tensor advanced_index(const Tensor& view_in, const std::vector<Tensor>& adv) {
  autograd::OpRecorder rec("index", {view_in});
  Tensor out = advanced_index_impl(view_in, adv);
  if (rec) {
    // The index tensors are saved (version-checked), as PyTorch's IndexBackward0 does.
    rec.args(view_in.sizes());
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const std::vector<int64_t>& sizes = c.args().ints(0);
          auto ix = optional_indices(c.saved);
          return autograd::variable_list{
              index_put(zeros(sizes, c.grads[0].options()),
                        ArrayRef<std::optional<Tensor>>(ix.data(), ix.size()), c.grads[0], true)};
        },
        adv,
        [](autograd::JvpCtx& c) {
          auto ix = optional_indices(c.saved);
          return autograd::variable_list{
              index(c.tangents[0], ArrayRef<std::optional<Tensor>>(ix.data(), ix.size()))};
        });
  }
  return out;
}

namespace {
// x[i] with one int64/int32 index tensor on the CPU is index_select along its dim, whose kernel
// checks each index as it copies (Note [Fused index checks]): one pass instead of check,
// offsets and copy. Its range is [0, size): a negative index (which advanced indexing wraps)
// makes it raise, and the general path then runs from the start, wrapping and raising as
// before. Undefined when the fast path does not apply.
Tensor single_index_select(const Tensor& view, const std::vector<Tensor>& adv) {
  int64_t d = -1;
  for (size_t k = 0; k < adv.size(); ++k) {
    if (!adv[k].defined()) continue;
    if (d >= 0) return Tensor();
    d = int64_t(k);
  }
  if (d < 0 || !view.is_cpu()) return Tensor();
  const Tensor& ix = adv[size_t(d)];
  if (!ix.is_cpu() || (ix.dtype() != kLong && ix.dtype() != kInt)) return Tensor();
  const Tensor flat = ix.contiguous().view({-1});
  DimVector out_sizes(view.sizes()), result_sizes;
  out_sizes[size_t(d)] = flat.numel();
  for (int64_t k = 0; k < d; ++k) result_sizes.push_back(view.size(k));
  for (int64_t s : ix.sizes()) result_sizes.push_back(s);
  for (int64_t k = d + 1; k < view.dim(); ++k) result_sizes.push_back(view.size(k));
  Tensor out = empty_tensor(out_sizes, view.dtype());
  try {
    index_select_stub(kCPU, out, view, d, flat);
  } catch (const IndexError&) {
    return Tensor();
  }
  return out.view(result_sizes);
}
}  // namespace

Tensor advanced_index_impl(const Tensor& view_in, const std::vector<Tensor>& adv) {
  Tensor view = view_in.resolve_conj();
  if (Tensor r = single_index_select(view, adv); r.defined()) return r;
  AdvancedPlan p = make_plan(view, adv, "index");
  Tensor out = empty(p.result_sizes, TensorOptions(view.dtype()).device(view.device()));
  advanced_index_stub(view.device().type(), out, view, p.indices, p.block_pos);
  return out;
}

void advanced_index_put(const Tensor& view, const std::vector<Tensor>& adv, const Tensor& values,
                        bool accumulate) {
  const char* op = "index_put_";
  EMBER_CHECK(values.defined(), "[", op, "] the value tensor is undefined");
  EMBER_CHECK(values.dtype() == view.dtype(), "[", op,
              "] Index put requires the source and "
              "destination dtypes match, got ",
              dtype_name(view.dtype()), " for the destination and ", dtype_name(values.dtype()),
              " for the source.");
  EMBER_CHECK(!view.is_conj(), "[", op,
              "] writing into a lazily conjugated tensor is not "
              "supported; call resolve_conj() first");
  AdvancedPlan p = make_plan(view, adv, op);
  // Values broadcast to the indexed shape.
  {
    IntArrayRef vs = values.sizes();
    const size_t nd = p.result_sizes.size();
    bool ok = vs.size() <= nd;
    for (size_t k = 0; ok && k < vs.size(); ++k) {
      const int64_t r = p.result_sizes[nd - vs.size() + k];
      ok = vs[k] == r || vs[k] == 1;
    }
    EMBER_CHECK(ok, "[", op, "] shape mismatch: value tensor of shape ", shape_str(vs),
                " cannot be broadcast to indexing result of shape ", shape_str(p.result_sizes));
  }
  Tensor v = values.resolve_conj().expand(p.result_sizes);
  // Values of another device (a CPU tensor written into a CUDA one) move to the destination's.
  if (v.device() != view.device()) v = v.to(view.device());
  // A non-contiguous v becomes a fresh copy; a contiguous one is copied only when it aliases.
  if (!v.is_contiguous())
    v = v.contiguous();
  else if (v.is_alias_of(view))
    v = v.clone();
  Tensor dst = view;
  advanced_index_put_stub(view.device().type(), dst, p.indices, p.block_pos, v, accumulate);
}

namespace {
std::vector<indexing::TensorIndex> to_tensor_indices(ArrayRef<std::optional<Tensor>> indices) {
  std::vector<indexing::TensorIndex> r;
  for (const auto& t : indices) {
    if (t.has_value() && t->defined()) {
      r.emplace_back(*t);
    } else {
      r.emplace_back(indexing::Slice());
    }
  }
  return r;
}
}  // namespace

Tensor index(const Tensor& self, ArrayRef<std::optional<Tensor>> indices) {
  EMBER_OP(index, self, indices);
  auto ix = to_tensor_indices(indices);
  bool any = false;
  for (const auto& i : ix) any = any || i.is_tensor();
  Tensor r = self.index(ArrayRef<indexing::TensorIndex>(ix.data(), ix.size()));
  return any ? r : r.clone();
}

Tensor& index_put_(Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                   bool accumulate) {
  EMBER_OP(index_put_, self, indices, values, accumulate);
  auto ix = to_tensor_indices(indices);
  return index_put_with(self, ArrayRef<indexing::TensorIndex>(ix.data(), ix.size()), values,
                        accumulate);
}

Tensor index_put(const Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                 bool accumulate) {
  EMBER_OP_CAST(index_put, index_put, self, indices, values, accumulate);
  Tensor r = self.clone();
  index_put_(r, indices, values, accumulate);
  return r;
}

Tensor& Tensor::index_put_(ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                           bool accumulate) {
  return ember::index_put_(*this, indices, values, accumulate);
}

Tensor Tensor::index_put(ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                         bool accumulate) const {
  return ember::index_put(*this, indices, values, accumulate);
}

}  // namespace ember
