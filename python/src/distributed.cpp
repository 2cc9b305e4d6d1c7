// The _C._distributed submodule: stores, process groups and the collectives of
// ember::distributed (ember.distributed). ember/distributed/distributed_c10d.py gives them
// PyTorch's signatures; here each call converts its arguments, then runs with the GIL released
// (collectives, waits and store reads block, and DDP and the launcher call them from threads).
#include <pybind11/chrono.h>

#include "ember/distributed.h"
#include "pyember.h"

namespace ember::python {

void init_distributed_ddp(py::module_& dm);
void init_distributed_run(py::module_& dm);

namespace {

namespace d = ember::distributed;
using Ms = d::Milliseconds;
using Nogil = py::call_guard<py::gil_scoped_release>;

// The Python classes of the distributed errors (created once, never freed: they live as long
// as the module).
PyObject* dist_error = nullptr;
PyObject* dist_backend_error = nullptr;
PyObject* dist_store_error = nullptr;
PyObject* dist_network_error = nullptr;

PyObject* new_exception(py::module_& dm, const char* name, PyObject* base, const char* doc) {
  const std::string full = std::string("ember.distributed.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(full.c_str(), doc, base, nullptr);
  if (!type) throw py::error_already_set();
  dm.attr(name) = py::reinterpret_borrow<py::object>(type);
  return type;
}

/// Sets the Python error for `p`: the distributed errors as their own classes, the rest as the
/// rest of ember's errors. Used by the exception translator and by Work.exception().
void set_error_from(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const d::DistBackendError& e) {
    PyErr_SetString(dist_backend_error, e.what());
  } catch (const d::DistStoreError& e) {
    PyErr_SetString(dist_store_error, e.what());
  } catch (const d::DistNetworkError& e) {
    PyErr_SetString(dist_network_error, e.what());
  } catch (const d::DistError& e) {
    PyErr_SetString(dist_error, e.what());
  } catch (...) {
    set_python_error();
  }
}

/// The Python exception object for `p` (None for a null pointer).
py::object exception_object(std::exception_ptr p) {
  if (!p) return py::none();
  set_error_from(p);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb) PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return py::reinterpret_steal<py::object>(value);
}

/// A store value: str (UTF-8) or a bytes-like object, as torch's Store.set.
std::vector<uint8_t> to_bytes(py::handle v, const char* fn) {
  if (PyUnicode_Check(v.ptr())) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(v.ptr(), &n);
    if (!s) throw py::error_already_set();
    return std::vector<uint8_t>(s, s + n);
  }
  if (PyObject_CheckBuffer(v.ptr())) {
    py::buffer_info info = py::reinterpret_borrow<py::buffer>(v).request();
    const auto* p = static_cast<const uint8_t*>(info.ptr);
    return std::vector<uint8_t>(p, p + info.size * info.itemsize);
  }
  type_error(std::string("[") + fn + "] expected the value as str or bytes, got " +
             std::string(py::str(py::type::handle_of(v).attr("__name__"))));
}

py::bytes to_py_bytes(const std::vector<uint8_t>& v) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

py::bytes to_py_bytes(const std::string& s) { return py::bytes(s.data(), s.size()); }

std::vector<std::string> to_keys(py::handle keys, const char* fn) {
  if (PyUnicode_Check(keys.ptr()) || PyBytes_Check(keys.ptr()) ||
      !py::isinstance<py::sequence>(keys))
    type_error(std::string("[") + fn + "] expected a list of keys (str)");
  std::vector<std::string> out;
  for (auto k : keys) {
    if (!PyUnicode_Check(k.ptr())) type_error(std::string("[") + fn + "] keys must be str");
    out.push_back(k.cast<std::string>());
  }
  return out;
}

/// Keeps a Python callable alive for a C++ callback that may run (or be dropped) on another
/// thread: it is called and released with the GIL held, and leaked if Python is shutting down.
class PyCallback {
 public:
  explicit PyCallback(py::object f) : f_(new py::object(std::move(f))) {}
  PyCallback(const PyCallback&) = delete;
  ~PyCallback() {
    if (!f_ || !python_alive()) return;
    py::gil_scoped_acquire gil;
    delete f_;
  }
  void operator()() {
    if (!f_ || !python_alive()) return;
    py::gil_scoped_acquire gil;
    try {
      (*f_)();
    } catch (py::error_already_set& e) {
      // As torch's Future callbacks: an error in a callback is reported, never propagated
      // into the thread that completed the work.
      e.discard_as_unraisable("ember.distributed Work callback");
    }
    delete f_;
    f_ = nullptr;
  }

