// Matrix products (cuBLAS) and linalg (cuSOLVER) on CUDA against the CPU: every dtype the
// products support, transposed / strided / conjugated / broadcast operands, zero sizes, TF32,
// gradients, and the linalg factorizations with their error cases. Without a GPU every test
// skips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"

const Device kCuda("cuda");

const std::vector<ScalarType> kGemmTypes = {kFloat,    kDouble,       kHalf,
                                            kBFloat16, kComplexFloat, kComplexDouble};
const std::vector<ScalarType> kLinalgTypes = {kFloat, kDouble, kComplexFloat, kComplexDouble};

/// A CPU tensor of `sizes` with varied values (negative, fractional, complex parts) in `dt`.
Tensor values(IntArrayRef sizes, ScalarType dt, int seed = 0, double scale = 0.37) {
  Tensor t = empty(sizes, TensorOptions().dtype(kComplexDouble));
  auto* p = t.data_ptr<complex<double>>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t j = i + 5 * seed;
    p[i] = complex<double>((double(j % 23) - 11) * scale, (double(j % 7) - 3) * 0.5);
  }
  return t.to(dt);
}

Tensor host(const Tensor& t) { return t.to(Device(kCPU)).resolve_conj().contiguous(); }

/// |a - b| <= tol * (1 + |b|) elementwise, through complex128; same shape and dtype.
void expect_close(const Tensor& a_in, const Tensor& b_in, double tol, const std::string& what) {
  ASSERT_EQ(a_in.sizes(), b_in.sizes()) << what;
  ASSERT_EQ(a_in.dtype(), b_in.dtype()) << what;
  Tensor a = host(a_in).to(kComplexDouble), b = host(b_in).to(kComplexDouble);
  const auto* pa = a.data_ptr<complex<double>>();
  const auto* pb = b.data_ptr<complex<double>>();
  int bad = 0;
  for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
    if (!(std::abs(pa[i] - pb[i]) <= tol * (1 + std::abs(pb[i])))) {
      ADD_FAILURE() << what << ": element " << i << " is " << pa[i] << ", expected " << pb[i];
      ++bad;
    }
  }
}

/// Relative tolerance of a product of `k` terms in `dt` (16-bit: one rounding of the result).
double tol_of(ScalarType dt) {
  switch (dt) {
    case kHalf:
      return 4e-3;
    case kBFloat16:
      return 2e-2;
    case kFloat:
    case kComplexFloat:
      return 2e-5;
    default:
      return 1e-12;
  }
}

std::string name(ScalarType dt) { return dtype_name(dt); }

/// Restores float32 matmul precision "highest" at scope exit.
struct PrecisionGuard {
  ~PrecisionGuard() { set_float32_matmul_precision("highest"); }
};

// ---- products ----

TEST(CudaBlas, MmEveryDtype) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kGemmTypes) {
    Tensor a = values({5, 7}, dt, 1), b = values({7, 3}, dt, 2);
    Tensor r = mm(a.to(kCuda), b.to(kCuda));
    EXPECT_TRUE(r.is_cuda());
    expect_close(r, mm(a, b), tol_of(dt), "mm " + name(dt));
  }
}

