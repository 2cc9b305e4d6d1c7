// CUDA reductions, scans, softmax, norms and gradient scaling against the CPU results of the same
// ops (every supported dtype; dims lists, keepdim, strided, zero-size, 0-dim, NaN and long-row
// inputs; gradients). The launch planning of the reductions (reduce_plan.h) is plain C++ and is
// tested here on the host, including a host walk of the kernel's index mapping. Without a GPU
// every device test skips.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "kernels/cuda/reduce_plan.h"

using namespace ember;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"

// ---- launch planning (runs on the host) ----

// Visits every (output, reduced index) pair the kernel's threads would, as the kernel maps them,
// and checks each input element of the reduction is read exactly once for its own output.
void walk_plan(const std::vector<int64_t>& sizes, uint64_t mask) {
  // Contiguous strides.
  std::vector<int64_t> strides(sizes.size());
  int64_t st = 1, numel = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = st;
    st *= sizes[i];
    numel *= sizes[i];
  }
  cuda::ReduceGeometry g;
  ASSERT_TRUE(cuda::make_reduce_geometry(sizes, strides, mask, g));
  const cuda::ReduceLaunch l = cuda::plan_reduce(g);
  // Launch limits and shape of the plan.
  EXPECT_LE(l.block_x * l.block_y, cuda::kReduceThreads);
  EXPECT_EQ(l.lanes() & (l.lanes() - 1), 0) << "lanes must be a power of two";
  EXPECT_GE(l.splits, 1);
  EXPECT_LE(l.splits, cuda::kReduceMaxSplits);
  EXPECT_LE(l.splits, 65535);
  EXPECT_GE(l.grid_x * l.outputs_per_block(), g.num_out);
  if (g.num_red > 0) {
    EXPECT_GE(l.splits * l.split_len, g.num_red);
    EXPECT_LT((l.splits - 1) * l.split_len, g.num_red);
  }
  auto offset = [](int64_t i, int n, const int64_t* size, const int64_t* stride) {
    int64_t off = 0;
    for (int d = n - 1; d >= 0; --d) {
      off += (i % size[d]) * stride[d];
      i /= size[d];
    }
    return off;
  };
  std::vector<int> seen(size_t(numel), 0);
  std::vector<int64_t> owner(size_t(numel), -1);
  for (int64_t bx = 0; bx < l.grid_x; ++bx)
    for (int64_t by = 0; by < l.splits; ++by)
      for (int ty = 0; ty < l.block_y; ++ty)
        for (int tx = 0; tx < l.block_x; ++tx) {
          const int64_t o = l.row ? bx * l.block_y + ty : bx * l.block_x + tx;
          const int lane = l.row ? tx : ty;
          if (o >= g.num_out) continue;
          const int64_t base = offset(o, g.nk, g.ksize, g.kstride);
          const int64_t r0 = by * l.split_len, r1 = std::min(g.num_red, r0 + l.split_len);
          for (int64_t r = r0 + lane; r < r1; r += l.lanes()) {
            const int64_t k = base + offset(r, g.nr, g.rsize, g.rstride);
            ASSERT_GE(k, 0);
            ASSERT_LT(k, numel);
            ++seen[size_t(k)];
            owner[size_t(k)] = o;
          }
        }
  for (int64_t k = 0; k < numel; ++k) ASSERT_EQ(seen[size_t(k)], 1) << "element " << k;
  // Outputs are the kept positions in memory order: the output of element k is its index over
  // the kept dims (row-major, as the input is contiguous).
  for (int64_t k = 0; k < numel; ++k) {
    int64_t rem = k, o = 0, scale = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      const int64_t idx = rem % sizes[d];
      rem /= sizes[d];
      if (!((mask >> d) & 1)) {
        o += idx * scale;
        scale *= sizes[d];
      }
    }
    ASSERT_EQ(owner[size_t(k)], o) << "element " << k;
  }
}

TEST(CudaReducePlan, EveryElementOnceForItsOutput) {
  walk_plan({1000}, 1);              // one long row
  walk_plan({100000}, 1);            // split into pieces
  walk_plan({7, 300}, 0b10);         // rows
  walk_plan({300, 7}, 0b01);         // columns (kept dim innermost)
  walk_plan({5000, 3}, 0b01);        // long columns, split
  walk_plan({4, 5, 6}, 0b101);       // alternating kept / reduced
  walk_plan({3, 1, 40, 2}, 0b0110);  // size-1 dim
  walk_plan({2, 3, 4, 5}, 0b1111);   // everything
  walk_plan({2, 3, 4, 5}, 0);        // nothing reduced
  walk_plan({33, 65}, 0b01);
  walk_plan({1000, 3}, 0b10);      // short rows: fewer lanes
  walk_plan({3, 1000, 1}, 0b100);  // a thread per output
}

