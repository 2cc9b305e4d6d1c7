// Note [Gloo process group]
// A Gloo process group is one gloo::Context connected to every peer (a full mesh of TCP pairs
// on 127.0.0.1 unless told otherwise), found through the job's store. Collectives are checked
// and staged on the calling thread (bad arguments raise there, at once), then queued; one
// worker thread runs them in issue order, each with tag = its sequence number, so the ranks'
// operations match up without any coordination. The returned Work completes when the worker
// has run it. Contiguous tensors are handed to Gloo as they are; other tensors go through a
// contiguous copy that is written back afterwards (Staged). Sends and receives use Gloo's
// unbound buffers on slots of their own and are started on the calling thread; each waits on
// a thread of its own, so that no receive can delay another operation's completion.
// A failed collective raises DistBackendError with the report of Note [Collective fault
// reports]; after a transport failure the group is unusable and later collectives fail at
// once with the first report. One worker runs everything (ProcessGroupGlooOptions::threads is
// accepted for torch's signature): Gloo's ring algorithms already keep the links busy, and a
// single queue keeps the issue order that the sequence numbers and fault reports rely on.
#include "distributed/process_group_gloo.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

#include "ember/autograd.h"

namespace ember::distributed {
namespace detail {

// ---- GlooWork --------------------------------------------------------------------------------

bool GlooWork::is_completed() {
  std::lock_guard<std::mutex> g(mu_);
  return done_;
}

bool GlooWork::is_success() {
  std::lock_guard<std::mutex> g(mu_);
  return done_ && !error_;
}

std::exception_ptr GlooWork::exception() {
  std::lock_guard<std::mutex> g(mu_);
  return error_;
}

bool GlooWork::wait(Milliseconds timeout) {
  std::unique_lock<std::mutex> lk(mu_);
  if (timeout == kUnsetTimeout) {
    cv_.wait(lk, [&] { return done_; });
  } else if (!cv_.wait_for(lk, timeout, [&] { return done_; })) {
    throw DistBackendError(::ember::detail::str_cat("[", name_, "] Work::wait timed out after ",
                                                    timeout.count(), " ms (operation #", seq_,
                                                    " is still running)"));
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

std::vector<Tensor> GlooWork::result() {
  std::lock_guard<std::mutex> g(mu_);
  return outputs_;
}

int GlooWork::source_rank() const {
  std::lock_guard<std::mutex> g(mu_);
  return source_rank_;
}

void GlooWork::add_callback(std::function<void()> cb) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!done_) {
      callbacks_.push_back(std::move(cb));
      return;
    }
  }
  cb();
}

void GlooWork::finish(std::exception_ptr error, std::vector<Tensor> outputs, int source_rank) {
  std::vector<std::function<void()>> cbs;
  {
    std::lock_guard<std::mutex> g(mu_);
    error_ = std::move(error);
    outputs_ = std::move(outputs);
    source_rank_ = source_rank;
    done_ = true;
    cbs.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& cb : cbs) {
    // A callback's own failure belongs to whoever chained it (Future.then records it there).
    try {
      cb();
    } catch (...) {
    }
  }
}

// ---- Staged ----------------------------------------------------------------------------------

Staged stage(const Tensor& t, bool output) {
  Staged s;
  s.user = t;
  Tensor b = t.variable_data();
  if (b.is_conj()) b = b.resolve_conj();
  if (!b.is_contiguous()) b = b.contiguous();
  s.buf = b;
  s.copy_back = output && b.unsafeGetTensorImpl() != t.unsafeGetTensorImpl() &&
                (b.data_ptr() != t.data_ptr() || t.is_conj() || !t.is_contiguous());
  return s;
}

void Staged::finish() const {
  if (!copy_back) return;
  NoGradGuard no_grad;
  Tensor u = user.variable_data();
  u.copy_(buf);
}

// ---- The store as Gloo's rendezvous store ----------------------------------------------------

namespace {

class GlooStoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit GlooStoreAdapter(std::shared_ptr<distributed::Store> s) : store_(std::move(s)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, std::vector<uint8_t>(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    auto v = store_->get(key);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> store_;
};

bool is_loopback_name(const std::string& h) {
  return h.empty() || h == "localhost" || h.rfind("127.", 0) == 0 || h == "::1";
}

// Writing to a socket whose peer died raises SIGPIPE, whose default action kills the process:
// a dead peer must become a DistBackendError instead. Only the default action is replaced.
void ignore_sigpipe_once() {
  static bool done = [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      sigemptyset(&ign.sa_mask);
      sigaction(SIGPIPE, &ign, nullptr);
    }
    return true;
  }();
  (void)done;
}

}  // namespace

// ---- ProcessGroupGloo ------------------------------------------------------------------------

thread_local bool t_inline_sync = false;

namespace {
// Set by a group destroyed on its own worker thread (see ~ProcessGroupGloo).
thread_local bool t_destroyed_on_this_thread = false;
}  // namespace

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size,
                                   const ProcessGroupGlooOptions& opts)
    : ProcessGroup(rank, size), store_(std::move(store)), timeout_(opts.timeout) {
  ignore_sigpipe_once();
  gloo::transport::tcp::attr attr;
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  const char* master = std::getenv("MASTER_ADDR");
  if (!opts.hostname.empty()) {
    attr.hostname = opts.hostname;
  } else if (ifname != nullptr && *ifname != '\0') {
    attr.iface = ifname;
  } else if (master != nullptr && !is_loopback_name(master)) {
    // A job spread over machines: announce this machine's name, as torch does.
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    attr.hostname = host;
  } else {
    attr.hostname = "127.0.0.1";
  }
  std::string name = opts.group_name.empty() ? "0" : opts.group_name;
  std::string desc =
      ::ember::detail::str_cat(name, " (gloo, ", size, size == 1 ? " rank)" : " ranks)");
  try {
    device_ = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(timeout_);
    GlooStoreAdapter adapter(store_);
    ctx->connectFullMesh(adapter, device_);
    context_ = ctx;
  } catch (const DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw DistNetworkError(::ember::detail::str_cat("[init_process_group] rank ", rank,
                                                    " of group ", desc,
                                                    " could not connect to its peers: ", e.what()));
  }
  reporter_ = std::make_unique<FaultReporter>(store_, rank, size, desc);
  worker_ = std::thread([this] { worker_loop(); });
}

