// Padding (torch.nn.functional.pad): constant padding of any trailing dims (negative pads crop),
// and reflect / replicate / circular padding of 1-3 trailing dims with PyTorch 1.13's rank,
// size and dtype rules. The non-constant modes are one map_copy each (Note [Index-map copies]):
// every padded dim gets an index map into the input, so rows are copied as whole runs.
#include <algorithm>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "ops/call_path.h"

namespace ember {

// Defined in shape_ops.cpp (Note [Index-map copies]).
Tensor map_copy(const Tensor& x, IntArrayRef out_sizes,
                const std::vector<std::vector<int64_t>>& maps);

using autograd::variable_list;

namespace {

enum class PadMode { Reflect, Replicate, Circular };

const char* kernel_name(PadMode m, int64_t k) {
  static const char* names[3][3] = {
      {"reflection_pad1d", "reflection_pad2d", "reflection_pad3d"},
      {"replication_pad1d_cpu", "replication_pad2d_cpu", "replication_pad3d_cpu"},
      {"circular_pad1d", "circular_pad2d", "circular_pad3d"}};
  return names[int(m)][k - 1];
}

/// The dtypes PyTorch 1.13's CPU kernels take (float32/64 and complex; reflect 3-d also takes
/// the 16-bit floats; circular, a composite of copies, takes every dtype).
bool mode_supports(PadMode m, int64_t k, ScalarType t) {
  if (m == PadMode::Circular) return true;
  if (t == kFloat || t == kDouble || t == kComplexFloat || t == kComplexDouble) return true;
  return m == PadMode::Reflect && k == 3 && (t == kHalf || t == kBFloat16);
}

Tensor pad_indexed(const Tensor& self, IntArrayRef pad, PadMode mode,
                   std::vector<std::vector<int64_t>>* maps_out = nullptr) {
  const int64_t nd = self.dim();
  const int64_t k = int64_t(pad.size()) / 2;
  if (mode == PadMode::Circular) {
    EMBER_CHECK(nd == k + 2, "[pad] Invalid padding size, expected ", 2 * (nd - 2), " but got ",
                pad.size(), " for circular padding of an input of shape ", shape_str(self.sizes()));
  }
  if (mode != PadMode::Circular) {
    // Every dim but the batch dim must be non-empty (replicate: the batch dim only when batched).
    const int64_t first = (mode == PadMode::Reflect || nd == k + 2) ? 1 : 0;
    for (int64_t d = first; d < nd; ++d) {
      EMBER_CHECK(self.size(d) != 0, "[pad] Expected ", k + 1, "D or ", k + 2,
                  "D (batch mode) "
                  "tensor with possibly 0 batch size and other non-zero dimensions for input, but "
                  "got: ",
                  shape_str(self.sizes()));
    }
  }
  DimVector out_sizes;
  out_sizes.assign(self.sizes());
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(nd));
  for (int64_t t = 0; t < k; ++t) {
    const int64_t d = nd - 1 - t;
    const int64_t l = pad[size_t(2 * t)], r = pad[size_t(2 * t + 1)];
    const int64_t n = self.size(d);
    int64_t out_n = 0;
    EMBER_CHECK(!__builtin_add_overflow(n, l, &out_n) && !__builtin_add_overflow(out_n, r, &out_n),
                "[pad] Storage size calculation overflowed with padding (", l, ", ", r,
                ") at dimension ", d);
    if (mode == PadMode::Reflect) {
      EMBER_CHECK(l < n && r < n,
                  "[pad] Argument #4: Padding size should be less than the "
                  "corresponding input dimension, but got: padding (",
                  l, ", ", r, ") at dimension ", d, " of input ", shape_str(self.sizes()));
    }
    // Circular: negative pads crop first and the positive pads wrap around what is left (as
    // PyTorch), so each may be at most the cropped size.
    const int64_t crop_l = std::max<int64_t>(-l, 0), core = n - crop_l - std::max<int64_t>(-r, 0);
    if (mode == PadMode::Circular) {
      EMBER_CHECK(core >= 0, "[pad] negative padding (", l, ", ", r, ") at dimension ", d,
                  " leaves a negative size ", out_n);
      EMBER_CHECK(l <= core && r <= core,
                  "[pad] Padding value causes wrapping around more than "
                  "once (padding (",
                  l, ", ", r, ") at dimension ", d, " of input ", shape_str(self.sizes()), ")");
    } else {
      EMBER_CHECK(out_n >= 1, "[pad] input (size ", n, " at dimension ", d,
                  ") is too small. "
                  "Calculated output size: ",
                  out_n);
    }
    out_sizes[size_t(d)] = out_n;
    if (l == 0 && r == 0) continue;
    auto& m = maps[size_t(d)];
    m = checked_buffer<int64_t>("pad", {std::max<int64_t>(out_n, 0)});
    for (int64_t j = 0; j < out_n; ++j) {
      const int64_t pos = j - l;  // input coordinate before wrapping
      int64_t src;
      switch (mode) {
        case PadMode::Reflect:
          src = pos < 0 ? -pos : pos >= n ? 2 * (n - 1) - pos : pos;
          break;
        case PadMode::Replicate:
          src = std::clamp<int64_t>(pos, 0, n - 1);
          break;
        default: {
          const int64_t q = j - std::max<int64_t>(l, 0);  // position in the cropped core
          src = crop_l + ((q % core) + core) % core;
          break;
        }
      }
      m[size_t(j)] = std::clamp<int64_t>(src, 0, n - 1);
    }
  }
  EMBER_CHECK(mode_supports(mode, k, self.dtype()), "[pad] \"", kernel_name(mode, k),
              "\" not implemented for '", dtype_name(self.dtype()), "'");
  if (maps_out) *maps_out = maps;
  int64_t numel = 1;
  for (int64_t s : out_sizes) numel *= s;
  if (numel == 0) return empty(out_sizes, self.options());
  return map_copy(self, out_sizes, maps);
}

// reflect / replicate / circular: output index j of a padded dim reads input index map[j], one
// dim at a time, so the gradient is index_add-ed back dim by dim and the tangent is
// index_select-ed the same way.
Tensor pad_indexed_rec(const Tensor& self, IntArrayRef pad, PadMode mode) {
  autograd::OpRecorder rec("pad", {self});
  std::vector<std::vector<int64_t>> maps;
  Tensor out = pad_indexed(self, pad, mode, &maps);
  if (rec) {
    std::vector<std::pair<int64_t, Tensor>> idx;  // (dim, map)
    for (size_t d = 0; d < maps.size(); ++d)
      if (!maps[d].empty())
        idx.emplace_back(int64_t(d),
                         tensor(maps[d], TensorOptions(kLong)).reshape({int64_t(maps[d].size())}));
    variable_list saved;
    for (auto& [d, t] : idx) saved.push_back(t);
    std::vector<int64_t> dims;
    for (auto& [d, t] : idx) dims.push_back(d);
    rec.args(dims, self.sizes());
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const std::vector<int64_t>& dims = c.args().ints(0);
          const std::vector<int64_t>& sizes = c.args().ints(1);
          Tensor g = c.grads[0];
          if (g.numel() == 0) return variable_list{zeros(sizes, g.options())};
          for (size_t i = 0; i < dims.size(); ++i) {
            std::vector<int64_t> zs = g.sizes().vec();
            zs[size_t(dims[i])] = sizes[size_t(dims[i])];
            g = zeros(zs, g.options()).index_add(dims[i], c.saved[i], g);
          }
          return variable_list{g};
        },
        saved,
        [](autograd::JvpCtx& c) {
          const std::vector<int64_t>& dims = c.args().ints(0);
          Tensor t = c.tangent_or_zeros(0);
          for (size_t i = 0; i < dims.size(); ++i) t = t.index_select(dims[i], c.saved[i]);
          return variable_list{t};
        });
  }
  return out;
}

