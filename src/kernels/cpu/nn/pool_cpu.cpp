// Max pooling, one plane per task. Windows come as per-dim tables (first tap, tap count, step),
// so the same loop serves padded, dilated, ceil-mode and adaptive windows.
#include "kernels/cpu/nn/pool_cpu.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/half.h"
#include "ember/version.h"

namespace ember::cpu {
namespace {

// Whether every window is a full kh x kw block of a 2-d plane at a fixed stride (no padding
// reached, no dilation): the common pool of a CNN, run by a tight loop without tables.
bool full_2d_windows(const PoolWindows& w, int64_t& kh, int64_t& kw, int64_t& sh, int64_t& sw) {
  if (w.out[0] != 1 || w.in[0] != 1 || w.step[1] != 1 || w.step[2] != 1) return false;
  if (w.in[1] * w.in[2] >= (int64_t(1) << 31)) return false;  // 32-bit plane offsets
  kh = w.count[1][0], kw = w.count[2][0];
  sh = w.out[1] > 1 ? w.first[1][1] - w.first[1][0] : 1;
  sw = w.out[2] > 1 ? w.first[2][1] - w.first[2][0] : 1;
  for (int64_t o = 0; o < w.out[1]; ++o)
    if (w.first[1][o] != o * sh || w.count[1][o] != kh) return false;
  for (int64_t o = 0; o < w.out[2]; ++o)
    if (w.first[2][o] != o * sw || w.count[2][o] != kw) return false;
  return true;
}

/// The Pool2d loops of cpu_capability()'s kernel set (pool_kernels.cpp).
struct Pool2dKernels {
  decltype(&cap_default::max_pool2d_full) fwd;
  decltype(&cap_default::max_pool2d_k2s2_backward_taps) bwd_k2s2;
};

const Pool2dKernels& pool2d_kernels() {
  static const Pool2dKernels k = [] {
    const std::string_view cap = cpu_capability();
    if (cap == "avx512")
      return Pool2dKernels{cap_avx512::max_pool2d_full, cap_avx512::max_pool2d_k2s2_backward_taps};
    if (cap == "avx2")
      return Pool2dKernels{cap_avx2::max_pool2d_full, cap_avx2::max_pool2d_k2s2_backward_taps};
    return Pool2dKernels{cap_default::max_pool2d_full, cap_default::max_pool2d_k2s2_backward_taps};
  }();
  return k;
}

/// The Pool2d of `w` when its windows are full 2-d blocks (and, with taps, the kernel's own
/// sizes, so that tap i * kw + j is Note [Compact pooling indices]'s).
bool full_2d(const PoolWindows& w, const PoolTaps* kt, Pool2d& g) {
  int64_t kh, kw, sh, sw;
  if (!full_2d_windows(w, kh, kw, sh, sw)) return false;
  if (kt && (kh != kt->k[1] || kw != kt->k[2])) return false;
  g = Pool2d{w.in[1], w.in[2], w.out[1], w.out[2], kh, kw, sh, sw};
  return true;
}

/// Exactly one of `idx` (flat indices) and `taps` (with the kernel sizes `kt`) is set.
template <class T>
void max_fwd(const T* x, T* y, int64_t* idx, uint8_t* taps, const PoolTaps& kt, int64_t planes,
             const PoolWindows& w) {
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  const int64_t ntaps = std::max<int64_t>(1, w.count[1][0] * w.count[2][0]);  // callers: out > 0
  parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, out_plane * ntaps)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) {
                   const T* xp = x + p * in_plane;
                   T* yp = y + p * out_plane;
                   int64_t* ip = idx ? idx + p * out_plane : nullptr;
                   uint8_t* tp = taps ? taps + p * out_plane : nullptr;
                   int64_t o = 0;
                   for (int64_t od = 0; od < w.out[0]; ++od) {
                     const int64_t fd = w.first[0][od], cd = w.count[0][od];
                     for (int64_t oh = 0; oh < w.out[1]; ++oh) {
                       const int64_t fh = w.first[1][oh], ch = w.count[1][oh];
                       for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
                         const int64_t fw = w.first[2][ow], cw = w.count[2][ow];
                         float maxv = -std::numeric_limits<float>::infinity();
                         double maxd = -std::numeric_limits<double>::infinity();
                         int64_t maxi = (fd * w.in[1] + fh) * w.in[2] + fw, maxt = 0;
                         for (int64_t i = 0; i < cd; ++i) {
                           const int64_t id = fd + i * w.step[0];
                           for (int64_t j = 0; j < ch; ++j) {
                             const int64_t row = (id * w.in[1] + fh + j * w.step[1]) * w.in[2];
                             const int64_t t0 = (i * kt.k[1] + j) * kt.k[2];
                             for (int64_t k = 0; k < cw; ++k) {
                               const int64_t at = row + fw + k * w.step[2];
                               if constexpr (std::is_same_v<T, double>) {
                                 const double v = xp[at];
                                 if (v > maxd || std::isnan(v)) maxd = v, maxi = at, maxt = t0 + k;
                               } else {
                                 const float v = float(xp[at]);
                                 if (v > maxv || std::isnan(v)) maxv = v, maxi = at, maxt = t0 + k;
                               }
                             }
                           }
                         }
                         // A window of padding only (dilation and ceil_mode can make one) reads
                         // nothing: -inf and PyTorch's index, which is past the plane (tap 0).
                         if (tp)
                           tp[o] = uint8_t(maxt);
                         else
                           ip[o] = maxi;
                         yp[o] = cd > 0 && ch > 0 && cw > 0
                                     ? xp[maxi]
                                     : T(-std::numeric_limits<float>::infinity());
                       }
                     }
                   }
                 }
               });
}

