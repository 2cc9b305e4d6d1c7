// The max(dim)/min(dim) and argmax/argmin kernels (kernels/stubs/reduce.h) on the reduction
// engine (Note [Reductions] in kernels/cpu/reduce.cpp): NaN wins, indices point at the first
// occurrence. A file of its own so that its per-dtype functors compile beside the other
// reductions.
#include <memory>
#include <type_traits>
#include <vector>

#include "ember/dispatch_type.h"
#include "kernels/cpu/reduce/extreme.h"
#include "kernels/stubs/reduce.h"

namespace ember {

EMBER_DEFINE_KERNEL(max_dim_stub);
EMBER_DEFINE_KERNEL(min_dim_stub);
EMBER_DEFINE_KERNEL(argmax_stub);
EMBER_DEFINE_KERNEL(argmin_stub);

namespace cpu {
namespace {

using namespace reduce_impl;

// max(dim) / min(dim) (kValues: values out, indices extra) and argmax / argmin (indices out).
template <class T, bool Max, bool kValues>
struct ArgOp {
  using M = std::conditional_t<std::is_same_v<T, bool>, bool, opmath_t<T>>;
  struct acc_t {
    M v;
    int64_t i;
  };
  using out_t = std::conditional_t<kValues, T, int64_t>;
  static constexpr bool kVertical = true;
  int64_t* indices = nullptr;
  acc_t init() const { return {ExtremeOp<T, Max>().init(), 0}; }
  acc_t combine(acc_t a, acc_t b) const { return better<Max>(b.v, a.v) ? b : a; }
  acc_t reduce(const T* p, int64_t n, int64_t s, int64_t base) const {
    if (n == 0) return init();
    if constexpr (std::is_same_v<T, float>) {
      if (s == 1) {
        const int64_t k = (Max ? K().argmax_f32 : K().argmin_f32)(p, n);
        return {p[k], base + k};
      }
    }
    if constexpr (std::is_same_v<T, double>) {
      if (s == 1) {
        const int64_t k = (Max ? K().argmax_f64 : K().argmin_f64)(p, n);
        return {p[k], base + k};
      }
    }
    acc_t a{M(p[0]), base};
    for (int64_t i = 1; i < n; ++i) {
      const M v = M(p[i * s]);
      if (better<Max>(v, a.v)) a = {v, base + i};
    }
    return a;
  }
  out_t project(acc_t a) const {
    if constexpr (kValues)
      return T(a.v);
    else
      return a.i;
  }
  void project_extra(int64_t o, acc_t a) const {
    if constexpr (kValues) indices[o] = a.i;
  }
  void vertical(out_t* out, const T* base, int64_t rows, int64_t rs, int64_t w, int64_t oi) const {
    std::unique_ptr<M[]> val(new M[size_t(w)]);  // not std::vector: M may be bool
    std::vector<int64_t> idx(static_cast<size_t>(w), 0);
    for (int64_t j = 0; j < w; ++j) val[size_t(j)] = M(base[j]);
    for (int64_t r = 1; r < rows; ++r) {
      const T* row = base + r * rs;
      for (int64_t j = 0; j < w; ++j) {
        const M v = M(row[j]);
        if (better<Max>(v, val[size_t(j)])) {
          val[size_t(j)] = v;
          idx[size_t(j)] = r;
        }
      }
    }
    for (int64_t j = 0; j < w; ++j) {
      out[j] = project({val[size_t(j)], idx[size_t(j)]});
      project_extra(oi + j, {val[size_t(j)], idx[size_t(j)]});
    }
  }
};

template <bool Max>
void extreme_dim_cpu(const Tensor& self, uint64_t mask, Tensor& values, Tensor& indices) {
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), Max ? "max" : "min", [&] {
    ArgOp<scalar_t, Max, true> f;
    f.indices = indices.data_ptr<int64_t>();
    run<scalar_t>(self, mask, values, f);
  });
}

template <bool Max>
void arg_cpu(const Tensor& self, uint64_t mask, Tensor& out) {
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), Max ? "argmax" : "argmin", [&] {
    ArgOp<scalar_t, Max, false> f;
    run<scalar_t>(self, mask, out, f);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(max_dim_stub, kCPU, cpu::extreme_dim_cpu<true>);
EMBER_REGISTER_KERNEL(min_dim_stub, kCPU, cpu::extreme_dim_cpu<false>);
EMBER_REGISTER_KERNEL(argmax_stub, kCPU, cpu::arg_cpu<true>);
EMBER_REGISTER_KERNEL(argmin_stub, kCPU, cpu::arg_cpu<false>);

}  // namespace ember
