// ember::nn::Module: registration, traversal, state dicts, clone, printing, hooks, init and
// gradient clipping. Expected strings are PyTorch 1.13's reprs of the same modules.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "ember/ember.h"
#include "ember/nn.h"

namespace nn = ember::nn;
using ember::Tensor;

namespace {

struct BlockImpl : nn::Cloneable<BlockImpl> {
  BlockImpl() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(3, 2));
    register_buffer("steps", ember::zeros({1}));
    register_buffer("scratch", ember::zeros({2}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) { return ember::relu(fc(x)); }
  nn::Linear fc{nullptr};
};
EMBER_MODULE(Block);

struct NetImpl : nn::Cloneable<NetImpl> {
  NetImpl() { reset(); }
  void reset() override {
    block = register_module("block", Block());
    head = register_module("head", nn::Linear(nn::LinearOptions(2, 1).bias(false)));
    scale = register_parameter("scale", ember::ones({1}));
  }
  Tensor forward(const Tensor& x) { return head(block(x)) * scale; }
  Block block{nullptr};
  nn::Linear head{nullptr};
  Tensor scale;
};
EMBER_MODULE(Net);

std::vector<std::string> keys(const ember::OrderedDict<std::string, Tensor>& d) { return d.keys(); }

}  // namespace

TEST(NnModule, NamesAndOrder) {
  Net net;
  EXPECT_EQ(keys(net->named_parameters()),
            (std::vector<std::string>{"scale", "block.fc.weight", "block.fc.bias", "head.weight"}));
  EXPECT_EQ(keys(net->named_parameters(false)), (std::vector<std::string>{"scale"}));
  EXPECT_EQ(keys(net->named_buffers()), (std::vector<std::string>{"block.steps", "block.scratch"}));
  // state_dict: each module's parameters, then its persistent buffers, then its children's
  // entries (PyTorch's order: block.steps comes before block's child fc).
  EXPECT_EQ(keys(net->state_dict()),
            (std::vector<std::string>{"scale", "block.steps", "block.fc.weight", "block.fc.bias",
                                      "head.weight"}));
  EXPECT_EQ(net->named_modules().keys(),
            (std::vector<std::string>{"", "block", "block.fc", "head"}));
  EXPECT_EQ(net->named_children().keys(), (std::vector<std::string>{"block", "head"}));
  EXPECT_EQ(net->name(), "(anonymous namespace)::NetImpl");  // libtorch: the demangled type
  EXPECT_TRUE(net->head->weight.requires_grad());
  EXPECT_FALSE(net->head->bias.defined());
}

TEST(NnModule, ReprMatchesPyTorch) {
  Net net;
  std::ostringstream os;
  os << nn::python_repr(*net);
  EXPECT_EQ(os.str(),
            "Net(\n"
            "  (block): Block(\n"
            "    (fc): Linear(in_features=3, out_features=2, bias=True)\n"
            "  )\n"
            "  (head): Linear(in_features=2, out_features=1, bias=False)\n"
            ")");
  std::ostringstream a;
  a << nn::python_repr(*nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)))
    << "|" << nn::python_repr(*nn::ReLU()) << "|" << nn::python_repr(*nn::GELU()) << "|"
    << nn::python_repr(*nn::Softplus()) << "|" << nn::python_repr(*nn::Softmax(1)) << "|"
    << nn::python_repr(*nn::Flatten()) << "|" << nn::python_repr(*nn::Hardtanh());
  EXPECT_EQ(a.str(),
            "LeakyReLU(negative_slope=0.2, inplace=True)|ReLU()|GELU(approximate='none')|"
            "Softplus(beta=1, threshold=20)|Softmax(dim=1)|Flatten(start_dim=1, end_dim=-1)|"
            "Hardtanh(min_val=-1.0, max_val=1.0)");
}

