// Note [Collective fault reports]
// Every collective of a group has a sequence number (0, 1, ...), the same on every rank as
// long as the ranks issue the same collectives. As a rank's worker starts collective #n it
// records n; a background thread writes the latest such n to the group's store under
// "ember_fault/last/<rank>" at most every 50 ms (a loop of small collectives costs the store
// twenty small writes a second, off the collectives' path). When a collective fails (Gloo raises
// when a peer's socket closes, or at the timeout) the rank writes its own entry at once, waits a
// moment for its peers to do the same, reads every entry it can, and raises DistBackendError naming
// the collective, its number, the group, and the ranks whose last entry is below n: they never
// arrived. A rank that died mid-sequence keeps its last published entry, so the report may name an
// earlier "last seen" than the rank truly reached, never a later one.
//
// DETAIL mode (EMBER_DISTRIBUTED_DEBUG or TORCH_DISTRIBUTED_DEBUG = DETAIL) adds a check before
// each collective: the ranks all-gather a fixed-size fingerprint (op, number, dtype, shape,
// reduce op, root) on a tag of its own, and a mismatch raises on every rank, naming the first
// rank that differs from rank 0 and both fingerprints. The exchange uses one fixed tag: the
// worker runs collectives one at a time and a pair's messages arrive in order, so successive
// exchanges cannot be confused, and ranks whose sequence numbers drifted still meet.
#include "distributed/fault_report.h"

#include <gloo/allgather.h>
#include <gloo/context.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace ember::distributed {

namespace {
// -1: not read from the environment yet.
std::atomic<int> g_debug_level{-1};

DebugLevel parse_level(const char* v) {
  if (v == nullptr) return DebugLevel::Off;
  std::string s(v);
  for (auto& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (s == "DETAIL") return DebugLevel::Detail;
  if (s == "INFO") return DebugLevel::Info;
  return DebugLevel::Off;
}
}  // namespace

DebugLevel debug_level() {
  int v = g_debug_level.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* e = std::getenv("EMBER_DISTRIBUTED_DEBUG");
    if (e == nullptr || *e == '\0') e = std::getenv("TORCH_DISTRIBUTED_DEBUG");
    v = int(parse_level(e));
    g_debug_level.store(v, std::memory_order_relaxed);
  }
  return DebugLevel(v);
}

void set_debug_level(DebugLevel level) { g_debug_level.store(int(level)); }

}  // namespace ember::distributed

