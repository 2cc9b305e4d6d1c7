// CUDA indexing, scatter/gather, masked ops, sort, embedding, losses and random sampling against
// the CPU results of the same ops (values, dtypes, shapes, exception types, gradients), and the
// same-seed-same-numbers guarantee of the Philox stream across devices.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "ember/cuda.h"
#include "ember/ember.h"

using namespace ember;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"

const Device kGpu(kCUDA, 0);

Tensor gpu(const Tensor& t) { return t.to(kGpu); }

// The CUDA result equals the CPU one exactly (dtype, shape, values; NaN == NaN).
void expect_same(const Tensor& cpu_r, const Tensor& cuda_r, const char* what) {
  ASSERT_TRUE(cuda_r.is_cuda()) << what;
  ASSERT_EQ(cpu_r.dtype(), cuda_r.dtype()) << what;
  ASSERT_EQ(cpu_r.sizes().vec(), cuda_r.sizes().vec()) << what;
  Tensor back = cuda_r.cpu();
  if (cpu_r.is_floating_point() || cpu_r.is_complex()) {
    EXPECT_TRUE(allclose(cpu_r, back, 0, 0, /*equal_nan=*/true)) << what;
  } else {
    EXPECT_TRUE(equal(cpu_r, back)) << what;
  }
}

void expect_close(const Tensor& cpu_r, const Tensor& cuda_r, double rtol, double atol,
                  const char* what) {
  ASSERT_TRUE(cuda_r.is_cuda()) << what;
  ASSERT_EQ(cpu_r.dtype(), cuda_r.dtype()) << what;
  ASSERT_EQ(cpu_r.sizes().vec(), cuda_r.sizes().vec()) << what;
  EXPECT_TRUE(allclose(cpu_r.to(kDouble), cuda_r.cpu().to(kDouble), rtol, atol, true)) << what;
}

// Runs f on CPU and CUDA arguments and compares (f gets a device to build its inputs on).
void same_on_both(const std::function<Tensor(Device)>& f, const char* what) {
  Tensor c = f(Device(kCPU));
  Tensor g = f(kGpu);
  expect_same(c, g, what);
}

template <class E>
void throws_on_both(const std::function<void(Device)>& f, const char* what) {
  EXPECT_THROW(f(Device(kCPU)), E) << what << " (cpu)";
  EXPECT_THROW(f(kGpu), E) << what << " (cuda)";
}

Tensor arange_f(int64_t n, ScalarType dt, Device d) {
  return arange(n, TensorOptions(kDouble)).sin().mul(10).to(dt).to(d);
}

const ScalarType kDtypes[] = {kFloat, kDouble, kHalf, kBFloat16, kLong, kInt, kByte, kBool};

// ---- index_select, take, put, index_copy/add/fill ----

TEST(CudaIndex, IndexSelect) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kDtypes) {
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(60, dt, d).reshape({3, 4, 5});
          Tensor idx = tensor({2, 0, 2, 1}, TensorOptions(kLong)).to(d);
          return x.index_select(1, idx);
        },
        "index_select dim 1");
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(60, dt, d).reshape({3, 4, 5}).transpose(0, 2);  // strided
          Tensor idx = tensor({4, 0}, TensorOptions(kInt)).to(d);
          return x.index_select(0, idx);
        },
        "index_select strided");
  }
  same_on_both(
      [](Device d) {
        return arange_f(6, kFloat, d).reshape({2, 3}).index_select(1, empty({0}, kLong).to(d));
      },
      "index_select empty index");
  same_on_both(
      [](Device d) {
        return full({}, 3.5, TensorOptions(kFloat))
            .to(d)
            .index_select(0, zeros({1}, TensorOptions(kLong)).to(d));
      },
      "index_select 0-dim");
  throws_on_both<IndexError>(
      [](Device d) {
        arange_f(6, kFloat, d).index_select(0, tensor({1, 6}, TensorOptions(kLong)).to(d));
      },
      "index_select out of range");
  throws_on_both<IndexError>(
      [](Device d) {
        arange_f(6, kFloat, d).index_select(0, tensor({-1}, TensorOptions(kLong)).to(d));
      },
      "index_select negative");
}

