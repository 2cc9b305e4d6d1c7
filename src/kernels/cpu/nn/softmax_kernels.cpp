// Fused softmax / log_softmax (Note [Fused softmax]). Compiled once per CPU capability.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/kernel_registry.h"
#include "kernels/cpu/nn/softmax.h"
#include "kernels/cpu/vec.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Note [Fused softmax]
// Along a contiguous dim a row is read three times while it sits in cache: a max pass, an
// exp-and-sum pass that stores exp(x - max) (SLEEF vector exp), and a scaling pass; log_softmax
// skips the store and writes (x - max) - log(sum) in its last pass. Along other dims the same three
// passes run over whole (n, inner) blocks, one vector of inner columns at a time. Each row is
// reduced by one thread in a fixed order, so results never depend on the thread count. NaN in a
// row makes the row NaN and x - max is NaN for inf - inf, as PyTorch's kernel.

template <class T>
inline Vec<T> vmax(Vec<T> a, Vec<T> b) {
  return vselect(a > b, a, b);
}

/// exp(x) for softmax's x - max <= 0 in float: x = n ln2 + r with |r| <= ln2/2, exp(r) by its
/// degree-7 Taylor polynomial (truncation < 1e-8 relative), times 2^n built in the exponent
/// bits. Below -87.3 (where 2^n would leave the normal range) it returns 0, -inf included; NaN
/// stays NaN. About twice as fast as the general vector exp, which handles every input.
inline vfloat exp_nonpos(vfloat x) {
  const vfloat lo = splat<float>(-87.3f);
  const vfloat n = (x * splat<float>(1.44269504f) + splat<float>(12582912.f)) -
                   splat<float>(12582912.f);  // round to nearest (|x log2 e| < 2^22)
  const vfloat r = (x - n * splat<float>(0.693359375f)) - n * splat<float>(-2.12194440e-4f);
  vfloat p = splat<float>(1.f / 5040.f);
  p = p * r + splat<float>(1.f / 720.f);
  p = p * r + splat<float>(1.f / 120.f);
  p = p * r + splat<float>(1.f / 24.f);
  p = p * r + splat<float>(1.f / 6.f);
  p = p * r + splat<float>(0.5f);
  p = p * r + splat<float>(1.f);
  p = p * r + splat<float>(1.f);
  const vfloat nc = vselect(x < lo, lo, n);  // keeps the exponent arithmetic in range
  const vint32 bits = (__builtin_convertvector(nc, vint32) + 127) << 23;
  vfloat scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return vselect(x < lo, splat<float>(0.f), p * scale);
}

template <class T>
inline Vec<T> vexp_nonpos(Vec<T> x) {
  if constexpr (std::is_same_v<T, float>)
    return exp_nonpos(x);
  else
    return vexp(x);
}

template <class T>
T hmax(Vec<T> v) {
  T r = v[0];
  for (int i = 1; i < kLanes<T>; ++i) r = std::max(r, v[i]);
  return r;
}
template <class T>
T hsum(Vec<T> v) {
  T r = 0;
  for (int i = 0; i < kLanes<T>; ++i) r += v[i];
  return r;
}

