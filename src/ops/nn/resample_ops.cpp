// Resampling ops: interpolation (nearest, linear, bicubic; separable, one spatial dim at a time,
// as sums of index_select taps so the rules come from index_select), sliding blocks (im2col /
// col2im, each the other's adjoint) and pixel (un)shuffle (reshape + permute).
#include <cmath>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/conv.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "kernels/stubs/resample.h"
#include "ops/call_path.h"

namespace ember {
namespace {

enum class Mode { Nearest, NearestExact, Linear, Cubic };

/// One spatial dim's taps: out[o] = sum_t w[t][o] * in[idx[t][o]].
struct Taps {
  std::vector<std::vector<int64_t>> idx;
  std::vector<std::vector<double>> w;
};

/// PyTorch's compute_scales_value / area_pixel_compute_scale.
double area_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? double(in - 1) / double(out - 1) : 0.0;
  return scale && *scale > 0 ? 1.0 / *scale : double(in) / double(out);
}

double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

Taps make_taps(Mode mode, int64_t in, int64_t out, bool align_corners,
               std::optional<double> scale) {
  Taps t;
  const int ntaps = mode == Mode::Linear ? 2 : mode == Mode::Cubic ? 4 : 1;
  t.idx.assign(size_t(ntaps), std::vector<int64_t>(size_t(out)));
  t.w.assign(size_t(ntaps), std::vector<double>(size_t(out), 1.0));
  if (mode == Mode::Nearest || mode == Mode::NearestExact) {
    // PyTorch computes nearest source indices in float.
    const float s = scale && *scale > 0 ? float(1.0 / *scale) : float(in) / float(out);
    const float off = mode == Mode::NearestExact ? 0.5f : 0.0f;
    for (int64_t o = 0; o < out; ++o) {
      int64_t src = out == in ? o : int64_t(std::floor((float(o) + off) * s));
      t.idx[0][size_t(o)] = std::min(src, in - 1);
    }
    return t;
  }
  const double s = area_scale(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    double src = align_corners ? s * double(o) : s * (double(o) + 0.5) - 0.5;
    const size_t u = size_t(o);
    if (mode == Mode::Linear) {
      if (src < 0) src = 0;
      const int64_t i0 = std::min(int64_t(src), in - 1);
      const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      const double l1 = std::min(src - double(i0), 1.0);
      t.idx[0][u] = i0, t.idx[1][u] = i1;
      t.w[0][u] = 1.0 - l1, t.w[1][u] = l1;
    } else {
      const double f = std::floor(src);
      const int64_t i = int64_t(f);
      const double x = src - f, a = -0.75;
      const double c[4] = {cubic2(x + 1, a), cubic1(x, a), cubic1(1 - x, a), cubic2(2 - x, a)};
      for (int k = 0; k < 4; ++k) {
        t.idx[size_t(k)][u] = std::clamp<int64_t>(i - 1 + k, 0, in - 1);
        t.w[size_t(k)][u] = c[k];
      }
    }
  }
  return t;
}

Tensor resample(const char* op, Mode mode, int nd, const Tensor& input, IntArrayRef output_size,
                bool align_corners, ArrayRef<std::optional<double>> scales) {
  EMBER_CHECK(input.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(input.dim() == nd + 2, "[", op, "] Non-empty ", nd + 2,
              "D data tensor expected but got a tensor with sizes ", input.sizes());
  EMBER_CHECK(int(output_size.size()) == nd, "[", op, "] It is expected output_size equals to ", nd,
              ", but got size ", output_size.size());
  bool ok = true;
  for (int i = 0; i < nd; ++i) ok = ok && input.size(2 + i) > 0 && output_size[i] > 0;
  EMBER_CHECK(ok, "[", op, "] Input and output sizes should be greater than 0, but got input ",
              input.sizes(), " output ", output_size);
  const ScalarType dt = input.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kBFloat16, "[", op, "] not implemented for '",
              dtype_name(dt), "'");
  Tensor x = dt == kBFloat16 ? input.to(kFloat) : input;
  for (int i = 0; i < nd; ++i) {
    const int dim = 2 + i;
    const int64_t in = x.size(dim), out = output_size[i];
    if (in == out && (mode == Mode::Nearest || mode == Mode::NearestExact || align_corners ||
                      !scales[size_t(i)]))
      continue;  // the identity map
    const Taps t = make_taps(mode, in, out, align_corners, scales[size_t(i)]);
    DimVector wshape(size_t(x.dim()), 1);
    wshape[size_t(dim)] = out;
    Tensor acc;
    for (size_t k = 0; k < t.idx.size(); ++k) {
      Tensor term = x.index_select(dim, tensor(t.idx[k], kLong));
      if (mode != Mode::Nearest && mode != Mode::NearestExact)
        term = term * tensor(t.w[k], x.dtype()).view(wshape);
      acc = acc.defined() ? acc + term : term;
    }
    x = acc;
  }
  if (x.is_same(input)) x = input.clone();
  return dt == kBFloat16 ? x.to(dt) : x.contiguous();
}

// ---- sliding blocks ----

struct BlockArgs {
  DimVector k, d, p, s;
};

/// The block args and the image's channels and (H, W) as rule args (Note [Rules as data]).
void record_block_args(autograd::OpRecorder& rec, const BlockArgs& a, int64_t c, IntArrayRef hw) {
  rec.args(a.k, a.d, a.p, a.s, c, hw);
}
BlockArgs block_args_of(const autograd::RuleArgs& r) {
  return {IntArrayRef(r.ints(0)), IntArrayRef(r.ints(1)), IntArrayRef(r.ints(2)),
          IntArrayRef(r.ints(3))};
}

BlockArgs block_args(IntArrayRef kernel, IntArrayRef dilation, IntArrayRef padding,
                     IntArrayRef stride, const char* op) {
  auto two = [op](IntArrayRef v, const char* name) {
    EMBER_CHECK(v.size() == 1 || v.size() == 2, "[", op, "] ", name,
                " must be an int or a tuple of two ints, got ", v);
    return v.size() == 1 ? DimVector{v[0], v[0]} : DimVector(v);
  };
  BlockArgs a{two(kernel, "kernel_size"), two(dilation, "dilation"), two(padding, "padding"),
              two(stride, "stride")};
  EMBER_CHECK(a.k[0] > 0 && a.k[1] > 0, "[", op,
              "] kernel size should be greater than zero, but got kernel_height: ", a.k[0],
              " kernel_width: ", a.k[1]);
  EMBER_CHECK(a.d[0] > 0 && a.d[1] > 0, "[", op,
              "] dilation should be greater than zero, but got dilation_height: ", a.d[0],
              " dilation_width: ", a.d[1]);
  EMBER_CHECK(a.p[0] >= 0 && a.p[1] >= 0, "[", op,
              "] padding should be non-negative, but got pad_height: ", a.p[0],
              " pad_width: ", a.p[1]);
  EMBER_CHECK(a.s[0] > 0 && a.s[1] > 0, "[", op,
              "] stride should be greater than zero, but got stride_height: ", a.s[0],
              " stride_width: ", a.s[1]);
  return a;
}

int64_t blocks(int64_t in, const BlockArgs& a, int i) {
  const int64_t span = in + 2 * a.p[size_t(i)] - (a.d[size_t(i)] * (a.k[size_t(i)] - 1) + 1);
  return span < 0 ? 0 : span / a.s[size_t(i)] + 1;
}

Tensor col2im_batched(const Tensor& cols, int64_t c, IntArrayRef hw, const BlockArgs& a);

/// (N, C, H, W) -> (N, C * kh * kw, L).
Tensor im2col_batched(const Tensor& x, const BlockArgs& a) {
  autograd::OpRecorder rec("im2col", {x});
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const int64_t oh = blocks(h, a, 0), ow = blocks(w, a, 1);
  Tensor out = empty_tensor({n, c * a.k[0] * a.k[1], oh * ow}, x.dtype());
  if (out.numel() > 0) {
    const ScalarType ct = x.dtype() == kDouble ? kDouble : kFloat;
    Tensor xc = x.to(ct).contiguous();
    Tensor oc = ct == x.dtype() ? out : empty_tensor(out.sizes(), ct);
    im2col_stub(xc.device().type(), xc, oc, a.k, a.d, a.p, a.s);
    if (!oc.is_same(out)) out.copy_(oc);
  }
  if (rec) {
    record_block_args(rec, a, c, {h, w});
    rec.record(
        out,
        [](autograd::VjpCtx& ctx) {
          return autograd::variable_list{col2im_batched(
              ctx.grads[0], ctx.args().i(4), ctx.args().ints(5), block_args_of(ctx.args()))};
        },
        {},
        [](autograd::JvpCtx& ctx) {
          return autograd::variable_list{
              im2col_batched(ctx.tangent_or_zeros(0), block_args_of(ctx.args()))};
        });
  }
  return out;
}

/// (N, C * kh * kw, L) -> (N, C, H, W), summing overlapping blocks.
Tensor col2im_batched(const Tensor& cols, int64_t c, IntArrayRef hw, const BlockArgs& a) {
  autograd::OpRecorder rec("col2im", {cols});
  const int64_t n = cols.size(0), h = hw[0], w = hw[1];
  Tensor out = empty_tensor({n, c, h, w}, cols.dtype());
  if (out.numel() > 0) {
    const ScalarType ct = cols.dtype() == kDouble ? kDouble : kFloat;
    Tensor cc = cols.to(ct).contiguous();
    Tensor oc = empty_tensor(out.sizes(), ct);
    oc.zero_();
    if (cc.numel() > 0) col2im_stub(cc.device().type(), cc, oc, a.k, a.d, a.p, a.s);
    out.copy_(oc);
  }
  if (rec) {
    record_block_args(rec, a, c, hw);
    rec.record(
        out,
        [](autograd::VjpCtx& ctx) {
          return autograd::variable_list{im2col_batched(ctx.grads[0], block_args_of(ctx.args()))};
        },
        {},
        [](autograd::JvpCtx& ctx) {
          return autograd::variable_list{col2im_batched(ctx.tangent_or_zeros(0), ctx.args().i(4),
                                                        ctx.args().ints(5),
                                                        block_args_of(ctx.args()))};
        });
  }
  return out;
}

Tensor check_float(const Tensor& t, const char* op) {
  EMBER_CHECK(t.defined(), "[", op, "] input is undefined");
  const ScalarType dt = t.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kBFloat16, "[", op, "] not implemented for '",
              dtype_name(dt), "'");
  return t;
}

}  // namespace

Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  EMBER_OP(im2col, input, kernel_size, dilation, padding, stride);
  const char* op = "im2col";
  check_float(input, op);
  const BlockArgs a = block_args(kernel_size, dilation, padding, stride, op);
  bool ok = input.dim() == 3 || input.dim() == 4;
  for (int64_t d = input.dim() - 3; ok && d < input.dim(); ++d) ok = input.size(d) > 0;
  EMBER_CHECK(ok, "[", op,
              "] Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and "
              "non-zero dimensions for input, but got: ",
              input.sizes());
  const bool unbatched = input.dim() == 3;
  Tensor x = unbatched ? input.unsqueeze(0) : input;
  const int64_t oh = blocks(x.size(2), a, 0), ow = blocks(x.size(3), a, 1);
  EMBER_CHECK(oh >= 1 && ow >= 1, "[", op, "] Given input with spatial size (", x.size(2), ", ",
              x.size(3), "), kernel_size=(", a.k[0], ", ", a.k[1], "), dilation=(", a.d[0], ", ",
              a.d[1], "), padding=(", a.p[0], ", ", a.p[1],
              "), calculated shape of the array of sliding blocks as (", oh, ", ", ow,
              "), but its components must be at least one.");
  Tensor y = im2col_batched(x, a);
  return unbatched ? y.squeeze(0) : y;
}

Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  EMBER_OP(col2im, input, output_size, kernel_size, dilation, padding, stride);
  const char* op = "col2im";
  check_float(input, op);
  const BlockArgs a = block_args(kernel_size, dilation, padding, stride, op);
  EMBER_CHECK(output_size.size() == 2 || output_size.size() == 1, "[", op,
              "] output_size must be an int or a tuple of two ints, got ", output_size);
  const DimVector hw =
      output_size.size() == 1 ? DimVector{output_size[0], output_size[0]} : DimVector(output_size);
  bool ok = input.dim() == 2 || input.dim() == 3;
  for (int64_t d = input.dim() - 2; ok && d < input.dim(); ++d) ok = input.size(d) > 0;
  EMBER_CHECK(ok, "[", op,
              "] Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
              "non-zero dimensions for input, but got: ",
              input.sizes());
  const bool unbatched = input.dim() == 2;
  Tensor x = unbatched ? input.unsqueeze(0) : input;
  const int64_t kk = a.k[0] * a.k[1];
  EMBER_CHECK(x.size(1) % kk == 0, "[", op,
              "] Expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size, but got input.size(1)=",
              x.size(1), " and kernel_size=(", a.k[0], ", ", a.k[1], ")");
  const int64_t oh = blocks(hw[0], a, 0), ow = blocks(hw[1], a, 1);
  EMBER_CHECK(oh >= 1 && ow >= 1 && x.size(2) == oh * ow, "[", op, "] Given output_size=(", hw[0],
              ", ", hw[1], "), kernel_size=(", a.k[0], ", ", a.k[1], "), dilation=(", a.d[0], ", ",
              a.d[1], "), padding=(", a.p[0], ", ", a.p[1], "), stride=(", a.s[0], ", ", a.s[1],
              "), expected size of input's dimension 2 to match the calculated "
              "number of sliding blocks ",
              oh, " * ", ow, " = ", oh * ow, ", but got input.size(2)=", x.size(2), ".");
  Tensor y = col2im_batched(x, x.size(1) / kk, hw, a);
  return unbatched ? y.squeeze(0) : y;
}

