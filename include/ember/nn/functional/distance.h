#pragma once
/// ember::nn::functional distances with Options.

#include "ember/nn/options/distance.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options = {});
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                         const CosineSimilarityFuncOptions& options = {});

}  // namespace ember::nn::functional
