// Integer GEMM (see gemm.h): a cache-blocked kernel over packed panels with wrapping arithmetic,
// split out of gemm.cpp so the integer micro-kernels can grow without touching the BLAS glue.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/parallel.h"
#include "ember/version.h"
#include "kernels/cpu/linalg/gemm.h"

namespace ember::cpu {

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
