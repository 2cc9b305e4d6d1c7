// A DCGAN on the libtorch data API with checkpointing, in the style of pytorch/examples
// cpp/dcgan: MNIST mapped through Normalize and Stack, a random-order loader with workers, a
// generator module and a Sequential discriminator trained with Adam, checkpoints of both models
// and both optimizers with torch::save, then a fresh pair restored with torch::load that must
// match the trained one and take the same next step. It prints only what does not depend on the
// random initialisation, so ember and libtorch print the same.
//
// Usage: dcgan [DATA_DIR]  (default $EMBER_COMPAT_DATA_DIR/fashion-mnist, else Debian's
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

// The size of the noise vector fed to the generator.
const int64_t kNoiseSize = 100;
// The batch size for training.
const int64_t kBatchSize = 64;
// The number of training examples used (a short run).
const int64_t kTrainExamples = 256;
// The number of epochs to train.
const int64_t kNumberOfEpochs = 1;
// After how many batches to create a new checkpoint periodically.
const int64_t kCheckpointEvery = 2;
// How many images to sample at every checkpoint.
const int64_t kNumberOfSamplesPerCheckpoint = 8;
// After how many batches to log a new update with the loss value.
const int64_t kLogInterval = 1;

using namespace torch;

struct DCGANGeneratorImpl : nn::Module {
  DCGANGeneratorImpl(int kNoiseSize)
      : conv1(nn::ConvTranspose2dOptions(kNoiseSize, 256, 4).bias(false)),
        batch_norm1(256),
        conv2(nn::ConvTranspose2dOptions(256, 128, 3).stride(2).padding(1).bias(false)),
        batch_norm2(128),
        conv3(nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1).bias(false)),
        batch_norm3(64),
        conv4(nn::ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)) {
    // register_module() is needed if we want to use the parameters() method later on
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
    register_module("conv4", conv4);
    register_module("batch_norm1", batch_norm1);
    register_module("batch_norm2", batch_norm2);
    register_module("batch_norm3", batch_norm3);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(batch_norm1(conv1(x)));
    x = torch::relu(batch_norm2(conv2(x)));
    x = torch::relu(batch_norm3(conv3(x)));
    x = torch::tanh(conv4(x));
    return x;
  }

  nn::ConvTranspose2d conv1, conv2, conv3, conv4;
  nn::BatchNorm2d batch_norm1, batch_norm2, batch_norm3;
};

TORCH_MODULE(DCGANGenerator);

nn::Sequential make_discriminator() {
  return nn::Sequential(
      // Layer 1
      nn::Conv2d(nn::Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)),
      nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 2
      nn::Conv2d(nn::Conv2dOptions(64, 128, 4).stride(2).padding(1).bias(false)),
      nn::BatchNorm2d(128), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 3
      nn::Conv2d(nn::Conv2dOptions(128, 256, 4).stride(2).padding(1).bias(false)),
      nn::BatchNorm2d(256), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 4
      nn::Conv2d(nn::Conv2dOptions(256, 1, 3).stride(1).padding(0).bias(false)), nn::Sigmoid());
}

// The first `limit` examples of another dataset.
template <typename Source>
struct Head : torch::data::datasets::Dataset<Head<Source>> {
  Head(Source source, size_t limit) : source(std::move(source)), limit(limit) {}
  torch::data::Example<> get(size_t index) override { return source.get(index); }
  torch::optional<size_t> size() const override { return std::min(limit, source.size().value()); }
  Source source;
  size_t limit;
};

