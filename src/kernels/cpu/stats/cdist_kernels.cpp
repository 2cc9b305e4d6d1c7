// Direct p-norm distances (Note [cdist tiles]). Compiled once per CPU capability.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/dtype.h"
#include "kernels/cpu/elementwise/math_functors.h"
#include "kernels/cpu/stats/cdist.h"
#include "kernels/cpu/vec.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Note [cdist tiles]
// x2 is packed into panels of W = 2 vectors of columns: panel t holds x2[t*W .. t*W+W) as M
// rows of W contiguous values (zero padded past R). A tile of NR = 4 rows of x1 against one
// panel keeps 2 * NR accumulators in registers; each step along M broadcasts one x1 value per
// row and applies the norm's map to (a - b) across W columns at once, so no horizontal sums
// are needed. Each output is reduced by one thread in a fixed order: results do not depend on
// the thread count. Threads split the (batch, row block) pairs.

/// The per-coordinate map and the reduction of each p.
template <class T>
struct NormZero {  // p = 0: the number of differing coordinates
  using V = Vec<T>;
  V step(V acc, V d) const {  // NaN stays NaN
    const V a = math::vabs(d);
    return acc + vselect(a > V{}, splat<T>(1), a);
  }
  V finish(V acc) const { return acc; }
};
template <class T>
struct NormOne {
  using V = Vec<T>;
  V step(V acc, V d) const { return acc + math::vabs(d); }
  V finish(V acc) const { return acc; }
};
template <class T>
struct NormTwo {
  using V = Vec<T>;
  V step(V acc, V d) const { return acc + d * d; }
  V finish(V acc) const { return math::vsqrt(acc); }
};
template <class T>
struct NormThree {
  using V = Vec<T>;
  T inv_p = T(1) / T(3);
  V step(V acc, V d) const {
    V a = math::vabs(d);
    return acc + a * a * a;
  }
  V finish(V acc) const { return vpow(acc, splat<T>(inv_p)); }
};
template <class T>
struct NormInf {  // the largest |d|; NaN coordinates are passed over, as PyTorch's cdist
  using V = Vec<T>;
  V step(V acc, V d) const {
    V a = math::vabs(d);
    return vselect(a > acc, a, acc);
  }
  V finish(V acc) const { return acc; }
};
template <class T>
struct NormP {
  using V = Vec<T>;
  T p, inv_p;
  V step(V acc, V d) const { return acc + vpow(math::vabs(d), splat<T>(p)); }
  V finish(V acc) const { return vpow(acc, splat<T>(inv_p)); }
};

template <class T>
constexpr int kW = 2 * kLanes<T>;
constexpr int kNR = 4;

/// Packs x2 (R, M) into ceil(R / W) panels of (M, W).
template <class T>
void pack(const T* x2, int64_t R, int64_t M, T* panels) {
  constexpr int W = kW<T>;
  const int64_t np = (R + W - 1) / W;
  for (int64_t t = 0; t < np; ++t) {
    T* dst = panels + t * M * W;
    const int64_t j0 = t * W, nj = std::min<int64_t>(W, R - j0);
    for (int64_t k = 0; k < M; ++k) {
      for (int64_t w = 0; w < nj; ++w) dst[k * W + w] = x2[(j0 + w) * M + k];
      for (int64_t w = nj; w < W; ++w) dst[k * W + w] = T(0);
    }
  }
}

