// The CUDA backend against the CPU: fills, host/device round trips, broadcast add and strided
// copies. Without a GPU (or in a CPU-only build) every test but Unavailable skips.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"

const Device kCuda("cuda");

const std::vector<ScalarType> kAllTypes = {kBool,  kByte,   kChar,         kShort,
                                           kInt,   kLong,   kHalf,         kBFloat16,
                                           kFloat, kDouble, kComplexFloat, kComplexDouble};

// A CPU tensor of `sizes` with varied values (negative, fractional, complex parts) cast to `dt`.
Tensor make_values(IntArrayRef sizes, ScalarType dt, double scale = 0.37) {
  Tensor t = empty(sizes, TensorOptions().dtype(kComplexDouble));
  auto* p = t.data_ptr<complex<double>>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = complex<double>((double(i % 23) - 11) * scale, double(i % 7) - 3);
  return t.to(dt);
}

// Contiguous CPU copy.
Tensor host(const Tensor& t) { return t.to(Device(kCPU)).contiguous(); }

// Same dtype, shape and stored bits.
void expect_same_bits(const Tensor& a_in, const Tensor& b_in, const std::string& what) {
  Tensor a = host(a_in), b = host(b_in);
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0) << what;
}

// Elementwise |a - b| <= tol * (1 + |b|) through complex128 (the device may fuse a + alpha * b
// into one FMA where the CPU rounds twice).
void expect_close(const Tensor& a_in, const Tensor& b_in, double rtol, const std::string& what) {
  ASSERT_EQ(a_in.sizes(), b_in.sizes()) << what;
  Tensor a = host(a_in).to(kComplexDouble), b = host(b_in).to(kComplexDouble);
  const auto* pa = a.data_ptr<complex<double>>();
  const auto* pb = b.data_ptr<complex<double>>();
  int bad = 0;
  for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
    if (std::abs(pa[i] - pb[i]) > rtol * (1 + std::abs(pb[i]))) {
      ADD_FAILURE() << what << ": element " << i << " is " << pa[i] << ", expected " << pb[i];
      ++bad;
    }
  }
}

double tolerance(ScalarType dt) {
  switch (dt) {
    case kHalf:
      return 2e-3;
    case kBFloat16:
      return 1.6e-2;
    case kFloat:
    case kComplexFloat:
      return 1e-6;
    case kDouble:
    case kComplexDouble:
      return 1e-14;
    default:
      return 0;  // integers and bool are exact
  }
}

}  // namespace

// Runs everywhere: without a GPU, CUDA is reported absent and cuda tensors fail clearly.
TEST(CudaTest, Unavailable) {
  if (cuda_is_available()) {
    EXPECT_GE(cuda_device_count(), 1);
    Tensor t = zeros({2}, kCuda);
    EXPECT_TRUE(t.is_cuda());
    return;
  }
  EXPECT_EQ(cuda_device_count(), 0);
  try {
    zeros({2}, Device("cuda"));
    ADD_FAILURE() << "zeros on cuda did not throw without a GPU";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("cuda"), std::string::npos) << msg;
  }
}

TEST(CudaTest, DeviceOfNewTensors) {
  SKIP_WITHOUT_CUDA();
  Tensor t = empty({3, 4}, TensorOptions().dtype(kFloat).device(kCuda));
  EXPECT_TRUE(t.is_cuda());
  EXPECT_EQ(t.device(), Device(kCUDA, 0));
  EXPECT_TRUE(t.cpu().is_cpu());
  Tensor z = empty({0, 5}, TensorOptions().device(kCuda));
  EXPECT_EQ(host(z).numel(), 0);
}

