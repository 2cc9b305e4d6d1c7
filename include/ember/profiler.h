#pragma once
/// The op profiler (`torch.profiler` in C++): op and `record_function` events with input shapes,
/// memory events from the allocators, per-op averages printed as PyTorch's table, chrome-trace
/// export and a wait/warmup/active schedule.
///
///     ember::profiler::Profile prof({.record_shapes = true, .profile_memory = true});
///     { ember::profiler::RecordFunction r("forward"); y = model->forward(x); }
///     prof.stop();
///     std::cout << prof.key_averages().table("self_cpu_time_total", 10);
///     prof.export_chrome_trace("trace.json");
///
/// The profiler is a layer of the op call path (Note [Call path] in src/ops/call_path.h): it
/// records what the path hands it, and no op has profiler code.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ember::profiler {

/// What is profiled. CUDA is accepted and records nothing on a machine without CUDA events.
enum class ProfilerActivity { CPU, CUDA };

/// What a schedule asks of the profiler at one step (PyTorch's ProfilerAction).
enum class ProfilerAction { NONE, WARMUP, RECORD, RECORD_AND_SAVE };

/// `torch.profiler.schedule`: skip `skip_first` steps, then cycles of `wait` idle steps,
/// `warmup` steps and `active` recorded steps; the last active step of a cycle is
/// RECORD_AND_SAVE. `repeat` = 0 repeats forever.
struct Schedule {
  int64_t wait = 0;
  int64_t warmup = 0;
  int64_t active = 1;
  int64_t repeat = 0;
  int64_t skip_first = 0;
  /// The action at step `step` (0-based). Throws ValueError for a schedule with active <= 0
  /// or negative counts.
  ProfilerAction operator()(int64_t step) const;
};

class Profile;
class RecordFunction;

/// Settings of a profiling session.
struct ProfilerConfig {
  std::vector<ProfilerActivity> activities = {ProfilerActivity::CPU};
  bool record_shapes = false;   ///< keep each op's input shapes and dtypes
  bool profile_memory = false;  ///< record allocations and frees (CPU Mem columns, [memory])
  bool with_stack = false;      ///< keep the caller's stack where the front end provides it
  /// Steps are counted by Profile::step(); none means "record from start to stop".
  std::function<ProfilerAction(int64_t)> schedule;
  /// Called with the profile at the end of each RECORD_AND_SAVE step (and at stop()).
  std::function<void(Profile&)> on_trace_ready;
};

