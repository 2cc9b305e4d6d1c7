// ember's packed float32/float64 GEMM (src/kernels/cpu/linalg/packed_gemm_kernels.cpp), every
// capability variant this CPU can run, both loop nests (in place and blocked, chosen by size or
// forced), and blas_gemm's choice between it and OpenBLAS, against a double (float) or long
// double (double) triple loop: row and column tails of the register tile, k blocks, row and
// column blocks, transposed operands, leading dims wider than the matrices, alpha/beta (beta == 0
// never reads C, alpha == 0 and k == 0 only scale C), NaN/inf propagation and 1/2 threads. The
// error bound is (k + 2) eps of the dtype relative to |alpha| sum |a b| + |beta c|, the bound of
// any summation order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ember.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/linalg/packed_gemm.h"

using namespace ember;

namespace {

template <class T>
using PackedFn = void (*)(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*,
                          int64_t, T, T*, int64_t, int, cpu::PackedPath);
using cpu::PackedPath;

struct Variant {
  std::string name;
  PackedFn<float> s;
  PackedFn<double> d;
};

/// The capability variants this CPU can execute.
std::vector<Variant> variants() {
  std::vector<Variant> v{
      {"default", cpu::cap_default::packed_sgemm, cpu::cap_default::packed_dgemm}};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    v.push_back({"avx2", cpu::cap_avx2::packed_sgemm, cpu::cap_avx2::packed_dgemm});
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    v.push_back({"avx512", cpu::cap_avx512::packed_sgemm, cpu::cap_avx512::packed_dgemm});
  return v;
}

template <class T>
PackedFn<T> fn(const Variant& v) {
  if constexpr (std::is_same_v<T, float>)
    return v.s;
  else
    return v.d;
}

/// One product with random operands stored with padded leading dims; `fill_c` is C's value
/// (NaN checks that beta == 0 does not read it), or random when it is 0.
template <class T>
struct Case {
  bool ta, tb;
  int64_t m, n, k;
  T alpha, beta;
  int64_t lda, ldb, ldc;
  std::vector<T> a, b, c, c0;

  Case(bool ta_, bool tb_, int64_t m_, int64_t n_, int64_t k_, T alpha_, T beta_, T fill_c,
       unsigned seed)
      : ta(ta_), tb(tb_), m(m_), n(n_), k(k_), alpha(alpha_), beta(beta_) {
    lda = (ta ? m : k) + 3;
    ldb = (tb ? k : n) + 5;
    ldc = n + 2;
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    a.resize(size_t((ta ? k : m) * lda));
    b.resize(size_t((tb ? n : k) * ldb));
    c.resize(size_t(m * ldc));
    for (auto& x : a) x = T(u(g));
    for (auto& x : b) x = T(u(g));
    for (auto& x : c) x = fill_c != T(0) ? fill_c : T(u(g));
    c0 = c;
  }
  T& A(int64_t i, int64_t p) { return ta ? a[size_t(p * lda + i)] : a[size_t(i * lda + p)]; }
  T& B(int64_t p, int64_t j) { return tb ? b[size_t(j * ldb + p)] : b[size_t(p * ldb + j)]; }

  /// Checks c against the long-double product; "" when every element is within the bound.
  std::string check(const std::string& what) {
    const long double eps = std::numeric_limits<T>::epsilon();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < ldc; ++j) {
        const T got = c[size_t(i * ldc + j)], old = c0[size_t(i * ldc + j)];
        if (j >= n) {  // the padding of C's rows is never written
          if (!(got == old || (std::isnan(got) && std::isnan(old))))
            return what + ": padding of C written at (" + std::to_string(i) + "," +
                   std::to_string(j) + ")";
          continue;
        }
        // float: double sums are exact enough (2^-53 against a bound of (k + 2) 2^-24).
        using R = std::conditional_t<sizeof(T) == 4, double, long double>;
        R s = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          const R t = R(A(i, p)) * R(B(p, j));
          s += t;
          mag += std::fabs(t);
        }
        long double ref = alpha == T(0) ? 0.0L : (long double)alpha * s;
        long double bound = std::fabs((long double)alpha) * mag;
        if (beta != T(0)) {
          ref += (long double)beta * old;
          bound += std::fabs((long double)beta * old);
        }
        bound *= (k + 2) * eps;
        const bool ok = std::isnan(ref)   ? std::isnan(got)
                        : std::isinf(ref) ? (long double)got == ref
                                          : std::fabs(got - ref) <= bound;
        if (!ok)
          return what + ": C(" + std::to_string(i) + "," + std::to_string(j) +
                 ") = " + std::to_string(double(got)) + ", expected " + std::to_string(double(ref));
      }
    }
    return "";
  }
};

