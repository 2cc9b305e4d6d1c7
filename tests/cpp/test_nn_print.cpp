// libtorch's C++ module printing (`std::cout << *module`) and name(). The expected strings are
// what the same code prints against libtorch 1.13 (tests/compat/programs/module_printing.cpp
// compares the whole program's output with libtorch when libtorch-dev is installed).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "ember/ember.h"

namespace nn = ember::nn;
using ember::Tensor;

namespace {

template <typename M>
std::string str(const M& m) {
  std::ostringstream s;
  s << *m;
  return s.str();
}

// Prints under "torch" for the scope, as a program built with the compatibility headers does.
struct TorchNames {
  TorchNames() { nn::set_module_namespace("torch"); }
  ~TorchNames() { nn::set_module_namespace("ember"); }
};

struct LeafImpl : nn::Module {
  LeafImpl() { register_parameter("w", ember::ones({2})); }
};
EMBER_MODULE(Leaf);

struct TreeImpl : nn::Module {
  TreeImpl() {
    fc = register_module("fc", nn::Linear(3, 2));
    seq = register_module("seq", nn::Sequential(nn::ReLU(), nn::Dropout(0.25)));
    leaf = register_module("leaf", Leaf());
  }
  nn::Linear fc{nullptr};
  nn::Sequential seq{nullptr};
  Leaf leaf{nullptr};
};
EMBER_MODULE(Tree);

}  // namespace

TEST(NnPrint, TreeMatchesLibtorch) {
  Tree tree;
  EXPECT_EQ(str(tree),
            "(anonymous namespace)::TreeImpl(\n"
            "  (fc): ember::nn::Linear(in_features=3, out_features=2, bias=true)\n"
            "  (seq): ember::nn::Sequential(\n"
            "    (0): ember::nn::ReLU()\n"
            "    (1): ember::nn::Dropout(p=0.25, inplace=false)\n"
            "  )\n"
            "  (leaf): (anonymous namespace)::LeafImpl\n"
            ")");
  EXPECT_EQ(tree->fc->name(), "ember::nn::LinearImpl");
  std::ostringstream holder;
  holder << tree;  // the holder prints the module it holds
  EXPECT_EQ(holder.str(), str(tree));
}

