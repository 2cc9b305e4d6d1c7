// Dropout layers: the functional forms with training = is_training().
#include "ember/nn/modules/dropout.h"

namespace ember::nn {

namespace F = functional;

#define EMBER_DROPOUT_DEFS(Name, fn, FuncOptions)                                            \
  void Name##Impl::reset() {                                                                 \
    EMBER_CHECK_VALUE(options.p() >= 0 && options.p() <= 1,                                  \
                      "[" #Name "] dropout probability has to be between 0 and 1, but got ", \
                      options.p());                                                          \
  }                                                                                          \
  std::string Name##Impl::extra_repr() const {                                               \
    return "p=" + detail::repr_double(options.p()) +                                         \
           ", inplace=" + detail::repr_bool(options.inplace());                              \
  }                                                                                          \
  Tensor Name##Impl::forward(const Tensor& input) {                                          \
    return F::fn(                                                                            \
        input,                                                                               \
        F::FuncOptions().p(options.p()).training(is_training()).inplace(options.inplace())); \
  }
EMBER_DROPOUT_DEFS(Dropout, dropout, DropoutFuncOptions)
EMBER_DROPOUT_DEFS(Dropout1d, dropout1d, Dropout1dFuncOptions)
EMBER_DROPOUT_DEFS(Dropout2d, dropout2d, Dropout2dFuncOptions)
EMBER_DROPOUT_DEFS(Dropout3d, dropout3d, Dropout3dFuncOptions)
EMBER_DROPOUT_DEFS(AlphaDropout, alpha_dropout, AlphaDropoutFuncOptions)
EMBER_DROPOUT_DEFS(FeatureAlphaDropout, feature_alpha_dropout, FeatureAlphaDropoutFuncOptions)
#undef EMBER_DROPOUT_DEFS

}  // namespace ember::nn
