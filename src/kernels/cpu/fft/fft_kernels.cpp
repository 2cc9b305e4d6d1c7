// The butterflies of ember's FFT engine (Note [FFT layout] in fft.cpp), compiled once per CPU
// capability. Every pass reads and writes whole vectors of interleaved complex numbers.
#include <cstddef>
#include <cstdint>
#include <cstring>

// The 32-byte helpers below never cross a library boundary: their ABI does not matter.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "kernels/cpu/fft/fft_plan.h"
#include "kernels/cpu/vec.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Lane masks that swap the real and imaginary halves of every complex number of a vector.
#if EMBER_VEC_BYTES == 64
#define EMBER_FFT_SWAP_F \
  { 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14 }
#define EMBER_FFT_SWAP_D \
  { 1, 0, 3, 2, 5, 4, 7, 6 }
#elif EMBER_VEC_BYTES == 32
#define EMBER_FFT_SWAP_F \
  { 1, 0, 3, 2, 5, 4, 7, 6 }
#define EMBER_FFT_SWAP_D \
  { 1, 0, 3, 2 }
#else
#define EMBER_FFT_SWAP_F \
  { 1, 0, 3, 2 }
#define EMBER_FFT_SWAP_D \
  { 1, 0 }
#endif

inline vfloat swap_ri(vfloat a) { return __builtin_shuffle(a, vint32 EMBER_FFT_SWAP_F); }
inline vdouble swap_ri(vdouble a) { return __builtin_shuffle(a, vint64 EMBER_FFT_SWAP_D); }

/// (-1, +1, -1, +1, ...): the sign pattern of the cross terms of a complex product.
template <class T>
inline Vec<T> alt() {
  Vec<T> v;
  for (int i = 0; i < kLanes<T>; ++i) v[i] = (i & 1) ? T(1) : T(-1);
  return v;
}

/// a * w for w = (wr, wi) given as wr splat and wi * alt().
template <class V>
inline V cmul(V a, V wr, V wia) {
  return a * wr + swap_ri(a) * wia;
}

/// a * (-i) when F (forward), a * (+i) otherwise.
template <bool F, class V>
inline V rot(V a, V al) {
  return F ? swap_ri(a) * -al : swap_ri(a) * al;
}

/// One Stockham pass: for each butterfly p < m and offset u < run, reads a_r = x[u + run (p + r
/// m)], writes y[u + run (R p + k)] = (sum_r a_r W_R^{rk}) W^{pk}. `bf` maps a[] to c[] in place.
template <class T, int R, class BF>
inline void pass(const T* x, T* y, int64_t m, int64_t run, const T* tw, const BF& bf) {
  using V = Vec<T>;
  constexpr int L = kLanes<T>;
  const V al = alt<T>();
  const int64_t rs = 2 * run, xs = 2 * run * m;
  for (int64_t p = 0; p < m; ++p) {
    const T* xp = x + rs * p;
    T* yp = y + rs * R * p;
    if (p == 0) {
      for (int64_t u = 0; u < rs; u += L) {
        V a[R];
        for (int r = 0; r < R; ++r) a[r] = vload<V>(xp + u + r * xs);
        bf(a, al);
        for (int k = 0; k < R; ++k) vstore(yp + u + k * rs, a[k]);
      }
      continue;
    }
    V wr[R], wi[R];
    const T* t = tw + 2 * (R - 1) * p;
    for (int k = 1; k < R; ++k) {
      wr[k] = splat<T>(t[2 * k - 2]);
      wi[k] = splat<T>(t[2 * k - 1]) * al;
    }
    for (int64_t u = 0; u < rs; u += L) {
      V a[R];
      for (int r = 0; r < R; ++r) a[r] = vload<V>(xp + u + r * xs);
      bf(a, al);
      vstore(yp + u, a[0]);
      for (int k = 1; k < R; ++k) vstore(yp + u + k * rs, cmul(a[k], wr[k], wi[k]));
    }
  }
}

