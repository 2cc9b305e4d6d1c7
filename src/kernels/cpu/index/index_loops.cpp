// Loops of the indexing kernels. Copies move raw bytes (one instantiation per element size, not
// per dtype); only accumulation is typed. Note [Deterministic index accumulation]: a
// destination may be hit by several entries, so accumulating loops never split the entry
// range across threads; they split the dims that are not indexed (each destination then belongs
// to one thread and sums its entries in index order), and run serially when there are none.
#include "kernels/cpu/index/index_loops.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel_internal.h"
#include "core/scalar_traits.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "kernels/cpu/capability.h"

namespace ember::cpu {
namespace {

constexpr int64_t kGrain = 32768;

struct Bytes16 {
  uint64_t a, b;
};

template <size_t N>
struct ElemOf;
template <>
struct ElemOf<1> {
  using T = uint8_t;
};
template <>
struct ElemOf<2> {
  using T = uint16_t;
};
template <>
struct ElemOf<4> {
  using T = uint32_t;
};
template <>
struct ElemOf<8> {
  using T = uint64_t;
};
template <>
struct ElemOf<16> {
  using T = Bytes16;
};

template <class F>
void dispatch_size(size_t elsize, const F& f) {
  switch (elsize) {
    case 1:
      return f(ElemOf<1>::T{});
    case 2:
      return f(ElemOf<2>::T{});
    case 4:
      return f(ElemOf<4>::T{});
    case 8:
      return f(ElemOf<8>::T{});
    case 16:
      return f(ElemOf<16>::T{});
    default:
      EMBER_THROW(Error, "[index] unsupported element size ", elsize);
  }
}

/// Merges rest dims that are contiguous with each other in both strides; drops size-1 dims.
void coalesce(DimVector& sizes, DimVector& a, DimVector& b) {
  DimVector s, sa, sb;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!s.empty() && sa.back() == a[d] * sizes[d] && sb.back() == b[d] * sizes[d]) {
      s.back() *= sizes[d];
      sa.back() = a[d];
      sb.back() = b[d];
    } else {
      s.push_back(sizes[d]);
      sa.push_back(a[d]);
      sb.push_back(b[d]);
    }
  }
  sizes = s;
  a = sa;
  b = sb;
}

/// Calls f(offset_a, offset_b, count, stride_a, stride_b) for each innermost run of the rest
/// block (row-major order).
template <class F>
void for_each_run(const DimVector& sizes, const DimVector& sa, const DimVector& sb, const F& f) {
  const int64_t nd = int64_t(sizes.size());
  if (nd == 0) return f(int64_t(0), int64_t(0), int64_t(1), int64_t(0), int64_t(0));
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  const int64_t inner = sizes[nd - 1];
  int64_t outer = 1;
  for (int64_t d = 0; d < nd - 1; ++d) outer *= sizes[d];
  DimVector ctr(size_t(nd), 0);
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < outer; ++o) {
    f(oa, ob, inner, sa[nd - 1], sb[nd - 1]);
    for (int64_t d = nd - 2; d >= 0; --d) {
      if (++ctr[d] < sizes[d]) {
        oa += sa[d];
        ob += sb[d];
        break;
      }
      oa -= sa[d] * (sizes[d] - 1);
      ob -= sb[d] * (sizes[d] - 1);
      ctr[d] = 0;
    }
  }
}

