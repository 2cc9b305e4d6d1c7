// The FFT engine (src/kernels/cpu/fft) through its kernel stubs, against a naive long-double DFT:
// every output for small and odd lengths (prime ones take Bluestein's path), a sample of bins
// and a round trip for long lines; strided, conjugated and zero-size inputs; multi-dim dims that
// are not contiguous; complex64 and complex128. The error bound is the relative L2 error
// 2 eps log2(n) (eps of the dtype).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "kernels/stubs/fft.h"

using namespace ember;

namespace {

using ld = long double;
using cld = std::complex<ld>;

constexpr ld kTwoPi = 6.283185307179586476925286766559005768L;

/// A contiguous tensor of `shape` filled with uniform values in [-1, 1) (seeded).
Tensor filled(const std::vector<int64_t>& shape, ScalarType dt, unsigned seed) {
  Tensor t = empty(shape, TensorOptions().dtype(dt));
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int64_t count = t.numel() * (isComplexType(dt) ? 2 : 1);
  if (dt == kFloat || dt == kComplexFloat) {
    float* p = static_cast<float*>(t.data_ptr());
    for (int64_t i = 0; i < count; ++i) p[i] = float(u(g));
  } else {
    double* p = static_cast<double*>(t.data_ptr());
    for (int64_t i = 0; i < count; ++i) p[i] = u(g);
  }
  return t;
}

/// The elements of any tensor (complex or real) as long-double complex numbers in row-major
/// order of its shape, honouring strides and the conj bit.
std::vector<cld> values(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<cld> v(static_cast<size_t>(n));
  const auto sizes = t.sizes().vec();
  const auto strides = t.strides().vec();
  const bool cx = isComplexType(t.dtype());
  const bool dbl = t.dtype() == kDouble || t.dtype() == kComplexDouble;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      off += (rem % sizes[d]) * strides[d];
      rem /= sizes[d];
    }
    ld re, im = 0;
    if (dbl) {
      const double* p = static_cast<const double*>(t.data_ptr()) + (cx ? 2 * off : off);
      re = p[0];
      if (cx) im = p[1];
    } else {
      const float* p = static_cast<const float*>(t.data_ptr()) + (cx ? 2 * off : off);
      re = p[0];
      if (cx) im = p[1];
    }
    if (t.is_conj()) im = -im;
    v[size_t(i)] = cld(re, im);
  }
  return v;
}

/// Naive DFT of the contiguous array `a` of `shape` along `dim` (sign -1 forward), exact angles.
void dft_dim(std::vector<cld>& a, const std::vector<int64_t>& shape, int64_t dim, int sign) {
  int64_t inner = 1, outer = 1;
  for (size_t d = size_t(dim) + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t d = 0; d < dim; ++d) outer *= shape[size_t(d)];
  const int64_t n = shape[size_t(dim)];
  std::vector<cld> w(static_cast<size_t>(n)), line(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    w[size_t(j)] = std::polar(1.0L, ld(sign) * kTwoPi * ld(j) / ld(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      cld* base = a.data() + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) {
        cld s = 0;
        for (int64_t j = 0; j < n; ++j) s += base[j * inner] * w[size_t((j * k) % n)];
        line[size_t(k)] = s;
      }
      for (int64_t k = 0; k < n; ++k) base[k * inner] = line[size_t(k)];
    }
}

double eps_of(ScalarType dt) { return (dt == kComplexFloat || dt == kFloat) ? 1.19e-7 : 2.2e-16; }

/// The accuracy target: relative L2 error <= 2 eps log2(n) (n >= 2).
double bound(ScalarType dt, int64_t n) {
  return 2.0 * eps_of(dt) * std::max(1.0, std::log2(double(n)));
}

/// Relative L2 error of `got` against the reference.
double rel_err(const std::vector<cld>& got, const std::vector<cld>& ref) {
  ld num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(got[i] - ref[i]);
    den += std::norm(ref[i]);
  }
  return den == 0 ? double(std::sqrt(num)) : double(std::sqrt(num / den));
}

