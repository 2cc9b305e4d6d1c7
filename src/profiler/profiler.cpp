// The profiler: a layer of the op call path (Note [Call path]) plus the allocators' memory
// observer. Each thread appends to its own buffer; a session gathers the buffers when it stops.
#include "ember/profiler.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/memory_observer.h"
#include "ember/error.h"
#include "ops/call_path.h"

namespace ember::profiler {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One thread's events of the current session.
struct ThreadBuffer {
  std::mutex mu;  // uncontended: only its thread writes while recording
  int64_t tid = 0;
  std::vector<Event> events;
  std::vector<int64_t> open;  // indices of events not yet ended, innermost last
  std::vector<MemoryEvent> memory;
};

// The recording session (at most one at a time).
struct Session {
  std::mutex mu;
  uint64_t generation = 0;
  bool active = false;
  ProfilerConfig config;  // of the recording session; cleared when it stops
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  int64_t next_tid = 1;
  std::function<std::vector<std::string>()> stack_provider;  // set by front ends
  // What recording threads read without the lock: written before the session is published
  // (g_active_generation, release) and not again while it records.
  bool with_stack = false;
  bool record_shapes = false;  // another layer (vmap) may box the arguments regardless
  std::function<std::vector<std::string>()> recording_stack_provider;
};
Session& session() {
  static auto* s = new Session();  // leaked: threads may record during exit
  return *s;
}
std::atomic<uint64_t> g_active_generation{0};  // 0: not recording

ThreadBuffer* thread_buffer() {
  thread_local ThreadBuffer* buf = nullptr;
  thread_local uint64_t gen = 0;
  uint64_t active = g_active_generation.load(std::memory_order_acquire);
  if (active == 0) return nullptr;
  if (gen != active || !buf) {
    Session& s = session();
    std::lock_guard<std::mutex> g(s.mu);
    if (!s.active || s.generation != active) return nullptr;
    s.buffers.push_back(std::make_unique<ThreadBuffer>());
    buf = s.buffers.back().get();
    buf->tid = s.next_tid++;
    gen = active;
  }
  return buf;
}

// The element type as PyTorch's trace writes it ("Input type": "float", "long int", ...).
const char* c_type_name(ScalarType t) {
  static const char* const kNames[] = {"bool",
                                       "unsigned char",
                                       "signed char",
                                       "short int",
                                       "int",
                                       "long int",
                                       "c10::Half",
                                       "c10::BFloat16",
                                       "float",
                                       "double",
                                       "c10::complex<c10::Half>",
                                       "c10::complex<float>",
                                       "c10::complex<double>"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumScalarTypes);
  return t == ScalarType::Undefined ? "" : kNames[static_cast<int>(t)];
}

std::string type_of(const dispatch::IValue& v) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return t->defined() ? c_type_name(t->dtype()) : "";
  if (std::holds_alternative<Scalar>(v)) return "Scalar";
  if (std::holds_alternative<int64_t>(v)) return "Int";
  if (std::holds_alternative<double>(v)) return "Float";
  if (std::holds_alternative<bool>(v)) return "Bool";
  if (std::holds_alternative<std::vector<int64_t>>(v)) return "IntList";
  if (std::holds_alternative<std::vector<Tensor>>(v)) return "TensorList";
  if (std::holds_alternative<ScalarType>(v)) return "ScalarType";
  if (std::holds_alternative<std::string>(v)) return "str";
  return "";
}

constexpr int64_t kSkipped = -2;  // an open entry with no event (an allocation inside an op)

// The innermost open event on the thread, or -1.
int64_t innermost(const ThreadBuffer& b) {
  for (size_t k = b.open.size(); k-- > 0;)
    if (b.open[k] >= 0) return b.open[k];
  return -1;
}

int64_t open_event(ThreadBuffer& b, std::string name, bool user, int32_t op) {
  const Session& s = session();
  std::vector<std::string> stack;  // taken before the lock: the provider may run Python
  if (s.with_stack && s.recording_stack_provider) stack = s.recording_stack_provider();
  std::lock_guard<std::mutex> g(b.mu);
  Event e;
  e.name = std::move(name);
  e.thread = b.tid;
  e.parent = innermost(b);
  e.depth = e.parent < 0 ? 0 : b.events[size_t(e.parent)].depth + 1;
  e.user_range = user;
  e.op = op;
  e.stack = std::move(stack);
  e.start_ns = now_ns();
  b.events.push_back(std::move(e));
  b.open.push_back(int64_t(b.events.size()) - 1);
  return b.open.back();
}

