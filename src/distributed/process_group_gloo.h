#pragma once
// The Gloo process group (Note [Gloo process group] in process_group_gloo.cpp).

#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/fault_report.h"
#include "ember/distributed.h"

namespace gloo {
class Context;
namespace transport {
class Device;
class UnboundBuffer;
}  // namespace transport
}  // namespace gloo

namespace ember::distributed::detail {

/// The Work of a Gloo operation: a one-shot future completed by the thread that ran it.
class GlooWork : public Work {
 public:
  GlooWork(std::string name, uint64_t seq) : name_(std::move(name)), seq_(seq) {}
  bool is_completed() override;
  bool is_success() override;
  std::exception_ptr exception() override;
  bool wait(Milliseconds timeout = kUnsetTimeout) override;
  std::vector<Tensor> result() override;
  int source_rank() const override;
  void add_callback(std::function<void()> cb) override;
  std::string name() const override { return name_; }
  uint64_t sequence_number() const override { return seq_; }

  /// Marks the work done (with `error` if it failed) and runs the callbacks.
  void finish(std::exception_ptr error, std::vector<Tensor> outputs, int source_rank = -1);

 private:
  std::string name_;
  uint64_t seq_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<Tensor> outputs_;
  int source_rank_ = -1;
  std::vector<std::function<void()>> callbacks_;
};

/// Set (by InlineSyncScope) while the front end issues a collective it will wait for at once:
/// when the group is idle and the collective small (up to 256 KiB), it then runs on the calling
/// thread (no hand-off to the worker and back), in the same order it would have had there.
extern thread_local bool t_inline_sync;
struct InlineSyncScope {
  bool prev;
  InlineSyncScope() : prev(t_inline_sync) { t_inline_sync = true; }
  ~InlineSyncScope() { t_inline_sync = prev; }
};

/// A tensor as Gloo sees it: contiguous, conjugation resolved. `buf` is `user` itself when
/// that already holds, else a copy written back to `user` after the operation.
struct Staged {
  Tensor user;
  Tensor buf;
  bool copy_back = false;
  void* data() const { return buf.data_ptr(); }
  size_t nbytes() const { return buf.nbytes(); }
  /// Writes `buf` into `user` when they differ.
  void finish() const;
};
/// Stages `t` for reading (and for writing back when `output`).
Staged stage(const Tensor& t, bool output);

class ProcessGroupGloo final : public ProcessGroup,
                               public std::enable_shared_from_this<ProcessGroupGloo> {
 public:
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size,
                   const ProcessGroupGlooOptions& opts);
  ~ProcessGroupGloo() override;

  std::string backend_name() const override { return "gloo"; }
  Milliseconds timeout() const override { return timeout_; }
  uint64_t sequence_number() const override;

  WorkPtr broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts) override;
  WorkPtr allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts) override;
  WorkPtr reduce(std::vector<Tensor>& tensors, const ReduceOptions& opts) override;
  WorkPtr allgather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs,
                    const AllgatherOptions& opts) override;
  WorkPtr allgather_into_tensor(Tensor& output, Tensor& input,
                                const AllgatherOptions& opts) override;
  WorkPtr gather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs,
                 const GatherOptions& opts) override;
  WorkPtr scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs,
                  const ScatterOptions& opts) override;
  WorkPtr reduce_scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs,
                         const ReduceScatterOptions& opts) override;
  WorkPtr reduce_scatter_tensor(Tensor& output, Tensor& input,
                                const ReduceScatterOptions& opts) override;
  WorkPtr alltoall_base(Tensor& output, Tensor& input, std::vector<int64_t> output_split_sizes,
                        std::vector<int64_t> input_split_sizes,
                        const AllToAllOptions& opts) override;
  WorkPtr alltoall(std::vector<Tensor>& outputs, std::vector<Tensor>& inputs,
                   const AllToAllOptions& opts) override;
  WorkPtr barrier(const BarrierOptions& opts) override;
  WorkPtr send(std::vector<Tensor>& tensors, int dst_rank, int tag) override;
  WorkPtr recv(std::vector<Tensor>& tensors, int src_rank, int tag) override;
  WorkPtr recv_anysource(std::vector<Tensor>& tensors, int tag) override;

  const std::string& group_desc() const { return reporter_->group_desc(); }

 private:
  /// What a queued collective runs on the worker: the Gloo calls, with this tag and timeout.
  using Body = std::function<void(uint32_t tag, Milliseconds timeout)>;
  struct Job {
    std::shared_ptr<GlooWork> work;
    Body body;
    Fingerprint fp;
    uint32_t tag;  // see Note [Collective tags]
    Milliseconds timeout;
    std::vector<Staged> outputs;  // written back after the body, then the work's result
  };
  /// Queues collective `name`; `nbytes` is the byte count every rank must pass (0: none).
  WorkPtr enqueue(const char* name, Milliseconds timeout, Fingerprint fp, size_t nbytes,
                  std::vector<Staged> outputs, Body body);
  void worker_loop();
  void run(Job& job);
  Milliseconds op_timeout(Milliseconds t) const { return t == kUnsetTimeout ? timeout_ : t; }
  WorkPtr start_p2p(const char* name, std::vector<Tensor>& tensors, int peer, int tag, bool is_send,
                    bool any_source);

  std::shared_ptr<Store> store_;
  Milliseconds timeout_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<FaultReporter> reporter_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  uint64_t next_seq_ = 0;  // guarded by mu_
  bool stop_ = false;
  bool running_ = false;  // a job is running (on the worker or inline): the next one waits
  std::string broken_;    // the first transport failure: the group is unusable after it
  std::thread worker_;

  // Point-to-point operations each wait on a thread of their own (so no wait blocks another).
  struct P2P {
    std::thread thread;
    std::shared_ptr<gloo::transport::UnboundBuffer> buffer;
    std::shared_ptr<std::atomic<bool>> done;
    bool is_send;
  };
  std::mutex p2p_mu_;
  std::list<P2P> p2p_;
};

}  // namespace ember::distributed::detail
