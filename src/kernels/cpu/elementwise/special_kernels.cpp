// The special family's elementwise kernels (src/ops/elementwise/special_grad.h lists its ops):
// sinc, deg2rad, rad2deg, logaddexp(2), heaviside, gcd, lcm, the incomplete gamma ratios, entr,
// xlog1py, zeta and the orthogonal polynomials. Dtypes and special values follow PyTorch 1.13's
// CPU kernels. The transcendental ones evaluate in double and round (more accurate than
// PyTorch's float arithmetic for float32); the polynomials run in the kernel's type as PyTorch's
// recurrences do, so overflow and NaN appear at the same degrees.
#include <cstdlib>
#include <numeric>

#include "kernels/cpu/elementwise/loops.h"
#include "kernels/cpu/elementwise/math_functors.h"
#include "kernels/cpu/elementwise/special_math.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

namespace sf = specialfn;

// sin(πx) / (πx), 1 at 0. Real types in double; complex in its own precision.
template <class C>
struct Sinc {
  explicit Sinc(const OpParams&) {}
  C operator()(C x) const {
    if constexpr (math::kIsComplex<C>) {
      using V = typename C::value_type;
      if (x == C(0)) return C(1);
      C px = x * V(sf::kPi);
      return std::sin(px) / px;
    } else {
      double d = double(x);
      if (d == 0) return C(1);
      double px = sf::kPi * d;
      return C(std::sin(px) / px);
    }
  }
};

// x * (π / 180) and x * (180 / π) with the constant rounded to the compute type, as PyTorch's
// mul by a wrapped scalar.
template <class C>
struct Deg2rad {
  static constexpr C kScale = C(0.017453292519943295769);
  explicit Deg2rad(const OpParams&) {}
  C operator()(C x) const { return x * kScale; }
  Vec<C> vec(Vec<C> x) const { return x * kScale; }
};
template <class C>
struct Rad2deg {
  static constexpr C kScale = C(57.295779513082320877);
  explicit Rad2deg(const OpParams&) {}
  C operator()(C x) const { return x * kScale; }
  Vec<C> vec(Vec<C> x) const { return x * kScale; }
};

// log(e^a + e^b) = max + log1p(e^-|a-b|), in double; equal infinities return themselves
// (inf - inf would be NaN). PyTorch's std::max keeps a when b is NaN; the difference then
// carries the NaN.
template <class C>
struct Logaddexp {
  explicit Logaddexp(const OpParams&) {}
  C operator()(C a, C b) const {
    double x = double(a), y = double(b);
    if (std::isinf(x) && x == y) return a;
    double m = x < y ? y : x;
    return C(m + std::log1p(std::exp(-std::abs(x - y))));
  }
};
template <class C>
struct Logaddexp2 {
  explicit Logaddexp2(const OpParams&) {}
  C operator()(C a, C b) const {
    double x = double(a), y = double(b);
    if (std::isinf(x) && x == y) return a;
    double m = x < y ? y : x;
    return C(m + std::log1p(std::exp2(-std::abs(x - y))) * 1.4426950408889634074);
  }
};

// values where x == 0, else x > 0 (NaN gives 0).
template <class C>
struct Heaviside {
  explicit Heaviside(const OpParams&) {}
  C operator()(C x, C values) const { return x == C(0) ? values : C(x > C(0)); }
};

// Euclid on absolute values; gcd(0, 0) = 0. The absolute value is taken in the type (as
// PyTorch: the most negative value stays negative).
template <class C>
C gcd_of(C a, C b) {
  C x, y;
  if constexpr (std::is_unsigned_v<C>) {
    x = a, y = b;
  } else {
    x = C(a < 0 ? C(-a) : a), y = C(b < 0 ? C(-b) : b);
  }
  while (x != 0) {
    C c = x;
    x = C(y % x);
    y = c;
  }
  return y;
}
template <class C>
struct Gcd {
  explicit Gcd(const OpParams&) {}
  C operator()(C a, C b) const { return gcd_of(a, b); }
};
template <class C>
struct Lcm {
  explicit Lcm(const OpParams&) {}
  C operator()(C a, C b) const {
    // |a / g * b| in the promoted integer type, then narrowed (an overflowing int8 lcm wraps
    // as PyTorch's and NumPy's).
    C g = gcd_of(a, b);
    if (g == 0) return C(0);
    auto r = a / g * b;
    if constexpr (std::is_unsigned_v<decltype(r)>)
      return C(r);
    else
      return C(r < 0 ? -r : r);
  }
};

template <class C>
struct Igamma {
  explicit Igamma(const OpParams&) {}
  C operator()(C a, C x) const { return C(sf::igamma_d(double(a), double(x))); }
};
template <class C>
struct Igammac {
  explicit Igammac(const OpParams&) {}
  C operator()(C a, C x) const { return C(sf::igammac_d(double(a), double(x))); }
};

// -x log x: 0 at 0, -inf below 0, NaN kept.
template <class C>
struct Entr {
  explicit Entr(const OpParams&) {}
  C operator()(C x) const {
    double d = double(x);
    if (std::isnan(d)) return x;
    if (d > 0) return C(-d * std::log(d));
    if (d == 0) return C(0);
    return C(-std::numeric_limits<double>::infinity());
  }
};

