#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Note [Elementwise inner loops]
// One template serves every elementwise kernel. The engine hands it a 1-D run: output and
// input pointers with byte strides. Two cases are chosen per run:
//  - dense: the output is contiguous and each input is contiguous or a broadcast scalar
//    (stride 0). Work goes in blocks of kBlock elements of the compute type: inputs of the
//    compute type are read in place, others (half/bfloat16, broadcast scalars) are converted
//    into a small stack buffer first (vectorised: Note [Vector 16-bit float conversion]); the block
//    kernel is a plain contiguous loop that uses the functor's `vec()` (SLEEF/vector ops) for
//    float/double when it has one, and is left to the compiler's auto-vectorizer otherwise.
//  - strided: a scalar loop with byte strides.
// A dense run of an op with a big output writes it with streaming stores (Note [Streaming
// stores] in streaming.h): same values, other store instruction.
// Functors take and return the compute type `opmath_t<T>` (float for half/bfloat16), are
// constructed from OpParams once per run, and are written once for all ISAs.

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/scalar_traits.h"
#include "ember/dispatch_type.h"
#include "kernels/common/element.h"
#include "kernels/cpu/elementwise/convert_vec.h"
#include "kernels/cpu/elementwise/streaming.h"
#include "kernels/cpu/kernel_registry.h"
#include "kernels/cpu/vec.h"
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace ember::kernels {
// The CPU's 16-bit float and complex element types.
template <>
struct ElementTraits<Half> {
  static constexpr bool kComplex = false;
  static constexpr bool kReduced = true;
  static float to_float(Half v) { return static_cast<float>(v); }
  static Half from_float(float f) { return Half(f); }
};
template <>
struct ElementTraits<BFloat16> {
  static constexpr bool kComplex = false;
  static constexpr bool kReduced = true;
  static float to_float(BFloat16 v) { return static_cast<float>(v); }
  static BFloat16 from_float(float f) { return BFloat16(f); }
};
template <class V>
struct ElementTraits<complex<V>> {
  static constexpr bool kComplex = true;
  static constexpr bool kReduced = false;
};
}  // namespace ember::kernels

