// Convolution and pooling from C++: values against direct loops written here (float64, and
// float32 through oneDNN), gradients by gradcheck / gradgradcheck (the three bilinear maps of
// Note [Three bilinear convolution maps]), max-pool indices, and argument errors.
#include <gtest/gtest.h>

#include <vector>

#include "ember/conv.h"
#include "ember/ember.h"

using namespace ember;
using autograd::variable_list;

namespace {
Tensor rnd(std::vector<int64_t> shape, ScalarType dt = kDouble) {
  return randn(shape, TensorOptions(dt));
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(kDouble) - b.to(kDouble)).abs().max().item<double>();
}

// Direct 2-d convolution (N, C, H, W) * (K, C/g, kh, kw), with stride/padding/dilation/groups.
Tensor direct_conv2d(const Tensor& x0, const Tensor& w0, int64_t s, int64_t p, int64_t d,
                     int64_t groups) {
  Tensor x = x0.to(kDouble).contiguous(), w = w0.to(kDouble).contiguous();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t K = w.size(0), cg = w.size(1), kh = w.size(2), kw = w.size(3);
  const int64_t OH = (H + 2 * p - d * (kh - 1) - 1) / s + 1;
  const int64_t OW = (W + 2 * p - d * (kw - 1) - 1) / s + 1;
  Tensor y = zeros({N, K, OH, OW}, TensorOptions(kDouble));
  const double* xp = x.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  double* yp = y.data_ptr<double>();
  const int64_t kg = K / groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t ih = oh * s - p + i * d, iw = ow * s - p + j * d;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const int64_t ci = (k / kg) * cg + c;
                acc += xp[((n * C + ci) * H + ih) * W + iw] * wp[((k * cg + c) * kh + i) * kw + j];
              }
          yp[((n * K + k) * OH + oh) * OW + ow] = acc;
        }
  (void)C;
  return y;
}
}  // namespace

TEST(Conv, Conv2dMatchesDirectLoopDouble) {
  manual_seed(0);
  for (auto [s, p, d, g] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {1, 0, 1, 1}, {2, 1, 1, 1}, {1, 2, 2, 1}, {2, 1, 1, 2}, {3, 0, 2, 4}}) {
    Tensor x = rnd({2, 4, 9, 8}), w = rnd({8, 4 / g, 3, 3});
    Tensor y = conv2d(x, w, {}, s, p, d, g);
    EXPECT_LT(max_abs_diff(y, direct_conv2d(x, w, s, p, d, g)), 1e-10)
        << "s=" << s << " p=" << p << " d=" << d << " g=" << g;
  }
}

TEST(Conv, Conv2dFloatUsesFastPathAccurately) {
  manual_seed(1);
  for (auto [n, c, k, hw, p] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {4, 1, 8, 12, 0}, {3, 16, 32, 10, 1}, {2, 5, 7, 6, 2}}) {
    Tensor x = rnd({n, c, hw, hw}, kFloat), w = rnd({k, c, 3, 3}, kFloat), b = rnd({k}, kFloat);
    Tensor y = conv2d(x, w, b, 1, p);
    Tensor ref = direct_conv2d(x, w, 1, p, 1, 1) + b.to(kDouble).view({1, k, 1, 1});
    EXPECT_EQ(y.dtype(), kFloat);
    EXPECT_LT(max_abs_diff(y, ref), 1e-3);
  }
}

TEST(Conv, StridedAndUnbatchedInputs) {
  manual_seed(2);
  Tensor base = rnd({2, 3, 10, 12});
  Tensor x = base.transpose(2, 3);  // non-contiguous (2, 3, 12, 10)
  Tensor w = rnd({4, 3, 3, 3});
  EXPECT_LT(max_abs_diff(conv2d(x, w), direct_conv2d(x.contiguous(), w, 1, 0, 1, 1)), 1e-10);
  Tensor y1 = conv2d(x.select(0, 1), w);
  EXPECT_EQ(y1.sizes(), IntArrayRef({4, 10, 8}));
  EXPECT_LT(max_abs_diff(y1, conv2d(x, w).select(0, 1)), 1e-12);
}