template <class T, bool F>
void radix2(const T* x, T* y, int64_t m, int64_t run, const T* tw) {
  pass<T, 2>(x, y, m, run, tw, [](Vec<T>* a, Vec<T>) {
    Vec<T> s = a[0] + a[1], d = a[0] - a[1];
    a[0] = s;
    a[1] = d;
  });
}

template <class T, bool F>
void radix4(const T* x, T* y, int64_t m, int64_t run, const T* tw) {
  pass<T, 4>(x, y, m, run, tw, [](Vec<T>* a, Vec<T> al) {
    Vec<T> t0 = a[0] + a[2], t1 = a[0] - a[2], t2 = a[1] + a[3];
    Vec<T> t3 = rot<F>(a[1] - a[3], al);
    a[0] = t0 + t2;
    a[2] = t0 - t2;
    a[1] = t1 + t3;
    a[3] = t1 - t3;
  });
}

template <class T, bool F>
void radix8(const T* x, T* y, int64_t m, int64_t run, const T* tw) {
  pass<T, 8>(x, y, m, run, tw, [](Vec<T>* a, Vec<T> al) {
    using V = Vec<T>;
    const T h = T(0.70710678118654752440084436210484904);
    // Two radix-4 butterflies on the even and odd samples, then W_8^k on the odd half.
    V e0 = a[0] + a[4], e1 = a[0] - a[4], e2 = a[2] + a[6], e3 = rot<F>(a[2] - a[6], al);
    V o0 = a[1] + a[5], o1 = a[1] - a[5], o2 = a[3] + a[7], o3 = rot<F>(a[3] - a[7], al);
    V E0 = e0 + e2, E2 = e0 - e2, E1 = e1 + e3, E3 = e1 - e3;
    V O0 = o0 + o2, O2 = o0 - o2, O1 = o1 + o3, O3 = o1 - o3;
    // W_8 = (1 -+ i) / sqrt 2, W_8^2 = -+i, W_8^3 = (-1 -+ i) / sqrt 2.
    V r1 = (O1 + rot<F>(O1, al)) * h;
    V r2 = rot<F>(O2, al);
    V r3 = (rot<F>(O3, al) - O3) * h;
    a[0] = E0 + O0;
    a[4] = E0 - O0;
    a[1] = E1 + r1;
    a[5] = E1 - r1;
    a[2] = E2 + r2;
    a[6] = E2 - r2;
    a[3] = E3 + r3;
    a[7] = E3 - r3;
  });
}

template <class T, bool F>
void radix3(const T* x, T* y, int64_t m, int64_t run, const T* tw) {
  pass<T, 3>(x, y, m, run, tw, [](Vec<T>* a, Vec<T> al) {
    using V = Vec<T>;
    const T s3 = T(0.86602540378443864676372317075293618);
    V t1 = a[1] + a[2], t2 = a[1] - a[2];
    V m1 = a[0] - t1 * T(0.5);
    V d = rot<F>(t2, al) * s3;  // s i sqrt(3)/2 (a1 - a2), s = -1 forward
    a[0] = a[0] + t1;
    a[1] = m1 + d;
    a[2] = m1 - d;
  });
}

template <class T, bool F>
void radix5(const T* x, T* y, int64_t m, int64_t run, const T* tw) {
  pass<T, 5>(x, y, m, run, tw, [](Vec<T>* a, Vec<T> al) {
    using V = Vec<T>;
    const T c1 = T(0.30901699437494742410229341718281906);   // cos(2 pi / 5)
    const T c2 = T(-0.80901699437494742410229341718281906);  // cos(4 pi / 5)
    const T s1 = T(0.95105651629515357211643933337938214);   // sin(2 pi / 5)
    const T s2 = T(0.58778525229247312916870595463907277);   // sin(4 pi / 5)
    V t1 = a[1] + a[4], t2 = a[2] + a[3], t3 = a[1] - a[4], t4 = a[2] - a[3];
    V b1 = a[0] + t1 * c1 + t2 * c2;
    V b2 = a[0] + t1 * c2 + t2 * c1;
    // rot<F> multiplies by s i (s = -1 forward).
    V d1 = rot<F>(t3 * s1 + t4 * s2, al);
    V d2 = rot<F>(t3 * s2 - t4 * s1, al);
    a[0] = a[0] + t1 + t2;
    a[1] = b1 + d1;
    a[4] = b1 - d1;
    a[2] = b2 + d2;
    a[3] = b2 - d2;
  });
}

