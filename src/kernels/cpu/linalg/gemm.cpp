// GEMM glue (see gemm.h). float32/float64 products go to ember's packed kernel or OpenBLAS by
// size (Note [GEMM choice]), complex ones to OpenBLAS; integers use the blocked kernel in
// int_gemm.cpp.
#include "kernels/cpu/linalg/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/parallel.h"
#include "ember/version.h"
#include "kernels/cpu/linalg/packed_gemm.h"

namespace ember::cpu {
namespace {

CBLAS_TRANSPOSE cblas_op(Op o) {
  switch (o) {
    case Op::N:
      return CblasNoTrans;
    case Op::T:
      return CblasTrans;
    case Op::C:
      return CblasConjTrans;
    case Op::R:
      return CblasConjNoTrans;
  }
  return CblasNoTrans;
}

// The thread count OpenBLAS was last given; -1 before the first call.
std::atomic<int> g_blas_threads{-1};

// Note [GEMM choice]
// float32/float64 products of more than kPackedMinWork multiply-adds run ember's packed kernel
// (Note [Packed GEMM] in packed_gemm_kernels.cpp) with the AVX2 and AVX-512 kernel sets; the
// rest, and every product with the default set, go to OpenBLAS. Measured one call at a time
// against cblas_sgemm on an AMD EPYC (Zen 3, AVX2+FMA, 2 cores; on each thread's CPU clock):
// - from 16^3 to 384^3 the packed kernel is 1.05-1.5x faster (OpenBLAS packs both operands and,
//   on several threads, starts its team per call), and below 16^3 OpenBLAS's small-matrix path
//   is;
// - float32 from 512^3 to 2048^3 and the skinny shapes with m >= 128 (4096x64x4096,
//   4096x4096x64, nn.Linear's x @ W^T): the blocked nest runs within a few percent of OpenBLAS
//   on one thread (85-88% of the FMA peak each) and ahead of it on two, where each thread runs
//   an independent block instead of OpenBLAS's synchronised team; so it takes every size;
// - float32 with m < 128 past kPackedMaxWork (64x4096x4096): B is streamed from memory once
//   for few rows, and OpenBLAS, which overlaps that stream with its kernel, stays 15% ahead;
// - float64 past kPackedMaxWork: the blocked nest ties OpenBLAS, which keeps those.
// The default set's kernel (SSE2, no FMA) runs at a third of OpenBLAS, which picks its own AVX2
// kernels whatever EMBER_CPU_CAPABILITY says; it stays compiled and tested for CPUs and builds
// where that changes. The packed kernel splits C over ember's threads, or runs on the calling
// thread inside a parallel region (a bmm split across the batch, Note [Batched GEMM
// threading]). The float32 products of bfloat16/float16 operands call openblas_gemm (Note [16-bit
// float GEMM]). EMBER_PACKED_GEMM=0 sends every product to OpenBLAS (for comparisons).
constexpr double kPackedMinWork = 16.0 * 16.0 * 16.0;
constexpr double kPackedMaxWork = 400.0 * 400.0 * 400.0;
constexpr int64_t kSkinnyRows = 128;

struct PackedGemm {
  bool enabled;
  decltype(&cap_default::packed_sgemm) s;
  decltype(&cap_default::packed_dgemm) d;
};

const PackedGemm& packed_gemm() {
  static const PackedGemm p = [] {
    const char* env = std::getenv("EMBER_PACKED_GEMM");
    const bool on = !(env && std::string_view(env) == "0");
    const std::string_view cap = cpu_capability();
    if (cap == "avx512") return PackedGemm{on, cap_avx512::packed_sgemm, cap_avx512::packed_dgemm};
    if (cap == "avx2") return PackedGemm{on, cap_avx2::packed_sgemm, cap_avx2::packed_dgemm};
    return PackedGemm{false, cap_default::packed_sgemm, cap_default::packed_dgemm};
  }();
  return p;
}

/// The threads the packed kernel may use: 1 inside a parallel region, else ember's count.
int packed_threads() { return omp_in_parallel() ? 1 : get_num_threads(); }

bool use_packed(bool is_float, int64_t m, int64_t n, int64_t k) {
  const double work = double(m) * double(n) * double(k);
  if (!packed_gemm().enabled || work <= kPackedMinWork) return false;
  return work <= kPackedMaxWork || (is_float && m >= kSkinnyRows);
}

}  // namespace

void set_blas_threads(int n) {
  if (g_blas_threads.load(std::memory_order_relaxed) == n) return;
  openblas_set_num_threads(n);
  g_blas_threads.store(n, std::memory_order_relaxed);
}

void sync_blas_threads() { set_blas_threads(get_num_threads()); }

void blas_gemm(ScalarType dt, Op opa, Op opb, int64_t m, int64_t n, int64_t k, const Scalar& alpha,
               const void* a, int64_t lda, const void* b, int64_t ldb, const Scalar& beta, void* c,
               int64_t ldc) {
  if (dt == ScalarType::Float || dt == ScalarType::Double) {
    // Real operands: conjugation is a no-op (C reads as T, R as N).
    if (use_packed(dt == ScalarType::Float, m, n, k)) {
      const int threads = packed_threads();
      const bool trans_a = opa == Op::T || opa == Op::C, trans_b = opb == Op::T || opb == Op::C;
      if (dt == ScalarType::Float)
        packed_gemm().s(trans_a, trans_b, m, n, k, alpha.to<float>(), static_cast<const float*>(a),
                        lda, static_cast<const float*>(b), ldb, beta.to<float>(),
                        static_cast<float*>(c), ldc, threads, PackedPath::kAuto);
      else
        packed_gemm().d(trans_a, trans_b, m, n, k, alpha.to<double>(),
                        static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb,
                        beta.to<double>(), static_cast<double*>(c), ldc, threads,
                        PackedPath::kAuto);
      return;
    }
  }
  openblas_gemm(dt, opa, opb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void openblas_gemm(ScalarType dt, Op opa, Op opb, int64_t m, int64_t n, int64_t k,
                   const Scalar& alpha, const void* a, int64_t lda, const void* b, int64_t ldb,
                   const Scalar& beta, void* c, int64_t ldc) {
  const CBLAS_TRANSPOSE ta = cblas_op(opa), tb = cblas_op(opb);
  const int M = int(m), N = int(n), K = int(k);
  switch (dt) {
    case ScalarType::Float:
      cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha.to<float>(), static_cast<const float*>(a),
                  int(lda), static_cast<const float*>(b), int(ldb), beta.to<float>(),
                  static_cast<float*>(c), int(ldc));
      return;
    case ScalarType::Double:
      cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha.to<double>(), static_cast<const double*>(a),
                  int(lda), static_cast<const double*>(b), int(ldb), beta.to<double>(),
                  static_cast<double*>(c), int(ldc));
      return;
    case ScalarType::ComplexFloat: {
      const complex<float> al = alpha.to<complex<float>>(), be = beta.to<complex<float>>();
      cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &al, a, int(lda), b, int(ldb), &be, c, int(ldc));
      return;
    }
    case ScalarType::ComplexDouble: {
      const complex<double> al = alpha.to<complex<double>>(), be = beta.to<complex<double>>();
      cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &al, a, int(lda), b, int(ldb), &be, c, int(ldc));
      return;
    }
    default:
      EMBER_THROW(Error, "[gemm] unsupported dtype ", dtype_name(dt));
  }
}

