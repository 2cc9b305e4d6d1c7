// ember.cuda's C++ side: devices, streams, events, the caching allocator, pinned memory and
// CUDA Graphs (ember/cuda.h), as _C._cuda. python/ember/cuda/ builds torch.cuda's API on it.
#include <cstdint>
#include <memory>
#include <string>

#include "core/cuda_hooks.h"
#include "ember/cuda.h"
#include "ember/generator.h"
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;
namespace ec = ember::cuda;

// Handles cross into Python as ints (torch's Stream.cuda_stream, Event.cuda_event).
int64_t handle_int(void* p) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(p)); }

// A mempool id crosses as a (a, b) tuple, as torch.cuda.graph_pool_handle()'s value.
py::tuple pool_tuple(const ec::MempoolId& id) { return py::make_tuple(id.a, id.b); }
ec::MempoolId pool_from(py::handle o) {
  ec::MempoolId id;
  if (o.is_none()) return id;
  auto t = py::cast<py::tuple>(o);
  if (t.size() != 2) type_error("[cuda.graph] pool must be a value of graph_pool_handle()");
  id.a = py::cast<uint64_t>(t[0]);
  id.b = py::cast<uint64_t>(t[1]);
  return id;
}

void bind_devices(py::module_& c) {
  c.def("is_available", [] { return ember::cuda_is_available(); });
  c.def("device_count", [] { return ember::cuda_device_count(); });
  c.def(
      "load_error", [] { return ec::cuda_load_error(); },
      "Why libember_cuda.so did not load or found no GPU (\"\" when it did).");
  c.def("current_device", [] { return ec::current_device(); });
  c.def(
      "set_device", [](int i) { ec::set_device(i); }, arg("device"));
  c.def(
      "exchange_device",
      [](int i) {
        // Selects `i` and returns the previous device (RuntimeError without a GPU).
        if (!ember::cuda_is_available()) ec::no_cuda("cuda.device");
        const int prev = ec::current_device();
        if (i != prev) ec::set_device(i);
        return prev;
      },
      arg("device"));
  c.def(
      "synchronize",
      [](int d) {
        py::gil_scoped_release nogil;
        ec::synchronize(d);
      },
      arg("device") = -1);
  c.def(
      "manual_seed", [](uint64_t s) { ec::manual_seed(s); }, arg("seed"));
  c.def(
      "manual_seed_all", [](uint64_t s) { ec::manual_seed_all(s); }, arg("seed"));
  c.def(
      "default_generator",
      [](int index) { return default_generator(Device(kCUDA, int8_t(index < 0 ? 0 : index))); },
      arg("device") = -1);
  c.def(
      "mem_get_info", [](int d) { return ec::mem_get_info(d); }, arg("device") = -1);
  c.def(
      "get_device_capability", [](int d) { return ec::get_device_capability(d); },
      arg("device") = -1);
  c.def(
      "get_device_name", [](int d) { return ec::get_device_name(d); }, arg("device") = -1);

  py::class_<ec::DeviceProperties>(c, "DeviceProperties")
      .def_readonly("name", &ec::DeviceProperties::name)
      .def_readonly("major", &ec::DeviceProperties::major)
      .def_readonly("minor", &ec::DeviceProperties::minor)
      .def_readonly("total_memory", &ec::DeviceProperties::total_memory)
      .def_readonly("multi_processor_count", &ec::DeviceProperties::multi_processor_count)
      .def_readonly("is_integrated", &ec::DeviceProperties::is_integrated)
      .def_readonly("is_multi_gpu_board", &ec::DeviceProperties::is_multi_gpu_board)
      .def_readonly("max_threads_per_multi_processor",
                    &ec::DeviceProperties::max_threads_per_multi_processor)
      .def_readonly("warp_size", &ec::DeviceProperties::warp_size)
      .def_readonly("l2_cache_size", &ec::DeviceProperties::l2_cache_size)
      .def("__repr__", [](const ec::DeviceProperties& p) {
        return "_CudaDeviceProperties(name='" + p.name + "', major=" + std::to_string(p.major) +
               ", minor=" + std::to_string(p.minor) +
               ", total_memory=" + std::to_string(p.total_memory / (1024 * 1024)) +
               "MB, multi_processor_count=" + std::to_string(p.multi_processor_count) + ")";
      });
  c.def(
      "get_device_properties", [](int d) { return ec::get_device_properties(d); },
      arg("device") = -1);
}

