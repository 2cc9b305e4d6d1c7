// The non-template parts of the libtorch-shaped loaders: options, WorkerException and the worker
// pool (threads, queue, ordering, timeout), so the templates in dataloader.h stay thin.
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "ember/data/dataloader.h"

namespace ember::data {

FullDataLoaderOptions::FullDataLoaderOptions(const DataLoaderOptions& options)
    : batch_size(options.batch_size()),
      workers(options.workers()),
      max_jobs(options.max_jobs().value_or(2 * options.workers())),
      timeout(options.timeout().count() > 0 ? std::optional(options.timeout()) : std::nullopt),
      enforce_ordering(options.enforce_ordering()),
      drop_last(options.drop_last()) {}

WorkerException::WorkerException(std::exception_ptr original)
    : original_exception(std::move(original)),
      message("Caught exception in DataLoader worker thread.") {
  try {
    std::rethrow_exception(original_exception);
  } catch (const std::exception& e) {
    message += " Original message: ";
    message += e.what();
  } catch (...) {
  }
}

namespace detail {

// Note [DataLoader worker pool]
// Jobs carry a sequence number; results are keyed by it, so the consumer can take them in push
// order (enforce_ordering) or as they finish. `in_flight` counts jobs pushed and not yet popped:
// pop() returns nullopt when it is zero, which ends an epoch. reset() bumps `generation`, so a
// job still running from the old epoch drops its result, and waits until none runs, so the
// loader may then touch the sampler and shared datasets safely.
struct WorkerPool::State {
  std::mutex m;
  std::condition_variable job_cv, result_cv, idle_cv;
  std::deque<std::pair<size_t, Job>> jobs;
  std::map<size_t, Outcome> results;
  size_t next_seq = 0, next_out = 0, in_flight = 0, running = 0;
  uint64_t generation = 0;
  bool ordered = true, stop = false;
  std::vector<std::thread> threads;

  void run(size_t worker) {
    std::unique_lock<std::mutex> lk(m);
    while (true) {
      job_cv.wait(lk, [&] { return stop || !jobs.empty(); });
      if (stop) return;
      auto [seq, job] = std::move(jobs.front());
      jobs.pop_front();
      uint64_t gen = generation;
      ++running;
      lk.unlock();
      Outcome out;
      try {
        out.value = job(worker);
      } catch (...) {
        out.error = std::current_exception();
      }
      job = nullptr;  // release captured state outside the lock's critical path
      lk.lock();
      --running;
      if (gen == generation) {
        results.emplace(seq, std::move(out));
        result_cv.notify_all();
      }
      if (running == 0) idle_cv.notify_all();
    }
  }
};

WorkerPool::WorkerPool(size_t workers, bool enforce_ordering) : state_(std::make_unique<State>()) {
  state_->ordered = enforce_ordering;
  for (size_t w = 0; w < workers; ++w) state_->threads.emplace_back([this, w] { state_->run(w); });
}

WorkerPool::~WorkerPool() { join(); }

void WorkerPool::push(Job job) {
  {
    std::lock_guard<std::mutex> lk(state_->m);
    state_->jobs.emplace_back(state_->next_seq++, std::move(job));
    ++state_->in_flight;
  }
  state_->job_cv.notify_one();
}

std::optional<WorkerPool::Outcome> WorkerPool::pop(
    std::optional<std::chrono::milliseconds> timeout) {
  State& s = *state_;
  std::unique_lock<std::mutex> lk(s.m);
  if (s.in_flight == 0) return std::nullopt;
  auto ready = [&] { return s.ordered ? s.results.count(s.next_out) != 0 : !s.results.empty(); };
  if (timeout) {
    EMBER_CHECK(s.result_cv.wait_for(lk, *timeout, ready),
                "[DataLoader] Timeout in DataLoader queue while waiting for next batch (timeout "
                "was ",
                timeout->count(), " ms)");
  } else {
    s.result_cv.wait(lk, ready);
  }
  auto it = s.ordered ? s.results.find(s.next_out) : s.results.begin();
  Outcome out = std::move(it->second);
  s.results.erase(it);
  --s.in_flight;
  if (s.ordered) ++s.next_out;
  return out;
}

void WorkerPool::reset() {
  State& s = *state_;
  std::unique_lock<std::mutex> lk(s.m);
  ++s.generation;
  s.jobs.clear();
  s.idle_cv.wait(lk, [&] { return s.running == 0; });
  s.results.clear();
  s.next_seq = s.next_out = s.in_flight = 0;
}

void WorkerPool::join() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lk(s.m);
    if (s.stop && s.threads.empty()) return;
    s.stop = true;
  }
  s.job_cv.notify_all();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
}

}  // namespace detail
}  // namespace ember::data
