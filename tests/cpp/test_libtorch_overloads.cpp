// Calls written as libtorch 1.13 programs write them pick libtorch's overload: an int literal is a
// dim for var/std (not `unbiased`), `sort(true)` sorts dim 1 while `argsort(true)` is the stable
// overload, nullopt dims reduce everything, ... Each form is checked against hand-derived values
// or against the same call with every argument spelled out. The compile-time checks list forms
// libtorch accepts (and a few it rejects as ambiguous, which must not silently pick an overload
// here either).

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

// 0..23 as float64 in shape (2, 3, 4).
Tensor t234() { return arange(24, TensorOptions(kDouble)).reshape({2, 3, 4}); }

Tensor dbl(std::initializer_list<double> v) { return tensor(v, TensorOptions(kDouble)); }

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_TRUE(a.allclose(b)) << a << "\nvs\n" << b;
}

void expect_all(const Tensor& a, IntArrayRef sizes, double v) {
  ASSERT_EQ(a.sizes(), sizes);
  EXPECT_TRUE(a.to(kDouble).allclose(full(sizes, v, TensorOptions(kDouble)))) << a;
}

}  // namespace

// Whether a call compiles, checked in a template so that a rejected form is `false`, not an error.
#define EMBER_ACCEPTS(...)                                       \
  []<class T>(T*) {                                              \
    return requires(T t, int64_t d64, int i32) { __VA_ARGS__; }; \
  }(static_cast<Tensor*>(nullptr))

// Forms libtorch 1.13 accepts.
static_assert(EMBER_ACCEPTS(t.var(1)));
static_assert(EMBER_ACCEPTS(t.var(i32)));
static_assert(EMBER_ACCEPTS(t.std(2, false)));
static_assert(EMBER_ACCEPTS(t.var({1})));
static_assert(EMBER_ACCEPTS(t.var(true)));
static_assert(EMBER_ACCEPTS(t.var(std::nullopt)));
static_assert(EMBER_ACCEPTS(t.var(d64, true)));
static_assert(EMBER_ACCEPTS(ember::var(t, 1)));
static_assert(EMBER_ACCEPTS(ember::std_mean(t, 1)));
static_assert(EMBER_ACCEPTS(ember::var_mean(t, {1}, false)));
static_assert(EMBER_ACCEPTS(t.sum(std::nullopt, true)));
static_assert(EMBER_ACCEPTS(t.sum(d64)));
static_assert(EMBER_ACCEPTS(t.sum(kFloat)));
static_assert(EMBER_ACCEPTS(t.nansum()));
static_assert(EMBER_ACCEPTS(t.max(d64)));
static_assert(EMBER_ACCEPTS(t.norm(1, kFloat)));
static_assert(EMBER_ACCEPTS(t.norm(2, {1})));
static_assert(EMBER_ACCEPTS(t.count_nonzero()));
static_assert(EMBER_ACCEPTS(t.clamp()));
static_assert(EMBER_ACCEPTS(t.clamp(std::nullopt, 1)));
static_assert(EMBER_ACCEPTS(t.clamp_min(t)));
static_assert(EMBER_ACCEPTS(t.to(kCPU)));
static_assert(EMBER_ACCEPTS(t.to("cpu")));
static_assert(EMBER_ACCEPTS(t.to()));
static_assert(EMBER_ACCEPTS(t.random_(10)));
static_assert(EMBER_ACCEPTS(t.random_(10, Generator())));
static_assert(EMBER_ACCEPTS(t.random_(1, 10)));
static_assert(EMBER_ACCEPTS(t.sort(true)));
static_assert(EMBER_ACCEPTS(t.argsort(true)));
static_assert(EMBER_ACCEPTS(t.squeeze({})));
static_assert(EMBER_ACCEPTS(t.moveaxis({0, 1}, {1, 0})));
static_assert(EMBER_ACCEPTS(t.tril(1)));
// Forms libtorch rejects as ambiguous: an int64_t (or double) is neither clearly a dim nor
// `unbiased`, and must not quietly become `unbiased` here.
static_assert(!EMBER_ACCEPTS(t.var(d64)));
static_assert(!EMBER_ACCEPTS(t.std(d64)));
static_assert(!EMBER_ACCEPTS(t.var(1.5)));
static_assert(!EMBER_ACCEPTS(ember::var(t, d64)));
static_assert(!EMBER_ACCEPTS(t.count_nonzero(1)));