namespace ember::distributed::detail {

namespace {
constexpr uint32_t kFingerprintTag = 0x7ffffff0u;
constexpr auto kPublishInterval = std::chrono::milliseconds(50);
// How long a failing rank waits for its peers' entries to reach the store.
constexpr auto kSettleTime = std::chrono::milliseconds(300);
}  // namespace

std::string Fingerprint::describe() const {
  std::ostringstream os;
  os << std::string(op, strnlen(op, sizeof(op))) << " #" << seq;
  std::vector<std::string> parts;
  if (dtype >= 0) parts.push_back(dtype_name(ScalarType(dtype)));
  if (ndim >= 0) {
    std::ostringstream s;
    s << "[";
    for (int i = 0; i < ndim && i < 6; ++i) s << (i ? ", " : "") << dims[i];
    if (ndim > 6) s << ", ...";
    s << "]";
    parts.push_back(s.str());
  }
  if (reduce_op >= 0) parts.push_back(reduce_op_name(ReduceOp(reduce_op)));
  if (root >= 0) parts.push_back("root " + std::to_string(root));
  if (!parts.empty()) {
    os << " (";
    for (size_t i = 0; i < parts.size(); ++i) os << (i ? ", " : "") << parts[i];
    os << ")";
  }
  return os.str();
}

bool Fingerprint::operator==(const Fingerprint& o) const {
  return std::memcmp(this, &o, sizeof(Fingerprint)) == 0;
}

Fingerprint make_fingerprint(const char* op, uint64_t seq, const std::vector<Tensor>& tensors,
                             bool same_shapes, int reduce_op, int root) {
  Fingerprint fp;
  std::strncpy(fp.op, op, sizeof(fp.op) - 1);
  fp.seq = seq;
  fp.reduce_op = reduce_op;
  fp.root = root;
  fp.dtype = -1;
  fp.ndim = -1;
  if (!tensors.empty() && tensors[0].defined()) {
    fp.dtype = int32_t(tensors[0].scalar_type());
    if (same_shapes) {
      fp.ndim = int32_t(tensors[0].dim());
      for (int64_t i = 0; i < tensors[0].dim() && i < 6; ++i) fp.dims[i] = tensors[0].size(i);
      uint64_t h = 1469598103934665603ull;
      for (const auto& t : tensors) {
        if (!t.defined()) continue;
        h = (h ^ uint64_t(t.dim())) * 1099511628211ull;
        for (int64_t d : t.sizes()) h = (h ^ uint64_t(d)) * 1099511628211ull;
      }
      fp.shape_hash = h;
    }
  }
  return fp;
}

void check_desync(const std::shared_ptr<gloo::Context>& ctx, const Fingerprint& fp,
                  Milliseconds timeout, const std::string& group_desc) {
  std::vector<Fingerprint> all(size_t(ctx->size));
  Fingerprint mine = fp;
  gloo::AllgatherOptions opts(ctx);
  opts.setInput(reinterpret_cast<uint8_t*>(&mine), sizeof(Fingerprint));
  opts.setOutput(reinterpret_cast<uint8_t*>(all.data()), sizeof(Fingerprint) * all.size());
  opts.setTag(kFingerprintTag);
  opts.setTimeout(timeout);
  gloo::allgather(opts);
  for (int r = 1; r < ctx->size; ++r) {
    if (!(all[size_t(r)] == all[0])) {
      throw DistBackendError(::ember::detail::str_cat(
          "[", std::string(fp.op, strnlen(fp.op, sizeof(fp.op))), "] desync detected in group ",
          group_desc, " before collective #", fp.seq, ": rank ", r, " called ",
          all[size_t(r)].describe(), " while rank 0 called ", all[0].describe(), " (this rank, ",
          ctx->rank, ", called ", fp.describe(), ")"));
    }
  }
}

FaultReporter::FaultReporter(std::shared_ptr<Store> store, int rank, int size,
                             std::string group_desc)
    : store_(std::move(store)), rank_(rank), size_(size), group_desc_(std::move(group_desc)) {
  thread_ = std::thread([this] { publish_loop(); });
}

FaultReporter::~FaultReporter() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string FaultReporter::key(int rank) const {
  return "ember_fault/last/" + std::to_string(rank);
}

void FaultReporter::entered(uint64_t seq) {
  {
    std::lock_guard<std::mutex> g(mu_);
    latest_ = int64_t(seq);
  }
  cv_.notify_one();
}

void FaultReporter::publish(uint64_t seq) {
  try {
    store_->set(key(rank_), std::to_string(seq));
  } catch (const std::exception&) {
    // The store may be gone (its server died): the report says so when it reads.
  }
}

void FaultReporter::publish_loop() {
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    cv_.wait(lk, [&] { return stop_ || latest_ != published_; });
    if (stop_) return;
    int64_t v = latest_;
    published_ = v;
    lk.unlock();
    publish(uint64_t(v));
    std::this_thread::sleep_for(kPublishInterval);
    lk.lock();
  }
}

std::string FaultReporter::report(const std::string& op, uint64_t seq, double elapsed_s,
                                  const std::string& cause) {
  publish(seq);
  std::this_thread::sleep_for(kSettleTime);
  std::vector<int> missing;
  std::vector<std::string> last_seen;
  std::string store_error;
  for (int r = 0; r < size_ && store_error.empty(); ++r) {
    if (r == rank_) continue;
    try {
      int64_t last = -1;
      if (store_->check({key(r)})) last = std::stoll(store_->get_string(key(r)));
      if (last < int64_t(seq)) {
        missing.push_back(r);
        last_seen.push_back(last < 0 ? std::string("no collective")
                                     : std::string(1, '#').append(std::to_string(last)));
      }
    } catch (const std::exception& e) {
      store_error = e.what();
    }
  }
  std::ostringstream os;
  os.precision(1);
  os << std::fixed;
  os << "[" << op << "] collective #" << seq << " of group " << group_desc_ << " failed after "
     << elapsed_s << " s: ";
  if (!store_error.empty()) {
    os << "the other ranks' progress could not be read from the store (" << store_error << ")";
  } else if (missing.empty()) {
    os << "every rank entered it";
    // Every rank there yet no data moved: most often the ranks disagree on the call. The first
    // rank to time out closes its connections, so its peers may see that instead of a timeout.
    if (debug_level() != DebugLevel::Detail) {
      os << " (ranks whose byte counts, dtypes, reduce ops or roots differ never exchange data: "
            "EMBER_DISTRIBUTED_DEBUG=DETAIL names the rank that differs)";
    }
  } else {
    os << (missing.size() == 1 ? "rank [" : "ranks [");
    for (size_t i = 0; i < missing.size(); ++i) os << (i ? ", " : "") << missing[i];
    os << "] never arrived (last seen at ";
    for (size_t i = 0; i < last_seen.size(); ++i) os << (i ? ", " : "") << last_seen[i];
    os << ")";
  }
  os << "; cause: " << cause;
  return os.str();
}

}  // namespace ember::distributed::detail
