// Shape ops that move whole elements around: tensor_split, flip, roll, rot90, repeat, tile,
// repeat_interleave, broadcast_to/broadcast_tensors, meshgrid, cartesian_prod, combinations and
// tril/triu_indices. Copies go through map_copy (Note [Index-map copies]).
#include <algorithm>
#include <limits>
#include <numeric>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "kernels/stubs/core.h"
#include "kernels/stubs/shape.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

// Note [Index-map copies]
// flip, roll, repeat, tile, repeat_interleave and the non-constant pads all build a contiguous
// output whose element at (i0, ..., in) is the input element at (m0[i0], ..., mn[in]) for one
// index map per dim (identity for most dims). map_copy does that in one pass (map_copy_stub): the
// dims after the last mapped dim form a contiguous run copied whole, and the last mapped dim's
// map is cut into segments where it steps by +1 or -1, so a roll or a pad copies a few long runs
// with memcpy per row and a flip of the last dim is one reversed loop, never per-element index
// arithmetic.
Tensor map_copy(const Tensor& x, IntArrayRef out_sizes,
                const std::vector<std::vector<int64_t>>& maps);

Tensor map_copy(const Tensor& x, IntArrayRef out_sizes,
                const std::vector<std::vector<int64_t>>& maps) {
  Tensor out = empty(out_sizes, x.options());
  if (out.numel() == 0) return out;
  const int64_t nd = int64_t(out_sizes.size());
  int64_t last = -1;
  for (int64_t d = 0; d < nd; ++d)
    if (d < int64_t(maps.size()) && !maps[size_t(d)].empty()) last = d;
  if (last < 0) return out.copy_(x);
  const Tensor src = x.resolve_conj().contiguous();
  map_copy_stub(out.device().type(), out, src, maps);
  return out;
}

// ---- tensor_split ----

namespace {

void check_split_input(const Tensor& self, const char* op) {
  EMBER_CHECK(self.dim() > 0, "[", op,
              "] expected at least a 1-dimensional tensor, but got a "
              "tensor with ",
              self.dim(), " dims");
}

}  // namespace

std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim) {
  EMBER_OP(tensor_split, self, sections, dim);
  check_split_input(self, "tensor_split");
  EMBER_CHECK(sections > 0, "[tensor_split] number of sections must be larger than 0, got ",
              sections);
  dim = wrap_dim(dim, self.dim(), "tensor_split");
  const int64_t n = self.size(dim);
  // Parts past the dim's size are empty views; a count far past it is a runaway request.
  EMBER_CHECK(sections <= std::max<int64_t>(n, int64_t(1) << 24), "[tensor_split] ", sections,
              " sections is more than the dimension size (", n, ") and 2^24");
  const int64_t base = n / sections, extra = n % sections;
  std::vector<Tensor> parts;
  parts.reserve(size_t(sections));
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t len = base + (i < extra ? 1 : 0);
    parts.push_back(self.slice(dim, start, start + len));
    start += len;
  }
  return parts;
}

std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim) {
  EMBER_OP(tensor_split_1, self, indices, dim);
  check_split_input(self, "tensor_split");
  dim = wrap_dim(dim, self.dim(), "tensor_split");
  std::vector<Tensor> parts;
  parts.reserve(indices.size() + 1);
  int64_t start = 0;
  for (int64_t idx : indices) {
    parts.push_back(self.slice(dim, start, idx));
    start = idx;
  }
  parts.push_back(self.slice(dim, start, self.size(dim)));
  return parts;
}

std::vector<Tensor> tensor_split(const Tensor& self, const Tensor& ios, int64_t dim) {
  EMBER_OP(tensor_split_2, self, ios, dim);
  check_split_input(self, "tensor_split");
  EMBER_CHECK(ios.is_cpu(), "[tensor_split] tensor_indices_or_sections must be on the CPU, got ",
              ios.device().str());
  EMBER_CHECK(ios.dtype() == kLong,
              "[tensor_split] expected tensor_indices_or_sections to have "
              "dtype of long, but got ",
              dtype_name(ios.dtype()));
  EMBER_CHECK(ios.dim() <= 1,
              "[tensor_split] expected tensor_indices_or_sections to be a "
              "zero-dimensional or one-dimensional tensor, but got a tensor with ",
              ios.dim(), " dims");
  const Tensor c = ios.contiguous();
  const std::vector<int64_t> v = int64_values_stub(c.device().type(), c);
  if (ios.dim() == 0) return tensor_split(self, v[0], dim);
  return tensor_split(self, IntArrayRef(v), dim);
}

