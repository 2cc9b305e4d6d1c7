// Optimizers from C++: single steps derived by hand, 8-step trajectories against torch 1.13
// (values pasted below with the script that produced them), layouts, dtypes, state dicts and
// option checks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/optim.h"

using namespace ember;
using namespace ember::optim;

namespace {
std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i]))) << "at " << i;
}

// The problem of the torch snippet below: loss = sum(p1^2 * c1) + sum(p2^2 * c2).
struct Problem {
  Tensor p1, p2, c1, c2;
  explicit Problem(ScalarType dt = kDouble) {
    p1 = tensor({1.0, -2.0, 3.0, 0.5}, TensorOptions(kDouble)).reshape({2, 2}).to(dt);
    p2 = tensor({0.3, -0.7, 1.1}, TensorOptions(kDouble)).to(dt);
    c1 = tensor({1.0, 2.0, 0.5, 3.0}, TensorOptions(kDouble)).reshape({2, 2}).to(dt);
    c2 = tensor({2.0, 1.0, 0.25}, TensorOptions(kDouble)).to(dt);
    p1.requires_grad_();
    p2.requires_grad_();
  }
  std::vector<Tensor> params() const { return {p1, p2}; }
  Tensor loss() const { return (p1 * p1 * c1).sum() + (p2 * p2 * c2).sum(); }
  void run(Optimizer& opt, int steps) const {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      loss().backward();
      opt.step();
    }
  }
  std::vector<double> flat() const {
    auto a = values(p1), b = values(p2);
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};

using Factory = std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>;

template <class O, class Opt>
Factory make(Opt o) {
  return [o](std::vector<Tensor> ps) { return std::make_unique<O>(std::move(ps), o); };
}

std::map<std::string, Factory> factories() {
  return {
      {"Adam", make<Adam>(AdamOptions(0.1))},
      {"AdamAmsgradWd",
       make<Adam>(AdamOptions(0.1).betas({0.8, 0.9}).weight_decay(0.1).amsgrad(true))},
      {"AdamMaximize", make<Adam>(AdamOptions(0.01).maximize(true))},
      {"AdamW", make<AdamW>(AdamWOptions(0.1).weight_decay(0.5).amsgrad(true))},
      {"SGD", make<SGD>(SGDOptions(0.05))},
      {"SGDNesterov", make<SGD>(SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.1))},
      {"SGDDampening", make<SGD>(SGDOptions(0.05).momentum(0.8).dampening(0.3).maximize(true))},
      {"Adagrad",
       make<Adagrad>(
           AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(0.5))},
      {"RMSprop",
       make<RMSprop>(RMSpropOptions(0.01).momentum(0.9).centered(true).weight_decay(0.1))},
      {"Adadelta", make<Adadelta>(AdadeltaOptions(1.0).rho(0.8).weight_decay(0.1))},
      {"Adamax", make<Adamax>(AdamaxOptions(0.1).weight_decay(0.1))},
      {"NAdam", make<NAdam>(NAdamOptions(0.1).weight_decay(0.1))},
      {"RAdam", make<RAdam>(RAdamOptions(0.1).weight_decay(0.1))},
  };
}

// Parameters after 8 steps, from torch 1.13 (float64):
//   O = torch.optim
//   p1 = torch.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=torch.float64, requires_grad=True)
//   p2 = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64, requires_grad=True)
//   c1 = torch.tensor([[1.0, 2.0], [0.5, 3.0]], dtype=torch.float64)
//   c2 = torch.tensor([2.0, 1.0, 0.25], dtype=torch.float64)
//   opt = O.Adam([p1, p2], lr=0.1)   # one per case, options as in factories()
//   for _ in range(8):
//       opt.zero_grad()
//       ((p1 * p1 * c1).sum() + (p2 * p2 * c2).sum()).backward()
//       opt.step()
//   print(torch.cat([p1.detach().flatten(), p2.detach()]).tolist())
const std::map<std::string, std::vector<double>>& torch_values() {
  static const std::map<std::string, std::vector<double>> v = {
      {"Adam",
       {0.23626372452104172, -1.2123369420722405, 2.20724119077699, -0.15694601537435077,
        -0.14054938115010446, 0.028763720982624044, 0.33074484043288077}},
      {"AdamAmsgradWd",
       {0.24530844823494272, -1.2132702978481347, 2.20776032318777, -0.1122646883400554,
        -0.08670349203682662, 0.0024699259861690054, 0.33746686746031923}},
      {"AdamMaximize",
       {1.0801569701345608, -2.0800814439328055, 3.0800549711789866, 0.5802916518417197,
        0.38044094111155147, -0.7802172632982688, 1.1801436610713236}},
      {"AdamW",
       {0.05082639930763998, -0.6820382920342016, 1.3380620208742973, -0.16406891484654718,
        -0.10848512433790533, 0.10617300567064919, 0.11004136129853408}},
      {"SGD",
       {0.43046721000000004, -0.33554432, 1.9902612938671873, 0.028824004999999993,
        0.05033164799999999, -0.30132704699999996, 0.8983169840284881}},
      {"SGDNesterov",
       {-0.3994288025548751, 0.32224348433259015, -0.4444943293834538, 0.03838409112558257,
        -0.04833652264988852, 0.2796001617884125, 0.23994619002298742}},
      {"SGDDampening",
       {3.6343273818417137, -17.315680961985535, 6.242440951318475, 8.638343848676708,
        2.5973521442978305, -2.5440291672891986, 1.6368976683868186}},
      {"Adagrad",
       {0.6224471275861565, -1.5931955590905449, 2.590374792623782, 0.16409392136329418,
        0.04023953080956439, -0.3492870921372155, 0.7757984324735844}},
      {"RMSprop",
       {-0.37316975070169195, -0.3725199743876217, 1.3008221712285415, -0.3583449580717844,
        -0.10966679781970914, 0.4388376037250445, -0.32255068997745856}},
      {"Adadelta",
       {0.9799855718429022, -1.9799323705203968, 2.9799146685264626, 0.48009225936863426,
        0.28023519194386426, -0.6800312597854725, 1.079976008346161}},
      {"Adamax",
       {0.3433620829265573, -1.2732003225467663, 2.2485304081725865, -0.03254951058452719,
        -0.09718567452475455, -0.09909731194371207, 0.43102526452378126}},
      {"NAdam",
       {0.4392022129215699, -1.3966723192380106, 2.383993638680927, 0.040900849447700935,
        -0.023314418194072713, -0.18065906992745234, 0.5309752180778256}},
      {"RAdam",
       {0.16412132047377312, 0.5384085723054867, 1.5303795041877768, -0.22263441328720332,
        -0.08214324118200744, -0.11268407784070998, 0.7816299442428127}},
  };
  return v;
}
}  // namespace

