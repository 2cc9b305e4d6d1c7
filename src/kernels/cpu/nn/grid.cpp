// CPU kernels of grid_sampler and its backward (kernels/stubs/grid.h), 2-D and 3-D.
//
// Note [Grid sample coordinates]
// A grid value g in [-1, 1] maps to the pixel coordinate ((g + 1) / 2) (size - 1) with
// align_corners (-1 and 1 are the centres of the corner pixels), else ((g + 1) size - 1) / 2
// (-1 and 1 are the outer edges of the corner pixels). Border padding clamps the coordinate to
// [0, size - 1]; reflection folds it over the image edges (the corner centres with align_corners,
// the outer edges without) and then clamps. Every step is piecewise linear, so the backward
// carries the product of the steps' slopes (`mult`) onto the coordinate gradient. Bicubic
// interpolation pads each of its 16 taps instead of the coordinate, as torch does.
#include <cmath>
#include <cstring>

#include "core/parallel_internal.h"
#include "kernels/stubs/grid.h"

namespace ember {

EMBER_DEFINE_KERNEL(grid_sampler_stub);
EMBER_DEFINE_KERNEL(grid_sampler_backward_stub);

namespace cpu {
namespace {

constexpr int kBilinear = 0, kNearest = 1, kBicubic = 2;
constexpr int kZeros = 0, kBorder = 1, kReflection = 2;

/// Clamps to [0, size - 1]; `d` receives the slope (0 where clamped).
template <class T>
T clip(T x, int64_t size, T& d) {
  const T hi = T(size - 1);
  if (x <= T(0)) {
    d = T(0);
    return T(0);
  }
  if (x >= hi) {
    d = T(0);
    return hi;
  }
  d = T(1);
  return x;
}

/// Folds x into [lo2 / 2, hi2 / 2] by reflection; `d` receives the slope (+-1).
template <class T>
T reflect(T x, int64_t lo2, int64_t hi2, T& d) {
  if (lo2 == hi2) {
    d = T(0);
    return T(0);
  }
  const T lo = T(lo2) / 2, span = T(hi2 - lo2) / 2;
  x -= lo;
  T sign = T(1);
  if (x < T(0)) {
    sign = T(-1);
    x = -x;
  }
  const T extra = std::fmod(x, span);
  const int64_t flips = int64_t(std::floor(x / span));
  if (flips % 2 == 0) {
    d = sign;
    return extra + lo;
  }
  d = -sign;
  return span - extra + lo;
}

/// Coordinates too far out for int64 (or NaN) become -100: outside for every padding mode.
template <class T>
T tame(T x) {
  return (x > T(-1e15) && x < T(1e15)) ? x : T(-100);
}

/// Applies the padding mode to a pixel coordinate (Note [Grid sample coordinates]).
template <class T>
T pad_coord(T x, int64_t size, const GridSampleArgs& a, T& d) {
  d = T(1);
  if (a.padding == kBorder) {
    x = clip(x, size, d);
  } else if (a.padding == kReflection) {
    T dr, dc;
    x = a.align_corners ? reflect(x, 0, 2 * (size - 1), dr) : reflect(x, -1, 2 * size - 1, dr);
    x = clip(x, size, dc);
    d = dr * dc;
  }
  return tame(x);
}

/// The pixel coordinate of grid value g; `d` receives d(coordinate)/dg.
template <class T>
T unnormalize(T g, int64_t size, bool align_corners, T& d) {
  if (align_corners) {
    d = T(size - 1) / 2;
    return (g + 1) / 2 * T(size - 1);
  }
  d = T(size) / 2;
  return ((g + 1) * T(size) - 1) / 2;
}

// Cubic convolution (Keys, a = -0.75) and its derivative, for |x| <= 1 and 1 < |x| < 2.
template <class T>
T cc1(T x) {
  const T A = T(-0.75);
  return ((A + 2) * x - (A + 3)) * x * x + 1;
}
template <class T>
T cc2(T x) {
  const T A = T(-0.75);
  return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}
template <class T>
T dcc1(T x) {
  const T A = T(-0.75);
  return (3 * (A + 2) * x - 2 * (A + 3)) * x;
}
template <class T>
T dcc2(T x) {
  const T A = T(-0.75);
  return (3 * A * x - 10 * A) * x + 8 * A;
}
template <class T>
void cubic_coeffs(T t, T c[4], T dc[4]) {
  c[0] = cc2(t + 1), c[1] = cc1(t), c[2] = cc1(1 - t), c[3] = cc2(2 - t);
  dc[0] = dcc2(t + 1), dc[1] = dcc1(t), dc[2] = -dcc1(1 - t), dc[3] = -dcc2(2 - t);
}

/// The geometry of one call: ND spatial dims (input order: [D,] H, W).
template <int ND>
struct Geometry {
  int64_t N = 0, C = 0;
  int64_t in[ND] = {}, out[ND] = {};
  int64_t in_plane = 1, out_plane = 1;
  Geometry(const Tensor& input, const Tensor& grid) {
    N = input.size(0), C = input.size(1);
    for (int d = 0; d < ND; ++d) {
      in[d] = input.size(2 + d), out[d] = grid.size(1 + d);
      in_plane *= in[d], out_plane *= out[d];
    }
  }
  /// The flat offset of a pixel in an input plane, or -1 outside.
  int64_t offset(const int64_t* idx) const {
    int64_t o = 0;
    for (int d = 0; d < ND; ++d) {
      if (idx[d] < 0 || idx[d] >= in[d]) return -1;
      o = o * in[d] + idx[d];
    }
    return o;
  }
};

/// One sample point's taps: up to 16 (offset, weight) pairs, with d(weight)/d(coordinate_d).
template <class T, int ND>
struct Taps {
  int count = 0;
  int64_t off[16];
  T w[16];
  T dw[16][ND];
  T mult[ND];  ///< d(coordinate_d)/d(grid component of dim d)
};

/// The taps of the sample at grid values g (input dim order).
template <class T, int ND>
void make_taps(const Geometry<ND>& geo, const T* g, const GridSampleArgs& a, Taps<T, ND>& tp) {
  tp.count = 0;
  T x[ND];
  if constexpr (ND == 2) {
    if (a.interpolation == kBicubic) {
      // 2-D only: each tap is padded separately.
      T c[2][4], dc[2][4], base[2];
      for (int d = 0; d < 2; ++d) {
        x[d] = unnormalize(g[d], geo.in[d], a.align_corners, tp.mult[d]);
        const T f = std::floor(x[d]);
        base[d] = f - 1;
        cubic_coeffs(std::isfinite(x[d]) ? x[d] - f : T(0), c[d], dc[d]);
      }
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          // Tap coordinates stay floating until padded, so a huge coordinate still clamps.
          int64_t idx[2];
          const int tap[2] = {i, j};
          for (int d = 0; d < 2; ++d) {
            T unused;
            const T t = base[d] + T(tap[d]);
            idx[d] = int64_t(a.padding == kZeros ? tame(t) : pad_coord(t, geo.in[d], a, unused));
          }
          const int64_t o = geo.offset(idx);
          if (o < 0) continue;
          const int k = tp.count++;
          tp.off[k] = o;
          tp.w[k] = c[0][i] * c[1][j];
          tp.dw[k][0] = dc[0][i] * c[1][j];
          tp.dw[k][1] = c[0][i] * dc[1][j];
        }
      }
      return;
    }
  }
  for (int d = 0; d < ND; ++d) {
    T du, dp;
    x[d] = unnormalize(g[d], geo.in[d], a.align_corners, du);
    x[d] = pad_coord(x[d], geo.in[d], a, dp);
    tp.mult[d] = du * dp;
  }
  if (a.interpolation == kNearest) {
    int64_t idx[ND];
    for (int d = 0; d < ND; ++d) idx[d] = int64_t(std::nearbyint(x[d]));
    const int64_t o = geo.offset(idx);
    if (o < 0) return;
    tp.off[0] = o, tp.w[0] = T(1), tp.count = 1;
    for (int d = 0; d < ND; ++d) tp.dw[0][d] = T(0);
    return;
  }
  T f[ND], frac[ND];
  for (int d = 0; d < ND; ++d) f[d] = std::floor(x[d]), frac[d] = x[d] - f[d];
  for (int corner = 0; corner < (1 << ND); ++corner) {
    int64_t idx[ND];
    T wd[ND];
    for (int d = 0; d < ND; ++d) {
      const bool hi = (corner >> (ND - 1 - d)) & 1;
      idx[d] = int64_t(f[d]) + hi;
      wd[d] = hi ? frac[d] : 1 - frac[d];
    }
    const int64_t o = geo.offset(idx);
    if (o < 0) continue;
    const int k = tp.count++;
    tp.off[k] = o;
    T w = T(1);
    for (int d = 0; d < ND; ++d) w *= wd[d];
    tp.w[k] = w;
    for (int d = 0; d < ND; ++d) {
      const bool hi = (corner >> (ND - 1 - d)) & 1;
      T p = hi ? T(1) : T(-1);
      for (int e = 0; e < ND; ++e) {
        if (e != d) p *= wd[e];
      }
      tp.dw[k][d] = p;
    }
  }
}

/// The grid values of point p of batch n in input dim order (the grid stores width first).
template <class T, int ND>
void grid_point(const T* grid, int64_t n, int64_t p, const Geometry<ND>& geo, T* g) {
  const T* q = grid + (n * geo.out_plane + p) * ND;
  for (int d = 0; d < ND; ++d) g[d] = q[ND - 1 - d];
}

template <class T, int ND>
void forward_impl(const Tensor& input, const Tensor& grid, Tensor& out, const GridSampleArgs& a) {
  const Geometry<ND> geo(input, grid);
  const T* in = static_cast<const T*>(input.data_ptr());
  const T* gr = static_cast<const T*>(grid.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  const int64_t points = geo.N * geo.out_plane;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, geo.C));
  parallel_for(0, points, grain, [&](int64_t b, int64_t e) {
    Taps<T, ND> tp;
    for (int64_t q = b; q < e; ++q) {
      const int64_t n = q / geo.out_plane, p = q % geo.out_plane;
      T g[ND];
      grid_point(gr, n, p, geo, g);
      make_taps(geo, g, a, tp);
      for (int64_t c = 0; c < geo.C; ++c) {
        const T* plane = in + (n * geo.C + c) * geo.in_plane;
        T s = T(0);
        for (int k = 0; k < tp.count; ++k) s += tp.w[k] * plane[tp.off[k]];
        o[(n * geo.C + c) * geo.out_plane + p] = s;
      }
    }
  });
}