/// A pass of odd radix R <= kMaxGenericRadix by the O(R^2) symmetric sums; `roots` holds W_R^k.
constexpr int kMaxGenericRadix = 31;

template <class T>
void radix_generic(const T* x, T* y, int R, int64_t m, int64_t run, const T* tw, const T* roots) {
  using V = Vec<T>;
  constexpr int L = kLanes<T>;
  const V al = alt<T>();
  const int h = (R - 1) / 2;
  const int64_t rs = 2 * run, xs = 2 * run * m;
  for (int64_t p = 0; p < m; ++p) {
    const T* xp = x + rs * p;
    T* yp = y + rs * R * p;
    const T* t = tw + 2 * (R - 1) * p;
    for (int64_t u = 0; u < rs; u += L) {
      V a0 = vload<V>(xp + u), ts[kMaxGenericRadix], ds[kMaxGenericRadix];
      V c0 = a0;
      for (int r = 1; r <= h; ++r) {
        V ar = vload<V>(xp + u + r * xs), br = vload<V>(xp + u + (R - r) * xs);
        ts[r] = ar + br;
        ds[r] = ar - br;
        c0 += ts[r];
      }
      vstore(yp + u, c0);
      for (int k = 1; k <= h; ++k) {
        V re = a0, im = V{};
        for (int r = 1; r <= h; ++r) {
          const int e = int((int64_t(r) * k) % R);
          re += ts[r] * roots[2 * e];
          im += ds[r] * roots[2 * e + 1];
        }
        V iv = swap_ri(im) * al;  // i * im
        V ck = re + iv, cm = re - iv;
        if (p != 0) {
          ck = cmul(ck, splat<T>(t[2 * k - 2]), splat<T>(t[2 * k - 1]) * al);
          cm = cmul(cm, splat<T>(t[2 * (R - k) - 2]), splat<T>(t[2 * (R - k) - 1]) * al);
        }
        vstore(yp + u + k * rs, ck);
        vstore(yp + u + (R - k) * rs, cm);
      }
    }
  }
}

template <class T, bool F>
T* run_col(const ColPlan<T>& plan, T* x, T* y, int64_t bw) {
  for (const FftStage& s : plan.stages) {
    const T* tw = plan.tw.data() + s.tw;
    const int64_t run = s.l * bw;
    switch (s.radix) {
      case 2:
        radix2<T, F>(x, y, s.m, run, tw);
        break;
      case 3:
        radix3<T, F>(x, y, s.m, run, tw);
        break;
      case 4:
        radix4<T, F>(x, y, s.m, run, tw);
        break;
      case 5:
        radix5<T, F>(x, y, s.m, run, tw);
        break;
      case 8:
        radix8<T, F>(x, y, s.m, run, tw);
        break;
      default:
        radix_generic<T>(x, y, s.radix, s.m, run, tw, plan.tw.data() + s.roots);
        break;
    }
    T* t = x;
    x = y;
    y = t;
  }
  return x;
}

template <class T>
T* col(const ColPlan<T>& plan, T* x, T* y, int64_t bw) {
  return plan.forward ? run_col<T, true>(plan, x, y, bw) : run_col<T, false>(plan, x, y, bw);
}

template <class T>
void mul_rows(T* x, const T* w, int64_t n, int64_t bw) {
  using V = Vec<T>;
  const V al = alt<T>();
  for (int64_t i = 0; i < n; ++i) {
    const V wr = splat<T>(w[2 * i]), wi = splat<T>(w[2 * i + 1]) * al;
    T* row = x + 2 * i * bw;
    for (int64_t u = 0; u < 2 * bw; u += kLanes<T>)
      vstore(row + u, cmul(vload<V>(row + u), wr, wi));
  }
}

