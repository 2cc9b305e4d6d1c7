#pragma once
/// Padding layers: ReflectionPad1d-3d, ReplicationPad1d-3d, ZeroPad2d, ConstantPad1d-3d.

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/padding.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

/// A padding layer of D spatial dims with padding (left, right, top, bottom, front, back).
template <size_t D, typename Derived, typename Options>
class PadImplBase : public Cloneable<Derived> {
 public:
  explicit PadImplBase(const Options& options) : options(options) {}
  void reset() override {}
  std::string extra_repr() const override;
  Tensor forward(const Tensor& input);

  Options options;
};

#define EMBER_PAD_MODULE(Name, N, Opt)                                                    \
  class Name##Impl : public PadImplBase<N, Name##Impl, Opt> {                             \
   public:                                                                                \
    Name##Impl(ExpandingArray<N * 2> padding) : Name##Impl(Opt(padding)) {}               \
    explicit Name##Impl(const Opt& options) : PadImplBase<N, Name##Impl, Opt>(options) {} \
  };                                                                                      \
  EMBER_MODULE(Name)
EMBER_PAD_MODULE(ReflectionPad1d, 1, ReflectionPad1dOptions);
EMBER_PAD_MODULE(ReflectionPad2d, 2, ReflectionPad2dOptions);
EMBER_PAD_MODULE(ReflectionPad3d, 3, ReflectionPad3dOptions);
EMBER_PAD_MODULE(ReplicationPad1d, 1, ReplicationPad1dOptions);
EMBER_PAD_MODULE(ReplicationPad2d, 2, ReplicationPad2dOptions);
EMBER_PAD_MODULE(ReplicationPad3d, 3, ReplicationPad3dOptions);
EMBER_PAD_MODULE(ZeroPad2d, 2, ZeroPad2dOptions);
#undef EMBER_PAD_MODULE

#define EMBER_CONSTANT_PAD_MODULE(Name, N)                              \
  class Name##Impl : public PadImplBase<N, Name##Impl, Name##Options> { \
   public:                                                              \
    Name##Impl(ExpandingArray<N * 2> padding, double value)             \
        : Name##Impl(Name##Options(padding, value)) {}                  \
    explicit Name##Impl(const Name##Options& options)                   \
        : PadImplBase<N, Name##Impl, Name##Options>(options) {}         \
  };                                                                    \
  EMBER_MODULE(Name)
EMBER_CONSTANT_PAD_MODULE(ConstantPad1d, 1);
EMBER_CONSTANT_PAD_MODULE(ConstantPad2d, 2);
EMBER_CONSTANT_PAD_MODULE(ConstantPad3d, 3);
#undef EMBER_CONSTANT_PAD_MODULE

}  // namespace ember::nn