template <class T, int ND>
void backward_impl(const Tensor& grad_out, const Tensor& input, const Tensor& grid,
                   Tensor& grad_input, Tensor& grad_grid, const GridSampleArgs& a) {
  const Geometry<ND> geo(input, grid);
  const T* in = static_cast<const T*>(input.data_ptr());
  const T* gr = static_cast<const T*>(grid.data_ptr());
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  T* gi = grad_input.defined() ? static_cast<T*>(grad_input.data_ptr()) : nullptr;
  T* gg = grad_grid.defined() ? static_cast<T*>(grad_grid.data_ptr()) : nullptr;
  // One batch element per task: grad_input's planes of different n never overlap.
  parallel_for(0, geo.N, 1, [&](int64_t b, int64_t e) {
    Taps<T, ND> tp;
    for (int64_t n = b; n < e; ++n) {
      for (int64_t p = 0; p < geo.out_plane; ++p) {
        T g[ND];
        grid_point(gr, n, p, geo, g);
        make_taps(geo, g, a, tp);
        T dg[ND] = {};
        for (int64_t c = 0; c < geo.C; ++c) {
          const T gout = go[(n * geo.C + c) * geo.out_plane + p];
          const T* plane = in + (n * geo.C + c) * geo.in_plane;
          for (int k = 0; k < tp.count; ++k) {
            if (gi) gi[(n * geo.C + c) * geo.in_plane + tp.off[k]] += tp.w[k] * gout;
            if (gg) {
              const T v = plane[tp.off[k]] * gout;
              for (int d = 0; d < ND; ++d) dg[d] += v * tp.dw[k][d];
            }
          }
        }
        if (gg) {
          T* q = gg + (n * geo.out_plane + p) * ND;
          for (int d = 0; d < ND; ++d) q[ND - 1 - d] = dg[d] * tp.mult[d];
        }
      }
    }
  });
}

