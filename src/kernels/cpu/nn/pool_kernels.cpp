// Max pooling over full 2-d windows (no padding reached, no dilation: the pools of a CNN).
// Compiled once per CPU capability (Note [Vectorized max pooling]).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/parallel_internal.h"
#include "ember/half.h"
#include "kernels/cpu/nn/pool_cpu.h"
#include "kernels/cpu/vec.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Note [Vectorized max pooling]
// A max pool reads its input once and writes a quarter of it (2x2 windows): it is bound by
// memory when the loops are vectorized, and by the scalar compare chain when they are not.
// - 2x2 windows at stride 2 (the CNN's pool) read 2 L input values of two rows per L outputs
//   and split each into even and odd columns with shuffles, so the four taps of every window
//   are four vectors; the taps are visited in row-major order with take = (v > best) | isnan(v),
//   which keeps PyTorch's rules (a NaN wins, later NaNs too; the first maximum wins ties, -inf
//   windows point at their first tap). The backward writes each window's four input values
//   once (the windows do not overlap), selected by the saved tap, so it needs no zeroing pass;
//   rows of fewer than 8 windows (or a vector) are zeroed and then get one store per window.
//   Either way a gradient lands as 0 + g, as PyTorch's scatter into zeros (-0 gives +0).
// - Any other full window (kh, kw, sh, sw) runs over blocks of an output row on the stack, the
//   taps in the outer loops and the block in the inner loop, with sw = 1 and 2 as constants so
//   the inner loop's loads are unit-stride or de-interleaved and vectorize.
// - A row shorter than a vector runs on half vectors (down to 16 bytes) and then scalars; a
//   ragged end recomputes an overlapping last vector (the same values written twice).
// bfloat16 is widened to float (exact) and narrowed by truncation, exact for the values chosen.
// Threads take contiguous ranges of output rows (planes * OH), so 2 threads get equal halves.

/// The type the comparisons run in.
template <class T>
using Calc = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// Vectors of L lanes of C and the matching comparison mask.
template <class C, int L>
struct Lanes {
  using I = std::conditional_t<sizeof(C) == 4, int32_t, int64_t>;
  using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  typedef C V __attribute__((vector_size(sizeof(C) * L)));
  typedef I M __attribute__((vector_size(sizeof(C) * L)));
  typedef U B __attribute__((vector_size(sizeof(C) * L)));
  typedef uint8_t Tap __attribute__((vector_size(L)));
  typedef int64_t Idx __attribute__((vector_size(8 * L)));
};

/// L values of T at p, as Calc<T>.
template <class T, int L>
[[gnu::always_inline]] inline typename Lanes<Calc<T>, L>::V load(const T* p) {
  typename Lanes<Calc<T>, L>::V v;
  if constexpr (std::is_same_v<T, BFloat16>) {
    typedef uint16_t H __attribute__((vector_size(2 * L)));
    H h;
    std::memcpy(&h, static_cast<const void*>(p), sizeof(h));
    const auto u = __builtin_convertvector(h, typename Lanes<float, L>::B) << 16;
    std::memcpy(&v, &u, sizeof(v));
  } else {
    std::memcpy(&v, static_cast<const void*>(p), sizeof(v));
  }
  return v;
}

/// Stores L values (exactly representable in T) at p.
template <class T, int L>
[[gnu::always_inline]] inline void store(T* p, typename Lanes<Calc<T>, L>::V v) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    typedef uint16_t H __attribute__((vector_size(2 * L)));
    typename Lanes<float, L>::B u;
    std::memcpy(&u, &v, sizeof(u));
    const H h = __builtin_convertvector(u >> 16, H);
    std::memcpy(static_cast<void*>(p), &h, sizeof(h));
  } else {
    std::memcpy(static_cast<void*>(p), &v, sizeof(v));
  }
}

/// Where the lanes of de-interleaved vectors go. A 256-bit vector takes the even (odd) lanes
/// of two vectors within each 128-bit half (vshufps, vunpcklpd: one instruction, where the
/// exact order needs two permutes and a blend); its results are then in the output order
/// lane_of(ow), which one 64-bit permute undoes.
template <class C, int L>
struct Deint {
  static constexpr std::size_t E = 16 / sizeof(C);  // lanes per 128 bits
  static constexpr bool in_lane = L == 2 * E;
  /// The lane of (a, b) that result lane j takes, k = 0 for even lanes, 1 for odd.
  static constexpr std::size_t src(std::size_t j, std::size_t k) {
    if (!in_lane) return 2 * j + k;
    const std::size_t h = j / E, r = j % E;
    return r < E / 2 ? h * E + 2 * r + k : L + h * E + 2 * (r - E / 2) + k;
  }
  /// The result lane holding output ow.
  static constexpr std::size_t lane_of(std::size_t ow) {
    if (!in_lane) return ow;
    const std::size_t half = ow < L / 2 ? 0 : 1, q = ow - half * (L / 2);
    return q / (E / 2) * E + half * (E / 2) + q % (E / 2);
  }
};

