// CUDA kernels of the unary math ops and the unary predicates, with the dtypes the CPU kernels
// register for each (src/kernels/cpu/elementwise/unary_kernels.cpp).
#include "kernels/cuda/elementwise_kernels.cuh"
#include "kernels/cuda/elementwise_unary.cuh"

namespace ember::cuda {

bool launch_ew_unary(OpId op, const EwArgs& a) {
  using namespace ew;
  using AllTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16,
                            float, double, complex<float>, complex<double>>;
  using RealTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16,
                             float, double>;
  const char* n = op_name(op);
  switch (op) {
    case OpId::neg:
      return run<Neg, 1>(a, n, IntTypes{}, FloatTypes{}, ComplexTypes{});
    case OpId::abs:
      return run<Abs, 1>(a, n, IntTypes{}, FloatTypes{}) ||
             run<Abs, 1, out_real>(a, n, ComplexTypes{});
    case OpId::sign:
      return run<Sign, 1>(a, n, BoolType{}, IntTypes{}, FloatTypes{});
    case OpId::sgn:
      return run<Sign, 1>(a, n, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
    case OpId::reciprocal:
      return run<Reciprocal, 1>(a, n, FloatTypes{}, ComplexTypes{});
    case OpId::sqrt:
      return run<Sqrt, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::rsqrt:
      return run<Rsqrt, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::square:
      return run<Square, 1>(a, n, IntTypes{}, FloatTypes{}, ComplexTypes{});
    case OpId::exp:
      return run<Exp, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::exp2:
      return run<Exp2, 1>(a, n, FloatTypes{});
    case OpId::expm1:
      return run<Expm1, 1>(a, n, BF16Float{});
    case OpId::log:
      return run<Log, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::log2:
      return run<Log2, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::log10:
      return run<Log10, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::log1p:
      return run<Log1p, 1>(a, n, BF16Float{});
    case OpId::sin:
      return run<Sin, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::cos:
      return run<Cos, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::tan:
      return run<Tan, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::asin:
      return run<Asin, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::acos:
      return run<Acos, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::atan:
      return run<Atan, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::sinh:
      return run<Sinh, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::cosh:
      return run<Cosh, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::tanh:
      return run<Tanh, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::asinh:
      return run<Asinh, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::acosh:
      return run<Acosh, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::atanh:
      return run<Atanh, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::sigmoid:
      return run<Sigmoid, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::erf:
      return run<Erf, 1>(a, n, BF16Float{});
    case OpId::erfc:
      return run<Erfc, 1>(a, n, BF16Float{});
    case OpId::erfinv:
      return run<Erfinv, 1>(a, n, BF16Float{});
    case OpId::floor:
      return run<Floor, 1>(a, n, IntTypes{}, BF16Float{});
    case OpId::ceil:
      return run<Ceil, 1>(a, n, IntTypes{}, BF16Float{});
    case OpId::trunc:
      return run<Trunc, 1>(a, n, IntTypes{}, BF16Float{});
    case OpId::frac:
      return run<Frac, 1>(a, n, FloatTypes{});
    case OpId::bitwise_not:
      return run<BitwiseNot, 1>(a, n, BoolType{}, IntTypes{});
    case OpId::logical_not:
      return run<LogicalNot, 1, out_bool>(a, n, AllTypes{});
    case OpId::isnan:
      return run<IsNan, 1, out_bool>(a, n, AllTypes{});
    case OpId::isinf:
      return run<IsInf, 1, out_bool>(a, n, AllTypes{});
    case OpId::isfinite:
      return run<IsFinite, 1, out_bool>(a, n, AllTypes{});
    case OpId::isposinf:
      return run<IsPosInf, 1, out_bool>(a, n, RealTypes{});
    case OpId::isneginf:
      return run<IsNegInf, 1, out_bool>(a, n, RealTypes{});
    case OpId::isreal:
      return run<IsReal, 1, out_bool>(a, n, AllTypes{});
    case OpId::signbit:
      return run<SignBit, 1, out_bool>(a, n, RealTypes{});
    default:
      return false;
  }
}

}  // namespace ember::cuda
