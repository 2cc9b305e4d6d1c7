// DistributedDataParallel's reducer: bucket assignment, gradient averaging, bucket views,
// unused parameters, no_sync and comm hooks, on an in-process process group whose ranks are
// threads (every collective is a rendezvous of the threads).
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/nn/parallel/distributed.h"

namespace nn = ember::nn;
namespace dist = ember::distributed;
using ember::Tensor;

namespace {

// Ranks are threads; each collective waits for all of them, then gives each its output.
struct Hub {
  explicit Hub(int n) : n(n), in(n), out(n) {}
  int n;
  std::mutex m;
  std::condition_variable cv;
  int phase = 0, count = 0;
  std::vector<Tensor> in, out;
  std::vector<int64_t> allreduce_numels;  // rank 0's all-reduces, in issue order

  Tensor run(int rank, const Tensor& t,
             const std::function<std::vector<Tensor>(std::vector<Tensor>&)>& f) {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return phase == 0; });
    in[rank] = t.clone();
    if (++count == n) {
      out = f(in);
      phase = 1;
      cv.notify_all();
    } else {
      cv.wait(l, [&] { return phase == 1; });
    }
    Tensor r = out[rank];
    if (--count == 0) {
      phase = 0;
      cv.notify_all();
    }
    return r;
  }
};

struct DoneWork : dist::Work {
  explicit DoneWork(std::vector<Tensor> r) : r_(std::move(r)) {}
  bool is_completed() override { return true; }
  bool is_success() override { return true; }
  std::exception_ptr exception() override { return nullptr; }
  bool wait(dist::Milliseconds) override { return true; }
  std::vector<Tensor> result() override { return r_; }
  void add_callback(std::function<void()> cb) override { cb(); }
  std::string name() const override { return "fake"; }
  uint64_t sequence_number() const override { return 0; }
  std::vector<Tensor> r_;
};

struct ThreadGroup : dist::ProcessGroup {
  ThreadGroup(std::shared_ptr<Hub> hub, int rank) : ProcessGroup(rank, hub->n), hub(hub) {}
  std::shared_ptr<Hub> hub;
  std::string backend_name() const override { return "fake"; }
  dist::Milliseconds timeout() const override { return dist::Milliseconds(1000); }
  uint64_t sequence_number() const override { return 0; }