Tensor upsample_nearest1d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales, bool exact) {
  EMBER_OP(upsample_nearest1d, input, output_size, scales, exact);
  return resample("upsample_nearest1d", exact ? Mode::NearestExact : Mode::Nearest, 1, input,
                  output_size, false, {scales});
}
Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales_h, std::optional<double> scales_w,
                          bool exact) {
  EMBER_OP(upsample_nearest2d, input, output_size, scales_h, scales_w, exact);
  return resample("upsample_nearest2d", exact ? Mode::NearestExact : Mode::Nearest, 2, input,
                  output_size, false, {scales_h, scales_w});
}
Tensor upsample_nearest3d(const Tensor& input, IntArrayRef output_size,
                          std::optional<double> scales_d, std::optional<double> scales_h,
                          std::optional<double> scales_w, bool exact) {
  EMBER_OP(upsample_nearest3d, input, output_size, scales_d, scales_h, scales_w, exact);
  return resample("upsample_nearest3d", exact ? Mode::NearestExact : Mode::Nearest, 3, input,
                  output_size, false, {scales_d, scales_h, scales_w});
}
Tensor upsample_linear1d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales) {
  EMBER_OP(upsample_linear1d, input, output_size, align_corners, scales);
  return resample("upsample_linear1d", Mode::Linear, 1, input, output_size, align_corners,
                  {scales});
}
Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  EMBER_OP_CAST(upsample_bilinear2d, upsample_bilinear2d, input, output_size, align_corners,
                scales_h, scales_w);
  return resample("upsample_bilinear2d", Mode::Linear, 2, input, output_size, align_corners,
                  {scales_h, scales_w});
}
Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  EMBER_OP(upsample_bicubic2d, input, output_size, align_corners, scales_h, scales_w);
  return resample("upsample_bicubic2d", Mode::Cubic, 2, input, output_size, align_corners,
                  {scales_h, scales_w});
}
Tensor upsample_trilinear3d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d, std::optional<double> scales_h,
                            std::optional<double> scales_w) {
  EMBER_OP_CAST(upsample_trilinear3d, upsample_trilinear3d, input, output_size, align_corners,
                scales_d, scales_h, scales_w);
  return resample("upsample_trilinear3d", Mode::Linear, 3, input, output_size, align_corners,
                  {scales_d, scales_h, scales_w});
}

