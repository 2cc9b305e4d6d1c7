// unique, unique_consecutive and unique_dim kernels (kernels/stubs/sort.h). Their outputs are
// allocated here: their sizes depend on the values.
//
// Note [Unique order]
// PyTorch 1.13's CPU unique collects the elements in a std::unordered_set, copies them out in
// the set's iteration order (sorted=False) or sorts that copy (sorted=True), and maps inputs to
// outputs through std::unordered_map. Both the unsorted order and the NaN results follow from
// that: every NaN is its own element, a NaN input gets inverse 0 and a NaN output count 0. We
// use the same containers with the same hashes (identity for integers, std::hash of the value
// for float/double, of the bit pattern for bfloat16), so the results are the same. bool is
// counted instead and always comes out sorted, as in PyTorch. Sorted unique of NaN-free
// non-bfloat16 input skips the hash set: a stable sort gives the same result, much faster.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/tensor_util.h"
#include "ember/dispatch_type.h"
#include "ember/half.h"
#include "kernels/cpu/sort/rows.h"
#include "kernels/stubs/sort.h"

namespace ember {

EMBER_DEFINE_KERNEL(unique_stub);
EMBER_DEFINE_KERNEL(unique_consecutive_stub);
EMBER_DEFINE_KERNEL(unique_dim_stub);

namespace cpu {
namespace {

using namespace sort_util;
using Result = std::tuple<Tensor, Tensor, Tensor>;

struct BF16Hash {
  size_t operator()(BFloat16 v) const noexcept { return std::hash<uint16_t>()(v.x); }
};
struct BF16Eq {
  bool operator()(BFloat16 a, BFloat16 b) const noexcept { return float(a) == float(b); }
};
// The standard hash and equality for C++ types, so the containers behave exactly as PyTorch's.
template <class T>
using Hash = std::conditional_t<std::is_same_v<T, BFloat16>, BF16Hash, std::hash<T>>;
template <class T>
using Eq = std::conditional_t<std::is_same_v<T, BFloat16>, BF16Eq, std::equal_to<T>>;

template <class F>
void dispatch_unique(ScalarType t, const char* op, const F& f) {
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(t, op, [&] {
    if constexpr (!std::is_same_v<scalar_t, Half>) f.template operator()<scalar_t>();
  });
}

/// bool: counted, not hashed, so the output is always [False, True] (those present).
Result unique_bool(const Tensor& x, bool inverse, bool counts) {
  const bool* in = x.data_ptr<bool>();
  const int64_t n = x.numel();
  int64_t num_true = 0;
  for (int64_t i = 0; i < n; ++i) num_true += in[i];
  const int64_t num_false = n - num_true;
  std::vector<bool> vals;
  std::vector<int64_t> cnts;
  if (num_false > 0) {
    vals.push_back(false);
    cnts.push_back(num_false);
  }
  if (num_true > 0) {
    vals.push_back(true);
    cnts.push_back(num_true);
  }
  const int64_t nu = int64_t(vals.size());
  Tensor out = empty_tensor({nu}, kBool);
  for (int64_t i = 0; i < nu; ++i) out.data_ptr<bool>()[i] = vals[size_t(i)];
  Tensor inv = empty_tensor({0}, kLong);
  Tensor cnt = empty_tensor({0}, kLong);
  if (inverse || counts) {
    inv = empty_tensor(x.sizes(), kLong);
    int64_t* ip = inv.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) ip[i] = (nu == 2 && in[i]) ? 1 : 0;
  }
  if (counts) {
    cnt = empty_tensor({nu}, kLong);
    std::copy(cnts.begin(), cnts.end(), cnt.data_ptr<int64_t>());
  }
  return {out, inv, cnt};
}

/// Sorted unique without hashing, for inputs where it gives the hash path's result: no NaN and
/// no bfloat16 (whose -0.0 and 0.0 hash apart). A stable sort keeps the first occurrence of
/// equal values (-0.0 and 0.0), as the set does.
template <class T>
Result unique_sorted(const Tensor& x, const T* in, int64_t n, bool inverse, bool counts) {
  std::vector<T> v(in, in + n);
  std::stable_sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  const int64_t nu = int64_t(v.size());
  Tensor out = empty_tensor({nu}, x.dtype());
  std::copy(v.begin(), v.end(), out.data_ptr<T>());
  Tensor inv = empty_tensor({0}, kLong);
  Tensor cnt = empty_tensor({0}, kLong);
  if (inverse || counts) {
    inv = empty_tensor(x.sizes(), kLong);
    int64_t* ip = inv.data_ptr<int64_t>();
    std::vector<int64_t> c(counts ? size_t(nu) : 0, 0);
    for (int64_t i = 0; i < n; ++i) {
      ip[i] = std::lower_bound(v.begin(), v.end(), in[i]) - v.begin();
      if (counts) ++c[size_t(ip[i])];
    }
    if (counts) {
      cnt = empty_tensor({nu}, kLong);
      std::copy(c.begin(), c.end(), cnt.data_ptr<int64_t>());
    }
  }
  return {out, inv, cnt};
}

template <class T>
Result unique_flat(const Tensor& x, bool sorted, bool inverse, bool counts) {
  const T* in = x.data_ptr<T>();
  const int64_t n = x.numel();
  if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) {
    if (sorted && std::none_of(in, in + n, [](T v) { return v != v; }))
      return unique_sorted<T>(x, in, n, inverse, counts);
  }
  std::unordered_set<T, Hash<T>, Eq<T>> set(in, in + n);
  std::vector<T> uniq(set.begin(), set.end());
  if (sorted)
    std::sort(uniq.begin(), uniq.end(), [](T a, T b) { return cmp_t<T>(a) < cmp_t<T>(b); });
  const int64_t nu = int64_t(uniq.size());
  Tensor out = empty_tensor({nu}, x.dtype());
  std::copy(uniq.begin(), uniq.end(), out.data_ptr<T>());
  Tensor inv = empty_tensor({0}, kLong);
  Tensor cnt = empty_tensor({0}, kLong);
  if (inverse || counts) {
    inv = empty_tensor(x.sizes(), kLong);
    int64_t* ip = inv.data_ptr<int64_t>();
    std::unordered_map<T, int64_t, Hash<T>, Eq<T>> where;
    where.reserve(size_t(nu));
    for (int64_t i = 0; i < nu; ++i) where[uniq[size_t(i)]] = i;
    for (int64_t i = 0; i < n; ++i) ip[i] = where[in[i]];
    if (counts) {
      std::unordered_map<T, int64_t, Hash<T>, Eq<T>> count;
      count.reserve(size_t(nu));
      for (int64_t i = 0; i < nu; ++i) count[uniq[size_t(i)]] = 0;
      for (int64_t i = 0; i < n; ++i) count[in[i]] += 1;
      cnt = empty_tensor({nu}, kLong);
      int64_t* cp = cnt.data_ptr<int64_t>();
      for (int64_t i = 0; i < nu; ++i) cp[i] = count[uniq[size_t(i)]];
    }
  }
  return {out, inv, cnt};
}

template <class T>
Result consecutive_flat(const Tensor& x, bool inverse, bool counts) {
  Tensor out = empty_tensor({0}, x.dtype());
  Tensor inv = inverse ? empty_tensor(x.sizes(), kLong) : empty_tensor({0}, kLong);
  Tensor cnt = empty_tensor({0}, kLong);
  const int64_t n = x.numel();
  if (n == 0) return {out, inv, cnt};
  const T* in = x.data_ptr<T>();
  std::vector<T> vals{in[0]};
  std::vector<int64_t> runs{1};
  int64_t* ip = inverse ? inv.data_ptr<int64_t>() : nullptr;
  if (ip) ip[0] = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (cmp_t<T>(in[i]) != cmp_t<T>(vals.back())) {  // NaN always starts a new run
      vals.push_back(in[i]);
      runs.push_back(0);
    }
    ++runs.back();
    if (ip) ip[i] = int64_t(vals.size()) - 1;
  }
  out = empty_tensor({int64_t(vals.size())}, x.dtype());
  std::copy(vals.begin(), vals.end(), out.data_ptr<T>());
  if (counts) {
    cnt = empty_tensor({int64_t(runs.size())}, kLong);
    std::copy(runs.begin(), runs.end(), cnt.data_ptr<int64_t>());
  }
  return {out, inv, cnt};
}