TEST(NnPrint, LayersMatchLibtorch) {
  TorchNames torch_names;
  EXPECT_EQ(nn::Sequential()->name(), "torch::nn::SequentialImpl");
  EXPECT_EQ(str(nn::Linear(nn::LinearOptions(3, 4).bias(false))),
            "torch::nn::Linear(in_features=3, out_features=4, bias=false)");
  EXPECT_EQ(str(nn::Conv1d(2, 4, 3)), "torch::nn::Conv1d(2, 4, kernel_size=3, stride=1)");
  EXPECT_EQ(str(nn::Conv2d(nn::Conv2dOptions(3, 6, {3, 5})
                               .stride({2, 1})
                               .padding({1, 2})
                               .dilation(2)
                               .groups(3)
                               .bias(false))),
            "torch::nn::Conv2d(3, 6, kernel_size=[3, 5], stride=[2, 1], padding=[1, 2], "
            "dilation=[2, 2], groups=3, bias=false)");
  EXPECT_EQ(str(nn::Conv3d(nn::Conv3dOptions(2, 2, 3).padding_mode(ember::kReflect).padding(1))),
            "torch::nn::Conv3d(2, 2, kernel_size=[3, 3, 3], stride=[1, 1, 1], padding=[1, 1, 1], "
            "padding_mode=kReflect)");
  EXPECT_EQ(str(nn::ConvTranspose2d(
                nn::ConvTranspose2dOptions(4, 2, 4).stride(2).padding(1).output_padding(1))),
            "torch::nn::ConvTranspose2d(4, 2, kernel_size=[4, 4], stride=[2, 2], padding=[1, 1], "
            "output_padding=[1, 1])");
  EXPECT_EQ(str(nn::BatchNorm2d(nn::BatchNorm2dOptions(64).eps(1e-3).momentum(0.01).affine(false))),
            "torch::nn::BatchNorm2d(64, eps=0.001, momentum=0.01, affine=false, "
            "track_running_stats=true)");
  EXPECT_EQ(str(nn::InstanceNorm2d(3)),
            "torch::nn::InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=false, "
            "track_running_stats=false)");
  EXPECT_EQ(str(nn::LayerNorm(nn::LayerNormOptions({10}).elementwise_affine(false).eps(1e-6))),
            "torch::nn::LayerNorm([10], eps=1e-06, elementwise_affine=false)");
  EXPECT_EQ(str(nn::GroupNorm(2, 8)), "torch::nn::GroupNorm(2, 8, eps=1e-05, affine=true)");
  EXPECT_EQ(str(nn::LocalResponseNorm(3)),
            "torch::nn::LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1)");
  EXPECT_EQ(str(nn::Dropout2d(0.3)), "torch::nn::Dropout2d(p=0.3, inplace=false)");
  EXPECT_EQ(
      str(nn::MaxPool1d(3)),
      "torch::nn::MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=false)");
  EXPECT_EQ(str(nn::MaxPool2d(2)),
            "torch::nn::MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], "
            "dilation=[1, 1], ceil_mode=false)");
  EXPECT_EQ(str(nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(2).padding(1))),
            "torch::nn::AvgPool2d(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])");
  EXPECT_EQ(str(nn::AdaptiveAvgPool3d(2)), "torch::nn::AdaptiveAvgPool3d(output_size=[2, 2, 2])");
  EXPECT_EQ(str(nn::AdaptiveMaxPool1d(4)), "torch::nn::AdaptiveMaxPool1d(output_size=4)");
  EXPECT_EQ(str(nn::LPPool2d(nn::LPPool2dOptions(1.5, 2).stride(1))),
            "torch::nn::LPPool2d(norm_type=1.5, kernel_size=[2, 2], stride=[1, 1], "
            "ceil_mode=false)");
  EXPECT_EQ(str(nn::ReLU(true)), "torch::nn::ReLU(inplace=true)");
  EXPECT_EQ(str(nn::LeakyReLU()), "torch::nn::LeakyReLU(negative_slope=0.01)");
  EXPECT_EQ(str(nn::ELU(nn::ELUOptions().alpha(0.5))), "torch::nn::ELU(alpha=0.5)");
  EXPECT_EQ(str(nn::GELU()), "torch::nn::GELU()");
  EXPECT_EQ(str(nn::Softshrink()), "torch::nn::Softshrink(0.5)");
  EXPECT_EQ(str(nn::Hardtanh()), "torch::nn::Hardtanh(min_val=-1, max_val=1)");
  EXPECT_EQ(str(nn::Threshold(0.1, 20)), "torch::nn::Threshold(threshold=0.1, value=20)");
  EXPECT_EQ(str(nn::RReLU()), "torch::nn::RReLU(lower=0.125, upper=0.333333)");
  EXPECT_EQ(str(nn::PReLU(nn::PReLUOptions().num_parameters(3))),
            "torch::nn::PReLU(num_parameters=3)");
  EXPECT_EQ(str(nn::Softmax(1)), "torch::nn::Softmax(dim=1)");
  EXPECT_EQ(str(nn::Unflatten(nn::UnflattenOptions(1, {2, 3}))),
            "torch::nn::Unflatten(dim=1, unflattened_size={2, 3})");
  EXPECT_EQ(str(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0).max_norm(1.5))),
            "torch::nn::Embedding(num_embeddings=10, embedding_dim=3, padding_idx=0, "
            "max_norm=1.5)");
  EXPECT_EQ(
      str(nn::LSTM(
          nn::LSTMOptions(4, 8).num_layers(2).batch_first(true).bidirectional(true).dropout(0.1))),
      "torch::nn::LSTM(input_size=4, hidden_size=8, num_layers=2, bias=true, "
      "batch_first=true, dropout=0.1, bidirectional=true)");
  EXPECT_EQ(str(nn::GRUCell(4, 8)), "torch::nn::GRUCell(4, 8)");
  EXPECT_EQ(
      str(nn::Upsample(
          nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(ember::kNearest))),
      "torch::nn::Upsample(scale_factor=[2, 2], mode=kNearest)");
  EXPECT_EQ(str(nn::ConstantPad1d(2, 3.5)), "torch::nn::ConstantPad1d(padding=[2, 2], value=3.5)");
  EXPECT_EQ(str(nn::ZeroPad2d(1)), "torch::nn::ZeroPad2d(padding=[1, 1, 1, 1])");
  EXPECT_EQ(str(nn::PairwiseDistance()),
            "torch::nn::PairwiseDistance(p=2, eps=1e-06, keepdim=false)");
  EXPECT_EQ(str(nn::Fold(nn::FoldOptions({4, 5}, {2, 2}))),
            "torch::nn::Fold(output_size=[4, 5], kernel_size=[2, 2], dilation=[1, 1], "
            "padding=[0, 0], stride=[1, 1])");
  EXPECT_EQ(str(nn::CrossEntropyLoss()), "torch::nn::CrossEntropyLoss()");
  EXPECT_EQ(str(nn::SmoothL1Loss()), "torch::nn::SmoothL1Loss");
  EXPECT_EQ(str(nn::TripletMarginLoss()),
            "torch::nn::TripletMarginLoss(margin=1, p=2, eps=1e-06, swap=false)");
  EXPECT_EQ(str(nn::ModuleList(nn::Linear(2, 2), nn::ReLU())),
            "torch::nn::ModuleList(\n"
            "  (0): torch::nn::Linear(in_features=2, out_features=2, bias=true)\n"
            "  (1): torch::nn::ReLU()\n"
            ")");
}

TEST(NnPrint, NamedParametersOrderMatchesLibtorch) {
  // libtorch: the module's own parameters first, then each child's, depth first.
  Tree tree;
  std::vector<std::string> keys;
  for (const auto& p : tree->named_parameters()) keys.push_back(p.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"fc.weight", "fc.bias", "leaf.w"}));
}

TEST(NnPrint, UtilityNames) {
  EXPECT_EQ(ember::str("a", 1, '-', 2.5), "a1-2.5");
  static_assert(std::is_same_v<ember::Dtype, ember::ScalarType>);
  static_assert(std::is_same_v<ember::autograd::tensor_list, std::vector<Tensor>>);
  EXPECT_EQ(ember::kF32, ember::kFloat);
  EXPECT_EQ(ember::cuda::is_available(), ember::cuda_is_available());
  EXPECT_EQ(ember::cuda::device_count(), int64_t(ember::cuda_device_count()));
  EXPECT_THROW(EMBER_ASSERT(1 + 1 == 3), ember::Error);
  EXPECT_NO_THROW(EMBER_ASSERT(1 + 1 == 2, "arithmetic"));
  ember::optional<int> o = ember::nullopt;
  EXPECT_FALSE(o.has_value());
}

TEST(NnPrint, LeavesBoolalphaSetLikeLibtorch) {
  // libtorch's Linear printer streams std::boolalpha into the caller's stream and leaves it.
  std::ostringstream s;
  s << *nn::Linear(2, 3) << " " << true;
  EXPECT_EQ(s.str(), "ember::nn::Linear(in_features=2, out_features=3, bias=true) true");
}