/// One recorded range: an op or a `record_function` range on one thread.
struct Event {
  std::string name;  ///< "aten::add" for ops, the user's name for ranges
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t thread = 0;       ///< a small id per thread, 1 for the first
  int32_t depth = 0;        ///< nesting depth on its thread (0 = top level)
  int64_t parent = -1;      ///< index of the enclosing event, -1 for a top-level one
  bool user_range = false;  ///< a record_function range rather than an op
  int32_t op = -1;          ///< the OpId, -1 for a user range
  std::vector<std::vector<int64_t>> input_shapes;  ///< per argument; [] for a non-tensor
  std::vector<std::string> input_types;            ///< "float", "Scalar", "" for none
  int64_t cpu_memory = 0;          ///< bytes allocated minus freed while open, children included
  int64_t self_cpu_memory = 0;     ///< the same, children excluded
  std::vector<std::string> stack;  ///< innermost frame last; filled by front ends
  int64_t sequence_nr = -1;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

/// An allocation (bytes > 0) or free (bytes < 0) seen while profiling memory.
struct MemoryEvent {
  int64_t time_ns = 0;
  int64_t bytes = 0;
  int64_t total_allocated = 0;  ///< the allocator's live bytes after this event
  int64_t total_reserved = 0;
  uint64_t addr = 0;
  int64_t thread = 0;
  int8_t device_type = 0;  ///< DeviceType as an integer (0 = CPU)
  int8_t device_index = -1;
  bool in_event = false;  ///< inside an op or range (else it forms the "[memory]" row)
};

/// Per-key totals: one row of `key_averages()`.
struct FunctionStats {
  std::string key;
  std::string input_shapes;  ///< "[[4, 5], [5, 3]]" when grouped by input shape, else ""
  int64_t count = 0;
  int64_t cpu_time_total_ns = 0;       ///< inclusive time summed over calls
  int64_t self_cpu_time_total_ns = 0;  ///< exclusive time summed over calls
  int64_t cpu_memory_usage = 0;
  int64_t self_cpu_memory_usage = 0;
  double cpu_time_avg_ns() const { return count ? double(cpu_time_total_ns) / count : 0; }
};

/// The rows of `Profile::key_averages()`, in order of first appearance.
class KeyAverages {
 public:
  std::vector<FunctionStats> rows;
  bool grouped_by_input_shape = false;
  bool with_memory = false;
  /// Self time summed over all rows (PyTorch's "Self CPU time total").
  int64_t self_cpu_time_total_ns() const;
  /// PyTorch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, [CPU Mem,
  /// Self CPU Mem], # of Calls, [Input Shapes]. `sort_by` is a PyTorch key ("cpu_time_total",
  /// "self_cpu_time_total", "count", "cpu_memory_usage", "self_cpu_memory_usage", "cpu_time")
  /// or "" for first appearance; row_limit < 0 prints every row. ValueError for an unknown key.
  std::string table(const std::string& sort_by = "", int64_t row_limit = 100,
                    int64_t max_name_column_width = 55) const;
};

/// A profiling session; recording starts in the constructor (or at the first RECORD step of a
/// schedule) and ends at stop() or destruction. Only one session records at a time: a second
/// concurrent one raises RuntimeError.
class Profile {
 public:
  explicit Profile(ProfilerConfig config = {});
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  /// Ends recording (idempotent); runs on_trace_ready when a scheduled cycle was recording.
  void stop();
  /// Advances the schedule by one step (PyTorch's `prof.step()`).
  void step();
  /// The step counter.
  int64_t step_num() const { return step_; }

  /// Events of the last recorded cycle, sorted by start time (children after parents).
  const std::vector<Event>& events() const;
  const std::vector<MemoryEvent>& memory_events() const;
  /// Per-name totals; with `group_by_input_shape`, per (name, input shapes).
  KeyAverages key_averages(bool group_by_input_shape = false) const;
  /// Writes a trace-event JSON ({"traceEvents": [...]}) loadable by Perfetto and
  /// chrome://tracing. Written to a temporary file and renamed: never half-written.
  void export_chrome_trace(const std::string& path) const;
  /// The trace as a string.
  std::string chrome_trace() const;
  const ProfilerConfig& config() const { return config_; }

 private:
  void begin_recording();
  void end_recording();
  ProfilerAction action_ = ProfilerAction::NONE;
  ProfilerConfig config_;
  int64_t step_ = 0;
  bool recording_ = false;
  bool stopped_ = false;
  std::vector<Event> events_;
  std::vector<MemoryEvent> memory_;
  int64_t origin_ns_ = 0;
  /// "ProfilerStep#<n>": with a schedule, each step is a range of its own, as in PyTorch.
  std::unique_ptr<RecordFunction> step_range_;
};

/// A named user range (`torch.profiler.record_function`): an event spanning its lifetime
/// while a session records; nothing otherwise.
class RecordFunction {
 public:
  explicit RecordFunction(std::string name);
  ~RecordFunction();
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;
  /// Ends the range early (idempotent).
  void end();

 private:
  int64_t handle_ = -1;
  uint64_t generation_ = 0;  ///< the session the range was opened in
};

/// Whether a session is recording now.
bool is_profiler_enabled();

/// The frames a front end attaches to op events (with_stack): a callable that returns the
/// caller's stack, innermost frame last. Takes effect from the next session on.
void set_stack_provider(std::function<std::vector<std::string>()> provider);

/// `torch.profiler.tensorboard_trace_handler`: an on_trace_ready callback that writes
/// "<dir>/<worker>.<time ms>.pt.trace.json" (worker defaults to "<hostname>_<pid>").
std::function<void(Profile&)> tensorboard_trace_handler(const std::string& dir_name,
                                                        const std::string& worker_name = "",
                                                        bool use_gzip = false);

}  // namespace ember::profiler
