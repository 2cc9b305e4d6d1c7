// ember::nn::functional dropouts: PyTorch's Python-level checks (p range, input ranks,
// unbatched inputs) around the ember dropout ops.
#include "ember/nn/functional/dropout.h"

#include "ember/nn/diagnostics.h"
#include "ember/nn_ops.h"

namespace ember::nn::functional {

namespace {
void check_p(double p, const char* name) {
  EMBER_CHECK_VALUE(p >= 0 && p <= 1, "[", name,
                    "] dropout probability has to be between 0 and 1, but got ", p);
}

Tensor run(const Tensor& input, double p, bool training, bool inplace,
           Tensor (*op)(const Tensor&, double, bool), Tensor& (*op_)(Tensor&, double, bool)) {
  if (inplace) {
    Tensor self = input;
    return op_(self, p, training);
  }
  return op(input, p, training);
}

// Channel dropout of an input with `batched_dim` dims; any other rank is taken as unbatched
// and gets a batch dim for the draw (dropout1d only accepts batched_dim - 1, as PyTorch 1.13).
Tensor feature_nd(const Tensor& input, const DropoutFuncOptions& o, int64_t batched_dim,
                  bool strict, const char* name) {
  check_p(o.p(), name);
  EMBER_CHECK(!strict || input.dim() == batched_dim || input.dim() == batched_dim - 1, "[", name,
              "] ", name, ": Expected ", batched_dim - 1, "D or ", batched_dim,
              "D input, but received a ", input.dim(), "D input. Note that ", name,
              " exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
              "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).");
  if (input.dim() != batched_dim) {
    Tensor out = feature_dropout(input.unsqueeze(0), o.p(), o.training()).squeeze(0);
    if (!o.inplace()) return out;
    Tensor self = input;
    return self.copy_(out);
  }
  return run(input, o.p(), o.training(), o.inplace(), &ember::feature_dropout,
             &ember::feature_dropout_);
}
}  // namespace

Tensor dropout(const Tensor& input, const DropoutFuncOptions& o) {
  check_p(o.p(), "dropout");
  return run(input, o.p(), o.training(), o.inplace(), &ember::dropout, &ember::dropout_);
}

Tensor dropout1d(const Tensor& input, const Dropout1dFuncOptions& o) {
  return feature_nd(input, o, 3, true, "dropout1d");
}

Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& o) {
  check_p(o.p(), "dropout2d");
  int64_t dim = input.dim();
  if (dim != 3 && dim != 4) {
    warn("dropout2d: Received a " + std::to_string(dim) +
         "-D input to dropout2d, which is deprecated and will result in an error in a future "
         "release. To retain the behavior and silence this warning, please use dropout instead. "
         "Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
         "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
         "inputs).");
  }
  if (dim == 3) {
    warn(
        "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
        "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
        "dim. This behavior will change in a future release to interpret the input as one "
        "without a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
        "dropout behavior, please switch to using dropout1d instead.");
  }
  EMBER_CHECK(dim >= 2, "[dropout2d] expected a 3D or 4D input, got ", dim, "D");
  return run(input, o.p(), o.training(), o.inplace(), &ember::feature_dropout,
             &ember::feature_dropout_);
}

Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& o) {
  if (input.dim() != 4 && input.dim() != 5) {
    warn("dropout3d: Received a " + std::to_string(input.dim()) +
         "-D input to dropout3d, which is deprecated and will result in an error in a future "
         "release. To retain the behavior and silence this warning, please use dropout instead. "
         "Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
         "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
         "inputs).");
  }
  return feature_nd(input, o, 5, false, "dropout3d");
}

Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& o) {
  check_p(o.p(), "alpha_dropout");
  return run(input, o.p(), o.training(), o.inplace(), &ember::alpha_dropout,
             &ember::alpha_dropout_);
}

Tensor feature_alpha_dropout(const Tensor& input, const FeatureAlphaDropoutFuncOptions& o) {
  check_p(o.p(), "feature_alpha_dropout");
  return run(input, o.p(), o.training(), o.inplace(), &ember::feature_alpha_dropout,
             &ember::feature_alpha_dropout_);
}

}  // namespace ember::nn::functional