TEST(CudaBlas, MmTransposedStridedAndConjugatedOperands) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kGemmTypes) {
    const double tol = tol_of(dt);
    Tensor a = values({6, 5}, dt, 1), b = values({4, 6}, dt, 2);
    Tensor ac = a.to(kCuda), bc = b.to(kCuda);
    // Transposed views: both BLAS layouts without a copy.
    expect_close(mm(ac.t(), bc.t()), mm(a.t(), b.t()), tol, "mm(t, t) " + name(dt));
    expect_close(mm(bc, ac), mm(b, a), tol, "mm(b, a) " + name(dt));
    // Row and column steps: a layout with ld > cols, and one that fits no layout (copied).
    Tensor big = values({12, 10}, dt, 3), bigc = big.to(kCuda);
    Tensor s1 = big.slice(0, 0, 12, 2).slice(1, 0, 6);  // 6x6, row stride 20
    Tensor s2 = big.slice(1, 0, 10, 2).slice(0, 0, 6);  // 6x5, column stride 2
    Tensor s1c = bigc.slice(0, 0, 12, 2).slice(1, 0, 6);
    Tensor s2c = bigc.slice(1, 0, 10, 2).slice(0, 0, 6);
    expect_close(mm(s1c, s2c), mm(s1, s2), tol, "mm(strided) " + name(dt));
    if (isComplexType(dt)) {
      // A conj bit on a transposed operand folds into op C; on a plain one it is resolved.
      expect_close(mm(ac.t().conj(), bc.t()), mm(a.t().conj(), b.t()), tol,
                   "mm(mH, .) " + name(dt));
      expect_close(mm(bc.conj(), ac.conj()), mm(b.conj(), a.conj()), tol, "mm(conj) " + name(dt));
    }
  }
}

TEST(CudaBlas, BmmBaddbmmAndBroadcastBatch) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kGemmTypes) {
    const double tol = tol_of(dt);
    Tensor a = values({3, 4, 5}, dt, 1), b = values({3, 5, 2}, dt, 2);
    expect_close(bmm(a.to(kCuda), b.to(kCuda)), bmm(a, b), tol, "bmm " + name(dt));
    // A broadcast batch (stride 0) is read in place.
    Tensor one = values({1, 5, 2}, dt, 4);
    expect_close(bmm(a.to(kCuda), one.to(kCuda).expand({3, 5, 2})), bmm(a, one.expand({3, 5, 2})),
                 tol, "bmm(expand) " + name(dt));
    Tensor self = values({4, 2}, dt, 5);
    expect_close(baddbmm(self.to(kCuda), a.to(kCuda), b.to(kCuda), 0.5, 2),
                 baddbmm(self, a, b, 0.5, 2), 2 * tol, "baddbmm " + name(dt));
    // matmul: batch x matrix folds the batch into rows; batches broadcast.
    Tensor m = values({5, 3}, dt, 6);
    expect_close(matmul(a.to(kCuda), m.to(kCuda)), matmul(a, m), tol, "matmul 3x2 " + name(dt));
    Tensor x = values({2, 1, 4, 5}, dt, 7), y = values({3, 5, 2}, dt, 8);
    expect_close(matmul(x.to(kCuda), y.to(kCuda)), matmul(x, y), tol, "matmul bcast " + name(dt));
    Tensor v = values({5}, dt, 9);
    expect_close(matmul(a.to(kCuda), v.to(kCuda)), matmul(a, v), tol, "matmul 3x1 " + name(dt));
    expect_close(matmul(v.to(kCuda), b.to(kCuda)), matmul(v, b), tol, "matmul 1x3 " + name(dt));
  }
}

