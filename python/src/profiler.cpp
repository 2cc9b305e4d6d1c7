// The profiler binding (ember._C._profiler, behind ember.profiler): sessions, user ranges,
// schedules, recorded events and their per-name table.
//
// Python callbacks (a schedule, on_trace_ready, a stack provider) are held through PyCallback
// and take the GIL when called or dropped, so the profiler may call them from any thread. The
// profiler calls the stack provider outside its locks, so step() and stop() may keep the GIL.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/profiler.h"
#include "pyember.h"

namespace ember::python {
namespace {

using namespace ember::profiler;

/// A Python callable that may be called and released from any thread.
struct PyCallback {
  py::object fn;
  explicit PyCallback(py::object f) : fn(std::move(f)) {}
  ~PyCallback() {
    if (!Py_IsInitialized()) {
      fn.release();  // the interpreter is gone: leak rather than touch it
      return;
    }
    py::gil_scoped_acquire gil;
    fn = py::object();
  }
  PyCallback(const PyCallback&) = delete;
  PyCallback& operator=(const PyCallback&) = delete;
};

/// An on_trace_ready implemented in C++ (tensorboard_trace_handler): passed to a session as is.
struct TraceHandler {
  std::function<void(Profile&)> fn;
};

/// "file.py(line): function" per (code object, instruction offset), so a loop formats each
/// frame once. Entries hold their code object (an address is not reused while cached); the
/// cache is cleared when full. Used with the GIL held.
class FrameNames {
 public:
  const std::string& get(PyFrameObject* f) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    const Key key{code, PyFrame_GetLasti(f)};
    auto it = names_.find(key);
    if (it != names_.end()) {
      Py_DECREF(code);
      return it->second;
    }
    if (names_.size() >= kMax) clear();
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* name = PyUnicode_AsUTF8(code->co_name);
    if (!file || !name) PyErr_Clear();
    std::string s = std::string(file ? file : "?") + "(" +
                    std::to_string(PyFrame_GetLineNumber(f)) + "): " + (name ? name : "?");
    return names_.emplace(key, std::move(s)).first->second;  // keeps the reference
  }

 private:
  using Key = std::pair<PyCodeObject*, int>;
  struct Hash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.first) * 31 + std::hash<int>()(k.second);
    }
  };
  static constexpr size_t kMax = 1 << 14;
  void clear() {
    for (auto& [k, v] : names_) Py_DECREF(k.first);
    names_.clear();
  }
  std::unordered_map<Key, std::string, Hash> names_;
};