// ---- flip, roll, rot90 ----

namespace {
Tensor flip_impl(const Tensor& self, IntArrayRef dims);
Tensor roll_impl(const Tensor& self, IntArrayRef shifts, IntArrayRef dims);
Tensor repeat_impl(const Tensor& self, IntArrayRef repeats);
}  // namespace

// flip is its own inverse: the gradient and the tangent are flipped the same way.
Tensor flip(const Tensor& self, IntArrayRef dims0) {
  EMBER_OP(flip, self, dims0);
  autograd::OpRecorder rec("flip", {self});
  Tensor out = flip_impl(self, dims0);
  if (rec) {
    rec.args(dims0);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          return autograd::variable_list{c.grads[0].flip(c.args().ints(0))};
        },
        {},
        [](autograd::JvpCtx& c) {
          return autograd::variable_list{c.tangent_or_zeros(0).flip(c.args().ints(0))};
        });
  }
  return out;
}

// roll: the gradient is rolled back by the opposite shifts.
Tensor roll(const Tensor& self, IntArrayRef shifts0, IntArrayRef dims0) {
  EMBER_OP(roll, self, shifts0, dims0);
  autograd::OpRecorder rec("roll", {self});
  Tensor out = roll_impl(self, shifts0, dims0);
  if (rec) {
    std::vector<int64_t> back;
    for (int64_t s : shifts0) back.push_back(-s);
    rec.args(dims0, shifts0, back);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const std::vector<int64_t>& dims = c.args().ints(0);
          const std::vector<int64_t>& back = c.args().ints(2);
          return autograd::variable_list{c.grads[0].roll(back, dims)};
        },
        {},
        [](autograd::JvpCtx& c) {
          const std::vector<int64_t>& dims = c.args().ints(0);
          const std::vector<int64_t>& shifts = c.args().ints(1);
          return autograd::variable_list{c.tangent_or_zeros(0).roll(shifts, dims)};
        });
  }
  return out;
}

// repeat: each input element is read once per tile, so the gradient sums over the tiles
// (the output viewed as [r0, s0, r1, s1, ...] summed over the r dims).
Tensor repeat(const Tensor& self, IntArrayRef repeats0) {
  EMBER_OP(repeat, self, repeats0);
  autograd::OpRecorder rec("repeat", {self});
  Tensor out = repeat_impl(self, repeats0);
  if (rec) {
    rec.args(repeats0, self.sizes());
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const std::vector<int64_t>& repeats = c.args().ints(0);
          const std::vector<int64_t>& sizes = c.args().ints(1);
          const Tensor& g = c.grads[0];
          const int64_t nd = int64_t(repeats.size()), sd = int64_t(sizes.size());
          if (g.numel() == 0) return autograd::variable_list{zeros(sizes, g.options())};
          std::vector<int64_t> split, red;
          for (int64_t i = 0; i < nd; ++i) {
            const int64_t s = i < nd - sd ? 1 : sizes[size_t(i - (nd - sd))];
            split.push_back(repeats[size_t(i)]);
            split.push_back(s);
            red.push_back(2 * i);
          }
          return autograd::variable_list{g.reshape(split).sum(red).reshape(sizes)};
        },
        {},
        [](autograd::JvpCtx& c) {
          return autograd::variable_list{c.tangent_or_zeros(0).repeat(c.args().ints(0))};
        });
  }
  return out;
}

