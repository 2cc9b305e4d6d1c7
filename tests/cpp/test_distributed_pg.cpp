// The Gloo process group and the torch.distributed front end: every collective on ranks run as
// threads of this process (a HashStore between them) against values computed by hand, every
// dtype and ReduceOp, non-contiguous and zero-size tensors, bad input with its exact error type,
// the DETAIL desync check, and fault reports from a forked peer that dies or stops calling.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <complex>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "ember/distributed.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::distributed;
using namespace std::chrono_literals;

namespace {

// Runs fn(rank, group) on `world` threads, each a rank of one Gloo group; a failure in any
// thread fails the test with its message.
void run_ranks(int world, const std::function<void(int, ProcessGroupPtr)>& fn,
               Milliseconds timeout = 10000ms) {
  auto store = std::make_shared<HashStore>();
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<std::string> errors;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        ProcessGroupGlooOptions o;
        o.timeout = timeout;
        fn(r, make_gloo_process_group(store, r, world, o));
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> g(mu);
        errors.push_back("rank " + std::to_string(r) + ": " + e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) ADD_FAILURE() << e;
}

Tensor make(const std::vector<double>& v, ScalarType dt) {
  return ember::tensor(v, kDouble).to(dt);
}

std::vector<double> values(const Tensor& t) {
  Tensor d = t.is_complex() ? t.real().to(kDouble).contiguous() : t.to(kDouble).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

// Rank r's input for the reduction tests: small integers, exact in every dtype.
std::vector<double> input_of(int r, ScalarType dt) {
  if (dt == kBool) return {double(r % 2), 1, 0, double(r == 0)};
  return {double(r + 1), double(2 * r - 1), double(3 - r), double((r * 5) % 4)};
}

// The expected reduction over `world` ranks, computed elementwise by hand.
std::vector<double> expected(ReduceOp op, ScalarType dt, int world) {
  // uint8 holds -1 as 255: reduce the stored values.
  auto stored = [&](int r) {
    auto x = input_of(r, dt);
    if (dt == kByte)
      for (auto& v : x) v = double(uint8_t(int64_t(v)));
    return x;
  };
  std::vector<double> acc = stored(0);
  auto to_int = [](double x) { return int64_t(x); };
  for (int r = 1; r < world; ++r) {
    auto x = stored(r);
    for (size_t i = 0; i < acc.size(); ++i) {
      double a = acc[i], b = x[i];
      switch (op) {
        case ReduceOp::SUM:
        case ReduceOp::AVG:
          acc[i] = dt == kBool ? double(a || b) : a + b;
          break;
        case ReduceOp::PRODUCT:
          acc[i] = dt == kBool ? double(a && b) : a * b;
          break;
        case ReduceOp::MIN:
          acc[i] = std::min(a, b);
          break;
        case ReduceOp::MAX:
          acc[i] = std::max(a, b);
          break;
        case ReduceOp::BAND:
          acc[i] = double(to_int(a) & to_int(b));
          break;
        case ReduceOp::BOR:
          acc[i] = double(to_int(a) | to_int(b));
          break;
        case ReduceOp::BXOR:
          acc[i] = double(to_int(a) ^ to_int(b));
          break;
      }
    }
  }
  if (op == ReduceOp::AVG)
    for (auto& a : acc) a /= world;
  if (dt == kByte)  // uint8 wraps: 2*0-1 = -1 is 255
    for (auto& a : acc) a = double(uint8_t(int64_t(a)));
  return acc;
}

bool supported(ReduceOp op, ScalarType dt) {
  bool fp = isFloatingType(dt) || isComplexType(dt);
  if (isComplexType(dt) && (op == ReduceOp::MIN || op == ReduceOp::MAX)) return false;
  if (fp && (op == ReduceOp::BAND || op == ReduceOp::BOR || op == ReduceOp::BXOR)) return false;
  if (!fp && op == ReduceOp::AVG) return false;
  return true;
}

const std::vector<ScalarType> kAllDtypes = {kBool,  kByte,   kChar,         kShort,
                                            kInt,   kLong,   kHalf,         kBFloat16,
                                            kFloat, kDouble, kComplexFloat, kComplexDouble};
const std::vector<ReduceOp> kAllOps = {ReduceOp::SUM, ReduceOp::AVG, ReduceOp::PRODUCT,
                                       ReduceOp::MIN, ReduceOp::MAX, ReduceOp::BAND,
                                       ReduceOp::BOR, ReduceOp::BXOR};

template <class Err>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Err& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "NO EXCEPTION";
}

// The message of a plain ember::Error (a RuntimeError in Python), as torch's process groups
// raise for invalid sizes, lists and roots.
std::string runtime_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Runtime) return std::string("WRONG EXCEPTION TYPE: ") + e.what();
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "NO EXCEPTION";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST(DistributedPg, AllReduceEveryDtypeAndOp) {
  const int world = 3;
  run_ranks(world, [&](int rank, ProcessGroupPtr pg) {
    for (ScalarType dt : kAllDtypes) {
      for (ReduceOp op : kAllOps) {
        if (!supported(op, dt)) continue;
        Tensor t = make(input_of(rank, dt), dt);
        if (op == ReduceOp::PRODUCT && isComplexType(dt)) continue;  // checked below
        std::vector<Tensor> v{t};
        AllreduceOptions o;
        o.reduce_op = op;
        pg->allreduce(v, o)->wait();
        auto want = expected(op, dt, world);
        auto got = values(t);
        double tol = (dt == kHalf || dt == kBFloat16) && op == ReduceOp::AVG ? 1e-2 : 1e-12;
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_NEAR(got[i], want[i], tol)
              << dtype_name(dt) << " " << reduce_op_name(op) << " element " << i;
        }
      }
    }
  });
}

