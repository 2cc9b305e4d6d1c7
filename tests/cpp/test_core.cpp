// Core: dtypes, scalars, devices, the CPU caching allocator, tensor metadata, copies and the
// elementwise engine's layout handling and checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ember/ember.h"

using namespace ember;

TEST(Core, ElementSizesAndNames) {
  EXPECT_EQ(elementSize(kBool), 1u);
  EXPECT_EQ(elementSize(kHalf), 2u);
  EXPECT_EQ(elementSize(kBFloat16), 2u);
  EXPECT_EQ(elementSize(kLong), 8u);
  EXPECT_EQ(elementSize(kComplexFloat), 8u);
  EXPECT_EQ(elementSize(kComplexDouble), 16u);
  EXPECT_STREQ(toString(kFloat), "Float");
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(kComplexDouble), "complex128");
}

TEST(Core, HalfAndBFloat16Rounding) {
  // Values derived by hand from the binary16/bfloat16 formats.
  EXPECT_EQ(Half(1.0f).x, 0x3C00);
  EXPECT_EQ(Half(-2.0f).x, 0xC000);
  EXPECT_EQ(Half(65504.0f).x, 0x7BFF);
  EXPECT_EQ(Half(65520.0f).x, 0x7C00);             // rounds to +inf
  EXPECT_EQ(Half(5.9604644775390625e-08f).x, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).x, 0x3C00);   // tie rounds to even
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).x, 0x3C02);   // tie rounds to even (up)
  EXPECT_TRUE(std::isnan(float(Half(std::nanf("")))));
  EXPECT_FLOAT_EQ(float(Half(uint16_t(0x3555), Half::from_bits_t{})), 0.333251953125f);
  EXPECT_EQ(BFloat16(1.0f).x, 0x3F80);
  EXPECT_EQ(BFloat16(1.00390625f).x, 0x3F80);  // tie to even
  EXPECT_EQ(BFloat16(1.01171875f).x, 0x3F82);  // tie to even (up)
  EXPECT_TRUE(std::isnan(float(BFloat16(std::nanf("")))));
}

TEST(Core, PromoteTypesSpotChecks) {
  // From torch.promote_types (the full table is checked in test_promotion.cpp).
  EXPECT_EQ(promoteTypes(kByte, kChar), kShort);
  EXPECT_EQ(promoteTypes(kHalf, kBFloat16), kFloat);
  EXPECT_EQ(promoteTypes(kBool, kHalf), kHalf);
  EXPECT_EQ(promoteTypes(kLong, kHalf), kHalf);
  EXPECT_EQ(promoteTypes(kComplexFloat, kDouble), kComplexDouble);
  EXPECT_EQ(promoteTypes(kComplexFloat, kLong), kComplexFloat);
  EXPECT_EQ(promoteTypes(kInt, kByte), kInt);
  EXPECT_FALSE(canCast(kFloat, kLong));
  EXPECT_FALSE(canCast(kComplexFloat, kDouble));
  EXPECT_FALSE(canCast(kInt, kBool));
  EXPECT_TRUE(canCast(kBool, kHalf));
  EXPECT_TRUE(canCast(kLong, kHalf));
}

TEST(Core, DefaultDtype) {
  EXPECT_EQ(get_default_dtype(), kFloat);
  set_default_dtype(kDouble);
  EXPECT_EQ(get_default_complex_dtype(), kComplexDouble);
  set_default_dtype(kFloat);
  EXPECT_THROW(set_default_dtype(kLong), TypeError);
}

TEST(Core, Scalar) {
  Scalar i = 3, d = 2.5, b = true, c = complex<double>(1, -2);
  EXPECT_EQ(i.type(), kLong);
  EXPECT_EQ(d.type(), kDouble);
  EXPECT_EQ(b.type(), kBool);
  EXPECT_EQ(c.type(), kComplexDouble);
  EXPECT_EQ(d.to<int>(), 2);
  EXPECT_EQ((-c).toComplexDouble(), complex<double>(-1, 2));
  EXPECT_TRUE(Scalar(Half(1.5f)).isFloatingPoint());
  EXPECT_THROW(-b, Error);
}

