// The CUDA elementwise kernels against the CPU kernels: every elementwise op in every dtype (the
// CUDA op raises exactly where the CPU one does), strided, broadcast, zero-size and 0-dim
// operands, in-place and out= forms, mixed devices, and gradients. Without a GPU every test skips.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "ember/cuda.h"
#include "ember/ember.h"

using namespace ember;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"

const Device kCuda("cuda");
const Device kCpu(kCPU);

const std::vector<ScalarType> kAllTypes = {kBool,  kByte,   kChar,         kShort,
                                           kInt,   kLong,   kHalf,         kBFloat16,
                                           kFloat, kDouble, kComplexFloat, kComplexDouble};

// Varied values (negative, fractional, zero, complex parts) of `sizes`, cast to `dt`.
Tensor values_a(IntArrayRef sizes, ScalarType dt) {
  Tensor t = empty(sizes, TensorOptions().dtype(kComplexDouble));
  auto* p = t.data_ptr<complex<double>>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = complex<double>((double(i % 23) - 11) * 0.37, double(i % 7) - 3) * 0.25;
  return t.to(dt);
}
// Values without zeros (integer division by zero raises on the CPU only).
Tensor values_b(IntArrayRef sizes, ScalarType dt) {
  Tensor t = empty(sizes, TensorOptions().dtype(kComplexDouble));
  auto* p = t.data_ptr<complex<double>>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = complex<double>(double((i % 5) + 1) * (i % 2 ? -1.25 : 1.25), double(i % 3) * 0.5);
  return t.to(dt);
}
// Values in (0, 1) (logit, erfinv, ndtri, ...).
Tensor values_unit(IntArrayRef sizes, ScalarType dt) {
  Tensor t = empty(sizes, TensorOptions().dtype(kDouble));
  auto* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (double(i % 17) + 0.5) / 17.5;
  return t.to(dt);
}

Tensor on_cpu(const Tensor& t) { return t.to(kCpu).contiguous(); }

double rtol_of(ScalarType dt) {
  switch (dt) {
    case kHalf:
      return 4e-3;
    case kBFloat16:
      return 3e-2;
    case kFloat:
    case kComplexFloat:
      return 2e-5;
    case kDouble:
    case kComplexDouble:
      return 1e-12;
    default:
      return 0;
  }
}

// Same dtype and shape; values within the dtype's tolerance (NaN where the CPU has NaN, equal
// infinities, integers and bools exact).
void expect_close(const Tensor& cuda_result, const Tensor& cpu_result, const std::string& what,
                  double rtol_scale = 1) {
  ASSERT_TRUE(cuda_result.is_cuda()) << what;
  Tensor a = on_cpu(cuda_result), b = on_cpu(cpu_result);
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  const ScalarType dt = b.dtype();
  const double rtol = rtol_of(dt) * rtol_scale;
  Tensor ac = a.to(kComplexDouble), bc = b.to(kComplexDouble);
  const auto* pa = ac.data_ptr<complex<double>>();
  const auto* pb = bc.data_ptr<complex<double>>();
  int reported = 0;
  for (int64_t i = 0; i < a.numel() && reported < 5; ++i) {
    for (int part = 0; part < 2; ++part) {
      double x = part ? pa[i].imag() : pa[i].real(), y = part ? pb[i].imag() : pb[i].real();
      bool ok;
      if (std::isnan(y))
        ok = std::isnan(x);
      else if (std::isinf(y))
        ok = x == y;
      else
        ok = std::fabs(x - y) <= rtol * std::fabs(y) + rtol;
      if (!ok) {
        ADD_FAILURE() << what << " [" << dt << "] element " << i << (part ? " imag" : " real")
                      << ": cuda " << x << " cpu " << y;
        ++reported;
      }
    }
  }
}

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
struct OpCase {
  std::string name;
  int arity;
  Fn fn;
  int inputs = 0;  // 0: values_a/values_b; 1: values in (0, 1)
};

