#pragma once
/// Embedding and EmbeddingBag layers: a (num_embeddings, embedding_dim) table drawn from N(0, 1)
/// (the padding row zeroed), or given (`_weight`, from_pretrained).

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/embedding.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// Looks up rows of `weight` by integer index.
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(EmbeddingOptions options);
  void reset() override;
  /// Redraws the table from N(0, 1) and zeros the padding row.
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor forward(const Tensor& indices);

  EmbeddingOptions options;  ///< padding_idx normalized to [0, num_embeddings)
  Tensor weight;
};

/// The holder, with from_pretrained (libtorch's torch::nn::Embedding).
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  Embedding() : ModuleHolder<EmbeddingImpl>() {}
  Embedding(std::nullptr_t) : ModuleHolder<EmbeddingImpl>(nullptr) {}
  /// An Embedding whose table is (a copy sharing storage with) the 2-D `embeddings`; frozen
  /// (requires_grad false) unless options.freeze(false).
  static Embedding from_pretrained(const Tensor& embeddings,
                                   const EmbeddingFromPretrainedOptions& options = {});
};

/// Sums, means or maxes bags of embeddings without building the intermediate rows.
class EmbeddingBagImpl : public Cloneable<EmbeddingBagImpl> {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(EmbeddingBagOptions options);
  void reset() override;
  void reset_parameters();
  std::string extra_repr() const override;
  /// input (B, L), or 1-D with offsets; per_sample_weights (mode kSum only) scales each row.
  Tensor forward(const Tensor& input, const Tensor& offsets = {},
                 const Tensor& per_sample_weights = {});

  EmbeddingBagOptions options;
  Tensor weight;
};

class EmbeddingBag : public ModuleHolder<EmbeddingBagImpl> {
 public:
  using ModuleHolder<EmbeddingBagImpl>::ModuleHolder;
  EmbeddingBag() : ModuleHolder<EmbeddingBagImpl>() {}
  EmbeddingBag(std::nullptr_t) : ModuleHolder<EmbeddingBagImpl>(nullptr) {}
  static EmbeddingBag from_pretrained(const Tensor& embeddings,
                                      const EmbeddingBagFromPretrainedOptions& options = {});
};

}  // namespace ember::nn