TEST(CudaTest, Fill) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kAllTypes) {
    std::vector<Scalar> values = {Scalar(0), Scalar(1), Scalar(true)};
    // (Negative fractions into uint8 are UB in C++, on the CPU too.)
    if (dt != kBool && dt != kByte) values.push_back(Scalar(-2.75));
    if (dt != kBool) values.push_back(Scalar(int64_t(100000)));
    if (isComplexType(dt)) values.push_back(Scalar(complex<double>(3.5, -4.25)));
    for (const Scalar& v : values) {
      std::string what = std::string("fill ") + dtype_name(dt);
      // A value the dtype cannot hold (100000 into int8/uint8/int16/half) is refused on the
      // CPU, as torch does; the device must refuse it the same way, before any launch.
      bool cpu_refuses = false;
      try {
        empty({1}, TensorOptions().dtype(dt)).fill_(v);
      } catch (const Error&) {
        cpu_refuses = true;
      }
      if (cpu_refuses) {
        Tensor g = empty({5, 7}, TensorOptions().dtype(dt).device(kCuda));
        EXPECT_THROW(g.fill_(v), Error) << what;
        continue;
      }
      Tensor g = empty({5, 7}, TensorOptions().dtype(dt).device(kCuda));
      g.fill_(v);
      Tensor c = empty({5, 7}, TensorOptions().dtype(dt));
      c.fill_(v);
      expect_same_bits(g, c, what);
      // 0-dim and strided views (every other column of a transpose).
      Tensor g0 = empty({}, TensorOptions().dtype(dt).device(kCuda));
      g0.fill_(v);
      Tensor c0 = empty({}, TensorOptions().dtype(dt));
      c0.fill_(v);
      expect_same_bits(g0, c0, what + " 0-dim");
      Tensor gz = zeros({6, 4}, TensorOptions().dtype(dt).device(kCuda));
      Tensor cz = zeros({6, 4}, TensorOptions().dtype(dt));
      gz.t().slice(1, 1, 6, 2).fill_(v);
      cz.t().slice(1, 1, 6, 2).fill_(v);
      expect_same_bits(gz, cz, what + " strided");
    }
  }
}

TEST(CudaTest, RoundTrip) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kAllTypes) {
    std::string what = std::string("round trip ") + dtype_name(dt);
    Tensor c = make_values({3, 5, 7}, dt);
    Tensor g = c.to(kCuda);
    EXPECT_TRUE(g.is_cuda()) << what;
    EXPECT_EQ(g.dtype(), dt) << what;
    expect_same_bits(g.cpu(), c, what);
    expect_same_bits(g.clone(), c, what + " clone on device");
    // Scalars read back through item().
    EXPECT_EQ(g.select(0, 1).select(0, 2).select(0, 3).item().toComplexDouble(),
              c.select(0, 1).select(0, 2).select(0, 3).item().toComplexDouble())
        << what;
  }
  Tensor empty_cuda = empty({0}, TensorOptions().device(kCuda));
  EXPECT_EQ(empty_cuda.cpu().numel(), 0);
}

TEST(CudaTest, DtypeConversions) {
  SKIP_WITHOUT_CUDA();
  // Every (src, dst) pair: on the device (cast kernel), host -> device and device -> host,
  // against the CPU cast.
  for (ScalarType from : kAllTypes) {
    Tensor c = make_values({4, 9}, from, 7.31);
    Tensor g = c.to(kCuda);
    for (ScalarType to : kAllTypes) {
      std::string what = std::string(dtype_name(from)) + " -> " + dtype_name(to);
      Tensor expected = c.to(to);
      expect_same_bits(g.to(to), expected, what + " on device");
      expect_same_bits(c.to(kCuda, to), expected, what + " host to device");
      expect_same_bits(g.to(Device(kCPU), to), expected, what + " device to host");
    }
  }
}

TEST(CudaTest, NonContiguousCopies) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kHalf, kLong, kComplexDouble, kBool}) {
    std::string what = std::string("strided ") + dtype_name(dt);
    Tensor c = make_values({6, 8, 5}, dt);
    Tensor cv = c.permute({2, 0, 1}).slice(2, 1, 8, 3);  // non-contiguous CPU view
    // Device -> host from a strided device view; host -> device from a strided host view.
    Tensor g = c.to(kCuda);
    Tensor gv = g.permute({2, 0, 1}).slice(2, 1, 8, 3);
    expect_same_bits(gv, cv, what + " D2H");
    expect_same_bits(cv.to(kCuda), cv, what + " H2D");
    expect_same_bits(gv.contiguous(), cv, what + " D2D contiguous()");
    // Into strided destinations, on both sides, with a dtype change on the way.
    Tensor gd = zeros({5, 6, 3}, TensorOptions().dtype(kDouble).device(kCuda));
    Tensor cd = zeros({5, 6, 3}, TensorOptions().dtype(kDouble));
    Tensor gdv = gd.transpose(0, 2);
    Tensor cdv = cd.transpose(0, 2);
    gdv.copy_(cv.transpose(0, 2));  // H2D into a strided view
    cdv.copy_(cv.transpose(0, 2));
    expect_same_bits(gd, cd, what + " H2D into strided");
    Tensor gd2 = zeros({5, 6, 3}, TensorOptions().dtype(kDouble).device(kCuda));
    gd2.transpose(0, 2).copy_(gv.transpose(0, 2));  // D2D strided cast
    expect_same_bits(gd2, cd, what + " D2D into strided");
    Tensor ch = zeros({3, 6, 5}, TensorOptions().dtype(kDouble));
    Tensor chv = ch.permute({2, 1, 0});
    chv.copy_(gv);  // D2H into a strided host view
    Tensor ch_ref = zeros({3, 6, 5}, TensorOptions().dtype(kDouble));
    ch_ref.permute({2, 1, 0}).copy_(cv);
    expect_same_bits(ch, ch_ref, what + " D2H into strided");
  }
  // Broadcast source (expanded, zero strides).
  Tensor row = make_values({1, 7}, kFloat);
  Tensor g = zeros({4, 7}, TensorOptions().device(kCuda));
  g.copy_(row.to(kCuda));
  Tensor c = zeros({4, 7});
  c.copy_(row);
  expect_same_bits(g, c, "broadcast copy_ D2D");
  Tensor g2 = zeros({4, 7}, TensorOptions().device(kCuda));
  g2.copy_(row);
  expect_same_bits(g2, c, "broadcast copy_ H2D");
}