// ---- data movement ----------------------------------------------------------------------------
// Transposes between lines and column blocks work on 32-byte vectors in every capability: four
// complex64 or two complex128 numbers (SSE2 splits them in two, AVX-512 uses the ymm half).

typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

template <class T>
struct Move;

/// complex64: a 4 x 4 tile of 8-byte units.
template <>
struct Move<float> {
  static constexpr int U = 4;  // complex numbers per 32 bytes
  using A = v8f;               // arithmetic view
  static void tr(v4d* a) {
    const v4d t0 = __builtin_shuffle(a[0], a[1], v4i{0, 4, 1, 5});
    const v4d t1 = __builtin_shuffle(a[0], a[1], v4i{2, 6, 3, 7});
    const v4d t2 = __builtin_shuffle(a[2], a[3], v4i{0, 4, 1, 5});
    const v4d t3 = __builtin_shuffle(a[2], a[3], v4i{2, 6, 3, 7});
    a[0] = __builtin_shuffle(t0, t2, v4i{0, 1, 4, 5});
    a[1] = __builtin_shuffle(t0, t2, v4i{2, 3, 6, 7});
    a[2] = __builtin_shuffle(t1, t3, v4i{0, 1, 4, 5});
    a[3] = __builtin_shuffle(t1, t3, v4i{2, 3, 6, 7});
  }
  static A re(A b) { return __builtin_shuffle(b, v8i{0, 0, 2, 2, 4, 4, 6, 6}); }
  static A im(A b) { return __builtin_shuffle(b, v8i{1, 1, 3, 3, 5, 5, 7, 7}); }
  static A sw(A b) { return __builtin_shuffle(b, v8i{1, 0, 3, 2, 5, 4, 7, 6}); }
  static A alt() { return A{-1, 1, -1, 1, -1, 1, -1, 1}; }
  static A conj() { return A{1, -1, 1, -1, 1, -1, 1, -1}; }
};

/// complex128: a 2 x 2 tile of 16-byte units.
template <>
struct Move<double> {
  static constexpr int U = 2;
  using A = v4d;
  static void tr(v4d* a) {
    const v4d t0 = __builtin_shuffle(a[0], a[1], v4i{0, 1, 4, 5});
    const v4d t1 = __builtin_shuffle(a[0], a[1], v4i{2, 3, 6, 7});
    a[0] = t0;
    a[1] = t1;
  }
  static A re(A b) { return __builtin_shuffle(b, v4i{0, 0, 2, 2}); }
  static A im(A b) { return __builtin_shuffle(b, v4i{1, 1, 3, 3}); }
  static A sw(A b) { return __builtin_shuffle(b, v4i{1, 0, 3, 2}); }
  static A alt() { return A{-1, 1, -1, 1}; }
  static A conj() { return A{1, -1, 1, -1}; }
};

/// Whether the lines are consecutive complex numbers: src[j] = src[0] + 2 j.
template <class P>
inline bool consecutive(const P* src, int64_t jn) {
  for (int64_t j = 1; j < jn; ++j)
    if (src[j] != src[0] + 2 * j) return false;
  return true;
}

