// Convolution layers: PyTorch 1.13's _ConvNd (initialisation, padding modes, output_padding
// inference for transposed convolutions, and the repr that omits default arguments).
#include "ember/nn/modules/conv.h"

#include <cmath>

#include "ember/conv.h"
#include "ember/factory.h"
#include "ember/nn/init.h"
#include "ember/shape_ops.h"

namespace ember::nn {

namespace {
bool all_equal(IntArrayRef v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

void check_conv_args(const char* name, int64_t in, int64_t out, int64_t groups, IntArrayRef kernel,
                     IntArrayRef stride, IntArrayRef dilation) {
  EMBER_CHECK_VALUE(groups > 0, "[", name, "] groups must be a positive integer, got ", groups);
  EMBER_CHECK_VALUE(in >= 0 && out >= 0, "[", name,
                    "] in_channels and out_channels must be non-negative, got ", in, " and ", out);
  EMBER_CHECK_VALUE(in % groups == 0, "[", name, "] in_channels (", in,
                    ") must be divisible by groups (", groups, ")");
  EMBER_CHECK_VALUE(out % groups == 0, "[", name, "] out_channels (", out,
                    ") must be divisible by groups (", groups, ")");
  for (size_t i = 0; i < kernel.size(); ++i) {
    EMBER_CHECK_VALUE(kernel[i] > 0, "[", name, "] kernel_size must be positive, got ",
                      detail::repr_tuple(kernel));
    EMBER_CHECK_VALUE(stride[i] > 0, "[", name, "] stride must be positive, got ",
                      detail::repr_tuple(stride));
    EMBER_CHECK_VALUE(dilation[i] > 0, "[", name, "] dilation must be positive, got ",
                      detail::repr_tuple(dilation));
  }
}

// kaiming_uniform_(a = sqrt(5)) on the weight, the bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
void init_conv(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::_calculate_fan_in_and_fan_out(weight);
    (void)fan_out;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

std::string padding_mode_name(const detail::conv_padding_mode_t& m) { return enum_name(m); }
}  // namespace

// ---- ConvNd ----

template <size_t D, typename Derived>
ConvNdImpl<D, Derived>::ConvNdImpl(ConvOptions<D> options_) : options(std::move(options_)) {
  ConvNdImpl::reset();
}

template <size_t D, typename Derived>
void ConvNdImpl<D, Derived>::reset() {
  const auto& o = options;
  std::string name = "Conv" + std::to_string(D) + "d";
  check_conv_args(name.c_str(), o.in_channels(), o.out_channels(), o.groups(), o.kernel_size(),
                  o.stride(), o.dilation());
  reversed_padding_repeated_twice_.assign(2 * D, 0);
  if (const auto* pad = std::get_if<ExpandingArray<D>>(&o.padding())) {
    for (size_t d = 0; d < D; ++d) {
      EMBER_CHECK_VALUE((*pad)[d] >= 0, "[", name, "] padding must be non-negative, got ",
                        detail::repr_tuple(pad->ref()));
      reversed_padding_repeated_twice_[2 * (D - 1 - d)] = (*pad)[d];
      reversed_padding_repeated_twice_[2 * (D - 1 - d) + 1] = (*pad)[d];
    }
  } else if (std::holds_alternative<enumtype::kSame>(o.padding())) {
    EMBER_CHECK_VALUE(all_equal(o.stride(), 1), "[", name,
                      "] padding='same' is not supported for strided convolutions");
    // The odd extra element goes on the right, as PyTorch's 'same'.
    for (size_t d = 0; d < D; ++d) {
      int64_t total = o.dilation()[d] * (o.kernel_size()[d] - 1);
      reversed_padding_repeated_twice_[2 * (D - 1 - d)] = total / 2;
      reversed_padding_repeated_twice_[2 * (D - 1 - d) + 1] = total - total / 2;
    }
  }
  std::vector<int64_t> shape = {o.out_channels(), o.in_channels() / o.groups()};
  for (size_t d = 0; d < D; ++d) shape.push_back(o.kernel_size()[d]);
  weight = this->register_parameter("weight", ember::empty(shape));
  bias = this->register_parameter("bias", o.bias() ? ember::empty({o.out_channels()}) : Tensor(),
                                  o.bias());
  reset_parameters();
}

template <size_t D, typename Derived>
void ConvNdImpl<D, Derived>::reset_parameters() {
  init_conv(weight, bias);
}

template <size_t D, typename Derived>
std::string ConvNdImpl<D, Derived>::extra_repr() const {
  const auto& o = options;
  std::string s = std::to_string(o.in_channels()) + ", " + std::to_string(o.out_channels()) +
                  ", kernel_size=" + detail::repr_tuple(o.kernel_size()) +
                  ", stride=" + detail::repr_tuple(o.stride());
  if (const auto* pad = std::get_if<ExpandingArray<D>>(&o.padding())) {
    if (!all_equal(pad->ref(), 0)) s += ", padding=" + detail::repr_tuple(pad->ref());
  } else {
    s +=
        std::holds_alternative<enumtype::kSame>(o.padding()) ? ", padding=same" : ", padding=valid";
  }
  if (!all_equal(o.dilation(), 1)) s += ", dilation=" + detail::repr_tuple(o.dilation());
  if (o.groups() != 1) s += ", groups=" + std::to_string(o.groups());
  if (!o.bias()) s += ", bias=False";
  if (!std::holds_alternative<enumtype::kZeros>(o.padding_mode()))
    s += ", padding_mode=" + padding_mode_name(o.padding_mode());
  return s;
}

template <size_t D, typename Derived>
Tensor ConvNdImpl<D, Derived>::conv_forward(const Tensor& input, const Tensor& w, const Tensor& b) {
  std::optional<Tensor> ob = b.defined() ? std::optional<Tensor>(b) : std::nullopt;
  const auto& o = options;
  if (!std::holds_alternative<enumtype::kZeros>(o.padding_mode())) {
    Tensor padded =
        pad(input, reversed_padding_repeated_twice_, padding_mode_name(o.padding_mode()));
    return ember::convolution(padded, w, ob, o.stride(), std::vector<int64_t>(D, 0), o.dilation(),
                              false, std::vector<int64_t>(D, 0), o.groups());
  }
  functional::ConvFuncOptions<D> fo;
  fo.bias(b).stride(o.stride()).padding(o.padding()).dilation(o.dilation()).groups(o.groups());
  if constexpr (D == 1) return functional::conv1d(input, w, fo);
  if constexpr (D == 2) return functional::conv2d(input, w, fo);
  if constexpr (D == 3) return functional::conv3d(input, w, fo);
}

template class ConvNdImpl<1, Conv1dImpl>;
template class ConvNdImpl<2, Conv2dImpl>;
template class ConvNdImpl<3, Conv3dImpl>;

// ---- ConvTransposeNd ----

template <size_t D, typename Derived>
ConvTransposeNdImpl<D, Derived>::ConvTransposeNdImpl(ConvTransposeOptions<D> options_)
    : options(std::move(options_)) {
  ConvTransposeNdImpl::reset();
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::reset() {
  const auto& o = options;
  std::string name = "ConvTranspose" + std::to_string(D) + "d";
  check_conv_args(name.c_str(), o.in_channels(), o.out_channels(), o.groups(), o.kernel_size(),
                  o.stride(), o.dilation());
  EMBER_CHECK_VALUE(std::holds_alternative<enumtype::kZeros>(o.padding_mode()), "[", name,
                    "] Only \"zeros\" padding mode is supported for ", name);
  for (size_t d = 0; d < D; ++d) {
    EMBER_CHECK_VALUE(o.padding()[d] >= 0 && o.output_padding()[d] >= 0, "[", name,
                      "] padding and output_padding must be non-negative");
  }
  std::vector<int64_t> shape = {o.in_channels(), o.out_channels() / o.groups()};
  for (size_t d = 0; d < D; ++d) shape.push_back(o.kernel_size()[d]);
  weight = this->register_parameter("weight", ember::empty(shape));
  bias = this->register_parameter("bias", o.bias() ? ember::empty({o.out_channels()}) : Tensor(),
                                  o.bias());
  reset_parameters();
}

template <size_t D, typename Derived>
void ConvTransposeNdImpl<D, Derived>::reset_parameters() {
  init_conv(weight, bias);
}

template <size_t D, typename Derived>
std::string ConvTransposeNdImpl<D, Derived>::extra_repr() const {
  const auto& o = options;
  std::string s = std::to_string(o.in_channels()) + ", " + std::to_string(o.out_channels()) +
                  ", kernel_size=" + detail::repr_tuple(o.kernel_size()) +
                  ", stride=" + detail::repr_tuple(o.stride());
  if (!all_equal(o.padding(), 0)) s += ", padding=" + detail::repr_tuple(o.padding());
  if (!all_equal(o.dilation(), 1)) s += ", dilation=" + detail::repr_tuple(o.dilation());
  if (!all_equal(o.output_padding(), 0))
    s += ", output_padding=" + detail::repr_tuple(o.output_padding());
  if (o.groups() != 1) s += ", groups=" + std::to_string(o.groups());
  if (!o.bias()) s += ", bias=False";
  return s;
}

template <size_t D, typename Derived>
std::vector<int64_t> ConvTransposeNdImpl<D, Derived>::output_padding_for(
    const Tensor& input, const std::optional<std::vector<int64_t>>& size) const {
  const auto& o = options;
  if (!size) return o.output_padding().vec();
  std::string name = "ConvTranspose" + std::to_string(D) + "d";
  int64_t non_spatial = input.dim() == int64_t(D) + 2 ? 2 : 1;
  std::vector<int64_t> out = *size;
  if (int64_t(out.size()) == non_spatial + int64_t(D))
    out.erase(out.begin(), out.begin() + non_spatial);
  EMBER_CHECK_VALUE(out.size() == D, "[", name, "] ConvTranspose", D, "D: for ", input.dim(),
                    "D input, output_size must have ", D, " or ", non_spatial + int64_t(D),
                    " elements (got ", size->size(), ")");
  EMBER_CHECK_VALUE(input.dim() >= non_spatial + int64_t(D), "[", name, "] expected a ", D + 1,
                    "-D or ", D + 2, "-D input, got ", input.sizes());
  std::vector<int64_t> res(D);
  for (size_t d = 0; d < D; ++d) {
    int64_t min_size = (input.size(int64_t(d) + non_spatial) - 1) * o.stride()[d] -
                       2 * o.padding()[d] + o.dilation()[d] * (o.kernel_size()[d] - 1) + 1;
    int64_t max_size = min_size + o.stride()[d] - 1;
    EMBER_CHECK_VALUE(out[d] >= min_size && out[d] <= max_size, "[", name,
                      "] requested an output size of ", detail::repr_tuple(out),
                      ", but valid sizes range from ", min_size, " to ", max_size, " in dim ", d,
                      " (for an input of ", input.sizes(), ")");
    res[d] = out[d] - min_size;
  }
  return res;
}

template <size_t D, typename Derived>
Tensor ConvTransposeNdImpl<D, Derived>::forward(
    const Tensor& input, const std::optional<std::vector<int64_t>>& output_size) {
  const auto& o = options;
  std::vector<int64_t> output_padding = output_padding_for(input, output_size);
  std::optional<Tensor> ob = bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
  if constexpr (D == 1)
    return ember::conv_transpose1d(input, weight, ob, o.stride(), o.padding(), output_padding,
                                   o.groups(), o.dilation());
  if constexpr (D == 2)
    return ember::conv_transpose2d(input, weight, ob, o.stride(), o.padding(), output_padding,
                                   o.groups(), o.dilation());
  if constexpr (D == 3)
    return ember::conv_transpose3d(input, weight, ob, o.stride(), o.padding(), output_padding,
                                   o.groups(), o.dilation());
}

template class ConvTransposeNdImpl<1, ConvTranspose1dImpl>;
template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;
template class ConvTransposeNdImpl<3, ConvTranspose3dImpl>;

}  // namespace ember::nn