Tensor pixel_shuffle(const Tensor& input, int64_t r) {
  EMBER_OP(pixel_shuffle, input, r);
  const char* op = "pixel_shuffle";
  EMBER_CHECK(input.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(input.dim() >= 3, "[", op,
              "] pixel_shuffle expects input to have at least 3 dimensions, but got input with ",
              input.dim(), " dimension(s)");
  EMBER_CHECK(r > 0, "[", op, "] pixel_shuffle expects a positive upscale_factor, but got ", r);
  const int64_t nb = input.dim() - 3, c = input.size(-3), h = input.size(-2), w = input.size(-1);
  int64_t rr = 0;  // r * r; an overflowing square divides no channel count (nor wraps to 0)
  EMBER_CHECK(!__builtin_mul_overflow(r, r, &rr) && c % rr == 0, "[", op,
              "] pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
              "square of upscale_factor, but input.size(-3)=",
              c, " is not divisible by ", r, "^2");
  DimVector s(input.sizes().slice(0, size_t(nb)));
  DimVector split = s;
  for (int64_t v : {c / rr, r, r, h, w}) split.push_back(v);
  DimVector perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t v : {0, 3, 1, 4, 2}) perm.push_back(nb + v);
  for (int64_t v : {c / rr, h * r, w * r}) s.push_back(v);
  return input.reshape(split).permute(perm).reshape(s);
}

