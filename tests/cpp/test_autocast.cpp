// Autocast (Note [Autocast layer]) from C++: the policies, regions and their nesting, the weight
// cast cache, thread-locality, autograd through the casts, and the gradient scaling ops.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "core/op_table.h"
#include "ember/amp.h"
#include "ember/ember.h"
#include "ops/autocast_call.h"

using namespace ember;
namespace ac = ember::autocast;

namespace {

// Values exact in bfloat16 (multiples of 1/8), so casting them loses nothing.
Tensor exact(std::vector<int64_t> shape, int seed = 0) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(((i * 7 + seed * 3) % 17) - 8) / 8.0f;
  // A fresh tensor, not a view (views are never cached).
  return tensor(v).reshape(shape).clone();
}

// The node that the cast of the second argument of a recorded binary op feeds.
autograd::Node* second_input_node(const Tensor& out) {
  auto fn = out.grad_fn();
  if (!fn || fn->num_outputs() < 2) return nullptr;
  return fn->next_edge(1).function.get();
}

class Autocast : public ::testing::Test {
 protected:
  void TearDown() override {
    // Every test leaves the thread as it found it.
    EXPECT_FALSE(ac::is_enabled(kCPU));
    EXPECT_FALSE(ac::is_enabled(kCUDA));
    EXPECT_EQ(ac::get_autocast_dtype(kCPU), kBFloat16);
    EXPECT_EQ(ac::get_autocast_dtype(kCUDA), kHalf);
    EXPECT_TRUE(ac::is_autocast_cache_enabled());
  }
};

}  // namespace

TEST_F(Autocast, PoliciesComeFromTheOpTraits) {
  using dispatch::autocast_policy;
  using dispatch::CastPolicy;
  EXPECT_EQ(autocast_policy(OpId::mm, kCPU), CastPolicy::Lower);
  EXPECT_EQ(autocast_policy(OpId::mse_loss, kCPU), CastPolicy::Fp32);
  EXPECT_EQ(autocast_policy(OpId::cat, kCPU), CastPolicy::Promote);
  EXPECT_EQ(autocast_policy(OpId::mm, kCUDA), CastPolicy::Lower);
  EXPECT_EQ(autocast_policy(OpId::relu, kCPU), CastPolicy::None);
  // trace is on the CPU fp32 list only.
  EXPECT_EQ(autocast_policy(OpId::trace, kCPU), CastPolicy::Fp32);
  EXPECT_EQ(autocast_policy(OpId::trace, kCUDA), CastPolicy::None);
}

TEST_F(Autocast, LowerFp32AndPromote) {
  Tensor a = exact({3, 4}), b = exact({4, 5}, 1);
  EXPECT_EQ(mm(a, b).dtype(), kFloat);
  {
    ac::AutocastGuard g(kCPU, kBFloat16);
    EXPECT_TRUE(ac::is_enabled(kCPU));
    EXPECT_FALSE(ac::is_enabled(kCUDA));
    Tensor c = mm(a, b);
    EXPECT_EQ(c.dtype(), kBFloat16);
    // Values: the product of bfloat16-exact inputs, within bfloat16 rounding.
    EXPECT_TRUE(allclose(c.to(kFloat), mm(a.to(kDouble), b.to(kDouble)).to(kFloat), 1e-2, 1e-2));
    // Mixed inputs are cast to the lower dtype too.
    EXPECT_EQ(mm(a.to(kBFloat16), b).dtype(), kBFloat16);
    // fp32 ops run in float32 whatever comes in.
    EXPECT_EQ(mse_loss(a.to(kBFloat16), a).dtype(), kFloat);
    EXPECT_EQ(a.to(kBFloat16).matmul(b.to(kBFloat16)).trace().dtype(), kFloat);
    // promote: the widest floating input (bfloat16 with float32 -> float32).
    EXPECT_EQ(cat({a.to(kBFloat16), a}).dtype(), kFloat);
    EXPECT_EQ(cat({a.to(kBFloat16), a.to(kBFloat16)}).dtype(), kBFloat16);
    // float64 is never cast.
    EXPECT_EQ(mm(a.to(kDouble), b.to(kDouble)).dtype(), kDouble);
    EXPECT_EQ(mse_loss(a.to(kDouble), a.to(kDouble)).dtype(), kDouble);
    // Ops with no policy are untouched.
    EXPECT_EQ(relu(a).dtype(), kFloat);
    EXPECT_EQ(a.add(a).dtype(), kFloat);
    EXPECT_EQ(a.to(kBFloat16).add(a).dtype(), kFloat);
    // Integer inputs are not floating: no cast.
    Tensor i = arange(6, TensorOptions().dtype(kLong)).reshape({2, 3});
    EXPECT_EQ(mm(i, i.t()).dtype(), kLong);
  }
  EXPECT_EQ(mm(a, b).dtype(), kFloat);
}

