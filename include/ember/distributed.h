#pragma once
/// ember::distributed: key-value stores, process groups and collectives (torch.distributed /
/// c10d). CPU collectives run on Gloo over TCP (Note [Gloo process group] in
/// src/distributed/process_group_gloo.cpp). Everything here also has a Python twin in
/// `ember.distributed` with PyTorch's names.
///
/// A collective that cannot complete (a rank died, stopped calling, or called a different
/// collective) raises a `DistBackendError` within the group's timeout naming the collective,
/// its sequence number in the group and the ranks that never arrived (Note [Collective
/// fault reports]). It never hangs.

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/error.h"
#include "ember/tensor.h"

namespace ember::distributed {

using Milliseconds = std::chrono::milliseconds;
/// PyTorch's default for stores (300 s) and for process groups (30 min).
inline constexpr Milliseconds kDefaultStoreTimeout{300000};
inline constexpr Milliseconds kDefaultPgTimeout{1800000};
/// "Use the default" for the timeout arguments of `Work::wait` and `Store::wait`.
inline constexpr Milliseconds kUnsetTimeout{-1};

// ---------------------------------------------------------------------------------------------
// Errors (torch.distributed.DistError and its subclasses; all are RuntimeErrors in Python)

/// Base of the distributed errors.
class DistError : public Error {
 public:
  explicit DistError(const std::string& m) : Error(m, ErrorKind::Runtime) {}
};
/// A collective or point-to-point operation failed: a peer died, a timeout, a desync.
class DistBackendError : public DistError {
 public:
  using DistError::DistError;
};
/// A store operation failed or timed out.
class DistStoreError : public DistError {
 public:
  using DistError::DistError;
};
/// A connection could not be made or was lost.
class DistNetworkError : public DistError {
 public:
  using DistError::DistError;
};

// ---------------------------------------------------------------------------------------------
// Stores

/// A key-value store shared by the ranks of a job (c10d::Store). Values are bytes. `get` and
/// `wait` block until the keys exist or the timeout passes (then DistStoreError).
class Store {
 public:
  explicit Store(Milliseconds timeout = kDefaultStoreTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;

  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  void set(const std::string& key, const std::string& value) {
    set(key, std::vector<uint8_t>(value.begin(), value.end()));
  }
  /// The value of `key`, waiting up to the store's timeout for it to be set.
  virtual std::vector<uint8_t> get(const std::string& key) = 0;
  /// Sets `key` to `desired` if its value is `expected` (or if it is missing and `expected` is
  /// empty); returns the value after the call.
  virtual std::vector<uint8_t> compare_set(const std::string& key,
                                           const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) = 0;
  /// Adds `value` to the integer stored at `key` (missing counts as 0); returns the sum.
  virtual int64_t add(const std::string& key, int64_t value) = 0;
  /// Removes `key`; true if it existed.
  virtual bool delete_key(const std::string& key) = 0;
  /// True if every key exists (does not wait).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  /// The number of keys set (TCPStore also counts its own bookkeeping keys, as c10d; FileStore
  /// only the users').
  virtual int64_t num_keys() = 0;
  /// Waits until all `keys` exist; `timeout` kUnsetTimeout means the store's timeout, 0 means
  /// no timeout (c10d's kNoTimeout).
  virtual void wait(const std::vector<std::string>& keys, Milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, kUnsetTimeout); }

  Milliseconds timeout() const { return timeout_; }
  void set_timeout(Milliseconds t) { timeout_ = t; }

  /// The value as a string (convenience for text values).
  std::string get_string(const std::string& key) {
    auto v = get(key);
    return std::string(v.begin(), v.end());
  }
  // c10d's spellings, so ported programs compile.
  std::vector<uint8_t> compareSet(const std::string& k, const std::vector<uint8_t>& e,
                                  const std::vector<uint8_t>& d) {
    return compare_set(k, e, d);
  }
  bool deleteKey(const std::string& k) { return delete_key(k); }
  int64_t getNumKeys() { return num_keys(); }
  void setTimeout(Milliseconds t) { set_timeout(t); }