TEST(DistributedPg, ComplexSumAndProduct) {
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    using C = std::complex<double>;
    std::vector<C> mine =
        rank == 0 ? std::vector<C>{C(1, 2), C(0, 1)} : std::vector<C>{C(3, -1), C(2, 0)};
    for (ScalarType dt : {kComplexFloat, kComplexDouble}) {
      Tensor s = ember::tensor(mine, kComplexDouble).to(dt);
      Tensor p = s.clone();
      std::vector<Tensor> sv{s}, pvv{p};
      pg->allreduce(sv)->wait();
      AllreduceOptions o;
      o.reduce_op = ReduceOp::PRODUCT;
      pg->allreduce(pvv, o)->wait();
      Tensor sd = s.to(kComplexDouble).contiguous(), pd = p.to(kComplexDouble).contiguous();
      const C* sp = sd.data_ptr<C>();
      const C* pp = pd.data_ptr<C>();
      EXPECT_NEAR(std::abs(sp[0] - C(4, 1)), 0, 1e-6);
      EXPECT_NEAR(std::abs(sp[1] - C(2, 1)), 0, 1e-6);
      EXPECT_NEAR(std::abs(pp[0] - C(1, 2) * C(3, -1)), 0, 1e-6);  // (5, 5)
      EXPECT_NEAR(std::abs(pp[1] - C(0, 2)), 0, 1e-6);
    }
  });
}

TEST(DistributedPg, IntegerSumWrapsAround) {
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    Tensor t = ember::tensor(std::vector<int32_t>{2147483647, -5}, kInt);
    std::vector<Tensor> v{t};
    pg->allreduce(v)->wait();
    EXPECT_EQ(t.data_ptr<int32_t>()[0], -2);  // 2 * (2^31 - 1) mod 2^32
    EXPECT_EQ(t.data_ptr<int32_t>()[1], -10);
  });
}

TEST(DistributedPg, ReduceOpNotDefinedOnDtypeIsTypeError) {
  run_ranks(1, [&](int, ProcessGroupPtr pg) {
    auto try_op = [&](ScalarType dt, ReduceOp op) {
      return error_of<TypeError>([&] {
        std::vector<Tensor> v{ember::zeros({2}, dt)};
        AllreduceOptions o;
        o.reduce_op = op;
        pg->allreduce(v, o);
      });
    };
    std::string m = try_op(kComplexFloat, ReduceOp::MAX);
    EXPECT_TRUE(contains(m, "[all_reduce]") && contains(m, "MAX") && contains(m, "complex64")) << m;
    m = try_op(kComplexDouble, ReduceOp::MIN);
    EXPECT_TRUE(contains(m, "MIN") && contains(m, "complex128")) << m;
    m = try_op(kFloat, ReduceOp::BAND);
    EXPECT_TRUE(contains(m, "BAND") && contains(m, "float32")) << m;
    m = try_op(kHalf, ReduceOp::BXOR);
    EXPECT_TRUE(contains(m, "BXOR") && contains(m, "float16")) << m;
    m = try_op(kLong, ReduceOp::AVG);
    EXPECT_TRUE(contains(m, "AVG") && contains(m, "int64")) << m;
    m = try_op(kBool, ReduceOp::AVG);
    EXPECT_TRUE(contains(m, "AVG") && contains(m, "bool")) << m;
    // The same checks guard reduce and reduce_scatter.
    m = error_of<TypeError>([&] {
      std::vector<Tensor> v{ember::zeros({2}, kDouble)};
      ReduceOptions o;
      o.reduce_op = ReduceOp::BOR;
      pg->reduce(v, o);
    });
    EXPECT_TRUE(contains(m, "[reduce]") && contains(m, "BOR")) << m;
    // Nothing was queued by the rejected calls.
    EXPECT_EQ(pg->sequence_number(), 0u);
  });
}

