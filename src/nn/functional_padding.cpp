// ember::nn::functional::pad: the Options form of ember::pad.
#include "ember/nn/functional/padding.h"

#include "ember/shape_ops.h"

namespace ember::nn::functional {

Tensor pad(const Tensor& input, const PadFuncOptions& o) {
  bool constant = std::holds_alternative<enumtype::kConstant>(o.mode());
  EMBER_CHECK(constant || o.value() == 0, "[pad] Padding mode \"", enum_name(o.mode()),
              "\" doesn't take in value argument.");
  return ember::pad(input, o.pad(), enum_name(o.mode()),
                    constant ? std::optional<double>(o.value()) : std::nullopt);
}

}  // namespace ember::nn::functional
