#pragma once
/// Samplers in libtorch's shape (ember::data::samplers, as torch::data::samplers): a sampler
/// hands out batch requests with next(batch_size) until an epoch ends (nullopt); reset() starts
/// the next epoch, optionally with a new dataset size. The DataLoader templates in
/// dataloader.h use them; ember's epoch-at-a-time samplers are in sampler.h.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::samplers {

/// Hands out the batch requests of an epoch.
template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  /// Starts a new epoch; `new_size` replaces the dataset size when given.
  virtual void reset(std::optional<size_t> new_size) = 0;
  /// The next request of at most `batch_size` examples; nullopt at the end of the epoch.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
  /// Writes the sampler's state.
  virtual void save(serialize::OutputArchive& archive) const = 0;
  /// Reads the sampler's state.
  virtual void load(serialize::InputArchive& archive) = 0;
};

/// A batch request that is not a list of indices.
struct CustomBatchRequest {
  virtual ~CustomBatchRequest() = default;
  /// The number of examples requested.
  virtual size_t size() const = 0;
};

/// A request for `size` examples (from a StreamDataset).
struct BatchSize : public CustomBatchRequest {
  explicit BatchSize(size_t size) : size_(size) {}
  size_t size() const noexcept override { return size_; }
  operator size_t() const noexcept { return size_; }  // NOLINT
  size_t size_;
};

/// 0, 1, ..., size - 1 in batches.
class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  /// How many indices this epoch has handed out.
  size_t index() const noexcept { return index_; }

 private:
  size_t size_;
  size_t index_ = 0;
};

/// A random permutation of 0..size-1 (randperm on the default generator, drawn at construction
/// and at each reset), in batches.
class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size, ScalarType index_dtype = kLong);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  /// How many indices this epoch has handed out.
  size_t index() const noexcept { return size_t(index_); }

 private:
  Tensor indices_;
  int64_t index_ = 0;
};

/// The share of one replica (`rank` of `num_replicas`) of a dataset of `size` examples. With
/// allow_duplicates each replica gets ceil(size / num_replicas) examples (wrapping around to
/// the start), without it floor(size / num_replicas).
template <typename BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                     bool allow_duplicates = true)
      : size_(size),
        num_replicas_(num_replicas),
        rank_(rank),
        epoch_(0),
        allow_duplicates_(allow_duplicates) {
    EMBER_CHECK_VALUE(num_replicas >= 1, "[DistributedSampler] num_replicas must be >= 1");
    EMBER_CHECK_VALUE(rank < num_replicas, "[DistributedSampler] Invalid rank ", rank,
                      ", rank should be in the interval [0, ", num_replicas - 1, "]");
  }
  /// Selects the shuffle of the next reset() (DistributedRandomSampler).
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }

 protected:
  size_t local_sample_count() {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }
  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_;
  bool allow_duplicates_;
};

/// A replica's share of 0..size-1 (padded by wrapping around), shuffled with std::mt19937
/// seeded by the epoch, as libtorch: every replica draws the same shuffle and takes its slice.
class DistributedRandomSampler : public DistributedSampler<> {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                           bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  /// Position in this replica's slice.
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

/// A replica's contiguous share of 0..size-1 (indices past the end wrap around).
class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                               bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  /// Position in this replica's slice.
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

/// Requests BatchSize(batch_size) until `epoch_size` examples have been asked for (for a
/// StreamDataset).
class StreamSampler : public Sampler<BatchSize> {
 public:
  explicit StreamSampler(size_t epoch_size);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<BatchSize> next(size_t batch_size) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  size_t examples_retrieved_so_far_ = 0;
  size_t epoch_size_;
};

}  // namespace ember::data::samplers
