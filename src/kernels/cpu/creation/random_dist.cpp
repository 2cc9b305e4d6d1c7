// CPU kernels of the distribution samplers (Gamma, Dirichlet, Poisson, binomial) and of the
// implicit-reparameterisation gradients of Gamma and Dirichlet samples.
#include "kernels/stubs/random_dist.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "kernels/cpu/elementwise/gamma_math.h"

namespace ember {

EMBER_DEFINE_KERNEL(standard_gamma_stub);
EMBER_DEFINE_KERNEL(standard_gamma_grad_stub);
EMBER_DEFINE_KERNEL(sample_dirichlet_stub);
EMBER_DEFINE_KERNEL(dirichlet_grad_stub);
EMBER_DEFINE_KERNEL(poisson_stub);
EMBER_DEFINE_KERNEL(binomial_stub);

namespace cpu {
namespace {

using gammafn::digamma_d;
using gammafn::lgamma_d;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;
// Rejection samplers are cheap per element but vary in cost; stay on one thread below this.
constexpr int64_t kGrain = 2048;
// The quadratures cost a few hundred evaluations per element.
constexpr int64_t kGradGrain = 64;

// Note [Per-element random streams]
// A rejection sampler uses a data-dependent number of draws, so the block-per-k-elements map of
// Note [Reproducible random streams] does not apply. An op on n elements reserves n blocks
// (offset .. offset + n - 1) and element i draws from its own stream: the Philox blocks with
// counter (offset + i) in the low 64 bits and 1, 2, 3, ... in the high 64 bits. The other random
// ops use high word 0, so the streams never overlap theirs, and element i's value depends only
// on (seed, offset, i, its parameters), whatever the thread count.
class ElementStream {
 public:
  ElementStream(uint64_t key, uint64_t counter) : key_(key), lo_(counter) {}
  /// Uniform on [0, 1) with 53 random bits.
  double uniform() {
    if (used_ >= 4) {
      Philox4x32::block(key_, lo_, ++hi_, w_);
      used_ = 0;
    }
    uint64_t v = (uint64_t(w_[used_ + 1]) << 32) | w_[used_];
    used_ += 2;
    return double(v >> 11) * 0x1.0p-53;
  }
  /// Uniform on (0, 1]: its log is finite.
  double uniform_pos() { return 1.0 - uniform(); }
  /// Standard normal by Box-Muller (two values per pair of uniforms).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double r = std::sqrt(-2.0 * std::log(uniform_pos())), th = 2 * kPi * uniform();
    spare_ = r * std::sin(th);
    has_spare_ = true;
    return r * std::cos(th);
  }

 private:
  uint64_t key_, lo_, hi_ = 0;
  uint32_t w_[4] = {};
  int used_ = 4;
  bool has_spare_ = false;
  double spare_ = 0;
};

// Runs f(i, stream_i) for the n elements, in parallel; reserves n blocks.
template <class F>
void for_streams(int64_t n, Generator& gen, const F& f) {
  if (n <= 0) return;
  auto [seed, offset] = gen.reserve(uint64_t(n));
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      ElementStream s(seed, offset + uint64_t(i));
      f(i, s);
    }
  });
}

// ---- samplers (double precision) ----

// Gamma(alpha, 1) by Marsaglia & Tsang (2000): for alpha >= 1, d = alpha - 1/3, c = 1/sqrt(9d);
// accept d v with v = (1 + c z)^3 when log u < z^2/2 + d - d v + d log v. For alpha < 1, a
// Gamma(alpha + 1) sample times u^(1/alpha). Returns 0 for alpha <= 0 or NaN (clamped by the
// caller, as PyTorch).
double sample_gamma(double alpha, ElementStream& rs) {
  if (!(alpha > 0)) return 0;
  if (alpha == kInf) return kInf;
  double log_boost = 0;
  if (alpha < 1) {
    log_boost = std::log(rs.uniform_pos()) / alpha;
    alpha += 1;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double z, v;
    do {
      z = rs.normal();
      v = 1 + c * z;
    } while (v <= 0);
    v = v * v * v;
    const double u = rs.uniform_pos(), z2 = z * z;
    if (u < 1 - 0.0331 * z2 * z2 || std::log(u) < 0.5 * z2 + d * (1 - v + std::log(v))) {
      return log_boost == 0 ? d * v : d * v * std::exp(log_boost);
    }
  }
}

