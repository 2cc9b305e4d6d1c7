#pragma once
/// DataLoader: batches of a Dataset in sampler order, optionally assembled by background threads.
///
///   auto loader = ember::data::make_data_loader(
///       ember::data::TensorDataset(x, y),
///       ember::data::DataLoaderOptions(64).shuffle(true).workers(2).seed(0));
///   for (ember::data::Example& batch : *loader) { ... batch.data, batch.target ... }

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/data/dataset.h"
#include "ember/data/sampler.h"

namespace ember::data {

/// A chained setter and getter pair, as libtorch's TORCH_ARG.
#define EMBER_DATA_ARG(T, name)                      \
 public:                                             \
  auto& name(const T& v) {                           \
    name##_ = v;                                     \
    return *this;                                    \
  }                                                  \
  const T& name() const noexcept { return name##_; } \
                                                     \
 private:                                            \
  T name##_

/// Turns the samples of one batch into the batch (default: stack_examples).
using CollateFn = std::function<Example(std::vector<Example>)>;

/// DataLoader settings.
struct DataLoaderOptions {
  DataLoaderOptions() = default;
  explicit DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}
  /// Samples per batch (>= 1).
  EMBER_DATA_ARG(size_t, batch_size) = 1;
  /// Visit samples in a random order (a new one each epoch) instead of 0..n-1.
  EMBER_DATA_ARG(bool, shuffle) = false;
  /// Drop the last batch when it is short.
  EMBER_DATA_ARG(bool, drop_last) = false;
  /// Background threads assembling batches (0: on the iterating thread).
  EMBER_DATA_ARG(size_t, workers) = 0;
  /// Batches each worker may prepare ahead of the consumer.
  EMBER_DATA_ARG(size_t, prefetch_factor) = 2;
  /// Seeds the shuffling generator: the same seed gives the same sequence of epochs. Unset: a
  /// seed drawn from the default generator.
  EMBER_DATA_ARG(std::optional<uint64_t>, seed) = std::nullopt;
  /// How long to wait for a batch from the workers before throwing (0: forever).
  EMBER_DATA_ARG(std::chrono::milliseconds, timeout) = std::chrono::milliseconds(0);
  /// Keep the worker threads alive between epochs.
  EMBER_DATA_ARG(bool, persistent_workers) = false;
  /// Builds a batch from its samples (given: get() per sample; unset: Dataset::get_batch).
  EMBER_DATA_ARG(CollateFn, collate) = nullptr;
  /// Enforce the batch order of a single-threaded run (always true here; kept for libtorch).
  EMBER_DATA_ARG(bool, enforce_ordering) = true;
};

/// Iterates a dataset in batches. Each begin() starts a new epoch (abandoning an unfinished
/// one). Errors raised while loading a batch are rethrown by the iterator that reaches it.
class DataLoader {
 public:
  /// Uses a RandomSampler (shuffle) or a SequentialSampler over the dataset.
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options);
  /// Uses `sampler` for the order of indices (options.shuffle must be false).
  DataLoader(std::shared_ptr<Dataset> dataset, std::shared_ptr<Sampler> sampler,
             DataLoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    using pointer = Example*;
    using reference = Example&;
    Example& operator*() { return current_; }
    Example* operator->() { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return done() == o.done(); }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, uint64_t epoch) : loader_(loader), epoch_(epoch) {}
    bool done() const { return loader_ == nullptr; }
    DataLoader* loader_;
    uint64_t epoch_;
    Example current_;
  };

  /// Starts an epoch and returns an iterator at its first batch.
  Iterator begin();
  Iterator end() { return Iterator(nullptr, 0); }
  /// Batches per epoch.
  size_t size() const;
  const DataLoaderOptions& options() const { return options_; }
  const std::shared_ptr<Dataset>& dataset() const { return dataset_; }

 private:
  struct Pool;
  std::optional<Example> next_batch(uint64_t epoch);
  Example load(const std::vector<size_t>& indices);
  void stop_workers();

  std::shared_ptr<Dataset> dataset_;
  std::shared_ptr<Sampler> sampler_;
  DataLoaderOptions options_;
  std::vector<std::vector<size_t>> batches_;
  size_t cursor_ = 0;
  uint64_t epoch_ = 0;
  std::unique_ptr<Pool> pool_;
};

/// A DataLoader over `dataset` (a Dataset subclass, moved into shared ownership).
template <class D, std::enable_if_t<std::is_base_of_v<Dataset, std::decay_t<D>>, int> = 0>
std::unique_ptr<DataLoader> make_data_loader(D&& dataset, DataLoaderOptions options = {}) {
  return std::make_unique<DataLoader>(std::make_shared<std::decay_t<D>>(std::forward<D>(dataset)),
                                      std::move(options));
}
/// A DataLoader over a shared dataset.
std::unique_ptr<DataLoader> make_data_loader(std::shared_ptr<Dataset> dataset,
                                             DataLoaderOptions options = {});
/// libtorch's form: make_data_loader(dataset, batch_size).
template <class D, std::enable_if_t<std::is_base_of_v<Dataset, std::decay_t<D>>, int> = 0>
std::unique_ptr<DataLoader> make_data_loader(D&& dataset, size_t batch_size) {
  return make_data_loader(std::forward<D>(dataset), DataLoaderOptions(batch_size));
}
/// A DataLoader with an explicit sampler.
std::unique_ptr<DataLoader> make_data_loader(std::shared_ptr<Dataset> dataset,
                                             std::shared_ptr<Sampler> sampler,
                                             DataLoaderOptions options = {});

}  // namespace ember::data
