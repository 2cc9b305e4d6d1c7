#pragma once
/// Identity, Linear, Bilinear, Flatten and Unflatten layers.

#include "ember/nn/cloneable.h"
#include "ember/nn/options/linear.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// Returns its input.
class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  IdentityImpl() = default;
  void reset() override {}
  Tensor forward(const Tensor& input) { return input; }
};
EMBER_MODULE(Identity);

/// y = x W^T + b, W (out, in) and b (out) drawn from U(-1/sqrt(in), 1/sqrt(in)).
class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features)
      : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  void reset() override;
  /// Redraws the weight and bias (PyTorch's reset_parameters).
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  LinearOptions options;
  Tensor weight;
  Tensor bias;  ///< undefined without bias
};
EMBER_MODULE(Linear);

/// y_k = x1^T W_k x2 + b_k.
class BilinearImpl : public Cloneable<BilinearImpl> {
 public:
  BilinearImpl(int64_t in1, int64_t in2, int64_t out)
      : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  explicit BilinearImpl(const BilinearOptions& options);
  void reset() override;
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input1, const Tensor& input2);

  BilinearOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(Bilinear);

/// Flattens a range of dims into one.
class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  FlattenOptions options;
};
EMBER_MODULE(Flatten);

/// Splits one dim into several.
class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes)
      : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(UnflattenOptions options) : options(std::move(options)) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  UnflattenOptions options;
};
EMBER_MODULE(Unflatten);

}  // namespace ember::nn
