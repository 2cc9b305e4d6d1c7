// The libtorch-spelled shape-op API on hand-derived values.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;

TEST(ShapeOps, FlipRollRepeat) {
  Tensor x = arange(6, kLong).view({2, 3});
  EXPECT_TRUE(flip(x, {1}).equal(tensor({2, 1, 0, 5, 4, 3}, kLong).view({2, 3})));
  EXPECT_TRUE(x.roll({1}, {1}).equal(tensor({2, 0, 1, 5, 3, 4}, kLong).view({2, 3})));
  EXPECT_TRUE(roll(x, {1}).equal(tensor({5, 0, 1, 2, 3, 4}, kLong).view({2, 3})));
  EXPECT_TRUE(
      x.repeat({1, 2}).equal(tensor({0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, kLong).view({2, 6})));
  EXPECT_TRUE(repeat_interleave(tensor({1, 2}, kLong)).equal(tensor({0, 1, 1}, kLong)));
  EXPECT_EQ(tensor_split(x, 2, 1).size(), 2u);
  EXPECT_THROW(flip(x, {0, 0}), Error);
}

TEST(ShapeOps, DiagPadSearch) {
  Tensor v = tensor({1, 2}, kLong);
  EXPECT_TRUE(diag(v).equal(tensor({1, 0, 0, 2}, kLong).view({2, 2})));
  EXPECT_TRUE(pad(v.view({1, 2}), {1, 0}).equal(tensor({0, 1, 2}, kLong).view({1, 3})));
  EXPECT_TRUE(
      searchsorted(tensor({1, 3, 5}, kLong), tensor({3, 6}, kLong)).equal(tensor({1, 3}, kLong)));
  EXPECT_TRUE(bincount(tensor({0, 2, 2}, kLong)).equal(tensor({1, 0, 2}, kLong)));
  EXPECT_TRUE(one_hot(tensor({1}, kLong), 3).equal(tensor({0, 1, 0}, kLong).view({1, 3})));
}
