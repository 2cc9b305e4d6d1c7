// DistributedDataParallel's gradient reducer (Note [Gradient buckets] in
// include/ember/nn/parallel/distributed.h).
#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "autograd/meta.h"
#include "ember/autograd_engine.h"
#include "ember/factory.h"
#include "ember/nn/parallel/distributed.h"

namespace ember::distributed {

// ---- CommFuture ----

struct CommFuture::State {
  std::mutex m;
  std::function<Tensor()> finish;
  WorkPtr work;
  Tensor value;
  bool has_value = false;
  std::exception_ptr error;
};

CommFuture CommFuture::ready(Tensor value) {
  CommFuture f;
  f.state_ = std::make_shared<State>();
  f.state_->value = std::move(value);
  f.state_->has_value = true;
  return f;
}

CommFuture CommFuture::deferred(std::function<Tensor()> finish) {
  CommFuture f;
  f.state_ = std::make_shared<State>();
  f.state_->finish = std::move(finish);
  return f;
}

CommFuture CommFuture::from_work(WorkPtr work, Tensor result, std::function<Tensor(Tensor)> then) {
  CommFuture f = deferred([work, result, then = std::move(then)]() {
    work->wait();
    return then ? then(result) : result;
  });
  f.state_->work = std::move(work);
  return f;
}

Tensor CommFuture::wait() {
  EMBER_CHECK(state_ != nullptr, "[CommFuture.wait] the future is empty");
  std::lock_guard<std::mutex> lock(state_->m);
  if (state_->has_value) return state_->value;
  if (state_->error) std::rethrow_exception(state_->error);
  try {
    state_->value = state_->finish();
    state_->has_value = true;
    state_->finish = nullptr;
  } catch (...) {
    state_->error = std::current_exception();
    throw;
  }
  return state_->value;
}

bool CommFuture::done() const {
  if (!state_) return false;
  if (state_->has_value || state_->error) return true;
  return state_->work && state_->work->is_completed();
}

// ---- GradBucket ----

GradBucket::GradBucket(size_t index, size_t num_buckets, Tensor buffer, std::vector<Tensor> params,
                       std::vector<int64_t> offsets)
    : index_(index),
      num_buckets_(num_buckets),
      buffer_(std::move(buffer)),
      params_(std::move(params)),
      offsets_(std::move(offsets)) {}

std::vector<Tensor> GradBucket::gradients() const {
  std::vector<Tensor> out;
  out.reserve(params_.size());
  for (size_t i = 0; i < params_.size(); ++i)
    out.push_back(buffer_.narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes()));
  return out;
}

void GradBucket::set_buffer(const Tensor& buffer) {
  EMBER_CHECK_T(ValueError, buffer.numel() == buffer_.numel(), "[GradBucket.set_buffer] expected ",
                buffer_.numel(), " elements, got ", buffer.numel());
  NoGradGuard g;
  if (!buffer.is_same(buffer_)) buffer_.copy_(buffer.reshape({buffer_.numel()}));
}

// ---- built-in communication hooks ----

CommHook allreduce_hook(ProcessGroupPtr pg) {
  EMBER_CHECK_T(ValueError, pg != nullptr, "[allreduce_hook] process group is null");
  return [pg](GradBucket& b) {
    Tensor t = b.buffer();
    t.div_(Scalar(double(pg->size())));
    std::vector<Tensor> v{t};
    return CommFuture::from_work(pg->allreduce(v), t);
  };
}

// Compresses to a 16-bit float, divides before the sum (so it cannot overflow), and writes the
// decompressed average back into the bucket.
static CommHook compress_hook(ProcessGroupPtr pg, ScalarType dt, const char* name) {
  EMBER_CHECK_T(ValueError, pg != nullptr, "[", name, "] process group is null");
  return [pg, dt](GradBucket& b) {
    NoGradGuard g;
    Tensor c = b.buffer().to(dt);
    c.div_(Scalar(double(pg->size())));
    std::vector<Tensor> v{c};
    Tensor buf = b.buffer();
    return CommFuture::from_work(pg->allreduce(v), c, [buf](Tensor r) mutable {
      NoGradGuard g2;
      buf.copy_(r);
      return buf;
    });
  };
}

