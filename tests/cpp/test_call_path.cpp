// The op call path (Note [Call path]) and the profiler, its first client, from C++.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/op_table.h"
#include "ember/ember.h"
#include "ember/profiler.h"
#include "ops/call_path.h"
#include "ops/device_kernels.h"

using namespace ember;
namespace prof = ember::profiler;

namespace {

std::vector<std::string> op_names(const prof::Profile& p) {
  std::vector<std::string> v;
  for (const prof::Event& e : p.events())
    if (!e.user_range) v.push_back(e.name);
  return v;
}
bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Inaccessible pages: a host loop on this device's memory faults.
class NoAccess final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    size_t n = std::max<size_t>(nbytes, 1);
    void* p = mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return DataPtr(p, reinterpret_cast<void*>(n), &release, Device(type));
  }
  void copy_data(void*, const void*, size_t) const override { ADD_FAILURE() << "copy_data"; }
  static void release(void* ctx, void* p) { munmap(p, reinterpret_cast<size_t>(ctx)); }
  static inline DeviceType type = kCPU;
};

DeviceType nokernel_device() {
  static DeviceType t = [] {
    DeviceType d = register_device_type("nokernel_cpp");
    NoAccess::type = d;
    static NoAccess a;
    set_allocator(d, &a);
    return d;
  }();
  return t;
}

}  // namespace

TEST(OpList, TablesFollowTheEnum) {
  EXPECT_EQ(op_from_id("mm"), OpId::mm);
  EXPECT_EQ(op_from_id("add"), OpId::add);
  EXPECT_EQ(op_from_id("no_such_op"), OpId::kCount);
  for (int i = 0; i < kNumOps; ++i) {
    OpId op = OpId(i);
    ASSERT_EQ(op_from_id(op_info(op).id), op) << op_info(op).id;
    const FunctionSchema& s = op_schema(op);
    EXPECT_FALSE(s.name.empty()) << op_info(op).id;
    EXPECT_FALSE(s.returns.empty()) << op_info(op).id;
  }
  const FunctionSchema& sum = op_schema(OpId::sum_1);
  EXPECT_EQ(sum.name, "sum");
  ASSERT_EQ(sum.arguments.size(), 4u);
  EXPECT_EQ(sum.arguments[2].name, "keepdim");
  EXPECT_TRUE(sum.arguments[2].has_default);
  EXPECT_EQ(sum.arguments[2].default_value, "False");
  EXPECT_TRUE(op_info(OpId::transpose).traits & op_trait::kView);
  EXPECT_TRUE(op_info(OpId::mm).traits & op_trait::kVjp);
  EXPECT_TRUE(op_info(OpId::nonzero).traits & op_trait::kDynamicShape);
  EXPECT_TRUE(op_info(OpId::neg).traits & op_trait::kElementwise);
  EXPECT_STREQ(op_qualified_name(OpId::true_divide), "aten::div");
}

TEST(CallPath, NoLayerNoEvents) {
  EXPECT_FALSE(prof::is_profiler_enabled());
  EXPECT_EQ(dispatch::thread_state().depth, 0);
  Tensor x = ones({2, 2});
  Tensor y = x + x;
  EXPECT_EQ(dispatch::thread_state().depth, 0);
  EXPECT_EQ(y.sum().item<float>(), 8.0f);
}

TEST(CallPath, ScopeUnwindsOnError) {
  prof::Profile p;
  EXPECT_THROW(mm(ones({2, 3}), ones({2, 3})), Error);
  EXPECT_EQ(dispatch::thread_state().depth, 0);
  p.stop();
  ASSERT_TRUE(has(op_names(p), "aten::mm"));
  for (const prof::Event& e : p.events()) EXPECT_GE(e.end_ns, e.start_ns);
}

