// Fused LSTM / GRU gate kernels (Note [Fused recurrent gates]). Compiled once per CPU capability.
#include <cmath>

#include "kernels/cpu/nn/rnn.h"
#include "kernels/cpu/vec.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// Note [Fused recurrent gates]
// One pass per step reads the two gate projections, applies the activations and the cell update
// and writes the new state, instead of one memory pass per elementwise op. The forward keeps the
// activated gates (4H per row) so the backward needs no exp, only a tanh of cy for the LSTM.
// Each body is written once over a "lane" type: the ISA's vector, then the scalar tail.
// sigmoid = 1 / (1 + exp(-x)) and tanh come from SLEEF (1 ULP); exp(-x) = inf gives 0.

template <class T>
struct Scalar1 {
  using V = T;
  static constexpr int L = 1;
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V one() { return T(1); }
  static V sig(V x) { return T(1) / (T(1) + std::exp(-x)); }
  static V th(V x) { return std::tanh(x); }
};

template <class T>
struct Vector {
  using V = Vec<T>;
  static constexpr int L = kLanes<T>;
  static V load(const T* p) { return vload<V>(p); }
  static void store(T* p, V v) { vstore(p, v); }
  static V one() { return splat<T>(T(1)); }
  static V sig(V x) { return one() / (one() + vexp(-x)); }
  static V th(V x) { return vtanh(x); }
};

/// Runs body.template operator()<Lanes>(offset) over [0, H): vectors first, then scalars.
template <class T, class Body>
inline void over_row(int64_t H, const Body& body) {
  int64_t j = 0;
  for (; j + Vector<T>::L <= H; j += Vector<T>::L) body(Vector<T>{}, j);
  for (; j < H; ++j) body(Scalar1<T>{}, j);
}

template <class T>
void lstm_fwd(const T* ig, const T* hg, const T* cx, T* hy, T* cy, T* ws, int64_t b0, int64_t b1,
              int64_t H) {
  for (int64_t b = b0; b < b1; ++b) {
    const T* gi = ig + b * 4 * H;
    const T* gh = hg + b * 4 * H;
    const T* c0 = cx + b * H;
    T* h1 = hy + b * H;
    T* c1 = cy + b * H;
    T* w = ws ? ws + b * 4 * H : nullptr;
    over_row<T>(H, [&](auto lane, int64_t j) {
      using A = decltype(lane);
      auto i = A::sig(A::load(gi + j) + A::load(gh + j));
      auto f = A::sig(A::load(gi + H + j) + A::load(gh + H + j));
      auto g = A::th(A::load(gi + 2 * H + j) + A::load(gh + 2 * H + j));
      auto o = A::sig(A::load(gi + 3 * H + j) + A::load(gh + 3 * H + j));
      auto c = f * A::load(c0 + j) + i * g;
      A::store(c1 + j, c);
      A::store(h1 + j, o * A::th(c));
      if (w) {
        A::store(w + j, i);
        A::store(w + H + j, f);
        A::store(w + 2 * H + j, g);
        A::store(w + 3 * H + j, o);
      }
    });
  }
}

template <class T>
void lstm_bwd(const T* ghy, const T* gcy, const T* ws, const T* cx, const T* cy, T* dgates, T* dcx,
              int64_t b0, int64_t b1, int64_t H) {
  for (int64_t b = b0; b < b1; ++b) {
    const T* w = ws + b * 4 * H;
    const T* gh = ghy + b * H;
    const T* gc = gcy + b * H;
    const T* c0 = cx + b * H;
    const T* c1 = cy + b * H;
    T* dg = dgates + b * 4 * H;
    T* dc0 = dcx + b * H;
    over_row<T>(H, [&](auto lane, int64_t j) {
      using A = decltype(lane);
      const auto one = A::one();
      auto i = A::load(w + j), f = A::load(w + H + j), g = A::load(w + 2 * H + j),
           o = A::load(w + 3 * H + j);
      auto tc = A::th(A::load(c1 + j));
      auto h = A::load(gh + j);
      auto dc = A::load(gc + j) + h * o * (one - tc * tc);
      A::store(dg + j, dc * g * i * (one - i));
      A::store(dg + H + j, dc * A::load(c0 + j) * f * (one - f));
      A::store(dg + 2 * H + j, dc * i * (one - g * g));
      A::store(dg + 3 * H + j, h * tc * o * (one - o));
      A::store(dc0 + j, dc * f);
    });
  }
}

template <class T>
void gru_fwd(const T* ig, const T* hg, const T* hx, T* hy, T* ws, int64_t b0, int64_t b1,
             int64_t H) {
  for (int64_t b = b0; b < b1; ++b) {
    const T* gi = ig + b * 3 * H;
    const T* gh = hg + b * 3 * H;
    const T* h0 = hx + b * H;
    T* h1 = hy + b * H;
    T* w = ws ? ws + b * 4 * H : nullptr;
    over_row<T>(H, [&](auto lane, int64_t j) {
      using A = decltype(lane);
      auto r = A::sig(A::load(gi + j) + A::load(gh + j));
      auto z = A::sig(A::load(gi + H + j) + A::load(gh + H + j));
      auto hn = A::load(gh + 2 * H + j);
      auto n = A::th(A::load(gi + 2 * H + j) + r * hn);
      A::store(h1 + j, n + z * (A::load(h0 + j) - n));
      if (w) {
        A::store(w + j, r);
        A::store(w + H + j, z);
        A::store(w + 2 * H + j, n);
        A::store(w + 3 * H + j, hn);
      }
    });
  }
}

template <class T>
void gru_bwd(const T* ghy, const T* ws, const T* hx, T* dig, T* dhg, T* dhx, int64_t b0, int64_t b1,
             int64_t H) {
  for (int64_t b = b0; b < b1; ++b) {
    const T* w = ws + b * 4 * H;
    const T* g = ghy + b * H;
    const T* h0 = hx + b * H;
    T* di = dig + b * 3 * H;
    T* dh = dhg + b * 3 * H;
    T* dh0 = dhx + b * H;
    over_row<T>(H, [&](auto lane, int64_t j) {
      using A = decltype(lane);
      const auto one = A::one();
      auto r = A::load(w + j), z = A::load(w + H + j), n = A::load(w + 2 * H + j),
           hn = A::load(w + 3 * H + j);
      auto gy = A::load(g + j);
      auto dz = gy * (A::load(h0 + j) - n) * z * (one - z);
      auto dn = gy * (one - z) * (one - n * n);
      auto dr = dn * hn * r * (one - r);
      A::store(di + j, dr);
      A::store(di + H + j, dz);
      A::store(di + 2 * H + j, dn);
      A::store(dh + j, dr);
      A::store(dh + H + j, dz);
      A::store(dh + 2 * H + j, dn * r);
      A::store(dh0 + j, gy * z);
    });
  }
}

template <class T>
void fill(RnnKernelsT<T>& k) {
  k.lstm_fwd = lstm_fwd<T>;
  k.lstm_bwd = lstm_bwd<T>;
  k.gru_fwd = gru_fwd<T>;
  k.gru_bwd = gru_bwd<T>;
}

}  // namespace

void register_rnn_kernels(RnnKernels& k) {
  fill(k.f);
  fill(k.d);
}

}  // namespace ember::cpu::EMBER_CPU_CAP