TEST(CudaReducePlan, GeometryMergesAndOrders) {
  cuda::ReduceGeometry g;
  // (4, 5, 6) contiguous, reduce dims 1 and 2: one reduced group of 30, one kept group of 4.
  ASSERT_TRUE(cuda::make_reduce_geometry({4, 5, 6}, {30, 6, 1}, 0b110, g));
  EXPECT_EQ(g.nk, 1);
  EXPECT_EQ(g.nr, 1);
  EXPECT_EQ(g.rsize[0], 30);
  EXPECT_EQ(g.rstride[0], 1);
  EXPECT_EQ(g.num_out, 4);
  EXPECT_EQ(g.num_red, 30);
  EXPECT_TRUE(cuda::plan_reduce(g).row);
  // Transposed (6, 4) view of a (4, 6) tensor reduced over dim 1: the kept dim is innermost in
  // memory, so the plan reads columns.
  ASSERT_TRUE(cuda::make_reduce_geometry({6, 4}, {1, 6}, 0b10, g));
  EXPECT_EQ(g.ksize[0], 6);
  EXPECT_EQ(g.kstride[0], 1);
  EXPECT_FALSE(cuda::plan_reduce(g).row);
  // An empty reduction: one output per kept position, no elements.
  ASSERT_TRUE(cuda::make_reduce_geometry({3, 0}, {1, 1}, 0b10, g));
  EXPECT_EQ(g.num_out, 3);
  EXPECT_EQ(g.num_red, 0);
  const cuda::ReduceLaunch l = cuda::plan_reduce(g);
  EXPECT_EQ(l.splits, 1);
  EXPECT_EQ(l.split_len, 0);
  // 0-dim: one output of one element.
  ASSERT_TRUE(cuda::make_reduce_geometry({}, {}, 0, g));
  EXPECT_EQ(g.num_out, 1);
  EXPECT_EQ(g.num_red, 1);
  // Too many alternating groups.
  std::vector<int64_t> sizes(26, 2), strides(26);
  for (int i = 25, s = 1; i >= 0; --i, s *= 2) strides[size_t(i)] = s;
  EXPECT_FALSE(cuda::make_reduce_geometry(sizes, strides, 0x2AAAAAA, g));
}

TEST(CudaReducePlan, SplitsOnlyWhenFewOutputs) {
  cuda::ReduceGeometry g;
  ASSERT_TRUE(cuda::make_reduce_geometry({1 << 22}, {1}, 1, g));
  EXPECT_GT(cuda::plan_reduce(g).splits, 1);
  ASSERT_TRUE(cuda::make_reduce_geometry({100000, 64}, {64, 1}, 0b10, g));
  EXPECT_EQ(cuda::plan_reduce(g).splits, 1);
  ASSERT_TRUE(cuda::make_reduce_geometry({10}, {1}, 1, g));
  EXPECT_EQ(cuda::plan_reduce(g).splits, 1);
  // Rows of 3 elements: 4 lanes each, 128 rows per block.
  ASSERT_TRUE(cuda::make_reduce_geometry({1000, 3}, {3, 1}, 0b10, g));
  const cuda::ReduceLaunch l = cuda::plan_reduce(g);
  EXPECT_TRUE(l.row);
  EXPECT_EQ(l.block_x, 4);
  EXPECT_EQ(l.block_y, 128);
}

// ---- device tests ----

const Device kCuda("cuda");

const std::vector<ScalarType> kAllTypes = {kBool,  kByte,   kChar,         kShort,
                                           kInt,   kLong,   kHalf,         kBFloat16,
                                           kFloat, kDouble, kComplexFloat, kComplexDouble};
const std::vector<ScalarType> kRealTypes = {kBool, kByte, kChar,     kShort, kInt,
                                            kLong, kHalf, kBFloat16, kFloat, kDouble};
const std::vector<ScalarType> kFloatTypes = {kHalf, kBFloat16, kFloat, kDouble};

// A CPU tensor of `sizes` with varied values (ties, negatives, fractions, complex parts).
Tensor make_values(IntArrayRef sizes, ScalarType dt, double scale = 0.37) {
  Tensor t = empty(sizes, TensorOptions().dtype(kComplexDouble));
  auto* p = t.data_ptr<complex<double>>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = complex<double>((double(i % 23) - 11) * scale, double(i % 7) - 3);
  return t.to(dt);
}

