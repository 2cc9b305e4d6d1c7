#pragma once
// Scalar gamma-family functions for the elementwise kernels: lgamma, digamma, the Hurwitz zeta
// function and polygamma. All evaluate in double; float and bfloat16 kernels round the result.
// Poles and domain edges follow PyTorch 1.13's CPU kernels (digamma(0) = -inf with the sign of
// -0.0, digamma of a negative integer is NaN, lgamma of a non-positive integer is +inf).

#include <cmath>
#include <limits>

namespace ember::cpu::gammafn {

/// log|Γ(x)|, thread-safe (lgamma_r does not write the global signgam).
inline double lgamma_d(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

/// log|Γ(x)| in float, thread-safe.
inline float lgamma_f(float x) {
  int sign = 0;
  return ::lgammaf_r(x, &sign);
}

/// ψ(x) = Γ'(x)/Γ(x): reflection below 0, the recurrence ψ(x) = ψ(x+1) - 1/x up to x >= 10,
/// then the asymptotic series log x - 1/(2x) - Σ B_2k / (2k x^2k).
inline double digamma_d(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (std::isnan(x)) return x;
  if (x == -std::numeric_limits<double>::infinity())
    return std::numeric_limits<double>::quiet_NaN();
  double result = 0;
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<double>::quiet_NaN();
    // ψ(x) = ψ(1 - x) - π / tan(πx). tan has period π, so x minus its nearest integer (exact,
    // in [-1/2, 1/2]) keeps the argument small without losing a tiny x to rounding.
    double reduced = x - std::nearbyint(x);
    result = -kPi / std::tan(kPi * reduced);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == std::numeric_limits<double>::infinity()) return result + x;
  // B_2k / 2k for k = 1..7.
  constexpr double kCoef[] = {1.0 / 12,  -1.0 / 120,     1.0 / 252, -1.0 / 240,
                              1.0 / 132, -691.0 / 32760, 1.0 / 12};
  double z = 1 / (x * x), poly = 0;
  for (int k = 6; k >= 0; --k) poly = poly * z + kCoef[k];
  return result + std::log(x) - 0.5 / x - poly * z;
}

/// Hurwitz zeta ζ(s, q) = Σ_{k>=0} (q + k)^-s for s > 1: direct terms until q + k > 9 (at least
/// ten of them), then the Euler-Maclaurin tail with the Bernoulli numbers B_2..B_24.
inline double zeta_d(double s, double q) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kEps = 1.11e-16;
  if (s == 1) return kInf;
  if (s < 1 || std::isnan(q) || q == -kInf) return kNaN;
  if (q == kInf) return 0;
  if (q > 1e15) {
    // The leading Euler-Maclaurin terms (relative error below (s/q)^2), by pow rather than
    // exp((1 - s) log q), which loses digits to the large exponent.
    return std::pow(q, 1 - s) / (s - 1) + 0.5 * std::pow(q, -s);
  }
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (s != std::floor(s)) return kNaN;  // (q + k)^-s is complex for negative q + k
  }
  // (2j)! / B_2j for j = 1..12.
  constexpr double kFactOverBernoulli[] = {12.0,
                                           -720.0,
                                           30240.0,
                                           -1209600.0,
                                           47900160.0,
                                           -1.8924375803183791606e9,
                                           7.47242496e10,
                                           -2.950130727918164224e12,
                                           1.1646782814350067249e14,
                                           -4.5979787224074726105e15,
                                           1.8152105401943546773e17,
                                           -7.1661652561756670113e18};
  double sum = std::pow(q, -s), a = q, term = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    term = std::pow(a, -s);
    sum += term;
    if (std::fabs(term / sum) < kEps) return sum;
  }
  // sum now holds Σ_{k<=i} (q+k)^-s with a = q + i; add ∫_a^∞ x^-s dx - a^-s / 2 and the
  // Euler-Maclaurin corrections Σ_j B_2j/(2j)! · s(s+1)...(s+2j-2) · a^(-s-2j+1).
  double w = a;
  sum += term * w / (s - 1) - 0.5 * term;
  double rising = 1, k = 0;
  for (double c : kFactOverBernoulli) {
    rising *= s + k;
    term /= w;
    double t = rising * term / c;
    sum += t;
    if (std::fabs(t / sum) < kEps) break;
    k += 1;
    rising *= s + k;
    term /= w;
    k += 1;
  }
  return sum;
}

/// ψ^(n)(x), the n-th derivative of digamma: (-1)^(n+1) n! ζ(n+1, x) for n >= 1.
inline double polygamma_d(int64_t n, double x) {
  if (n == 0) return digamma_d(x);
  double sign = (n % 2) ? 1.0 : -1.0;
  return sign * std::exp(lgamma_d(double(n) + 1)) * zeta_d(double(n) + 1, x);
}

/// log Γ_p(x) = p(p-1)/4 · log π + Σ_{i<p} log Γ(x - i/2).
inline double mvlgamma_d(double x, int64_t p) {
  constexpr double kLogPi = 1.14472988584940017414;
  double r = double(p) * double(p - 1) / 4 * kLogPi;
  for (int64_t i = 0; i < p; ++i) r += lgamma_d(x - 0.5 * double(i));
  return r;
}

}  // namespace ember::cpu::gammafn