/// The even (k = 0) or odd (k = 1) lanes of (a, b), in Deint's order.
template <class C, int L, std::size_t k, class V, std::size_t... I>
[[gnu::always_inline]] inline V pick(V a, V b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, Deint<C, L>::src(I, k)...);
}

/// v in output order.
template <class C, int L, class V, std::size_t... I>
[[gnu::always_inline]] inline V unpick(V v, std::index_sequence<I...>) {
  if constexpr (!Deint<C, L>::in_lane) return v;
  return __builtin_shufflevector(v, v, Deint<C, L>::lane_of(I)...);
}

/// Lanes h * L .. h * L + L - 1 of a0 b0 a1 b1 ... (the interleaving of two vectors of L lanes).
template <std::size_t h, class V, std::size_t... I>
[[gnu::always_inline]] inline V interleave(V a, V b, std::index_sequence<I...>) {
  constexpr std::size_t L = sizeof...(I);
  return __builtin_shufflevector(a, b,
                                 ((h * L + I) % 2 == 0 ? (h * L + I) / 2 : L + (h * L + I) / 2)...);
}

/// The low byte of each lane of m (lanes of S bytes, values below 256), as L bytes: a byte
/// shuffle, where a converting cast is lowered to one extract per lane. SSE2 has no byte
/// shuffle (the generic one goes through the stack): two saturating packs there.
template <class Tap, class M, std::size_t S, std::size_t... I>
[[gnu::always_inline]] inline Tap low_bytes(M m, std::index_sequence<I...>) {
#if defined(__SSE2__) && !defined(__SSSE3__)
  if constexpr (sizeof(M) == 16 && S == 4) {
    __m128i v;
    std::memcpy(&v, &m, sizeof(v));
    v = _mm_packs_epi32(v, v);
    v = _mm_packus_epi16(v, v);
    const int32_t x = _mm_cvtsi128_si32(v);
    Tap r;
    std::memcpy(&r, &x, sizeof(r));
    return r;
  }
#endif
  if constexpr (sizeof...(I) <= 2) {
    return Tap{uint8_t(m[I])...};
  } else {
    typedef uint8_t Bytes __attribute__((vector_size(sizeof(M))));
    Bytes b;
    std::memcpy(&b, &m, sizeof(b));
    return __builtin_shufflevector(b, b, (S * I)...);
  }
}

/// L bytes at p, zero-extended to the lanes of M (I: 0 .. L - 1): one vpmovzxb* on AVX2 and
/// AVX-512, where a converting cast or a byte shuffle goes through the stack.
template <class M, std::size_t... I>
[[gnu::always_inline]] inline M widen_bytes(const uint8_t* p, std::index_sequence<I...>) {
  return M{p[I]...};
}

// Output modes: values only, values and taps (Note [Compact pooling indices]), values and
// flat int64 indices.
enum Mode { kValues, kTaps, kIndices };

/// One step of the window scan: tap `t` with values v.
template <class V, class M>
[[gnu::always_inline]] inline void take_tap(V v, V& best, M& tap, M t) {
  const M take = (v > best) | (v != v);
  best = take ? v : best;
  tap = take ? t : tap;
}

