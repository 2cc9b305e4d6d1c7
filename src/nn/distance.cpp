// Distance layers and their functional forms over the ember distance ops.
#include "ember/nn/modules/distance.h"

#include "ember/nn_ops.h"

namespace ember::nn {

namespace functional {
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& o) {
  return ember::pairwise_distance(x1, x2, o.p(), o.eps(), o.keepdim());
}
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& o) {
  return ember::cosine_similarity(x1, x2, o.dim(), o.eps());
}
}  // namespace functional

Tensor PairwiseDistanceImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::pairwise_distance(input1, input2, options);
}
Tensor CosineSimilarityImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::cosine_similarity(input1, input2, options);
}

}  // namespace ember::nn