TEST(CudaIndex, TakePut) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kHalf, kLong, kInt}) {
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(24, dt, d).reshape({4, 6}).t();
          return x.take(tensor({0, -1, 5, 23, 5}, TensorOptions(kLong)).to(d));
        },
        "take");
    for (bool acc : {false, true}) {
      same_on_both(
          [&](Device d) {
            Tensor x = zeros({4, 6}, TensorOptions(dt)).to(d).t();  // strided target
            Tensor idx = tensor({0, -1, 5, 7, 5}, TensorOptions(kLong)).to(d);
            Tensor src = arange_f(5, dt, d);
            // Without accumulate the duplicate index gets one of its sources on cuda: drop it.
            if (!acc) idx = tensor({0, -1, 5, 7, 9}, TensorOptions(kLong)).to(d);
            return x.put_(idx, src, acc).contiguous();
          },
          acc ? "put_ accumulate" : "put_");
    }
  }
  throws_on_both<IndexError>(
      [](Device d) { arange_f(6, kFloat, d).take(tensor({6}, TensorOptions(kLong)).to(d)); },
      "take out of range");
}

TEST(CudaIndex, IndexCopyAddFill) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kLong, kInt, kShort, kBool}) {
    same_on_both(
        [&](Device d) {
          Tensor x = zeros({5, 3}, TensorOptions(dt)).to(d);
          return x.index_copy(0, tensor({4, 0, 2}, TensorOptions(kLong)).to(d),
                              arange_f(9, dt, d).reshape({3, 3}));
        },
        "index_copy");
    for (bool det : {false, true}) {
      use_deterministic_algorithms(det);
      auto f = [&](Device d) {
        Tensor x = arange_f(15, dt, d).reshape({3, 5}).t();  // strided
        Tensor src = arange_f(10, dt, d).reshape({5, 2});
        return x.index_add(1, tensor({2, 2}, TensorOptions(kLong)).to(d), src,
                           dt == kBool ? Scalar(true) : Scalar(2));
      };
      // Atomics may add the two entries in either order: exact only when deterministic.
      if (det || !isFloatingType(dt))
        expect_same(f(Device(kCPU)), f(kGpu), "index_add");
      else
        expect_close(f(Device(kCPU)), f(kGpu), 1e-2, 1e-2, "index_add atomics");
      use_deterministic_algorithms(false);
    }
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(12, dt, d).reshape({3, 4});
          return x.index_fill(1, tensor({-1, 0}, TensorOptions(kLong)).to(d),
                              dt == kBool ? Scalar(true) : Scalar(7));
        },
        "index_fill");
  }
  // Float sums of many entries: atomics may reorder, so compare with a tolerance.
  Tensor src = arange_f(4000, kFloat, Device(kCPU)).reshape({1000, 4});
  Tensor idx = arange(1000, TensorOptions(kLong)).remainder(7);
  Tensor c = zeros({7, 4}).index_add(0, idx, src);
  expect_close(c, zeros({7, 4}).to(kGpu).index_add(0, gpu(idx), gpu(src)), 1e-5, 1e-4,
               "index_add many");
  use_deterministic_algorithms(true);
  expect_same(c, zeros({7, 4}).to(kGpu).index_add(0, gpu(idx), gpu(src)),
              "index_add many deterministic");
  use_deterministic_algorithms(false);
  throws_on_both<IndexError>(
      [](Device d) {
        zeros({3, 2}).to(d).index_add_(0, tensor({3}, TensorOptions(kLong)).to(d),
                                       ones({1, 2}).to(d));
      },
      "index_add out of range");
}

// ---- gather / scatter ----