TEST(Optim, AdamFirstStepHand) {
  // Step 1: m = (1-b1) g, v = (1-b2) g^2, bias corrections give m^ = g, v^ = g^2, so the
  // update is lr * g / (|g| + eps) = lr * sign(g) (to eps).
  Tensor p = tensor({1.0, -2.0, 0.0}, TensorOptions(kDouble)).requires_grad_();
  Adam opt({p}, AdamOptions(0.1));
  (p * p).sum().backward();
  opt.step();
  expect_near(values(p), {0.9, -1.9, 0.0}, 1e-7);
  auto& st = static_cast<AdamParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
  EXPECT_EQ(st.step(), 1);
  expect_near(values(st.exp_avg()), {0.2, -0.4, 0.0}, 1e-12);
  expect_near(values(st.exp_avg_sq()), {0.004, 0.016, 0.0}, 1e-12);
  EXPECT_FALSE(st.max_exp_avg_sq().defined());
}

TEST(Optim, SGDStepsHand) {
  // p <- p - lr g; with momentum m the buffer starts at g and then b <- m b + g.
  Tensor p = tensor({1.0, -2.0}, TensorOptions(kDouble)).requires_grad_();
  SGD opt({p}, SGDOptions(0.1).momentum(0.5));
  (p * p).sum().backward();  // g = 2p = (2, -4)
  opt.step();                // b = (2, -4), p = (0.8, -1.6)
  expect_near(values(p), {0.8, -1.6}, 1e-14);
  opt.zero_grad();
  (p * p).sum().backward();  // g = (1.6, -3.2), b = (2.6, -5.2), p = (0.54, -1.08)
  opt.step();
  expect_near(values(p), {0.54, -1.08}, 1e-14);
}

TEST(Optim, MatchesTorchTrajectories) {
  auto f = factories();
  ASSERT_EQ(f.size(), torch_values().size());
  for (auto& [name, expected] : torch_values()) {
    SCOPED_TRACE(name);
    Problem pr;
    auto opt = f.at(name)(pr.params());
    pr.run(*opt, 8);
    expect_near(pr.flat(), expected, 1e-12);
  }
}

TEST(Optim, Float32AndBFloat16FollowFloat64) {
  for (auto& [name, fac] : factories()) {
    SCOPED_TRACE(name);
    Problem ref, f32(kFloat), bf(kBFloat16);
    auto o1 = fac(ref.params());
    auto o2 = fac(f32.params());
    auto o3 = fac(bf.params());
    ref.run(*o1, 8);
    f32.run(*o2, 8);
    bf.run(*o3, 2);
    EXPECT_EQ(f32.p1.scalar_type(), kFloat);
    EXPECT_EQ(bf.p1.scalar_type(), kBFloat16);
    expect_near(f32.flat(), ref.flat(), 2e-5);
    for (double v : bf.flat()) EXPECT_TRUE(std::isfinite(v));
  }
}

TEST(Optim, StridedParamsAndGradsMatchContiguous) {
  for (auto& [name, fac] : factories()) {
    SCOPED_TRACE(name);
    Tensor base = tensor({1.0, -2.0, 3.0, 0.5, 0.25, -1.5}, TensorOptions(kDouble)).reshape({2, 3});
    Tensor a = base.clone().requires_grad_();
    Tensor b = base.t().contiguous().t().requires_grad_();  // same values, column-major
    ASSERT_FALSE(b.is_contiguous());
    Tensor c = tensor({1.0, 2.0, 0.5, 3.0, 1.5, 0.75}, TensorOptions(kDouble)).reshape({2, 3});
    auto oa = fac({a});
    auto ob = fac({b});
    for (int i = 0; i < 5; ++i) {
      oa->zero_grad();
      ob->zero_grad();
      (a * a * c).sum().backward();
      (b * b * c).sum().backward();
      // Every other step a gradient with a layout different from the parameter's.
      if (i % 2) b.mutable_grad() = b.grad().contiguous();
      oa->step();
      ob->step();
    }
    expect_near(values(b), values(a), 1e-14);
    EXPECT_FALSE(b.is_contiguous());
  }
}

TEST(Optim, ZeroSizeZeroDimAndMissingGrads) {
  for (auto& [name, fac] : factories()) {
    SCOPED_TRACE(name);
    Tensor s = scalar_tensor(Scalar(1.5), TensorOptions(kDouble)).requires_grad_();
    Tensor z = zeros({0, 3}, TensorOptions(kDouble)).requires_grad_();
    Tensor unused = ones({2}, TensorOptions(kDouble)).requires_grad_();
    auto opt = fac({s, z, unused});
    for (int i = 0; i < 3; ++i) {
      opt->zero_grad();
      ((s * s).sum() + z.sum()).backward();
      opt->step();
    }
    EXPECT_NE(values(s)[0], 1.5);
    EXPECT_EQ(z.numel(), 0);
    expect_near(values(unused), {1.0, 1.0}, 0);
    if (name.rfind("Adagrad", 0) != 0) {  // Adagrad creates every state up front, as torch
      EXPECT_EQ(opt->state().count(unused.unsafeGetTensorImpl()), 0u);
    }
  }
}

TEST(Optim, StepBumpsVersionAndKeepsLeaf) {
  Tensor p = ones({3}, TensorOptions(kFloat)).requires_grad_();
  Adam opt({p}, AdamOptions(0.1));
  (p * p).sum().backward();
  uint32_t v = p._version();
  opt.step();
  EXPECT_GT(p._version(), v);
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  // A graph that saved p before the step notices the in-place update.
  Tensor y = (p * p).sum();
  opt.step();
  EXPECT_THROW(y.backward(), Error);
}

TEST(Optim, ParamGroupsWithDifferentOptions) {
  Problem a, b;
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a.p1});
  groups.emplace_back(std::vector<Tensor>{a.p2},
                      std::make_unique<AdamOptions>(AdamOptions(0.05).amsgrad(true)));
  Adam both(std::move(groups), AdamOptions(0.1));
  EXPECT_EQ(both.param_groups().size(), 2u);
  EXPECT_DOUBLE_EQ(both.param_groups()[0].options().get_lr(), 0.1);
  EXPECT_DOUBLE_EQ(both.param_groups()[1].options().get_lr(), 0.05);
  Adam o1({b.p1}, AdamOptions(0.1));
  Adam o2({b.p2}, AdamOptions(0.05).amsgrad(true));
  for (int i = 0; i < 6; ++i) {
    both.zero_grad();
    o1.zero_grad();
    o2.zero_grad();
    a.loss().backward();
    b.loss().backward();
    both.step();
    o1.step();
    o2.step();
  }
  expect_near(a.flat(), b.flat(), 0);
  EXPECT_THROW(Adam({a.p1, a.p1}), ValueError);
}

