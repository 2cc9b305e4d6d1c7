#pragma once
/// Datasets in libtorch's shape (ember::data::datasets, as torch::data::datasets): CRTP bases
/// whose batch and request types are template parameters, so that `.map(transform)` composes
/// statically and a DataLoader yields whatever the last transform produces.
///
///   auto ds = ember::data::datasets::MNIST(root)
///                 .map(ember::data::transforms::Normalize<>(0.1307, 0.3081))
///                 .map(ember::data::transforms::Stack<>());
///   auto loader = ember::data::make_data_loader(std::move(ds), 64);  // yields Example<>
///
/// ember's non-template ember::data::Dataset (dataset.h) stays the simpler choice for new code.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/array_ref.h"
#include "ember/data/example.h"
#include "ember/tensor.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::datasets {

template <typename S, typename T>
class MapDataset;
template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform);

namespace detail {
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace detail

/// A dataset that returns whole batches for a batch request. A BatchType of std::optional<...>
/// makes it stateful: it says itself when an epoch ends (nullopt).
template <typename Self, typename Batch = std::vector<Example<>>,
          typename BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  constexpr static bool is_stateful = detail::is_optional<BatchType>::value;

  virtual ~BatchDataset() = default;
  /// The batch for `request` (indices, or a size for stream datasets).
  virtual Batch get_batch(BatchRequest request) = 0;
  /// The number of examples, when known.
  virtual std::optional<size_t> size() const = 0;

  /// This dataset followed by `transform` (the dataset is copied).
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  /// This dataset followed by `transform` (the dataset is moved).
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

/// A map-style dataset: get(index) gives one example; a batch is the vector of its examples.
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  /// The example at `index`.
  virtual ExampleType get(size_t index) = 0;
  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (const auto i : indices) batch.push_back(get(i));
    return batch;
  }
};

/// A dataset that is asked for a number of examples rather than for indices.
template <typename Self, typename Batch = std::vector<Example<>>>
using StreamDataset = BatchDataset<Self, Batch, /*BatchRequest=*/size_t>;

/// A dataset with its own iteration state: get_batch(batch_size) returns nullopt at the end of
/// an epoch and reset() starts the next one.
template <typename Self, typename Batch = std::vector<Example<>>, typename BatchRequest = size_t>
class StatefulDataset : public BatchDataset<Self, std::optional<Batch>, BatchRequest> {
 public:
  /// Starts a new epoch.
  virtual void reset() = 0;
  /// Writes the iteration state.
  virtual void save(serialize::OutputArchive& archive) const = 0;
  /// Reads the iteration state.
  virtual void load(serialize::InputArchive& archive) = 0;
};

namespace detail {
template <bool C, typename T>
using optional_if_t = std::conditional_t<C, std::optional<T>, T>;
}  // namespace detail

/// A dataset whose batches go through a transform's apply_batch().
template <typename SourceDataset, typename AppliedTransform>
class MapDataset
    : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                          detail::optional_if_t<SourceDataset::is_stateful,
                                                typename AppliedTransform::OutputBatchType>,
                          typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType =
      detail::optional_if_t<SourceDataset::is_stateful, typename AppliedTransform::OutputBatchType>;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType indices) override {
    if constexpr (SourceDataset::is_stateful) {
      if (auto batch = dataset_.get_batch(std::move(indices)))
        return transform_.apply_batch(std::move(*batch));
      return std::nullopt;
    } else {
      return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
    }
  }
  std::optional<size_t> size() const noexcept override { return dataset_.size(); }
  /// Resets the source dataset (stateful sources).
  void reset() { dataset_.reset(); }
  const SourceDataset& dataset() noexcept { return dataset_; }
  const AppliedTransform& transform() noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

/// `dataset` followed by `transform`; the transform must take the dataset's batches.
template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform) {
  using Input =
      std::conditional_t<D::is_stateful, typename D::BatchType::value_type, typename D::BatchType>;
  static_assert(std::is_same_v<Input, typename T::InputBatchType>,
                "BatchType type of dataset does not match input type of transform");
  return {std::move(dataset), std::move(transform)};
}

/// A dataset held by shared_ptr, so that copies (one per DataLoader worker) share one object.
template <typename UnderlyingDataset>
class SharedBatchDataset : public BatchDataset<SharedBatchDataset<UnderlyingDataset>,
                                               typename UnderlyingDataset::BatchType,
                                               typename UnderlyingDataset::BatchRequestType> {
 public:
  using BatchType = typename UnderlyingDataset::BatchType;
  using BatchRequestType = typename UnderlyingDataset::BatchRequestType;

  /* implicit */ SharedBatchDataset(std::shared_ptr<UnderlyingDataset> shared_dataset)  // NOLINT
      : dataset_(std::move(shared_dataset)) {}
  BatchType get_batch(BatchRequestType request) override {
    return dataset_->get_batch(std::move(request));
  }
  std::optional<size_t> size() const override { return dataset_->size(); }
  UnderlyingDataset& operator*() { return *dataset_; }
  const UnderlyingDataset& operator*() const { return *dataset_; }
  UnderlyingDataset* operator->() { return dataset_.get(); }
  const UnderlyingDataset* operator->() const { return dataset_.get(); }
  /// Resets the shared dataset.
  void reset() { dataset_->reset(); }

 private:
  std::shared_ptr<UnderlyingDataset> dataset_;
};

/// Constructs a UnderlyingDataset in shared ownership.
template <typename UnderlyingDataset, typename... Args>
SharedBatchDataset<UnderlyingDataset> make_shared_dataset(Args&&... args) {
  return std::make_shared<UnderlyingDataset>(std::forward<Args>(args)...);
}

/// The rows of one tensor, each a TensorExample (no target).
struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  /// Stacks `tensors` along a new dim 0.
  explicit TensorDataset(const std::vector<Tensor>& tensors);
  explicit TensorDataset(Tensor tensor);
  /// Row `index` (IndexError when out of range).
  TensorExample get(size_t index) override;
  std::optional<size_t> size() const override;
  Tensor tensor;
};

/// MNIST-format images and labels, as libtorch's MNIST: `root` holds train-images-idx3-ubyte,
/// train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each plain or
/// with a ".gz" suffix (Fashion-MNIST has the same layout). get(i) is {image 1×H×W float32 in
/// [0, 1], label int64 0-dim}.
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  /// Example `index` (IndexError when out of range).
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  bool is_train() const noexcept;
  /// All images (N×1×H×W float32).
  const Tensor& images() const;
  /// All labels (N int64).
  const Tensor& targets() const;

 private:
  Tensor images_, targets_;
  bool train_;
};

}  // namespace ember::data::datasets
