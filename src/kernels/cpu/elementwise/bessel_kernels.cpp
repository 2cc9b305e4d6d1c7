// The bessel family's elementwise kernels (src/ops/elementwise/special_grad.h lists its ops).
// The math is bessel_math.h (Note [Bessel family approximations]). Functions with a float form
// (i0e, erfcx, ndtr, log_ndtr, ndtri) run it for float and bfloat16, vectorised; the others
// evaluate in double and round. dtypes are PyTorch 1.13's CPU ones: bfloat16 only for i0, i0e
// and ndtr, no float16.
#include "kernels/cpu/elementwise/bessel_math.h"
#include "kernels/cpu/elementwise/loops.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

namespace b = bessel;

// A double-precision function applied to any compute type (rounded on the way back).
#define EMBER_BESSEL_DOUBLE_FUNCTOR(Name, fn)               \
  template <class C>                                        \
  struct Name {                                             \
    explicit Name(const OpParams&) {}                       \
    C operator()(C x) const { return C(b::fn(double(x))); } \
  };
EMBER_BESSEL_DOUBLE_FUNCTOR(I0, i0)
EMBER_BESSEL_DOUBLE_FUNCTOR(I1, i1)
EMBER_BESSEL_DOUBLE_FUNCTOR(I1e, i1e)
EMBER_BESSEL_DOUBLE_FUNCTOR(J0, j0)
EMBER_BESSEL_DOUBLE_FUNCTOR(J1, j1)
EMBER_BESSEL_DOUBLE_FUNCTOR(Y0, y0)
EMBER_BESSEL_DOUBLE_FUNCTOR(Y1, y1)
EMBER_BESSEL_DOUBLE_FUNCTOR(K0, k0)
EMBER_BESSEL_DOUBLE_FUNCTOR(K1, k1)
EMBER_BESSEL_DOUBLE_FUNCTOR(K0e, k0e)
EMBER_BESSEL_DOUBLE_FUNCTOR(K1e, k1e)
EMBER_BESSEL_DOUBLE_FUNCTOR(SphericalJ0, spherical_j0)
EMBER_BESSEL_DOUBLE_FUNCTOR(AiryAi, airy_ai)
#undef EMBER_BESSEL_DOUBLE_FUNCTOR

// Double in double, float through its float form, scalar and vector alike.
#define EMBER_BESSEL_FLOAT_FUNCTOR(Name, fn)                                              \
  template <class C>                                                                      \
  struct Name {                                                                           \
    explicit Name(const OpParams&) {}                                                     \
    C operator()(C x) const {                                                             \
      if constexpr (std::is_same_v<C, float>)                                             \
        return b::fn##_f(x);                                                              \
      else                                                                                \
        return C(b::fn(double(x)));                                                       \
    }                                                                                     \
    Vec<C> vec(Vec<C> x) const requires std::is_same_v<C, float> { return b::fn##_f(x); } \
  };
EMBER_BESSEL_FLOAT_FUNCTOR(I0e, i0e)
EMBER_BESSEL_FLOAT_FUNCTOR(Erfcx, erfcx)
EMBER_BESSEL_FLOAT_FUNCTOR(Ndtr, ndtr)
EMBER_BESSEL_FLOAT_FUNCTOR(LogNdtr, log_ndtr)
EMBER_BESSEL_FLOAT_FUNCTOR(Ndtri, ndtri)
#undef EMBER_BESSEL_FLOAT_FUNCTOR

using BF16Float = TypeList<BFloat16, float, double>;
using FloatOnly = TypeList<float, double>;

}  // namespace

void register_bessel_kernels(KernelTable& t) {
  using O = OpId;
  reg<I0, 1>(t, O::i0, BF16Float{});
  reg<I0e, 1>(t, O::special_i0e, BF16Float{});
  reg<Ndtr, 1>(t, O::special_ndtr, BF16Float{});
  reg<I1, 1>(t, O::special_i1, FloatOnly{});
  reg<I1e, 1>(t, O::special_i1e, FloatOnly{});
  reg<Ndtri, 1>(t, O::special_ndtri, FloatOnly{});
  reg<LogNdtr, 1>(t, O::special_log_ndtr, FloatOnly{});
  reg<Erfcx, 1>(t, O::special_erfcx, FloatOnly{});
  reg<J0, 1>(t, O::special_bessel_j0, FloatOnly{});
  reg<J1, 1>(t, O::special_bessel_j1, FloatOnly{});
  reg<Y0, 1>(t, O::special_bessel_y0, FloatOnly{});
  reg<Y1, 1>(t, O::special_bessel_y1, FloatOnly{});
  reg<I0, 1>(t, O::special_modified_bessel_i0, FloatOnly{});
  reg<I1, 1>(t, O::special_modified_bessel_i1, FloatOnly{});
  reg<K0, 1>(t, O::special_modified_bessel_k0, FloatOnly{});
  reg<K1, 1>(t, O::special_modified_bessel_k1, FloatOnly{});
  reg<K0e, 1>(t, O::special_scaled_modified_bessel_k0, FloatOnly{});
  reg<K1e, 1>(t, O::special_scaled_modified_bessel_k1, FloatOnly{});
  reg<SphericalJ0, 1>(t, O::special_spherical_bessel_j0, FloatOnly{});
  reg<AiryAi, 1>(t, O::special_airy_ai, FloatOnly{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
