#pragma once
/// Enum-like option values of the nn API (libtorch's torch::enumtype): `ember::kMean`,
/// `ember::kZeros`, ... each its own type, combined into std::variant option types.

#include <string>
#include <variant>

namespace ember {
namespace enumtype {
#define EMBER_ENUM_DECLARE(name, str)                    \
  struct k##name {                                       \
    static constexpr const char* value() { return str; } \
  };
EMBER_ENUM_DECLARE(None, "none")
EMBER_ENUM_DECLARE(Mean, "mean")
EMBER_ENUM_DECLARE(Sum, "sum")
EMBER_ENUM_DECLARE(Max, "max")
EMBER_ENUM_DECLARE(BatchMean, "batchmean")
EMBER_ENUM_DECLARE(Constant, "constant")
EMBER_ENUM_DECLARE(Zeros, "zeros")
EMBER_ENUM_DECLARE(Reflect, "reflect")
EMBER_ENUM_DECLARE(Replicate, "replicate")
EMBER_ENUM_DECLARE(Circular, "circular")
EMBER_ENUM_DECLARE(Same, "same")
EMBER_ENUM_DECLARE(Valid, "valid")
EMBER_ENUM_DECLARE(Nearest, "nearest")
EMBER_ENUM_DECLARE(NearestExact, "nearest-exact")
EMBER_ENUM_DECLARE(Linear, "linear")
EMBER_ENUM_DECLARE(Bilinear, "bilinear")
EMBER_ENUM_DECLARE(Bicubic, "bicubic")
EMBER_ENUM_DECLARE(Trilinear, "trilinear")
EMBER_ENUM_DECLARE(Area, "area")
EMBER_ENUM_DECLARE(FanIn, "fan_in")
EMBER_ENUM_DECLARE(FanOut, "fan_out")
EMBER_ENUM_DECLARE(Conv1D, "conv1d")
EMBER_ENUM_DECLARE(Conv2D, "conv2d")
EMBER_ENUM_DECLARE(Conv3D, "conv3d")
EMBER_ENUM_DECLARE(ConvTranspose1D, "conv_transpose1d")
EMBER_ENUM_DECLARE(ConvTranspose2D, "conv_transpose2d")
EMBER_ENUM_DECLARE(ConvTranspose3D, "conv_transpose3d")
EMBER_ENUM_DECLARE(Sigmoid, "sigmoid")
EMBER_ENUM_DECLARE(Tanh, "tanh")
EMBER_ENUM_DECLARE(ReLU, "relu")
EMBER_ENUM_DECLARE(GELU, "gelu")
EMBER_ENUM_DECLARE(LeakyReLU, "leaky_relu")
EMBER_ENUM_DECLARE(SELU, "selu")
EMBER_ENUM_DECLARE(SiLU, "silu")
EMBER_ENUM_DECLARE(RNN_TANH, "RNN_TANH")
EMBER_ENUM_DECLARE(RNN_RELU, "RNN_RELU")
EMBER_ENUM_DECLARE(LSTM, "LSTM")
EMBER_ENUM_DECLARE(GRU, "GRU")
#undef EMBER_ENUM_DECLARE
}  // namespace enumtype

inline constexpr enumtype::kNone kNone{};
inline constexpr enumtype::kMean kMean{};
inline constexpr enumtype::kSum kSum{};
inline constexpr enumtype::kMax kMax{};
inline constexpr enumtype::kBatchMean kBatchMean{};
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kZeros kZeros{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};
inline constexpr enumtype::kSame kSame{};
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kNearestExact kNearestExact{};
inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kBicubic kBicubic{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kGELU kGELU{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};
inline constexpr enumtype::kSELU kSELU{};
inline constexpr enumtype::kSiLU kSiLU{};
inline constexpr enumtype::kRNN_TANH kRNN_TANH{};
inline constexpr enumtype::kRNN_RELU kRNN_RELU{};
inline constexpr enumtype::kLSTM kLSTM{};
inline constexpr enumtype::kGRU kGRU{};

/// The name of the alternative a variant of enum types holds ("mean").
template <typename... Ts>
std::string enum_name(const std::variant<Ts...>& v) {
  return std::visit([](const auto& e) { return std::string(e.value()); }, v);
}

}  // namespace ember