void close_event(ThreadBuffer& b, int64_t index) {
  int64_t t = now_ns();
  std::lock_guard<std::mutex> g(b.mu);
  // Close `index` and anything still open inside it (a range ended out of order).
  while (!b.open.empty()) {
    int64_t i = b.open.back();
    b.open.pop_back();
    if (i == kSkipped) continue;
    Event& e = b.events[size_t(i)];
    e.end_ns = t;
    if (e.parent >= 0) b.events[size_t(e.parent)].cpu_memory += e.cpu_memory;
    if (i == index) break;
  }
}

void on_enter(const dispatch::BoxedCall& call) {
  ThreadBuffer* b = thread_buffer();
  if (!b) return;
  // An allocation-only op inside another op (the output of mm) is part of that op, as
  // PyTorch's kernels allocate outputs without a dispatched aten::empty: no event of its own.
  if ((op_info(call.op).traits & op_trait::kAllocOnly) && innermost(*b) >= 0 &&
      !b->events[size_t(innermost(*b))].user_range) {
    std::lock_guard<std::mutex> g(b->mu);
    b->open.push_back(kSkipped);
    return;
  }
  std::string name = op_qualified_name(call.op);
  if (call.inplace) name += '_';
  int64_t i = open_event(*b, std::move(name), false, int32_t(call.op));
  if (call.args.empty() || !session().record_shapes) return;
  std::lock_guard<std::mutex> g(b->mu);
  Event& e = b->events[size_t(i)];
  for (const dispatch::IValue& v : call.args) {
    const Tensor* t = std::get_if<Tensor>(&v);
    if (t && t->defined())
      e.input_shapes.emplace_back(t->sizes().begin(), t->sizes().end());
    else
      e.input_shapes.emplace_back();
    e.input_types.push_back(type_of(v));
  }
}

void on_exit(OpId) {
  ThreadBuffer* b = thread_buffer();
  if (!b || b->open.empty()) return;
  if (b->open.back() == kSkipped) {
    std::lock_guard<std::mutex> g(b->mu);
    b->open.pop_back();
    return;
  }
  close_event(*b, b->open.back());
}

void on_memory(const MemoryReport& r) {
  ThreadBuffer* b = thread_buffer();
  if (!b) return;
  std::lock_guard<std::mutex> g(b->mu);
  MemoryEvent m;
  m.time_ns = now_ns();
  m.bytes = r.bytes;
  m.total_allocated = r.total_allocated;
  m.total_reserved = r.total_reserved;
  m.addr = reinterpret_cast<uint64_t>(r.ptr);
  m.thread = b->tid;
  m.device_type = int8_t(r.device.type());
  m.device_index = int8_t(r.device.index());
  int64_t i = innermost(*b);
  m.in_event = i >= 0;
  b->memory.push_back(m);
  if (i >= 0) {
    Event& e = b->events[size_t(i)];
    e.self_cpu_memory += r.bytes;
    e.cpu_memory += r.bytes;
  }
}

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o;
}

std::string shapes_str(const std::vector<std::vector<int64_t>>& shapes) {
  std::string s = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) s += ", ";
    s += "[";
    for (size_t k = 0; k < shapes[i].size(); ++k) {
      if (k) s += ", ";
      s += std::to_string(shapes[i][k]);
    }
    s += "]";
  }
  return s + "]";
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
// PyTorch's _format_time / _format_time_share / _format_memory.
std::string format_time(double us) {
  if (us >= 1e6) return fmt("%.3fs", us / 1e6);
  if (us >= 1e3) return fmt("%.3fms", us / 1e3);
  return fmt("%.3fus", us);
}
std::string format_share(double us, double total_us) {
  if (total_us == 0) return "0.00%";  // nothing recorded: avoid 0/0
  return fmt("%.2f%%", us * 100.0 / total_us);
}
std::string format_memory(int64_t n) {
  constexpr double kKB = 1024, kMB = kKB * 1024, kGB = kMB * 1024;
  double a = std::abs(double(n));
  if (a >= kGB) return fmt("%.2f Gb", double(n) / kGB);
  if (a >= kMB) return fmt("%.2f Mb", double(n) / kMB);
  if (a >= kKB) return fmt("%.2f Kb", double(n) / kKB);
  return std::to_string(n) + " b";
}