int64_t numel_of(const DimVector& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

inline int64_t entry(const IndexSide& s, int64_t i) { return s.off ? s.off[i] : i * s.istride; }

/// Runs `body(l)` for sub-loops that split the entries (split_entries) or the first rest dim.
template <class F>
void run_split(IndexLoop& l, bool split_entries, const F& body) {
  const int64_t rest = numel_of(l.rest_sizes);
  if (l.n == 0 || rest == 0) return;
  const int64_t total = l.n * rest;
  if (split_entries) {
    parallel_for(0, l.n, std::max<int64_t>(1, kGrain / std::max<int64_t>(rest, 1)),
                 [&](int64_t b, int64_t e) {
                   IndexLoop s = l;
                   s.n = e - b;
                   if (s.dst.off)
                     s.dst.off += b;
                   else
                     s.dst.data += b * s.dst.istride * l.elsize;
                   if (s.src.off)
                     s.src.off += b;
                   else
                     s.src.data += b * s.src.istride * l.elsize;
                   body(s);
                 });
    return;
  }
  if (l.rest_sizes.empty() || total <= kGrain) return body(l);
  const int64_t d0 = l.rest_sizes[0];
  const int64_t per = std::max<int64_t>(1, rest / d0);
  parallel_for(0, d0, std::max<int64_t>(1, kGrain / std::max<int64_t>(per * l.n, 1)),
               [&](int64_t b, int64_t e) {
                 IndexLoop s = l;
                 s.rest_sizes[0] = e - b;
                 s.dst.data += b * l.dst.rest_strides[0] * int64_t(l.elsize);
                 if (s.src.data) s.src.data += b * l.src.rest_strides[0] * int64_t(l.elsize);
                 body(s);
               });
}

template <class T>
void copy_loop(const IndexLoop& l) {
  T* dst = reinterpret_cast<T*>(l.dst.data);
  const T* src = reinterpret_cast<const T*>(l.src.data);
  if (l.rest_sizes.empty()) {
    // One element per entry (a 1-D select): a tight loop keeps many random reads in flight.
    const int64_t* so = l.src.off;
    const int64_t* dof = l.dst.off;
    const int64_t ds = l.dst.istride, ss = l.src.istride;
    if (so && !dof) {
      for (int64_t i = 0; i < l.n; ++i) dst[i * ds] = src[so[i]];
    } else if (!so && dof) {
      for (int64_t i = 0; i < l.n; ++i) dst[dof[i]] = src[i * ss];
    } else {
      for (int64_t i = 0; i < l.n; ++i) dst[entry(l.dst, i)] = src[entry(l.src, i)];
    }
    return;
  }
  const bool rows =
      l.rest_sizes.size() == 1 && l.dst.rest_strides[0] == 1 && l.src.rest_strides[0] == 1;
  // When consecutive entries are closer in memory than consecutive rest elements (a select
  // along a trailing dim), walk the rest block outside and the entries inside: each pass then
  // reads and writes whole cache lines instead of one element per line.
  const size_t nr = l.rest_sizes.size();
  if (!rows && nr > 0 && l.n > 1 && l.dst.off == nullptr &&
      std::abs(l.dst.istride) < std::abs(l.dst.rest_strides[nr - 1])) {
    for_each_run(l.rest_sizes, l.dst.rest_strides, l.src.rest_strides,
                 [&](int64_t od, int64_t os, int64_t cnt, int64_t sd, int64_t ss) {
                   for (int64_t k = 0; k < cnt; ++k) {
                     T* dd = dst + od + k * sd;
                     const T* ps = src + os + k * ss;
                     for (int64_t i = 0; i < l.n; ++i) dd[entry(l.dst, i)] = ps[entry(l.src, i)];
                   }
                 });
    return;
  }
  for (int64_t i = 0; i < l.n; ++i) {
    T* d = dst + entry(l.dst, i);
    const T* s = src + entry(l.src, i);
    if (rows) {
      std::memcpy(d, s, size_t(l.rest_sizes[0]) * sizeof(T));
      continue;
    }
    for_each_run(l.rest_sizes, l.dst.rest_strides, l.src.rest_strides,
                 [&](int64_t od, int64_t os, int64_t cnt, int64_t sd, int64_t ss) {
                   T* dd = d + od;
                   const T* ps = s + os;
                   if (sd == 1 && ss == 1) {
                     for (int64_t k = 0; k < cnt; ++k) dd[k] = ps[k];
                   } else {
                     for (int64_t k = 0; k < cnt; ++k) dd[k * sd] = ps[k * ss];
                   }
                 });
  }
}

/// The type alpha is held in while accumulating into T.
template <class T>
using AlphaT = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class T>
T add_scaled(T a, T b, AlphaT<T> alpha, bool unit) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || (b && alpha);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(a) + (unit ? float(b) : alpha * float(b)));
  } else {
    return unit ? T(a + b) : T(a + alpha * b);
  }
}

}  // namespace

