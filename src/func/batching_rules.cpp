// Batching rules of the core families: reductions, scans, sorts, views, copies, joins,
// indexing, BLAS and the random in-place ops (Note [Batching rules]).

#include <algorithm>

#include "ember/blas.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "ember/sort.h"
#include "func/batching.h"
#include "ops/fft/fft_internal.h"

namespace ember::func {

namespace {

using Results = std::vector<Tensor>;
#define RULE(name) Results rule_##name(const BoxedCall& c, const TransformLevel& l)

const char* nm(const BoxedCall& c) { return op_info(c.op).id; }
int64_t rank0(const BoxedCall& c) { return arg_tensor(c, 0).dim(); }
Tensor fx(const BoxedCall& c, size_t k, const TransformLevel& l) {
  return front_or_expand(arg_tensor(c, k), l);
}
Results one(const Tensor& t, const TransformLevel& l) { return {wrap0(t, l)}; }
template <class Tuple>
Results two(const Tuple& t, const TransformLevel& l) {
  return {wrap0(std::get<0>(t), l), wrap0(std::get<1>(t), l)};
}

// A reduction over `dims` (None: every dim) of a batch-first tensor: the physical dims, with
// a 0-dim logical input reduced over a trailing dim of size one.
struct ReduceDims {
  Tensor x;
  std::vector<int64_t> dims;
  bool keepdim;
};
ReduceDims reduce_dims(const BoxedCall& c, const TransformLevel& l, std::optional<size_t> dim_arg,
                       bool keepdim) {
  const int64_t r = rank0(c);
  Tensor x = fx(c, 0, l);
  if (r == 0) return {x.unsqueeze(1), {1}, false};
  std::vector<int64_t> dims;
  if (dim_arg && !arg_none(c, *dim_arg)) dims = arg_ints(c, *dim_arg);
  if (dims.empty()) {
    for (int64_t d = 1; d <= r; ++d) dims.push_back(d);
    return {x, dims, keepdim};
  }
  return {x, phys_dims(dims, r, nm(c)), keepdim};
}
// Single-dim form (int dim).
int64_t pd1(const BoxedCall& c, size_t k) { return phys_dim(arg_int(c, k), rank0(c), nm(c)); }
// Flattens the logical dims: a full reduction becomes a reduction over dim 1.
Tensor flat(const BoxedCall& c, const TransformLevel& l) {
  Tensor x = fx(c, 0, l);
  return x.reshape({x.size(0), -1});
}

// --- reductions --------------------------------------------------------------------------------

RULE(sum) { return one(sum(flat(c, l), IntArrayRef{1}, false, arg_dtype(c, 1)), l); }
RULE(sum_1) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 2));
  return one(sum(r.x, r.dims, r.keepdim, arg_dtype(c, 3)), l);
}
RULE(nansum) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 2));
  return one(nansum(r.x, r.dims, r.keepdim, arg_dtype(c, 3)), l);
}
RULE(mean) { return one(mean(flat(c, l), IntArrayRef{1}, false, arg_dtype(c, 1)), l); }
RULE(mean_1) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 2));
  return one(mean(r.x, r.dims, r.keepdim, arg_dtype(c, 3)), l);
}
RULE(prod) { return one(prod(flat(c, l), 1, false, arg_dtype(c, 1)), l); }
RULE(prod_1) {
  if (rank0(c) == 0) return one(prod(fx(c, 0, l).unsqueeze(1), 1, false, arg_dtype(c, 3)), l);
  return one(prod(fx(c, 0, l), pd1(c, 1), arg_bool(c, 2), arg_dtype(c, 3)), l);
}
RULE(max) { return one(amax(flat(c, l), {1}), l); }
RULE(min) { return one(amin(flat(c, l), {1}), l); }
RULE(max_1) {
  if (rank0(c) == 0) return two(max(fx(c, 0, l).unsqueeze(1), 1, false), l);
  return two(max(fx(c, 0, l), pd1(c, 1), arg_bool(c, 2)), l);
}
RULE(min_1) {
  if (rank0(c) == 0) return two(min(fx(c, 0, l).unsqueeze(1), 1, false), l);
  return two(min(fx(c, 0, l), pd1(c, 1), arg_bool(c, 2)), l);
}
RULE(amax) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 2));
  return one(amax(r.x, r.dims, r.keepdim), l);
}
RULE(amin) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 2));
  return one(amin(r.x, r.dims, r.keepdim), l);
}
template <bool Max>
Results arg_extreme(const BoxedCall& c, const TransformLevel& l) {
  auto f = [](const Tensor& x, int64_t d, bool k) {
    return Max ? argmax(x, d, k) : argmin(x, d, k);
  };
  if (arg_none(c, 1) || rank0(c) == 0) {
    Tensor r = f(flat(c, l), 1, false);
    if (arg_bool(c, 2) && rank0(c) > 0) {
      for (int64_t d = 0; d < rank0(c); ++d) r = r.unsqueeze(1);
    }
    return one(r, l);
  }
  return one(f(fx(c, 0, l), pd1(c, 1), arg_bool(c, 2)), l);
}
RULE(argmax) { return arg_extreme<true>(c, l); }
RULE(argmin) { return arg_extreme<false>(c, l); }
RULE(all) { return one(all(flat(c, l), 1, false), l); }
RULE(any) { return one(any(flat(c, l), 1, false), l); }
RULE(all_1) {
  if (rank0(c) == 0) return one(all(fx(c, 0, l).unsqueeze(1), 1, false), l);
  return one(all(fx(c, 0, l), pd1(c, 1), arg_bool(c, 2)), l);
}
RULE(any_1) {
  if (rank0(c) == 0) return one(any(fx(c, 0, l).unsqueeze(1), 1, false), l);
  return one(any(fx(c, 0, l), pd1(c, 1), arg_bool(c, 2)), l);
}
RULE(logsumexp) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 2));
  return one(logsumexp(r.x, r.dims, r.keepdim), l);
}
RULE(count_nonzero) {
  auto r = reduce_dims(c, l, 1, false);
  return one(count_nonzero(r.x, r.dims), l);
}
RULE(var) { return one(var(flat(c, l), IntArrayRef{1}, arg_bool(c, 1), false), l); }
RULE(std) { return one(std(flat(c, l), IntArrayRef{1}, arg_bool(c, 1), false), l); }
RULE(var_1) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return one(var(r.x, r.dims, arg_bool(c, 2), r.keepdim), l);
}
RULE(std_1) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return one(std(r.x, r.dims, arg_bool(c, 2), r.keepdim), l);
}
RULE(var_2) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return one(var(r.x, r.dims, arg_opt_int(c, 2), r.keepdim), l);
}
RULE(std_2) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return one(std(r.x, r.dims, arg_opt_int(c, 2), r.keepdim), l);
}
RULE(var_mean) { return two(var_mean(flat(c, l), IntArrayRef{1}, arg_bool(c, 1), false), l); }
RULE(std_mean) { return two(std_mean(flat(c, l), IntArrayRef{1}, arg_bool(c, 1), false), l); }
RULE(var_mean_1) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return two(var_mean(r.x, r.dims, arg_bool(c, 2), r.keepdim), l);
}
RULE(std_mean_1) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return two(std_mean(r.x, r.dims, arg_bool(c, 2), r.keepdim), l);
}
RULE(var_mean_2) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return two(var_mean(r.x, r.dims, arg_opt_int(c, 2), r.keepdim), l);
}
RULE(std_mean_2) {
  auto r = reduce_dims(c, l, 1, arg_bool(c, 3));
  return two(std_mean(r.x, r.dims, arg_opt_int(c, 2), r.keepdim), l);
}
RULE(norm) {
  auto r = reduce_dims(c, l, 2, arg_bool(c, 3));
  std::optional<Scalar> p;
  if (!arg_none(c, 1)) p = arg_scalar(c, 1);
  return one(norm(r.x, p, r.dims, r.keepdim, arg_dtype(c, 4)), l);
}
RULE(norm_1) {
  auto r = reduce_dims(c, l, 2, arg_bool(c, 3));
  return one(norm(r.x, arg_str(c, 1), r.dims, r.keepdim, arg_dtype(c, 4)), l);
}