TEST(LibtorchOverloads, VarStdIntLiteralIsADim) {
  const Tensor t = t234();
  // Along dim 1 each column is {i, i + 4, i + 8}: variance 16 (unbiased), 32/3 (biased).
  expect_all(t.var(1), {2, 4}, 16.0);
  expect_same(t.var(1), t.var(IntArrayRef{1}, /*unbiased=*/true, /*keepdim=*/false));
  expect_all(t.std(1), {2, 4}, 4.0);
  expect_all(t.var({1}), {2, 4}, 16.0);
  const int d = 1;
  expect_all(t.var(d), {2, 4}, 16.0);
  expect_all(t.var(1, false), {2, 4}, 32.0 / 3.0);
  expect_all(t.var(1, 0), {2, 4}, 32.0 / 3.0);
  expect_all(t.var(1, true, true), {2, 1, 4}, 16.0);
  // Along dim 2 each row is {k, k+1, k+2, k+3}: biased std sqrt(1.25).
  expect_all(t.std(2, false), {2, 3}, std::sqrt(1.25));
  expect_same(t.std(2, false), t.std(IntArrayRef{2}, false, false));
  expect_all(t.std(2, /*unbiased=*/false, /*keepdim=*/true), {2, 3, 1}, std::sqrt(1.25));
  // correction overload: along dim 0 each pair is {x, x + 12}.
  expect_all(t.var(0, std::optional<int64_t>(0)), {3, 4}, 36.0);
  expect_all(t.var({0, 1}), {4}, t.select(2, 0).var().item<double>());
  // bool and no argument: every element of 0..23.
  expect_all(t.var(), {}, 50.0);
  expect_all(t.var(true), {}, 50.0);
  expect_all(t.var(false), {}, 575.0 / 12.0);
  expect_all(t.std(false), {}, std::sqrt(575.0 / 12.0));
  expect_all(t.var(std::nullopt), {}, 50.0);
  expect_all(t.var(std::nullopt, true, true), {1, 1, 1}, 50.0);
}

TEST(LibtorchOverloads, VarStdFreeFunctions) {
  const Tensor t = t234();
  expect_all(ember::var(t, 1), {2, 4}, 16.0);
  expect_all(ember::std(t, 2, false), {2, 3}, std::sqrt(1.25));
  expect_all(ember::var(t, {1}, false), {2, 4}, 32.0 / 3.0);
  expect_all(ember::var(t), {}, 50.0);
  expect_all(ember::var(t, false), {}, 575.0 / 12.0);
  auto [v, m] = ember::var_mean(t, 1);
  expect_all(v, {2, 4}, 16.0);
  expect_same(m, t.mean({1}));
  auto [s, m2] = ember::std_mean(t, 1);
  expect_all(s, {2, 4}, 4.0);
  expect_same(m2, t.mean({1}));
  expect_all(std::get<0>(ember::std_mean(t, {2}, false)), {2, 3}, std::sqrt(1.25));
  expect_all(std::get<0>(ember::var_mean(t, 0, std::optional<int64_t>(0))), {3, 4}, 36.0);
}

