// Convolutions (cuDNN), max pooling and FFTs (cuFFT) on CUDA against the CPU results of the same
// ops; the plain C++ parts (cuDNN geometry, the plan cache) run everywhere. Without a GPU every
// device test skips.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cuda/cudnn_conv_geom.h"
#include "cuda/lru_cache.h"
#include "ember/ember.h"

using namespace ember;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"

const Device kCuda("cuda");

uint64_t next(uint64_t& s) {
  s = s * 6364136223846793005ULL + 1442695040888963407ULL;
  return s >> 11;
}

/// A CPU tensor of `sizes` with values in [-1, 1] (steps of 0.001), cast to `dt`.
Tensor vals(IntArrayRef sizes, ScalarType dt, uint64_t seed) {
  Tensor t = empty(sizes, TensorOptions().dtype(kDouble));
  double* p = t.data_ptr<double>();
  uint64_t s = seed * 2654435761ULL + 7;
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = double(next(s) % 2001) / 1000.0 - 1.0;
  return t.to(dt);
}

/// Values from {-1.5, -1, ..., 1.5}: many ties, for pooling.
Tensor tied_vals(IntArrayRef sizes, ScalarType dt, uint64_t seed) {
  Tensor t = empty(sizes, TensorOptions().dtype(kDouble));
  double* p = t.data_ptr<double>();
  uint64_t s = seed + 11;
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (double(next(s) % 7) - 3) * 0.5;
  return t.to(dt);
}

Tensor cvals(IntArrayRef sizes, ScalarType dt, uint64_t seed) {
  Tensor t = empty(sizes, TensorOptions().dtype(kComplexDouble));
  auto* p = t.data_ptr<complex<double>>();
  uint64_t s = seed * 977 + 3;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double re = double(next(s) % 2001) / 1000.0 - 1.0;
    const double im = double(next(s) % 2001) / 1000.0 - 1.0;
    p[i] = complex<double>(re, im);
  }
  return t.to(dt);
}

Tensor host(const Tensor& t) { return t.to(Device(kCPU)).contiguous(); }

/// |a - b| <= atol + rtol * |b| elementwise (through complex128), same shape.
void expect_close(const Tensor& a_in, const Tensor& b_in, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(a_in.sizes(), b_in.sizes()) << what;
  Tensor a = host(a_in).to(kComplexDouble), b = host(b_in).to(kComplexDouble);
  const auto* pa = a.data_ptr<complex<double>>();
  const auto* pb = b.data_ptr<complex<double>>();
  int bad = 0;
  for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
    const bool both_nan = std::isnan(pa[i].real()) && std::isnan(pb[i].real());
    if (!both_nan && !(std::abs(pa[i] - pb[i]) <= atol + rtol * std::abs(pb[i]))) {
      ADD_FAILURE() << what << ": element " << i << " is " << pa[i] << ", expected " << pb[i];
      ++bad;
    }
  }
}

void expect_same_bits(const Tensor& a_in, const Tensor& b_in, const std::string& what) {
  Tensor a = host(a_in), b = host(b_in);
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0) << what;
}

/// Relative tolerance of a conv result in `dt` against the CPU (float32 at "highest").
double conv_tol(ScalarType dt) {
  switch (dt) {
    case kDouble:
      return 1e-10;
    case kFloat:
      return 1e-4;  // cuDNN's Winograd / FFT algorithms round differently from a direct sum
    case kHalf:
      return 4e-3;
    default:
      return 2e-2;  // bfloat16: one rounding of an 8-bit mantissa each side
  }
}

struct ConvCase {
  DimVector x, w;
  DimVector stride, pad, dil;
  int64_t groups;
  bool bias;
};

std::vector<ConvCase> conv_cases() {
  return {
      {{2, 4, 11}, {6, 2, 3}, {2}, {1}, {2}, 2, true},                 // 1-d, groups
      {{2, 3, 9, 8}, {4, 3, 3, 2}, {2, 1}, {1, 0}, {1, 1}, 1, true},   // 2-d
      {{1, 4, 7, 7}, {4, 1, 3, 3}, {1, 1}, {2, 1}, {2, 1}, 4, false},  // depthwise, dilated
      {{1, 2, 5, 6, 4}, {3, 2, 2, 3, 2}, {1, 2, 1}, {1, 1, 0}, {1, 1, 1}, 1, true},  // 3-d
  };
}