// --- scans, softmax, sorts -----------------------------------------------------------------

Tensor scalar_safe(const BoxedCall& c, const TransformLevel& l, int64_t& d) {
  Tensor x = fx(c, 0, l);
  if (rank0(c) == 0) {
    d = 1;
    return x.unsqueeze(1);
  }
  d = pd1(c, 1);
  return x;
}
Tensor unscalar(const BoxedCall& c, const Tensor& r) { return rank0(c) == 0 ? r.squeeze(1) : r; }
RULE(softmax) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  return one(unscalar(c, softmax(x, d, arg_dtype(c, 2))), l);
}
RULE(log_softmax) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  return one(unscalar(c, log_softmax(x, d, arg_dtype(c, 2))), l);
}
RULE(cumsum) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  return one(unscalar(c, cumsum(x, d, arg_dtype(c, 2))), l);
}
RULE(cumprod) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  return one(unscalar(c, cumprod(x, d, arg_dtype(c, 2))), l);
}
RULE(logcumsumexp) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  return one(unscalar(c, logcumsumexp(x, d)), l);
}
RULE(cummax) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  auto [v, i] = cummax(x, d);
  return {wrap0(unscalar(c, v), l), wrap0(unscalar(c, i), l)};
}
RULE(cummin) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  auto [v, i] = cummin(x, d);
  return {wrap0(unscalar(c, v), l), wrap0(unscalar(c, i), l)};
}
RULE(sort) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  auto [v, i] = sort(x, d, arg_bool(c, 2));
  return {wrap0(unscalar(c, v), l), wrap0(unscalar(c, i), l)};
}
RULE(msort) {
  if (rank0(c) == 0) return one(fx(c, 0, l).clone(), l);
  return one(std::get<0>(sort(fx(c, 0, l), 1, false)), l);
}
RULE(argsort) {
  int64_t d;
  Tensor x = scalar_safe(c, l, d);
  return one(unscalar(c, argsort(x, d, arg_bool(c, 2))), l);
}
RULE(topk) {
  Tensor x = fx(c, 0, l);
  int64_t d = 1;
  if (rank0(c) == 0)
    x = x.unsqueeze(1);
  else
    d = phys_dim(arg_int(c, 2), rank0(c), nm(c));
  auto [v, i] = topk(x, arg_int(c, 1), d, arg_bool(c, 3), arg_bool(c, 4));
  return {wrap0(unscalar(c, v), l), wrap0(unscalar(c, i), l)};
}
RULE(flip) { return one(flip(fx(c, 0, l), phys_dims(arg_ints(c, 1), rank0(c), nm(c))), l); }
RULE(roll) {
  std::vector<int64_t> dims = arg_ints(c, 2);
  Tensor x = fx(c, 0, l);
  if (dims.empty()) {
    // Roll of the flattened tensor: per batch element.
    Tensor f = x.reshape({x.size(0), -1});
    return one(roll(f, arg_ints(c, 1), {1}).reshape(x.sizes()), l);
  }
  return one(roll(x, arg_ints(c, 1), phys_dims(dims, rank0(c), nm(c))), l);
}

// --- views and copies ----------------------------------------------------------------------