TEST(DistributedPg, NonContiguousAndZeroSize) {
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    // A column of a 3x4 matrix: strided; the other columns must stay as they were.
    Tensor m = ember::arange(12, kFloat).reshape({3, 4}).mul(double(rank + 1));
    Tensor col = m.select(1, 1);
    ASSERT_FALSE(col.is_contiguous());
    std::vector<Tensor> v{col};
    pg->allreduce(v)->wait();
    // column 1 holds 1, 5, 9 on rank 0 and twice that on rank 1: the sum is 3x.
    EXPECT_EQ(values(m.select(1, 1)), (std::vector<double>{3, 15, 27}));
    EXPECT_EQ(values(m.select(1, 0)), (std::vector<double>{0, 4 * (rank + 1.0), 8 * (rank + 1.0)}));
    // A transposed tensor broadcast from rank 1.
    Tensor tr = ember::arange(6, kLong).reshape({2, 3}).add(rank * 100).t();
    std::vector<Tensor> b{tr};
    BroadcastOptions bo;
    bo.root_rank = 1;
    pg->broadcast(b, bo)->wait();
    EXPECT_EQ(values(tr.contiguous()), (std::vector<double>{100, 103, 101, 104, 102, 105}));
    // Zero-size tensors complete and change nothing.
    Tensor e = ember::empty({0, 3}, kFloat);
    std::vector<Tensor> ev{e};
    EXPECT_TRUE(pg->allreduce(ev)->wait());
    std::vector<std::vector<Tensor>> outs{{ember::empty({0}, kInt), ember::empty({0}, kInt)}};
    std::vector<Tensor> in{ember::empty({0}, kInt)};
    EXPECT_TRUE(pg->allgather(outs, in)->wait());
  });
}

TEST(DistributedPg, BroadcastReduceAndAverage) {
  run_ranks(3, [&](int rank, ProcessGroupPtr pg) {
    Tensor t = ember::full({4}, double(rank * 10), kInt);
    std::vector<Tensor> v{t};
    BroadcastOptions bo;
    bo.root_rank = 2;
    pg->broadcast(v, bo)->wait();
    EXPECT_EQ(values(t), (std::vector<double>(4, 20)));

    Tensor r = make({double(rank), double(-rank), 1.5}, kDouble);
    Tensor before = r.clone();
    std::vector<Tensor> rv{r};
    ReduceOptions ro;
    ro.root_rank = 1;
    ro.reduce_op = ReduceOp::MAX;
    pg->reduce(rv, ro)->wait();
    if (rank == 1) {
      EXPECT_EQ(values(r), (std::vector<double>{2, 0, 1.5}));
    } else {
      EXPECT_TRUE(r.equal(before));  // the other ranks' tensors are untouched
    }

    Tensor a = make({double(rank), 3.0}, kFloat);
    std::vector<Tensor> av{a};
    AllreduceOptions ao;
    ao.reduce_op = ReduceOp::AVG;
    pg->allreduce(av, ao)->wait();
    EXPECT_EQ(values(a), (std::vector<double>{1, 3}));
  });
}

TEST(DistributedPg, AllGatherGatherScatter) {
  const int world = 3;
  run_ranks(world, [&](int rank, ProcessGroupPtr pg) {
    Tensor in = make({double(rank), double(rank + 10)}, kShort);
    std::vector<std::vector<Tensor>> outs(1);
    for (int r = 0; r < world; ++r) outs[0].push_back(ember::zeros({2}, kShort));
    // The last output is strided: a column of a matrix.
    Tensor mat = ember::zeros({2, 2}, kShort);
    outs[0][2] = mat.select(1, 0);
    std::vector<Tensor> iv{in};
    auto w = pg->allgather(outs, iv);
    w->wait();
    for (int r = 0; r < world; ++r) {
      EXPECT_EQ(values(outs[0][size_t(r)]), (std::vector<double>{double(r), double(r + 10)}));
    }
    EXPECT_EQ(values(mat.select(1, 1)), (std::vector<double>{0, 0}));
    EXPECT_EQ(w->result().size(), size_t(world));

    Tensor flat = ember::zeros({3, 2}, kShort);
    pg->allgather_into_tensor(flat, in)->wait();
    EXPECT_EQ(values(flat), (std::vector<double>{0, 10, 1, 11, 2, 12}));

    // gather to rank 1
    std::vector<std::vector<Tensor>> g;
    if (rank == 1) {
      g.emplace_back();
      for (int r = 0; r < world; ++r) g[0].push_back(ember::zeros({2}, kShort));
    }
    GatherOptions go;
    go.root_rank = 1;
    pg->gather(g, iv, go)->wait();
    if (rank == 1) {
      for (int r = 0; r < world; ++r)
        EXPECT_EQ(values(g[0][size_t(r)]), (std::vector<double>{double(r), double(r + 10)}));
    }

    // scatter from rank 2
    std::vector<std::vector<Tensor>> s;
    if (rank == 2) {
      s.emplace_back();
      for (int r = 0; r < world; ++r) s[0].push_back(make({double(r * 7), 1}, kDouble));
    }
    std::vector<Tensor> so{ember::zeros({2}, kDouble)};
    ScatterOptions sco;
    sco.root_rank = 2;
    pg->scatter(so, s, sco)->wait();
    EXPECT_EQ(values(so[0]), (std::vector<double>{double(rank * 7), 1}));
  });
}

