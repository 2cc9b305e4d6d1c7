#pragma once
/// Neural-network ops at the ATen level (libtorch's names and argument orders): linear layers,
/// dropout, normalization, embeddings, losses and distances (nn_linear_ops.cpp,
/// dropout_ops.cpp, norm_ops.cpp, embedding_ops.cpp, loss_ops.cpp, loss_ops2.cpp).
///
/// Optional tensor arguments (weight, bias, running stats, ...) are passed as an undefined
/// `Tensor{}` when absent. Every op records autograd (composites through their parts,
/// primitives with their own rules) and matches PyTorch 1.13's values and gradients.

#include <cstdint>
#include <optional>
#include <tuple>

#include "ember/tensor.h"

namespace ember {

/// How a loss reduces its per-element values (at::Reduction).
namespace Reduction {
enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };
}

// ---- linear ----
/// input @ weight.T + bias; input (*, in), weight (out, in), bias (out) or undefined.
/// 2-D input with a bias runs as one addmm.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
/// y_k = x1^T W_k x2 + b_k; input1 (*, in1), input2 (*, in2), weight (out, in1, in2).
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias = {});

// ---- dropout (random masks from the default CPU generator) ----
/// Zeros each element with probability p and scales the rest by 1 / (1 - p) when `train`;
/// identity otherwise. ValueError unless 0 <= p <= 1.
Tensor dropout(const Tensor& input, double p, bool train);
Tensor& dropout_(Tensor& input, double p, bool train);
/// Dropout of whole channels: one draw per (N, C) for an input (N, C, *) (dropout1d/2d/3d).
Tensor feature_dropout(const Tensor& input, double p, bool train);
Tensor& feature_dropout_(Tensor& input, double p, bool train);
/// SELU-preserving dropout: dropped elements take the value -alpha*scale, then an affine map
/// keeps mean 0 and variance 1.
Tensor alpha_dropout(const Tensor& input, double p, bool train);
Tensor& alpha_dropout_(Tensor& input, double p, bool train);
/// alpha_dropout with one draw per channel.
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train);
Tensor& feature_alpha_dropout_(Tensor& input, double p, bool train);

// ---- normalization ----
/// Batch normalization over every dim but 1 of an (N, C, *) input. In training the batch
/// statistics are used and, when given, running_mean/running_var are updated in place:
/// r = (1 - momentum) * r + momentum * stat, with the unbiased batch variance for running_var.
/// In eval the running statistics are used (they must be given). `cudnn_enabled` is ignored.
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled = true);
/// batch_norm returning (output, save_mean, save_invstd); the saved stats are the batch mean
/// and 1/sqrt(var + eps) in training, empty tensors in eval.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, bool training,
                                                     double momentum, double eps);
/// Normalizes over the trailing dims given by `normalized_shape`, then applies the elementwise
/// affine weight/bias (of that shape) when given.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5, bool cudnn_enable = true);
/// layer_norm returning (output, mean, rstd), the statistics with shape (*, 1, ..., 1).
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     IntArrayRef normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps);
/// Normalizes an (N, C, *) input over groups of C / num_groups channels; per-channel affine.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5, bool cudnn_enabled = true);
/// Normalizes each (n, c) plane of an (N, C, *) input; with use_input_stats = false the running
/// statistics are used. Running stats (when given and use_input_stats) are updated with the
/// mean over the batch of the per-instance statistics.
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps, bool cudnn_enabled = true);
/// Local response normalization across channels of an (N, C, *) input (at least 3-D).
Tensor local_response_norm(const Tensor& input, int64_t size, double alpha = 1e-4,
                           double beta = 0.75, double k = 1.0);

// ---- embeddings ----
/// Rows of `weight` (num_embeddings, dim) at integer `indices` (any shape): (*indices, dim).
/// The gradient of row `padding_idx` (when >= 0) is zero; `scale_grad_by_freq` divides each
/// row's gradient by the count of its index in the batch. `sparse` gradients are returned dense.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
/// Rescales, in place and without recording, the rows of `self` referenced by `indices` whose
/// `norm_type`-norm exceeds max_norm to have norm max_norm.
Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type);
/// Sums (mode 0), means (1) or maxes (2) bags of embedding rows. `indices` is 2-D (B, L) with
/// `offsets` undefined, or 1-D with `offsets` (B or B + 1 with include_last_offset) giving the
/// start of each bag. `per_sample_weights` (mode 0 only) scales each row; rows at padding_idx
/// are skipped. Returns (output (B, dim), offset2bag, bag_size, max_indices).
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets,
    bool scale_grad_by_freq = false, int64_t mode = 0, bool sparse = false,
    const Tensor& per_sample_weights = {}, bool include_last_offset = false,
    std::optional<int64_t> padding_idx = std::nullopt);

