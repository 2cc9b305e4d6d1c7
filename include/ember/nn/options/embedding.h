#pragma once
/// Options of Embedding and EmbeddingBag and their functional forms (libtorch's names).

#include <optional>
#include <variant>

#include "ember/nn/enum.h"
#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

/// `EmbeddingOptions(num, dim).padding_idx(0).max_norm(1.0)`. `_weight` supplies the table.
/// `sparse` must stay false (gradients are dense).
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.0;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, _weight);
};

/// Options of Embedding::from_pretrained; `freeze` turns off the weight's gradient.
struct EmbeddingFromPretrainedOptions {
  EMBER_ARG(bool, freeze) = true;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.0;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
};

using EmbeddingBagMode = std::variant<enumtype::kSum, enumtype::kMean, enumtype::kMax>;

/// `EmbeddingBagOptions(num, dim).mode(ember::kSum)`.
struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.0;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = enumtype::kMean{};
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, _weight);
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// Options of EmbeddingBag::from_pretrained.
struct EmbeddingBagFromPretrainedOptions {
  EMBER_ARG(bool, freeze) = true;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.0;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = enumtype::kMean{};
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

namespace functional {
/// `F::embedding(indices, weight, F::EmbeddingFuncOptions().padding_idx(0))`.
struct EmbeddingFuncOptions {
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.0;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(bool, sparse) = false;
};

/// `F::embedding_bag(indices, weight, F::EmbeddingBagFuncOptions().offsets(o).mode(kSum))`.
struct EmbeddingBagFuncOptions {
  EMBER_ARG(Tensor, offsets);
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.0;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = enumtype::kMean{};
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(Tensor, per_sample_weights);
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
}  // namespace functional

}  // namespace ember::nn