Tensor host(const Tensor& t) { return t.to(Device(kCPU)).contiguous(); }

// `x` (a CPU tensor) with all elements but every third one (in logical order) set to zero.
Tensor sparse(const Tensor& x) {
  Tensor m = empty(x.sizes(), TensorOptions(kDouble));
  auto* p = m.data_ptr<double>();
  for (int64_t i = 0; i < m.numel(); ++i) p[i] = i % 3 == 0 ? 1.0 : 0.0;
  return (x * m.to(x.dtype())).to(x.dtype());
}

double tol_of(ScalarType dt) {
  switch (dt) {
    case kHalf:
      return 1e-2;
    case kBFloat16:
      return 4e-2;
    case kFloat:
    case kComplexFloat:
      return 1e-4;
    case kDouble:
    case kComplexDouble:
      return 1e-10;
    default:
      return 0;
  }
}

// Same dtype and shape, values within |a - b| <= tol * (1 + |b|), NaN where the CPU has NaN,
// infinities equal.
void expect_match(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_TRUE(got.is_cuda()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  Tensor a = host(got).to(kComplexDouble), b = want.contiguous().to(kComplexDouble);
  const auto* pa = a.data_ptr<complex<double>>();
  const auto* pb = b.data_ptr<complex<double>>();
  int bad = 0;
  for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
    const std::complex<double> x(pa[i].real(), pa[i].imag()), y(pb[i].real(), pb[i].imag());
    const bool nx = std::isnan(x.real()) || std::isnan(x.imag());
    const bool ny = std::isnan(y.real()) || std::isnan(y.imag());
    bool ok;
    if (nx || ny)
      ok = nx == ny;
    else if (std::isinf(y.real()) || std::isinf(y.imag()))
      ok = x == y;
    else
      ok = std::abs(x - y) <= tol * (1 + std::abs(y));
    if (!ok) {
      ADD_FAILURE() << what << ": element " << i << " is " << x << ", expected " << y;
      ++bad;
    }
  }
}

// Inputs of one dtype: contiguous, transposed (dense, permuted), sliced (not dense).
struct Input {
  std::string name;
  Tensor cpu;
};
std::vector<Input> inputs_of(ScalarType dt) {
  std::vector<Input> in;
  in.push_back({"contiguous (3, 4, 5)", make_values({3, 4, 5}, dt)});
  in.push_back({"transposed (5, 4, 3)", make_values({3, 4, 5}, dt).transpose(0, 2)});
  in.push_back({"sliced (3, 4, 5)", make_values({3, 4, 10}, dt).slice(2, 0, 10, 2)});
  in.push_back({"0-dim", make_values({}, dt)});
  in.push_back({"zero-size (2, 0, 3)", make_values({2, 0, 3}, dt)});
  return in;
}

// Dim lists to reduce an input of `nd` dims over (empty = all).
std::vector<std::vector<int64_t>> dims_of(int64_t nd) {
  if (nd == 0) return {{}};
  return {{}, {0}, {-1}, {0, 2}, {1}};
}

std::string label(const std::string& op, ScalarType dt, const Input& in,
                  const std::vector<int64_t>& dims, bool keepdim) {
  std::string s = op + " " + std::string(dtype_name(dt)) + " " + in.name + " dims {";
  for (int64_t d : dims) s += std::to_string(d) + ",";
  return s + "} keepdim " + (keepdim ? "1" : "0");
}

// Runs f on the CPU input and on its CUDA copy (same strides: the copy keeps the layout when
// it can), comparing every result.
void compare(const std::string& what, const Tensor& x, double tol,
             const std::function<Tensor(const Tensor&)>& f) {
  Tensor want = f(x);
  Tensor xc = x.to(kCuda);
  Tensor got = f(xc);
  expect_match(got, want, tol, what);
}