TEST(LibtorchOverloads, OptionalDimsViewLiveValues) {
  // An OptionalIntArrayRef made from one int views the caller's value (alive for the call), not
  // a copy that dies inside a constructor; from a vector or a braced list it views the list.
  const Tensor t = t234();
  const int64_t d = 2;
  expect_all(t.std(d, false), {2, 3}, std::sqrt(1.25));
  const std::vector<int64_t> dims{0, 2};
  expect_same(t.var(dims, false), t.var(IntArrayRef{0, 2}, false, false));
  const OptionalIntArrayRef none;
  EXPECT_FALSE(none.has_value());
  const OptionalIntArrayRef one(d);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0], 2);
  EXPECT_EQ(OptionalIntArrayRef(dims)->size(), 2u);
  EXPECT_EQ(OptionalIntArrayRef(std::nullopt).value_or_empty().size(), 0u);
}

TEST(LibtorchOverloads, SumMeanProdDims) {
  const Tensor t = t234();
  expect_same(t.sum(1), t.sum(IntArrayRef{1}, false, std::nullopt));
  ASSERT_EQ(t.sum(1).sizes(), IntArrayRef({2, 4}));
  expect_all(t.sum(std::nullopt, true), {1, 1, 1}, 276.0);
  expect_all(t.sum({}, true), {1, 1, 1}, 276.0);
  EXPECT_EQ(t.sum(kFloat).dtype(), kFloat);
  expect_all(t.sum(kFloat), {}, 276.0);
  EXPECT_EQ(t.sum(1, true, kFloat).sizes(), IntArrayRef({2, 1, 4}));
  EXPECT_EQ(t.sum(1, true, kFloat).dtype(), kFloat);
  expect_same(t.sum({0, 2}), t.sum(IntArrayRef{0, 2}, false));
  expect_all(t.nansum(), {}, 276.0);
  expect_all(t.mean(std::nullopt, true), {1, 1, 1}, 11.5);
  expect_all(t.nanmean(), {}, 11.5);
  expect_same(t.mean(1), t.mean(IntArrayRef{1}, false));
  const Tensor ti = arange(1, 5).reshape({2, 2});
  EXPECT_EQ(ti.mean(kDouble).item<double>(), 2.5);
  EXPECT_EQ(ti.prod().item<int64_t>(), 24);
  EXPECT_EQ(ti.prod(kDouble).dtype(), kDouble);
  expect_same(ti.prod(1), tensor({2, 12}));
  EXPECT_EQ(ti.prod(1, true).sizes(), IntArrayRef({2, 1}));
  expect_same(ember::sum(t, 1), t.sum(1));
  expect_same(ember::mean(t, std::nullopt, true), t.mean(std::nullopt, true));
  expect_same(ember::nansum(t), t.sum());
}

TEST(LibtorchOverloads, ExtremaNormLogical) {
  const Tensor t = t234();
  auto [mx, ix] = t.max(1);
  expect_same(mx, t.select(1, 2));
  expect_all(ix, {2, 4}, 2.0);
  EXPECT_EQ(std::get<0>(t.min(1, true)).sizes(), IntArrayRef({2, 1, 4}));
  EXPECT_EQ(t.max().item<double>(), 23.0);
  expect_same(t.max(t.flip({0})), maximum(t, t.flip({0})));
  EXPECT_EQ(t.argmax().item<int64_t>(), 23);
  expect_all(t.argmax(1), {2, 4}, 2.0);
  EXPECT_EQ(t.argmax(1, true).sizes(), IntArrayRef({2, 1, 4}));
  // norm(): 2-norm of 0..23 is sqrt(4324); norm(1) the sum; (p, dtype) a float result.
  expect_all(t.norm(), {}, std::sqrt(4324.0));
  expect_all(t.norm(1), {}, 276.0);
  EXPECT_EQ(t.norm(1, kFloat).dtype(), kFloat);
  expect_all(t.norm(1, kFloat), {}, 276.0);
  EXPECT_EQ(ember::norm(t, 1, kFloat).dtype(), kFloat);
  // Along dim 1, column 0 of the first matrix is {0, 4, 8}: norm sqrt(80).
  const Tensor n = t.norm(2, {1}, true, kFloat);
  ASSERT_EQ(n.sizes(), IntArrayRef({2, 1, 4}));
  EXPECT_EQ(n.dtype(), kFloat);
  EXPECT_NEAR(n.flatten()[0].item<double>(), std::sqrt(80.0), 1e-5);
  expect_same(t.norm(2, {1}), t.norm(2, IntArrayRef{1}, false));
  const Tensor b = t.gt(10);
  expect_same(b.any(1), b.any(1, false));
  EXPECT_EQ(b.any(1).sizes(), IntArrayRef({2, 4}));
  EXPECT_FALSE(b.all().item<bool>());
  EXPECT_TRUE(b.any().item<bool>());
  EXPECT_EQ(b.all(0, true).sizes(), IntArrayRef({1, 3, 4}));
  EXPECT_EQ(b.count_nonzero().item<int64_t>(), 13);
  EXPECT_EQ(b.count_nonzero({0, 1}).sizes(), IntArrayRef({4}));
  EXPECT_EQ(b.count_nonzero(std::optional<int64_t>(2)).sizes(), IntArrayRef({2, 3}));
}

