// sort / argsort / msort / topk. Each slice along `dim` is copied into a contiguous buffer of
// (order-preserving key, index) pairs and sorted there; slices run in parallel.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/record.h"
#include "core/parallel_internal.h"
#include "core/tensor_util.h"
#include "ember/dispatch_type.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/sort.h"
#include "ops/call_path.h"
#include "ops/sort_internal.h"

namespace ember {
namespace sort_detail {

Rows to_rows(const Tensor& x, int64_t dim) {
  Rows r;
  Tensor m = x.dim() == 0 ? x.reshape({1}) : x.movedim(dim, -1);
  r.data = m.resolve_conj().contiguous();
  r.n = m.size(-1);
  r.rows = r.n == 0 ? 0 : m.numel() / r.n;
  r.moved.assign(m.sizes());
  return r;
}

Tensor from_rows(const Tensor& y, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return y.reshape({});
  return y.movedim(-1, dim).contiguous();
}

Tensor reduced_from_rows(const Tensor& y, const Tensor& x, int64_t dim, bool keepdim) {
  // y has the moved shape without its last dim
  if (x.dim() == 0) return y.reshape({});
  Tensor r = y.unsqueeze(-1).movedim(-1, dim);
  return keepdim ? r.contiguous() : r.squeeze(dim).contiguous();
}

}  // namespace sort_detail

namespace {

using namespace sort_detail;

// Note [Sort keys]
// Every sortable dtype maps to an unsigned key whose integer order is PyTorch's order: signed
// integers flip the sign bit, floats flip all bits of negatives and the sign bit of the rest,
// -0.0 becomes +0.0 (they compare equal) and every NaN becomes the largest key (NaN sorts last,
// all NaNs equal). Descending order sorts ~key. A stable LSD radix sort over the key bytes then
// gives PyTorch's stable order, which is also its order for unstable sorts of short slices.

template <class T>
KeyOf<T> sort_key(T v) {
  using K = KeyOf<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return K(v);
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>)
      return K(U(v) ^ (U(1) << (sizeof(T) * 8 - 1)));
    else
      return K(v);
  } else {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    F f = F(v);
    if (std::isnan(f)) return ~K(0);
    if (f == 0) f = 0;
    K b = std::bit_cast<K>(f);
    constexpr K sign = K(1) << (sizeof(K) * 8 - 1);
    return (b & sign) ? ~b : (b | sign);
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

void check_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined(), "[", op, "] input tensor is undefined");
  EMBER_CHECK(x.is_cpu(), "[", op, "] only CPU tensors are supported, got ", x.device().str());
}

/// A 0-dim input is its own sorted result / top-1 at index 0 (PyTorch returns it before any
/// dtype check, so a 0-dim bool or complex input works there too).
std::tuple<Tensor, Tensor> scalar_result(const Tensor& self) {
  return {self.clone(), zeros(IntArrayRef{}, TensorOptions().dtype(kLong))};
}

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, int64_t dim, bool descending,
                                     const char* op) {
  check_input(self, op);
  dim = wrap_dim(dim, self.dim(), op);
  if (self.dim() == 0) return scalar_result(self);
  EMBER_CHECK(!self.is_complex(), "[", op, "] \"", op, "\" not implemented for '",
              toString(self.dtype()), "'");
  Rows r = to_rows(self, dim);
  EMBER_CHECK(r.n <= int64_t(UINT32_MAX), "[", op,
              "] slices longer than 2^32 elements are not "
              "supported, got ",
              r.n);
  Tensor v = empty_tensor(r.moved, self.dtype());
  Tensor i = empty_tensor(r.moved, kLong);
  if (r.rows > 0) {
    EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), op, [&] {
      sort_rows<scalar_t>(r.data.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(),
                          i.data_ptr<int64_t>(), r.rows, r.n, descending);
    });
  }
  return {from_rows(v, self, dim), from_rows(i, self, dim)};
}