TEST(NoKernelDevice, EveryPrimitiveRaisesTheTypedError) {
  DeviceType d = nokernel_device();
  Tensor x = empty({2, 3}, TensorOptions().device(Device(d)));
  EXPECT_EQ(x.device().type(), d);
  EXPECT_EQ(x.t().sizes(), IntArrayRef({3, 2}));  // a view needs no kernel
  auto expect_nokernel = [&](auto fn, const char* what) {
    try {
      fn();
      ADD_FAILURE() << what << " did not raise";
    } catch (const NotImplementedError& e) {
      EXPECT_NE(std::string(e.what()).find("not implemented for nokernel_cpp float"),
                std::string::npos)
          << what << ": " << e.what();
    }
  };
  expect_nokernel([&] { return x + x; }, "add");
  expect_nokernel([&] { return x.sum(); }, "sum");
  expect_nokernel([&] { return mm(x, x.t()); }, "mm");
  expect_nokernel([&] { return x.clone(); }, "clone");
  expect_nokernel([&] { return x.exp_(); }, "exp_");
  expect_nokernel([&] { return softmax(x, 1); }, "softmax");
  expect_nokernel([&] { return std::get<0>(x.sort(1)); }, "sort");
  expect_nokernel([&] { return cat({x, x}); }, "cat");
  expect_nokernel([&] { return x.item<float>(); }, "item");
  // registering a kernel makes the entry let the op through (its dtype only)
  EXPECT_FALSE(has_kernel(d, OpId::neg, kFloat));
  register_kernel(d, OpId::neg, {kDouble});
  EXPECT_FALSE(has_kernel(d, OpId::neg, kFloat));
  EXPECT_TRUE(has_kernel(d, OpId::neg, kDouble));
  EXPECT_TRUE(has_kernel(kCPU, OpId::neg, kFloat));
}