std::string dims_str(IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// The CPU reference of a conv in `dt`: float32 for float16 (no CPU kernel), else `dt` itself.
ScalarType cpu_type(ScalarType dt) { return dt == kHalf ? kFloat : dt; }

}  // namespace

// ---- plain C++: run everywhere ----

TEST(CudnnConvGeom, KeepsTheRealMapAndSatisfiesCudnnShapes) {
  // "same" padding of an even kernel: 1 left, 2 right; cuDNN pads 1 and the input grows by one.
  cuda::CudnnConvDim d = cuda::cudnn_conv_dim(5, 5, 4, 1, 1, 1);
  EXPECT_EQ(d.in, 6);
  EXPECT_EQ(d.out, 5);
  EXPECT_EQ(d.pad, 1);
  // A cropped output (transposed-conv adjoints): natural size 7, wanted 5.
  d = cuda::cudnn_conv_dim(13, 5, 3, 1, 0, 3);
  EXPECT_EQ(d.in, 13);
  EXPECT_EQ(d.out, 7);
  // Exact geometry unchanged.
  d = cuda::cudnn_conv_dim(9, 5, 3, 2, 1, 1);
  EXPECT_EQ(d.in, 9);
  EXPECT_EQ(d.out, 5);
  // Every small geometry: cuDNN's shape rule holds, nothing shrinks, one side is unchanged.
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t d2 = 1; d2 <= 3; ++d2)
          for (int64_t pl = 0; pl <= 3; ++pl)
            for (int64_t out = 1; out <= 8; ++out) {
              const cuda::CudnnConvDim c = cuda::cudnn_conv_dim(in, out, k, s, pl, d2);
              const int64_t ext = d2 * (k - 1) + 1;
              ASSERT_GE(c.in + 2 * c.pad - ext, 0);
              ASSERT_EQ((c.in + 2 * c.pad - ext) / s + 1, c.out);
              ASSERT_GE(c.in, in);
              ASSERT_GE(c.out, out);
              ASSERT_TRUE(c.in == in || c.out == out);
              ASSERT_EQ(c.pad, pl);
            }
}

TEST(LruCacheTest, EvictsLeastRecentlyUsed) {
  cuda::LruCache<int, std::string> c(2);
  c.insert(1, std::make_shared<std::string>("a"));
  c.insert(2, std::make_shared<std::string>("b"));
  ASSERT_TRUE(c.find(1));  // 1 is now the most recent
  c.insert(3, std::make_shared<std::string>("c"));
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(c.find(2));
  ASSERT_TRUE(c.find(1));
  EXPECT_EQ(*c.find(3), "c");
  // An evicted value lives while a caller holds it.
  std::shared_ptr<std::string> held = c.find(1);
  c.set_capacity(1);  // keeps 1 (just found)
  EXPECT_EQ(c.size(), 1u);
  EXPECT_FALSE(c.find(3));
  c.set_capacity(0);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(*held, "a");
  // Replacing a key keeps one entry.
  c.set_capacity(4);
  c.insert(7, std::make_shared<std::string>("x"));
  c.insert(7, std::make_shared<std::string>("y"));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(*c.find(7), "y");
  c.clear();
  EXPECT_EQ(c.size(), 0u);
}

// ---- convolution ----

TEST(CudaConv, ForwardMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16}) {
    uint64_t seed = 1;
    for (const ConvCase& c : conv_cases()) {
      const Tensor x = vals(c.x, dt, seed++), w = vals(c.w, dt, seed++);
      const Tensor b = vals({c.w[0]}, dt, seed++);
      const ScalarType rt = cpu_type(dt);
      std::optional<Tensor> bc, bg;
      if (c.bias) bc = b.to(rt), bg = b.to(kCuda);
      Tensor want =
          convolution(x.to(rt), w.to(rt), bc, c.stride, c.pad, c.dil, false, {}, c.groups);
      Tensor got =
          convolution(x.to(kCuda), w.to(kCuda), bg, c.stride, c.pad, c.dil, false, {}, c.groups);
      EXPECT_TRUE(got.is_cuda());
      EXPECT_EQ(got.dtype(), dt);
      expect_close(got, want, conv_tol(dt), conv_tol(dt),
                   std::string("conv ") + dtype_name(dt) + " x" + dims_str(c.x));
    }
  }
}