TEST(CudaBlas, AddmmAddmvDotLinear) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kGemmTypes) {
    const double tol = 2 * tol_of(dt);
    Tensor m1 = values({4, 6}, dt, 1), m2 = values({6, 3}, dt, 2);
    Tensor bias = values({3}, dt, 3), full = values({4, 3}, dt, 4);
    expect_close(addmm(bias.to(kCuda), m1.to(kCuda), m2.to(kCuda)), addmm(bias, m1, m2), tol,
                 "addmm bias " + name(dt));
    expect_close(addmm(full.to(kCuda), m1.to(kCuda), m2.to(kCuda), 0.5, -1.5),
                 addmm(full, m1, m2, 0.5, -1.5), tol, "addmm beta alpha " + name(dt));
    // In place into a device tensor.
    Tensor inplace = full.to(kCuda);
    inplace.addmm_(m1.to(kCuda), m2.to(kCuda), 2, 0.5);
    expect_close(inplace, full.clone().addmm_(m1, m2, 2, 0.5), tol, "addmm_ " + name(dt));
    Tensor vec = values({6}, dt, 5), out = values({4}, dt, 6);
    expect_close(mv(m1.to(kCuda), vec.to(kCuda)), mv(m1, vec), tol, "mv " + name(dt));
    expect_close(addmv(out.to(kCuda), m1.to(kCuda), vec.to(kCuda), 0.5, 2),
                 addmv(out, m1, vec, 0.5, 2), tol, "addmv " + name(dt));
    Tensor v2 = values({6}, dt, 7);
    expect_close(dot(vec.to(kCuda), v2.to(kCuda)), dot(vec, v2), tol, "dot " + name(dt));
    // A strided vector: a column of a matrix.
    Tensor col = values({6, 3}, dt, 8);
    expect_close(dot(col.to(kCuda).select(1, 1), v2.to(kCuda)), dot(col.select(1, 1), v2), tol,
                 "dot strided " + name(dt));
    if (isComplexType(dt))
      expect_close(vdot(vec.to(kCuda), v2.to(kCuda)), vdot(vec, v2), tol, "vdot " + name(dt));
    // linear: 2-D (addmm), contiguous 3-D (folded) and strided 3-D (matmul) inputs.
    Tensor w = values({3, 6}, dt, 9), x3 = values({2, 4, 6}, dt, 10);
    expect_close(linear(m1.to(kCuda), w.to(kCuda), bias.to(kCuda)), linear(m1, w, bias), tol,
                 "linear 2d " + name(dt));
    expect_close(linear(x3.to(kCuda), w.to(kCuda), bias.to(kCuda)), linear(x3, w, bias), tol,
                 "linear 3d " + name(dt));
    expect_close(linear(x3.to(kCuda).transpose(0, 1), w.to(kCuda)), linear(x3.transpose(0, 1), w),
                 tol, "linear strided " + name(dt));
  }
}

TEST(CudaBlas, ZeroSizes) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kHalf, kComplexDouble}) {
    // k == 0: zeros, or beta * C (NaN in C cleared by beta == 0).
    Tensor a = empty({3, 0}, TensorOptions().dtype(dt).device(kCuda));
    Tensor b = empty({0, 4}, TensorOptions().dtype(dt).device(kCuda));
    Tensor r = mm(a, b);
    expect_close(r, zeros({3, 4}, TensorOptions().dtype(dt)), 0, "mm k=0 " + name(dt));
    Tensor self = values({3, 4}, dt, 1);
    expect_close(addmm(self.to(kCuda), a, b, 2, 3), self.mul(2), 0, "addmm k=0 " + name(dt));
    Tensor nan_self = full({3, 4}, NAN, TensorOptions().dtype(dt));
    expect_close(addmm(nan_self.to(kCuda), a, b, 0, 1), zeros({3, 4}, TensorOptions().dtype(dt)), 0,
                 "addmm k=0 beta=0 " + name(dt));
    // m == 0 or an empty batch: empty results of the right shape.
    Tensor e =
        mm(empty({0, 5}, TensorOptions().dtype(dt).device(kCuda)), values({5, 2}, dt).to(kCuda));
    EXPECT_EQ(e.sizes(), (DimVector{0, 2}));
    Tensor eb = bmm(empty({0, 2, 3}, TensorOptions().dtype(dt).device(kCuda)),
                    empty({0, 3, 4}, TensorOptions().dtype(dt).device(kCuda)));
    EXPECT_EQ(eb.sizes(), (DimVector{0, 2, 4}));
    EXPECT_TRUE(eb.is_cuda());
  }
}

