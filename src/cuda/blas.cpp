// The batched strided GEMM behind every matrix product on CUDA (kernels/stubs/blas.h), through
// cuBLAS on the current stream: float, double and complex with their own routines, float16 and
// bfloat16 through cublasGemmStridedBatchedEx with float32 accumulation (as PyTorch), float32
// with TF32 tensor cores when float32_matmul_precision() is not "highest".
//
// Note [Row-major GEMM on cuBLAS]
// cuBLAS is column-major. A row-major m×n C with row stride crs is, read column-major, the n×m
// matrix Cᵀ with leading dim crs, and Cᵀ = Bᵀ·Aᵀ: the product runs as gemm(n, m, k) with B first.
// An operand laid out row-major (blas_layout's `transposed` false) is, read column-major, its own
// transpose, which is what Cᵀ = Bᵀ·Aᵀ wants: op N. One stored transposed (column-major) takes op T,
// or op C with a conj bit. cuBLAS has no "conjugate, not transposed" op, so a conj operand must
// come transposed: the op body resolves the others first (gemm_core in ops/linalg/blas_ops.cpp).
// A broadcast batch is a batch stride of 0, which cuBLAS reads in place.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "cuda/cuda_blas_util.h"
#include "cuda/cuda_context.h"
#include "ember/context.h"
#include "ember/cuda.h"
#include "ember/dispatch_type.h"
#include "kernels/stubs/blas.h"
#include "ops/device_kernels.h"