template <class T>
std::string run_case(PackedFn<T> f, const std::string& name, bool ta, bool tb, int64_t m, int64_t n,
                     int64_t k, T alpha, T beta, T fill_c, int threads,
                     PackedPath path = PackedPath::kAuto) {
  Case<T> cs(ta, tb, m, n, k, alpha, beta, fill_c, unsigned(m * 1000003 + n * 1009 + k));
  f(ta, tb, m, n, k, alpha, cs.a.data(), cs.lda, cs.b.data(), cs.ldb, beta, cs.c.data(), cs.ldc,
    threads, path);
  return cs.check(name + (sizeof(T) == 4 ? " float" : " double") + " ta=" + std::to_string(ta) +
                  " tb=" + std::to_string(tb) + " m=" + std::to_string(m) +
                  " n=" + std::to_string(n) + " k=" + std::to_string(k) + " alpha=" +
                  std::to_string(double(alpha)) + " beta=" + std::to_string(double(beta)) +
                  " threads=" + std::to_string(threads) + " path=" + std::to_string(int(path)));
}

/// Every (ta, tb) and alpha/beta class on the given sizes, through the given loop nest.
template <class T>
void sweep(const std::vector<int64_t>& ms, const std::vector<int64_t>& ns,
           const std::vector<int64_t>& ks, const std::vector<int>& threads,
           PackedPath path = PackedPath::kAuto) {
  const int saved = get_num_threads();
  for (const Variant& v : variants()) {
    for (int nt : threads) {
      set_num_threads(nt);
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (int64_t m : ms)
            for (int64_t n : ns)
              for (int64_t k : ks) {
                const T nan = std::numeric_limits<T>::quiet_NaN();
                for (auto [alpha, beta, fill] :
                     {std::tuple<T, T, T>{1, 0, nan}, {T(0.5), 1, 0}, {-2, T(0.25), 0}}) {
                  const std::string err =
                      run_case<T>(fn<T>(v), v.name, ta, tb, m, n, k, alpha, beta, fill, nt, path);
                  ASSERT_EQ(err, "");
                }
              }
    }
  }
  set_num_threads(saved);
}

}  // namespace

TEST(PackedGemm, TailsOfTheRegisterTile) {
  // m around MR (6 or 8), n around NR (8/16/32 floats, 4/8/16 doubles), k across one KC block.
  sweep<float>({1, 5, 6, 7, 8, 9, 13, 17}, {1, 3, 4, 8, 15, 16, 17, 33}, {0, 1, 2, 9}, {1, 2});
  sweep<double>({1, 5, 6, 7, 8, 9, 13, 17}, {1, 3, 4, 5, 8, 9, 17}, {0, 1, 2, 9}, {1, 2});
}

TEST(PackedGemm, BlocksOfKRowsAndColumns) {
  // k > KC (256): later k blocks accumulate into C; m > MC (120/160): several row blocks; rows
  // of B longer than 1 KiB are packed, shorter ones read in place.
  sweep<float>({13, 130}, {40, 300}, {520}, {2});
  sweep<double>({13, 170}, {20, 140}, {300}, {1});
  // More columns than one packed block of B (2048).
  sweep<float>({3, 7}, {2100}, {1, 5}, {2});
}

TEST(PackedGemm, SquareSizesOfTheBenchmarks) {
  sweep<float>({64, 128}, {64, 128}, {64, 128}, {1, 2});
}

TEST(PackedGemm, BlockedNestTailsOfTheRegisterTile) {
  // The blocked nest forced on small sizes: row/column tails of the tile in the packed panels
  // (zero padded), k below and around the 8 steps of the transposing pack of A.
  sweep<float>({1, 5, 6, 7, 13}, {1, 15, 16, 17, 33}, {1, 7, 8, 9, 17}, {1, 2},
               PackedPath::kBlocked);
  sweep<double>({1, 5, 6, 7, 9}, {1, 7, 8, 9, 17}, {1, 7, 8, 9}, {1, 2}, PackedPath::kBlocked);
}