 protected:
  Milliseconds effective(Milliseconds t) const { return t == kUnsetTimeout ? timeout_ : t; }
  Milliseconds timeout_;
};

/// Options of a TCPStore (c10d::TCPStoreOptions).
struct TCPStoreOptions {
  /// The port to listen on or connect to; 0 on the server picks a free port (see `port()`).
  uint16_t port = 0;
  /// True on the process that runs the server (rank 0).
  bool is_server = false;
  /// When set, the server's constructor waits until this many clients (itself included) joined.
  std::optional<int> num_workers;
  bool wait_workers = true;
  Milliseconds timeout = kDefaultStoreTimeout;
};

/// A store served over TCP by one process (the server) to all the others.
class TCPStore : public Store {
 public:
  TCPStore(std::string host, const TCPStoreOptions& opts = {});
  ~TCPStore() override;
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  using Store::wait;
  /// The port the server listens on (the chosen one when constructed with port 0).
  uint16_t port() const;
  const std::string& host() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A store kept in a file that every process opens (shared file system); the file is removed
/// when the last of `world_size` users is destroyed.
class FileStore : public Store {
 public:
  FileStore(std::string path, int world_size = -1);
  ~FileStore() override;
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  using Store::wait;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An in-process store (threads of one process).
class HashStore : public Store {
 public:
  HashStore();
  ~HashStore() override;
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  using Store::wait;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Prefixes every key with "<prefix>/" before passing it to `store`.
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  using Store::wait;
  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string key(const std::string& k) const { return prefix_ + "/" + k; }
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

// ---------------------------------------------------------------------------------------------
// Process groups

/// Reduction of all_reduce / reduce / reduce_scatter (torch.distributed.ReduceOp).
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR };
/// "SUM", "AVG", ...
const char* reduce_op_name(ReduceOp op);

struct BroadcastOptions {
  int root_rank = 0;
  Milliseconds timeout = kUnsetTimeout;
};
struct AllreduceOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  Milliseconds timeout = kUnsetTimeout;
};
struct ReduceOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  int root_rank = 0;
  Milliseconds timeout = kUnsetTimeout;
};
struct AllgatherOptions {
  Milliseconds timeout = kUnsetTimeout;
};
struct GatherOptions {
  int root_rank = 0;
  Milliseconds timeout = kUnsetTimeout;
};
struct ScatterOptions {
  int root_rank = 0;
  Milliseconds timeout = kUnsetTimeout;
};
struct ReduceScatterOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  Milliseconds timeout = kUnsetTimeout;
};
struct AllToAllOptions {
  Milliseconds timeout = kUnsetTimeout;
};
struct BarrierOptions {
  Milliseconds timeout = kUnsetTimeout;
};

/// A handle on an operation that may still be running (c10d::Work). `wait` rethrows the
/// operation's error; with a timeout it raises DistBackendError if the work is not done by then.
class Work {
 public:
  virtual ~Work() = default;
  virtual bool is_completed() = 0;
  /// True when completed without an error.
  virtual bool is_success() = 0;
  /// The error the operation ended with (null while running or on success).
  virtual std::exception_ptr exception() = 0;
  /// Blocks until done (or `timeout`), then rethrows the operation's error if it failed.
  virtual bool wait(Milliseconds timeout = kUnsetTimeout) = 0;
  /// The output tensors of the operation (what it wrote).
  virtual std::vector<Tensor> result() = 0;
  /// The rank a `recv` from any source received from (-1 otherwise).
  virtual int source_rank() const { return -1; }
  /// Runs `cb` once the work is complete (immediately if it is): the base of Future.then.
  virtual void add_callback(std::function<void()> cb) = 0;
  /// The collective's name ("all_reduce", ...) and sequence number in its group.
  virtual std::string name() const = 0;
  virtual uint64_t sequence_number() const = 0;
};
using WorkPtr = std::shared_ptr<Work>;