void grid_sampler_cpu(const Tensor& input, const Tensor& grid, Tensor& out,
                      const GridSampleArgs& a) {
  auto run = [&](auto zero) {
    using scalar_t = decltype(zero);
    if (input.dim() == 4) {
      forward_impl<scalar_t, 2>(input, grid, out, a);
    } else {
      forward_impl<scalar_t, 3>(input, grid, out, a);
    }
  };
  input.dtype() == kDouble ? run(double(0)) : run(float(0));
}

void grid_sampler_backward_cpu(const Tensor& grad_out, const Tensor& input, const Tensor& grid,
                               Tensor& grad_input, Tensor& grad_grid, const GridSampleArgs& a) {
  auto run = [&](auto zero) {
    using scalar_t = decltype(zero);
    if (input.dim() == 4) {
      backward_impl<scalar_t, 2>(grad_out, input, grid, grad_input, grad_grid, a);
    } else {
      backward_impl<scalar_t, 3>(grad_out, input, grid, grad_input, grad_grid, a);
    }
  };
  input.dtype() == kDouble ? run(double(0)) : run(float(0));
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(grid_sampler_stub, kCPU, cpu::grid_sampler_cpu);
EMBER_REGISTER_KERNEL(grid_sampler_backward_stub, kCPU, cpu::grid_sampler_backward_cpu);

}  // namespace ember