TEST(CudaIndex, GatherScatter) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kDtypes) {
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(20, dt, d).reshape({4, 5}).t();  // strided (5, 4)
          Tensor idx = tensor({0, 3, 3, 1, 2, 0}, TensorOptions(kLong)).reshape({3, 2}).to(d);
          return x.gather(1, idx);
        },
        "gather");
    same_on_both(
        [&](Device d) {
          Tensor x = zeros({3, 5}, TensorOptions(dt)).to(d);
          Tensor idx = tensor({4, 1, 0, 2, 3, 1}, TensorOptions(kLong)).reshape({2, 3}).to(d);
          return x.scatter(1, idx, arange_f(6, dt, d).reshape({2, 3}));
        },
        "scatter");
  }
  for (ScalarType dt : {kFloat, kDouble, kHalf, kLong, kInt}) {
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(10, dt, d).reshape({2, 5});
          Tensor idx = tensor({1, 1, 1, 0, 0, 0, 4, 4}, TensorOptions(kLong)).reshape({2, 4});
          return x.scatter_add(1, idx.to(d), arange_f(8, dt, d).reshape({2, 4}));
        },
        "scatter_add duplicates");
    for (const char* red : {"sum", "prod", "amax", "amin", "mean"}) {
      same_on_both(
          [&](Device d) {
            Tensor x = arange_f(10, dt, d).reshape({5, 2});
            Tensor idx = tensor({1, 1, 1, 0, 4, 0}, TensorOptions(kLong)).reshape({3, 2});
            return x.scatter_reduce(0, idx.to(d), arange_f(6, dt, d).reshape({3, 2}), red, true);
          },
          red);
    }
  }
  // NaN propagates through amax as on the CPU.
  same_on_both(
      [](Device d) {
        Tensor src = tensor({1.0, std::nan(""), 3.0}, TensorOptions(kFloat)).to(d);
        return zeros({2}).to(d).scatter_reduce(0, tensor({0, 0, 1}, TensorOptions(kLong)).to(d),
                                               src, "amax", true);
      },
      "scatter_reduce amax NaN");
  same_on_both(
      [](Device d) {
        return zeros({2, 3}).to(d).scatter(0, zeros({0, 3}, TensorOptions(kLong)).to(d), 1.0);
      },
      "scatter empty index");
  throws_on_both<Error>(
      [](Device d) {
        zeros({2, 3}).to(d).gather(0, tensor({{0, 2}}, TensorOptions(kLong)).to(d));
      },
      "gather out of range");
  throws_on_both<Error>(
      [](Device d) {
        zeros({2, 3}).to(d).scatter_(1, tensor({{0, 3}}, TensorOptions(kLong)).to(d), 1.0);
      },
      "scatter out of range");
}

// ---- masked ops, nonzero, advanced indexing ----

TEST(CudaIndex, MaskedAndNonzero) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kHalf, kLong, kBool}) {
    auto mask = [](Device d) { return arange(12).reshape({3, 4}).remainder(3).eq(1).to(d); };
    same_on_both(
        [&](Device d) {
          return arange_f(12, dt, d).reshape({4, 3}).t().masked_fill(mask(d), 1);
        },
        "masked_fill strided");
    same_on_both(
        [&](Device d) {
          return arange_f(12, dt, d).reshape({3, 4}).masked_select(mask(d));
        },
        "masked_select");
    same_on_both(
        [&](Device d) {
          return arange_f(4, dt, d).masked_select(mask(d));  // broadcast self
        },
        "masked_select broadcast");
    same_on_both(
        [&](Device d) {
          return zeros({3, 4}, TensorOptions(dt))
              .to(d)
              .masked_scatter(mask(d), arange_f(10, dt, d));
        },
        "masked_scatter");
    same_on_both(
        [&](Device d) {
          return nonzero(arange_f(24, dt, d).reshape({2, 3, 4}));
        },
        "nonzero");
  }
  same_on_both([](Device d) { return nonzero(zeros({0, 3}).to(d)); }, "nonzero empty");
  same_on_both([](Device d) { return nonzero(ones({}).to(d)); }, "nonzero 0-dim");
  throws_on_both<Error>(
      [](Device d) {
        zeros({4}).to(d).masked_scatter_(ones({4}, TensorOptions(kBool)).to(d), ones({3}).to(d));
      },
      "masked_scatter short source");
}

