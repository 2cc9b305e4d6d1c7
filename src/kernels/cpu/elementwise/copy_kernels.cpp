// Casts between all dtypes, fill, where and physical conjugation.
#include "core/complex_half.h"
#include "kernels/cpu/elementwise/loops.h"

namespace ember::kernels {
// complex32 is storage only (Note [complex32]): casts read and write it through the shared
// conversion rules; it is its own compute type (nothing computes on it here).
template <>
struct ElementTraits<ComplexHalf> {
  static constexpr bool kComplex = true;
  static constexpr bool kReduced = false;
};
}  // namespace ember::kernels

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

template <class C>
struct Identity {
  explicit Identity(const OpParams&) {}
  C operator()(C x) const { return x; }
};

template <class C>
struct Fill {
  C v;
  explicit Fill(const OpParams& p) : v(p.s[0].to<C>()) {}
  C operator()() const { return v; }
};

template <class C>
struct ConjPhysical {
  explicit ConjPhysical(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, complex<float>> || std::is_same_v<C, complex<double>>)
      return std::conj(x);
    else
      return x;
  }
};

// A complex32 fill: the value rounded once to two binary16 parts.
template <class C>
struct FillComplexHalf {
  C v;
  explicit FillComplexHalf(const OpParams& p) : v(p.s[0].toComplexDouble()) {}
  C operator()() const { return v; }
};

template <class Src, class Dst>
void cast_fn(char** data, const int64_t* s, int64_t n, const OpParams& p) {
  // float32 <-> bfloat16/float16 on dense runs: straight through the vector conversion, no
  // staging buffer (Note [Vector 16-bit float conversion]).
  if constexpr (kVectorConvert<Dst, Src>) {
    if (s[0] == int64_t(sizeof(Dst)) && s[1] == int64_t(sizeof(Src))) {
      convert_contiguous(reinterpret_cast<const Src*>(data[1]), reinterpret_cast<Dst*>(data[0]), n);
      return;
    }
  }
  Identity<opmath_t<Src>> f(p);
  elementwise_loop<Dst, Src, 1>(data, s, n, f);
}

// where(cond, a, b): data = {out, cond(bool), a, b}; a and b have the output's dtype.
template <class T>
void where_fn(char** data, const int64_t* s, int64_t n, const OpParams&) {
  char *o = data[0], *c = data[1], *a = data[2], *b = data[3];
  if (s[0] == int64_t(sizeof(T)) && s[1] == 1 && s[2] == int64_t(sizeof(T)) &&
      s[3] == int64_t(sizeof(T))) {
    T* __restrict out = reinterpret_cast<T*>(o);
    const bool* __restrict cond = reinterpret_cast<const bool*>(c);
    const T* __restrict x = reinterpret_cast<const T*>(a);
    const T* __restrict y = reinterpret_cast<const T*>(b);
    for (int64_t i = 0; i < n; ++i) out[i] = cond[i] ? x[i] : y[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<T*>(o) = *reinterpret_cast<const bool*>(c) ? *reinterpret_cast<const T*>(a)
                                                                 : *reinterpret_cast<const T*>(b);
    o += s[0];
    c += s[1];
    a += s[2];
    b += s[3];
  }
}

using AllTypes = TypeList<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, Half, BFloat16, float,
                          double, ComplexHalf, complex<float>, complex<double>>;

template <class Src, class... Dsts>
void reg_casts_from(KernelTable& t, TypeList<Dsts...>) {
  (t.set_cast(scalar_type_of<Src>, scalar_type_of<Dsts>, &cast_fn<Src, Dsts>), ...);
}

}  // namespace

void register_copy_kernels(KernelTable& t) {
  [&]<class... Ts>(TypeList<Ts...>) {
    (reg_casts_from<Ts>(t, AllTypes{}), ...);
    (t.set(OpId::where, scalar_type_of<Ts>, &where_fn<Ts>), ...);
  }(AllTypes{});
  reg<Fill, 0>(t, OpId::fill, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
  reg<FillComplexHalf, 0>(t, OpId::fill, TypeList<ComplexHalf>{});
  reg<ConjPhysical, 1>(t, OpId::conj_physical, BoolType{}, IntTypes{}, FloatTypes{},
                       ComplexTypes{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
