// CUDA kernels of the activations and parameterised elementwise ops, with the dtypes the CPU
// kernels register for each (src/kernels/cpu/elementwise/activation_kernels.cpp).
#include "kernels/cuda/elementwise_activation.cuh"
#include "kernels/cuda/elementwise_kernels.cuh"

namespace ember::cuda {

bool launch_ew_activation(OpId op, const EwArgs& a) {
  using namespace ew;
  const char* n = op_name(op);
  switch (op) {
    case OpId::relu:
      return run<Relu, 1>(a, n, IntTypes{}, BF16Float{});
    case OpId::relu6:
      return run<Relu6, 1>(a, n, IntTypes{}, BF16Float{});
    case OpId::selu:
      return run<Selu, 1>(a, n, BF16Float{});
    case OpId::silu:
      return run<Silu, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::mish:
      return run<Mish, 1>(a, n, FloatOnly{});
    case OpId::softsign:
      return run<Softsign, 1>(a, n, FloatTypes{}, ComplexTypes{});
    case OpId::hardsigmoid:
      return run<Hardsigmoid, 1>(a, n, BF16Float{});
    case OpId::hardswish:
      return run<Hardswish, 1>(a, n, BF16Float{});
    case OpId::tanhshrink:
      return run<Tanhshrink, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::logsigmoid:
      return run<Logsigmoid, 1>(a, n, BF16Float{});
    case OpId::round_decimals:
      return run<RoundDecimals, 1>(a, n, IntTypes{}, FloatOnly{}) ||
             run<RoundDecimalsBf16, 1>(a, n, TypeList<BFloat16>{});
    case OpId::logit:
      return run<Logit, 1>(a, n, FloatOnly{}) || run<LogitBf16, 1>(a, n, TypeList<BFloat16>{});
    case OpId::lgamma:
      return run<Lgamma, 1>(a, n, BF16Float{});
    case OpId::nan_to_num:
      return run<NanToNum, 1>(a, n, BoolType{}, IntTypes{}, FloatTypes{});
    case OpId::leaky_relu:
      return run<LeakyRelu, 1>(a, n, BF16Float{});
    case OpId::elu:
    case OpId::celu:
      return run<Elu, 1>(a, n, BF16Float{});
    case OpId::gelu:
      return run<Gelu, 1>(a, n, BF16Float{});
    case OpId::gelu_tanh:
      return run<GeluTanh, 1>(a, n, BF16Float{});
    case OpId::softplus:
      return run<Softplus, 1>(a, n, BF16Float{});
    case OpId::hardtanh:
      return run<Hardtanh, 1>(a, n, IntTypes{}, BF16Float{});
    case OpId::hardshrink:
      return run<Hardshrink, 1>(a, n, BF16Float{});
    case OpId::softshrink:
      return run<Softshrink, 1>(a, n, BF16Float{});
    case OpId::threshold:
      return run<Threshold, 1>(a, n, IntTypes{}, BF16Float{});
    default:
      return false;
  }
}

}  // namespace ember::cuda
