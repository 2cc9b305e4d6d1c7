#pragma once
/// ember::nn::functional embeddings with Options (libtorch's F::embedding, F::embedding_bag).

#include "ember/nn/options/embedding.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

/// Rows of `weight` at integer `input`; max_norm renormalizes the looked-up rows of `weight` in
/// place first. A negative padding_idx counts from the end.
Tensor embedding(const Tensor& input, const Tensor& weight,
                 const EmbeddingFuncOptions& options = {});
/// Sums, means or maxes of bags of rows: 2-D input (B, L) without offsets, or 1-D input with
/// 1-D offsets.
Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const EmbeddingBagFuncOptions& options = {});
/// The padding_idx PyTorch stores: checked against num_embeddings, negative counted from the end.
std::optional<int64_t> normalize_padding_idx(const std::optional<int64_t>& padding_idx,
                                             int64_t num_embeddings);
/// One-hot encoding of int64 class indices: (*, num_classes); num_classes = -1 takes max + 1.
Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1);

}  // namespace ember::nn::functional