namespace {

template <class I>
void check_indices_impl(const I* p, int64_t n, int64_t size, bool wrap, const char* op, int64_t dim,
                        bool runtime_error) {
  const int64_t lo = wrap ? -size : 0;
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) ok &= (p[i] >= lo) & (p[i] < size);
  if (ok) return;
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] >= lo && p[i] < size) continue;
    std::string msg = detail::str_cat("[", op, "] index ", int64_t(p[i]),
                                      " is out of bounds for dimension ", dim, " with size ", size);
    if (runtime_error) throw Error(msg);
    throw IndexError(msg);
  }
}

}  // namespace

void check_indices(const int64_t* p, int64_t n, int64_t size, bool wrap, const char* op,
                   int64_t dim, bool runtime_error) {
  check_indices_impl(p, n, size, wrap, op, dim, runtime_error);
}

void check_indices(const int32_t* p, int64_t n, int64_t size, bool wrap, const char* op,
                   int64_t dim, bool runtime_error) {
  check_indices_impl(p, n, size, wrap, op, dim, runtime_error);
}

void index_copy_bytes(IndexLoop l) {
  coalesce(l.rest_sizes, l.dst.rest_strides, l.src.rest_strides);
  run_split(l, /*split_entries=*/true, [&](const IndexLoop& s) {
    dispatch_size(l.elsize, [&](auto t) { copy_loop<decltype(t)>(s); });
  });
}

void index_fill_bytes(IndexLoop l, const void* value) {
  l.src.rest_strides.assign(l.rest_sizes.size(), 0);
  l.src.off = nullptr;
  l.src.istride = 0;
  coalesce(l.rest_sizes, l.dst.rest_strides, l.src.rest_strides);
  run_split(l, true, [&](IndexLoop s) {
    s.src.data = const_cast<char*>(static_cast<const char*>(value));
    dispatch_size(l.elsize, [&](auto t) { copy_loop<decltype(t)>(s); });
  });
}

void index_accumulate(IndexLoop l, ScalarType dtype, const Scalar& alpha) {
  coalesce(l.rest_sizes, l.dst.rest_strides, l.src.rest_strides);
  // Entries may repeat only when the destination is addressed through offsets.
  run_split(l, /*split_entries=*/l.dst.off == nullptr, [&](const IndexLoop& s) {
    EMBER_DISPATCH_ALL_TYPES(dtype, "index_add", [&] {
      const AlphaT<scalar_t> a = alpha.to<AlphaT<scalar_t>>();
      const bool unit = alpha.toComplexDouble() == complex<double>(1, 0);
      auto* dst = reinterpret_cast<scalar_t*>(s.dst.data);
      const auto* src = reinterpret_cast<const scalar_t*>(s.src.data);
      for (int64_t i = 0; i < s.n; ++i) {
        scalar_t* d = dst + entry(s.dst, i);
        const scalar_t* p = src + entry(s.src, i);
        for_each_run(s.rest_sizes, s.dst.rest_strides, s.src.rest_strides,
                     [&](int64_t od, int64_t os, int64_t cnt, int64_t sd, int64_t ss) {
                       for (int64_t k = 0; k < cnt; ++k) {
                         d[od + k * sd] = add_scaled(d[od + k * sd], p[os + k * ss], a, unit);
                       }
                     });
      }
    });
  });
}

// ---- index_select ----

