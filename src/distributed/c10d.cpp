// The torch.distributed front end: the default group, new_group, rank bookkeeping, and the
// collectives that take global ranks (as torch.distributed) and map them to group ranks.
//
// Every group gets a store of its own: PrefixStore("<group id>", default store), where the
// default store is the job's store under the "default_pg" prefix. Groups are numbered in
// creation order ("0" is the default group), which is the same on every rank because every
// rank calls new_group in the same order (as torch requires).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>

#include "distributed/process_group_gloo.h"
#include "ember/distributed.h"
#include "ember/factory.h"

namespace ember::distributed {
namespace {

using ::ember::detail::str_cat;

struct GroupInfo {
  std::vector<int> global_ranks;  // index = group rank
};

struct State {
  std::mutex mu;
  ProcessGroupPtr default_pg;
  std::shared_ptr<Store> default_store;
  int world_rank = -1;
  int world_size = -1;
  std::map<const ProcessGroup*, GroupInfo> groups;  // every group made here, default included
  std::vector<ProcessGroupPtr> owned;               // keeps them alive until destroyed
  int next_group_id = 1;
  int monitored_barriers = 0;
};

State& state() {
  static State s;
  return s;
}

[[noreturn]] void not_initialized(const char* op) {
  throw Error(str_cat("[", op,
                      "] the default process group has not been initialized; call "
                      "init_process_group first"));
}

ProcessGroupPtr resolve(const char* op, const ProcessGroupPtr& group) {
  if (group) return group;
  std::lock_guard<std::mutex> g(state().mu);
  if (!state().default_pg) not_initialized(op);
  return state().default_pg;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

int parse_int(const char* op, const std::string& what, const std::string& v) {
  try {
    size_t pos = 0;
    long long x = std::stoll(v, &pos);
    if (pos == v.size()) return int(x);
  } catch (const std::exception&) {
  }
  throw ValueError(str_cat("[", op, "] ", what, " must be an integer, got '", v, "'"));
}

// "a=1&b=2" -> {a: 1, b: 2}
std::map<std::string, std::string> parse_query(const std::string& q) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < q.size()) {
    size_t amp = q.find('&', i);
    std::string kv = q.substr(i, amp == std::string::npos ? std::string::npos : amp - i);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
    if (amp == std::string::npos) break;
    i = amp + 1;
  }
  return out;
}

bool agent_store() {
  for (const char* n : {"EMBER_USE_AGENT_STORE", "TORCHELASTIC_USE_AGENT_STORE"}) {
    std::string v = env_or_empty(n);
    if (v == "True" || v == "true" || v == "1") return true;
  }
  return false;
}

// The job's store from init_method (rank and world_size filled in from the URL or env).
std::shared_ptr<Store> rendezvous(const InitOptions& opts, int& rank, int& world_size) {
  const char* op = "init_process_group";
  const std::string url = opts.init_method.empty() ? "env://" : opts.init_method;
  std::string rest, query;
  auto take_query = [&](const std::string& s) {
    size_t qm = s.find('?');
    rest = s.substr(0, qm);
    query = qm == std::string::npos ? "" : s.substr(qm + 1);
    auto q = parse_query(query);
    if (q.count("rank") && rank < 0) rank = parse_int(op, "rank", q["rank"]);
    if (q.count("world_size") && world_size < 0)
      world_size = parse_int(op, "world_size", q["world_size"]);
  };
  auto need = [&](const char* var) {
    std::string v = env_or_empty(var);
    EMBER_CHECK_VALUE(!v.empty(), "[", op, "] env:// rendezvous: environment variable ", var,
                      " expected, but not set");
    return v;
  };
  if (url.rfind("env://", 0) == 0) {
    take_query(url.substr(6));
    if (rank < 0) rank = parse_int(op, "RANK", need("RANK"));
    if (world_size < 0) world_size = parse_int(op, "WORLD_SIZE", need("WORLD_SIZE"));
    std::string addr = need("MASTER_ADDR");
    int port = parse_int(op, "MASTER_PORT", need("MASTER_PORT"));
    EMBER_CHECK_VALUE(port > 0 && port < 65536, "[", op, "] MASTER_PORT ", port,
                      " is not a valid port");
    TCPStoreOptions so;
    so.port = uint16_t(port);
    so.is_server = rank == 0 && !agent_store();
    so.num_workers = world_size;
    so.timeout = opts.timeout;
    return std::make_shared<TCPStore>(addr, so);
  }
  if (url.rfind("tcp://", 0) == 0) {
    take_query(url.substr(6));
    EMBER_CHECK_VALUE(rank >= 0 && world_size > 0, "[", op,
                      "] tcp:// rendezvous needs rank and world_size (arguments or ?rank=&"
                      "world_size= in the URL)");
    size_t colon = rest.rfind(':');
    EMBER_CHECK_VALUE(colon != std::string::npos && colon + 1 < rest.size(), "[", op,
                      "] tcp:// init_method must be tcp://host:port, got '", url, "'");
    std::string host = rest.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    int port = parse_int(op, "the port", rest.substr(colon + 1));
    EMBER_CHECK_VALUE(port > 0 && port < 65536, "[", op, "] port ", port, " is not valid");
    TCPStoreOptions so;
    so.port = uint16_t(port);
    so.is_server = rank == 0;
    so.num_workers = world_size;
    so.timeout = opts.timeout;
    return std::make_shared<TCPStore>(host, so);
  }
  if (url.rfind("file://", 0) == 0) {
    take_query(url.substr(7));
    EMBER_CHECK_VALUE(rank >= 0 && world_size > 0, "[", op,
                      "] file:// rendezvous needs rank and world_size (arguments or ?rank=&"
                      "world_size= in the URL)");
    EMBER_CHECK_VALUE(!rest.empty(), "[", op, "] file:// init_method has no path: '", url, "'");
    auto s = std::make_shared<FileStore>(rest, world_size);
    s->set_timeout(opts.timeout);
    return s;
  }
  throw ValueError(str_cat("[", op, "] unknown init_method '", url,
                           "': expected env://, tcp://host:port or file://path"));
}

std::string normalize_backend(const std::string& backend) {
  std::string b;
  for (char c : backend) b += char(std::tolower(static_cast<unsigned char>(c)));
  if (b == "cpu:gloo" || b == "gloo" || b == "cpu:gloo,cuda:gloo") return "gloo";
  if (b.empty() || b == "undefined") return "gloo";
  return b;
}

// The global ranks of `pg` (the identity for groups not made here).
std::vector<int> ranks_of(const ProcessGroupPtr& pg) {
  std::lock_guard<std::mutex> g(state().mu);
  auto it = state().groups.find(pg.get());
  if (it != state().groups.end()) return it->second.global_ranks;
  std::vector<int> r(size_t(pg->size()));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

// A root or peer outside the group is a RuntimeError, as torch's collectives raise.
int to_group_rank(const char* op, const ProcessGroupPtr& pg, int global_rank, const char* what) {
  auto ranks = ranks_of(pg);
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] == global_rank) return int(i);
  throw Error(str_cat(
      "[", op, "] ", what, " rank ", global_rank, " is not part of the group (global ranks ",
      [&] {
        std::string s = "[";
        for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
        return s + "]";
      }(),
      ")"));
}