std::string pad_left(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

// Writes `data` to `path` through a temporary file and a rename: never half-written.
void write_atomically(const std::string& path, const std::string& data, bool gzip) {
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  if (gzip) {
    gzFile f = gzopen(tmp.c_str(), "wb");
    EMBER_CHECK(f, "[export_chrome_trace] cannot open '", path, "' for writing");
    int n = gzwrite(f, data.data(), unsigned(data.size()));
    int rc = gzclose(f);
    if (n != int(data.size()) || rc != Z_OK) {
      std::remove(tmp.c_str());
      EMBER_THROW(Error, "[export_chrome_trace] could not write '", path, "'");
    }
  } else {
    std::ofstream f(tmp, std::ios::binary);
    EMBER_CHECK(f.good(), "[export_chrome_trace] cannot open '", path, "' for writing");
    f << data;
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      EMBER_THROW(Error, "[export_chrome_trace] could not write '", path, "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    EMBER_THROW(Error, "[export_chrome_trace] could not write '", path, "': ", ec.message());
  }
}

}  // namespace

// ---- schedule ----

ProfilerAction Schedule::operator()(int64_t step) const {
  EMBER_CHECK_VALUE(wait >= 0 && warmup >= 0 && active > 0 && repeat >= 0 && skip_first >= 0,
                    "[schedule] invalid profiler schedule arguments (wait=", wait,
                    ", warmup=", warmup, ", active=", active, ", repeat=", repeat,
                    ", skip_first=", skip_first, "): active must be positive, the rest >= 0");
  EMBER_CHECK_VALUE(step >= 0, "[schedule] step must be >= 0, got ", step);
  if (step < skip_first) return ProfilerAction::NONE;
  step -= skip_first;
  int64_t cycle = wait + warmup + active;
  if (repeat > 0 && step / cycle >= repeat) return ProfilerAction::NONE;
  int64_t in = step % cycle;
  if (in < wait) return ProfilerAction::NONE;
  if (in < wait + warmup) return ProfilerAction::WARMUP;
  return in < cycle - 1 ? ProfilerAction::RECORD : ProfilerAction::RECORD_AND_SAVE;
}

// ---- session ----

Profile::Profile(ProfilerConfig config) : config_(std::move(config)) {
  action_ = config_.schedule ? config_.schedule(0) : ProfilerAction::RECORD;
  if (action_ == ProfilerAction::RECORD || action_ == ProfilerAction::RECORD_AND_SAVE)
    begin_recording();
  if (config_.schedule) step_range_ = std::make_unique<RecordFunction>("ProfilerStep#0");
}

Profile::~Profile() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; the session is ended either way
  }
}

void Profile::begin_recording() {
  Session& s = session();
  {
    std::lock_guard<std::mutex> g(s.mu);
    EMBER_CHECK(!s.active, "[profile] another profiler is already recording; stop it first");
    s.active = true;
    s.generation = s.generation + 1;
    s.config = config_;
    s.buffers.clear();
    s.next_tid = 1;
    s.with_stack = config_.with_stack;
    s.record_shapes = config_.record_shapes;
    s.recording_stack_provider = config_.with_stack ? s.stack_provider : nullptr;
  }
  events_.clear();
  memory_.clear();
  origin_ns_ = now_ns();
  dispatch::set_layer_hooks(dispatch::kProfiler,
                            {&on_enter, &on_exit, /*needs_args=*/config_.record_shapes});
  if (config_.profile_memory) g_memory_observer.store(&on_memory);
  g_active_generation.store(s.generation, std::memory_order_release);
  dispatch::set_global_layer(dispatch::kProfiler, true);
  recording_ = true;
}