CommHook fp16_compress_hook(ProcessGroupPtr pg) {
  return compress_hook(std::move(pg), kHalf, "fp16_compress_hook");
}
CommHook bf16_compress_hook(ProcessGroupPtr pg) {
  return compress_hook(std::move(pg), kBFloat16, "bf16_compress_hook");
}

// ---- Reducer ----

struct Reducer::Bucket {
  Tensor buffer;
  std::vector<size_t> indices;
  std::vector<int64_t> offsets;
  std::vector<Tensor> views;
  size_t pending = 0;
  CommFuture future;
};

std::vector<std::vector<size_t>> Reducer::compute_bucket_assignment(
    const std::vector<Tensor>& params, int64_t first_bucket_bytes, int64_t bucket_cap_bytes) {
  struct Open {
    std::vector<size_t> idx;
    int64_t bytes = 0;
    int closed = 0;
  };
  std::map<int, Open> open;  // by dtype
  std::vector<std::vector<size_t>> out;
  // Walk the parameters in reverse registration order, the order their gradients are
  // expected to become ready: the small first bucket then holds the last layers, so its
  // all-reduce starts early (the layout torch's DDP rebuilds its buckets into after step 1).
  for (size_t i = params.size(); i-- > 0;) {
    Open& b = open[int(params[i].dtype())];
    b.idx.push_back(i);
    b.bytes += int64_t(params[i].nbytes());
    int64_t limit = b.closed == 0 ? first_bucket_bytes : bucket_cap_bytes;
    if (b.bytes >= limit) {
      out.push_back(std::move(b.idx));
      b.idx.clear();
      b.bytes = 0;
      ++b.closed;
    }
  }
  for (auto& [k, b] : open)
    if (!b.idx.empty()) out.push_back(std::move(b.idx));
  // Indices ascending inside a bucket; buckets by their first index, descending (launch order).
  for (auto& b : out) std::sort(b.begin(), b.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a[0] > b[0]; });
  return out;
}

Reducer::Reducer(std::vector<Tensor> params, ProcessGroupPtr pg, ReducerOptions opts)
    : params_(std::move(params)), pg_(std::move(pg)), opts_(std::move(opts)) {
  EMBER_CHECK_T(ValueError, pg_ != nullptr, "[Reducer] process group is null");
  EMBER_CHECK(!params_.empty(),
              "DistributedDataParallel is not needed when a module doesn't have any parameter "
              "that requires a gradient.");
  EMBER_CHECK_T(ValueError, opts_.bucket_cap_bytes > 0 && opts_.first_bucket_bytes > 0,
                "[Reducer] bucket caps must be positive, got bucket_cap_bytes=",
                opts_.bucket_cap_bytes, ", first_bucket_bytes=", opts_.first_bucket_bytes);
  std::unordered_set<const TensorImpl*> seen;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    EMBER_CHECK_T(ValueError, p.defined(), "[Reducer] parameter ", i, " is undefined");
    EMBER_CHECK_T(ValueError, p.requires_grad() && p.is_leaf(), "[Reducer] parameter ", i,
                  " must be a leaf tensor that requires grad");
    EMBER_CHECK_T(ValueError, p.device().is_cpu(), "[Reducer] parameter ", i, " is on ",
                  p.device().str(), "; the gloo reducer handles CPU tensors only");
    EMBER_CHECK_T(ValueError, seen.insert(p.unsafeGetTensorImpl()).second, "[Reducer] parameter ",
                  i, " appears twice in the parameter list");
  }
  div_factor_ = pg_->size();
  bucket_indices_ =
      compute_bucket_assignment(params_, opts_.first_bucket_bytes, opts_.bucket_cap_bytes);
  locator_.resize(params_.size());
  for (size_t b = 0; b < bucket_indices_.size(); ++b) {
    auto bk = std::make_unique<Bucket>();
    bk->indices = bucket_indices_[b];
    int64_t total = 0;
    for (size_t i : bk->indices) {
      bk->offsets.push_back(total);
      total += params_[i].numel();
    }
    bk->buffer = zeros({total}, dtype(params_[bk->indices[0]].dtype()));
    for (size_t k = 0; k < bk->indices.size(); ++k) {
      const Tensor& p = params_[bk->indices[k]];
      bk->views.push_back(bk->buffer.narrow(0, bk->offsets[k], p.numel()).view(p.sizes()));
      locator_[bk->indices[k]] = {b, int64_t(k)};
    }
    buckets_.push_back(std::move(bk));
  }
  stats_.num_buckets = int64_t(buckets_.size());
  size_t n = params_.size();
  ready_.assign(n, 0);
  unused_.assign(n, 0);
  local_used_.assign(n, 0);
  hook_counts_.assign(n, 0);
  hooks_left_.assign(n, 0);
  global_unused_.assign(n, 0);
  if (opts_.gradient_as_bucket_view) initialize_grad_views();
  for (size_t i = 0; i < n; ++i)
    hook_handles_.push_back(params_[i].register_post_accumulate_grad_hook(
        [this, i](const Tensor&) { on_grad_ready(i); }));
}