TEST(CudaBlas, Tf32FollowsMatmulPrecision) {
  SKIP_WITHOUT_CUDA();
  PrecisionGuard restore;
  // Operands exact in float32, compared with the float64 product on the scale |a|·|b|: float32
  // accumulation of k = 512 terms errs by at most ~k * 2^-24 = 3e-5 of it (worst case), TF32's
  // 10-bit operand mantissas by up to ~2^-10 of it.
  Tensor a = values({64, 512}, kDouble, 1, 0.0371).to(kFloat).to(kDouble);
  Tensor b = values({512, 48}, kDouble, 2, 0.0293).to(kFloat).to(kDouble);
  Tensor ref = mm(a, b);
  const double scale = mm(a.abs(), b.abs()).max().item().toDouble();
  Tensor af = a.to(kFloat).to(kCuda), bf = b.to(kFloat).to(kCuda);
  auto rel_err = [&](const Tensor& r) {
    return host(r).to(kDouble).sub(ref).abs().max().item().toDouble() / scale;
  };
  set_float32_matmul_precision("highest");
  EXPECT_LT(rel_err(mm(af, bf)), 3e-5);
  set_float32_matmul_precision("high");
  EXPECT_LT(rel_err(mm(af, bf)), 2.5e-3);
  set_float32_matmul_precision("medium");
  EXPECT_LT(rel_err(mm(af, bf)), 2.5e-3);
  // Back to "highest": a handle left in TF32 mode must not leak into the next product.
  set_float32_matmul_precision("highest");
  EXPECT_LT(rel_err(mm(af, bf)), 3e-5);
}

TEST(CudaBlas, GradientsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kDouble, kComplexDouble}) {
    Tensor a = values({2, 3, 4}, dt, 1), b = values({4, 5}, dt, 2), bias = values({5}, dt, 3);
    Tensor ga[2], gb[2], gbias[2];
    for (int dev = 0; dev < 2; ++dev) {
      Device d = dev ? kCuda : Device(kCPU);
      Tensor x = a.to(d).detach().requires_grad_(), y = b.to(d).detach().requires_grad_();
      Tensor z = bias.to(d).detach().requires_grad_();
      Tensor out = matmul(x, y).add(z);
      Tensor loss = out.mul(out.conj()).real().sum().add(linear(x, y.t(), z).abs().sum());
      loss.backward();
      ga[dev] = x.grad();
      gb[dev] = y.grad();
      gbias[dev] = z.grad();
    }
    EXPECT_TRUE(ga[1].is_cuda());
    expect_close(ga[1], ga[0], 1e-10, "grad a " + name(dt));
    expect_close(gb[1], gb[0], 1e-10, "grad b " + name(dt));
    expect_close(gbias[1], gbias[0], 1e-10, "grad bias " + name(dt));
  }
}

TEST(CudaBlas, Trace) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kByte, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble, kComplexFloat}) {
    Tensor x = values({5, 4}, dt, 1);
    Tensor r = trace(x.to(kCuda));
    EXPECT_TRUE(r.is_cuda()) << name(dt);
    expect_close(r, trace(x), 1e-6, "trace " + name(dt));
    expect_close(trace(x.to(kCuda).t()), trace(x.t()), 1e-6, "trace t " + name(dt));
  }
  // Empty and expanded inputs.
  expect_close(trace(empty({0, 3}, TensorOptions().device(kCuda))), trace(empty({0, 3})), 0,
               "trace empty");
  Tensor one = full({1, 1}, 2.5).to(kCuda);
  expect_close(trace(one.expand({3, 3})), trace(full({1, 1}, 2.5).expand({3, 3})), 0,
               "trace expanded");
}

TEST(CudaBlas, Errors) {
  SKIP_WITHOUT_CUDA();
  // Integer products have no CUDA kernel (as PyTorch's addmm_cuda).
  Tensor i = ones({2, 2}, TensorOptions().dtype(kLong).device(kCuda));
  EXPECT_THROW(mm(i, i), NotImplementedError);
  EXPECT_THROW(matmul(i, i), NotImplementedError);
  // Operands on different devices.
  Tensor c = ones({2, 2}, TensorOptions().device(kCuda)), h = ones({2, 2});
  EXPECT_THROW(mm(c, h), Error);
  EXPECT_THROW(mm(h, c), Error);
  EXPECT_THROW(addmm(h, c, c), Error);
  // Shape errors as on the CPU.
  EXPECT_THROW(mm(c, ones({3, 2}, TensorOptions().device(kCuda))), Error);
}