// Issues a collective with `issue` and waits for it unless async_op; a waited-for collective
// may run on this thread (detail::InlineSyncScope).
template <class F>
WorkPtr finish(F&& issue, bool async_op) {
  if (async_op) return issue();
  detail::InlineSyncScope inline_sync;
  issue()->wait();
  return nullptr;
}

}  // namespace

void init_process_group(const std::string& backend, const InitOptions& opts) {
  const char* op = "init_process_group";
  {
    std::lock_guard<std::mutex> g(state().mu);
    EMBER_CHECK(!state().default_pg, "[", op,
                "] trying to initialize the default process group twice");
  }
  std::string b = normalize_backend(backend);
  EMBER_CHECK(b == "gloo", "[", op, "] backend '", backend,
              "' is not available in this build (available: gloo)");
  EMBER_CHECK_VALUE(opts.timeout.count() > 0, "[", op, "] the timeout must be positive, got ",
                    opts.timeout.count(), " ms");
  int rank = opts.rank, world_size = opts.world_size;
  std::shared_ptr<Store> base;
  if (opts.store) {
    EMBER_CHECK_VALUE(rank >= 0 && world_size > 0, "[", op,
                      "] rank and world_size must be given with a store");
    base = opts.store;
  } else {
    base = rendezvous(opts, rank, world_size);
  }
  EMBER_CHECK_VALUE(world_size > 0, "[", op, "] world_size must be positive, got ", world_size);
  EMBER_CHECK_VALUE(rank >= 0 && rank < world_size, "[", op, "] rank ", rank,
                    " is outside a world of ", world_size, " ranks");
  auto store = std::make_shared<PrefixStore>("default_pg", base);
  ProcessGroupGlooOptions po;
  po.timeout = opts.timeout;
  po.group_name = opts.group_name.empty() ? "0" : opts.group_name;
  auto pg =
      make_gloo_process_group(std::make_shared<PrefixStore>("0", store), rank, world_size, po);
  std::lock_guard<std::mutex> g(state().mu);
  EMBER_CHECK(!state().default_pg, "[", op,
              "] trying to initialize the default process group twice");
  auto& s = state();
  s.default_pg = pg;
  s.default_store = store;
  s.world_rank = rank;
  s.world_size = world_size;
  std::vector<int> ranks(static_cast<size_t>(world_size));
  std::iota(ranks.begin(), ranks.end(), 0);
  s.groups[pg.get()] = GroupInfo{ranks};
  s.owned.push_back(pg);
  s.next_group_id = 1;
  s.monitored_barriers = 0;
}