// Poisson(lam): inversion (sequential search of the CDF) below 10, else Hörmann's PTRS
// (transformed rejection with squeeze, 1993).
double sample_poisson(double lam, ElementStream& rs) {
  if (lam == 0) return 0;
  if (lam == kInf) return kInf;
  if (lam < 10) {
    for (;;) {
      double p = std::exp(-lam), cdf = p, u = rs.uniform();
      int64_t k = 0;
      while (u > cdf && p > 0) {
        ++k;
        p *= lam / double(k);
        cdf += p;
      }
      if (u <= cdf) return double(k);  // else rounding left u above the CDF's sum: redraw
    }
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = rs.uniform() - 0.5, v = rs.uniform_pos();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - lgamma_d(k + 1)) {
      return k;
    }
  }
}

// Binomial(n, p) for p <= 1/2: inversion when n p < 10, else Hörmann's BTRS (1993).
double binomial_low(double n, double p, ElementStream& rs) {
  const double q = 1 - p;
  if (n * p < 10) {
    const double s = p / q, a = (n + 1) * s, r0 = std::exp(n * std::log1p(-p));
    for (;;) {
      double u = rs.uniform(), r = r0, x = 0;
      while (u > r && x < n) {
        u -= r;
        x += 1;
        r *= a / x - s;
      }
      if (u <= r) return x;  // rounding ran past n: redraw
    }
  }
  const double spq = std::sqrt(n * p * q), b = 1.15 + 2.53 * spq;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5, vr = 0.92 - 4.2 / b;
  const double alpha = (2.83 + 5.1 / b) * spq, lpq = std::log(p / q);
  const double m = std::floor((n + 1) * p), h = lgamma_d(m + 1) + lgamma_d(n - m + 1);
  for (;;) {
    const double u = rs.uniform() - 0.5, v = rs.uniform_pos();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + c);
    if (k < 0 || k > n) continue;
    if (us >= 0.07 && v <= vr) return k;
    if (std::log(v * alpha / (a / (us * us) + b)) <=
        h - lgamma_d(k + 1) - lgamma_d(n - k + 1) + (k - m) * lpq) {
      return k;
    }
  }
}

double sample_binomial(double count, double p, ElementStream& rs) {
  if (std::isnan(count) || std::isnan(p)) return kNaN;
  if (!(count > 0) || p <= 0) return 0;
  const double n = std::floor(count);
  if (p >= 1) return count;  // PyTorch 1.13 gives the count for p >= 1 (no range check)
  if (n == kInf) return kInf;
  if (p <= 0.5) return binomial_low(n, p, rs);
  return n - binomial_low(n, 1 - p, rs);
}

// ---- the reparameterisation gradients ----
//
// Note [Implicit reparameterisation gradients]
// For a sample x with CDF F(x; a) held fixed, dx/da = -(dF/da) / f(x). With f(t)/f(x) the
// density ratio and w(t) = d log f(t) / da (log t - psi(a) for Gamma(a, 1)), dF/da is the
// integral of w f over (0, x), and as E[w] = 0 also minus its integral over (x, end). w changes
// sign once, at t* = exp(E log t); the side of x that does not hold t* has an integrand of one
// sign, so dx/da = (integral over that side of |w(t)| f(t)/f(x) dt) without cancellation. The
// integrals are done by double-exponential quadrature in the offset from x (exact near x), or,
// where the density is singular at the far end (shape < 1), in u = (t/x)^shape, which removes
// the power singularity; small Gamma samples use the power series of the lower incomplete gamma
// function instead (x^n / (a)_(n+1) terms, all of one sign below t*).