Tensor c2c(const Tensor& x, std::vector<int64_t> dims, double scale, bool forward) {
  Tensor out = empty(x.sizes(), TensorOptions().dtype(x.dtype()));
  fft_c2c_stub(kCPU, x, out, dims, scale, forward);
  return out;
}

Tensor r2c(const Tensor& x, std::vector<int64_t> dims, double scale) {
  auto shape = x.sizes().vec();
  shape[size_t(dims.back())] = shape[size_t(dims.back())] / 2 + 1;
  Tensor out =
      empty(shape, TensorOptions().dtype(x.dtype() == kFloat ? kComplexFloat : kComplexDouble));
  fft_r2c_stub(kCPU, x, out, dims, scale);
  return out;
}

Tensor c2r(const Tensor& x, std::vector<int64_t> dims, int64_t n, double scale) {
  auto shape = x.sizes().vec();
  shape[size_t(dims.back())] = n;
  Tensor out = empty(shape, TensorOptions().dtype(x.dtype() == kComplexFloat ? kFloat : kDouble));
  fft_c2r_stub(kCPU, x, out, dims, scale);
  return out;
}

/// The reference of c2c: naive DFTs over `dims`, times scale.
std::vector<cld> ref_c2c(const Tensor& x, const std::vector<int64_t>& dims, double scale,
                         bool forward) {
  std::vector<cld> a = values(x);
  const auto shape = x.sizes().vec();
  for (int64_t d : dims) dft_dim(a, shape, d, forward ? -1 : 1);
  for (auto& v : a) v *= ld(scale);
  return a;
}

/// The reference of r2c: the onesided half of the full transform.
std::vector<cld> ref_r2c(const Tensor& x, const std::vector<int64_t>& dims, double scale) {
  std::vector<cld> full = ref_c2c(x, dims, scale, true);
  auto shape = x.sizes().vec();
  const int64_t dl = dims.back();
  const int64_t n = shape[size_t(dl)], h = n / 2 + 1;
  int64_t inner = 1, outer = 1;
  for (size_t d = size_t(dl) + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t d = 0; d < dl; ++d) outer *= shape[size_t(d)];
  std::vector<cld> r;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < h; ++k)
      for (int64_t i = 0; i < inner; ++i) r.push_back(full[size_t((o * n + k) * inner + i)]);
  return r;
}

/// The reference of c2r: backward DFTs over the other dims, then the Hermitian sum along the
/// last (the imaginary parts of the zero and Nyquist bins ignored).
std::vector<cld> ref_c2r(const Tensor& x, const std::vector<int64_t>& dims, int64_t n,
                         double scale) {
  std::vector<cld> a = values(x);
  auto shape = x.sizes().vec();
  for (size_t q = 0; q + 1 < dims.size(); ++q) dft_dim(a, shape, dims[q], 1);
  const int64_t dl = dims.back();
  const int64_t hin = shape[size_t(dl)];
  int64_t inner = 1, outer = 1;
  for (size_t d = size_t(dl) + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t d = 0; d < dl; ++d) outer *= shape[size_t(d)];
  std::vector<cld> r(size_t(outer * n * inner)), tw;
  for (int64_t j = 0; j < n; ++j) tw.push_back(std::polar(1.0L, kTwoPi * ld(j) / ld(n)));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t j = 0; j < n; ++j) {
        ld s = 0;
        for (int64_t k = 0; k <= n / 2 && k < hin; ++k) {
          cld X = a[size_t((o * hin + k) * inner + i)];
          const bool edge = k == 0 || 2 * k == n;
          if (edge) X = cld(X.real(), 0);
          const cld& w = tw[size_t((j * k) % n)];
          const ld term = X.real() * w.real() - X.imag() * w.imag();
          s += edge ? term : 2 * term;
        }
        r[size_t((o * n + j) * inner + i)] = s * ld(scale);
      }
  return r;
}

const std::vector<int64_t> kSmall = {1,  2,   3,   4,   5,   6,   7,   8,    9,   12,
                                     16, 17,  25,  27,  31,  32,  37,  49,   60,  64,
                                     97, 100, 121, 128, 243, 256, 343, 1000, 1024};

class FftEngineC2C : public ::testing::TestWithParam<ScalarType> {};

