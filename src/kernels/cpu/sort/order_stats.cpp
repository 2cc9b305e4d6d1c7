// kthvalue, median/nanmedian, mode and quantile kernels (kernels/stubs/sort.h). Rows run in
// parallel and each row's result depends only on the row, so results do not depend on the
// thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "kernels/cpu/sort/rows.h"
#include "kernels/stubs/sort.h"

namespace ember {

EMBER_DEFINE_KERNEL(kthvalue_stub);
EMBER_DEFINE_KERNEL(median_dim_stub);
EMBER_DEFINE_KERNEL(mode_stub);
EMBER_DEFINE_KERNEL(median_all_stub);
EMBER_DEFINE_KERNEL(quantile_stub);

namespace cpu {
namespace {

using namespace sort_util;

template <class A>
bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return v != v;
  else
    return false;
}

/// x > y with NaN as the largest value (PyTorch's order for kthvalue).
template <class A>
bool gt_or_nan(A x, A y) {
  return (is_nan(x) && !is_nan(y)) || x > y;
}

// Note [Order statistic ties]
// Which index an order statistic reports among equal values is whatever PyTorch's selection
// leaves there, so each op runs the same selection on the same comparisons: kthvalue a
// median-of-three quickselect, median/nanmedian nth_element with ties broken by index (the
// stable-sort position), mode a sort of (value, index) pairs by value that reports the last
// pair of the winning run.

/// Quickselect (median-of-three pivot, Hoare partition) moving the k-th smallest (0-based) of
/// v[0..n) to v[k]; ix follows v.
template <class A>
void quick_select(A* v, int64_t* ix, int64_t n, int64_t k) {
  auto swap = [&](int64_t a, int64_t b) {
    std::swap(v[a], v[b]);
    std::swap(ix[a], ix[b]);
  };
  int64_t lo = 0, hi = n - 1;
  while (true) {
    if (hi <= lo) return;
    if (hi == lo + 1) {
      if (gt_or_nan(v[lo], v[hi])) swap(lo, hi);
      return;
    }
    const int64_t mid = lo + (hi - lo) / 2;
    swap(mid, lo + 1);
    if (gt_or_nan(v[lo + 1], v[hi])) swap(lo + 1, hi);
    if (gt_or_nan(v[lo], v[hi])) swap(lo, hi);
    if (gt_or_nan(v[lo + 1], v[lo])) swap(lo + 1, lo);
    int64_t i = lo + 1, j = hi;
    const A pivot = v[lo];
    while (true) {
      do ++i;
      while (gt_or_nan(pivot, v[i]));
      do --j;
      while (gt_or_nan(v[j], pivot));
      if (j < i) break;
      swap(i, j);
    }
    swap(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

/// Shared driver of the (values, indices) reductions along the last dim: `row(x, n, value,
/// index)` reduces one contiguous row of n > 0 elements of T.
template <class T, class F>
void reduce_rows(const Tensor& rows, Tensor& v, Tensor& i, const F& row) {
  const T* x = rows.data_ptr<T>();
  T* vo = v.data_ptr<T>();
  int64_t* io = i.data_ptr<int64_t>();
  const int64_t n = row_length(rows);
  parallel_for(0, row_count(rows), std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t k = b; k < e; ++k) row(x + k * n, n, vo[k], io[k]);
               });
}

/// reduce_rows with the row function `make_row<T>()`, dispatched on dtype.
template <bool kWithBool, class MakeRow>
void dim_reduce(const Tensor& rows, Tensor& v, Tensor& i, const char* op, const MakeRow& make_row) {
  auto run = [&]<class T>() { reduce_rows<T>(rows, v, i, make_row.template operator()<T>()); };
  if constexpr (kWithBool) {
    EMBER_DISPATCH_REAL_TYPES_AND_BOOL(rows.dtype(), op,
                                       [&] { run.template operator()<scalar_t>(); });
  } else {
    EMBER_DISPATCH_REAL_TYPES(rows.dtype(), op, [&] { run.template operator()<scalar_t>(); });
  }
}

void kthvalue_cpu(const Tensor& rows, Tensor& values, Tensor& indices, int64_t k) {
  dim_reduce<false>(rows, values, indices, "kthvalue", [k]<class T>() {
    return [k](const T* x, int64_t len, T& value, int64_t& index) {
      using A = cmp_t<T>;
      thread_local std::vector<A> v;
      thread_local std::vector<int64_t> ix;
      v.resize(size_t(len));
      ix.resize(size_t(len));
      for (int64_t j = 0; j < len; ++j) {
        v[size_t(j)] = A(x[j]);
        ix[size_t(j)] = j;
      }
      quick_select(v.data(), ix.data(), len, k - 1);
      value = T(v[size_t(k - 1)]);
      index = ix[size_t(k - 1)];
    };
  });
}

/// median/nanmedian of one row with PyTorch's index (Note [Order statistic ties]).
template <class T>
auto median_row(bool ignore_nan) {
  return [ignore_nan](const T* x, int64_t n, T& value, int64_t& index) {
    using A = cmp_t<T>;
    if (!ignore_nan) {
      for (int64_t k = 0; k < n; ++k) {
        if (is_nan(A(x[k]))) {
          value = x[k];
          index = k;
          return;
        }
      }
    }
    thread_local std::vector<int64_t> idx;
    idx.resize(size_t(n));
    std::iota(idx.begin(), idx.end(), int64_t(0));
    int64_t num_nan = 0;
    if (ignore_nan)
      for (int64_t k = 0; k < n; ++k) num_nan += is_nan(A(x[k]));
    auto nth = idx.begin() + (n - num_nan - 1) / 2;  // truncates toward zero, as C++ does
    if (!ignore_nan) {
      std::nth_element(idx.begin(), nth, idx.end(), [x](int64_t a, int64_t b) {
        const A u = A(x[a]), w = A(x[b]);
        return u < w || (u == w && a < b);
      });
    } else {
      std::nth_element(idx.begin(), nth, idx.end(), [x](int64_t a, int64_t b) {
        const A u = A(x[a]), w = A(x[b]);
        return u < w || (u == w && a < b) || (is_nan(w) && !is_nan(u));
      });
    }
    value = x[*nth];
    index = *nth;
  };
}

void median_dim_cpu(const Tensor& rows, Tensor& values, Tensor& indices, bool ignore_nan) {
  dim_reduce<false>(rows, values, indices, ignore_nan ? "nanmedian" : "median",
                    [ignore_nan]<class T>() { return median_row<T>(ignore_nan); });
}

/// mode of one row (Note [Order statistic ties]).
template <class T>
auto mode_row() {
  return [](const T* x, int64_t n, T& value, int64_t& index) {
    using A = cmp_t<T>;
    thread_local std::vector<std::pair<A, int64_t>> el;
    el.resize(size_t(n));
    for (int64_t k = 0; k < n; ++k) el[size_t(k)] = {A(x[k]), k};
    std::sort(el.begin(), el.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    A best = A(0);
    int64_t best_i = 0, run = 0, best_run = 0;
    for (int64_t k = 0; k < n; ++k) {
      ++run;
      if (k == n - 1 || el[size_t(k)].first != el[size_t(k + 1)].first) {
        if (run > best_run) {
          best = el[size_t(k)].first;
          best_i = el[size_t(k)].second;
          best_run = run;
        }
        run = 0;
      }
    }
    value = T(best);
    index = best_i;
  };
}

void mode_cpu(const Tensor& rows, Tensor& values, Tensor& indices) {
  dim_reduce<true>(rows, values, indices, "mode", []<class T>() { return mode_row<T>(); });
}

void median_all_cpu(const Tensor& flat, Tensor& out, bool ignore_nan) {
  const int64_t n = flat.numel();
  EMBER_DISPATCH_REAL_TYPES(flat.dtype(), ignore_nan ? "nanmedian" : "median", [&] {
    using T = scalar_t;
    using A = cmp_t<T>;
    const T* x = flat.data_ptr<T>();
    std::vector<A> v(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) v[size_t(k)] = A(x[k]);
    int64_t num_nan = 0;
    for (A a : v) num_nan += is_nan(a);
    T* o = out.data_ptr<T>();
    if (!ignore_nan && num_nan > 0) {
      *o = T(std::numeric_limits<A>::quiet_NaN());
      return;
    }
    auto mid = v.begin() + (n - num_nan - 1) / 2;
    std::nth_element(v.begin(), mid, v.end(),
                     [](A a, A b) { return a < b || (is_nan(b) && !is_nan(a)); });
    *o = T(*mid);
  });
}

// ---- quantile ----

/// PyTorch's lerp: exact at both ends, computed from the nearer end.
template <class T>
T lerp(T a, T b, T w) {
  return std::abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

/// Quantiles of each row of `rows`, written q-major into `out` ([nq, rows]). Ranks are computed
/// in T as PyTorch does (q * (n - 1) rounded to T), so lower/higher/nearest pick the same
/// elements.
template <class T>
void quantile_rows(const Tensor& rows_t, const std::vector<T>& qs, T* out, QuantileInterp mode,
                   bool ignore_nan) {
  using Interp = QuantileInterp;
  const int64_t n = row_length(rows_t), rows = row_count(rows_t), nq = int64_t(qs.size());
  const T* x = rows_t.data_ptr<T>();
  parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<T> s(static_cast<size_t>(n));
                 for (int64_t row = b; row < e; ++row) {
                   std::copy(x + row * n, x + (row + 1) * n, s.begin());
                   std::sort(s.begin(), s.end(),
                             [](T u, T w) { return u < w || (is_nan(w) && !is_nan(u)); });
                   int64_t valid = n;
                   while (valid > 0 && is_nan(s[size_t(valid - 1)])) --valid;
                   for (int64_t j = 0; j < nq; ++j) {
                     T rank;
                     if (ignore_nan) {
                       rank = qs[size_t(j)] * T(valid - 1);
                       if (rank < 0) rank = 0;
                     } else {
                       rank = valid < n ? T(n - 1) : qs[size_t(j)] * T(n - 1);
                     }
                     if (mode == Interp::Lower)
                       rank = std::floor(rank);
                     else if (mode == Interp::Higher)
                       rank = std::ceil(rank);
                     else if (mode == Interp::Nearest)
                       rank = std::nearbyint(rank);
                     const int64_t lo = std::clamp<int64_t>(int64_t(rank), 0, n - 1);
                     T v = s[size_t(lo)];
                     if (mode == Interp::Linear || mode == Interp::Midpoint) {
                       const T w = mode == Interp::Midpoint ? T(0.5) : rank - T(lo);
                       const int64_t hi = std::clamp<int64_t>(int64_t(std::ceil(rank)), 0, n - 1);
                       v = lerp(v, s[size_t(hi)], w);
                     }
                     out[j * rows + row] = v;
                   }
                 }
               });
}

void quantile_cpu(const Tensor& rows, const Tensor& q, Tensor& out, QuantileInterp interp,
                  bool ignore_nan) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  EMBER_DISPATCH_FLOATING_TYPES(rows.dtype(), op, [&] {
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      using T = scalar_t;
      std::vector<T> qs(q.data_ptr<T>(), q.data_ptr<T>() + q.numel());
      for (T v : qs)
        EMBER_CHECK(v >= 0 && v <= 1, "[", op, "] q values must be in the range [0, 1], got ", v);
      const int64_t n = row_length(rows);
      EMBER_CHECK(n <= (int64_t(1) << 24), "[", op, "] input tensor is too large: ", n,
                  " elements to reduce (at most 2^24)");
      if (!qs.empty() && row_count(rows) > 0)
        quantile_rows<T>(rows, qs, out.data_ptr<T>(), interp, ignore_nan);
    }
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(kthvalue_stub, kCPU, cpu::kthvalue_cpu);
EMBER_REGISTER_KERNEL(median_dim_stub, kCPU, cpu::median_dim_cpu);
EMBER_REGISTER_KERNEL(mode_stub, kCPU, cpu::mode_cpu);
EMBER_REGISTER_KERNEL(median_all_stub, kCPU, cpu::median_all_cpu);
EMBER_REGISTER_KERNEL(quantile_stub, kCPU, cpu::quantile_cpu);

}  // namespace ember