TEST(DistributedPg, ReduceScatter) {
  for (int world : {2, 3, 4}) {
    run_ranks(world, [&](int rank, ProcessGroupPtr pg) {
      // Rank r contributes 10 j + r to slot j: slot j sums to 10 j world + world (world - 1) / 2.
      std::vector<std::vector<Tensor>> in(1);
      for (int j = 0; j < world; ++j)
        in[0].push_back(ember::full({2}, double(j * 10 + rank), kLong));
      std::vector<Tensor> out{ember::zeros({2}, kLong)};
      pg->reduce_scatter(out, in)->wait();
      double want = 10.0 * rank * world + world * (world - 1) / 2.0;
      EXPECT_EQ(values(out[0]), (std::vector<double>(2, want))) << "world " << world;

      Tensor input = ember::arange(2 * world, kFloat).add(rank);  // [r, r+1, ..., r+2w-1]
      Tensor input_copy = input.clone();
      Tensor o = ember::zeros({2}, kFloat);
      ReduceScatterOptions ro;
      ro.reduce_op = ReduceOp::AVG;
      pg->reduce_scatter_tensor(o, input, ro)->wait();
      // mean over r of (2 rank + k + r) = 2 rank + k + (world - 1) / 2
      double h = (world - 1) / 2.0;
      EXPECT_EQ(values(o), (std::vector<double>{2.0 * rank + h, 2.0 * rank + 1 + h}))
          << "world " << world;
      EXPECT_TRUE(input.equal(input_copy));
      // MAX over a strided output.
      Tensor m = ember::zeros({2, 2}, kInt);
      Tensor big = ember::arange(2 * world, kInt).mul(rank + 1);
      ro.reduce_op = ReduceOp::MAX;
      Tensor col = m.select(1, 0);
      pg->reduce_scatter_tensor(col, big, ro)->wait();
      EXPECT_EQ(values(m),
                (std::vector<double>{2.0 * rank * world, 0, (2.0 * rank + 1) * world, 0}))
          << "world " << world;
    });
  }
}

TEST(DistributedPg, AllToAll) {
  const int world = 3;
  run_ranks(world, [&](int rank, ProcessGroupPtr pg) {
    // Even splits: row j of rank r's input goes to rank j.
    Tensor in = ember::arange(6, kInt).reshape({3, 2}).add(rank * 100);
    Tensor out = ember::zeros({3, 2}, kInt);
    pg->alltoall_base(out, in, {}, {})->wait();
    std::vector<double> want;
    for (int r = 0; r < world; ++r) {
      want.push_back(r * 100 + 2 * rank);
      want.push_back(r * 100 + 2 * rank + 1);
    }
    EXPECT_EQ(values(out), want);

    // Uneven: rank r sends (j + 1) rows to rank j, each row holding 10 r + j.
    std::vector<int64_t> in_splits{1, 2, 3}, out_splits(3, rank + 1);
    std::vector<double> rows;
    for (int j = 0; j < world; ++j)
      for (int k = 0; k <= j; ++k) rows.push_back(10 * rank + j);
    Tensor uin = make(rows, kDouble);
    Tensor uout = ember::zeros({3 * (rank + 1)}, kDouble);
    pg->alltoall_base(uout, uin, out_splits, in_splits)->wait();
    std::vector<double> uwant;
    for (int r = 0; r < world; ++r)
      for (int k = 0; k <= rank; ++k) uwant.push_back(10 * r + rank);
    EXPECT_EQ(values(uout), uwant);

    // The list form, with sizes differing per destination.
    std::vector<Tensor> ins, outs;
    for (int j = 0; j < world; ++j) {
      ins.push_back(ember::full({j + 1}, double(rank * 10 + j), kFloat));
      outs.push_back(ember::zeros({rank + 1}, kFloat));
    }
    pg->alltoall(outs, ins)->wait();
    for (int r = 0; r < world; ++r)
      EXPECT_EQ(values(outs[size_t(r)]), (std::vector<double>(size_t(rank + 1), r * 10.0 + rank)));
  });
}

TEST(DistributedPg, SendRecvAndAnySource) {
  run_ranks(3, [&](int rank, ProcessGroupPtr pg) {
    if (rank == 0) {
      std::vector<Tensor> a{ember::zeros({3}, kFloat)}, b{ember::zeros({3}, kFloat)};
      auto w1 = pg->recv(a, 1, 5);
      auto w2 = pg->recv_anysource(b, 6);
      w1->wait();
      w2->wait();
      EXPECT_EQ(values(a[0]), (std::vector<double>{1, 2, 3}));
      EXPECT_EQ(w2->source_rank(), 2);
      EXPECT_EQ(values(b[0]), (std::vector<double>{7, 7, 7}));
      // A strided receive.
      Tensor m = ember::zeros({2, 2}, kLong);
      std::vector<Tensor> c{m.select(1, 1)};
      pg->recv(c, 2, 0)->wait();
      EXPECT_EQ(values(m), (std::vector<double>{0, 4, 0, 5}));
    } else if (rank == 1) {
      std::vector<Tensor> a{make({1, 2, 3}, kFloat)};
      pg->send(a, 0, 5)->wait();
    } else {
      std::vector<Tensor> b{ember::full({3}, 7.0, kFloat)};
      pg->send(b, 0, 6)->wait();
      std::vector<Tensor> c{make({4, 5}, kLong)};
      pg->send(c, 0, 0)->wait();
    }
    // Bad peers.
    std::vector<Tensor> t{ember::zeros({1}, kFloat)};
    EXPECT_TRUE(contains(error_of<ValueError>([&] { pg->send(t, 3, 0); }), "destination rank 3"));
    EXPECT_TRUE(contains(error_of<ValueError>([&] { pg->recv(t, rank, 0); }), "itself"));
  });
}