Tensor constant_pad_nd_impl(const Tensor& self, IntArrayRef pad, const Scalar& value);

}  // namespace

// Constant padding: the gradient is the output cropped back (padding by the negated pads,
// which also puts zeros where the input was cropped), as PyTorch's constant_pad_nd_backward.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad0, const Scalar& value) {
  EMBER_OP(constant_pad_nd, self, pad0, value);
  autograd::OpRecorder rec("constant_pad_nd", {self});
  Tensor out = constant_pad_nd_impl(self, pad0, value);
  if (rec) {
    const std::vector<int64_t> pad(pad0.begin(), pad0.end());
    std::vector<int64_t> neg;
    for (int64_t p : pad) neg.push_back(-p);
    rec.args(neg, pad);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          return variable_list{constant_pad_nd(c.grads[0], c.args().ints(0), Scalar(0))};
        },
        {},
        [](autograd::JvpCtx& c) {
          return variable_list{constant_pad_nd(c.tangent_or_zeros(0), c.args().ints(1), Scalar(0))};
        });
  }
  return out;
}

namespace {
Tensor constant_pad_nd_impl(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  EMBER_CHECK(pad.size() % 2 == 0, "[pad] Length of pad must be even but instead it equals ",
              pad.size());
  const int64_t nd = self.dim();
  const int64_t k = int64_t(pad.size()) / 2;
  EMBER_CHECK(k <= nd,
              "[pad] Length of pad should be no more than twice the number of "
              "dimensions of the input. Pad length is ",
              pad.size(), " while the input has ", nd, " dimensions.");
  // Negative pads crop the input first (PyTorch's order: per dim, left then right).
  Tensor in = self;
  bool grows = false;
  for (int64_t d = nd - k; d < nd; ++d) {
    const size_t pi = size_t(2 * (nd - d - 1));
    const int64_t l = pad[pi], r = pad[pi + 1];
    if (l < 0) {
      EMBER_CHECK_INDEX(-l <= in.size(d), "[pad] negative padding ", l, " at dimension ", d,
                        " is out of range for size ", in.size(d));
      in = in.narrow(d, -l, in.size(d) + l);
    } else if (l > 0) {
      grows = true;
    }
    if (r < 0) {
      EMBER_CHECK(in.size(d) + r >= 0, "[pad] start (0) + length (", in.size(d) + r,
                  ") exceeds dimension size (", in.size(d), ") at dimension ", d);
      in = in.narrow(d, 0, in.size(d) + r);
    } else if (r > 0) {
      grows = true;
    }
  }
  if (!grows) return in.clone();
  DimVector shape;
  shape.assign(in.sizes());
  for (int64_t d = nd - k; d < nd; ++d) {
    const size_t pi = size_t(2 * (nd - d - 1));
    int64_t& s = shape[size_t(d)];
    EMBER_CHECK(!__builtin_add_overflow(s, std::max<int64_t>(pad[pi], 0), &s) &&
                    !__builtin_add_overflow(s, std::max<int64_t>(pad[pi + 1], 0), &s),
                "[pad] Storage size calculation overflowed with padding ", pad, " of input ",
                shape_str(self.sizes()));
  }
  // Checked under the op's name (Note [Checked storage sizes]).
  const size_t out_nbytes = checked_nbytes("pad", shape, self.itemsize());
  if (out_nbytes > host_memory_bytes()) throw_out_of_memory("pad", out_nbytes);
  Tensor out = full(shape, value, self.options());
  Tensor inner = out;
  for (int64_t d = nd - k; d < nd; ++d) {
    const size_t pi = size_t(2 * (nd - d - 1));
    inner = inner.narrow(d, std::max<int64_t>(pad[pi], 0), in.size(d));
  }
  if (in.numel() > 0) inner.copy_(in);
  return out;
}
}  // namespace

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode,
           std::optional<double> value) {
  EMBER_OP(pad, self, pad, mode, value);
  EMBER_CHECK(pad.size() % 2 == 0, "[pad] Padding length must be divisible by 2, got ", pad.size());
  EMBER_CHECK(int64_t(pad.size()) <= 2 * self.dim(), "[pad] Padding length too large: ", pad.size(),
              " for an input of shape ", shape_str(self.sizes()));
  PadMode m;
  if (mode == "constant") return constant_pad_nd(self, pad, value.value_or(0.0));
  if (mode == "reflect")
    m = PadMode::Reflect;
  else if (mode == "replicate")
    m = PadMode::Replicate;
  else if (mode == "circular")
    m = PadMode::Circular;
  else
    EMBER_THROW(NotImplementedError, "[pad] Unrecognised padding mode ", mode);
  EMBER_CHECK(!value || *value == 0, "[pad] Padding mode \"", mode,
              "\" doesn't take in value argument");
  const int64_t k = int64_t(pad.size()) / 2, nd = self.dim();
  if (k < 1 || k > 3 || (nd != k + 1 && nd != k + 2)) {
    EMBER_THROW(NotImplementedError,
                "[pad] Only 2D, 3D, 4D, 5D padding with non-constant "
                "padding are supported for now (input of shape ",
                shape_str(self.sizes()), ", padding of length ", pad.size(), ")");
  }
  return pad_indexed_rec(self, pad, m);
}

}  // namespace ember