// Note [Fused index checks]
// index_select and gather check their indices inside the copy on the CPU, instead of in a pass
// of their own before it (which read the whole index once more: a third of the memory traffic
// of a 1-D select). The copy loops take the index in blocks of kCheckBlock entries, check a
// block while it is in L1 (a branch-free compare that vectorizes) and then copy it, so a bad
// index is found before anything is read through it (the 1-D loops check one block ahead of
// the copy, whose source prefetches then use checked indices only). On a bad block the loop stops
// and, after the threads have joined, the usual check over the whole index raises the usual error
// for the first bad index in order, so the message does not depend on the thread split. Positions
// before the bad block may have been written (PyTorch's CPU kernels also stop part-way); the
// index_select() and gather() results are fresh tensors, so only out= shows this.
namespace {

constexpr int64_t kCheckBlock = 512;

/// True when every index p[i * stride], i < n, lies in [0, size). x is in range when neither x
/// nor size - 1 - x has its sign bit set, so the whole block is ORed together and one sign bit
/// tested: plain OR/SUB that vectorizes (a compare-and-AND chain did not, and cost a fifth of a
/// 1-D select on one thread).
template <class I>
inline bool in_range(const I* p, int64_t n, int64_t size, int64_t stride = 1) {
  using U = std::make_unsigned_t<I>;
  constexpr int kSign = int(sizeof(U)) * 8 - 1;
  if (size <= 0) return n == 0;
  U acc = 0;
  if (size - 1 > int64_t(std::numeric_limits<I>::max())) {  // int32 indices, size >= 2^31
    for (int64_t i = 0; i < n; ++i) acc |= U(p[i * stride]);
    return (acc >> kSign) == 0;
  }
  const U lim = U(size - 1);
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) acc |= U(p[i]) | U(lim - U(p[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) acc |= U(p[i * stride]) | U(lim - U(p[i * stride]));
  }
  return (acc >> kSign) == 0;
}

/// How many entries ahead a 1-D select prefetches its source: its reads are random, and from
/// memory the out-of-order window alone keeps too few of them in flight on one thread.
constexpr int64_t kPrefetchAhead = 64;

/// Whether a 1-D select from `bytes` of source prefetches: only from sources larger than half the
/// last-level cache. A source in cache is read faster without (Zen 3, 1M int64 indices: from 1M
/// floats, 4 MiB, 1.6-1.9 ms without against 2.0-2.4 ms with; from 16M floats, 64 MiB, 9.4-11.1
/// ms with against 10.8-12.6 ms without).
bool prefetch_source(int64_t bytes) {
  static const int64_t limit = std::max<int64_t>(last_level_cache_bytes() / 2, int64_t(4) << 20);
  return bytes > limit;
}

/// dst[i * ds] = src[index[i] * ss] for a 1-D select; false on an out-of-range index. Blocks are
/// checked one ahead of the copy, so the prefetches only ever use checked indices.
template <class T, class I>
bool select_elements(T* dst, int64_t ds, const T* src, int64_t ss, const I* index, int64_t n,
                     int64_t size) {
  const bool prefetch = prefetch_source(size * ss * int64_t(sizeof(T)));
  int64_t checked = std::min(n, kCheckBlock);
  if (!in_range(index, checked, size)) return false;
  for (int64_t b = 0; b < n; b += kCheckBlock) {
    const int64_t e = std::min(n, b + kCheckBlock);
    const int64_t e2 = std::min(n, e + kCheckBlock);
    if (e2 > checked) {
      if (!in_range(index + checked, e2 - checked, size)) return false;
      checked = e2;
    }
    const int64_t pe = prefetch ? std::clamp(e2 - kPrefetchAhead, b, e) : b;  // [b, pe) prefetch
    int64_t i = b;
    if (ds == 1 && ss == 1) {
      for (; i < pe; ++i) {
        __builtin_prefetch(src + index[i + kPrefetchAhead]);
        dst[i] = src[index[i]];
      }
      for (; i < e; ++i) dst[i] = src[index[i]];
    } else {
      for (; i < pe; ++i) {
        __builtin_prefetch(src + int64_t(index[i + kPrefetchAhead]) * ss);
        dst[i * ds] = src[int64_t(index[i]) * ss];
      }
      for (; i < e; ++i) dst[i * ds] = src[int64_t(index[i]) * ss];
    }
  }
  return true;
}

}  // namespace

