#pragma once
/// PairwiseDistance and CosineSimilarity layers.

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/distance.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

class PairwiseDistanceImpl : public Cloneable<PairwiseDistanceImpl> {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& input1, const Tensor& input2);
  PairwiseDistanceOptions options;
};
EMBER_MODULE(PairwiseDistance);

class CosineSimilarityImpl : public Cloneable<CosineSimilarityImpl> {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& input1, const Tensor& input2);
  CosineSimilarityOptions options;
};
EMBER_MODULE(CosineSimilarity);

}  // namespace ember::nn