TEST(DistributedPg, WorkFutureAndSequenceNumbers) {
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    EXPECT_EQ(pg->backend_name(), "gloo");
    EXPECT_EQ(pg->sequence_number(), 0u);
    Tensor t = ember::ones({8}, kFloat);
    std::vector<Tensor> v{t};
    auto w = pg->allreduce(v);
    std::atomic<int> called{0};
    w->add_callback([&] { called++; });
    auto b = pg->barrier();
    EXPECT_EQ(w->name(), "all_reduce");
    EXPECT_EQ(w->sequence_number(), 0u);
    EXPECT_EQ(b->sequence_number(), 1u);
    EXPECT_EQ(pg->sequence_number(), 2u);
    b->wait();
    // Issue order: the all-reduce finished before the barrier did.
    EXPECT_TRUE(w->is_completed());
    EXPECT_TRUE(w->is_success());
    EXPECT_EQ(called.load(), 1);
    w->add_callback([&] { called++; });  // runs at once on a completed work
    EXPECT_EQ(called.load(), 2);
    ASSERT_EQ(w->result().size(), 1u);
    EXPECT_TRUE(w->result()[0].is_same(t));
    EXPECT_EQ(values(t), std::vector<double>(8, 2));
    // A receive nobody has sent yet: wait with a timeout raises and names the operation. Rank 1
    // sends only after the barrier, which rank 0 enters after its wait timed out.
    std::vector<Tensor> r{ember::zeros({1}, kFloat)};
    if (rank == 0) {
      auto rw = pg->recv(r, 1, 99);
      std::string m = error_of<DistBackendError>([&] { rw->wait(50ms); });
      EXPECT_TRUE(contains(m, "[recv]") && contains(m, "timed out")) << m;
      pg->barrier()->wait();
      rw->wait();
      EXPECT_EQ(values(r[0])[0], 1.0);
    } else {
      pg->barrier()->wait();
      std::vector<Tensor> s{ember::ones({1}, kFloat)};
      pg->send(s, 0, 99)->wait();
    }
  });
}

TEST(DistributedPg, GroupReleasedByItsOwnCallback) {
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    if (rank == 1) {
      std::this_thread::sleep_for(100ms);  // rank 0's barrier is still running meanwhile
      pg->barrier()->wait();
      return;
    }
    auto holder = std::make_shared<ProcessGroupPtr>(std::move(pg));
    auto w = (*holder)->barrier();
    std::promise<void> released;
    w->add_callback([holder, &released] {
      holder->reset();  // the last reference outside the worker
      released.set_value();
    });
    holder.reset();
    EXPECT_EQ(released.get_future().wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(w->wait());
  });
}

TEST(DistributedPg, CallbackMayRunTheNextCollective) {
  // A callback (on the worker) that waits for another collective does not deadlock the group.
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    // b is larger than the inline limit for other threads (256 KiB).
    Tensor a = ember::ones({3}), b = ember::full({100000}, double(rank + 1));
    std::vector<Tensor> av{a};
    std::promise<double> inner;
    auto w = pg->allreduce(av);
    w->add_callback([&] {
      all_reduce(b, ReduceOp::SUM, pg);  // the front end waits: it runs inline
      inner.set_value(values(b)[0]);
    });
    auto f = inner.get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(f.get(), 3.0);
    EXPECT_EQ(values(a), std::vector<double>(3, 2));
  });
}