template <class T>
void max_bwd(const T* gy, const int64_t* idx, T* gx, int64_t planes, int64_t in_plane,
             int64_t out_plane) {
  parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, in_plane)),
               [&](int64_t b, int64_t e) {
                 std::memset(static_cast<void*>(gx + b * in_plane), 0,
                             sizeof(T) * size_t((e - b) * in_plane));
                 for (int64_t p = b; p < e; ++p) {
                   T* gp = gx + p * in_plane;
                   const T* g = gy + p * out_plane;
                   const int64_t* ip = idx + p * out_plane;
                   for (int64_t o = 0; o < out_plane; ++o)
                     if (uint64_t(ip[o]) < uint64_t(in_plane))  // see max_fwd: padding only
                       gp[ip[o]] = T(float(gp[ip[o]]) + float(g[o]));
                 }
               });
}

template <>
void max_bwd<double>(const double* gy, const int64_t* idx, double* gx, int64_t planes,
                     int64_t in_plane, int64_t out_plane) {
  parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, in_plane)),
               [&](int64_t b, int64_t e) {
                 std::memset(gx + b * in_plane, 0, sizeof(double) * size_t((e - b) * in_plane));
                 for (int64_t p = b; p < e; ++p) {
                   double* gp = gx + p * in_plane;
                   const double* g = gy + p * out_plane;
                   const int64_t* ip = idx + p * out_plane;
                   for (int64_t o = 0; o < out_plane; ++o)
                     if (uint64_t(ip[o]) < uint64_t(in_plane)) gp[ip[o]] += g[o];
                 }
               });
}

/// The flat offset of each tap from its window's first tap (Note [Compact pooling indices]).
std::vector<int64_t> tap_offsets(const PoolWindows& w, const PoolTaps& kt) {
  std::vector<int64_t> off(size_t(kt.k[0] * kt.k[1] * kt.k[2]));
  size_t t = 0;
  for (int64_t i = 0; i < kt.k[0]; ++i)
    for (int64_t j = 0; j < kt.k[1]; ++j)
      for (int64_t k = 0; k < kt.k[2]; ++k)
        off[t++] = (i * w.step[0] * w.in[1] + j * w.step[1]) * w.in[2] + k * w.step[2];
  return off;
}

