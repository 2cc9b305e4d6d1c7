// Max pooling, one plane per task. Windows come as per-dim tables (first tap, tap count, step),
// so the same loop serves padded, dilated, ceil-mode and adaptive windows.
#include "kernels/cpu/nn/pool_cpu.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/half.h"

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

// One output row at a time, the taps in the outer loops and the row in the inner loop: the
// compare-and-select then has no loop-carried branch and vectorizes.
template <class T>
void max_fwd_2d(const T* x, T* y, int64_t* idx, int64_t planes, const PoolWindows& w, int64_t kh,
                int64_t kw, int64_t sh, int64_t sw) {
  const int64_t H = w.in[1], W = w.in[2], OH = w.out[1], OW = w.out[2];
  parallel_for(0, planes * OH, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, OW * kh * kw)),
               [&](int64_t b, int64_t e) {
                 std::vector<float> best(static_cast<size_t>(OW));
                 std::vector<int32_t> bi(static_cast<size_t>(OW));
                 for (int64_t r = b; r < e; ++r) {
                   const int64_t p = r / OH, oh = r % OH;
                   const T* xp = x + p * H * W;
                   std::fill(best.begin(), best.end(), -std::numeric_limits<float>::infinity());
                   std::fill(bi.begin(), bi.end(), int32_t(oh * sh * W));
                   float* bp = best.data();
                   int32_t* ip32 = bi.data();
                   for (int64_t i = 0; i < kh; ++i)
                     for (int64_t j = 0; j < kw; ++j) {
                       const int32_t row = int32_t((oh * sh + i) * W + j);
                       const T* src = xp + row;
                       for (int64_t ow = 0; ow < OW; ++ow) {
                         const float v = float(src[ow * sw]);
                         const bool take = (v > bp[ow]) | (v != v);
                         bp[ow] = take ? v : bp[ow];
                         ip32[ow] = take ? row + int32_t(ow * sw) : ip32[ow];
                       }
                     }
                   T* yp = y + r * OW;
                   int64_t* ip = idx + r * OW;
                   for (int64_t ow = 0; ow < OW; ++ow) {
                     ip[ow] = ip32[ow];
                     yp[ow] = T(bp[ow]);  // exact: T -> float -> T
                   }
                 }
               });
}

template <class T>
void max_fwd(const T* x, T* y, int64_t* idx, int64_t planes, const PoolWindows& w) {
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  if constexpr (!std::is_same_v<T, double>) {
    int64_t kh, kw, sh, sw;
    if (full_2d_windows(w, kh, kw, sh, sw)) return max_fwd_2d(x, y, idx, planes, w, kh, kw, sh, sw);
  }
  const int64_t taps = std::max<int64_t>(1, w.count[1][0] * w.count[2][0]);  // callers: out > 0
  parallel_for(0, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, out_plane * taps)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) {
                   const T* xp = x + p * in_plane;
                   T* yp = y + p * out_plane;
                   int64_t* ip = idx + p * out_plane;
                   int64_t o = 0;
                   for (int64_t od = 0; od < w.out[0]; ++od) {
                     const int64_t fd = w.first[0][od], cd = w.count[0][od];
                     for (int64_t oh = 0; oh < w.out[1]; ++oh) {
                       const int64_t fh = w.first[1][oh], ch = w.count[1][oh];
                       for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
                         const int64_t fw = w.first[2][ow], cw = w.count[2][ow];
                         float maxv = -std::numeric_limits<float>::infinity();
                         double maxd = -std::numeric_limits<double>::infinity();
                         int64_t maxi = (fd * w.in[1] + fh) * w.in[2] + fw;
                         for (int64_t i = 0; i < cd; ++i) {
                           const int64_t id = fd + i * w.step[0];
                           for (int64_t j = 0; j < ch; ++j) {
                             const int64_t row = (id * w.in[1] + fh + j * w.step[1]) * w.in[2];
                             for (int64_t k = 0; k < cw; ++k) {
                               const int64_t at = row + fw + k * w.step[2];
                               if constexpr (std::is_same_v<T, double>) {
                                 const double v = xp[at];
                                 if (v > maxd || std::isnan(v)) maxd = v, maxi = at;
                               } else {
                                 const float v = float(xp[at]);
                                 if (v > maxv || std::isnan(v)) maxv = v, maxi = at;
                               }
                             }
                           }
                         }
                         // A window of padding only (dilation and ceil_mode can make one) reads
                         // nothing: -inf and PyTorch's index, which is past the plane.
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

}  // namespace

void max_pool_forward(ScalarType dt, const void* x, void* y, int64_t* idx, int64_t planes,
                      const PoolWindows& w) {
  switch (dt) {
    case kDouble:
      return max_fwd(static_cast<const double*>(x), static_cast<double*>(y), idx, planes, w);
    case kBFloat16:
      return max_fwd(static_cast<const BFloat16*>(x), static_cast<BFloat16*>(y), idx, planes, w);
    default:
      return max_fwd(static_cast<const float*>(x), static_cast<float*>(y), idx, planes, w);
  }
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