TEST(CudaIndex, AdvancedIndexing) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kHalf, kLong}) {
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(60, dt, d).reshape({3, 4, 5}).transpose(1, 2);
          std::vector<std::optional<Tensor>> ix = {std::nullopt,
                                                   tensor({0, -1, 2}, TensorOptions(kLong)).to(d),
                                                   tensor({{1}, {3}}, TensorOptions(kLong)).to(d)};
          return index(x, ix);
        },
        "index adjacent");
    same_on_both(
        [&](Device d) {
          Tensor x = arange_f(60, dt, d).reshape({3, 4, 5});
          std::vector<std::optional<Tensor>> ix = {tensor({2, 0}, TensorOptions(kLong)).to(d),
                                                   std::nullopt,
                                                   tensor({4, 4}, TensorOptions(kLong)).to(d)};
          return index(x, ix);
        },
        "index separated");
    for (bool acc : {false, true}) {
      same_on_both(
          [&](Device d) {
            Tensor x = zeros({4, 3}, TensorOptions(dt)).to(d);
            Tensor i = acc ? tensor({1, 1, 3}, TensorOptions(kLong))
                           : tensor({1, 0, 3}, TensorOptions(kLong));
            std::vector<std::optional<Tensor>> ix = {i.to(d)};
            return index_put(x, ix, arange_f(9, dt, d).reshape({3, 3}), acc);
          },
          acc ? "index_put accumulate" : "index_put");
    }
  }
  // A CPU index of a CUDA tensor is uploaded.
  Tensor x = arange_f(10, kFloat, Device(kCPU));
  std::vector<std::optional<Tensor>> ix = {tensor({3, 1}, TensorOptions(kLong))};
  expect_same(index(x, ix), index(gpu(x), ix), "cpu index of a cuda tensor");
  throws_on_both<IndexError>(
      [](Device d) {
        std::vector<std::optional<Tensor>> bad = {tensor({5}, TensorOptions(kLong)).to(d)};
        index(zeros({5}).to(d), bad);
      },
      "index out of range");
}

// ---- gradients ----

TEST(CudaIndex, Gradients) {
  SKIP_WITHOUT_CUDA();
  auto grad_of = [](Device d, const std::function<Tensor(const Tensor&, Device)>& f) {
    Tensor x = arange_f(20, kDouble, d).reshape({4, 5}).detach().requires_grad_(true);
    Tensor y = f(x, d);
    (y * arange_f(y.numel(), kDouble, d).reshape(y.sizes())).sum().backward();
    return x.grad();
  };
  auto check = [&](const std::function<Tensor(const Tensor&, Device)>& f, const char* what) {
    expect_close(grad_of(Device(kCPU), f), grad_of(kGpu, f), 1e-12, 1e-12, what);
  };
  check(
      [](const Tensor& x, Device d) {
        return x.gather(1, tensor({{0, 0, 4}, {1, 2, 2}}, TensorOptions(kLong)).to(d));
      },
      "gather backward");
  check(
      [](const Tensor& x, Device d) {
        return x.index_select(0, tensor({3, 3, 0}, TensorOptions(kLong)).to(d));
      },
      "index_select backward");
  check(
      [](const Tensor& x, Device d) {
        return embedding(x, tensor({{1, 3}, {3, 0}}, TensorOptions(kLong)).to(d));
      },
      "embedding backward");
  check(
      [](const Tensor& x, Device d) {
        return embedding(x, tensor({1, 2, 2, 0}, TensorOptions(kLong)).to(d), /*padding_idx=*/2);
      },
      "embedding backward padding_idx");
  use_deterministic_algorithms(true);
  check(
      [](const Tensor& x, Device d) {
        return embedding(x, tensor({3, 3, 3, 1}, TensorOptions(kLong)).to(d));
      },
      "embedding backward deterministic");
  use_deterministic_algorithms(false);
  throws_on_both<IndexError>(
      [](Device d) {
        embedding(zeros({3, 2}).to(d), tensor({3}, TensorOptions(kLong)).to(d));
      },
      "embedding out of range");
}