/// unique_dim / unique_consecutive(dim) on the slices along dim 0 of the contiguous `x`,
/// compared lexicographically; equality is elementwise ==, so a slice holding NaN is never equal
/// to another.
template <class T>
Result unique_slices(const Tensor& x, bool consecutive) {
  using A = cmp_t<T>;
  DimVector sizes;
  sizes.assign(x.sizes());
  const int64_t rows = sizes[0], width = rows == 0 ? 0 : x.numel() / rows;
  const T* p = x.data_ptr<T>();
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (!consecutive) {
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      for (int64_t i = 0; i < width; ++i) {
        const A l = A(p[a * width + i]), r = A(p[b * width + i]);
        if (l < r) return true;
        if (l > r) return false;
      }
      return false;
    });
  }
  auto equal = [&](int64_t a, int64_t b) {
    for (int64_t i = 0; i < width; ++i)
      if (A(p[a * width + i]) != A(p[b * width + i])) return false;
    return true;
  };
  Tensor inv = empty_tensor({rows}, kLong);
  int64_t* ip = inv.data_ptr<int64_t>();
  std::vector<int64_t> keep, runs;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t r = order[size_t(i)];
    if (keep.empty() || !equal(r, keep.back())) {
      keep.push_back(r);
      runs.push_back(0);
    }
    ++runs.back();
    ip[r] = int64_t(keep.size()) - 1;
  }
  const int64_t nu = int64_t(keep.size());
  sizes[0] = nu;
  Tensor out = empty_tensor(sizes, x.dtype());
  T* op = out.data_ptr<T>();
  for (int64_t i = 0; i < nu; ++i)
    std::copy(p + keep[size_t(i)] * width, p + (keep[size_t(i)] + 1) * width, op + i * width);
  Tensor cnt = empty_tensor({nu}, kLong);
  std::copy(runs.begin(), runs.end(), cnt.data_ptr<int64_t>());
  return {out, inv, cnt};
}

