// The var / std (and var_mean / std_mean) kernel (kernels/stubs/reduce.h) on the reduction
// engine (Note [Reductions] in kernels/cpu/reduce.cpp).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "ember/dispatch_type.h"
#include "kernels/cpu/reduce/driver.h"
#include "kernels/stubs/reduce.h"

namespace ember {

EMBER_DEFINE_KERNEL(std_var_stub);

namespace cpu {
namespace {

using namespace reduce_impl;

// Welford's running (count, mean, M2) in double; partials merge with Chan's formula, so the
// fixed-chunk split of the engine gives the same result on any number of threads.
template <class T>
struct VarOp {
  using M = std::conditional_t<is_complex_v<T>, complex<double>, double>;
  struct acc_t {
    M mean;
    double m2;
    double n;
  };
  using out_t = typename real_of<T>::type;
  static constexpr bool kVertical = true;
  double correction = 1;
  bool take_sqrt = false;
  T* means = nullptr;  // var_mean / std_mean: the mean output

  acc_t init() const { return {M(0), 0.0, 0.0}; }
  static double sq(M d) {
    if constexpr (is_complex_v<T>)
      return d.real() * d.real() + d.imag() * d.imag();
    else
      return d * d;
  }
  acc_t step(acc_t a, T x0) const {
    M x;
    if constexpr (is_complex_v<T>)
      x = M(x0.real(), x0.imag());
    else
      x = M(double(opmath_t<T>(x0)));
    a.n += 1;
    const M delta = x - a.mean;
    a.mean += delta / a.n;
    if constexpr (is_complex_v<T>)
      a.m2 += (std::conj(delta) * (x - a.mean)).real();
    else
      a.m2 += delta * (x - a.mean);
    return a;
  }
  acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n;
    const M delta = b.mean - a.mean;
    return {a.mean + delta * (b.n / n), a.m2 + b.m2 + sq(delta) * (a.n * b.n / n), n};
  }
  acc_t reduce(const T* p, int64_t n, int64_t s, int64_t) const {
    acc_t a = init();
    for (int64_t i = 0; i < n; ++i) a = step(a, p[i * s]);
    return a;
  }
  out_t project(acc_t a) const {
    const double div = std::max(0.0, a.n - correction);
    const double v = a.m2 / div;
    return out_t(take_sqrt ? std::sqrt(v) : v);
  }
  void project_extra(int64_t o, acc_t a) const {
    if (!means) return;
    const M m = a.n == 0 ? M(std::numeric_limits<double>::quiet_NaN()) : a.mean;
    if constexpr (is_complex_v<T>)
      means[o] = T(typename T::value_type(m.real()), typename T::value_type(m.imag()));
    else
      means[o] = T(opmath_t<T>(m));
  }
  void vertical(out_t* out, const T* base, int64_t rows, int64_t rs, int64_t w, int64_t oi) const {
    vertical_simple(*this, out, base, rows, rs, w, oi);
  }
};

void std_var_cpu(const Tensor& self, uint64_t mask, Tensor& out, Tensor& mean, double correction,
                 bool take_sqrt) {
  EMBER_DISPATCH_FLOATING_AND_COMPLEX_TYPES(self.dtype(), take_sqrt ? "std" : "var", [&] {
    VarOp<scalar_t> f;
    f.correction = correction;
    f.take_sqrt = take_sqrt;
    if (mean.defined()) f.means = mean.data_ptr<scalar_t>();
    run<scalar_t>(self, mask, out, f);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(std_var_stub, kCPU, cpu::std_var_cpu);

}  // namespace ember