// ---- sort ----

TEST(CudaIndex, Sort) {
  SKIP_WITHOUT_CUDA();
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Tensor special = tensor({3.0, nan, -0.0, 0.0, -inf, 1.0, 3.0, inf, -2.0, nan, 0.0, 1.0},
                          TensorOptions(kDouble));
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16}) {
    for (bool desc : {false, true}) {
      for (int64_t dim : {0, 1}) {
        Tensor x = special.to(dt).reshape({3, 4});
        auto [vc, ic] = x.sort(dim, desc);
        auto [vg, ig] = gpu(x).sort(dim, desc);
        expect_same(vc, vg, "sort values");
        expect_same(ic, ig, "sort indices (stable, NaN last / first)");
      }
    }
  }
  for (ScalarType dt : {kLong, kInt, kShort, kChar, kByte, kBool}) {
    Tensor x = arange(-20, 20).remainder(7).to(dt).reshape({5, 8}).t();  // strided, ties
    for (bool desc : {false, true}) {
      auto [vc, ic] = x.sort(1, desc);
      auto [vg, ig] = gpu(x).sort(1, desc);
      expect_same(vc, vg, "sort int values");
      expect_same(ic, ig, "sort int indices");
    }
  }
  // topk: the CPU's values; tie-free rows give the CPU's indices too.
  for (ScalarType dt : {kFloat, kDouble, kLong}) {
    Tensor x = arange(60, TensorOptions(kDouble)).mul(7).remainder(61).to(dt).reshape({6, 10});
    for (bool largest : {true, false}) {
      auto [vc, ic] = x.topk(3, 1, largest, true);
      auto [vg, ig] = gpu(x).topk(3, 1, largest, true);
      expect_same(vc, vg, "topk values");
      expect_same(ic, ig, "topk indices");
      auto [vc0, ic0] = x.topk(4, 0, largest, true);
      auto [vg0, ig0] = gpu(x).topk(4, 0, largest, true);
      expect_same(vc0, vg0, "topk dim 0 values");
    }
  }
  // kthvalue on tie-free rows: the CPU's values and positions.
  for (ScalarType dt : {kFloat, kDouble, kInt}) {
    Tensor x = arange(60, TensorOptions(kDouble)).mul(7).remainder(61).to(dt).reshape({6, 10});
    for (int64_t dim : {0, 1}) {
      auto [vc, ic] = kthvalue(x, 3, dim, dim == 0);
      auto [vg, ig] = kthvalue(gpu(x), 3, dim, dim == 0);
      expect_same(vc, vg, "kthvalue values");
      expect_same(ic, ig, "kthvalue indices");
    }
  }
  Tensor with_nan = tensor({1.0, std::nan(""), 3.0, -1.0}, TensorOptions(kFloat));
  expect_same(std::get<0>(with_nan.topk(2)), std::get<0>(gpu(with_nan).topk(2)), "topk NaN");
  auto [v0, i0] = gpu(full({}, 2.0)).sort(0);
  EXPECT_TRUE(i0.is_cuda());
  EXPECT_EQ(i0.dim(), 0);
  auto [ve, ie] = gpu(zeros({0, 3})).sort(1);
  EXPECT_EQ(ve.size(0), 0);
}

