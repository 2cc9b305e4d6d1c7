#pragma once
/// DataLoader: batches of a Dataset in sampler order, optionally assembled by background threads.
/// Two shapes: ember::data::DataLoader over ember's non-template Dataset (below), and libtorch's
/// StatelessDataLoader / StatefulDataLoader over the datasets of datasets.h (further below);
/// make_data_loader builds whichever fits the dataset.
///
///   auto loader = ember::data::make_data_loader(
///       ember::data::TensorDataset(x, y),
///       ember::data::DataLoaderOptions(64).shuffle(true).workers(2).seed(0));
///   for (ember::data::Example<>& batch : *loader) { ... batch.data, batch.target ... }

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/data/dataset.h"
#include "ember/data/datasets.h"
#include "ember/data/sampler.h"
#include "ember/data/samplers.h"

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
using CollateFn = std::function<Example<>(std::vector<Example<>>)>;

/// DataLoader settings (libtorch's DataLoaderOptions plus ember's shuffle, seed, collate,
/// prefetch_factor and persistent_workers, which only ember::data::DataLoader reads).
struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit as libtorch
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
  /// Batches in flight at once in the libtorch-shaped loaders (unset: 2 * workers).
  EMBER_DATA_ARG(std::optional<size_t>, max_jobs) = std::nullopt;
  /// Seeds the shuffling generator: the same seed gives the same sequence of epochs. Unset: a
  /// seed drawn from the default generator.
  EMBER_DATA_ARG(std::optional<uint64_t>, seed) = std::nullopt;
  /// How long to wait for a batch from the workers before throwing (0: forever).
  EMBER_DATA_ARG(std::chrono::milliseconds, timeout) = std::chrono::milliseconds(0);
  /// Keep the worker threads alive between epochs.
  EMBER_DATA_ARG(bool, persistent_workers) = false;
  /// Builds a batch from its samples (given: get() per sample; unset: Dataset::get_batch).
  EMBER_DATA_ARG(CollateFn, collate) = nullptr;
  /// Hand out batches in request order (ember::data::DataLoader always does; the libtorch-shaped
  /// loaders hand them out as they finish when false).
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
    using value_type = Example<>;
    using difference_type = std::ptrdiff_t;
    using pointer = Example<>*;
    using reference = Example<>&;
    Example<>& operator*() { return current_; }
    Example<>* operator->() { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return done() == o.done(); }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, uint64_t epoch) : loader_(loader), epoch_(epoch) {}
    bool done() const { return loader_ == nullptr; }
    DataLoader* loader_;
    uint64_t epoch_;
    Example<> current_;
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
  std::optional<Example<>> next_batch(uint64_t epoch);
  Example<> load(const std::vector<size_t>& indices);
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

// ---- libtorch's shape: StatelessDataLoader / StatefulDataLoader ----

/// The options a libtorch-shaped loader runs with (max_jobs and timeout resolved).
struct FullDataLoaderOptions {
  explicit FullDataLoaderOptions(const DataLoaderOptions& options);
  size_t batch_size;
  size_t workers;
  size_t max_jobs;
  std::optional<std::chrono::milliseconds> timeout;
  bool enforce_ordering;
  bool drop_last;
};

/// What a libtorch-shaped loader throws when loading a batch failed on a worker thread; the
/// original exception is kept.
struct WorkerException : public std::exception {
  explicit WorkerException(std::exception_ptr original);
  const char* what() const noexcept override { return message.c_str(); }
  /// The exception the worker caught.
  std::exception_ptr original_exception;
  std::string message;
};

namespace detail {

/// Worker threads for the loader templates, which keep the typed parts: a job makes one batch
/// (type-erased) on worker thread `w`; results come back in push order (or as they finish).
/// reset() drops queued jobs and pending results and waits for running jobs to finish.
class WorkerPool {
 public:
  using Job = std::function<std::shared_ptr<void>(size_t worker)>;
  struct Outcome {
    std::shared_ptr<void> value;
    std::exception_ptr error;
  };
  WorkerPool(size_t workers, bool enforce_ordering);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  void push(Job job);
  /// The next outcome; nullopt when no job is in flight. Error on timeout.
  std::optional<Outcome> pop(std::optional<std::chrono::milliseconds> timeout);
  void reset();
  /// Stops and joins the threads (idempotent).
  void join();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace detail

/// An input iterator over the batches of one epoch; the batch is fetched lazily on first use.
/// Iterators compare equal to end() once the epoch is exhausted.
template <typename Batch>
class Iterator {
 public:
  using difference_type = std::ptrdiff_t;
  using value_type = Batch;
  using pointer = Batch*;
  using reference = Batch&;
  using iterator_category = std::input_iterator_tag;