TEST(CudaConv, BackwardMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kBFloat16}) {
    uint64_t seed = 100;
    for (const ConvCase& c : conv_cases()) {
      const Tensor x = vals(c.x, dt, seed++), w = vals(c.w, dt, seed++);
      const Tensor b = vals({c.w[0]}, dt, seed++);
      Tensor grads[2][3];
      for (int dev = 0; dev < 2; ++dev) {
        const Device d = dev ? kCuda : Device(kCPU);
        Tensor xl = x.to(d).detach().requires_grad_(), wl = w.to(d).detach().requires_grad_(),
               bl = b.to(d).detach().requires_grad_();
        std::optional<Tensor> bo;
        if (c.bias) bo = bl;
        Tensor y = convolution(xl, wl, bo, c.stride, c.pad, c.dil, false, {}, c.groups);
        y.backward(vals(y.sizes(), dt, 999).to(d));
        grads[dev][0] = xl.grad(), grads[dev][1] = wl.grad(), grads[dev][2] = bl.grad();
      }
      const std::string what = std::string(dtype_name(dt)) + " x" + dims_str(c.x);
      // Gradients sum more products than the forward: a looser bfloat16 bound.
      const double tol = dt == kBFloat16 ? 4e-2 : conv_tol(dt) * 10;
      expect_close(grads[1][0], grads[0][0], tol, tol, "grad input " + what);
      expect_close(grads[1][1], grads[0][1], tol, tol, "grad weight " + what);
      if (c.bias) expect_close(grads[1][2], grads[0][2], tol, tol, "grad bias " + what);
    }
  }
}

TEST(CudaConv, HalfBackwardAgainstFloat) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = vals({2, 3, 8, 7}, kHalf, 5), w = vals({4, 3, 3, 3}, kHalf, 6);
  const Tensor g = vals({2, 4, 4, 4}, kHalf, 7);
  Tensor xg = x.to(kCuda).requires_grad_(), wg = w.to(kCuda).requires_grad_();
  conv2d(xg, wg, {}, 2, 1).backward(g.to(kCuda));
  Tensor xf = x.to(kFloat).requires_grad_(), wf = w.to(kFloat).requires_grad_();
  conv2d(xf, wf, {}, 2, 1).backward(g.to(kFloat));
  expect_close(xg.grad(), xf.grad(), 1e-2, 1e-2, "half grad input");
  expect_close(wg.grad(), wf.grad(), 1e-2, 2e-2, "half grad weight");
}

TEST(CudaConv, AsymmetricSamePaddingStridedInputAndUnbatched) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = vals({2, 3, 9, 10}, kFloat, 21), w = vals({5, 3, 4, 2}, kFloat, 22);
  const Tensor b = vals({5}, kFloat, 23);
  // padding="same" with even kernels pads one more on the right.
  expect_close(conv2d(x.to(kCuda), w.to(kCuda), b.to(kCuda), 1, "same"), conv2d(x, w, b, 1, "same"),
               1e-4, 1e-4, "same");
  // A non-contiguous input.
  const Tensor xt = vals({2, 3, 10, 9}, kFloat, 24).transpose(2, 3);
  expect_close(conv2d(xt.to(kCuda), w.to(kCuda), b.to(kCuda), {2, 1}, {1, 1}),
               conv2d(xt, w, b, {2, 1}, {1, 1}), 1e-4, 1e-4, "transposed input");
  const Tensor xs = x.to(kCuda).narrow(3, 1, 7);
  expect_close(conv2d(xs, w.to(kCuda)), conv2d(x.narrow(3, 1, 7), w), 1e-4, 1e-4, "narrowed");
  // Unbatched and zero-size batches.
  expect_close(conv2d(x[0].to(kCuda), w.to(kCuda), b.to(kCuda)), conv2d(x[0], w, b), 1e-4, 1e-4,
               "unbatched");
  Tensor z = conv2d(empty({0, 3, 9, 10}, TensorOptions().device(kCuda)), w.to(kCuda), b.to(kCuda));
  EXPECT_EQ(z.sizes(), (DimVector{0, 5, 6, 9}));
}

