#pragma once
/// Options of the convolution layers and functions (libtorch's ConvOptions, ConvFuncOptions,
/// ConvTransposeOptions, ConvTransposeFuncOptions).

#include <initializer_list>
#include <variant>

#include "ember/nn/enum.h"
#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

namespace detail {
/// How a convolution layer pads its input before the (valid) convolution.
using conv_padding_mode_t =
    std::variant<enumtype::kZeros, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
/// Explicit per-dim padding, or "valid" (none) / "same" (output size = input size).
template <size_t D>
using conv_padding_t = std::variant<ExpandingArray<D>, enumtype::kValid, enumtype::kSame>;
}  // namespace detail

/// Sets a padding variant from a brace list (`.padding({1, 2})`), which a variant cannot take.
#define EMBER_CONV_PADDING_LIST_SETTER                                        \
 public:                                                                      \
  inline auto padding(std::initializer_list<int64_t> list)->decltype(*this) { \
    this->padding_ = ExpandingArray<D>(list);                                 \
    return *this;                                                             \
  }

/// `Conv2dOptions(in, out, 3).stride(2).padding(1).groups(2).bias(false)`.
template <size_t D>
struct ConvOptions {
  using padding_t = detail::conv_padding_t<D>;
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<D>(0);
  EMBER_CONV_PADDING_LIST_SETTER
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(detail::conv_padding_mode_t, padding_mode) = enumtype::kZeros{};
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

/// `ConvTranspose2dOptions(in, out, 3).stride(2).output_padding(1)`; only kZeros padding.
template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(detail::conv_padding_mode_t, padding_mode) = enumtype::kZeros{};
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

namespace functional {

/// `F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1))`.
template <size_t D>
struct ConvFuncOptions {
  using padding_t = detail::conv_padding_t<D>;
  EMBER_ARG(Tensor, bias);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<D>(0);
  EMBER_CONV_PADDING_LIST_SETTER
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

/// `F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().stride(2).output_padding(1))`.
template <size_t D>
struct ConvTransposeFuncOptions {
  EMBER_ARG(Tensor, bias);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;

}  // namespace functional

#undef EMBER_CONV_PADDING_LIST_SETTER

}  // namespace ember::nn
