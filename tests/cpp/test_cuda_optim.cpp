// Optimizer steps off the CPU (Note [Device optimizer step] in src/optim/functional_device.cpp).
// The generic step (tensor ops, any device) runs here on CPU tensors against the fused CPU loops
// for every optimizer and option combination, over 8 steps (RAdam's rectified branch starts at
// step 6), with strided, 0-dim and zero-size parameters and states of another layout. With a GPU,
// every optimizer runs on cuda against the CPU: the fused CUDA kernels (contiguous Adam/AdamW
// and SGD groups, with a tensor longer than one 64K chunk) and the generic path (strided groups).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ember/cuda.h"
#include "ember/ember.h"
#include "ember/optim.h"
#include "ember/optim/functional.h"
#include "optim/functional_device.h"

using namespace ember;
namespace F = ember::optim::functional;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device"

constexpr int kSteps = 8;

// One parameter group: params, state lists (states[s][i]) and NAdam's mu products.
struct Group {
  std::vector<Tensor> params;
  std::vector<std::vector<Tensor>> states;
  std::vector<double> mu;
};

// Which implementation a step runs: the public function (the CPU loops on CPU tensors, the device
// path on others) or the generic step.
enum class Impl { kPublic, kGeneric };

using StepFn =
    std::function<void(Group&, const std::vector<Tensor>&, const std::vector<double>&, Impl)>;

struct Config {
  std::string name;
  int nstates;
  bool undefined_states;  // SGD's momentum buffers start undefined
  bool fused_on_cuda;     // Adam/AdamW/SGD: contiguous groups run the fused CUDA kernel
  StepFn step;
};

std::vector<Config> configs() {
  std::vector<Config> out;
  for (bool decoupled : {false, true})
    for (double wd : {0.0, 0.1})
      for (bool amsgrad : {false, true})
        for (bool maximize : {false, true}) {
          std::string name = std::string(decoupled ? "adamw" : "adam") +
                             " wd=" + std::to_string(wd) + (amsgrad ? " amsgrad" : "") +
                             (maximize ? " maximize" : "");
          out.push_back({name, 3, false, true,
                         [=](Group& g, const std::vector<Tensor>& grads,
                             const std::vector<double>& steps, Impl impl) {
                           auto f = impl == Impl::kPublic ? F::adam_step : F::generic::adam_step;
                           f(g.params, grads, g.states[0], g.states[1], g.states[2], steps, 0.01,
                             0.9, 0.999, 1e-8, wd, amsgrad, maximize, decoupled);
                         }});
        }
  struct Sgd {
    double momentum, dampening, wd;
    bool nesterov, maximize;
  };
  for (Sgd o :
       {Sgd{0, 0, 0, false, false}, Sgd{0, 0, 0.1, false, true}, Sgd{0.9, 0, 0, false, false},
        Sgd{0.9, 0.3, 0.1, false, false}, Sgd{0.9, 0, 0.1, true, false}, Sgd{0.8, 0, 0, true, true},
        Sgd{0.9, 0.5, 0, false, true}}) {
    std::string name = "sgd momentum=" + std::to_string(o.momentum) +
                       " dampening=" + std::to_string(o.dampening) + " wd=" + std::to_string(o.wd) +
                       (o.nesterov ? " nesterov" : "") + (o.maximize ? " maximize" : "");
    out.push_back(
        {name, 1, true, true,
         [=](Group& g, const std::vector<Tensor>& grads, const std::vector<double>&, Impl impl) {
           auto f = impl == Impl::kPublic ? F::sgd_step : F::generic::sgd_step;
           f(g.params, grads, g.states[0], 0.05, o.momentum, o.dampening, o.wd, o.nesterov,
             o.maximize);
         }});
  }
  for (double wd : {0.0, 0.1})
    for (double lr_decay : {0.0, 0.1})
      for (bool maximize : {false, true})
        out.push_back(
            {"adagrad wd=" + std::to_string(wd) + " lr_decay=" + std::to_string(lr_decay) +
                 (maximize ? " maximize" : ""),
             1, false, false,
             [=](Group& g, const std::vector<Tensor>& grads, const std::vector<double>& steps,
                 Impl impl) {
               auto f = impl == Impl::kPublic ? F::adagrad_step : F::generic::adagrad_step;
               f(g.params, grads, g.states[0], steps, 0.05, wd, lr_decay, 1e-10, maximize);
             }});
  for (bool centered : {false, true})
    for (double momentum : {0.0, 0.9})
      for (double wd : {0.0, 0.1})
        for (bool maximize : {false, true})
          out.push_back({"rmsprop" + std::string(centered ? " centered" : "") +
                             " momentum=" + std::to_string(momentum) + " wd=" + std::to_string(wd) +
                             (maximize ? " maximize" : ""),
                         3, false, false,
                         [=](Group& g, const std::vector<Tensor>& grads, const std::vector<double>&,
                             Impl impl) {
                           auto f =
                               impl == Impl::kPublic ? F::rmsprop_step : F::generic::rmsprop_step;
                           f(g.params, grads, g.states[0], g.states[1], g.states[2], 0.01, 0.99,
                             1e-8, wd, momentum, centered, maximize);
                         }});
  for (double wd : {0.0, 0.1})
    for (bool maximize : {false, true}) {
      const std::string opts = " wd=" + std::to_string(wd) + (maximize ? " maximize" : "");
      out.push_back(
          {"adadelta" + opts, 2, false, false,
           [=](Group& g, const std::vector<Tensor>& grads, const std::vector<double>&, Impl impl) {
             auto f = impl == Impl::kPublic ? F::adadelta_step : F::generic::adadelta_step;
             f(g.params, grads, g.states[0], g.states[1], 1.0, 0.9, 1e-6, wd, maximize);
           }});
      out.push_back({"adamax" + opts, 2, false, false,
                     [=](Group& g, const std::vector<Tensor>& grads,
                         const std::vector<double>& steps, Impl impl) {
                       auto f = impl == Impl::kPublic ? F::adamax_step : F::generic::adamax_step;
                       f(g.params, grads, g.states[0], g.states[1], steps, 0.02, 0.9, 0.999, 1e-8,
                         wd, maximize);
                     }});
      out.push_back({"nadam" + opts, 2, false, false,
                     [=](Group& g, const std::vector<Tensor>& grads,
                         const std::vector<double>& steps, Impl impl) {
                       auto f = impl == Impl::kPublic ? F::nadam_step : F::generic::nadam_step;
                       f(g.params, grads, g.states[0], g.states[1], g.mu, steps, 0.02, 0.9, 0.999,
                         1e-8, wd, 0.004, maximize);
                     }});
      // beta2 = 0.9: the rectified update starts at step 6.
      out.push_back({"radam" + opts, 2, false, false,
                     [=](Group& g, const std::vector<Tensor>& grads,
                         const std::vector<double>& steps, Impl impl) {
                       auto f = impl == Impl::kPublic ? F::radam_step : F::generic::radam_step;
                       f(g.params, grads, g.states[0], g.states[1], steps, 0.01, 0.9, 0.9, 1e-8, wd,
                         maximize);
                     }});
    }
  return out;
}

