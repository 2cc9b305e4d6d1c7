// CUDA kernels of the unary ops on complex64 and complex128 (cuda::std::complex math), as the
// CPU kernels register them (src/kernels/cpu/elementwise/unary_kernels.cpp).
#include "kernels/cuda/elementwise_kernels.cuh"
#include "kernels/cuda/elementwise_unary.cuh"

namespace ember::cuda {

bool launch_ew_unary_complex(OpId op, const EwArgs& a) {
  using namespace ew;
  const char* n = op_name(op);
  switch (op) {
    case OpId::neg:
      return run<Neg, 1>(a, n, ComplexTypes{});
    case OpId::sgn:
      return run<Sign, 1>(a, n, ComplexTypes{});
    case OpId::reciprocal:
      return run<Reciprocal, 1>(a, n, ComplexTypes{});
    case OpId::square:
      return run<Square, 1>(a, n, ComplexTypes{});
    case OpId::sqrt:
      return run<Sqrt, 1>(a, n, ComplexTypes{});
    case OpId::rsqrt:
      return run<Rsqrt, 1>(a, n, ComplexTypes{});
    case OpId::exp:
      return run<Exp, 1>(a, n, ComplexTypes{});
    case OpId::log:
      return run<Log, 1>(a, n, ComplexTypes{});
    case OpId::log2:
      return run<Log2, 1>(a, n, ComplexTypes{});
    case OpId::log10:
      return run<Log10, 1>(a, n, ComplexTypes{});
    case OpId::sin:
      return run<Sin, 1>(a, n, ComplexTypes{});
    case OpId::cos:
      return run<Cos, 1>(a, n, ComplexTypes{});
    case OpId::tan:
      return run<Tan, 1>(a, n, ComplexTypes{});
    case OpId::asin:
      return run<Asin, 1>(a, n, ComplexTypes{});
    case OpId::acos:
      return run<Acos, 1>(a, n, ComplexTypes{});
    case OpId::atan:
      return run<Atan, 1>(a, n, ComplexTypes{});
    case OpId::sinh:
      return run<Sinh, 1>(a, n, ComplexTypes{});
    case OpId::cosh:
      return run<Cosh, 1>(a, n, ComplexTypes{});
    case OpId::tanh:
      return run<Tanh, 1>(a, n, ComplexTypes{});
    case OpId::asinh:
      return run<Asinh, 1>(a, n, ComplexTypes{});
    case OpId::acosh:
      return run<Acosh, 1>(a, n, ComplexTypes{});
    case OpId::atanh:
      return run<Atanh, 1>(a, n, ComplexTypes{});
    case OpId::sigmoid:
      return run<Sigmoid, 1>(a, n, ComplexTypes{});
    case OpId::abs:
      return run<Abs, 1, out_real>(a, n, ComplexTypes{});
    default:
      return false;
  }
}

}  // namespace ember::cuda