TEST(LibtorchOverloads, ShapeMethods) {
  const Tensor t = t234();
  EXPECT_EQ(t.unsqueeze(0).sizes(), IntArrayRef({1, 2, 3, 4}));
  EXPECT_EQ(t.unsqueeze(-1).squeeze(-1).sizes(), IntArrayRef({2, 3, 4}));
  EXPECT_EQ(t.unsqueeze(1).squeeze().sizes(), IntArrayRef({2, 3, 4}));
  EXPECT_EQ(t.flatten().sizes(), IntArrayRef({24}));
  EXPECT_EQ(t.flatten(1).sizes(), IntArrayRef({2, 12}));
  EXPECT_EQ(t.transpose(0, 2).sizes(), IntArrayRef({4, 3, 2}));
  EXPECT_EQ(t.repeat({2, 1, 1}).sizes(), IntArrayRef({4, 3, 4}));
  EXPECT_EQ(t.select(0, 0).expand({5, 3, 4}).sizes(), IntArrayRef({5, 3, 4}));
  EXPECT_EQ(t.view({-1}).sizes(), IntArrayRef({24}));
  EXPECT_EQ(t.view({4, 6}).sizes(), IntArrayRef({4, 6}));
  EXPECT_EQ(t.reshape({4, -1}).sizes(), IntArrayRef({4, 6}));
  expect_same(t.moveaxis({0, 1}, {1, 0}), t.movedim(IntArrayRef{0, 1}, IntArrayRef{1, 0}));
  expect_same(t.moveaxis(0, 2), t.permute({1, 2, 0}));
}