TEST(NnModule, LoadStateDictStrictAndErrors) {
  Net a, b;
  auto sd = a->state_dict();
  b->load_state_dict(sd);
  EXPECT_TRUE(ember::equal(b->block->fc->weight, a->block->fc->weight));
  // The copy is by value: changing a afterwards leaves b alone.
  {
    ember::NoGradGuard g;
    a->block->fc->weight.add_(1);
  }
  EXPECT_FALSE(ember::equal(b->block->fc->weight, a->block->fc->weight));

  ember::OrderedDict<std::string, Tensor> bad = b->state_dict();
  bad.erase("head.weight");
  bad.insert("head.extra", ember::zeros({1}));
  bad["block.fc.bias"] = ember::zeros({5});
  try {
    b->load_state_dict(bad);
    FAIL() << "expected an error";
  } catch (const ember::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("Unexpected key(s) in state_dict: \"head.extra\""), std::string::npos) << m;
    EXPECT_NE(m.find("Missing key(s) in state_dict: \"head.weight\""), std::string::npos) << m;
    EXPECT_NE(m.find("size mismatch for block.fc.bias: copying a param with shape "
                     "ember.Size([5]) from checkpoint, the shape in current model is "
                     "ember.Size([2])."),
              std::string::npos)
        << m;
  }
  // Non-strict: key mismatches are reported, shapes still checked.
  bad["block.fc.bias"] = ember::zeros({2});
  auto r = b->load_state_dict(bad, /*strict=*/false);
  EXPECT_EQ(r.missing_keys, (std::vector<std::string>{"head.weight"}));
  EXPECT_EQ(r.unexpected_keys, (std::vector<std::string>{"head.extra"}));
  EXPECT_TRUE(ember::equal(b->block->fc->bias, ember::zeros({2})));
}

TEST(NnModule, CloneIsDeep) {
  Net a;
  a->eval();
  auto c = std::dynamic_pointer_cast<NetImpl>(a->clone());
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->is_training());
  EXPECT_TRUE(ember::equal(c->block->fc->weight, a->block->fc->weight));
  // The copy's members point at its own registered tensors, not the original's.
  EXPECT_NE(c->block->fc->weight.unsafeGetTensorImpl(), a->block->fc->weight.unsafeGetTensorImpl());
  EXPECT_EQ(c->named_parameters()["block.fc.weight"].unsafeGetTensorImpl(),
            c->block->fc->weight.unsafeGetTensorImpl());
  {
    ember::NoGradGuard g;
    c->block->fc->weight.zero_();
  }
  EXPECT_GT(a->block->fc->weight.abs().sum().item<double>(), 0);

  nn::Sequential seq(nn::Linear(2, 3), nn::ReLU(), nn::Linear(3, 1));
  auto sc = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  Tensor x = ember::randn({4, 2});
  EXPECT_TRUE(ember::allclose(sc->forward(x), seq->forward(x)));
  EXPECT_EQ(sc->named_parameters().keys(), seq->named_parameters().keys());
}

TEST(NnModule, TrainEvalZeroGradApply) {
  Net net;
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training());
  net->train();
  EXPECT_TRUE(net->block->fc->is_training());

  Tensor y = net(ember::randn({5, 3})).sum();
  y.backward();
  EXPECT_TRUE(net->scale.grad().defined());
  net->zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(ember::equal(net->scale.grad(), ember::zeros({1})));
  net->zero_grad();
  EXPECT_FALSE(net->scale.grad().defined());

  std::vector<std::string> order;
  net->apply([&](const std::string& name, nn::Module&) { order.push_back(name); });
  EXPECT_EQ(order, (std::vector<std::string>{"block.fc", "block", "head", ""}));
}

TEST(NnModule, ForwardHooks) {
  nn::Linear fc(2, 2);
  int calls = 0;
  int64_t pre = fc->register_forward_pre_hook([&](nn::Module&, const Tensor& x) {
    ++calls;
    return std::optional<Tensor>(x * 0);
  });
  fc->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor& out) {
    ++calls;
    return std::optional<Tensor>(out + 1);
  });
  Tensor out = fc(ember::ones({1, 2}));
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(ember::allclose(out, fc->bias.detach().unsqueeze(0) + 1));
  fc->remove_hook(pre);
  out = fc(ember::ones({1, 2}));
  EXPECT_EQ(calls, 3);
  // Hooks also run inside a Sequential.
  nn::Sequential seq(fc);
  seq(ember::ones({1, 2}));
  EXPECT_EQ(calls, 4);
}