TEST(DistributedPg, BadArgumentsRaiseTypedErrors) {
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    std::vector<Tensor> two{ember::zeros({2}), ember::zeros({2})};
    EXPECT_TRUE(contains(runtime_error_of([&] { pg->allreduce(two); }), "exactly one"));
    std::vector<Tensor> one{ember::zeros({2})};
    BroadcastOptions bo;
    bo.root_rank = 2;
    EXPECT_TRUE(contains(runtime_error_of([&] { pg->broadcast(one, bo); }), "root rank 2"));
    std::vector<std::vector<Tensor>> outs{{ember::zeros({2})}};
    EXPECT_TRUE(contains(runtime_error_of([&] { pg->allgather(outs, one); }), "2 ranks"));
    std::vector<std::vector<Tensor>> mixed{{ember::zeros({2}), ember::zeros({2}, kDouble)}};
    EXPECT_TRUE(contains(error_of<TypeError>([&] { pg->allgather(mixed, one); }), "float64"));
    std::vector<std::vector<Tensor>> wrong{{ember::zeros({2}), ember::zeros({3})}};
    EXPECT_TRUE(contains(runtime_error_of([&] { pg->allgather(wrong, one); }), "elements"));
    Tensor out = ember::zeros({3});
    Tensor in = ember::zeros({2});
    EXPECT_TRUE(
        contains(runtime_error_of([&] { pg->allgather_into_tensor(out, in); }), "group size"));
    Tensor a = ember::zeros({4}), b = ember::zeros({4});
    EXPECT_TRUE(contains(runtime_error_of([&] {
                           pg->alltoall_base(a, b, {}, {1, 1});
                         }),
                         "add up to 2"));
    Tensor c = ember::zeros({3});
    EXPECT_TRUE(
        contains(runtime_error_of([&] { pg->alltoall_base(c, c, {}, {}); }), "divide evenly"));
    Tensor d = ember::zeros({4}, kInt);
    EXPECT_TRUE(contains(error_of<TypeError>([&] { pg->alltoall_base(a, d, {}, {}); }), "int32"));
    AllreduceOptions neg;
    neg.timeout = Milliseconds(0);
    EXPECT_TRUE(contains(error_of<ValueError>([&] { pg->allreduce(one, neg); }), "timeout"));
    std::vector<std::vector<Tensor>> g{{ember::zeros({2}), ember::zeros({2})}};
    GatherOptions go;
    go.root_rank = 0;
    if (rank == 1) {
      EXPECT_TRUE(contains(runtime_error_of([&] { pg->gather(g, one, go); }), "only the root"));
    }
    EXPECT_EQ(pg->sequence_number(), 0u);
  });
  EXPECT_TRUE(contains(
      error_of<ValueError>([] { make_gloo_process_group(std::make_shared<HashStore>(), 2, 2); }),
      "rank 2"));
}

TEST(DistributedPg, MismatchedSizesRaiseInsteadOfAborting) {
  // Gloo itself aborts the process when a message is longer than the buffer posted for it.
  run_ranks(
      2,
      [&](int rank, ProcessGroupPtr pg) {
        std::vector<Tensor> v{ember::ones({rank == 0 ? 4 : 8})};
        std::string m = error_of<DistBackendError>([&] { pg->allreduce(v)->wait(); });
        EXPECT_TRUE(contains(m, "[all_reduce] collective #0") &&
                    contains(m, "every rank entered") && contains(m, "DETAIL"))
            << m;
      },
      300ms);
  run_ranks(
      2,
      [&](int rank, ProcessGroupPtr pg) {
        std::vector<Tensor> v{ember::ones({rank == 0 ? 4 : 8})};
        if (rank == 0) {
          std::string m = error_of<DistBackendError>([&] { pg->recv(v, 1, 0)->wait(); });
          EXPECT_TRUE(contains(m, "[recv] from rank 1 (tag 0)")) << m;
        } else {
          error_of<DistBackendError>([&] { pg->send(v, 0, 0)->wait(); });
        }
      },
      300ms);
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    // Rank 0 sends 1 row to rank 1, which expects 2: both ends name the pair.
    Tensor in = ember::zeros({2}), out = ember::zeros({rank == 0 ? 2 : 3});
    std::vector<int64_t> out_splits =
        rank == 0 ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{2, 1};
    std::string m = error_of<DistBackendError>([&] {
      pg->alltoall_base(out, in, out_splits, {1, 1})->wait();
    });
    EXPECT_TRUE(contains(m,
                         "[all_to_all_single] the ranks' split sizes disagree: rank 0 sends 1 "
                         "elements to rank 1, which expects 2"))
        << m;
    // The group stays usable.
    std::vector<Tensor> v{ember::ones({2})};
    pg->allreduce(v)->wait();
    EXPECT_EQ(values(v[0]), std::vector<double>(2, 2));
  });
}

TEST(DistributedPg, DesyncDetailNamesTheRankThatDiffers) {
  set_debug_level(DebugLevel::Detail);
  std::vector<std::string> msgs(2);
  run_ranks(2, [&](int rank, ProcessGroupPtr pg) {
    Tensor t = ember::ones({4}, kFloat);
    std::vector<Tensor> v{t};
    pg->allreduce(v)->wait();  // in step: passes the check
    WorkPtr w;
    if (rank == 0) {
      w = pg->allreduce(v);
    } else {
      BroadcastOptions bo;
      w = pg->broadcast(v, bo);
    }
    msgs[size_t(rank)] = error_of<DistBackendError>([&] { w->wait(); });
    // The group is still usable: every rank raised at the same point.
    pg->barrier()->wait();
  });
  set_debug_level(DebugLevel::Off);
  for (auto& m : msgs) {
    EXPECT_TRUE(contains(m, "desync") && contains(m, "rank 1 called broadcast #1") &&
                contains(m, "rank 0 called all_reduce #1 (float32, [4], SUM)"))
        << m;
  }
}

namespace {

std::string temp_file(const std::string& tag) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/ember_pg_" + tag + "_" + std::to_string(getpid());
}