// Parameter shapes; in the strided layout, parameter 1 is a transposed view and the grad of
// parameter 0 is strided.
std::vector<std::vector<int64_t>> shapes(bool large) {
  return {{3, 4}, {3, 5}, {}, {0, 3}, {large ? 70001 : 37}};
}

Tensor make(const std::vector<int64_t>& sizes, bool transposed, uint64_t seed, ScalarType dt) {
  Generator gen;
  gen.manual_seed(seed);
  if (transposed && sizes.size() == 2)
    return randn({sizes[1], sizes[0]}, gen, TensorOptions(kDouble)).to(dt).t();
  return randn(sizes, gen, TensorOptions(kDouble)).to(dt);
}

// A group on `device`; `strided` gives the layouts above (states are contiguous).
Group make_group(const Config& c, ScalarType dt, Device device, bool strided, bool large) {
  Group g;
  const auto sh = shapes(large);
  g.states.resize(size_t(c.nstates));
  for (size_t i = 0; i < sh.size(); ++i) {
    Tensor p = make(sh[i], strided && i == 1, 100 + i, dt).to(device);
    p.requires_grad_();
    g.params.push_back(p);
    for (auto& s : g.states)
      s.push_back(c.undefined_states ? Tensor() : zeros(sh[i], TensorOptions(dt).device(device)));
    g.mu.push_back(1.0);
  }
  // Adagrad's sums, Adadelta's averages: positive starts keep every path away from 0/0.
  if (!c.undefined_states && c.name.rfind("adagrad", 0) == 0)
    for (Tensor& s : g.states[0]) s.fill_(0.1);
  return g;
}

std::vector<Tensor> make_grads(int step, ScalarType dt, Device device, bool strided, bool large) {
  std::vector<Tensor> out;
  const auto sh = shapes(large);
  for (size_t i = 0; i < sh.size(); ++i)
    out.push_back(make(sh[i], strided && i == 0, 1000 * uint64_t(step) + i, dt).to(device));
  return out;
}

