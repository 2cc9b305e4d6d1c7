#pragma once
/// IDX files and the MNIST / Fashion-MNIST datasets.

#include <string>

#include "ember/data/dataset.h"

namespace ember::data {

/// Reads an IDX file (plain or gzip-compressed, detected by its bytes) into a CPU tensor of its
/// dims and type: u8 → uint8, i8 → int8, i16 → int16, i32 → int32, f32 → float32,
/// f64 → float64. ember::Error naming the file on any defect.
Tensor read_idx(const std::string& path);

/// MNIST-format images and labels: `root` holds train-images-idx3-ubyte, train-labels-idx1-ubyte,
/// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each plain or with a ".gz" suffix.
/// Images are float32 N×1×H×W in [0, 1]; targets int64. Fashion-MNIST has the same layout.
class MNIST : public Dataset {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example<> get(size_t index) override;
  size_t size() const override;
  Example<> get_batch(const std::vector<size_t>& indices) override;
  bool is_train() const noexcept { return train_; }
  /// All images (N×1×H×W float32) and targets (N int64).
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool train_;
};
/// Same file format and layout as MNIST.
using FashionMNIST = MNIST;

/// Reads the images and labels of one split: float32 N×1×H×W in [0, 1] and int64 N. Files are
/// looked up as "<prefix>-images-idx3-ubyte[.gz]" and "<prefix>-labels-idx1-ubyte[.gz]".
Example<> read_mnist(const std::string& root, bool train);

}  // namespace ember::data
