// Loss layers: thin forwards to ember::nn::functional; weights live in buffers so state_dict()
// and to(dtype) see them, as PyTorch's _WeightedLoss.
#include "ember/nn/modules/loss.h"

namespace ember::nn {

namespace F = functional;

#define EMBER_LOSS_FORWARD(Name, fn)                                      \
  Tensor Name##Impl::forward(const Tensor& input, const Tensor& target) { \
    return F::fn(input, target, options);                                 \
  }
EMBER_LOSS_FORWARD(L1Loss, l1_loss)
EMBER_LOSS_FORWARD(MSELoss, mse_loss)
EMBER_LOSS_FORWARD(SmoothL1Loss, smooth_l1_loss)
EMBER_LOSS_FORWARD(HuberLoss, huber_loss)
EMBER_LOSS_FORWARD(KLDivLoss, kl_div)
EMBER_LOSS_FORWARD(PoissonNLLLoss, poisson_nll_loss)
EMBER_LOSS_FORWARD(HingeEmbeddingLoss, hinge_embedding_loss)
EMBER_LOSS_FORWARD(MultiLabelMarginLoss, multilabel_margin_loss)
EMBER_LOSS_FORWARD(SoftMarginLoss, soft_margin_loss)
#undef EMBER_LOSS_FORWARD

// The forward reads the buffer (which to(dtype) converts), not the options' copy.
#define EMBER_WEIGHTED_LOSS_DEFS(Name, fn)                                           \
  void Name##Impl::reset() { weight = register_buffer("weight", options.weight()); } \
  Tensor Name##Impl::forward(const Tensor& input, const Tensor& target) {            \
    auto o = options;                                                                \
    o.weight(weight);                                                                \
    return F::fn(input, target, o);                                                  \
  }
EMBER_WEIGHTED_LOSS_DEFS(CrossEntropyLoss, cross_entropy)
EMBER_WEIGHTED_LOSS_DEFS(NLLLoss, nll_loss)
EMBER_WEIGHTED_LOSS_DEFS(BCELoss, binary_cross_entropy)
EMBER_WEIGHTED_LOSS_DEFS(MultiLabelSoftMarginLoss, multilabel_soft_margin_loss)
EMBER_WEIGHTED_LOSS_DEFS(MultiMarginLoss, multi_margin_loss)
#undef EMBER_WEIGHTED_LOSS_DEFS

void BCEWithLogitsLossImpl::reset() {
  weight = register_buffer("weight", options.weight());
  pos_weight = register_buffer("pos_weight", options.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  auto o = options;
  o.weight(weight).pos_weight(pos_weight);
  return F::binary_cross_entropy_with_logits(input, target, o);
}

Tensor GaussianNLLLossImpl::forward(const Tensor& input, const Tensor& target, const Tensor& var) {
  return F::gaussian_nll_loss(input, target, var, options);
}
Tensor CosineEmbeddingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                        const Tensor& target) {
  return F::cosine_embedding_loss(input1, input2, target, options);
}
Tensor MarginRankingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                      const Tensor& target) {
  return F::margin_ranking_loss(input1, input2, target, options);
}
Tensor TripletMarginLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                      const Tensor& negative) {
  return F::triplet_margin_loss(anchor, positive, negative, options);
}
Tensor TripletMarginWithDistanceLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                                  const Tensor& negative) {
  return F::triplet_margin_with_distance_loss(anchor, positive, negative, options);
}
Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets,
                            const Tensor& input_lengths, const Tensor& target_lengths) {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}

}  // namespace ember::nn
