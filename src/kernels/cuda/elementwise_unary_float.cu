// CUDA kernels of the real transcendental unary ops (float, double, bfloat16 and, for exp2,
// float16, as the CPU kernels register them; src/kernels/cpu/elementwise/unary_kernels.cpp).
#include "kernels/cuda/elementwise_kernels.cuh"
#include "kernels/cuda/elementwise_unary.cuh"

namespace ember::cuda {

bool launch_ew_unary_float(OpId op, const EwArgs& a) {
  using namespace ew;
  const char* n = op_name(op);
  switch (op) {
    case OpId::sqrt:
      return run<Sqrt, 1>(a, n, BF16Float{});
    case OpId::rsqrt:
      return run<Rsqrt, 1>(a, n, BF16Float{});
    case OpId::exp:
      return run<Exp, 1>(a, n, BF16Float{});
    case OpId::exp2:
      return run<Exp2, 1>(a, n, FloatTypes{});
    case OpId::expm1:
      return run<Expm1, 1>(a, n, BF16Float{});
    case OpId::log:
      return run<Log, 1>(a, n, BF16Float{});
    case OpId::log2:
      return run<Log2, 1>(a, n, BF16Float{});
    case OpId::log10:
      return run<Log10, 1>(a, n, BF16Float{});
    case OpId::log1p:
      return run<Log1p, 1>(a, n, BF16Float{});
    case OpId::sin:
      return run<Sin, 1>(a, n, BF16Float{});
    case OpId::cos:
      return run<Cos, 1>(a, n, BF16Float{});
    case OpId::tan:
      return run<Tan, 1>(a, n, BF16Float{});
    case OpId::asin:
      return run<Asin, 1>(a, n, BF16Float{});
    case OpId::acos:
      return run<Acos, 1>(a, n, BF16Float{});
    case OpId::atan:
      return run<Atan, 1>(a, n, BF16Float{});
    case OpId::sinh:
      return run<Sinh, 1>(a, n, BF16Float{});
    case OpId::cosh:
      return run<Cosh, 1>(a, n, BF16Float{});
    case OpId::tanh:
      return run<Tanh, 1>(a, n, BF16Float{});
    case OpId::asinh:
      return run<Asinh, 1>(a, n, BF16Float{});
    case OpId::acosh:
      return run<Acosh, 1>(a, n, BF16Float{});
    case OpId::atanh:
      return run<Atanh, 1>(a, n, BF16Float{});
    case OpId::sigmoid:
      return run<Sigmoid, 1>(a, n, BF16Float{});
    case OpId::erf:
      return run<Erf, 1>(a, n, BF16Float{});
    case OpId::erfc:
      return run<Erfc, 1>(a, n, BF16Float{});
    case OpId::erfinv:
      return run<Erfinv, 1>(a, n, BF16Float{});
    default:
      return false;
  }
}

}  // namespace ember::cuda
