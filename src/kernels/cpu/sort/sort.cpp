// sort and topk kernels (kernels/stubs/sort.h): each row is copied into a buffer of
// (order-preserving key, index) pairs or (value, index) pairs and sorted there; rows run in
// parallel.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/dispatch_type.h"
#include "ember/half.h"
#include "kernels/common/sort_keys.h"
#include "kernels/cpu/sort/rows.h"
#include "kernels/stubs/sort.h"

namespace ember {

EMBER_DEFINE_KERNEL(sort_stub);
EMBER_DEFINE_KERNEL(topk_stub);

namespace cpu {
namespace {

using namespace sort_util;

// Note [Sort keys]
// Every sortable dtype maps to an unsigned key whose integer order is PyTorch's order: signed
// integers flip the sign bit, floats flip all bits of negatives and the sign bit of the rest,
// -0.0 becomes +0.0 (they compare equal) and every NaN becomes the largest key (NaN sorts last,
// all NaNs equal). Descending order sorts ~key. A stable LSD radix sort over the key bytes then
// gives PyTorch's stable order, which is also its order for unstable sorts of short slices.

// The key rules are shared with the CUDA sort (kernels/common/sort_keys.h).
using scalar::KeyOf;

template <class T>
KeyOf<T> sort_key(T v) {
  if constexpr (std::is_integral_v<T>) {
    return scalar::integer_sort_key(v);
  } else {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    return scalar::float_sort_key<KeyOf<T>>(F(v));
  }
}

template <class K>
struct KI {
  K key;
  uint32_t idx;
};

/// Stable LSD radix sort of a[0..n) by key (8-bit digits; constant digits are skipped).
/// Returns the buffer holding the result (a or tmp).
template <class K>
KI<K>* radix_sort(KI<K>* a, KI<K>* tmp, int64_t n) {
  constexpr int P = sizeof(K);
  if (n < 64) {
    std::stable_sort(a, a + n, [](const KI<K>& x, const KI<K>& y) { return x.key < y.key; });
    return a;
  }
  std::array<std::array<uint32_t, 256>, P> hist{};
  for (int64_t i = 0; i < n; ++i) {
    K k = a[i].key;
    for (int p = 0; p < P; ++p) ++hist[p][(k >> (8 * p)) & 255];
  }
  for (int p = 0; p < P; ++p) {
    auto& h = hist[p];
    if (h[(a[0].key >> (8 * p)) & 255] == uint32_t(n)) continue;  // one digit value: no-op
    uint32_t off = 0;
    for (int d = 0; d < 256; ++d) {
      uint32_t c = h[d];
      h[d] = off;
      off += c;
    }
    for (int64_t i = 0; i < n; ++i) tmp[h[(a[i].key >> (8 * p)) & 255]++] = a[i];
    std::swap(a, tmp);
  }
  return a;
}

/// Sorts each row of `rows` (contiguous) into values `vo` / indices `io` (contiguous, same rows).
template <class T>
void sort_rows(const T* x, T* vo, int64_t* io, int64_t rows, int64_t n, bool descending) {
  using K = KeyOf<T>;
  parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<KI<K>> buf(size_t(2 * n));
                 for (int64_t r = b; r < e; ++r) {
                   const T* row = x + r * n;
                   KI<K>* a = buf.data();
                   for (int64_t i = 0; i < n; ++i) {
                     K k = sort_key(row[i]);
                     a[i] = {descending ? K(~k) : k, uint32_t(i)};
                   }
                   KI<K>* s = radix_sort(a, a + n, n);
                   T* v = vo + r * n;
                   int64_t* ix = io + r * n;
                   for (int64_t i = 0; i < n; ++i) {
                     v[i] = row[s[i].idx];
                     ix[i] = s[i].idx;
                   }
                 }
               });
}

/// PyTorch's topk order: NaN counts as the largest value; ties fall where the selection
/// algorithm leaves them (the same algorithms on the same comparisons: partial sort for small
/// k, else nth_element plus a sort of the first k - 1).
template <class T>
void topk_rows(const T* x, T* vo, int64_t* io, int64_t rows, int64_t n, int64_t k, bool largest,
               bool sorted) {
  using A = cmp_t<T>;
  using E = std::pair<A, int64_t>;
  auto gt = [](const E& a, const E& b) {
    if constexpr (std::is_floating_point_v<A>)
      return (std::isnan(a.first) && !std::isnan(b.first)) || a.first > b.first;
    else
      return a.first > b.first;
  };
  auto lt = [](const E& a, const E& b) {
    if constexpr (std::is_floating_point_v<A>)
      return (!std::isnan(a.first) && std::isnan(b.first)) || a.first < b.first;
    else
      return a.first < b.first;
  };
  parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<E> q(static_cast<size_t>(n));
                 for (int64_t r = b; r < e; ++r) {
                   const T* row = x + r * n;
                   for (int64_t i = 0; i < n; ++i) q[size_t(i)] = {A(row[i]), i};
                   auto select = [&](auto cmp) {
                     if (k * 64 <= n) {
                       std::partial_sort(q.begin(), q.begin() + k, q.end(), cmp);
                     } else {
                       std::nth_element(q.begin(), q.begin() + (k - 1), q.end(), cmp);
                       if (sorted) std::sort(q.begin(), q.begin() + (k - 1), cmp);
                     }
                   };
                   if (k > 0) {
                     if (largest)
                       select(gt);
                     else
                       select(lt);
                   }
                   for (int64_t i = 0; i < k; ++i) {
                     vo[r * k + i] = T(q[size_t(i)].first);
                     io[r * k + i] = q[size_t(i)].second;
                   }
                 }
               });
}

void sort_cpu(const Tensor& rows, Tensor& values, Tensor& indices, bool descending) {
  const int64_t n = row_length(rows), count = row_count(rows);
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(rows.dtype(), "sort", [&] {
    sort_rows<scalar_t>(rows.data_ptr<scalar_t>(), values.data_ptr<scalar_t>(),
                        indices.data_ptr<int64_t>(), count, n, descending);
  });
}

void topk_cpu(const Tensor& rows, Tensor& values, Tensor& indices, int64_t k, bool largest,
              bool sorted) {
  const int64_t n = row_length(rows), count = row_count(rows);
  EMBER_DISPATCH_REAL_TYPES(rows.dtype(), "topk", [&] {
    topk_rows<scalar_t>(rows.data_ptr<scalar_t>(), values.data_ptr<scalar_t>(),
                        indices.data_ptr<int64_t>(), count, n, k, largest, sorted);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(sort_stub, kCPU, cpu::sort_cpu);
EMBER_REGISTER_KERNEL(topk_stub, kCPU, cpu::topk_cpu);

}  // namespace ember