TEST(CudaConv, TransposedMatchesCpuWithGradients) {
  SKIP_WITHOUT_CUDA();
  struct T {
    DimVector x, w;
    int64_t stride, pad, out_pad, groups, dil;
  };
  // The last case has output_padding >= stride (allowed below the dilation): its backward runs
  // a convolution cropped to the input's shape.
  for (const T& c : std::vector<T>{{{2, 4, 5, 5}, {4, 3, 3, 3}, 2, 1, 1, 1, 1},
                                   {{1, 4, 4, 6}, {4, 2, 3, 2}, 1, 0, 0, 2, 1},
                                   {{1, 2, 5, 5}, {2, 2, 3, 3}, 1, 0, 2, 1, 3}}) {
    const Tensor x = vals(c.x, kDouble, 31), w = vals(c.w, kDouble, 32);
    const Tensor b = vals({c.w[1] * c.groups}, kDouble, 33);
    Tensor gx[2], gw[2], y[2];
    for (int dev = 0; dev < 2; ++dev) {
      const Device d = dev ? kCuda : Device(kCPU);
      Tensor xl = x.to(d).detach().requires_grad_(), wl = w.to(d).detach().requires_grad_();
      y[dev] = conv_transpose2d(xl, wl, b.to(d), c.stride, c.pad, c.out_pad, c.groups, c.dil);
      y[dev].backward(vals(y[dev].sizes(), kDouble, 34).to(d));
      gx[dev] = xl.grad(), gw[dev] = wl.grad();
    }
    expect_close(y[1], y[0], 1e-10, 1e-10, "conv_transpose2d");
    expect_close(gx[1], gx[0], 1e-10, 1e-10, "conv_transpose2d grad input");
    expect_close(gw[1], gw[0], 1e-10, 1e-10, "conv_transpose2d grad weight");
  }
}

TEST(CudaConv, DeterministicModeRepeatsBitForBit) {
  SKIP_WITHOUT_CUDA();
  use_deterministic_algorithms(true);
  const Tensor x = vals({4, 8, 16, 16}, kFloat, 41).to(kCuda);
  const Tensor w = vals({8, 8, 3, 3}, kFloat, 42).to(kCuda);
  const Tensor g = vals({4, 8, 16, 16}, kFloat, 43).to(kCuda);
  Tensor gw[2];
  for (int r = 0; r < 2; ++r) {
    Tensor wl = w.clone().requires_grad_();
    conv2d(x, wl, {}, 1, 1).backward(g);
    gw[r] = wl.grad();
  }
  use_deterministic_algorithms(false);
  expect_same_bits(gw[0], gw[1], "deterministic weight gradient");
}

TEST(CudaConv, Tf32FollowsMatmulPrecision) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = vals({2, 16, 12, 12}, kFloat, 51), w = vals({16, 16, 3, 3}, kFloat, 52);
  const Tensor want = conv2d(x, w, {}, 1, 1);
  set_float32_matmul_precision("high");
  Tensor fast = conv2d(x.to(kCuda), w.to(kCuda), {}, 1, 1);
  set_float32_matmul_precision("highest");
  Tensor exact = conv2d(x.to(kCuda), w.to(kCuda), {}, 1, 1);
  expect_close(fast, want, 1e-2, 3e-2, "tf32");  // 10-bit mantissas, 144-term sums
  expect_close(exact, want, 1e-4, 1e-4, "fp32");
}

TEST(CudaConv, Errors) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = vals({1, 2, 5, 5}, kFloat, 61), w = vals({3, 2, 3, 3}, kFloat, 62);
  EXPECT_THROW(conv2d(x.to(kCuda), w), Error);                         // weight on the CPU
  EXPECT_THROW(conv2d(x.to(kCuda), w.to(kCuda), w.to(kCuda)), Error);  // bad bias
  EXPECT_THROW(conv2d(x.to(kCuda), w.to(kCuda).to(kDouble)), Error);   // mixed dtypes
  EXPECT_THROW(conv2d(x.to(kCuda).to(kLong), w.to(kCuda).to(kLong)), NotImplementedError);
  const DimVector no_pad{0};
  EXPECT_THROW(conv2d(x.to(kCuda), w.to(kCuda), {}, 1, no_pad, 1, 3), Error);  // groups
  // float16 has a CUDA kernel only.
  EXPECT_THROW(conv2d(x.to(kHalf), w.to(kHalf)), Error);
  EXPECT_NO_THROW(conv2d(x.to(kCuda).to(kHalf), w.to(kCuda).to(kHalf)));
}

// ---- pooling ----