template <class T>
void lastdim(const T* in, T* out, int64_t row_begin, int64_t row_end, int64_t n, bool log) {
  using V = Vec<T>;
  constexpr int64_t L = kLanes<T>;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* x = in + r * n;
    T* y = out + r * n;
    // max (NaN propagates through the later passes)
    int64_t i = 0;
    T m = -std::numeric_limits<T>::infinity();
    if (n >= 2 * L) {
      V m0 = vload<V>(x), m1 = vload<V>(x + L);
      for (i = 2 * L; i + 2 * L <= n; i += 2 * L) {
        m0 = vmax<T>(m0, vload<V>(x + i));
        m1 = vmax<T>(m1, vload<V>(x + i + L));
      }
      m = hmax<T>(vmax<T>(m0, m1));
    }
    for (; i < n; ++i) m = std::max(m, x[i]);
    // exp and sum
    const V vm = splat<T>(m);
    V s0 = V{}, s1 = V{};
    T s = 0;
    i = 0;
    if (log) {
      for (; i + 2 * L <= n; i += 2 * L) {
        s0 += vexp_nonpos<T>(vload<V>(x + i) - vm);
        s1 += vexp_nonpos<T>(vload<V>(x + i + L) - vm);
      }
      s = hsum<T>(s0 + s1);
      for (; i < n; ++i) s += std::exp(x[i] - m);
      // (x - max) - log(sum), in this order: folding max + log(sum) first would round a small
      // log(sum) away next to a large max
      const T ls = std::log(s);
      const V vls = splat<T>(ls);
      for (i = 0; i + L <= n; i += L) vstore(y + i, (vload<V>(x + i) - vm) - vls);
      for (; i < n; ++i) y[i] = (x[i] - m) - ls;
    } else {
      for (; i + 2 * L <= n; i += 2 * L) {
        V e0 = vexp_nonpos<T>(vload<V>(x + i) - vm), e1 = vexp_nonpos<T>(vload<V>(x + i + L) - vm);
        vstore(y + i, e0);
        vstore(y + i + L, e1);
        s0 += e0;
        s1 += e1;
      }
      s = hsum<T>(s0 + s1);
      for (; i < n; ++i) {
        T e = std::exp(x[i] - m);
        y[i] = e;
        s += e;
      }
      const T inv = T(1) / s;
      const V vinv = splat<T>(inv);
      for (i = 0; i + L <= n; i += L) vstore(y + i, vload<V>(y + i) * vinv);
      for (; i < n; ++i) y[i] *= inv;
    }
  }
}

// One vector (or a scalar tail) of inner columns at a time: three passes down the n rows.
template <class T>
void inner(const T* in, T* out, int64_t o_begin, int64_t o_end, int64_t n, int64_t inner,
           int64_t i_begin, int64_t i_end, bool log) {
  using V = Vec<T>;
  constexpr int64_t L = kLanes<T>;
  for (int64_t o = o_begin; o < o_end; ++o) {
    const T* xb = in + o * n * inner;
    T* yb = out + o * n * inner;
    int64_t c = i_begin;
    for (; c + L <= i_end; c += L) {
      V m = splat<T>(-std::numeric_limits<T>::infinity());
      for (int64_t j = 0; j < n; ++j) m = vmax<T>(m, vload<V>(xb + j * inner + c));
      // a NaN the max skipped still turns the sum, hence the column, into NaN
      V s = V{};
      if (log) {
        for (int64_t j = 0; j < n; ++j) s += vexp_nonpos<T>(vload<V>(xb + j * inner + c) - m);
        const V ls = vlog(s);
        for (int64_t j = 0; j < n; ++j)
          vstore(yb + j * inner + c, (vload<V>(xb + j * inner + c) - m) - ls);
      } else {
        for (int64_t j = 0; j < n; ++j) {
          V e = vexp_nonpos<T>(vload<V>(xb + j * inner + c) - m);
          vstore(yb + j * inner + c, e);
          s += e;
        }
        V inv = splat<T>(T(1)) / s;
        for (int64_t j = 0; j < n; ++j)
          vstore(yb + j * inner + c, vload<V>(yb + j * inner + c) * inv);
      }
    }
    for (; c < i_end; ++c) {
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < n; ++j) m = std::max(m, xb[j * inner + c]);
      T s = 0;
      if (log) {
        for (int64_t j = 0; j < n; ++j) s += std::exp(xb[j * inner + c] - m);
        const T ls = std::log(s);
        for (int64_t j = 0; j < n; ++j) yb[j * inner + c] = (xb[j * inner + c] - m) - ls;
      } else {
        for (int64_t j = 0; j < n; ++j) {
          T e = std::exp(xb[j * inner + c] - m);
          yb[j * inner + c] = e;
          s += e;
        }
        T inv = T(1) / s;
        for (int64_t j = 0; j < n; ++j) yb[j * inner + c] *= inv;
      }
    }
  }
}

}  // namespace

void register_softmax_kernels(KernelTable&) {
  g_softmax_kernels.lastdim_f = &lastdim<float>;
  g_softmax_kernels.lastdim_d = &lastdim<double>;
  g_softmax_kernels.inner_f = &inner<float>;
  g_softmax_kernels.inner_d = &inner<double>;
}

}  // namespace ember::cpu::EMBER_CPU_CAP