TEST(CudaReduce, SumMeanProdNansum) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kAllTypes)
    for (const Input& in : inputs_of(dt))
      for (const auto& dims : dims_of(in.cpu.dim()))
        for (bool keepdim : {false, true}) {
          if (in.cpu.dim() == 3 && dims.size() == 2 && in.cpu.size(1) == 0) continue;
          const double tol = tol_of(dt) * 4;
          compare(label("sum", dt, in, dims, keepdim), in.cpu, tol,
                  [&](const Tensor& t) { return sum(t, IntArrayRef(dims), keepdim); });
          if (isFloatingType(dt) || isComplexType(dt))
            compare(label("mean", dt, in, dims, keepdim), in.cpu, tol,
                    [&](const Tensor& t) { return mean(t, IntArrayRef(dims), keepdim); });
          if (isFloatingType(dt))
            compare(label("nansum", dt, in, dims, keepdim), in.cpu, tol,
                    [&](const Tensor& t) { return nansum(t, IntArrayRef(dims), keepdim); });
          if (dims.size() == 1)
            compare(label("prod", dt, in, dims, keepdim), in.cpu, tol,
                    [&](const Tensor& t) { return prod(t, dims[0], keepdim); });
        }
  // prod of everything, and sum with dtype=.
  for (ScalarType dt : kAllTypes) {
    Tensor x = make_values({4, 3}, dt, 0.11);
    compare("prod all " + std::string(dtype_name(dt)), x, tol_of(dt) * 4,
            [](const Tensor& t) { return prod(t); });
  }
  compare("sum int32 dtype=int32", make_values({6, 7}, kInt), 0,
          [](const Tensor& t) { return sum(t, IntArrayRef{1}, false, kInt); });
  compare("mean int dtype=float", make_values({6, 7}, kInt), 1e-5,
          [](const Tensor& t) { return mean(t, IntArrayRef{0}, false, kFloat); });
}

TEST(CudaReduce, ExtremaAndIndices) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kRealTypes)
    for (const Input& in : inputs_of(dt)) {
      if (in.cpu.numel() == 0) continue;  // errors, tested below
      for (const auto& dims : dims_of(in.cpu.dim()))
        for (bool keepdim : {false, true}) {
          compare(label("amax", dt, in, dims, keepdim), in.cpu, 0,
                  [&](const Tensor& t) { return amax(t, IntArrayRef(dims), keepdim); });
          compare(label("amin", dt, in, dims, keepdim), in.cpu, 0,
                  [&](const Tensor& t) { return amin(t, IntArrayRef(dims), keepdim); });
          if (dims.size() != 1) continue;
          // Ties are frequent in these values: the indices must be the first ones.
          for (int which = 0; which < 2; ++which) {
            auto [v, i] = which ? max(in.cpu, dims[0], keepdim) : min(in.cpu, dims[0], keepdim);
            Tensor xc = in.cpu.to(kCuda);
            auto [vc, ic] = which ? max(xc, dims[0], keepdim) : min(xc, dims[0], keepdim);
            expect_match(vc, v, 0,
                         label(which ? "max.values" : "min.values", dt, in, dims, keepdim));
            expect_match(ic, i, 0,
                         label(which ? "max.indices" : "min.indices", dt, in, dims, keepdim));
          }
          if (dt == kBool) continue;
          compare(label("argmax", dt, in, dims, keepdim), in.cpu, 0,
                  [&](const Tensor& t) { return argmax(t, dims[0], keepdim); });
          compare(label("argmin", dt, in, dims, keepdim), in.cpu, 0,
                  [&](const Tensor& t) { return argmin(t, dims[0], keepdim); });
        }
      if (dt != kBool) {
        compare(label("argmax flat", dt, in, {}, false), in.cpu, 0,
                [](const Tensor& t) { return argmax(t); });
        compare(label("max all", dt, in, {}, false), in.cpu, 0,
                [](const Tensor& t) { return max(t); });
      }
    }
  // NaN wins, and its first index is the result.
  for (ScalarType dt : kFloatTypes) {
    Tensor x = make_values({4, 9}, kDouble);
    x.select(0, 1).select(0, 3).fill_(NAN);
    x.select(0, 1).select(0, 6).fill_(NAN);
    x.select(0, 2).select(0, 0).fill_(NAN);
    x = x.to(dt);
    for (int64_t d : {0, 1}) {
      compare("amax NaN", x, 0, [&](const Tensor& t) { return amax(t, IntArrayRef{d}); });
      compare("argmax NaN", x, 0, [&](const Tensor& t) { return argmax(t, d); });
      compare("argmin NaN", x, 0, [&](const Tensor& t) { return argmin(t, d); });
    }
  }
}

TEST(CudaReduce, ExtremaErrorsMatchCpu) {
  SKIP_WITHOUT_CUDA();
  Tensor e = empty({2, 0}, TensorOptions(kFloat).device(kCuda));
  EXPECT_THROW(amax(e, IntArrayRef{1}), IndexError);
  EXPECT_THROW(max(e), Error);
  EXPECT_THROW(argmax(e, 1), IndexError);
  Tensor c = zeros({3}, TensorOptions(kComplexFloat).device(kCuda));
  EXPECT_THROW(amax(c), Error);
  // A zero-size kept dim with a non-empty reduced one gives an empty result.
  Tensor z = empty({0, 4}, TensorOptions(kFloat).device(kCuda));
  EXPECT_EQ(amax(z, IntArrayRef{1}).sizes(), IntArrayRef({0}));
}