TEST(NnModule, RegistrationErrors) {
  nn::Module m;
  EXPECT_THROW(m.register_parameter("a.b", ember::ones({1})), ember::ValueError);
  EXPECT_THROW(m.register_parameter("", ember::ones({1})), ember::ValueError);
  m.register_buffer("buf", ember::ones({1}));
  EXPECT_THROW(m.register_parameter("buf", ember::ones({1})), ember::Error);
  Tensor nonleaf = ember::ones({1}, ember::TensorOptions().requires_grad(true)) * 2;
  EXPECT_THROW(m.register_parameter("p", nonleaf), ember::Error);
  nn::Linear empty(nullptr);
  EXPECT_THROW(empty->forward(ember::ones({1})), ember::Error);
  EXPECT_THROW(nn::Linear(-1, 2), ember::ValueError);
  nn::Sequential seq{nn::ReLU()};
  EXPECT_THROW(seq[3], ember::IndexError);
}

TEST(NnModule, LinearMatchesFormulaAndInitBounds) {
  ember::manual_seed(0);
  nn::Linear fc(400, 30);
  double bound = 1 / std::sqrt(400.0);
  EXPECT_LE(fc->weight.abs().max().item<double>(), bound);
  EXPECT_GT(fc->weight.abs().max().item<double>(), 0.9 * bound);
  EXPECT_LE(fc->bias.abs().max().item<double>(), bound);
  // U(-b, b) has variance b^2/3.
  EXPECT_NEAR(fc->weight.var().item<double>(), bound * bound / 3, 0.1 * bound * bound / 3);
  Tensor x = ember::randn({7, 400});
  EXPECT_TRUE(ember::allclose(fc(x), ember::matmul(x, fc->weight.t()) + fc->bias, 1e-5, 1e-5));
  // Zero-size batch and extra leading dims.
  EXPECT_EQ(fc(ember::randn({0, 400})).sizes(), (std::vector<int64_t>{0, 30}));
  EXPECT_EQ(fc(ember::randn({2, 3, 400})).sizes(), (std::vector<int64_t>{2, 3, 30}));
}

TEST(NnModule, InitFunctions) {
  namespace init = nn::init;
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kTanh), 5.0 / 3);
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kLeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kSELU), 0.75);
  auto [fi, fo] = init::_calculate_fan_in_and_fan_out(ember::empty({8, 4, 3, 3}));
  EXPECT_EQ(fi, 36);
  EXPECT_EQ(fo, 72);
  EXPECT_THROW(init::_calculate_fan_in_and_fan_out(ember::empty({3})), ember::ValueError);

  Tensor e = init::eye_(ember::empty({2, 3}));
  EXPECT_TRUE(ember::equal(e, ember::eye(2, 3)));
  Tensor d = init::dirac_(ember::empty({2, 2, 3}));
  // A Dirac kernel reproduces its input under conv1d with padding 1.
  EXPECT_EQ(d.index({0, 0, 1}).item<float>(), 1.0f);
  EXPECT_EQ(d.sum().item<float>(), 2.0f);
  Tensor q = init::orthogonal_(ember::empty({3, 5}));
  EXPECT_TRUE(ember::allclose(ember::matmul(q, q.t()), ember::eye(3), 1e-5, 1e-5));
  Tensor t = init::trunc_normal_(ember::empty({10000}), 0, 1, -0.5, 0.5);
  EXPECT_LE(t.max().item<float>(), 0.5f);
  EXPECT_GE(t.min().item<float>(), -0.5f);
  Tensor x = init::xavier_uniform_(ember::empty({20, 30}));
  EXPECT_LE(x.abs().max().item<double>(), std::sqrt(6.0 / 50) + 1e-6);
  Tensor s = init::sparse_(ember::empty({10, 4}), 0.3);
  for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(s.select(1, c).eq(0).sum().item<int64_t>(), 3);
  Tensor k = init::kaiming_normal_(ember::empty({2000, 50}), 0, ember::kFanIn, ember::kReLU);
  EXPECT_NEAR(k.std().item<double>(), std::sqrt(2.0 / 50), 0.02 * std::sqrt(2.0 / 50));
}

