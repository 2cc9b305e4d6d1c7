#pragma once
/// Upsample: F::interpolate as a layer.

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/vision.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// Resizes (N, C, *) by size or scale_factor with the options' mode.
class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  UpsampleOptions options;
};
EMBER_MODULE(Upsample);

}  // namespace ember::nn