  /// The past-the-end iterator.
  Iterator() = default;
  /// An iterator drawing batches from `next` until it returns nullopt.
  explicit Iterator(std::function<std::optional<Batch>()> next)
      : state_(std::make_shared<State>(State{std::move(next), std::nullopt, false})) {}

  Iterator& operator++() {
    EMBER_CHECK(state_ != nullptr,
                "[DataLoader] Incrementing the DataLoader's past-the-end iterator is not allowed");
    state_->init();
    EMBER_CHECK(state_->batch.has_value(),
                "[DataLoader] Attempted to increment iterator past the end");
    state_->batch = state_->next();
    return *this;
  }
  Batch& operator*() { return get(); }
  Batch* operator->() { return &get(); }
  bool operator==(const Iterator& other) const {
    if (state_ == other.state_) return true;
    if (state_ && other.state_) return false;
    const State& s = state_ ? *state_ : *other.state_;
    s.init();
    return !s.batch.has_value();
  }
  bool operator!=(const Iterator& other) const { return !(*this == other); }

 private:
  struct State {
    std::function<std::optional<Batch>()> next;
    mutable std::optional<Batch> batch;
    mutable bool initialized;
    void init() const {
      if (!initialized) {
        batch = next();
        initialized = true;
      }
    }
  };
  Batch& get() {
    EMBER_CHECK(state_ != nullptr,
                "[DataLoader] Dereferencing the DataLoader's past-the-end iterator is not allowed");
    state_->init();
    EMBER_CHECK(state_->batch.has_value(),
                "[DataLoader] Attempted to dereference iterator that was past the end");
    return *state_->batch;
  }
  std::shared_ptr<State> state_;
};

/// What the libtorch-shaped loaders share: the options, the datasets, the worker pool and the
/// epoch loop. With workers, up to max_jobs batch requests are in flight; each batch handed out
/// queues the next request. Each begin() starts a new epoch (abandoning an unfinished one).
template <typename Dataset, typename Batch, typename BatchRequest>
class DataLoaderBase {
 public:
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;

  DataLoaderBase(DataLoaderOptions options, std::unique_ptr<Dataset> main_thread_dataset = nullptr)
      : options_(checked(options)), main_thread_dataset_(std::move(main_thread_dataset)) {}
  virtual ~DataLoaderBase() { join(); }
  DataLoaderBase(const DataLoaderBase&) = delete;
  DataLoaderBase& operator=(const DataLoaderBase&) = delete;

  /// Starts an epoch.
  Iterator<Batch> begin() {
    if (pool_) pool_->reset();  // before reset() touches the sampler or a shared dataset
    reset();
    return Iterator<Batch>([this] { return this->next(); });
  }
  /// The past-the-end iterator.
  Iterator<Batch> end() { return Iterator<Batch>(); }
  /// Stops the worker threads.
  void join() {
    if (pool_) pool_->join();
  }
  const FullDataLoaderOptions& options() const noexcept { return options_; }

 protected:
  /// The next batch request of the epoch; nullopt when it is over.
  virtual std::optional<BatchRequest> get_batch_request() = 0;
  /// Starts an epoch (no job is in flight by then): queues the first requests.
  virtual void reset() { prefetch(options_.max_jobs); }
  /// Starts `workers` threads; worker w loads from dataset_for(w).
  void start_workers() {
    if (options_.workers > 0)
      pool_ = std::make_unique<detail::WorkerPool>(options_.workers, options_.enforce_ordering);
  }
  /// The dataset worker `w` reads (its own copy, or the shared main-thread one).
  virtual Dataset& dataset_for(size_t w) = 0;

  void prefetch(size_t requested_jobs) {
    if (!pool_) return;
    for (size_t r = 0; r < requested_jobs; ++r) {
      std::optional<BatchRequest> request = get_batch_request();
      if (!request) break;
      pool_->push([this, req = std::move(*request)](size_t w) mutable -> std::shared_ptr<void> {
        return std::make_shared<std::optional<Batch>>(load(dataset_for(w), std::move(req)));
      });
    }
  }

  std::optional<Batch> next() {
    if (pool_) {
      while (auto outcome = pool_->pop(options_.timeout)) {
        if (outcome->error) throw WorkerException(outcome->error);
        auto& batch = *std::static_pointer_cast<std::optional<Batch>>(outcome->value);
        if (batch) {
          prefetch(1);
          return std::move(batch);
        }
      }
      return std::nullopt;
    }
    if (auto request = get_batch_request()) return load(*main_thread_dataset_, std::move(*request));
    return std::nullopt;
  }

  static std::optional<Batch> load(Dataset& dataset, BatchRequest request) {
    if constexpr (Dataset::is_stateful)
      return dataset.get_batch(std::move(request));
    else
      return std::optional<Batch>(dataset.get_batch(std::move(request)));
  }

