// The binding of convolution, pooling and resampling (ember._C._nn); ember.nn.functional wraps
// these with torch.nn.functional's signatures (python/ember/nn/_functional_conv.py).
#include "ember/conv.h"
#include "pyember.h"

namespace ember::python {

namespace {
using py::arg;

/// An int or a sequence of ints.
DimVector ints(py::handle h, const char* fn, const char* name) {
  if (h.is_none()) return {};
  if (PyLong_Check(h.ptr())) return {to_int(h.ptr(), fn, name)};
  return to_int_list(h.ptr(), fn, name);
}

std::optional<double> opt_double(py::handle h, const char* fn, const char* name) {
  if (h.is_none()) return std::nullopt;
  return to_double(h.ptr(), fn, name);
}

template <class F>
auto nogil(const Tensor& t, F&& f) {
  return maybe_without_gil(t.numel(), std::forward<F>(f));
}

py::tuple pair(std::tuple<Tensor, Tensor> r) {
  return py::make_tuple(wrap_obj(std::get<0>(r)), wrap_obj(std::get<1>(r)));
}
}  // namespace

void init_conv(py::module_& m) {
  py::module_ nn = m.def_submodule("_nn", "kernels behind ember.nn.functional");

  using ConvFn = Tensor (*)(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef,
                            IntArrayRef, IntArrayRef, int64_t);
  using ConvModeFn = Tensor (*)(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                                IntArrayRef, std::string_view, IntArrayRef, int64_t);
  struct ConvDef {
    const char* name;
    ConvFn f;
    ConvModeFn fm;
  };
  static const ConvDef convs[] = {
      {"conv1d", &conv1d, &conv1d}, {"conv2d", &conv2d, &conv2d}, {"conv3d", &conv3d, &conv3d}};
  for (const ConvDef& d : convs) {
    nn.def(
        d.name,
        [d](const Tensor& input, const Tensor& weight, std::optional<Tensor> bias,
            py::handle stride, py::handle padding, py::handle dilation, int64_t groups) {
          DimVector st = ints(stride, d.name, "stride"), di = ints(dilation, d.name, "dilation");
          if (PyUnicode_Check(padding.ptr())) {
            std::string mode = padding.cast<std::string>();
            return nogil(input, [&] { return d.fm(input, weight, bias, st, mode, di, groups); });
          }
          DimVector pa = ints(padding, d.name, "padding");
          return nogil(input, [&] { return d.f(input, weight, bias, st, pa, di, groups); });
        },
        arg("input"), arg("weight"), arg("bias") = py::none(), arg("stride") = 1,
        arg("padding") = 0, arg("dilation") = 1, arg("groups") = 1);
  }

  using ConvTFn = Tensor (*)(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                             IntArrayRef, IntArrayRef, IntArrayRef, int64_t, IntArrayRef);
  static const std::pair<const char*, ConvTFn> convts[] = {{"conv_transpose1d", &conv_transpose1d},
                                                           {"conv_transpose2d", &conv_transpose2d},
                                                           {"conv_transpose3d", &conv_transpose3d}};
  for (const auto& [name, f] : convts) {
    nn.def(
        name,
        [name = name, f = f](const Tensor& input, const Tensor& weight, std::optional<Tensor> bias,
                             py::handle stride, py::handle padding, py::handle output_padding,
                             int64_t groups, py::handle dilation) {
          DimVector st = ints(stride, name, "stride"), pa = ints(padding, name, "padding"),
                    op = ints(output_padding, name, "output_padding"),
                    di = ints(dilation, name, "dilation");
          return nogil(input, [&] { return f(input, weight, bias, st, pa, op, groups, di); });
        },
        arg("input"), arg("weight"), arg("bias") = py::none(), arg("stride") = 1,
        arg("padding") = 0, arg("output_padding") = 0, arg("groups") = 1, arg("dilation") = 1);
  }

  nn.def(
      "convolution",
      [](const Tensor& input, const Tensor& weight, std::optional<Tensor> bias, py::handle stride,
         py::handle padding, py::handle dilation, bool transposed, py::handle output_padding,
         int64_t groups) {
        const char* fn = "convolution";
        DimVector st = ints(stride, fn, "stride"), pa = ints(padding, fn, "padding"),
                  di = ints(dilation, fn, "dilation"),
                  op = ints(output_padding, fn, "output_padding");
        return nogil(input, [&] {
          return convolution(input, weight, bias, st, pa, di, transposed, op, groups);
        });
      },
      arg("input"), arg("weight"), arg("bias"), arg("stride"), arg("padding"), arg("dilation"),
      arg("transposed"), arg("output_padding"), arg("groups"));

  // ---- pooling ----
  using MaxFn = std::tuple<Tensor, Tensor> (*)(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef,
                                               IntArrayRef, bool);
  static const std::pair<const char*, MaxFn> maxes[] = {
      {"max_pool1d_with_indices", &max_pool1d_with_indices},
      {"max_pool2d_with_indices", &max_pool2d_with_indices},
      {"max_pool3d_with_indices", &max_pool3d_with_indices}};
  for (const auto& [name, f] : maxes) {
    nn.def(
        name,
        [name = name, f = f](const Tensor& input, py::handle kernel_size, py::handle stride,
                             py::handle padding, py::handle dilation, bool ceil_mode) {
          DimVector k = ints(kernel_size, name, "kernel_size"), st = ints(stride, name, "stride"),
                    pa = ints(padding, name, "padding"), di = ints(dilation, name, "dilation");
          return pair(nogil(input, [&] { return f(input, k, st, pa, di, ceil_mode); }));
        },
        arg("input"), arg("kernel_size"), arg("stride") = py::none(), arg("padding") = 0,
        arg("dilation") = 1, arg("ceil_mode") = false);
  }
  using MaxOnlyFn =
      Tensor (*)(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool);
  static const std::pair<const char*, MaxOnlyFn> max_only[] = {
      {"max_pool1d", &max_pool1d}, {"max_pool2d", &max_pool2d}, {"max_pool3d", &max_pool3d}};
  for (const auto& [name, f] : max_only) {
    nn.def(
        name,
        [name = name, f = f](const Tensor& input, py::handle kernel_size, py::handle stride,
                             py::handle padding, py::handle dilation, bool ceil_mode) {
          DimVector k = ints(kernel_size, name, "kernel_size"), st = ints(stride, name, "stride"),
                    pa = ints(padding, name, "padding"), di = ints(dilation, name, "dilation");
          return nogil(input, [&] { return f(input, k, st, pa, di, ceil_mode); });
        },
        arg("input"), arg("kernel_size"), arg("stride") = py::none(), arg("padding") = 0,
        arg("dilation") = 1, arg("ceil_mode") = false);
  }
  using AvgFn = Tensor (*)(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool,
                           std::optional<int64_t>);
  static const std::pair<const char*, AvgFn> avgs[] = {
      {"avg_pool1d", &avg_pool1d}, {"avg_pool2d", &avg_pool2d}, {"avg_pool3d", &avg_pool3d}};
  for (const auto& [name, f] : avgs) {
    nn.def(
        name,
        [name = name, f = f](const Tensor& input, py::handle kernel_size, py::handle stride,
                             py::handle padding, bool ceil_mode, bool count_include_pad,
                             std::optional<int64_t> divisor_override) {
          DimVector k = ints(kernel_size, name, "kernel_size"), st = ints(stride, name, "stride"),
                    pa = ints(padding, name, "padding");
          return nogil(input, [&] {
            return f(input, k, st, pa, ceil_mode, count_include_pad, divisor_override);
          });
        },
        arg("input"), arg("kernel_size"), arg("stride") = py::none(), arg("padding") = 0,
        arg("ceil_mode") = false, arg("count_include_pad") = true,
        arg("divisor_override") = py::none());
  }
  using AdaptFn = Tensor (*)(const Tensor&, IntArrayRef);
  static const std::pair<const char*, AdaptFn> aavg[] = {
      {"adaptive_avg_pool1d", &adaptive_avg_pool1d},
      {"adaptive_avg_pool2d", &adaptive_avg_pool2d},
      {"adaptive_avg_pool3d", &adaptive_avg_pool3d}};
  for (const auto& [name, f] : aavg) {
    nn.def(
        name,
        [name = name, f = f](const Tensor& input, py::handle output_size) {
          DimVector o = ints(output_size, name, "output_size");
          return nogil(input, [&] { return f(input, o); });
        },
        arg("input"), arg("output_size"));
  }
  using AdaptMaxFn = std::tuple<Tensor, Tensor> (*)(const Tensor&, IntArrayRef);
  static const std::pair<const char*, AdaptMaxFn> amax[] = {
      {"adaptive_max_pool1d", &adaptive_max_pool1d},
      {"adaptive_max_pool2d", &adaptive_max_pool2d},
      {"adaptive_max_pool3d", &adaptive_max_pool3d}};
  for (const auto& [name, f] : amax) {
    nn.def(
        name,
        [name = name, f = f](const Tensor& input, py::handle output_size) {
          DimVector o = ints(output_size, name, "output_size");
          return pair(nogil(input, [&] { return f(input, o); }));
        },
        arg("input"), arg("output_size"));
  }
  nn.def(
      "max_unpool1d",
      [](const Tensor& input, const Tensor& indices, py::handle output_size) {
        return max_unpool1d(input, indices, ints(output_size, "max_unpool1d", "output_size"));
      },
      arg("input"), arg("indices"), arg("output_size"));
  nn.def(
      "max_unpool2d",
      [](const Tensor& input, const Tensor& indices, py::handle output_size) {
        return max_unpool2d(input, indices, ints(output_size, "max_unpool2d", "output_size"));
      },
      arg("input"), arg("indices"), arg("output_size"));
  nn.def(
      "max_unpool3d",
      [](const Tensor& input, const Tensor& indices, py::handle output_size, py::handle stride,
         py::handle padding) {
        const char* fn = "max_unpool3d";
        return max_unpool3d(input, indices, ints(output_size, fn, "output_size"),
                            ints(stride, fn, "stride"), ints(padding, fn, "padding"));
      },
      arg("input"), arg("indices"), arg("output_size"), arg("stride") = 1, arg("padding") = 0);

  // ---- sliding blocks ----
  nn.def(
      "im2col",
      [](const Tensor& input, py::handle kernel_size, py::handle dilation, py::handle padding,
         py::handle stride) {
        const char* fn = "im2col";
        DimVector k = ints(kernel_size, fn, "kernel_size"), d = ints(dilation, fn, "dilation"),
                  p = ints(padding, fn, "padding"), s = ints(stride, fn, "stride");
        return nogil(input, [&] { return im2col(input, k, d, p, s); });
      },
      arg("input"), arg("kernel_size"), arg("dilation"), arg("padding"), arg("stride"));
  nn.def(
      "col2im",
      [](const Tensor& input, py::handle output_size, py::handle kernel_size, py::handle dilation,
         py::handle padding, py::handle stride) {
        const char* fn = "col2im";
        DimVector o = ints(output_size, fn, "output_size"),
                  k = ints(kernel_size, fn, "kernel_size"), d = ints(dilation, fn, "dilation"),
                  p = ints(padding, fn, "padding"), s = ints(stride, fn, "stride");
        return nogil(input, [&] { return col2im(input, o, k, d, p, s); });
      },
      arg("input"), arg("output_size"), arg("kernel_size"), arg("dilation"), arg("padding"),
      arg("stride"));

  // ---- resampling: one entry with the mode name, as F.interpolate dispatches ----
  nn.def(
      "upsample",
      [](const Tensor& input, py::handle output_size, const std::string& mode,
         std::optional<bool> align_corners, py::handle scales) {
        const char* fn = "interpolate";
        DimVector o = ints(output_size, fn, "output_size");
        std::vector<std::optional<double>> sc;
        if (!scales.is_none())
          for (py::handle s : scales) sc.push_back(opt_double(s, fn, "scale_factor"));
        sc.resize(3);
        const bool ac = align_corners.value_or(false);
        return nogil(input, [&]() -> Tensor {
          const int64_t nd = input.dim() - 2;
          if (mode == "nearest" || mode == "nearest-exact") {
            const bool ex = mode == "nearest-exact";
            if (nd == 1) return upsample_nearest1d(input, o, sc[0], ex);
            if (nd == 2) return upsample_nearest2d(input, o, sc[0], sc[1], ex);
            return upsample_nearest3d(input, o, sc[0], sc[1], sc[2], ex);
          }
          if (mode == "linear") return upsample_linear1d(input, o, ac, sc[0]);
          if (mode == "bilinear") return upsample_bilinear2d(input, o, ac, sc[0], sc[1]);
          if (mode == "bicubic") return upsample_bicubic2d(input, o, ac, sc[0], sc[1]);
          if (mode == "trilinear") return upsample_trilinear3d(input, o, ac, sc[0], sc[1], sc[2]);
          EMBER_THROW(NotImplementedError, "[interpolate] unsupported mode '", mode, "'");
        });
      },
      arg("input"), arg("output_size"), arg("mode"), arg("align_corners") = py::none(),
      arg("scales") = py::none());

  nn.def(
      "pixel_shuffle", [](const Tensor& input, int64_t r) { return pixel_shuffle(input, r); },
      arg("input"), arg("upscale_factor"));
  nn.def(
      "pixel_unshuffle", [](const Tensor& input, int64_t r) { return pixel_unshuffle(input, r); },
      arg("input"), arg("downscale_factor"));
}

}  // namespace ember::python
