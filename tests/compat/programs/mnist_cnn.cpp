// An MNIST CNN on the libtorch data API, in the style of pytorch/examples cpp/mnist: MNIST
// datasets mapped through Normalize and Stack, a custom CRTP dataset that keeps the first N
// examples, a sequential train loader and a random-order test loader with workers, SGD for one
// epoch. It prints only what does not depend on the random initialisation (sizes, batch counts,
// label sums, whether the loss went down), so ember and libtorch print the same.
//
// Usage: mnist_cnn [DATA_DIR]  (default $EMBER_COMPAT_DATA_DIR/fashion-mnist, else Debian's
// /usr/share/datasets/fashion-mnist). Plain IDX files are read; when only the .gz files are
// there they are unpacked to a temp dir first.
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

const int64_t kTrainExamples = 320;
const int64_t kTestExamples = 200;
const int64_t kTrainBatchSize = 32;
const int64_t kTestBatchSize = 64;
const int64_t kNumberOfEpochs = 1;
const int64_t kLogInterval = 5;

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

// The first `limit` examples of another dataset.
template <typename Source>
class Head : public torch::data::datasets::Dataset<Head<Source>> {
 public:
  Head(Source source, size_t limit) : source_(std::move(source)), limit_(limit) {}

  torch::data::Example<> get(size_t index) override { return source_.get(index); }

  torch::optional<size_t> size() const override { return std::min(limit_, source_.size().value()); }

 private:
  Source source_;
  size_t limit_;
};

// libtorch's MNIST reads plain IDX files; unpack Debian's .gz files when that is all there is.
std::string prepare_data_dir(const std::string& dir) {
  const std::vector<std::string> names = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                          "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  if (fs::exists(dir + "/" + names[0])) return dir;
  fs::path out = fs::temp_directory_path() / ("compat-mnist-" + std::to_string(::getpid()));
  fs::create_directories(out);
  for (const auto& name : names) {
    std::string cmd = "gzip -dc '" + dir + "/" + name + ".gz' > '" + (out / name).string() + "'";
    if (std::system(cmd.c_str()) != 0) {
      std::cerr << "cannot unpack " << dir << "/" << name << ".gz\n";
      std::exit(1);
    }
  }
  return out.string();
}

template <typename DataLoader>
double mean_loss(Net& model, DataLoader& loader) {
  torch::NoGradGuard no_grad;
  model.eval();
  double total = 0;
  int64_t count = 0;
  for (const auto& batch : loader) {
    auto output = model.forward(batch.data);
    total += torch::nll_loss(output, batch.target, /*weight=*/{}, torch::Reduction::Sum)
                 .template item<double>();
    count += batch.data.size(0);
  }
  return total / static_cast<double>(count);
}

template <typename DataLoader>
void train(size_t epoch, Net& model, torch::Device device, DataLoader& data_loader,
           torch::optim::Optimizer& optimizer, size_t dataset_size) {
  model.train();
  size_t batch_idx = 0;
  int64_t seen = 0;
  bool all_finite = true;
  for (auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = torch::nll_loss(output, targets);
    AT_ASSERT(!std::isnan(loss.template item<float>()));
    all_finite = all_finite && std::isfinite(loss.template item<float>());
    loss.backward();
    optimizer.step();
    seen += batch.data.size(0);
    if (batch_idx++ % kLogInterval == 0) {
      std::printf("Train Epoch: %ld [%5ld/%5ld] batch shape [%ld, %ld, %ld, %ld]\n",
                  static_cast<long>(epoch), static_cast<long>(seen),
                  static_cast<long>(dataset_size), static_cast<long>(data.size(0)),
                  static_cast<long>(data.size(1)), static_cast<long>(data.size(2)),
                  static_cast<long>(data.size(3)));
    }
  }
  std::printf("train batches: %ld, examples: %ld, losses finite: %s\n",
              static_cast<long>(batch_idx), static_cast<long>(seen), all_finite ? "yes" : "no");
}

