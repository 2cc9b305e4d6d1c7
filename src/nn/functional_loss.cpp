// ember::nn::functional losses: unpack the Options into the ember loss ops (nn_ops.h); the few
// losses without an op (kl_div's batchmean, triplet with a custom distance) are composites.
#include "ember/nn/functional/loss.h"

#include "ember/nn/module.h"
#include "ember/nn/diagnostics.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"

namespace ember::nn::functional {

using detail::reduction_value;

namespace {
Tensor apply_reduction(const Tensor& loss, const detail::loss_reduction_t& r) {
  if (std::holds_alternative<enumtype::kMean>(r)) return loss.mean();
  if (std::holds_alternative<enumtype::kSum>(r)) return loss.sum();
  return loss;
}
// Regression losses broadcast the target; a different size is usually a mistake.
void warn_size(const Tensor& input, const Tensor& target) {
  if (input.sizes().vec() == target.sizes().vec()) return;
  warn("Using a target size (" + detail::repr_tuple(target.sizes()) +
       ") that is different to the input size (" + detail::repr_tuple(input.sizes()) +
       "). This will likely lead to incorrect results due to broadcasting. Please ensure they "
       "have the same size.");
}
}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& o) {
  warn_size(input, target);
  return ember::l1_loss(input, target, reduction_value(o.reduction()));
}
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& o) {
  warn_size(input, target);
  return ember::mse_loss(input, target, reduction_value(o.reduction()));
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& o) {
  EMBER_CHECK_VALUE(o.beta() >= 0, "[smooth_l1_loss] beta must be non-negative, got ", o.beta());
  warn_size(input, target);
  return ember::smooth_l1_loss(input, target, reduction_value(o.reduction()), o.beta());
}
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& o) {
  warn_size(input, target);
  return ember::huber_loss(input, target, reduction_value(o.reduction()), o.delta());
}
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& o) {
  return ember::cross_entropy(input, target, o.weight(), reduction_value(o.reduction()),
                              o.ignore_index(), o.label_smoothing());
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& o) {
  return ember::nll_loss(input, target, o.weight(), reduction_value(o.reduction()),
                         o.ignore_index());
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& o) {
  EMBER_CHECK_VALUE(target.sizes().vec() == input.sizes().vec(),
                    "[binary_cross_entropy] Using a target size (", target.sizes(),
                    ") that is different to the input size (", input.sizes(),
                    ") is deprecated. Please ensure they have the same size.");
  Tensor weight = o.weight();
  if (weight.defined())
    weight = weight.expand(ember::broadcast_shapes(target.sizes(), weight.sizes()));
  return ember::binary_cross_entropy(input, target, weight, reduction_value(o.reduction()));
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& o) {
  EMBER_CHECK_VALUE(target.sizes().vec() == input.sizes().vec(),
                    "[binary_cross_entropy_with_logits] Target size (", target.sizes(),
                    ") must be the same as input size (", input.sizes(), ")");
  return ember::binary_cross_entropy_with_logits(input, target, o.weight(), o.pos_weight(),
                                                 reduction_value(o.reduction()));
}

// 'batchmean' is the summed loss over the batch size (PyTorch's F.kl_div).
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& o) {
  const auto& r = o.reduction();
  if (std::holds_alternative<enumtype::kMean>(r)) {
    warn(
        "reduction: 'mean' divides the total loss by both the batch size and the support "
        "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
        "definition.'mean' will be changed to behave the same as 'batchmean' in the next major "
        "release.");
  }
  if (std::holds_alternative<enumtype::kBatchMean>(r)) {
    Tensor sum = ember::kl_div(input, target, Reduction::Sum, o.log_target());
    return input.dim() != 0 ? sum / double(input.size(0)) : sum;
  }
  int64_t red = std::holds_alternative<enumtype::kNone>(r)  ? Reduction::None
                : std::holds_alternative<enumtype::kSum>(r) ? Reduction::Sum
                                                            : Reduction::Mean;
  return ember::kl_div(input, target, red, o.log_target());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                        const PoissonNLLLossFuncOptions& o) {
  return ember::poisson_nll_loss(input, target, o.log_input(), o.full(), o.eps(),
                                 reduction_value(o.reduction()));
}
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         const GaussianNLLLossFuncOptions& o) {
  return ember::gaussian_nll_loss(input, target, var, o.full(), o.eps(),
                                  reduction_value(o.reduction()));
}
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& o) {
  return ember::cosine_embedding_loss(input1, input2, target, o.margin(),
                                      reduction_value(o.reduction()));
}
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& o) {
  EMBER_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(),
              "[margin_ranking_loss] margin_ranking_loss : All input tensors should have same "
              "dimension but got sizes: input1: ",
              input1.sizes(), ", input2: ", input2.sizes(), ", target: ", target.sizes());
  return ember::margin_ranking_loss(input1, input2, target, o.margin(),
                                    reduction_value(o.reduction()));
}
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& o) {
  return ember::hinge_embedding_loss(input, target, o.margin(), reduction_value(o.reduction()));
}
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultiLabelMarginLossFuncOptions& o) {
  return ember::multilabel_margin_loss(input, target, reduction_value(o.reduction()));
}
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultiLabelSoftMarginLossFuncOptions& o) {
  return ember::multilabel_soft_margin_loss(input, target, o.weight(),
                                            reduction_value(o.reduction()));
}
Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                         const MultiMarginLossFuncOptions& o) {
  EMBER_CHECK_VALUE(o.p() == 1 || o.p() == 2,
                    "[multi_margin_loss] only p == 1 and p == 2 are "
                    "supported, got ",
                    o.p());
  EMBER_CHECK_VALUE(!o.weight().defined() || o.weight().dim() == 1,
                    "[multi_margin_loss] weight must be one-dimensional, got ", o.weight().sizes());
  return ember::multi_margin_loss(input, target, o.p(), o.margin(), o.weight(),
                                  reduction_value(o.reduction()));
}
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossFuncOptions& o) {
  return ember::soft_margin_loss(input, target, reduction_value(o.reduction()));
}
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& o) {
  return ember::triplet_margin_loss(anchor, positive, negative, o.margin(), o.p(), o.eps(),
                                    o.swap(), reduction_value(o.reduction()));
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& o) {
  EMBER_CHECK_VALUE(o.margin() > 0,
                    "[triplet_margin_with_distance_loss] margin must be "
                    "greater than 0, got ",
                    o.margin());
  EMBER_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
              "[triplet_margin_with_distance_loss] The anchor, positive, and negative tensors are "
              "expected to have the same number of dimensions, but got: anchor ",
              anchor.dim(), "D, positive ", positive.dim(), "D, and negative ", negative.dim(),
              "D inputs");
  auto dist = [&](const Tensor& a, const Tensor& b) {
    return o.distance_function() ? (*o.distance_function())(a, b) : ember::pairwise_distance(a, b);
  };
  Tensor d_pos = dist(anchor, positive);
  Tensor d_neg = dist(anchor, negative);
  if (o.swap()) d_neg = ember::minimum(d_neg, dist(positive, negative));
  Tensor loss = (d_pos - d_neg + o.margin()).clamp_min(0.0);
  return apply_reduction(loss, o.reduction());
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& o) {
  return ember::ctc_loss(log_probs, targets, input_lengths, target_lengths, o.blank(),
                         reduction_value(o.reduction()), o.zero_infinity());
}

}  // namespace ember::nn::functional