void index_select_checked(IndexLoop l, const void* index, bool int32, int64_t size, int64_t dim) {
  auto fail = [&] {
    if (int32) {
      check_indices(static_cast<const int32_t*>(index), l.n, size, false, "index_select", dim);
    } else {
      check_indices(static_cast<const int64_t*>(index), l.n, size, false, "index_select", dim);
    }
    EMBER_THROW(IndexError, "[index_select] index out of range for dimension ", dim, " with size ",
                size);
  };
  coalesce(l.rest_sizes, l.dst.rest_strides, l.src.rest_strides);
  const int64_t rest = numel_of(l.rest_sizes);
  if (l.n == 0) return;
  if (rest == 0) {
    // Nothing to copy, but the indices are still checked (as PyTorch).
    return int32 ? check_indices(static_cast<const int32_t*>(index), l.n, size, false,
                                 "index_select", dim)
                 : check_indices(static_cast<const int64_t*>(index), l.n, size, false,
                                 "index_select", dim);
  }
  std::atomic<bool> bad{false};
  if (l.rest_sizes.empty()) {
    // One element per entry: a tight loop keeps many random reads in flight.
    dispatch_size(l.elsize, [&](auto t) {
      using T = decltype(t);
      T* dst = reinterpret_cast<T*>(l.dst.data);
      const T* src = reinterpret_cast<const T*>(l.src.data);
      parallel_for(0, l.n, kGrain, [&](int64_t b, int64_t e) {
        const bool ok =
            int32 ? select_elements(dst + b * l.dst.istride, l.dst.istride, src, l.src.istride,
                                    static_cast<const int32_t*>(index) + b, e - b, size)
                  : select_elements(dst + b * l.dst.istride, l.dst.istride, src, l.src.istride,
                                    static_cast<const int64_t*>(index) + b, e - b, size);
        if (!ok) bad.store(true, std::memory_order_relaxed);
      });
    });
    if (bad.load()) fail();
    return;
  }
  if (l.rest_sizes.size() == 1 && l.dst.rest_strides[0] == 1 && l.src.rest_strides[0] == 1) {
    // Contiguous rows (a select along dim 0 of a 2-D tensor and the like): one memcpy per entry.
    const size_t row = size_t(rest) * l.elsize;
    const int64_t dstep = l.dst.istride * int64_t(l.elsize),
                  sstep = l.src.istride * int64_t(l.elsize);
    parallel_for(0, l.n, std::max<int64_t>(1, kGrain / rest), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t ix =
            int32 ? static_cast<const int32_t*>(index)[i] : static_cast<const int64_t*>(index)[i];
        if (uint64_t(ix) >= uint64_t(size) || bad.load(std::memory_order_relaxed)) {
          bad.store(true, std::memory_order_relaxed);
          return;
        }
        std::memcpy(l.dst.data + i * dstep, l.src.data + ix * sstep, row);
      }
    });
    if (bad.load()) fail();
    return;
  }
  // Any other layout: the checked offsets in one pass, then the general loop.
  std::vector<int64_t> off(size_t(l.n));
  bool ok = true;
  for (int64_t i = 0; i < l.n; ++i) {
    const int64_t ix =
        int32 ? static_cast<const int32_t*>(index)[i] : static_cast<const int64_t*>(index)[i];
    ok &= uint64_t(ix) < uint64_t(size);
    off[size_t(i)] = ix * l.src.istride;
  }
  if (!ok) fail();
  l.src.off = off.data();
  index_copy_bytes(std::move(l));
}

// ---- gather / scatter ----