TEST(CudaPool, MaxPoolMatchesCpuIndicesAndValues) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble, kBFloat16}) {
    Tensor x1 = tied_vals({2, 3, 10}, dt, 1);
    Tensor x2 = tied_vals({2, 2, 7, 9}, dt, 2);
    Tensor x3 = tied_vals({1, 2, 5, 6, 7}, dt, 3);
    // NaN wins its windows.
    x2.view({-1}).narrow(0, 5, 1).fill_(std::numeric_limits<double>::quiet_NaN());
    x2.view({-1}).narrow(0, 40, 1).fill_(std::numeric_limits<double>::quiet_NaN());
    auto check = [&](const std::tuple<Tensor, Tensor>& got, const std::tuple<Tensor, Tensor>& want,
                     const std::string& what) {
      EXPECT_TRUE(std::get<0>(got).is_cuda());
      expect_same_bits(std::get<0>(got), std::get<0>(want), what + " values");
      expect_same_bits(std::get<1>(got), std::get<1>(want), what + " indices");
    };
    const std::string t = dtype_name(dt);
    check(max_pool1d_with_indices(x1.to(kCuda), 3, 2, 1, 2, true),
          max_pool1d_with_indices(x1, 3, 2, 1, 2, true), "1d " + t);
    check(max_pool2d_with_indices(x2.to(kCuda), {3, 2}, {2, 2}, {1, 1}, {1, 2}, true),
          max_pool2d_with_indices(x2, {3, 2}, {2, 2}, {1, 1}, {1, 2}, true), "2d " + t);
    check(max_pool2d_with_indices(x2.to(kCuda).transpose(2, 3), 2),
          max_pool2d_with_indices(x2.transpose(2, 3), 2), "2d strided " + t);
    check(max_pool3d_with_indices(x3.to(kCuda), 2, {1, 2, 2}, 1),
          max_pool3d_with_indices(x3, 2, {1, 2, 2}, 1), "3d " + t);
    // Dilation and ceil_mode make windows of padding only: -inf and an index past the plane.
    Tensor xs = tied_vals({1, 1, 2}, dt, 4);
    check(max_pool1d_with_indices(xs.to(kCuda), 2, 1, 1, 3),
          max_pool1d_with_indices(xs, 2, 1, 1, 3), "padding-only " + t);
    check(adaptive_max_pool1d(x1.to(kCuda), {4}), adaptive_max_pool1d(x1, {4}), "adaptive 1d " + t);
    check(adaptive_max_pool2d(x2.to(kCuda), {3, 4}), adaptive_max_pool2d(x2, {3, 4}),
          "adaptive 2d " + t);
    check(adaptive_max_pool3d(x3.to(kCuda), {2, 4, 3}), adaptive_max_pool3d(x3, {2, 4, 3}),
          "adaptive 3d " + t);
    check(max_pool2d_with_indices(x2[0].to(kCuda), 3), max_pool2d_with_indices(x2[0], 3),
          "unbatched " + t);
  }
}

TEST(CudaPool, MaxPoolBackwardMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  for (bool det : {false, true}) {
    use_deterministic_algorithms(det);
    for (ScalarType dt : {kFloat, kDouble, kBFloat16}) {
      const Tensor x = tied_vals({2, 3, 9, 8}, dt, 8);
      Tensor g[2];
      for (int dev = 0; dev < 2; ++dev) {
        const Device d = dev ? kCuda : Device(kCPU);
        Tensor xl = x.to(d).detach().requires_grad_();
        // Overlapping windows: several outputs add into one input.
        Tensor y = max_pool2d(xl, 3, 1, 1);
        y.backward(vals(y.sizes(), dt, 9).to(d));
        g[dev] = xl.grad();
      }
      const std::string what = std::string("max_pool2d grad ") + dtype_name(dt);
      if (det)
        expect_same_bits(g[1], g[0], what + " deterministic");  // the CPU's order exactly
      else
        expect_close(g[1], g[0], dt == kBFloat16 ? 2e-2 : 1e-6, dt == kBFloat16 ? 2e-2 : 1e-6,
                     what);
    }
  }
  use_deterministic_algorithms(false);
}