TEST(CudaReduce, LogicalAndCount) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kAllTypes)
    for (const Input& in0 : inputs_of(dt)) {
      // Sparse non-zeros so that all / any both vary.
      Input in{in0.name, sparse(in0.cpu)};
      compare(label("all", dt, in, {}, false), in.cpu, 0, [](const Tensor& t) { return all(t); });
      compare(label("any", dt, in, {}, false), in.cpu, 0, [](const Tensor& t) { return any(t); });
      for (const auto& dims : dims_of(in.cpu.dim())) {
        compare(label("count_nonzero", dt, in, dims, false), in.cpu, 0,
                [&](const Tensor& t) { return count_nonzero(t, IntArrayRef(dims)); });
        if (dims.size() == 1)
          for (bool keepdim : {false, true}) {
            compare(label("all", dt, in, dims, keepdim), in.cpu, 0,
                    [&](const Tensor& t) { return all(t, dims[0], keepdim); });
            compare(label("any", dt, in, dims, keepdim), in.cpu, 0,
                    [&](const Tensor& t) { return any(t, dims[0], keepdim); });
          }
      }
    }
}

TEST(CudaReduce, VarStdWelford) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kHalf, kBFloat16, kFloat, kDouble, kComplexFloat, kComplexDouble})
    for (const Input& in : inputs_of(dt))
      for (const auto& dims : dims_of(in.cpu.dim()))
        for (int64_t corr : {0, 1, 2}) {
          const double tol = tol_of(dt) * 4;
          const std::optional<int64_t> c = corr;  // not the bool `unbiased` overload
          compare(label("var", dt, in, dims, true) + " correction " + std::to_string(corr), in.cpu,
                  tol, [&](const Tensor& t) {
                    return var(t, OptionalIntArrayRef(IntArrayRef(dims)), c, true);
                  });
          auto [v, m] = var_mean(in.cpu, OptionalIntArrayRef(IntArrayRef(dims)), c, false);
          auto [vc, mc] =
              var_mean(in.cpu.to(kCuda), OptionalIntArrayRef(IntArrayRef(dims)), c, false);
          expect_match(vc, v, tol, label("var_mean.var", dt, in, dims, false));
          expect_match(mc, m, tol, label("var_mean.mean", dt, in, dims, false));
        }
  // A large mean with a small spread: Welford keeps the variance accurate.
  Tensor x = make_values({3, 5000}, kDouble, 1e-3) + 1e6;
  compare("var offset", x.to(kFloat), 1e-3,
          [](const Tensor& t) { return var(t, OptionalIntArrayRef(IntArrayRef{1})); });
  compare("var offset f64", x, 1e-9,
          [](const Tensor& t) { return var(t, OptionalIntArrayRef(IntArrayRef{1})); });
}

TEST(CudaReduce, LongRowsAndColumns) {
  SKIP_WITHOUT_CUDA();
  // More elements than one block, split into pieces, in both reading directions.
  for (ScalarType dt : {kFloat, kDouble, kHalf, kLong, kComplexFloat}) {
    Tensor row = make_values({1 << 20}, dt, 0.01);
    compare("sum long row " + std::string(dtype_name(dt)), row, tol_of(dt) * 10,
            [](const Tensor& t) { return sum(t); });
    Tensor rows = make_values({3, 100003}, dt, 0.01);
    compare("sum rows " + std::string(dtype_name(dt)), rows, tol_of(dt) * 10,
            [](const Tensor& t) { return sum(t, IntArrayRef{1}); });
    Tensor cols = make_values({70001, 5}, dt, 0.01);
    compare("sum columns " + std::string(dtype_name(dt)), cols, tol_of(dt) * 10,
            [](const Tensor& t) { return sum(t, IntArrayRef{0}); });
    if (!isComplexType(dt)) {
      compare("argmax long row", row, 0, [](const Tensor& t) { return argmax(t); });
      compare("amin columns", cols, 0, [](const Tensor& t) { return amin(t, IntArrayRef{0}); });
    }
  }
  Tensor big = make_values({2, 300000}, kFloat, 0.01);
  compare("var long rows", big, 1e-4,
          [](const Tensor& t) { return var(t, OptionalIntArrayRef(IntArrayRef{1})); });
  compare("count_nonzero long", big, 0,
          [](const Tensor& t) { return count_nonzero(t, IntArrayRef{}); });
}