TEST(Profiler, RecordsOpsShapesAndRanges) {
  Tensor a = randn({4, 5}), b = randn({5, 3});
  prof::Profile p({.record_shapes = true});
  {
    prof::RecordFunction outer("outer");
    {
      prof::RecordFunction inner("inner");
      Tensor c = mm(a, b).relu().sum();
      (void)c;
    }
  }
  p.stop();
  const auto& ev = p.events();
  auto find = [&](const std::string& n) {
    for (size_t i = 0; i < ev.size(); ++i)
      if (ev[i].name == n) return int64_t(i);
    return int64_t(-1);
  };
  int64_t o = find("outer"), in = find("inner"), m = find("aten::mm");
  ASSERT_GE(o, 0);
  ASSERT_GE(in, 0);
  ASSERT_GE(m, 0);
  EXPECT_TRUE(ev[size_t(o)].user_range);
  EXPECT_EQ(ev[size_t(in)].parent, o);
  EXPECT_EQ(ev[size_t(m)].parent, in);
  EXPECT_EQ(ev[size_t(m)].depth, 2);
  EXPECT_LE(ev[size_t(o)].start_ns, ev[size_t(in)].start_ns);
  EXPECT_GE(ev[size_t(o)].end_ns, ev[size_t(in)].end_ns);
  ASSERT_EQ(ev[size_t(m)].input_shapes.size(), 2u);
  EXPECT_EQ(ev[size_t(m)].input_shapes[0], (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(ev[size_t(m)].input_shapes[1], (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(ev[size_t(m)].input_types[0], "float");

  // the table's totals agree with the events
  prof::KeyAverages avg = p.key_averages();
  int64_t self_sum = 0, calls = 0;
  for (const prof::FunctionStats& r : avg.rows) {
    self_sum += r.self_cpu_time_total_ns;
    calls += r.count;
  }
  EXPECT_EQ(calls, int64_t(ev.size()));
  int64_t top = 0;
  for (const prof::Event& e : ev)
    if (e.parent < 0) top += e.duration_ns();
  EXPECT_EQ(self_sum, top);  // self times partition the top-level ranges
  std::string t = avg.table("cpu_time_total", 5);
  EXPECT_NE(t.find("Self CPU %"), std::string::npos);
  EXPECT_NE(t.find("# of Calls"), std::string::npos);
  EXPECT_NE(t.find("Self CPU time total:"), std::string::npos);
  EXPECT_EQ(t.find("CPU Mem"), std::string::npos);  // memory columns only with profile_memory
  EXPECT_THROW(avg.table("no_such_key"), ValueError);
  std::string grouped = p.key_averages(true).table();
  EXPECT_NE(grouped.find("[[4, 5], [5, 3]]"), std::string::npos);
}

TEST(Profiler, MemoryAndTraceFile) {
  prof::Profile p({.profile_memory = true});
  Tensor a = ones({256});  // 1 KiB
  p.stop();
  int64_t mem = 0;
  for (const prof::Event& e : p.events())
    if (e.name == "aten::ones") mem = e.cpu_memory;
  EXPECT_EQ(mem, 1024);
  ASSERT_FALSE(p.memory_events().empty());
  EXPECT_EQ(p.memory_events()[0].bytes, 1024);
  std::string t = p.key_averages().table("cpu_memory_usage");
  EXPECT_NE(t.find("Self CPU Mem"), std::string::npos);
  EXPECT_NE(t.find("1.00 Kb"), std::string::npos);
  std::string path = ::testing::TempDir() + "/ember_trace.json";
  p.export_chrome_trace(path);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string j = ss.str();
  EXPECT_NE(j.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(j.find("\"name\": \"aten::ones\""), std::string::npos);
  EXPECT_NE(j.find("\"[memory]\""), std::string::npos);
  std::remove(path.c_str());
  EXPECT_THROW(p.export_chrome_trace("/nonexistent_dir/x/trace.json"), Error);
}

TEST(Profiler, OneSessionAtATime) {
  prof::Profile p;
  EXPECT_THROW(prof::Profile q, Error);
  EXPECT_TRUE(prof::is_profiler_enabled());
  p.stop();
  EXPECT_FALSE(prof::is_profiler_enabled());
}

TEST(Profiler, ScheduleActions) {
  using A = prof::ProfilerAction;
  prof::Schedule s{.wait = 1, .warmup = 1, .active = 2, .repeat = 1};
  std::vector<A> want = {A::NONE, A::WARMUP, A::RECORD, A::RECORD_AND_SAVE, A::NONE, A::NONE};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(s(int64_t(i)), want[i]) << i;
  prof::Schedule skip{.wait = 0, .warmup = 0, .active = 1, .repeat = 0, .skip_first = 2};
  EXPECT_EQ(skip(0), A::NONE);
  EXPECT_EQ(skip(2), A::RECORD_AND_SAVE);
  EXPECT_EQ(skip(9), A::RECORD_AND_SAVE);
  EXPECT_THROW((prof::Schedule{.active = 0})(0), ValueError);

  int ready = 0;
  std::vector<size_t> sizes;
  prof::Profile p({.schedule = s, .on_trace_ready = [&](prof::Profile& q) {
                     ++ready;
                     // each recorded step is a "ProfilerStep#<n>" range around its ops
                     size_t steps = 0, ops = 0;
                     for (const prof::Event& e : q.events()) {
                       if (e.user_range && e.name.rfind("ProfilerStep#", 0) == 0) {
                         ++steps;
                         EXPECT_TRUE(e.name == "ProfilerStep#2" || e.name == "ProfilerStep#3")
                             << e.name;
                       }
                       ops += !e.user_range && e.depth == 1;
                     }
                     EXPECT_EQ(steps, 2u);
                     sizes.push_back(ops);
                   }});
  for (int step = 0; step < 6; ++step) {
    Tensor t = ones({2}) * float(step);  // two top-level ops per step
    p.step();
  }
  p.stop();
  EXPECT_EQ(ready, 1);
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0], 4u);  // the two active steps, two top-level ops each
}