  dist::WorkPtr broadcast(std::vector<Tensor>& ts, const dist::BroadcastOptions& o) override {
    int root = o.root_rank;
    Tensor r = hub->run(rank_, ts[0], [&](std::vector<Tensor>& in) {
      return std::vector<Tensor>(in.size(), in[root]);
    });
    ts[0].copy_(r);
    return std::make_shared<DoneWork>(ts);
  }
  dist::WorkPtr allreduce(std::vector<Tensor>& ts, const dist::AllreduceOptions&) override {
    if (rank_ == 0) hub->allreduce_numels.push_back(ts[0].numel());
    Tensor r = hub->run(rank_, ts[0], [](std::vector<Tensor>& in) {
      Tensor s = in[0].clone();
      for (size_t i = 1; i < in.size(); ++i) s.add_(in[i]);
      return std::vector<Tensor>(in.size(), s);
    });
    ts[0].copy_(r);
    return std::make_shared<DoneWork>(ts);
  }
  dist::WorkPtr allgather(std::vector<std::vector<Tensor>>& outs, std::vector<Tensor>& ins,
                          const dist::AllgatherOptions&) override {
    int n = size_;
    Tensor r = hub->run(rank_, ins[0], [n](std::vector<Tensor>& in) {
      return std::vector<Tensor>(size_t(n), ember::stack(in));
    });
    for (int i = 0; i < n; ++i) outs[0][i].copy_(r[i]);
    return std::make_shared<DoneWork>(outs[0]);
  }
#define EMBER_FAKE_UNSUPPORTED(sig) \
  sig override { throw ember::NotImplementedError("fake group"); }
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr reduce(std::vector<Tensor>&, const dist::ReduceOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr allgather_into_tensor(Tensor&, Tensor&,
                                                             const dist::AllgatherOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr gather(std::vector<std::vector<Tensor>>&,
                                              std::vector<Tensor>&, const dist::GatherOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr scatter(std::vector<Tensor>&,
                                               std::vector<std::vector<Tensor>>&,
                                               const dist::ScatterOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr reduce_scatter(std::vector<Tensor>&,
                                                      std::vector<std::vector<Tensor>>&,
                                                      const dist::ReduceScatterOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr reduce_scatter_tensor(Tensor&, Tensor&,
                                                             const dist::ReduceScatterOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr alltoall_base(Tensor&, Tensor&, std::vector<int64_t>,
                                                     std::vector<int64_t>,
                                                     const dist::AllToAllOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr alltoall(std::vector<Tensor>&, std::vector<Tensor>&,
                                                const dist::AllToAllOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr barrier(const dist::BarrierOptions&))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr send(std::vector<Tensor>&, int, int))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr recv(std::vector<Tensor>&, int, int))
  EMBER_FAKE_UNSUPPORTED(dist::WorkPtr recv_anysource(std::vector<Tensor>&, int))
#undef EMBER_FAKE_UNSUPPORTED
};

struct NetImpl : nn::Module {
  explicit NetImpl(int hidden = 5) {
    fc1 = register_module("fc1", nn::Linear(4, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, 3));
    spare = register_module("spare", nn::Linear(2, 2));
  }
  Tensor forward(const Tensor& x) { return fc2(ember::relu(fc1(x))); }
  nn::Linear fc1{nullptr}, fc2{nullptr}, spare{nullptr};
};
EMBER_MODULE(Net);

// Runs fn(rank, group) on `n` threads; rethrows the first failure.
void run_ranks(int n, const std::function<void(int, dist::ProcessGroupPtr)>& fn) {
  auto hub = std::make_shared<Hub>(n);
  std::vector<std::thread> ts;
  std::vector<std::exception_ptr> errs(n);
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      try {
        fn(r, std::make_shared<ThreadGroup>(hub, r));
      } catch (...) {
        errs[r] = std::current_exception();
      }
    });
  for (auto& t : ts) t.join();
  for (auto& e : errs)
    if (e) std::rethrow_exception(e);
}

Tensor loss_of(const Tensor& out) { return (out * out).sum(); }

// The gradients of the whole batch on a single replica with `model`'s weights.
std::vector<Tensor> reference_grads(Net model, const Tensor& x) {
  Net ref;
  {
    ember::NoGradGuard g;
    auto src = model->parameters();
    auto dst = ref->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }
  loss_of(ref->forward(x)).backward();
  std::vector<Tensor> g;
  for (auto& p : ref->parameters()) g.push_back(p.grad());
  return g;
}

}  // namespace

TEST(DdpBuckets, ReverseOrderWithFirstBucketCap) {
  auto f = [](int64_t n, ember::ScalarType t = ember::kFloat) {
    return ember::zeros({n}, ember::dtype(t));
  };
  // 40 bytes each: the first bucket closes at 50 bytes, the others at 100.
  std::vector<Tensor> ps{f(10), f(10), f(10), f(10)};
  auto b = dist::Reducer::compute_bucket_assignment(ps, 50, 100);
  std::vector<std::vector<size_t>> want{{2, 3}, {0, 1}};
  EXPECT_EQ(b, want);
  // Defaults: 800 KB parameters, walked from the last: the first bucket (1 MiB) closes after
  // the second one it takes.
  std::vector<Tensor> big{f(200000), f(200000), f(200000)};
  b = dist::Reducer::compute_bucket_assignment(big, 1 << 20, 25 << 20);
  want = {{1, 2}, {0}};
  EXPECT_EQ(b, want);
  // One dtype per bucket.
  std::vector<Tensor> mixed{f(10), f(10, ember::kDouble), f(10), f(0)};
  b = dist::Reducer::compute_bucket_assignment(mixed, 1 << 20, 25 << 20);
  want = {{1}, {0, 2, 3}};
  EXPECT_EQ(b, want);
}

TEST(DdpReducer, AveragesGradientsAcrossRanks) {
  for (int world : {1, 2, 3}) {
    ember::manual_seed(0);
    Tensor x = ember::randn({6, 4});
    std::vector<std::vector<Tensor>> grads(world);
    Net base;
    run_ranks(world, [&](int rank, dist::ProcessGroupPtr pg) {
      Net model;  // different initial weights on every rank; DDP broadcasts rank 0's
      if (rank == 0) {
        ember::NoGradGuard g;
        auto src = base->parameters();
        auto dst = model->parameters();
        for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
      }
      nn::parallel::DistributedDataParallelOptions o;
      o.find_unused_parameters = true;  // `spare` is unused
      nn::parallel::DistributedDataParallel<Net> ddp(model, pg, o);
      int64_t per = 6 / world;
      Tensor out = ddp.forward(x.narrow(0, rank * per, per));
      // The loss is a mean over ranks' shards: sum over the shard divided by... each rank sums
      // its shard; DDP averages, so the result is the full-batch sum divided by world.
      loss_of(out).backward();
      for (auto& p : model->parameters()) grads[rank].push_back(p.grad());
    });
    auto want = reference_grads(base, x);
    for (int r = 0; r < world; ++r) {
      ASSERT_EQ(grads[r].size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        if (!want[i].defined()) {
          EXPECT_FALSE(grads[r][i].defined()) << "unused parameter " << i << " got a grad";
          continue;
        }
        EXPECT_TRUE(grads[r][i].allclose(want[i] / double(world), 1e-5, 1e-6))
            << "world " << world << " rank " << r << " param " << i;
      }
    }
  }
}

TEST(DdpReducer, GradientsAsBucketViewsAndLaunchOrder) {
  run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
    Net model;
    auto params = model->parameters();
    params.resize(4);  // fc1 and fc2 only
    dist::ReducerOptions ro;
    ro.gradient_as_bucket_view = true;
    ro.first_bucket_bytes = 1;  // fc1.weight alone
    ro.bucket_cap_bytes = 1;    // then one parameter per bucket
    dist::Reducer reducer(params, pg, ro);
    ASSERT_EQ(reducer.bucket_indices().size(), 4u);
    EXPECT_EQ(reducer.bucket_indices()[0], std::vector<size_t>{3});
    for (int it = 0; it < 2; ++it) {
      Tensor out = model->forward(ember::randn({3, 4}));
      reducer.prepare_for_backward({});
      loss_of(out).backward();
      for (size_t i = 0; i < params.size(); ++i) {
        auto [b, k] = std::make_pair(3 - i, 0);
        EXPECT_EQ(params[i].grad().data_ptr(), reducer.bucket_buffer(b).data_ptr())
            << "param " << i << " iteration " << it;
      }
      EXPECT_EQ(reducer.stats().buckets_launched_during_backward, 4);
    }
    if (rank == 0) {
      auto& hub = *static_cast<ThreadGroup&>(*pg).hub;
      // Buckets in reverse registration order: fc2.bias (3), fc2.weight (15), fc1.bias (5)...
      std::vector<int64_t> want{3, 15, 5, 20, 3, 15, 5, 20};
      EXPECT_EQ(hub.allreduce_numels, want);
    }
  });
}