TEST(NnModule, ClipGrad) {
  Tensor a = ember::ones({3}, ember::TensorOptions().requires_grad(true));
  Tensor b = ember::ones({4}, ember::TensorOptions().requires_grad(true));
  (a * 3).sum().backward();
  (b * 4).sum().backward();
  // norm = sqrt(3*9 + 4*16) = sqrt(91)
  double n = nn::utils::clip_grad_norm_({a, b}, 1.0);
  EXPECT_NEAR(n, std::sqrt(91.0), 1e-5);
  double total =
      std::sqrt(a.grad().square().sum().item<double>() + b.grad().square().sum().item<double>());
  EXPECT_NEAR(total, 1.0, 1e-5);
  nn::utils::clip_grad_value_({a, b}, 0.1);
  EXPECT_LE(b.grad().max().item<float>(), 0.1f);
  // Infinity norm: a's gradient was clamped to 0.1, then 5 more accumulate.
  (a * 5).sum().backward();
  EXPECT_NEAR(nn::utils::clip_grad_norm_(a, 100.0, INFINITY), 5.1, 1e-5);
  Tensor nan = ember::ones({1}, ember::TensorOptions().requires_grad(true));
  (nan * NAN).sum().backward();
  EXPECT_THROW(nn::utils::clip_grad_norm_(nan, 1.0, 2.0, true), ember::Error);
  Tensor v = nn::utils::parameters_to_vector({a, b});
  EXPECT_EQ(v.numel(), 7);
  nn::utils::vector_to_parameters(ember::arange(7, ember::kFloat), {a, b});
  EXPECT_EQ(b.index({0}).item<float>(), 3.0f);
}

TEST(NnModule, ActivationsAndContainers) {
  Tensor x = ember::linspace(-2, 2, 9);
  EXPECT_TRUE(ember::allclose(nn::PReLU()(x), ember::where(x.ge(0), x, x * 0.25)));
  EXPECT_TRUE(
      ember::allclose(nn::GLU()(ember::arange(4, ember::kFloat)),
                      ember::tensor({0.0f, 1.0f}) * ember::sigmoid(ember::tensor({2.0f, 3.0f}))));
  EXPECT_THROW(nn::GLU()(ember::ones({3})), ember::Error);
  EXPECT_TRUE(ember::allclose(nn::Softmin(0)(x), ember::softmax(-x, 0)));
  nn::RReLU rr;
  rr->eval();
  EXPECT_TRUE(ember::allclose(rr(x), ember::where(x.ge(0), x, x * ((1.0 / 8 + 1.0 / 3) / 2))));
  rr->train();
  Tensor y = rr(x);
  EXPECT_TRUE(
      ember::all(ember::logical_or(x.ge(0), y.ge(x / 3 - 1e-6).logical_and(y.le(x / 8 + 1e-6))))
          .item<bool>());

  nn::ModuleList list(nn::Linear(2, 2), nn::ReLU());
  list->insert(0, std::make_shared<nn::IdentityImpl>());
  EXPECT_EQ(list->named_children().keys(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_NE(list->at<nn::LinearImpl>(1), nullptr);
  nn::ModuleDict dict(std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>>{
      {"a", std::make_shared<nn::ReLUImpl>()}});
  dict->insert("b", nn::Linear(1, 1));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(dict->named_parameters().keys(), (std::vector<std::string>{"b.weight", "b.bias"}));
  nn::ParameterList pl(ember::ones({2}), ember::zeros({3}));
  EXPECT_EQ(pl->named_parameters().keys(), (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(pl[1].requires_grad());
  nn::Sequential seq(nn::Linear(3, 4), nn::Functional(ember::relu), nn::Flatten());
  EXPECT_EQ(seq(ember::randn({2, 3})).sizes(), (std::vector<int64_t>{2, 4}));
  EXPECT_NE(seq->ptr(-1)->as<nn::FlattenImpl>(), nullptr);
}

TEST(NnModule, ToDtypeKeepsHandles) {
  Net net;
  Tensor w = net->block->fc->weight;  // a handle held outside, as an optimizer holds it
  Tensor before = w.detach().clone();
  net->block->fc(ember::ones({1, 3})).sum().backward();
  net->to(ember::kDouble);
  EXPECT_EQ(w.dtype(), ember::kDouble);
  EXPECT_EQ(net->named_parameters()["block.fc.weight"].unsafeGetTensorImpl(),
            w.unsafeGetTensorImpl());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(w.grad().dtype(), ember::kDouble);
  EXPECT_TRUE(ember::allclose(w.to(ember::kFloat), before));
  EXPECT_EQ(net->block->buffers()[0].dtype(), ember::kDouble);
  EXPECT_EQ(net(ember::ones({2, 3}, ember::kDouble)).dtype(), ember::kDouble);
  EXPECT_THROW(net->to(ember::kLong), ember::TypeError);
  net->to(ember::kFloat);
  EXPECT_EQ(w.dtype(), ember::kFloat);
}