void blas_gemv(ScalarType dt, Op opa, int64_t m, int64_t n, const Scalar& alpha, const void* a,
               int64_t lda, const void* x, int64_t incx, const Scalar& beta, void* y,
               int64_t incy) {
  const CBLAS_TRANSPOSE ta = cblas_op(opa);
  const int M = int(m), N = int(n);
  // Note: BLAS reads negative increments from the far end; callers pass positive strides.
  switch (dt) {
    case ScalarType::Float:
      cblas_sgemv(CblasRowMajor, ta, M, N, alpha.to<float>(), static_cast<const float*>(a),
                  int(lda), static_cast<const float*>(x), int(incx), beta.to<float>(),
                  static_cast<float*>(y), int(incy));
      return;
    case ScalarType::Double:
      cblas_dgemv(CblasRowMajor, ta, M, N, alpha.to<double>(), static_cast<const double*>(a),
                  int(lda), static_cast<const double*>(x), int(incx), beta.to<double>(),
                  static_cast<double*>(y), int(incy));
      return;
    case ScalarType::ComplexFloat: {
      const complex<float> al = alpha.to<complex<float>>(), be = beta.to<complex<float>>();
      cblas_cgemv(CblasRowMajor, ta, M, N, &al, a, int(lda), x, int(incx), &be, y, int(incy));
      return;
    }
    case ScalarType::ComplexDouble: {
      const complex<double> al = alpha.to<complex<double>>(), be = beta.to<complex<double>>();
      cblas_zgemv(CblasRowMajor, ta, M, N, &al, a, int(lda), x, int(incx), &be, y, int(incy));
      return;
    }
    default:
      EMBER_THROW(Error, "[gemv] unsupported dtype ", dtype_name(dt));
  }
}

}  // namespace ember::cpu