// Sizes with the batch size in front.
std::vector<int64_t> with_batch(int64_t b, const std::vector<int64_t>& s) {
  std::vector<int64_t> r{b};
  r.insert(r.end(), s.begin(), s.end());
  return r;
}
RULE(view) {
  Tensor x = fx(c, 0, l);
  return one(x.view(with_batch(x.size(0), arg_ints(c, 1))), l);
}
RULE(reshape) {
  Tensor x = fx(c, 0, l);
  return one(x.reshape(with_batch(x.size(0), arg_ints(c, 1))), l);
}
RULE(permute) {
  std::vector<int64_t> p{0};
  for (int64_t d : phys_dims(arg_ints(c, 1), rank0(c), nm(c))) p.push_back(d);
  return one(fx(c, 0, l).permute(p), l);
}
RULE(transpose) {
  return one(fx(c, 0, l).transpose(pd1(c, 1), phys_dim(arg_int(c, 2), rank0(c), nm(c))), l);
}
RULE(t) {
  EMBER_CHECK(rank0(c) <= 2, "[t] t() expects a tensor with <= 2 dimensions, but self is ",
              rank0(c), "D");
  Tensor x = fx(c, 0, l);
  return one(rank0(c) < 2 ? x.view(x.sizes()) : x.transpose(1, 2), l);
}
RULE(movedim) {
  std::vector<int64_t> s = phys_dims(arg_ints(c, 1), rank0(c), nm(c));
  std::vector<int64_t> d = phys_dims(arg_ints(c, 2), rank0(c), nm(c));
  return one(fx(c, 0, l).movedim(s, d), l);
}
RULE(expand) {
  Tensor x = fx(c, 0, l);
  std::vector<int64_t> sizes = arg_ints(c, 1);
  const int64_t r = rank0(c);
  EMBER_CHECK(int64_t(sizes.size()) >= r, "[expand] the number of sizes provided (", sizes.size(),
              ") must be greater or equal to the number of dimensions in the "
              "tensor (",
              r, ")");
  for (int64_t k = r; k < int64_t(sizes.size()); ++k) x = x.unsqueeze(1);
  return one(x.expand(with_batch(x.size(0), sizes)), l);
}
RULE(squeeze) {
  Tensor w = arg_tensor(c, 0);
  Tensor x = fx(c, 0, l);
  for (int64_t d = w.dim(); d-- > 0;)
    if (w.size(d) == 1) x = x.squeeze(d + 1);
  return one(x, l);
}
RULE(squeeze_1) {
  if (rank0(c) == 0) return one(fx(c, 0, l).view(fx(c, 0, l).sizes()), l);
  return one(fx(c, 0, l).squeeze(pd1(c, 1)), l);
}
RULE(unsqueeze) {
  return one(fx(c, 0, l).unsqueeze(phys_dim(arg_int(c, 1), rank0(c) + 1, nm(c))), l);
}
RULE(slice) {
  std::optional<int64_t> start = arg_opt_int(c, 2), end = arg_opt_int(c, 3);
  return one(fx(c, 0, l).slice(pd1(c, 1), start, end, arg_int(c, 4)), l);
}
RULE(select) { return one(fx(c, 0, l).select(pd1(c, 1), arg_int(c, 2)), l); }
RULE(unfold) { return one(fx(c, 0, l).unfold(pd1(c, 1), arg_int(c, 2), arg_int(c, 3)), l); }
RULE(diagonal) {
  const int64_t r = rank0(c);
  return one(fx(c, 0, l).diagonal(arg_int(c, 1), phys_dim(arg_int(c, 2), r, nm(c)),
                                  phys_dim(arg_int(c, 3), r, nm(c))),
             l);
}
RULE(diag_embed) {
  const int64_t r = rank0(c) + 1;
  return one(diag_embed(fx(c, 0, l), arg_int(c, 1), phys_dim(arg_int(c, 2), r, nm(c)),
                        phys_dim(arg_int(c, 3), r, nm(c))),
             l);
}
RULE(diag) {
  Tensor x = fx(c, 0, l);
  if (rank0(c) == 1) return one(diag_embed(x, arg_int(c, 1), 1, 2), l);
  return one(x.diagonal(arg_int(c, 1), 1, 2), l);
}
RULE(trace) { return one(fx(c, 0, l).diagonal(0, 1, 2).sum(IntArrayRef{1}), l); }
RULE(tril) { return one(tril(fx(c, 0, l), arg_int(c, 1)), l); }
RULE(triu) { return one(triu(fx(c, 0, l), arg_int(c, 1)), l); }
RULE(repeat) {
  std::vector<int64_t> reps = arg_ints(c, 1);
  Tensor x = fx(c, 0, l);
  for (int64_t k = rank0(c); k < int64_t(reps.size()); ++k) x = x.unsqueeze(1);
  reps.insert(reps.begin(), 1);
  return one(x.repeat(reps), l);
}
RULE(constant_pad_nd) {
  return one(constant_pad_nd(fx(c, 0, l), arg_ints(c, 1), arg_scalar(c, 2)), l);
}
RULE(contiguous) { return one(fx(c, 0, l).contiguous(), l); }
RULE(clone) { return one(fx(c, 0, l).clone(), l); }
RULE(conj) { return one(fx(c, 0, l).conj(), l); }
RULE(resolve_conj) { return one(fx(c, 0, l).resolve_conj(), l); }
RULE(conj_physical_1) { return one(fx(c, 0, l).conj_physical(), l); }
RULE(real) { return one(fx(c, 0, l).real(), l); }
RULE(imag) { return one(fx(c, 0, l).imag(), l); }
RULE(to) {
  auto [v, bd] = unwrap_level(arg_tensor(c, 0), l.level);
  std::optional<ScalarType> dt = arg_dtype(c, 1);
  Tensor r = dt ? v.to(*dt, arg_bool(c, 2), arg_bool(c, 3)) : (arg_bool(c, 3) ? v.clone() : v);
  return {make_batched(r, *bd, l)};
}
// Ops whose result is a host value: it would differ per batch element.
RULE(item) {
  EMBER_THROW(Error,
              "[item] vmap: It looks like you're calling .item() on a Tensor. We don't "
              "support vmap over calling .item() on a Tensor, please try to rewrite what you're "
              "doing with other operations.");
}
RULE(allclose) {
  EMBER_THROW(Error, "[", nm(c),
              "] vmap: the result is a Python bool that would depend on the "
              "batch element (data-dependent control flow is not supported under vmap)");
}
RULE(as_strided) {
  EMBER_THROW(Error,
              "[as_strided] vmap: as_strided on a batched tensor is not supported; "
              "use view, reshape or indexing");
}

