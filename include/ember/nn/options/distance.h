#pragma once
/// Options of PairwiseDistance and CosineSimilarity and their functional forms.

#include "ember/nn/options.h"

namespace ember::nn {

/// ||x1 - x2 + eps||_p along the last dim.
struct PairwiseDistanceOptions {
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(double, eps) = 1e-6;
  EMBER_ARG(bool, keepdim) = false;
};

/// x1 . x2 / max(||x1|| ||x2||, eps) along dim.
struct CosineSimilarityOptions {
  EMBER_ARG(int64_t, dim) = 1;
  EMBER_ARG(double, eps) = 1e-8;
};

namespace functional {
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
}  // namespace functional

}  // namespace ember::nn