Reducer::~Reducer() {
  for (size_t i = 0; i < params_.size() && i < hook_handles_.size(); ++i)
    params_[i].remove_hook(hook_handles_[i]);
}

const Tensor& Reducer::bucket_buffer(size_t i) const {
  EMBER_CHECK_T(IndexError, i < buckets_.size(), "[Reducer] bucket ", i, " out of range (",
                buckets_.size(), " buckets)");
  return buckets_[i]->buffer;
}

void Reducer::register_comm_hook(CommHook hook) {
  EMBER_CHECK(!comm_hook_,
              "register_comm_hook or register_builtin_comm_hook can only be called once.");
  EMBER_CHECK_T(ValueError, static_cast<bool>(hook), "[register_comm_hook] hook is empty");
  comm_hook_ = std::move(hook);
}

// Existing gradients move into their buckets; `.grad` becomes the bucket's view.
void Reducer::initialize_grad_views() {
  NoGradGuard g;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& grad = params_[i].mutable_grad();
    if (!grad.defined()) continue;
    auto [b, k] = locator_[i];
    Tensor view = buckets_[b]->views[k];
    view.copy_(grad);
    grad = view;
  }
}

static bool is_view_of(const Tensor& grad, const Tensor& view) {
  return grad.defined() && grad.data_ptr() == view.data_ptr() && grad.sizes() == view.sizes() &&
         grad.strides() == view.strides();
}

std::string Reducer::unready_message() const {
  std::ostringstream os;
  os << "Expected to have finished reduction in the prior iteration before starting a new one. "
        "This error indicates that your module has parameters that were not used in producing "
        "loss. You can enable unused parameter detection by passing the keyword argument "
        "`find_unused_parameters=True` to `DistributedDataParallel`, and by making sure all "
        "`forward` function outputs participate in calculating loss. If you already have done "
        "the above, then the distributed data parallel module wasn't able to locate the output "
        "tensors in the return value of your module's `forward` function.\n"
        "Parameter indices which did not receive grad for rank "
     << pg_->rank() << ":";
  std::vector<size_t> missing;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i]) missing.push_back(i);
  for (size_t i : missing) os << " " << i;
  if (debug_level() != DebugLevel::Off && opts_.param_names.size() == params_.size()) {
    os << "\nParameters which did not receive grad for rank " << pg_->rank() << ":";
    for (size_t i : missing) os << " " << opts_.param_names[i];
  } else {
    os << "\nIn addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG (or "
          "EMBER_DISTRIBUTED_DEBUG) to either INFO or DETAIL to print out information about "
          "which particular parameters did not receive gradient on this rank as part of this "
          "error";
  }
  return os.str();
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  if (require_finalize_) throw Error(unready_message(), ErrorKind::Runtime);
  require_finalize_ = true;
  expect_hooks_ = true;
  first_hook_seen_ = false;
  next_bucket_ = 0;
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(unused_.begin(), unused_.end(), 0);
  std::fill(local_used_.begin(), local_used_.end(), 0);
  for (auto& b : buckets_) {
    b->pending = b->indices.size();
    b->future = CommFuture();
  }
  stats_.buckets_launched_during_backward = 0;
  stats_.buckets_done_before_finalize = 0;

  if (opts_.static_graph) {
    if (!static_first_iteration_) {
      hooks_left_ = hook_counts_;
      for (size_t i = 0; i < params_.size(); ++i) unused_[i] = hook_counts_[i] == 0;
    }
    return;
  }
  if (!opts_.find_unused_parameters) return;
  // Walk the graph from the outputs: parameters whose grad accumulator is not reached get no
  // gradient in this pass and are reduced as zeros.
  std::unordered_map<const TensorImpl*, size_t> index;
  for (size_t i = 0; i < params_.size(); ++i) index[params_[i].unsafeGetTensorImpl()] = i;
  std::vector<char> reached(params_.size(), 0);
  std::unordered_set<const autograd::Node*> seen;
  std::vector<std::shared_ptr<autograd::Node>> stack;
  for (const Tensor& o : outputs) {
    if (!o.defined()) continue;
    if (auto fn = o.grad_fn()) {
      if (seen.insert(fn.get()).second) stack.push_back(std::move(fn));
    } else if (auto it = index.find(o.unsafeGetTensorImpl()); it != index.end()) {
      reached[it->second] = 1;
    }
  }
  while (!stack.empty()) {
    auto node = std::move(stack.back());
    stack.pop_back();
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(node.get())) {
      if (auto it = index.find(acc->variable().get()); it != index.end()) reached[it->second] = 1;
    }
    for (const auto& e : node->next_edges())
      if (e.is_valid() && seen.insert(e.function.get()).second) stack.push_back(e.function);
  }
  for (size_t i = 0; i < params_.size(); ++i) unused_[i] = !reached[i];
}