TEST(CudaReduce, Composites) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble}) {
    Tensor x = make_values({4, 6, 5}, dt);
    compare("logsumexp", x, tol_of(dt) * 4, [](const Tensor& t) {
      return logsumexp(t, IntArrayRef{1, 2});
    });
    compare("norm", x, tol_of(dt) * 4, [](const Tensor& t) { return norm(t); });
    compare("vector_norm 3", x, tol_of(dt) * 4,
            [](const Tensor& t) { return linalg_vector_norm(t, 3, IntArrayRef{0}); });
  }
}

TEST(CudaReduce, Gradients) {
  SKIP_WITHOUT_CUDA();
  Tensor x0 = make_values({4, 7}, kDouble);
  Tensor w = make_values({4, 7}, kDouble, 0.05) + 1;
  auto check = [&](const std::string& what, const std::function<Tensor(const Tensor&)>& f) {
    Tensor x = x0.clone().requires_grad_();
    (f(x) * w.sum()).sum().backward();
    Tensor xc = x0.to(kCuda).requires_grad_();
    (f(xc) * w.sum().to(kCuda)).sum().backward();
    expect_match(xc.grad(), x.grad(), 1e-10, what);
  };
  check("sum", [](const Tensor& t) { return sum(t, IntArrayRef{1}) * 2.0; });
  check("mean", [](const Tensor& t) { return mean(t, IntArrayRef{0}); });
  check("softmax", [&](const Tensor& t) { return softmax(t, 1) * w.to(t.device()); });
  check("log_softmax", [&](const Tensor& t) { return log_softmax(t, 0) * w.to(t.device()); });
  check("layer_norm", [&](const Tensor& t) { return layer_norm(t, {7}) * w.to(t.device()); });
  check("var", [](const Tensor& t) { return var(t, OptionalIntArrayRef(IntArrayRef{1})); });
}

TEST(CudaScan, AllOps) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kAllTypes)
    for (const Input& in : inputs_of(dt)) {
      const int64_t nd = in.cpu.dim();
      for (int64_t d : nd ? std::vector<int64_t>{0, -1} : std::vector<int64_t>{0}) {
        const std::string sfx =
            std::string(" ") + dtype_name(dt) + " " + in.name + " dim " + std::to_string(d);
        const double tol = tol_of(dt) * 4;
        compare("cumsum" + sfx, in.cpu, tol, [&](const Tensor& t) { return cumsum(t, d); });
        compare("cumprod" + sfx, in.cpu * 0.1 + 1, tol * 4,
                [&](const Tensor& t) { return cumprod(t, d); });
        if (isFloatingType(dt))
          compare("logcumsumexp" + sfx, in.cpu, tol,
                  [&](const Tensor& t) { return logcumsumexp(t, d); });
        if (!isComplexType(dt)) {
          auto [v, i] = cummax(in.cpu, d);
          auto [vc, ic] = cummax(in.cpu.to(kCuda), d);
          expect_match(vc, v, 0, "cummax values" + sfx);
          expect_match(ic, i, 0, "cummax indices" + sfx);
          auto [v2, i2] = cummin(in.cpu, d);
          auto [vc2, ic2] = cummin(in.cpu.to(kCuda), d);
          expect_match(vc2, v2, 0, "cummin values" + sfx);
          expect_match(ic2, i2, 0, "cummin indices" + sfx);
        }
      }
    }
  // Long lines take the block-scan path.
  for (ScalarType dt : {kFloat, kDouble, kLong, kHalf}) {
    Tensor x = make_values({3, 20000}, dt, 0.01);
    compare("cumsum long " + std::string(dtype_name(dt)), x, tol_of(dt) * 50,
            [](const Tensor& t) { return cumsum(t, 1); });
    if (isFloatingType(dt))
      compare("logcumsumexp long", x, tol_of(dt) * 10,
              [](const Tensor& t) { return logcumsumexp(t, 1); });
  }
  // NaN takes over cummax and stays.
  Tensor n = make_values({9}, kFloat);
  n.select(0, 4).fill_(NAN);
  auto [v, i] = cummax(n, 0);
  auto [vc, ic] = cummax(n.to(kCuda), 0);
  expect_match(vc, v, 0, "cummax NaN");
  expect_match(ic, i, 0, "cummax NaN indices");
  // In place.
  Tensor a = make_values({5, 6}, kDouble);
  Tensor ac = a.to(kCuda);
  ac.cumsum_(1);
  expect_match(ac, cumsum(a, 1), 1e-12, "cumsum_");
}

