// DistributedDataParallel's reducer for Python (ember.nn.parallel.DistributedDataParallel), as
// torch's dist.Reducer: the Python module calls prepare_for_backward after each forward and
// the C++ hooks do the rest during backward.
//
// Note [Reducer and the GIL]
// Backward runs with the GIL released (python/src/autograd.cpp), so the reducer's hooks and
// the built-in comm hooks never touch Python. A Python comm hook takes the GIL to run and to
// wait for its future; every Python object the reducer holds is kept through GilRef, which
// takes the GIL to drop its reference (the C++ side may drop it without holding the GIL).
#include "ember/nn/parallel/distributed.h"
#include "pyember.h"

namespace ember::python {

namespace {

namespace d = ember::distributed;

struct GilRef {
  py::object obj;
  explicit GilRef(py::object o) : obj(std::move(o)) {}
  ~GilRef() {
    if (!Py_IsInitialized()) {
      obj.release();
      return;
    }
    py::gil_scoped_acquire gil;
    obj = py::object();
  }
};

// The tensor a comm hook's future resolved to: a Tensor, or the first of a list (what an
// all_reduce work's future holds).
Tensor future_tensor(py::handle v) {
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    auto seq = py::reinterpret_borrow<py::sequence>(v);
    if (py::len(seq) == 0)
      throw TypeError("[DistributedDataParallel] the comm hook's future holds an empty list");
    return future_tensor(seq[0]);
  }
  if (!is_tensor(v.ptr()))
    throw TypeError(std::string("[DistributedDataParallel] a comm hook must return a Future "
                                "whose value is a Tensor (the reduced bucket), got ") +
                    std::string(py::str(py::type::of(v).attr("__name__"))));
  return unwrap(v.ptr());
}

d::CommHook python_comm_hook(py::object state, py::object hook) {
  auto st = std::make_shared<GilRef>(std::move(state));
  auto fn = std::make_shared<GilRef>(std::move(hook));
  return [st, fn](d::GradBucket& bucket) {
    py::gil_scoped_acquire gil;
    py::object fut = fn->obj(st->obj, bucket);
    if (!py::hasattr(fut, "wait"))
      throw TypeError(std::string("[DistributedDataParallel] a comm hook must return a "
                                  "Future (ember.futures.Future), got ") +
                      std::string(py::str(py::type::of(fut).attr("__name__"))));
    auto ref = std::make_shared<GilRef>(std::move(fut));
    return d::CommFuture::deferred([ref]() {
      py::gil_scoped_acquire g;
      py::object v = ref->obj.attr("wait")();
      return future_tensor(v);
    });
  };
}

}  // namespace

void init_distributed_ddp(py::module_& dm) {
  py::class_<d::GradBucket>(dm, "GradBucket",
                            "One bucket of gradients handed to a DDP communication hook")
      .def("index", &d::GradBucket::index)
      .def("buffer", &d::GradBucket::buffer)
      .def("gradients", &d::GradBucket::gradients)
      .def("parameters", &d::GradBucket::parameters)
      .def("is_last", &d::GradBucket::is_last)
      .def("set_buffer", &d::GradBucket::set_buffer, py::arg("buffer"))
      .def("__repr__", [](const d::GradBucket& b) {
        return "<GradBucket index=" + std::to_string(b.index()) +
               " numel=" + std::to_string(b.buffer().numel()) + ">";
      });

  py::class_<d::Reducer, std::shared_ptr<d::Reducer>>(
      dm, "Reducer", "Averages gradients across a process group during backward")
      .def(py::init([](std::vector<Tensor> params, d::ProcessGroupPtr pg, int64_t bucket_cap,
                       int64_t first_bucket, bool find_unused, bool as_view, bool static_graph,
                       std::vector<std::string> names) {
             d::ReducerOptions o;
             o.bucket_cap_bytes = bucket_cap;
             o.first_bucket_bytes = first_bucket;
             o.find_unused_parameters = find_unused;
             o.gradient_as_bucket_view = as_view;
             o.static_graph = static_graph;
             o.param_names = std::move(names);
             return std::make_shared<d::Reducer>(std::move(params), std::move(pg), o);
           }),
           py::arg("params"), py::arg("process_group"),
           py::arg("bucket_cap_bytes") = int64_t(25) * 1024 * 1024,
           py::arg("first_bucket_bytes") = int64_t(1024) * 1024,
           py::arg("find_unused_parameters") = false, py::arg("gradient_as_bucket_view") = false,
           py::arg("static_graph") = false, py::arg("param_names") = std::vector<std::string>{})
      .def_static("_compute_bucket_assignment_by_size", &d::Reducer::compute_bucket_assignment,
                  py::arg("params"), py::arg("first_bucket_bytes"), py::arg("bucket_cap_bytes"))
      .def("prepare_for_backward", &d::Reducer::prepare_for_backward, py::arg("outputs"))
      .def(
          "register_comm_hook",
          [](d::Reducer& r, py::object state, py::object hook) {
            r.register_comm_hook(python_comm_hook(std::move(state), std::move(hook)));
          },
          py::arg("state"), py::arg("hook"))
      .def(
          "_register_builtin_comm_hook",
          [](d::Reducer& r, const std::string& kind, d::ProcessGroupPtr pg) {
            if (!pg) pg = r.process_group();
            if (kind == "allreduce")
              r.register_comm_hook(d::allreduce_hook(pg));
            else if (kind == "fp16_compress")
              r.register_comm_hook(d::fp16_compress_hook(pg));
            else if (kind == "bf16_compress")
              r.register_comm_hook(d::bf16_compress_hook(pg));
            else
              throw ValueError("[register_builtin_comm_hook] unknown hook '" + kind +
                               "'; expected allreduce, fp16_compress or bf16_compress");
          },
          py::arg("kind"), py::arg("process_group") = py::none())
      .def_property_readonly("_has_comm_hook", &d::Reducer::has_comm_hook)
      .def("_set_div_factor", &d::Reducer::set_div_factor, py::arg("div_factor"))
      .def("_join_shadow_backward", &d::Reducer::join_shadow_backward,
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("bucket_indices", &d::Reducer::bucket_indices)
      .def("_bucket_buffer", &d::Reducer::bucket_buffer, py::arg("index"))
      .def("_stats", [](const d::Reducer& r) {
        const auto& s = r.stats();
        py::dict out;
        out["num_buckets"] = s.num_buckets;
        out["buckets_launched_during_backward"] = s.buckets_launched_during_backward;
        out["buckets_done_before_finalize"] = s.buckets_done_before_finalize;
        out["iterations"] = s.iterations;
        return out;
      });

  dm.def(
      "_verify_params_across_processes",
      [](d::ProcessGroupPtr pg, const std::vector<Tensor>& params) {
        nn::parallel::detail::verify_param_shapes_across_processes(params, pg);
      },
      py::arg("process_group"), py::arg("params"), py::call_guard<py::gil_scoped_release>());
  dm.def(
      "_broadcast_coalesced",
      [](d::ProcessGroupPtr pg, const std::vector<Tensor>& tensors, int src) {
        nn::parallel::detail::broadcast_coalesced(tensors, pg, src);
      },
      py::arg("process_group"), py::arg("tensors"), py::arg("src") = 0,
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace ember::python