namespace ember::cpu::EMBER_CPU_CAP {

/// The shared element rules (Note [Shared element rules]).
using kernels::convert;
using kernels::opmath_t;

// Output type selectors for registration.
template <class T>
using out_same = T;
template <class T>
using out_bool = bool;
template <class T>
using out_real = typename real_of<T>::type;

template <class F, class C, class = void>
struct has_vec1 : std::false_type {};
template <class F, class C>
struct has_vec1<F, C, std::void_t<decltype(std::declval<const F&>().vec(std::declval<Vec<C>>()))>>
    : std::true_type {};
template <class F, class C, class = void>
struct has_vec2 : std::false_type {};
template <class F, class C>
struct has_vec2<F, C,
                std::void_t<decltype(std::declval<const F&>().vec(
                    std::declval<Vec<C>>(), std::declval<Vec<C>>()))>> : std::true_type {};
template <class F, class C, class = void>
struct has_vec3 : std::false_type {};
template <class F, class C>
struct has_vec3<F, C,
                std::void_t<decltype(std::declval<const F&>().vec(
                    std::declval<Vec<C>>(), std::declval<Vec<C>>(), std::declval<Vec<C>>()))>>
    : std::true_type {};

template <class F, class C, int N>
constexpr bool functor_has_vec() {
  if constexpr (!std::is_same_v<C, float> && !std::is_same_v<C, double>)
    return false;
  else if constexpr (N == 1)
    return has_vec1<F, C>::value;
  else if constexpr (N == 2)
    return has_vec2<F, C>::value;
  else if constexpr (N == 3)
    return has_vec3<F, C>::value;
  else
    return false;
}

constexpr int64_t kBlock = 256;

/// dst[i] = convert<To>(src[i]) for n contiguous elements; float32 <-> bfloat16/float16 take
/// the vector path of Note [Vector 16-bit float conversion] (same bits as the scalar rule).
template <class From, class To>
inline void convert_block(const From* __restrict src, To* __restrict dst, int64_t n) {
  if constexpr (kVectorConvert<To, From>) {
    convert_contiguous(src, dst, n);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = convert<To>(src[i]);
  }
}

/// A non-temporal store of a whole vector to `p`, aligned to EMBER_VEC_BYTES.
template <class V>
inline void vstream(void* p, V v) {
#if EMBER_VEC_BYTES == 64
  _mm512_stream_si512(static_cast<__m512i*>(p), (__m512i)v);
#elif EMBER_VEC_BYTES == 32
  _mm256_stream_si256(static_cast<__m256i*>(p), (__m256i)v);
#elif defined(__SSE2__)
  _mm_stream_si128(static_cast<__m128i*>(p), (__m128i)v);
#else
  vstore(p, v);
#endif
}

/// Whether block_kernel runs `F` on whole vectors for these types.
template <int N, class OutC, class C, class F>
constexpr bool kBlockVec = std::is_same_v<OutC, C>&& functor_has_vec<F, C, N>();

// Contiguous block kernel on compute-type pointers. kStream: `o` is aligned to the vector width
// and whole vectors are stored non-temporally (Note [Streaming stores]).
template <int N, bool kStream = false, class OutC, class C, class F>
inline void block_kernel(OutC* __restrict o, const C* const* in, int64_t n, const F& f) {
  int64_t i = 0;
  if constexpr (kBlockVec<N, OutC, C, F>) {
    constexpr int L = kLanes<C>;
    using V = Vec<C>;
    for (; i + L <= n; i += L) {
      V r;
      if constexpr (N == 1)
        r = f.vec(vload<V>(in[0] + i));
      else if constexpr (N == 2)
        r = f.vec(vload<V>(in[0] + i), vload<V>(in[1] + i));
      else
        r = f.vec(vload<V>(in[0] + i), vload<V>(in[1] + i), vload<V>(in[2] + i));
      if constexpr (kStream)
        vstream(o + i, r);
      else
        vstore(o + i, r);
    }
  }
  if constexpr (N == 0) {
    for (; i < n; ++i) o[i] = convert<OutC>(f());
  } else if constexpr (N == 1) {
    const C* __restrict a = in[0];
    for (; i < n; ++i) o[i] = convert<OutC>(f(a[i]));
  } else if constexpr (N == 2) {
    const C* __restrict a = in[0];
    const C* __restrict b = in[1];
    for (; i < n; ++i) o[i] = convert<OutC>(f(a[i], b[i]));
  } else {
    const C* __restrict a = in[0];
    const C* __restrict b = in[1];
    const C* __restrict c = in[2];
    for (; i < n; ++i) o[i] = convert<OutC>(f(a[i], b[i], c[i]));
  }
}

template <class Out, class T, int N, class F, size_t... I>
inline void strided_loop(char** data, const int64_t* s, int64_t n, const F& f,
                         std::index_sequence<I...>) {
  using C = opmath_t<T>;
  char* o = data[0];
  char* in[N > 0 ? N : 1] = {data[1 + I]...};
  (void)in;  // a fill (N == 0) reads no input
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(o) = convert<Out>(f(convert<C>(*reinterpret_cast<T*>(in[I]))...));
    o += s[0];
    ((in[I] += s[1 + I]), ...);
  }
}

constexpr int64_t kStreamAlign = 64;  // a cache line: streamed lines are written whole

/// Copies `len` elements from the block buffer `src` to `dst` (any alignment of the element
/// type): plain stores up to the first vector boundary of `dst` and after the last whole vector,
/// non-temporal vector stores between (Note [Streaming stores]).
template <class Out>
inline void stream_copy(Out* __restrict dst, const Out* __restrict src, int64_t len) {
  constexpr int64_t kPer = EMBER_VEC_BYTES / int64_t(sizeof(Out));
  static_assert(kPer >= 1);
  const uintptr_t mis = reinterpret_cast<uintptr_t>(dst) % EMBER_VEC_BYTES;
  int64_t i = mis ? std::min<int64_t>(len, int64_t((EMBER_VEC_BYTES - mis) / sizeof(Out))) : 0;
  if (i) std::memcpy(static_cast<void*>(dst), src, size_t(i) * sizeof(Out));
  for (; i + kPer <= len; i += kPer) vstream(dst + i, vload<Vec<float>>(src + i));
  if (i < len) std::memcpy(static_cast<void*>(dst + i), src + i, size_t(len - i) * sizeof(Out));
}

/// Orders this thread's streaming stores before whatever it does next (joining the workers).
inline void stream_fence() {
#if defined(__SSE__)
  __builtin_ia32_sfence();
#endif
}

