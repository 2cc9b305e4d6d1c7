// Upsample, PixelShuffle/Unshuffle, Fold/Unfold layers: forwards to ember::nn::functional and
// PyTorch 1.13's reprs ("scale_factor=2.0, mode=nearest").
#include "ember/nn/modules/upsampling.h"
#include "ember/nn/modules/fold.h"
#include "ember/nn/modules/pixelshuffle.h"

namespace ember::nn {

namespace F = functional;

namespace {
std::string size_repr(IntArrayRef v) {
  for (int64_t e : v)
    if (e != v[0]) return detail::repr_tuple(v);
  return std::to_string(v[0]);
}
}  // namespace

std::string UpsampleImpl::extra_repr() const {
  std::string s;
  if (options.scale_factor()) {
    const auto& f = *options.scale_factor();
    if (f.size() == 1) {
      s = "scale_factor=" + detail::repr_double(f[0]);
    } else {
      s = "scale_factor=(";
      for (size_t i = 0; i < f.size(); ++i) s += (i ? ", " : "") + detail::repr_double(f[i]);
      s += ")";
    }
  } else if (options.size()) {
    const auto& v = *options.size();
    s = "size=" + (v.size() == 1 ? std::to_string(v[0]) : detail::repr_tuple(v));
  } else {
    s = "size=None";
  }
  return s + ", mode=" + enum_name(options.mode());
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  F::InterpolateFuncOptions fo;
  fo.size(options.size())
      .scale_factor(options.scale_factor())
      .align_corners(options.align_corners());
  std::visit([&](auto m) { fo.mode(m); }, options.mode());
  return F::interpolate(input, fo);
}

std::string PixelShuffleImpl::extra_repr() const {
  return "upscale_factor=" + std::to_string(options.upscale_factor());
}
Tensor PixelShuffleImpl::forward(const Tensor& input) { return F::pixel_shuffle(input, options); }

std::string PixelUnshuffleImpl::extra_repr() const {
  return "downscale_factor=" + std::to_string(options.downscale_factor());
}
Tensor PixelUnshuffleImpl::forward(const Tensor& input) {
  return F::pixel_unshuffle(input, options);
}

std::string FoldImpl::extra_repr() const {
  return "output_size=" + size_repr(options.output_size()) +
         ", kernel_size=" + size_repr(options.kernel_size()) +
         ", dilation=" + size_repr(options.dilation()) +
         ", padding=" + size_repr(options.padding()) + ", stride=" + size_repr(options.stride());
}
Tensor FoldImpl::forward(const Tensor& input) { return F::fold(input, options); }

std::string UnfoldImpl::extra_repr() const {
  return "kernel_size=" + size_repr(options.kernel_size()) +
         ", dilation=" + size_repr(options.dilation()) +
         ", padding=" + size_repr(options.padding()) + ", stride=" + size_repr(options.stride());
}
Tensor UnfoldImpl::forward(const Tensor& input) { return F::unfold(input, options); }

}  // namespace ember::nn

namespace ember::nn {

std::string ChannelShuffleImpl::extra_repr() const {
  return "groups=" + std::to_string(options.groups());
}
Tensor ChannelShuffleImpl::forward(const Tensor& input) {
  return F::channel_shuffle(input, options);
}

}  // namespace ember::nn