std::vector<OpCase> all_cases() {
  std::vector<OpCase> c;
#define EMBER_TEST_UNARY(op) \
  c.push_back({#op, 1, [](const std::vector<Tensor>& x) { return ember::op(x[0]); }});
  EMBER_UNARY_OPS(EMBER_TEST_UNARY)
  EMBER_UNARY_PREDICATE_OPS(EMBER_TEST_UNARY)
#undef EMBER_TEST_UNARY
#define EMBER_TEST_BINARY(op) \
  c.push_back({#op, 2, [](const std::vector<Tensor>& x) { return ember::op(x[0], x[1]); }});
  EMBER_BINARY_OPS(EMBER_TEST_BINARY)
  EMBER_COMPARISON_OPS(EMBER_TEST_BINARY)
#undef EMBER_TEST_BINARY
  auto add = [&](std::string name, int arity, Fn fn, int inputs = 0) {
    c.push_back({std::move(name), arity, std::move(fn), inputs});
  };
  using V = const std::vector<Tensor>&;
  add("add_alpha", 2, [](V x) { return ember::add(x[0], x[1], 2); });
  add("sub_alpha", 2, [](V x) { return ember::sub(x[0], x[1], 3); });
  add("div_trunc", 2, [](V x) { return ember::div(x[0], x[1], "trunc"); });
  add("div_floor", 2, [](V x) { return ember::div(x[0], x[1], "floor"); });
  add("round_2", 1, [](V x) { return ember::round(x[0], 2); });
  add("round_m1", 1, [](V x) { return ember::round(x[0], -1); });
  add("clamp", 1, [](V x) { return ember::clamp(x[0], Scalar(-1), Scalar(2)); });
  add("clamp_min", 1, [](V x) { return ember::clamp_min(x[0], Scalar(0.5)); });
  add("clamp_tensor", 3, [](V x) { return ember::clamp(x[0], x[1], x[2]); });
  add(
      "logit", 1, [](V x) { return ember::logit(x[0]); }, 1);
  add(
      "logit_eps", 1, [](V x) { return ember::logit(x[0], 0.2); }, 1);
  add("polygamma", 1, [](V x) { return ember::polygamma(1, x[0]); });
  add("mvlgamma", 1, [](V x) { return ember::mvlgamma(x[0] + 3, 2); });
  add("nan_to_num", 1, [](V x) { return ember::nan_to_num(ember::log(x[0]), 0.5, 7.0, -7.0); });
  add("leaky_relu", 1, [](V x) { return ember::leaky_relu(x[0], 0.2); });
  add("elu", 1, [](V x) { return ember::elu(x[0], 1.5); });
  add("celu", 1, [](V x) { return ember::celu(x[0], 0.7); });
  add("gelu", 1, [](V x) { return ember::gelu(x[0]); });
  add("gelu_tanh", 1, [](V x) { return ember::gelu(x[0], "tanh"); });
  add("softplus", 1, [](V x) { return ember::softplus(x[0], 2, 1); });
  add("hardtanh", 1, [](V x) { return ember::hardtanh(x[0], -0.5, 0.8); });
  add("hardshrink", 1, [](V x) { return ember::hardshrink(x[0], 0.6); });
  add("softshrink", 1, [](V x) { return ember::softshrink(x[0], 0.6); });
  add("threshold", 1, [](V x) { return ember::threshold(x[0], 0.3, -2); });
  add("lerp_scalar", 2, [](V x) { return ember::lerp(x[0], x[1], 0.3); });
  add("lerp_tensor", 3, [](V x) { return ember::lerp(x[0], x[1], x[2]); });
  add("addcmul", 3, [](V x) { return ember::addcmul(x[0], x[1], x[2], 2); });
  add("addcdiv", 3, [](V x) { return ember::addcdiv(x[0], x[1], x[2], 2); });
  add("where", 2, [](V x) { return ember::where(ember::gt(x[0].abs(), 1), x[0], x[1]); });
  add("isclose", 2, [](V x) { return ember::isclose(x[0], x[0] + x[1] * 1e-3, 1e-2, 1e-3); });
  add("conj_physical", 1, [](V x) { return x[0].conj_physical(); });
  // torch.special: every unary and binary function (NotImplemented on cuda where the device has
  // no kernel: the comparison then expects the error).
  add("i0e", 1, [](V x) { return special::i0e(x[0]); });
  add("i1", 1, [](V x) { return special::i1(x[0]); });
  add("i1e", 1, [](V x) { return special::i1e(x[0]); });
  add("ndtr", 1, [](V x) { return special::ndtr(x[0]); });
  add(
      "ndtri", 1, [](V x) { return special::ndtri(x[0]); }, 1);
  add("log_ndtr", 1, [](V x) { return special::log_ndtr(x[0] * 8); });
  add("erfcx", 1, [](V x) { return special::erfcx(x[0] * 4); });
  add("bessel_j0", 1, [](V x) { return special::bessel_j0(x[0] * 5); });
  add("bessel_j1", 1, [](V x) { return special::bessel_j1(x[0] * 5); });
  add("bessel_y0", 1, [](V x) { return special::bessel_y0(x[0] * 5); });
  add("bessel_y1", 1, [](V x) { return special::bessel_y1(x[0] * 5); });
  add("modified_bessel_i0", 1, [](V x) { return special::modified_bessel_i0(x[0] * 5); });
  add("modified_bessel_i1", 1, [](V x) { return special::modified_bessel_i1(x[0] * 5); });
  add("spherical_bessel_j0", 1, [](V x) { return special::spherical_bessel_j0(x[0] * 5); });
  add("entr", 1, [](V x) { return special::entr(x[0]); });
  add("xlog1py", 2, [](V x) { return special::xlog1py(x[0], x[1]); });
  return c;
}

std::vector<Tensor> inputs_for(const OpCase& oc, ScalarType dt, IntArrayRef sizes) {
  std::vector<Tensor> in;
  for (int k = 0; k < oc.arity; ++k)
    in.push_back(oc.inputs == 1 ? values_unit(sizes, dt)
                                : (k == 0 ? values_a(sizes, dt) : values_b(sizes, dt)));
  return in;
}

std::vector<Tensor> to_device(const std::vector<Tensor>& in, Device d) {
  std::vector<Tensor> r;
  for (const Tensor& t : in) r.push_back(t.to(d));
  return r;
}

// Runs `oc` on the CPU and on cuda with the same inputs: both raise (the same exception type) or
// both agree.
void compare_op(const OpCase& oc, const std::vector<Tensor>& cpu_in,
                const std::vector<Tensor>& cuda_in, const std::string& what) {
  Tensor expected;
  try {
    expected = oc.fn(cpu_in);
  } catch (const NotImplementedError&) {
    EXPECT_THROW(oc.fn(cuda_in), NotImplementedError) << what;
    return;
  } catch (const Error&) {
    EXPECT_THROW(oc.fn(cuda_in), Error) << what;
    return;
  }
  // Functions the CPU evaluates with its own series and the device has no kernel for.
  static const std::vector<std::string> kNoCudaKernel = {
      "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "i0e", "i1e"};
  for (const std::string& n : kNoCudaKernel) {
    if (oc.name == n) {
      EXPECT_THROW(oc.fn(cuda_in), NotImplementedError) << what;
      return;
    }
  }
  Tensor got;
  try {
    got = oc.fn(cuda_in);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": cpu runs, cuda raises: " << e.what();
    return;
  }
  expect_close(got, expected, what, oc.name == "erfinv" || oc.name == "lgamma" ? 50 : 1);
}

}  // namespace

TEST(CudaElementwise, EveryOpEveryDtype) {
  SKIP_WITHOUT_CUDA();
  for (const OpCase& oc : all_cases()) {
    for (ScalarType dt : kAllTypes) {
      std::vector<Tensor> cpu_in = inputs_for(oc, dt, {3, 37});
      compare_op(oc, cpu_in, to_device(cpu_in, kCuda), oc.name);
    }
  }
}

TEST(CudaElementwise, StridedBroadcastZeroSizeAndZeroDim) {
  SKIP_WITHOUT_CUDA();
  for (const OpCase& oc : all_cases()) {
    for (ScalarType dt : {kFloat, kLong, kBFloat16, kComplexDouble}) {
      // Transposed (non-contiguous) operands.
      std::vector<Tensor> cpu_in = inputs_for(oc, dt, {9, 5});
      std::vector<Tensor> cpu_t, cuda_t;
      for (const Tensor& t : cpu_in) {
        cpu_t.push_back(t.t());
        cuda_t.push_back(t.to(kCuda).t());
      }
      compare_op(oc, cpu_t, cuda_t, oc.name + " transposed");
      // A sliced (strided, offset) first operand, others broadcast along dim 0.
      if (oc.arity >= 1) {
        std::vector<Tensor> cb = inputs_for(oc, dt, {1, 5});
        Tensor big = inputs_for(oc, dt, {8, 10})[0];
        cb[0] = big.slice(1, 1, 10, 2).slice(0, 2, 8);  // 6 x 5, strides (10, 2), offset 21
        std::vector<Tensor> gb;
        gb.push_back(big.to(kCuda).slice(1, 1, 10, 2).slice(0, 2, 8));
        for (size_t k = 1; k < cb.size(); ++k) gb.push_back(cb[k].to(kCuda));
        compare_op(oc, cb, gb, oc.name + " sliced/broadcast");
      }
      // Zero-size and 0-dim operands.
      std::vector<Tensor> z = inputs_for(oc, dt, {0, 4});
      compare_op(oc, z, to_device(z, kCuda), oc.name + " zero-size");
      std::vector<Tensor> s = inputs_for(oc, dt, {});
      compare_op(oc, s, to_device(s, kCuda), oc.name + " 0-dim");
    }
  }
}

TEST(CudaElementwise, LongContiguousRunsUseEveryVectorLane) {
  SKIP_WITHOUT_CUDA();
  // Lengths around the vector widths, at aligned and unaligned starts (a slice offset by one
  // element forces the scalar path for 16-byte loads).
  for (int64_t n : {1, 7, 8, 9, 1023, 4099}) {
    for (ScalarType dt : {kHalf, kFloat, kDouble, kByte}) {
      for (int64_t off : {0, 1}) {
        Tensor a = values_a({n + 1}, dt).slice(0, off, off + n);
        Tensor b = values_b({n + 1}, dt).slice(0, off, off + n);
        Tensor ga = a.to(kCuda), gb = b.to(kCuda);
        Tensor gfull_a = values_a({n + 1}, dt).to(kCuda).slice(0, off, off + n);
        expect_close(ember::mul(gfull_a, gb), ember::mul(a, b), "mul n=" + std::to_string(n));
        expect_close(ember::lt(ga, gb), ember::lt(a, b), "lt n=" + std::to_string(n));
        expect_close(ember::add(ga, 3), ember::add(a, 3), "add scalar n=" + std::to_string(n));
      }
    }
  }
}

TEST(CudaElementwise, InPlaceAndOut) {
  SKIP_WITHOUT_CUDA();
  Tensor a = values_a({4, 6}, kFloat), b = values_b({4, 6}, kFloat);
  Tensor ga = a.to(kCuda), gb = b.to(kCuda);
  Tensor ca = a.clone(), cga = ga.clone();
  ca.mul_(b);
  cga.mul_(gb);
  expect_close(cga, ca, "mul_");
  ca.exp_();
  cga.exp_();
  expect_close(cga, ca, "exp_");
  // In place into a strided view.
  Tensor cv = a.clone(), gv = ga.clone();
  cv.t().add_(b.t(), 2);
  gv.t().add_(gb.t(), 2);
  expect_close(gv, cv, "add_ on a transposed view");
  // out= of the result dtype and of a wider dtype (a cast into out).
  Tensor out = empty({4, 6}, TensorOptions().dtype(kFloat).device(kCuda));
  ember::atan2_out(out, ga, gb);
  expect_close(out, ember::atan2(a, b), "atan2_out");
  Tensor outd = empty({0}, TensorOptions().dtype(kDouble).device(kCuda));
  ember::mul_out(outd, ga, gb);
  expect_close(outd, ember::mul(a, b).to(kDouble), "mul_out into float64");
  Tensor outb = empty({4, 6}, TensorOptions().dtype(kBool).device(kCuda));
  ember::lt_out(outb, ga, gb);
  expect_close(outb, ember::lt(a, b), "lt_out");
  // Comparisons in place keep self's dtype.
  Tensor cl = a.clone(), gl = ga.clone();
  cl.lt_(b);
  gl.lt_(gb);
  expect_close(gl, cl, "lt_");
}

TEST(CudaElementwise, MixedDevices) {
  SKIP_WITHOUT_CUDA();
  Tensor g = values_a({3, 4}, kFloat).to(kCuda);
  Tensor c = values_b({3, 4}, kFloat);
  try {
    (void)ember::add(g, c);
    ADD_FAILURE() << "cuda + cpu did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Expected all tensors to be on the same device, but "
                                         "found at least two devices, cuda:0 and cpu!"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)ember::mul(c, g), Error);
  EXPECT_THROW((void)ember::where(ember::gt(g, 0), g, c), Error);
  Tensor out_cpu = empty({3, 4});
  EXPECT_THROW(ember::mul_out(out_cpu, g, g), Error);
  // A 0-dim CPU tensor is a scalar: allowed on either side, the result on cuda.
  Tensor s = ember::scalar_tensor(2.5);
  Tensor r = ember::mul(g, s);
  EXPECT_TRUE(r.is_cuda());
  expect_close(r, ember::mul(on_cpu(g), s), "cuda * cpu 0-dim");
  Tensor r2 = ember::sub(s, g);
  EXPECT_TRUE(r2.is_cuda());
  expect_close(r2, ember::sub(s, on_cpu(g)), "cpu 0-dim - cuda");
  Tensor r3 = ember::where(ember::gt(g, 0), g, s);
  expect_close(r3, ember::where(ember::gt(on_cpu(g), 0), on_cpu(g), s), "where with cpu 0-dim");
}

TEST(CudaElementwise, Gradients) {
  SKIP_WITHOUT_CUDA();
  auto run = [](Device d, const std::function<Tensor(const Tensor&, const Tensor&)>& f) {
    Tensor a = values_a({5, 3}, kDouble).to(d).detach().requires_grad_(true);
    Tensor b = values_b({5, 3}, kDouble).to(d).detach().requires_grad_(true);
    f(a, b).sum().backward();
    return std::make_pair(a.grad(), b.grad());
  };
  std::vector<std::pair<std::string, std::function<Tensor(const Tensor&, const Tensor&)>>> fs = {
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }},
      {"sigmoid", [](const Tensor& a, const Tensor& b) { return ember::sigmoid(a) + b; }},
      {"pow", [](const Tensor& a, const Tensor& b) { return ember::pow(a.abs() + 1, b); }},
      {"where", [](const Tensor& a, const Tensor& b) { return ember::where(a > 0, a * a, b); }},
      {"gelu", [](const Tensor& a, const Tensor& b) { return ember::gelu(a) * b; }},
  };
  for (auto& [name, f] : fs) {
    auto [ca, cb] = run(kCpu, f);
    auto [ga, gb] = run(kCuda, f);
    expect_close(ga, ca, name + " grad a");
    expect_close(gb, cb, name + " grad b");
  }
}

TEST(CudaElementwise, CopiesAndCasts) {
  SKIP_WITHOUT_CUDA();
  for (ScalarType from : kAllTypes) {
    Tensor h = values_a({6, 7}, from);
    Tensor g = h.to(kCuda);
    for (ScalarType to : kAllTypes) {
      expect_close(g.to(to), h.to(to), "cast");
      expect_close(g.t().to(to), h.t().to(to), "strided cast");
      Tensor dst = empty({7, 6}, TensorOptions().dtype(to).device(kCuda));
      dst.copy_(h.t());  // host to device, strided source, with a cast
      expect_close(dst, h.t().to(to), "host to device copy_");
    }
  }
  // Pinned memory, non-blocking both ways.
  Tensor h = values_a({1000}, kFloat);
  Tensor pinned = cuda::pin_memory(h);
  Tensor g = pinned.to(kCuda, /*non_blocking=*/true);
  Tensor back = cuda::pin_memory(empty({1000}));
  back.copy_(g, /*non_blocking=*/true);
  cuda::synchronize();
  expect_close(g, h, "pinned upload");
  EXPECT_TRUE(ember::equal(back, h));
}

TEST(CudaElementwise, CopiesAcrossDevices) {
  SKIP_WITHOUT_CUDA();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  const Device d0("cuda:0"), d1("cuda:1");
  Tensor h = values_a({5, 8}, kFloat);
  Tensor a = h.to(d0);
  Tensor b = a.to(d1);  // contiguous, same dtype: one peer copy
  EXPECT_EQ(b.device(), d1);
  EXPECT_TRUE(ember::equal(on_cpu(b), h));
  Tensor c = a.t().to(d1);  // strided source: packed on cuda:0 first
  EXPECT_TRUE(ember::equal(on_cpu(c), h.t().contiguous()));
  Tensor dst = empty({8, 5}, TensorOptions().dtype(kDouble).device(d1));
  dst.copy_(a.t());  // cast and scatter on the destination
  EXPECT_TRUE(ember::equal(on_cpu(dst), h.t().to(kDouble)));
  // Elementwise ops across devices raise.
  EXPECT_THROW((void)ember::add(a, b), Error);
}
