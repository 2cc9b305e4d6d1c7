// CPU kernels of index_reduce and segment_reduce (kernels/stubs/tensor_extra.h). Both split
// work only across independent outputs (index_reduce: the dims that are not indexed;
// segment_reduce: the segments), so every output combines its inputs in index order and the
// result does not depend on the thread count. Half and bfloat16 accumulate in float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel_internal.h"
#include "core/scalar_traits.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "kernels/stubs/tensor_extra.h"

namespace ember {

EMBER_DEFINE_KERNEL(index_reduce_stub);
EMBER_DEFINE_KERNEL(segment_reduce_stub);

namespace cpu {
namespace {

constexpr int64_t kGrain = 32768;

template <class T>
using AccOf = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

/// a = a op b in the accumulation type A (bool: or / and). NaN wins Max and Min.
template <class A>
inline void combine(A& a, A b, ExtraReduce op) {
  if constexpr (std::is_same_v<A, bool>) {
    a = (op == ExtraReduce::Sum || op == ExtraReduce::Max) ? (a || b) : (a && b);
  } else {
    switch (op) {
      case ExtraReduce::Sum:
        a = A(a + b);
        return;
      case ExtraReduce::Prod:
        a = A(a * b);
        return;
      case ExtraReduce::Max:
      case ExtraReduce::Min:
        if constexpr (!is_complex_v<A>) {
          if constexpr (std::is_floating_point_v<A>) {
            if (std::isnan(a)) return;
            if (std::isnan(b)) {
              a = b;
              return;
            }
          }
          a = op == ExtraReduce::Max ? std::max(a, b) : std::min(a, b);
        }
        return;
    }
  }
}

/// Element offsets (in self and source) of the positions [b, e) of the non-indexed block.
void rest_offsets(IntArrayRef sizes, IntArrayRef sa, IntArrayRef sb, int64_t b, int64_t e,
                  std::vector<int64_t>& oa, std::vector<int64_t>& ob) {
  const int64_t nd = int64_t(sizes.size());
  oa.resize(size_t(e - b));
  ob.resize(size_t(e - b));
  DimVector ctr(size_t(nd), 0);
  int64_t rem = b, a = 0, c = 0;
  for (int64_t d = nd - 1; d >= 0; --d) {
    ctr[size_t(d)] = rem % sizes[size_t(d)];
    rem /= sizes[size_t(d)];
    a += ctr[size_t(d)] * sa[size_t(d)];
    c += ctr[size_t(d)] * sb[size_t(d)];
  }
  for (int64_t j = b; j < e; ++j) {
    oa[size_t(j - b)] = a;
    ob[size_t(j - b)] = c;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++ctr[size_t(d)] < sizes[size_t(d)]) {
        a += sa[size_t(d)];
        c += sb[size_t(d)];
        break;
      }
      a -= sa[size_t(d)] * (sizes[size_t(d)] - 1);
      c -= sb[size_t(d)] * (sizes[size_t(d)] - 1);
      ctr[size_t(d)] = 0;
    }
  }
}

void index_reduce_cpu(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                      ExtraReduce op) {
  const int64_t n = index.numel();
  if (n == 0 || self.numel() == 0) return;
  DimVector rs, sa, sb;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    rs.push_back(self.size(d));
    sa.push_back(self.stride(d));
    sb.push_back(source.stride(d));
  }
  // Merge rest dims that are contiguous with each other in both tensors; size-1 dims go.
  DimVector cs, ca, cb;
  for (size_t d = 0; d < rs.size(); ++d) {
    if (rs[d] == 1) continue;
    if (!cs.empty() && ca.back() == sa[d] * rs[d] && cb.back() == sb[d] * rs[d]) {
      cs.back() *= rs[d];
      ca.back() = sa[d];
      cb.back() = sb[d];
    } else {
      cs.push_back(rs[d]);
      ca.push_back(sa[d]);
      cb.push_back(sb[d]);
    }
  }
  rs = cs;
  sa = ca;
  sb = cb;
  int64_t rest = 1;
  for (int64_t s : rs) rest *= s;
  const int64_t* idx = index.data_ptr<int64_t>();
  const int64_t ds = self.stride(dim), ss = source.stride(dim);
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "index_reduce", [&] {
    using A = AccOf<scalar_t>;
    auto* dst = static_cast<scalar_t*>(self.data_ptr());
    const auto* src = static_cast<const scalar_t*>(source.data_ptr());
    if (rs.size() <= 1) {
      // One strided run per entry: a plain loop the compiler can vectorise.
      const int64_t ra = rs.empty() ? 0 : sa[0], rb = rs.empty() ? 0 : sb[0];
      parallel_for(0, rest, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
        for (int64_t i = 0; i < n; ++i) {
          scalar_t* d = dst + idx[i] * ds + b * ra;
          const scalar_t* s = src + i * ss + b * rb;
          for (int64_t j = 0; j < e - b; ++j) {
            A acc = A(d[j * ra]);
            combine<A>(acc, A(s[j * rb]), op);
            d[j * ra] = scalar_t(acc);
          }
        }
      });
      return;
    }
    parallel_for(0, rest, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
      std::vector<int64_t> oa, ob;
      rest_offsets(rs, sa, sb, b, e, oa, ob);
      const int64_t m = e - b;
      // Entries outside, the block inside: consecutive block elements are usually adjacent.
      for (int64_t i = 0; i < n; ++i) {
        scalar_t* d = dst + idx[i] * ds;
        const scalar_t* s = src + i * ss;
        for (int64_t j = 0; j < m; ++j) {
          A acc = A(d[oa[size_t(j)]]);
          combine<A>(acc, A(s[ob[size_t(j)]]), op);
          d[oa[size_t(j)]] = scalar_t(acc);
        }
      }
    });
  });
}