TEST_P(FftEngineC2C, OneDimAgainstNaiveDft) {
  const ScalarType dt = GetParam();
  for (int64_t n : kSmall)
    for (bool fwd : {true, false}) {
      Tensor x = filled({3, n}, dt, unsigned(n));
      const double scale = fwd ? 1.0 : 1.0 / double(n);
      Tensor y = c2c(x, {1}, scale, fwd);
      EXPECT_LE(rel_err(values(y), ref_c2c(x, {1}, scale, fwd)), bound(dt, n))
          << "n=" << n << " forward=" << fwd;
    }
}

TEST_P(FftEngineC2C, ManyLinesAndBlocks) {
  // Enough lines for several column blocks, and a count that is not a multiple of the width.
  const ScalarType dt = GetParam();
  for (int64_t n : {8, 12, 30, 64, 97, 128}) {
    Tensor x = filled({37, n}, dt, 7);
    Tensor y = c2c(x, {1}, 1.0, true);
    EXPECT_LE(rel_err(values(y), ref_c2c(x, {1}, 1.0, true)), bound(dt, n)) << "n=" << n;
  }
}

TEST_P(FftEngineC2C, StridedAndConjugatedInput) {
  const ScalarType dt = GetParam();
  Tensor base = filled({10, 2 * 24}, dt, 3);
  // Transposed, and every other column.
  Tensor x = base.slice(1, 0, std::nullopt, 2).transpose(0, 1);  // [24, 10], strides (2, 48)
  ASSERT_FALSE(x.is_contiguous());
  for (int64_t dim : {0, 1}) {
    Tensor y = c2c(x, {dim}, 1.0, true);
    EXPECT_LE(rel_err(values(y), ref_c2c(x, {dim}, 1.0, true)), bound(dt, 24)) << dim;
  }
  Tensor xc = x.conj();
  ASSERT_TRUE(xc.is_conj());
  Tensor y = c2c(xc, {0, 1}, 0.5, false);
  EXPECT_LE(rel_err(values(y), ref_c2c(xc, {0, 1}, 0.5, false)), bound(dt, 240));
}

TEST_P(FftEngineC2C, MultiDimNonContiguousDims) {
  const ScalarType dt = GetParam();
  Tensor x = filled({4, 6, 5, 3}, dt, 11);
  for (std::vector<int64_t> dims :
       std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}, {0, 1, 2, 3}, {0}, {3}}) {
    Tensor y = c2c(x, dims, 0.25, true);
    EXPECT_LE(rel_err(values(y), ref_c2c(x, dims, 0.25, true)), bound(dt, 360));
  }
  Tensor xt = x.permute({2, 0, 3, 1});
  Tensor y = c2c(xt, {1, 2}, 1.0, false);
  EXPECT_LE(rel_err(values(y), ref_c2c(xt, {1, 2}, 1.0, false)), bound(dt, 12));
}

TEST_P(FftEngineC2C, ZeroSizeBatch) {
  const ScalarType dt = GetParam();
  Tensor x = empty({0, 8}, TensorOptions().dtype(dt));
  Tensor y = c2c(x, {1}, 1.0, true);
  EXPECT_EQ(y.numel(), 0);
  Tensor xr = empty({3, 0, 6}, TensorOptions().dtype(dt == kComplexFloat ? kFloat : kDouble));
  EXPECT_EQ(r2c(xr, {0, 2}, 1.0).numel(), 0);
  Tensor xc = empty({0, 4}, TensorOptions().dtype(dt));
  EXPECT_EQ(c2r(xc, {0, 1}, 6, 1.0).numel(), 0);
}

TEST_P(FftEngineC2C, ThreadCountDoesNotChangeResult) {
  const ScalarType dt = GetParam();
  const int saved = get_num_threads();
  Tensor x = filled({64, 96}, dt, 5);
  set_num_threads(1);
  Tensor a = c2c(x, {0, 1}, 1.0, true);
  Tensor l1 = c2c(filled({1, 1 << 14}, dt, 6), {1}, 1.0, true);
  set_num_threads(2);
  Tensor b = c2c(x, {0, 1}, 1.0, true);
  Tensor l2 = c2c(filled({1, 1 << 14}, dt, 6), {1}, 1.0, true);
  set_num_threads(saved);
  EXPECT_TRUE(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0);
  EXPECT_TRUE(std::memcmp(l1.data_ptr(), l2.data_ptr(), l1.nbytes()) == 0);
}