TEST(CudaTest, HighRankPermutedCopy) {
  SKIP_WITHOUT_CUDA();
  // Ten dims that cannot be merged: more than the kernels' 8, so the backend splits the launch.
  std::vector<int64_t> sizes(10, 2), perm(10);
  for (int i = 0; i < 10; ++i) perm[i] = 9 - i;
  sizes[3] = 3;
  Tensor c = make_values(sizes, kFloat);
  Tensor g = c.to(kCuda);
  expect_same_bits(g.permute(perm).contiguous(), c.permute(perm).contiguous(), "rank 10 D2D");
  expect_same_bits(g.permute(perm), c.permute(perm), "rank 10 D2H");
  Tensor gz = zeros(sizes, TensorOptions().device(kCuda));
  gz.permute(perm).fill_(2.5);
  expect_same_bits(gz, full(sizes, 2.5), "rank 10 fill");
}

TEST(CudaTest, BroadcastAdd) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kChar, kByte, kComplexFloat,
                        kComplexDouble, kBool}) {
    std::string what = std::string("add ") + dtype_name(dt);
    Scalar alpha = dt == kBool                               ? Scalar(true)
                   : isFloatingType(dt) || isComplexType(dt) ? Scalar(0.5)
                                                             : Scalar(3);
    Tensor a = make_values({4, 1, 3}, dt);
    Tensor b = make_values({5, 1}, dt, 1.9);
    Tensor expected = add(a, b, alpha);
    Tensor got = add(a.to(kCuda), b.to(kCuda), alpha);
    EXPECT_TRUE(got.is_cuda()) << what;
    EXPECT_EQ(got.dtype(), expected.dtype()) << what;
    expect_close(got, expected, tolerance(dt), what);
    // Non-contiguous operands and an in-place add into a strided view.
    Tensor x = make_values({3, 6}, dt).t();
    Tensor y = make_values({6, 3}, dt, 0.11);
    expect_close(add(x.to(kCuda).t().t(), y.to(kCuda), alpha), add(x, y, alpha), tolerance(dt),
                 what + " strided");
    Tensor gx = x.to(kCuda);
    gx.add_(y.to(kCuda), alpha);
    Tensor cx = x.clone();
    cx.add_(y, alpha);
    expect_close(gx, cx, tolerance(dt), what + " in place");
  }
  // A CPU 0-dim tensor or a Scalar mixes with a cuda tensor; dtypes promote.
  Tensor g = make_values({2, 3}, kFloat).to(kCuda);
  expect_close(add(g, 1.5), add(make_values({2, 3}, kFloat), 1.5), 1e-6, "add scalar");
  Tensor gi = make_values({2, 3}, kInt).to(kCuda);
  Tensor mixed = add(gi, g);
  EXPECT_EQ(mixed.dtype(), kFloat);
  expect_close(mixed, add(make_values({2, 3}, kInt), make_values({2, 3}, kFloat)), 1e-6,
               "add int + float");
}

TEST(CudaTest, Errors) {
  SKIP_WITHOUT_CUDA();
  Tensor g = zeros({2, 3}, TensorOptions().device(kCuda));
  Tensor c = zeros({2, 3});
  EXPECT_THROW(add(g, zeros({2, 4}, TensorOptions().device(kCuda))), Error);
  // Two non-scalar tensors on different devices.
  EXPECT_THROW(add(g, c), Error);
}