// x log1p(y): NaN when y is NaN, else 0 when x == 0.
template <class C>
struct Xlog1py {
  explicit Xlog1py(const OpParams&) {}
  C operator()(C x, C y) const {
    double dx = double(x), dy = double(y);
    if (std::isnan(dy)) return C(std::numeric_limits<double>::quiet_NaN());
    if (dx == 0) return C(0);
    return C(dx * std::log1p(dy));
  }
};

// Hurwitz ζ(x, q) (gamma_math.h). q = -inf counts as a non-positive integer (a pole: inf, as
// PyTorch and SciPy); q = +inf gives the limit 0, as SciPy (PyTorch 1.13: NaN).
template <class C>
struct Zeta {
  explicit Zeta(const OpParams&) {}
  C operator()(C x, C q) const {
    double dx = double(x), dq = double(q);
    if (dq == -std::numeric_limits<double>::infinity() && !(dx < 1))
      return C(std::numeric_limits<double>::infinity());
    return C(gammafn::zeta_d(dx, dq));
  }
};

#define EMBER_POLY_FUNCTOR(Name, fn)                         \
  template <class C>                                         \
  struct Name {                                              \
    explicit Name(const OpParams&) {}                        \
    C operator()(C x, C n) const { return sf::fn<C>(x, n); } \
  };
EMBER_POLY_FUNCTOR(ChebyshevT, chebyshev_t)
EMBER_POLY_FUNCTOR(ChebyshevU, chebyshev_u)
EMBER_POLY_FUNCTOR(ChebyshevV, chebyshev_v)
EMBER_POLY_FUNCTOR(ChebyshevW, chebyshev_w)
EMBER_POLY_FUNCTOR(ShiftedChebyshevT, shifted_chebyshev_t)
EMBER_POLY_FUNCTOR(ShiftedChebyshevU, shifted_chebyshev_u)
EMBER_POLY_FUNCTOR(ShiftedChebyshevV, shifted_chebyshev_v)
EMBER_POLY_FUNCTOR(ShiftedChebyshevW, shifted_chebyshev_w)
EMBER_POLY_FUNCTOR(HermiteH, hermite_h)
EMBER_POLY_FUNCTOR(HermiteHe, hermite_he)
EMBER_POLY_FUNCTOR(LaguerreL, laguerre_l)
EMBER_POLY_FUNCTOR(LegendreP, legendre_p)
#undef EMBER_POLY_FUNCTOR

// PyTorch 1.13's CPU dtype sets of these ops.
using BF16Float = TypeList<BFloat16, float, double>;
using FloatOnly = TypeList<float, double>;

}  // namespace

void register_special_kernels(KernelTable& t) {
  using O = OpId;
  reg<Sinc, 1>(t, O::sinc, BF16Float{}, ComplexTypes{});
  reg<Deg2rad, 1>(t, O::deg2rad, FloatTypes{});
  reg<Rad2deg, 1>(t, O::rad2deg, FloatTypes{});
  reg<Logaddexp, 2>(t, O::logaddexp, BF16Float{});
  reg<Logaddexp2, 2>(t, O::logaddexp2, BF16Float{});
  reg<Heaviside, 2>(t, O::heaviside, BoolType{}, IntTypes{}, FloatTypes{});
  reg<Gcd, 2>(t, O::gcd, IntTypes{});
  reg<Lcm, 2>(t, O::lcm, IntTypes{});
  reg<Igamma, 2>(t, O::igamma, FloatTypes{});
  reg<Igammac, 2>(t, O::igammac, FloatTypes{});
  reg<Entr, 1>(t, O::special_entr, BF16Float{});
  reg<Xlog1py, 2>(t, O::special_xlog1py, FloatTypes{});
  reg<Zeta, 2>(t, O::special_zeta, FloatOnly{});
  reg<ChebyshevT, 2>(t, O::special_chebyshev_polynomial_t, FloatOnly{});
  reg<ChebyshevU, 2>(t, O::special_chebyshev_polynomial_u, FloatOnly{});
  reg<ChebyshevV, 2>(t, O::special_chebyshev_polynomial_v, FloatOnly{});
  reg<ChebyshevW, 2>(t, O::special_chebyshev_polynomial_w, FloatOnly{});
  reg<ShiftedChebyshevT, 2>(t, O::special_shifted_chebyshev_polynomial_t, FloatOnly{});
  reg<ShiftedChebyshevU, 2>(t, O::special_shifted_chebyshev_polynomial_u, FloatOnly{});
  reg<ShiftedChebyshevV, 2>(t, O::special_shifted_chebyshev_polynomial_v, FloatOnly{});
  reg<ShiftedChebyshevW, 2>(t, O::special_shifted_chebyshev_polynomial_w, FloatOnly{});
  reg<HermiteH, 2>(t, O::special_hermite_polynomial_h, FloatOnly{});
  reg<HermiteHe, 2>(t, O::special_hermite_polynomial_he, FloatOnly{});
  reg<LaguerreL, 2>(t, O::special_laguerre_polynomial_l, FloatOnly{});
  reg<LegendreP, 2>(t, O::special_legendre_polynomial_p, FloatOnly{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
