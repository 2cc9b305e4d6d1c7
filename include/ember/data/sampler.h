#pragma once
/// Samplers: the order in which a DataLoader visits dataset indices, one epoch at a time.
/// Random samplers draw from an ember::Generator, so a seeded generator gives a fixed order.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::data {

/// Produces the indices of one epoch.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// The indices of the next epoch (random samplers advance their generator).
  virtual std::vector<size_t> indices() = 0;
  /// How many indices one epoch yields.
  virtual size_t size() const = 0;
};

/// 0, 1, ..., n - 1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(size_t n) : n_(n) {}
  std::vector<size_t> indices() override;
  size_t size() const override { return n_; }

 private:
  size_t n_;
};

/// A random order of 0..n-1 (as torch's RandomSampler: whole permutations, then a cut one), or
/// `num_samples` draws with replacement. Without a generator, one is seeded from the default.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(size_t n, bool replacement = false,
                         std::optional<size_t> num_samples = std::nullopt,
                         std::optional<Generator> gen = std::nullopt);
  std::vector<size_t> indices() override;
  size_t size() const override { return num_samples_; }

 private:
  size_t n_, num_samples_;
  bool replacement_;
  Generator gen_;
};

/// The given indices in a random order.
class SubsetRandomSampler : public Sampler {
 public:
  explicit SubsetRandomSampler(std::vector<size_t> indices,
                               std::optional<Generator> gen = std::nullopt);
  std::vector<size_t> indices() override;
  size_t size() const override { return indices_.size(); }

 private:
  std::vector<size_t> indices_;
  Generator gen_;
};

/// `num_samples` indices drawn with probability proportional to `weights` (multinomial).
class WeightedRandomSampler : public Sampler {
 public:
  WeightedRandomSampler(std::vector<double> weights, size_t num_samples, bool replacement = true,
                        std::optional<Generator> gen = std::nullopt);
  std::vector<size_t> indices() override;
  size_t size() const override { return num_samples_; }

 private:
  Tensor weights_;
  size_t num_samples_;
  bool replacement_;
  Generator gen_;
};

/// Each replica's share of a dataset, as torch's DistributedSampler: the order (a permutation
/// seeded with seed + epoch when shuffling) is padded by wrapping around (or cut, with
/// drop_last) to a multiple of num_replicas, and replica r takes positions r, r + R, ...
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(size_t dataset_size, size_t num_replicas, size_t rank, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false);
  std::vector<size_t> indices() override;
  size_t size() const override { return num_samples_; }
  /// Selects the permutation of an epoch (call before each epoch when shuffling).
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }

 private:
  size_t n_, replicas_, rank_, num_samples_, total_size_;
  bool shuffle_, drop_last_;
  uint64_t seed_, epoch_ = 0;
};

/// Groups a sampler's indices into batches of `batch_size` (the last one shorter unless
/// drop_last).
class BatchSampler {
 public:
  BatchSampler(std::shared_ptr<Sampler> sampler, size_t batch_size, bool drop_last);
  /// The batches of the next epoch.
  std::vector<std::vector<size_t>> batches();
  /// The number of batches per epoch.
  size_t size() const;

 private:
  std::shared_ptr<Sampler> sampler_;
  size_t batch_size_;
  bool drop_last_;
};

}  // namespace ember::data
