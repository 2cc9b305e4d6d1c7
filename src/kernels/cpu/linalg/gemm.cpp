// GEMM glue (see gemm.h). Float and complex go to OpenBLAS; integers use the blocked kernel
// below, which packs panels of A and B into the accumulator type so the micro-kernel is a
// fixed-size loop nest over contiguous data that the compiler vectorizes.
#include "kernels/cpu/linalg/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/parallel.h"
#include "ember/version.h"

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

// ---- integer GEMM ----

namespace {

// Note [Integer GEMM blocking]
// Products are accumulated in an unsigned type at least as wide as the dtype: wrapping
// arithmetic modulo 2^bits gives exactly the low bits of PyTorch's result for every integer
// dtype, and unsigned overflow is defined. A is packed into MR-row panels and B into NR-column
// panels (k-major), so the MR×NR micro-kernel streams both with unit stride.
constexpr int64_t kMR = 4, kNR = 16;
constexpr int64_t kKC = 256, kMC = 128, kNC = 1024;

/// a * b wrapping modulo 2^bits(U) (uint16 operands would otherwise promote to signed int).
template <class U>
inline U wmul(U a, U b) {
  using M = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return U(M(a) * M(b));
}

// The micro-kernel body, compiled per ISA below (this file is built for the baseline ISA; the
// target attributes let the wide-vector variants use AVX2 / AVX-512 multiplies). Chosen once
// from ember::cpu_capability(), so EMBER_CPU_CAPABILITY applies here too.
#define EMBER_INT_MICRO_KERNEL_BODY                                                \
  for (int64_t r = 0; r < kMR; ++r)                                                \
    for (int64_t c = 0; c < kNR; ++c) acc[r][c] = 0;                               \
  for (int64_t p = 0; p < kc; ++p) {                                               \
    const U* b = bp + p * kNR;                                                     \
    const U* a = ap + p * kMR;                                                     \
    for (int64_t r = 0; r < kMR; ++r) {                                            \
      const U av = a[r];                                                           \
      for (int64_t c = 0; c < kNR; ++c) acc[r][c] = U(acc[r][c] + wmul(av, b[c])); \
    }                                                                              \
  }

template <class U>
void micro_kernel_default(int64_t kc, const U* __restrict ap, const U* __restrict bp,
                          U (&acc)[kMR][kNR]) {
  EMBER_INT_MICRO_KERNEL_BODY
}

template <class U>
__attribute__((target("avx2,fma"))) void micro_kernel_avx2(int64_t kc, const U* __restrict ap,
                                                           const U* __restrict bp,
                                                           U (&acc)[kMR][kNR]) {
  EMBER_INT_MICRO_KERNEL_BODY
}

template <class U>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma"))) void micro_kernel_avx512(
    int64_t kc, const U* __restrict ap, const U* __restrict bp, U (&acc)[kMR][kNR]) {
  EMBER_INT_MICRO_KERNEL_BODY
}
#undef EMBER_INT_MICRO_KERNEL_BODY

template <class U>
using MicroKernel = void (*)(int64_t, const U*, const U*, U (&)[kMR][kNR]);

template <class U>
MicroKernel<U> pick_micro_kernel() {
  static const MicroKernel<U> k = [] {
    const std::string_view cap = cpu_capability();
    if (cap == "avx512") return &micro_kernel_avx512<U>;
    if (cap == "avx2") return &micro_kernel_avx2<U>;
    return &micro_kernel_default<U>;
  }();
  return k;
}