TEST_P(FftEngineC2C, ConcurrentCallersAgree) {
  // Transforms from several threads at once (one holds the helpers, the others run alone).
  const ScalarType dt = GetParam();
  const int saved = get_num_threads();
  set_num_threads(2);
  Tensor x = filled({8, 1 << 13}, dt, 12);
  Tensor ref = c2c(x, {1}, 1.0, true);
  std::vector<Tensor> got(4);
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i) ts.emplace_back([&, i] { got[size_t(i)] = c2c(x, {1}, 1.0, true); });
  for (auto& t : ts) t.join();
  set_num_threads(saved);
  for (const Tensor& g : got)
    EXPECT_TRUE(std::memcmp(g.data_ptr(), ref.data_ptr(), ref.nbytes()) == 0);
}

/// exp(-2 pi i j / n), j < n, in long double.
std::vector<cld> roots(int64_t n) {
  std::vector<cld> w(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) w[size_t(j)] = std::polar(1.0L, -kTwoPi * ld(j) / ld(n));
  return w;
}

/// Long lines: sampled bins against the naive sum, and a round trip.
void check_long(ScalarType dt, int64_t n, int batch) {
  Tensor x = filled({batch, n}, dt, unsigned(n % 1000));
  Tensor y = c2c(x, {1}, 1.0, true);
  const std::vector<cld> xv = values(x), yv = values(y);
  ld energy = 0;
  for (const cld& v : xv) energy += std::norm(v);
  const ld rms = std::sqrt(energy / ld(batch) * ld(n));  // per-bin RMS (Parseval)
  const std::vector<cld> w = roots(n);
  std::vector<int64_t> bins = {0, 1, 2, n / 3, n / 2, n - 1, 12345 % n, (n * 7) / 11};
  for (int b = 0; b < batch; ++b)
    for (int64_t k : bins) {
      cld s = 0;
      for (int64_t j = 0; j < n; ++j)
        s += xv[size_t(b * n + j)] * w[size_t(int64_t((__int128)j * k % n))];
      EXPECT_LE(double(std::abs(yv[size_t(b * n + k)] - s) / rms), bound(dt, n))
          << "n=" << n << " bin " << k;
    }
  Tensor back = c2c(y, {1}, 1.0 / double(n), false);
  EXPECT_LE(rel_err(values(back), xv), 2 * bound(dt, n)) << "round trip n=" << n;
}

TEST_P(FftEngineC2C, LongLines) {
  const ScalarType dt = GetParam();
  for (int64_t n : {4096, 6000, 65536, 1 << 20}) check_long(dt, n, n > 100000 ? 1 : 3);
  check_long(dt, 1048583, 1);  // prime: Bluestein with a four-step convolution
  check_long(dt, 4099, 3);     // prime: Bluestein with column blocks
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FftEngineC2C, ::testing::Values(kComplexFloat, kComplexDouble));

class FftEngineReal : public ::testing::TestWithParam<ScalarType> {};

TEST_P(FftEngineReal, R2CAgainstNaiveDft) {
  const ScalarType dt = GetParam();
  for (int64_t n : kSmall) {
    Tensor x = filled({2, n}, dt, unsigned(n + 1));
    Tensor y = r2c(x, {1}, 1.0);
    EXPECT_LE(rel_err(values(y), ref_r2c(x, {1}, 1.0)), bound(dt, n)) << "n=" << n;
  }
}

TEST_P(FftEngineReal, C2RAgainstNaiveDft) {
  const ScalarType cdt = GetParam() == kFloat ? kComplexFloat : kComplexDouble;
  for (int64_t n : kSmall) {
    // Non-zero imaginary parts at the zero and Nyquist bins: they must be ignored.
    Tensor x = filled({2, n / 2 + 1}, cdt, unsigned(n + 2));
    Tensor y = c2r(x, {1}, n, 1.0 / double(n));
    EXPECT_LE(rel_err(values(y), ref_c2r(x, {1}, n, 1.0 / double(n))), bound(cdt, n)) << "n=" << n;
  }
}

