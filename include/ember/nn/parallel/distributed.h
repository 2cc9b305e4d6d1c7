#pragma once
/// DistributedDataParallel (torch.nn.parallel.DistributedDataParallel) and its gradient
/// reducer (c10d::Reducer), on an ember::distributed::ProcessGroup.
///
/// Every process holds a replica of the model and runs forward and backward on its own part of
/// the batch; the reducer averages the gradients across processes during backward, so after
/// `loss.backward()` every replica holds the gradient of the whole batch and an optimizer step
/// keeps the replicas equal.
///
/// Example (each process of a job of `size` processes):
///
///     auto store = std::make_shared<ember::distributed::TCPStore>("127.0.0.1", store_opts);
///     auto pg = ember::distributed::make_gloo_process_group(store, rank, size);
///     Net model;                                   // a TORCH_MODULE-style holder
///     ember::nn::parallel::DistributedDataParallel<Net> ddp(model, pg);
///     ember::optim::SGD opt(ddp.parameters(), ember::optim::SGDOptions(0.1));
///     for (auto& [x, y] : my_shard) {
///       opt.zero_grad();
///       auto loss = ember::nn::functional::cross_entropy(ddp.forward(x), y);
///       loss.backward();                           // gradients averaged over the processes
///       opt.step();
///     }
///
/// Note [Gradient buckets]
/// Parameters are grouped into buckets in reverse registration order (backward produces the
/// gradients of the last layers first): the first bucket, of the last-registered parameters, is
/// capped at `first_bucket_bytes` (1 MiB, so the first all-reduce starts early in backward), the
/// others at `bucket_cap_bytes` (25 MiB); a bucket holds one dtype. Each bucket is one flat tensor.
/// A post-accumulate-grad hook marks a parameter ready; once every parameter of a bucket is ready
/// its all-reduce is started (asynchronously, while backward continues); buckets start in order.
/// At the end of backward (autograd::queue_callback) the reducer waits for the all-reduces and
/// writes the averages back into `.grad` — unless `gradient_as_bucket_view`, where each `.grad`
/// is a view of its bucket and nothing is copied. Unlike torch, the buckets are fixed at
/// construction (torch re-buckets once, in the order gradients arrived in the first iteration,
/// which for a sequential model is the layout built here from the first iteration on).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/autograd.h"
#include "ember/distributed.h"
#include "ember/nn/module.h"
#include "ember/tensor.h"

namespace ember::distributed {

/// The result of a communication hook: the reduced flat bucket, available once `wait` returns
/// (torch.futures.Future of a comm hook).
class CommFuture {
 public:
  CommFuture() = default;
  /// A future already holding `value`.
  static CommFuture ready(Tensor value);
  /// A future whose value is `finish()`, run once by the first `wait` (it waits for its work).
  static CommFuture deferred(std::function<Tensor()> finish);
  /// The value after `work` completed, mapped by `then` (identity when empty).
  static CommFuture from_work(WorkPtr work, Tensor result,
                              std::function<Tensor(Tensor)> then = nullptr);
  /// Waits and returns the value (rethrows the operation's error).
  Tensor wait();
  bool valid() const { return state_ != nullptr; }
  /// True once the value is known without blocking.
  bool done() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// One bucket handed to a communication hook (torch.distributed.GradBucket). Copies share the
/// bucket's storage.
class GradBucket {
 public:
  GradBucket(size_t index, size_t num_buckets, Tensor buffer, std::vector<Tensor> params,
             std::vector<int64_t> offsets);
  /// The bucket's position in launch order.
  size_t index() const { return index_; }
  /// The flat gradients of the bucket (1-D, contiguous).
  const Tensor& buffer() const { return buffer_; }
  /// Views of `buffer()` shaped like the parameters.
  std::vector<Tensor> gradients() const;
  /// The bucket's parameters, in bucket order.
  const std::vector<Tensor>& parameters() const { return params_; }
  /// True for the last bucket of the backward pass.
  bool is_last() const { return index_ + 1 == num_buckets_; }
  /// Replaces the bucket's values with `buffer` (same numel and dtype).
  void set_buffer(const Tensor& buffer);