TEST(DdpReducer, UnusedParameterRaisesOnNextIteration) {
  run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
    Net model;
    nn::parallel::DistributedDataParallel<Net> ddp(model, pg);
    loss_of(ddp.forward(ember::randn({2, 4}))).backward();
    try {
      ddp.forward(ember::randn({2, 4}));
      ADD_FAILURE() << "expected an error";
    } catch (const ember::Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("Expected to have finished reduction in the prior iteration"),
                std::string::npos);
      EXPECT_NE(m.find("find_unused_parameters=True"), std::string::npos);
      EXPECT_NE(m.find("did not receive grad for rank " + std::to_string(rank) + ": 4 5"),
                std::string::npos)
          << m;
    }
  });
}

TEST(DdpReducer, ShapeMismatchAcrossRanksRaises) {
  std::vector<std::string> msgs(2);
  run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
    Net model(rank == 0 ? 5 : 6);
    try {
      nn::parallel::DistributedDataParallel<Net> ddp(model, pg);
    } catch (const ember::Error& e) {
      msgs[rank] = e.what();
    }
  });
  EXPECT_NE(msgs[0].find("[0]: params[0] in this process with sizes [5, 4]"), std::string::npos)
      << msgs[0];
  EXPECT_NE(msgs[1].find("[1]: params[0] in this process with sizes [6, 4]"), std::string::npos)
      << msgs[1];
}