TEST(Conv, SamePaddingIsAsymmetricForEvenKernels) {
  manual_seed(3);
  Tensor x = rnd({1, 2, 7, 6}), w = rnd({3, 2, 4, 2});
  Tensor y = conv2d(x, w, {}, 1, "same");
  EXPECT_EQ(y.sizes(), IntArrayRef({1, 3, 7, 6}));
  // total padding 3 (rows) and 1 (cols): left 1/0, right 2/1
  Tensor xp = pad(x, {0, 1, 1, 2});
  EXPECT_LT(max_abs_diff(y, conv2d(xp, w)), 1e-12);
  EXPECT_EQ(conv2d(x, w, {}, 1, "valid").sizes(), IntArrayRef({1, 3, 4, 5}));
}

TEST(Conv, TransposedIsAdjointOfConv) {
  manual_seed(4);
  // <conv(x, w), y> == <x, conv_transpose(y, w)> with output_padding filling the lost rows
  Tensor x = rnd({2, 4, 9, 9}), w = rnd({6, 2, 3, 3});
  Tensor y = rnd({2, 6, 5, 5});
  Tensor cx = conv2d(x, w, {}, 2, 1, 1, 2);
  ASSERT_EQ(cx.sizes(), y.sizes());
  Tensor ty = conv_transpose2d(y, w, {}, 2, 1, 0, 2);
  ASSERT_EQ(ty.sizes(), x.sizes());
  EXPECT_NEAR((cx * y).sum().item<double>(), (x * ty).sum().item<double>(), 1e-9);
  EXPECT_EQ(conv_transpose2d(y, w, {}, 2, 1, 1, 2).sizes(), IntArrayRef({2, 4, 10, 10}));
}

TEST(Conv, GradcheckConvAllInputs) {
  manual_seed(5);
  for (int nd = 1; nd <= 3; ++nd) {
    std::vector<int64_t> xs{1, 4}, ws{4, 2};
    for (int i = 0; i < nd; ++i) xs.push_back(nd == 3 ? 3 : 5), ws.push_back(2);
    Tensor x = rnd(xs).requires_grad_(), w = rnd(ws).requires_grad_(),
           b = rnd({4}).requires_grad_();
    auto fn = [&](const variable_list& in) {
      return variable_list{convolution(in[0], in[1], in[2], 2, 1, 1, false, 0, 2)};
    };
    autograd::GradcheckOptions o;
    o.check_forward_ad = true;
    EXPECT_TRUE(autograd::gradcheck(fn, {x, w, b}, o)) << nd;
    EXPECT_TRUE(autograd::gradgradcheck(fn, {x, w, b})) << nd;
  }
}

TEST(Conv, GradcheckTransposed) {
  manual_seed(6);
  Tensor x = rnd({1, 4, 3, 4}).requires_grad_(), w = rnd({4, 3, 3, 2}).requires_grad_(),
         b = rnd({3}).requires_grad_();
  auto fn = [&](const variable_list& in) {
    return variable_list{conv_transpose2d(in[0], in[1], in[2], 2, 1, 1, 1, 1)};
  };
  EXPECT_TRUE(autograd::gradcheck(fn, {x, w, b}));
  EXPECT_TRUE(autograd::gradgradcheck(fn, {x, w, b}));
}

TEST(Conv, ZeroBatch) {
  Tensor x = zeros({0, 3, 8, 8}), w = ones({5, 3, 3, 3});
  EXPECT_EQ(conv2d(x, w).sizes(), IntArrayRef({0, 5, 6, 6}));
}