TEST(CudaIndex, Unique) {
  SKIP_WITHOUT_CUDA();
  // (bfloat16's CPU unique keeps -0.0 and 0.0 apart, Note [Unique order]: not compared here.)
  for (ScalarType dt : {kFloat, kDouble, kLong, kInt, kByte, kBool}) {
    Tensor x = tensor({3.0, -0.0, 1.0, 3.0, 0.0, 7.0, 1.0, 1.0, -2.0}, TensorOptions(kDouble))
                   .to(dt)
                   .reshape({3, 3})
                   .t();  // strided
    for (bool inv : {false, true}) {
      for (bool cnt : {false, true}) {
        auto [oc, ic, cc] = _unique2(x, true, inv, cnt);
        auto [og, ig, cg] = _unique2(gpu(x), true, inv, cnt);
        expect_same(oc, og, "unique values");
        expect_same(ic, ig, "unique inverse");
        expect_same(cc, cg, "unique counts");
        auto [oc2, ic2, cc2] = unique_consecutive(x, inv, cnt);
        auto [og2, ig2, cg2] = unique_consecutive(gpu(x), inv, cnt);
        expect_same(oc2, og2, "unique_consecutive values");
        expect_same(ic2, ig2, "unique_consecutive inverse");
        expect_same(cc2, cg2, "unique_consecutive counts");
      }
    }
  }
  auto [oe, ie, ce] = _unique2(gpu(zeros({0, 2})), true, true, true);
  EXPECT_EQ(oe.numel(), 0);
  EXPECT_EQ(ie.sizes().vec(), (std::vector<int64_t>{0, 2}));
}

TEST(CudaIndex, SearchsortedAndBucketize) {
  SKIP_WITHOUT_CUDA();
  const double nan = std::nan("");
  for (ScalarType dt : {kFloat, kDouble, kHalf, kLong, kInt}) {
    for (bool right : {false, true}) {
      for (bool out32 : {false, true}) {
        same_on_both(
            [&](Device d) {
              Tensor seq = tensor({-1.0, 0.0, 0.0, 2.0, 5.0}, TensorOptions(kDouble)).to(dt).to(d);
              Tensor v = tensor({{-3.0, 0.0, 2.0}, {7.0, 1.0, 5.0}}, TensorOptions(kDouble))
                             .to(dt)
                             .to(d)
                             .t();  // strided values
              return searchsorted(seq, v, out32, right);
            },
            "searchsorted 1-D");
      }
      same_on_both(
          [&](Device d) {
            Tensor seq =
                tensor({{3.0, 1.0, 2.0}, {0.0, 9.0, 4.0}}, TensorOptions(kDouble)).to(dt).to(d);
            Tensor sorter = tensor({{1, 2, 0}, {0, 2, 1}}, TensorOptions(kLong)).to(d);
            Tensor v = tensor({{2.0, 0.0}, {4.0, 10.0}}, TensorOptions(kDouble)).to(dt).to(d);
            return searchsorted(seq, v, false, right, std::nullopt, sorter);
          },
          "searchsorted rows with sorter");
    }
  }
  same_on_both(
      [&](Device d) {
        Tensor b = tensor({0.0, 1.0, 2.0}, TensorOptions(kFloat)).to(d);
        return bucketize(tensor({nan, 1.0, -4.0}, TensorOptions(kFloat)).to(d), b, false, false);
      },
      "bucketize NaN");
  throws_on_both<IndexError>(
      [](Device d) {
        searchsorted(tensor({1.0, 2.0}).to(d), tensor({1.5}).to(d), false, false, std::nullopt,
                     tensor({0, 2}, TensorOptions(kLong)).to(d));
      },
      "searchsorted bad sorter");
}

// ---- losses ----

TEST(CudaIndex, NllLossAndCrossEntropy) {
  SKIP_WITHOUT_CUDA();
  Tensor logits = arange_f(20, kFloat, Device(kCPU)).reshape({4, 5});
  Tensor target = tensor({4, 0, -100, 2}, TensorOptions(kLong));
  Tensor c = nll_loss(logits.log_softmax(1), target);
  Tensor g = nll_loss(gpu(logits).log_softmax(1), gpu(target));
  expect_close(c, g, 1e-5, 1e-6, "nll_loss");
  expect_close(cross_entropy(logits, target), cross_entropy(gpu(logits), gpu(target)), 1e-5, 1e-6,
               "cross_entropy");
  throws_on_both<IndexError>(
      [&](Device d) {
        nll_loss(logits.to(d), tensor({5, 0, 0, 0}, TensorOptions(kLong)).to(d));
      },
      "nll_loss bad target");
}

