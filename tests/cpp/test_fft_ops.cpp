// The C++ API of torch.fft, stft/istft and the windows (libtorch's spellings and defaults),
// against values derived by hand: transforms of impulses and constants, known window values,
// round trips, the gradient of a linear transform, and typed errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "ember/ember.h"

using namespace ember;

namespace {

/// Element i of a 1-D complex tensor.
std::complex<double> at(const Tensor& t, int64_t i) {
  return t.select(0, i).to(kComplexDouble).item<std::complex<double>>();
}

double rat(const Tensor& t, int64_t i) { return t.select(0, i).to(kDouble).item<double>(); }

}  // namespace

TEST(FftOps, ImpulseAndConstant) {
  // The transform of an impulse at 0 is all ones; of a constant c, n c at bin 0.
  Tensor impulse = zeros({6}, kDouble);
  impulse.select(0, 0).fill_(1);
  Tensor f = fft::fft(impulse);
  ASSERT_EQ(f.dtype(), kComplexDouble);
  for (int64_t k = 0; k < 6; ++k) EXPECT_NEAR(std::abs(at(f, k) - 1.0), 0.0, 1e-12);
  Tensor c = fft::rfft(full({8}, 2.0, kFloat));
  ASSERT_EQ(c.sizes(), IntArrayRef({5}));
  EXPECT_NEAR(std::abs(at(c, 0) - 16.0), 0.0, 1e-5);
  for (int64_t k = 1; k < 5; ++k) EXPECT_NEAR(std::abs(at(c, k)), 0.0, 1e-5);
  // "ortho" divides by sqrt(n), "forward" by n.
  EXPECT_NEAR(std::abs(at(fft::rfft(full({8}, 2.0, kDouble), std::nullopt, -1, "ortho"), 0)),
              16.0 / std::sqrt(8.0), 1e-12);
  EXPECT_NEAR(std::abs(at(fft::fft(full({8}, 2.0, kDouble), std::nullopt, -1, "forward"), 0)), 2.0,
              1e-12);
}

TEST(FftOps, ShiftedImpulseIsAPhaseRamp) {
  // x[j] = [j == 1]  ->  X[k] = exp(-2 pi i k / n); the inverse transform flips the sign, / n.
  const int64_t n = 5;
  Tensor x = zeros({n}, kComplexDouble);
  x.select(0, 1).fill_(1);
  Tensor f = fft::fft(x), g = fft::ifft(x);
  for (int64_t k = 0; k < n; ++k) {
    const double a = 2 * M_PI * double(k) / double(n);
    EXPECT_NEAR(std::abs(at(f, k) - std::complex<double>(std::cos(a), -std::sin(a))), 0, 1e-12);
    EXPECT_NEAR(std::abs(at(g, k) - std::complex<double>(std::cos(a), std::sin(a)) / 5.0), 0,
                1e-12);
  }
}

TEST(FftOps, RoundTripsAndShapes) {
  Tensor x = randn({4, 6, 5}, kDouble);
  EXPECT_TRUE(fft::irfft(fft::rfft(x), 5).allclose(x));
  EXPECT_TRUE(fft::irfftn(fft::rfftn(x), IntArrayRef({4, 6, 5})).allclose(x));
  EXPECT_TRUE(fft::hfft(fft::ihfft(x), 5).allclose(x));
  EXPECT_TRUE(fft::ifft2(fft::fft2(x)).real().allclose(x));
  EXPECT_EQ(fft::fftn(x, IntArrayRef({3, 8}), IntArrayRef({0, 2})).sizes(), IntArrayRef({3, 6, 8}));
  EXPECT_EQ(fft::rfft2(x).sizes(), IntArrayRef({4, 6, 3}));
  EXPECT_EQ(fft::irfft(fft::rfft(x), std::nullopt, 1).sizes(), IntArrayRef({4, 10, 3}));
  EXPECT_EQ(fft::hfftn(x.to(kComplexDouble)).sizes(), IntArrayRef({4, 6, 8}));
}

