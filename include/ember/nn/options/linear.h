#pragma once
/// Options of the linear layers (Linear, Bilinear, Flatten, Unflatten).

#include <vector>

#include "ember/nn/options.h"

namespace ember::nn {

/// `LinearOptions(in, out).bias(false)`.
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

/// `BilinearOptions(in1, in2, out).bias(false)`.
struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in1_features);
  EMBER_ARG(int64_t, in2_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

/// Flattens dims start_dim..end_dim (defaults 1 and -1, as nn.Flatten).
struct FlattenOptions {
  EMBER_ARG(int64_t, start_dim) = 1;
  EMBER_ARG(int64_t, end_dim) = -1;
};

/// Unflattens dim `dim` into `sizes`.
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::vector<int64_t>, sizes);
};

}  // namespace ember::nn