void destroy_process_group(const ProcessGroupPtr& group) {
  std::vector<ProcessGroupPtr> dropped;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> g(state().mu);
    auto& s = state();
    if (!group || group == s.default_pg) {
      EMBER_CHECK(s.default_pg || group,
                  "[destroy_process_group] the default process group "
                  "has not been initialized");
      dropped.swap(s.owned);
      s.groups.clear();
      s.default_pg.reset();
      s.default_store.reset();
      s.world_rank = s.world_size = -1;
      s.next_group_id = 1;
    } else {
      auto it = s.groups.find(group.get());
      EMBER_CHECK_VALUE(it != s.groups.end(),
                        "[destroy_process_group] the group is not registered (already "
                        "destroyed, or not made by new_group)");
      s.groups.erase(it);
      for (auto o = s.owned.begin(); o != s.owned.end(); ++o) {
        if (*o == group) {
          dropped.push_back(*o);
          s.owned.erase(o);
          break;
        }
      }
    }
  }
  dropped.clear();
}

bool is_initialized() {
  std::lock_guard<std::mutex> g(state().mu);
  return state().default_pg != nullptr;
}

ProcessGroupPtr default_group() { return resolve("default_group", nullptr); }

std::shared_ptr<Store> default_store() {
  std::lock_guard<std::mutex> g(state().mu);
  if (!state().default_pg) not_initialized("default_store");
  return state().default_store;
}

int get_rank(const ProcessGroupPtr& group) { return resolve("get_rank", group)->rank(); }

int get_world_size(const ProcessGroupPtr& group) {
  return resolve("get_world_size", group)->size();
}

std::string get_backend(const ProcessGroupPtr& group) {
  return resolve("get_backend", group)->backend_name();
}

ProcessGroupPtr new_group(std::vector<int> ranks, Milliseconds timeout) {
  const char* op = "new_group";
  std::shared_ptr<Store> store;
  int world_rank, world_size, id;
  Milliseconds to;
  {
    std::lock_guard<std::mutex> g(state().mu);
    auto& s = state();
    if (!s.default_pg) not_initialized(op);
    store = s.default_store;
    world_rank = s.world_rank;
    world_size = s.world_size;
    to = timeout == kUnsetTimeout ? s.default_pg->timeout() : timeout;
    id = s.next_group_id++;
  }
  EMBER_CHECK_VALUE(to.count() > 0, "[", op, "] the timeout must be positive, got ", to.count(),
                    " ms");
  if (ranks.empty()) {
    ranks.resize(size_t(world_size));
    std::iota(ranks.begin(), ranks.end(), 0);
  }
  std::sort(ranks.begin(), ranks.end());
  for (size_t i = 0; i < ranks.size(); ++i) {
    EMBER_CHECK_VALUE(ranks[i] >= 0 && ranks[i] < world_size, "[", op, "] rank ", ranks[i],
                      " is outside the world of ", world_size, " ranks");
    EMBER_CHECK_VALUE(i == 0 || ranks[i] != ranks[i - 1], "[", op, "] rank ", ranks[i],
                      " is listed twice");
  }
  auto it = std::find(ranks.begin(), ranks.end(), world_rank);
  if (it == ranks.end()) return nullptr;
  ProcessGroupGlooOptions po;
  po.timeout = to;
  po.group_name = std::to_string(id);
  auto pg = make_gloo_process_group(std::make_shared<PrefixStore>(po.group_name, store),
                                    int(it - ranks.begin()), int(ranks.size()), po);
  std::lock_guard<std::mutex> g(state().mu);
  state().groups[pg.get()] = GroupInfo{ranks};
  state().owned.push_back(pg);
  return pg;
}