/// Adds each gradient of one plane at its window's tap (windows of padding only may point past
/// the plane: nothing is added, see max_fwd). Plain loops over raw pointers: the scatter is
/// latency-bound, and every value stays in a register.
template <class T>
void scatter_taps_plane(const T* __restrict__ g, const uint8_t* __restrict__ tp, T* __restrict__ gp,
                        const PoolWindows& w, const int64_t* __restrict__ off) {
  const int64_t in1 = w.in[1], in2 = w.in[2], OW = w.out[2];
  const uint64_t in_plane = uint64_t(w.in[0] * in1 * in2);
  const int64_t* f2 = w.first[2].data();
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      const int64_t row = (w.first[0][size_t(od)] * in1 + w.first[1][size_t(oh)]) * in2;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t at = row + f2[ow] + off[tp[ow]];
        if (uint64_t(at) < in_plane) {
          if constexpr (std::is_same_v<T, double>)
            gp[at] += g[ow];
          else
            gp[at] = T(float(gp[at]) + float(g[ow]));
        }
      }
      g += OW, tp += OW;
    }
}

/// One plane of max_bwd_taps_2d: gp = 0, then each gradient adds at its window's tap. Restrict
/// pointers keep the byte-sized taps (which any store could otherwise alias) in registers.
template <class T>
void taps_plane_2d(const T* __restrict__ g, const uint8_t* __restrict__ tp, T* __restrict__ gp,
                   const int64_t* __restrict__ off, int64_t OH, int64_t OW, int64_t H, int64_t W,
                   int64_t sh, int64_t sw) {
  std::memset(static_cast<void*>(gp), 0, sizeof(T) * size_t(H * W));
  for (int64_t oh = 0; oh < OH; ++oh, g += OW, tp += OW) {
    T* __restrict__ row = gp + oh * sh * W;
    for (int64_t ow = 0; ow < OW; ++ow) {
      T* at = row + ow * sw + off[tp[ow]];
      if constexpr (std::is_same_v<T, double>)
        *at += g[ow];
      else
        *at = T(float(*at) + float(g[ow]));
    }
  }
}

/// Full 2-d windows (no padding reached, no dilation: the pools of a CNN), one plane per task
/// while it sits in L1.
template <class T>
void max_bwd_taps_2d(const T* gy, const uint8_t* taps, T* gx, int64_t planes, const PoolWindows& w,
                     const PoolTaps& kt, int64_t sh, int64_t sw) {
  const int64_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2];
  const std::vector<int64_t> off = tap_offsets(w, kt);
  parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, H * W)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p)
                   taps_plane_2d(gy + p * OH * OW, taps + p * OH * OW, gx + p * H * W, off.data(),
                                 OH, OW, H, W, sh, sw);
               });
}

template <class T>
void max_bwd_taps(const T* gy, const uint8_t* taps, T* gx, int64_t planes, const PoolWindows& w,
                  const PoolTaps& kt) {
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  Pool2d g;
  if (full_2d(w, &kt, g)) {
    if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2)
      return pool2d_kernels().bwd_k2s2(scalar_type_of<T>, gy, taps, gx, planes, g);
    return max_bwd_taps_2d(gy, taps, gx, planes, w, kt, g.sh, g.sw);
  }
  const std::vector<int64_t> off = tap_offsets(w, kt);
  parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, in_plane)),
               [&](int64_t b, int64_t e) {
                 // Each plane is zeroed just before its scatter, while it is in L1.
                 for (int64_t p = b; p < e; ++p) {
                   std::memset(static_cast<void*>(gx + p * in_plane), 0,
                               sizeof(T) * size_t(in_plane));
                   scatter_taps_plane(gy + p * out_plane, taps + p * out_plane, gx + p * in_plane,
                                      w, off.data());
                 }
               });
}

}  // namespace

