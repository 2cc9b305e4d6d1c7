#pragma once
/// Every loss as a layer (L1Loss, MSELoss, CrossEntropyLoss, ..., CTCLoss), forwarding to
/// ember::nn::functional. Class weights are registered as buffers, as PyTorch's _WeightedLoss.

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/options/loss.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// A loss of (input, target) whose options hold no tensors.
#define EMBER_LOSS_MODULE(Name)                                                      \
  class Name##Impl : public Cloneable<Name##Impl> {                                  \
   public:                                                                           \
    explicit Name##Impl(Name##Options options = {}) : options(std::move(options)) {} \
    void reset() override {}                                                         \
    Tensor forward(const Tensor& input, const Tensor& target);                       \
    Name##Options options;                                                           \
  };                                                                                 \
  EMBER_MODULE(Name)

/// A loss of (input, target) with a class `weight` buffer.
#define EMBER_WEIGHTED_LOSS_MODULE(Name)                                                       \
  class Name##Impl : public Cloneable<Name##Impl> {                                            \
   public:                                                                                     \
    explicit Name##Impl(Name##Options options = {}) : options(std::move(options)) { reset(); } \
    void reset() override;                                                                     \
    Tensor forward(const Tensor& input, const Tensor& target);                                 \
    Name##Options options;                                                                     \
    Tensor weight; /**< undefined when not given */                                            \
  };                                                                                           \
  EMBER_MODULE(Name)

EMBER_LOSS_MODULE(L1Loss);
EMBER_LOSS_MODULE(MSELoss);
EMBER_LOSS_MODULE(SmoothL1Loss);
EMBER_LOSS_MODULE(HuberLoss);
EMBER_LOSS_MODULE(KLDivLoss);
EMBER_LOSS_MODULE(PoissonNLLLoss);
EMBER_LOSS_MODULE(HingeEmbeddingLoss);
EMBER_LOSS_MODULE(MultiLabelMarginLoss);
EMBER_LOSS_MODULE(SoftMarginLoss);
EMBER_WEIGHTED_LOSS_MODULE(CrossEntropyLoss);
EMBER_WEIGHTED_LOSS_MODULE(NLLLoss);
EMBER_WEIGHTED_LOSS_MODULE(BCELoss);
EMBER_WEIGHTED_LOSS_MODULE(MultiLabelSoftMarginLoss);
EMBER_WEIGHTED_LOSS_MODULE(MultiMarginLoss);
#undef EMBER_LOSS_MODULE
#undef EMBER_WEIGHTED_LOSS_MODULE

/// Binary cross entropy of logits; `weight` and `pos_weight` are buffers.
class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl> {
 public:
  explicit BCEWithLogitsLossImpl(BCEWithLogitsLossOptions options = {})
      : options(std::move(options)) {
    reset();
  }
  void reset() override;
  Tensor forward(const Tensor& input, const Tensor& target);
  BCEWithLogitsLossOptions options;
  Tensor weight;
  Tensor pos_weight;
};
EMBER_MODULE(BCEWithLogitsLoss);

/// Gaussian NLL of (input, target, var).
class GaussianNLLLossImpl : public Cloneable<GaussianNLLLossImpl> {
 public:
  explicit GaussianNLLLossImpl(GaussianNLLLossOptions options = {}) : options(std::move(options)) {}
  void reset() override {}
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var);
  GaussianNLLLossOptions options;
};
EMBER_MODULE(GaussianNLLLoss);

/// Losses of (input1, input2, target).
class CosineEmbeddingLossImpl : public Cloneable<CosineEmbeddingLossImpl> {
 public:
  explicit CosineEmbeddingLossImpl(CosineEmbeddingLossOptions options = {})
      : options(std::move(options)) {}
  void reset() override {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  CosineEmbeddingLossOptions options;
};
EMBER_MODULE(CosineEmbeddingLoss);

class MarginRankingLossImpl : public Cloneable<MarginRankingLossImpl> {
 public:
  explicit MarginRankingLossImpl(MarginRankingLossOptions options = {})
      : options(std::move(options)) {}
  void reset() override {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  MarginRankingLossOptions options;
};
EMBER_MODULE(MarginRankingLoss);

/// Losses of (anchor, positive, negative).
class TripletMarginLossImpl : public Cloneable<TripletMarginLossImpl> {
 public:
  explicit TripletMarginLossImpl(TripletMarginLossOptions options = {})
      : options(std::move(options)) {}
  void reset() override {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  TripletMarginLossOptions options;
};
EMBER_MODULE(TripletMarginLoss);

class TripletMarginWithDistanceLossImpl : public Cloneable<TripletMarginWithDistanceLossImpl> {
 public:
  explicit TripletMarginWithDistanceLossImpl(TripletMarginWithDistanceLossOptions options = {})
      : options(std::move(options)) {}
  void reset() override {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative);
  TripletMarginWithDistanceLossOptions options;
};
EMBER_MODULE(TripletMarginWithDistanceLoss);

/// CTC loss of (log_probs, targets, input_lengths, target_lengths).
class CTCLossImpl : public Cloneable<CTCLossImpl> {
 public:
  explicit CTCLossImpl(CTCLossOptions options = {}) : options(std::move(options)) {}
  void reset() override {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  CTCLossOptions options;
};
EMBER_MODULE(CTCLoss);

}  // namespace ember::nn