TEST(PackedGemm, BlockedNestBlocksOfKRowsAndColumns) {
  // k past KC (256) in equal blocks (257: 2 x ~129, 520: 3 x ~176): later blocks accumulate
  // into C; m past the blocked nest's MC (144/192): several packed blocks of A, the last ragged
  // in rows; n past NC (2048): two packed blocks of B.
  sweep<float>({13, 150, 200}, {40, 100}, {257, 520}, {1, 2}, PackedPath::kBlocked);
  sweep<double>({7, 199}, {9, 70}, {300}, {1, 2}, PackedPath::kBlocked);
  sweep<float>({3, 7}, {2100}, {1, 9}, {1, 2}, PackedPath::kBlocked);
}

TEST(PackedGemm, BlockedNestResultsDoNotDependOnTheThreadCount) {
  // Every element is the same k-ordered sum however C is split: 1 and 2 threads agree bit for
  // bit (the sums are checked against the oracle by the sweeps above).
  for (const Variant& v : variants()) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Case<float> one(ta, tb, 190, 170, 300, 1.25f, 0.5f, 0.f, 11), two = one;
        const int saved = get_num_threads();
        set_num_threads(2);
        v.s(ta, tb, one.m, one.n, one.k, one.alpha, one.a.data(), one.lda, one.b.data(), one.ldb,
            one.beta, one.c.data(), one.ldc, 1, PackedPath::kBlocked);
        v.s(ta, tb, two.m, two.n, two.k, two.alpha, two.a.data(), two.lda, two.b.data(), two.ldb,
            two.beta, two.c.data(), two.ldc, 2, PackedPath::kBlocked);
        set_num_threads(saved);
        ASSERT_EQ(one.check(v.name + " blocked 1 thread"), "");
        for (size_t i = 0; i < one.c.size(); ++i)
          ASSERT_EQ(one.c[i], two.c[i]) << v.name << " ta=" << ta << " tb=" << tb << " at " << i;
      }
  }
}

TEST(PackedGemm, BlockedNestNonFiniteValuesPropagate) {
  for (const Variant& v : variants()) {
    for (bool ta : {false, true}) {
      Case<float> cs(ta, false, 13, 37, 11, 1.f, 0.f, std::numeric_limits<float>::quiet_NaN(), 7);
      cs.A(4, 3) = std::numeric_limits<float>::quiet_NaN();
      cs.B(5, 20) = std::numeric_limits<float>::infinity();
      cs.A(9, 5) = 0.f;
      v.s(ta, false, cs.m, cs.n, cs.k, cs.alpha, cs.a.data(), cs.lda, cs.b.data(), cs.ldb, cs.beta,
          cs.c.data(), cs.ldc, 1, PackedPath::kBlocked);
      EXPECT_EQ(cs.check(v.name + " blocked non-finite"), "");
      EXPECT_TRUE(std::isnan(cs.c[size_t(4 * cs.ldc + 0)]));
      EXPECT_TRUE(std::isnan(cs.c[size_t(9 * cs.ldc + 20)]));
    }
  }
}

TEST(PackedGemm, NonFiniteValuesPropagate) {
  for (const Variant& v : variants()) {
    for (bool ta : {false, true}) {
      // NaN in A poisons its row, inf in B its column (inf * 0 = NaN where A holds a 0).
      Case<float> cs(ta, false, 13, 37, 11, 1.f, 1.f, 0.f, 7);
      cs.A(4, 3) = std::numeric_limits<float>::quiet_NaN();
      cs.B(5, 20) = std::numeric_limits<float>::infinity();
      cs.A(9, 5) = 0.f;
      v.s(ta, false, cs.m, cs.n, cs.k, cs.alpha, cs.a.data(), cs.lda, cs.b.data(), cs.ldb, cs.beta,
          cs.c.data(), cs.ldc, 1, PackedPath::kAuto);
      EXPECT_EQ(cs.check(v.name + " non-finite"), "");
      EXPECT_TRUE(std::isnan(cs.c[size_t(4 * cs.ldc + 0)]));
      EXPECT_TRUE(std::isinf(cs.c[size_t(0 * cs.ldc + 20)]) ||
                  std::isnan(cs.c[size_t(0 * cs.ldc + 20)]));
      EXPECT_TRUE(std::isnan(cs.c[size_t(9 * cs.ldc + 20)]));
    }
  }
}

