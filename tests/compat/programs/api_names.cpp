// The everyday libtorch names a program uses besides tensors and layers: dtypes and devices,
// TensorOptions, the CUDA queries, manual_seed, TORCH_CHECK / AT_ASSERT, torch::str,
// TORCH_ARG options structs, TORCH_MODULE, at:: and c10:: spellings, indexing with Slice,
// nn::init, nn::functional, optimizer param groups and torch::save / torch::load of tensors.
#include <ATen/ATen.h>
#include <torch/torch.h>

#include <iostream>
#include <string>
#include <vector>

namespace F = torch::nn::functional;
using torch::indexing::None;
using torch::indexing::Slice;

struct ScaleOptions {
  ScaleOptions(double factor) : factor_(factor) {}
  TORCH_ARG(double, factor);
  TORCH_ARG(bool, shift) = false;
};

struct ScaleImpl : torch::nn::Module {
  explicit ScaleImpl(const ScaleOptions& options_) : options(options_) {
    scale = register_parameter("scale", torch::full({1}, options.factor()));
    if (options.shift()) shift = register_parameter("shift", torch::zeros({1}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = x * scale;
    return shift.defined() ? y + shift : y;
  }
  ScaleOptions options;
  torch::Tensor scale, shift;
};
TORCH_MODULE(Scale);

at::Tensor twice(const at::Tensor& t) { return t * 2; }

int main() {
  std::cout << std::boolalpha;
  torch::manual_seed(0);

  torch::Dtype dtype = torch::kFloat32;
  std::cout << "dtype: " << dtype << " " << torch::kF64 << " " << torch::kInt64 << std::endl;
  torch::Device device(torch::kCPU);
  if (torch::cuda::is_available()) std::cout << "(cuda devices found)" << std::endl;
  std::cout << "device: " << device << " is_cpu " << device.is_cpu() << std::endl;
  std::cout << "cuda device_count >= 0: " << (torch::cuda::device_count() >= 0) << std::endl;

  auto options = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  auto t = torch::arange(12, options).view({3, 4});
  std::cout << t << std::endl;
  std::cout << "dtype " << t.scalar_type() << " sizes " << t.sizes() << " numel " << t.numel()
            << std::endl;
  std::cout << t.index({Slice(1, None), Slice(None, None, 2)}) << std::endl;
  std::cout << t.index({1}) << std::endl;
  t.index_put_({0, Slice()}, -1);
  std::cout << t << std::endl;

  at::Tensor a = twice(torch::ones({2}, torch::dtype(torch::kInt32)));
  std::cout << a << std::endl;
  for (const auto i : c10::irange(3)) std::cout << "i=" << i << " ";
  std::cout << std::endl;

  std::string s = torch::str("shape ", t.sizes(), " x", 2);
  std::cout << s << std::endl;
  TORCH_CHECK(t.dim() == 2, "expected 2 dims, got ", t.dim());
  AT_ASSERT(t.size(0) == 3);
  try {
    TORCH_CHECK(t.dim() == 3, "expected 3 dims, got ", t.dim());
  } catch (const std::exception& e) {
    std::cout << "check threw: "
              << (std::string(e.what()).find("expected 3 dims, got 2") != std::string::npos)
              << std::endl;
  }
  torch::optional<int64_t> maybe = torch::nullopt;
  std::cout << "optional has_value " << maybe.has_value() << std::endl;

  Scale scale(ScaleOptions(2.5).shift(true));
  std::cout << "scale params " << scale->parameters().size() << " factor "
            << scale->options.factor() << std::endl;
  std::cout << scale(torch::ones({2})) << std::endl;

  auto lin = torch::nn::Linear(3, 2);
  torch::nn::init::constant_(lin->weight, 0.5);
  torch::nn::init::zeros_(lin->bias);
  auto x = torch::tensor({{1.0, 2.0, 3.0}, {-1.0, 0.5, 0.0}});
  auto y = lin(x);
  std::cout << y << std::endl;
  std::cout << F::relu(y - 1) << std::endl;
  std::cout << F::softmax(y, F::SoftmaxFuncOptions(1)) << std::endl;
  std::cout << F::cross_entropy(y, torch::tensor({0, 1})).item<float>() << std::endl;

  torch::optim::SGD opt(lin->parameters(), torch::optim::SGDOptions(1.0));
  for (int epoch = 0; epoch < 3; ++epoch) {
    opt.zero_grad();
    lin(x).sum().backward();
    opt.step();
    auto& group_options = static_cast<torch::optim::SGDOptions&>(opt.param_groups()[0].options());
    group_options.lr(group_options.lr() * 0.5);
    std::cout << "epoch " << epoch << " lr " << group_options.lr() << " weight sum "
              << lin->weight.sum().item<double>() << std::endl;
  }

  torch::save(t, "t.pt");
  torch::Tensor loaded;
  torch::load(loaded, "t.pt");
  std::cout << "tensor round trip " << torch::equal(t, loaded) << std::endl;
  std::vector<torch::Tensor> list = {torch::ones({2}), torch::zeros({3})};
  torch::save(list, "list.pt");
  std::vector<torch::Tensor> list_loaded;
  torch::load(list_loaded, "list.pt");
  std::cout << "list round trip " << list_loaded.size() << " "
            << torch::equal(list_loaded[1], list[1]) << std::endl;

  {
    torch::NoGradGuard no_grad;
    std::cout << "grad mode " << torch::GradMode::is_enabled() << std::endl;
  }
  std::cout << "grad mode " << torch::GradMode::is_enabled() << std::endl;
  return 0;
}
