// Padding layers: F::pad with the layer's mode; reprs as PyTorch 1.13 ("(1, 1, 1, 1)", or
// "padding=(2, 2), value=3.5" for the constant pads).
#include "ember/nn/modules/padding.h"

#include <type_traits>

namespace ember::nn {

namespace F = functional;

namespace {
template <typename Options>
constexpr bool is_constant_v =
    std::is_same_v<Options, ConstantPad1dOptions> ||
    std::is_same_v<Options, ConstantPad2dOptions> || std::is_same_v<Options, ConstantPad3dOptions>;
}  // namespace

template <size_t D, typename Derived, typename Options>
std::string PadImplBase<D, Derived, Options>::extra_repr() const {
  std::string pad = detail::repr_tuple(options.padding());
  if constexpr (is_constant_v<Options>)
    return "padding=" + pad + ", value=" + detail::repr_double(options.value());
  else
    return pad;
}

template <size_t D, typename Derived, typename Options>
Tensor PadImplBase<D, Derived, Options>::forward(const Tensor& input) {
  F::PadFuncOptions fo(options.padding().vec());
  if constexpr (std::is_same_v<Options, ReflectionPadOptions<D>>) {
    fo.mode(kReflect);
  } else if constexpr (std::is_same_v<Options, ReplicationPadOptions<D>>) {
    fo.mode(kReplicate);
  } else if constexpr (is_constant_v<Options>) {
    fo.value(options.value());
  }
  return F::pad(input, fo);
}

template class PadImplBase<1, ReflectionPad1dImpl, ReflectionPad1dOptions>;
template class PadImplBase<2, ReflectionPad2dImpl, ReflectionPad2dOptions>;
template class PadImplBase<3, ReflectionPad3dImpl, ReflectionPad3dOptions>;
template class PadImplBase<1, ReplicationPad1dImpl, ReplicationPad1dOptions>;
template class PadImplBase<2, ReplicationPad2dImpl, ReplicationPad2dOptions>;
template class PadImplBase<3, ReplicationPad3dImpl, ReplicationPad3dOptions>;
template class PadImplBase<2, ZeroPad2dImpl, ZeroPad2dOptions>;
template class PadImplBase<1, ConstantPad1dImpl, ConstantPad1dOptions>;
template class PadImplBase<2, ConstantPad2dImpl, ConstantPad2dOptions>;
template class PadImplBase<3, ConstantPad3dImpl, ConstantPad3dOptions>;

}  // namespace ember::nn