namespace {
Tensor flip_impl(const Tensor& self, IntArrayRef dims) {
  const int64_t nd = self.dim();
  std::vector<std::vector<int64_t>> maps(size_t(std::max<int64_t>(nd, 1)));
  std::vector<bool> seen(size_t(std::max<int64_t>(nd, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd, "flip");
    EMBER_CHECK(!seen[size_t(w)], "[flip] dim ", w, " appears multiple times in the list of dims ",
                shape_str(dims));
    seen[size_t(w)] = true;
  }
  if (nd == 0) return self.clone();
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t n = self.size(d);
    if (!seen[size_t(d)] || n <= 1) continue;
    auto& m = maps[size_t(d)];
    m.resize(size_t(n));
    for (int64_t j = 0; j < n; ++j) m[size_t(j)] = n - 1 - j;
  }
  return map_copy(self, self.sizes(), maps);
}
}  // namespace

Tensor fliplr(const Tensor& self) {
  EMBER_OP(fliplr, self);
  EMBER_CHECK(self.dim() >= 2, "[fliplr] Input must be >= 2-d, got a tensor of shape ",
              shape_str(self.sizes()));
  return flip(self, {1});
}

Tensor flipud(const Tensor& self) {
  EMBER_OP(flipud, self);
  EMBER_CHECK(self.dim() >= 1, "[flipud] Input must be >= 1-d, got a 0-dim tensor");
  return flip(self, {0});
}

namespace {
Tensor roll_impl(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  EMBER_CHECK(!shifts.empty(), "[roll] `shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    return roll_impl(self.flatten(), shifts, {0}).view(self.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(),
              "[roll] shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  EMBER_CHECK_INDEX(self.dim() > 0, "[roll] Dimension specified as ", dims[0],
                    " but tensor has no dimensions");
  const int64_t nd = self.dim();
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(nd));
  std::vector<int64_t> total(size_t(nd), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    total[size_t(wrap_dim(dims[i], nd, "roll"))] += shifts[i];
  if (self.numel() == 0) return self.clone();
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t n = self.size(d);
    const int64_t s = ((total[size_t(d)] % n) + n) % n;
    if (s == 0) continue;
    auto& m = maps[size_t(d)];
    m.resize(size_t(n));
    for (int64_t j = 0; j < n; ++j) m[size_t(j)] = (j - s + n) % n;
  }
  return map_copy(self, self.sizes(), maps);
}
}  // namespace

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  EMBER_OP(rot90, self, k, dims);
  const int64_t nd = self.dim();
  EMBER_CHECK(dims.size() == 2,
              "[rot90] expected total rotation dims == 2, but got dims = ", dims.size());
  EMBER_CHECK(nd >= 2, "[rot90] expected total dims >= 2, but got total dims = ", nd);
  EMBER_CHECK(dims[0] != dims[1] && std::abs(dims[0] - dims[1]) != nd,
              "[rot90] expected "
              "rotation dims to be different, but got dim0 = ",
              dims[0], " and dim1 = ", dims[1]);
  EMBER_CHECK(dims[0] < nd && dims[0] >= -nd,
              "[rot90] Rotation dim0 out of range, dim0 = ", dims[0]);
  EMBER_CHECK(dims[1] < nd && dims[1] >= -nd,
              "[rot90] Rotation dim1 out of range, dim1 = ", dims[1]);
  k = ((k % 4) + 4) % 4;
  switch (k) {
    case 1:
      return flip(self, {dims[1]}).transpose(dims[0], dims[1]);
    case 2:
      return flip(self, dims);
    case 3:
      return flip(self, {dims[0]}).transpose(dims[0], dims[1]);
    default:
      return self.clone();
  }
}

// ---- repeat, tile, repeat_interleave ----