/// L outputs of a 2x2 stride-2 pool from rows a and b (2 L values each); `base` is the flat
/// index of the first window's first tap, W the row length.
template <class T, int L, Mode mode>
[[gnu::always_inline]] inline void fwd2x2_block(const T* a, const T* b, T* y, uint8_t* tp,
                                                int64_t* ip, int64_t base, int64_t W) {
  using LN = Lanes<Calc<T>, L>;
  using V = typename LN::V;
  using M = typename LN::M;
  constexpr auto seq = std::make_index_sequence<L>{};
  const V a0 = load<T, L>(a), a1 = load<T, L>(a + L);
  const V b0 = load<T, L>(b), b1 = load<T, L>(b + L);
  using C = Calc<T>;
  V best = pick<C, L, 0>(a0, a1, seq);
  M tap = M{};
  take_tap(pick<C, L, 1>(a0, a1, seq), best, tap, M{} + 1);
  take_tap(pick<C, L, 0>(b0, b1, seq), best, tap, M{} + 2);
  take_tap(pick<C, L, 1>(b0, b1, seq), best, tap, M{} + 3);
  store<T, L>(y, unpick<C, L>(best, seq));
  tap = unpick<C, L>(tap, seq);
  if constexpr (mode == kTaps) {
    const auto t8 = low_bytes<typename LN::Tap, M, sizeof(Calc<T>)>(tap, seq);
    std::memcpy(tp, &t8, sizeof(t8));
  } else if constexpr (mode == kIndices) {
    M lane;
    for (int i = 0; i < L; ++i) lane[i] = 2 * i;
    const M at = lane + (tap >> 1) * typename LN::I(W) + (tap & 1);
    const auto i64 = __builtin_convertvector(at, typename LN::Idx) + base;
    std::memcpy(ip, &i64, sizeof(i64));
  }
}

template <class T, Mode mode>
inline void fwd2x2_scalar(const T* a, const T* b, T* y, uint8_t* tp, int64_t* ip, int64_t base,
                          int64_t W, int64_t n) {
  using C = Calc<T>;
  for (int64_t o = 0; o < n; ++o) {
    const C v[4] = {C(a[2 * o]), C(a[2 * o + 1]), C(b[2 * o]), C(b[2 * o + 1])};
    C best = v[0];
    int t = 0;
    for (int k = 1; k < 4; ++k)
      if (v[k] > best || v[k] != v[k]) best = v[k], t = k;
    y[o] = T(best);
    if constexpr (mode == kTaps) tp[o] = uint8_t(t);
    if constexpr (mode == kIndices) ip[o] = base + 2 * o + (t >> 1) * W + (t & 1);
  }
}

/// One output row of n outputs: vectors of L lanes, an overlapping last vector, and rows
/// shorter than L on half vectors (down to 16 bytes), then scalars.
template <class T, int L, Mode mode>
inline void fwd2x2_row(const T* a, const T* b, T* y, uint8_t* tp, int64_t* ip, int64_t base,
                       int64_t W, int64_t n) {
  if (n >= L) {
    auto blk = [&](int64_t o) {
      fwd2x2_block<T, L, mode>(a + 2 * o, b + 2 * o, y + o, mode == kTaps ? tp + o : nullptr,
                               mode == kIndices ? ip + o : nullptr, base + 2 * o, W);
    };
    int64_t o = 0;
    for (; o + L <= n; o += L) blk(o);
    if (o < n) blk(n - L);
    return;
  }
  if constexpr (int(sizeof(Calc<T>)) * L > 16)
    return fwd2x2_row<T, L / 2, mode>(a, b, y, tp, ip, base, W, n);
  fwd2x2_scalar<T, mode>(a, b, y, tp, ip, base, W, n);
}

template <class T, Mode mode>
void fwd2x2(const T* x, T* y, uint8_t* taps, int64_t* idx, int64_t planes, const Pool2d& g) {
  const int64_t H = g.H, W = g.W, OH = g.OH, OW = g.OW;
  constexpr int L = kLanes<Calc<T>>;
  // ~16K input values per chunk at least; contiguous ranges of rows balance the threads.
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, 2 * W));
  parallel_for(0, planes * OH, grain, [=](int64_t r0, int64_t r1) {
    // Locals, not captures: the stores below could alias a captured value in memory.
    const int64_t w = W, ow_n = OW, oh_n = OH, skip = (H - 2 * OH) * W;
    int64_t oh = r0 % oh_n;
    const T* a = x + r0 / oh_n * H * w + 2 * oh * w;
    for (int64_t r = r0; r < r1; ++r) {
      uint8_t* tp = mode == kTaps ? taps + r * ow_n : nullptr;
      int64_t* ip = mode == kIndices ? idx + r * ow_n : nullptr;
      fwd2x2_row<T, L, mode>(a, a + w, y + r * ow_n, tp, ip, 2 * oh * w, w, ow_n);
      a += 2 * w;
      if (++oh == oh_n) oh = 0, a += skip;
    }
  });
}

