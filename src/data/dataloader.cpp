// DataLoader: batches in sampler order, assembled inline or by a pool of prefetching threads.
#include "ember/data/dataloader.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace ember::data {

// Note [DataLoader workers]
// Workers claim batch numbers in order (next++) but never more than `capacity` ahead of the
// consumer, so memory stays bounded; results are keyed by batch number and handed out in order
// (deterministic whatever the thread timing). A new epoch bumps `epoch`, so a worker still busy
// with a batch of the old epoch drops its result instead of publishing it.
struct DataLoader::Pool {
  std::mutex m;
  std::condition_variable work_cv, done_cv;
  std::vector<std::vector<size_t>> batches;
  uint64_t epoch = 0;
  size_t next = 0, consumed = 0, capacity = 1;
  bool active = false, stop = false;
  struct Result {
    Example<> example;
    std::exception_ptr error;
  };
  std::map<size_t, Result> results;
  std::vector<std::thread> threads;

  void run(DataLoader* loader) {
    std::unique_lock<std::mutex> lk(m);
    while (true) {
      work_cv.wait(lk, [&] {
        return stop || (active && next < batches.size() && next < consumed + capacity);
      });
      if (stop) return;
      size_t k = next++;
      uint64_t ep = epoch;
      std::vector<size_t> indices = batches[k];
      lk.unlock();
      Result r;
      try {
        r.example = loader->load(indices);
      } catch (...) {
        r.error = std::current_exception();
      }
      lk.lock();
      if (ep == epoch && active) {
        results.emplace(k, std::move(r));
        done_cv.notify_all();
      }
    }
  }
};

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  EMBER_CHECK_VALUE(dataset_ != nullptr, "[DataLoader] dataset is null");
  if (options_.shuffle()) {
    Generator g;
    if (options_.seed())
      g.manual_seed(*options_.seed());
    else
      g.seed();
    sampler_ = std::make_shared<RandomSampler>(dataset_->size(), false, std::nullopt, g);
  } else {
    sampler_ = std::make_shared<SequentialSampler>(dataset_->size());
  }
  EMBER_CHECK_VALUE(options_.batch_size() >= 1,
                    "[DataLoader] batch_size should be a positive integer value, but got "
                    "batch_size=0");
  EMBER_CHECK_VALUE(options_.prefetch_factor() >= 1, "[DataLoader] prefetch_factor must be >= 1");
}

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, std::shared_ptr<Sampler> sampler,
                       DataLoaderOptions options)
    : dataset_(std::move(dataset)), sampler_(std::move(sampler)), options_(std::move(options)) {
  EMBER_CHECK_VALUE(dataset_ != nullptr, "[DataLoader] dataset is null");
  EMBER_CHECK_VALUE(sampler_ != nullptr, "[DataLoader] sampler is null");
  EMBER_CHECK_VALUE(!options_.shuffle(),
                    "[DataLoader] sampler option is mutually exclusive "
                    "with shuffle");
  EMBER_CHECK_VALUE(options_.batch_size() >= 1,
                    "[DataLoader] batch_size should be a positive integer value, but got "
                    "batch_size=0");
  EMBER_CHECK_VALUE(options_.prefetch_factor() >= 1, "[DataLoader] prefetch_factor must be >= 1");
}

DataLoader::~DataLoader() { stop_workers(); }

size_t DataLoader::size() const {
  size_t n = sampler_->size(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

Example<> DataLoader::load(const std::vector<size_t>& indices) {
  if (!options_.collate()) return dataset_->get_batch(indices);
  std::vector<Example<>> samples;
  samples.reserve(indices.size());
  for (size_t i : indices) samples.push_back(dataset_->get(i));
  return options_.collate()(std::move(samples));
}

void DataLoader::stop_workers() {
  if (!pool_) return;
  {
    std::lock_guard<std::mutex> lk(pool_->m);
    pool_->stop = true;
  }
  pool_->work_cv.notify_all();
  for (auto& t : pool_->threads) t.join();
  pool_.reset();
}

DataLoader::Iterator DataLoader::begin() {
  BatchSampler bs(sampler_, options_.batch_size(), options_.drop_last());
  auto batches = bs.batches();
  ++epoch_;
  cursor_ = 0;
  if (options_.workers() == 0) {
    batches_ = std::move(batches);
  } else {
    batches_.clear();
    if (!pool_) {
      pool_ = std::make_unique<Pool>();
      pool_->capacity = options_.workers() * options_.prefetch_factor();
      for (size_t i = 0; i < options_.workers(); ++i)
        pool_->threads.emplace_back([this] { pool_->run(this); });
    }
    {
      std::lock_guard<std::mutex> lk(pool_->m);
      pool_->batches = std::move(batches);
      pool_->epoch = epoch_;
      pool_->next = pool_->consumed = 0;
      pool_->results.clear();
      pool_->active = true;
    }
    pool_->work_cv.notify_all();
  }
  Iterator it(this, epoch_);
  ++it;
  return it;
}

std::optional<Example<>> DataLoader::next_batch(uint64_t epoch) {
  EMBER_CHECK(epoch == epoch_,
              "[DataLoader] this iterator belongs to a finished epoch (begin() "
              "was called again)");
  if (!pool_) {
    if (cursor_ >= batches_.size()) return std::nullopt;
    return load(batches_[cursor_++]);
  }
  Pool& p = *pool_;
  std::unique_lock<std::mutex> lk(p.m);
  if (p.consumed >= p.batches.size()) {
    p.active = false;
    lk.unlock();
    if (!options_.persistent_workers()) stop_workers();
    return std::nullopt;
  }
  size_t k = p.consumed;
  auto ready = [&] { return p.results.count(k) != 0; };
  if (options_.timeout().count() > 0) {
    EMBER_CHECK(p.done_cv.wait_for(lk, options_.timeout(), ready), "[DataLoader] timed out after ",
                options_.timeout().count(), " ms waiting for batch ", k, " from the workers");
  } else {
    p.done_cv.wait(lk, ready);
  }
  auto node = p.results.extract(k);
  ++p.consumed;
  lk.unlock();
  p.work_cv.notify_all();
  if (node.mapped().error) std::rethrow_exception(node.mapped().error);
  return std::move(node.mapped().example);
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  std::optional<Example<>> next = loader_->next_batch(epoch_);
  if (next) {
    current_ = std::move(*next);
  } else {
    loader_ = nullptr;
    current_ = Example<>{};
  }
  return *this;
}

std::unique_ptr<DataLoader> make_data_loader(std::shared_ptr<Dataset> dataset,
                                             DataLoaderOptions options) {
  return std::make_unique<DataLoader>(std::move(dataset), std::move(options));
}

std::unique_ptr<DataLoader> make_data_loader(std::shared_ptr<Dataset> dataset,
                                             std::shared_ptr<Sampler> sampler,
                                             DataLoaderOptions options) {
  return std::make_unique<DataLoader>(std::move(dataset), std::move(sampler), std::move(options));
}

}  // namespace ember::data