TEST_F(Autocast, Float16Region) {
  Tensor a = exact({3, 4}), b = exact({4, 5}, 1);
  ac::AutocastGuard g(kCPU, kHalf);
  EXPECT_EQ(ac::get_autocast_dtype(kCPU), kHalf);
  EXPECT_EQ(mm(a, b).dtype(), kHalf);
  EXPECT_EQ(cat({a.to(kHalf), a.to(kHalf)}).dtype(), kHalf);
  EXPECT_EQ(cat({a.to(kHalf), a.to(kBFloat16)}).dtype(), kFloat);
  EXPECT_EQ(mse_loss(a.to(kHalf), a.to(kHalf)).dtype(), kFloat);
}

TEST_F(Autocast, NestingAndDisabledRegions) {
  Tensor a = exact({2, 3}), b = exact({3, 2}, 2);
  ac::AutocastGuard outer(kCPU, kBFloat16);
  EXPECT_EQ(mm(a, b).dtype(), kBFloat16);
  {
    ac::AutocastGuard off(kCPU, kBFloat16, /*enabled=*/false);
    EXPECT_FALSE(ac::is_enabled(kCPU));
    EXPECT_EQ(mm(a, b).dtype(), kFloat);
    {
      ac::AutocastGuard on_again(kCPU, kHalf);
      EXPECT_EQ(mm(a, b).dtype(), kHalf);
    }
    EXPECT_FALSE(ac::is_enabled(kCPU));
    EXPECT_EQ(ac::get_autocast_dtype(kCPU), kBFloat16);
    EXPECT_EQ(mm(a, b).dtype(), kFloat);
  }
  EXPECT_TRUE(ac::is_enabled(kCPU));
  EXPECT_EQ(mm(a, b).dtype(), kBFloat16);
  {
    // The guard that keeps the current dtype.
    ac::AutocastGuard same(kCPU);
    EXPECT_EQ(ac::get_autocast_dtype(kCPU), kBFloat16);
  }
  // A CUDA region leaves CPU autocast as it is.
  {
    ac::AutocastGuard cuda(kCUDA, kBFloat16);
    EXPECT_TRUE(ac::is_enabled(kCUDA));
    EXPECT_EQ(ac::get_autocast_dtype(kCUDA), kBFloat16);
    EXPECT_EQ(mm(a, b).dtype(), kBFloat16);
  }
  EXPECT_FALSE(ac::is_enabled(kCUDA));
  EXPECT_EQ(ac::get_autocast_dtype(kCUDA), kHalf);
}

TEST_F(Autocast, NestingCount) {
  EXPECT_EQ(ac::increment_nesting(), 1);
  EXPECT_EQ(ac::increment_nesting(), 2);
  EXPECT_EQ(ac::decrement_nesting(), 1);
  EXPECT_EQ(ac::decrement_nesting(), 0);
}

TEST_F(Autocast, BadDtypeOrDevice) {
  EXPECT_THROW(ac::set_autocast_dtype(kCPU, kFloat), Error);
  EXPECT_THROW(ac::set_autocast_dtype(kCPU, kInt), Error);
  EXPECT_THROW(ac::set_autocast_dtype(kCUDA, kLong), Error);
  EXPECT_EQ(ac::get_autocast_dtype(kCPU), kBFloat16);
  // A guard with a bad dtype throws before changing anything.
  EXPECT_THROW(ac::AutocastGuard g(kCPU, kDouble), Error);
  EXPECT_FALSE(ac::is_enabled(kCPU));
  EXPECT_EQ(ac::increment_nesting(), 1);
  EXPECT_EQ(ac::decrement_nesting(), 0);
  EXPECT_THROW(ac::set_enabled(kMeta, true), Error);
}