/// A set of ranks that run collectives together (c10d::ProcessGroup). Tensors are on the CPU
/// for Gloo; any dtype (reductions: the dtypes the op supports, as torch).
class ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  int getRank() const { return rank_; }
  int getSize() const { return size_; }
  /// "gloo", "nccl", ...
  virtual std::string backend_name() const = 0;
  /// The group's timeout (the default for every collective).
  virtual Milliseconds timeout() const = 0;
  /// How many collectives this group has issued (the next one gets this number).
  virtual uint64_t sequence_number() const = 0;

  virtual WorkPtr broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts = {}) = 0;
  virtual WorkPtr allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts = {}) = 0;
  virtual WorkPtr reduce(std::vector<Tensor>& tensors, const ReduceOptions& opts = {}) = 0;
  /// outputs[0][r] receives rank r's inputs[0].
  virtual WorkPtr allgather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs,
                            const AllgatherOptions& opts = {}) = 0;
  /// `output` (size × input's numel, contiguous) receives the inputs in rank order.
  virtual WorkPtr allgather_into_tensor(Tensor& output, Tensor& input,
                                        const AllgatherOptions& opts = {}) = 0;
  /// On the root, outputs[0][r] receives rank r's inputs[0]; elsewhere outputs is empty.
  virtual WorkPtr gather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs,
                         const GatherOptions& opts = {}) = 0;
  /// outputs[0] receives the root's inputs[0][rank]; inputs is empty off the root.
  virtual WorkPtr scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs,
                          const ScatterOptions& opts = {}) = 0;
  /// outputs[0] receives the reduction over ranks of inputs[0][rank].
  virtual WorkPtr reduce_scatter(std::vector<Tensor>& outputs,
                                 std::vector<std::vector<Tensor>>& inputs,
                                 const ReduceScatterOptions& opts = {}) = 0;
  /// `output` receives the reduction of this rank's slice of `input` (size × output's numel).
  virtual WorkPtr reduce_scatter_tensor(Tensor& output, Tensor& input,
                                        const ReduceScatterOptions& opts = {}) = 0;
  /// Splits `input` along dim 0 by `input_split_sizes` (equal if empty), sends piece r to rank
  /// r, and concatenates what arrives into `output` by `output_split_sizes`.
  virtual WorkPtr alltoall_base(Tensor& output, Tensor& input,
                                std::vector<int64_t> output_split_sizes,
                                std::vector<int64_t> input_split_sizes,
                                const AllToAllOptions& opts = {}) = 0;
  /// outputs[r] receives rank r's inputs[this rank].
  virtual WorkPtr alltoall(std::vector<Tensor>& outputs, std::vector<Tensor>& inputs,
                           const AllToAllOptions& opts = {}) = 0;
  virtual WorkPtr barrier(const BarrierOptions& opts = {}) = 0;
  virtual WorkPtr send(std::vector<Tensor>& tensors, int dst_rank, int tag) = 0;
  virtual WorkPtr recv(std::vector<Tensor>& tensors, int src_rank, int tag) = 0;
  /// Receives from whichever rank sends first; `Work::source_rank` says which.
  virtual WorkPtr recv_anysource(std::vector<Tensor>& tensors, int tag) = 0;

 protected:
  int rank_;
  int size_;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

/// Options of a Gloo process group.
struct ProcessGroupGlooOptions {
  Milliseconds timeout = kDefaultPgTimeout;
  /// The address to bind and announce ("127.0.0.1" unless GLOO_SOCKET_IFNAME / MASTER_ADDR
  /// say otherwise).
  std::string hostname;
  /// Worker threads running the queued collectives (torch's default is 2).
  int threads = 1;
  /// The group's name in error reports ("0" when empty; new_group numbers its groups).
  std::string group_name;
};

/// Creates a Gloo process group: ranks find each other through `store` (one connection per
/// pair of ranks). Collectives run in issue order on the group's worker thread.
ProcessGroupPtr make_gloo_process_group(const std::shared_ptr<Store>& store, int rank, int size,
                                        const ProcessGroupGlooOptions& opts = {});
/// True when this build has the named backend ("gloo", "nccl", "mpi").
bool is_backend_available(const std::string& backend);

// ---------------------------------------------------------------------------------------------
// The torch.distributed front end: a default (world) group and functions on it.

/// init_process_group's arguments. rank/world_size -1 read RANK/WORLD_SIZE for env://.
struct InitOptions {
  std::string init_method = "env://";
  int rank = -1;
  int world_size = -1;
  Milliseconds timeout = kDefaultPgTimeout;
  /// A store to rendezvous through instead of `init_method`.
  std::shared_ptr<Store> store;
  std::string group_name;
};

/// Creates the default group. backend: "gloo" (or "cpu:gloo"); "nccl" when built with it.
void init_process_group(const std::string& backend, const InitOptions& opts = {});
/// Destroys `group`, or every group when null (then `is_initialized()` is false again).
void destroy_process_group(const ProcessGroupPtr& group = nullptr);
bool is_initialized();
/// The default group; raises if init_process_group was not called.
ProcessGroupPtr default_group();
/// The default group's store (with the job's prefix).
std::shared_ptr<Store> default_store();
/// This process's rank in `group` (the default group when null); -1 if not a member.
int get_rank(const ProcessGroupPtr& group = nullptr);
int get_world_size(const ProcessGroupPtr& group = nullptr);
/// The backend name of `group`.
std::string get_backend(const ProcessGroupPtr& group = nullptr);
/// A group of the given global ranks (every rank of the world must call this, as torch); null
/// on ranks not in it. Empty `ranks` means the whole world.
ProcessGroupPtr new_group(std::vector<int> ranks = {}, Milliseconds timeout = kUnsetTimeout);
/// The global ranks of `group`, in group-rank order.
std::vector<int> get_process_group_ranks(const ProcessGroupPtr& group);
/// The group rank of global rank `global_rank` in `group` (raises if not a member).
int get_group_rank(const ProcessGroupPtr& group, int global_rank);
int get_global_rank(const ProcessGroupPtr& group, int group_rank);