ProcessGroupGloo::~ProcessGroupGloo() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  // The last reference may be dropped on the worker itself (worker_loop holds one while a job
  // runs): the worker then leaves without touching the group again.
  if (worker_.joinable()) {
    if (worker_.get_id() == std::this_thread::get_id()) {
      t_destroyed_on_this_thread = true;
      worker_.detach();
    } else {
      worker_.join();
    }
  }
  std::lock_guard<std::mutex> g(p2p_mu_);
  for (auto& p : p2p_) {
    if (!p.done->load()) {
      if (p.is_send)
        p.buffer->abortWaitSend();
      else
        p.buffer->abortWaitRecv();
    }
  }
  for (auto& p : p2p_) {
    if (!p.thread.joinable()) continue;
    if (p.thread.get_id() == std::this_thread::get_id())
      p.thread.detach();
    else
      p.thread.join();
  }
  p2p_.clear();
}

uint64_t ProcessGroupGloo::sequence_number() const {
  std::lock_guard<std::mutex> g(const_cast<std::mutex&>(mu_));
  return next_seq_;
}

// Note [Collective tags]
// Gloo matches the messages of two ranks by slot, which it derives from the operation's tag. The
// tag is the collective's sequence number (low 16 bits: only one collective runs at a time)
// beside a 15-bit hash of what every rank must agree on: the byte count, dtype, reduce op and
// root. Ranks that disagree (a user error) then use different slots, so their messages never
// meet and the collective times out with a report, where Gloo would otherwise abort the
// process (a message longer than the buffer posted for it) or return wrong sums. Sends and
// receives likewise carry a hash of their byte count in their slots: a receive takes only a
// message of its own size. Bit 15 stays clear, keeping collective tags apart from the DETAIL
// fingerprint exchange's.
static uint32_t collective_tag(uint64_t seq, size_t nbytes, const Fingerprint& fp) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t v : {uint64_t(nbytes), uint64_t(uint32_t(fp.dtype)),
                     uint64_t(uint32_t(fp.reduce_op)), uint64_t(uint32_t(fp.root))}) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return (uint32_t(seq & 0xffff) << 16) | uint32_t(h & 0x7fff);
}