namespace {
Tensor repeat_impl(const Tensor& self, IntArrayRef repeats) {
  const int64_t nd = int64_t(repeats.size());
  EMBER_CHECK(nd >= self.dim(),
              "[repeat] Number of dimensions of repeat dims can not be smaller "
              "than number of dimensions of tensor (repeats ",
              shape_str(repeats), ", tensor ", shape_str(self.sizes()), ")");
  DimVector padded(static_cast<size_t>(nd), 1), out_sizes(static_cast<size_t>(nd));
  for (int64_t i = 0; i < self.dim(); ++i) padded[size_t(nd - self.dim() + i)] = self.size(i);
  for (int64_t i = 0; i < nd; ++i)
    EMBER_CHECK(
        !__builtin_mul_overflow(padded[size_t(i)], repeats[size_t(i)], &out_sizes[size_t(i)]),
        "[repeat] Storage size calculation overflowed with sizes=", shape_str(padded), " repeated ",
        shape_str(repeats));
  for (int64_t i = 0; i < nd; ++i) {
    EMBER_CHECK(out_sizes[size_t(i)] >= 0 && repeats[size_t(i)] >= 0,
                "[repeat] Trying to create "
                "tensor with negative dimension ",
                std::min(out_sizes[size_t(i)], repeats[size_t(i)]), ": ", shape_str(out_sizes));
  }
  // Checked before the index maps are built (Note [Checked storage sizes]).
  const int64_t numel = int64_t(checked_nbytes("repeat", out_sizes, 1));
  if (size_t(numel) * self.itemsize() > host_memory_bytes())
    throw_out_of_memory("repeat", size_t(numel) * self.itemsize());
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(nd));
  if (numel != 0) {
    for (int64_t i = 0; i < nd; ++i) {
      if (repeats[size_t(i)] == 1) continue;
      const int64_t n = padded[size_t(i)];
      auto& m = maps[size_t(i)];
      m.resize(size_t(out_sizes[size_t(i)]));
      for (int64_t j = 0; j < out_sizes[size_t(i)]; ++j) m[size_t(j)] = j % n;
    }
  }
  return map_copy(self.reshape(padded), out_sizes, maps);
}
}  // namespace

Tensor tile(const Tensor& self, IntArrayRef dims) {
  EMBER_OP(tile, self, dims);
  DimVector reps(dims);
  while (int64_t(reps.size()) < self.dim()) reps.insert(0, 1);
  return repeat(self, reps);
}

namespace {

/// Repeats slices of `self` along `dim` (nullopt: flattened) by per-index counts.
Tensor interleave(const Tensor& self, const std::vector<int64_t>& counts,
                  std::optional<int64_t> dim, std::optional<int64_t> output_size) {
  EMBER_CHECK_INDEX(!dim || self.dim() > 0, "[repeat_interleave] Dimension specified as ",
                    dim.value_or(0), " but tensor has no dimensions");
  Tensor x = dim ? self : self.flatten();
  const int64_t d = dim ? wrap_dim(*dim, self.dim(), "repeat_interleave") : 0;
  if (x.dim() == 0) x = x.reshape({1});
  const int64_t n = x.size(d);
  std::vector<int64_t> reps = counts;
  if (reps.size() == 1 && n != 1) reps.assign(size_t(n), counts[0]);
  EMBER_CHECK(int64_t(reps.size()) == n,
              "[repeat_interleave] repeats must have the same size as "
              "input along dim (",
              reps.size(), " repeats, size ", n, " along dim ", d, ")");
  int64_t total = 0;
  for (int64_t r : reps) {
    EMBER_CHECK(r >= 0, "[repeat_interleave] repeats can not be negative, got ", r);
    EMBER_CHECK(!__builtin_add_overflow(total, r, &total),
                "[repeat_interleave] Storage size calculation overflowed with repeats summing past "
                "2^63");
  }
  EMBER_CHECK(!output_size || *output_size == total,
              "[repeat_interleave] allocated size does not "
              "match required size (output_size ",
              output_size.value_or(0), ", required ", total, ")");
  DimVector out_sizes;
  out_sizes.assign(x.sizes());
  out_sizes[size_t(d)] = total;
  const size_t out_nbytes = checked_nbytes("repeat_interleave", out_sizes, x.itemsize());
  if (out_nbytes > host_memory_bytes()) throw_out_of_memory("repeat_interleave", out_nbytes);
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(x.dim()));
  auto& m = maps[size_t(d)];
  m.reserve(size_t(total));
  for (int64_t i = 0; i < n; ++i) m.insert(m.end(), size_t(reps[size_t(i)]), i);
  return map_copy(x, out_sizes, maps);
}