TEST(Optim, StateDictRoundTrip) {
  for (auto& [name, fac] : factories()) {
    SCOPED_TRACE(name);
    Problem ref, pr;
    auto o_ref = fac(ref.params());
    ref.run(*o_ref, 8);
    auto o1 = fac(pr.params());
    pr.run(*o1, 4);
    TensorDict sd = o1->state_dict();
    EXPECT_TRUE(sd.contains("param_groups.0.lr"));
    EXPECT_TRUE(sd.contains("param_groups.0.params"));
    EXPECT_EQ(values(sd["param_groups.0.params"]), (std::vector<double>{0, 1}));
    // Continue in a new optimizer on copies of the parameters.
    Problem cont;
    {
      NoGradGuard g;
      cont.p1.copy_(pr.p1);
      cont.p2.copy_(pr.p2);
    }
    auto o2 = fac(cont.params());
    o2->load_state_dict(sd);
    cont.run(*o2, 4);
    expect_near(cont.flat(), ref.flat(), 1e-13);
  }
}

TEST(Optim, StateDictKeysAndErrors) {
  Problem pr;
  Adam opt(pr.params(), AdamOptions(0.1).amsgrad(true));
  pr.run(opt, 2);
  TensorDict sd = opt.state_dict();
  for (const char* k : {"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq",
                        "state.1.max_exp_avg_sq", "param_groups.0.betas", "param_groups.0.eps",
                        "param_groups.0.amsgrad", "param_groups.0.params"})
    EXPECT_TRUE(sd.contains(k)) << k;
  EXPECT_EQ(sd["state.1.step"].item<int64_t>(), 2);
  EXPECT_EQ(sd["param_groups.0.amsgrad"].scalar_type(), kBool);
  EXPECT_EQ(sd["param_groups.0.lr"].dim(), 0);
  // Wrong number of parameters: nothing changes.
  Problem other;
  Adam small({other.p1}, AdamOptions(0.5));
  EXPECT_THROW(small.load_state_dict(sd), ValueError);
  EXPECT_DOUBLE_EQ(small.param_groups()[0].options().get_lr(), 0.5);
  // Wrong state shape.
  TensorDict bad = sd;
  bad["state.0.exp_avg"] = zeros({5}, TensorOptions(kDouble));
  Adam same(other.params(), AdamOptions(0.5));
  EXPECT_THROW(same.load_state_dict(bad), ValueError);
  EXPECT_TRUE(same.state().empty());
  // Missing option.
  TensorDict missing("Key");
  for (const auto& it : sd)
    if (it.key() != "param_groups.0.eps") missing.insert(it.key(), it.value());
  EXPECT_THROW(same.load_state_dict(missing), Error);
}

TEST(Optim, ZeroGradSemantics) {
  Tensor p = ones({2}, TensorOptions(kDouble)).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  (p * 3).sum().backward();
  Tensor g = p.grad();
  opt.zero_grad(false);
  ASSERT_TRUE(p.grad().defined());
  expect_near(values(p.grad()), {0, 0}, 0);
  EXPECT_EQ(p.grad().unsafeGetTensorImpl(), g.unsafeGetTensorImpl());
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  opt.step();  // no grads: nothing happens
  expect_near(values(p), {1, 1}, 0);
}

TEST(Optim, ClosureReturnsLoss) {
  Tensor p = ones({2}, TensorOptions(kDouble)).requires_grad_();
  SGD opt({p}, SGDOptions(0.1));
  Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (p * p).sum();
    l.backward();
    return l;
  });
  EXPECT_DOUBLE_EQ(loss.item<double>(), 2.0);
  expect_near(values(p), {0.8, 0.8}, 1e-15);
  EXPECT_FALSE(opt.step().defined());
}