TEST(CudaSoftmax, Forward) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kFloatTypes)
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{7, 13}, {3, 5000}, {2, 16000}, {4, 3, 6}, {}, {2, 0}}) {
      Tensor x = make_values(shape, dt);
      const int64_t nd = x.dim();
      for (int64_t d : nd ? std::vector<int64_t>{0, -1} : std::vector<int64_t>{0}) {
        const std::string sfx = std::string(" ") + dtype_name(dt) + " dim " + std::to_string(d) +
                                " numel " + std::to_string(x.numel());
        compare("softmax" + sfx, x, tol_of(dt), [&](const Tensor& t) { return softmax(t, d); });
        compare("log_softmax" + sfx, x, tol_of(dt),
                [&](const Tensor& t) { return log_softmax(t, d); });
      }
    }
  // Strided input, dtype= and rows with -inf / NaN.
  Tensor x = make_values({6, 8}, kFloat).transpose(0, 1);
  compare("softmax strided", x, 1e-5, [](const Tensor& t) { return softmax(t, 1); });
  compare("softmax dtype=double", x, 1e-5, [](const Tensor& t) { return softmax(t, 1, kDouble); });
  Tensor y = make_values({3, 4}, kFloat);
  y.select(0, 0).fill_(-INFINITY);
  y.select(0, 1).select(0, 2).fill_(NAN);
  compare("softmax inf/nan rows", y, 1e-5, [](const Tensor& t) { return softmax(t, 1); });
}

TEST(CudaNorm, LayerGroupBatch) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kFloatTypes) {
    const double tol = tol_of(dt) * 4;
    Tensor x = make_values({4, 6, 5}, dt);
    Tensor w = make_values({6, 5}, dt, 0.03) + 1, b = make_values({6, 5}, dt, 0.02);
    const std::string s = std::string(dtype_name(dt));
    auto cu = [](const Tensor& t) { return t.to(kCuda); };
    expect_match(layer_norm(cu(x), {6, 5}, cu(w), cu(b)), layer_norm(x, {6, 5}, w, b), tol,
                 "layer_norm " + s);
    expect_match(layer_norm(cu(x), {5}), layer_norm(x, {5}), tol, "layer_norm no affine " + s);
    Tensor xl = make_values({3, 3000}, dt, 0.01);
    expect_match(layer_norm(cu(xl), {3000}), layer_norm(xl, {3000}), tol, "layer_norm long " + s);
    // Long rows (float32 keeps them in registers): affine, the statistics, the longest such row.
    for (int64_t D : {1028, 16000}) {
      Tensor xv = make_values({5, D}, dt, 0.01);
      Tensor wv = make_values({D}, dt, 0.02) + 1, bv = make_values({D}, dt, 0.03);
      auto [yv, mv, rv2] = native_layer_norm(xv, {D}, wv, bv, 1e-5);
      auto [yvc, mvc, rvc2] = native_layer_norm(cu(xv), {D}, cu(wv), cu(bv), 1e-5);
      const std::string sd = " D " + std::to_string(D) + " " + s;
      expect_match(yvc, yv, tol, "layer_norm affine" + sd);
      expect_match(mvc, mv, tol, "layer_norm mean" + sd);
      expect_match(rvc2, rv2, tol, "layer_norm rstd" + sd);
    }
    auto [y, m, r] = native_layer_norm(x, {5}, Tensor(), Tensor(), 1e-5);
    auto [yc, mc, rc] = native_layer_norm(cu(x), {5}, Tensor(), Tensor(), 1e-5);
    expect_match(mc, m, tol, "layer_norm mean " + s);
    expect_match(rc, r, tol, "layer_norm rstd " + s);
    Tensor gw = make_values({6}, dt, 0.03) + 1, gb = make_values({6}, dt, 0.02);
    expect_match(group_norm(cu(x), 3, cu(gw), cu(gb)), group_norm(x, 3, gw, gb), tol,
                 "group_norm " + s);
    // Batch norm in training (with running statistics) and evaluation.
    Tensor rm = zeros({6}, TensorOptions(kFloat)), rv = ones({6}, TensorOptions(kFloat));
    Tensor rmc = cu(rm), rvc = cu(rv);
    auto [by, bm, bi] = native_batch_norm(x, gw, gb, rm, rv, true, 0.1, 1e-5);
    auto [byc, bmc, bic] = native_batch_norm(cu(x), cu(gw), cu(gb), rmc, rvc, true, 0.1, 1e-5);
    expect_match(byc, by, tol, "batch_norm train " + s);
    expect_match(bmc, bm, tol, "batch_norm save_mean " + s);
    expect_match(bic, bi, tol, "batch_norm save_invstd " + s);
    expect_match(rmc, rm, 1e-5, "batch_norm running_mean " + s);
    expect_match(rvc, rv, 1e-5, "batch_norm running_var " + s);
    auto [ey, em, ei] = native_batch_norm(x, gw, gb, rm, rv, false, 0.1, 1e-5);
    auto [eyc, emc, eic] = native_batch_norm(cu(x), cu(gw), cu(gb), rmc, rvc, false, 0.1, 1e-5);
    expect_match(eyc, ey, tol, "batch_norm eval " + s);
  }
}

