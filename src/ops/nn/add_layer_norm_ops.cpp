// `_add_layer_norm`: the residual add and layer norm of a Transformer encoder layer in one pass
// (the inference fast path, src/nn/transformer_fast.cpp). It has no backward rule, so it refuses
// inputs that would need one; layer_norm(input + residual) is the differentiable form.
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nn/functional/attention.h"
#include "kernels/stubs/add_layer_norm.h"
#include "ops/call_path.h"

namespace ember {

Tensor _add_layer_norm(const Tensor& input, const Tensor& residual, IntArrayRef normalized_shape,
                       const Tensor& weight, const Tensor& bias, double eps) {
  EMBER_OP(_add_layer_norm, input, residual, normalized_shape, weight, bias, eps);
  const char* fn = "[_add_layer_norm] ";
  EMBER_CHECK(input.defined() && residual.defined(), fn, "input and residual must be defined");
  const ScalarType dt = input.dtype();
  EMBER_CHECK_TYPE(dt == kFloat || dt == kDouble || dt == kBFloat16, fn,
                   "expected float32, float64 or bfloat16 input, got ", dtype_name(dt));
  EMBER_CHECK_TYPE(residual.dtype() == dt, fn, "residual has dtype ", dtype_name(residual.dtype()),
                   ", input has ", dtype_name(dt), "; they must match");
  EMBER_CHECK(input.sizes() == residual.sizes(), fn, "input ", shape_str(input.sizes()),
              " and residual ", shape_str(residual.sizes()), " must have the same shape");
  const int64_t k = int64_t(normalized_shape.size()), nd = input.dim();
  EMBER_CHECK(k >= 1 && nd >= k, fn, "normalized_shape ", shape_str(normalized_shape),
              " must name the last dims of the input ", shape_str(input.sizes()));
  int64_t D = 1;
  for (int64_t i = 0; i < k; ++i) {
    EMBER_CHECK(input.size(nd - k + i) == normalized_shape[size_t(i)], fn, "normalized_shape ",
                shape_str(normalized_shape), " does not match the input's last dims ",
                shape_str(input.sizes()));
    D *= normalized_shape[size_t(i)];
  }
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    EMBER_CHECK(p->sizes() == normalized_shape, fn, "weight and bias must have shape ",
                shape_str(normalized_shape), ", got ", shape_str(p->sizes()));
    EMBER_CHECK_TYPE(p->dtype() == dt, fn, "weight and bias must have the input's dtype ",
                     dtype_name(dt), ", got ", dtype_name(p->dtype()));
  }
  const bool needs_grad = input.requires_grad() || residual.requires_grad() ||
                          (weight.defined() && weight.requires_grad()) ||
                          (bias.defined() && bias.requires_grad());
  EMBER_CHECK(!(GradMode::is_enabled() && needs_grad), fn,
              "has no vjp rule (an inference op); call it under no_grad, or use "
              "layer_norm(input + residual) to differentiate");
  const int64_t M = D == 0 ? 0 : input.numel() / D;
  Tensor x = input.contiguous(), r = residual.contiguous();
  Tensor w = weight.defined() ? weight.contiguous() : weight;
  Tensor b = bias.defined() ? bias.contiguous() : bias;
  Tensor y = empty(input.sizes(), input.options());
  if (M > 0 && D > 0) add_layer_norm_stub(x.device().type(), x, r, w, b, M, D, eps, y);
  return y;
}

}  // namespace ember