namespace ember::cuda {
namespace {

// Some cuBLAS versions launch batched kernels with the batch on gridDim.z (at most 65535).
constexpr int64_t kMaxBatchPerCall = 65535;

struct OperandOp {
  cublasOperation_t op;
  int64_t ld;
};

/// The cuBLAS op and leading dim of a rows×cols row-major operand (Note [Row-major GEMM on
/// cuBLAS]).
OperandOp operand_op(const Tensor& t, MatStrides s, int64_t rows, int64_t cols, const char* name) {
  const BlasLayout l = blas_layout(rows, cols, s.rs, s.cs);
  EMBER_CHECK(l.ok, "[strided_gemm] operand ", name, " of ", rows, "x", cols, " with strides (",
              s.rs, ", ", s.cs, ") fits no BLAS layout");
  if (t.is_conj()) {
    EMBER_CHECK(l.transposed, "[strided_gemm] a conjugated operand ", name,
                " must be laid out transposed on cuda (resolve the conj bit first)");
    return {CUBLAS_OP_C, l.ld};
  }
  return {l.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, l.ld};
}

void strided_gemm_cuda(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb,
                       const Tensor& c, int64_t cbs, int64_t crs, int64_t batch, int64_t m,
                       int64_t n, int64_t k, const Scalar& beta, const Scalar& alpha) {
  DeviceGuard guard(c.device());
  const ScalarType dt = c.dtype();
  EMBER_CHECK(a.dtype() == dt && b.dtype() == dt, "[strided_gemm] operands of ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()), " into ", dtype_name(dt));
  EMBER_CHECK(a.is_cuda() && b.is_cuda() && a.device() == c.device() && b.device() == c.device(),
              "[strided_gemm] all operands must be on ", c.device().str());
  if (batch == 0 || m == 0 || n == 0 || k == 0) return;
  // Cᵀ = Bᵀ·Aᵀ: cuBLAS's first operand is B (n×k as read), its second A.
  const OperandOp ob = operand_op(b, sb, k, n, "mat2");
  const OperandOp oa = operand_op(a, sa, m, k, "mat1");
  const int64_t ldc = m == 1 ? std::max<int64_t>(1, n) : crs;
  const int64_t item = int64_t(c.itemsize());
  cublasHandle_t h = cublas_handle();
  const int M = int(n), N = int(m), K = int(k);
  const int lda = int(ob.ld), ldb = int(oa.ld), ldcc = int(ldc);
  for (int64_t b0 = 0; b0 < batch; b0 += kMaxBatchPerCall) {
    const int nb = int(std::min(kMaxBatchPerCall, batch - b0));
    const void* A = static_cast<const char*>(b.data_ptr()) + b0 * sb.bs * item;
    const void* B = static_cast<const char*>(a.data_ptr()) + b0 * sa.bs * item;
    void* C = static_cast<char*>(c.data_ptr()) + b0 * cbs * item;
    switch (dt) {
      case kDouble: {
        const double al = alpha.to<double>(), be = beta.to<double>();
        set_math_mode(h, false);
        check_cublas(
            cublasDgemmStridedBatched(h, ob.op, oa.op, M, N, K, &al, static_cast<const double*>(A),
                                      lda, sb.bs, static_cast<const double*>(B), ldb, sa.bs, &be,
                                      static_cast<double*>(C), ldcc, cbs, nb),
            "cublasDgemmStridedBatched");
        break;
      }
      case kComplexFloat: {
        const auto al0 = alpha.toComplexDouble(), be0 = beta.toComplexDouble();
        const cuComplex al{float(al0.real()), float(al0.imag())};
        const cuComplex be{float(be0.real()), float(be0.imag())};
        set_math_mode(h, false);
        check_cublas(cublasCgemmStridedBatched(h, ob.op, oa.op, M, N, K, &al,
                                               static_cast<const cuComplex*>(A), lda, sb.bs,
                                               static_cast<const cuComplex*>(B), ldb, sa.bs, &be,
                                               static_cast<cuComplex*>(C), ldcc, cbs, nb),
                     "cublasCgemmStridedBatched");
        break;
      }
      case kComplexDouble: {
        const auto al0 = alpha.toComplexDouble(), be0 = beta.toComplexDouble();
        const cuDoubleComplex al{al0.real(), al0.imag()}, be{be0.real(), be0.imag()};
        set_math_mode(h, false);
        check_cublas(cublasZgemmStridedBatched(
                         h, ob.op, oa.op, M, N, K, &al, static_cast<const cuDoubleComplex*>(A), lda,
                         sb.bs, static_cast<const cuDoubleComplex*>(B), ldb, sa.bs, &be,
                         static_cast<cuDoubleComplex*>(C), ldcc, cbs, nb),
                     "cublasZgemmStridedBatched");
        break;
      }
      case kFloat:
      case kHalf:
      case kBFloat16: {
        // float16/bfloat16 accumulate in float32 with float scalars; float32 may use TF32.
        const float al = alpha.to<float>(), be = beta.to<float>();
        const bool tf32 = dt == kFloat && tf32_allowed();
        set_math_mode(h, tf32);
        const cudaDataType_t type = dt == kFloat  ? CUDA_R_32F
                                    : dt == kHalf ? CUDA_R_16F
                                                  : CUDA_R_16BF;
        const cublasComputeType_t compute =
            tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        check_cublas(cublasGemmStridedBatchedEx(h, ob.op, oa.op, M, N, K, &al, A, type, lda, sb.bs,
                                                B, type, ldb, sa.bs, &be, C, type, ldcc, cbs, nb,
                                                compute, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmStridedBatchedEx");
        break;
      }
      default:
        EMBER_THROW(NotImplementedError, "[strided_gemm] not implemented for cuda ",
                    dtype_name(dt));
    }
  }
}

/// Sum of `n` contiguous host values: int64 (wrapping) for integers, double or complex<double>
/// accumulation otherwise (the CPU kernel's rule).
template <class T>
Scalar host_sum(const T* p, int64_t n) {
  if constexpr (std::is_same_v<T, complex<float>> || std::is_same_v<T, complex<double>>) {
    complex<double> s = 0;
    for (int64_t i = 0; i < n; ++i) s += complex<double>(p[i]);
    return Scalar(s);
  } else if constexpr (std::is_integral_v<T>) {
    uint64_t s = 0;
    for (int64_t i = 0; i < n; ++i) s += uint64_t(int64_t(p[i]));
    return Scalar(int64_t(s));
  } else {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(p[i]);
    return Scalar(s);
  }
}

// trace returns a host Scalar: the diagonal is copied to the host (one strided copy) and summed
// there in the CPU kernel's order.
Scalar trace_cuda(const Tensor& x) {
  DeviceGuard guard(x.device());
  check_not_capturing("trace");
  const int64_t nd = std::min(x.size(0), x.size(1));
  const int64_t step = x.stride(0) + x.stride(1);
  const size_t item = x.itemsize();
  std::vector<unsigned char> buf(size_t(std::max<int64_t>(nd, 1)) * item);
  if (nd > 0) {
    if (step > 0) {
      EMBER_CUDA_CHECK(cudaMemcpy2DAsync(buf.data(), item, x.data_ptr(), size_t(step) * item, item,
                                         size_t(nd), cudaMemcpyDeviceToHost, current_raw_stream()));
    } else {
      // Both strides 0 (an expanded scalar): one element, repeated.
      EMBER_CUDA_CHECK(cudaMemcpyAsync(buf.data(), x.data_ptr(), item, cudaMemcpyDeviceToHost,
                                       current_raw_stream()));
    }
    sync_current_stream();
    if (step <= 0)
      for (int64_t i = 1; i < nd; ++i) std::copy_n(buf.data(), item, buf.data() + i * item);
  }
  Scalar r;
  EMBER_DISPATCH_ALL_TYPES(
      x.dtype(), "trace", [&] { r = host_sum(reinterpret_cast<const scalar_t*>(buf.data()), nd); });
  return r;
}

}  // namespace

EMBER_REGISTER_KERNEL(strided_gemm_stub, kCUDA, strided_gemm_cuda);
EMBER_REGISTER_KERNEL(trace_stub, kCUDA, trace_cuda);

namespace {
// The matrix products whose bodies funnel into strided_gemm_stub (their _out forms and the
// composites need no entry). Integer products raise NotImplementedError on cuda, as PyTorch's
// "addmm_cuda" does.
[[maybe_unused]] const bool g_register_blas = [] {
  const auto dts = {kFloat, kDouble, kHalf, kBFloat16, kComplexFloat, kComplexDouble};
  for (OpId op : {OpId::mm, OpId::bmm, OpId::matmul, OpId::addmm, OpId::addmm_, OpId::baddbmm,
                  OpId::addbmm, OpId::addmv, OpId::mv, OpId::dot, OpId::vdot, OpId::linear})
    register_kernel(kCUDA, op, dts);
  register_kernel(kCUDA, OpId::trace,
                  {kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble,
                   kComplexFloat, kComplexDouble});
  return true;
}();
}  // namespace

}  // namespace ember::cuda
