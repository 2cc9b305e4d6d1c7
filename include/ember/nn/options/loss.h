#pragma once
/// Options of the loss layers and functions (libtorch's L1LossOptions, CrossEntropyLossOptions,
/// ..., and their FuncOptions aliases). `reduction` takes ember::kNone, kMean or kSum.

#include <functional>
#include <optional>
#include <type_traits>
#include <variant>

#include "ember/nn/enum.h"
#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

namespace detail {
using loss_reduction_t = std::variant<enumtype::kNone, enumtype::kMean, enumtype::kSum>;
/// The at::Reduction value of a reduction option.
inline int64_t reduction_value(const loss_reduction_t& r) {
  return std::holds_alternative<enumtype::kNone>(r)   ? 0
         : std::holds_alternative<enumtype::kMean>(r) ? 1
                                                      : 2;
}
}  // namespace detail

/// Options holding only a reduction (constructible from one: `L1LossOptions(ember::kSum)`).
#define EMBER_REDUCTION_ONLY_OPTIONS(Name)                                                      \
  struct Name##Options {                                                                        \
    using reduction_t = detail::loss_reduction_t;                                               \
    Name##Options(reduction_t reduction = enumtype::kMean{}) : reduction_(reduction) {}         \
    template <typename E, typename = std::enable_if_t<std::is_constructible_v<reduction_t, E>>> \
    Name##Options(E reduction) : reduction_(reduction) {}                                       \
    EMBER_ARG(reduction_t, reduction);                                                          \
  }
EMBER_REDUCTION_ONLY_OPTIONS(L1Loss);
EMBER_REDUCTION_ONLY_OPTIONS(MSELoss);
EMBER_REDUCTION_ONLY_OPTIONS(MultiLabelMarginLoss);
EMBER_REDUCTION_ONLY_OPTIONS(SoftMarginLoss);
#undef EMBER_REDUCTION_ONLY_OPTIONS

/// Cross entropy: class `weight` (C), targets equal to ignore_index skipped, label smoothing.
struct CrossEntropyLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
  EMBER_ARG(double, label_smoothing) = 0.0;
};

/// Negative log likelihood of log-probabilities.
struct NLLLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Binary cross entropy of probabilities.
struct BCELossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Binary cross entropy of logits; pos_weight scales the positive terms.
struct BCEWithLogitsLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
  EMBER_ARG(Tensor, pos_weight);
};

/// KL divergence; kBatchMean divides the sum by the batch size.
struct KLDivLossOptions {
  using reduction_t =
      std::variant<enumtype::kNone, enumtype::kBatchMean, enumtype::kSum, enumtype::kMean>;
  KLDivLossOptions(reduction_t reduction = enumtype::kMean{}) : reduction_(reduction) {}
  template <typename E, typename = std::enable_if_t<std::is_constructible_v<reduction_t, E>>>
  KLDivLossOptions(E reduction) : reduction_(reduction) {}
  EMBER_ARG(reduction_t, reduction);
  EMBER_ARG(bool, log_target) = false;
};

/// Smooth L1 with threshold beta.
struct SmoothL1LossOptions {
  using reduction_t = detail::loss_reduction_t;
  SmoothL1LossOptions(reduction_t reduction = enumtype::kMean{}) : reduction_(reduction) {}
  template <typename E, typename = std::enable_if_t<std::is_constructible_v<reduction_t, E>>>
  SmoothL1LossOptions(E reduction) : reduction_(reduction) {}
  EMBER_ARG(reduction_t, reduction);
  EMBER_ARG(double, beta) = 1.0;
};

/// Huber loss with threshold delta.
struct HuberLossOptions {
  using reduction_t = detail::loss_reduction_t;
  HuberLossOptions(reduction_t reduction = enumtype::kMean{}) : reduction_(reduction) {}
  template <typename E, typename = std::enable_if_t<std::is_constructible_v<reduction_t, E>>>
  HuberLossOptions(E reduction) : reduction_(reduction) {}
  EMBER_ARG(reduction_t, reduction);
  EMBER_ARG(double, delta) = 1.0;
};

/// Poisson negative log likelihood.
struct PoissonNLLLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(bool, log_input) = true;
  EMBER_ARG(bool, full) = false;
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Gaussian negative log likelihood.
struct GaussianNLLLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(bool, full) = false;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Cosine embedding loss.
struct CosineEmbeddingLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(double, margin) = 0.0;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Margin ranking loss.
struct MarginRankingLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(double, margin) = 0.0;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Hinge embedding loss.
struct HingeEmbeddingLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Multi-label soft margin loss with optional class weights.
struct MultiLabelSoftMarginLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Multi-class hinge loss (p is 1 or 2).
struct MultiMarginLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(int64_t, p) = 1;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Triplet margin loss with the p-norm pairwise distance.
struct TripletMarginLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(bool, swap) = false;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Triplet margin loss with a custom distance (default: pairwise_distance).
struct TripletMarginWithDistanceLossOptions {
  using reduction_t = detail::loss_reduction_t;
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  EMBER_ARG(std::optional<distance_function_t>, distance_function) = std::nullopt;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(bool, swap) = false;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
};

/// Connectionist temporal classification loss.
struct CTCLossOptions {
  using reduction_t = detail::loss_reduction_t;
  EMBER_ARG(int64_t, blank) = 0;
  EMBER_ARG(reduction_t, reduction) = enumtype::kMean{};
  EMBER_ARG(bool, zero_infinity) = false;
};

namespace functional {
using L1LossFuncOptions = L1LossOptions;
using MSELossFuncOptions = MSELossOptions;
using MultiLabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using GaussianNLLLossFuncOptions = GaussianNLLLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using MultiLabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using CTCLossFuncOptions = CTCLossOptions;
}  // namespace functional

}  // namespace ember::nn
