// CUDA kernels of the unary math ops and the unary predicates, with the dtypes the CPU kernels
// register for each (src/kernels/cpu/elementwise/unary_kernels.cpp). Split in three files to keep
// each one's compile time down: the cheap ops here (predicates in elementwise_predicates.cu), the
// real transcendental ops in elementwise_unary_float.cu, the complex ones in
// elementwise_unary_complex.cu.
#include "kernels/cuda/elementwise_kernels.cuh"
#include "kernels/cuda/elementwise_unary.cuh"

namespace ember::cuda {

bool launch_ew_unary(OpId op, const EwArgs& a) {
  using namespace ew;
  using AllTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float,
                            double, complex<float>, complex<double>>;
  using RealTypes =
      TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float, double>;
  const char* n = op_name(op);
  switch (op) {
    case OpId::neg:
      return run<Neg, 1>(a, n, IntTypes{}, FloatTypes{});
    case OpId::abs:
      return run<Abs, 1>(a, n, IntTypes{}, FloatTypes{});
    case OpId::sign:
      return run<Sign, 1>(a, n, BoolType{}, IntTypes{}, FloatTypes{});
    case OpId::sgn:
      return run<Sign, 1>(a, n, BoolType{}, IntTypes{}, FloatTypes{});
    case OpId::reciprocal:
      return run<Reciprocal, 1>(a, n, FloatTypes{});
    case OpId::square:
      return run<Square, 1>(a, n, IntTypes{}, FloatTypes{});
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
    default:
      return false;
  }
}

}  // namespace ember::cuda