  static const DataLoaderOptions& checked(const DataLoaderOptions& o) {
    EMBER_CHECK_VALUE(o.batch_size() >= 1,
                      "[DataLoader] batch_size should be a positive integer value, but got "
                      "batch_size=0");
    EMBER_CHECK_VALUE(!o.shuffle() && !o.seed() && !o.collate(),
                      "[make_data_loader] shuffle, seed and collate are options of "
                      "ember::data::DataLoader; with a libtorch-shaped dataset pass a sampler "
                      "(samplers::RandomSampler) and map a collation instead");
    EMBER_CHECK_VALUE(o.workers() == 0 || o.max_jobs().value_or(1) >= 1,
                      "[DataLoader] max_jobs must be >= 1 when workers > 0");
    return o;
  }

  const FullDataLoaderOptions options_;
  std::unique_ptr<Dataset> main_thread_dataset_;
  std::unique_ptr<detail::WorkerPool> pool_;
};

/// Loads batches of a stateless dataset for the requests of `Sampler` (each epoch resets the
/// sampler). Each worker thread gets its own copy of the dataset.
template <typename Dataset, typename Sampler>
class StatelessDataLoader : public DataLoaderBase<Dataset, typename Dataset::BatchType,
                                                  typename Sampler::BatchRequestType> {
 public:
  using super =
      DataLoaderBase<Dataset, typename Dataset::BatchType, typename Sampler::BatchRequestType>;
  using typename super::BatchRequestType;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : super(std::move(options)), sampler_(std::move(sampler)) {
    worker_datasets_.reserve(this->options_.workers);
    for (size_t w = 0; w < this->options_.workers; ++w) worker_datasets_.push_back(dataset);
    if (this->options_.workers == 0)
      this->main_thread_dataset_ = std::make_unique<Dataset>(std::move(dataset));
    this->start_workers();
  }
  ~StatelessDataLoader() override { this->join(); }

 private:
  void reset() override {
    sampler_.reset();
    super::reset();
  }
  std::optional<BatchRequestType> get_batch_request() override {
    auto indices = sampler_.next(this->options_.batch_size);
    if (!indices || (indices->size() < this->options_.batch_size && this->options_.drop_last))
      return std::nullopt;
    EMBER_INTERNAL_ASSERT(indices->size() > 0, "[DataLoader] the sampler returned an empty batch");
    return indices;
  }
  Dataset& dataset_for(size_t w) override { return worker_datasets_[w]; }

  Sampler sampler_;
  std::vector<Dataset> worker_datasets_;
};

/// Loads batches of a stateful dataset, which ends each epoch itself; the workers share it.
template <typename Dataset>
class StatefulDataLoader : public DataLoaderBase<Dataset, typename Dataset::BatchType::value_type,
                                                 typename Dataset::BatchRequestType> {
 public:
  using super = DataLoaderBase<Dataset, typename Dataset::BatchType::value_type,
                               typename Dataset::BatchRequestType>;
  using typename super::BatchRequestType;

  StatefulDataLoader(Dataset dataset, DataLoaderOptions options)
      : super(std::move(options), std::make_unique<Dataset>(std::move(dataset))) {
    this->start_workers();
  }
  ~StatefulDataLoader() override { this->join(); }

 private:
  void reset() override {
    this->main_thread_dataset_->reset();
    super::reset();
  }
  std::optional<BatchRequestType> get_batch_request() override { return this->options_.batch_size; }
  Dataset& dataset_for(size_t) override { return *this->main_thread_dataset_; }
};

/// A loader over a libtorch-shaped stateless dataset with the given sampler.
template <typename D, typename S>
std::enable_if_t<!D::is_stateful, std::unique_ptr<StatelessDataLoader<D, S>>> make_data_loader(
    D dataset, S sampler, DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<D, S>>(std::move(dataset), std::move(sampler),
                                                     std::move(options));
}

/// A loader over a libtorch-shaped stateless dataset with a Sampler(dataset.size()) (a
/// RandomSampler unless given); `options` may be just a batch size.
template <typename S = samplers::RandomSampler, typename D>
std::enable_if_t<!D::is_stateful && std::is_constructible_v<S, size_t>,
                 std::unique_ptr<StatelessDataLoader<D, S>>>
make_data_loader(D dataset, DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  EMBER_CHECK_VALUE(size.has_value(),
                    "[make_data_loader] Expected the dataset to be sized in order to construct "
                    "the Sampler");
  return make_data_loader(std::move(dataset), S(*size), std::move(options));
}

/// A loader over a libtorch-shaped stateful dataset.
template <typename D, typename = std::enable_if_t<D::is_stateful>>
std::unique_ptr<StatefulDataLoader<D>> make_data_loader(
    D dataset, DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<StatefulDataLoader<D>>(std::move(dataset), std::move(options));
}

}  // namespace ember::data