// ---- classification losses ----
/// Cross entropy of logits `input` (C), (N, C) or (N, C, d1, ...): `target` holds class
/// indices (int64, shape without C) or class probabilities (input's shape, floating).
/// Index targets: `weight` (C) rescales classes, targets equal to ignore_index are skipped, and
/// the mean divides by the summed weight of the kept targets. label_smoothing in [0, 1] mixes
/// in the uniform distribution. Class indices outside [0, C) raise IndexError.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     int64_t reduction = Reduction::Mean, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);
/// at::cross_entropy_loss, the same op.
inline Tensor cross_entropy_loss(const Tensor& input, const Tensor& target,
                                 const Tensor& weight = {}, int64_t reduction = Reduction::Mean,
                                 int64_t ignore_index = -100, double label_smoothing = 0.0) {
  return cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing);
}
/// Negative log likelihood of log-probabilities `input` (C), (N, C) or (N, C, d1, ...) at class
/// indices `target` (int64); weight / ignore_index / mean as cross_entropy.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
/// nll_loss for a 4-D (N, C, H, W) input and (N, H, W) target.
Tensor nll_loss2d(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                  int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
/// -w * (t * log(x) + (1 - t) * log(1 - x)) with log clamped at -100, as PyTorch; input in [0, 1].
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            int64_t reduction = Reduction::Mean);
/// binary_cross_entropy of sigmoid(input), computed stably; pos_weight scales positive terms.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, const Tensor& pos_weight = {},
                                        int64_t reduction = Reduction::Mean);
/// Pointwise KL divergence target * (log(target) - input) (log_target: exp(t) * (t - input)).
/// Reduction::Mean averages over every element (F.kl_div's 'batchmean' divides by N itself).
Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
              bool log_target = false);
/// Poisson NLL: exp(x) - t * x (log_input) or x - t * log(x + eps); `full` adds Stirling's term.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, int64_t reduction);
/// Gaussian NLL 0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ const if
/// full); var has input's shape, or one dim fewer, or a last dim of 1.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         bool full = false, double eps = 1e-6, int64_t reduction = Reduction::Mean);
/// Multi-class hinge loss: sum_j max(0, margin - x[y] + x[j])^p / C over j != y.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const Scalar& p = 1,
                         const Scalar& margin = 1, const Tensor& weight = {},
                         int64_t reduction = Reduction::Mean);
/// Multi-label hinge loss; target holds class indices terminated by the first -1.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              int64_t reduction = Reduction::Mean);
/// -mean_c(w_c * (t * logsigmoid(x) + (1 - t) * logsigmoid(-x))) per sample.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const Tensor& weight = {}, int64_t reduction = Reduction::Mean);
/// log(1 + exp(-target * input)).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        int64_t reduction = Reduction::Mean);
/// Connectionist temporal classification loss. log_probs (T, N, C) or (T, C); targets (N, S)
/// padded or 1-D concatenated; lengths per batch element. Reduction::Mean divides each loss by
/// its target length, then averages. zero_infinity replaces infinite losses (and their
/// gradients) by zero.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank = 0, int64_t reduction = Reduction::Mean,
                bool zero_infinity = false);
/// ctc_loss with the lengths as integer tensors.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0,
                int64_t reduction = Reduction::Mean, bool zero_infinity = false);

// ---- regression losses ----
/// (input - target)^2, broadcasting target to input (a warning-free broadcast as PyTorch).
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
/// |input - target|.
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean);
/// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta = 0: l1_loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      int64_t reduction = Reduction::Mean, double beta = 1.0);
/// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction = Reduction::Mean,
                  double delta = 1.0);

// ---- embedding / ranking losses ----
/// 1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0.0, int64_t reduction = Reduction::Mean);
/// max(0, -target * (input1 - input2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0.0, int64_t reduction = Reduction::Mean);
/// x for target 1, max(0, margin - x) for target -1.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            int64_t reduction = Reduction::Mean);
/// max(d(a, p) - d(a, n) + margin, 0) with pairwise_distance d (swap: d(a, n) := min(d(a, n),
/// d(p, n))).
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2, double eps = 1e-6, bool swap = false,
                           int64_t reduction = Reduction::Mean);

// ---- distances ----
/// x1 . x2 / max(||x1|| * ||x2||, eps) along `dim` (inputs broadcast).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
/// ||x1 - x2 + eps||_p along the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6,
                         bool keepdim = false);
/// input / max(||input||_p along dim, eps) (F.normalize).
Tensor normalize(const Tensor& input, double p = 2.0, int64_t dim = 1, double eps = 1e-12);

}  // namespace ember