WorkPtr ProcessGroupGloo::enqueue(const char* name, Milliseconds timeout, Fingerprint fp,
                                  size_t nbytes, std::vector<Staged> outputs, Body body) {
  EMBER_CHECK_VALUE(timeout == kUnsetTimeout || timeout.count() > 0, "[", name,
                    "] the timeout must be positive, got ", timeout.count(), " ms");
  std::shared_ptr<GlooWork> work;
  {
    std::unique_lock<std::mutex> lk(mu_);
    EMBER_CHECK(!stop_, "[", name, "] the process group was destroyed");
    uint64_t seq = next_seq_++;
    fp.seq = seq;
    work = std::make_shared<GlooWork>(name, seq);
    Job job{work,
            std::move(body),
            fp,
            collective_tag(seq, nbytes, fp),
            op_timeout(timeout),
            std::move(outputs)};
    // Small collectives are latency-bound and gain from skipping the hand-off; large ones
    // measured no faster inline (often slower), so they stay on the worker.
    constexpr size_t kInlineMaxBytes = 256 << 10;
    // On the worker itself (a callback waiting for a collective) inline is the only way.
    const bool small = nbytes <= kInlineMaxBytes || worker_.get_id() == std::this_thread::get_id();
    if (t_inline_sync && small && queue_.empty() && !running_) {
      running_ = true;
      lk.unlock();
      run(job);
      return work;
    }
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return work;
}

void ProcessGroupGloo::worker_loop() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return (stop_ && !running_) || (!queue_.empty() && !running_); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    std::shared_ptr<ProcessGroupGloo> keep = weak_from_this().lock();
    run(job);
    job = Job{};
    t_destroyed_on_this_thread = false;
    keep.reset();
    if (t_destroyed_on_this_thread) return;
  }
}

void ProcessGroupGloo::run(Job& job) {
  const uint64_t seq = job.work->sequence_number();
  const std::string name = job.work->name();
  auto t0 = std::chrono::steady_clock::now();
  reporter_->entered(seq);
  std::exception_ptr err;
  std::string broken;
  {
    std::lock_guard<std::mutex> g(mu_);
    broken = broken_;
  }
  if (!broken.empty()) {
    err = std::make_exception_ptr(DistBackendError(
        ::ember::detail::str_cat("[", name, "] collective #", seq, " of group ", group_desc(),
                                 " cannot run: the group failed earlier: ", broken)));
  } else {
    try {
      if (debug_level() == DebugLevel::Detail && size_ > 1) {
        check_desync(context_, job.fp, job.timeout, group_desc());
      }
      job.body(job.tag, job.timeout);
      for (const auto& s : job.outputs) s.finish();
    } catch (const ember::Error&) {
      err = std::current_exception();
    } catch (const std::exception& e) {
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::string msg = reporter_->report(name, seq, elapsed, e.what());
      {
        std::lock_guard<std::mutex> g(mu_);
        if (broken_.empty()) broken_ = msg;
      }
      err = std::make_exception_ptr(DistBackendError(msg));
    }
  }
  std::vector<Tensor> results;
  results.reserve(job.outputs.size());
  for (const auto& s : job.outputs) results.push_back(s.user);
  // The group is free before the callbacks run: a callback may issue (and wait for) the next
  // collective, which then runs inline instead of waiting for this thread.
  bool more;
  {
    std::lock_guard<std::mutex> g(mu_);
    running_ = false;
    more = !queue_.empty();
  }
  if (more) cv_.notify_one();
  job.work->finish(err, std::move(results));
}

// ---- Point to point --------------------------------------------------------------------------

namespace {
// Slots of sends and receives: the top bit keeps them apart from the collectives' slots.
// (Note [Collective tags]: bits 32-62 hash the byte count.)
uint64_t p2p_slot(int tag, size_t nbytes) {
  uint64_t h = (uint64_t(nbytes) + 1) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 31;
  return (uint64_t(1) << 63) | ((h & 0x7fffffffull) << 32) | uint64_t(uint32_t(tag));
}
}  // namespace

