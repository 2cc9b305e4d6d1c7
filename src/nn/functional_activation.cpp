// ember::nn::functional activations: Options forms of the ember ops, and the composites
// (prelu, glu, rrelu, softmin) whose gradients come from their parts.
#include "ember/nn/functional/activation.h"

#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/sort.h"

namespace ember::nn::functional {

Tensor prelu(const Tensor& input, const Tensor& weight) {
  EMBER_CHECK(weight.dim() <= 1, "[prelu] weight must be 0-D or 1-D, got ", weight.sizes());
  int64_t n = weight.numel();
  Tensor w = weight;
  if (n != 1) {
    EMBER_CHECK(input.dim() >= 2 && input.size(1) == n,
                "[prelu] Mismatch of parameter numbers "
                "and input channel size. Found parameter numbers = ",
                n, " and channel size = ", input.dim() >= 2 ? input.size(1) : 1, ".");
    std::vector<int64_t> shape(size_t(input.dim()), 1);
    shape[1] = n;
    w = weight.reshape(shape);
  } else {
    w = weight.reshape({});
  }
  return where(input.ge(0), input, w * input);
}

Tensor glu(const Tensor& input, int64_t dim) {
  EMBER_CHECK(input.dim() > 0,
              "[glu] glu does not support scalars because halving size must be "
              "even");
  int64_t d = dim < 0 ? dim + input.dim() : dim;
  EMBER_CHECK_INDEX(d >= 0 && d < input.dim(), "[glu] dim ", dim, " out of range for ", input.dim(),
                    "-D input");
  EMBER_CHECK(input.size(d) % 2 == 0, "[glu] Halving dimension must be even, but dimension ", d,
              " is size ", input.size(d));
  auto halves = input.chunk(2, d);
  return halves[0] * sigmoid(halves[1]);
}

Tensor rrelu(const Tensor& input, double lower, double upper, bool training, bool inplace) {
  EMBER_CHECK_VALUE(lower <= upper, "[rrelu] lower (", lower, ") must not exceed upper (", upper,
                    ")");
  Tensor slope;
  if (training)
    slope = empty_like(input).uniform_(lower, upper);
  else
    slope = full({}, (lower + upper) / 2, input.options());
  Tensor out = where(input.ge(0), input, input * slope);
  if (inplace) {
    Tensor self = input;
    return self.copy_(out);
  }
  return out;
}

Tensor softmin(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return ember::softmax(neg(input), dim, dtype);
}

namespace {
Tensor& mut(const Tensor& t) { return const_cast<Tensor&>(t); }
}  // namespace

Tensor relu(const Tensor& input, const ReLUOptions& o) {
  return o.inplace() ? relu_(mut(input)) : ember::relu(input);
}
Tensor relu6(const Tensor& input, const ReLU6Options& o) {
  return o.inplace() ? relu6_(mut(input)) : ember::relu6(input);
}
Tensor leaky_relu(const Tensor& input, const LeakyReLUOptions& o) {
  return o.inplace() ? leaky_relu_(mut(input), o.negative_slope())
                     : ember::leaky_relu(input, o.negative_slope());
}
Tensor elu(const Tensor& input, const ELUOptions& o) {
  return o.inplace() ? elu_(mut(input), o.alpha()) : ember::elu(input, o.alpha());
}
Tensor celu(const Tensor& input, const CELUOptions& o) {
  return o.inplace() ? celu_(mut(input), o.alpha()) : ember::celu(input, o.alpha());
}
Tensor selu(const Tensor& input, const SELUOptions& o) {
  return o.inplace() ? selu_(mut(input)) : ember::selu(input);
}
Tensor gelu(const Tensor& input, const GELUOptions& o) {
  return ember::gelu(input, o.approximate());
}
Tensor silu(const Tensor& input) { return ember::silu(input); }
Tensor mish(const Tensor& input) { return ember::mish(input); }
Tensor softplus(const Tensor& input, const SoftplusOptions& o) {
  return ember::softplus(input, o.beta(), o.threshold());
}
// As torch.nn.functional.hardtanh, no check of min_val < max_val here (the result is then
// max_val); the Hardtanh module checks it.
Tensor hardtanh(const Tensor& input, const HardtanhOptions& o) {
  return o.inplace() ? hardtanh_(mut(input), o.min_val(), o.max_val())
                     : ember::hardtanh(input, o.min_val(), o.max_val());
}
Tensor threshold(const Tensor& input, const ThresholdOptions& o) {
  return o.inplace() ? threshold_(mut(input), o.threshold(), o.value())
                     : ember::threshold(input, o.threshold(), o.value());
}
Tensor softshrink(const Tensor& input, const SoftshrinkOptions& o) {
  return ember::softshrink(input, o.lambda());
}
Tensor hardshrink(const Tensor& input, const HardshrinkOptions& o) {
  return ember::hardshrink(input, o.lambda());
}
Tensor hardsigmoid(const Tensor& input) { return ember::hardsigmoid(input); }
Tensor hardswish(const Tensor& input) { return ember::hardswish(input); }
Tensor softsign(const Tensor& input) { return ember::softsign(input); }
Tensor tanhshrink(const Tensor& input) { return ember::tanhshrink(input); }
Tensor logsigmoid(const Tensor& input) { return ember::logsigmoid(input); }
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& o) {
  return ember::softmax(input, o.dim(), o.dtype());
}
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& o) {
  return ember::log_softmax(input, o.dim(), o.dtype());
}
Tensor softmin(const Tensor& input, const SoftminFuncOptions& o) {
  return softmin(input, o.dim(), o.dtype());
}
Tensor rrelu(const Tensor& input, const RReLUFuncOptions& o) {
  return rrelu(input, o.lower(), o.upper(), o.training(), o.inplace());
}

}  // namespace ember::nn::functional
