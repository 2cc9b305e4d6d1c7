// CUDA kernels of the comparisons, logical ops and isclose, and where, with the dtypes the CPU
// kernels register for each (src/kernels/cpu/elementwise/compare_kernels.cpp, copy_kernels.cpp).
// Bitwise ops, shifts, min/max and clamp are in elementwise_minmax.cu.
#include "kernels/cuda/elementwise_binary.cuh"
#include "kernels/cuda/elementwise_kernels.cuh"

namespace ember::cuda {

bool launch_ew_compare(OpId op, const EwArgs& a) {
  using namespace ew;
  using RealTypes =
      TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float, double>;
  const char* n = op_name(op);
  switch (op) {
    case OpId::eq:
      return run<Eq, 2, out_bool>(a, n, RealTypes{}, ComplexTypes{});
    case OpId::ne:
      return run<Ne, 2, out_bool>(a, n, RealTypes{}, ComplexTypes{});
    case OpId::lt:
      return run<Lt, 2, out_bool>(a, n, RealTypes{});
    case OpId::le:
      return run<Le, 2, out_bool>(a, n, RealTypes{});
    case OpId::gt:
      return run<Gt, 2, out_bool>(a, n, RealTypes{});
    case OpId::ge:
      return run<Ge, 2, out_bool>(a, n, RealTypes{});
    case OpId::logical_and:
      return run<LogicalAnd, 2, out_bool>(a, n, RealTypes{}, ComplexTypes{});
    case OpId::logical_or:
      return run<LogicalOr, 2, out_bool>(a, n, RealTypes{}, ComplexTypes{});
    case OpId::logical_xor:
      return run<LogicalXor, 2, out_bool>(a, n, RealTypes{}, ComplexTypes{});
    case OpId::isclose:
      return run<IsClose, 2, out_bool>(a, n, IntTypes{}, BoolType{}, FloatOnly{}, ComplexTypes{}) ||
             run<IsCloseHalf, 2, out_bool>(a, n, TypeList<Half>{}) ||
             run<IsCloseBF16, 2, out_bool>(a, n, TypeList<BFloat16>{});
    default:
      return false;
  }
}

namespace {

template <class T>
__global__ void __launch_bounds__(kBlockSize)
    where_kernel(T* out, const bool* cond, const T* x, const T* y, Offsets32<4> oc, uint32_t n) {
  const uint32_t step = blockDim.x * gridDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int32_t off[4];
    oc.get(i, off);
    out[off[0]] = cond[off[1]] ? x[off[2]] : y[off[3]];
  }
}

}  // namespace

bool launch_ew_where(const EwArgs& a) {
  if (a.nin != 3) return false;
  const int sms = current_sm_count();
  cudaStream_t stream = current_raw_stream();
  return dispatch_size(elementSize(a.out_dtype), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch::split_32bit(a.g, [&](const int64_t(&base)[4], const Geometry<4>& sub) {
      const uint32_t n = uint32_t(sub.numel);
      where_kernel<T>
          <<<launch::grid_size(n, kBlockSize, sms, ew::kBlocksPerSm), kBlockSize, 0, stream>>>(
              static_cast<T*>(a.out) + base[0], static_cast<const bool*>(a.in[0]) + base[1],
              static_cast<const T*>(a.in[1]) + base[2], static_cast<const T*>(a.in[2]) + base[3],
              launch::to_offsets32(sub), n);
      check_launch("where");
    });
  });
}

}  // namespace ember::cuda