void segment_reduce_cpu(Tensor& out, const Tensor& data, const Tensor& offsets, int64_t axis,
                        ExtraReduce op, bool mean, const std::optional<Scalar>& initial) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.size(d);
  for (int64_t d = axis + 1; d < data.dim(); ++d) inner *= data.size(d);
  const int64_t len = data.size(axis);
  if (outer == 0 || inner == 0) return;
  const int64_t S = offsets.numel() / outer - 1;
  if (S <= 0) return;
  const int64_t* off = offsets.data_ptr<int64_t>();
  EMBER_DISPATCH_FLOATING_TYPES(data.dtype(), "segment_reduce", [&] {
    using A = AccOf<scalar_t>;
    const auto* src = static_cast<const scalar_t*>(data.data_ptr());
    auto* dst = static_cast<scalar_t*>(out.data_ptr());
    A identity = A(0);
    if (op == ExtraReduce::Prod) identity = A(1);
    if (op == ExtraReduce::Max) identity = -std::numeric_limits<A>::infinity();
    if (op == ExtraReduce::Min) identity = std::numeric_limits<A>::infinity();
    const A init = initial ? initial->to<A>() : identity;
    const int64_t work = std::max<int64_t>(1, len * inner / std::max<int64_t>(S, 1));
    parallel_for(0, outer * S, std::max<int64_t>(1, kGrain / work), [&](int64_t b, int64_t e) {
      std::vector<A> acc(static_cast<size_t>(inner));
      for (int64_t os = b; os < e; ++os) {
        const int64_t o = os / S, s = os % S;
        const int64_t lo = off[o * (S + 1) + s], hi = off[o * (S + 1) + s + 1];
        std::fill(acc.begin(), acc.end(), init);
        const scalar_t* base = src + o * len * inner;
        for (int64_t r = lo; r < hi; ++r) {
          const scalar_t* row = base + r * inner;
          for (int64_t k = 0; k < inner; ++k) combine<A>(acc[size_t(k)], A(row[k]), op);
        }
        scalar_t* o_row = dst + os * inner;
        for (int64_t k = 0; k < inner; ++k) {
          A v = acc[size_t(k)];
          if (mean) {
            if (hi > lo) {
              v = v / A(hi - lo);
            } else if (!initial) {
              v = std::numeric_limits<A>::quiet_NaN();
            }
          }
          o_row[k] = scalar_t(v);
        }
      }
    });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(index_reduce_stub, kCPU, cpu::index_reduce_cpu);
EMBER_REGISTER_KERNEL(segment_reduce_stub, kCPU, cpu::segment_reduce_cpu);

}  // namespace ember