void bind_streams(py::module_& c) {
  py::class_<ec::Stream>(c, "Stream")
      .def(py::init([](int device, int64_t id, int64_t handle) {
             return ec::Stream(device, id, reinterpret_cast<void*>(static_cast<intptr_t>(handle)));
           }),
           arg("device"), arg("id"), arg("handle"))
      .def_property_readonly("device_index", &ec::Stream::device_index)
      .def_property_readonly("id", &ec::Stream::id)
      .def_property_readonly("handle", [](const ec::Stream& s) { return handle_int(s.stream()); })
      .def("query", &ec::Stream::query)
      .def("synchronize",
           [](const ec::Stream& s) {
             py::gil_scoped_release nogil;
             s.synchronize();
           })
      .def_property_readonly("priority", &ec::Stream::priority)
      .def("__eq__", [](const ec::Stream& a, const ec::Stream& b) { return a == b; })
      .def("__hash__",
           [](const ec::Stream& s) {
             return py::hash(py::make_tuple(s.device_index(), s.id(), handle_int(s.stream())));
           })
      .def("__repr__", [](const ec::Stream& s) {
        return "<ember._C._cuda.Stream device=cuda:" + std::to_string(s.device_index()) +
               " id=" + std::to_string(s.id()) + ">";
      });
  c.def("stream_from_pool", &ec::getStreamFromPool, arg("high_priority") = false,
        arg("device") = -1);
  c.def("create_stream", &ec::create_stream, arg("device") = -1, arg("priority") = 0);
  c.def("current_stream", &ec::getCurrentCUDAStream, arg("device") = -1);
  c.def("default_stream", &ec::getDefaultCUDAStream, arg("device") = -1);
  c.def("set_stream", &ec::setCurrentCUDAStream, arg("stream"));

  py::class_<ec::Event>(c, "Event")
      .def(py::init<bool, bool, bool>(), arg("enable_timing") = false, arg("blocking") = false,
           arg("interprocess") = false)
      .def(
          "record",
          [](ec::Event& e, py::object s) {
            if (s.is_none())
              e.record();
            else
              e.record(py::cast<const ec::Stream&>(s));
          },
          arg("stream") = py::none())
      .def(
          "block",
          [](const ec::Event& e, py::object s) {
            if (s.is_none())
              e.wait();
            else
              e.block(py::cast<const ec::Stream&>(s));
          },
          arg("stream") = py::none())
      .def("query", &ec::Event::query)
      .def("synchronize",
           [](const ec::Event& e) {
             py::gil_scoped_release nogil;
             e.synchronize();
           })
      .def("elapsed_time", &ec::Event::elapsed_time, arg("end"))
      .def_property_readonly("is_created", &ec::Event::is_created)
      .def_property_readonly("handle", [](const ec::Event& e) { return handle_int(e.event()); });
}

void bind_memory(py::module_& c) {
  c.def("memory_stats", &ec::memory_stats, arg("device") = -1);
  c.def("memory_allocated", &ec::memory_allocated, arg("device") = -1);
  c.def("max_memory_allocated", &ec::max_memory_allocated, arg("device") = -1);
  c.def("memory_reserved", &ec::memory_reserved, arg("device") = -1);
  c.def("max_memory_reserved", &ec::max_memory_reserved, arg("device") = -1);
  c.def("reset_peak_memory_stats", &ec::reset_peak_memory_stats, arg("device") = -1);
  c.def("empty_cache", &ec::empty_cache);
  c.def("memory_summary", &ec::memory_summary, arg("device") = -1, arg("abbreviated") = false);
  c.def("set_per_process_memory_fraction", &ec::set_per_process_memory_fraction, arg("fraction"),
        arg("device") = -1);
  c.def("record_stream", &ec::record_stream, arg("tensor"), arg("stream"));
  c.def(
      "pin_memory",
      [](const Tensor& t) {
        return maybe_without_gil(t.numel(), [&] { return ec::pin_memory(t); });
      },
      arg("tensor"));
  c.def("is_pinned", &ec::is_pinned, arg("tensor"));
}

void bind_graphs(py::module_& c) {
  c.def("graph_pool_handle", [] { return pool_tuple(ec::graph_pool_handle()); });
  c.def("is_current_stream_capturing", &ec::is_current_stream_capturing);
  // Held by unique_ptr: CUDAGraph is neither copyable nor movable.
  py::class_<ec::CUDAGraph, std::unique_ptr<ec::CUDAGraph>>(c, "CUDAGraph")
      .def(py::init<>())
      .def(
          "capture_begin",
          [](ec::CUDAGraph& g, py::object pool) { g.capture_begin(pool_from(pool)); },
          arg("pool") = py::none())
      .def("capture_end", &ec::CUDAGraph::capture_end)
      .def("replay",
           [](ec::CUDAGraph& g) {
             py::gil_scoped_release nogil;
             g.replay();
           })
      .def("reset", &ec::CUDAGraph::reset)
      .def("pool", [](const ec::CUDAGraph& g) { return pool_tuple(g.pool()); });
}

}  // namespace

void init_cuda(py::module_& m) {
  py::module_ c = m.def_submodule("_cuda", "CUDA runtime");
  bind_devices(c);
  bind_streams(c);
  bind_memory(c);
  bind_graphs(c);
}

}  // namespace ember::python