// ---- linalg ----

/// A well-conditioned Hermitian positive-definite batch: M Mᴴ + n I.
Tensor spd(IntArrayRef batch, int64_t n, ScalarType dt, int seed = 0) {
  DimVector s;
  s.assign(batch);
  s.push_back(n);
  s.push_back(n);
  Tensor m = values(s, dt, seed, 0.11);
  return matmul(m, m.mT().conj()).add(eye(n, TensorOptions().dtype(dt)).mul(double(n)));
}

/// A well-conditioned general batch: values + n I.
Tensor general(IntArrayRef batch, int64_t n, ScalarType dt, int seed = 0) {
  DimVector s;
  s.assign(batch);
  s.push_back(n);
  s.push_back(n);
  return values(s, dt, seed, 0.13).add(eye(n, TensorOptions().dtype(dt)).mul(2.0));
}

double ltol(ScalarType dt) { return (dt == kFloat || dt == kComplexFloat) ? 1e-4 : 1e-10; }

/// The message of the exception `f` throws as type E ("" when it does not).
template <class E, class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST(CudaLinalg, Cholesky) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kLinalgTypes) {
    Tensor A = spd({3}, 5, dt);
    for (bool upper : {false, true}) {
      expect_close(linalg::cholesky(A.to(kCuda), upper), linalg::cholesky(A, upper), ltol(dt),
                   "cholesky " + name(dt));
    }
    // Not positive-definite: the same LinAlgError and message as on the CPU.
    Tensor bad = A.clone();
    bad.select(0, 1).select(0, 2).select(0, 2).fill_(-100.0);
    const std::string cpu = message_of<LinAlgError>([&] { linalg::cholesky(bad); });
    ASSERT_FALSE(cpu.empty());
    EXPECT_EQ(message_of<LinAlgError>([&] { linalg::cholesky(bad.to(kCuda)); }), cpu);
    auto [L, info] = linalg::cholesky_ex(bad.to(kCuda));
    EXPECT_TRUE(info.is_cuda());
    EXPECT_TRUE(host(info).equal(std::get<1>(linalg::cholesky_ex(bad))));
  }
}

TEST(CudaLinalg, LuFactorSolveInv) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kLinalgTypes) {
    const double tol = ltol(dt);
    Tensor A = general({2}, 6, dt, 1), B = values({2, 6, 3}, dt, 2);
    auto [LU, piv] = linalg::lu_factor(A.to(kCuda));
    auto [LUc, pivc] = linalg::lu_factor(A);
    expect_close(LU, LUc, tol, "lu_factor LU " + name(dt));
    EXPECT_TRUE(host(piv).equal(pivc)) << name(dt);
    expect_close(linalg::solve(A.to(kCuda), B.to(kCuda)), linalg::solve(A, B), tol,
                 "solve " + name(dt));
    Tensor Bt = values({2, 3, 6}, dt, 3);
    expect_close(linalg::solve(A.to(kCuda), Bt.to(kCuda), false), linalg::solve(A, Bt, false), tol,
                 "solve right " + name(dt));
    // A batch of vectors; a broadcast A.
    Tensor v = values({2, 6}, dt, 4);
    expect_close(linalg::solve(A.to(kCuda), v.to(kCuda)), linalg::solve(A, v), tol,
                 "solve vector " + name(dt));
    expect_close(linalg::solve(A.select(0, 0).to(kCuda), B.to(kCuda)),
                 linalg::solve(A.select(0, 0), B), tol, "solve broadcast " + name(dt));
    expect_close(linalg::inv(A.to(kCuda)), linalg::inv(A), tol, "inv " + name(dt));
    expect_close(linalg::lu_solve(LU, piv, B.to(kCuda)), linalg::lu_solve(LUc, pivc, B), tol,
                 "lu_solve " + name(dt));
    expect_close(linalg::lu_solve(LU, piv, B.to(kCuda), true, true),
                 linalg::lu_solve(LUc, pivc, B, true, true), tol, "lu_solve adjoint " + name(dt));
    expect_close(linalg::lu_solve(LU, piv, Bt.to(kCuda), false),
                 linalg::lu_solve(LUc, pivc, Bt, false), tol, "lu_solve right " + name(dt));
    // Singular: LinAlgError with the CPU's message; the _ex forms report infos.
    Tensor S = A.clone();
    S.select(0, 1).select(-1, 3).zero_();
    S.select(0, 1).select(-2, 3).zero_();
    const std::string cpu_inv = message_of<LinAlgError>([&] { linalg::inv(S); });
    ASSERT_FALSE(cpu_inv.empty());
    EXPECT_EQ(message_of<LinAlgError>([&] { linalg::inv(S.to(kCuda)); }), cpu_inv);
    const std::string cpu_solve = message_of<LinAlgError>([&] { linalg::solve(S, B); });
    ASSERT_FALSE(cpu_solve.empty());
    EXPECT_EQ(message_of<LinAlgError>([&] { linalg::solve(S.to(kCuda), B.to(kCuda)); }), cpu_solve);
    EXPECT_TRUE(
        host(std::get<1>(linalg::inv_ex(S.to(kCuda)))).equal(std::get<1>(linalg::inv_ex(S))));
    EXPECT_TRUE(host(std::get<2>(linalg::lu_factor_ex(S.to(kCuda))))
                    .equal(std::get<2>(linalg::lu_factor_ex(S))));
    // Pivots out of range are rejected before anything is solved.
    Tensor badpiv = piv.clone().fill_(0);
    EXPECT_THROW(linalg::lu_solve(LU, badpiv, B.to(kCuda)), Error);
  }
}

