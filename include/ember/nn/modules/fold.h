#pragma once
/// Fold and Unfold layers (sliding blocks <-> columns).

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/vision.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// Sums columns (N, C * kh * kw, L) into (N, C, output_size).
class FoldImpl : public Cloneable<FoldImpl> {
 public:
  FoldImpl(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : FoldImpl(FoldOptions(output_size, kernel_size)) {}
  explicit FoldImpl(const FoldOptions& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  FoldOptions options;
};
EMBER_MODULE(Fold);

/// Extracts sliding blocks of (N, C, H, W) as columns.
class UnfoldImpl : public Cloneable<UnfoldImpl> {
 public:
  UnfoldImpl(ExpandingArray<2> kernel_size) : UnfoldImpl(UnfoldOptions(kernel_size)) {}
  explicit UnfoldImpl(const UnfoldOptions& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  UnfoldOptions options;
};
EMBER_MODULE(Unfold);

}  // namespace ember::nn
