// CUDA kernels of the bitwise ops, shifts, minimum/maximum/fmin/fmax, clamp and conj_physical,
// with the dtypes the CPU kernels register for each (src/kernels/cpu/elementwise/
// compare_kernels.cpp, copy_kernels.cpp).
#include "kernels/cuda/elementwise_binary.cuh"
#include "kernels/cuda/elementwise_kernels.cuh"

namespace ember::cuda {

bool launch_ew_minmax(OpId op, const EwArgs& a) {
  using namespace ew;
  using RealTypes =
      TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float, double>;
  using ClampTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t, BFloat16, float, double>;
  const char* n = op_name(op);
  switch (op) {
    case OpId::bitwise_and:
      return run<BitAnd, 2>(a, n, BoolType{}, IntTypes{});
    case OpId::bitwise_or:
      return run<BitOr, 2>(a, n, BoolType{}, IntTypes{});
    case OpId::bitwise_xor:
      return run<BitXor, 2>(a, n, BoolType{}, IntTypes{});
    case OpId::bitwise_left_shift:
      return run<LeftShift, 2>(a, n, IntTypes{});
    case OpId::bitwise_right_shift:
      return run<RightShift, 2>(a, n, IntTypes{});
    case OpId::minimum:
      return run<Minimum, 2>(a, n, RealTypes{});
    case OpId::maximum:
      return run<Maximum, 2>(a, n, RealTypes{});
    case OpId::fmin:
      return run<Fmin, 2>(a, n, RealTypes{});
    case OpId::fmax:
      return run<Fmax, 2>(a, n, RealTypes{});
    case OpId::clamp:
      return run<Clamp, 1>(a, n, ClampTypes{});
    case OpId::clamp_tensor:
      return run<ClampTensor, 3>(a, n, ClampTypes{});
    case OpId::conj_physical:
      return run<ConjPhysical, 1>(a, n, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
    default:
      return false;
  }
}

}  // namespace ember::cuda
