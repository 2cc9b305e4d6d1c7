// The CPU kernels of the value-producing factories: constant fills, ranges and eye, with
// PyTorch 1.13's arithmetic (accumulate types, the halfway split of linspace and logspace).
#include "kernels/stubs/factory.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include "core/scalar_traits.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"

namespace ember {

EMBER_DEFINE_KERNEL(zeros_stub);
EMBER_DEFINE_KERNEL(store_scalar_stub);
EMBER_DEFINE_KERNEL(arange_stub);
EMBER_DEFINE_KERNEL(linspace_stub);
EMBER_DEFINE_KERNEL(logspace_stub);
EMBER_DEFINE_KERNEL(eye_stub);

namespace cpu {
namespace {

template <class T>
constexpr bool is_reduced_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// All-zero bytes are zero in every dtype, so a fresh tensor needs only a memset.
void zeros_cpu(Tensor& out) {
  if (out.nbytes()) std::memset(out.data_ptr(), 0, out.nbytes());
}

void store_scalar_cpu(Tensor& out, const Scalar& value, const char* op) {
  EMBER_DISPATCH_ALL_TYPES(out.dtype(), op,
                           [&] { *static_cast<scalar_t*>(out.data_ptr()) = value.to<scalar_t>(); });
}

void arange_cpu(Tensor& out, const Scalar& start, const Scalar& step) {
  const int64_t n = out.numel();
  EMBER_DISPATCH_REAL_TYPES(out.dtype(), "arange", [&] {
    // PyTorch's accumulate type: int64 for integers, float for half types, double otherwise.
    using acc_t = std::conditional_t<std::is_integral_v<scalar_t>, int64_t,
                                     std::conditional_t<is_reduced_v<scalar_t>, float, double>>;
    acc_t xstart = start.to<acc_t>(), xstep = step.to<acc_t>();
    auto* p = static_cast<scalar_t*>(out.data_ptr());
    // Each element is start + step * i in the accumulate type (PyTorch's scalar path).
    for (int64_t i = 0; i < n; ++i) p[i] = scalar_t(xstart + xstep * acc_t(i));
  });
}

template <class T>
void linspace_fill(T* p, const Scalar& s, const Scalar& e, int64_t steps) {
  int64_t halfway = steps / 2;
  if constexpr (std::is_integral_v<T>) {
    // Integers step in double (the range may not fit T), then truncate, as PyTorch.
    T start = s.to<T>(), end = e.to<T>();
    double step = (double(end) - double(start)) / double(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = i < halfway ? T(start + step * double(i)) : T(end - step * double(steps - i - 1));
  } else if constexpr (is_reduced_v<T>) {
    // Half arithmetic rounds after every operation (c10::Half semantics).
    auto r = [](float x) { return float(T(x)); };
    float start = r(s.to<float>()), end = r(e.to<float>());
    float step = r(r(end - start) / r(float(steps - 1)));
    for (int64_t i = 0; i < steps; ++i)
      p[i] = i < halfway ? T(start + r(step * r(float(i))))
                         : T(end - r(step * r(float(steps - i - 1))));
  } else {
    using R = typename real_of<T>::type;
    T start = s.to<T>(), end = e.to<T>();
    T step = (end - start) / R(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = i < halfway ? start + step * R(i) : end - step * R(steps - i - 1);
  }
}

void linspace_cpu(Tensor& out, const Scalar& start, const Scalar& end) {
  const int64_t steps = out.numel();
  EMBER_DISPATCH_ALL_TYPES(out.dtype(), "linspace", [&] {
    auto* p = static_cast<scalar_t*>(out.data_ptr());
    if constexpr (!std::is_same_v<scalar_t, bool>) {
      if (steps == 1)
        p[0] = start.to<scalar_t>();
      else
        linspace_fill(p, start, end, steps);
    }
  });
}

template <class T>
void logspace_fill(T* p, const Scalar& start, const Scalar& end, int64_t steps, double base) {
  int64_t halfway = steps / 2;
  if constexpr (is_complex_v<T>) {
    complex<double> s = start.toComplexDouble(), e = end.toComplexDouble(), b(base);
    if (steps == 1) {
      p[0] = T(std::pow(b, s));
      return;
    }
    complex<double> step = (e - s) / double(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = T(std::pow(b, i < halfway ? s + step * double(i) : e - step * double(steps - i - 1)));
  } else if constexpr (std::is_integral_v<T>) {
    if (steps == 1) {
      p[0] = T(std::pow(base, start.toDouble()));
      return;
    }
    // Integers: exponents and base in float, as PyTorch (avoids promotion to double).
    float fbase = float(base);
    T s = start.to<T>(), e = end.to<T>();
    float step = float(e - s) / float(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = T(i < halfway ? std::pow(fbase, float(s) + step * float(i))
                           : std::pow(fbase, float(e) - step * float(steps - i - 1)));
  } else {
    if (steps == 1) {
      p[0] = T(std::pow(base, start.toDouble()));
      return;
    }
    T s = start.to<T>(), e = end.to<T>();
    // (end - start) is computed in T (rounded for half types), then widened to double.
    double diff;
    if constexpr (std::is_same_v<T, double>)
      diff = e - s;
    else
      diff = double(T(float(e) - float(s)));
    double step = diff / double(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = T(i < halfway ? std::pow(base, double(s) + step * double(i))
                           : std::pow(base, double(e) - step * double(steps - i - 1)));
  }
}

void logspace_cpu(Tensor& out, const Scalar& start, const Scalar& end, double base) {
  EMBER_DISPATCH_ALL_TYPES(out.dtype(), "logspace", [&] {
    if constexpr (!std::is_same_v<scalar_t, bool>)
      logspace_fill(static_cast<scalar_t*>(out.data_ptr()), start, end, out.numel(), base);
  });
}

void eye_cpu(Tensor& out) {
  const int64_t n = out.size(0), m = out.size(1);
  EMBER_DISPATCH_ALL_TYPES(out.dtype(), "eye", [&] {
    auto* p = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = scalar_t(1);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(zeros_stub, kCPU, cpu::zeros_cpu);
EMBER_REGISTER_KERNEL(store_scalar_stub, kCPU, cpu::store_scalar_cpu);
EMBER_REGISTER_KERNEL(arange_stub, kCPU, cpu::arange_cpu);
EMBER_REGISTER_KERNEL(linspace_stub, kCPU, cpu::linspace_cpu);
EMBER_REGISTER_KERNEL(logspace_stub, kCPU, cpu::logspace_cpu);
EMBER_REGISTER_KERNEL(eye_stub, kCPU, cpu::eye_cpu);

}  // namespace ember