TEST(CudaPool, AveragePoolsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = vals({2, 3, 9, 8}, kFloat, 12);
  expect_close(avg_pool2d(x.to(kCuda), 3, 2, 1, true, false), avg_pool2d(x, 3, 2, 1, true, false),
               1e-6, 1e-6, "avg_pool2d");
  expect_close(adaptive_avg_pool2d(x.to(kCuda), {4, 3}), adaptive_avg_pool2d(x, {4, 3}), 1e-6, 1e-6,
               "adaptive_avg_pool2d");
  Tensor xl = x.to(kCuda).requires_grad_(), xc = x.clone().requires_grad_();
  avg_pool2d(xl, 2).sum().backward();
  avg_pool2d(xc, 2).sum().backward();
  expect_close(xl.grad(), xc.grad(), 1e-6, 1e-6, "avg_pool2d grad");
}

void pool_error_checks(Device d) {
  const Tensor x = vals({1, 2, 6, 6}, kFloat, 13).to(d);
  EXPECT_THROW(max_pool2d(x, 2, 1, 2), Error);                  // padding over half the kernel
  EXPECT_THROW(max_pool2d(x, 7), Error);                        // output too small
  EXPECT_THROW(max_pool2d(x.view({2, 6, 6, 1, 1}), 2), Error);  // rank
  EXPECT_THROW(max_pool2d(x, 0), Error);                        // kernel size
}

TEST(CudaPool, ErrorsOnCpu) { pool_error_checks(Device(kCPU)); }
TEST(CudaPool, Errors) {
  SKIP_WITHOUT_CUDA();
  pool_error_checks(kCuda);
  EXPECT_THROW(max_pool2d(vals({1, 2, 6, 6}, kHalf, 14).to(kCuda), 2), NotImplementedError);
}

// ---- FFT ----

TEST(CudaFft, ComplexTransformsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kComplexFloat, kComplexDouble}) {
    const double tol = dt == kComplexFloat ? 1e-4 : 1e-12;
    const std::string t = dtype_name(dt);
    const Tensor c = cvals({4, 6, 5}, dt, 1);
    const Tensor g = c.to(kCuda);
    expect_close(fft::fft(g), fft::fft(c), tol, tol, "fft " + t);
    expect_close(fft::ifft(g, std::nullopt, 1, "ortho"), fft::ifft(c, std::nullopt, 1, "ortho"),
                 tol, tol, "ifft dim 1 ortho " + t);
    expect_close(fft::fft(g, 9, 0, "forward"), fft::fft(c, 9, 0, "forward"), tol, tol,
                 "fft padded " + t);
    expect_close(fft::fft(g.transpose(0, 2)), fft::fft(c.transpose(0, 2)), tol, tol,
                 "fft strided " + t);
    expect_close(fft::fft(g.conj()), fft::fft(c.conj()), tol, tol, "fft conj " + t);
    expect_close(fft::fft2(g), fft::fft2(c), tol, tol, "fft2 " + t);
    expect_close(fft::fft2(g, std::nullopt, {0, 2}), fft::fft2(c, std::nullopt, {0, 2}), tol, tol,
                 "fft2 outer dims " + t);
    // Four dims: more than cuFFT's rank 3 in one plan.
    const Tensor c4 = cvals({2, 3, 4, 5}, dt, 2);
    expect_close(fft::fftn(c4.to(kCuda)), fft::fftn(c4), tol, tol, "fftn 4-d " + t);
    expect_close(fft::ifftn(c4.to(kCuda), std::nullopt, std::nullopt, "backward"),
                 fft::ifftn(c4, std::nullopt, std::nullopt, "backward"), tol, tol, "ifftn " + t);
    // Zero-size batches.
    Tensor e = fft::fft(empty({0, 8}, TensorOptions().dtype(dt).device(kCuda)));
    EXPECT_EQ(e.sizes(), (DimVector{0, 8}));
  }
}