TEST(CudaLinalg, TriangularSolves) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kLinalgTypes) {
    const double tol = ltol(dt);
    Tensor A = general({2}, 5, dt, 1), B = values({2, 5, 3}, dt, 2), Bt = values({2, 3, 5}, dt, 3);
    for (bool upper : {false, true}) {
      for (bool unit : {false, true}) {
        const std::string what = name(dt) + (upper ? " upper" : " lower") + (unit ? " unit" : "");
        expect_close(linalg::solve_triangular(A.to(kCuda), B.to(kCuda), upper, true, unit),
                     linalg::solve_triangular(A, B, upper, true, unit), tol, "left " + what);
        expect_close(linalg::solve_triangular(A.to(kCuda), Bt.to(kCuda), upper, false, unit),
                     linalg::solve_triangular(A, Bt, upper, false, unit), tol, "right " + what);
        auto [X, Ac] = triangular_solve(B.to(kCuda), A.to(kCuda), upper, true, unit);
        auto [Xc, Acc] = triangular_solve(B, A, upper, true, unit);
        expect_close(X, Xc, tol, "triangular_solve transpose " + what);
        expect_close(Ac, Acc, 0, "triangular_solve clone " + what);
      }
    }
  }
}

TEST(CudaLinalg, DetSlogdetLogdet) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kLinalgTypes) {
    const double tol = ltol(dt);
    Tensor A = general({3}, 4, dt, 1);
    expect_close(linalg::det(A.to(kCuda)), linalg::det(A), tol, "det " + name(dt));
    auto [s, l] = linalg::slogdet(A.to(kCuda));
    auto [sc, lc] = linalg::slogdet(A);
    expect_close(s, sc, tol, "slogdet sign " + name(dt));
    expect_close(l, lc, tol, "slogdet logabs " + name(dt));
    // A singular matrix: det 0, sign 0, log|det| -inf.
    Tensor S = A.clone();
    S.select(0, 0).select(-1, 1).zero_();
    expect_close(linalg::det(S.to(kCuda)), linalg::det(S), tol, "det singular " + name(dt));
    auto [ss, ls] = linalg::slogdet(S.to(kCuda));
    // The singular matrix's sign is exactly 0; the others' (unit complex numbers for complex
    // dtypes) match within rounding.
    const Tensor ssc = std::get<0>(linalg::slogdet(S));
    EXPECT_TRUE(host(ss).select(0, 0).equal(ssc.select(0, 0))) << name(dt);
    EXPECT_EQ(ssc.select(0, 0).abs().item().toDouble(), 0.0) << name(dt);
    expect_close(ss, ssc, tol, "slogdet sign singular " + name(dt));
    EXPECT_TRUE(std::isinf(host(ls).select(0, 0).item().toDouble())) << name(dt);
    // 0×0 matrices: det 1.
    Tensor E = empty({2, 0, 0}, TensorOptions().dtype(dt).device(kCuda));
    expect_close(linalg::det(E), ones({2}, TensorOptions().dtype(dt)), 0, "det 0x0 " + name(dt));
    Tensor P = spd({2}, 4, dt, 2);  // positive determinant: a finite logdet
    expect_close(logdet(P.to(kCuda)), logdet(P), tol, "logdet " + name(dt));
  }
}