 private:
  static bool python_alive() { return Py_IsInitialized() && !_Py_IsFinalizing(); }
  py::object* f_;
};

/// Keyword defaults shared by the front-end functions.
py::arg_v group_arg() { return py::arg("group") = py::none(); }
py::arg_v async_arg() { return py::arg("async_op") = false; }

void init_stores(py::module_& dm) {
  py::class_<d::Store, std::shared_ptr<d::Store>>(dm, "Store",
                                                  "A key-value store shared by the ranks of a job")
      .def(
          "set",
          [](d::Store& s, const std::string& key, py::handle value) {
            auto v = to_bytes(value, "Store.set");
            py::gil_scoped_release nogil;
            s.set(key, v);
          },
          py::arg("key"), py::arg("value"))
      .def(
          "get",
          [](d::Store& s, const std::string& key) {
            std::vector<uint8_t> v;
            {
              py::gil_scoped_release nogil;
              v = s.get(key);
            }
            return to_py_bytes(v);
          },
          py::arg("key"))
      .def("add", &d::Store::add, py::arg("key"), py::arg("value"), Nogil())
      .def(
          "compare_set",
          [](d::Store& s, const std::string& key, py::handle expected, py::handle desired) {
            auto e = to_bytes(expected, "Store.compare_set");
            auto n = to_bytes(desired, "Store.compare_set");
            std::vector<uint8_t> v;
            {
              py::gil_scoped_release nogil;
              v = s.compare_set(key, e, n);
            }
            return to_py_bytes(v);
          },
          py::arg("key"), py::arg("expected_value"), py::arg("desired_value"))
      .def("delete_key", &d::Store::delete_key, py::arg("key"), Nogil())
      .def("num_keys", &d::Store::num_keys, Nogil())
      .def(
          "check",
          [](d::Store& s, py::handle keys) {
            auto k = to_keys(keys, "Store.check");
            py::gil_scoped_release nogil;
            return s.check(k);
          },
          py::arg("keys"))
      .def(
          "wait",
          [](d::Store& s, py::handle keys, std::optional<Ms> timeout) {
            auto k = to_keys(keys, "Store.wait");
            py::gil_scoped_release nogil;
            s.wait(k, timeout.value_or(d::kUnsetTimeout));
          },
          py::arg("keys"), py::arg("timeout") = py::none())
      .def("set_timeout", &d::Store::set_timeout, py::arg("timeout"))
      .def_property_readonly("timeout", &d::Store::timeout);

  py::class_<d::TCPStore, d::Store, std::shared_ptr<d::TCPStore>>(
      dm, "TCPStore", "A store served over TCP by the master process")
      .def(py::init([](const std::string& host, int port, std::optional<int> world_size,
                       bool is_master, Ms timeout, bool wait_for_workers, bool multi_tenant) {
             EMBER_CHECK_VALUE(port >= 0 && port <= 65535, "[TCPStore] port ", port,
                               " is out of range [0, 65535]");
             (void)multi_tenant;  // one server per port in this process: nothing to share.
             d::TCPStoreOptions o;
             o.port = static_cast<uint16_t>(port);
             o.is_server = is_master;
             if (world_size && *world_size >= 0) o.num_workers = *world_size;
             o.wait_workers = wait_for_workers;
             o.timeout = timeout;
             py::gil_scoped_release nogil;
             return std::make_shared<d::TCPStore>(host, o);
           }),
           py::arg("host_name"), py::arg("port"), py::arg("world_size") = py::none(),
           py::arg("is_master") = false, py::arg("timeout") = Ms(d::kDefaultStoreTimeout),
           py::arg("wait_for_workers") = true, py::arg("multi_tenant") = false)
      .def_property_readonly("port", &d::TCPStore::port)
      .def_property_readonly("host", &d::TCPStore::host);

  py::class_<d::FileStore, d::Store, std::shared_ptr<d::FileStore>>(
      dm, "FileStore", "A store kept in a file every process opens")
      .def(py::init([](const std::string& path, int world_size) {
             py::gil_scoped_release nogil;
             return std::make_shared<d::FileStore>(path, world_size);
           }),
           py::arg("file_name"), py::arg("world_size") = -1)
      .def_property_readonly("path", &d::FileStore::path);

  py::class_<d::HashStore, d::Store, std::shared_ptr<d::HashStore>>(dm, "HashStore",
                                                                    "An in-process store")
      .def(py::init([] { return std::make_shared<d::HashStore>(); }));

  py::class_<d::PrefixStore, d::Store, std::shared_ptr<d::PrefixStore>>(
      dm, "PrefixStore", "Prefixes every key with '<prefix>/' on the underlying store")
      .def(py::init([](const std::string& prefix, std::shared_ptr<d::Store> store) {
             EMBER_CHECK_VALUE(store != nullptr, "[PrefixStore] store must not be None");
             return std::make_shared<d::PrefixStore>(prefix, std::move(store));
           }),
           py::arg("prefix"), py::arg("store"))
      .def_property_readonly("underlying_store", &d::PrefixStore::underlying_store);
}