TEST_F(Autocast, WeightCastCache) {
  Tensor x = exact({2, 4});
  Tensor w = exact({4, 3}, 1).requires_grad_(true);
  autograd::Node* first = nullptr;
  {
    ac::AutocastGuard g(kCPU, kBFloat16);
    Tensor y1 = mm(x, w), y2 = mm(x, w);
    first = second_input_node(y1);
    ASSERT_NE(first, nullptr);
    // Both products use one cast of the weight.
    EXPECT_EQ(second_input_node(y2), first);
    {
      ac::AutocastGuard inner(kCPU, kBFloat16);
      EXPECT_EQ(second_input_node(mm(x, w)), first);
    }
    // Leaving an inner region keeps the cache.
    EXPECT_EQ(second_input_node(mm(x, w)), first);
    // Not cached: a non-leaf, a tensor that does not require grad, a float64 tensor.
    Tensor nonleaf = w.mul(1.0);
    Tensor z1 = mm(x, nonleaf), z2 = mm(x, nonleaf);
    EXPECT_NE(second_input_node(z1), second_input_node(z2));
    // Keep y1's graph (and so its node) alive while comparing.
    EXPECT_EQ(y1.dtype(), kBFloat16);
  }
  {
    // A new region casts again.
    ac::AutocastGuard g(kCPU, kBFloat16);
    Tensor y = mm(x, w);
    EXPECT_NE(second_input_node(y), nullptr);
  }
  {
    ac::AutocastGuard g(kCPU, kBFloat16, true, /*cache_enabled=*/false);
    EXPECT_FALSE(ac::is_autocast_cache_enabled());
    Tensor y1 = mm(x, w), y2 = mm(x, w);
    EXPECT_NE(second_input_node(y1), second_input_node(y2));
  }
  {
    // Casts made with grad mode off are not stored (they carry no graph).
    ac::AutocastGuard g(kCPU, kBFloat16);
    {
      NoGradGuard ng;
      EXPECT_EQ(mm(x, w).dtype(), kBFloat16);
    }
    Tensor y = mm(x, w);
    ASSERT_NE(second_input_node(y), nullptr);
    y.sum().backward();
    ASSERT_TRUE(w.grad().defined());
    EXPECT_EQ(w.grad().dtype(), kFloat);
  }
}

TEST_F(Autocast, CacheClearedWhenTheOutermostRegionExits) {
  Tensor x = exact({2, 4});
  Tensor w = exact({4, 3}, 1).requires_grad_(true);
  Tensor y_first, y_second;
  {
    ac::AutocastGuard g(kCPU, kBFloat16);
    y_first = mm(x, w);
  }
  {
    ac::AutocastGuard g(kCPU, kBFloat16);
    y_second = mm(x, w);
  }
  // Both graphs are alive: distinct cast nodes mean the second region cast again.
  ASSERT_NE(second_input_node(y_first), nullptr);
  EXPECT_NE(second_input_node(y_first), second_input_node(y_second));
  // clear_cache within a region forgets the cast too.
  ac::AutocastGuard g(kCPU, kBFloat16);
  Tensor a = mm(x, w);
  ac::clear_cache();
  Tensor b = mm(x, w);
  EXPECT_NE(second_input_node(a), second_input_node(b));
}

TEST_F(Autocast, ThreadLocal) {
  Tensor a = exact({2, 3}), b = exact({3, 2}, 2);
  ac::AutocastGuard g(kCPU, kHalf);
  bool other_enabled = true;
  ScalarType other_dtype = kHalf, other_result = kHalf;
  std::thread t([&] {
    other_enabled = ac::is_enabled(kCPU);
    other_dtype = ac::get_autocast_dtype(kCPU);
    other_result = mm(a, b).dtype();
    // A region in the other thread does not leak into this one.
    ac::AutocastGuard g2(kCPU, kBFloat16);
    EXPECT_EQ(mm(a, b).dtype(), kBFloat16);
  });
  t.join();
  EXPECT_FALSE(other_enabled);
  EXPECT_EQ(other_dtype, kBFloat16);
  EXPECT_EQ(other_result, kFloat);
  EXPECT_EQ(ac::get_autocast_dtype(kCPU), kHalf);
  EXPECT_EQ(mm(a, b).dtype(), kHalf);
}

