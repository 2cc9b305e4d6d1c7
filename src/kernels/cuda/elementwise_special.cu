// CUDA kernels of the special functions the device computes with CUDA's math library or a
// closed form, with the dtypes the CPU kernels register for each (src/kernels/cpu/elementwise/
// special_kernels.cpp, bessel_kernels.cpp). The functions the CPU evaluates with its own series
// (digamma, polygamma, mvlgamma, igamma(c), zeta, the scaled and modified Bessel functions
// i0e/i1e/k0/k1, Airy Ai, the orthogonal polynomials) have no CUDA kernel: the backend reports
// them as not implemented.
#include "kernels/cuda/elementwise_activation.cuh"
#include "kernels/cuda/elementwise_kernels.cuh"

namespace ember::cuda {

bool launch_ew_special(OpId op, const EwArgs& a) {
  using namespace ew;
  const char* n = op_name(op);
  switch (op) {
    case OpId::i0:
      return run<I0, 1>(a, n, BF16Float{});
    case OpId::sinc:
      return run<Sinc, 1>(a, n, BF16Float{}, ComplexTypes{});
    case OpId::deg2rad:
      return run<Deg2rad, 1>(a, n, FloatTypes{});
    case OpId::rad2deg:
      return run<Rad2deg, 1>(a, n, FloatTypes{});
    case OpId::logaddexp:
      return run<Logaddexp, 2>(a, n, BF16Float{});
    case OpId::logaddexp2:
      return run<Logaddexp2, 2>(a, n, BF16Float{});
    case OpId::heaviside:
      return run<Heaviside, 2>(a, n, BoolType{}, IntTypes{}, FloatTypes{});
    case OpId::gcd:
      return run<Gcd, 2>(a, n, IntTypes{});
    case OpId::lcm:
      return run<Lcm, 2>(a, n, IntTypes{});
    case OpId::special_entr:
      return run<Entr, 1>(a, n, BF16Float{});
    case OpId::special_xlog1py:
      return run<Xlog1py, 2>(a, n, FloatTypes{});
    case OpId::special_ndtr:
      return run<Ndtr, 1>(a, n, BF16Float{});
    case OpId::special_ndtri:
      return run<Ndtri, 1>(a, n, FloatOnly{});
    case OpId::special_log_ndtr:
      return run<LogNdtr, 1>(a, n, FloatOnly{});
    case OpId::special_erfcx:
      return run<Erfcx, 1>(a, n, FloatOnly{});
    case OpId::special_i1:
    case OpId::special_modified_bessel_i1:
      return run<I1, 1>(a, n, FloatOnly{});
    case OpId::special_modified_bessel_i0:
      return run<I0, 1>(a, n, FloatOnly{});
    case OpId::special_bessel_j0:
      return run<J0, 1>(a, n, FloatOnly{});
    case OpId::special_bessel_j1:
      return run<J1, 1>(a, n, FloatOnly{});
    case OpId::special_bessel_y0:
      return run<Y0, 1>(a, n, FloatOnly{});
    case OpId::special_bessel_y1:
      return run<Y1, 1>(a, n, FloatOnly{});
    case OpId::special_spherical_bessel_j0:
      return run<SphericalJ0, 1>(a, n, FloatOnly{});
    default:
      return false;
  }
}

}  // namespace ember::cuda
