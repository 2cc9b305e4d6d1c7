// The activation layers: forward through ember::nn::functional, reprs as PyTorch's.
#include "ember/nn/modules/activation.h"

#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/sort.h"

namespace ember::nn {

namespace F = functional;
using detail::repr_double;

namespace {
std::string inplace_repr(bool inplace, bool leading_comma) {
  if (!inplace) return "";
  return leading_comma ? ", inplace=True" : "inplace=True";
}
// PyTorch keeps Softplus's integer defaults as ints in its repr ("beta=1").
std::string number_repr(double v) {
  return v == double(int64_t(v)) ? std::to_string(int64_t(v)) : repr_double(v);
}
}  // namespace

#define EMBER_INPLACE_ONLY(Name, fn)                                                            \
  std::string Name##Impl::extra_repr() const { return inplace_repr(options.inplace(), false); } \
  Tensor Name##Impl::forward(const Tensor& input) { return F::fn(input, options); }
EMBER_INPLACE_ONLY(ReLU, relu)
EMBER_INPLACE_ONLY(ReLU6, relu6)
EMBER_INPLACE_ONLY(SELU, selu)
#undef EMBER_INPLACE_ONLY

// SiLU, Mish, Hardsigmoid and Hardswish compute out of place and copy back when inplace.
#define EMBER_INPLACE_COPY(Name, fn)                                                            \
  std::string Name##Impl::extra_repr() const { return inplace_repr(options.inplace(), false); } \
  Tensor Name##Impl::forward(const Tensor& input) {                                             \
    if (!options.inplace()) return ember::fn(input);                                            \
    Tensor self = input;                                                                        \
    return ember::fn##_(self);                                                                  \
  }
EMBER_INPLACE_COPY(SiLU, silu)
EMBER_INPLACE_COPY(Mish, mish)
EMBER_INPLACE_COPY(Hardsigmoid, hardsigmoid)
EMBER_INPLACE_COPY(Hardswish, hardswish)
#undef EMBER_INPLACE_COPY

std::string LeakyReLUImpl::extra_repr() const {
  return "negative_slope=" + repr_double(options.negative_slope()) +
         inplace_repr(options.inplace(), true);
}
Tensor LeakyReLUImpl::forward(const Tensor& input) { return F::leaky_relu(input, options); }

std::string ELUImpl::extra_repr() const {
  return "alpha=" + repr_double(options.alpha()) + inplace_repr(options.inplace(), true);
}
Tensor ELUImpl::forward(const Tensor& input) { return F::elu(input, options); }

std::string CELUImpl::extra_repr() const {
  return "alpha=" + repr_double(options.alpha()) + inplace_repr(options.inplace(), true);
}
Tensor CELUImpl::forward(const Tensor& input) { return F::celu(input, options); }

std::string GELUImpl::extra_repr() const { return "approximate='" + options.approximate() + "'"; }
Tensor GELUImpl::forward(const Tensor& input) { return F::gelu(input, options); }

std::string SoftplusImpl::extra_repr() const {
  return "beta=" + number_repr(options.beta()) + ", threshold=" + number_repr(options.threshold());
}
Tensor SoftplusImpl::forward(const Tensor& input) { return F::softplus(input, options); }

std::string HardtanhImpl::extra_repr() const {
  return "min_val=" + repr_double(options.min_val()) +
         ", max_val=" + repr_double(options.max_val()) + inplace_repr(options.inplace(), true);
}
Tensor HardtanhImpl::forward(const Tensor& input) {
  EMBER_CHECK_VALUE(options.max_val() > options.min_val(), "[Hardtanh] max_val (",
                    options.max_val(), ") must be greater than min_val (", options.min_val(), ")");
  return F::hardtanh(input, options);
}

std::string SoftshrinkImpl::extra_repr() const { return repr_double(options.lambda()); }
Tensor SoftshrinkImpl::forward(const Tensor& input) { return F::softshrink(input, options); }

std::string HardshrinkImpl::extra_repr() const { return repr_double(options.lambda()); }
Tensor HardshrinkImpl::forward(const Tensor& input) { return F::hardshrink(input, options); }

std::string RReLUImpl::extra_repr() const {
  return "lower=" + repr_double(options.lower()) + ", upper=" + repr_double(options.upper()) +
         inplace_repr(options.inplace(), true);
}
Tensor RReLUImpl::forward(const Tensor& input) {
  return F::rrelu(input, options.lower(), options.upper(), is_training(), options.inplace());
}

std::string GLUImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }
Tensor GLUImpl::forward(const Tensor& input) { return F::glu(input, options.dim()); }

Tensor SigmoidImpl::forward(const Tensor& input) { return ember::sigmoid(input); }
Tensor TanhImpl::forward(const Tensor& input) { return ember::tanh(input); }
Tensor SoftsignImpl::forward(const Tensor& input) { return ember::softsign(input); }
Tensor TanhshrinkImpl::forward(const Tensor& input) { return ember::tanhshrink(input); }
Tensor LogSigmoidImpl::forward(const Tensor& input) { return ember::logsigmoid(input); }

std::string ThresholdImpl::extra_repr() const {
  return "threshold=" + repr_double(options.threshold()) +
         ", value=" + repr_double(options.value()) + inplace_repr(options.inplace(), true);
}
Tensor ThresholdImpl::forward(const Tensor& input) { return F::threshold(input, options); }

std::string SoftmaxImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }
Tensor SoftmaxImpl::forward(const Tensor& input) { return F::softmax(input, options); }
std::string LogSoftmaxImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }
Tensor LogSoftmaxImpl::forward(const Tensor& input) { return F::log_softmax(input, options); }
std::string SoftminImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }
Tensor SoftminImpl::forward(const Tensor& input) { return F::softmin(input, options); }

Tensor Softmax2dImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4,
              "[Softmax2d] Softmax2d: expected input to be 3D or 4D, got ", input.dim(),
              "D instead");
  return ember::softmax(input, -3);
}

PReLUImpl::PReLUImpl(const PReLUOptions& options) : options(options) { reset(); }
void PReLUImpl::reset() {
  EMBER_CHECK_VALUE(options.num_parameters() >= 1, "[PReLU] num_parameters must be >= 1, got ",
                    options.num_parameters());
  weight = register_parameter("weight", full({options.num_parameters()}, options.init()));
}
std::string PReLUImpl::extra_repr() const {
  return "num_parameters=" + std::to_string(options.num_parameters());
}
Tensor PReLUImpl::forward(const Tensor& input) { return F::prelu(input, weight); }

}  // namespace ember::nn