std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(Device(kCPU)).to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

double tolerance(ScalarType dt) {
  if (dt == kDouble) return 1e-10;
  if (dt == kFloat) return 2e-5;
  return 3e-2;
}

void expect_close(const Tensor& a, const Tensor& b, ScalarType dt, const std::string& what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (!a.defined()) return;
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_EQ(a.scalar_type(), b.scalar_type()) << what;
  const auto va = values(a), vb = values(b);
  const double tol = tolerance(dt);
  // Half types: one rounding step of a value of the tensor's magnitude (sums that cancel, as in
  // RMSprop's momentum buffer, leave errors of that size in small elements).
  double scale = 0;
  for (double x : vb) scale = std::max(scale, std::abs(x));
  const bool half = dt == kHalf || dt == kBFloat16;
  for (size_t k = 0; k < va.size(); ++k)
    ASSERT_NEAR(va[k], vb[k], tol * (1 + (half ? scale : std::abs(vb[k])))) << what << " at " << k;
}

void expect_groups_close(const Group& a, const Group& b, ScalarType dt, const std::string& what) {
  for (size_t i = 0; i < a.params.size(); ++i) {
    expect_close(a.params[i], b.params[i], dt, what + " param " + std::to_string(i));
    for (size_t s = 0; s < a.states.size(); ++s)
      expect_close(a.states[s][i], b.states[s][i], dt,
                   what + " state " + std::to_string(s) + " of param " + std::to_string(i));
    EXPECT_EQ(a.mu[i], b.mu[i]) << what;
  }
}

// Runs kSteps steps of `c` on group a (impl_a) and group b (impl_b), the same grads (on each
// group's device), and compares after every step.
void run_pair(const Config& c, ScalarType dt, Device dev_b, Impl impl_a, Impl impl_b, bool strided,
              bool large) {
  Group a = make_group(c, dt, Device(kCPU), strided, large);
  Group b = make_group(c, dt, dev_b, strided, large);
  for (int s = 1; s <= kSteps; ++s) {
    const std::vector<double> steps{double(s), double(s + 1), double(s), double(s), double(s + 2)};
    c.step(a, make_grads(s, dt, Device(kCPU), strided, large), steps, impl_a);
    c.step(b, make_grads(s, dt, dev_b, strided, large), steps, impl_b);
    // Large groups (the cuda runs) are compared after the first step, the first rectified RAdam
    // step and the last.
    if (large && s != 1 && s != 6 && s != kSteps) continue;
    expect_groups_close(a, b, dt,
                        c.name + " " + std::string(dtype_name(dt)) + " step " + std::to_string(s));
    if (::testing::Test::HasFatalFailure()) return;
  }
  // "cuda" names the current device; the parameters stay on that device's index.
  const Device want =
      dev_b.is_cuda() && dev_b.index() < 0 ? Device(kCUDA, int8_t(cuda::current_device())) : dev_b;
  for (const Tensor& p : b.params) {
    EXPECT_EQ(p.device(), want);
    EXPECT_TRUE(p.requires_grad());
  }
}

}  // namespace

// ---- the generic step on the CPU (runs everywhere) ----

TEST(OptimDevicePath, GenericStepMatchesFusedCpuLoops) {
  for (const Config& c : configs())
    for (ScalarType dt : {kFloat, kDouble})
      for (bool strided : {false, true}) {
        SCOPED_TRACE(c.name + (strided ? " strided" : ""));
        run_pair(c, dt, Device(kCPU), Impl::kPublic, Impl::kGeneric, strided, false);
        if (HasFatalFailure()) return;
      }
}