// Collectives on the default group (or `group`). Ranks (`src`, `dst`) are global ranks, as in
// torch.distributed. With async_op they return the work; otherwise they wait and return null.
WorkPtr broadcast(Tensor& tensor, int src, const ProcessGroupPtr& group = nullptr,
                  bool async_op = false);
WorkPtr all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM,
                   const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM,
               const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor,
                   const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input,
                               const ProcessGroupPtr& group = nullptr, bool async_op = false);
/// gather_list is used only on `dst`.
WorkPtr gather(const Tensor& tensor, std::vector<Tensor>* gather_list, int dst,
               const ProcessGroupPtr& group = nullptr, bool async_op = false);
/// scatter_list is used only on `src`.
WorkPtr scatter(Tensor& tensor, const std::vector<Tensor>* scatter_list, int src,
                const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list,
                       ReduceOp op = ReduceOp::SUM, const ProcessGroupPtr& group = nullptr,
                       bool async_op = false);
WorkPtr reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM,
                              const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr all_to_all(std::vector<Tensor>& output_list, const std::vector<Tensor>& input_list,
                   const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr all_to_all_single(Tensor& output, const Tensor& input,
                          std::vector<int64_t> output_split_sizes = {},
                          std::vector<int64_t> input_split_sizes = {},
                          const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr barrier(const ProcessGroupPtr& group = nullptr, bool async_op = false);
/// A barrier that names the ranks that did not arrive within `timeout` (torch's
/// monitored_barrier).
void monitored_barrier(const ProcessGroupPtr& group = nullptr, Milliseconds timeout = kUnsetTimeout,
                       bool wait_all_ranks = false);
void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group = nullptr, int tag = 0);
/// Returns the sender's rank; src -1 receives from any rank.
int recv(Tensor& tensor, int src = -1, const ProcessGroupPtr& group = nullptr, int tag = 0);
WorkPtr isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group = nullptr, int tag = 0);
WorkPtr irecv(Tensor& tensor, int src = -1, const ProcessGroupPtr& group = nullptr, int tag = 0);

/// One send or receive of batch_isend_irecv (torch.distributed.P2POp).
struct P2POp {
  enum Kind { kSend, kRecv } kind;
  Tensor tensor;
  int peer;
  ProcessGroupPtr group;
  int tag = 0;
};
/// Starts all the sends and receives at once (so rings of exchanges cannot deadlock).
std::vector<WorkPtr> batch_isend_irecv(std::vector<P2POp>& ops);

// Object collectives: each object is a byte string (serialize it first; the Python binding
// pickles).
std::vector<std::string> all_gather_object(const std::string& obj,
                                           const ProcessGroupPtr& group = nullptr);
/// On `src`, `objs` is sent; elsewhere it is replaced by src's list.
void broadcast_object_list(std::vector<std::string>& objs, int src = 0,
                           const ProcessGroupPtr& group = nullptr);
/// Rank r receives `scatter_objs[r]` of `src` (scatter_objs is read on src only).
std::string scatter_object_list(const std::vector<std::string>& scatter_objs, int src = 0,
                                const ProcessGroupPtr& group = nullptr);
/// Rank `dst` gets every rank's object; others get an empty list.
std::vector<std::string> gather_object(const std::string& obj, int dst = 0,
                                       const ProcessGroupPtr& group = nullptr);

/// Debug level from EMBER_DISTRIBUTED_DEBUG (or TORCH_DISTRIBUTED_DEBUG): OFF, INFO, DETAIL.
/// DETAIL checks before each collective that all ranks call the same op with the same shapes
/// and dtypes (Note [Collective fault reports]).
enum class DebugLevel { Off, Info, Detail };
DebugLevel debug_level();
void set_debug_level(DebugLevel level);

}  // namespace ember::distributed