TEST(CudaFft, RealTransformsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble}) {
    const double tol = dt == kFloat ? 1e-4 : 1e-12;
    const ScalarType ct = toComplexType(dt);
    const std::string t = dtype_name(dt);
    const Tensor r = vals({5, 16}, dt, 3), r3 = vals({4, 6, 8}, dt, 4);
    const Tensor r4 = vals({2, 3, 4, 6}, dt, 5);
    expect_close(fft::rfft(r.to(kCuda)), fft::rfft(r), tol, tol, "rfft " + t);
    expect_close(fft::rfft(r.to(kCuda), 15, 0), fft::rfft(r, 15, 0), tol, tol, "rfft dim 0 " + t);
    expect_close(fft::rfft(r.to(kCuda).t()), fft::rfft(r.t()), tol, tol, "rfft strided " + t);
    expect_close(fft::rfftn(r3.to(kCuda)), fft::rfftn(r3), tol, tol, "rfftn " + t);
    expect_close(fft::rfftn(r4.to(kCuda)), fft::rfftn(r4), tol, tol, "rfftn 4-d " + t);
    expect_close(fft::rfft2(r3.to(kCuda), std::nullopt, {0, 1}),
                 fft::rfft2(r3, std::nullopt, {0, 1}), tol, tol, "rfft2 leading dims " + t);
    // c2r reads arbitrary (not Hermitian) spectra as the CPU does.
    const Tensor c = cvals({5, 9}, ct, 6), c3 = cvals({3, 4, 5}, ct, 7);
    expect_close(fft::irfft(c.to(kCuda)), fft::irfft(c), tol, tol, "irfft even " + t);
    expect_close(fft::irfft(c.to(kCuda), 17), fft::irfft(c, 17), tol, tol, "irfft odd " + t);
    expect_close(fft::irfft(c.to(kCuda).conj(), 16, 0, "ortho"),
                 fft::irfft(c.conj(), 16, 0, "ortho"), tol, tol, "irfft conj dim 0 " + t);
    expect_close(fft::irfftn(c3.to(kCuda)), fft::irfftn(c3), tol, tol, "irfftn " + t);
    expect_close(fft::irfft2(c3.to(kCuda), std::nullopt, {0, 1}),
                 fft::irfft2(c3, std::nullopt, {0, 1}), tol, tol, "irfft2 leading dims " + t);
    expect_close(fft::hfft(c.to(kCuda)), fft::hfft(c), tol, tol, "hfft " + t);
  }
}

TEST(CudaFft, GradientsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  const Tensor r = vals({3, 10}, kDouble, 8);
  const Tensor c = cvals({3, 6}, kComplexDouble, 9);
  Tensor gr[2], gc[2];
  for (int dev = 0; dev < 2; ++dev) {
    const Device d = dev ? kCuda : Device(kCPU);
    Tensor rl = r.to(d).detach().requires_grad_(), cl = c.to(d).detach().requires_grad_();
    Tensor y = fft::rfft(rl, std::nullopt, -1, "ortho");
    y.backward(cvals(y.sizes(), kComplexDouble, 10).to(d));
    Tensor z = fft::irfft(cl);
    z.backward(vals(z.sizes(), kDouble, 11).to(d));
    gr[dev] = rl.grad(), gc[dev] = cl.grad();
  }
  expect_close(gr[1], gr[0], 1e-12, 1e-12, "rfft grad");
  expect_close(gc[1], gc[0], 1e-12, 1e-12, "irfft grad");
}

TEST(CudaFft, StftAndIstftMatchCpu) {
  SKIP_WITHOUT_CUDA();
  const Tensor x = vals({2, 200}, kFloat, 13);
  const Tensor w = hann_window(32, TensorOptions().dtype(kFloat));
  Tensor want = stft(x, 32, 8, std::nullopt, w, true, "reflect", false, std::nullopt, true);
  Tensor got = stft(x.to(kCuda), 32, 8, std::nullopt, w.to(kCuda), true, "reflect", false,
                    std::nullopt, true);
  expect_close(got, want, 1e-4, 1e-4, "stft");
  expect_close(istft(got, 32, 8, std::nullopt, w.to(kCuda), true, false, std::nullopt, 200),
               istft(want, 32, 8, std::nullopt, w, true, false, std::nullopt, 200), 1e-4, 1e-4,
               "istft");
}

void fft_error_checks(Device d) {
  const Tensor c = cvals({4, 8}, kComplexFloat, 12).to(d);
  EXPECT_THROW(fft::fft(c, std::nullopt, 2), IndexError);
  EXPECT_THROW(fft::fft(c, 0), Error);
  EXPECT_THROW(fft::fftn(c, std::nullopt, IntArrayRef{0, 0}), Error);
  EXPECT_THROW(fft::irfft(c, 0), Error);
}

// The same exception types on both devices; the CPU half runs everywhere.
TEST(CudaFft, ErrorsOnCpu) { fft_error_checks(Device(kCPU)); }
TEST(CudaFft, Errors) {
  SKIP_WITHOUT_CUDA();
  fft_error_checks(kCuda);
}