void init_process_group_classes(py::module_& dm) {
  py::enum_<d::ReduceOp> op(dm, "ReduceOp", "The reduction of all_reduce, reduce, reduce_scatter");
  op.value("SUM", d::ReduceOp::SUM)
      .value("AVG", d::ReduceOp::AVG)
      .value("PRODUCT", d::ReduceOp::PRODUCT)
      .value("MIN", d::ReduceOp::MIN)
      .value("MAX", d::ReduceOp::MAX)
      .value("BAND", d::ReduceOp::BAND)
      .value("BOR", d::ReduceOp::BOR)
      .value("BXOR", d::ReduceOp::BXOR);
  // torch spells the enum ReduceOp.RedOpType.SUM as well as ReduceOp.SUM.
  op.attr("RedOpType") = op;

  py::enum_<d::DebugLevel>(dm, "DebugLevel", "EMBER_DISTRIBUTED_DEBUG / TORCH_DISTRIBUTED_DEBUG")
      .value("OFF", d::DebugLevel::Off)
      .value("INFO", d::DebugLevel::Info)
      .value("DETAIL", d::DebugLevel::Detail);
  dm.def("get_debug_level", &d::debug_level);
  dm.def("set_debug_level", &d::set_debug_level, py::arg("level"));

  py::class_<d::Work, d::WorkPtr>(dm, "Work", "A handle on a collective that may still run")
      .def(
          "wait",
          [](d::Work& w, std::optional<Ms> timeout) {
            return w.wait(timeout.value_or(d::kUnsetTimeout));
          },
          py::arg("timeout") = py::none(), Nogil())
      .def("is_completed", &d::Work::is_completed, Nogil())
      .def("is_success", &d::Work::is_success, Nogil())
      .def("exception",
           [](d::Work& w) {
             std::exception_ptr p;
             {
               py::gil_scoped_release nogil;
               p = w.exception();
             }
             return exception_object(p);
           })
      .def("result", &d::Work::result, Nogil())
      .def("source_rank", &d::Work::source_rank)
      .def("_source_rank", &d::Work::source_rank)
      .def("_name", &d::Work::name)
      .def("_sequence_number", &d::Work::sequence_number)
      .def(
          "_add_callback",
          [](d::Work& w, py::object fn) {
            auto cb = std::make_shared<PyCallback>(std::move(fn));
            py::gil_scoped_release nogil;
            w.add_callback([cb] { (*cb)(); });
          },
          py::arg("fn"))
      .def("__repr__",
           [](d::Work& w) {
             return "<ember.distributed.Work " + w.name() + " #" +
                    std::to_string(w.sequence_number()) +
                    (w.is_completed() ? " (completed)>" : " (running)>");
           })
      .def("get_future", [](const d::WorkPtr& w) {
        return py::module_::import("ember.futures").attr("_from_work")(w);
      });

  py::class_<d::ProcessGroup, d::ProcessGroupPtr>(dm, "ProcessGroup",
                                                  "A set of ranks that run collectives together")
      .def("__repr__",
           [](const d::ProcessGroup& g) {
             return "<ember.distributed.ProcessGroup " + g.backend_name() + ", rank " +
                    std::to_string(g.rank()) + " of " + std::to_string(g.size()) + ">";
           })
      .def("rank", &d::ProcessGroup::rank)
      .def("size", &d::ProcessGroup::size)
      .def("name", &d::ProcessGroup::backend_name)
      .def("_get_backend_name", &d::ProcessGroup::backend_name)
      .def_property_readonly("backend", &d::ProcessGroup::backend_name)
      .def_property_readonly("timeout", &d::ProcessGroup::timeout)
      .def("_get_sequence_number_for_group", &d::ProcessGroup::sequence_number)
      // The lower-level calls on one group (group ranks, lists of tensors), as torch's
      // ProcessGroup methods.
      .def(
          "allreduce",
          [](d::ProcessGroup& g, std::vector<Tensor> tensors, d::ReduceOp op) {
            d::AllreduceOptions o;
            o.reduce_op = op;
            return g.allreduce(tensors, o);
          },
          py::arg("tensors"), py::arg("op") = d::ReduceOp::SUM, Nogil())
      .def(
          "broadcast",
          [](d::ProcessGroup& g, std::vector<Tensor> tensors, int root) {
            d::BroadcastOptions o;
            o.root_rank = root;
            return g.broadcast(tensors, o);
          },
          py::arg("tensors"), py::arg("root") = 0, Nogil())
      .def(
          "barrier", [](d::ProcessGroup& g) { return g.barrier(); }, Nogil());

  dm.def(
      "_new_gloo_group",
      [](std::shared_ptr<d::Store> store, int rank, int size, Ms timeout) {
        d::ProcessGroupGlooOptions o;
        o.timeout = timeout;
        return d::make_gloo_process_group(store, rank, size, o);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"), Nogil());
  dm.def("is_backend_available", &d::is_backend_available, py::arg("backend"));
}

void init_front_end(py::module_& dm) {
  dm.def(
      "init_process_group",
      [](const std::string& backend, const std::string& init_method, int rank, int world_size,
         Ms timeout, std::shared_ptr<d::Store> store, const std::string& group_name) {
        d::InitOptions o;
        o.init_method = init_method;
        o.rank = rank;
        o.world_size = world_size;
        o.timeout = timeout;
        o.store = std::move(store);
        o.group_name = group_name;
        d::init_process_group(backend, o);
      },
      py::arg("backend"), py::arg("init_method"), py::arg("rank"), py::arg("world_size"),
      py::arg("timeout"), py::arg("store"), py::arg("group_name"), Nogil());
  dm.def(
      "destroy_process_group", [](d::ProcessGroupPtr g) { d::destroy_process_group(g); },
      group_arg(), Nogil());
  dm.def("is_initialized", &d::is_initialized);
  dm.def("default_group", &d::default_group);
  dm.def("default_store", &d::default_store);
  dm.def("get_rank", &d::get_rank, group_arg());
  dm.def("get_world_size", &d::get_world_size, group_arg());
  dm.def("get_backend", &d::get_backend, group_arg());
  dm.def(
      "new_group",
      [](std::vector<int> ranks, std::optional<Ms> timeout) {
        return d::new_group(std::move(ranks), timeout.value_or(d::kUnsetTimeout));
      },
      py::arg("ranks"), py::arg("timeout") = py::none(), Nogil());
  dm.def("get_process_group_ranks", &d::get_process_group_ranks, py::arg("group"));
  dm.def("get_group_rank", &d::get_group_rank, py::arg("group"), py::arg("global_rank"));
  dm.def("get_global_rank", &d::get_global_rank, py::arg("group"), py::arg("group_rank"));

  dm.def(
      "broadcast",
      [](Tensor& t, int src, d::ProcessGroupPtr g, bool async_op) {
        return d::broadcast(t, src, g, async_op);
      },
      py::arg("tensor"), py::arg("src"), group_arg(), async_arg(), Nogil());
  dm.def(
      "all_reduce",
      [](Tensor& t, d::ReduceOp op, d::ProcessGroupPtr g, bool async_op) {
        return d::all_reduce(t, op, g, async_op);
      },
      py::arg("tensor"), py::arg("op"), group_arg(), async_arg(), Nogil());
  dm.def(
      "reduce",
      [](Tensor& t, int dst, d::ReduceOp op, d::ProcessGroupPtr g, bool async_op) {
        return d::reduce(t, dst, op, g, async_op);
      },
      py::arg("tensor"), py::arg("dst"), py::arg("op"), group_arg(), async_arg(), Nogil());
  dm.def(
      "all_gather",
      [](std::vector<Tensor> out, const Tensor& t, d::ProcessGroupPtr g, bool async_op) {
        return d::all_gather(out, t, g, async_op);
      },
      py::arg("tensor_list"), py::arg("tensor"), group_arg(), async_arg(), Nogil());
  dm.def(
      "all_gather_into_tensor",
      [](Tensor& out, const Tensor& t, d::ProcessGroupPtr g, bool async_op) {
        return d::all_gather_into_tensor(out, t, g, async_op);
      },
      py::arg("output_tensor"), py::arg("input_tensor"), group_arg(), async_arg(), Nogil());
  dm.def(
      "gather",
      [](const Tensor& t, std::optional<std::vector<Tensor>> list, int dst, d::ProcessGroupPtr g,
         bool async_op) { return d::gather(t, list ? &*list : nullptr, dst, g, async_op); },
      py::arg("tensor"), py::arg("gather_list"), py::arg("dst"), group_arg(), async_arg(), Nogil());
  dm.def(
      "scatter",
      [](Tensor& t, std::optional<std::vector<Tensor>> list, int src, d::ProcessGroupPtr g,
         bool async_op) { return d::scatter(t, list ? &*list : nullptr, src, g, async_op); },
      py::arg("tensor"), py::arg("scatter_list"), py::arg("src"), group_arg(), async_arg(),
      Nogil());
  dm.def(
      "reduce_scatter",
      [](Tensor& out, const std::vector<Tensor>& in, d::ReduceOp op, d::ProcessGroupPtr g,
         bool async_op) { return d::reduce_scatter(out, in, op, g, async_op); },
      py::arg("output"), py::arg("input_list"), py::arg("op"), group_arg(), async_arg(), Nogil());
  dm.def(
      "reduce_scatter_tensor",
      [](Tensor& out, const Tensor& in, d::ReduceOp op, d::ProcessGroupPtr g, bool async_op) {
        return d::reduce_scatter_tensor(out, in, op, g, async_op);
      },
      py::arg("output"), py::arg("input"), py::arg("op"), group_arg(), async_arg(), Nogil());
  dm.def(
      "all_to_all",
      [](std::vector<Tensor> out, const std::vector<Tensor>& in, d::ProcessGroupPtr g,
         bool async_op) { return d::all_to_all(out, in, g, async_op); },
      py::arg("output_tensor_list"), py::arg("input_tensor_list"), group_arg(), async_arg(),
      Nogil());
  dm.def(
      "all_to_all_single",
      [](Tensor& out, const Tensor& in, std::vector<int64_t> out_splits,
         std::vector<int64_t> in_splits, d::ProcessGroupPtr g, bool async_op) {
        return d::all_to_all_single(out, in, std::move(out_splits), std::move(in_splits), g,
                                    async_op);
      },
      py::arg("output"), py::arg("input"), py::arg("output_split_sizes"),
      py::arg("input_split_sizes"), group_arg(), async_arg(), Nogil());
  dm.def(
      "barrier", [](d::ProcessGroupPtr g, bool async_op) { return d::barrier(g, async_op); },
      group_arg(), async_arg(), Nogil());
  dm.def(
      "monitored_barrier",
      [](d::ProcessGroupPtr g, std::optional<Ms> timeout, bool wait_all_ranks) {
        d::monitored_barrier(g, timeout.value_or(d::kUnsetTimeout), wait_all_ranks);
      },
      group_arg(), py::arg("timeout") = py::none(), py::arg("wait_all_ranks") = false, Nogil());
  dm.def(
      "send",
      [](const Tensor& t, int dst, d::ProcessGroupPtr g, int tag) { d::send(t, dst, g, tag); },
      py::arg("tensor"), py::arg("dst"), group_arg(), py::arg("tag") = 0, Nogil());
  dm.def(
      "recv",
      [](Tensor& t, int src, d::ProcessGroupPtr g, int tag) { return d::recv(t, src, g, tag); },
      py::arg("tensor"), py::arg("src") = -1, group_arg(), py::arg("tag") = 0, Nogil());
  dm.def(
      "isend",
      [](const Tensor& t, int dst, d::ProcessGroupPtr g, int tag) {
        return d::isend(t, dst, g, tag);
      },
      py::arg("tensor"), py::arg("dst"), group_arg(), py::arg("tag") = 0, Nogil());
  dm.def(
      "irecv",
      [](Tensor& t, int src, d::ProcessGroupPtr g, int tag) { return d::irecv(t, src, g, tag); },
      py::arg("tensor"), py::arg("src") = -1, group_arg(), py::arg("tag") = 0, Nogil());
  // ops: (is_send, tensor, peer, group, tag) tuples.
  dm.def(
      "batch_isend_irecv",
      [](const std::vector<std::tuple<bool, Tensor, int, d::ProcessGroupPtr, int>>& ops) {
        std::vector<d::P2POp> v;
        v.reserve(ops.size());
        for (const auto& [is_send, t, peer, g, tag] : ops)
          v.push_back(d::P2POp{is_send ? d::P2POp::kSend : d::P2POp::kRecv, t, peer, g, tag});
        return d::batch_isend_irecv(v);
      },
      py::arg("ops"), Nogil());

  // Object collectives: the Python side pickles; here objects are byte strings.
  dm.def(
      "all_gather_object",
      [](const py::bytes& obj, d::ProcessGroupPtr g) {
        std::string s = obj;
        std::vector<std::string> out;
        {
          py::gil_scoped_release nogil;
          out = d::all_gather_object(s, g);
        }
        py::list l;
        for (const auto& o : out) l.append(to_py_bytes(o));
        return l;
      },
      py::arg("obj"), group_arg());
  dm.def(
      "broadcast_object_list",
      [](const std::vector<py::bytes>& objs, int src, d::ProcessGroupPtr g) {
        std::vector<std::string> v;
        for (const auto& o : objs) v.push_back(o);
        {
          py::gil_scoped_release nogil;
          d::broadcast_object_list(v, src, g);
        }
        py::list l;
        for (const auto& o : v) l.append(to_py_bytes(o));
        return l;
      },
      py::arg("objs"), py::arg("src"), group_arg());
  dm.def(
      "scatter_object_list",
      [](const std::vector<py::bytes>& objs, int src, d::ProcessGroupPtr g) {
        std::vector<std::string> v;
        for (const auto& o : objs) v.push_back(o);
        std::string out;
        {
          py::gil_scoped_release nogil;
          out = d::scatter_object_list(v, src, g);
        }
        return to_py_bytes(out);
      },
      py::arg("objs"), py::arg("src"), group_arg());
  dm.def(
      "gather_object",
      [](const py::bytes& obj, int dst, d::ProcessGroupPtr g) {
        std::string s = obj;
        std::vector<std::string> out;
        {
          py::gil_scoped_release nogil;
          out = d::gather_object(s, dst, g);
        }
        py::list l;
        for (const auto& o : out) l.append(to_py_bytes(o));
        return l;
      },
      py::arg("obj"), py::arg("dst"), group_arg());
}

}  // namespace

void init_distributed(py::module_& m) {
  auto dm = m.def_submodule("_distributed", "ember.distributed: process groups and collectives");
  dist_error = new_exception(dm, "DistError", PyExc_RuntimeError,
                             "A distributed operation failed (a RuntimeError).");
  dist_backend_error = new_exception(dm, "DistBackendError", dist_error,
                                     "A collective failed: a peer died, a timeout, a desync.");
  dist_store_error =
      new_exception(dm, "DistStoreError", dist_error, "A store operation failed or timed out.");
  dist_network_error = new_exception(dm, "DistNetworkError", dist_error,
                                     "A connection could not be made or was lost.");
  // Registered after module.cpp's translator, so tried before it: the distributed errors get
  // their own classes, everything else falls through.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const d::DistError&) {
      set_error_from(std::current_exception());
    }
  });
  init_stores(dm);
  init_process_group_classes(dm);
  init_front_end(dm);
  init_distributed_ddp(dm);
  init_distributed_run(dm);
}

}  // namespace ember::python