// ∫_0^L f(s, L - s) ds by tanh-sinh quadrature: f gets both distances to the ends, so either end
// is resolved to full precision. Halves the step until two levels agree to 1e-7: the error of
// the finer level is then about the square of that (double-exponential convergence).
template <class F>
double tanh_sinh(double L, const F& f) {
  constexpr double kTauMax = 6.5;
  double sum = L * kPi / 4 * f(L / 2, L / 2), prev = 0;
  auto node = [&](double tau) {
    const double q = std::exp(-kPi * std::sinh(tau));
    const double w = L * kPi * std::cosh(tau) * q / ((1 + q) * (1 + q));
    const double d = L * q / (1 + q);  // distance to the nearer end
    if (!(d > 0) || w == 0) return 0.0;
    return w * (f(d, L - d) + f(L - d, d));
  };
  double h = 1;
  for (double tau = h; tau <= kTauMax; tau += h) sum += node(tau);
  double est = h * sum;
  for (int level = 1; level <= 9; ++level) {
    h /= 2;
    for (double tau = h; tau <= kTauMax; tau += 2 * h) sum += node(tau);
    prev = est;
    est = h * sum;
    if (level >= 1 && std::fabs(est - prev) <= 1e-7 * std::fabs(est)) break;
  }
  return est;
}

// ∫_0^∞ f(s) ds by exp-sinh quadrature, s = c exp(π/2 sinh τ); f must decay monotonically once
// tiny (true of the log-concave integrands here).
template <class F>
double exp_sinh(double c, const F& f) {
  auto node = [&](double tau) {
    const double s = c * std::exp(kPi / 2 * std::sinh(tau));
    if (!(s > 0) || s == kInf) return 0.0;
    const double v = f(s);
    return v == 0 ? 0.0 : v * s * kPi / 2 * std::cosh(tau);
  };
  // Adds the nodes start, start + step, ... and -start, -start - step, ... (τ = 0 once) until
  // they vanish.
  auto sweep = [&](double start, double step, double& total) {
    for (int dir = 1; dir >= -1; dir -= 2) {
      double tau = dir > 0 ? start : (start == 0 ? -step : -start);
      for (; std::fabs(tau) <= 9; tau += dir * step) {
        const double v = node(tau);
        total += v;
        if ((v == 0 || std::fabs(v) < 1e-18 * std::fabs(total)) && std::fabs(tau) > 1) break;
      }
    }
  };
  double h = 0.5, sum = 0;
  sweep(0, h, sum);
  double est = h * sum, prev = 0;
  for (int level = 1; level <= 8; ++level) {
    h /= 2;
    sweep(h, 2 * h, sum);
    prev = est;
    est = h * sum;
    if (level >= 1 && std::fabs(est - prev) <= 1e-7 * std::fabs(est)) break;
  }
  return est;
}

// dx/da for x ~ Gamma(a, 1) (Note [Implicit reparameterisation gradients]).
double gamma_grad(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || !(a > 0) || x == kInf) return kNaN;
  if (x <= 0) return 0;
  if (a == kInf) return kNaN;
  const double psi = digamma_d(a), lx = std::log(x);
  if (lx <= psi) {
    if (x < 50) {
      // -x Σ_n x^n / (a)_(n+1) · (log x - ψ(a + n + 1)); every term is >= 0 here.
      double term = 1 / a, psi_n = psi + 1 / a, sum = 0;
      for (int n = 0; n < 100000; ++n) {
        const double t = term * (psi_n - lx);
        sum += t;
        if (t <= 1e-17 * sum && double(n) > x) break;
        term *= x / (a + n + 1);
        psi_n += 1 / (a + n + 1);
      }
      return x * sum;
    }
    // Large a and x: offset s = x - t; f(t)/f(x) = (1 - s/x)^(a-1) e^s.
    return tanh_sinh(x, [&](double s, double t) {
      const double l = s < 0.5 * x ? std::log1p(-s / x) : std::log(t / x);
      const double e = std::exp((a - 1) * l + s);
      return e == 0 ? 0.0 : e * (psi - lx - l);
    });
  }
  // Upper side: t = x + s; f(t)/f(x) = (1 + s/x)^(a-1) e^-s.
  const double slope = 1 - (a - 1) / x;
  double c = 1 / slope;
  if (a > 2) c = std::min(c, x / std::sqrt(a - 1));
  return exp_sinh(c, [&](double s) {
    const double l = std::log1p(s / x);
    const double e = std::exp((a - 1) * l - s);
    return e == 0 ? 0.0 : e * (lx - psi + l);
  });
}

