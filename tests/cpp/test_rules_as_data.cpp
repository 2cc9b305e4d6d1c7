// Rules as data (Note [Rules as data]) and kernel stubs (Note [Kernel stubs]).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "autograd/record.h"
#include "core/kernel_stub.h"
#include "ember/ember.h"

using namespace ember;
using autograd::RuleArgs;
using autograd::variable_list;

namespace {
enum class Mode : uint8_t { A = 1, B = 7 };
}  // namespace

TEST(RuleArgs, StoresEveryArgumentKind) {
  RuleArgs a;
  const DimVector dv{2, 3};
  const std::vector<std::vector<int64_t>> lists{{1}, {2, 3}};
  const std::string_view view = "reflect";
  a.set(int64_t(-4), size_t(5), Mode::B, 0.25f, true, Scalar(2.5), kHalf, IntArrayRef({4, 5, 6}),
        dv, lists, std::optional<int64_t>(), std::optional<int64_t>(9), OptionalIntArrayRef(), view,
        "mean");
  ASSERT_EQ(a.size(), 15u);
  EXPECT_EQ(a.i(0), -4);
  EXPECT_EQ(a.i(1), 5);
  EXPECT_EQ(a.e<Mode>(2), Mode::B);
  EXPECT_EQ(a.f(3), 0.25);
  EXPECT_TRUE(a.b(4));
  EXPECT_EQ(a.scalar(5).toDouble(), 2.5);
  EXPECT_EQ(a.dtype(6), kHalf);
  EXPECT_EQ(a.ints(7), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(a.ints(8), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.int_lists(9), lists);
  EXPECT_TRUE(a.is_none(10));
  EXPECT_FALSE(a.is_none(11));
  EXPECT_EQ(a.i(11), 9);
  EXPECT_FALSE(a.opt_ints(12).has_value());
  EXPECT_EQ(a.str(13), "reflect");
  EXPECT_EQ(a.str(14), "mean");
}

TEST(RuleArgs, WrongKindOrPositionIsAnInternalError) {
  RuleArgs a;
  a.set(int64_t(1), std::string("x"));
  EXPECT_THROW(a.b(0), Error);
  EXPECT_THROW(a.i(1), Error);
  EXPECT_THROW(a.i(2), Error);
}

// A rule cannot capture: VjpFn/JvpFn are function pointers.
TEST(RuleArgs, RulesCannotCapture) {
  int64_t dim = 0;
  auto capturing = [dim](autograd::VjpCtx&) { return variable_list(size_t(dim)); };
  auto plain = [](autograd::VjpCtx&) { return variable_list{}; };
  static_assert(!std::is_convertible_v<decltype(capturing), autograd::VjpFn>);
  static_assert(std::is_convertible_v<decltype(plain), autograd::VjpFn>);
  (void)capturing;
  (void)plain;
}

namespace {
// y = x * k (k a recorded argument), dy/dx = k; the jvp scales the tangent by k.
Tensor scale_op(const Tensor& x, double k) {
  autograd::OpRecorder rec("scale_by", {x});
  Tensor out = x.detach() * k;
  if (rec) {
    rec.args(k);
    rec.record(
        out, [](autograd::VjpCtx& c) { return variable_list{c.grads[0] * c.args().f(0)}; }, {},
        [](autograd::JvpCtx& c) { return variable_list{c.tangents[0] * c.args().f(0)}; });
  }
  return out;
}
}  // namespace

TEST(RuleArgs, NodeKeepsTheArgumentsForBackwardAndForwardAD) {
  Tensor x = tensor({1.0, 2.0, 3.0}, kDouble).requires_grad_();
  Tensor y = scale_op(x, 2.5);
  EXPECT_EQ(y.grad_fn()->name(), "ScaleByBackward0");
  y.sum().backward();
  EXPECT_TRUE(allclose(x.grad(), full({3}, 2.5, kDouble)));

  autograd::forward_ad::dual_level level;
  Tensor xd =
      autograd::forward_ad::make_dual(tensor({1.0, 2.0}, kDouble), tensor({1.0, -1.0}, kDouble));
  Tensor t = autograd::forward_ad::unpack_dual(scale_op(xd, 3.0)).second;
  EXPECT_TRUE(allclose(t, tensor({3.0, -3.0}, kDouble)));
}

namespace {
EMBER_DECLARE_KERNEL(test_twice_stub, int64_t(int64_t));
EMBER_DEFINE_KERNEL(test_twice_stub);
int64_t twice_cpu(int64_t v) { return 2 * v; }
EMBER_REGISTER_KERNEL(test_twice_stub, kCPU, twice_cpu);
}  // namespace

TEST(KernelStub, RunsTheKernelOfTheDeviceAndRefusesAnEmptySlot) {
  EXPECT_EQ(test_twice_stub(kCPU, 21), 42);
  EXPECT_EQ(test_twice_stub(Device(kCPU), 4), 8);
  DeviceType npu = register_device_type("stubtestdev");
  EXPECT_EQ(test_twice_stub.get(npu), nullptr);
  try {
    test_twice_stub(npu, 1);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("[test_twice_stub] not implemented for stubtestdev"),
              std::string::npos)
        << e.what();
  }
  test_twice_stub.set(npu, [](int64_t v) { return v + 1; });
  EXPECT_EQ(test_twice_stub(npu, 1), 2);
}