// ---- random: the same seed gives the same numbers on CPU and GPU ----

struct GenPair {
  Generator cpu{Device(kCPU)}, cuda{kGpu};
  explicit GenPair(uint64_t seed) {
    cpu.manual_seed(seed);
    cuda.manual_seed(seed);
  }
};

TEST(CudaRandom, SameSeedSameNumbers) {
  SKIP_WITHOUT_CUDA();
  for (uint64_t seed : {0ull, 7ull, 123456789ull}) {
    for (int64_t n : {1, 5, 4099, 100003}) {
      for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16}) {
        GenPair g(seed);
        Tensor a = empty({n}, TensorOptions(dt)).uniform_(-1, 3, g.cpu);
        Tensor b = empty({n}, TensorOptions(dt)).to(kGpu).uniform_(-1, 3, g.cuda);
        expect_same(a, b, "uniform_");
        // The next draw continues from the same offset on both.
        expect_same(empty({n}, TensorOptions(dt)).bernoulli_(0.3, g.cpu),
                    empty({n}, TensorOptions(dt)).to(kGpu).bernoulli_(0.3, g.cuda), "bernoulli_");
        expect_close(empty({n}, TensorOptions(dt)).normal_(1, 2, g.cpu),
                     empty({n}, TensorOptions(dt)).to(kGpu).normal_(1, 2, g.cuda),
                     dt == kDouble ? 1e-12 : 1e-2, 1e-5, "normal_");
        expect_close(empty({n}, TensorOptions(dt)).exponential_(2, g.cpu),
                     empty({n}, TensorOptions(dt)).to(kGpu).exponential_(2, g.cuda),
                     dt == kDouble ? 1e-12 : 1e-2, 1e-5, "exponential_");
      }
      GenPair g(seed);
      for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 10}, {-5, 3}, {0, int64_t(1) << 40}}) {
        expect_same(randint(lo, hi, {n}, g.cpu),
                    randint(lo, hi, {n}, g.cuda, TensorOptions().device(kGpu)), "randint");
      }
      Tensor p = rand({n}, TensorOptions(kDouble));
      expect_same(bernoulli(p, g.cpu), bernoulli(gpu(p), g.cuda), "bernoulli tensor p");
    }
  }
  // A strided CUDA target gets the numbers of the CPU's strided target.
  GenPair g(5);
  Tensor a = empty({6, 4}).t().uniform_(0, 1, g.cpu);
  Tensor b = empty({6, 4}).to(kGpu).t().uniform_(0, 1, g.cuda);
  expect_same(a, b, "uniform_ strided");
  // Complex fills twice the reals.
  expect_same(empty({9}, TensorOptions(kComplexFloat)).uniform_(0, 1, g.cpu),
              empty({9}, TensorOptions(kComplexFloat)).to(kGpu).uniform_(0, 1, g.cuda),
              "uniform_ complex");
  // Bad probabilities raise before drawing; the generators stay in step.
  Tensor bad = tensor({0.5, 1.5}, TensorOptions(kDouble));
  EXPECT_THROW(empty({2}).bernoulli_(bad, g.cpu), Error);
  EXPECT_THROW(empty({2}).to(kGpu).bernoulli_(gpu(bad), g.cuda), Error);
  expect_same(empty({3}).uniform_(0, 1, g.cpu), empty({3}).to(kGpu).uniform_(0, 1, g.cuda),
              "uniform_ after a failed bernoulli_");
}

