// searchsorted, histc and bincount kernels (kernels/stubs/search.h), with PyTorch 1.13's NaN
// placement and rounding.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "ember/half.h"
#include "kernels/common/search_scalar.h"
#include "kernels/stubs/search.h"

namespace ember {

EMBER_DEFINE_KERNEL(searchsorted_stub);
EMBER_DEFINE_KERNEL(histc_range_stub);
EMBER_DEFINE_KERNEL(histc_stub);
EMBER_DEFINE_KERNEL(bincount_range_stub);
EMBER_DEFINE_KERNEL(bincount_stub);

namespace cpu {
namespace {

constexpr const char* kSS = "searchsorted";

template <class T>
void search_kernel(const T* seq, const int64_t* sort, int64_t len, int64_t n_rows, const T* vals,
                   int64_t per_row, int64_t n_vals, bool right, bool out32, void* out) {
  // One sequence row serves `per_row` consecutive values (all values for a 1-D sequence).
  parallel_for(0, n_vals, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t row = n_rows == 1 ? 0 : i / per_row;
      const T* s = seq + row * len;
      const int64_t* so = sort ? sort + row * len : nullptr;
      const T v = vals[i];
      const int64_t lo = scalar::sorted_position(len, v, right, [&](int64_t mid, T& m) {
        m = so ? s[so[mid]] : s[mid];
        return true;
      });
      if (out32)
        static_cast<int32_t*>(out)[i] = int32_t(lo);
      else
        static_cast<int64_t*>(out)[i] = lo;
    }
  });
}

void searchsorted_cpu(const Tensor& seq, const Tensor& values, const Tensor& sorter, Tensor& out,
                      bool right) {
  const int64_t len = seq.size(-1);
  const int64_t n_vals = values.numel();
  if (sorter.defined()) {
    const int64_t* p = sorter.data_ptr<int64_t>();
    for (int64_t i = 0; i < sorter.numel(); ++i) {
      EMBER_CHECK_INDEX(p[i] >= 0 && p[i] < len, "[", kSS, "] sorter index ", p[i],
                        " is out of range for a sequence of length ", len);
    }
  }
  const int64_t n_rows = seq.numel() / std::max<int64_t>(len, 1);
  const int64_t per_row = seq.dim() == 1 ? n_vals : values.size(-1);
  EMBER_DISPATCH_REAL_TYPES(seq.dtype(), kSS, [&] {
    search_kernel<scalar_t>(seq.data_ptr<scalar_t>(),
                            sorter.defined() ? sorter.data_ptr<int64_t>() : nullptr, len,
                            seq.dim() == 1 ? 1 : n_rows, values.data_ptr<scalar_t>(), per_row,
                            n_vals, right, out.dtype() == kInt, out.data_ptr());
  });
}

template <class T>
struct HistMath {
  // bfloat16 arithmetic rounds after every operation, as PyTorch's BFloat16 operators do.
  static float r(float x) { return std::is_same_v<T, BFloat16> ? float(BFloat16(x)) : x; }
};

template <class T>
void histc_kernel(const T* x, int64_t n, int64_t bins, double lo_d, double hi_d, int64_t* counts) {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  using M = HistMath<T>;
  const acc_t lo = acc_t(M::r(float(lo_d))), hi = acc_t(M::r(float(hi_d)));
  const acc_t lo_e = std::is_same_v<T, double> ? acc_t(lo_d) : lo;
  const acc_t hi_e = std::is_same_v<T, double> ? acc_t(hi_d) : hi;
  const acc_t width = std::is_same_v<T, BFloat16> ? acc_t(M::r(float(hi_e - lo_e))) : hi_e - lo_e;
  const acc_t nb = std::is_same_v<T, BFloat16> ? acc_t(M::r(float(bins))) : acc_t(bins);
  std::vector<int64_t> total(size_t(bins), 0);
  // Integer counts add in any order, so per-range partial histograms are deterministic.
  parallel_for(0, n, 65536, [&](int64_t b, int64_t e) {
    std::vector<int64_t> local(size_t(bins), 0);
    for (int64_t i = b; i < e; ++i) {
      const acc_t v = acc_t(x[i]);
      if (!(v >= lo_e && v <= hi_e)) continue;
      acc_t f;
      if constexpr (std::is_same_v<T, BFloat16>) {
        f = M::r(M::r(M::r(v - lo_e) * nb) / width);
      } else {
        f = (v - lo_e) * nb / width;
      }
      int64_t pos = int64_t(f);
      if (pos >= bins) pos = bins - 1;
      if (pos < 0) pos = 0;
      ++local[size_t(pos)];
    }
#pragma omp critical(ember_histc_merge)
    for (int64_t k = 0; k < bins; ++k) total[size_t(k)] += local[size_t(k)];
  });
  std::copy(total.begin(), total.end(), counts);
}

std::pair<double, double> histc_range_cpu(const Tensor& x) {
  const int64_t n = x.numel();
  double lo = 0, hi = 0;
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "histc", [&] {
    const scalar_t* p = x.data_ptr<scalar_t>();
    double mn = double(p[0]), mx = double(p[0]);
    for (int64_t i = 1; i < n && !std::isnan(mn); ++i) {
      const double v = double(p[i]);
      if (std::isnan(v)) mn = mx = v;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    lo = mn;
    hi = mx;
  });
  return {lo, hi};
}

void histc_cpu(const Tensor& x, Tensor& counts, int64_t bins, double lo, double hi) {
  int64_t* c = counts.data_ptr<int64_t>();
  const int64_t n = x.numel();
  if (n == 0) {
    std::fill(c, c + bins, int64_t(0));
    return;
  }
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "histc", [&] {
    histc_kernel<scalar_t>(x.data_ptr<scalar_t>(), n, bins, lo, hi, c);
  });
}

std::pair<int64_t, int64_t> bincount_range_cpu(const Tensor& x) {
  const int64_t* p = x.data_ptr<int64_t>();
  const int64_t n = x.numel();
  return {*std::min_element(p, p + n), *std::max_element(p, p + n)};
}

void bincount_cpu(const Tensor& x, const Tensor& weights, Tensor& out) {
  const int64_t* p = x.data_ptr<int64_t>();
  const int64_t n = x.numel();
  if (!weights.defined()) {
    int64_t* o = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++o[p[i]];
    return;
  }
  // Weights sum in their own dtype, in input order, as PyTorch.
  auto accumulate = [&](auto zero) {
    using T = decltype(zero);
    const T* wp = weights.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) o[p[i]] += wp[i];
  };
  if (out.dtype() == kFloat)
    accumulate(0.0f);
  else
    accumulate(0.0);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(searchsorted_stub, kCPU, cpu::searchsorted_cpu);
EMBER_REGISTER_KERNEL(histc_range_stub, kCPU, cpu::histc_range_cpu);
EMBER_REGISTER_KERNEL(histc_stub, kCPU, cpu::histc_cpu);
EMBER_REGISTER_KERNEL(bincount_range_stub, kCPU, cpu::bincount_range_cpu);
EMBER_REGISTER_KERNEL(bincount_stub, kCPU, cpu::bincount_cpu);

}  // namespace ember
