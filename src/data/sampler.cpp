// Samplers, following torch.utils.data's algorithms so seeded orders are reproducible.
#include <limits>
#include <numeric>

#include "ember/data/sampler.h"
#include "ember/factory.h"
#include "ember/random.h"

namespace ember::data {
namespace {

// torch seeds a fresh generator from the default one when none is given.
Generator make_generator(std::optional<Generator> gen) {
  if (gen) return *gen;
  Generator g;
  int64_t seed = randint(0, std::numeric_limits<int64_t>::max(), {1}).data_ptr<int64_t>()[0];
  g.manual_seed(uint64_t(seed));
  return g;
}

void append(std::vector<size_t>& out, const Tensor& t, size_t count) {
  const auto* p = t.data_ptr<int64_t>();
  for (size_t i = 0; i < count; ++i) out.push_back(size_t(p[i]));
}

}  // namespace

std::vector<size_t> SequentialSampler::indices() {
  std::vector<size_t> out(n_);
  std::iota(out.begin(), out.end(), size_t(0));
  return out;
}

RandomSampler::RandomSampler(size_t n, bool replacement, std::optional<size_t> num_samples,
                             std::optional<Generator> gen)
    : n_(n),
      num_samples_(num_samples.value_or(n)),
      replacement_(replacement),
      gen_(make_generator(gen)) {
  EMBER_CHECK_VALUE(!num_samples || *num_samples > 0,
                    "[RandomSampler] num_samples should be a positive integer value, but got "
                    "num_samples=0");
  EMBER_CHECK_VALUE(n_ > 0 || num_samples_ == 0,
                    "[RandomSampler] cannot draw samples from an empty dataset");
}

std::vector<size_t> RandomSampler::indices() {
  std::vector<size_t> out;
  out.reserve(num_samples_);
  if (n_ == 0) return out;
  if (replacement_) {
    // torch draws in chunks of 32.
    for (size_t i = 0; i < num_samples_ / 32; ++i)
      append(out, randint(0, int64_t(n_), {32}, gen_), 32);
    size_t rest = num_samples_ % 32;
    if (rest) append(out, randint(0, int64_t(n_), {int64_t(rest)}, gen_), rest);
    return out;
  }
  for (size_t i = 0; i < num_samples_ / n_; ++i) append(out, randperm(int64_t(n_), gen_), n_);
  size_t rest = num_samples_ % n_;
  if (rest) append(out, randperm(int64_t(n_), gen_), rest);
  return out;
}

SubsetRandomSampler::SubsetRandomSampler(std::vector<size_t> indices, std::optional<Generator> gen)
    : indices_(std::move(indices)), gen_(gen ? *gen : Generator(default_generator())) {}

std::vector<size_t> SubsetRandomSampler::indices() {
  std::vector<size_t> out;
  out.reserve(indices_.size());
  Tensor perm = randperm(int64_t(indices_.size()), gen_);
  const auto* p = perm.data_ptr<int64_t>();
  for (size_t i = 0; i < indices_.size(); ++i) out.push_back(indices_[size_t(p[i])]);
  return out;
}

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, size_t num_samples,
                                             bool replacement, std::optional<Generator> gen)
    : weights_(tensor(weights, TensorOptions().dtype(kDouble))),
      num_samples_(num_samples),
      replacement_(replacement),
      gen_(gen ? *gen : Generator(default_generator())) {
  EMBER_CHECK_VALUE(num_samples > 0,
                    "[WeightedRandomSampler] num_samples should be a positive integer value");
  EMBER_CHECK_VALUE(!weights.empty(), "[WeightedRandomSampler] weights must not be empty");
}

std::vector<size_t> WeightedRandomSampler::indices() {
  std::vector<size_t> out;
  Tensor s = multinomial(weights_, int64_t(num_samples_), replacement_, gen_);
  append(out, s, num_samples_);
  return out;
}

DistributedSampler::DistributedSampler(size_t dataset_size, size_t num_replicas, size_t rank,
                                       bool shuffle, uint64_t seed, bool drop_last)
    : n_(dataset_size),
      replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      drop_last_(drop_last),
      seed_(seed) {
  EMBER_CHECK_VALUE(num_replicas >= 1, "[DistributedSampler] num_replicas must be >= 1");
  EMBER_CHECK_VALUE(rank < num_replicas, "[DistributedSampler] Invalid rank ", rank,
                    ", rank should be in the interval [0, ", num_replicas - 1, "]");
  if (drop_last_ && n_ % replicas_ != 0)
    num_samples_ = (n_ - replicas_ + replicas_ - 1) / replicas_;  // ceil((n - R) / R)
  else
    num_samples_ = (n_ + replicas_ - 1) / replicas_;
  total_size_ = num_samples_ * replicas_;
}

std::vector<size_t> DistributedSampler::indices() {
  std::vector<size_t> order;
  if (shuffle_) {
    Generator g;
    g.manual_seed(seed_ + epoch_);
    append(order, randperm(int64_t(n_), g), n_);
  } else {
    order.resize(n_);
    std::iota(order.begin(), order.end(), size_t(0));
  }
  if (!drop_last_) {
    // Pad by wrapping around (repeatedly when the padding exceeds the dataset).
    for (size_t i = 0; order.size() < total_size_ && n_ > 0; ++i) order.push_back(order[i % n_]);
  } else {
    order.resize(total_size_);
  }
  std::vector<size_t> out;
  for (size_t i = rank_; i < total_size_; i += replicas_) out.push_back(order[i]);
  return out;
}

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, size_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  EMBER_CHECK_VALUE(sampler_ != nullptr, "[BatchSampler] sampler is null");
  EMBER_CHECK_VALUE(batch_size >= 1,
                    "[BatchSampler] batch_size should be a positive integer value, but got "
                    "batch_size=",
                    batch_size);
}

std::vector<std::vector<size_t>> BatchSampler::batches() {
  std::vector<size_t> idx = sampler_->indices();
  std::vector<std::vector<size_t>> out;
  for (size_t i = 0; i < idx.size(); i += batch_size_) {
    size_t e = std::min(idx.size(), i + batch_size_);
    if (e - i < batch_size_ && drop_last_) break;
    out.emplace_back(idx.begin() + std::ptrdiff_t(i), idx.begin() + std::ptrdiff_t(e));
  }
  return out;
}

size_t BatchSampler::size() const {
  size_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

}  // namespace ember::data
