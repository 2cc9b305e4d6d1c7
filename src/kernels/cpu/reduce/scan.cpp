// Scan kernels (cumsum, cumprod, cummax, cummin, logcumsumexp) over a contiguous
// (outer, n, inner) block (kernels/stubs/scan.h).
//
// Note [Scan layout]
// A scan along the last dim (inner == 1) walks each row once. Along any other dim the lines are
// strided by `inner`, so instead of walking one line at a time with a big stride, a block of up
// to kColBlock neighbouring lines is scanned together: row j of the block is read contiguously
// and folded into a vector of running accumulators, a loop the compiler vectorizes. Each line
// is scanned in order by one thread, so the rounding is the sequential one whatever the thread
// count, and equal to PyTorch's: it accumulates in its CPU acc_type (double for float, float
// for float16/bfloat16, int64 for integers, complex<double> for complex<float>) and rounds
// every output to the result dtype. (PyTorch 1.13 has no float16 scan kernels on CPU; ember's
// follow its bfloat16 ones.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/parallel_internal.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "kernels/stubs/scan.h"

namespace ember {

EMBER_DEFINE_KERNEL(cumsum_stub);
EMBER_DEFINE_KERNEL(cumprod_stub);
EMBER_DEFINE_KERNEL(logcumsumexp_stub);
EMBER_DEFINE_KERNEL(cummax_stub);
EMBER_DEFINE_KERNEL(cummin_stub);

namespace cpu {
namespace {

constexpr int64_t kGrain = 32768;   // elements per task
constexpr int64_t kColBlock = 256;  // lines scanned together along a non-last dim

/// PyTorch's CPU accumulation type for running sums and products.
template <class T>
struct AccOf {
  using type = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
};
template <>
struct AccOf<float> {
  using type = double;
};
template <>
struct AccOf<BFloat16> {
  using type = float;
};
template <>
struct AccOf<Half> {
  using type = float;
};
template <>
struct AccOf<complex<float>> {
  using type = complex<double>;
};

template <class T, bool kProd>
struct SumProdOp {
  using acc_t = typename AccOf<T>::type;
  static acc_t init() { return acc_t(kProd ? 1 : 0); }
  static acc_t step(acc_t a, T x) {
    if constexpr (std::is_integral_v<acc_t>) {
      // wraps like PyTorch, without signed-overflow UB
      const uint64_t ua = uint64_t(a), ux = uint64_t(int64_t(x));
      return acc_t(kProd ? ua * ux : ua + ux);
    } else {
      return kProd ? a * acc_t(x) : a + acc_t(x);
    }
  }
  static T store(acc_t a) { return T(a); }
};

/// PyTorch 1.13's log-add-exp step of logcumsumexp, in the accumulation type (NaN in the
/// running value propagates; equal infinities stay as they are).
template <class T>
struct LogSumExpOp {
  using acc_t = typename AccOf<T>::type;
  static acc_t init() { return -std::numeric_limits<acc_t>::infinity(); }
  static acc_t step(acc_t y, T xt) {
    const acc_t x = acc_t(xt);
    const acc_t mn = std::isnan(y) ? y : std::min(x, y);
    const acc_t mx = std::isnan(y) ? y : std::max(x, y);
    if (mn != mx || std::isfinite(mn)) return std::log1p(std::exp(mn - mx)) + mx;
    return x;
  }
  static T store(acc_t a) { return T(a); }
};

/// Running sum / product / logsumexp of the block (Note [Scan layout]).
template <class Op, class T>
void run_acc(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  using A = typename Op::acc_t;
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* x = in + r * n;
        T* y = out + r * n;
        A a = Op::init();
        for (int64_t i = 0; i < n; ++i) {
          a = Op::step(a, x[i]);
          y[i] = Op::store(a);
        }
      }
    });
    return;
  }
  const int64_t blocks = (inner + kColBlock - 1) / kColBlock;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrain / (n * kColBlock)),
               [&](int64_t b, int64_t e) {
                 std::unique_ptr<A[]> acc(new A[kColBlock]);
                 A* a = acc.get();
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t o = t / blocks, c0 = (t % blocks) * kColBlock;
                   const int64_t w = std::min(kColBlock, inner - c0);
                   const T* x = in + o * n * inner + c0;
                   T* y = out + o * n * inner + c0;
                   std::fill(a, a + w, Op::init());
                   for (int64_t j = 0; j < n; ++j) {
                     const T* xr = x + j * inner;
                     T* yr = y + j * inner;
                     for (int64_t c = 0; c < w; ++c) {
                       a[c] = Op::step(a[c], xr[c]);
                       yr[c] = Op::store(a[c]);
                     }
                   }
                 }
               });
}