// In-place writes: the destination must be batched (a batched value cannot go into an
// unbatched tensor, functorch's rule).
void check_dest(const BoxedCall& c, const TransformLevel& l) {
  EMBER_CHECK(batched_at(arg_tensor(c, 0), l), "[", nm(c),
              "] vmap: inplace operation on a tensor that is not batched, with a batched "
              "argument: the result would have to be batched. Use the out-of-place form.");
}
// `src` as a batch-first tensor padded to `rank` logical dims (unbatched: as it is).
Tensor padded(const Tensor& src, int64_t rank, const TransformLevel& l) {
  Front f = front(src, l);
  if (!f.batched) return f.v;
  Tensor v = f.v;
  for (int64_t d = src.dim(); d < rank; ++d) v = v.unsqueeze(1);
  return v;
}
RULE(copy_) {
  check_dest(c, l);
  Tensor self = front(arg_tensor(c, 0), l).v;
  self.copy_(padded(arg_tensor(c, 1), rank0(c), l));
  return {arg_tensor(c, 0)};
}
RULE(fill_) {
  front(arg_tensor(c, 0), l).v.fill_(arg_scalar(c, 1));
  return {arg_tensor(c, 0)};
}
RULE(fill__1) {
  check_dest(c, l);
  Tensor self = front(arg_tensor(c, 0), l).v;
  self.copy_(padded(arg_tensor(c, 1), rank0(c), l));
  return {arg_tensor(c, 0)};
}
RULE(masked_fill_) {
  check_dest(c, l);
  front(arg_tensor(c, 0), l)
      .v.masked_fill_(padded(arg_tensor(c, 1), rank0(c), l), arg_scalar(c, 2));
  return {arg_tensor(c, 0)};
}
RULE(masked_fill__1) {
  check_dest(c, l);
  Tensor v = padded(arg_tensor(c, 2), rank0(c), l);
  Tensor self = front(arg_tensor(c, 0), l).v;
  self.copy_(where(padded(arg_tensor(c, 1), rank0(c), l), v, self));
  return {arg_tensor(c, 0)};
}

// Random in-place ops: "different" draws per element of the physical tensor; "same" draws one
// logical sample and broadcasts it.
template <class F>
Results random_inplace(const BoxedCall& c, const TransformLevel& l, F draw) {
  Tensor self = arg_tensor(c, 0);
  EMBER_CHECK(batched_at(self, l), "[", nm(c), "] vmap: random in-place op on an unbatched tensor");
  Tensor phys = front(self, l).v;
  if (l.randomness == Randomness::Different) {
    draw(phys);
  } else {
    Tensor one_sample = empty(self.sizes(), TensorOptions().dtype(self.dtype()));
    draw(one_sample);
    phys.copy_(one_sample);
  }
  return {self};
}
RULE(uniform_) {
  double a = arg_double(c, 1), b = arg_double(c, 2);
  return random_inplace(c, l, [&](Tensor& t) { t.uniform_(a, b); });
}
RULE(normal_) {
  double m = arg_double(c, 1), s = arg_double(c, 2);
  return random_inplace(c, l, [&](Tensor& t) { t.normal_(m, s); });
}
RULE(bernoulli_) {
  double p = arg_double(c, 1);
  return random_inplace(c, l, [&](Tensor& t) { t.bernoulli_(p); });
}
RULE(exponential_) {
  double lambd = arg_double(c, 1);
  return random_inplace(c, l, [&](Tensor& t) { t.exponential_(lambd); });
}

// The samplers with tensor parameters (random.h): "different" draws per element of the batched
// parameters; "same" with a batched parameter is not supported (as functorch).
void check_sampler(const BoxedCall& c, const TransformLevel& l) {
  EMBER_CHECK(l.randomness != Randomness::Same, "[", nm(c),
              "] vmap: randomness='same' with a batched tensor input is not supported; use "
              "randomness='different' or draw outside vmap");
}
int64_t max_rank(const BoxedCall& c, size_t n) {
  int64_t r = 0;
  for (size_t k = 0; k < n; ++k) r = std::max(r, arg_tensor(c, k).dim());
  return r;
}
RULE(_standard_gamma) {
  check_sampler(c, l);
  return one(_standard_gamma(fx(c, 0, l)), l);
}
RULE(poisson) {
  check_sampler(c, l);
  return one(poisson(fx(c, 0, l)), l);
}
RULE(binomial) {
  check_sampler(c, l);
  const int64_t r = max_rank(c, 2);
  return one(binomial(padded(arg_tensor(c, 0), r, l), padded(arg_tensor(c, 1), r, l)), l);
}
RULE(_sample_dirichlet) {
  check_sampler(c, l);
  // A 0-dim concentration is one category: keep the batch out of the normalised dim.
  if (rank0(c) == 0) return one(_sample_dirichlet(fx(c, 0, l).unsqueeze(1)).squeeze(1), l);
  return one(_sample_dirichlet(fx(c, 0, l)), l);
}
RULE(_standard_gamma_grad) {
  const int64_t r = max_rank(c, 2);
  return one(_standard_gamma_grad(padded(arg_tensor(c, 0), r, l), padded(arg_tensor(c, 1), r, l)),
             l);
}
RULE(_dirichlet_grad) {
  const int64_t r = max_rank(c, 3);
  return one(_dirichlet_grad(padded(arg_tensor(c, 0), r, l), padded(arg_tensor(c, 1), r, l),
                             padded(arg_tensor(c, 2), r, l)),
             l);
}

// --- joins and indexing --------------------------------------------------------------------

RULE(cat) {
  const std::vector<Tensor>& ts = arg_tensors(c, 0);
  int64_t rank = 0;
  for (const Tensor& t : ts) rank = std::max(rank, t.dim());
  std::vector<Tensor> phys;
  for (const Tensor& t : ts) {
    // Legacy 1-D empty tensors are skipped by cat; keep them unbatched and empty.
    if (t.dim() == 1 && t.numel() == 0 && rank > 1 && !batched_at(t, l)) continue;
    phys.push_back(front_or_expand(t, l));
  }
  return one(cat(phys, phys_dim(arg_int(c, 1), rank, "cat")), l);
}
RULE(index_select) {
  const Tensor& idx = arg_tensor(c, 2);
  if (!batched_at(idx, l)) {
    Tensor x = fx(c, 0, l);
    if (rank0(c) == 0) return one(x.unsqueeze(1).index_select(1, idx).squeeze(1), l);
    return one(x.index_select(pd1(c, 1), idx), l);
  }
  int64_t dim = arg_int(c, 1);
  return loop_over_batch({arg_tensor(c, 0), idx}, l, [dim](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{index_select(a[0], dim, a[1])};
  });
}
RULE(gather) {
  Tensor x = fx(c, 0, l), idx = front_or_expand(arg_tensor(c, 2), l);
  if (rank0(c) == 0)
    return one(gather(x.unsqueeze(1), 1, idx.reshape({idx.size(0), 1})).squeeze(1), l);
  return one(gather(x, pd1(c, 1), idx, arg_bool(c, 3)), l);
}
RULE(where_1) {
  const Tensor &cond = arg_tensor(c, 0), &a = arg_tensor(c, 1), &b = arg_tensor(c, 2);
  int64_t rank = std::max({cond.dim(), a.dim(), b.dim()});
  return one(where(padded(cond, rank, l), padded(a, rank, l), padded(b, rank, l)), l);
}
RULE(one_hot) { return one(one_hot(fx(c, 0, l), arg_int(c, 1)), l); }