/// Rows [i0, i0 + NR) of x1 against every panel.
template <class T, int NR, class Norm>
void rows(const Norm& norm, const T* x1, const T* panels, T* out, int64_t R, int64_t M) {
  using V = Vec<T>;
  constexpr int W = kW<T>, L = kLanes<T>;
  const int64_t np = (R + W - 1) / W;
  alignas(64) T buf[W];
  for (int64_t t = 0; t < np; ++t) {
    const T* pan = panels + t * M * W;
    V acc[NR][2];
    for (int r = 0; r < NR; ++r) acc[r][0] = acc[r][1] = V{};
    for (int64_t k = 0; k < M; ++k) {
      const V b0 = vload<V>(pan + k * W), b1 = vload<V>(pan + k * W + L);
      for (int r = 0; r < NR; ++r) {
        const V a = splat<T>(x1[r * M + k]);
        acc[r][0] = norm.step(acc[r][0], a - b0);
        acc[r][1] = norm.step(acc[r][1], a - b1);
      }
    }
    const int64_t j0 = t * W, nj = std::min<int64_t>(W, R - j0);
    for (int r = 0; r < NR; ++r) {
      T* o = out + r * R + j0;
      if (nj == W) {
        vstore(o, norm.finish(acc[r][0]));
        vstore(o + L, norm.finish(acc[r][1]));
      } else {
        vstore(buf, norm.finish(acc[r][0]));
        vstore(buf + L, norm.finish(acc[r][1]));
        for (int64_t w = 0; w < nj; ++w) o[w] = buf[w];
      }
    }
  }
}

template <class T, class Norm>
void run(const Norm& norm, const T* x1, const T* x2, T* out, int64_t B, int64_t P, int64_t R,
         int64_t M) {
  constexpr int W = kW<T>;
  const int64_t np = (R + W - 1) / W;
  std::vector<T> panels(size_t(B * np * M * W));
  parallel_for(0, B, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, R * M)),
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b)
                   pack(x2 + b * R * M, R, M, panels.data() + b * np * M * W);
               });
  const int64_t blocks = (P + kNR - 1) / kNR;
  // Grain: enough row blocks for about 64K inner steps per chunk.
  const int64_t work = std::max<int64_t>(1, np * W * M * kNR);
  const int64_t grain = std::max<int64_t>(1, 65536 / work);
  parallel_for(0, B * blocks, grain, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t b = s / blocks, i0 = (s % blocks) * kNR;
      const T* a = x1 + (b * P + i0) * M;
      const T* pan = panels.data() + b * np * M * W;
      T* o = out + (b * P + i0) * R;
      switch (std::min<int64_t>(kNR, P - i0)) {
        case 4:
          rows<T, 4>(norm, a, pan, o, R, M);
          break;
        case 3:
          rows<T, 3>(norm, a, pan, o, R, M);
          break;
        case 2:
          rows<T, 2>(norm, a, pan, o, R, M);
          break;
        default:
          rows<T, 1>(norm, a, pan, o, R, M);
          break;
      }
    }
  });
}

template <class T>
void cdist_any(const T* x1, const T* x2, T* out, int64_t B, int64_t P, int64_t R, int64_t M,
               double p) {
  if (p == 0) {
    run(NormZero<T>{}, x1, x2, out, B, P, R, M);
  } else if (p == 1) {
    run(NormOne<T>{}, x1, x2, out, B, P, R, M);
  } else if (p == 2) {
    run(NormTwo<T>{}, x1, x2, out, B, P, R, M);
  } else if (p == 3) {
    run(NormThree<T>{}, x1, x2, out, B, P, R, M);
  } else if (std::isinf(p)) {
    run(NormInf<T>{}, x1, x2, out, B, P, R, M);
  } else {
    run(NormP<T>{T(p), T(1.0 / p)}, x1, x2, out, B, P, R, M);
  }
}

}  // namespace

void cdist_float(const float* x1, const float* x2, float* out, int64_t B, int64_t P, int64_t R,
                 int64_t M, double p) {
  cdist_any(x1, x2, out, B, P, R, M, p);
}
void cdist_double(const double* x1, const double* x2, double* out, int64_t B, int64_t P, int64_t R,
                  int64_t M, double p) {
  cdist_any(x1, x2, out, B, P, R, M, p);
}

}  // namespace ember::cpu::EMBER_CPU_CAP