std::vector<int> get_process_group_ranks(const ProcessGroupPtr& group) {
  return ranks_of(resolve("get_process_group_ranks", group));
}

int get_group_rank(const ProcessGroupPtr& group, int global_rank) {
  auto pg = resolve("get_group_rank", group);
  try {
    return to_group_rank("get_group_rank", pg, global_rank, "global");
  } catch (const Error& e) {
    throw ValueError(e.what());  // torch.distributed.get_group_rank raises ValueError
  }
}

int get_global_rank(const ProcessGroupPtr& group, int group_rank) {
  auto ranks = get_process_group_ranks(group);
  EMBER_CHECK_VALUE(group_rank >= 0 && group_rank < int(ranks.size()), "[get_global_rank] group ",
                    "rank ", group_rank, " is not part of a group of ", ranks.size(), " ranks");
  return ranks[size_t(group_rank)];
}

// ---- Collectives -----------------------------------------------------------------------------

WorkPtr broadcast(Tensor& tensor, int src, const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("broadcast", group);
  BroadcastOptions o;
  o.root_rank = to_group_rank("broadcast", pg, src, "source");
  std::vector<Tensor> ts{tensor};
  return finish([&] { return pg->broadcast(ts, o); }, async_op);
}

WorkPtr all_reduce(Tensor& tensor, ReduceOp op, const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("all_reduce", group);
  AllreduceOptions o;
  o.reduce_op = op;
  std::vector<Tensor> ts{tensor};
  return finish([&] { return pg->allreduce(ts, o); }, async_op);
}

WorkPtr reduce(Tensor& tensor, int dst, ReduceOp op, const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("reduce", group);
  ReduceOptions o;
  o.reduce_op = op;
  o.root_rank = to_group_rank("reduce", pg, dst, "destination");
  std::vector<Tensor> ts{tensor};
  return finish([&] { return pg->reduce(ts, o); }, async_op);
}

WorkPtr all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor,
                   const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("all_gather", group);
  std::vector<std::vector<Tensor>> outs{tensor_list};
  std::vector<Tensor> ins{tensor};
  return finish([&] { return pg->allgather(outs, ins); }, async_op);
}

WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input, const ProcessGroupPtr& group,
                               bool async_op) {
  auto pg = resolve("all_gather_into_tensor", group);
  Tensor in = input;
  return finish([&] { return pg->allgather_into_tensor(output, in); }, async_op);
}

namespace {

// gather_list / scatter_list: required on the root (`role` "destination" or "source"),
// refused elsewhere (ValueErrors, as torch's front end raises).
std::vector<std::vector<Tensor>> root_only_list(const char* op, const std::vector<Tensor>* list,
                                                bool is_root, const char* role) {
  std::vector<std::vector<Tensor>> lists;
  if (is_root) {
    EMBER_CHECK_VALUE(list != nullptr, "[", op, "] ", op, "_list must be given on the ", role,
                      " rank");
    lists.push_back(*list);
  } else {
    EMBER_CHECK_VALUE(list == nullptr || list->empty(), "[", op, "] ", op,
                      "_list must not be given on non-", role, " ranks");
  }
  return lists;
}

}  // namespace