TEST(CudaNorm, Gradients) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : {kFloat, kDouble}) {
    const double tol = dt == kFloat ? 1e-4 : 1e-10;
    Tensor x0 = make_values({4, 6, 5}, dt);
    Tensor g = make_values({4, 6, 5}, dt, 0.07);
    Tensor w0 = make_values({6}, dt, 0.03) + 1, b0 = make_values({6}, dt, 0.02);
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<Tensor> grads[2];
      for (int dev = 0; dev < 2; ++dev) {
        const Device d = dev ? kCuda : Device(kCPU);
        Tensor x = x0.to(d).detach().requires_grad_(), w = w0.to(d).detach().requires_grad_();
        Tensor b = b0.to(d).detach().requires_grad_();
        Tensor y;
        if (kind == 0) {
          Tensor lw = w.unsqueeze(1).expand({6, 5}), lb = b.unsqueeze(1).expand({6, 5});
          y = layer_norm(x, {6, 5}, lw, lb);
        } else if (kind == 1) {
          y = group_norm(x, 2, w, b);
        } else {
          y = std::get<0>(native_batch_norm(x, w, b, Tensor(), Tensor(), true, 0.1, 1e-5));
        }
        y.backward(g.to(d));
        grads[dev] = {x.grad(), w.grad(), b.grad()};
      }
      const char* names[3] = {"layer_norm", "group_norm", "batch_norm"};
      for (int k = 0; k < 3; ++k)
        expect_match(
            grads[1][size_t(k)], grads[0][size_t(k)], tol,
            std::string(names[kind]) + " grad " + std::to_string(k) + " " + dtype_name(dt));
    }
  }
}

TEST(CudaAmp, UnscaleAndUpdateScale) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType dt : kFloatTypes) {
    Tensor g1 = make_values({10}, dt), g2 = make_values({3, 4}, dt);
    std::vector<Tensor> cpu = {g1.clone(), g2.clone()}, dev = {g1.to(kCuda), g2.to(kCuda)};
    Tensor inv = full({1}, 0.25, TensorOptions(kFloat));
    Tensor f = zeros({1}, TensorOptions(kFloat)), fc = f.to(kCuda);
    _amp_foreach_non_finite_check_and_unscale_(cpu, f, inv);
    _amp_foreach_non_finite_check_and_unscale_(dev, fc, inv.to(kCuda));
    expect_match(dev[0], cpu[0], 0, "unscale 0");
    expect_match(dev[1], cpu[1], 0, "unscale 1");
    expect_match(fc, f, 0, "found_inf clean");
    cpu[1].select(0, 1).select(0, 2).fill_(INFINITY);
    dev[1].select(0, 1).select(0, 2).fill_(INFINITY);
    _amp_foreach_non_finite_check_and_unscale_(cpu, f, inv);
    _amp_foreach_non_finite_check_and_unscale_(dev, fc, inv.to(kCuda));
    expect_match(fc, f, 0, "found_inf");
    EXPECT_EQ(host(fc).item().toDouble(), 1.0);
  }
  // The scale state machine: two clean steps grow the scale, an inf backs off.
  Tensor s = full({1}, 1024.0, TensorOptions(kFloat)), t = zeros({1}, TensorOptions(kInt));
  Tensor sc = s.to(kCuda), tc = t.to(kCuda);
  for (float inf : {0.f, 0.f, 1.f, 0.f}) {
    Tensor f = full({1}, double(inf), TensorOptions(kFloat));
    _amp_update_scale_(s, t, f, 2.0, 0.5, 2);
    _amp_update_scale_(sc, tc, f.to(kCuda), 2.0, 0.5, 2);
    expect_match(sc, s, 0, "scale");
    expect_match(tc, t, 0, "growth tracker");
  }
}

}  // namespace
