#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The values-only extreme functor and its comparison, shared by the amax/amin kernels
// (minmax.cpp) and the index kernels (arg.cpp).

#include <limits>
#include <type_traits>

#include "kernels/cpu/reduce/driver.h"

namespace ember::cpu::reduce_impl {

// Whether x beats the current best (Max: larger; NaN beats everything but an earlier NaN).
template <bool Max, class M>
inline bool better(M x, M best) {
  if constexpr (is_float_v<M>) {
    if (best != best) return false;
    if (x != x) return true;
  }
  return Max ? x > best : x < best;
}

// amax / amin / max() / min(): values only.
template <class T, bool Max>
struct ExtremeOp {
  using M = std::conditional_t<std::is_same_v<T, bool>, bool, opmath_t<T>>;
  using acc_t = M;
  using out_t = T;
  static constexpr bool kVertical = true;
  acc_t init() const {
    if constexpr (std::is_same_v<M, bool>)
      return !Max;
    else if constexpr (std::is_floating_point_v<M>)
      return Max ? -std::numeric_limits<M>::infinity() : std::numeric_limits<M>::infinity();
    else
      return Max ? std::numeric_limits<M>::lowest() : std::numeric_limits<M>::max();
  }
  acc_t step(acc_t a, T x) const {
    const M v = M(x);
    return better<Max>(v, a) ? v : a;
  }
  acc_t combine(acc_t a, acc_t b) const { return better<Max>(b, a) ? b : a; }
  acc_t reduce(const T* p, int64_t n, int64_t s, int64_t) const {
    if constexpr (std::is_same_v<T, float>) {
      if (s == 1 && n > 0) return p[(Max ? K().argmax_f32 : K().argmin_f32)(p, n)];
    }
    if constexpr (std::is_same_v<T, double>) {
      if (s == 1 && n > 0) return p[(Max ? K().argmax_f64 : K().argmin_f64)(p, n)];
    }
    acc_t a = init();
    for (int64_t i = 0; i < n; ++i) a = step(a, p[i * s]);
    return a;
  }
  out_t project(acc_t a) const { return T(a); }
  void project_extra(int64_t, acc_t) const {}
  void vertical(out_t* out, const T* base, int64_t rows, int64_t rs, int64_t w, int64_t oi) const {
    vertical_simple(*this, out, base, rows, rs, w, oi);
  }
};

}  // namespace ember::cpu::reduce_impl
