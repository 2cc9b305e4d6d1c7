// Joining tensors: cat, stack and the h/v/d/column stacks, with the atleast_Nd helpers.
// Each is a copy into narrowed views of one output, so strided inputs, dtype promotion and
// every dtype come from copy_.
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {
namespace {

// PyTorch skips 1-D empty tensors (the legacy "empty" shape (0,)) when it checks shapes.
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

/// Validates `tensors` for cat along `dim`; returns the output shape and dtype.
std::pair<DimVector, ScalarType> cat_meta(ArrayRef<Tensor> tensors, int64_t& dim, const char* op) {
  EMBER_CHECK(!tensors.empty(), "[", op, "] expected a non-empty list of Tensors");
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    EMBER_CHECK(t.defined(), "[", op, "] tensor at position ", i, " is undefined");
    EMBER_CHECK(t.dim() > 0, "[", op, "] zero-dimensional tensor (at position ", i,
                ") cannot be concatenated");
    EMBER_CHECK(t.device() == tensors[0].device(), "[", op,
                "] expected all tensors to be on the "
                "same device, but found ",
                tensors[0].device().str(), " and ", t.device().str());
    if (!ref && !is_legacy_empty(t)) ref = &t;
  }
  const ScalarType dt = result_type(tensors);
  if (!ref) {
    dim = 0;
    return {DimVector{0}, dt};
  }
  dim = wrap_dim(dim, ref->dim(), op);
  DimVector shape;
  shape.assign(ref->sizes());
  shape[size_t(dim)] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t)) continue;
    EMBER_CHECK(t.dim() == ref->dim(), "[", op,
                "] Tensors must have same number of dimensions: "
                "got ",
                ref->dim(), " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      EMBER_CHECK(d == dim || t.size(d) == ref->size(d), "[", op,
                  "] Sizes of tensors must match "
                  "except in dimension ",
                  dim, ". Expected size ", ref->size(d), " but got size ", t.size(d),
                  " for tensor number ", i, " in the list (shapes ", shape_str(ref->sizes()),
                  " and ", shape_str(t.sizes()), ")");
    }
    shape[size_t(dim)] += t.size(dim);
  }
  return {shape, dt};
}

void cat_into(Tensor& out, ArrayRef<Tensor> tensors, int64_t dim) {
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (is_legacy_empty(t)) continue;
    const int64_t n = t.size(dim);
    if (n > 0) out.narrow(dim, offset, n).copy_(t);
    offset += n;
  }
}

std::vector<Tensor> unsqueezed(ArrayRef<Tensor> tensors, int64_t dim, const char* op) {
  EMBER_CHECK(!tensors.empty(), "[", op, "] expects a non-empty TensorList");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes() == tensors[0].sizes(), "[", op,
                "] expects each tensor to be "
                "equal size, but got ",
                shape_str(tensors[0].sizes()), " at entry 0 and ", shape_str(tensors[i].sizes()),
                " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(wrap_dim(dim, tensors[0].dim() + 1, op)));
  }
  return parts;
}

template <class F>
std::vector<Tensor> map(ArrayRef<Tensor> tensors, F f) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(f(t));
  return out;
}

}  // namespace

// cat: input i's gradient is its slab of the output gradient (a legacy 1-D empty input, skipped
// by cat, gets an empty gradient); the tangent is the cat of the tangents.
Tensor cat(ArrayRef<Tensor> tensors, int64_t dim) {
  EMBER_OP_CAST(cat, cat, tensors, dim);
  const autograd::variable_list inputs(tensors.begin(), tensors.end());
  autograd::OpRecorder rec("cat", inputs);
  auto [shape, dt] = cat_meta(tensors, dim, "cat");
  Tensor out = empty(shape, TensorOptions(dt).device(tensors[0].device()));
  cat_into(out, tensors, dim);
  if (rec) {
    const int64_t out_dim = int64_t(shape.size());
    std::vector<std::vector<int64_t>> sizes;
    for (const Tensor& t : tensors) sizes.push_back(t.sizes().vec());
    rec.args(sizes, dim, out_dim);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const std::vector<std::vector<int64_t>>& sizes = c.args().int_lists(0);
          const int64_t dim = c.args().i(1), out_dim = c.args().i(2);
          autograd::variable_list r;
          int64_t offset = 0;
          for (size_t i = 0; i < sizes.size(); ++i) {
            const auto& s = sizes[i];
            if (s.size() == 1 && s[0] == 0 && out_dim != 1) {
              r.push_back(c.needs(i) ? zeros(s, c.grads[0].options()) : Tensor());
              continue;
            }
            const int64_t len = s[size_t(dim)];
            r.push_back(c.needs(i) ? c.grads[0].narrow(dim, offset, len) : Tensor());
            offset += len;
          }
          return r;
        },
        {},
        [](autograd::JvpCtx& c) {
          const size_t n = c.args().int_lists(0).size();
          const int64_t dim = c.args().i(1);
          std::vector<Tensor> ts;
          for (size_t i = 0; i < n; ++i) ts.push_back(c.tangent_or_zeros(i));
          return autograd::variable_list{ember::cat(ts, dim)};
        });
  }
  return out;
}

