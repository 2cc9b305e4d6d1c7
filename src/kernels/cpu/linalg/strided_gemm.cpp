// The batched strided GEMM behind every matrix product (kernels/stubs/blas.h): float through
// blas_gemm (ember's packed kernel or OpenBLAS, Note [GEMM choice] in gemm.cpp), complex through
// OpenBLAS, integers through the blocked kernel of int_gemm.cpp, bfloat16 and float16 as
// Note [16-bit float GEMM] says.
#include <complex>
#include <utility>

#include "core/parallel_internal.h"
#include "core/tensor_util.h"
#include "ember/context.h"
#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/linalg/gemm_dnnl.h"
#include "kernels/stubs/blas.h"

namespace ember {

EMBER_DEFINE_KERNEL(strided_gemm_stub);

namespace cpu {
namespace {

// Note [Batched GEMM threading]
// OpenBLAS splits one product across threads well once a matrix holds enough work, but for
// small matrices its per-call thread start-up costs more than the product. A batch of small
// products is therefore split across ember's threads with BLAS single-threaded in each, and a
// batch of large ones runs one product at a time on all threads. The switch is at m*n*k of
// 256^3 (measured with bench/ops_side_by_side.py: 64x128x128 batches are 1.6-1.9x faster split
// across the batch on 2 threads, while 512^3 products gain from threads inside BLAS). A batch
// smaller than the thread count also stays inside BLAS.
constexpr double kBatchAcrossMaxWork = 256.0 * 256.0 * 256.0;

// Note [16-bit float GEMM]
// bfloat16/float16 products accumulate in float32 and round once, as PyTorch's. oneDNN's matmul
// runs them directly where it has a fast kernel (oneDNN 2.x: bfloat16 from AVX-512 on, see
// gemm_dnnl.cpp). Elsewhere (AVX2: oneDNN has no bfloat16 matmul and Debian's OpenBLAS exports
// no sbgemm) the operands are converted to float32 by the vector casts and multiplied by sgemm:
// the conversions cost O(n^2) against the product's O(n^3), so this runs at sgemm's speed.
// float32 products under set_float32_matmul_precision("medium") round their operands to
// bfloat16 and take oneDNN's bfloat16 kernel, float32 accumulation and output, when that kernel
// exists and the product is large enough to repay the two conversions (m*n*k >= 128^3); without
// it bfloat16 would only add rounding, so they stay float32, as "high" and "highest" always do.
constexpr double kMediumMinWork = 128.0 * 128.0 * 128.0;

/// The product; `openblas_only` keeps float32 products off ember's packed kernel (see
/// reduced_gemm).
void strided_gemm_impl(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb,
                       const Tensor& c, int64_t cbs, int64_t crs, int64_t batch, int64_t m,
                       int64_t n, int64_t k, const Scalar& beta, const Scalar& alpha,
                       bool openblas_only);

/// A packed (batch or 1, rows, cols) copy of an operand in dtype `to`, and its strides.
std::pair<Tensor, MatStrides> packed_copy(const Tensor& t, MatStrides s, ScalarType to,
                                          int64_t batch, int64_t rows, int64_t cols) {
  const int64_t nb = s.bs == 0 ? 1 : batch;
  Tensor p = empty_tensor({nb, rows, cols}, to);
  const MatStrides ps{s.bs == 0 ? 0 : rows * cols, cols, 1};
  convert_matrix(t.dtype(), t.data_ptr(), s, to, p.data_ptr(), {rows * cols, cols, 1}, nb, rows,
                 cols);
  return {p, ps};
}

void reduced_gemm(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb, const Tensor& c,
                  int64_t cbs, int64_t crs, int64_t batch, int64_t m, int64_t n, int64_t k,
                  const Scalar& beta, const Scalar& alpha) {
  const ScalarType dt = c.dtype();
  const float fa = alpha.to<float>(), fb = beta.to<float>();
  if (dnnl_gemm(dt, dt, batch, m, n, k, a.data_ptr(), sa, b.data_ptr(), sb, c.data_ptr(), cbs, crs,
                fa, fb))
    return;
  auto [af, saf] = packed_copy(a, sa, kFloat, batch, m, k);
  auto [bf, sbf] = packed_copy(b, sb, kFloat, batch, k, n);
  Tensor cf = empty_tensor({batch, m, n}, kFloat);
  const bool beta_zero = beta.toComplexDouble() == std::complex<double>(0, 0);
  if (!beta_zero)
    convert_matrix(dt, c.data_ptr(), {cbs, crs, 1}, kFloat, cf.data_ptr(), {m * n, n, 1}, batch, m,
                   n);
  // OpenBLAS's float32 sums, rounded once, are torch's result bit for bit (its float32
  // reference rounded to 16 bits); the packed kernel's other summation order can differ by an
  // ulp of the 16-bit type after rounding.
  strided_gemm_impl(af, saf, bf, sbf, cf, m * n, n, batch, m, n, k, beta, alpha, true);
  convert_matrix(kFloat, cf.data_ptr(), {m * n, n, 1}, dt, c.data_ptr(), {cbs, crs, 1}, batch, m,
                 n);
}

/// A float32 product through bfloat16 operands (precision "medium"); false when not taken.
bool medium_gemm(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb, const Tensor& c,
                 int64_t cbs, int64_t crs, int64_t batch, int64_t m, int64_t n, int64_t k,
                 const Scalar& beta, const Scalar& alpha) {
  if (float32_matmul_precision() != MatmulPrecision::Medium ||
      double(m) * double(n) * double(k) < kMediumMinWork || !dnnl_gemm_available(kBFloat16))
    return false;
  auto [ab, sab] = packed_copy(a, sa, kBFloat16, batch, m, k);
  auto [bb, sbb] = packed_copy(b, sb, kBFloat16, batch, k, n);
  return dnnl_gemm(kBFloat16, kFloat, batch, m, n, k, ab.data_ptr(), sab, bb.data_ptr(), sbb,
                   c.data_ptr(), cbs, crs, alpha.to<float>(), beta.to<float>());
}

void strided_gemm_impl(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb,
                       const Tensor& c, int64_t cbs, int64_t crs, int64_t batch, int64_t m,
                       int64_t n, int64_t k, const Scalar& beta, const Scalar& alpha,
                       bool openblas_only) {
  const ScalarType dt = c.dtype();
  if (dt == kBFloat16 || dt == kHalf)
    return reduced_gemm(a, sa, b, sb, c, cbs, crs, batch, m, n, k, beta, alpha);
  if (dt == kFloat && !a.is_conj() && !b.is_conj() &&
      medium_gemm(a, sa, b, sb, c, cbs, crs, batch, m, n, k, beta, alpha))
    return;
  const int nt = get_num_threads();
  const bool across = batch > 1 && nt > 1 && batch >= nt &&
                      double(m) * double(n) * double(k) <= kBatchAcrossMaxWork;
  const size_t item = c.itemsize();
  const char* ap = static_cast<const char*>(a.data_ptr());
  const char* bp = static_cast<const char*>(b.data_ptr());
  char* cp = static_cast<char*>(c.data_ptr());
  if (isIntegralType(dt, false)) {
    const int64_t ia = alpha.toLong(), ib = beta.toLong();
    auto one = [&](int64_t i) {
      int_gemm(dt, m, n, k, ia, ap + size_t(i * sa.bs) * item, sa.rs, sa.cs,
               bp + size_t(i * sb.bs) * item, sb.rs, sb.cs, ib, cp + size_t(i * cbs) * item, crs,
               1);
    };
    if (across) {
      parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t i = b0; i < b1; ++i) one(i);
      });
    } else {
      for (int64_t i = 0; i < batch; ++i) one(i);
    }
    return;
  }
  const BlasLayout la = blas_layout(m, k, sa.rs, sa.cs);
  const BlasLayout lb = blas_layout(k, n, sb.rs, sb.cs);
  // The conj bit folds into the op: conj(A) read as stored is R, conj(A)^T is C.
  const Op la_op = la.transposed ? Op::T : Op::N, lb_op = lb.transposed ? Op::T : Op::N;
  const Op opa = a.is_conj() ? (la_op == Op::N ? Op::R : Op::C) : la_op;
  const Op opb = b.is_conj() ? (lb_op == Op::N ? Op::R : Op::C) : lb_op;
  const int64_t ldc = m == 1 ? std::max<int64_t>(1, n) : crs;
  const auto gemm = openblas_only ? openblas_gemm : blas_gemm;
  auto one = [&](int64_t i) {
    gemm(dt, opa, opb, m, n, k, alpha, ap + size_t(i * sa.bs) * item, la.ld,
         bp + size_t(i * sb.bs) * item, lb.ld, beta, cp + size_t(i * cbs) * item, ldc);
  };
  if (across) {
    set_blas_threads(1);
    parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) one(i);
    });
  } else {
    sync_blas_threads();
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

void strided_gemm_cpu(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb,
                      const Tensor& c, int64_t cbs, int64_t crs, int64_t batch, int64_t m,
                      int64_t n, int64_t k, const Scalar& beta, const Scalar& alpha) {
  strided_gemm_impl(a, sa, b, sb, c, cbs, crs, batch, m, n, k, beta, alpha, false);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(strided_gemm_stub, kCPU, cpu::strided_gemm_cpu);

}  // namespace ember