TEST(OptimDevicePath, GenericStepHalfTypes) {
  // Rounding after every op (generic) vs once per element (fused): bf16/fp16 tolerance.
  for (const Config& c : configs()) {
    const bool picked = c.name == "adam wd=0.000000" ||
                        c.name.rfind("sgd momentum=0.900000 dampening=0.3", 0) == 0 ||
                        c.name == "rmsprop centered momentum=0.900000 wd=0.000000";
    if (!picked) continue;
    for (ScalarType dt : {kHalf, kBFloat16}) {
      SCOPED_TRACE(c.name);
      run_pair(c, dt, Device(kCPU), Impl::kPublic, Impl::kGeneric, false, false);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(OptimDevicePath, GenericStepBumpsVersionsAndKeepsLeaves) {
  Tensor p = randn({4}, TensorOptions(kFloat)).requires_grad_();
  Tensor g = randn({4}, TensorOptions(kFloat));
  Tensor m = zeros({4}), v = zeros({4});
  const auto v0 = p._version();
  const auto start = values(p);
  F::generic::adam_step({p}, {g}, {m}, {v}, {}, {1.0}, 0.1, 0.9, 0.999, 1e-8, 0, false, false,
                        false);
  EXPECT_GT(p._version(), v0);
  EXPECT_TRUE(p.is_leaf());
  EXPECT_FALSE(p.grad_fn());
  // The first Adam step moves every element by lr against its gradient: m / sqrt(v) after the
  // bias corrections is sign(g).
  const auto gv = values(g), pv = values(p);
  for (size_t k = 0; k < pv.size(); ++k)
    EXPECT_NEAR(pv[k], start[k] - 0.1 * (gv[k] > 0 ? 1 : -1), 1e-5) << k;
  std::vector<Tensor> bufs(1);
  Tensor q = zeros({3});
  F::generic::sgd_step({q}, {ones({3})}, bufs, 0.5, 0.9, 0.0, 0.0, false, false);
  ASSERT_TRUE(bufs[0].defined());
  EXPECT_EQ(values(bufs[0]), std::vector<double>({1, 1, 1}));  // the first buffer is the grad
  EXPECT_EQ(values(q), std::vector<double>({-0.5, -0.5, -0.5}));
}

TEST(OptimDevicePath, GenericStepRejectsBadGroups) {
  auto adam = [](const std::vector<Tensor>& p, const std::vector<Tensor>& g,
                 const std::vector<Tensor>& m, const std::vector<Tensor>& v) {
    std::vector<double> steps(p.size(), 1.0);
    F::generic::adam_step(p, g, m, v, {}, steps, 0.1, 0.9, 0.999, 1e-8, 0, false, false, false);
  };
  Tensor p = zeros({3}), g = ones({3});
  EXPECT_THROW(adam({p}, {g, g}, {zeros({3})}, {zeros({3})}), ValueError);
  EXPECT_THROW(adam({p}, {ones({4})}, {zeros({3})}, {zeros({3})}), Error);
  EXPECT_THROW(adam({p}, {ones({3}, TensorOptions(kDouble))}, {zeros({3})}, {zeros({3})}), Error);
  EXPECT_THROW(adam({p, zeros({2}, TensorOptions(kDouble))}, {g, ones({2}, TensorOptions(kDouble))},
                    {zeros({3}), zeros({2}, TensorOptions(kDouble))},
                    {zeros({3}), zeros({2}, TensorOptions(kDouble))}),
               Error);
  EXPECT_THROW(adam({p}, {Tensor()}, {zeros({3})}, {zeros({3})}), Error);
  EXPECT_THROW(adam({zeros({3}, TensorOptions(kLong))}, {ones({3}, TensorOptions(kLong))},
                    {zeros({3}, TensorOptions(kLong))}, {zeros({3}, TensorOptions(kLong))}),
               Error);
  try {
    adam({p}, {ones({4})}, {zeros({3})}, {zeros({3})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[adam_step] the gradient of parameter 0 has shape"),
              std::string::npos)
        << e.what();
  }
}

// ---- cuda vs cpu (skip without a GPU) ----

TEST(CudaOptim, EveryOptimizerMatchesCpu) {
  SKIP_WITHOUT_CUDA();
  const Device cuda("cuda");
  for (const Config& c : configs())
    for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16})
      for (bool strided : {false, true}) {
        SCOPED_TRACE(c.name + (strided ? " strided" : "") + " " + dtype_name(dt));
        // Half types: the reference rounds like the path the cuda group takes (fused kernel or
        // op-by-op generic).
        const bool fused = c.fused_on_cuda && !strided;
        const Impl ref =
            (dt == kHalf || dt == kBFloat16) && !fused ? Impl::kGeneric : Impl::kPublic;
        run_pair(c, dt, cuda, ref, Impl::kPublic, strided, true);
        if (HasFatalFailure()) return;
      }
}

TEST(CudaOptim, FusedKernelsCoverManyTensors) {
  SKIP_WITHOUT_CUDA();
  // 100 parameters: more than one table of tensors per launch, sizes around the 64K chunk.
  const Device cuda("cuda");
  for (bool adam : {true, false}) {
    std::vector<Tensor> pc, pg, gc, gg, mc, mg, vc, vg;
    for (int i = 0; i < 100; ++i) {
      const int64_t n = i % 7 == 0 ? 65536 + i : i % 5 == 0 ? 0 : 1 + 37 * i;
      Tensor p = make({n}, false, 7 + i, kFloat), g = make({n}, false, 500 + i, kFloat);
      pc.push_back(p.clone());
      pg.push_back(p.to(cuda));
      gc.push_back(g);
      gg.push_back(g.to(cuda));
      mc.push_back(zeros({n}));
      mg.push_back(zeros({n}, TensorOptions().device(cuda)));
      vc.push_back(zeros({n}));
      vg.push_back(zeros({n}, TensorOptions().device(cuda)));
    }
    std::vector<Tensor> bc(100), bg(100);
    for (int s = 1; s <= 3; ++s) {
      const std::vector<double> steps(100, double(s));
      if (adam) {
        F::adam_step(pc, gc, mc, vc, {}, steps, 0.01, 0.9, 0.999, 1e-8, 0.01, false, false, true);
        F::adam_step(pg, gg, mg, vg, {}, steps, 0.01, 0.9, 0.999, 1e-8, 0.01, false, false, true);
      } else {
        F::sgd_step(pc, gc, bc, 0.1, 0.9, 0.0, 0.0, true, false);
        F::sgd_step(pg, gg, bg, 0.1, 0.9, 0.0, 0.0, true, false);
      }
    }
    for (int i = 0; i < 100; ++i) {
      expect_close(pg[i], pc[i], kFloat, "param " + std::to_string(i));
      if (adam) expect_close(vg[i], vc[i], kFloat, "exp_avg_sq " + std::to_string(i));
      if (!adam) expect_close(bg[i], bc[i], kFloat, "buffer " + std::to_string(i));
    }
  }
}

TEST(CudaOptim, OptimizerClassesStepOnCuda) {
  SKIP_WITHOUT_CUDA();
  const Device cuda("cuda");
  for (int kind = 0; kind < 3; ++kind) {
    Tensor w = make({4, 3}, false, 1, kFloat), b = make({3}, false, 2, kFloat);
    Tensor wc = w.clone().requires_grad_(), bc = b.clone().requires_grad_();
    Tensor wg = w.to(cuda).requires_grad_(), bg = b.to(cuda).requires_grad_();
    auto make_opt = [&](std::vector<Tensor> ps) -> std::unique_ptr<optim::Optimizer> {
      if (kind == 0) return std::make_unique<optim::Adam>(ps, optim::AdamOptions(0.01));
      if (kind == 1) return std::make_unique<optim::SGD>(ps, optim::SGDOptions(0.1).momentum(0.9));
      return std::make_unique<optim::RMSprop>(ps, optim::RMSpropOptions(0.01).centered(true));
    };
    auto oc = make_opt({wc, bc});
    auto og = make_opt({wg, bg});
    Tensor x = make({5, 4}, false, 3, kFloat);
    for (int s = 0; s < 5; ++s) {
      oc->zero_grad();
      og->zero_grad();
      matmul(x, wc).add(bc).pow(2).sum().backward();
      matmul(x.to(cuda), wg).add(bg).pow(2).sum().backward();
      oc->step();
      og->step();
    }
    expect_close(wg, wc, kFloat, "weight of optimizer " + std::to_string(kind));
    expect_close(bg, bc, kFloat, "bias of optimizer " + std::to_string(kind));
    EXPECT_EQ(wg.device(), Device(kCUDA, int8_t(cuda::current_device())));
  }
}

TEST(CudaOptim, MixedDevicesRaise) {
  SKIP_WITHOUT_CUDA();
  const Device cuda("cuda");
  Tensor p = zeros({3}, TensorOptions().device(cuda)), g = ones({3}, TensorOptions().device(cuda));
  std::vector<Tensor> none(1);
  try {
    F::sgd_step({p, zeros({3})}, {g, ones({3})}, none, 0.1, 0, 0, 0, false, false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must be on one device"), std::string::npos) << e.what();
  }
  EXPECT_THROW(F::sgd_step({p}, {ones({3})}, none, 0.1, 0, 0, 0, false, false), Error);
  EXPECT_THROW(F::adam_step({p}, {g}, {zeros({3})}, {zeros({3}, TensorOptions().device(cuda))}, {},
                            {1.0}, 0.1, 0.9, 0.999, 1e-8, 0, false, false, false),
               Error);
  // A CPU group with a cuda parameter: the CPU path's error.
  EXPECT_THROW(F::sgd_step({zeros({3}), p}, {ones({3}), g}, none, 0.1, 0, 0, 0, false, false),
               Error);
}