Tensor& cat_out(Tensor& out, ArrayRef<Tensor> tensors, int64_t dim) {
  EMBER_OP(cat_out, out, tensors, dim);
  for (const Tensor& t : tensors) autograd::check_out_not_differentiable("cat", {t});
  auto [shape, dt] = cat_meta(tensors, dim, "cat");
  EMBER_CHECK(canCast(dt, out.dtype()), "[cat] result type ", dtype_name(dt),
              " can't be cast to the desired output type ", dtype_name(out.dtype()));
  for (const Tensor& t : tensors) {
    EMBER_CHECK(!t.is_alias_of(out) || t.numel() == 0,
                "[cat] unsupported operation: the input "
                "tensors cannot refer to any of the output memory locations");
  }
  if (out.sizes() != IntArrayRef(shape)) {
    EMBER_CHECK(out.numel() == 0, "[cat] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(shape),
                "; pass an empty tensor or one of the result's shape");
    resize_output(out, shape);
  }
  cat_into(out, tensors, dim);
  return out;
}

Tensor stack(ArrayRef<Tensor> tensors, int64_t dim) {
  EMBER_OP_CAST(stack, stack, tensors, dim);
  return cat(unsqueezed(tensors, dim, "stack"), dim);
}

Tensor& stack_out(Tensor& out, ArrayRef<Tensor> tensors, int64_t dim) {
  EMBER_OP(stack_out, out, tensors, dim);
  return cat_out(out, unsqueezed(tensors, dim, "stack"), dim);
}

Tensor atleast_1d(const Tensor& t) {
  EMBER_OP(atleast_1d, t);
  return t.dim() == 0 ? t.reshape({1}) : t;
}
Tensor atleast_2d(const Tensor& t) {
  EMBER_OP(atleast_2d, t);
  if (t.dim() == 0) return t.reshape({1, 1});
  return t.dim() == 1 ? t.unsqueeze(0) : t;
}
Tensor atleast_3d(const Tensor& t) {
  EMBER_OP(atleast_3d, t);
  if (t.dim() == 0) return t.reshape({1, 1, 1});
  if (t.dim() == 1) return t.unsqueeze(0).unsqueeze(-1);
  return t.dim() == 2 ? t.unsqueeze(-1) : t;
}

Tensor hstack(ArrayRef<Tensor> tensors) {
  EMBER_OP(hstack, tensors);
  EMBER_CHECK(!tensors.empty(), "[hstack] expects a non-empty TensorList");
  std::vector<Tensor> parts = map(tensors, atleast_1d);
  return cat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(ArrayRef<Tensor> tensors) {
  EMBER_OP(vstack, tensors);
  EMBER_CHECK(!tensors.empty(), "[vstack] expects a non-empty TensorList");
  return cat(map(tensors, atleast_2d), 0);
}

Tensor dstack(ArrayRef<Tensor> tensors) {
  EMBER_OP(dstack, tensors);
  EMBER_CHECK(!tensors.empty(), "[dstack] expects a non-empty TensorList");
  return cat(map(tensors, atleast_3d), 2);
}

Tensor column_stack(ArrayRef<Tensor> tensors) {
  EMBER_OP(column_stack, tensors);
  EMBER_CHECK(!tensors.empty(), "[column_stack] expects a non-empty TensorList");
  return cat(map(tensors,
                 [](const Tensor& t) {
                   return t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t;
                 }),
             1);
}

}  // namespace ember