/// Whether `x` replaces the running extremum `cur` (PyTorch's rule: a NaN always does, so the
/// index is the latest NaN; otherwise ties move the index to the latest occurrence).
template <bool kMax, class T>
inline bool takes(T xt, T curt) {
  if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
    return kMax ? xt >= curt : xt <= curt;
  } else {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const F x = F(xt), cur = F(curt);
    return std::isnan(x) || (!std::isnan(cur) && (kMax ? x >= cur : x <= cur));
  }
}

/// Running max / min with indices of the block (Note [Scan layout]).
template <bool kMax, class T>
void run_ext(const T* in, T* out, int64_t* idx, int64_t outer, int64_t n, int64_t inner) {
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* x = in + r * n;
        T* y = out + r * n;
        int64_t* ix = idx + r * n;
        T cur = x[0];
        int64_t ci = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T v = x[i];
          if (takes<kMax>(v, cur)) {
            cur = v;
            ci = i;
          }
          y[i] = cur;
          ix[i] = ci;
        }
      }
    });
    return;
  }
  const int64_t blocks = (inner + kColBlock - 1) / kColBlock;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrain / (n * kColBlock)),
               [&](int64_t b, int64_t e) {
                 std::unique_ptr<T[]> vbuf(new T[kColBlock]);
                 std::unique_ptr<int64_t[]> ibuf(new int64_t[kColBlock]);
                 T* cur = vbuf.get();
                 int64_t* ci = ibuf.get();
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t o = t / blocks, c0 = (t % blocks) * kColBlock;
                   const int64_t w = std::min(kColBlock, inner - c0);
                   const int64_t base = o * n * inner + c0;
                   std::copy(in + base, in + base + w, cur);
                   std::fill(ci, ci + w, int64_t(0));
                   for (int64_t j = 0; j < n; ++j) {
                     const T* xr = in + base + j * inner;
                     T* yr = out + base + j * inner;
                     int64_t* ir = idx + base + j * inner;
                     for (int64_t c = 0; c < w; ++c) {
                       const T v = xr[c];
                       if (takes<kMax>(v, cur[c])) {
                         cur[c] = v;
                         ci[c] = j;
                       }
                       yr[c] = cur[c];
                       ir[c] = ci[c];
                     }
                   }
                 }
               });
}

/// The contiguous (outer, n, inner) block of a scan of `x` along `dim`.
struct Geom {
  int64_t outer = 1, n = 1, inner = 1;
  bool empty() const { return outer == 0 || n == 0 || inner == 0; }
};
Geom geom(const Tensor& x, int64_t dim) {
  Geom g;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) g.outer *= x.size(d);
    if (d > dim) g.inner *= x.size(d);
  }
  g.n = x.size(dim);
  return g;
}

template <bool kProd>
void sum_prod_cpu(const Tensor& self, Tensor& out, int64_t dim) {
  const Geom g = geom(self, dim);
  if (g.empty()) return;
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), kProd ? "cumprod" : "cumsum", [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, bool>) {
      EMBER_INTERNAL_ASSERT(false, "scan kernel called for an unsupported dtype");
    } else {
      run_acc<SumProdOp<T, kProd>>(self.data_ptr<T>(), out.data_ptr<T>(), g.outer, g.n, g.inner);
    }
  });
}

void logcumsumexp_cpu(const Tensor& self, Tensor& out, int64_t dim) {
  const Geom g = geom(self, dim);
  if (g.empty()) return;
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "logcumsumexp", [&] {
    using T = scalar_t;
    run_acc<LogSumExpOp<T>>(self.data_ptr<T>(), out.data_ptr<T>(), g.outer, g.n, g.inner);
  });
}

template <bool kMax>
void extremum_cpu(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim) {
  const Geom g = geom(self, dim);
  if (g.empty()) return;
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), kMax ? "cummax" : "cummin", [&] {
    using T = scalar_t;
    run_ext<kMax>(self.data_ptr<T>(), values.data_ptr<T>(), indices.data_ptr<int64_t>(), g.outer,
                  g.n, g.inner);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(cumsum_stub, kCPU, cpu::sum_prod_cpu<false>);
EMBER_REGISTER_KERNEL(cumprod_stub, kCPU, cpu::sum_prod_cpu<true>);
EMBER_REGISTER_KERNEL(logcumsumexp_stub, kCPU, cpu::logcumsumexp_cpu);
EMBER_REGISTER_KERNEL(cummax_stub, kCPU, cpu::extremum_cpu<true>);
EMBER_REGISTER_KERNEL(cummin_stub, kCPU, cpu::extremum_cpu<false>);

}  // namespace ember
