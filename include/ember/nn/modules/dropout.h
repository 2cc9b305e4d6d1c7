#pragma once
/// Dropout layers (Dropout, Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout): active only in
/// training mode (Module::is_training()).

#include "ember/nn/cloneable.h"
#include "ember/nn/functional/dropout.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

#define EMBER_DROPOUT_MODULE(Name)                                                         \
  class Name##Impl : public Cloneable<Name##Impl> {                                        \
   public:                                                                                 \
    Name##Impl(double p) : Name##Impl(Name##Options(p)) {}                                 \
    explicit Name##Impl(const Name##Options& options = {}) : options(options) { reset(); } \
    /** Checks p (ValueError outside [0, 1]). */                                           \
    void reset() override;                                                                 \
    std::string extra_repr() const override;                                               \
    Tensor forward(const Tensor& input);                                                   \
    Name##Options options;                                                                 \
  };                                                                                       \
  EMBER_MODULE(Name)
EMBER_DROPOUT_MODULE(Dropout);
EMBER_DROPOUT_MODULE(Dropout1d);
EMBER_DROPOUT_MODULE(Dropout2d);
EMBER_DROPOUT_MODULE(Dropout3d);
EMBER_DROPOUT_MODULE(AlphaDropout);
EMBER_DROPOUT_MODULE(FeatureAlphaDropout);
#undef EMBER_DROPOUT_MODULE

}  // namespace ember::nn