// repeat_interleave of a differentiable input: the output reads input slice map[j] at slice j
// along the dim, so the gradient is index_add-ed back (PyTorch's IndexSelectBackward).
Tensor interleave_rec(const Tensor& self, const std::vector<int64_t>& counts,
                      std::optional<int64_t> dim, std::optional<int64_t> output_size) {
  autograd::OpRecorder rec("repeat_interleave", {self});
  Tensor out = interleave(self, counts, dim, output_size);
  if (rec) {
    const int64_t d = dim ? wrap_dim(*dim, self.dim(), "repeat_interleave") : 0;
    const int64_t n = dim ? self.size(d) : self.numel();
    std::vector<int64_t> reps = counts;
    if (reps.size() == 1 && n != 1) reps.assign(size_t(n), counts[0]);
    std::vector<int64_t> map;
    for (int64_t i = 0; i < n; ++i) map.insert(map.end(), size_t(reps[size_t(i)]), i);
    const Tensor idx = tensor(map, TensorOptions(kLong)).reshape({int64_t(map.size())});
    rec.args(d, n, self.sizes(), !dim);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const int64_t d = c.args().i(0), n = c.args().i(1);
          const std::vector<int64_t>& sizes = c.args().ints(2);
          const bool flat = c.args().b(3);
          const Tensor& g = c.grads[0];
          std::vector<int64_t> xs = flat ? std::vector<int64_t>{n} : sizes;
          Tensor r = zeros(xs, g.options()).index_add(d, c.saved[0], g);
          return autograd::variable_list{r.reshape(sizes)};
        },
        {idx},
        [](autograd::JvpCtx& c) {
          const int64_t d = c.args().i(0);
          const bool flat = c.args().b(3);
          Tensor t = c.tangent_or_zeros(0);
          if (flat) t = t.reshape({-1});
          return autograd::variable_list{t.index_select(d, c.saved[0])};
        });
  }
  return out;
}

std::vector<int64_t> repeat_counts(const Tensor& repeats) {
  EMBER_CHECK(repeats.dim() <= 1,
              "[repeat_interleave] repeat_interleave only accept 1D vector as "
              "repeat, got shape ",
              shape_str(repeats.sizes()));
  EMBER_CHECK(repeats.dtype() == kLong || repeats.dtype() == kInt,
              "[repeat_interleave] "
              "\"repeat_interleave_cpu\" not implemented for '",
              dtype_name(repeats.dtype()), "' repeats");
  Tensor c = repeats.to(kLong).contiguous();
  return int64_values_stub(c.device().type(), c);
}

}  // namespace

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  EMBER_OP(repeat_interleave, self, repeats, dim, output_size);
  return interleave_rec(self, {repeats}, dim, output_size);
}

Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  EMBER_OP(repeat_interleave_1, self, repeats, dim, output_size);
  return interleave_rec(self, repeat_counts(repeats), dim, output_size);
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  EMBER_OP(repeat_interleave_2, repeats, output_size);
  EMBER_CHECK(repeats.dim() == 1,
              "[repeat_interleave] repeat_interleave only accept 1D vector as "
              "repeat, got shape ",
              shape_str(repeats.sizes()));
  std::vector<int64_t> counts = repeat_counts(repeats);
  Tensor idx =
      arange(int64_t(counts.size()), TensorOptions(repeats.dtype()).device(repeats.device()));
  return interleave(idx, counts, 0, output_size);
}

// ---- tril_indices, triu_indices ----

