// Module printing and parameter names, as a libtorch user sees them: `std::cout << *model`,
// `named_parameters()`, `named_buffers()`, `named_children()` and parameter shapes for a custom
// module tree and for the built-in layers with default and non-default options.
#include <torch/torch.h>

#include <iostream>

namespace nn = torch::nn;

struct BlockImpl : nn::Module {
  BlockImpl(int64_t in, int64_t out)
      : conv(nn::Conv2dOptions(in, out, 3).padding(1).bias(false)), bn(out) {
    register_module("conv", conv);
    register_module("bn", bn);
  }
  torch::Tensor forward(torch::Tensor x) { return torch::relu(bn(conv(x))); }
  nn::Conv2d conv;
  nn::BatchNorm2d bn;
};
TORCH_MODULE(Block);

struct NetImpl : nn::Module {
  NetImpl() {
    block1 = register_module("block1", Block(1, 4));
    block2 = register_module("block2", Block(4, 8));
    head = register_module(
        "head", nn::Sequential(nn::Flatten(), nn::Dropout(0.25), nn::Linear(8 * 4 * 4, 10),
                               nn::LogSoftmax(nn::LogSoftmaxOptions(1))));
    temperature = register_parameter("temperature", torch::ones({1}));
    register_buffer("steps", torch::zeros({}, torch::kLong));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(block1(x), 2);
    x = torch::max_pool2d(block2(x), 2);
    return head->forward(x) * temperature;
  }
  Block block1{nullptr}, block2{nullptr};
  nn::Sequential head{nullptr};
  torch::Tensor temperature;
};
TORCH_MODULE(Net);

template <typename M>
void show(const M& m) {
  std::cout << *m << std::endl;
}

