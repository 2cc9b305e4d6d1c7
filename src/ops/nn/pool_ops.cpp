// Pooling ops: max pooling (a kernel with PyTorch's indices), average and adaptive average
// pooling (separable linear maps, see Note [Separable average pooling]), adaptive max pooling
// and max unpooling.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/conv.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "kernels/stubs/pool.h"
#include "kernels/stubs/pool_taps.h"
#include "ops/call_path.h"

namespace ember {
namespace {

DimVector expand(IntArrayRef v, int nd, const char* op, const char* name) {
  if (v.size() == 1) return DimVector(size_t(nd), v[0]);
  EMBER_CHECK(int(v.size()) == nd, "[", op, "] ", name,
              " must either be a single int, or a tuple of ", nd, " ints, got ", v);
  return DimVector(v);
}

/// Checks the rank (nd + 1 unbatched or nd + 2 batched, non-batch dims non-empty) and returns
/// the batched view.
Tensor batched_input(const Tensor& input, int nd, const char* op, bool& unbatched) {
  EMBER_CHECK(input.defined(), "[", op, "] input is undefined");
  unbatched = input.dim() == nd + 1;
  EMBER_CHECK(unbatched || input.dim() == nd + 2, "[", op, "] Expected ", nd + 1, "D or ", nd + 2,
              "D (batch mode) tensor with optional 0 dim batch size for input, but got input of "
              "size ",
              input.sizes());
  for (int64_t d = unbatched ? 0 : 1; d < input.dim(); ++d)
    EMBER_CHECK(input.size(d) > 0, "[", op,
                "] Expected input to have non-zero size for non-batch dimensions, but input has "
                "sizes ",
                input.sizes(), " with dimension ", d, " being empty");
  const ScalarType dt = input.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kBFloat16, "[", op, "] not implemented for '",
              dtype_name(dt), "' (supported: float32, float64, bfloat16)");
  return unbatched ? input.unsqueeze(0) : input;
}

/// PyTorch's pooling_output_shape, in 128-bit arithmetic: huge kernel, padding or dilation
/// arguments give a too-small or too-large size (an error later), never a wrapped one.
int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil_mode) {
  using W = __int128;
  const W num = W(in) + 2 * W(pad) - W(d) * (W(k) - 1) - 1 + (ceil_mode ? W(s) - 1 : 0);
  W out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= W(in) + pad) --out;
  return int64_t(
      std::clamp<W>(out, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
}

struct PoolArgs {
  DimVector k, s, p, d, out;
};

PoolArgs pool_args(const Tensor& x, int nd, IntArrayRef kernel, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, const char* op) {
  PoolArgs a;
  a.k = expand(kernel, nd, op, "kernel_size");
  a.s = stride.empty() ? a.k : expand(stride, nd, op, "stride");
  a.p = expand(padding, nd, op, "padding");
  a.d = expand(dilation, nd, op, "dilation");
  for (int i = 0; i < nd; ++i) {
    EMBER_CHECK(a.k[i] > 0, "[", op, "] kernel size should be greater than zero, but got ",
                IntArrayRef(a.k));
    EMBER_CHECK(a.s[i] > 0, "[", op, "] stride should be greater than zero, but got ",
                IntArrayRef(a.s));
    EMBER_CHECK(a.d[i] > 0, "[", op, "] dilation should be greater than zero, but got ",
                IntArrayRef(a.d));
    EMBER_CHECK(a.p[i] >= 0 && a.p[i] <= a.k[i] / 2, "[", op,
                "] pad should be at most half of effective kernel size, but got pad=", a.p[i],
                ", kernel_size=", a.k[i], " and dilation=", a.d[i]);
    a.out.push_back(pool_out(x.size(2 + i), a.k[i], a.p[i], a.s[i], a.d[i], ceil_mode));
  }
  bool ok = true;
  for (int64_t o : a.out) ok = ok && o > 0;
  EMBER_CHECK(ok, "[", op, "] Given input size: ", x.sizes().slice(1),
              ". Calculated output size: ", IntArrayRef(a.out), ". Output size is too small");
  return a;
}

Tensor max_pool_backward(const Tensor& g, const Tensor& idx, IntArrayRef in_sizes);

/// Gathers `t` (N, C, in...) at the pooled indices (N, C, out...).
Tensor gather_planes(const Tensor& t, const Tensor& idx) {
  return t.flatten(2).gather(2, idx.flatten(2)).view(idx.sizes());
}

/// (N, C, out...) of batched `x`, its storage size checked (Note [Checked storage sizes]) before
/// any table or buffer of the op is built from `out`.
DimVector pooled_shape(const char* op, const Tensor& x, IntArrayRef out) {
  DimVector os{x.size(0), x.size(1)};
  for (int64_t o : out) os.push_back(o);
  const size_t nbytes = checked_nbytes(op, os, x.itemsize());
  if (nbytes > host_memory_bytes()) throw_out_of_memory(op, nbytes);
  return os;
}

/// An empty pooled output of shape `os`, built without window tables or maps (their sizes come
/// from the spatial output sizes alone, which may be huge), still in x's graph.
Tensor empty_pooled(const Tensor& x, IntArrayRef os) {
  return zeros(os, TensorOptions().dtype(x.dtype()).device(x.device())) + x.sum() * 0;
}

bool has_zero(IntArrayRef sizes) {
  return std::find(sizes.begin(), sizes.end(), int64_t(0)) != sizes.end();
}

/// The max pool of batched x to spatial size `out`, `pool(xc, y, idx)` running the kernel on the
/// contiguous x; records its vjp (a scatter into the input). The outputs are allocated first:
/// the kernel's per-dim window tables are never larger than they are, and are not built at all
/// for an empty output.
template <class Pool>
std::tuple<Tensor, Tensor> max_pool_windows(const char* op, const Tensor& x, IntArrayRef out,
                                            const Pool& pool) {
  autograd::OpRecorder rec(op, {x});
  const DimVector os = pooled_shape(op, x, out);
  Tensor y = empty_tensor(op, os, x.dtype(), x.device());
  Tensor idx = empty_tensor(op, os, kLong, x.device());
  if (y.numel() > 0) {
    Tensor xc = x.contiguous();
    pool(xc, y, idx);
  }
  if (rec) {
    rec.args(x.sizes());
    rec.record(
        y,
        [](autograd::VjpCtx& c) {
          return autograd::variable_list{
              max_pool_backward(c.grads[0], c.saved[0], c.args().ints(0))};
        },
        {idx},
        [](autograd::JvpCtx& c) {
          return autograd::variable_list{gather_planes(c.tangent_or_zeros(0), c.saved[0])};
        });
  }
  return {y, idx};
}

/// The adjoint of the pooled gather: gx = 0; gx[idx] += g (per plane).
Tensor max_pool_backward(const Tensor& g, const Tensor& idx, IntArrayRef in_sizes) {
  autograd::OpRecorder rec("max_pool_backward", {g});
  Tensor gx = empty_tensor(in_sizes, g.dtype(), g.device());
  if (gx.numel() > 0) {
    if (g.numel() == 0) {
      gx.zero_();
    } else {
      Tensor gc = g.contiguous(), ic = idx.contiguous();
      max_pool_backward_stub(gc.device().type(), gc, ic, gx);
    }
  }
  if (rec) {
    rec.args(in_sizes);
    rec.record(
        gx,
        [](autograd::VjpCtx& c) {
          return autograd::variable_list{gather_planes(c.grads[0], c.saved[0])};
        },
        {idx},
        [](autograd::JvpCtx& c) {
          return autograd::variable_list{
              max_pool_backward(c.tangent_or_zeros(0), c.saved[0], c.args().ints(0))};
        });
  }
  return gx;
}

/// The gradient of a max pool from its saved taps (Note [Compact pooling indices] in
/// src/kernels/cpu/nn/pool_cpu.h). Building a graph (create_graph), it expands them to flat
/// indices and takes the recorded max_pool_backward.
Tensor max_pool_taps_backward(const Tensor& g, const Tensor& taps, IntArrayRef in_sizes,
                              IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d) {
  if (GradMode::is_enabled()) {
    Tensor idx = empty_tensor(taps.sizes(), kLong, taps.device());
    if (idx.numel() > 0)
      max_pool_taps_to_indices_stub(taps.device().type(), taps, k, s, p, d, in_sizes, idx);
    return max_pool_backward(g, idx, in_sizes);
  }
  Tensor gx = empty_tensor(in_sizes, g.dtype(), g.device());
  if (gx.numel() > 0) {
    if (g.numel() == 0) {
      gx.zero_();
    } else {
      Tensor gc = g.contiguous();
      max_pool_taps_backward_stub(gc.device().type(), gc, taps, k, s, p, d, gx);
    }
  }
  return gx;
}

/// Whether a max pool of `x` with kernel `k` may save taps instead of flat indices: a CPU
/// kernel of at most 256 taps, and no forward-mode level (its rule gathers at flat indices).
bool use_taps(const Tensor& x, IntArrayRef k) {
  int64_t taps = 1;
  for (int64_t v : k) {
    if (v > 256) return false;
    taps *= v;
  }
  return taps <= 256 && max_pool_taps_stub.get(x.device().type()) != nullptr &&
         max_pool_taps_backward_stub.get(x.device().type()) != nullptr &&
         autograd::tls().fw_levels == 0;
}

/// max_pool_windows for a pool whose indices stay internal: the kernel writes taps, which the
/// vjp reads.
Tensor max_pool_with_taps(const char* op, const Tensor& x, const PoolArgs& a) {
  autograd::OpRecorder rec(op, {x});
  const DimVector os = pooled_shape(op, x, a.out);
  Tensor y = empty_tensor(op, os, x.dtype(), x.device());
  Tensor taps = empty_tensor(op, os, kByte, x.device());
  if (y.numel() > 0) {
    Tensor xc = x.contiguous();
    max_pool_taps_stub(xc.device().type(), xc, a.k, a.s, a.p, a.d, y, taps);
  }
  if (rec) {
    rec.args(x.sizes(), a.k, a.s, a.p, a.d);
    rec.record(
        y,
        [](autograd::VjpCtx& c) {
          const autograd::RuleArgs& A = c.args();
          return autograd::variable_list{max_pool_taps_backward(
              c.grads[0], c.saved[0], IntArrayRef(A.ints(0)), IntArrayRef(A.ints(1)),
              IntArrayRef(A.ints(2)), IntArrayRef(A.ints(3)), IntArrayRef(A.ints(4)))};
        },
        {taps}, nullptr);
  }
  return y;
}

std::tuple<Tensor, Tensor> max_pool_impl(const char* op, int nd, const Tensor& input,
                                         IntArrayRef kernel, IntArrayRef stride,
                                         IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                         bool want_indices = true) {
  bool unbatched = false;
  Tensor x = batched_input(input, nd, op, unbatched);
  const PoolArgs a = pool_args(x, nd, kernel, stride, padding, dilation, ceil_mode, op);
  if (!want_indices && use_taps(x, a.k)) {
    Tensor y = max_pool_with_taps(op, x, a);
    return {unbatched ? y.squeeze(0) : y, Tensor()};
  }
  auto [y, idx] = max_pool_windows(op, x, a.out, [&](const Tensor& xc, Tensor& yc, Tensor& ic) {
    max_pool_stub(xc.device().type(), xc, a.k, a.s, a.p, a.d, yc, ic);
  });
  if (unbatched) return {y.squeeze(0), idx.squeeze(0)};
  return {y, idx};
}

// Note [Separable average pooling]
// Average pooling is a product of per-dim linear maps: PyTorch's divisor (count_include_pad or
// not) is the product of per-dim window counts, and a divisor_override divides once at the end.
// So y = x ×_1 A_1 ×_2 A_2 ..., each A_d a banded (out × in) matrix of window weights, applied
// band by band: tap j of every window is one index_select along the dim, the taps are summed and
// scaled by the window weights; the gradient, double backward and forward mode come from those
// ops' rules. Not a dense matmul by A_d: that costs out × in memory (long signals run out of
// it) and multiplies an inf or NaN input by the zero weights of every other window.

/// One dim's map: output o averages `count[o]` inputs from `first[o]`, each weighted `weight[o]`.
struct DimMap {
  int64_t in = 0;
  std::vector<int64_t> first, count;
  std::vector<double> weight;
};

Tensor apply_dim_map(const Tensor& x, int64_t dim, const DimMap& m) {
  const int64_t in = m.in, out = int64_t(m.first.size());
  // x gets one zero slice at index `in`, where the taps of windows shorter than the widest point.
  DimVector zs(x.sizes());
  zs[size_t(dim)] = 1;
  const Tensor xe = cat({x, zeros(zs, TensorOptions().dtype(x.dtype()).device(x.device()))}, dim);
  const int64_t taps = std::max<int64_t>(1, *std::max_element(m.count.begin(), m.count.end()));
  Tensor y;
  std::vector<int64_t> idx(size_t(out), 0);
  for (int64_t j = 0; j < taps; ++j) {
    for (int64_t o = 0; o < out; ++o)
      idx[size_t(o)] = j < m.count[size_t(o)] ? m.first[size_t(o)] + j : in;
    Tensor it = tensor(idx, kLong);
    if (!x.device().is_cpu()) it = it.to(x.device());
    Tensor t = xe.index_select(dim, it);
    y = j == 0 ? t : y + t;
  }
  DimVector ws(size_t(x.dim()), 1);
  ws[size_t(dim)] = out;
  Tensor w = tensor(m.weight, kDouble).to(x.dtype());
  if (!x.device().is_cpu()) w = w.to(x.device());
  return y * w.view(ws);
}

Tensor apply_dim_maps(Tensor x, int nd, const std::vector<DimMap>& maps) {
  const ScalarType dt = x.dtype();
  if (dt == kBFloat16) x = x.to(kFloat);
  for (int i = 0; i < nd; ++i) x = apply_dim_map(x, 2 + i, maps[size_t(i)]);
  return dt == kBFloat16 ? x.to(dt) : x.contiguous();
}

Tensor avg_pool_impl(const char* op, int nd, const Tensor& input, IntArrayRef kernel,
                     IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                     bool count_include_pad, std::optional<int64_t> divisor_override) {
  bool unbatched = false;
  Tensor x = batched_input(input, nd, op, unbatched);
  EMBER_CHECK(!divisor_override || *divisor_override != 0, "[", op, "] divisor must be not zero");
  const PoolArgs a = pool_args(x, nd, kernel, stride, padding, 1, ceil_mode, op);
  // PyTorch's avg_pool3d alone also wants the unpadded input to hold one kernel.
  EMBER_CHECK(nd != 3 || (x.size(2) >= a.k[0] && x.size(3) >= a.k[1] && x.size(4) >= a.k[2]), "[",
              op, "] input image (T: ", x.size(2), " H: ", x.size(3), " W: ", x.size(4),
              ") smaller than kernel size (kT: ", a.k[0], " kH: ", a.k[1], " kW: ", a.k[2], ")");
  const DimVector os = pooled_shape(op, x, a.out);
  if (has_zero(os)) return unbatched ? empty_pooled(x, os).squeeze(0) : empty_pooled(x, os);
  std::vector<DimMap> maps(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) {
    DimMap& m = maps[size_t(i)];
    const int64_t in = x.size(2 + i), out = a.out[i];
    m.in = in;
    for (int64_t o = 0; o < out; ++o) {
      int64_t s0 = o * a.s[i] - a.p[i];
      int64_t e0 = std::min(s0 + a.k[i], in + a.p[i]);
      const int64_t full = e0 - s0;
      s0 = std::max<int64_t>(s0, 0);
      e0 = std::min(e0, in);
      const int64_t n = std::max<int64_t>(e0 - s0, 0);
      m.first.push_back(n > 0 ? s0 : 0);
      m.count.push_back(n);
      m.weight.push_back(divisor_override || n == 0 ? 1.0
                                                    : 1.0 / double(count_include_pad ? full : n));
    }
  }
  Tensor y = apply_dim_maps(x, nd, maps);
  if (divisor_override) y = y / Scalar(*divisor_override);
  return unbatched ? y.squeeze(0) : y;
}

DimVector adaptive_out(IntArrayRef output_size, int nd, const char* op) {
  EMBER_CHECK(int(output_size.size()) == nd || output_size.size() == 1, "[", op,
              "] output_size must be ", nd, ", got ", output_size);
  DimVector out = expand(output_size, nd, op, "output_size");
  for (int64_t o : out)
    EMBER_CHECK(o >= 0, "[", op,
                "] elements of output_size must be greater than or equal to 0 but received ",
                IntArrayRef(out));
  return out;
}

Tensor adaptive_avg_impl(const char* op, int nd, const Tensor& input, IntArrayRef output_size) {
  bool unbatched = false;
  Tensor x = batched_input(input, nd, op, unbatched);
  const DimVector out = adaptive_out(output_size, nd, op);
  const DimVector os = pooled_shape(op, x, out);
  if (has_zero(os)) return unbatched ? empty_pooled(x, os).squeeze(0) : empty_pooled(x, os);
  bool global = true;
  for (int64_t o : out) global = global && o == 1;
  if (global && x.dtype() != kBFloat16) {  // global average pooling: one reduction
    DimVector dims;
    for (int i = 0; i < nd; ++i) dims.push_back(2 + i);
    Tensor y = x.mean(dims, true);
    return unbatched ? y.squeeze(0) : y;
  }
  std::vector<DimMap> maps(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) {
    DimMap& m = maps[size_t(i)];
    const int64_t in = x.size(2 + i), o_n = out[i];
    m.in = in;
    for (int64_t o = 0; o < o_n; ++o) {
      const int64_t s = (o * in) / o_n, e = ((o + 1) * in + o_n - 1) / o_n;
      m.first.push_back(s);
      m.count.push_back(e - s);
      m.weight.push_back(1.0 / double(e - s));
    }
  }
  Tensor y = apply_dim_maps(x, nd, maps);
  return unbatched ? y.squeeze(0) : y;
}

std::tuple<Tensor, Tensor> adaptive_max_impl(const char* op, int nd, const Tensor& input,
                                             IntArrayRef output_size) {
  bool unbatched = false;
  Tensor x = batched_input(input, nd, op, unbatched);
  const DimVector out = adaptive_out(output_size, nd, op);
  auto [y, idx] = max_pool_windows(op, x, out, [](const Tensor& xc, Tensor& yc, Tensor& ic) {
    adaptive_max_pool_stub(xc.device().type(), xc, yc, ic);
  });
  if (unbatched) return {y.squeeze(0), idx.squeeze(0)};
  return {y, idx};
}

Tensor max_unpool_impl(const char* op, int nd, const Tensor& input, const Tensor& indices,
                       IntArrayRef output_size) {
  EMBER_CHECK(input.defined() && indices.defined(), "[", op, "] undefined input");
  EMBER_CHECK(indices.dtype() == kLong, "[", op,
              "] elements in indices should be type int64 but got: ", dtype_name(indices.dtype()));
  EMBER_CHECK(input.sizes() == indices.sizes(), "[", op,
              "] Expected shape of indices to be same as that of the input tensor (", input.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  EMBER_CHECK(int(output_size.size()) == nd, "[", op, "] There should be exactly ", nd,
              " elements (depth, height, width) in output_size, but got ", output_size.size(),
              " elements.");
  bool unbatched = false;
  Tensor x = batched_input(input, nd, op, unbatched);
  Tensor idx = unbatched ? indices.unsqueeze(0) : indices;
  for (int64_t o : output_size)
    EMBER_CHECK(o > 0, "[", op, "] output_size must be positive, got ", output_size);
  const DimVector os = pooled_shape(op, x, output_size);
  const int64_t plane = int64_t(checked_nbytes(op, output_size, 1));  // even for N * C == 0
  if (idx.numel() > 0) {
    const int64_t lo = idx.min().item<int64_t>(), hi = idx.max().item<int64_t>();
    EMBER_CHECK(lo >= 0 && hi < plane, "[", op, "] Found an invalid max index: ", lo < 0 ? lo : hi,
                " (output volumes are of size ", output_size, ")");
  }
  Tensor y = zeros({x.size(0), x.size(1), plane}, x.options())
                 .scatter(2, idx.flatten(2), x.flatten(2))
                 .view(os);
  return unbatched ? y.squeeze(0) : y;
}

}  // namespace

#define EMBER_MAX_POOL(N)                                                                         \
  std::tuple<Tensor, Tensor> max_pool##N##d_with_indices(                                         \
      const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,      \
      IntArrayRef dilation, bool ceil_mode) {                                                     \
    EMBER_OP(max_pool##N##d_with_indices, input, kernel_size, stride, padding, dilation,          \
             ceil_mode);                                                                          \
    return max_pool_impl("max_pool" #N "d", N, input, kernel_size, stride, padding, dilation,     \
                         ceil_mode);                                                              \
  }                                                                                               \
  Tensor max_pool##N##d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,         \
                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {              \
    EMBER_OP_CAST(max_pool##N##d, max_pool##N##d, input, kernel_size, stride, padding, dilation,  \
                  ceil_mode);                                                                     \
    return std::get<0>(max_pool_impl("max_pool" #N "d", N, input, kernel_size, stride, padding,   \
                                     dilation, ceil_mode, false));                                \
  }                                                                                               \
  Tensor avg_pool##N##d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,         \
                        IntArrayRef padding, bool ceil_mode, bool count_include_pad,              \
                        std::optional<int64_t> divisor_override) {                                \
    EMBER_OP_CAST(avg_pool##N##d, avg_pool##N##d, input, kernel_size, stride, padding, ceil_mode, \
                  count_include_pad, divisor_override);                                           \
    return avg_pool_impl("avg_pool" #N "d", N, input, kernel_size, stride, padding, ceil_mode,    \
                         count_include_pad, divisor_override);                                    \
  }                                                                                               \
  Tensor adaptive_avg_pool##N##d(const Tensor& input, IntArrayRef output_size) {                  \
    EMBER_OP_CAST(adaptive_avg_pool##N##d, adaptive_avg_pool##N##d, input, output_size);          \
    return adaptive_avg_impl("adaptive_avg_pool" #N "d", N, input, output_size);                  \
  }                                                                                               \
  std::tuple<Tensor, Tensor> adaptive_max_pool##N##d(const Tensor& input,                         \
                                                     IntArrayRef output_size) {                   \
    EMBER_OP_CAST(adaptive_max_pool##N##d, adaptive_max_pool##N##d, input, output_size);          \
    return adaptive_max_impl("adaptive_max_pool" #N "d", N, input, output_size);                  \
  }
EMBER_MAX_POOL(1)
EMBER_MAX_POOL(2)
EMBER_MAX_POOL(3)
#undef EMBER_MAX_POOL

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, IntArrayRef output_size) {
  return max_unpool_impl("max_unpool1d", 1, input, indices, output_size);
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, IntArrayRef output_size) {
  EMBER_OP_CAST(max_unpool2d, max_unpool2d, input, indices, output_size);
  return max_unpool_impl("max_unpool2d", 2, input, indices, output_size);
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, IntArrayRef output_size,
                    IntArrayRef stride, IntArrayRef padding) {
  EMBER_OP_CAST(max_unpool3d, max_unpool3d, input, indices, output_size, stride, padding);
  (void)stride, (void)padding;  // PyTorch only validates them
  return max_unpool_impl("max_unpool3d", 3, input, indices, output_size);
}

}  // namespace ember