namespace {

Tensor triangle_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& opts,
                        bool lower, const char* op) {
  EMBER_CHECK(row >= 0, "[", op, "] row must be non-negative, got", row);
  EMBER_CHECK(col >= 0, "[", op, "] col must be non-negative, got", col);
  const ScalarType dt = opts.dtype_opt().value_or(kLong);
  EMBER_CHECK(dt == kLong || dt == kInt, "[", op, "] \"", op, "\" not implemented for '",
              dtype_name(dt), "'");
  // The count is a clamped arithmetic series, summed in closed form: a per-row pass would
  // allocate or loop `row` times before any size check (row = 2**62 must fail, not hang).
  // Row i holds j in [b_i, e_i): tril e_i = clamp(i + offset + 1, 0, col), b_i = 0; triu
  // b_i = clamp(i + offset, 0, col), e_i = col.
  const __int128 R = row, C = col, k = lower ? __int128(offset) + 1 : __int128(offset);
  // sum_{i<R} clamp(i + k, 0, C): rows before i0 give 0, rows from i1 on give C.
  const __int128 i0 = std::clamp<__int128>(-k, 0, R), i1 = std::clamp<__int128>(C - k, 0, R);
  const __int128 mid = i1 > i0 ? (i0 + i1 - 1 + 2 * k) * (i1 - i0) / 2 : 0;
  const __int128 clamped_sum = mid + (R - std::max(i0, i1)) * C;
  const __int128 total128 = lower ? clamped_sum : R * C - clamped_sum;
  EMBER_CHECK(total128 <= __int128(std::numeric_limits<int64_t>::max() / 16), "[", op,
              "] Storage size calculation overflowed with row=", row, ", col=", col,
              ", offset=", offset);
  const int64_t total = int64_t(total128);
  Tensor out = empty({2, total}, TensorOptions(kLong).device(opts.device()));
  // Only rows that hold at least one index are visited, so the loop is O(total).
  const int64_t first = lower ? int64_t(i0) : 0;
  const int64_t last = lower ? row : int64_t(std::clamp<__int128>(C - k, 0, R));
  triangle_indices_stub(out.device().type(), out, first, last, col, offset, lower);
  return dt == kLong ? out : out.to(dt);
}

}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& opts) {
  EMBER_OP(tril_indices, row, col, offset, opts);
  return triangle_indices(row, col, offset, opts, true, "tril_indices");
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& opts) {
  EMBER_OP(triu_indices, row, col, offset, opts);
  return triangle_indices(row, col, offset, opts, false, "triu_indices");
}

// ---- broadcasting, grids, products ----

Tensor broadcast_to(const Tensor& self, IntArrayRef size) {
  EMBER_OP(broadcast_to, self, size);
  return self.expand(size);
}

std::vector<Tensor> broadcast_tensors(ArrayRef<Tensor> tensors) {
  EMBER_OP(broadcast_tensors, tensors);
  std::vector<Tensor> out;
  if (tensors.empty()) return out;
  const DimVector shape = broadcast_all(tensors, "broadcast_tensors");
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.expand(shape));
  return out;
}

std::vector<Tensor> meshgrid(ArrayRef<Tensor> tensors, std::string_view indexing) {
  EMBER_OP(meshgrid, tensors, indexing);
  EMBER_CHECK(!tensors.empty(), "[meshgrid] expects a non-empty TensorList");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].dim() <= 1,
                "[meshgrid] Expected 0D or 1D tensor in the tensor list "
                "but got tensor ",
                i, " of shape ", shape_str(tensors[i].sizes()));
    EMBER_CHECK(tensors[i].dtype() == tensors[0].dtype(),
                "[meshgrid] expects all tensors to have "
                "the same dtype, got ",
                dtype_name(tensors[0].dtype()), " and ", dtype_name(tensors[i].dtype()));
    EMBER_CHECK(tensors[i].device() == tensors[0].device(),
                "[meshgrid] expects all tensors to "
                "have the same device");
  }
  EMBER_CHECK(indexing == "ij" || indexing == "xy",
              "[meshgrid] indexing must be one of \"xy\" "
              "or \"ij\", but received: ",
              indexing);
  const size_t n = tensors.size();
  // "xy" is "ij" with the first two inputs (and outputs) swapped.
  const bool swap = indexing == "xy" && n >= 2;
  std::vector<Tensor> ts(tensors.begin(), tensors.end());
  if (swap) std::swap(ts[0], ts[1]);
  DimVector shape(n);
  for (size_t i = 0; i < n; ++i) shape[i] = ts[i].numel();
  std::vector<Tensor> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    DimVector view(n, 1);
    view[i] = shape[i];
    out.push_back(ts[i].view(view).expand(shape));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

