#pragma once
/// Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (PyTorch 1.13's initialisation,
/// padding modes and reprs).

#include <optional>
#include <vector>

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/options/conv.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// The shared part of Conv1d/2d/3d: weight (out, in / groups, kernel...) from
/// kaiming_uniform_(a = sqrt(5)), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)). A padding_mode other
/// than kZeros pads the input with ember::pad first, then convolves without padding.
template <size_t D, typename Derived>
class ConvNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvNdImpl(ConvOptions<D> options);
  void reset() override;
  /// Redraws the weight and bias (PyTorch's reset_parameters).
  void reset_parameters();
  std::string extra_repr() const override;

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;  ///< undefined without bias

 protected:
  /// The convolution of an input already padded by the padding mode (if any).
  Tensor conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias);
  /// ember::pad's (left, right) pairs, last dim first, for a non-zeros padding_mode.
  std::vector<int64_t> reversed_padding_repeated_twice_;
};

/// 1-d convolution over (N, C, L) or (C, L).
class Conv1dImpl : public ConvNdImpl<1, Conv1dImpl> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv1dImpl(Conv1dOptions options) : ConvNdImpl(std::move(options)) {}
  Tensor forward(const Tensor& input) { return conv_forward(input, weight, bias); }
};
EMBER_MODULE(Conv1d);

/// 2-d convolution over (N, C, H, W) or (C, H, W).
class Conv2dImpl : public ConvNdImpl<2, Conv2dImpl> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(Conv2dOptions options) : ConvNdImpl(std::move(options)) {}
  Tensor forward(const Tensor& input) { return conv_forward(input, weight, bias); }
};
EMBER_MODULE(Conv2d);

/// 3-d convolution over (N, C, D, H, W) or (C, D, H, W).
class Conv3dImpl : public ConvNdImpl<3, Conv3dImpl> {
 public:
  Conv3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv3dImpl(Conv3dOptions options) : ConvNdImpl(std::move(options)) {}
  Tensor forward(const Tensor& input) { return conv_forward(input, weight, bias); }
};
EMBER_MODULE(Conv3d);

/// The shared part of ConvTranspose1d/2d/3d: weight (in, out / groups, kernel...), initialised
/// as the convolutions. forward(input, output_size) picks the output_padding that reaches
/// `output_size` (spatial sizes, or the full shape), as PyTorch.
template <size_t D, typename Derived>
class ConvTransposeNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvTransposeNdImpl(ConvTransposeOptions<D> options);
  void reset() override;
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);

  ConvTransposeOptions<D> options;
  Tensor weight;
  Tensor bias;

 protected:
  /// The output_padding giving `output_size` (ValueError when it is out of reach).
  std::vector<int64_t> output_padding_for(const Tensor& input,
                                          const std::optional<std::vector<int64_t>>& size) const;
};

class ConvTranspose1dImpl : public ConvTransposeNdImpl<1, ConvTranspose1dImpl> {
 public:
  ConvTranspose1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : ConvTranspose1dImpl(ConvTranspose1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose1dImpl(ConvTranspose1dOptions options)
      : ConvTransposeNdImpl(std::move(options)) {}
};
EMBER_MODULE(ConvTranspose1d);

class ConvTranspose2dImpl : public ConvTransposeNdImpl<2, ConvTranspose2dImpl> {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(ConvTranspose2dOptions options)
      : ConvTransposeNdImpl(std::move(options)) {}
};
EMBER_MODULE(ConvTranspose2d);

class ConvTranspose3dImpl : public ConvTransposeNdImpl<3, ConvTranspose3dImpl> {
 public:
  ConvTranspose3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : ConvTranspose3dImpl(ConvTranspose3dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose3dImpl(ConvTranspose3dOptions options)
      : ConvTransposeNdImpl(std::move(options)) {}
};
EMBER_MODULE(ConvTranspose3d);

}  // namespace ember::nn
