// libtorch-shaped samplers (ember::data::samplers). The index orders follow libtorch 1.13 exactly,
// including DistributedRandomSampler's std::mt19937 shuffle, so a distributed job mixing ember
// and libtorch replicas splits a dataset the same way.
#include <algorithm>
#include <numeric>
#include <random>

#include "ember/data/samplers.h"
#include "ember/random.h"

namespace ember::data::samplers {
namespace {

[[noreturn]] void no_archive(const char* sampler, const char* what) {
  EMBER_THROW(NotImplementedError, "[", sampler, "] ", what,
              " needs serialize archives, which ember does not provide yet");
}

}  // namespace

// ---- SequentialSampler ----

SequentialSampler::SequentialSampler(size_t size) : size_(size) {}

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  const size_t remaining = size_ - index_;
  if (remaining == 0) return std::nullopt;
  std::vector<size_t> batch(std::min(batch_size, remaining));
  for (size_t& i : batch) i = index_++;
  return batch;
}

void SequentialSampler::save(serialize::OutputArchive&) const {
  no_archive("SequentialSampler", "save");
}
void SequentialSampler::load(serialize::InputArchive&) { no_archive("SequentialSampler", "load"); }

// ---- RandomSampler ----

RandomSampler::RandomSampler(int64_t size, ScalarType index_dtype) {
  EMBER_CHECK_VALUE(size >= 0, "[RandomSampler] size must be non-negative, got ", size);
  indices_ = randperm(size, TensorOptions().dtype(index_dtype));
}

void RandomSampler::reset(std::optional<size_t> new_size) {
  const int64_t size = new_size ? int64_t(*new_size) : indices_.numel();
  indices_ = randperm(size, TensorOptions().dtype(indices_.dtype()));
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  const int64_t remaining = indices_.numel() - index_;
  if (remaining == 0) return std::nullopt;
  const int64_t n = std::min<int64_t>(int64_t(batch_size), remaining);
  Tensor slice = indices_.narrow(0, index_, n).to(kLong).contiguous();
  const auto* p = slice.data_ptr<int64_t>();
  std::vector<size_t> batch(p, p + n);
  index_ += n;
  return batch;
}

void RandomSampler::save(serialize::OutputArchive&) const { no_archive("RandomSampler", "save"); }
void RandomSampler::load(serialize::InputArchive&) { no_archive("RandomSampler", "load"); }

// ---- DistributedRandomSampler ----

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  reset(size_);
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
  std::mt19937 rand(epoch_);
  std::shuffle(all_indices_.begin(), all_indices_.end(), rand);
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::populate_indices() {
  // Every replica lays out the same padded list (the tail wraps to the start) and shuffles it
  // with the same seed; replica r then reads its own slice.
  const size_t local = local_sample_count();
  const size_t count = num_replicas_ == 1 ? size_ : local * num_replicas_;
  all_indices_.resize(count);
  std::iota(all_indices_.begin(), all_indices_.end(), size_t(0));
  // (libtorch writes i - size_, which leaves the dataset when the padding exceeds its size.)
  for (size_t i = size_; i < count; ++i) all_indices_[i] = (i - size_) % size_;
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<size_t> batch(all_indices_.begin() + std::ptrdiff_t(sample_index_),
                            all_indices_.begin() + std::ptrdiff_t(end));
  sample_index_ = end;
  return batch;
}

void DistributedRandomSampler::save(serialize::OutputArchive&) const {
  no_archive("DistributedRandomSampler", "save");
}
void DistributedRandomSampler::load(serialize::InputArchive&) {
  no_archive("DistributedRandomSampler", "load");
}

// ---- DistributedSequentialSampler ----

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas,
                                                           size_t rank, bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  const size_t size = new_size.value_or(size_);
  if (size != size_) {
    size_ = size;
    populate_indices();
  } else {
    sample_index_ = begin_index_;
  }
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<size_t> batch(end - sample_index_);
  std::iota(batch.begin(), batch.end(), sample_index_);
  if (end >= size_)
    for (size_t& i : batch) i %= size_;  // the padding wraps around to the start
  sample_index_ = end;
  return batch;
}

void DistributedSequentialSampler::save(serialize::OutputArchive&) const {
  no_archive("DistributedSequentialSampler", "save");
}
void DistributedSequentialSampler::load(serialize::InputArchive&) {
  no_archive("DistributedSequentialSampler", "load");
}

// ---- StreamSampler ----

StreamSampler::StreamSampler(size_t epoch_size) : epoch_size_(epoch_size) {}

void StreamSampler::reset(std::optional<size_t> new_size) {
  if (new_size) epoch_size_ = *new_size;
  examples_retrieved_so_far_ = 0;
}

std::optional<BatchSize> StreamSampler::next(size_t batch_size) {
  if (examples_retrieved_so_far_ >= epoch_size_) return std::nullopt;
  batch_size = std::min(batch_size, epoch_size_ - examples_retrieved_so_far_);
  examples_retrieved_so_far_ += batch_size;
  return BatchSize(batch_size);
}

void StreamSampler::save(serialize::OutputArchive&) const { no_archive("StreamSampler", "save"); }
void StreamSampler::load(serialize::InputArchive&) { no_archive("StreamSampler", "load"); }

}  // namespace ember::data::samplers