TEST(CudaLinalg, Eigh) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kLinalgTypes) {
    const double tol = ltol(dt);
    Tensor A = spd({2}, 5, dt, 3);
    for (const char* uplo : {"L", "U"}) {
      auto [w, V] = linalg::eigh(A.to(kCuda), uplo);
      auto [wc, Vc] = linalg::eigh(A, uplo);
      expect_close(w, wc, tol, std::string("eigh values ") + uplo + " " + name(dt));
      // Eigenvectors are unique up to a phase: check V diag(w) Vᴴ = A instead.
      Tensor R = matmul(host(V).mul(host(w).to(dt).unsqueeze(-2)), host(V).mT().conj());
      expect_close(R, A, 10 * tol, std::string("eigh reconstruction ") + uplo + " " + name(dt));
      expect_close(linalg::eigvalsh(A.to(kCuda), uplo), wc, tol, "eigvalsh " + name(dt));
    }
  }
}

TEST(CudaLinalg, Qr) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kLinalgTypes) {
    const double tol = ltol(dt);
    for (auto shape : {DimVector{2, 6, 4}, DimVector{2, 4, 6}}) {
      // values() alone has rank-deficient leading blocks (entries nearly linear in the index),
      // where R is not unique; the added diagonal makes the leading k x k block regular.
      Tensor A =
          values(shape, dt, 1, 0.21) + eye(shape[1], shape[2], TensorOptions().dtype(dt)) * 3.0;
      for (const char* mode : {"reduced", "complete"}) {
        const std::string what = std::string(mode) + " " + std::to_string(shape[1]) + "x" +
                                 std::to_string(shape[2]) + " " + name(dt);
        auto [Q, R] = linalg::qr(A.to(kCuda), mode);
        auto [Qc, Rc] = linalg::qr(A, mode);
        ASSERT_EQ(Q.sizes(), Qc.sizes()) << what;
        ASSERT_EQ(R.sizes(), Rc.sizes()) << what;
        // Householder signs may differ by a phase per column: compare Q R = A, Qᴴ Q = I,
        // R upper triangular and |R| with the CPU's.
        Tensor q = host(Q), r = host(R);
        expect_close(matmul(q, r), A, 10 * tol, "qr reconstruction " + what);
        expect_close(matmul(q.mT().conj(), q),
                     eye(q.size(-1), TensorOptions().dtype(dt)).expand({2, q.size(-1), q.size(-1)}),
                     10 * tol, "qr orthonormal " + what);
        expect_close(tril(r, -1), zeros_like(r), 0, "qr triangular " + what);
        expect_close(r.abs(), Rc.abs(), 10 * tol, "qr |R| " + what);
      }
      Tensor R_only = std::get<1>(linalg::qr(A.to(kCuda), "r"));
      expect_close(R_only.abs(), std::get<1>(linalg::qr(A, "r")).abs(), 10 * tol, "qr r");
    }
  }
}