TEST(Core, Devices) {
  Device c("cpu"), g("cuda:1");
  EXPECT_TRUE(c.is_cpu());
  EXPECT_TRUE(g.is_cuda());
  EXPECT_EQ(g.index(), 1);
  EXPECT_EQ(g.str(), "cuda:1");
  EXPECT_THROW(Device("tpu:0"), ValueError);
  EXPECT_THROW(Device("cuda:x"), ValueError);
  DeviceType npu = register_device_type("npu_test");
  EXPECT_EQ(register_device_type("npu_test"), npu);
  Device n("npu_test:2");
  EXPECT_EQ(n.type(), npu);
  EXPECT_EQ(n.str(), "npu_test:2");
  EXPECT_THROW(empty({2}, TensorOptions(n)), Error);  // no allocator registered
}

TEST(Core, AllocatorReusesBlocksAndCounts) {
  cpu::empty_cache();
  auto s0 = cpu::memory_stats();
  void* first;
  {
    Tensor a = empty({1 << 20}, kFloat);  // 4 MiB
    first = a.data_ptr();
    auto s1 = cpu::memory_stats();
    EXPECT_EQ(s1.allocated - s0.allocated, 4 << 20);
    EXPECT_GE(s1.reserved, s1.allocated);
    EXPECT_GE(s1.peak_allocated, s1.allocated);
  }
  auto s2 = cpu::memory_stats();
  EXPECT_EQ(s2.allocated, s0.allocated);
  EXPECT_EQ(s2.reserved - s0.reserved, 4 << 20);  // kept in the cache
  Tensor b = empty({1 << 20}, kFloat);
  EXPECT_EQ(b.data_ptr(), first);  // the freed block is handed out again
  EXPECT_GT(cpu::memory_stats().num_cache_hits, s2.num_cache_hits);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data_ptr()) % 64, 0u);
  b = Tensor();
  cpu::empty_cache();
  EXPECT_EQ(cpu::memory_stats().reserved, cpu::memory_stats().allocated);
}

TEST(Core, ContiguityAndStrides) {
  Tensor a = empty({2, 3, 4});
  EXPECT_TRUE(a.is_contiguous());
  EXPECT_EQ(a.strides(), IntArrayRef({12, 4, 1}));
  EXPECT_EQ(a.numel(), 24);
  EXPECT_EQ(a.nbytes(), 96u);
  Tensor z = empty({0, 3});
  EXPECT_EQ(z.numel(), 0);
  EXPECT_TRUE(z.is_contiguous());
  Tensor s = empty({});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_THROW(empty({-1, 2}), Error);
}

TEST(Core, DataPtrChecksDtype) {
  Tensor a = empty({3}, kFloat);
  EXPECT_NO_THROW(a.data_ptr<float>());
  EXPECT_THROW(a.data_ptr<double>(), Error);
}

TEST(Core, CopyCastsEveryPair) {
  // Values exactly representable in every dtype (bool sees nonzero as true).
  const ScalarType all[] = {kBool, kByte, kChar, kShort, kInt, kLong, kHalf,
                            kBFloat16, kFloat, kDouble, kComplexFloat, kComplexDouble};
  for (ScalarType from : all) {
    for (ScalarType to : all) {
      Tensor src = empty({3}, from);
      src.fill_(0);
      src.slice(0, 1, 2).fill_(1);
      src.slice(0, 2, 3).fill_(from == kBool ? 1 : 2);
      Tensor dst = empty({3}, to);
      dst.copy_(src);
      double want2 = (from == kBool || to == kBool) ? 1 : 2;
      EXPECT_EQ(dst.slice(0, 0, 1).item().toDouble(), 0) << from << "->" << to;
      EXPECT_EQ(dst.slice(0, 1, 2).item().toDouble(), 1) << from << "->" << to;
      EXPECT_EQ(dst.slice(0, 2, 3).item().toDouble(), want2) << from << "->" << to;
    }
  }
}

