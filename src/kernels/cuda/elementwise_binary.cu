// CUDA kernels of the arithmetic ops (add ... addcdiv), with the dtypes the CPU kernels register
// for each (src/kernels/cpu/elementwise/arith_kernels.cpp).
#include "kernels/cuda/elementwise_binary.cuh"
#include "kernels/cuda/elementwise_kernels.cuh"

namespace ember::cuda {

bool launch_ew_binary(OpId op, const EwArgs& a) {
  using namespace ew;
  using Float32Up = TypeList<BFloat16, float, double>;
  const char* n = op_name(op);
  switch (op) {
    case OpId::add:
      return run<Add, 2>(a, n, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
    case OpId::sub:
      return run<Sub, 2>(a, n, IntTypes{}, FloatTypes{}, ComplexTypes{});
    case OpId::mul:
      return run<Mul, 2>(a, n, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
    case OpId::true_divide:
      return run<TrueDivide, 2>(a, n, FloatTypes{}, ComplexTypes{});
    case OpId::div_trunc:
      return run<DivTrunc, 2>(a, n, IntTypes{}, FloatOnly{}) ||
             run<DivTruncHalf, 2>(a, n, TypeList<Half>{}) ||
             run<DivTruncBF16, 2>(a, n, TypeList<BFloat16>{});
    case OpId::div_floor:
    case OpId::floor_divide:
      return run<DivFloor, 2>(a, n, IntTypes{}, FloatTypes{});
    case OpId::remainder:
      return run<Remainder, 2>(a, n, IntTypes{}, FloatTypes{});
    case OpId::fmod:
      return run<Fmod, 2>(a, n, IntTypes{}, FloatTypes{});
    case OpId::pow:
      return run<Pow, 2>(a, n, IntTypes{}, FloatTypes{}, ComplexTypes{});
    case OpId::float_power:
      return run<Pow, 2>(a, n, TypeList<double, complex<double>>{});
    case OpId::atan2:
      return run<Atan2, 2>(a, n, Float32Up{});
    case OpId::hypot:
      return run<Hypot, 2>(a, n, Float32Up{});
    case OpId::copysign:
      return run<Copysign, 2>(a, n, FloatTypes{});
    case OpId::nextafter:
      return run<Nextafter, 2>(a, n, FloatOnly{}) ||
             run<NextafterBF16, 2>(a, n, TypeList<BFloat16>{});
    case OpId::xlogy:
      return run<Xlogy, 2>(a, n, FloatTypes{});
    case OpId::lerp_scalar:
      return run<LerpScalar, 2>(a, n, Float32Up{}, ComplexTypes{});
    case OpId::lerp_tensor:
      return run<LerpTensor, 3>(a, n, Float32Up{}, ComplexTypes{});
    case OpId::addcmul:
      return run<Addcmul, 3>(a, n, IntTypes{}, Float32Up{}, ComplexTypes{});
    case OpId::addcdiv:
      return run<Addcdiv, 3>(a, n, Float32Up{}, ComplexTypes{});
    default:
      return false;
  }
}

}  // namespace ember::cuda