 private:
  size_t index_, num_buckets_;
  Tensor buffer_;
  std::vector<Tensor> params_;
  std::vector<int64_t> offsets_;
};

/// A communication hook: reduces a bucket, returning a future of the reduced flat gradients
/// (the average over the group, as the default all-reduce gives).
using CommHook = std::function<CommFuture(GradBucket&)>;

/// The built-in hooks (torch.distributed.algorithms.ddp_comm_hooks.default_hooks).
/// all_reduce, then divide by the group size.
CommHook allreduce_hook(ProcessGroupPtr pg);
/// Casts to float16 (bfloat16), all-reduces, divides and casts back: half the traffic.
CommHook fp16_compress_hook(ProcessGroupPtr pg);
CommHook bf16_compress_hook(ProcessGroupPtr pg);

/// Options of the Reducer (DistributedDataParallel's arguments of the same names).
struct ReducerOptions {
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;
  /// Cap of the bucket of the first-registered parameters (dist._DEFAULT_FIRST_BUCKET_BYTES).
  int64_t first_bucket_bytes = 1024 * 1024;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  bool static_graph = false;
  /// Parameter names for error messages (optional; same order as the parameters).
  std::vector<std::string> param_names;
};

/// Counters of the last backward pass (for measurements and tests).
struct ReducerStats {
  /// Buckets whose all-reduce started before the end-of-backward callback ran.
  int64_t buckets_launched_during_backward = 0;
  /// Buckets whose reduction had already completed when the end-of-backward callback ran.
  int64_t buckets_done_before_finalize = 0;
  int64_t num_buckets = 0;
  int64_t iterations = 0;
};

/// Averages gradients across a process group during backward (c10d::Reducer).
class Reducer {
 public:
  /// `params`: the parameters requiring grad, in registration order.
  Reducer(std::vector<Tensor> params, ProcessGroupPtr pg, ReducerOptions opts = {});
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  /// Groups parameter indices into buckets (Note [Gradient buckets]): returns the buckets in
  /// launch order, each listing its parameters in ascending index order.
  static std::vector<std::vector<size_t>> compute_bucket_assignment(
      const std::vector<Tensor>& params, int64_t first_bucket_bytes, int64_t bucket_cap_bytes);

  /// Arms the hooks for the coming backward pass; with find_unused_parameters, parameters not
  /// reachable from `outputs` are reduced as zeros. Raises if the previous synced pass did not
  /// finish its reduction (a parameter never got a gradient).
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  /// Replaces the default all-reduce (at most once, before the first backward).
  void register_comm_hook(CommHook hook);
  bool has_comm_hook() const { return static_cast<bool>(comm_hook_); }
  /// Divisor of the gradients with the default hook (the group size unless joined ranks).
  void set_div_factor(int64_t d) { div_factor_ = d; }
  int64_t div_factor() const { return div_factor_; }

  /// For a rank that ran out of inputs (join): runs every bucket's reduction on zeros, and the
  /// used-parameter all-reduce, matching a backward pass of the other ranks.
  void join_shadow_backward();
  /// Last pass's counters.
  const ReducerStats& stats() const { return stats_; }
  const std::vector<std::vector<size_t>>& bucket_indices() const { return bucket_indices_; }
  const std::vector<Tensor>& parameters() const { return params_; }
  const ProcessGroupPtr& process_group() const { return pg_; }
  /// The flat buffer of bucket `i`.
  const Tensor& bucket_buffer(size_t i) const;

 private:
  struct Bucket;
  void on_grad_ready(size_t index);
  void mark_ready(size_t index);
  void launch_ready_buckets();
  void finalize();
  void delay_all_reduce();
  void initialize_grad_views();
  std::string unready_message() const;

  std::vector<Tensor> params_;
  ProcessGroupPtr pg_;
  ReducerOptions opts_;
  CommHook comm_hook_;
  std::vector<std::vector<size_t>> bucket_indices_;
  std::vector<std::unique_ptr<Bucket>> buckets_;
  /// bucket and offset (elements) of each parameter.
  std::vector<std::pair<size_t, int64_t>> locator_;
  std::vector<unsigned> hook_handles_;
  int64_t div_factor_;