TEST_P(FftEngineReal, MultiDimAndStrided) {
  const ScalarType dt = GetParam();
  const ScalarType cdt = dt == kFloat ? kComplexFloat : kComplexDouble;
  Tensor base = filled({9, 7, 10}, dt, 21);
  Tensor x = base.permute({2, 0, 1}).slice(1, 0, std::nullopt, 2);  // [10, 5, 7], strided
  for (std::vector<int64_t> dims :
       std::vector<std::vector<int64_t>>{{0}, {1}, {0, 2}, {0, 1, 2}, {1, 2}}) {
    Tensor y = r2c(x, dims, 0.5);
    EXPECT_LE(rel_err(values(y), ref_r2c(x, dims, 0.5)), bound(dt, 350));
  }
  Tensor s = filled({6, 5, 4}, cdt, 23);
  Tensor st = s.transpose(0, 2);  // [4, 5, 6]
  for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{{2}, {0, 2}, {0, 1, 2}, {1}})
    for (int64_t n : {10, 11}) {
      const int64_t h = st.size(dims.back());
      if (n / 2 + 1 != h) continue;
      Tensor y = c2r(st, dims, n, 1.0);
      EXPECT_LE(rel_err(values(y), ref_c2r(st, dims, n, 1.0)), bound(cdt, 240));
    }
  Tensor y = c2r(s.conj(), {0, 1}, 8, 1.0);
  EXPECT_LE(rel_err(values(y), ref_c2r(s.conj(), {0, 1}, 8, 1.0)), bound(cdt, 48));
}

TEST_P(FftEngineReal, LongRoundTrips) {
  const ScalarType dt = GetParam();
  for (int64_t n : {int64_t(1) << 20, int64_t(531441), int64_t(1048583), int64_t(8192)}) {
    Tensor x = filled({1, n}, dt, 9);
    Tensor y = r2c(x, {1}, 1.0);
    // Sampled bins against the naive sum.
    const std::vector<cld> xv = values(x), yv = values(y);
    ld energy = 0;
    for (const cld& v : xv) energy += std::norm(v);
    const ld rms = std::sqrt(energy * ld(n));
    const std::vector<cld> w = roots(n);
    for (int64_t k : {int64_t(0), int64_t(1), n / 5, n / 2, n / 3 + 1}) {
      cld s = 0;
      for (int64_t j = 0; j < n; ++j) s += xv[size_t(j)] * w[size_t(int64_t((__int128)j * k % n))];
      EXPECT_LE(double(std::abs(yv[size_t(k)] - s) / rms), bound(dt, n)) << n << " " << k;
    }
    Tensor back = c2r(y, {1}, n, 1.0 / double(n));
    EXPECT_LE(rel_err(values(back), xv), 2 * bound(dt, n)) << "n=" << n;
  }
}

TEST_P(FftEngineReal, SingleLongLinesEveryBin) {
  // One line each: the four-step (8192, 8208 = 2 * 8 * 27 * 19) and Bluestein (8200 = 2 * 4100,
  // 41 | 4100) paths with the vector split and merge of the real passes.
  const ScalarType dt = GetParam();
  const ScalarType cdt = dt == kFloat ? kComplexFloat : kComplexDouble;
  for (int64_t n : {8192, 8208, 8200}) {
    Tensor x = filled({n}, dt, unsigned(n));
    Tensor y = r2c(x, {0}, 1.0);
    EXPECT_LE(rel_err(values(y), ref_r2c(x, {0}, 1.0)), bound(dt, n)) << "r2c n=" << n;
    Tensor c = filled({n / 2 + 1}, cdt, unsigned(n + 1));
    Tensor z = c2r(c, {0}, n, 1.0 / double(n));
    EXPECT_LE(rel_err(values(z), ref_c2r(c, {0}, n, 1.0 / double(n))), bound(cdt, n))
        << "c2r n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FftEngineReal, ::testing::Values(kFloat, kDouble));

}  // namespace