// Forks rank 1, which runs `child` (then _exit(0)); this process is rank 0 and runs `parent`.
// The peer is killed when the parent is done, whatever happened.
void with_forked_peer(const std::string& tag, Milliseconds timeout,
                      const std::function<void(ProcessGroupPtr)>& child,
                      const std::function<void(ProcessGroupPtr)>& parent) {
  std::string path = temp_file(tag);
  ::unlink(path.c_str());
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      auto store = std::make_shared<FileStore>(path, 2);
      ProcessGroupGlooOptions o;
      o.timeout = timeout;
      child(make_gloo_process_group(store, 1, 2, o));
    } catch (...) {
    }
    _exit(0);
  }
  try {
    auto store = std::make_shared<FileStore>(path, 2);
    ProcessGroupGlooOptions o;
    o.timeout = timeout;
    parent(make_gloo_process_group(store, 0, 2, o));
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::unlink(path.c_str());
}

}  // namespace

TEST(DistributedPgFault, PeerExitsMidSequence) {
  with_forked_peer(
      "exit", 5000ms,
      [](ProcessGroupPtr pg) {
        for (int i = 0; i < 3; ++i) {
          std::vector<Tensor> v{ember::ones({16}, kFloat)};
          pg->allreduce(v)->wait();
        }
        _exit(0);  // dies before collective #3
      },
      [](ProcessGroupPtr pg) {
        for (int i = 0; i < 3; ++i) {
          std::vector<Tensor> v{ember::ones({16}, kFloat)};
          pg->allreduce(v)->wait();
          EXPECT_EQ(values(v[0])[0], 2.0);
        }
        auto t0 = std::chrono::steady_clock::now();
        std::vector<Tensor> v{ember::ones({16}, kFloat)};
        std::string m = error_of<DistBackendError>([&] { pg->allreduce(v)->wait(); });
        double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_TRUE(contains(m, "[all_reduce] collective #3 of group 0 (gloo, 2 ranks)")) << m;
        EXPECT_TRUE(contains(m, "rank [1] never arrived")) << m;
        EXPECT_LT(took, 5.0) << m;  // within the group's timeout, not a hang
        // Later collectives fail at once with the first report.
        std::string again = error_of<DistBackendError>([&] { pg->barrier()->wait(); });
        EXPECT_TRUE(contains(again, "failed earlier") && contains(again, "#3")) << again;
      });
}

TEST(DistributedPgFault, PeerStopsCallingTimesOut) {
  with_forked_peer(
      "stall", 1000ms,
      [](ProcessGroupPtr pg) {
        for (int i = 0; i < 2; ++i) {
          std::vector<Tensor> v{ember::ones({4}, kDouble)};
          pg->allreduce(v)->wait();
        }
        ::sleep(30);  // alive but never calls collective #2; killed by the parent
      },
      [](ProcessGroupPtr pg) {
        for (int i = 0; i < 2; ++i) {
          std::vector<Tensor> v{ember::ones({4}, kDouble)};
          pg->allreduce(v)->wait();
        }
        std::vector<Tensor> v{ember::ones({4}, kDouble)};
        std::string m = error_of<DistBackendError>([&] { pg->allreduce(v)->wait(); });
        EXPECT_TRUE(contains(m, "[all_reduce] collective #2 of group 0")) << m;
        EXPECT_TRUE(contains(m, "rank [1] never arrived (last seen at #1)")) << m;
      });
}

TEST(DistributedPgFault, MonitoredBarrierNamesTheMissingRank) {
  with_forked_peer(
      "monitored", 5000ms, [](ProcessGroupPtr pg) { ::sleep(30); },
      [](ProcessGroupPtr pg) {
        std::string m = error_of<DistBackendError>([&] { monitored_barrier(pg, 300ms); });
        EXPECT_TRUE(contains(m, "Rank 1 failed to pass monitoredBarrier in 300 ms")) << m;
      });
}