void Reducer::on_grad_ready(size_t i) {
  if (!expect_hooks_) return;  // no_sync, or a backward without a DDP forward
  bool static_first = opts_.static_graph && static_first_iteration_;
  if (!first_hook_seen_) {
    first_hook_seen_ = true;
    autograd::queue_callback([this, static_first] {
      if (static_first) delay_all_reduce();
      finalize();
    });
    if (!static_first)
      for (size_t j = 0; j < params_.size(); ++j)
        if (unused_[j] && !ready_[j]) mark_ready(j);
  }
  if (opts_.find_unused_parameters || static_first) local_used_[i] = 1;
  if (opts_.static_graph) {
    if (static_first) {
      ++hook_counts_[i];
      return;  // reduced at the end of the first pass, once usage is known
    }
    EMBER_CHECK(hooks_left_[i] > 0,
                "Your training graph has changed in this iteration: "
                "parameter ",
                i,
                " received more gradients than in the first iteration, "
                "which static_graph=True does not allow.");
    if (--hooks_left_[i] > 0) return;
  }
  mark_ready(i);
}

void Reducer::mark_ready(size_t i) {
  EMBER_CHECK(!ready_[i],
              "Expected to mark a variable ready only once. This error is caused by one of the "
              "following reasons: 1) Use of a module parameter outside the `forward` function. "
              "2) Reused parameters in multiple reentrant backward passes, or a parameter used "
              "twice with static_graph's first iteration disagreeing. Parameter index ",
              i, " on rank ", pg_->rank(), ".");
  ready_[i] = 1;
  auto [b, k] = locator_[i];
  Bucket& bk = *buckets_[b];
  Tensor view = bk.views[k];
  NoGradGuard g;
  Tensor& grad = params_[i].mutable_grad();
  if (grad.defined()) {
    EMBER_CHECK(grad.sizes() == view.sizes(),
                "[DistributedDataParallel] the gradient of parameter ", i, " has shape ",
                grad.sizes(), " but the parameter has shape ", view.sizes());
    bool alias = is_view_of(grad, view);
    if (!alias) view.copy_(grad);
    // Without a hook the average is formed by dividing before the sum (as torch).
    if (!comm_hook_) view.div_(Scalar(double(div_factor_)));
    if (!alias && opts_.gradient_as_bucket_view) grad = view;
  } else {
    view.zero_();
  }
  if (--bk.pending == 0) launch_ready_buckets();
}

