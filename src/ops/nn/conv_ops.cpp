// Convolutions: argument checks with PyTorch's messages, shape rules and the autograd rules.
//
// Note [Three bilinear convolution maps]
// A convolution y = conv(x, w) is bilinear, and so are its two derivative maps: the data
// gradient gx = conv_backward_data(gy, w) (which is also the transposed convolution) and the
// weight gradient gw = conv_backward_weight(x, gy). The derivatives of each of the three maps
// are the other two, so the three recorded ops below close under differentiation: double
// backward and forward-over-reverse need no extra kernels.
#include <tuple>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/conv.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "kernels/stubs/conv.h"
#include "ops/call_path.h"

namespace ember {
namespace {

/// The spatial parameters shared by the three maps (pad_l/pad_r: requested padding per side).
using ConvSpec = ConvParams;

/// Records `s` and then `more` as the rules' args (Note [Rules as data]); spec_of reads `s` back.
template <class... A>
void record_spec(autograd::OpRecorder& rec, const ConvSpec& s, const A&... more) {
  rec.args(s.stride, s.pad_l, s.pad_r, s.dilation, s.groups, more...);
}
ConvSpec spec_of(const autograd::RuleArgs& a) {
  return {IntArrayRef(a.ints(0)), IntArrayRef(a.ints(1)), IntArrayRef(a.ints(2)),
          IntArrayRef(a.ints(3)), a.i(4)};
}

int64_t conv_out_size(int64_t in, int64_t k, int64_t s, int64_t pl, int64_t pr, int64_t d) {
  const int64_t span = in + pl + pr - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

DimVector bias_view_shape(int64_t channels, int nd) {
  DimVector s(size_t(nd + 2), 1);
  s[1] = channels;
  return s;
}

Tensor conv_backward_data(const Tensor& gy, const Tensor& w, const ConvSpec& s,
                          IntArrayRef x_sizes);
Tensor conv_backward_weight(const Tensor& x, const Tensor& gy, const ConvSpec& s,
                            IntArrayRef w_sizes);

/// The weight and bias gradients in one pass, unrecorded (for backward without create_graph).
std::tuple<Tensor, Tensor> conv_weight_bias_grad(const Tensor& x, const Tensor& gy,
                                                 const ConvSpec& s, IntArrayRef w_sizes) {
  Tensor gw = empty_tensor(w_sizes, x.dtype(), x.device());
  Tensor gb = empty_tensor({w_sizes[0]}, x.dtype(), x.device());
  if (x.numel() == 0 || gy.numel() == 0 || gw.numel() == 0) {
    gw.zero_();
    DimVector dims{0};
    for (int i = 0; i < s.nd(); ++i) dims.push_back(2 + i);
    return {gw, gy.sum(dims)};
  }
  Tensor xc = x.contiguous(), gc = gy.contiguous();
  conv_backward_weight_stub(xc.device().type(), xc, gc, s, gw, gb);
  return {gw, gb};
}

/// y = conv(x, w) + bias for batched x; bias may be undefined. `y_sizes` (from a derivative
/// rule) fixes the output shape: with output_padding >= stride, the adjoint of a transposed
/// convolution is a convolution cropped to the transposed input's shape.
Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvSpec& s,
                    IntArrayRef y_sizes = {}) {
  autograd::OpRecorder rec("convolution", {x, w, bias});
  DimVector ys{x.size(0), w.size(0)};
  for (int i = 0; i < s.nd(); ++i)
    ys.push_back(y_sizes.empty() ? conv_out_size(x.size(2 + i), w.size(2 + i), s.stride[i],
                                                 s.pad_l[i], s.pad_r[i], s.dilation[i])
                                 : y_sizes[2 + i]);
  Tensor y = empty_tensor(ys, x.dtype(), x.device());
  if (y.numel() > 0) {
    if (x.numel() == 0 || w.numel() == 0) {
      y.zero_();
      if (bias.defined()) y.add_(bias.view(bias_view_shape(ys[1], s.nd())));
    } else {
      Tensor xc = x.contiguous(), wc = w.contiguous(), bc;
      if (bias.defined()) bc = bias.contiguous();
      conv_forward_stub(xc.device().type(), xc, wc, bc, s, y);
    }
  }
  if (rec) {
    record_spec(rec, s, bias.defined());
    rec.record(
        y,
        [](autograd::VjpCtx& c) {
          const ConvSpec s = spec_of(c.args());
          const bool has_bias = c.args().b(5);
          const Tensor &g = c.grads[0], &x = c.saved[0], &w = c.saved[1];
          autograd::variable_list r(3);
          if (c.needs(0)) r[0] = conv_backward_data(g, w, s, x.sizes());
          if (has_bias && c.needs(1) && c.needs(2) && !GradMode::is_enabled()) {
            // No graph to build: one oneDNN pass gives both weight and bias gradients.
            std::tie(r[1], r[2]) = conv_weight_bias_grad(x, g, s, w.sizes());
            return r;
          }
          if (c.needs(1)) r[1] = conv_backward_weight(x, g, s, w.sizes());
          if (has_bias && c.needs(2)) {
            DimVector dims{0};
            for (int i = 0; i < s.nd(); ++i) dims.push_back(2 + i);
            r[2] = g.sum(dims);
          }
          return r;
        },
        {x, w},
        [](autograd::JvpCtx& c) {
          const ConvSpec s = spec_of(c.args());
          const Tensor &x = c.inputs[0], &w = c.inputs[1];
          Tensor t;
          auto acc = [&t](const Tensor& u) { t = t.defined() ? t + u : u; };
          const IntArrayRef ys = c.outputs[0].sizes();
          if (c.tangents[0].defined()) acc(conv_forward(c.tangents[0], w, {}, s, ys));
          if (c.tangents[1].defined()) acc(conv_forward(x, c.tangents[1], {}, s, ys));
          if (c.tangents.size() > 2 && c.tangents[2].defined())
            acc(c.tangents[2].view(bias_view_shape(c.tangents[2].numel(), s.nd())));
          if (!t.defined())
            t = zeros_like(c.outputs[0]);
          else if (t.sizes() != c.outputs[0].sizes())
            t = t.expand(c.outputs[0].sizes()).clone();
          return autograd::variable_list{t};
        });
  }
  return y;
}

/// gx = conv_backward_data(gy, w): the adjoint of conv_forward in x (x of `x_sizes`).
Tensor conv_backward_data(const Tensor& gy, const Tensor& w, const ConvSpec& s,
                          IntArrayRef x_sizes) {
  autograd::OpRecorder rec("convolution_backward_data", {gy, w});
  Tensor gx = empty_tensor(x_sizes, gy.dtype(), gy.device());
  if (gx.numel() > 0) {
    if (gy.numel() == 0 || w.numel() == 0) {
      gx.zero_();
    } else {
      Tensor gc = gy.contiguous(), wc = w.contiguous();
      conv_backward_data_stub(gc.device().type(), gc, wc, s, gx);
    }
  }
  if (rec) {
    record_spec(rec, s);
    rec.record(
        gx,
        [](autograd::VjpCtx& c) {
          const ConvSpec s = spec_of(c.args());
          const Tensor &g = c.grads[0], &gy = c.saved[0], &w = c.saved[1];
          autograd::variable_list r(2);
          if (c.needs(0)) r[0] = conv_forward(g, w, {}, s, gy.sizes());
          if (c.needs(1)) r[1] = conv_backward_weight(g, gy, s, w.sizes());
          return r;
        },
        {gy, w},
        [](autograd::JvpCtx& c) {
          const ConvSpec s = spec_of(c.args());
          const Tensor &gy = c.inputs[0], &w = c.inputs[1];
          const IntArrayRef xs = c.outputs[0].sizes();
          Tensor t;
          auto acc = [&t](const Tensor& u) { t = t.defined() ? t + u : u; };
          if (c.tangents[0].defined()) acc(conv_backward_data(c.tangents[0], w, s, xs));
          if (c.tangents[1].defined()) acc(conv_backward_data(gy, c.tangents[1], s, xs));
          return autograd::variable_list{t.defined() ? t : zeros_like(c.outputs[0])};
        });
  }
  return gx;
}

/// gw = conv_backward_weight(x, gy): the adjoint of conv_forward in w (w of `w_sizes`).
Tensor conv_backward_weight(const Tensor& x, const Tensor& gy, const ConvSpec& s,
                            IntArrayRef w_sizes) {
  autograd::OpRecorder rec("convolution_backward_weight", {x, gy});
  Tensor gw = empty_tensor(w_sizes, x.dtype(), x.device());
  if (gw.numel() > 0) {
    if (x.numel() == 0 || gy.numel() == 0) {
      gw.zero_();
    } else {
      Tensor xc = x.contiguous(), gc = gy.contiguous(), no_bias;
      conv_backward_weight_stub(xc.device().type(), xc, gc, s, gw, no_bias);
    }
  }
  if (rec) {
    record_spec(rec, s);
    rec.record(
        gw,
        [](autograd::VjpCtx& c) {
          const ConvSpec s = spec_of(c.args());
          const Tensor &g = c.grads[0], &x = c.saved[0], &gy = c.saved[1];
          autograd::variable_list r(2);
          if (c.needs(0)) r[0] = conv_backward_data(gy, g, s, x.sizes());
          if (c.needs(1)) r[1] = conv_forward(x, g, {}, s, gy.sizes());
          return r;
        },
        {x, gy},
        [](autograd::JvpCtx& c) {
          const ConvSpec s = spec_of(c.args());
          const Tensor &x = c.inputs[0], &gy = c.inputs[1];
          const IntArrayRef ws = c.outputs[0].sizes();
          Tensor t;
          auto acc = [&t](const Tensor& u) { t = t.defined() ? t + u : u; };
          if (c.tangents[0].defined()) acc(conv_backward_weight(c.tangents[0], gy, s, ws));
          if (c.tangents[1].defined()) acc(conv_backward_weight(x, c.tangents[1], s, ws));
          return autograd::variable_list{t.defined() ? t : zeros_like(c.outputs[0])};
        });
  }
  return gw;
}

// ---- argument checks ----

/// One value for every spatial dim, or exactly `nd` values.
DimVector expand_param(IntArrayRef v, int nd, const char* op, const char* name) {
  if (v.size() == 1) return DimVector(size_t(nd), v[0]);
  EMBER_CHECK(int(v.size()) == nd, "[", op, "] expected ", name,
              " to be a single integer value or a list of ", nd,
              " values to match the convolution dimensions, but got ", name, "=", v);
  return DimVector(v);
}

std::string sizes_x(IntArrayRef v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s + ")";
}

Tensor convolution_impl(const char* op, const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias_opt, IntArrayRef stride_a,
                        IntArrayRef pad_l_a, IntArrayRef pad_r_a, IntArrayRef dilation_a,
                        bool transposed, IntArrayRef output_padding_a, int64_t groups,
                        int want_nd) {
  EMBER_CHECK(input.defined() && weight.defined(), "[", op, "] input and weight must be defined");
  const Tensor bias = bias_opt.has_value() ? *bias_opt : Tensor();
  const int nd = want_nd ? want_nd : int(weight.dim()) - 2;
  EMBER_CHECK(nd >= 1 && nd <= 3, "[", op,
              "] weight should have 3 to 5 dimensions (1-d to 3-d convolution), got weight of "
              "size ",
              weight.sizes());
  const bool unbatched = input.dim() == nd + 1;
  EMBER_CHECK(unbatched || input.dim() == nd + 2, "[", op, "] Expected ", nd + 1,
              "D (unbatched) or ", nd + 2, "D (batched) input to ", op,
              ", but got input of size: ", input.sizes());
  EMBER_CHECK(weight.dim() == nd + 2, "[", op, "] expected weight to be ", nd + 2,
              "-dimensional, but got weight of size ", weight.sizes());
  const ScalarType dt = input.dtype();
  EMBER_CHECK(
      dt == weight.dtype() && (!bias.defined() || bias.dtype() == dt), "[", op, "] Input type (",
      dtype_name(dt), ") and weight type (", dtype_name(weight.dtype()), ")",
      bias.defined() ? std::string(" and bias type (") + dtype_name(bias.dtype()) + ")" : "",
      " should be the same");
  EMBER_CHECK(
      input.device() == weight.device() && (!bias.defined() || bias.device() == input.device()),
      "[", op, "] Input (", input.device().str(), ") and weight (", weight.device().str(), ")",
      bias.defined() ? std::string(" and bias (") + bias.device().str() + ")" : "",
      " should be on the same device");
  // float16 convolutions exist on CUDA only (cuDNN), as in PyTorch.
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kBFloat16 || (dt == kHalf && input.is_cuda()),
              "[", op, "] \"slow_conv2d_cpu\" not implemented for '", dtype_name(dt),
              "' (supported: float32, float64, bfloat16)");
  EMBER_CHECK(groups > 0, "[", op, "] non-positive groups is not supported");
  ConvSpec s;
  s.groups = groups;
  s.stride = expand_param(stride_a, nd, op, "stride");
  s.pad_l = expand_param(pad_l_a, nd, op, "padding");
  s.pad_r = expand_param(pad_r_a, nd, op, "padding");
  s.dilation = expand_param(dilation_a, nd, op, "dilation");
  const DimVector out_pad = expand_param(output_padding_a, nd, op, "output_padding");
  for (int i = 0; i < nd; ++i) {
    EMBER_CHECK(s.stride[i] > 0, "[", op, "] non-positive stride is not supported");
    EMBER_CHECK(s.pad_l[i] >= 0 && s.pad_r[i] >= 0, "[", op, "] negative padding is not supported");
    EMBER_CHECK(s.dilation[i] > 0, "[", op, "] dilation should be greater than zero");
    if (transposed) {
      EMBER_CHECK(out_pad[i] >= 0, "[", op, "] negative output_padding is not supported");
      EMBER_CHECK(out_pad[i] < s.stride[i] || out_pad[i] < s.dilation[i], "[", op,
                  "] output padding must be smaller than either stride or dilation, but got "
                  "output_padding=",
                  IntArrayRef(out_pad), ", stride=", IntArrayRef(s.stride),
                  ", dilation=", IntArrayRef(s.dilation));
    }
  }
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  const int64_t cin = x.size(1);
  const int64_t w0 = weight.size(0);
  DimVector ksz;
  for (int i = 0; i < nd; ++i) ksz.push_back(weight.size(2 + i));
  if (!transposed) {
    EMBER_CHECK(w0 % groups == 0, "[", op, "] Given groups=", groups,
                ", expected weight to be divisible by ", groups,
                " at dimension 0, but got weight of size ", weight.sizes(), " instead");
    EMBER_CHECK(cin == weight.size(1) * groups, "[", op, "] Given groups=", groups,
                ", weight of size ", weight.sizes(), ", expected input", x.sizes(), " to have ",
                weight.size(1) * groups, " channels, but got ", cin, " channels instead");
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == w0), "[", op,
                "] Given weight of size ", weight.sizes(),
                ", expected bias to be 1-dimensional with ", w0, " elements, but got bias of size ",
                bias.sizes(), " instead");
    DimVector padded, extent;
    bool ok = true;
    for (int i = 0; i < nd; ++i) {
      padded.push_back(x.size(2 + i) + s.pad_l[i] + s.pad_r[i]);
      extent.push_back(s.dilation[i] * (ksz[i] - 1) + 1);
      ok = ok && padded.back() >= extent.back();
    }
    EMBER_CHECK(ok, "[", op, "] Calculated padded input size per channel: ", sizes_x(padded),
                ". Kernel size: ", sizes_x(extent),
                ". Kernel size can't be greater than actual input size");
    Tensor y = conv_forward(x, weight, bias, s);
    return unbatched ? y.squeeze(0) : y;
  }
  // Transposed: the adjoint (data gradient) of the convolution whose weight is `weight`.
  EMBER_CHECK(cin == w0, "[", op, "] Given transposed=1, weight of size ", weight.sizes(),
              ", expected input", x.sizes(), " to have ", w0, " channels, but got ", cin,
              " channels instead");
  EMBER_CHECK(w0 % groups == 0, "[", op, "] Given groups=", groups,
              ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  const int64_t cout = weight.size(1) * groups;
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == cout), "[", op,
              "] Given transposed=1, weight of size ", weight.sizes(),
              ", expected bias to be 1-dimensional with ", cout, " elements, but got bias of size ",
              bias.sizes(), " instead");
  DimVector xs{x.size(0), cout};
  for (int i = 0; i < nd; ++i) {
    const int64_t o = (x.size(2 + i) - 1) * s.stride[i] - s.pad_l[i] - s.pad_r[i] +
                      s.dilation[i] * (ksz[i] - 1) + out_pad[i] + 1;
    EMBER_CHECK(o > 0 && x.size(2 + i) > 0, "[", op, "] the output size is too small: input ",
                x.sizes(), ", weight ", weight.sizes(), " give spatial size ", o, " in dim ",
                2 + i);
    xs.push_back(o);
  }
  Tensor y = conv_backward_data(x, weight, s, xs);
  if (bias.defined()) y = y + bias.view(bias_view_shape(cout, nd));
  return unbatched ? y.squeeze(0) : y;
}