TEST(Conv, Errors) {
  Tensor w = ones({4, 3, 3, 3});
  EXPECT_THROW(conv2d(ones({2, 3}), w), Error);                       // rank
  EXPECT_THROW(conv2d(ones({1, 2, 8, 8}), w), Error);                 // channels
  EXPECT_THROW(conv2d(ones({1, 3, 2, 2}), w), Error);                 // kernel > input
  EXPECT_THROW(conv2d(ones({1, 3, 8, 8}), w, ones({5})), Error);      // bias size
  EXPECT_THROW(conv2d(ones({1, 3, 8, 8}), w, {}, 0), Error);          // stride
  EXPECT_THROW(conv2d(ones({1, 3, 8, 8}), w, {}, 1, -1), Error);      // padding
  EXPECT_THROW(conv2d(ones({1, 3, 8, 8}, kDouble), w), Error);        // dtype mismatch
  EXPECT_THROW(conv2d(ones({1, 3, 8, 8}), w, {}, 2, "same"), Error);  // strided same
  EXPECT_THROW(conv2d(ones({1, 3, 8, 8}), w, {}, 1, "full"), Error);
  EXPECT_THROW(conv2d(ones({1, 3, 8, 8}, kLong), ones({4, 3, 3, 3}, kLong)), Error);
  EXPECT_THROW(conv_transpose2d(ones({1, 3, 4, 4}), ones({3, 2, 3, 3}), {}, 1, 0, 1), Error);
}

TEST(Pool, MaxPool2dValuesAndIndices) {
  Tensor x = arange(16, TensorOptions(kDouble)).view({1, 1, 4, 4});
  auto [y, idx] = max_pool2d_with_indices(x, 2);
  std::vector<double> expect{5, 7, 13, 15};
  Tensor yc = y.contiguous();
  EXPECT_EQ(std::vector<double>(yc.data_ptr<double>(), yc.data_ptr<double>() + 4), expect);
  Tensor ic = idx.contiguous();
  EXPECT_EQ(std::vector<int64_t>(ic.data_ptr<int64_t>(), ic.data_ptr<int64_t>() + 4),
            (std::vector<int64_t>{5, 7, 13, 15}));
  // padding, ceil_mode and dilation shapes as PyTorch's pooling_output_shape
  EXPECT_EQ(max_pool2d(ones({1, 1, 5, 5}), 2, 2, 0, 1, true).sizes(), IntArrayRef({1, 1, 3, 3}));
  EXPECT_EQ(max_pool2d(ones({1, 1, 5, 5}), 3, 1, 1, 2).sizes(), IntArrayRef({1, 1, 3, 3}));
}

TEST(Pool, MaxPoolGradcheck) {
  manual_seed(7);
  Tensor x = rnd({2, 3, 6, 7}).requires_grad_();
  auto fn = [](const variable_list& in) {
    return variable_list{max_pool2d(in[0], {3, 2}, {2, 1}, 1, 1, true)};
  };
  autograd::GradcheckOptions o;
  o.check_forward_ad = true;
  EXPECT_TRUE(autograd::gradcheck(fn, {x}, o));
  EXPECT_TRUE(autograd::gradgradcheck(fn, {x}));
}

TEST(Pool, AvgAndAdaptive) {
  Tensor x = arange(16, TensorOptions(kDouble)).view({1, 4, 4});
  Tensor y = avg_pool2d(x, 2);
  EXPECT_NEAR(y.sum().item<double>(), (2.5 + 4.5 + 10.5 + 12.5), 1e-12);
  Tensor a = adaptive_avg_pool2d(x, {1, 1});
  EXPECT_NEAR(a.item<double>(), 7.5, 1e-12);
  auto [m, i] = adaptive_max_pool2d(x, {1, 1});
  EXPECT_EQ(i.item<int64_t>(), 15);
  EXPECT_THROW(max_pool2d(ones({1, 1, 4, 4}), 2, 2, 2), Error);  // pad > kernel / 2
  EXPECT_THROW(max_pool2d(ones({4, 4}), 2), Error);              // rank
  EXPECT_THROW(max_pool2d(ones({1, 1, 1, 1}), 2), Error);        // output too small
}