/// Any full window: one output row in blocks of kBlock outputs, the taps outside, the block
/// inside. SW: the column stride when it is 1 or 2, else 0 (read from g).
template <class T, int SW, Mode mode>
void fwd_full(const T* x, T* y, uint8_t* taps, int64_t* idx, int64_t planes, const Pool2d& g) {
  using C = Calc<T>;
  using I = std::conditional_t<mode == kIndices, int32_t, uint8_t>;
  const int64_t H = g.H, W = g.W, OH = g.OH, OW = g.OW, kh = g.kh, kw = g.kw, sh = g.sh;
  const int64_t sw = SW ? SW : g.sw;
  constexpr int64_t kBlock = 256;
  const int64_t grain =
      std::max<int64_t>(1, 16384 / std::max<int64_t>(1, std::min(OW, kBlock) * kh * kw));
  parallel_for(0, planes * OH, grain, [&](int64_t r0, int64_t r1) {
    alignas(64) C best[kBlock];
    alignas(64) I bi[kBlock];
    int64_t p = r0 / OH, oh = r0 % OH;
    for (int64_t r = r0; r < r1; ++r) {
      const T* xp = x + p * H * W;
      for (int64_t o0 = 0; o0 < OW; o0 += kBlock) {
        const int64_t n = std::min(kBlock, OW - o0);
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t row = (oh * sh + i) * W + o0 * sw + j;
            const T* __restrict__ src = xp + row;
            const I code = mode == kIndices ? I(row) : I(i * kw + j);
            if (i == 0 && j == 0) {
              for (int64_t o = 0; o < n; ++o) {
                best[o] = C(src[o * sw]);
                if constexpr (mode != kValues) bi[o] = mode == kIndices ? I(code + o * sw) : code;
              }
              continue;
            }
            for (int64_t o = 0; o < n; ++o) {
              const C v = C(src[o * sw]);
              const bool take = (v > best[o]) | (v != v);
              best[o] = take ? v : best[o];
              if constexpr (mode == kIndices)
                bi[o] = take ? I(code + o * sw) : bi[o];
              else if constexpr (mode == kTaps)
                bi[o] = take ? code : bi[o];
            }
          }
        T* yr = y + r * OW + o0;
        for (int64_t o = 0; o < n; ++o) yr[o] = T(best[o]);
        if constexpr (mode == kTaps) std::memcpy(taps + r * OW + o0, bi, size_t(n));
        if constexpr (mode == kIndices)
          for (int64_t o = 0; o < n; ++o) idx[r * OW + o0 + o] = bi[o];
      }
      if (++oh == OH) oh = 0, ++p;
    }
  });
}

template <class T, Mode mode>
void fwd_dispatch(const T* x, T* y, uint8_t* taps, int64_t* idx, int64_t planes, const Pool2d& g) {
  if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2)
    return fwd2x2<T, mode>(x, y, taps, idx, planes, g);
  if (g.sw == 1) return fwd_full<T, 1, mode>(x, y, taps, idx, planes, g);
  if (g.sw == 2) return fwd_full<T, 2, mode>(x, y, taps, idx, planes, g);
  fwd_full<T, 0, mode>(x, y, taps, idx, planes, g);
}

template <class T>
void fwd_typed(const void* x, void* y, uint8_t* taps, int64_t* idx, int64_t planes,
               const Pool2d& g) {
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  if (taps) return fwd_dispatch<T, kTaps>(xt, yt, taps, nullptr, planes, g);
  if (idx) return fwd_dispatch<T, kIndices>(xt, yt, nullptr, idx, planes, g);
  fwd_dispatch<T, kValues>(xt, yt, nullptr, nullptr, planes, g);
}

/// L windows of the 2x2 stride-2 backward: each window's four input values are its gradient
/// at its tap and zero elsewhere, written to rows a and b (2 L values each). 0 + g as the
/// scatter into zeros computes (a gradient of -0 gives +0).
template <class T, int L>
[[gnu::always_inline]] inline void bwd2x2_block(const T* g, const uint8_t* tp, T* a, T* b) {
  using LN = Lanes<Calc<T>, L>;
  using V = typename LN::V;
  using M = typename LN::M;
  const V gv = load<T, L>(g);
  const M t = widen_bytes<M>(tp, std::make_index_sequence<L>{});
  const V z{};
  const V v0 = z + ((t == 0) ? gv : z), v1 = z + ((t == 1) ? gv : z);
  const V v2 = z + ((t == 2) ? gv : z), v3 = z + ((t == 3) ? gv : z);
  constexpr auto seq = std::make_index_sequence<L>{};
  store<T, L>(a, interleave<0>(v0, v1, seq));
  store<T, L>(a + L, interleave<1>(v0, v1, seq));
  store<T, L>(b, interleave<0>(v2, v3, seq));
  store<T, L>(b + L, interleave<1>(v2, v3, seq));
}

