#pragma once
/// Map-style datasets: an index in, an Example out (ember's non-template interface; the
/// libtorch-shaped templates are in ember/data/datasets.h).

#include <cstddef>
#include <memory>
#include <vector>

#include "ember/data/example.h"
#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::data {

/// A map-style dataset. DataLoader workers call get()/get_batch() from several threads at once,
/// so implementations must be safe for concurrent reads.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// The sample at `index` (< size(); IndexError otherwise).
  virtual Example<> get(size_t index) = 0;
  /// The number of samples.
  virtual size_t size() const = 0;
  /// The samples at `indices`, stacked. The default stacks get() results; datasets backed by
  /// tensors override it with one gather.
  virtual Example<> get_batch(const std::vector<size_t>& indices);
};

/// Stacks examples along a new dim 0 (targets too, when defined in all of them).
Example<> stack_examples(const std::vector<Example<>>& examples);

/// Samples are slices along dim 0 of `data` and `target` (same length; `target` optional).
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(Tensor data, Tensor target = {});
  Example<> get(size_t index) override;
  size_t size() const override { return size_; }
  Example<> get_batch(const std::vector<size_t>& indices) override;
  const Tensor& data() const { return data_; }
  const Tensor& target() const { return target_; }

 private:
  Tensor data_, target_;
  size_t size_;
};

/// The samples of `dataset` at `indices`, in that order.
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<Dataset> dataset, std::vector<size_t> indices);
  Example<> get(size_t index) override;
  size_t size() const override { return indices_.size(); }
  Example<> get_batch(const std::vector<size_t>& indices) override;
  const std::vector<size_t>& indices() const { return indices_; }
  const std::shared_ptr<Dataset>& dataset() const { return dataset_; }

 private:
  std::shared_ptr<Dataset> dataset_;
  std::vector<size_t> indices_;
};

/// The datasets one after another.
class ConcatDataset : public Dataset {
 public:
  explicit ConcatDataset(std::vector<std::shared_ptr<Dataset>> datasets);
  Example<> get(size_t index) override;
  size_t size() const override { return offsets_.empty() ? 0 : offsets_.back(); }

 private:
  std::vector<std::shared_ptr<Dataset>> datasets_;
  std::vector<size_t> offsets_;  // cumulative sizes
};

/// Splits `dataset` into non-overlapping Subsets of the given lengths (summing to its size;
/// ValueError otherwise), as torch.utils.data.random_split: one randperm(size, gen) cut in order.
std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<Dataset> dataset,
                                                  const std::vector<size_t>& lengths,
                                                  std::optional<Generator> gen = std::nullopt);

}  // namespace ember::data