// x[indices]: the batch dim goes last (index lists address leading dims) unless the list has
// an Ellipsis; batched index tensors loop.
bool has_batched_index(const std::vector<indexing::TensorIndex>& idx, const TransformLevel& l) {
  for (const auto& i : idx)
    if (i.is_tensor() && batched_at(i.tensor(), l)) return true;
  return false;
}
bool has_ellipsis(const std::vector<indexing::TensorIndex>& idx) {
  for (const auto& i : idx)
    if (i.is_ellipsis()) return true;
  return false;
}
const std::vector<indexing::TensorIndex>& arg_index(const BoxedCall& c, size_t k) {
  return std::get<std::vector<indexing::TensorIndex>>(c.args[k]);
}
Tensor batch_last(const Tensor& t, const TransformLevel& l) {
  auto [v, bd] = unwrap_level(t, l.level);
  return v.movedim(*bd, -1);
}
RULE(index_1) {
  const auto& idx = arg_index(c, 1);
  const Tensor& self = arg_tensor(c, 0);
  if (!has_batched_index(idx, l) && batched_at(self, l) && !has_ellipsis(idx)) {
    Tensor r = batch_last(self, l).index(idx);
    return {make_batched(r, r.dim() - 1, l)};
  }
  std::vector<Tensor> args{self};
  for (const auto& i : idx)
    if (i.is_tensor()) args.push_back(i.tensor());
  return loop_over_batch(args, l, [&idx](const std::vector<Tensor>& a) {
    std::vector<indexing::TensorIndex> per(idx.begin(), idx.end());
    size_t k = 1;
    for (auto& i : per)
      if (i.is_tensor()) i = indexing::TensorIndex(a[k++]);
    return std::vector<Tensor>{a[0].index(per)};
  });
}
template <class V>
Results index_put_rule(const BoxedCall& c, const TransformLevel& l, const V& value) {
  check_dest(c, l);
  const auto& idx = arg_index(c, 1);
  const Tensor& self = arg_tensor(c, 0);
  if constexpr (std::is_same_v<V, Tensor>) {
    if (!has_batched_index(idx, l) && !has_ellipsis(idx)) {
      Front f = front(value, l);
      Tensor v = f.batched ? f.v.movedim(0, -1) : value.unsqueeze(-1);
      batch_last(self, l).index_put_(idx, v);
      return {self};
    }
  } else {
    if (!has_batched_index(idx, l) && !has_ellipsis(idx)) {
      batch_last(self, l).index_put_(idx, value);
      return {self};
    }
  }
  // Loop: each slice of self is a view, so writing it writes self.
  Tensor phys = front(self, l).v;
  std::vector<Tensor> idx_fronts;
  for (int64_t b = 0; b < l.batch_size; ++b) {
    std::vector<indexing::TensorIndex> per(idx.begin(), idx.end());
    for (auto& i : per)
      if (i.is_tensor() && batched_at(i.tensor(), l))
        i = indexing::TensorIndex(front(i.tensor(), l).v.select(0, b));
    Tensor dst = phys.select(0, b);
    if constexpr (std::is_same_v<V, Tensor>) {
      Front f = front(value, l);
      dst.index_put_(per, f.batched ? f.v.select(0, b) : value);
    } else {
      dst.index_put_(per, value);
    }
  }
  return {self};
}
// index_put_(self, indices (None as undefined), values, accumulate): batch last, or a loop
// when an index is batched.
RULE(index_put_) {
  check_dest(c, l);
  const Tensor& self = arg_tensor(c, 0);
  const std::vector<Tensor>& idx = arg_tensors(c, 1);
  const Tensor& values = arg_tensor(c, 2);
  const bool acc = arg_bool(c, 3);
  bool idx_batched = false;
  for (const Tensor& t : idx) idx_batched |= batched_at(t, l);
  auto opts = [](const std::vector<Tensor>& ts) {
    std::vector<std::optional<Tensor>> r;
    for (const Tensor& t : ts) r.push_back(t.defined() ? std::optional<Tensor>(t) : std::nullopt);
    return r;
  };
  if (!idx_batched) {
    Front f = front(values, l);
    Tensor v = f.batched ? f.v.movedim(0, -1) : values.unsqueeze(-1);
    Tensor s = batch_last(self, l);
    index_put_(s, opts(idx), v, acc);
    return {self};
  }
  Tensor phys = front(self, l).v;
  Front fv = front(values, l);
  for (int64_t b = 0; b < l.batch_size; ++b) {
    std::vector<Tensor> per;
    for (const Tensor& t : idx) per.push_back(batched_at(t, l) ? front(t, l).v.select(0, b) : t);
    Tensor dst = phys.select(0, b);
    index_put_(dst, opts(per), fv.batched ? fv.v.select(0, b) : values, acc);
  }
  return {self};
}
RULE(index_put__1) { return index_put_rule(c, l, arg_tensor(c, 2)); }
RULE(index_put__2) { return index_put_rule(c, l, arg_scalar(c, 2)); }

// --- BLAS ------------------------------------------------------------------------------------

