// ember::nn::functional embeddings: PyTorch's Python-level argument handling (padding_idx
// normalization, max_norm renormalization, bag input/offset checks) around the ember ops.
#include "ember/nn/functional/embedding.h"

#include "ember/autograd.h"
#include "ember/nn/diagnostics.h"
#include "ember/nn_ops.h"
#include "ember/shape_ops.h"

namespace ember::nn::functional {

std::optional<int64_t> normalize_padding_idx(const std::optional<int64_t>& padding_idx,
                                             int64_t num_embeddings) {
  if (!padding_idx) return std::nullopt;
  int64_t p = *padding_idx;
  EMBER_NN_ASSERT(p < num_embeddings && p >= -num_embeddings,
                  "[embedding] Padding_idx must be within num_embeddings (", num_embeddings,
                  "), got ", p);
  return p < 0 ? p + num_embeddings : p;
}

namespace {
void renorm(const Tensor& weight, const Tensor& input, double max_norm, double norm_type) {
  NoGradGuard g;
  Tensor w = weight;
  embedding_renorm_(w, input.contiguous(), max_norm, norm_type);
}
}  // namespace

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& o) {
  EMBER_CHECK(weight.dim() == 2, "[embedding] weight must be 2-D, got ", weight.sizes());
  auto padding_idx = normalize_padding_idx(o.padding_idx(), weight.size(0));
  if (o.max_norm()) renorm(weight, input, *o.max_norm(), o.norm_type());
  // Note: `sparse` is accepted and gives the dense gradient (ember has no sparse tensors).
  return ember::embedding(weight, input, padding_idx.value_or(-1), o.scale_grad_by_freq(),
                          o.sparse());
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  EMBER_CHECK(weight.dim() == 2, "[embedding_bag] weight must be 2-D, got ", weight.sizes());
  const Tensor& psw = o.per_sample_weights();
  if (psw.defined()) {
    EMBER_CHECK_VALUE(psw.sizes().vec() == input.sizes().vec(),
                      "[embedding_bag] embedding_bag: "
                      "If per_sample_weights (",
                      psw.sizes(),
                      ") is not None, then it must have "
                      "the same shape as the input (",
                      input.sizes(), ")");
  }
  Tensor offsets = o.offsets();
  Tensor indices = input;
  if (input.dim() == 2) {
    EMBER_CHECK_VALUE(!offsets.defined(),
                      "[embedding_bag] if input is 2D, then offsets has to be "
                      "None, as input is treated is a mini-batch of fixed length sequences.");
  } else {
    EMBER_CHECK_VALUE(input.dim() == 1,
                      "[embedding_bag] input has to be 1D or 2D Tensor, but "
                      "got Tensor of dimension ",
                      input.dim());
    EMBER_CHECK_VALUE(offsets.defined(),
                      "[embedding_bag] offsets has to be a 1D Tensor but got "
                      "None");
    EMBER_CHECK_VALUE(offsets.dim() == 1, "[embedding_bag] offsets has to be a 1D Tensor, got ",
                      offsets.dim(), "D");
  }
  int64_t mode = std::holds_alternative<enumtype::kSum>(o.mode())    ? 0
                 : std::holds_alternative<enumtype::kMean>(o.mode()) ? 1
                                                                     : 2;
  EMBER_CHECK_VALUE(mode != 2 || !o.scale_grad_by_freq(),
                    "[embedding_bag] max mode does not support scaling the gradient by the "
                    "frequency");
  EMBER_CHECK_VALUE(mode != 2 || !o.sparse(),
                    "[embedding_bag] max mode does not support sparse weights");
  EMBER_CHECK_T(NotImplementedError, !(psw.defined() && mode != 0),
                "[embedding_bag] embedding_bag: per_sample_weights was not None. "
                "per_sample_weights is only supported for mode='sum' (got mode='",
                enum_name(o.mode()), "'). Please open a feature request on GitHub.");
  auto padding_idx = normalize_padding_idx(o.padding_idx(), weight.size(0));
  if (o.max_norm()) renorm(weight, indices, *o.max_norm(), o.norm_type());
  return std::get<0>(ember::embedding_bag(weight, indices, offsets, o.scale_grad_by_freq(), mode,
                                          o.sparse(), psw, o.include_last_offset(), padding_idx));
}

Tensor one_hot(const Tensor& tensor, int64_t num_classes) {
  return ember::one_hot(tensor, num_classes);
}

}  // namespace ember::nn::functional