template <class T>
inline void bwd2x2_scalar(const T* g, const uint8_t* tp, T* a, T* b, int64_t n) {
  using C = Calc<T>;
  for (int64_t o = 0; o < n; ++o) {
    const C v = C(0) + C(g[o]);
    const int t = tp[o];
    a[2 * o] = T(t == 0 ? v : C(0)), a[2 * o + 1] = T(t == 1 ? v : C(0));
    b[2 * o] = T(t == 2 ? v : C(0)), b[2 * o + 1] = T(t == 3 ? v : C(0));
  }
}

template <class T, int L>
inline void bwd2x2_row(const T* g, const uint8_t* tp, T* a, T* b, int64_t n) {
  if (n >= L) {
    int64_t o = 0;
    for (; o + L <= n; o += L) bwd2x2_block<T, L>(g + o, tp + o, a + 2 * o, b + 2 * o);
    if (o < n) bwd2x2_block<T, L>(g + n - L, tp + n - L, a + 2 * (n - L), b + 2 * (n - L));
    return;
  }
  if constexpr (int(sizeof(Calc<T>)) * L > 16) return bwd2x2_row<T, L / 2>(g, tp, a, b, n);
  bwd2x2_scalar(g, tp, a, b, n);
}

template <class T>
void bwd2x2(const T* gy, const uint8_t* taps, T* gx, int64_t planes, const Pool2d& g) {
  const int64_t H = g.H, W = g.W, OH = g.OH, OW = g.OW;
  constexpr int L = kLanes<Calc<T>>;
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, 2 * W));
  parallel_for(0, planes * OH, grain, [=](int64_t r0, int64_t r1) {
    const int64_t w = W, ow_n = OW, oh_n = OH, skip = (H - 2 * OH) * W;
    int64_t oh = r0 % oh_n;
    T* a = gx + r0 / oh_n * H * w + 2 * oh * w;
    const T* gr = gy + r0 * ow_n;
    const uint8_t* tr = taps + r0 * ow_n;
    for (int64_t r = r0; r < r1; ++r, gr += ow_n, tr += ow_n) {
      if (ow_n >= std::max(L, 8)) {
        bwd2x2_row<T, L>(gr, tr, a, a + w, ow_n);
        for (int64_t c = 2 * ow_n; c < w; ++c) a[c] = a[w + c] = T();  // columns past the windows
      } else {
        // Short rows (under 8 windows or a vector): zeroing the two rows and placing each
        // gradient takes fewer instructions than masked vectors.
        for (int64_t c = 0; c < 2 * w; ++c) a[c] = T();
        for (int64_t o = 0; o < ow_n; ++o) {
          const int t = tr[o];
          a[(t >> 1) * w + 2 * o + (t & 1)] = T(Calc<T>(0) + Calc<T>(gr[o]));
        }
      }
      a += 2 * w;
      if (++oh == oh_n) {  // and the rows below the last window
        for (int64_t i = 0; i < skip; ++i) a[i] = T();
        oh = 0, a += skip;
      }
    }
  });
}

}  // namespace

void max_pool2d_full(ScalarType dt, const void* x, void* y, uint8_t* taps, int64_t* idx,
                     int64_t planes, const Pool2d& g) {
  switch (dt) {
    case kDouble:
      return fwd_typed<double>(x, y, taps, idx, planes, g);
    case kBFloat16:
      return fwd_typed<BFloat16>(x, y, taps, idx, planes, g);
    default:
      return fwd_typed<float>(x, y, taps, idx, planes, g);
  }
}

void max_pool2d_k2s2_backward_taps(ScalarType dt, const void* gy, const uint8_t* taps, void* gx,
                                   int64_t planes, const Pool2d& g) {
  switch (dt) {
    case kDouble:
      return bwd2x2(static_cast<const double*>(gy), taps, static_cast<double*>(gx), planes, g);
    case kBFloat16:
      return bwd2x2(static_cast<const BFloat16*>(gy), taps, static_cast<BFloat16*>(gx), planes, g);
    default:
      return bwd2x2(static_cast<const float*>(gy), taps, static_cast<float*>(gx), planes, g);
  }
}

}  // namespace ember::cpu::EMBER_CPU_CAP