TEST(FftOps, FreqAndShift) {
  Tensor f = fft::fftfreq(5, 0.5, kDouble);  // [0, 1, 2, -2, -1] / 2.5
  const double want[] = {0, 0.4, 0.8, -0.8, -0.4};
  for (int64_t i = 0; i < 5; ++i) EXPECT_NEAR(rat(f, i), want[i], 1e-15);
  EXPECT_EQ(fft::rfftfreq(6).sizes(), IntArrayRef({4}));
  EXPECT_NEAR(rat(fft::rfftfreq(6), 3), 0.5, 1e-7);
  Tensor s = fft::fftshift(arange(5));  // [3, 4, 0, 1, 2]
  EXPECT_EQ(s.select(0, 0).item<int64_t>(), 3);
  EXPECT_TRUE(fft::ifftshift(s).equal(arange(5)));
}

TEST(FftOps, Windows) {
  // periodic hann(4) = [0, .5, 1, .5]; symmetric bartlett(5) = [0, .5, 1, .5, 0].
  Tensor h = hann_window(4, kDouble);
  const double hw[] = {0, 0.5, 1, 0.5};
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(rat(h, i), hw[i], 1e-15);
  Tensor b = bartlett_window(5, false, kDouble);
  const double bw[] = {0, 0.5, 1, 0.5, 0};
  for (int64_t i = 0; i < 5; ++i) EXPECT_NEAR(rat(b, i), bw[i], 1e-15);
  EXPECT_NEAR(rat(hamming_window(3, false, kDouble), 0), 0.08, 1e-15);
  EXPECT_NEAR(rat(blackman_window(3, false, kDouble), 1), 1.0, 1e-15);
  EXPECT_NEAR(rat(kaiser_window(3, false, 0.0, kDouble), 0), 1.0, 1e-15);
  EXPECT_EQ(hann_window(0).numel(), 0);
  EXPECT_EQ(kaiser_window(1).item<float>(), 1.0f);
  EXPECT_THROW(hann_window(-1), Error);
  EXPECT_THROW(hann_window(4, kLong), Error);
}

TEST(FftOps, StftRoundTrip) {
  Tensor x = randn({2, 64}, kDouble);
  Tensor w = hann_window(16, kDouble);
  Tensor S = x.stft(16, 4, std::nullopt, w, true, "reflect", false, std::nullopt, true);
  EXPECT_EQ(S.sizes(), IntArrayRef({2, 9, 17}));
  Tensor y = S.istft(16, 4, std::nullopt, w, true, false, std::nullopt, 64);
  EXPECT_TRUE(y.allclose(x, 1e-9, 1e-9));
}

TEST(FftOps, GradientOfALinearTransform) {
  // d/dx_j sum_k Re X_k = sum_k cos(2 pi j k / n) = n [j == 0].
  Tensor x = randn({6}, TensorOptions(kDouble).requires_grad(true));
  fft::fft(x).real().sum().backward();
  for (int64_t j = 0; j < 6; ++j) EXPECT_NEAR(rat(x.grad(), j), j == 0 ? 6.0 : 0.0, 1e-12);
}

TEST(FftOps, Errors) {
  Tensor x = randn({4});
  EXPECT_THROW(fft::fft(x, 0), Error);
  EXPECT_THROW(fft::fft(x, std::nullopt, -1, "sideways"), Error);
  EXPECT_THROW(fft::fft(x, std::nullopt, 3), IndexError);
  EXPECT_THROW(fft::fftn(randn({2, 3}), std::nullopt, IntArrayRef({0, -2})), Error);
  EXPECT_THROW(fft::rfft(x.to(kComplexFloat)), Error);
  EXPECT_THROW(fft::fft(x.to(kHalf)), Error);
  EXPECT_THROW(stft(x, 8), Error);  // reflect padding as long as the signal
}