void unique_cpu(const Tensor& x, bool sorted, bool return_inverse, bool return_counts, Tensor& out,
                Tensor& inverse, Tensor& counts) {
  Result r;
  if (x.dtype() == kBool) {
    r = unique_bool(x, return_inverse, return_counts);
  } else {
    dispatch_unique(x.dtype(), "unique", [&]<class T>() {
      r = unique_flat<T>(x, sorted, return_inverse, return_counts);
    });
  }
  std::tie(out, inverse, counts) = r;
}

void unique_consecutive_cpu(const Tensor& x, bool return_inverse, bool return_counts, Tensor& out,
                            Tensor& inverse, Tensor& counts) {
  Result r;
  dispatch_unique(x.dtype(), "unique_consecutive",
                  [&]<class T>() { r = consecutive_flat<T>(x, return_inverse, return_counts); });
  std::tie(out, inverse, counts) = r;
}

void unique_dim_cpu(const Tensor& x, bool consecutive, Tensor& out, Tensor& inverse,
                    Tensor& counts) {
  Result r;
  dispatch_unique(x.dtype(), consecutive ? "unique_consecutive" : "unique_dim",
                  [&]<class T>() { r = unique_slices<T>(x, consecutive); });
  std::tie(out, inverse, counts) = r;
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(unique_stub, kCPU, cpu::unique_cpu);
EMBER_REGISTER_KERNEL(unique_consecutive_stub, kCPU, cpu::unique_consecutive_cpu);
EMBER_REGISTER_KERNEL(unique_dim_stub, kCPU, cpu::unique_dim_cpu);

}  // namespace ember