TEST(Core, CopyBroadcastsAndChecks) {
  Tensor dst = zeros({2, 3});
  Tensor row = arange(3, kFloat);
  dst.copy_(row);
  EXPECT_EQ(dst.select(0, 1).select(0, 2).item<float>(), 2.0f);
  EXPECT_THROW(dst.copy_(arange(2, kFloat)), Error);
  Tensor expanded = zeros({3}).expand({2, 3});
  EXPECT_THROW(expanded.copy_(dst), Error);  // writing into an expanded view
}

TEST(Core, VersionCounterSharedByViews) {
  Tensor a = zeros({4});
  Tensor v = a.slice(0, 1, 3);
  uint32_t v0 = a._version();
  v.fill_(1);
  EXPECT_GT(a._version(), v0);
  EXPECT_EQ(a._version(), v._version());
  EXPECT_EQ(a.select(0, 1).item<float>(), 1.0f);
}

TEST(Core, ToAndClonePreserveValuesAndLayout) {
  Tensor a = arange(6, kFloat).view({2, 3});
  Tensor t = a.t();
  Tensor c = t.clone();
  EXPECT_EQ(c.strides(), t.strides());  // dense layouts are preserved, as PyTorch
  EXPECT_FALSE(c.is_alias_of(t));
  Tensor cc = t.contiguous();
  EXPECT_TRUE(cc.is_contiguous());
  EXPECT_EQ(cc.select(0, 2).select(0, 1).item<float>(), 5.0f);
  Tensor d = a.to(kDouble);
  EXPECT_EQ(d.dtype(), kDouble);
  EXPECT_TRUE(a.to(kFloat).is_same(a));  // no copy when nothing changes
  EXPECT_FALSE(a.to(kFloat, false, true).is_same(a));
}

TEST(Core, ConjBitIsLazy) {
  Tensor z = empty({2}, kComplexFloat);
  z.fill_(complex<double>(1, 2));
  Tensor c = z.conj();
  EXPECT_TRUE(c.is_conj());
  EXPECT_TRUE(c.is_alias_of(z));
  EXPECT_EQ(c.slice(0, 0, 1).item().toComplexDouble(), complex<double>(1, -2));
  Tensor r = c.resolve_conj();
  EXPECT_FALSE(r.is_conj());
  EXPECT_EQ(r.slice(0, 1, 2).item().toComplexDouble(), complex<double>(1, -2));
  // Copying a conj view into a plain tensor writes the conjugated values.
  Tensor dst = empty({2}, kComplexDouble);
  dst.copy_(c);
  EXPECT_EQ(dst.slice(0, 0, 1).item().toComplexDouble(), complex<double>(1, -2));
  Tensor real = arange(3, kFloat);
  EXPECT_TRUE(real.conj().is_same(real));
}

TEST(Core, ItemAndRequiresGrad) {
  EXPECT_THROW(zeros({2}).item(), Error);
  EXPECT_EQ(full({}, 7, kLong).item<int64_t>(), 7);
  Tensor f = zeros({2});
  EXPECT_FALSE(f.requires_grad());
  f.requires_grad_();
  EXPECT_TRUE(f.requires_grad());
  EXPECT_THROW(zeros({2}, kLong).requires_grad_(), Error);
}

TEST(Core, ThreadCount) {
  int n = get_num_threads();
  EXPECT_GE(n, 1);
  set_num_threads(1);
  EXPECT_EQ(get_num_threads(), 1);
  set_num_threads(n);
  EXPECT_THROW(set_num_threads(0), ValueError);
}

TEST(Core, CpuCapabilityIsKnown) {
  std::string cap = cpu_capability();
  EXPECT_TRUE(cap == "default" || cap == "avx2" || cap == "avx512") << cap;
}
