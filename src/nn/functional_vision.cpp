// ember::nn::functional resampling: F.interpolate's argument rules (PyTorch 1.13) dispatched
// to the ember upsample ops; fold/unfold and pixel shuffles unpack their Options.
#include "ember/nn/functional/vision.h"

#include <cmath>

#include "ember/conv.h"

namespace ember::nn::functional {

namespace {
template <typename T>
std::vector<T> expand(const std::vector<T>& v, int64_t dim, const char* what) {
  if (v.size() == 1) return std::vector<T>(size_t(dim), v[0]);
  EMBER_CHECK_VALUE(int64_t(v.size()) == dim, "[interpolate] Input and ", what,
                    " must have the same number of spatial dimensions, but got input with "
                    "spatial dimensions of ",
                    dim, " and ", what, " of length ", v.size(),
                    ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and ", what,
                    " in (o1, o2, ...,oK) format.");
  return v;
}
}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  std::string mode = enum_name(o.mode());
  bool interpolating =
      mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
  EMBER_CHECK_VALUE(interpolating || !o.align_corners().has_value(),
                    "[interpolate] align_corners option can only be set with the interpolating "
                    "modes: linear | bilinear | bicubic | trilinear");
  bool align = o.align_corners().value_or(false);
  EMBER_CHECK_T(NotImplementedError, !o.antialias(), "[interpolate] antialias is not supported");
  int64_t dim = input.dim() - 2;
  EMBER_CHECK_T(NotImplementedError, dim >= 1 && dim <= 3,
                "[interpolate] Input Error: Only 3D, 4D and 5D input Tensors supported (got ",
                input.dim(),
                "D) for the modes: nearest | linear | bilinear | bicubic | "
                "trilinear | area | nearest-exact (got ",
                mode, ")");
  EMBER_CHECK_VALUE(o.size().has_value() != o.scale_factor().has_value(),
                    o.size() ? "[interpolate] only one of size or scale_factor should be defined"
                             : "[interpolate] either size or scale_factor should be defined");
  bool recompute = o.recompute_scale_factor().value_or(false);
  EMBER_CHECK_VALUE(!(recompute && o.size()),
                    "[interpolate] recompute_scale_factor is not "
                    "meaningful with an explicit size.");
  std::vector<int64_t> out_size;
  std::vector<std::optional<double>> scales(size_t(dim), std::nullopt);
  if (o.size()) {
    out_size = expand(*o.size(), dim, "output size");
  } else {
    auto sf = expand(*o.scale_factor(), dim, "scale_factor");
    for (int64_t i = 0; i < dim; ++i) {
      out_size.push_back(int64_t(std::floor(double(input.size(i + 2)) * sf[size_t(i)])));
      if (!recompute) scales[size_t(i)] = sf[size_t(i)];
    }
  }
  auto need = [&](int64_t want) {
    EMBER_CHECK_T(NotImplementedError, dim + 2 == want, "[interpolate] Got ", input.dim(),
                  "D input, but ", mode, " mode needs ", want, "D input");
  };
  if (mode == "nearest" || mode == "nearest-exact") {
    bool exact = mode == "nearest-exact";
    if (dim == 1) return upsample_nearest1d(input, out_size, scales[0], exact);
    if (dim == 2) return upsample_nearest2d(input, out_size, scales[0], scales[1], exact);
    return upsample_nearest3d(input, out_size, scales[0], scales[1], scales[2], exact);
  }
  if (mode == "area") {
    if (dim == 1) return adaptive_avg_pool1d(input, out_size);
    if (dim == 2) return adaptive_avg_pool2d(input, out_size);
    return adaptive_avg_pool3d(input, out_size);
  }
  if (mode == "linear") {
    need(3);
    return upsample_linear1d(input, out_size, align, scales[0]);
  }
  if (mode == "bilinear") {
    need(4);
    return upsample_bilinear2d(input, out_size, align, scales[0], scales[1]);
  }
  if (mode == "bicubic") {
    need(4);
    return upsample_bicubic2d(input, out_size, align, scales[0], scales[1]);
  }
  need(5);
  return upsample_trilinear3d(input, out_size, align, scales[0], scales[1], scales[2]);
}

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& o) {
  return ember::pixel_shuffle(input, o.upscale_factor());
}

Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& o) {
  return ember::pixel_unshuffle(input, o.downscale_factor());
}

// A view as (N, g, C / g, *), swap the two channel dims, and flatten them back.
Tensor channel_shuffle(const Tensor& input, const ChannelShuffleFuncOptions& o) {
  int64_t g = o.groups();
  EMBER_CHECK(g > 0,
              "[channel_shuffle] Number of groups to divide channels in must be positive. Value "
              "of groups:",
              g);
  EMBER_CHECK(input.dim() > 2,
              "[channel_shuffle] channel_shuffle expects input to have at least 3 dimensions, "
              "but got input with sizes ",
              input.sizes());
  int64_t c = input.size(1);
  EMBER_CHECK(c % g == 0, "[channel_shuffle] Number of channels must be divisible by groups. Got ",
              c, " channels and ", g, " groups.");
  std::vector<int64_t> grouped = input.sizes().vec();
  grouped[1] = c / g;
  grouped.insert(grouped.begin() + 1, g);
  return input.reshape(grouped).transpose(1, 2).reshape(input.sizes());
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  EMBER_CHECK_T(NotImplementedError, input.dim() == 2 || input.dim() == 3,
                "[fold] Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                "supported (got ",
                input.dim(), "D)");
  return col2im(input, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  EMBER_CHECK_T(NotImplementedError, input.dim() == 3 || input.dim() == 4,
                "[unfold] Input Error: Only 3D or 4D input Tensors are supported (got ",
                input.dim(), "D)");
  return im2col(input, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

}  // namespace ember::nn::functional
