// queue_callback: callbacks run once at the end of the backward pass, after every gradient was
// accumulated (what DistributedDataParallel's finalisation relies on).
#include <gtest/gtest.h>

#include <vector>

#include "ember/autograd_engine.h"
#include "ember/ember.h"

using namespace ember;

TEST(AutogradCallbacks, RunAfterEveryGradientIsAccumulated) {
  Tensor a = ones({3}).requires_grad_(true);
  Tensor b = ones({2}).requires_grad_(true);
  std::vector<std::string> log;
  bool queued = false;
  auto hook = [&](const Tensor& p) {
    log.push_back(p.numel() == 3 ? "a" : "b");
    EXPECT_TRUE(autograd::in_backward_pass());
    if (!queued) {
      queued = true;
      autograd::queue_callback([&] {
        // Both leaves' grads are in place when the callback runs.
        ASSERT_TRUE(a.grad().defined());
        ASSERT_TRUE(b.grad().defined());
        EXPECT_DOUBLE_EQ(a.grad().sum().item<double>(), 6.0);
        EXPECT_DOUBLE_EQ(b.grad().sum().item<double>(), 2.0);
        log.push_back("end");
        // A callback may queue another; it runs in the same pass, after this one.
        autograd::queue_callback([&] { log.push_back("end2"); });
      });
    }
  };
  a.register_post_accumulate_grad_hook(hook);
  b.register_post_accumulate_grad_hook(hook);
  Tensor loss = a.mul(2).sum() + b.sum();
  loss.backward();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[2], "end");
  EXPECT_EQ(log[3], "end2");
  EXPECT_FALSE(autograd::in_backward_pass());
}

TEST(AutogradCallbacks, OutsideBackwardIsAnError) {
  EXPECT_THROW(autograd::queue_callback([] {}), Error);
  EXPECT_FALSE(autograd::in_backward_pass());
}

TEST(AutogradCallbacks, NotRunWhenTheHookQueuesInAFailedPass) {
  Tensor a = ones({2}).requires_grad_(true);
  int ran = 0;
  a.register_post_accumulate_grad_hook([&](const Tensor&) {
    autograd::queue_callback([&] { ++ran; });
    throw ValueError("[hook] stop");
  });
  EXPECT_THROW(a.sum().backward(), ValueError);
  EXPECT_EQ(ran, 0);
  // The next pass starts with no leftover callbacks.
  Tensor b = ones({2}).requires_grad_(true);
  b.sum().backward();
  EXPECT_EQ(ran, 0);
}