TEST(CudaLinalg, Svd) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kLinalgTypes) {
    const double tol = ltol(dt);
    for (auto shape : {DimVector{2, 6, 4}, DimVector{2, 4, 6}}) {
      Tensor A = values(shape, dt, 2, 0.19);
      const int64_t k = std::min(shape[1], shape[2]);
      Tensor Sc = linalg::svdvals(A);
      expect_close(linalg::svdvals(A.to(kCuda)), Sc, tol, "svdvals " + name(dt));
      for (bool full : {false, true}) {
        const std::string what = std::string(full ? "full " : "reduced ") +
                                 std::to_string(shape[1]) + "x" + std::to_string(shape[2]) + " " +
                                 name(dt);
        auto [U, S, Vh] = linalg::svd(A.to(kCuda), full);
        auto [Uc, Sc2, Vhc] = linalg::svd(A, full);
        ASSERT_EQ(U.sizes(), Uc.sizes()) << what;
        ASSERT_EQ(Vh.sizes(), Vhc.sizes()) << what;
        expect_close(S, Sc2, tol, "svd S " + what);
        // Singular vectors are unique up to phases: compare U S Vh = A and orthonormality.
        Tensor u = host(U).narrow(-1, 0, k), vh = host(Vh).narrow(-2, 0, k);
        Tensor rec = matmul(u.mul(host(S).to(dt).unsqueeze(-2)), vh);
        expect_close(rec, A, 10 * tol, "svd reconstruction " + what);
        Tensor uu = host(U);
        expect_close(
            matmul(uu.mT().conj(), uu),
            eye(uu.size(-1), TensorOptions().dtype(dt)).expand({2, uu.size(-1), uu.size(-1)}),
            10 * tol, "svd U orthonormal " + what);
        Tensor vv = host(Vh);
        expect_close(
            matmul(vv, vv.mT().conj()),
            eye(vv.size(-2), TensorOptions().dtype(dt)).expand({2, vv.size(-2), vv.size(-2)}),
            10 * tol, "svd Vh orthonormal " + what);
      }
    }
    // Non-finite input: LinAlgError with the CPU's message.
    Tensor bad = values({2, 3, 3}, dt, 1);
    bad.select(0, 1).select(0, 0).select(0, 0).fill_(NAN);
    const std::string cpu = message_of<LinAlgError>([&] { linalg::svd(bad); });
    ASSERT_FALSE(cpu.empty());
    EXPECT_EQ(message_of<LinAlgError>([&] { linalg::svd(bad.to(kCuda)); }), cpu);
  }
}

TEST(CudaLinalg, TrilTriu) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kBool, kByte, kHalf, kFloat, kLong, kComplexDouble}) {
    Tensor x = values({2, 4, 5}, dt, 1);
    for (int64_t k : {-2, 0, 1, 6}) {
      expect_close(tril(x.to(kCuda), k), tril(x, k), 0, "tril " + name(dt));
      expect_close(triu(x.to(kCuda), k), triu(x, k), 0, "triu " + name(dt));
      // A strided (transposed) input.
      expect_close(tril(x.to(kCuda).mT(), k), tril(x.mT(), k), 0, "tril mT " + name(dt));
    }
  }
}

TEST(CudaLinalg, GradientsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  Tensor A = spd({2}, 4, kDouble, 1), B = values({2, 4, 2}, kDouble, 2);
  Tensor g[2][2];
  for (int dev = 0; dev < 2; ++dev) {
    Device d = dev ? kCuda : Device(kCPU);
    Tensor a = A.to(d).detach().requires_grad_(), b = B.to(d).detach().requires_grad_();
    Tensor loss = linalg::cholesky(a).sum().add(linalg::solve(a, b).pow(2).sum());
    loss = loss.add(linalg::inv(a).sum()).add(linalg::det(a).sum());
    loss.backward();
    g[dev][0] = a.grad();
    g[dev][1] = b.grad();
  }
  expect_close(g[1][0], g[0][0], 1e-9, "grad A");
  expect_close(g[1][1], g[0][1], 1e-9, "grad B");
}

}  // namespace