WorkPtr gather(const Tensor& tensor, std::vector<Tensor>* gather_list, int dst,
               const ProcessGroupPtr& group, bool async_op) {
  const char* op = "gather";
  auto pg = resolve(op, group);
  GatherOptions o;
  o.root_rank = to_group_rank(op, pg, dst, "destination");
  auto outs = root_only_list(op, gather_list, pg->rank() == o.root_rank, "destination");
  std::vector<Tensor> ins{tensor};
  return finish([&] { return pg->gather(outs, ins, o); }, async_op);
}

WorkPtr scatter(Tensor& tensor, const std::vector<Tensor>* scatter_list, int src,
                const ProcessGroupPtr& group, bool async_op) {
  const char* op = "scatter";
  auto pg = resolve(op, group);
  ScatterOptions o;
  o.root_rank = to_group_rank(op, pg, src, "source");
  auto ins = root_only_list(op, scatter_list, pg->rank() == o.root_rank, "source");
  std::vector<Tensor> outs{tensor};
  return finish([&] { return pg->scatter(outs, ins, o); }, async_op);
}

WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op,
                       const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("reduce_scatter", group);
  ReduceScatterOptions o;
  o.reduce_op = op;
  std::vector<Tensor> outs{output};
  std::vector<std::vector<Tensor>> ins{input_list};
  return finish([&] { return pg->reduce_scatter(outs, ins, o); }, async_op);
}

WorkPtr reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                              const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("reduce_scatter_tensor", group);
  ReduceScatterOptions o;
  o.reduce_op = op;
  Tensor in = input;
  return finish([&] { return pg->reduce_scatter_tensor(output, in, o); }, async_op);
}

WorkPtr all_to_all(std::vector<Tensor>& output_list, const std::vector<Tensor>& input_list,
                   const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("all_to_all", group);
  std::vector<Tensor> ins = input_list;
  return finish([&] { return pg->alltoall(output_list, ins); }, async_op);
}

WorkPtr all_to_all_single(Tensor& output, const Tensor& input,
                          std::vector<int64_t> output_split_sizes,
                          std::vector<int64_t> input_split_sizes, const ProcessGroupPtr& group,
                          bool async_op) {
  auto pg = resolve("all_to_all_single", group);
  Tensor in = input;
  return finish(
      [&] {
        return pg->alltoall_base(output, in, std::move(output_split_sizes),
                                 std::move(input_split_sizes));
      },
      async_op);
}

WorkPtr barrier(const ProcessGroupPtr& group, bool async_op) {
  auto pg = resolve("barrier", group);
  return finish([&] { return pg->barrier(); }, async_op);
}

void monitored_barrier(const ProcessGroupPtr& group, Milliseconds timeout, bool wait_all_ranks) {
  const char* op = "monitored_barrier";
  auto pg = resolve(op, group);
  Milliseconds to = timeout == kUnsetTimeout ? pg->timeout() : timeout;
  EMBER_CHECK_VALUE(to.count() > 0, "[", op, "] the timeout must be positive, got ", to.count(),
                    " ms");
  // A tag of its own per call: a late message of an earlier, failed call cannot satisfy this one.
  int tag;
  {
    std::lock_guard<std::mutex> g(state().mu);
    tag = 0x40000000 + (state().monitored_barriers++ & 0x3fffffff);
  }
  const int n = pg->size(), me = pg->rank();
  if (n == 1) return;
  auto ranks = ranks_of(pg);
  if (me != 0) {
    std::vector<Tensor> t{ember::zeros({1}, kInt)};
    try {
      pg->send(t, 0, tag)->wait(to);
      pg->recv(t, 0, tag)->wait(to);
    } catch (const std::exception& e) {
      throw DistBackendError(str_cat("[", op, "] rank ", ranks[size_t(me)],
                                     " was not released by rank ", ranks[0], " within ", to.count(),
                                     " ms (another rank failed to arrive, or rank ", ranks[0],
                                     " died): ", e.what()));
    }
    return;
  }
  std::vector<WorkPtr> works(static_cast<size_t>(n));
  std::vector<std::vector<Tensor>> bufs(static_cast<size_t>(n));
  for (int r = 1; r < n; ++r) {
    bufs[size_t(r)] = {ember::zeros({1}, kInt)};
    works[size_t(r)] = pg->recv(bufs[size_t(r)], r, tag);
  }
  auto deadline = std::chrono::steady_clock::now() + to;
  std::vector<int> failed;
  for (int r = 1; r < n; ++r) {
    auto left =
        std::chrono::duration_cast<Milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      works[size_t(r)]->wait(std::max(left, Milliseconds(1)));
    } catch (const std::exception&) {
      failed.push_back(ranks[size_t(r)]);
      if (!wait_all_ranks) break;
    }
  }
  if (!failed.empty()) {
    std::string list;
    for (size_t i = 0; i < failed.size(); ++i) list += (i ? ", " : "") + std::to_string(failed[i]);
    throw DistBackendError(str_cat("[", op, "] ", failed.size() == 1 ? "Rank " : "Ranks ", list,
                                   " failed to pass monitoredBarrier in ", to.count(), " ms"));
  }
  std::vector<WorkPtr> acks;
  for (int r = 1; r < n; ++r) acks.push_back(pg->send(bufs[size_t(r)], r, tag));
  for (auto& w : acks) w->wait(to);
}