void Reducer::launch_ready_buckets() {
  bool in_backward = autograd::in_backward_pass() && !finalizing_;
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_]->pending == 0) {
    Bucket& bk = *buckets_[next_bucket_];
    std::vector<Tensor> bparams;
    for (size_t i : bk.indices) bparams.push_back(params_[i]);
    GradBucket gb(next_bucket_, buckets_.size(), bk.buffer, std::move(bparams), bk.offsets);
    if (comm_hook_) {
      bk.future = comm_hook_(gb);
      EMBER_CHECK(bk.future.valid(), "[DistributedDataParallel] the comm hook of bucket ",
                  next_bucket_, " returned an empty future");
    } else if (bk.buffer.numel() == 0) {
      bk.future = CommFuture::ready(bk.buffer);  // zero-size parameters: nothing to send
    } else {
      std::vector<Tensor> v{bk.buffer};
      bk.future = CommFuture::from_work(pg_->allreduce(v), bk.buffer);
    }
    if (in_backward) ++stats_.buckets_launched_during_backward;
    ++next_bucket_;
  }
}

void Reducer::delay_all_reduce() {
  finalizing_ = true;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i]) mark_ready(i);
  finalizing_ = false;
}

void Reducer::finalize() {
  expect_hooks_ = false;
  finalizing_ = true;
  struct Reset {
    bool& f;
    ~Reset() { f = false; }
  } reset{finalizing_};
  for (auto& b : buckets_)
    if (b->future.valid() && b->future.done()) ++stats_.buckets_done_before_finalize;
  if (next_bucket_ < buckets_.size()) {
    // Some parameter never got its gradient: finish what was started and leave the pass
    // unfinished, so that the next prepare_for_backward raises naming the parameters.
    for (size_t b = 0; b < next_bucket_; ++b) buckets_[b]->future.wait();
    return;
  }
  NoGradGuard g;
  for (auto& b : buckets_) {
    Tensor r = b->future.wait();
    EMBER_CHECK(r.defined() && r.numel() == b->buffer.numel(),
                "[DistributedDataParallel] the comm hook must return a tensor of ",
                b->buffer.numel(), " elements (the bucket's buffer), got ",
                r.defined() ? r.numel() : 0);
    if (!r.is_same(b->buffer) && r.data_ptr() != b->buffer.data_ptr())
      b->buffer.copy_(r.reshape({b->buffer.numel()}));
    b->future = CommFuture();
  }
  bool static_first = opts_.static_graph && static_first_iteration_;
  if (opts_.find_unused_parameters || static_first) {
    // Which parameters some rank used: an untouched .grad stays as it was for the others.
    Tensor used = empty({int64_t(params_.size())}, dtype(kInt));
    std::copy(local_used_.begin(), local_used_.end(), used.data_ptr<int32_t>());
    std::vector<Tensor> v{used};
    pg_->allreduce(v)->wait();
    const int32_t* u = used.data_ptr<int32_t>();
    for (size_t i = 0; i < params_.size(); ++i) global_unused_[i] = u[i] == 0;
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (global_unused_[i]) continue;
    auto [b, k] = locator_[i];
    Tensor view = buckets_[b]->views[k];
    Tensor& grad = params_[i].mutable_grad();
    if (opts_.gradient_as_bucket_view) {
      if (!grad.defined())
        grad = view;
      else
        EMBER_CHECK(is_view_of(grad, view),
                    "Detected at least one parameter gradient is not the expected DDP bucket "
                    "view with gradient_as_bucket_view=True (parameter ",
                    i, "): .grad was replaced during backward.");
    } else if (!grad.defined()) {
      grad = view.clone();
    } else {
      grad.copy_(view);
    }
  }
  if (static_first) static_first_iteration_ = false;
  require_finalize_ = false;
  ++stats_.iterations;
}

void Reducer::join_shadow_backward() {
  std::vector<CommFuture> futures;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bk = *buckets_[b];
    Tensor z = zeros_like(bk.buffer);
    std::vector<Tensor> bparams;
    for (size_t i : bk.indices) bparams.push_back(params_[i]);
    GradBucket gb(b, buckets_.size(), z, std::move(bparams), bk.offsets);
    if (comm_hook_) {
      futures.push_back(comm_hook_(gb));
    } else if (z.numel() == 0) {
      continue;
    } else {
      std::vector<Tensor> v{z};
      futures.push_back(CommFuture::from_work(pg_->allreduce(v), z));
    }
  }
  for (auto& f : futures) f.wait();
  if (opts_.find_unused_parameters || (opts_.static_graph && static_first_iteration_)) {
    Tensor used = zeros({int64_t(params_.size())}, dtype(kInt));
    std::vector<Tensor> v{used};
    pg_->allreduce(v)->wait();
  }
}

}  // namespace ember::distributed
