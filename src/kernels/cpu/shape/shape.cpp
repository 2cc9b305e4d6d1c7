// The CPU kernels of the shape ops that move whole elements: the index-map copy behind flip,
// roll, repeat, tile, repeat_interleave and the non-constant pads (Note [Index-map copies] in
// src/ops/shape/shape_ops.cpp), and the index tuples of tril/triu_indices and combinations.
#include "kernels/stubs/shape.h"

#include <algorithm>
#include <cstring>

#include "core/parallel_internal.h"
#include "ember/error.h"

namespace ember {

EMBER_DEFINE_KERNEL(map_copy_stub);
EMBER_DEFINE_KERNEL(triangle_indices_stub);
EMBER_DEFINE_KERNEL(combinations_indices_stub);
EMBER_DEFINE_KERNEL(combinations_gather_stub);

namespace cpu {
namespace {

struct Segment {
  int64_t out_start, src_start, len, step;  // step is +1 or -1
};

std::vector<Segment> segments_of(const std::vector<int64_t>& map) {
  std::vector<Segment> segs;
  const int64_t n = int64_t(map.size());
  int64_t j = 0;
  while (j < n) {
    int64_t step = 1;
    if (j + 1 < n && map[size_t(j + 1)] == map[size_t(j)] - 1) step = -1;
    int64_t k = j + 1;
    while (k < n && map[size_t(k)] == map[size_t(k - 1)] + step) ++k;
    segs.push_back({j, map[size_t(j)], k - j, step});
    j = k;
  }
  return segs;
}

template <size_t N>
struct alignas(N <= 8 ? N : 8) Bytes {
  char b[N];
};

/// Copies `len` elements of `item` bytes from src, src - 1, ... (reversed) to dst.
void copy_reversed(char* dst, const char* src, int64_t len, size_t item) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(src);
    for (int64_t e = 0; e < len; ++e) d[e] = s[-e];
  };
  switch (item) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    case 8:
      return run(uint64_t{});
    default:
      return run(Bytes<16>{});
  }
}

// Note [Index-map copies] in src/ops/shape/shape_ops.cpp: whole runs per segment of the last mapped
// dim's map, never per-element index arithmetic.
void map_copy_cpu(Tensor& out, const Tensor& src, const std::vector<std::vector<int64_t>>& maps) {
  const IntArrayRef out_sizes = out.sizes();
  const int64_t nd = int64_t(out_sizes.size());
  int64_t last = -1;
  for (int64_t d = 0; d < nd; ++d)
    if (d < int64_t(maps.size()) && !maps[size_t(d)].empty()) last = d;
  const size_t item = src.itemsize();
  int64_t inner = 1;
  for (int64_t d = last + 1; d < nd; ++d) inner *= out_sizes[size_t(d)];
  const int64_t n_last = out_sizes[size_t(last)];
  const int64_t prefix = out.numel() / (inner * n_last);
  const std::vector<Segment> segs = segments_of(maps[size_t(last)]);
  const char* sbase = static_cast<const char*>(src.data_ptr());
  char* obase = static_cast<char*>(out.data_ptr());
  const IntArrayRef sstr = src.strides();
  const size_t run_bytes = size_t(inner) * item;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n_last * inner));
  parallel_for(0, prefix, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      // Source offset of this row prefix: mapped coordinates of dims [0, last).
      int64_t off = 0, rem = p;
      for (int64_t d = last - 1; d >= 0; --d) {
        const int64_t sz = out_sizes[size_t(d)];
        const int64_t c = rem % sz;
        rem /= sz;
        const bool mapped = d < int64_t(maps.size()) && !maps[size_t(d)].empty();
        off += (mapped ? maps[size_t(d)][size_t(c)] : c) * sstr[size_t(d)];
      }
      const char* s_row = sbase + size_t(off) * item;
      char* o_row = obase + size_t(p * n_last) * run_bytes;
      for (const Segment& sg : segs) {
        char* o = o_row + size_t(sg.out_start) * run_bytes;
        const char* s = s_row + size_t(sg.src_start * sstr[size_t(last)]) * item;
        if (sg.step > 0) {
          std::memcpy(o, s, size_t(sg.len) * run_bytes);
        } else if (inner == 1) {
          copy_reversed(o, s, sg.len, item);
        } else {
          for (int64_t e = 0; e < sg.len; ++e)
            std::memcpy(o + size_t(e) * run_bytes, s - size_t(e) * run_bytes, run_bytes);
        }
      }
    }
  });
}

void triangle_indices_cpu(Tensor& out, int64_t first, int64_t last, int64_t col, int64_t offset,
                          bool lower) {
  const int64_t total = out.size(1);
  int64_t* r = out.data_ptr<int64_t>();
  int64_t* c = r + total;
  int64_t n = 0;
  for (int64_t i = first; i < last && n < total; ++i) {
    const int64_t b = lower ? 0 : std::clamp<int64_t>(i + offset, 0, col);
    const int64_t e = lower ? std::clamp<int64_t>(i + offset + 1, 0, col) : col;
    for (int64_t j = b; j < e; ++j, ++n) {
      r[n] = i;
      c[n] = j;
    }
  }
}

void combinations_indices_cpu(Tensor& ix, int64_t n, int64_t r, bool with_replacement) {
  const int64_t count = ix.numel() / r;
  int64_t* idx = ix.data_ptr<int64_t>();
  std::vector<int64_t> cur(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) cur[size_t(i)] = with_replacement ? 0 : i;
  for (int64_t t = 0; t < count; ++t) {
    std::copy(cur.begin(), cur.end(), idx + t * r);
    int64_t i = r - 1;
    while (i >= 0 && cur[size_t(i)] == (with_replacement ? n - 1 : n - r + i)) --i;
    if (i < 0) break;
    ++cur[size_t(i)];
    for (int64_t j = i + 1; j < r; ++j)
      cur[size_t(j)] = with_replacement ? cur[size_t(i)] : cur[size_t(j - 1)] + 1;
  }
}

void combinations_gather_cpu(Tensor& out, const Tensor& src, const Tensor& idx_t) {
  const size_t item = src.itemsize();
  const char* s = static_cast<const char*>(src.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  const int64_t* idx = idx_t.data_ptr<int64_t>();
  for (int64_t k = 0; k < out.numel(); ++k)
    std::memcpy(o + k * item, s + size_t(idx[k]) * item, item);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(map_copy_stub, kCPU, cpu::map_copy_cpu);
EMBER_REGISTER_KERNEL(triangle_indices_stub, kCPU, cpu::triangle_indices_cpu);
EMBER_REGISTER_KERNEL(combinations_indices_stub, kCPU, cpu::combinations_indices_cpu);
EMBER_REGISTER_KERNEL(combinations_gather_stub, kCPU, cpu::combinations_gather_cpu);

}  // namespace ember
