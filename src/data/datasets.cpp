// The non-template libtorch-shaped datasets: datasets::MNIST (on the reader in mnist.cpp) and
// datasets::TensorDataset.
#include "ember/data/datasets.h"

#include "ember/data/mnist.h"
#include "ember/ops.h"

namespace ember::data::datasets {

TensorDataset::TensorDataset(const std::vector<Tensor>& tensors)
    : TensorDataset([&] {
        EMBER_CHECK_VALUE(!tensors.empty(), "[TensorDataset] needs at least one tensor");
        return stack(tensors, 0);
      }()) {}

TensorDataset::TensorDataset(Tensor t) : tensor(std::move(t)) {
  EMBER_CHECK_VALUE(tensor.defined() && tensor.dim() >= 1,
                    "[TensorDataset] expected a tensor of at least 1 dim");
}

TensorExample TensorDataset::get(size_t index) {
  EMBER_CHECK_INDEX(index < size_t(tensor.size(0)), "[TensorDataset] index ", index,
                    " is out of range for ", tensor.size(0), " examples");
  return tensor[int64_t(index)];
}

std::optional<size_t> TensorDataset::size() const { return size_t(tensor.size(0)); }

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  Example<> e = read_mnist(root, train_);
  images_ = std::move(e.data);
  targets_ = std::move(e.target);
}

Example<> MNIST::get(size_t index) {
  const size_t n = size_t(images_.size(0));
  EMBER_CHECK_INDEX(index < n, "[MNIST] index ", index, " is out of range for ", n, " examples");
  return {images_[int64_t(index)], targets_[int64_t(index)]};
}

std::optional<size_t> MNIST::size() const { return size_t(images_.size(0)); }
bool MNIST::is_train() const noexcept { return train_; }
const Tensor& MNIST::images() const { return images_; }
const Tensor& MNIST::targets() const { return targets_; }

}  // namespace ember::data::datasets