WorkPtr ProcessGroupGloo::start_p2p(const char* name, std::vector<Tensor>& tensors, int peer,
                                    int tag, bool is_send, bool any_source) {
  EMBER_CHECK_VALUE(tensors.size() == 1, "[", name, "] expects one tensor, got ", tensors.size());
  const Tensor& t = tensors[0];
  EMBER_CHECK_VALUE(t.defined(), "[", name, "] the tensor is undefined");
  EMBER_CHECK_VALUE(t.is_cpu(), "[", name, "] the gloo backend takes CPU tensors, got one on ",
                    t.device());
  if (!any_source) {
    EMBER_CHECK_VALUE(peer >= 0 && peer < size_, "[", name, "] invalid ",
                      is_send ? "destination" : "source", " rank ", peer, " for a group of ", size_,
                      " ranks");
    EMBER_CHECK_VALUE(peer != rank_, "[", name, "] rank ", rank_, " cannot ",
                      is_send ? "send to" : "receive from", " itself");
  }
  EMBER_CHECK_VALUE(tag >= 0, "[", name, "] the tag must be non-negative, got ", tag);
  Staged s = stage(t, !is_send);
  uint64_t seq;
  {
    std::lock_guard<std::mutex> g(mu_);
    EMBER_CHECK(!stop_, "[", name, "] the process group was destroyed");
    seq = next_seq_;
  }
  auto work = std::make_shared<GlooWork>(name, seq);
  static uint8_t empty_byte = 0;
  void* ptr = s.nbytes() > 0 ? s.data() : &empty_byte;
  std::shared_ptr<gloo::transport::UnboundBuffer> buf(
      context_->createUnboundBuffer(ptr, s.nbytes()));
  if (is_send) {
    buf->send(peer, p2p_slot(tag, s.nbytes()));
  } else if (any_source) {
    std::vector<int> srcs;
    for (int r = 0; r < size_; ++r)
      if (r != rank_) srcs.push_back(r);
    buf->recv(srcs, p2p_slot(tag, s.nbytes()));
  } else {
    buf->recv(peer, p2p_slot(tag, s.nbytes()));
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::string what = is_send      ? ::ember::detail::str_cat("to rank ", peer)
                     : any_source ? std::string("from any rank")
                                  : ::ember::detail::str_cat("from rank ", peer);
  std::string desc = group_desc();
  Milliseconds timeout = timeout_;
  std::thread th([work, buf, s, done, is_send, what, tag, desc, timeout, name = std::string(name)] {
    auto t0 = std::chrono::steady_clock::now();
    std::exception_ptr err;
    int src = -1;
    try {
      bool ok = is_send ? buf->waitSend(&src, timeout) : buf->waitRecv(&src, timeout);
      if (!ok) throw DistBackendError("aborted: the process group was destroyed");
      s.finish();
    } catch (const std::exception& e) {
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      err = std::make_exception_ptr(DistBackendError(::ember::detail::str_cat(
          "[", name, "] ", what, " (tag ", tag, ") in group ", desc, " failed after ",
          int64_t(elapsed * 10) / 10.0, " s; cause: ", e.what())));
    }
    done->store(true);
    work->finish(err, {s.user}, is_send ? -1 : src);
  });
  std::lock_guard<std::mutex> g(p2p_mu_);
  // Reap finished waiters so a long run of sends keeps no dead threads.
  for (auto it = p2p_.begin(); it != p2p_.end();) {
    if (it->done->load()) {
      if (it->thread.joinable()) it->thread.join();
      it = p2p_.erase(it);
    } else {
      ++it;
    }
  }
  p2p_.push_back(P2P{std::move(th), buf, done, is_send});
  return work;
}

WorkPtr ProcessGroupGloo::send(std::vector<Tensor>& tensors, int dst_rank, int tag) {
  return start_p2p("send", tensors, dst_rank, tag, true, false);
}

WorkPtr ProcessGroupGloo::recv(std::vector<Tensor>& tensors, int src_rank, int tag) {
  return start_p2p("recv", tensors, src_rank, tag, false, false);
}

WorkPtr ProcessGroupGloo::recv_anysource(std::vector<Tensor>& tensors, int tag) {
  return start_p2p("recv", tensors, -1, tag, false, true);
}

}  // namespace detail

ProcessGroupPtr make_gloo_process_group(const std::shared_ptr<Store>& store, int rank, int size,
                                        const ProcessGroupGlooOptions& opts) {
  EMBER_CHECK_VALUE(store != nullptr, "[make_gloo_process_group] the store is null");
  EMBER_CHECK_VALUE(size >= 1, "[make_gloo_process_group] the group size must be positive, got ",
                    size);
  EMBER_CHECK_VALUE(rank >= 0 && rank < size, "[make_gloo_process_group] rank ", rank,
                    " is outside a group of ", size, " ranks");
  EMBER_CHECK_VALUE(opts.timeout.count() > 0,
                    "[make_gloo_process_group] the timeout must be positive, got ",
                    opts.timeout.count(), " ms");
  return std::make_shared<detail::ProcessGroupGloo>(store, rank, size, opts);
}

bool is_backend_available(const std::string& backend) { return backend == "gloo"; }

}  // namespace ember::distributed
