// The binding of ember::nn::functional's convolution, pooling and resampling
// (ember._C._nn.functional) with torch.nn.functional's signatures (`return_indices` picks the
// *_with_indices form). The C++ functional forms hold the argument checks.
#include <cmath>

#include "nn_functional.h"

namespace ember::python::nnf {

namespace {

template <class F>
auto nogil(const Tensor& t, F&& f) {
  return maybe_without_gil(t.numel(), std::forward<F>(f));
}

py::object pair(std::tuple<Tensor, Tensor> r) {
  return py::make_tuple(wrap_obj(std::get<0>(r)), wrap_obj(std::get<1>(r)));
}

template <size_t D>
void def_conv(py::module_& f, const char* name,
              Tensor (*conv)(const Tensor&, const Tensor&, const F::ConvFuncOptions<D>&),
              const char* tname,
              Tensor (*convt)(const Tensor&, const Tensor&,
                              const F::ConvTransposeFuncOptions<D>&)) {
  f.def(name,
        keep_self(name,
                  [name, conv](const Tensor& input, const Tensor& weight, py::handle bias,
                               py::handle stride, py::handle padding, py::handle dilation,
                               int64_t groups) {
                    F::ConvFuncOptions<D> o;
                    o.bias(opt_tensor(bias, name, "bias"))
                        .stride(expanding<D>(stride, name, "stride"))
                        .dilation(expanding<D>(dilation, name, "dilation"))
                        .groups(groups);
                    if (PyUnicode_Check(padding.ptr())) {
                      std::string mode = padding.cast<std::string>();
                      if (mode == "same")
                        o.padding(enumtype::kSame{});
                      else if (mode == "valid")
                        o.padding(enumtype::kValid{});
                      else
                        EMBER_THROW(Error, "[", name, "] Invalid padding string '", mode,
                                    "', should be one of {'valid', 'same'}");
                    } else {
                      o.padding(expanding<D>(padding, name, "padding"));
                    }
                    return nogil(input, [&] { return conv(input, weight, o); });
                  }),
        arg("input"), arg("weight"), arg("bias") = py::none(), arg("stride") = 1,
        arg("padding") = 0, arg("dilation") = 1, arg("groups") = 1);
  f.def(tname,
        keep_self(tname,
                  [tname, convt](const Tensor& input, const Tensor& weight, py::handle bias,
                                 py::handle stride, py::handle padding, py::handle output_padding,
                                 int64_t groups, py::handle dilation) {
                    F::ConvTransposeFuncOptions<D> o;
                    o.bias(opt_tensor(bias, tname, "bias"))
                        .stride(expanding<D>(stride, tname, "stride"))
                        .padding(expanding<D>(padding, tname, "padding"))
                        .output_padding(expanding<D>(output_padding, tname, "output_padding"))
                        .groups(groups)
                        .dilation(expanding<D>(dilation, tname, "dilation"));
                    return nogil(input, [&] { return convt(input, weight, o); });
                  }),
        arg("input"), arg("weight"), arg("bias") = py::none(), arg("stride") = 1,
        arg("padding") = 0, arg("output_padding") = 0, arg("groups") = 1, arg("dilation") = 1);
}

// Pooling's stride: None (or an empty list) means the kernel size.
template <size_t D, class Options>
void set_stride(Options& o, py::handle stride, const char* fn) {
  if (stride.is_none()) return;
  if (PySequence_Check(stride.ptr()) && PySequence_Size(stride.ptr()) == 0) return;
  o.stride(expanding<D>(stride, fn, "stride"));
}

template <size_t D>
void def_pool(py::module_& f, const char* max_name, const char* with_name, const char* avg_name,
              const char* lp_name) {
  using MaxOptions = F::MaxPoolFuncOptions<D>;
  auto max_options = [](const char* fn, const Tensor&, py::handle kernel_size, py::handle stride,
                        py::handle padding, py::handle dilation, bool ceil_mode) {
    MaxOptions o(expanding<D>(kernel_size, fn, "kernel_size"));
    set_stride<D>(o, stride, fn);
    o.padding(expanding<D>(padding, fn, "padding"))
        .dilation(expanding<D>(dilation, fn, "dilation"))
        .ceil_mode(ceil_mode);
    return o;
  };
  auto max_with = [](const Tensor& input, const MaxOptions& o) {
    if constexpr (D == 1) return F::max_pool1d_with_indices(input, o);
    if constexpr (D == 2) return F::max_pool2d_with_indices(input, o);
    if constexpr (D == 3) return F::max_pool3d_with_indices(input, o);
  };
  auto max_only = [](const Tensor& input, const MaxOptions& o) {
    if constexpr (D == 1) return F::max_pool1d(input, o);
    if constexpr (D == 2) return F::max_pool2d(input, o);
    if constexpr (D == 3) return F::max_pool3d(input, o);
  };
  for (bool always_indices : {false, true}) {
    const char* name = always_indices ? with_name : max_name;
    f.def(
        name,
        [=](const Tensor& input, py::handle kernel_size, py::handle stride, py::handle padding,
            py::handle dilation, bool ceil_mode, bool return_indices) -> py::object {
          MaxOptions o =
              max_options(name, input, kernel_size, stride, padding, dilation, ceil_mode);
          if (always_indices || return_indices)
            return pair(nogil(input, [&] { return max_with(input, o); }));
          return wrap_obj(nogil(input, [&] { return max_only(input, o); }));
        },
        arg("input"), arg("kernel_size"), arg("stride") = py::none(), arg("padding") = 0,
        arg("dilation") = 1, arg("ceil_mode") = false, arg("return_indices") = false);
  }

  using AvgOptions = F::AvgPoolFuncOptions<D>;
  auto avg = [avg_name](const Tensor& input, py::handle kernel_size, py::handle stride,
                        py::handle padding, bool ceil_mode, bool count_include_pad,
                        std::optional<int64_t> divisor_override) {
    AvgOptions o(expanding<D>(kernel_size, avg_name, "kernel_size"));
    set_stride<D>(o, stride, avg_name);
    o.padding(expanding<D>(padding, avg_name, "padding"))
        .ceil_mode(ceil_mode)
        .count_include_pad(count_include_pad)
        .divisor_override(divisor_override);
    return nogil(input, [&] {
      if constexpr (D == 1) return F::avg_pool1d(input, o);
      if constexpr (D == 2) return F::avg_pool2d(input, o);
      if constexpr (D == 3) return F::avg_pool3d(input, o);
    });
  };
  if constexpr (D == 1) {
    // torch's avg_pool1d has no divisor_override.
    f.def(avg_name,
          keep_self(avg_name,
                    [avg](const Tensor& input, py::handle kernel_size, py::handle stride,
                          py::handle padding, bool ceil_mode, bool count_include_pad) {
                      return avg(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                 std::nullopt);
                    }),
          arg("input"), arg("kernel_size"), arg("stride") = py::none(), arg("padding") = 0,
          arg("ceil_mode") = false, arg("count_include_pad") = true);
  } else {
    f.def(avg_name, avg, arg("input"), arg("kernel_size"), arg("stride") = py::none(),
          arg("padding") = 0, arg("ceil_mode") = false, arg("count_include_pad") = true,
          arg("divisor_override") = py::none());
  }

  f.def(lp_name,
        keep_self(lp_name,
                  [lp_name](const Tensor& input, double norm_type, py::handle kernel_size,
                            py::handle stride, bool ceil_mode) {
                    nn::LPPoolOptions<D> o(norm_type,
                                           expanding<D>(kernel_size, lp_name, "kernel_size"));
                    set_stride<D>(o, stride, lp_name);
                    o.ceil_mode(ceil_mode);
                    if constexpr (D == 1) return F::lp_pool1d(input, o);
                    if constexpr (D == 2) return F::lp_pool2d(input, o);
                    if constexpr (D == 3) return F::lp_pool3d(input, o);
                  }),
        arg("input"), arg("norm_type"), arg("kernel_size"), arg("stride") = py::none(),
        arg("ceil_mode") = false);
}

// Adaptive output sizes: an int, or one entry per dim where None keeps the input's size.
template <size_t D>
ExpandingArrayWithOptionalElem<D> adaptive_size(py::handle o, const char* fn) {
  if (!PySequence_Check(o.ptr()) || is_tensor(o.ptr()))
    return ExpandingArrayWithOptionalElem<D>(
        std::optional<int64_t>(to_int(o.ptr(), fn, "output_size")));
  py::sequence s = py::reinterpret_borrow<py::sequence>(o);
  std::vector<std::optional<int64_t>> v;
  for (py::handle e : s)
    v.push_back(e.is_none() ? std::nullopt
                            : std::optional<int64_t>(to_int(e.ptr(), fn, "output_size")));
  if (v.size() == 1) return ExpandingArrayWithOptionalElem<D>(v[0]);
  return ExpandingArrayWithOptionalElem<D>(v);
}

template <size_t D>
void def_adaptive(py::module_& f, const char* avg_name, const char* max_name,
                  const char* with_name) {
  using Size = std::conditional_t<D == 1, ExpandingArray<1>, ExpandingArrayWithOptionalElem<D>>;
  auto size = [](py::handle o, const char* fn) -> Size {
    if constexpr (D == 1)
      return expanding<1>(o, fn, "output_size");
    else
      return adaptive_size<D>(o, fn);
  };
  f.def(avg_name,
        keep_self(avg_name,
                  [=](const Tensor& input, py::handle output_size) {
                    nn::AdaptiveAvgPoolOptions<Size> o(size(output_size, avg_name));
                    return nogil(input, [&] {
                      if constexpr (D == 1) return F::adaptive_avg_pool1d(input, o);
                      if constexpr (D == 2) return F::adaptive_avg_pool2d(input, o);
                      if constexpr (D == 3) return F::adaptive_avg_pool3d(input, o);
                    });
                  }),
        arg("input"), arg("output_size"));
  for (bool always_indices : {false, true}) {
    const char* name = always_indices ? with_name : max_name;
    f.def(
        name,
        [=](const Tensor& input, py::handle output_size, bool return_indices) -> py::object {
          nn::AdaptiveMaxPoolOptions<Size> o(size(output_size, name));
          auto r = nogil(input, [&] {
            if constexpr (D == 1) return F::adaptive_max_pool1d_with_indices(input, o);
            if constexpr (D == 2) return F::adaptive_max_pool2d_with_indices(input, o);
            if constexpr (D == 3) return F::adaptive_max_pool3d_with_indices(input, o);
          });
          if (always_indices || return_indices) return pair(r);
          return wrap_obj(std::get<0>(r));
        },
        arg("input"), arg("output_size"), arg("return_indices") = false);
  }
}

template <size_t D>
void def_unpool(py::module_& f, const char* name) {
  f.def(name,
        keep_self(name,
                  [name](const Tensor& input, py::handle indices_obj, py::handle kernel_size,
                         py::handle stride, py::handle padding, py::handle output_size) {
                    const Tensor& indices = tensor_arg(indices_obj, name, "indices");
                    F::MaxUnpoolFuncOptions<D> o(expanding<D>(kernel_size, name, "kernel_size"));
                    set_stride<D>(o, stride, name);
                    o.padding(expanding<D>(padding, name, "padding"));
                    if (!output_size.is_none())
                      o.output_size(int_vector(output_size, name, "output_size"));
                    if constexpr (D == 1) return F::max_unpool1d(input, indices, o);
                    if constexpr (D == 2) return F::max_unpool2d(input, indices, o);
                    if constexpr (D == 3) return F::max_unpool3d(input, indices, o);
                  }),
        arg("input"), arg("indices"), arg("kernel_size"), arg("stride") = py::none(),
        arg("padding") = 0, arg("output_size") = py::none());
}

F::InterpolateFuncOptions::mode_t interp_mode(const std::string& mode, const Tensor& input) {
  if (mode == "nearest") return enumtype::kNearest{};
  if (mode == "nearest-exact") return enumtype::kNearestExact{};
  if (mode == "linear") return enumtype::kLinear{};
  if (mode == "bilinear") return enumtype::kBilinear{};
  if (mode == "bicubic") return enumtype::kBicubic{};
  if (mode == "trilinear") return enumtype::kTrilinear{};
  EMBER_CHECK_T(NotImplementedError, mode == "area",
                "[interpolate] Input Error: Only 3D, 4D and 5D input Tensors supported (got ",
                input.dim(),
                "D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                "nearest-exact (got ",
                mode, ")");
  return enumtype::kArea{};
}

// F.interpolate's arguments: an int size or scale applies to every spatial dim; a sequence
// must have one entry per spatial dim (the functional checks its length).
Tensor interpolate(const Tensor& input, py::handle size, py::handle scale_factor,
                   const std::string& mode, std::optional<bool> align_corners,
                   std::optional<bool> recompute_scale_factor, bool antialias) {
  const char* fn = "interpolate";
  const int64_t spatial = std::max<int64_t>(input.dim() - 2, 1);
  F::InterpolateFuncOptions o;
  o.mode(interp_mode(mode, input))
      .align_corners(align_corners)
      .recompute_scale_factor(recompute_scale_factor)
      .antialias(antialias);
  if (!size.is_none()) {
    if (PySequence_Check(size.ptr()) && !is_tensor(size.ptr())) {
      DimVector v = to_int_list(size.ptr(), fn, "size");
      o.size(std::vector<int64_t>(v.begin(), v.end()));
    } else {
      o.size(std::vector<int64_t>(size_t(spatial), to_int(size.ptr(), fn, "size")));
    }
  }
  if (!scale_factor.is_none()) {
    std::vector<double> s;
    if (PySequence_Check(scale_factor.ptr()) && !is_tensor(scale_factor.ptr())) {
      for (py::handle e : py::reinterpret_borrow<py::sequence>(scale_factor))
        s.push_back(to_double(e.ptr(), fn, "scale_factor"));
    } else {
      s.assign(size_t(spatial), to_double(scale_factor.ptr(), fn, "scale_factor"));
    }
    o.scale_factor(s);
  }
  return nogil(input, [&] { return F::interpolate(input, o); });
}

}  // namespace

void init_conv_pool(py::module_& f) {
  def_conv<1>(f, "conv1d", &F::conv1d, "conv_transpose1d", &F::conv_transpose1d);
  def_conv<2>(f, "conv2d", &F::conv2d, "conv_transpose2d", &F::conv_transpose2d);
  def_conv<3>(f, "conv3d", &F::conv3d, "conv_transpose3d", &F::conv_transpose3d);

  def_pool<1>(f, "max_pool1d", "max_pool1d_with_indices", "avg_pool1d", "lp_pool1d");
  def_pool<2>(f, "max_pool2d", "max_pool2d_with_indices", "avg_pool2d", "lp_pool2d");
  def_pool<3>(f, "max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "lp_pool3d");
  def_adaptive<1>(f, "adaptive_avg_pool1d", "adaptive_max_pool1d",
                  "adaptive_max_pool1d_with_indices");
  def_adaptive<2>(f, "adaptive_avg_pool2d", "adaptive_max_pool2d",
                  "adaptive_max_pool2d_with_indices");
  def_adaptive<3>(f, "adaptive_avg_pool3d", "adaptive_max_pool3d",
                  "adaptive_max_pool3d_with_indices");
  def_unpool<1>(f, "max_unpool1d");
  def_unpool<2>(f, "max_unpool2d");
  def_unpool<3>(f, "max_unpool3d");

  // ---- sliding blocks ----
  f.def("unfold",
        keep_self("unfold",
                  [](const Tensor& input, py::handle kernel_size, py::handle dilation,
                     py::handle padding, py::handle stride) {
                    const char* fn = "unfold";
                    return nogil(input, [&] {
                      return F::unfold(
                          input, F::UnfoldFuncOptions(expanding<2>(kernel_size, fn, "kernel_size"))
                                     .dilation(expanding<2>(dilation, fn, "dilation"))
                                     .padding(expanding<2>(padding, fn, "padding"))
                                     .stride(expanding<2>(stride, fn, "stride")));
                    });
                  }),
        arg("input"), arg("kernel_size"), arg("dilation") = 1, arg("padding") = 0,
        arg("stride") = 1);
  f.def("fold",
        keep_self("fold",
                  [](const Tensor& input, py::handle output_size, py::handle kernel_size,
                     py::handle dilation, py::handle padding, py::handle stride) {
                    const char* fn = "fold";
                    return nogil(input, [&] {
                      return F::fold(
                          input, F::FoldFuncOptions(expanding<2>(output_size, fn, "output_size"),
                                                    expanding<2>(kernel_size, fn, "kernel_size"))
                                     .dilation(expanding<2>(dilation, fn, "dilation"))
                                     .padding(expanding<2>(padding, fn, "padding"))
                                     .stride(expanding<2>(stride, fn, "stride")));
                    });
                  }),
        arg("input"), arg("output_size"), arg("kernel_size"), arg("dilation") = 1,
        arg("padding") = 0, arg("stride") = 1);

  // ---- resampling ----
  f.def("interpolate", &interpolate, arg("input"), arg("size") = py::none(),
        arg("scale_factor") = py::none(), arg("mode") = "nearest",
        arg("align_corners") = py::none(), arg("recompute_scale_factor") = py::none(),
        arg("antialias") = false);
  // The deprecated names, with torch's warnings.
  f.def("upsample",
        keep_self(
            "upsample",
            [](const Tensor& input, py::handle size, py::handle scale_factor,
               const std::string& mode, std::optional<bool> align_corners) {
              nn::warn(
                  "nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.");
              return interpolate(input, size, scale_factor, mode, align_corners, std::nullopt,
                                 false);
            }),
        arg("input"), arg("size") = py::none(), arg("scale_factor") = py::none(),
        arg("mode") = "nearest", arg("align_corners") = py::none());
  f.def(
      "upsample_nearest",
      keep_self("upsample_nearest",
                [](const Tensor& input, py::handle size, py::handle scale_factor) {
                  nn::warn(
                      "nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                      "instead.");
                  return interpolate(input, size, scale_factor, "nearest", std::nullopt,
                                     std::nullopt, false);
                }),
      arg("input"), arg("size") = py::none(), arg("scale_factor") = py::none());
  f.def("upsample_bilinear",
        keep_self(
            "upsample_bilinear",
            [](const Tensor& input, py::handle size, py::handle scale_factor) {
              nn::warn(
                  "nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.");
              return interpolate(input, size, scale_factor, "bilinear", true, std::nullopt, false);
            }),
        arg("input"), arg("size") = py::none(), arg("scale_factor") = py::none());
  f.def("pixel_shuffle",
        keep_self("pixel_shuffle",
                  [](const Tensor& input, int64_t upscale_factor) {
                    return F::pixel_shuffle(input, F::PixelShuffleFuncOptions(upscale_factor));
                  }),
        arg("input"), arg("upscale_factor"));
  f.def("pixel_unshuffle",
        keep_self("pixel_unshuffle",
                  [](const Tensor& input, int64_t downscale_factor) {
                    return F::pixel_unshuffle(input,
                                              F::PixelUnshuffleFuncOptions(downscale_factor));
                  }),
        arg("input"), arg("downscale_factor"));
  f.def("channel_shuffle",
        keep_self("channel_shuffle",
                  [](const Tensor& input, int64_t groups) {
                    return F::channel_shuffle(input, F::ChannelShuffleFuncOptions(groups));
                  }),
        arg("input"), arg("groups"));
}

}  // namespace ember::python::nnf

namespace ember::python {
void init_conv(py::module_& m) {
  py::module_ f = m.def_submodule("_nn", "kernels behind ember.nn").def_submodule("functional");
  nnf::init_conv_pool(f);
}
}  // namespace ember::python