void max_pool_forward(ScalarType dt, const void* x, void* y, int64_t* idx, int64_t planes,
                      const PoolWindows& w) {
  const PoolTaps none;
  if (Pool2d g; full_2d(w, nullptr, g))
    return pool2d_kernels().fwd(dt, x, y, nullptr, idx, planes, g);
  switch (dt) {
    case kDouble:
      return max_fwd(static_cast<const double*>(x), static_cast<double*>(y), idx, nullptr, none,
                     planes, w);
    case kBFloat16:
      return max_fwd(static_cast<const BFloat16*>(x), static_cast<BFloat16*>(y), idx, nullptr, none,
                     planes, w);
    default:
      return max_fwd(static_cast<const float*>(x), static_cast<float*>(y), idx, nullptr, none,
                     planes, w);
  }
}

void max_pool_forward_taps(ScalarType dt, const void* x, void* y, uint8_t* taps, int64_t planes,
                           const PoolWindows& w, const PoolTaps& k) {
  if (Pool2d g; full_2d(w, &k, g)) return pool2d_kernels().fwd(dt, x, y, taps, nullptr, planes, g);
  switch (dt) {
    case kDouble:
      return max_fwd(static_cast<const double*>(x), static_cast<double*>(y), nullptr, taps, k,
                     planes, w);
    case kBFloat16:
      return max_fwd(static_cast<const BFloat16*>(x), static_cast<BFloat16*>(y), nullptr, taps, k,
                     planes, w);
    default:
      return max_fwd(static_cast<const float*>(x), static_cast<float*>(y), nullptr, taps, k, planes,
                     w);
  }
}

void max_pool_backward_taps(ScalarType dt, const void* gy, const uint8_t* taps, void* gx,
                            int64_t planes, const PoolWindows& w, const PoolTaps& k) {
  switch (dt) {
    case kDouble:
      return max_bwd_taps(static_cast<const double*>(gy), taps, static_cast<double*>(gx), planes, w,
                          k);
    case kBFloat16:
      return max_bwd_taps(static_cast<const BFloat16*>(gy), taps, static_cast<BFloat16*>(gx),
                          planes, w, k);
    default:
      return max_bwd_taps(static_cast<const float*>(gy), taps, static_cast<float*>(gx), planes, w,
                          k);
  }
}

void max_pool_taps_to_indices(const uint8_t* taps, int64_t* idx, int64_t planes,
                              const PoolWindows& w, const PoolTaps& k) {
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  const std::vector<int64_t> off = tap_offsets(w, k);
  parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, out_plane)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) {
                   const uint8_t* tp = taps + p * out_plane;
                   int64_t* ip = idx + p * out_plane;
                   for (int64_t od = 0; od < w.out[0]; ++od)
                     for (int64_t oh = 0; oh < w.out[1]; ++oh) {
                       const int64_t row =
                           (w.first[0][size_t(od)] * w.in[1] + w.first[1][size_t(oh)]) * w.in[2];
                       for (int64_t ow = 0; ow < w.out[2]; ++ow)
                         ip[ow] = row + w.first[2][size_t(ow)] + off[tp[ow]];
                       ip += w.out[2], tp += w.out[2];
                     }
                 }
               });
}

void max_pool_backward(ScalarType dt, const void* gy, const int64_t* idx, void* gx, int64_t planes,
                       int64_t in_plane, int64_t out_plane) {
  switch (dt) {
    case kDouble:
      return max_bwd(static_cast<const double*>(gy), idx, static_cast<double*>(gx), planes,
                     in_plane, out_plane);
    case kBFloat16:
      return max_bwd(static_cast<const BFloat16*>(gy), idx, static_cast<BFloat16*>(gx), planes,
                     in_plane, out_plane);
    default:
      return max_bwd(static_cast<const float*>(gy), idx, static_cast<float*>(gx), planes, in_plane,
                     out_plane);
  }
}

}  // namespace ember::cpu