void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  isend(tensor, dst, group, tag)->wait();
}

int recv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  auto pg = resolve("recv", group);
  auto w = irecv(tensor, src, pg, tag);
  w->wait();
  return src >= 0 ? src : get_global_rank(pg, w->source_rank());
}

WorkPtr isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  auto pg = resolve("send", group);
  std::vector<Tensor> ts{tensor};
  return pg->send(ts, to_group_rank("send", pg, dst, "destination"), tag);
}

WorkPtr irecv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  auto pg = resolve("recv", group);
  std::vector<Tensor> ts{tensor};
  if (src < 0) return pg->recv_anysource(ts, tag);
  return pg->recv(ts, to_group_rank("recv", pg, src, "source"), tag);
}

std::vector<WorkPtr> batch_isend_irecv(std::vector<P2POp>& ops) {
  EMBER_CHECK_VALUE(!ops.empty(), "[batch_isend_irecv] expects a non-empty list of P2POp");
  // Gloo posts every send and receive without blocking, so issuing them in order is enough.
  std::vector<WorkPtr> works;
  works.reserve(ops.size());
  for (auto& p : ops) {
    works.push_back(p.kind == P2POp::kSend ? isend(p.tensor, p.peer, p.group, p.tag)
                                           : irecv(p.tensor, p.peer, p.group, p.tag));
  }
  return works;
}

// ---- Object collectives (byte strings) -------------------------------------------------------

namespace {

Tensor bytes_tensor(const std::string& s, int64_t size) {
  Tensor t = ember::zeros({size}, kByte);
  if (!s.empty()) std::memcpy(t.data_ptr(), s.data(), s.size());
  return t;
}

std::string tensor_bytes(const Tensor& t, int64_t n) {
  return std::string(static_cast<const char*>(t.data_ptr()), size_t(n));
}

// Every rank's object size, in group-rank order.
std::vector<int64_t> gather_sizes(const ProcessGroupPtr& pg, int64_t mine) {
  Tensor in = ember::full({1}, double(mine), kLong);
  std::vector<Tensor> outs;
  for (int r = 0; r < pg->size(); ++r) outs.push_back(ember::zeros({1}, kLong));
  std::vector<std::vector<Tensor>> o{outs};
  std::vector<Tensor> i{in};
  pg->allgather(o, i)->wait();
  std::vector<int64_t> sizes;
  for (auto& t : outs) sizes.push_back(t.data_ptr<int64_t>()[0]);
  return sizes;
}

}  // namespace

std::vector<std::string> all_gather_object(const std::string& obj, const ProcessGroupPtr& group) {
  auto pg = resolve("all_gather_object", group);
  detail::InlineSyncScope inline_sync;
  auto sizes = gather_sizes(pg, int64_t(obj.size()));
  int64_t mx = *std::max_element(sizes.begin(), sizes.end());
  std::vector<Tensor> outs;
  for (int r = 0; r < pg->size(); ++r) outs.push_back(ember::zeros({mx}, kByte));
  std::vector<std::vector<Tensor>> o{outs};
  std::vector<Tensor> i{bytes_tensor(obj, mx)};
  pg->allgather(o, i)->wait();
  std::vector<std::string> res;
  for (int r = 0; r < pg->size(); ++r)
    res.push_back(tensor_bytes(outs[size_t(r)], sizes[size_t(r)]));
  return res;
}

