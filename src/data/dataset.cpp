// Datasets: TensorDataset, Subset, ConcatDataset, random_split and the default batch stacking.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "ember/data/dataset.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/ops.h"
#include "ember/random.h"

namespace ember::data {
namespace {

Tensor index_tensor(const std::vector<size_t>& indices) {
  Tensor t = empty({int64_t(indices.size())}, TensorOptions().dtype(kLong));
  auto* p = t.data_ptr<int64_t>();
  for (size_t i = 0; i < indices.size(); ++i) p[i] = int64_t(indices[i]);
  return t;
}

}  // namespace

Example<> Dataset::get_batch(const std::vector<size_t>& indices) {
  std::vector<Example<>> samples;
  samples.reserve(indices.size());
  for (size_t i : indices) samples.push_back(get(i));
  return stack_examples(samples);
}

Example<> stack_examples(const std::vector<Example<>>& examples) {
  EMBER_CHECK(!examples.empty(), "[stack_examples] cannot stack an empty list of examples");
  std::vector<Tensor> data, target;
  bool has_target = true;
  for (const Example<>& e : examples) {
    data.push_back(e.data);
    has_target = has_target && e.target.defined();
    if (e.target.defined()) target.push_back(e.target);
  }
  Example<> out;
  out.data = stack(data, 0);
  if (has_target) out.target = stack(target, 0);
  return out;
}

TensorDataset::TensorDataset(Tensor data, Tensor target)
    : data_(std::move(data)), target_(std::move(target)) {
  EMBER_CHECK_VALUE(data_.defined() && data_.dim() >= 1,
                    "[TensorDataset] data must be a tensor of at least 1 dim");
  size_ = size_t(data_.size(0));
  if (target_.defined())
    EMBER_CHECK_VALUE(target_.dim() >= 1 && target_.size(0) == data_.size(0),
                      "[TensorDataset] data has ", data_.size(0), " samples but target has ",
                      target_.dim() >= 1 ? target_.size(0) : int64_t(-1));
}

Example<> TensorDataset::get(size_t index) {
  EMBER_CHECK_INDEX(index < size_, "[TensorDataset] index ", index, " is out of range for ", size_,
                    " samples");
  Example<> e;
  e.data = data_.select(0, int64_t(index));
  if (target_.defined()) e.target = target_.select(0, int64_t(index));
  return e;
}

Example<> TensorDataset::get_batch(const std::vector<size_t>& indices) {
  for (size_t i : indices)
    EMBER_CHECK_INDEX(i < size_, "[TensorDataset] index ", i, " is out of range for ", size_,
                      " samples");
  Tensor idx = index_tensor(indices);
  Example<> e;
  e.data = index_select(data_, 0, idx);
  if (target_.defined()) e.target = index_select(target_, 0, idx);
  return e;
}

Subset::Subset(std::shared_ptr<Dataset> dataset, std::vector<size_t> indices)
    : dataset_(std::move(dataset)), indices_(std::move(indices)) {
  EMBER_CHECK_VALUE(dataset_ != nullptr, "[Subset] dataset is null");
  size_t n = dataset_->size();
  for (size_t i : indices_)
    EMBER_CHECK_INDEX(i < n, "[Subset] index ", i, " is out of range for a dataset of ", n,
                      " samples");
}

Example<> Subset::get(size_t index) {
  EMBER_CHECK_INDEX(index < indices_.size(), "[Subset] index ", index, " is out of range for ",
                    indices_.size(), " samples");
  return dataset_->get(indices_[index]);
}

Example<> Subset::get_batch(const std::vector<size_t>& indices) {
  std::vector<size_t> mapped;
  mapped.reserve(indices.size());
  for (size_t i : indices) {
    EMBER_CHECK_INDEX(i < indices_.size(), "[Subset] index ", i, " is out of range for ",
                      indices_.size(), " samples");
    mapped.push_back(indices_[i]);
  }
  return dataset_->get_batch(mapped);
}

ConcatDataset::ConcatDataset(std::vector<std::shared_ptr<Dataset>> datasets)
    : datasets_(std::move(datasets)) {
  EMBER_CHECK_VALUE(!datasets_.empty(), "[ConcatDataset] needs at least one dataset");
  size_t total = 0;
  for (const auto& d : datasets_) {
    EMBER_CHECK_VALUE(d != nullptr, "[ConcatDataset] a dataset is null");
    total += d->size();
    offsets_.push_back(total);
  }
}

Example<> ConcatDataset::get(size_t index) {
  EMBER_CHECK_INDEX(index < size(), "[ConcatDataset] index ", index, " is out of range for ",
                    size(), " samples");
  size_t k = size_t(std::upper_bound(offsets_.begin(), offsets_.end(), index) - offsets_.begin());
  return datasets_[k]->get(k == 0 ? index : index - offsets_[k - 1]);
}

std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<Dataset> dataset,
                                                  const std::vector<size_t>& lengths,
                                                  std::optional<Generator> gen) {
  EMBER_CHECK_VALUE(dataset != nullptr, "[random_split] dataset is null");
  size_t total = std::accumulate(lengths.begin(), lengths.end(), size_t(0));
  EMBER_CHECK_VALUE(total == dataset->size(), "[random_split] sum of input lengths (", total,
                    ") does not equal the length of the input dataset (", dataset->size(), ")");
  Tensor perm = randperm(int64_t(total), gen);
  const auto* p = perm.data_ptr<int64_t>();
  std::vector<std::shared_ptr<Subset>> out;
  size_t offset = 0;
  for (size_t len : lengths) {
    std::vector<size_t> idx(p + offset, p + offset + len);
    out.push_back(std::make_shared<Subset>(dataset, std::move(idx)));
    offset += len;
  }
  return out;
}

}  // namespace ember::data