void Profile::end_recording() {
  if (!recording_) return;
  recording_ = false;
  dispatch::set_global_layer(dispatch::kProfiler, false);
  g_active_generation.store(0, std::memory_order_release);
  if (config_.profile_memory) g_memory_observer.store(nullptr);
  Session& s = session();
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> g(s.mu);
    buffers.swap(s.buffers);
    s.active = false;
    s.config = {};  // drops the session's callbacks (Python callables among them)
    s.recording_stack_provider = nullptr;
  }
  int64_t end = now_ns();
  // Merge the threads' events (order: thread, then start), remapping parent indices.
  for (auto& b : buffers) {
    std::lock_guard<std::mutex> g(b->mu);
    for (int64_t i : b->open) b->events[size_t(i)].end_ns = end;  // still open at stop
    int64_t base = int64_t(events_.size());
    for (Event& e : b->events) {
      if (e.parent >= 0) e.parent += base;
      events_.push_back(std::move(e));
    }
    for (MemoryEvent& m : b->memory) memory_.push_back(m);
  }
  // Sort by start time (parents before children at equal times) and remap parents again.
  std::vector<size_t> order(events_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Event &x = events_[a], &y = events_[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.thread != y.thread) return x.thread < y.thread;
    return x.depth < y.depth;
  });
  std::vector<int64_t> where(events_.size());
  for (size_t k = 0; k < order.size(); ++k) where[order[k]] = int64_t(k);
  std::vector<Event> sorted;
  sorted.reserve(events_.size());
  for (size_t k = 0; k < order.size(); ++k) {
    Event e = std::move(events_[order[k]]);
    if (e.parent >= 0) e.parent = where[size_t(e.parent)];
    sorted.push_back(std::move(e));
  }
  events_.swap(sorted);
  std::stable_sort(memory_.begin(), memory_.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
    return a.time_ns < b.time_ns;
  });
}

void Profile::step() {
  EMBER_CHECK(!stopped_, "[profile] step() after stop()");
  step_range_.reset();  // the step that ends
  ProfilerAction prev = action_;
  ++step_;
  action_ = config_.schedule ? config_.schedule(step_) : ProfilerAction::RECORD;
  if (!config_.schedule) return;
  bool was_saving = prev == ProfilerAction::RECORD_AND_SAVE;
  bool now_recording =
      action_ == ProfilerAction::RECORD || action_ == ProfilerAction::RECORD_AND_SAVE;
  if (was_saving || (recording_ && !now_recording)) {
    end_recording();
    if (was_saving && config_.on_trace_ready) config_.on_trace_ready(*this);
  }
  if (now_recording && !recording_) begin_recording();
  step_range_ = std::make_unique<RecordFunction>("ProfilerStep#" + std::to_string(step_));
}

void Profile::stop() {
  if (stopped_) return;
  stopped_ = true;
  step_range_.reset();
  bool was = recording_;
  end_recording();
  if (was && config_.on_trace_ready) config_.on_trace_ready(*this);
}

const std::vector<Event>& Profile::events() const { return events_; }
const std::vector<MemoryEvent>& Profile::memory_events() const { return memory_; }

// ---- averages and the table ----

int64_t KeyAverages::self_cpu_time_total_ns() const {
  int64_t t = 0;
  for (const FunctionStats& r : rows) t += r.self_cpu_time_total_ns;
  return t;
}

KeyAverages Profile::key_averages(bool group_by_input_shape) const {
  std::vector<int64_t> child_time(events_.size(), 0);
  for (const Event& e : events_)
    if (e.parent >= 0) child_time[size_t(e.parent)] += e.duration_ns();
  KeyAverages out;
  out.grouped_by_input_shape = group_by_input_shape;
  out.with_memory = config_.profile_memory;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    std::string shapes = group_by_input_shape ? shapes_str(e.input_shapes) : "";
    auto key = std::make_pair(e.name, shapes);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, out.rows.size()).first;
      FunctionStats r;
      r.key = e.name;
      r.input_shapes = shapes;
      out.rows.push_back(r);
    }
    FunctionStats& r = out.rows[it->second];
    ++r.count;
    r.cpu_time_total_ns += e.duration_ns();
    r.self_cpu_time_total_ns += e.duration_ns() - child_time[i];
    r.cpu_memory_usage += e.cpu_memory;
    r.self_cpu_memory_usage += e.self_cpu_memory;
  }
  // Allocations and frees outside every range form PyTorch's "[memory]" row.
  FunctionStats mem;
  mem.key = "[memory]";
  mem.input_shapes = group_by_input_shape ? "[]" : "";
  for (const MemoryEvent& m : memory_) {
    if (m.in_event) continue;
    ++mem.count;
    mem.cpu_memory_usage += m.bytes;
    mem.self_cpu_memory_usage += m.bytes;
  }
  if (mem.count) out.rows.push_back(mem);
  return out;
}