// One side of the Beta integral, measured from its near end: y in [0, xs] is the distance of t
// from that end (xs: x's distance, xo = 1 - xs), p the shape at the near end and q at the far
// end. Returns ∫ g (y/xs)^(p-1) ((1-y)/xo)^(q-1) dy with g(l, r) for l = log(y/xs) and
// r = log((1-y)/xo).
template <class G>
double beta_side(double xs, double xo, double p, double q, const G& g) {
  auto far = [&](double l) { return std::log1p(-xs * std::expm1(l) / xo); };
  if (p >= 1) {
    return tanh_sinh(xs, [&](double s, double y) {
      const double l = s < 0.5 * xs ? std::log1p(-s / xs) : std::log(y / xs);
      const double r = far(l);
      const double e = std::exp((p - 1) * l + (q - 1) * r);
      return e == 0 ? 0.0 : e * g(l, r);
    });
  }
  // u = (y/xs)^p in [0, 1]: dy (y/xs)^(p-1) = xs/p du.
  return xs / p * tanh_sinh(1.0, [&](double u, double v) {
           const double l = (u < 0.5 ? std::log(u) : std::log1p(-v)) / p;
           const double r = far(l);
           const double e = std::exp((q - 1) * r);
           return e == 0 ? 0.0 : e * g(l, r);
         });
}

// torch's _dirichlet_grad(x, alpha = a, total = a + b): dx/da of the Beta(a, b) marginal of a
// Dirichlet sample with b fixed, divided by 1 - x. The other components shrink in proportion,
// so the vjp is this times (g - Σ x g) (the Dirichlet rsample backward).
double beta_grad(double x, double a, double total) {
  if (std::isnan(x) || std::isnan(a) || std::isnan(total)) return kNaN;
  const double b = total - a;
  if (!(x > 0 && x < 1) || !(a > 0) || !(b > 0)) return 0;
  if (a == kInf || b == kInf) return kNaN;
  const double c = digamma_d(a) - digamma_d(total), lx = std::log(x);
  if (lx <= c) {
    // Below t* = exp(c): integrate (c - log t) f(t)/f(x) over (0, x).
    return beta_side(x, 1 - x, a, b, [&](double l, double) { return c - lx - l; }) / (1 - x);
  }
  // Above: (log t - c) over (x, 1), from the end t = 1 (y = 1 - t).
  return beta_side(1 - x, x, b, a, [&](double, double r) { return lx + r - c; }) / (1 - x);
}

// ---- the stubs' CPU kernels ----

template <class T>
double tiny_of() {
  return double(std::numeric_limits<T>::min());
}

void standard_gamma_cpu(Tensor& out, const Tensor& alpha, Generator& gen) {
  const double* a = static_cast<const double*>(alpha.data_ptr());
  EMBER_DISPATCH_FLOATING_TYPES(out.dtype(), "_standard_gamma", [&] {
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    const double tiny = tiny_of<scalar_t>();
    for_streams(out.numel(), gen, [&](int64_t i, ElementStream& rs) {
      // PyTorch clamps to the smallest normal value (NaN and non-positive alpha included).
      const double v = sample_gamma(a[i], rs);
      o[i] = scalar_t(v > tiny ? v : tiny);
    });
  });
}

void standard_gamma_grad_cpu(Tensor& out, const Tensor& alpha, const Tensor& sample) {
  const double* a = static_cast<const double*>(alpha.data_ptr());
  const double* x = static_cast<const double*>(sample.data_ptr());
  EMBER_DISPATCH_FLOATING_TYPES(out.dtype(), "_standard_gamma_grad", [&] {
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    parallel_for(0, out.numel(), kGradGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = scalar_t(gamma_grad(a[i], x[i]));
    });
  });
}