  // Per-pass state.
  bool expect_hooks_ = false;
  bool require_finalize_ = false;
  bool first_hook_seen_ = false;
  bool finalizing_ = false;
  size_t next_bucket_ = 0;
  std::vector<char> ready_;
  std::vector<char> unused_;  ///< marked ready at the first hook
  std::vector<int32_t> local_used_;
  /// static_graph: hooks per parameter seen in the first iteration, and left in this one.
  std::vector<int> hook_counts_, hooks_left_;
  bool static_first_iteration_ = true;
  /// Globally unused parameters (after the used-map all-reduce).
  std::vector<char> global_unused_;
  ReducerStats stats_;
};

}  // namespace ember::distributed

namespace ember::nn::parallel {

/// Options of DistributedDataParallel (torch.nn.parallel.DistributedDataParallel's keywords).
struct DistributedDataParallelOptions {
  /// Broadcast rank 0's buffers before each forward (parameters are broadcast at construction).
  bool broadcast_buffers = true;
  double bucket_cap_mb = 25;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  bool static_graph = false;
};

namespace detail {
/// Raises naming the first parameter whose shape differs between ranks (all-gathers the
/// shapes; c10d's verify_params_across_processes).
void verify_param_shapes_across_processes(const std::vector<Tensor>& params,
                                          const distributed::ProcessGroupPtr& pg);
/// Copies rank `src`'s values of `tensors` into every rank's (coalesced per dtype).
void broadcast_coalesced(const std::vector<Tensor>& tensors, const distributed::ProcessGroupPtr& pg,
                         int src = 0);
/// The parameters that require grad; raises (as torch) when there are none.
std::vector<Tensor> ddp_parameters(const Module& m);
/// The tensors of a forward result.
inline void collect_tensors(std::vector<Tensor>& out, const Tensor& t) { out.push_back(t); }
inline void collect_tensors(std::vector<Tensor>& out, const std::vector<Tensor>& v) {
  out.insert(out.end(), v.begin(), v.end());
}
template <class... T>
void collect_tensors(std::vector<Tensor>& out, const std::tuple<T...>& t) {
  std::apply([&](const auto&... e) { (collect_tensors(out, e), ...); }, t);
}
template <class T>
void collect_tensors(std::vector<Tensor>&, const T&) {}
}  // namespace detail

/// Wraps a module (a ModuleHolder such as a TORCH_MODULE, or a std::shared_ptr<Impl>) for
/// data-parallel training over `pg`; see the example at the top of this header. Construction
/// is collective: every rank must construct it with the same model shapes.
template <class M>
class DistributedDataParallel {
 public:
  DistributedDataParallel(M module, distributed::ProcessGroupPtr pg,
                          DistributedDataParallelOptions options = {})
      : module_(std::move(module)), pg_(std::move(pg)), options_(options) {
    EMBER_CHECK_T(ValueError, pg_ != nullptr,
                  "[DistributedDataParallel] process group is null; create one with "
                  "make_gloo_process_group or init_process_group");
    auto params = detail::ddp_parameters(*module_);
    detail::verify_param_shapes_across_processes(params, pg_);
    auto all = module_->parameters();
    auto bufs = module_->buffers();
    all.insert(all.end(), bufs.begin(), bufs.end());
    detail::broadcast_coalesced(all, pg_, 0);
    distributed::ReducerOptions ro;
    ro.bucket_cap_bytes = int64_t(options.bucket_cap_mb * 1024 * 1024);
    ro.find_unused_parameters = options.find_unused_parameters;
    ro.gradient_as_bucket_view = options.gradient_as_bucket_view;
    ro.static_graph = options.static_graph;
    for (auto& kv : module_->named_parameters())
      if (kv.value().requires_grad()) ro.param_names.push_back(kv.key());
    reducer_ = std::make_unique<distributed::Reducer>(std::move(params), pg_, ro);
  }

  /// Runs the module's forward, then arms the reducer for the backward of its result.
  template <class... Args>
  auto forward(Args&&... args) {
    bool sync = GradMode::is_enabled() && require_backward_grad_sync_;
    if (options_.broadcast_buffers && require_forward_param_sync_ && pg_->size() > 1) {
      auto bufs = module_->buffers();
      if (!bufs.empty()) detail::broadcast_coalesced(bufs, pg_, 0);
    }
    auto out = module_->forward(std::forward<Args>(args)...);
    if (sync) {
      std::vector<Tensor> outs;
      if (options_.find_unused_parameters && !options_.static_graph)
        detail::collect_tensors(outs, out);
      reducer_->prepare_for_backward(outs);
    }
    require_forward_param_sync_ = sync;
    return out;
  }
  template <class... Args>
  auto operator()(Args&&... args) {
    return forward(std::forward<Args>(args)...);
  }

  /// While alive, backward passes only accumulate into `.grad`; the next synced backward
  /// all-reduces the accumulated gradients (torch's `with ddp.no_sync():`).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel& d) : d_(d), old_(d.require_backward_grad_sync_) {
      d_.require_backward_grad_sync_ = false;
    }
    ~NoSyncGuard() { d_.require_backward_grad_sync_ = old_; }

   private:
    DistributedDataParallel& d_;
    bool old_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  /// Replaces the all-reduce of each bucket (e.g. distributed::fp16_compress_hook(pg)).
  void register_comm_hook(distributed::CommHook hook) {
    reducer_->register_comm_hook(std::move(hook));
  }
  std::vector<Tensor> parameters() const { return module_->parameters(); }
  /// The wrapped module.
  M& module() { return module_; }
  distributed::Reducer& reducer() { return *reducer_; }
  const distributed::ProcessGroupPtr& process_group() const { return pg_; }
  /// The module's state under "module." (as torch's DDP state_dict).
  OrderedDict<std::string, Tensor> state_dict() const {
    OrderedDict<std::string, Tensor> out;
    for (auto& kv : module_->state_dict()) out.insert("module." + kv.key(), kv.value());
    return out;
  }

 private:
  M module_;
  distributed::ProcessGroupPtr pg_;
  DistributedDataParallelOptions options_;
  std::unique_ptr<distributed::Reducer> reducer_;
  bool require_backward_grad_sync_ = true;
  bool require_forward_param_sync_ = true;
};

}  // namespace ember::nn::parallel