Tensor diff(const Tensor& self, int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  EMBER_OP(diff, self, n, dim, prepend, append);
  const char* op = "diff";
  EMBER_CHECK(self.dim() >= 1, "[", op, "] diff expects input to be at least one-dimensional");
  for (const auto* t : {&prepend, &append}) {
    EMBER_CHECK(!*t || (*t)->dim() == self.dim(), "[", op, "] diff expects prepend or append to ",
                "be the same dimension as input (input ", shape_str(self.sizes()), ", got ",
                shape_str((*t)->sizes()), ")");
  }
  dim = wrap_dim(dim, self.dim(), op);
  if (n <= 0) return self;  // as PyTorch: prepend/append are not applied either
  Tensor x = self;
  if (prepend || append) {
    std::vector<Tensor> parts;
    if (prepend) parts.push_back(*prepend);
    parts.push_back(self);
    if (append) parts.push_back(*append);
    x = cat(parts, dim);
  }
  // Each step is a difference of two overlapping views; the result shrinks by one per step.
  for (int64_t i = 0; i < n && x.size(dim) > 0; ++i) {
    const int64_t len = x.size(dim) - 1;
    const Tensor hi = x.narrow(dim, 1, len), lo = x.narrow(dim, 0, len);
    x = x.dtype() == kBool ? logical_xor(hi, lo) : sub(hi, lo);
  }
  return x;
}

namespace {
Tensor block_diag_impl(ArrayRef<Tensor> tensors);
}  // namespace

// block_diag: block i of the gradient, reshaped to input i's shape.
Tensor block_diag(ArrayRef<Tensor> tensors) {
  EMBER_OP(block_diag, tensors);
  const autograd::variable_list inputs(tensors.begin(), tensors.end());
  autograd::OpRecorder rec("block_diag", inputs);
  Tensor out = block_diag_impl(tensors);
  if (rec) {
    std::vector<std::vector<int64_t>> shapes;
    for (const Tensor& t : tensors) shapes.push_back(t.sizes().vec());
    rec.args(shapes);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const std::vector<std::vector<int64_t>>& shapes = c.args().int_lists(0);
          autograd::variable_list r;
          int64_t row = 0, col = 0;
          for (size_t i = 0; i < shapes.size(); ++i) {
            const auto& s = shapes[i];
            const int64_t h = s.size() == 2 ? s[0] : 1;
            const int64_t w = s.size() == 2 ? s[1] : (s.empty() ? 1 : s[0]);
            r.push_back(c.needs(i) ? c.grads[0].narrow(0, row, h).narrow(1, col, w).reshape(s)
                                   : Tensor());
            row += h;
            col += w;
          }
          return r;
        },
        {},
        [](autograd::JvpCtx& c) {
          const size_t n = c.args().int_lists(0).size();
          std::vector<Tensor> ts;
          for (size_t i = 0; i < n; ++i) ts.push_back(c.tangent_or_zeros(i));
          return autograd::variable_list{ember::block_diag(ts)};
        });
  }
  return out;
}

namespace {
Tensor block_diag_impl(ArrayRef<Tensor> tensors) {
  const char* op = "block_diag";
  ScalarType dt = tensors.empty() ? get_default_dtype() : tensors[0].dtype();
  int64_t rows = 0, cols = 0;
  std::vector<Tensor> blocks;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    EMBER_CHECK(t.dim() <= 2, "[", op, "] torch.block_diag: Input tensors must have 2 or fewer ",
                "dimensions. Input ", i, " has ", t.dim(), " dimensions");
    dt = promoteTypes(dt, t.dtype());
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, t.numel()}));
    rows += blocks.back().size(0);
    cols += blocks.back().size(1);
  }
  if (tensors.empty()) return zeros({1, 0}, TensorOptions(dt));
  Tensor out = zeros({rows, cols}, TensorOptions(dt));
  int64_t r = 0, c = 0;
  for (const Tensor& b : blocks) {
    out.narrow(0, r, b.size(0)).narrow(1, c, b.size(1)).copy_(b);
    r += b.size(0);
    c += b.size(1);
  }
  return out;
}
}  // namespace

Tensor Tensor::diff(int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
                    const std::optional<Tensor>& append) const {
  return ember::diff(*this, n, dim, prepend, append);
}