template <class T>
void gather(T* x, int64_t bw, const T* const* src, int64_t jn, int64_t rows, int64_t stride,
            bool conj) {
  using M = Move<T>;
  using A = typename M::A;
  constexpr int U = M::U;
  if (jn < bw)
    for (int64_t i = 0; i < rows; ++i)
      std::memset(x + 2 * (i * bw + jn), 0, size_t(2 * (bw - jn)) * sizeof(T));
  if (consecutive(src, jn)) {
    // One run of jn complex numbers per row.
    const A cj = conj ? M::conj() : A{} + T(1);
    for (int64_t i = 0; i < rows; ++i) {
      const T* s = src[0] + i * stride;
      T* d = x + 2 * i * bw;
      // Rows far apart defeat the hardware prefetcher: ask for a row a few ahead.
      if (i + 8 < rows && stride > 256) {
        __builtin_prefetch(s + 8 * stride);
        __builtin_prefetch(s + 8 * stride + 2 * jn - 1);
      }
      int64_t j = 0;
      for (; j + U <= jn; j += U) vstore(d + 2 * j, vload<A>(s + 2 * j) * cj);
      for (; j < jn; ++j) {
        d[2 * j] = s[2 * j];
        d[2 * j + 1] = conj ? -s[2 * j + 1] : s[2 * j + 1];
      }
    }
    return;
  }
  int64_t j0 = 0;
  if (stride == 2 && !conj) {
    // Contiguous lines: U x U transposes.
    for (; j0 + U <= jn; j0 += U) {
      int64_t i = 0;
      for (; i + U <= rows; i += U) {
        v4d a[U];
        for (int q = 0; q < U; ++q) a[q] = vload<v4d>(src[j0 + q] + 2 * i);
        M::tr(a);
        for (int q = 0; q < U; ++q) vstore(x + 2 * ((i + q) * bw + j0), a[q]);
      }
      for (; i < rows; ++i)
        for (int q = 0; q < U; ++q) {
          x[2 * (i * bw + j0 + q)] = src[j0 + q][2 * i];
          x[2 * (i * bw + j0 + q) + 1] = src[j0 + q][2 * i + 1];
        }
    }
  }
  const T cs = conj ? T(-1) : T(1);
  for (int64_t i = 0; i < rows; ++i) {
    T* d = x + 2 * i * bw;
    for (int64_t j = j0; j < jn; ++j) {
      const T* e = src[j] + i * stride;
      d[2 * j] = e[0];
      d[2 * j + 1] = cs * e[1];
    }
  }
}

template <class T>
void scatter(const T* r, int64_t bw, T* const* dst, int64_t jn, int64_t rows, int64_t stride,
             T scale) {
  using M = Move<T>;
  using A = typename M::A;
  constexpr int U = M::U;
  const A sv = A{} + scale;
  if (consecutive(dst, jn)) {
    for (int64_t i = 0; i < rows; ++i) {
      const T* s = r + 2 * i * bw;
      T* d = dst[0] + i * stride;
      if (i + 8 < rows && stride > 256) {
        __builtin_prefetch(d + 8 * stride, 1);
        __builtin_prefetch(d + 8 * stride + 2 * jn - 1, 1);
      }
      int64_t j = 0;
      for (; j + U <= jn; j += U) vstore(d + 2 * j, vload<A>(s + 2 * j) * sv);
      for (int64_t t = 2 * j; t < 2 * jn; ++t) d[t] = s[t] * scale;
    }
    return;
  }
  int64_t j0 = 0;
  if (stride == 2) {
    for (; j0 + U <= jn; j0 += U) {
      int64_t i = 0;
      for (; i + U <= rows; i += U) {
        v4d a[U];
        for (int q = 0; q < U; ++q) a[q] = vload<v4d>(r + 2 * ((i + q) * bw + j0));
        M::tr(a);
        for (int q = 0; q < U; ++q) vstore(dst[j0 + q] + 2 * i, (A)a[q] * sv);
      }
      for (; i < rows; ++i)
        for (int q = 0; q < U; ++q) {
          dst[j0 + q][2 * i] = r[2 * (i * bw + j0 + q)] * scale;
          dst[j0 + q][2 * i + 1] = r[2 * (i * bw + j0 + q) + 1] * scale;
        }
    }
  }
  for (int64_t i = 0; i < rows; ++i) {
    const T* s = r + 2 * i * bw;
    for (int64_t j = j0; j < jn; ++j) {
      T* e = dst[j] + i * stride;
      e[0] = s[2 * j] * scale;
      e[1] = s[2 * j + 1] * scale;
    }
  }
}

template <class T>
inline void twiddle1(const T* v, const T* a, const T* b, T* o) {
  const T wr = a[0] * b[0] - a[1] * b[1], wi = a[0] * b[1] + a[1] * b[0];
  o[0] = v[0] * wr - v[1] * wi;
  o[1] = v[0] * wi + v[1] * wr;
}

