// DistributedDataParallel's construction steps: the cross-rank shape check and the coalesced
// broadcast of the initial parameters and buffers.
#include <map>
#include <sstream>

#include "ember/factory.h"
#include "ember/nn/parallel/distributed.h"
#include "ember/ops.h"

namespace ember::nn::parallel::detail {

namespace {

std::string shape_str(const int64_t* m, int64_t ndim) {
  std::ostringstream os;
  os << "[";
  for (int64_t d = 0; d < ndim; ++d) os << (d ? ", " : "") << m[d];
  os << "]";
  return os.str();
}

// One rank's metadata: [n, then per parameter: dtype, ndim, sizes...].
std::vector<int64_t> param_metadata(const std::vector<Tensor>& params) {
  std::vector<int64_t> m{int64_t(params.size())};
  for (const Tensor& p : params) {
    m.push_back(int64_t(p.dtype()));
    m.push_back(p.dim());
    for (int64_t s : p.sizes()) m.push_back(s);
  }
  return m;
}

Tensor long_tensor(const std::vector<int64_t>& v, int64_t len) {
  Tensor t = full({len}, Scalar(int64_t(-1)), dtype(kLong));
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return t;
}

std::vector<Tensor> all_gather(const distributed::ProcessGroupPtr& pg, const Tensor& t) {
  std::vector<std::vector<Tensor>> out(1);
  for (int r = 0; r < pg->size(); ++r) out[0].push_back(empty_like(t));
  std::vector<Tensor> in{t};
  pg->allgather(out, in)->wait();
  return out[0];
}

}  // namespace

void verify_param_shapes_across_processes(const std::vector<Tensor>& params,
                                          const distributed::ProcessGroupPtr& pg) {
  if (pg->size() == 1) return;
  std::vector<int64_t> mine = param_metadata(params);
  auto lens = all_gather(pg, long_tensor({int64_t(mine.size())}, 1));
  int64_t max_len = 0;
  for (auto& l : lens) max_len = std::max(max_len, l.data_ptr<int64_t>()[0]);
  auto metas = all_gather(pg, long_tensor(mine, max_len));
  int me = pg->rank();
  for (int r = 0; r < pg->size(); ++r) {
    const int64_t* o = metas[r].data_ptr<int64_t>();
    EMBER_CHECK(o[0] == mine[0], "DDP expects same model across all ranks, but Rank ", me, " has ",
                mine[0], " params, while rank ", r, " has inconsistent ", o[0], " params.");
    size_t pos = 1;
    for (int64_t p = 0; p < mine[0]; ++p) {
      int64_t ndim = mine[pos + 1];
      bool same = o[pos] == mine[pos] && o[pos + 1] == ndim;
      for (int64_t d = 0; same && d < ndim; ++d) same = o[pos + 2 + d] == mine[pos + 2 + d];
      if (!same) {
        std::ostringstream os;
        os << "[" << me << "]: params[" << p << "] in this process with sizes "
           << shape_str(&mine[pos + 2], ndim) << " and dtype " << toString(ScalarType(mine[pos]))
           << " appears not to match sizes of the same param "
           << "in process " << r << " (sizes " << shape_str(&o[pos + 2], o[pos + 1]) << ", dtype "
           << toString(ScalarType(o[pos])) << ").";
        throw Error(os.str(), ErrorKind::Runtime);
      }
      pos += 2 + size_t(ndim);
    }
  }
}

void broadcast_coalesced(const std::vector<Tensor>& tensors, const distributed::ProcessGroupPtr& pg,
                         int src) {
  if (pg->size() == 1) return;
  // One flat tensor per dtype, in first-appearance order (the same on every rank).
  std::vector<std::pair<ScalarType, std::vector<Tensor>>> groups;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == t.dtype(); });
    if (it == groups.end()) {
      groups.push_back({t.dtype(), {}});
      it = groups.end() - 1;
    }
    it->second.push_back(t);
  }
  NoGradGuard g;
  for (auto& [dt, ts] : groups) {
    int64_t total = 0;
    for (auto& t : ts) total += t.numel();
    Tensor flat = empty({total}, dtype(dt));
    int64_t off = 0;
    for (auto& t : ts) {
      flat.narrow(0, off, t.numel()).copy_(t.reshape({t.numel()}));
      off += t.numel();
    }
    std::vector<Tensor> v{flat};
    distributed::BroadcastOptions o;
    o.root_rank = src;
    pg->broadcast(v, o)->wait();
    if (pg->rank() == src) continue;
    off = 0;
    for (auto& t : ts) {
      Tensor d = t.variable_data();
      d.copy_(flat.narrow(0, off, t.numel()).view(t.sizes()));
      off += t.numel();
    }
  }
}

std::vector<Tensor> ddp_parameters(const Module& m) {
  std::vector<Tensor> out;
  for (const Tensor& p : m.parameters())
    if (p.requires_grad()) out.push_back(p);
  EMBER_CHECK(!out.empty(),
              "DistributedDataParallel is not needed when a module doesn't have any parameter "
              "that requires a gradient.");
  return out;
}

}  // namespace ember::nn::parallel::detail