Tensor conv_nd(const char* op, int nd, const Tensor& input, const Tensor& weight,
               const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
               IntArrayRef dilation, int64_t groups) {
  return convolution_impl(op, input, weight, bias, stride, padding, padding, dilation, false, 0,
                          groups, nd);
}

Tensor conv_nd_mode(const char* op, int nd, const Tensor& input, const Tensor& weight,
                    const std::optional<Tensor>& bias, IntArrayRef stride, std::string_view padding,
                    IntArrayRef dilation, int64_t groups) {
  if (padding == "valid") return conv_nd(op, nd, input, weight, bias, stride, 0, dilation, groups);
  EMBER_CHECK(padding == "same", "[", op, "] Invalid padding string: '", padding,
              "' (expected 'same' or 'valid')");
  EMBER_CHECK(weight.defined() && weight.dim() == nd + 2, "[", op, "] expected weight to be ",
              nd + 2, "-dimensional");
  const DimVector st = expand_param(stride, nd, op, "stride");
  const DimVector dil = expand_param(dilation, nd, op, "dilation");
  for (int i = 0; i < nd; ++i)
    EMBER_CHECK(st[i] == 1, "[", op, "] padding='same' is not supported for strided convolutions");
  DimVector pl, pr;
  for (int i = 0; i < nd; ++i) {
    const int64_t total = dil[i] * (weight.size(2 + i) - 1);
    pl.push_back(total / 2);
    pr.push_back(total - total / 2);
  }
  return convolution_impl(op, input, weight, bias, st, pl, pr, dil, false, 0, groups, nd);
}