// Both operands at least 2-D: pad to the same logical rank, batch first; matmul broadcasts.
Tensor matmul_nd(const Tensor& a, const Tensor& b, const TransformLevel& l) {
  int64_t rank = std::max(a.dim(), b.dim());
  Front fa = front(a, l), fb = front(b, l);
  Tensor pa = padded(a, rank, l), pb = padded(b, rank, l);
  // A batched A times an unbatched 2-D B: one GEMM over the folded batch.
  if (fa.batched && !fb.batched && b.dim() == 2) {
    Tensor r = matmul(pa.reshape({-1, a.size(-1)}), pb);
    std::vector<int64_t> s(pa.sizes().begin(), pa.sizes().end());
    s.back() = b.size(-1);
    return r.view(s);
  }
  return matmul(pa, pb);
}
Results matmul_rule(const Tensor& a, const Tensor& b, const TransformLevel& l) {
  if (a.dim() == 1 && b.dim() == 1) {
    EMBER_CHECK(a.size(0) == b.size(0), "[matmul] inconsistent tensor size, expected tensor [",
                a.size(0), "] and src [", b.size(0), "] to have the same number of elements");
    return one((padded(a, 1, l) * padded(b, 1, l)).sum(IntArrayRef{-1}), l);
  }
  if (a.dim() == 1) return {matmul(a.unsqueeze(0), b).squeeze(-2)};
  if (b.dim() == 1) return {matmul(a, b.unsqueeze(-1)).squeeze(-1)};
  return one(matmul_nd(a, b, l), l);
}
void check_rank(const BoxedCall& c, size_t k, int64_t want) {
  EMBER_CHECK(arg_tensor(c, k).dim() == want, "[", nm(c), "] expected ", want,
              "-D tensors, but argument ", k, " is ", arg_tensor(c, k).dim(), "-D");
}
RULE(matmul) { return matmul_rule(arg_tensor(c, 0), arg_tensor(c, 1), l); }
RULE(mm) {
  check_rank(c, 0, 2);
  check_rank(c, 1, 2);
  return matmul_rule(arg_tensor(c, 0), arg_tensor(c, 1), l);
}
RULE(bmm) {
  check_rank(c, 0, 3);
  check_rank(c, 1, 3);
  return matmul_rule(arg_tensor(c, 0), arg_tensor(c, 1), l);
}
RULE(mv) {
  check_rank(c, 0, 2);
  check_rank(c, 1, 1);
  return matmul_rule(arg_tensor(c, 0), arg_tensor(c, 1), l);
}
RULE(dot) {
  check_rank(c, 0, 1);
  check_rank(c, 1, 1);
  return matmul_rule(arg_tensor(c, 0), arg_tensor(c, 1), l);
}
RULE(vdot) {
  check_rank(c, 0, 1);
  check_rank(c, 1, 1);
  return matmul_rule(arg_tensor(c, 0).conj(), arg_tensor(c, 1), l);
}
// self*beta + alpha*(m1 @ m2), on the wrappers (each op batched by its own rule).
Tensor scaled_sum(const Tensor& self, const Tensor& prod, const Scalar& beta, const Scalar& alpha) {
  Tensor p = alpha.to<double>() == 1.0 ? prod : prod * alpha;
  if (beta.to<double>() == 0.0) return p + zeros_like(self);
  return beta.to<double>() == 1.0 ? self + p : self * beta + p;
}
RULE(addmm) {
  const Tensor &self = arg_tensor(c, 0), &m1 = arg_tensor(c, 1), &m2 = arg_tensor(c, 2);
  check_rank(c, 1, 2);
  check_rank(c, 2, 2);
  return {scaled_sum(self, matmul(m1, m2), arg_scalar(c, 3), arg_scalar(c, 4))};
}
RULE(addmv) {
  return {scaled_sum(arg_tensor(c, 0), matmul(arg_tensor(c, 1), arg_tensor(c, 2)), arg_scalar(c, 3),
                     arg_scalar(c, 4))};
}
RULE(baddbmm) {
  check_rank(c, 1, 3);
  check_rank(c, 2, 3);
  return {scaled_sum(arg_tensor(c, 0), matmul(arg_tensor(c, 1), arg_tensor(c, 2)), arg_scalar(c, 3),
                     arg_scalar(c, 4))};
}
RULE(addbmm) {
  check_rank(c, 1, 3);
  check_rank(c, 2, 3);
  return {scaled_sum(arg_tensor(c, 0),
                     matmul(arg_tensor(c, 1), arg_tensor(c, 2)).sum(IntArrayRef{0}),
                     arg_scalar(c, 3), arg_scalar(c, 4))};
}
RULE(linear) {
  const Tensor &x = arg_tensor(c, 0), &w = arg_tensor(c, 1), &b = arg_tensor(c, 2);
  if (!batched_at(w, l) && !batched_at(b, l)) {
    // Batch first; linear maps the last dim of any number of leading dims.
    Tensor px = front(x, l).v;
    return one(linear(px, w, b), l);
  }
  Tensor r = matmul(x, w.transpose(-1, -2));
  return {b.defined() ? r + b : r};
}

// --- linalg: the ops take (*, m, n) and batch over leading dims -------------------------------

RULE(linalg_vector_norm) {
  auto r = reduce_dims(c, l, 2, arg_bool(c, 3));
  return one(linalg_vector_norm(r.x, arg_scalar(c, 1), r.dims, r.keepdim, arg_dtype(c, 4)), l);
}
RULE(linalg_inv) { return one(linalg::inv(fx(c, 0, l)), l); }
RULE(linalg_det) { return one(linalg::det(fx(c, 0, l)), l); }
RULE(logdet) { return one(logdet(fx(c, 0, l)), l); }
RULE(linalg_slogdet) { return two(linalg::slogdet(fx(c, 0, l)), l); }
RULE(linalg_cholesky) { return one(linalg::cholesky(fx(c, 0, l), arg_bool(c, 1)), l); }
RULE(linalg_matrix_exp) { return one(linalg::matrix_exp(fx(c, 0, l)), l); }
RULE(linalg_svdvals) { return one(linalg::svdvals(fx(c, 0, l)), l); }
RULE(linalg_eigvalsh) { return one(linalg::eigvalsh(fx(c, 0, l), arg_str(c, 1)), l); }
RULE(linalg_eigh) { return two(linalg::eigh(fx(c, 0, l), arg_str(c, 1)), l); }
RULE(linalg_solve) { return one(linalg::solve(fx(c, 0, l), fx(c, 1, l), arg_bool(c, 2)), l); }

