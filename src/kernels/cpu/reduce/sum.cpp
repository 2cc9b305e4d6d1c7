// The sum, nansum, mean and prod kernels (kernels/stubs/reduce.h) on the reduction engine
// (Note [Reductions] in kernels/cpu/reduce.cpp). Their functors are instantiated for every
// dtype, so they live in a file of their own that compiles beside the other reductions.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ember/dispatch_type.h"
#include "kernels/cpu/reduce/driver.h"
#include "kernels/stubs/reduce.h"

namespace ember {

EMBER_DEFINE_KERNEL(sum_stub);
EMBER_DEFINE_KERNEL(nansum_stub);
EMBER_DEFINE_KERNEL(mean_stub);
EMBER_DEFINE_KERNEL(prod_stub);

namespace cpu {
namespace {

using namespace reduce_impl;

/// Accumulator of a sum/product of T: int64 for integers and bool, float for half/bfloat16.
template <class T>
using sum_acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;

// Pairwise sum of a strided range (the contiguous float/double case uses the ISA kernels).
template <class A, class T, class Op>
A pairwise(const Op& op, const T* p, int64_t n, int64_t s) {
  if (n <= 64) {
    A a0 = A(0), a1 = A(0), a2 = A(0), a3 = A(0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      a0 += op.load(p[i * s]);
      a1 += op.load(p[(i + 1) * s]);
      a2 += op.load(p[(i + 2) * s]);
      a3 += op.load(p[(i + 3) * s]);
    }
    for (; i < n; ++i) a0 += op.load(p[i * s]);
    return (a0 + a1) + (a2 + a3);
  }
  const int64_t half = n / 2;
  return pairwise<A>(op, p, half, s) + pairwise<A>(op, p + half * s, n - half, s);
}

// sum / nansum / mean. O is the output type; kMean divides by `count` (as PyTorch: the sum is
// rounded to O first, then divided).
template <class T, class O, bool kNan, bool kMean>
struct SumOp {
  using acc_t =
      std::conditional_t<std::is_integral_v<O> && !std::is_integral_v<T>, O, sum_acc_t<T>>;
  using out_t = O;
  static constexpr bool kVertical = true;
  double count = 1;
  acc_t init() const { return acc_t(0); }
  acc_t load(T x) const {
    if constexpr (kNan && is_float_v<T>) {
      const opmath_t<T> v = opmath_t<T>(x);
      return v != v ? acc_t(0) : acc_t(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      return acc_t(x ? 1 : 0);
    } else {
      return acc_t(opmath_t<T>(x));
    }
  }
  acc_t step(acc_t a, T x) const { return a + load(x); }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  acc_t reduce(const T* p, int64_t n, int64_t s, int64_t) const {
    if constexpr (!kNan && std::is_same_v<T, float> && std::is_same_v<acc_t, float>) {
      if (s == 1) return K().sum_f32(p, n);
    }
    if constexpr (!kNan && std::is_same_v<T, double> && std::is_same_v<acc_t, double>) {
      if (s == 1) return K().sum_f64(p, n);
    }
    if constexpr (std::is_integral_v<acc_t>) {
      acc_t a = 0;
      if (s == 1)
        for (int64_t i = 0; i < n; ++i) a += load(p[i]);
      else
        for (int64_t i = 0; i < n; ++i) a += load(p[i * s]);
      return a;
    } else {
      return pairwise<acc_t>(*this, p, n, s);
    }
  }
  out_t project(acc_t a) const {
    if constexpr (kMean) {
      using M = opmath_t<O>;
      return O(M(O(a)) / M(count));
    } else if constexpr (std::is_same_v<O, bool>) {
      return a != acc_t(0);
    } else {
      return O(a);
    }
  }
  void project_extra(int64_t, acc_t) const {}
  // Plain float/double sums and means of contiguous rows go to the ISA row kernel.
  static constexpr bool kRows = !kNan && std::is_same_v<T, acc_t> && std::is_same_v<O, acc_t> &&
                                (std::is_same_v<T, float> || std::is_same_v<T, double>);
  void reduce_rows(out_t* out, const T* base, int64_t rs, int64_t rows, int64_t n) const {
    if constexpr (std::is_same_v<T, float>)
      K().sum_rows_f32(base, rs, rows, n, out);
    else if constexpr (std::is_same_v<T, double>)
      K().sum_rows_f64(base, rs, rows, n, out);
    if constexpr (kMean)
      for (int64_t r = 0; r < rows; ++r) out[r] = project(out[r]);
  }
  void add_row(acc_t* acc, const T* row, int64_t w) const {
    if constexpr (!kNan && std::is_same_v<T, float> && std::is_same_v<acc_t, float>)
      K().add_rows_f32(acc, row, w);
    else if constexpr (!kNan && std::is_same_v<T, double> && std::is_same_v<acc_t, double>)
      K().add_rows_f64(acc, row, w);
    else
      for (int64_t j = 0; j < w; ++j) acc[j] += load(row[j]);
  }
  static void add_acc(acc_t* acc, const acc_t* b, int64_t w) {
    if constexpr (std::is_same_v<acc_t, float>)
      K().add_rows_f32(acc, b, w);
    else if constexpr (std::is_same_v<acc_t, double>)
      K().add_rows_f64(acc, b, w);
    else
      for (int64_t j = 0; j < w; ++j) acc[j] += b[j];
  }
  // Cascade: 32 rows into l1, 32 l1 blocks into l2, l2 into l3 (Note [Reductions]).
  void vertical(out_t* out, const T* base, int64_t rows, int64_t rs, int64_t w, int64_t) const {
    if constexpr (std::is_integral_v<acc_t>) {
      std::vector<acc_t> acc(static_cast<size_t>(w), 0);
      for (int64_t r = 0; r < rows; ++r) add_row(acc.data(), base + r * rs, w);
      for (int64_t j = 0; j < w; ++j) out[j] = project(acc[j]);
    } else {
      std::vector<acc_t> buf(static_cast<size_t>(3 * w), acc_t(0));
      acc_t *l1 = buf.data(), *l2 = l1 + w, *l3 = l2 + w;
      int64_t r = 0, blocks = 0;
      while (r < rows) {
        const int64_t e = std::min(rows, r + 32);
        std::fill(l1, l1 + w, acc_t(0));
        if constexpr (!kNan && std::is_same_v<T, float> && std::is_same_v<acc_t, float>) {
          K().add_row_block_f32(l1, base + r * rs, rs, e - r, w);
          r = e;
        } else if constexpr (!kNan && std::is_same_v<T, double> && std::is_same_v<acc_t, double>) {
          K().add_row_block_f64(l1, base + r * rs, rs, e - r, w);
          r = e;
        } else {
          for (; r < e; ++r) add_row(l1, base + r * rs, w);
        }
        add_acc(l2, l1, w);
        if (++blocks == 32) {
          add_acc(l3, l2, w);
          std::fill(l2, l2 + w, acc_t(0));
          blocks = 0;
        }
      }
      add_acc(l3, l2, w);
      for (int64_t j = 0; j < w; ++j) out[j] = project(l3[j]);
    }
  }
};

template <class T, class O>
struct ProdOp {
  using acc_t = std::conditional_t<std::is_same_v<O, bool>, int64_t,
                                   std::conditional_t<std::is_integral_v<O>, int64_t, opmath_t<O>>>;
  using out_t = O;
  static constexpr bool kVertical = true;
  acc_t init() const { return acc_t(1); }
  acc_t load(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return acc_t(x ? 1 : 0);
    else
      return acc_t(opmath_t<T>(x));
  }
  acc_t mul(acc_t a, acc_t b) const {
    if constexpr (std::is_integral_v<acc_t>)
      return acc_t(uint64_t(a) * uint64_t(b));  // wraps like PyTorch, without signed overflow UB
    else
      return a * b;
  }
  acc_t step(acc_t a, T x) const { return mul(a, load(x)); }
  acc_t combine(acc_t a, acc_t b) const { return mul(a, b); }
  acc_t reduce(const T* p, int64_t n, int64_t s, int64_t) const {
    acc_t a = init();
    for (int64_t i = 0; i < n; ++i) a = step(a, p[i * s]);
    return a;
  }
  out_t project(acc_t a) const {
    if constexpr (std::is_same_v<O, bool>)
      return a != 0;
    else
      return O(a);
  }
  void project_extra(int64_t, acc_t) const {}
  void vertical(out_t* out, const T* base, int64_t rows, int64_t rs, int64_t w, int64_t oi) const {
    vertical_simple(*this, out, base, rows, rs, w, oi);
  }
};

// Integer and bool sums go to int64 unless the caller asked for their own dtype.
void sum_cpu(const Tensor& self, uint64_t mask, Tensor& out) {
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "sum", [&] {
    using T = scalar_t;
    if constexpr (std::is_integral_v<T>) {
      if (out.dtype() == kLong) {
        SumOp<T, int64_t, false, false> f;
        return run<T>(self, mask, out, f);
      }
    }
    SumOp<T, T, false, false> f;
    run<T>(self, mask, out, f);
  });
}

void nansum_cpu(const Tensor& self, uint64_t mask, Tensor& out) {
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "nansum", [&] {
    SumOp<scalar_t, scalar_t, true, false> f;
    run<scalar_t>(self, mask, out, f);
  });
}

void mean_cpu(const Tensor& self, uint64_t mask, Tensor& out) {
  EMBER_DISPATCH_FLOATING_AND_COMPLEX_TYPES(self.dtype(), "mean", [&] {
    SumOp<scalar_t, scalar_t, false, true> f{double(reduced_count(self, mask))};
    run<scalar_t>(self, mask, out, f);
  });
}

void prod_cpu(const Tensor& self, uint64_t mask, Tensor& out) {
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "prod", [&] {
    using T = scalar_t;
    if constexpr (std::is_integral_v<T>) {
      if (out.dtype() == kLong) {
        ProdOp<T, int64_t> f;
        return run<T>(self, mask, out, f);
      }
    }
    ProdOp<T, T> f;
    run<T>(self, mask, out, f);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(sum_stub, kCPU, cpu::sum_cpu);
EMBER_REGISTER_KERNEL(nansum_stub, kCPU, cpu::nansum_cpu);
EMBER_REGISTER_KERNEL(mean_stub, kCPU, cpu::mean_cpu);
EMBER_REGISTER_KERNEL(prod_stub, kCPU, cpu::prod_cpu);

}  // namespace ember