/// The Python frames of the calling thread, innermost last, as "file.py(line): function".
/// Threads that never ran Python (pool workers) have none; a thread that released the GIL
/// around an op takes it back for the walk.
std::vector<std::string> python_stack() {
  static FrameNames* names = new FrameNames();  // guarded by the GIL; outlives interpreter exit
  std::vector<std::string> out;
  if (!Py_IsInitialized() || PyGILState_GetThisThreadState() == nullptr) return out;
  py::gil_scoped_acquire gil;
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f) {
    out.push_back(names->get(f));
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

/// A Python stack provider (None: the Python frames of the caller).
void set_provider(py::object fn) {
  if (fn.is_none()) {
    set_stack_provider(python_stack);
    return;
  }
  auto cb = std::make_shared<PyCallback>(std::move(fn));
  set_stack_provider([cb]() -> std::vector<std::string> {
    py::gil_scoped_acquire gil;
    return cb->fn().cast<std::vector<std::string>>();
  });
}

ProfilerConfig make_config(py::handle activities, bool record_shapes, bool profile_memory,
                           bool with_stack, py::handle schedule, py::handle on_trace_ready) {
  ProfilerConfig c;
  if (!activities.is_none()) {
    c.activities.clear();
    for (py::handle a : py::iter(activities)) {
      if (!py::isinstance<ProfilerActivity>(a))
        type_error(std::string("profile(): activities must be ProfilerActivity values, got ") +
                   Py_TYPE(a.ptr())->tp_name);
      c.activities.push_back(a.cast<ProfilerActivity>());
    }
  }
  c.record_shapes = record_shapes;
  c.profile_memory = profile_memory;
  c.with_stack = with_stack;
  if (py::isinstance<Schedule>(schedule)) {
    c.schedule = schedule.cast<Schedule>();
  } else if (!schedule.is_none()) {
    if (!PyCallable_Check(schedule.ptr())) type_error("profile(): schedule must be callable");
    auto cb = std::make_shared<PyCallback>(py::reinterpret_borrow<py::object>(schedule));
    c.schedule = [cb](int64_t step) {
      py::gil_scoped_acquire gil;
      py::object a = cb->fn(step);
      if (!py::isinstance<ProfilerAction>(a))
        type_error(std::string("profile(): the schedule must return a ProfilerAction, got ") +
                   Py_TYPE(a.ptr())->tp_name);
      return a.cast<ProfilerAction>();
    };
  }
  if (py::isinstance<TraceHandler>(on_trace_ready)) {
    c.on_trace_ready = on_trace_ready.cast<const TraceHandler&>().fn;
  } else if (!on_trace_ready.is_none()) {
    if (!PyCallable_Check(on_trace_ready.ptr()))
      type_error("profile(): on_trace_ready must be callable");
    auto cb = std::make_shared<PyCallback>(py::reinterpret_borrow<py::object>(on_trace_ready));
    c.on_trace_ready = [cb](Profile& p) {
      py::gil_scoped_acquire gil;
      cb->fn(py::cast(&p, py::return_value_policy::reference));
    };
  }
  return c;
}

// ---- events ----

/// One session's events with what PyTorch's FunctionEvent derives from them.
struct EventTable {
  std::vector<Event> events;
  std::vector<int64_t> self_ns;  ///< duration minus the direct children's durations
  std::vector<std::vector<int64_t>> children;
};

/// A view of one recorded event (PyTorch's FunctionEvent): `cpu_parent` and `cpu_children` are
/// views into the same table.
struct FunctionEvent {
  std::shared_ptr<const EventTable> table;
  int64_t id = 0;
  const Event& e() const { return table->events[id]; }
};

std::vector<FunctionEvent> event_views(const Profile& p) {
  auto t = std::make_shared<EventTable>();
  t->events = p.events();
  const size_t n = t->events.size();
  t->self_ns.resize(n);
  t->children.resize(n);
  for (size_t i = 0; i < n; ++i) t->self_ns[i] = t->events[i].duration_ns();
  for (size_t i = 0; i < n; ++i) {
    const int64_t parent = t->events[i].parent;
    if (parent < 0 || parent >= int64_t(n)) continue;
    t->self_ns[parent] -= t->events[i].duration_ns();
    t->children[parent].push_back(int64_t(i));
  }
  std::vector<FunctionEvent> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = {t, int64_t(i)};
  return out;
}

/// PyTorch's Interval: a start and end in microseconds.
struct Interval {
  double start = 0, end = 0;
  double elapsed_us() const { return end - start; }
};

double us(int64_t ns) { return double(ns) / 1000.0; }

py::list shapes_list(const std::vector<std::vector<int64_t>>& shapes) {
  py::list out;
  for (const auto& s : shapes) out.append(py::cast(s));
  return out;
}

void init_events(py::module_& m) {
  py::class_<Interval>(m, "Interval", "A time range in microseconds (PyTorch's Interval)")
      .def_readonly("start", &Interval::start)
      .def_readonly("end", &Interval::end)
      .def("elapsed_us", &Interval::elapsed_us);

  using E = FunctionEvent;
  py::class_<E>(m, "FunctionEvent", "One recorded op or record_function range")
      .def_property_readonly("id", [](const E& v) { return v.id; })
      .def_property_readonly("name", [](const E& v) { return v.e().name; })
      .def_property_readonly("key", [](const E& v) { return v.e().name; })
      .def_property_readonly("thread", [](const E& v) { return v.e().thread; })
      .def_property_readonly("start_ns", [](const E& v) { return v.e().start_ns; })
      .def_property_readonly("end_ns", [](const E& v) { return v.e().end_ns; })
      .def_property_readonly("depth", [](const E& v) { return v.e().depth; })
      .def_property_readonly("parent", [](const E& v) { return v.e().parent; })
      .def_property_readonly("duration_ns", [](const E& v) { return v.e().duration_ns(); })
      .def_property_readonly("user_range", [](const E& v) { return v.e().user_range; })
      .def_property_readonly("op", [](const E& v) { return v.e().op; })
      .def_property_readonly("sequence_nr", [](const E& v) { return v.e().sequence_nr; })
      .def_property_readonly("input_shapes",
                             [](const E& v) { return shapes_list(v.e().input_shapes); })
      .def_property_readonly("input_types", [](const E& v) { return v.e().input_types; })
      .def_property_readonly("count", [](const E&) { return 1; })
      .def_property_readonly("cpu_time_total", [](const E& v) { return us(v.e().duration_ns()); })
      .def_property_readonly("cpu_time", [](const E& v) { return us(v.e().duration_ns()); })
      .def_property_readonly("self_cpu_time_total",
                             [](const E& v) { return us(v.table->self_ns[v.id]); })
      .def_property_readonly("cpu_memory_usage", [](const E& v) { return v.e().cpu_memory; })
      .def_property_readonly("self_cpu_memory_usage",
                             [](const E& v) { return v.e().self_cpu_memory; })
      .def_property_readonly("time_range",
                             [](const E& v) {
                               return Interval{us(v.e().start_ns), us(v.e().end_ns)};
                             })
      // PyTorch's order: innermost frame first.
      .def_property_readonly("stack",
                             [](const E& v) {
                               const auto& s = v.e().stack;
                               return std::vector<std::string>(s.rbegin(), s.rend());
                             })
      .def_property_readonly("cpu_parent",
                             [](const E& v) -> py::object {
                               const int64_t p = v.e().parent;
                               if (p < 0) return py::none();
                               return py::cast(E{v.table, p});
                             })
      .def_property_readonly("cpu_children",
                             [](const E& v) {
                               py::list out;
                               for (int64_t c : v.table->children[v.id]) out.append(E{v.table, c});
                               return out;
                             })
      .def("__eq__",
           [](const E& a, py::object b) {
             return py::isinstance<E>(b) && b.cast<const E&>().table == a.table &&
                    b.cast<const E&>().id == a.id;
           })
      .def("__hash__",
           [](const E& v) {
             return std::hash<const void*>()(v.table.get()) ^ std::hash<int64_t>()(v.id);
           })
      .def("__repr__", [](const E& v) {
        const Event& e = v.e();
        return detail::str_cat(
            "<FunctionEvent id=", v.id, " name=", e.name, " cpu_time=", us(e.duration_ns()),
            "us thread=", e.thread,
            " input_shapes=", py::str(shapes_list(e.input_shapes)).cast<std::string>(),
            " cpu_memory_usage=", e.cpu_memory, ">");
      });

  py::class_<MemoryEvent>(m, "MemoryEvent", "An allocation (bytes > 0) or a free (bytes < 0)")
      .def_readonly("time_ns", &MemoryEvent::time_ns)
      .def_readonly("bytes", &MemoryEvent::bytes)
      .def_readonly("total_allocated", &MemoryEvent::total_allocated)
      .def_readonly("total_reserved", &MemoryEvent::total_reserved)
      .def_readonly("addr", &MemoryEvent::addr)
      .def_readonly("thread", &MemoryEvent::thread)
      .def_readonly("device_type", &MemoryEvent::device_type)
      .def_readonly("device_index", &MemoryEvent::device_index)
      .def("__repr__", [](const MemoryEvent& e) {
        return detail::str_cat("<MemoryEvent bytes=", e.bytes,
                               " total_allocated=", e.total_allocated, " thread=", e.thread, ">");
      });
}

// ---- key averages ----

void init_key_averages(py::module_& m) {
  using S = FunctionStats;
  py::class_<S>(m, "FunctionStats", "Totals of one key (PyTorch's FunctionEventAvg)")
      .def_readonly("key", &S::key)
      .def_readonly("count", &S::count)
      .def_readonly("cpu_time_total_ns", &S::cpu_time_total_ns)
      .def_readonly("self_cpu_time_total_ns", &S::self_cpu_time_total_ns)
      .def_readonly("cpu_memory_usage", &S::cpu_memory_usage)
      .def_readonly("self_cpu_memory_usage", &S::self_cpu_memory_usage)
      .def_property_readonly("cpu_time_total", [](const S& s) { return us(s.cpu_time_total_ns); })
      .def_property_readonly("self_cpu_time_total",
                             [](const S& s) { return us(s.self_cpu_time_total_ns); })
      .def_property_readonly("cpu_time", [](const S& s) { return s.cpu_time_avg_ns() / 1000.0; })
      // A list as PyTorch's (grouped by input shape), [] when not grouped.
      .def_property_readonly(
          "input_shapes",
          [](const S& s) -> py::object {
            if (s.input_shapes.empty()) return py::list();
            return py::module_::import("ast").attr("literal_eval")(s.input_shapes);
          })
      .def("__repr__", [](const S& s) {
        return detail::str_cat(
            "<FunctionEventAvg key=", s.key, " self_cpu_time=", us(s.self_cpu_time_total_ns),
            "us cpu_time=", s.cpu_time_avg_ns() / 1000.0, "us count=", s.count,
            " input_shapes=", s.input_shapes, " cpu_memory_usage=", s.cpu_memory_usage, ">");
      });

  py::class_<KeyAverages>(m, "KeyAverages", "Per-key totals of a session, in first-seen order")
      .def_readonly("rows", &KeyAverages::rows)
      .def_readonly("grouped_by_input_shape", &KeyAverages::grouped_by_input_shape)
      .def_readonly("with_memory", &KeyAverages::with_memory)
      .def("__len__", [](const KeyAverages& k) { return k.rows.size(); })
      .def("__getitem__",
           [](const KeyAverages& k, int64_t i) {
             const int64_t n = int64_t(k.rows.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("list index out of range");
             return k.rows[size_t(i)];
           })
      .def(
          "__iter__",
          [](const KeyAverages& k) { return py::make_iterator(k.rows.begin(), k.rows.end()); },
          py::keep_alive<0, 1>())
      .def_property_readonly("self_cpu_time_total_ns", &KeyAverages::self_cpu_time_total_ns)
      .def_property_readonly("self_cpu_time_total",
                             [](const KeyAverages& k) { return us(k.self_cpu_time_total_ns()); })
      .def(
          "table",
          [](const KeyAverages& k, py::object sort_by, int64_t row_limit,
             int64_t max_src_column_width, int64_t max_name_column_width,
             int64_t max_shapes_column_width, py::object header, bool top_level_events_only) {
            (void)max_src_column_width;  // no source column
            (void)max_shapes_column_width;
            if (!header.is_none() || top_level_events_only)
              throw ember::NotImplementedError(
                  "[profiler] table(): header and top_level_events_only are not supported");
            const std::string key = sort_by.is_none() ? "" : sort_by.cast<std::string>();
            try {
              return k.table(key, row_limit, max_name_column_width);
            } catch (const ember::ValueError& e) {
              // PyTorch looks the key up as an attribute of its rows.
              throw py::attribute_error(e.what());
            }
          },
          py::arg("sort_by") = py::none(), py::arg("row_limit") = 100,
          py::arg("max_src_column_width") = 75, py::arg("max_name_column_width") = 55,
          py::arg("max_shapes_column_width") = 80, py::arg("header") = py::none(),
          py::arg("top_level_events_only") = false,
          "PyTorch's table of the rows; sort_by is a row attribute name (None: first seen)")
      .def("__str__", [](const KeyAverages& k) { return k.table(); });
}

// ---- sessions, ranges, schedules ----

void init_session(py::module_& m) {
  py::enum_<ProfilerActivity>(m, "ProfilerActivity")
      .value("CPU", ProfilerActivity::CPU)
      .value("CUDA", ProfilerActivity::CUDA);
  py::enum_<ProfilerAction>(m, "ProfilerAction")
      .value("NONE", ProfilerAction::NONE)
      .value("WARMUP", ProfilerAction::WARMUP)
      .value("RECORD", ProfilerAction::RECORD)
      .value("RECORD_AND_SAVE", ProfilerAction::RECORD_AND_SAVE);

  py::class_<Schedule>(m, "Schedule", "torch.profiler.schedule: step -> ProfilerAction")
      .def(py::init([](int64_t wait, int64_t warmup, int64_t active, int64_t repeat,
                       int64_t skip_first) {
             Schedule s{wait, warmup, active, repeat, skip_first};
             try {
               (void)s(0);  // checks the counts now, as PyTorch does
             } catch (const ember::ValueError& e) {
               PyErr_SetString(PyExc_AssertionError, e.what());  // PyTorch asserts
               throw py::error_already_set();
             }
             if (warmup == 0 &&
                 PyErr_WarnEx(PyExc_UserWarning,
                              "Profiler won't be using warmup, this can skew profiler results",
                              1) != 0)
               throw py::error_already_set();
             return s;
           }),
           py::kw_only(), py::arg("wait"), py::arg("warmup"), py::arg("active"),
           py::arg("repeat") = 0, py::arg("skip_first") = 0)
      .def("__call__", &Schedule::operator(), py::arg("step"))
      .def_readonly("wait", &Schedule::wait)
      .def_readonly("warmup", &Schedule::warmup)
      .def_readonly("active", &Schedule::active)
      .def_readonly("repeat", &Schedule::repeat)
      .def_readonly("skip_first", &Schedule::skip_first)
      .def("__repr__", [](const Schedule& s) {
        return detail::str_cat("schedule(wait=", s.wait, ", warmup=", s.warmup,
                               ", active=", s.active, ", repeat=", s.repeat,
                               ", skip_first=", s.skip_first, ")");
      });

  py::class_<TraceHandler>(m, "TraceHandler", "An on_trace_ready written in C++")
      .def("__call__", [](const TraceHandler& h, py::object prof) {
        // The Python front end keeps its session in `_profile`.
        py::object p = py::isinstance<Profile>(prof) ? prof : prof.attr("_profile");
        h.fn(p.cast<Profile&>());
      });
  m.def(
      "tensorboard_trace_handler",
      [](const std::string& dir_name, const std::string& worker_name, bool use_gzip) {
        return TraceHandler{tensorboard_trace_handler(dir_name, worker_name, use_gzip)};
      },
      py::arg("dir_name"), py::arg("worker_name") = "", py::arg("use_gzip") = false,
      "Writes <dir>/<worker>.<time ms>.pt.trace.json[.gz] at each trace-ready point");

  py::class_<Profile>(m, "Profile", "A profiling session; records from construction to stop()")
      .def(py::init([](py::object activities, bool record_shapes, bool profile_memory,
                       bool with_stack, py::object schedule, py::object on_trace_ready) {
             return std::make_unique<Profile>(make_config(activities, record_shapes, profile_memory,
                                                          with_stack, schedule, on_trace_ready));
           }),
           py::kw_only(), py::arg("activities") = py::none(), py::arg("record_shapes") = false,
           py::arg("profile_memory") = false, py::arg("with_stack") = false,
           py::arg("schedule") = py::none(), py::arg("on_trace_ready") = py::none())
      .def("stop", &Profile::stop)
      .def("step", &Profile::step)
      .def_property_readonly("step_num", &Profile::step_num)
      .def("events", &event_views)
      .def("memory_events", &Profile::memory_events)
      .def("key_averages", &Profile::key_averages, py::arg("group_by_input_shape") = false)
      .def("export_chrome_trace", &Profile::export_chrome_trace, py::arg("path"),
           py::call_guard<py::gil_scoped_release>())
      .def("chrome_trace", &Profile::chrome_trace);

  py::class_<RecordFunction>(m, "RecordFunction", "A named range, open from construction to end()")
      .def(py::init<std::string>(), py::arg("name"))
      .def("end", &RecordFunction::end);

  m.def("is_profiler_enabled", &is_profiler_enabled);
  m.def("set_stack_provider", &set_provider, py::arg("provider"),
        "Sets what with_stack sessions attach to op events: a callable returning frames "
        "(innermost last), or None for the caller's Python frames");
}

}  // namespace

void init_profiler(py::module_& root) {
  py::module_ m = root.def_submodule("_profiler", "ember.profiler's C++ half");
  init_events(m);
  init_key_averages(m);
  init_session(m);
  set_stack_provider(python_stack);
}

}  // namespace ember::python