// libtorch's MNIST reads plain IDX files; unpack Debian's .gz files when that is all there is.
std::string prepare_data_dir(const std::string& dir) {
  const std::vector<std::string> names = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                          "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
  if (fs::exists(dir + "/" + names[0])) return dir;
  fs::path out = fs::temp_directory_path() / ("compat-dcgan-" + std::to_string(::getpid()));
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

// Whether two modules hold the same parameters and buffers, name by name.
bool same_state(const nn::Module& a, const nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  auto ba = a.named_buffers(), bb = b.named_buffers();
  if (pa.size() != pb.size() || ba.size() != bb.size()) return false;
  for (const auto& item : pa) {
    const torch::Tensor* other = pb.find(item.key());
    if (other == nullptr || !torch::equal(item.value(), *other)) return false;
  }
  for (const auto& item : ba) {
    const torch::Tensor* other = bb.find(item.key());
    if (other == nullptr || !torch::equal(item.value(), *other)) return false;
  }
  return true;
}

// Whether two modules' parameters agree to float32 rounding.
bool close_parameters(const nn::Module& a, const nn::Module& b) {
  auto pa = a.parameters(), pb = b.parameters();
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (!torch::allclose(pa[i], pb[i], /*rtol=*/1e-4, /*atol=*/1e-6)) return false;
  return true;
}

// One training step of both models on `real_images` with the given noise and labels.
void train_step(DCGANGenerator& generator, nn::Sequential& discriminator,
                torch::optim::Adam& generator_optimizer,
                torch::optim::Adam& discriminator_optimizer, torch::Tensor real_images,
                torch::Tensor real_labels, torch::Tensor noise, torch::Tensor* d_loss_out,
                torch::Tensor* g_loss_out) {
  // Train discriminator with real images.
  discriminator->zero_grad();
  torch::Tensor real_output = discriminator->forward(real_images).reshape(real_labels.sizes());
  torch::Tensor d_loss_real = torch::binary_cross_entropy(real_output, real_labels);
  d_loss_real.backward();

  // Train discriminator with fake images.
  torch::Tensor fake_images = generator->forward(noise);
  torch::Tensor fake_labels = torch::zeros(real_images.size(0));
  torch::Tensor fake_output =
      discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
  torch::Tensor d_loss_fake = torch::binary_cross_entropy(fake_output, fake_labels);
  d_loss_fake.backward();

  torch::Tensor d_loss = d_loss_real + d_loss_fake;
  discriminator_optimizer.step();

  // Train generator.
  generator->zero_grad();
  fake_labels.fill_(1);
  fake_output = discriminator->forward(fake_images).reshape(fake_labels.sizes());
  torch::Tensor g_loss = torch::binary_cross_entropy(fake_output, fake_labels);
  g_loss.backward();
  generator_optimizer.step();
  *d_loss_out = d_loss;
  *g_loss_out = g_loss;
}

int main(int argc, char** argv) {
  torch::manual_seed(1);
  std::string root = "/usr/share/datasets/fashion-mnist";
  if (const char* env = std::getenv("EMBER_COMPAT_DATA_DIR"))
    root = std::string(env) + "/fashion-mnist";
  if (argc > 1) root = argv[1];
  const std::string data_dir = prepare_data_dir(root);
  const fs::path checkpoint_dir =
      fs::temp_directory_path() / ("compat-dcgan-checkpoints-" + std::to_string(::getpid()));
  fs::create_directories(checkpoint_dir);
  auto checkpoint = [&](const std::string& name) { return (checkpoint_dir / name).string(); };

  DCGANGenerator generator(kNoiseSize);
  nn::Sequential discriminator = make_discriminator();

  // Assume the MNIST dataset is available under `data_dir`.
  auto dataset =
      Head<torch::data::datasets::MNIST>(torch::data::datasets::MNIST(data_dir), kTrainExamples)
          .map(torch::data::transforms::Normalize<>(0.5, 0.5))
          .map(torch::data::transforms::Stack<>());
  const int64_t batches_per_epoch =
      std::ceil(dataset.size().value() / static_cast<double>(kBatchSize));
  std::cout << "examples: " << dataset.size().value()
            << ", batches per epoch: " << batches_per_epoch << std::endl;

  auto data_loader = torch::data::make_data_loader(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(kBatchSize).workers(2));

  torch::optim::Adam generator_optimizer(
      generator->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
  torch::optim::Adam discriminator_optimizer(
      discriminator->parameters(),
      torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));

  int64_t checkpoint_counter = 1;
  torch::Tensor last_images;
  for (int64_t epoch = 1; epoch <= kNumberOfEpochs; ++epoch) {
    int64_t batch_index = 0;
    int64_t label_sum = 0;
    for (torch::data::Example<>& batch : *data_loader) {
      torch::Tensor real_images = batch.data;
      torch::Tensor real_labels = torch::empty(batch.data.size(0)).uniform_(0.8, 1.0);
      torch::Tensor noise = torch::randn({batch.data.size(0), kNoiseSize, 1, 1});
      torch::Tensor d_loss, g_loss;
      train_step(generator, discriminator, generator_optimizer, discriminator_optimizer,
                 real_images, real_labels, noise, &d_loss, &g_loss);
      label_sum += batch.target.sum().item<int64_t>();
      last_images = real_images;

      batch_index++;
      if (batch_index % kLogInterval == 0) {
        std::printf(
            "[%2ld/%2ld][%3ld/%3ld] batch [%ld, %ld, %ld, %ld] D_loss finite: %d | "
            "G_loss finite: %d\n",
            static_cast<long>(epoch), static_cast<long>(kNumberOfEpochs),
            static_cast<long>(batch_index), static_cast<long>(batches_per_epoch),
            static_cast<long>(real_images.size(0)), static_cast<long>(real_images.size(1)),
            static_cast<long>(real_images.size(2)), static_cast<long>(real_images.size(3)),
            std::isfinite(d_loss.item<float>()) ? 1 : 0,
            std::isfinite(g_loss.item<float>()) ? 1 : 0);
      }

      if (batch_index % kCheckpointEvery == 0) {
        // Checkpoint the model and optimizer state.
        torch::save(generator, checkpoint("generator-checkpoint.pt"));
        torch::save(generator_optimizer, checkpoint("generator-optimizer-checkpoint.pt"));
        torch::save(discriminator, checkpoint("discriminator-checkpoint.pt"));
        torch::save(discriminator_optimizer, checkpoint("discriminator-optimizer-checkpoint.pt"));
        // Sample the generator and save the images.
        torch::NoGradGuard no_grad;
        generator->eval();
        torch::Tensor samples =
            generator->forward(torch::randn({kNumberOfSamplesPerCheckpoint, kNoiseSize, 1, 1}));
        generator->train();
        torch::Tensor images = (samples + 1.0) / 2.0;
        const std::string sample_file =
            checkpoint(torch::str("dcgan-sample-", checkpoint_counter, ".pt"));
        torch::save(images, sample_file);
        torch::Tensor reloaded;
        torch::load(reloaded, sample_file);
        std::cout << "-> checkpoint " << ++checkpoint_counter << ": samples " << reloaded.sizes()
                  << ", in [0, 1]: "
                  << (reloaded.min().item<float>() >= 0 && reloaded.max().item<float>() <= 1)
                  << ", reloaded equal: " << torch::equal(reloaded, images) << std::endl;
      }
    }
    std::cout << "epoch " << epoch << ": " << batch_index << " batches, label sum " << label_sum
              << std::endl;
  }

  // Resume: fresh models and optimizers restored from the last checkpoint (taken after the
  // last batch) hold the trained state and take the same next step.
  torch::manual_seed(2);
  DCGANGenerator restored_generator(kNoiseSize);
  nn::Sequential restored_discriminator = make_discriminator();
  torch::optim::Adam restored_generator_optimizer(
      restored_generator->parameters(),
      torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
  torch::optim::Adam restored_discriminator_optimizer(
      restored_discriminator->parameters(),
      torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
  std::cout << "fresh generator equals trained: " << same_state(*restored_generator, *generator)
            << std::endl;
  torch::load(restored_generator, checkpoint("generator-checkpoint.pt"));
  torch::load(restored_generator_optimizer, checkpoint("generator-optimizer-checkpoint.pt"));
  torch::load(restored_discriminator, checkpoint("discriminator-checkpoint.pt"));
  torch::load(restored_discriminator_optimizer,
              checkpoint("discriminator-optimizer-checkpoint.pt"));
  std::cout << "restored generator equals trained: " << same_state(*restored_generator, *generator)
            << std::endl;
  std::cout << "restored discriminator equals trained: "
            << same_state(*restored_discriminator, *discriminator) << std::endl;

  torch::Tensor real_labels = torch::full({last_images.size(0)}, 0.9);
  torch::Tensor noise = torch::randn({last_images.size(0), kNoiseSize, 1, 1});
  torch::Tensor d_loss, g_loss, restored_d_loss, restored_g_loss;
  train_step(generator, discriminator, generator_optimizer, discriminator_optimizer, last_images,
             real_labels, noise, &d_loss, &g_loss);
  train_step(restored_generator, restored_discriminator, restored_generator_optimizer,
             restored_discriminator_optimizer, last_images, real_labels, noise, &restored_d_loss,
             &restored_g_loss);
  std::cout << "resumed step matches: generator "
            << close_parameters(*restored_generator, *generator) << ", discriminator "
            << close_parameters(*restored_discriminator, *discriminator) << ", losses "
            << torch::allclose(d_loss, restored_d_loss, 1e-4, 1e-6) << " "
            << torch::allclose(g_loss, restored_g_loss, 1e-4, 1e-6) << std::endl;

  fs::remove_all(checkpoint_dir);
  if (data_dir != root) fs::remove_all(data_dir);
  return 0;
}