Tensor cartesian_prod(ArrayRef<Tensor> tensors) {
  EMBER_OP(cartesian_prod, tensors);
  EMBER_CHECK(!tensors.empty(), "[cartesian_prod] expects a non-empty TensorList");
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.dim() == 1, "[cartesian_prod] Expect a 1D vector, but got shape ",
                shape_str(t.sizes()));
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = meshgrid(tensors, "ij");
  for (Tensor& g : grids) g = g.flatten();
  return stack(grids, 1);
}

Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  EMBER_OP(combinations, self, r, with_replacement);
  EMBER_CHECK(self.dim() == 1, "[combinations] Expect a 1D vector, but got shape ",
              shape_str(self.sizes()));
  EMBER_CHECK(r >= 0, "[combinations] Expect a non-negative number, but got ", r);
  if (r == 0) return empty({0}, self.options());
  const int64_t n = self.size(0);
  // Count the tuples first (an overflow-checked binomial), so impossible sizes fail before any
  // buffer is sized from r: C(n, r), or C(n + r - 1, r) with replacement.
  const __int128 limit = std::numeric_limits<int64_t>::max() / 16;
  const __int128 top = with_replacement ? __int128(n) + r - 1 : __int128(n);
  __int128 cnt = (with_replacement ? n > 0 : n >= r) ? 1 : 0;
  const __int128 kk = cnt > 0 ? std::min<__int128>(r, top - r) : 0;
  for (__int128 i = 1; i <= kk && cnt * r <= limit; ++i) cnt = cnt * (top - kk + i) / i;
  EMBER_CHECK(cnt * r <= limit, "[combinations] Storage size calculation overflowed: the output ",
              "would hold over 2**59 elements (input of size ", n, ", r=", r, ")");
  const int64_t count = int64_t(cnt);
  // Index tuples in lexicographic order (itertools.combinations[_with_replacement]), written
  // into a tensor so the allocation goes through the checked storage rule.
  Tensor ix = empty({count * r}, TensorOptions(kLong));
  if (count > 0) combinations_indices_stub(ix.device().type(), ix, n, r, with_replacement);
  autograd::OpRecorder rec("combinations", {self});
  Tensor out = empty({count, r}, self.options());
  if (count > 0) {
    const Tensor src = self.resolve_conj().contiguous();
    combinations_gather_stub(out.device().type(), out, src, ix);
  }
  if (rec) {
    // Each output element reads one input element: gradients are index_add-ed back.
    rec.args(n, count, r);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          const int64_t n = c.args().i(0);
          const Tensor& g = c.grads[0];
          return autograd::variable_list{
              zeros({n}, g.options()).index_add(0, c.saved[0], g.reshape({-1}))};
        },
        {ix},
        [](autograd::JvpCtx& c) {
          const int64_t count = c.args().i(1), r = c.args().i(2);
          return autograd::variable_list{
              c.tangent_or_zeros(0).index_select(0, c.saved[0]).view({count, r})};
        });
  }
  return out;
}

// ---- Tensor methods ----

std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t dim) const {
  return ember::tensor_split(*this, sections, dim);
}
std::vector<Tensor> Tensor::tensor_split(IntArrayRef indices, int64_t dim) const {
  return ember::tensor_split(*this, indices, dim);
}
std::vector<Tensor> Tensor::tensor_split(const Tensor& ios, int64_t dim) const {
  return ember::tensor_split(*this, ios, dim);
}
Tensor Tensor::flip(IntArrayRef dims) const { return ember::flip(*this, dims); }
Tensor Tensor::fliplr() const { return ember::fliplr(*this); }
Tensor Tensor::flipud() const { return ember::flipud(*this); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const {
  return ember::roll(*this, shifts, dims);
}
Tensor Tensor::rot90(int64_t k, IntArrayRef dims) const { return ember::rot90(*this, k, dims); }
Tensor Tensor::repeat(IntArrayRef repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::tile(IntArrayRef dims) const { return ember::tile(*this, dims); }
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim,
                                 std::optional<int64_t> output_size) const {
  return ember::repeat_interleave(*this, repeats, dim, output_size);
}
Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim,
                                 std::optional<int64_t> output_size) const {
  return ember::repeat_interleave(*this, repeats, dim, output_size);
}
Tensor Tensor::broadcast_to(IntArrayRef size) const { return ember::broadcast_to(*this, size); }

}  // namespace ember