template <typename DataLoader>
void test(Net& model, torch::Device device, DataLoader& data_loader, size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int32_t correct = 0;
  int64_t batches = 0, label_sum = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model.forward(data);
    test_loss += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum)
                     .template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
    label_sum += targets.sum().template item<int64_t>();
    ++batches;
  }
  test_loss /= dataset_size;
  std::printf("test batches: %ld, label sum: %ld, loss finite: %s, accuracy in [0, 1]: %s\n",
              static_cast<long>(batches), static_cast<long>(label_sum),
              std::isfinite(test_loss) ? "yes" : "no",
              correct >= 0 && correct <= static_cast<int32_t>(dataset_size) ? "yes" : "no");
}

int main(int argc, char** argv) {
  torch::manual_seed(1);
  std::string root = "/usr/share/datasets/fashion-mnist";
  if (const char* env = std::getenv("EMBER_COMPAT_DATA_DIR"))
    root = std::string(env) + "/fashion-mnist";
  if (argc > 1) root = argv[1];
  const std::string data_dir = prepare_data_dir(root);

  torch::DeviceType device_type = torch::kCPU;
  torch::Device device(device_type);

  Net model;
  model.to(device);
  int64_t parameter_count = 0;
  for (const auto& p : model.parameters()) parameter_count += p.numel();
  std::cout << "parameters: " << model.parameters().size() << " tensors, " << parameter_count
            << " values" << std::endl;

  // The raw dataset: sizes and a few values.
  torch::data::datasets::MNIST full(data_dir);
  std::cout << "train set: " << full.size().value() << " images " << full.images().sizes()
            << ", targets " << full.targets().sizes() << ", is_train " << full.is_train()
            << std::endl;
  auto first = full.get(0);
  std::cout << "example 0: data " << first.data.sizes() << ", target "
            << first.target.item<int64_t>() << ", target dim " << first.target.dim()
            << ", pixel sum " << first.data.mul(255).round().sum().item<double>()
            << ", max <= 1: " << (first.data.max().item<float>() <= 1.0f) << std::endl;
  std::cout << "label sum of the first " << kTrainExamples << ": "
            << full.targets().slice(0, 0, kTrainExamples).sum().item<int64_t>() << std::endl;

  auto train_dataset =
      Head<torch::data::datasets::MNIST>(torch::data::datasets::MNIST(data_dir), kTrainExamples)
          .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
          .map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(train_dataset), kTrainBatchSize);

  auto test_dataset =
      Head<torch::data::datasets::MNIST>(
          torch::data::datasets::MNIST(data_dir, torch::data::datasets::MNIST::Mode::kTest),
          kTestExamples)
          .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
          .map(torch::data::transforms::Stack<>());
  const size_t test_dataset_size = test_dataset.size().value();
  auto test_loader = torch::data::make_data_loader(
      std::move(test_dataset),
      torch::data::DataLoaderOptions().batch_size(kTestBatchSize).workers(2));
  std::cout << "train examples: " << train_dataset_size << ", test examples: " << test_dataset_size
            << std::endl;

  // The first normalised batch, in order.
  for (auto& batch : *train_loader) {
    std::printf("first batch: data [%ld, %ld, %ld, %ld], target [%ld], label sum %ld, mean %.3f\n",
                static_cast<long>(batch.data.size(0)), static_cast<long>(batch.data.size(1)),
                static_cast<long>(batch.data.size(2)), static_cast<long>(batch.data.size(3)),
                static_cast<long>(batch.target.size(0)),
                static_cast<long>(batch.target.sum().item<int64_t>()),
                batch.data.mean().item<double>());
    break;
  }

  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.05).momentum(0.5));

  const double loss_before = mean_loss(model, *train_loader);
  for (size_t epoch = 1; epoch <= kNumberOfEpochs; ++epoch) {
    train(epoch, model, device, *train_loader, optimizer, train_dataset_size);
    test(model, device, *test_loader, test_dataset_size);
  }
  const double loss_after = mean_loss(model, *train_loader);
  std::cout << "train loss decreased: " << (loss_after < loss_before ? "yes" : "no") << std::endl;

  if (data_dir != root) fs::remove_all(data_dir);
  return 0;
}