/// PyTorch's topk order: NaN counts as the largest value; ties fall where the selection
/// algorithm leaves them (the same algorithms on the same comparisons: partial sort for small
/// k, else nth_element plus a sort of the first k - 1).
template <class T>
void topk_rows(const T* x, T* vo, int64_t* io, int64_t rows, int64_t n, int64_t k, bool largest,
               bool sorted) {
  using A = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
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

/// Records `values` = self gathered at `indices` along `dim` (indices of the input's rank when
/// keepdim): the gradient goes back to those positions (PyTorch's
/// value_selecting_reduction_backward), the tangent is gathered from them.
void record_selected(autograd::OpRecorder& rec, const Tensor& self, const Tensor& values,
                     const Tensor& indices, int64_t dim, bool keepdim) {
  rec.args(dim, keepdim, self.sizes(), self.dim() == 0);
  rec.record(
      values,
      [](autograd::VjpCtx& c) {
        const int64_t dim = c.args().i(0);
        const bool keepdim = c.args().b(1), scalar = c.args().b(3);
        const std::vector<int64_t>& sizes = c.args().ints(2);
        if (scalar) return autograd::variable_list{c.grads[0]};
        Tensor g = keepdim ? c.grads[0] : c.grads[0].unsqueeze(dim);
        Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
        return autograd::variable_list{zeros(sizes, g.options()).scatter(dim, i, g)};
      },
      {indices},
      [](autograd::JvpCtx& c) {
        const int64_t dim = c.args().i(0);
        const bool keepdim = c.args().b(1), scalar = c.args().b(3);
        if (scalar) return autograd::variable_list{c.tangent_or_zeros(0)};
        Tensor i = keepdim ? c.saved[0] : c.saved[0].unsqueeze(dim);
        Tensor t = c.tangent_or_zeros(0).gather(dim, i);
        return autograd::variable_list{keepdim ? t : t.squeeze(dim)};
      });
}

std::tuple<Tensor, Tensor> sort_rec(const Tensor& self, int64_t dim, bool descending,
                                    const char* op) {
  autograd::OpRecorder rec(op, {self});
  auto [v, i] = sort_impl(self, dim, descending, op);
  if (rec) record_selected(rec, self, v, i, wrap_dim(dim, self.dim(), op), true);
  return {v, i};
}

std::tuple<Tensor, Tensor> topk_impl(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                     bool sorted);
}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  EMBER_OP(sort, self, dim, descending);
  return sort_rec(self, dim, descending, "sort");
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> /*stable*/, int64_t dim,
                                bool descending) {
  EMBER_OP(sort_1, self, dim, descending);
  return sort_rec(self, dim, descending, "sort");  // always stable (Note [Sort keys])
}
std::tuple<Tensor&, Tensor&> sort_out(Tensor& values, Tensor& indices, const Tensor& self,
                                      int64_t dim, bool descending) {
  EMBER_OP(sort_out, values, indices, self, dim, descending);
  autograd::check_out_not_differentiable("sort", {self});
  auto [v, i] = sort_impl(self, dim, descending, "sort");
  assign_out(values, v, "sort");
  assign_out(indices, i, "sort");
  return {values, indices};
}
Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  EMBER_OP(argsort, self, dim, descending);
  return std::get<1>(sort_impl(self, dim, descending, "argsort"));
}
Tensor argsort(const Tensor& self, bool /*stable*/, int64_t dim, bool descending) {
  EMBER_OP(argsort_1, self, dim, descending);
  return std::get<1>(sort_impl(self, dim, descending, "argsort"));
}
Tensor msort(const Tensor& self) {
  EMBER_OP(msort, self);
  return std::get<0>(sort_rec(self, 0, false, "msort"));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  EMBER_OP(topk, self, k, dim, largest, sorted);
  autograd::OpRecorder rec("topk", {self});
  auto [v, i] = topk_impl(self, k, dim, largest, sorted);
  if (rec) record_selected(rec, self, v, i, wrap_dim(dim, self.dim(), "topk"), true);
  return {v, i};
}

namespace {
std::tuple<Tensor, Tensor> topk_impl(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                     bool sorted) {
  const char* op = "topk";
  EMBER_CHECK(self.defined(), "[", op, "] input tensor is undefined");
  EMBER_CHECK(self.is_cpu(), "[", op, "] only CPU tensors are supported");
  dim = wrap_dim(dim, self.dim(), op);
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  EMBER_CHECK(k >= 0 && k <= n, "[", op, "] selected index k out of range: k = ", k,
              ", size of dim ", dim, " = ", n);
  if (self.dim() == 0) return scalar_result(self);
  EMBER_CHECK(self.dtype() != kBool && !self.is_complex(), "[", op,
              "] \"topk_cpu\" not "
              "implemented for '",
              toString(self.dtype()), "'");
  Rows r = to_rows(self, dim);
  DimVector shape = r.moved;
  shape.back() = k;
  Tensor v = empty_tensor(shape, self.dtype());
  Tensor i = empty_tensor(shape, kLong);
  if (r.rows > 0 && k > 0) {
    EMBER_DISPATCH_REAL_TYPES(self.dtype(), op, [&] {
      topk_rows<scalar_t>(r.data.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(),
                          i.data_ptr<int64_t>(), r.rows, r.n, k, largest, sorted);
    });
  }
  return {from_rows(v, self, dim), from_rows(i, self, dim)};
}
}  // namespace

std::tuple<Tensor&, Tensor&> topk_out(Tensor& values, Tensor& indices, const Tensor& self,
                                      int64_t k, int64_t dim, bool largest, bool sorted) {
  EMBER_OP(topk_out, values, indices, self, k, dim, largest, sorted);
  autograd::check_out_not_differentiable("topk", {self});
  auto [v, i] = topk(self, k, dim, largest, sorted);
  assign_out(values, v, "topk");
  assign_out(indices, i, "topk");
  return {values, indices};
}

namespace sort_detail {
void assign_out(Tensor& out, const Tensor& r, const char* op) {
  EMBER_CHECK(out.dtype() == r.dtype(), "[", op, "] expected out dtype ", dtype_name(r.dtype()),
              ", got ", dtype_name(out.dtype()));
  if (out.sizes() != r.sizes()) resize_output(out, r.sizes());
  out.copy_(r);
}
}  // namespace sort_detail

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return ember::sort(*this, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> stable, int64_t dim,
                                        bool descending) const {
  return ember::sort(*this, stable, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const {
  return ember::argsort(*this, dim, descending);
}
Tensor Tensor::msort() const { return ember::msort(*this); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}

}  // namespace ember