TEST(CudaRandom, DefaultGeneratorsAndDropout) {
  SKIP_WITHOUT_CUDA();
  manual_seed(11);
  Tensor a = rand({1000});
  Tensor b = rand({1000}, TensorOptions().device(kGpu));
  expect_same(a, b, "rand after manual_seed");
  Tensor x = ones({2000}, TensorOptions().device(kGpu));
  Tensor y = dropout(x, 0.25, true);
  Tensor kept = y.ne(0).sum().cpu();
  // 1500 expected, sd ~ 19.4: 6 sigma.
  EXPECT_NEAR(double(kept.item<int64_t>()), 1500.0, 117.0);
  EXPECT_TRUE(allclose(y.masked_select(y.ne(0)).cpu(), full({kept.item<int64_t>()}, 1 / 0.75)));
}

}  // namespace

// ---- index-map copies (flip, roll, repeat, repeat_interleave, reflect/replicate/circular pad)
//      and the device-generic shape ops built on other ops ----

TEST(CudaShape, IndexMapCopiesMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kDtypes) {
    const std::string s = dtype_name(dt);
    // A transposed (non-contiguous) input of 3 dims.
    auto x = [&](Device d) { return arange_f(60, dt, d).reshape({3, 4, 5}).transpose(1, 2); };
    same_on_both([&](Device d) { return x(d).flip({0, 2}); }, ("flip " + s).c_str());
    same_on_both([&](Device d) { return x(d).roll({2, -1}, {1, 2}); }, ("roll " + s).c_str());
    same_on_both([&](Device d) { return x(d).roll({7}, {}); }, ("roll flat " + s).c_str());
    same_on_both([&](Device d) { return x(d).repeat({2, 1, 3, 2}); }, ("repeat " + s).c_str());
    same_on_both([&](Device d) { return x(d).repeat_interleave(3, 1); },
                 ("repeat_interleave " + s).c_str());
    same_on_both(
        [&](Device d) {
          return x(d).repeat_interleave(
              tensor(std::vector<int64_t>{2, 0, 1}, TensorOptions(kLong)).to(d), 0);
        },
        ("repeat_interleave tensor " + s).c_str());
    same_on_both([&](Device d) { return cat({x(d), x(d).flip({1})}, 1); }, ("cat " + s).c_str());
    same_on_both([&](Device d) { return x(d).reshape({12, 5}); }, ("reshape " + s).c_str());
    same_on_both(
        [&](Device d) {
          return constant_pad_nd(x(d), {1, 2, 0, 1}, 0);
        },
        ("constant_pad_nd " + s).c_str());
    // Zero-size and 0-dim inputs.
    same_on_both([&](Device d) { return x(d).narrow(1, 0, 0).flip({1}); },
                 ("flip zero-size " + s).c_str());
    same_on_both([&](Device d) { return x(d).select(0, 1).select(0, 2).select(0, 3).flip({}); },
                 ("flip 0-dim " + s).c_str());
  }
  for (ScalarType dt : {kFloat, kDouble, kComplexFloat, kComplexDouble}) {
    const std::string s = dtype_name(dt);
    auto x = [&](Device d) { return arange_f(40, kDouble, d).to(dt).reshape({1, 2, 4, 5}); };
    for (const char* mode : {"reflect", "replicate", "circular"})
      same_on_both(
          [&](Device d) {
            return pad(x(d), {2, 1, 1, 3}, mode);
          },
          (std::string("pad ") + mode + " " + s).c_str());
  }
  // The maps are uploaded through pinned memory and the copy does not wait for the host:
  // back-to-back copies from a reused buffer stay correct.
  Tensor big = arange_f(1 << 16, kFloat, kGpu).reshape({256, 256});
  Tensor expect = arange_f(1 << 16, kFloat, Device(kCPU)).reshape({256, 256});
  for (int i = 0; i < 8; ++i) {
    const int64_t sh = 3 * i + 1;
    expect_same(expect.roll({sh}, {1}), big.roll({sh}, {1}), "roll loop");
  }
}
