// The vectorized Adam/AdamW inner loop, included twice by functional.cpp: once for the baseline
// ISA (16-byte vectors) and once inside a `#pragma GCC target("avx2")` region (32-byte vectors).
// GCC vector extensions do the arithmetic; sqrt is the hardware instruction (std::sqrt in a
// loop does not vectorize because of errno). The per-element math is the scalar loop's, op for
// op (no contraction into FMA in ISO mode), so both paths give the same bits.
// Expects EMBER_OPTIM_ISA (namespace name) and EMBER_OPTIM_VBYTES (16 or 32).
#include <cstdint>
#include <cstring>

#include <immintrin.h>

namespace ember::optim::functional::EMBER_OPTIM_ISA {

typedef float vf __attribute__((vector_size(EMBER_OPTIM_VBYTES)));
typedef double vd __attribute__((vector_size(EMBER_OPTIM_VBYTES)));

#if EMBER_OPTIM_VBYTES == 32
inline vf vsqrt(vf x) { return (vf)_mm256_sqrt_ps((__m256)x); }
inline vd vsqrt(vd x) { return (vd)_mm256_sqrt_pd((__m256d)x); }
#else
inline vf vsqrt(vf x) { return (vf)_mm_sqrt_ps((__m128)x); }
inline vd vsqrt(vd x) { return (vd)_mm_sqrt_pd((__m128d)x); }
#endif

/// Adam/AdamW over n contiguous float or double elements; flags as in adam_step.
template <class A, bool kMax, bool kL2, bool kDec, bool kAms>
void adam_loop(A* __restrict param, const A* __restrict grad, A* __restrict m, A* __restrict v,
               A* __restrict vmax, int64_t n, A b1, A omb1, A b2, A omb2, A wd, A decay, A ep,
               A bc2s, A neg_step) {
  using V = std::conditional_t<std::is_same_v<A, float>, vf, vd>;
  constexpr int64_t L = EMBER_OPTIM_VBYTES / int64_t(sizeof(A));
  int64_t j = 0;
  for (; j + L <= n; j += L) {
    V g, x, mj, vj, mx;
    std::memcpy(&g, grad + j, sizeof(V));
    std::memcpy(&x, param + j, sizeof(V));
    std::memcpy(&mj, m + j, sizeof(V));
    std::memcpy(&vj, v + j, sizeof(V));
    if constexpr (kMax) g = -g;
    if constexpr (kL2) g = g + wd * x;
    if constexpr (kDec) x = x * decay;
    mj = mj * b1 + omb1 * g;
    vj = vj * b2 + omb2 * (g * g);
    std::memcpy(m + j, &mj, sizeof(V));
    std::memcpy(v + j, &vj, sizeof(V));
    V vdn = vj;
    if constexpr (kAms) {
      std::memcpy(&mx, vmax + j, sizeof(V));
      mx = ((vj > mx) | (vj != vj)) ? vj : mx;
      std::memcpy(vmax + j, &mx, sizeof(V));
      vdn = mx;
    }
    V denom = vsqrt(vdn) / bc2s + ep;
    x = x + neg_step * (mj / denom);
    std::memcpy(param + j, &x, sizeof(V));
  }
  for (; j < n; ++j) {
    A g = grad[j];
    if constexpr (kMax) g = -g;
    A x = param[j];
    if constexpr (kL2) g = g + wd * x;
    if constexpr (kDec) x = x * decay;
    A mj = m[j] * b1 + omb1 * g;
    A vj = v[j] * b2 + omb2 * (g * g);
    m[j] = mj;
    v[j] = vj;
    A vdn = vj;
    if constexpr (kAms) {
      A mx = vmax[j];
      mx = (vj > mx || vj != vj) ? vj : mx;
      vmax[j] = mx;
      vdn = mx;
    }
    A denom = __builtin_sqrt(vdn) / bc2s + ep;
    param[j] = x + neg_step * (mj / denom);
  }
}

}  // namespace ember::optim::functional::EMBER_OPTIM_ISA
