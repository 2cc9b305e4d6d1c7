// ember::nn::functional convolutions: unpack the Options into the ember conv ops.
#include "ember/nn/functional/conv.h"

#include "ember/conv.h"

namespace ember::nn::functional {

namespace {
std::optional<Tensor> opt_bias(const Tensor& bias) {
  return bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
}

template <size_t D, typename Fn, typename FnStr>
Tensor conv_nd(const Tensor& input, const Tensor& weight, const ConvFuncOptions<D>& o, Fn fn,
               FnStr fn_str) {
  if (const auto* pad = std::get_if<ExpandingArray<D>>(&o.padding()))
    return fn(input, weight, opt_bias(o.bias()), o.stride().ref(), pad->ref(), o.dilation().ref(),
              o.groups());
  std::string_view mode = std::holds_alternative<enumtype::kSame>(o.padding()) ? "same" : "valid";
  return fn_str(input, weight, opt_bias(o.bias()), o.stride().ref(), mode, o.dilation().ref(),
                o.groups());
}
}  // namespace

#define EMBER_FUNCTIONAL_CONV(N)                                                                \
  Tensor conv##N##d(const Tensor& input, const Tensor& weight,                                  \
                    const Conv##N##dFuncOptions& options) {                                     \
    return conv_nd<N>(                                                                          \
        input, weight, options,                                                                 \
        [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, IntArrayRef s,     \
           IntArrayRef p, IntArrayRef d,                                                        \
           int64_t g) { return ember::conv##N##d(x, w, b, s, p, d, g); },                       \
        [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, IntArrayRef s,     \
           std::string_view p, IntArrayRef d,                                                   \
           int64_t g) { return ember::conv##N##d(x, w, b, s, p, d, g); });                      \
  }                                                                                             \
  Tensor conv_transpose##N##d(const Tensor& input, const Tensor& weight,                        \
                              const ConvTranspose##N##dFuncOptions& o) {                        \
    return ember::conv_transpose##N##d(input, weight, opt_bias(o.bias()), o.stride().ref(),     \
                                       o.padding().ref(), o.output_padding().ref(), o.groups(), \
                                       o.dilation().ref());                                     \
  }
EMBER_FUNCTIONAL_CONV(1)
EMBER_FUNCTIONAL_CONV(2)
EMBER_FUNCTIONAL_CONV(3)
#undef EMBER_FUNCTIONAL_CONV

}  // namespace ember::nn::functional