template <class T, class U>
void int_gemm_impl(int64_t m, int64_t n, int64_t k, U alpha, const T* a, int64_t rsa, int64_t csa,
                   const T* b, int64_t rsb, int64_t csb, U beta, T* c, int64_t rsc, int64_t csc) {
  // beta * C first (beta == 0 overwrites), then every k block adds alpha * A_blk·B_blk.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T& cv = c[i * rsc + j * csc];
      cv = beta == 0 ? T(0) : T(wmul(U(cv), beta));
    }
  if (k == 0 || alpha == 0) return;
  const MicroKernel<U> micro_kernel = pick_micro_kernel<U>();
  const int64_t nc_max = std::min(kNC, (n + kNR - 1) / kNR * kNR);
  std::vector<U> bpack(size_t(std::min(kKC, k) * nc_max));
  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc);
    const int64_t npanels = (nc + kNR - 1) / kNR;
    for (int64_t pc = 0; pc < k; pc += kKC) {
      const int64_t kc = std::min(kKC, k - pc);
      // Pack B[pc:pc+kc, jc:jc+nc] into NR-column panels (zero-padded).
      for (int64_t jp = 0; jp < npanels; ++jp) {
        U* dst = bpack.data() + jp * kc * kNR;
        const int64_t j0 = jc + jp * kNR, w = std::min(kNR, jc + nc - j0);
        for (int64_t p = 0; p < kc; ++p) {
          const T* src = b + (pc + p) * rsb + j0 * csb;
          U* d = dst + p * kNR;
          for (int64_t q = 0; q < w; ++q) d[q] = U(src[q * csb]);
          for (int64_t q = w; q < kNR; ++q) d[q] = 0;
        }
      }
      const int64_t mblocks = (m + kMC - 1) / kMC;
      // Integer results are exact, so splitting rows across threads cannot change them.
      const int64_t grain = std::max<int64_t>(1, (1 << 18) / std::max<int64_t>(1, kc * nc * kMC));
      parallel_for(0, mblocks, grain, [&](int64_t mb0, int64_t mb1) {
        std::vector<U> apack(size_t(kMC * kc));
        U acc[kMR][kNR];
        for (int64_t mb = mb0; mb < mb1; ++mb) {
          const int64_t ic = mb * kMC, mc = std::min(kMC, m - ic);
          const int64_t mpanels = (mc + kMR - 1) / kMR;
          for (int64_t ip = 0; ip < mpanels; ++ip) {
            U* dst = apack.data() + ip * kc * kMR;
            const int64_t i0 = ic + ip * kMR, h = std::min(kMR, ic + mc - i0);
            for (int64_t p = 0; p < kc; ++p) {
              const T* src = a + i0 * rsa + (pc + p) * csa;
              U* d = dst + p * kMR;
              for (int64_t r = 0; r < h; ++r) d[r] = U(src[r * rsa]);
              for (int64_t r = h; r < kMR; ++r) d[r] = 0;
            }
          }
          for (int64_t jp = 0; jp < npanels; ++jp) {
            const int64_t j0 = jc + jp * kNR, w = std::min(kNR, jc + nc - j0);
            for (int64_t ip = 0; ip < mpanels; ++ip) {
              const int64_t i0 = ic + ip * kMR, h = std::min(kMR, ic + mc - i0);
              micro_kernel(kc, apack.data() + ip * kc * kMR, bpack.data() + jp * kc * kNR, acc);
              for (int64_t r = 0; r < h; ++r) {
                T* crow = c + (i0 + r) * rsc + j0 * csc;
                for (int64_t q = 0; q < w; ++q)
                  crow[q * csc] = T(U(U(crow[q * csc]) + wmul(alpha, acc[r][q])));
              }
            }
          }
        }
      });
    }
  }
}

// 8/16/32-bit types accumulate in uint32 (16-bit accumulators would need unsigned-int
// promotion in C++, which GCC vectorizes poorly), int64 in uint64.
template <class T>
using acc_t = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

}  // namespace

void int_gemm(ScalarType dt, int64_t m, int64_t n, int64_t k, int64_t alpha, const void* a,
              int64_t rsa, int64_t csa, const void* b, int64_t rsb, int64_t csb, int64_t beta,
              void* c, int64_t rsc, int64_t csc) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using U = acc_t<T>;
    int_gemm_impl<T, U>(m, n, k, U(alpha), static_cast<const T*>(a), rsa, csa,
                        static_cast<const T*>(b), rsb, csb, U(beta), static_cast<T*>(c), rsc, csc);
  };
  switch (dt) {
    case ScalarType::Byte:
      return run(uint8_t{});
    case ScalarType::Char:
      return run(int8_t{});
    case ScalarType::Short:
      return run(int16_t{});
    case ScalarType::Int:
      return run(int32_t{});
    case ScalarType::Long:
      return run(int64_t{});
    default:
      EMBER_THROW(Error, "[gemm] unsupported integer dtype ", dtype_name(dt));
  }
}

}  // namespace ember::cpu