std::string KeyAverages::table(const std::string& sort_by, int64_t row_limit,
                               int64_t max_name_column_width) const {
  std::vector<const FunctionStats*> rs;
  for (const FunctionStats& r : rows) rs.push_back(&r);
  if (!sort_by.empty()) {
    using Get = double (*)(const FunctionStats&);
    static const std::map<std::string, Get> keys = {
        {"cpu_time_total", [](const FunctionStats& r) { return double(r.cpu_time_total_ns); }},
        {"self_cpu_time_total",
         [](const FunctionStats& r) { return double(r.self_cpu_time_total_ns); }},
        {"cpu_time", [](const FunctionStats& r) { return r.cpu_time_avg_ns(); }},
        {"count", [](const FunctionStats& r) { return double(r.count); }},
        {"cpu_memory_usage", [](const FunctionStats& r) { return double(r.cpu_memory_usage); }},
        {"self_cpu_memory_usage",
         [](const FunctionStats& r) { return double(r.self_cpu_memory_usage); }},
        // no device activity on this profiler: these sort as zero, as PyTorch without CUDA
        {"cuda_time_total", [](const FunctionStats&) { return 0.0; }},
        {"self_cuda_time_total", [](const FunctionStats&) { return 0.0; }},
        {"cuda_memory_usage", [](const FunctionStats&) { return 0.0; }},
        {"self_cuda_memory_usage", [](const FunctionStats&) { return 0.0; }},
    };
    auto it = keys.find(sort_by);
    EMBER_CHECK_VALUE(it != keys.end(), "[key_averages.table] unknown sort_by key '", sort_by,
                      "'; expected one of cpu_time_total, self_cpu_time_total, cpu_time, count, "
                      "cpu_memory_usage, self_cpu_memory_usage");
    Get get = it->second;
    std::stable_sort(rs.begin(), rs.end(), [get](const FunctionStats* a, const FunctionStats* b) {
      return get(*a) > get(*b);
    });
  }
  if (row_limit >= 0 && size_t(row_limit) < rs.size()) rs.resize(size_t(row_limit));

  size_t name_w = 0, shapes_w = 0;
  for (const FunctionStats& r : rows) {
    name_w = std::max(name_w, r.key.size() + 4);
    shapes_w = std::max(shapes_w, r.input_shapes.size() + 4);
  }
  if (max_name_column_width > 0) name_w = std::min(name_w, size_t(max_name_column_width));
  shapes_w = std::min<size_t>(shapes_w, 80);
  constexpr size_t kW = 12;
  std::vector<std::pair<std::string, size_t>> header = {{"Name", name_w},  {"Self CPU %", kW},
                                                        {"Self CPU", kW},  {"CPU total %", kW},
                                                        {"CPU total", kW}, {"CPU time avg", kW}};
  if (with_memory) {
    header.push_back({"CPU Mem", kW});
    header.push_back({"Self CPU Mem", kW});
  }
  header.push_back({"# of Calls", kW});
  if (grouped_by_input_shape) header.push_back({"Input Shapes", shapes_w});

  std::string sep, head;
  for (const auto& [title, w] : header) {
    sep += std::string(w, '-') + "  ";
    head += pad_left(title, w) + "  ";
  }
  std::ostringstream os;
  os << sep << "\n" << head << "\n" << sep << "\n";
  const double total_us = double(self_cpu_time_total_ns()) / 1e3;
  for (const FunctionStats* r : rs) {
    std::string name = r->key;
    if (max_name_column_width > 0 && name.size() >= size_t(max_name_column_width) - 3)
      name = name.substr(0, size_t(max_name_column_width) - 3) + "...";
    std::vector<std::string> cells = {
        name,
        format_share(double(r->self_cpu_time_total_ns) / 1e3, total_us),
        format_time(double(r->self_cpu_time_total_ns) / 1e3),
        format_share(double(r->cpu_time_total_ns) / 1e3, total_us),
        format_time(double(r->cpu_time_total_ns) / 1e3),
        format_time(r->cpu_time_avg_ns() / 1e3)};
    if (with_memory) {
      cells.push_back(format_memory(r->cpu_memory_usage));
      cells.push_back(format_memory(r->self_cpu_memory_usage));
    }
    cells.push_back(std::to_string(r->count));
    if (grouped_by_input_shape) {
      std::string s = r->input_shapes;
      if (s.size() > shapes_w - 1) s = s.substr(0, shapes_w - 4) + "...";
      cells.push_back(s);
    }
    for (size_t c = 0; c < cells.size(); ++c) os << pad_left(cells[c], header[c].second) << "  ";
    os << "\n";
  }
  os << sep << "\n";
  os << "Self CPU time total: " << format_time(total_us) << "\n";
  return os.str();
}