Tensor pixel_unshuffle(const Tensor& input, int64_t r) {
  EMBER_OP(pixel_unshuffle, input, r);
  const char* op = "pixel_unshuffle";
  EMBER_CHECK(input.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(input.dim() >= 3, "[", op,
              "] pixel_unshuffle expects input to have at least 3 dimensions, but got input with ",
              input.dim(), " dimension(s)");
  EMBER_CHECK(r > 0, "[", op, "] pixel_unshuffle expects a positive downscale_factor, but got ", r);
  const int64_t nb = input.dim() - 3, c = input.size(-3), h = input.size(-2), w = input.size(-1);
  EMBER_CHECK(h % r == 0, "[", op,
              "] pixel_unshuffle expects height to be divisible by downscale_factor, but "
              "input.size(-2)=",
              h, " is not divisible by ", r);
  EMBER_CHECK(w % r == 0, "[", op,
              "] pixel_unshuffle expects width to be divisible by downscale_factor, but "
              "input.size(-1)=",
              w, " is not divisible by ", r);
  DimVector s(input.sizes().slice(0, size_t(nb)));
  DimVector split = s;
  for (int64_t v : {c, h / r, r, w / r, r}) split.push_back(v);
  DimVector perm;
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t v : {0, 2, 4, 1, 3}) perm.push_back(nb + v);
  for (int64_t v : {c * r * r, h / r, w / r}) s.push_back(v);
  return input.reshape(split).permute(perm).reshape(s);
}

}  // namespace ember