template <class T>
void twiddle_transpose(const T* r, int64_t bw, const T* ta, const T* tb, T* dst, int64_t n1,
                       int64_t c0, int64_t jn) {
  using M = Move<T>;
  using A = typename M::A;
  constexpr int U = M::U;
  const A al = M::alt();
  int64_t k = 0;
  for (; k + U <= n1; k += U) {
    A ar[U], ai[U];
    for (int q = 0; q < U; ++q) {
      ar[q] = A{} + ta[2 * (k + q)];
      ai[q] = (A{} + ta[2 * (k + q) + 1]) * al;
    }
    int64_t j = 0;
    for (; j + U <= jn; j += U) {
      v4d a[U];
      for (int q = 0; q < U; ++q) {
        const A v = vload<A>(r + 2 * ((k + q) * bw + j));
        A w = vload<A>(tb + 2 * ((k + q) * bw + j));
        w = w * ar[q] + M::sw(w) * ai[q];
        a[q] = (v4d)(v * M::re(w) + M::sw(v) * M::im(w) * al);
      }
      M::tr(a);
      for (int q = 0; q < U; ++q) vstore(dst + 2 * ((c0 + j + q) * n1 + k), a[q]);
    }
    for (; j < jn; ++j)
      for (int q = 0; q < U; ++q)
        twiddle1(r + 2 * ((k + q) * bw + j), ta + 2 * (k + q), tb + 2 * ((k + q) * bw + j),
                 dst + 2 * ((c0 + j) * n1 + k + q));
  }
  for (; k < n1; ++k)
    for (int64_t j = 0; j < jn; ++j)
      twiddle1(r + 2 * (k * bw + j), ta + 2 * k, tb + 2 * (k * bw + j),
               dst + 2 * ((c0 + j) * n1 + k));
}

// ---- real transforms ---------------------------------------------------------------------------
// The split of Z = FFT_h(z), z[j] = x[2j] + i x[2j+1], into X = FFT_2h(x) pairs bin k with bin
// h - k: A = Z[k], B = conj Z[h-k], E = (A + B) / 2, O = -i (A - B) / 2, X[k] = E + w_k O and
// X[h-k] = conj E + w_(h-k) conj O. The vector loop handles U bins from each end at a time,
// reversing the upper ones.

template <class T>
inline void post1(const T* z, T* out, int64_t h, const T* w, T s, int64_t k) {
  const int64_t kc = h - k;
  const T ar = z[2 * k], ai = z[2 * k + 1], br = z[2 * kc], bi = -z[2 * kc + 1];
  const T er = (ar + br) * T(0.5), ei = (ai + bi) * T(0.5);
  const T orr = (ai - bi) * T(0.5), oi = (br - ar) * T(0.5);
  out[2 * k] = (er + orr * w[2 * k] - oi * w[2 * k + 1]) * s;
  out[2 * k + 1] = (ei + orr * w[2 * k + 1] + oi * w[2 * k]) * s;
  if (kc != k) {
    out[2 * kc] = (er + orr * w[2 * kc] + oi * w[2 * kc + 1]) * s;
    out[2 * kc + 1] = (-ei + orr * w[2 * kc + 1] - oi * w[2 * kc]) * s;
  }
}

template <class T>
inline v4d reverse(v4d a) {
  if constexpr (sizeof(T) == 4)
    return __builtin_shuffle(a, v4i{3, 2, 1, 0});
  else
    return __builtin_shuffle(a, v4i{2, 3, 0, 1});
}