RULE(linalg_matrix_norm) {
  const int64_t r = rank0(c);
  std::vector<int64_t> d = phys_dims(arg_ints(c, 2), r, nm(c));
  return one(linalg::matrix_norm(fx(c, 0, l), arg_double(c, 1), d, arg_bool(c, 3), arg_dtype(c, 4)),
             l);
}
RULE(linalg_matrix_norm_1) {
  const int64_t r = rank0(c);
  std::vector<int64_t> d = phys_dims(arg_ints(c, 2), r, nm(c));
  return one(linalg::matrix_norm(fx(c, 0, l), arg_str(c, 1), d, arg_bool(c, 3), arg_dtype(c, 4)),
             l);
}
RULE(linalg_matrix_power) { return one(linalg::matrix_power(fx(c, 0, l), arg_int(c, 1)), l); }
RULE(linalg_inv_ex) { return two(linalg::inv_ex(fx(c, 0, l), arg_bool(c, 1)), l); }
RULE(linalg_cholesky_ex) {
  return two(linalg::cholesky_ex(fx(c, 0, l), arg_bool(c, 1), arg_bool(c, 2)), l);
}
RULE(linalg_solve_ex) {
  return two(linalg::solve_ex(fx(c, 0, l), fx(c, 1, l), arg_bool(c, 2), arg_bool(c, 3)), l);
}
RULE(linalg_solve_triangular) {
  return one(linalg::solve_triangular(fx(c, 0, l), fx(c, 1, l), arg_bool(c, 2), arg_bool(c, 3),
                                      arg_bool(c, 4)),
             l);
}
RULE(linalg_qr) { return two(linalg::qr(fx(c, 0, l), arg_str(c, 1)), l); }
RULE(linalg_svd) {
  std::optional<std::string> drv;
  if (!arg_none(c, 2)) drv = arg_str(c, 2);
  auto [u, s, vh] = linalg::svd(fx(c, 0, l), arg_bool(c, 1),
                                drv ? std::optional<std::string_view>(*drv) : std::nullopt);
  return {wrap0(u, l), wrap0(s, l), wrap0(vh, l)};
}

// --- in-place forms: the destination must be batched -----------------------------------------

RULE(tril_) {
  check_dest(c, l);
  Tensor p = front(arg_tensor(c, 0), l).v;
  tril_(p, arg_int(c, 1));
  return {arg_tensor(c, 0)};
}
RULE(triu_) {
  check_dest(c, l);
  Tensor p = front(arg_tensor(c, 0), l).v;
  triu_(p, arg_int(c, 1));
  return {arg_tensor(c, 0)};
}
RULE(cumsum_) {
  check_dest(c, l);
  if (rank0(c) > 0) front(arg_tensor(c, 0), l).v.cumsum_(pd1(c, 1), arg_dtype(c, 2));
  return {arg_tensor(c, 0)};
}
RULE(cumprod_) {
  check_dest(c, l);
  if (rank0(c) > 0) front(arg_tensor(c, 0), l).v.cumprod_(pd1(c, 1), arg_dtype(c, 2));
  return {arg_tensor(c, 0)};
}
RULE(scatter_) {
  check_dest(c, l);
  front(arg_tensor(c, 0), l).v.scatter_(pd1(c, 1), fx(c, 2, l), fx(c, 3, l));
  return {arg_tensor(c, 0)};
}
RULE(scatter_add_) {
  check_dest(c, l);
  front(arg_tensor(c, 0), l).v.scatter_add_(pd1(c, 1), fx(c, 2, l), fx(c, 3, l));
  return {arg_tensor(c, 0)};
}
// index_add_ / index_copy_ / index_fill_ with a 1-D index: an unbatched index applies to every
// batch element along the shifted dim; a batched one loops.
template <class F>
Results index_inplace(const BoxedCall& c, const TransformLevel& l, F f) {
  check_dest(c, l);
  const Tensor& self = arg_tensor(c, 0);
  const Tensor& idx = arg_tensor(c, 2);
  Tensor p = front(self, l).v;
  if (!batched_at(idx, l)) {
    f(p, rank0(c) == 0 ? 1 : pd1(c, 1), idx, -1);
    return {self};
  }
  Tensor fi = front(idx, l).v;
  for (int64_t b = 0; b < l.batch_size; ++b) {
    Tensor dst = p.select(0, b);
    f(dst, arg_int(c, 1), fi.select(0, b), b);
  }
  return {self};
}
Tensor slice_or_all(const Tensor& src, const TransformLevel& l, int64_t b) {
  Front f = front(src, l);
  if (!f.batched) return src;
  return b < 0 ? f.v : f.v.select(0, b);
}
RULE(index_add_) {
  const Tensor& src = arg_tensor(c, 3);
  Scalar alpha = arg_scalar(c, 4);
  return index_inplace(c, l, [&](Tensor& dst, int64_t d, const Tensor& i, int64_t b) {
    dst.index_add_(d, i, b < 0 ? front_or_expand(src, l) : slice_or_all(src, l, b), alpha);
  });
}
RULE(index_copy_) {
  const Tensor& src = arg_tensor(c, 3);
  return index_inplace(c, l, [&](Tensor& dst, int64_t d, const Tensor& i, int64_t b) {
    dst.index_copy_(d, i, b < 0 ? front_or_expand(src, l) : slice_or_all(src, l, b));
  });
}
RULE(index_fill_) {
  Scalar v = arg_scalar(c, 3);
  return index_inplace(
      c, l, [&](Tensor& dst, int64_t d, const Tensor& i, int64_t) { dst.index_fill_(d, i, v); });
}

// Out-of-place forms of the in-place ops above: a batched copy of self, then the in-place op
// on it (so an unbatched self with batched arguments gives a batched result).
Tensor batched_clone(const BoxedCall& c, const TransformLevel& l) {
  return wrap0(front_or_expand(arg_tensor(c, 0), l).clone(), l);
}
RULE(scatter) {
  Tensor s = batched_clone(c, l);
  return {s.scatter_(arg_int(c, 1), arg_tensor(c, 2), arg_tensor(c, 3))};
}
RULE(scatter_1) {
  Tensor s = batched_clone(c, l);
  return {s.scatter_(arg_int(c, 1), arg_tensor(c, 2), arg_scalar(c, 3))};
}
RULE(scatter_add) {
  Tensor s = batched_clone(c, l);
  return {s.scatter_add_(arg_int(c, 1), arg_tensor(c, 2), arg_tensor(c, 3))};
}
RULE(index_add) {
  Tensor s = batched_clone(c, l);
  return {s.index_add_(arg_int(c, 1), arg_tensor(c, 2), arg_tensor(c, 3), arg_scalar(c, 4))};
}
RULE(index_copy) {
  Tensor s = batched_clone(c, l);
  return {s.index_copy_(arg_int(c, 1), arg_tensor(c, 2), arg_tensor(c, 3))};
}
RULE(index_fill) {
  Tensor s = batched_clone(c, l);
  return {s.index_fill_(arg_int(c, 1), arg_tensor(c, 2), arg_scalar(c, 3))};
}
RULE(masked_fill_1) {
  Tensor s = batched_clone(c, l);
  const Tensor& v = arg_tensor(c, 2);
  if (v.defined()) return {s.masked_fill_(arg_tensor(c, 1), v)};
  return {s.masked_fill_(arg_tensor(c, 1), arg_scalar(c, 2))};
}
RULE(index_put) {
  Tensor s = batched_clone(c, l);
  const std::vector<Tensor>& idx = arg_tensors(c, 1);
  std::vector<std::optional<Tensor>> opt;
  for (const Tensor& t : idx) opt.push_back(t.defined() ? std::optional<Tensor>(t) : std::nullopt);
  index_put_(s, opt, arg_tensor(c, 2), arg_bool(c, 3));
  return {s};
}