TEST(LibtorchOverloads, ScanSoftmaxSortSelect) {
  const Tensor t = t234();
  EXPECT_EQ(t.cumsum(1).sizes(), IntArrayRef({2, 3, 4}));
  EXPECT_EQ(t.to(kInt).cumsum(0, kFloat).dtype(), kFloat);
  EXPECT_EQ(t.softmax(1, kFloat).dtype(), kFloat);
  expect_same(t.log_softmax(-1), t.softmax(-1).log());
  // sort(true) is sort(dim = 1): the only non-template candidate taking a bool via a standard
  // conversion, as in libtorch. argsort(true) is the stable overload over the last dim.
  const Tensor fl = t.flip({1});
  expect_same(std::get<1>(fl.sort(true)), std::get<1>(fl.sort(1, false)));
  EXPECT_EQ(std::get<1>(fl.sort(true)).flatten()[0].item<int64_t>(), 2);
  const Tensor fr = t.flip({2});
  expect_same(fr.argsort(true), fr.argsort(/*stable=*/true, /*dim=*/-1, /*descending=*/false));
  EXPECT_EQ(fr.argsort(true).flatten()[0].item<int64_t>(), 3);
  expect_same(std::get<0>(t.sort(0, true)), t.flip({0}));
  auto [tv, ti] = t.topk(2);
  EXPECT_EQ(tv.sizes(), IntArrayRef({2, 3, 2}));
  EXPECT_EQ(tv.flatten()[0].item<double>(), 3.0);
  EXPECT_EQ(std::get<0>(t.kthvalue(2, 1)).flatten()[0].item<double>(), 4.0);
  EXPECT_EQ(std::get<0>(t.kthvalue(1)).sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(std::get<0>(t.median(1)).flatten()[0].item<double>(), 4.0);
  EXPECT_EQ(t.median().item<double>(), 11.0);
  EXPECT_EQ(std::get<0>(t.mode(0)).sizes(), IntArrayRef({3, 4}));
  EXPECT_EQ(std::get<0>(t.mode()).sizes(), IntArrayRef({2, 3}));
}

TEST(LibtorchOverloads, IndexingMethods) {
  const Tensor t = t234();
  const Tensor idx = tensor({2, 0});
  expect_same(t.index_select(1, idx), stack({t.select(1, 2), t.select(1, 0)}, 1));
  const Tensor g = t.gather(2, zeros({2, 3, 1}, TensorOptions(kLong)));
  expect_same(g, t.narrow(2, 0, 1));
  const Tensor mask = t.lt(5);
  EXPECT_EQ(t.masked_fill(mask, 0).sum().item<double>(), 276.0 - 10.0);
  EXPECT_EQ(t.masked_fill(mask, scalar_tensor(1.0, TensorOptions(kDouble))).sum().item<double>(),
            276.0 - 10.0 + 5.0);
  // index_fill with a 0-dim tensor value; scatter with a reduction.
  const Tensor z = zeros({3}, TensorOptions(kDouble));
  expect_same(z.index_fill(0, tensor({1}), scalar_tensor(7.0, TensorOptions(kDouble))),
              dbl({0.0, 7.0, 0.0}));
  const Tensor ones3 = ones({3}, TensorOptions(kDouble));
  expect_same(ones3.scatter(0, tensor({0, 0}), dbl({2.0, 3.0}), "add"), dbl({6.0, 1.0, 1.0}));
  expect_same(ones3.scatter(0, tensor({2}), 4.0, "multiply"), dbl({1.0, 1.0, 4.0}));
  const auto nz = tensor({{0, 1}, {1, 0}}).nonzero_numpy();
  ASSERT_EQ(nz.size(), 2u);
  expect_same(nz[0], tensor({0, 1}));
  expect_same(nz[1], tensor({1, 0}));
}

TEST(LibtorchOverloads, ElementwiseDefaultsAndConversions) {
  const Tensor t = t234();
  EXPECT_EQ(t.clamp(2, 5).min().item<double>(), 2.0);
  EXPECT_EQ(t.clamp(2, 5).max().item<double>(), 5.0);
  EXPECT_EQ(t.clamp(std::nullopt, 5).max().item<double>(), 5.0);
  const Tensor lo = full({4}, 3.0, TensorOptions(kDouble));
  EXPECT_EQ(t.clamp(lo).min().item<double>(), 3.0);
  EXPECT_EQ(t.clamp_min(lo).min().item<double>(), 3.0);
  EXPECT_EQ(t.clamp_max(lo).max().item<double>(), 3.0);
  EXPECT_EQ(t.clip(std::nullopt, lo).max().item<double>(), 3.0);
  EXPECT_EQ(ember::clamp_min(t, 3).min().item<double>(), 3.0);
  Tensor c = t.clone();
  c.clamp_max_(2.0);
  EXPECT_EQ(c.max().item<double>(), 2.0);
  expect_same(t.pow(2), t * t);
  expect_same(t.pow(t.select(0, 0).select(0, 0)), t.pow(dbl({0.0, 1.0, 2.0, 3.0})));
  expect_same(t.add(t, 2), t * 3);
  expect_same(t.sub(t, 2), -t);
  expect_same(t.add(1), t + 1);
  expect_same(t.div(4, "floor"), (t / 4).floor());
  expect_same(t.neg().div(t + 4, "trunc"), (t.neg() / (t + 4)).trunc());
  EXPECT_EQ(t.to(kFloat).dtype(), kFloat);
  EXPECT_EQ(t.to(kCPU).dtype(), kDouble);
  EXPECT_EQ(t.to().dtype(), kDouble);
  EXPECT_EQ(t.to(TensorOptions().dtype(kInt)).dtype(), kInt);
  EXPECT_EQ(t.to(Device(kCPU), kHalf).dtype(), kHalf);
  EXPECT_EQ(t.to(arange(2)).dtype(), kLong);
  EXPECT_EQ(t.toType(kInt).dtype(), kInt);
  EXPECT_EQ(t.type_as(arange(2)).dtype(), kLong);
}

TEST(LibtorchOverloads, MethodsOfFreeFunctions) {
  const Tensor m = arange(9, TensorOptions(kDouble)).reshape({3, 3}) + 1;
  expect_same(m.tril(), tril(m));
  expect_same(m.triu(1), triu(m, 1));
  Tensor c = m.clone();
  c.tril_(-1);
  expect_same(c, tril(m, -1));
  c = m.clone();
  c.triu_();
  expect_same(c, triu(m));
  const Tensor x = tensor({-1.5, 2.0});
  expect_same(x.absolute(), x.abs());
  expect_same(x.negative(), -x);
  expect_same(x.multiply(x), x * x);
  expect_same(x.multiply(2), x * 2);
  expect_same(x.hardshrink(1.6), tensor({0.0, 2.0}));
  expect_same(x.hardshrink(), x);
  expect_same(x.arctan2(x.flip({0})), atan2(x, x.flip({0})));
  expect_same(x.subtract(x, 2), -x);
  expect_same(x.divide(2.0, "floor"), tensor({-1.0, 1.0}));
  expect_same(x.greater(0), x.gt(0));
  expect_same(x.less(x.flip({0})), x.lt(x.flip({0})));
  expect_same(x.not_equal(2.0), x.ne(2.0));
  Tensor y = x.clone();
  y.negative_();
  expect_same(y, -x);
  expect_same(m.quantile(0.5), tensor(5.0, TensorOptions(kDouble)));
  expect_same(m.quantile(dbl({0.0, 1.0}), 1), stack({m.select(1, 0), m.select(1, 2)}));
  expect_same(m.nanquantile(0.5, 0, true), m.select(0, 1).unsqueeze(0));
  // Cholesky and triangular solves against the free functions.
  const Tensor a = tensor({{4.0, 2.0}, {2.0, 3.0}});
  const Tensor l = a.cholesky();
  expect_same(l.cholesky_inverse(), cholesky_inverse(l));
  const Tensor rhs = tensor({{1.0}, {2.0}});
  expect_same(rhs.cholesky_solve(l), cholesky_solve(rhs, l));
  expect_same(std::get<0>(rhs.triangular_solve(l, /*upper=*/false)),
              std::get<0>(triangular_solve(rhs, l, false)));
  // Random methods: deterministic edge probabilities and ranges.
  const Tensor p = zeros({5}, TensorOptions(kDouble));
  expect_same(p.bernoulli(0.0), p);
  expect_same(p.bernoulli(1.0), p + 1);
  const Tensor w = tensor({0.0, 1.0, 0.0});
  expect_same(w.multinomial(3, true), tensor({1, 1, 1}));
  Tensor r = empty({100}, TensorOptions(kLong));
  r.random_(3);
  EXPECT_GE(r.min().item<int64_t>(), 0);
  EXPECT_LT(r.max().item<int64_t>(), 3);
}