/// Runs functor `f` over a 1-D run (see Note [Elementwise inner loops]). All N inputs are `T`.
template <class Out, class T, int N, class F>
inline void elementwise_loop(char** data, const int64_t* s, int64_t n, const F& f) {
  using C = opmath_t<T>;
  using OutC =
      std::conditional_t<std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>, float, Out>;
  bool dense = s[0] == int64_t(sizeof(Out));
  for (int k = 0; k < N; ++k) dense = dense && (s[1 + k] == int64_t(sizeof(T)) || s[1 + k] == 0);
  // Short runs (per-op overhead matters most there) skip the block buffers.
  if (!dense || n < 16) {
    strided_loop<Out, T, N>(data, s, n, f, std::make_index_sequence<N>{});
    return;
  }
  constexpr bool direct_in = std::is_same_v<C, T>;
  constexpr bool direct_out = std::is_same_v<OutC, Out>;
  C buf[N > 0 ? N : 1][direct_in ? 1 : kBlock];
  C bcast[N > 0 ? N : 1][kBlock];
  OutC obuf[direct_out ? 1 : kBlock];
  const C* in[N > 0 ? N : 1] = {};
  for (int k = 0; k < N; ++k)
    if (s[1 + k] == 0)
      std::fill(bcast[k], bcast[k] + std::min(n, kBlock),
                convert<C>(*reinterpret_cast<const T*>(data[1 + k])));
  // Elements [b, b + len) into `dst` (the output itself or the streaming buffer); with kStream
  // (a std::bool_constant), whole vectors go straight to `dst` with streaming stores.
  auto block = [&](int64_t b, int64_t len, Out * dst, auto kStream) __attribute__((always_inline)) {
    for (int k = 0; k < N; ++k) {
      const T* src = reinterpret_cast<const T*>(data[1 + k]) + b;
      if (s[1 + k] == 0) {
        in[k] = bcast[k];
      } else if constexpr (direct_in) {
        in[k] = reinterpret_cast<const C*>(src);
      } else {
        convert_block(src, buf[k], len);
        in[k] = buf[k];
      }
    }
    if constexpr (direct_out) {
      block_kernel<N, decltype(kStream)::value>(reinterpret_cast<OutC*>(dst), in, len, f);
    } else {
      block_kernel<N>(obuf, in, len, f);
      convert_block(obuf, dst, len);
    }
  };
  Out* const out = reinterpret_cast<Out*>(data[0]);
  // Note [Streaming stores]: big outputs bypass the cache. The blocks (and so which elements
  // take the vector body and which the scalar tail) are the same as without streaming.
  if (n * int64_t(sizeof(Out)) >= kStreamMinRunBytes && streaming_output()) {
    if constexpr (direct_out && kBlockVec<N, OutC, C, F>) {
      if (reinterpret_cast<uintptr_t>(out) % EMBER_VEC_BYTES == 0) {
        // Vector functors on an aligned output store their results directly.
        for (int64_t b = 0; b < n; b += kBlock)
          block(b, std::min(kBlock, n - b), out + b, std::true_type{});
        stream_fence();
        return;
      }
    }
    alignas(kStreamAlign) Out stage[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t len = std::min(kBlock, n - b);
      block(b, len, stage, std::false_type{});
      stream_copy(out + b, stage, len);
    }
    stream_fence();
    return;
  }
  for (int64_t b = 0; b < n; b += kBlock)
    block(b, std::min(kBlock, n - b), out + b, std::false_type{});
}

/// The ElementwiseFn for functor template `F` on input type `T` with output `OutSel<T>`.
template <template <class> class F, int N, class T, template <class> class OutSel>
void kernel_fn(char** data, const int64_t* strides, int64_t n, const OpParams& p) {
  F<opmath_t<T>> f(p);
  elementwise_loop<OutSel<T>, T, N>(data, strides, n, f);
}

template <class... Ts>
struct TypeList {};
using IntTypes = TypeList<uint8_t, int8_t, int16_t, int32_t, int64_t>;
using FloatTypes = TypeList<Half, BFloat16, float, double>;
using ComplexTypes = TypeList<complex<float>, complex<double>>;
using BoolType = TypeList<bool>;

/// Registers `F` for (op, T) for every T in the given type lists.
template <template <class> class F, int N, template <class> class OutSel = out_same, class... Lists>
void reg(KernelTable& t, OpId op, Lists... lists) {
  auto one = [&]<class... Ts>(TypeList<Ts...>) {
    (t.set(op, scalar_type_of<Ts>, &kernel_fn<F, N, Ts, OutSel>), ...);
  };
  (one(lists), ...);
}

}  // namespace ember::cpu::EMBER_CPU_CAP