TEST(PackedGemm, AlphaZeroAndKZeroOnlyScaleC) {
  for (const Variant& v : variants()) {
    // alpha == 0 reads neither A nor B (as BLAS): NaN there does not reach C.
    Case<double> cs(false, true, 9, 19, 5, 0.0, -3.0, 0.0, 3);
    for (auto& x : cs.a) x = std::numeric_limits<double>::quiet_NaN();
    v.d(false, true, cs.m, cs.n, cs.k, 0.0, cs.a.data(), cs.lda, cs.b.data(), cs.ldb, -3.0,
        cs.c.data(), cs.ldc, 1, PackedPath::kAuto);
    for (int64_t i = 0; i < cs.m; ++i)
      for (int64_t j = 0; j < cs.n; ++j)
        EXPECT_EQ(cs.c[size_t(i * cs.ldc + j)], -3.0 * cs.c0[size_t(i * cs.ldc + j)]);
    // k == 0 with beta == 0 writes zeros over NaN.
    Case<float> z(true, false, 7, 17, 0, 1.f, 0.f, std::numeric_limits<float>::quiet_NaN(), 4);
    v.s(true, false, z.m, z.n, 0, 1.f, z.a.data(), z.lda, z.b.data(), z.ldb, 0.f, z.c.data(), z.ldc,
        2, PackedPath::kAuto);
    for (int64_t i = 0; i < z.m; ++i)
      for (int64_t j = 0; j < z.n; ++j) EXPECT_EQ(z.c[size_t(i * z.ldc + j)], 0.f);
  }
}

TEST(PackedGemm, ZeroSizeWritesNothing) {
  for (const Variant& v : variants()) {
    float c = 5.f, a = 1.f, b = 1.f;
    for (PackedPath path : {PackedPath::kInPlace, PackedPath::kBlocked}) {
      v.s(false, false, 0, 1, 1, 1.f, &a, 1, &b, 1, 0.f, &c, 1, 2, path);
      v.s(false, false, 1, 0, 1, 1.f, &a, 1, &b, 1, 0.f, &c, 1, 2, path);
    }
    EXPECT_EQ(c, 5.f);
  }
}

TEST(PackedGemm, BlasGemmChoiceMatchesTheOracle) {
  // Through blas_gemm, which picks the packed kernel or OpenBLAS by size and capability: the
  // sizes on either side of the switch give the same products within the bound.
  const int saved = get_num_threads();
  for (int nt : {1, 2}) {
    set_num_threads(nt);
    // 410^3 is past the switch to OpenBLAS for double (float stays on the packed kernel).
    for (int64_t s : {5, 64, 96, 128, 200, 300, 410})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          if (s == 410 && (ta || tb || nt == 2)) continue;  // the oracle loop is slow there
          Case<float> cs(ta, tb, s, s + 1, s - 1, 1.5f, 0.5f, 0.f, unsigned(s));
          cpu::blas_gemm(kFloat, ta ? cpu::Op::T : cpu::Op::N, tb ? cpu::Op::T : cpu::Op::N, s,
                         s + 1, s - 1, 1.5, cs.a.data(), cs.lda, cs.b.data(), cs.ldb, 0.5,
                         cs.c.data(), cs.ldc);
          ASSERT_EQ(cs.check("blas_gemm float s=" + std::to_string(s)), "");
          Case<double> cd(ta, tb, s, s - 1, s + 1, -1.0, 0.0, 0.0, unsigned(s) + 1);
          cpu::blas_gemm(kDouble, ta ? cpu::Op::T : cpu::Op::N, tb ? cpu::Op::T : cpu::Op::N, s,
                         s - 1, s + 1, -1.0, cd.a.data(), cd.lda, cd.b.data(), cd.ldb, 0.0,
                         cd.c.data(), cd.ldc);
          ASSERT_EQ(cd.check("blas_gemm double s=" + std::to_string(s)), "");
        }
  }
  set_num_threads(saved);
}