namespace {

/// One run of the index shape's last dim, positions [c0, c1): position c has dst offset
/// od + c * sd, src offset os + c * ss (the indexed side without its `dim` term) and index
/// irow[c * si]; the indexed side adds index * istride.
struct SgRow {
  int64_t od, os;
  const int64_t* irow;
  int64_t c0, c1, sd, ss, si, istride;
};

/// Iterates the index shape: for positions whose non-last coords are in [ob, oe) (linearised)
/// and whose last coord is in [cb, ce), calls row(SgRow) once per run of the last dim.
template <class F>
void sg_iterate_rows(const GatherLoop& l, bool index_dst, int64_t ob, int64_t oe, int64_t cb,
                     int64_t ce, const F& row) {
  const int64_t nd = int64_t(l.sizes.size());
  DimVector ds = l.dst_strides, ss = l.src_strides, is(size_t(nd), 0);
  {
    int64_t st = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      is[d] = st;
      st *= l.sizes[d];
    }
  }
  const int64_t istride = index_dst ? ds[l.dim] : ss[l.dim];
  (index_dst ? ds : ss)[l.dim] = 0;
  if (nd == 0) {
    row(SgRow{0, 0, l.index, 0, 1, 0, 0, 0, istride});
    return;
  }
  const int64_t last = nd - 1;
  DimVector ctr(size_t(nd), 0);
  int64_t rem = ob;
  int64_t od = 0, os = 0, oi = 0;
  for (int64_t d = last - 1; d >= 0; --d) {
    ctr[d] = rem % l.sizes[d];
    rem /= l.sizes[d];
    od += ctr[d] * ds[d];
    os += ctr[d] * ss[d];
    oi += ctr[d] * is[d];
  }
  const int64_t sdl = ds[last], ssl = ss[last], sil = is[last];
  for (int64_t o = ob; o < oe; ++o) {
    row(SgRow{od, os, l.index + oi, cb, ce, sdl, ssl, sil, istride});
    for (int64_t d = last - 1; d >= 0; --d) {
      if (++ctr[d] < l.sizes[d]) {
        od += ds[d];
        os += ss[d];
        oi += is[d];
        break;
      }
      od -= ds[d] * (l.sizes[d] - 1);
      os -= ss[d] * (l.sizes[d] - 1);
      oi -= is[d] * (l.sizes[d] - 1);
      ctr[d] = 0;
    }
  }
}

/// sg_iterate_rows calling f(dst_off, src_off, index * istride) for each position.
template <class F>
void sg_iterate(const GatherLoop& l, bool index_dst, int64_t ob, int64_t oe, int64_t cb, int64_t ce,
                const F& f) {
  sg_iterate_rows(l, index_dst, ob, oe, cb, ce, [&](const SgRow& r) {
    for (int64_t c = r.c0; c < r.c1; ++c)
      f(r.od + c * r.sd, r.os + c * r.ss, r.irow[c * r.si] * r.istride);
  });
}

/// Runs f over the index shape in parallel. With `deterministic`, the split never separates
/// two positions that can hit the same destination (they differ only in coord `dim`).
template <bool kRows = false, class F>
void sg_parallel(const GatherLoop& l, bool index_dst, bool deterministic, const F& f) {
  auto sg_iterate = [](const GatherLoop& l, bool index_dst, int64_t ob, int64_t oe, int64_t cb,
                       int64_t ce, const F& f) {
    if constexpr (kRows) {
      sg_iterate_rows(l, index_dst, ob, oe, cb, ce, f);
    } else {
      ::ember::cpu::sg_iterate(l, index_dst, ob, oe, cb, ce, f);
    }
  };
  const int64_t nd = int64_t(l.sizes.size());
  int64_t total = 1;
  for (int64_t s : l.sizes) total *= s;
  if (total == 0) return;
  if (nd == 0) return sg_iterate(l, index_dst, 0, 1, 0, 1, f);
  const int64_t inner = l.sizes[nd - 1];
  const int64_t outer = total / inner;
  // Positions are independent without `deterministic` (gather): few long rows split by column.
  if (!deterministic && outer < inner) {
    parallel_for(0, inner, std::max<int64_t>(1, kGrain / outer),
                 [&](int64_t b, int64_t e) { sg_iterate(l, index_dst, 0, outer, b, e, f); });
  } else if (!deterministic || l.dim == nd - 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrain / inner),
                 [&](int64_t b, int64_t e) { sg_iterate(l, index_dst, b, e, 0, inner, f); });
  } else {
    parallel_for(0, inner, std::max<int64_t>(1, kGrain / outer),
                 [&](int64_t b, int64_t e) { sg_iterate(l, index_dst, 0, outer, b, e, f); });
  }
}

