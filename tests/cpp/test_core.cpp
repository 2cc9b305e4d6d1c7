// Core: dtypes, scalars, devices, allocator, tensor metadata.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;

TEST(Core, ElementSizes) {
  EXPECT_EQ(elementSize(kBool), 1u);
  EXPECT_EQ(elementSize(kHalf), 2u);
  EXPECT_EQ(elementSize(kBFloat16), 2u);
  EXPECT_EQ(elementSize(kComplexDouble), 16u);
}