// ---- chrome trace ----

std::string Profile::chrome_trace() const {
  std::ostringstream os;
  const int pid = ::getpid();
  auto us = [&](int64_t ns) { return fmt("%.3f", double(ns - origin_ns_) / 1e3); };
  os << "{\n  \"schemaVersion\": 1,\n  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [";
  bool first = true;
  auto sep = [&] {
    os << (first ? "\n    " : ",\n    ");
    first = false;
  };
  sep();
  os << R"({"ph": "M", "name": "process_name", "pid": )" << pid
     << R"(, "tid": 0, "args": {"name": "ember"}})";
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    sep();
    os << R"({"ph": "X", "cat": ")" << (e.user_range ? "user_annotation" : "cpu_op")
       << R"(", "name": ")" << json_escape(e.name) << R"(", "pid": )" << pid << R"(, "tid": )"
       << e.thread << R"(, "ts": )" << us(e.start_ns) << R"(, "dur": )"
       << fmt("%.3f", double(e.duration_ns()) / 1e3) << R"(, "args": {"External id": )" << i + 1;
    if (!e.input_shapes.empty()) {
      os << R"(, "Input Dims": )" << shapes_str(e.input_shapes) << R"(, "Input type": [)";
      for (size_t k = 0; k < e.input_types.size(); ++k)
        os << (k ? ", " : "") << '"' << json_escape(e.input_types[k]) << '"';
      os << "]";
    }
    if (!e.stack.empty()) {
      os << R"(, "Call stack": ")";
      for (size_t k = e.stack.size(); k-- > 0;) os << json_escape(e.stack[k]) << (k ? ";" : "");
      os << '"';
    }
    os << "}}";
  }
  for (const MemoryEvent& m : memory_) {
    sep();
    os << R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": )" << pid
       << R"(, "tid": )" << m.thread << R"(, "ts": )" << us(m.time_ns)
       << R"(, "args": {"Device Type": )" << int(m.device_type) << R"(, "Device Id": )"
       << int(m.device_index) << R"(, "Addr": )" << m.addr << R"(, "Bytes": )" << m.bytes
       << R"(, "Total Allocated": )" << m.total_allocated << R"(, "Total Reserved": )"
       << m.total_reserved << "}}";
  }
  os << "\n  ]\n}\n";
  return os.str();
}

void Profile::export_chrome_trace(const std::string& path) const {
  bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  write_atomically(path, chrome_trace(), gz);
}

// ---- record_function ----

RecordFunction::RecordFunction(std::string name) {
  if (!dispatch::slow_path()) return;
  if (ThreadBuffer* b = thread_buffer()) {
    handle_ = open_event(*b, std::move(name), true, -1);
    generation_ = g_active_generation.load(std::memory_order_relaxed);
  }
}

RecordFunction::~RecordFunction() { end(); }

void RecordFunction::end() {
  if (handle_ < 0) return;
  // A range opened in an earlier session has nothing to close in this one.
  if (generation_ == g_active_generation.load(std::memory_order_relaxed))
    if (ThreadBuffer* b = thread_buffer()) close_event(*b, handle_);
  handle_ = -1;
}

bool is_profiler_enabled() { return g_active_generation.load(std::memory_order_relaxed) != 0; }

void set_stack_provider(std::function<std::vector<std::string>()> provider) {
  Session& s = session();
  std::lock_guard<std::mutex> g(s.mu);
  s.stack_provider = std::move(provider);  // used from the next session on
}

std::function<void(Profile&)> tensorboard_trace_handler(const std::string& dir_name,
                                                        const std::string& worker_name,
                                                        bool use_gzip) {
  return [dir_name, worker_name, use_gzip](Profile& p) {
    std::error_code ec;
    std::filesystem::create_directories(dir_name, ec);
    EMBER_CHECK(!ec, "[tensorboard_trace_handler] cannot create directory '", dir_name,
                "': ", ec.message());
    std::string worker = worker_name;
    if (worker.empty()) {
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      worker = std::string(host) + "_" + std::to_string(::getpid());
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    std::string file = dir_name + "/" + worker + "." + std::to_string(ms) + ".pt.trace.json";
    if (use_gzip) file += ".gz";
    p.export_chrome_trace(file);
  };
}

}  // namespace ember::profiler