int main() {
  Net net;
  std::cout << net << std::endl;
  std::cout << "-- named_parameters" << std::endl;
  for (const auto& p : net->named_parameters())
    std::cout << p.key() << " " << p.value().sizes()
              << " requires_grad=" << p.value().requires_grad() << std::endl;
  std::cout << "-- named_parameters(recurse=false)" << std::endl;
  for (const auto& p : net->named_parameters(false)) std::cout << p.key() << std::endl;
  std::cout << "-- named_buffers" << std::endl;
  for (const auto& b : net->named_buffers())
    std::cout << b.key() << " " << b.value().sizes() << std::endl;
  std::cout << "-- named_children" << std::endl;
  for (const auto& c : net->named_children())
    std::cout << c.key() << ": " << c.value()->name() << std::endl;
  std::cout << "-- named_modules" << std::endl;
  for (const auto& c : net->named_modules()) std::cout << "'" << c.key() << "'" << std::endl;
  std::cout << "-- parameters: " << net->parameters().size() << std::endl;
  auto out = net->forward(torch::zeros({2, 1, 16, 16}));
  std::cout << "forward: " << out.sizes() << std::endl;

  std::cout << "-- layers" << std::endl;
  show(nn::Linear(3, 4));
  show(nn::Linear(nn::LinearOptions(3, 4).bias(false)));
  show(nn::Bilinear(2, 3, 4));
  show(nn::Identity());
  show(nn::Conv1d(2, 4, 3));
  show(nn::Conv2d(nn::Conv2dOptions(1, 10, 5)));
  show(nn::Conv2d(nn::Conv2dOptions(3, 6, {3, 5})
                      .stride({2, 1})
                      .padding({1, 2})
                      .dilation(2)
                      .groups(3)
                      .bias(false)));
  show(nn::Conv3d(nn::Conv3dOptions(2, 2, 3).padding_mode(torch::kReflect).padding(1)));
  show(nn::ConvTranspose2d(
      nn::ConvTranspose2dOptions(4, 2, 4).stride(2).padding(1).output_padding(1)));
  show(nn::ConvTranspose1d(2, 4, 3));
  show(nn::BatchNorm1d(5));
  show(nn::BatchNorm2d(nn::BatchNorm2dOptions(64).eps(1e-3).momentum(0.01).affine(false)));
  show(nn::BatchNorm3d(nn::BatchNorm3dOptions(8).track_running_stats(false)));
  show(nn::InstanceNorm2d(3));
  show(nn::InstanceNorm1d(nn::InstanceNorm1dOptions(3).affine(true).track_running_stats(true)));
  show(nn::LayerNorm(nn::LayerNormOptions({10, 4})));
  show(nn::LayerNorm(nn::LayerNormOptions({10}).elementwise_affine(false).eps(1e-6)));
  show(nn::GroupNorm(2, 8));
  show(nn::LocalResponseNorm(3));
  show(nn::Dropout());
  show(nn::Dropout(nn::DropoutOptions(0.2).inplace(true)));
  show(nn::Dropout2d(0.3));
  show(nn::Dropout3d());
  show(nn::AlphaDropout(0.1));
  show(nn::FeatureAlphaDropout(0.1));
  show(nn::MaxPool1d(3));
  show(nn::MaxPool2d(2));
  show(
      nn::MaxPool2d(nn::MaxPool2dOptions({3, 2}).stride(1).padding(1).dilation(2).ceil_mode(true)));
  show(nn::MaxPool3d(2));
  show(nn::AvgPool1d(2));
  show(nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false)));
  show(nn::AvgPool3d(2));
  show(nn::AdaptiveAvgPool1d(4));
  show(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({3, 4})));
  show(nn::AdaptiveAvgPool3d(2));
  show(nn::AdaptiveMaxPool1d(4));
  show(nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions({3, 4})));
  show(nn::AdaptiveMaxPool3d(2));
  show(nn::LPPool1d(2, 3));
  show(nn::LPPool2d(nn::LPPool2dOptions(1.5, 2).stride(1)));
  show(nn::ReLU());
  show(nn::ReLU(true));
  show(nn::ReLU6());
  show(nn::LeakyReLU());
  show(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)));
  show(nn::PReLU());
  show(nn::PReLU(nn::PReLUOptions().num_parameters(3).init(0.1)));
  show(nn::ELU());
  show(nn::ELU(nn::ELUOptions().alpha(0.5)));
  show(nn::SELU());
  show(nn::CELU());
  show(nn::GELU());
  show(nn::SiLU());
  show(nn::Mish());
  show(nn::Sigmoid());
  show(nn::Tanh());
  show(nn::Softplus());
  show(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(10)));
  show(nn::Softsign());
  show(nn::Softshrink());
  show(nn::Hardshrink());
  show(nn::Hardtanh());
  show(nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(2)));
  show(nn::Tanhshrink());
  show(nn::LogSigmoid());
  show(nn::Threshold(0.1, 20));
  show(nn::RReLU());
  show(nn::GLU());
  show(nn::Softmax(1));
  show(nn::LogSoftmax(-1));
  show(nn::Softmin(0));
  show(nn::Softmax2d());
  show(nn::Flatten());
  show(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(2)));
  show(nn::Unflatten(nn::UnflattenOptions(1, {2, 3})));
  show(nn::Embedding(10, 3));
  show(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0).max_norm(1.5)));
  show(nn::EmbeddingBag(10, 3));
  show(nn::LSTM(4, 8));
  show(nn::LSTM(
      nn::LSTMOptions(4, 8).num_layers(2).batch_first(true).bidirectional(true).dropout(0.1)));
  show(nn::GRU(4, 8));
  show(nn::RNN(nn::RNNOptions(4, 8).nonlinearity(torch::kReLU)));
  show(nn::LSTMCell(4, 8));
  show(nn::GRUCell(4, 8));
  show(nn::RNNCell(4, 8));
  show(nn::PixelShuffle(2));
  show(nn::PixelUnshuffle(2));
  show(nn::Upsample(
      nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(torch::kNearest)));
  show(nn::Upsample(nn::UpsampleOptions()
                        .size(std::vector<int64_t>{8, 8})
                        .mode(torch::kBilinear)
                        .align_corners(false)));
  show(nn::ZeroPad2d(1));
  show(nn::ConstantPad1d(2, 3.5));
  show(nn::ReflectionPad2d(2));
  show(nn::ReplicationPad1d(nn::ReplicationPad1dOptions({1, 2})));
  show(nn::CosineSimilarity());
  show(nn::PairwiseDistance());
  show(nn::Fold(nn::FoldOptions({4, 5}, {2, 2})));
  show(nn::Unfold(nn::UnfoldOptions({2, 3})));
  show(nn::MSELoss());
  show(nn::L1Loss());
  show(nn::CrossEntropyLoss());
  show(nn::NLLLoss());
  show(nn::BCELoss());
  show(nn::BCEWithLogitsLoss());
  show(nn::SmoothL1Loss());
  show(nn::HuberLoss());
  show(nn::KLDivLoss());
  show(nn::CTCLoss());
  show(nn::MarginRankingLoss());
  show(nn::TripletMarginLoss());
  show(nn::ModuleList(nn::Linear(2, 2), nn::ReLU()));
  show(nn::Sequential(nn::Linear(2, 3), nn::Tanh(), nn::Linear(3, 1)));
  return 0;
}
