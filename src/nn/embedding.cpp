// Embedding layers: PyTorch 1.13's initialisation (N(0, 1), padding row zeroed), padding_idx
// normalization, from_pretrained and reprs.
#include "ember/nn/modules/embedding.h"

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/init.h"

namespace ember::nn {

namespace F = functional;

namespace {
Tensor make_table(const char* name, int64_t num, int64_t dim, const Tensor& given) {
  EMBER_CHECK_VALUE(num >= 0 && dim >= 0, "[", name,
                    "] num_embeddings and embedding_dim must "
                    "be non-negative, got ",
                    num, " and ", dim);
  if (!given.defined()) return ember::empty({num, dim});
  EMBER_CHECK_VALUE(given.dim() == 2 && given.size(0) == num && given.size(1) == dim, "[", name,
                    "] Shape of weight does not match num_embeddings and embedding_dim: got ",
                    given.sizes(), ", expected (", num, ", ", dim, ")");
  // A new handle on the same storage, so clone() can refill it without touching `given`.
  return given.detach();
}

std::string common_repr(std::optional<double> max_norm, double norm_type, bool scale) {
  std::string s;
  if (max_norm) s += ", max_norm=" + detail::repr_double(*max_norm);
  if (norm_type != 2) s += ", norm_type=" + detail::repr_double(norm_type);
  if (scale) s += ", scale_grad_by_freq=True";
  return s;
}
}  // namespace

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions options_) : options(std::move(options_)) { reset(); }

void EmbeddingImpl::reset() {
  EMBER_CHECK_VALUE(!options.sparse(),
                    "[Embedding] sparse gradients are not supported; use "
                    "sparse(false)");
  options.padding_idx(F::normalize_padding_idx(options.padding_idx(), options.num_embeddings()));
  Tensor table =
      make_table("Embedding", options.num_embeddings(), options.embedding_dim(), options._weight());
  weight = register_parameter("weight", table);
  if (!options._weight().defined()) reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard g;
    weight[*options.padding_idx()].fill_(0);
  }
}

std::string EmbeddingImpl::extra_repr() const {
  std::string s =
      std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim());
  if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
  s += common_repr(options.max_norm(), options.norm_type(), options.scale_grad_by_freq());
  return s;
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return F::embedding(indices, weight,
                      F::EmbeddingFuncOptions()
                          .padding_idx(options.padding_idx())
                          .max_norm(options.max_norm())
                          .norm_type(options.norm_type())
                          .scale_grad_by_freq(options.scale_grad_by_freq()));
}

Embedding Embedding::from_pretrained(const Tensor& embeddings,
                                     const EmbeddingFromPretrainedOptions& o) {
  EMBER_CHECK_VALUE(embeddings.dim() == 2,
                    "[Embedding::from_pretrained] Embeddings parameter is "
                    "expected to be 2-dimensional, got ",
                    embeddings.dim(), "-D");
  Embedding e(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                  ._weight(embeddings)
                  .padding_idx(o.padding_idx())
                  .max_norm(o.max_norm())
                  .norm_type(o.norm_type())
                  .scale_grad_by_freq(o.scale_grad_by_freq())
                  .sparse(o.sparse()));
  e->weight.set_requires_grad(!o.freeze());
  return e;
}

EmbeddingBagImpl::EmbeddingBagImpl(EmbeddingBagOptions options_) : options(std::move(options_)) {
  reset();
}

void EmbeddingBagImpl::reset() {
  EMBER_CHECK_VALUE(!options.sparse(),
                    "[EmbeddingBag] sparse gradients are not supported; use "
                    "sparse(false)");
  options.padding_idx(F::normalize_padding_idx(options.padding_idx(), options.num_embeddings()));
  Tensor table = make_table("EmbeddingBag", options.num_embeddings(), options.embedding_dim(),
                            options._weight());
  weight = register_parameter("weight", table);
  if (!options._weight().defined()) reset_parameters();
}

void EmbeddingBagImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard g;
    weight[*options.padding_idx()].fill_(0);
  }
}

std::string EmbeddingBagImpl::extra_repr() const {
  std::string s =
      std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim());
  s += common_repr(options.max_norm(), options.norm_type(), options.scale_grad_by_freq());
  s += ", mode=" + enum_name(options.mode());
  if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
  return s;
}

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets,
                                 const Tensor& per_sample_weights) {
  return F::embedding_bag(input, weight,
                          F::EmbeddingBagFuncOptions()
                              .offsets(offsets)
                              .max_norm(options.max_norm())
                              .norm_type(options.norm_type())
                              .scale_grad_by_freq(options.scale_grad_by_freq())
                              .mode(options.mode())
                              .per_sample_weights(per_sample_weights)
                              .include_last_offset(options.include_last_offset())
                              .padding_idx(options.padding_idx()));
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings,
                                           const EmbeddingBagFromPretrainedOptions& o) {
  EMBER_CHECK_VALUE(embeddings.dim() == 2,
                    "[EmbeddingBag::from_pretrained] Embeddings parameter "
                    "is expected to be 2-dimensional, got ",
                    embeddings.dim(), "-D");
  EmbeddingBag e(EmbeddingBagOptions(embeddings.size(0), embeddings.size(1))
                     ._weight(embeddings)
                     .max_norm(o.max_norm())
                     .norm_type(o.norm_type())
                     .scale_grad_by_freq(o.scale_grad_by_freq())
                     .mode(o.mode())
                     .sparse(o.sparse())
                     .include_last_offset(o.include_last_offset())
                     .padding_idx(o.padding_idx()));
  e->weight.set_requires_grad(!o.freeze());
  return e;
}

}  // namespace ember::nn