void broadcast_object_list(std::vector<std::string>& objs, int src, const ProcessGroupPtr& group) {
  const char* op = "broadcast_object_list";
  auto pg = resolve(op, group);
  detail::InlineSyncScope inline_sync;
  int root = to_group_rank(op, pg, src, "source");
  bool is_root = pg->rank() == root;
  BroadcastOptions bo;
  bo.root_rank = root;
  std::vector<Tensor> count{ember::full({1}, double(is_root ? objs.size() : 0), kLong)};
  pg->broadcast(count, bo)->wait();
  int64_t n = count[0].data_ptr<int64_t>()[0];
  std::vector<Tensor> sizes{ember::zeros({n}, kLong)};
  if (is_root)
    for (int64_t i = 0; i < n; ++i)
      sizes[0].data_ptr<int64_t>()[i] = int64_t(objs[size_t(i)].size());
  pg->broadcast(sizes, bo)->wait();
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += sizes[0].data_ptr<int64_t>()[i];
  std::string all;
  if (is_root)
    for (auto& s : objs) all += s;
  std::vector<Tensor> data{bytes_tensor(is_root ? all : std::string(), total)};
  pg->broadcast(data, bo)->wait();
  if (is_root) return;
  objs.clear();
  const char* p = static_cast<const char*>(data[0].data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = sizes[0].data_ptr<int64_t>()[i];
    objs.emplace_back(p, size_t(len));
    p += len;
  }
}

std::string scatter_object_list(const std::vector<std::string>& scatter_objs, int src,
                                const ProcessGroupPtr& group) {
  const char* op = "scatter_object_list";
  auto pg = resolve(op, group);
  detail::InlineSyncScope inline_sync;
  int root = to_group_rank(op, pg, src, "source");
  bool is_root = pg->rank() == root;
  const int n = pg->size();
  if (is_root) {
    EMBER_CHECK_VALUE(int(scatter_objs.size()) == n, "[", op, "] the source's list has ",
                      scatter_objs.size(), " objects but the group has ", n, " ranks");
  }
  // The sizes first (broadcast, so every rank knows the padded length), then the bytes.
  BroadcastOptions bo;
  bo.root_rank = root;
  std::vector<Tensor> sizes{ember::zeros({n}, kLong)};
  if (is_root)
    for (int r = 0; r < n; ++r)
      sizes[0].data_ptr<int64_t>()[r] = int64_t(scatter_objs[size_t(r)].size());
  pg->broadcast(sizes, bo)->wait();
  const int64_t* sz = sizes[0].data_ptr<int64_t>();
  int64_t mx = *std::max_element(sz, sz + n);
  ScatterOptions so;
  so.root_rank = root;
  std::vector<Tensor> out{ember::zeros({mx}, kByte)};
  std::vector<std::vector<Tensor>> in;
  if (is_root) {
    in.emplace_back();
    for (int r = 0; r < n; ++r) in[0].push_back(bytes_tensor(scatter_objs[size_t(r)], mx));
  }
  pg->scatter(out, in, so)->wait();
  return tensor_bytes(out[0], sz[pg->rank()]);
}

std::vector<std::string> gather_object(const std::string& obj, int dst,
                                       const ProcessGroupPtr& group) {
  const char* op = "gather_object";
  auto pg = resolve(op, group);
  detail::InlineSyncScope inline_sync;
  int root = to_group_rank(op, pg, dst, "destination");
  bool is_root = pg->rank() == root;
  auto sizes = gather_sizes(pg, int64_t(obj.size()));
  int64_t mx = *std::max_element(sizes.begin(), sizes.end());
  GatherOptions go;
  go.root_rank = root;
  std::vector<std::vector<Tensor>> outs;
  if (is_root) {
    outs.emplace_back();
    for (int r = 0; r < pg->size(); ++r) outs[0].push_back(ember::zeros({mx}, kByte));
  }
  std::vector<Tensor> in{bytes_tensor(obj, mx)};
  pg->gather(outs, in, go)->wait();
  std::vector<std::string> res;
  if (is_root)
    for (int r = 0; r < pg->size(); ++r)
      res.push_back(tensor_bytes(outs[0][size_t(r)], sizes[size_t(r)]));
  return res;
}

}  // namespace ember::distributed