template <class T>
void r2c_post(const T* z, T* out, int64_t h, const T* w, T s) {
  using M = Move<T>;
  using A = typename M::A;
  constexpr int U = M::U;
  const A al = M::alt(), cj = M::conj(), half = A{} + T(0.5), sv = A{} + s;
  // Bin 0 and bin h.
  out[0] = (z[0] + z[1]) * s;
  out[1] = T(0);
  out[2 * h] = (z[0] - z[1]) * s;
  out[2 * h + 1] = T(0);
  int64_t k = 1;
  for (; 2 * (k + U - 1) < h; k += U) {
    const int64_t kc = h - k - U + 1;  // the first of the mirrored bins
    const A a = vload<A>(z + 2 * k);
    const A b = (A)reverse<T>(vload<v4d>(z + 2 * kc)) * cj;
    const A e = (a + b) * half;
    const A o = M::sw(a - b) * cj * half;  // -i (A - B) / 2
    const A wk = vload<A>(w + 2 * k);
    const A wc = (A)reverse<T>(vload<v4d>(w + 2 * kc));
    const A xk = e + o * M::re(wk) + M::sw(o) * M::im(wk) * al;
    const A ec = e * cj, oc = o * cj;
    const A xc = ec + oc * M::re(wc) + M::sw(oc) * M::im(wc) * al;
    vstore(out + 2 * k, xk * sv);
    vstore(out + 2 * kc, (A)reverse<T>((v4d)(xc * sv)));
  }
  for (; 2 * k <= h; ++k) post1(z, out, h, w, s, k);
}

template <class T>
void c2r_pre(const T* x, T* z, int64_t h, const T* w) {
  using M = Move<T>;
  using A = typename M::A;
  constexpr int U = M::U;
  const A al = M::alt(), cj = M::conj();
  // Z[0] from the real parts of X[0] and X[h] only.
  z[0] = x[0] + x[2 * h];
  z[1] = x[0] - x[2 * h];
  // Z[k] = E + i O, E = X[k] + conj X[h-k], O = (X[k] - conj X[h-k]) w_k; for h - k: E' =
  // conj E, D' = -conj D.
  int64_t k = 1;
  for (; 2 * (k + U - 1) < h; k += U) {
    const int64_t kc = h - k - U + 1;
    const A a = vload<A>(x + 2 * k);
    const A b = (A)reverse<T>(vload<v4d>(x + 2 * kc)) * cj;
    const A e = a + b, d = a - b;
    const A wk = vload<A>(w + 2 * k);
    const A wc = (A)reverse<T>(vload<v4d>(w + 2 * kc));
    const A o = d * M::re(wk) + M::sw(d) * M::im(wk) * al;
    const A dc = -(d * cj);
    const A oc = dc * M::re(wc) + M::sw(dc) * M::im(wc) * al;
    // E + i O = E + (-O.im, O.re).
    const A zk = e + M::sw(o) * al;
    const A zc = e * cj + M::sw(oc) * al;
    vstore(z + 2 * k, zk);
    vstore(z + 2 * kc, (A)reverse<T>((v4d)zc));
  }
  for (; 2 * k <= h; ++k) {
    const int64_t kc = h - k;
    for (int64_t q : {k, kc}) {
      const int64_t qc = h - q;
      const T ar = x[2 * q], ai = x[2 * q + 1], br = x[2 * qc], bi = -x[2 * qc + 1];
      const T er = ar + br, ei = ai + bi, dr = ar - br, di = ai - bi;
      const T orr = dr * w[2 * q] - di * w[2 * q + 1], oi = dr * w[2 * q + 1] + di * w[2 * q];
      z[2 * q] = er - oi;
      z[2 * q + 1] = ei + orr;
      if (kc == k) break;
    }
  }
}

template <class T>
void fill(FftKernelsT<T>& k) {
  k.lanes = kLanes<T> / 2;
  k.col = &col<T>;
  k.mul_rows = &mul_rows<T>;
  k.gather = &gather<T>;
  k.scatter = &scatter<T>;
  k.twiddle_transpose = &twiddle_transpose<T>;
  k.r2c_post = &r2c_post<T>;
  k.c2r_pre = &c2r_pre<T>;
}

}  // namespace

void register_fft_kernels(FftKernels& k) {
  fill(k.f);
  fill(k.d);
}

}  // namespace ember::cpu::EMBER_CPU_CAP