// The FFT primitives transform the logical dims; the batch dim rides along as one more batch.
RULE(_fft_c2c) {
  return one(_fft_c2c(fx(c, 0, l), phys_dims(arg_ints(c, 1), rank0(c), nm(c)), arg_int(c, 2),
                      arg_bool(c, 3)),
             l);
}
RULE(_fft_r2c) {
  return one(_fft_r2c(fx(c, 0, l), phys_dims(arg_ints(c, 1), rank0(c), nm(c)), arg_int(c, 2),
                      arg_bool(c, 3)),
             l);
}
RULE(_fft_c2r) {
  return one(_fft_c2r(fx(c, 0, l), phys_dims(arg_ints(c, 1), rank0(c), nm(c)), arg_int(c, 2),
                      arg_int(c, 3)),
             l);
}

#undef RULE

}  // namespace

void register_core_rules() {
#define R(name) register_batch_rule(OpId::name, rule_##name)
  R(_fft_c2c);
  R(_fft_r2c);
  R(_fft_c2r);
  R(sum);
  R(sum_1);
  R(nansum);
  R(mean);
  R(mean_1);
  R(prod);
  R(prod_1);
  R(max);
  R(min);
  R(max_1);
  R(min_1);
  R(amax);
  R(amin);
  R(argmax);
  R(argmin);
  R(all);
  R(any);
  R(all_1);
  R(any_1);
  R(logsumexp);
  R(count_nonzero);
  R(var);
  R(std);
  R(var_1);
  R(std_1);
  R(var_2);
  R(std_2);
  R(var_mean);
  R(std_mean);
  R(var_mean_1);
  R(std_mean_1);
  R(var_mean_2);
  R(std_mean_2);
  R(norm);
  R(norm_1);
  R(softmax);
  R(log_softmax);
  R(cumsum);
  R(cumprod);
  R(logcumsumexp);
  R(cummax);
  R(cummin);
  R(sort);
  R(argsort);
  R(msort);
  register_batch_rule(OpId::sort_1, rule_sort);
  register_batch_rule(OpId::argsort_1, rule_argsort);
  R(topk);
  R(flip);
  R(roll);
  R(view);
  R(reshape);
  R(permute);
  R(transpose);
  R(t);
  R(movedim);
  R(expand);
  R(squeeze);
  R(squeeze_1);
  R(unsqueeze);
  R(slice);
  R(select);
  R(unfold);
  R(diagonal);
  R(diag_embed);
  R(diag);
  R(trace);
  R(tril);
  R(triu);
  R(repeat);
  R(constant_pad_nd);
  R(contiguous);
  R(clone);
  R(conj);
  R(resolve_conj);
  R(conj_physical_1);
  R(real);
  R(imag);
  R(to);
  R(as_strided);
  R(item);
  R(allclose);
  register_batch_rule(OpId::equal, rule_allclose);

  R(copy_);
  R(fill_);
  R(fill__1);
  R(masked_fill_);
  R(masked_fill__1);
  R(uniform_);
  R(normal_);
  R(bernoulli_);
  R(exponential_);
  R(_standard_gamma);
  R(poisson);
  R(binomial);
  R(_sample_dirichlet);
  R(_standard_gamma_grad);
  R(_dirichlet_grad);
  R(cat);
  R(index_select);
  R(gather);
  R(where_1);
  R(one_hot);
  R(matmul);
  R(mm);
  R(bmm);
  R(mv);
  R(dot);
  R(vdot);
  R(addmm);
  R(addmv);
  R(baddbmm);
  R(addbmm);
  R(linear);
  R(linalg_vector_norm);
  R(linalg_inv);
  R(linalg_det);
  R(logdet);
  R(linalg_slogdet);
  R(linalg_cholesky);
  R(linalg_matrix_exp);
  R(linalg_svdvals);
  R(linalg_eigvalsh);
  R(linalg_eigh);
  R(linalg_solve);
  R(linalg_matrix_norm);
  R(linalg_matrix_norm_1);
  R(linalg_matrix_power);
  R(linalg_inv_ex);
  R(linalg_cholesky_ex);
  R(linalg_solve_ex);
  R(linalg_solve_triangular);
  R(linalg_qr);
  R(linalg_svd);
  R(tril_);
  R(triu_);
  R(cumsum_);
  R(cumprod_);
  R(scatter_);
  R(scatter_add_);
  R(scatter);
  R(scatter_1);
  R(scatter_add);
  R(index_add);
  R(index_copy);
  R(index_fill);
  R(masked_fill_1);
  R(index_put);
#undef R
  register_batch_rule(OpId::index_add_, rule_index_add_, /*loop=*/true);
  register_batch_rule(OpId::index_copy_, rule_index_copy_, /*loop=*/true);
  register_batch_rule(OpId::index_fill_, rule_index_fill_, /*loop=*/true);
  register_batch_rule(OpId::index_1, rule_index_1, /*loop=*/true);
  register_batch_rule(OpId::index_put__1, rule_index_put__1, /*loop=*/true);
  register_batch_rule(OpId::index_put__2, rule_index_put__2, /*loop=*/true);
  register_batch_rule(OpId::index_put_, rule_index_put_, /*loop=*/true);
}

}  // namespace ember::func