Tensor conv_transpose_nd(const char* op, int nd, const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return convolution_impl(op, input, weight, bias, stride, padding, padding, dilation, true,
                          output_padding, groups, nd);
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  EMBER_OP_CAST(convolution, convolution, input, weight, bias, stride, padding, dilation,
                transposed, output_padding, groups);
  return convolution_impl("convolution", input, weight, bias, stride, padding, padding, dilation,
                          transposed, output_padding.empty() ? IntArrayRef(0) : output_padding,
                          groups, 0);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  EMBER_OP_CAST(conv1d, conv1d, input, weight, bias, stride, padding, dilation, groups);
  return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  EMBER_OP_CAST(conv2d, conv2d, input, weight, bias, stride, padding, dilation, groups);
  return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  EMBER_OP_CAST(conv3d, conv3d, input, weight, bias, stride, padding, dilation, groups);
  return conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  EMBER_OP_CAST(conv1d_1, conv1d, input, weight, bias, stride, padding, dilation, groups);
  return conv_nd_mode("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  EMBER_OP_CAST(conv2d_1, conv2d, input, weight, bias, stride, padding, dilation, groups);
  return conv_nd_mode("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  EMBER_OP_CAST(conv3d_1, conv3d, input, weight, bias, stride, padding, dilation, groups);
  return conv_nd_mode("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  EMBER_OP_CAST(conv_transpose1d, conv_transpose1d, input, weight, bias, stride, padding,
                output_padding, groups, dilation);
  return conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  EMBER_OP_CAST(conv_transpose2d, conv_transpose2d, input, weight, bias, stride, padding,
                output_padding, groups, dilation);
  return conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  EMBER_OP_CAST(conv_transpose3d, conv_transpose3d, input, weight, bias, stride, padding,
                output_padding, groups, dilation);
  return conv_transpose_nd("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation);
}

}  // namespace ember