namespace {

// Throws with `what` unless `ok` (usable in a forked child, where gtest cannot report).
void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// The front end on three processes: default group, a subgroup, point to point and objects.
void front_end_rank(int rank, const std::string& path) {
  InitOptions io;
  io.init_method = "file://" + path;
  io.rank = rank;
  io.world_size = 3;
  io.timeout = 10000ms;
  init_process_group("gloo", io);
  require(is_initialized() && get_rank() == rank && get_world_size() == 3, "rank bookkeeping");
  require(get_backend() == "gloo", "backend");

  Tensor t = ember::full({2}, double(rank + 1), kFloat);
  all_reduce(t);
  require(values(t) == std::vector<double>(2, 6), "all_reduce");
  Tensor b = ember::full({1}, double(rank), kLong);
  broadcast(b, 2);
  require(values(b)[0] == 2, "broadcast from global rank 2");

  // A subgroup of global ranks {2, 0}: sorted, so global 2 is group rank 1.
  ProcessGroupPtr g = new_group({2, 0});
  if (rank == 1) {
    require(g == nullptr, "non-members get no group");
  } else {
    require(g != nullptr && get_rank(g) == (rank == 0 ? 0 : 1) && get_world_size(g) == 2,
            "subgroup ranks");
    require(get_process_group_ranks(g) == std::vector<int>({0, 2}), "subgroup global ranks");
    require(get_global_rank(g, 1) == 2 && get_group_rank(g, 2) == 1, "rank mapping");
    Tensor s = ember::full({1}, double(rank + 1), kInt);
    all_reduce(s, ReduceOp::SUM, g);
    require(values(s)[0] == 4, "subgroup all_reduce sums ranks 0 and 2 only");
    Tensor sb = ember::full({1}, double(rank), kInt);
    broadcast(sb, 2, g);  // src is a global rank
    require(values(sb)[0] == 2, "subgroup broadcast from global rank 2");
    bool raised = false;
    try {
      broadcast(sb, 1, g);
    } catch (const Error& e) {
      raised = e.kind() == ErrorKind::Runtime;
    }
    require(raised, "a source outside the group is a RuntimeError, as torch's");
  }

  // Objects of different lengths, the empty one included.
  auto objs = all_gather_object(std::string(size_t(rank), char('a' + rank)));
  require(objs == std::vector<std::string>({"", "b", "cc"}), "all_gather_object");
  std::vector<std::string> list;
  if (rank == 1) list = {"x", "", "longer object"};
  broadcast_object_list(list, 1);
  require(list == std::vector<std::string>({"x", "", "longer object"}), "broadcast_object_list");
  std::vector<std::string> sc;
  if (rank == 0) sc = {"zero", "one!", ""};
  std::string mine = scatter_object_list(sc, 0);
  require(mine == std::vector<std::string>({"zero", "one!", ""})[size_t(rank)],
          "scatter_object_list");
  auto gathered = gather_object("r" + std::to_string(rank), 2);
  require(rank == 2 ? gathered == std::vector<std::string>({"r0", "r1", "r2"}) : gathered.empty(),
          "gather_object");

  // A ring of exchanges started together cannot deadlock.
  Tensor out = ember::full({3}, double(rank), kDouble);
  Tensor in = ember::zeros({3}, kDouble);
  std::vector<P2POp> ops{{P2POp::kSend, out, (rank + 1) % 3, nullptr, 0},
                         {P2POp::kRecv, in, (rank + 2) % 3, nullptr, 0}};
  for (auto& w : batch_isend_irecv(ops)) w->wait();
  require(values(in)[0] == double((rank + 2) % 3), "batch_isend_irecv ring");
  // recv from any source returns the sender's global rank.
  if (rank == 0) {
    Tensor r = ember::zeros({1}, kInt);
    int src = recv(r, -1);
    require(src == 1 && values(r)[0] == 11, "recv from any source");
  } else if (rank == 1) {
    send(ember::full({1}, 11.0, kInt), 0);
  }
  monitored_barrier(nullptr, 5000ms);
  barrier();
  destroy_process_group();
  require(!is_initialized(), "destroyed");
}

}  // namespace

TEST(DistributedPgFrontEnd, ThreeProcesses) {
  std::string path = temp_file("front");
  ::unlink(path.c_str());
  std::vector<pid_t> kids;
  for (int r = 1; r < 3; ++r) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        front_end_rank(r, path);
      } catch (const std::exception& e) {
        fprintf(stderr, "rank %d: %s\n", r, e.what());
        code = 1;
      }
      _exit(code);
    }
    kids.push_back(pid);
  }
  try {
    front_end_rank(0, path);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "rank 0: " << e.what();
  }
  for (pid_t pid : kids) {
    int status = 0;
    // Bounded: a child still running after the parent finished is killed.
    for (int i = 0; i < 100 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) ::usleep(50000);
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "a child rank did not finish";
    } else {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child rank failed";
    }
  }
  ::unlink(path.c_str());
  if (is_initialized()) destroy_process_group();
}

TEST(DistributedPgFrontEnd, ErrorsWithoutInit) {
  ASSERT_FALSE(is_initialized());
  Tensor t = ember::zeros({1});
  std::string m = error_of<Error>([&] { all_reduce(t); });
  EXPECT_TRUE(contains(m, "init_process_group")) << m;
  InitOptions io;
  io.init_method = "bogus://x";
  io.rank = 0;
  io.world_size = 1;
  EXPECT_TRUE(contains(error_of<ValueError>([&] { init_process_group("gloo", io); }), "bogus"));
  EXPECT_TRUE(contains(error_of<Error>([&] { init_process_group("nccl", io); }), "nccl"));
  InitOptions one;
  one.store = std::make_shared<HashStore>();
  one.rank = 0;
  one.world_size = 1;
  init_process_group("gloo", one);
  EXPECT_TRUE(contains(error_of<Error>([&] { init_process_group("gloo", one); }), "twice"));
  Tensor x = ember::full({2}, 3.0);
  all_reduce(x, ReduceOp::AVG);
  EXPECT_EQ(values(x), std::vector<double>(2, 3));
  EXPECT_TRUE(contains(error_of<ValueError>([&] { get_group_rank(nullptr, 1); }), "not part"));
  destroy_process_group();
  EXPECT_FALSE(is_initialized());
}
