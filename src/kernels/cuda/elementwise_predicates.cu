// CUDA kernels of the unary predicates (bool results), with the dtypes the CPU kernels register
// for each (src/kernels/cpu/elementwise/unary_kernels.cpp).
#include "kernels/cuda/elementwise_kernels.cuh"
#include "kernels/cuda/elementwise_unary.cuh"

namespace ember::cuda {

bool launch_ew_predicate(OpId op, const EwArgs& a) {
  using namespace ew;
  using AllTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float,
                            double, complex<float>, complex<double>>;
  using RealTypes =
      TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float, double>;
  const char* n = op_name(op);
  switch (op) {
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