TEST_F(Autocast, AutogradThroughCasts) {
  Tensor x = exact({3, 4});
  Tensor w = exact({5, 4}, 1).requires_grad_(true);
  Tensor bias = exact({5}, 2).requires_grad_(true);
  Tensor loss;
  {
    ac::AutocastGuard g(kCPU, kBFloat16);
    Tensor y = linear(x, w, bias);
    EXPECT_EQ(y.dtype(), kBFloat16);
    loss = mse_loss(y, zeros({3, 5}));
    EXPECT_EQ(loss.dtype(), kFloat);
  }
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat);
  EXPECT_EQ(bias.grad().dtype(), kFloat);
  // The same in float32 without autocast, within bfloat16 rounding.
  Tensor w2 = w.detach().clone().requires_grad_(true);
  Tensor b2 = bias.detach().clone().requires_grad_(true);
  mse_loss(linear(x, w2, b2), zeros({3, 5})).backward();
  EXPECT_TRUE(allclose(w.grad(), w2.grad(), 2e-2, 2e-2));
  EXPECT_TRUE(allclose(bias.grad(), b2.grad(), 2e-2, 2e-2));
}

TEST_F(Autocast, AmpUnscale) {
  Tensor a = tensor(std::vector<float>{2.f, -4.f, 8.f, 0.f});
  Tensor b = tensor(std::vector<double>{6.0, 1.0}, TensorOptions().dtype(kDouble))
                 .reshape({2, 1})
                 .expand({2, 3})
                 .contiguous()
                 .t();
  Tensor found = zeros({1});
  Tensor inv = full({1}, 0.25);
  _amp_foreach_non_finite_check_and_unscale_({a, b}, found, inv);
  EXPECT_EQ(found.item<float>(), 0.f);
  EXPECT_TRUE(equal(a, tensor(std::vector<float>{0.5f, -1.f, 2.f, 0.f})));
  EXPECT_EQ(b.dtype(), kDouble);
  EXPECT_DOUBLE_EQ(b.index({0, 0}).item<double>(), 1.5);
  EXPECT_DOUBLE_EQ(b.index({0, 1}).item<double>(), 0.25);
  const float inf = std::numeric_limits<float>::infinity();
  Tensor c = tensor(std::vector<float>{1.f, inf, 4.f});
  _amp_foreach_non_finite_check_and_unscale_({c}, found, inv);
  EXPECT_EQ(found.item<float>(), 1.f);
  EXPECT_EQ(c.index({0}).item<float>(), 0.25f);
  EXPECT_TRUE(std::isinf(c.index({1}).item<float>()));
  // Bad arguments.
  EXPECT_THROW(_amp_foreach_non_finite_check_and_unscale_({c}, found, full({2}, 1.0)), Error);
  Tensor found_int = zeros({1}, TensorOptions().dtype(kInt));
  EXPECT_THROW(_amp_foreach_non_finite_check_and_unscale_({c}, found_int, inv), Error);
  Tensor ints = arange(3, TensorOptions().dtype(kLong));
  EXPECT_THROW(_amp_foreach_non_finite_check_and_unscale_({ints}, found, inv), Error);
}

TEST_F(Autocast, AmpUpdateScale) {
  Tensor scale = full({1}, 8.0);
  Tensor tracker = zeros({1}, TensorOptions().dtype(kInt));
  Tensor clean = zeros({1}), bad = ones({1});
  _amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 2);
  EXPECT_EQ(scale.item<float>(), 8.f);
  EXPECT_EQ(tracker.item<int32_t>(), 1);
  Tensor& r = _amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 2);
  EXPECT_TRUE(r.is_same(scale));
  EXPECT_EQ(scale.item<float>(), 16.f);
  EXPECT_EQ(tracker.item<int32_t>(), 0);
  _amp_update_scale_(scale, tracker, clean, 2.0, 0.5, 2);
  _amp_update_scale_(scale, tracker, bad, 2.0, 0.5, 2);
  EXPECT_EQ(scale.item<float>(), 8.f);
  EXPECT_EQ(tracker.item<int32_t>(), 0);
  // Growth that would overflow float32 keeps the scale.
  Tensor big = full({1}, 3e38);
  Tensor t1 = zeros({1}, TensorOptions().dtype(kInt));
  _amp_update_scale_(big, t1, clean, 2.0, 0.5, 1);
  EXPECT_FLOAT_EQ(big.item<float>(), 3e38f);
  EXPECT_EQ(t1.item<int32_t>(), 0);
  EXPECT_THROW(_amp_update_scale_(scale, clean, clean, 2.0, 0.5, 2), Error);
  Tensor scale64 = full({1}, 1.0, TensorOptions().dtype(kDouble));
  EXPECT_THROW(_amp_update_scale_(scale64, tracker, clean, 2.0, 0.5, 2), Error);
}