TEST(Optim, InvalidOptions) {
  Tensor p = ones({2}).requires_grad_();
  try {
    Adam({p}, AdamOptions(-1));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Invalid learning rate: -1.0"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Adam({p}, AdamOptions().betas({1.0, 0.9})), ValueError);
  EXPECT_THROW(Adam({p}, AdamOptions().eps(-1)), ValueError);
  EXPECT_THROW(AdamW({p}, AdamWOptions().weight_decay(-1)), ValueError);
  EXPECT_THROW(SGD({p}, SGDOptions(0.1).nesterov(true)), ValueError);
  EXPECT_THROW(SGD({p}, SGDOptions(0.1).momentum(-0.5)), ValueError);
  EXPECT_THROW(Adagrad({p}, AdagradOptions().lr_decay(-1)), ValueError);
  EXPECT_THROW(RMSprop({p}, RMSpropOptions().alpha(-1)), ValueError);
  EXPECT_THROW(Adadelta({p}, AdadeltaOptions().rho(1.5)), ValueError);
  EXPECT_THROW(NAdam({p}, NAdamOptions().momentum_decay(-1)), ValueError);
  EXPECT_THROW(RAdam({p}, RAdamOptions().betas({0.9, -0.1})), ValueError);
  // A gradient of the wrong shape is caught before anything is written.
  Adam opt({p});
  p.mutable_grad() = ones({3});
  EXPECT_THROW(opt.step(), Error);
  expect_near(values(p), {1, 1}, 0);
}

TEST(Optim, FusedAdamMatchesOpByOpReference) {
  // Many tensors, sizes around the chunking boundary, several threads.
  std::vector<int64_t> sizes = {1, 7, 16384, 16385, 40000};
  std::vector<Tensor> ps, gs, m, v, vm;
  for (int64_t n : sizes) {
    ps.push_back(randn({n}, TensorOptions(kDouble)));
    gs.push_back(randn({n}, TensorOptions(kDouble)));
    m.push_back(zeros({n}, TensorOptions(kDouble)));
    v.push_back(zeros({n}, TensorOptions(kDouble)));
    vm.push_back(zeros({n}, TensorOptions(kDouble)));
  }
  std::vector<Tensor> ref_p;
  for (auto& p : ps) ref_p.push_back(p.clone());
  const double lr = 0.01, b1 = 0.9, b2 = 0.99, eps = 1e-8, wd = 0.1;
  std::vector<Tensor> rm, rv, rvm;
  for (auto& p : ps) {
    rm.push_back(zeros_like(p));
    rv.push_back(zeros_like(p));
    rvm.push_back(zeros_like(p));
  }
  for (int step = 1; step <= 3; ++step) {
    functional::adam_step(ps, gs, m, v, vm, std::vector<double>(sizes.size(), step), lr, b1, b2,
                          eps, wd, true, false, false);
    for (size_t i = 0; i < sizes.size(); ++i) {
      Tensor g = gs[i] + ref_p[i] * wd;
      rm[i] = rm[i] * b1 + g * (1 - b1);
      rv[i] = rv[i] * b2 + g * g * (1 - b2);
      rvm[i] = maximum(rvm[i], rv[i]);
      Tensor denom = rvm[i].sqrt() / std::sqrt(1 - std::pow(b2, step)) + eps;
      ref_p[i] = ref_p[i] - rm[i] / denom * (lr / (1 - std::pow(b1, step)));
    }
  }
  for (size_t i = 0; i < sizes.size(); ++i) expect_near(values(ps[i]), values(ref_p[i]), 1e-12);
  EXPECT_THROW(
      functional::adam_step(ps, gs, m, {}, vm, {1.0}, lr, b1, b2, eps, wd, true, false, false),
      ValueError);
}

// ---------------------------------------------------------------------------------------------
// LR schedulers
// ---------------------------------------------------------------------------------------------

namespace {
// Rates of both groups at epochs 0..24 from torch 1.13, produced by:
//   S = torch.optim.lr_scheduler
//   p1, p2 = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
//   o = torch.optim.SGD([{"params": [p1]}, {"params": [p2], "lr": 0.05}], lr=0.1, momentum=0.9)
//   s = S.StepLR(o, 4, gamma=0.5)   # one per case, arguments as in SchedulerFactories()
//   for e in range(25):
//       out += s.get_last_lr(); o.step(); s.step()
// SequentialLR: [ConstantLR(o, factor=0.5, total_iters=3), ExponentialLR(o, 0.9)], milestones
// [5]; ChainedScheduler: the same two; ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1,
// threshold=0.01) stepped with kMetrics, recording the groups' lr after each step.
const std::map<std::string, std::vector<double>>& torch_rates() {
  static const std::map<std::string, std::vector<double>> v = {
      {"LambdaLR",
       {0.1,
        0.05,
        0.09000000000000001,
        0.045000000000000005,
        0.08100000000000002,
        0.04050000000000001,
        0.0729,
        0.03645,
        0.06561,
        0.032805,
        0.05904900000000001,
        0.029524500000000006,
        0.05314410000000001,
        0.026572050000000003,
        0.04782969000000001,
        0.023914845000000004,
        0.04304672100000001,
        0.021523360500000005,
        0.03874204890000001,
        0.019371024450000007,
        0.03486784401000001,
        0.017433922005000005,
        0.031381059609000006,
        0.015690529804500003,
        0.028242953648100012,
        0.014121476824050006,
        0.02541865828329001,
        0.012709329141645005,
        0.02287679245496101,
        0.011438396227480505,
        0.02058911320946491,
        0.010294556604732455,
        0.018530201888518418,
        0.009265100944259209,
        0.016677181699666577,
        0.008338590849833289,
        0.015009463529699918,
        0.007504731764849959,
        0.013508517176729929,
        0.006754258588364964,
        0.012157665459056936,
        0.006078832729528468,
        0.010941898913151242,
        0.005470949456575621,
        0.00984770902183612,
        0.00492385451091806,
        0.008862938119652507,
        0.004431469059826254,
        0.007976644307687256,
        0.003988322153843628}},
      {"MultiplicativeLR",
       {0.1,
        0.05,
        0.095,
        0.0475,
        0.09025,
        0.045125,
        0.0857375,
        0.04286875,
        0.08145062499999998,
        0.04072531249999999,
        0.07737809374999999,
        0.038689046874999994,
        0.07350918906249998,
        0.03675459453124999,
        0.06983372960937498,
        0.03491686480468749,
        0.06634204312890622,
        0.03317102156445311,
        0.0630249409724609,
        0.03151247048623045,
        0.05987369392383786,
        0.02993684696191893,
        0.05688000922764597,
        0.028440004613822983,
        0.05403600876626367,
        0.027018004383131834,
        0.05133420832795048,
        0.02566710416397524,
        0.04876749791155295,
        0.024383748955776476,
        0.046329123015975304,
        0.023164561507987652,
        0.04401266686517654,
        0.02200633343258827,
        0.04181203352191771,
        0.020906016760958854,
        0.039721431845821824,
        0.019860715922910912,
        0.037735360253530734,
        0.018867680126765367,
        0.035848592240854196,
        0.017924296120427098,
        0.03405616262881148,
        0.01702808131440574,
        0.03235335449737091,
        0.016176677248685455,
        0.030735686772502362,
        0.015367843386251181,
        0.029198902433877242,
        0.014599451216938621}},
      {"StepLR",
       {0.1,       0.05,      0.1,      0.05,      0.1,      0.05,      0.1,      0.05,
        0.05,      0.025,     0.05,     0.025,     0.05,     0.025,     0.05,     0.025,
        0.025,     0.0125,    0.025,    0.0125,    0.025,    0.0125,    0.025,    0.0125,
        0.0125,    0.00625,   0.0125,   0.00625,   0.0125,   0.00625,   0.0125,   0.00625,
        0.00625,   0.003125,  0.00625,  0.003125,  0.00625,  0.003125,  0.00625,  0.003125,
        0.003125,  0.0015625, 0.003125, 0.0015625, 0.003125, 0.0015625, 0.003125, 0.0015625,
        0.0015625, 0.00078125}},
      {"MultiStepLR",
       {0.1,
        0.05,
        0.1,
        0.05,
        0.1,
        0.05,
        0.03,
        0.015,
        0.03,
        0.015,
        0.03,
        0.015,
        0.03,
        0.015,
        0.0026999999999999997,
        0.0013499999999999999,
        0.0026999999999999997,
        0.0013499999999999999,
        0.0026999999999999997,
        0.0013499999999999999,
        0.0026999999999999997,
        0.0013499999999999999,
        0.0026999999999999997,
        0.0013499999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999,
        0.0008099999999999998,
        0.0004049999999999999}},
      {"ConstantLR", {0.025, 0.0125, 0.025, 0.0125, 0.025, 0.0125, 0.025, 0.0125, 0.025, 0.0125,
                      0.025, 0.0125, 0.1,   0.05,   0.1,   0.05,   0.1,   0.05,   0.1,   0.05,
                      0.1,   0.05,   0.1,   0.05,   0.1,   0.05,   0.1,   0.05,   0.1,   0.05,
                      0.1,   0.05,   0.1,   0.05,   0.1,   0.05,   0.1,   0.05,   0.1,   0.05,
                      0.1,   0.05,   0.1,   0.05,   0.1,   0.05,   0.1,   0.05,   0.1,   0.05}},
      {"LinearLR",
       {0.020000000000000004,
        0.010000000000000002,
        0.028750000000000005,
        0.014375000000000002,
        0.037500000000000006,
        0.018750000000000003,
        0.046250000000000006,
        0.023125000000000003,
        0.05500000000000001,
        0.027500000000000004,
        0.06375000000000001,
        0.03187500000000001,
        0.07250000000000001,
        0.036250000000000004,
        0.08125,
        0.040625,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005,
        0.09000000000000001,
        0.045000000000000005}},
      {"ExponentialLR",
       {0.1,
        0.05,
        0.085,
        0.0425,
        0.07225000000000001,
        0.036125000000000004,
        0.06141250000000001,
        0.030706250000000004,
        0.05220062500000001,
        0.026100312500000004,
        0.044370531250000005,
        0.022185265625000002,
        0.0377149515625,
        0.01885747578125,
        0.032057708828125,
        0.0160288544140625,
        0.027249052503906253,
        0.013624526251953126,
        0.023161694628320316,
        0.011580847314160158,
        0.019687440434072268,
        0.009843720217036134,
        0.01673432436896143,
        0.008367162184480715,
        0.014224175713617214,
        0.007112087856808607,
        0.012090549356574632,
        0.006045274678287316,
        0.010276966953088437,
        0.005138483476544218,
        0.008735421910125172,
        0.004367710955062586,
        0.007425108623606395,
        0.0037125543118031977,
        0.006311342330065436,
        0.003155671165032718,
        0.005364640980555621,
        0.0026823204902778103,
        0.004559944833472277,
        0.0022799724167361386,
        0.0038759531084514355,
        0.0019379765542257177,
        0.00329456014218372,
        0.00164728007109186,
        0.0028003761208561617,
        0.0014001880604280809,
        0.002380319702727737,
        0.0011901598513638686,
        0.0020232717473185765,
        0.0010116358736592882}},
      {"PolynomialLR",
       {0.1,
        0.05,
        0.08100000000000002,
        0.04050000000000001,
        0.06400000000000002,
        0.03200000000000001,
        0.048999999999999995,
        0.024499999999999997,
        0.036000000000000004,
        0.018000000000000002,
        0.025000000000000005,
        0.012500000000000002,
        0.016000000000000007,
        0.008000000000000004,
        0.009000000000000008,
        0.004500000000000004,
        0.004,
        0.002,
        0.001,
        0.0005,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0}},
      {"CosineAnnealingLR",
       {0.1,
        0.05,
        0.09336825748732973,
        0.046717622392718754,
        0.07525000000000001,
        0.037750000000000006,
        0.0505,
        0.025500000000000002,
        0.025750000000000012,
        0.013250000000000005,
        0.007631742512670284,
        0.004282377607281252,
        0.001,
        0.001,
        0.007631742512670284,
        0.004282377607281252,
        0.025750000000000002,
        0.013250000000000001,
        0.05050000000000004,
        0.02550000000000002,
        0.07525000000000008,
        0.03775000000000004,
        0.0933682574873298,
        0.04671762239271879,
        0.1000000000000001,
        0.05000000000000005,
        0.09336825748732981,
        0.046717622392718795,
        0.07525000000000011,
        0.037750000000000054,
        0.050500000000000114,
        0.025500000000000054,
        0.025750000000000068,
        0.013250000000000033,
        0.007631742512670285,
        0.004282377607281252,
        0.001,
        0.001,
        0.007631742512670284,
        0.004282377607281252,
        0.025750000000000096,
        0.013250000000000046,
        0.05050000000000015,
        0.02550000000000007,
        0.0752500000000002,
        0.0377500000000001,
        0.09336825748732999,
        0.046717622392718886,
        0.10000000000000034,
        0.05000000000000017}},
      {"CosineAnnealingWarmRestarts",
       {0.1,
        0.05,
        0.07550000000000001,
        0.038000000000000006,
        0.02650000000000001,
        0.014000000000000005,
        0.1,
        0.05,
        0.09343524478543751,
        0.04678460969082653,
        0.07550000000000001,
        0.038000000000000006,
        0.051000000000000004,
        0.026000000000000002,
        0.02650000000000001,
        0.014000000000000005,
        0.008564755214562503,
        0.005215390309173471,
        0.1,
        0.05,
        0.09833036548816435,
        0.04918221983093764,
        0.09343524478543751,
        0.04678460969082653,
        0.08564823227814083,
        0.04297056274847714,
        0.07550000000000001,
        0.038000000000000006,
        0.06368213321002351,
        0.0322116570824605,
        0.051000000000000004,
        0.026000000000000002,
        0.03831786678997649,
        0.019788342917539503,
        0.02650000000000001,
        0.014000000000000005,
        0.016351767721859173,
        0.009029437251522861,
        0.008564755214562503,
        0.005215390309173471,
        0.0036696345118356582,
        0.0028177801690623633,
        0.1,
        0.05,
        0.09958079820731672,
        0.04979467667297145,
        0.09833036548816435,
        0.04918221983093764,
        0.09627009709305305,
        0.04817310878027088}},
      {"CyclicLR",
       {0.01,
        0.01,
        0.032499999999999994,
        0.032499999999999994,
        0.054999999999999986,
        0.054999999999999986,
        0.07750000000000001,
        0.07750000000000001,
        0.1,
        0.1,
        0.06999999999999998,
        0.06999999999999998,
        0.03999999999999999,
        0.03999999999999999,
        0.01,
        0.01,
        0.021249999999999998,
        0.021249999999999998,
        0.032499999999999994,
        0.032499999999999994,
        0.043750000000000025,
        0.043750000000000025,
        0.054999999999999986,
        0.054999999999999986,
        0.03999999999999999,
        0.03999999999999999,
        0.024999999999999994,
        0.024999999999999994,
        0.01,
        0.01,
        0.015624999999999998,
        0.015624999999999998,
        0.021249999999999998,
        0.021249999999999998,
        0.026874999999999996,
        0.026874999999999996,
        0.03249999999999999,
        0.03249999999999999,
        0.024999999999999994,
        0.024999999999999994,
        0.017499999999999998,
        0.017499999999999998,
        0.01,
        0.01,
        0.01281249999999999,
        0.01281249999999999,
        0.015624999999999998,
        0.015624999999999998,
        0.018437500000000006,
        0.018437500000000006}},
      {"CyclicLRExp",
       {0.01,
        0.01,
        0.02746000000000002,
        0.02746000000000002,
        0.0438724,
        0.0438724,
        0.05928434200000001,
        0.05928434200000001,
        0.07374108231999998,
        0.07374108231999998,
        0.087286062313,
        0.087286062313,
        0.06997398435488798,
        0.06997398435488798,
        0.05363107361818102,
        0.05363107361818102,
        0.03821476093975705,
        0.03821476093975705,
        0.023684159055782188,
        0.023684159055782188,
        0.01,
        0.01,
        0.02287542525558546,
        0.02287542525558546,
        0.03497832499583579,
        0.03497832499583579,
        0.04634346286894101,
        0.04634346286894101,
        0.05700421197716373,
        0.05700421197716373,
        0.06699260702231102,
        0.06699260702231102,
        0.05422626304931335,
        0.05422626304931335,
        0.04217460636837545,
        0.04217460636837545,
        0.030806245451549488,
        0.030806245451549488,
        0.0200910290440015,
        0.0200910290440015,
        0.01,
        0.01,
        0.019494649227501014,
        0.019494649227501014,
        0.028419619501351967,
        0.028419619501351967,
        0.03680054637446706,
        0.03680054637446706,
        0.044662039977644084,
        0.044662039977644084}},
      {"OneCycleLR",
       {0.020000000000000018,
        0.020000000000000018,
        0.03826891219729123,
        0.03826891219729123,
        0.09029437251522865,
        0.09029437251522865,
        0.16815597623237843,
        0.16815597623237843,
        0.26,
        0.26,
        0.3518440237676215,
        0.3518440237676215,
        0.42970562748477137,
        0.42970562748477137,
        0.4817310878027088,
        0.4817310878027088,
        0.5,
        0.5,
        0.49720771772545586,
        0.49720771772545586,
        0.4888932458737294,
        0.4888932458737294,
        0.47524231600673683,
        0.47524231600673683,
        0.4565598673402244,
        0.4565598673402244,
        0.4332632349055847,
        0.4332632349055847,
        0.40587282697488153,
        0.40587282697488153,
        0.3750005,
        0.3750005,
        0.34133589075057447,
        0.34133589075057447,
        0.30563101096814466,
        0.30563101096814466,
        0.2686834486665125,
        0.2686834486665125,
        0.23131855133348753,
        0.23131855133348753,
        0.19437098903185537,
        0.19437098903185537,
        0.15866610924942562,
        0.15866610924942562,
        0.12500150000000004,
        0.12500150000000004,
        0.09412917302511849,
        0.09412917302511849,
        0.0667387650944153,
        0.0667387650944153}},
      {"OneCycleLR3",
       {0.02,
        0.02,
        0.08,
        0.08,
        0.13999999999999999,
        0.13999999999999999,
        0.19999999999999998,
        0.19999999999999998,
        0.26,
        0.26,
        0.32,
        0.32,
        0.38,
        0.38,
        0.44,
        0.44,
        0.5,
        0.5,
        0.44,
        0.44,
        0.38,
        0.38,
        0.32,
        0.32,
        0.26,
        0.26,
        0.2,
        0.2,
        0.14,
        0.14,
        0.08000000000000002,
        0.08000000000000002,
        0.020000000000000018,
        0.020000000000000018,
        0.018461692307692307,
        0.018461692307692307,
        0.016923384615384614,
        0.016923384615384614,
        0.015385076923076923,
        0.015385076923076923,
        0.01384676923076923,
        0.01384676923076923,
        0.012308461538461539,
        0.012308461538461539,
        0.010770153846153846,
        0.010770153846153846,
        0.009231846153846153,
        0.009231846153846153,
        0.00769353846153846,
        0.00769353846153846}},
      {"SequentialLR",
       {0.05,
        0.025,
        0.05,
        0.025,
        0.05,
        0.025,
        0.1,
        0.05,
        0.1,
        0.05,
        0.1,
        0.05,
        0.09000000000000001,
        0.045000000000000005,
        0.08100000000000002,
        0.04050000000000001,
        0.07290000000000002,
        0.03645000000000001,
        0.06561000000000002,
        0.03280500000000001,
        0.05904900000000002,
        0.02952450000000001,
        0.05314410000000002,
        0.02657205000000001,
        0.04782969000000002,
        0.02391484500000001,
        0.043046721000000024,
        0.021523360500000012,
        0.03874204890000002,
        0.01937102445000001,
        0.03486784401000002,
        0.01743392200500001,
        0.03138105960900001,
        0.015690529804500006,
        0.028242953648100012,
        0.014121476824050006,
        0.025418658283290013,
        0.012709329141645007,
        0.022876792454961013,
        0.011438396227480507,
        0.020589113209464913,
        0.010294556604732457,
        0.01853020188851842,
        0.00926510094425921,
        0.01667718169966658,
        0.00833859084983329,
        0.015009463529699923,
        0.007504731764849962,
        0.013508517176729932,
        0.006754258588364966}},
      {"ChainedScheduler",
       {0.05,
        0.025,
        0.045000000000000005,
        0.022500000000000003,
        0.04050000000000001,
        0.020250000000000004,
        0.07290000000000002,
        0.03645000000000001,
        0.06561000000000002,
        0.03280500000000001,
        0.05904900000000002,
        0.02952450000000001,
        0.05314410000000002,
        0.02657205000000001,
        0.04782969000000002,
        0.02391484500000001,
        0.043046721000000024,
        0.021523360500000012,
        0.03874204890000002,
        0.01937102445000001,
        0.03486784401000002,
        0.01743392200500001,
        0.03138105960900001,
        0.015690529804500006,
        0.028242953648100012,
        0.014121476824050006,
        0.025418658283290013,
        0.012709329141645007,
        0.022876792454961013,
        0.011438396227480507,
        0.020589113209464913,
        0.010294556604732457,
        0.01853020188851842,
        0.00926510094425921,
        0.01667718169966658,
        0.00833859084983329,
        0.015009463529699923,
        0.007504731764849962,
        0.013508517176729932,
        0.006754258588364966,
        0.01215766545905694,
        0.00607883272952847,
        0.010941898913151246,
        0.005470949456575623,
        0.009847709021836121,
        0.0049238545109180605,
        0.00886293811965251,
        0.004431469059826255,
        0.007976644307687259,
        0.0039883221538436296}},
      {"ReduceLROnPlateau",
       {0.1,      0.05,    0.1,      0.05,    0.1,     0.05,    0.1,     0.05,     0.05,
        0.025,    0.05,    0.025,    0.05,    0.025,   0.05,    0.025,   0.05,     0.025,
        0.025,    0.0125,  0.025,    0.0125,  0.025,   0.0125,  0.025,   0.0125,   0.025,
        0.0125,   0.0125,  0.00625,  0.0125,  0.00625, 0.0125,  0.00625, 0.0125,   0.00625,
        0.0125,   0.00625, 0.0125,   0.00625, 0.0125,  0.00625, 0.00625, 0.003125, 0.00625,
        0.003125, 0.00625, 0.003125, 0.00625, 0.003125}},
  };
  return v;
}

const std::vector<double> kMetrics = {1.0,  0.9,  0.95, 0.91, 0.9, 0.89, 0.7, 0.71, 0.72,
                                      0.73, 0.74, 0.6,  0.6,  0.6, 0.6,  0.6, 0.6,  0.6,
                                      0.5,  0.5,  0.5,  0.5,  0.5, 0.5,  0.5};

struct SchedFixture {
  Tensor p1 = zeros({1}).requires_grad_(), p2 = zeros({1}).requires_grad_();
  std::unique_ptr<SGD> opt;
  SchedFixture() {
    std::vector<OptimizerParamGroup> g;
    g.emplace_back(std::vector<Tensor>{p1});
    g.emplace_back(std::vector<Tensor>{p2},
                   std::make_unique<SGDOptions>(SGDOptions(0.05).momentum(0.9)));
    opt = std::make_unique<SGD>(std::move(g), SGDOptions(0.1).momentum(0.9));
  }
};

using SchedFactory = std::function<std::unique_ptr<LRScheduler>(Optimizer&)>;
std::map<std::string, SchedFactory> SchedulerFactories() {
  return {
      {"LambdaLR",
       [](Optimizer& o) {
         return std::make_unique<LambdaLR>(o, [](int64_t e) { return std::pow(0.9, double(e)); });
       }},
      {"MultiplicativeLR",
       [](Optimizer& o) {
         return std::make_unique<MultiplicativeLR>(o, [](int64_t) { return 0.95; });
       }},
      {"StepLR", [](Optimizer& o) { return std::make_unique<StepLR>(o, 4, 0.5); }},
      {"MultiStepLR",
       [](Optimizer& o) {
         return std::make_unique<MultiStepLR>(o, std::vector<int64_t>{3, 7, 7, 12}, 0.3);
       }},
      {"ConstantLR", [](Optimizer& o) { return std::make_unique<ConstantLR>(o, 0.25, 6); }},
      {"LinearLR", [](Optimizer& o) { return std::make_unique<LinearLR>(o, 0.2, 0.9, 8); }},
      {"ExponentialLR", [](Optimizer& o) { return std::make_unique<ExponentialLR>(o, 0.85); }},
      {"PolynomialLR", [](Optimizer& o) { return std::make_unique<PolynomialLR>(o, 10, 2.0); }},
      {"CosineAnnealingLR",
       [](Optimizer& o) { return std::make_unique<CosineAnnealingLR>(o, 6, 0.001); }},
      {"CosineAnnealingWarmRestarts",
       [](Optimizer& o) { return std::make_unique<CosineAnnealingWarmRestarts>(o, 3, 2, 0.002); }},
      {"CyclicLR",
       [](Optimizer& o) {
         return std::make_unique<CyclicLR>(
             o, 0.01, 0.1, CyclicLROptions().step_size_up(4).step_size_down(3).mode("triangular2"));
       }},
      {"CyclicLRExp",
       [](Optimizer& o) {
         return std::make_unique<CyclicLR>(
             o, 0.01, 0.1, CyclicLROptions().step_size_up(5).mode("exp_range").gamma(0.97));
       }},
      {"OneCycleLR", [](Optimizer& o) { return std::make_unique<OneCycleLR>(o, 0.5, 30); }},
      {"OneCycleLR3",
       [](Optimizer& o) {
         return std::make_unique<OneCycleLR>(
             o, 0.5, 30, OneCycleLROptions().three_phase(true).anneal_strategy("linear"));
       }},
  };
}
}  // namespace

TEST(LRScheduler, MatchesTorchEpochByEpoch) {
  for (auto& [name, make_sched] : SchedulerFactories()) {
    SCOPED_TRACE(name);
    SchedFixture f;
    auto s = make_sched(*f.opt);
    std::vector<double> got;
    for (int e = 0; e < 25; ++e) {
      EXPECT_EQ(s->last_epoch(), e);
      got.insert(got.end(), s->get_last_lr().begin(), s->get_last_lr().end());
      EXPECT_DOUBLE_EQ(f.opt->param_groups()[0].options().get_lr(), s->get_last_lr()[0]);
      f.opt->step();
      s->step();
    }
    expect_near(got, torch_rates().at(name), 1e-13);
  }
}

TEST(LRScheduler, SequentialChainedAndPlateau) {
  {
    SchedFixture f;
    ConstantLR a(*f.opt, 0.5, 3);
    ExponentialLR b(*f.opt, 0.9);
    SequentialLR s(*f.opt, {&a, &b}, {5});
    std::vector<double> got;
    for (int e = 0; e < 25; ++e) {
      got.insert(got.end(), s.get_last_lr().begin(), s.get_last_lr().end());
      s.step();
    }
    expect_near(got, torch_rates().at("SequentialLR"), 1e-13);
    EXPECT_THROW(SequentialLR(*f.opt, {&a, &b}, {}), ValueError);
  }
  {
    SchedFixture f;
    ConstantLR a(*f.opt, 0.5, 3);
    ExponentialLR b(*f.opt, 0.9);
    ChainedScheduler s({&a, &b});
    std::vector<double> got;
    for (int e = 0; e < 25; ++e) {
      got.insert(got.end(), s.get_last_lr().begin(), s.get_last_lr().end());
      s.step();
    }
    expect_near(got, torch_rates().at("ChainedScheduler"), 1e-13);
  }
  {
    SchedFixture f;
    ReduceLROnPlateau s(
        *f.opt, ReduceLROnPlateauOptions().patience(2).factor(0.5).cooldown(1).threshold(0.01));
    std::vector<double> got;
    for (double m : kMetrics) {
      s.step(m);
      got.insert(got.end(), s.get_last_lr().begin(), s.get_last_lr().end());
    }
    expect_near(got, torch_rates().at("ReduceLROnPlateau"), 1e-15);
    EXPECT_THROW(ReduceLROnPlateau(*f.opt, ReduceLROnPlateauOptions().factor(1.5)), ValueError);
    EXPECT_THROW(ReduceLROnPlateau(*f.opt, ReduceLROnPlateauOptions().mode("avg")), ValueError);
  }
}

TEST(LRScheduler, MomentumCyclingStateAndErrors) {
  // CyclicLR moves SGD's momentum inversely to the rate: max_momentum at the base rate.
  SchedFixture f;
  CyclicLR c(*f.opt, 0.01, 0.1, CyclicLROptions().step_size_up(2));
  auto mom = [&] {
    return static_cast<SGDOptions&>(f.opt->param_groups()[0].options()).momentum();
  };
  EXPECT_DOUBLE_EQ(mom(), 0.9);
  c.step();
  c.step();  // the peak: lr = max_lr, momentum = base_momentum
  EXPECT_DOUBLE_EQ(c.get_last_lr()[0], 0.1);
  EXPECT_DOUBLE_EQ(mom(), 0.8);
  // OneCycleLR on Adam cycles beta1.
  Tensor p = zeros({1}).requires_grad_();
  Adam adam({p}, AdamOptions(0.1));
  OneCycleLR one(adam, 1.0, 10);
  EXPECT_DOUBLE_EQ(std::get<0>(static_cast<AdamOptions&>(adam.param_groups()[0].options()).betas()),
                   0.95);
  EXPECT_NEAR(one.get_last_lr()[0], 1.0 / 25, 1e-15);
  for (int i = 0; i < 10; ++i) one.step();
  EXPECT_THROW(one.step(), ValueError);
  // Adagrad has no momentum to cycle.
  Adagrad ag({p});
  EXPECT_THROW(CyclicLR(ag, 0.01, 0.1), ValueError);
  EXPECT_THROW(ConstantLR(*f.opt, 2.0), ValueError);
  EXPECT_THROW(LambdaLR(*f.opt, std::vector<LambdaLR::Lambda>{[](int64_t) { return 1.0; }}),
               ValueError);
  // state_dict round trip: a new scheduler continues where the first stopped.
  SchedFixture g1, g2;
  StepLR s1(*g1.opt, 3, 0.5);
  for (int i = 0; i < 7; ++i) s1.step();
  StepLR s2(*g2.opt, 3, 0.5);
  s2.load_state_dict(s1.state_dict());
  for (size_t i = 0; i < 2; ++i) g2.opt->param_groups()[i].options().set_lr(s1.get_last_lr()[i]);
  for (int i = 0; i < 5; ++i) {
    s1.step();
    s2.step();
  }
  EXPECT_EQ(s2.last_epoch(), 12);
  expect_near(s2.get_last_lr(), s1.get_last_lr(), 0);
  // step_epoch uses the closed form.
  SchedFixture h;
  StepLR s3(*h.opt, 3, 0.5);
  s3.step_epoch(7);
  expect_near(s3.get_last_lr(), {0.025, 0.0125}, 1e-15);
}

// ---------------------------------------------------------------------------------------------
// LBFGS
// ---------------------------------------------------------------------------------------------

// Three steps on the 4-d Rosenbrock function from x0 = (-1.5, 2, 0.5, -0.3), float64, against
// torch 1.13:
//   x = torch.tensor([-1.5, 2.0, 0.5, -0.3], dtype=torch.float64, requires_grad=True)
//   opt = torch.optim.LBFGS([x], lr=0.1, max_iter=10)     # "plain"
//   opt = torch.optim.LBFGS([x], lr=1, max_iter=15, line_search_fn="strong_wolfe",
//                           history_size=5)                # "wolfe"
//   def closure():
//       opt.zero_grad()
//       l = ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum(); l.backward(); return l
//   losses = [float(opt.step(closure)) for _ in range(3)]
//   x.tolist(), losses, opt.state[x]['func_evals'], opt.state[x]['n_iter']
TEST(LBFGS, MatchesTorchOnRosenbrock) {
  struct Case {
    LBFGSOptions opts;
    std::vector<double> x, losses;
    int64_t func_evals, n_iter;
  };
  std::vector<Case> cases = {
      {LBFGSOptions(0.1).max_iter(10),
       {-1.0216050225254132, 1.0188879839215907, 0.7358733683574397, 0.43020874419234634},
       {1269.0, 310.55620919780745, 67.89222915558639},
       30,
       30},
      {LBFGSOptions(1).max_iter(15).line_search_fn("strong_wolfe").history_size(5),
       {-0.7756591445838794, 0.613093336195597, 0.38206282947662396, 0.14597197975435183},
       {1269.0, 3.702457014685278, 3.7014286104310705},
       29,
       24},
  };
  for (auto& c : cases) {
    Tensor x = tensor({-1.5, 2.0, 0.5, -0.3}, TensorOptions(kDouble)).requires_grad_();
    LBFGS opt({x}, c.opts);
    auto closure = [&] {
      opt.zero_grad();
      Tensor a = x.narrow(0, 0, 3), b = x.narrow(0, 1, 3);
      Tensor l = ((1 - a).pow(2) + (b - a.pow(2)).pow(2) * 100).sum();
      l.backward();
      return l;
    };
    std::vector<double> losses;
    for (int i = 0; i < 3; ++i) losses.push_back(opt.step(closure).item<double>());
    expect_near(values(x), c.x, 1e-9);
    expect_near(losses, c.losses, 1e-9);
    auto& st = static_cast<LBFGSParamState&>(*opt.state().at(x.unsafeGetTensorImpl()));
    EXPECT_EQ(st.func_evals(), c.func_evals);
    EXPECT_EQ(st.n_iter(), c.n_iter);
    // The state dict round-trips (the curvature history included).
    TensorDict sd = opt.state_dict();
    EXPECT_TRUE(sd.contains("state.0.old_dirs.0"));
    Tensor x2 = x.detach().clone().requires_grad_();
    LBFGS opt2({x2}, c.opts);
    opt2.load_state_dict(sd);
    auto& st2 = static_cast<LBFGSParamState&>(*opt2.state().at(x2.unsafeGetTensorImpl()));
    EXPECT_EQ(st2.old_dirs().size(), st.old_dirs().size());
    EXPECT_EQ(st2.n_iter(), st.n_iter());
  }
  Tensor p = ones({2}).requires_grad_();
  LBFGS opt({p});
  EXPECT_THROW(opt.step(), Error);
  EXPECT_THROW(LBFGS({p}, LBFGSOptions().line_search_fn("armijo")), ValueError);
}