TEST(DdpReducer, NoSyncAccumulatesThenReduces) {
  ember::manual_seed(1);
  Tensor x = ember::randn({8, 4});
  Net base;
  std::vector<std::vector<Tensor>> grads(2);
  run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
    Net model;
    if (rank == 0) {
      ember::NoGradGuard g;
      auto src = base->parameters();
      auto dst = model->parameters();
      for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    }
    nn::parallel::DistributedDataParallelOptions o;
    o.find_unused_parameters = true;
    nn::parallel::DistributedDataParallel<Net> ddp(model, pg, o);
    Tensor shard = x.narrow(0, rank * 4, 4);
    {
      auto guard = ddp.no_sync();
      loss_of(ddp.forward(shard.narrow(0, 0, 2))).backward();
    }
    loss_of(ddp.forward(shard.narrow(0, 2, 2))).backward();
    for (auto& p : model->parameters()) grads[rank].push_back(p.grad());
  });
  auto want = reference_grads(base, x);
  for (int r = 0; r < 2; ++r)
    for (size_t i = 0; i < 4; ++i)
      EXPECT_TRUE(grads[r][i].allclose(want[i] / 2.0, 1e-5, 1e-6)) << "rank " << r << " " << i;
}

TEST(DdpReducer, CompressionHooksCloseToFloat32) {
  ember::manual_seed(2);
  Tensor x = ember::randn({4, 4});
  Net base;
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<std::vector<Tensor>> grads(2);
    run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
      Net model;
      {
        ember::NoGradGuard g;
        auto src = base->parameters();
        auto dst = model->parameters();
        for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
      }
      nn::parallel::DistributedDataParallelOptions o;
      o.find_unused_parameters = true;
      nn::parallel::DistributedDataParallel<Net> ddp(model, pg, o);
      ddp.register_comm_hook(kind == 0   ? dist::allreduce_hook(pg)
                             : kind == 1 ? dist::fp16_compress_hook(pg)
                                         : dist::bf16_compress_hook(pg));
      loss_of(ddp.forward(x.narrow(0, rank * 2, 2))).backward();
      for (auto& p : model->parameters()) grads[rank].push_back(p.grad());
    });
    auto want = reference_grads(base, x);
    double tol = kind == 0 ? 1e-5 : kind == 1 ? 2e-3 : 2e-2;
    for (size_t i = 0; i < 4; ++i)
      EXPECT_TRUE(grads[0][i].allclose(want[i] / 2.0, tol, tol)) << "hook " << kind << " " << i;
    EXPECT_FALSE(grads[0][4].defined());
  }
}

TEST(DdpReducer, RejectsModuleWithoutTrainableParameters) {
  run_ranks(1, [&](int, dist::ProcessGroupPtr pg) {
    Net model;
    for (auto& p : model->parameters()) p.requires_grad_(false);
    EXPECT_THROW(nn::parallel::DistributedDataParallel<Net>(model, pg), ember::Error);
  });
}

TEST(DdpReducer, StaticGraphSkipsUnusedParameters) {
  ember::manual_seed(3);
  Tensor x = ember::randn({4, 4});
  Net base;
  std::vector<std::vector<Tensor>> grads(2);
  run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
    Net model;
    {
      ember::NoGradGuard g;
      auto src = base->parameters();
      auto dst = model->parameters();
      for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    }
    nn::parallel::DistributedDataParallelOptions o;
    o.static_graph = true;
    nn::parallel::DistributedDataParallel<Net> ddp(model, pg, o);
    for (int it = 0; it < 3; ++it) {
      model->zero_grad();
      loss_of(ddp.forward(x.narrow(0, rank * 2, 2))).backward();
    }
    EXPECT_EQ(ddp.reducer().stats().iterations, 3);
    for (auto& p : model->parameters()) grads[rank].push_back(p.grad());
  });
  auto want = reference_grads(base, x);
  for (int r = 0; r < 2; ++r) {
    for (size_t i = 0; i < 4; ++i)
      EXPECT_TRUE(grads[r][i].allclose(want[i] / 2.0, 1e-5, 1e-6)) << "rank " << r << " " << i;
    EXPECT_FALSE(grads[r][4].defined());  // globally unused: .grad untouched
  }
}