template <class T>
void reduce_into(T& a, T b, ScatterOp op) {
  using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
  Acc x = Acc(a), y = Acc(b);
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ScatterOp::Assign:
        a = b;
        return;
      case ScatterOp::Sum:
      case ScatterOp::Max:
        a = x || y;
        return;
      case ScatterOp::Prod:
      case ScatterOp::Min:
        a = x && y;
        return;
    }
  } else {
    switch (op) {
      case ScatterOp::Assign:
        a = b;
        return;
      case ScatterOp::Sum:
        a = T(x + y);
        return;
      case ScatterOp::Prod:
        a = T(x * y);
        return;
      case ScatterOp::Max:
      case ScatterOp::Min:
        if constexpr (!is_complex_v<T>) {
          if constexpr (std::is_floating_point_v<Acc>) {
            if (std::isnan(y)) {
              a = b;
              return;
            }
            if (std::isnan(x)) return;
          }
          a = T(op == ScatterOp::Max ? std::max(x, y) : std::min(x, y));
        }
        return;
    }
  }
}

}  // namespace

void gather_kernel(const GatherLoop& l, size_t elsize) {
  // Runs of the last dim are checked and copied in blocks (Note [Fused index checks]); the
  // common layouts (unit-stride output and index, source unit-stride or indexed along the last
  // dim: the 1-D select loop) get loops without stride multiplies.
  std::atomic<bool> bad{false};
  const int64_t size = l.dim_size;
  dispatch_size(elsize, [&](auto t) {
    using T = decltype(t);
    T* dst = reinterpret_cast<T*>(l.dst);
    const T* src = reinterpret_cast<const T*>(l.src);
    sg_parallel<true>(l, /*index_dst=*/false, false, [&](const SgRow& r) {
      if (bad.load(std::memory_order_relaxed)) return;
      T* d = dst + r.od;
      const T* s = src + r.os;
      const int64_t* ix = r.irow;
      const int64_t is = r.istride;
      if (r.sd == 1 && r.si == 1 && r.ss == 0) {  // a 1-D gather: the select loop
        if (!select_elements(d + r.c0, 1, s, is, ix + r.c0, r.c1 - r.c0, size))
          bad.store(true, std::memory_order_relaxed);
        return;
      }
      for (int64_t b = r.c0; b < r.c1; b += kCheckBlock) {
        const int64_t e = std::min(r.c1, b + kCheckBlock);
        if (!in_range(ix + b * r.si, e - b, size, r.si)) {
          bad.store(true, std::memory_order_relaxed);
          return;
        }
        if (r.sd == 1 && r.si == 1 && r.ss == 1) {
          for (int64_t c = b; c < e; ++c) d[c] = s[c + ix[c] * is];
        } else {
          for (int64_t c = b; c < e; ++c) d[c * r.sd] = s[c * r.ss + ix[c * r.si] * is];
        }
      }
    });
  });
  if (bad.load()) {
    int64_t n = 1;
    for (int64_t v : l.sizes) n *= v;
    check_indices(l.index, n, size, false, "gather", l.dim, /*runtime_error=*/true);
    EMBER_THROW(Error, "[gather] index out of range for dimension ", l.dim, " with size ", size);
  }
}

void scatter_kernel(const GatherLoop& l, ScalarType dtype, ScatterOp op) {
  if (op == ScatterOp::Assign) {
    dispatch_size(elementSize(dtype), [&](auto t) {
      using T = decltype(t);
      T* dst = reinterpret_cast<T*>(l.dst);
      if (l.src) {
        const T* src = reinterpret_cast<const T*>(l.src);
        sg_parallel(l, true, true,
                    [&](int64_t od, int64_t os, int64_t ix) { dst[od + ix] = src[os]; });
      } else {
        const T v = *static_cast<const T*>(l.value);
        sg_parallel(l, true, true, [&](int64_t od, int64_t, int64_t ix) { dst[od + ix] = v; });
      }
    });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES(dtype, "scatter", [&] {
    scalar_t* dst = reinterpret_cast<scalar_t*>(l.dst);
    if (l.src) {
      const scalar_t* src = reinterpret_cast<const scalar_t*>(l.src);
      sg_parallel(l, true, true, [&](int64_t od, int64_t os, int64_t ix) {
        reduce_into(dst[od + ix], src[os], op);
      });
    } else {
      const scalar_t v = *static_cast<const scalar_t*>(l.value);
      sg_parallel(l, true, true,
                  [&](int64_t od, int64_t, int64_t ix) { reduce_into(dst[od + ix], v, op); });
    }
  });
}

}  // namespace ember::cpu