void sample_dirichlet_cpu(Tensor& out, const Tensor& alpha, int64_t k, Generator& gen) {
  const double* a = static_cast<const double*>(alpha.data_ptr());
  const int64_t n = alpha.numel();
  std::vector<double> g(static_cast<size_t>(n));
  // Gammas in double so that small concentrations do not underflow (as PyTorch).
  const double dtiny = std::numeric_limits<double>::min();
  for_streams(n, gen, [&](int64_t i, ElementStream& rs) {
    const double v = sample_gamma(a[i], rs);
    g[size_t(i)] = v > dtiny ? v : dtiny;
  });
  EMBER_DISPATCH_FLOATING_TYPES(out.dtype(), "_sample_dirichlet", [&] {
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    // Clamped to [smallest normal, largest value below 1] of the dtype, as PyTorch.
    const double tiny = tiny_of<scalar_t>();
    const double below_one = std::is_same_v<scalar_t, double> ? std::nextafter(1.0, 0.0)
                                                              : double(std::nextafter(1.0f, 0.0f));
    const int64_t rows = k > 0 ? n / k : 0;
    parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(k, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const double* gr = g.data() + r * k;
                     double s = 0;
                     for (int64_t j = 0; j < k; ++j) s += gr[j];
                     for (int64_t j = 0; j < k; ++j) {
                       const double v = std::min(gr[j] / s, below_one);
                       o[r * k + j] = scalar_t(v > tiny ? v : tiny);
                     }
                   }
                 });
  });
}

void dirichlet_grad_cpu(Tensor& out, const Tensor& x, const Tensor& alpha, const Tensor& total) {
  const double* xp = static_cast<const double*>(x.data_ptr());
  const double* ap = static_cast<const double*>(alpha.data_ptr());
  const double* tp = static_cast<const double*>(total.data_ptr());
  EMBER_DISPATCH_FLOATING_TYPES(out.dtype(), "_dirichlet_grad", [&] {
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    parallel_for(0, out.numel(), kGradGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = scalar_t(beta_grad(xp[i], ap[i], tp[i]));
    });
  });
}

void poisson_cpu(Tensor& out, const Tensor& rates, Generator& gen) {
  const double* r = static_cast<const double*>(rates.data_ptr());
  const int64_t n = rates.numel();
  // Every rate is checked before any draw, so a bad one leaves the generator untouched.
  for (int64_t i = 0; i < n; ++i)
    EMBER_CHECK(r[i] >= 0, "[poisson] invalid Poisson rate, expected rate to be non-negative, got ",
                r[i]);
  EMBER_DISPATCH_FLOATING_TYPES(out.dtype(), "poisson", [&] {
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    for_streams(n, gen,
                [&](int64_t i, ElementStream& rs) { o[i] = scalar_t(sample_poisson(r[i], rs)); });
  });
}

void binomial_cpu(Tensor& out, const Tensor& count, const Tensor& prob, Generator& gen) {
  const double* c = static_cast<const double*>(count.data_ptr());
  const double* p = static_cast<const double*>(prob.data_ptr());
  EMBER_DISPATCH_FLOATING_TYPES(out.dtype(), "binomial", [&] {
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    for_streams(out.numel(), gen, [&](int64_t i, ElementStream& rs) {
      o[i] = scalar_t(sample_binomial(c[i], p[i], rs));
    });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(standard_gamma_stub, kCPU, cpu::standard_gamma_cpu);
EMBER_REGISTER_KERNEL(standard_gamma_grad_stub, kCPU, cpu::standard_gamma_grad_cpu);
EMBER_REGISTER_KERNEL(sample_dirichlet_stub, kCPU, cpu::sample_dirichlet_cpu);
EMBER_REGISTER_KERNEL(dirichlet_grad_stub, kCPU, cpu::dirichlet_grad_cpu);
EMBER_REGISTER_KERNEL(poisson_stub, kCPU, cpu::poisson_cpu);
EMBER_REGISTER_KERNEL(binomial_stub, kCPU, cpu::binomial_cpu);

}  // namespace ember