TEST(DdpReducer, JoinedRankShadowsTheAllReduces) {
  ember::manual_seed(4);
  Tensor x = ember::randn({2, 4});
  Net base;
  std::vector<Tensor> grads;
  run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
    Net model;
    {
      ember::NoGradGuard g;
      auto src = base->parameters();
      auto dst = model->parameters();
      for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    }
    auto params = model->parameters();
    params.resize(4);
    dist::ReducerOptions ro;
    ro.first_bucket_bytes = 64;
    ro.bucket_cap_bytes = 64;
    dist::Reducer reducer(params, pg, ro);
    ASSERT_GT(reducer.bucket_indices().size(), 1u);
    if (rank == 1) {
      reducer.join_shadow_backward();  // out of inputs: zeros, divided by the initial size
      return;
    }
    Tensor out = model->forward(x);
    reducer.prepare_for_backward({});
    loss_of(out).backward();
    for (auto& p : params) grads.push_back(p.grad());
  });
  auto want = reference_grads(base, x);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(grads[i].allclose(want[i] / 2.0, 1e-5, 1e-6)) << i;
}

TEST(DdpReducer, ZeroSizeParameterAndTwiceUsedLayer) {
  run_ranks(2, [&](int, dist::ProcessGroupPtr pg) {
    Tensor w = ember::randn({3, 3}).requires_grad_();
    Tensor empty = ember::zeros({0, 3}).requires_grad_();
    dist::Reducer reducer({w, empty}, pg);
    Tensor x = ember::ones({2, 3});
    Tensor out = ember::matmul(ember::matmul(x, w), w) + ember::matmul(empty, w).sum();
    reducer.prepare_for_backward({});
    out.sum().backward();
    EXPECT_EQ(reducer.stats().iterations, 1);
    EXPECT_EQ(empty.grad().numel(), 0);
    EXPECT_TRUE(w.grad().defined());
  });
}

// The usage shown in include/ember/nn/parallel/distributed.h.
TEST(DdpWrapper, TrainingLoopKeepsReplicasEqual) {
  std::vector<std::vector<Tensor>> finals(2);
  std::vector<std::string> keys;
  ember::manual_seed(10);
  std::vector<Tensor> xs, ys;  // each rank its own data
  for (int i = 0; i < 6; ++i) {
    xs.push_back(ember::randn({4, 4}));
    ys.push_back(ember::randint(0, 3, {4}));
  }
  run_ranks(2, [&](int rank, dist::ProcessGroupPtr pg) {
    Net model;  // different initial weights: DDP broadcasts rank 0's
    nn::parallel::DistributedDataParallelOptions o;
    o.find_unused_parameters = true;
    nn::parallel::DistributedDataParallel<Net> ddp(model, pg, o);
    ember::optim::SGD opt(ddp.parameters(), ember::optim::SGDOptions(0.1).momentum(0.9));
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      auto loss =
          nn::functional::cross_entropy(ddp.forward(xs[2 * step + rank]), ys[2 * step + rank]);
      loss.backward();
      opt.step();
    }
    for (auto& p : model->parameters()) finals[rank].push_back(p.detach().clone());
    if (rank == 0)
      for (auto& kv : ddp.state_dict()) keys.push_back(kv.key());
  });
  for (size_t i = 0; i < finals[0].size(); ++i)
    EXPECT_TRUE(finals[0][i].equal(finals[1][i])) << "parameter " << i;
  ASSERT_FALSE(keys.empty());
  EXPECT_EQ(keys[0], "module.fc1.weight");
}
