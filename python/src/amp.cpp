// The binding of automatic mixed precision: torch's top-level autocast state functions
// (is_autocast_enabled, set_autocast_cpu_dtype, autocast_increment_nesting, ...), the float32
// matmul precision, and the gradient scaling ops, all on _C itself so that `from ember._C import *`
// makes them ember.X.
#include <string>

#include "ember/amp.h"
#include "ember/context.h"
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

ScalarType dtype_arg(py::handle o, const char* fn) {
  if (!is_dtype(o.ptr()))
    throw py::type_error(std::string("dtype must be a ember.dtype (got ") +
                         Py_TYPE(o.ptr())->tp_name + ")");
  return *to_dtype(o.ptr(), fn);
}

bool bool_arg(py::handle o, const char* fn) {
  if (!PyBool_Check(o.ptr()))
    throw py::type_error(std::string(fn) + "(): argument 'enabled' must be bool, not " +
                         Py_TYPE(o.ptr())->tp_name);
  return o.ptr() == Py_True;
}

}  // namespace

void init_amp(py::module_& m) {
  namespace ac = ember::autocast;

  m.def(
      "is_autocast_enabled", [] { return ac::is_enabled(kCUDA); },
      "Whether CUDA autocast is enabled on this thread.");
  m.def(
      "set_autocast_enabled",
      [](py::handle on) { ac::set_enabled(kCUDA, bool_arg(on, "set_autocast_enabled")); },
      arg("enabled"), "Enables or disables CUDA autocast on this thread.");
  m.def(
      "is_autocast_cpu_enabled", [] { return ac::is_enabled(kCPU); },
      "Whether CPU autocast is enabled on this thread.");
  m.def(
      "set_autocast_cpu_enabled",
      [](py::handle on) { ac::set_enabled(kCPU, bool_arg(on, "set_autocast_cpu_enabled")); },
      arg("enabled"), "Enables or disables CPU autocast on this thread.");
  m.def(
      "get_autocast_cpu_dtype", [] { return ac::get_autocast_dtype(kCPU); },
      "The lower-precision dtype of CPU autocast (bfloat16 by default).");
  m.def(
      "set_autocast_cpu_dtype",
      [](py::handle d) { ac::set_autocast_dtype(kCPU, dtype_arg(d, "set_autocast_cpu_dtype")); },
      arg("dtype"), "Sets the lower-precision dtype of CPU autocast (bfloat16 or float16).");
  m.def(
      "get_autocast_gpu_dtype", [] { return ac::get_autocast_dtype(kCUDA); },
      "The lower-precision dtype of CUDA autocast (float16 by default).");
  m.def(
      "set_autocast_gpu_dtype",
      [](py::handle d) { ac::set_autocast_dtype(kCUDA, dtype_arg(d, "set_autocast_gpu_dtype")); },
      arg("dtype"), "Sets the lower-precision dtype of CUDA autocast.");
  m.def(
      "autocast_increment_nesting", [] { return ac::increment_nesting(); },
      "Counts one more autocast region on this thread; returns the count.");
  m.def(
      "autocast_decrement_nesting", [] { return ac::decrement_nesting(); },
      "Counts one autocast region less on this thread; returns the count.");
  m.def(
      "clear_autocast_cache", [] { ac::clear_cache(); },
      "Drops this thread's cached weight casts.");
  m.def(
      "is_autocast_cache_enabled", [] { return ac::is_autocast_cache_enabled(); },
      "Whether autocast caches the casts of weights on this thread.");
  m.def(
      "set_autocast_cache_enabled",
      [](py::handle on) {
        ac::set_autocast_cache_enabled(bool_arg(on, "set_autocast_cache_enabled"));
      },
      arg("enabled"), "Turns autocast's weight cast cache on or off on this thread.");

  m.def(
      "get_float32_matmul_precision", [] { return std::string(get_float32_matmul_precision()); },
      "The internal precision of float32 matrix products: 'highest', 'high' or 'medium'.");
  m.def(
      "set_float32_matmul_precision",
      [](py::handle precision) {
        if (!PyUnicode_Check(precision.ptr()))
          throw std::runtime_error(
              std::string("set_float32_matmul_precision expects a str, but got ") +
              Py_TYPE(precision.ptr())->tp_name);
        std::string p = py::cast<std::string>(precision);
        // As PyTorch: an unknown value warns and changes nothing.
        if (p != "highest" && p != "high" && p != "medium") {
          std::string msg = p +
                            " is not one of 'highest', 'high', or 'medium'; the current "
                            "set_float32_matmul_precision call has no effect.";
          if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw py::error_already_set();
          return;
        }
        set_float32_matmul_precision(p.c_str());
      },
      arg("precision"),
      "Sets the internal precision of float32 matrix products ('highest', 'high', 'medium').");

  m.def(
      "_amp_foreach_non_finite_check_and_unscale_",
      [](py::handle self, py::handle found_inf, py::handle inv_scale) {
        const char* fn = "_amp_foreach_non_finite_check_and_unscale_";
        if (is_tensor(self.ptr()) || !py::isinstance<py::sequence>(self))
          throw py::type_error(std::string(fn) +
                               "(): argument 'self' must be a sequence of Tensors, not " +
                               Py_TYPE(self.ptr())->tp_name);
        std::vector<Tensor> ts;
        for (py::handle h : py::reinterpret_borrow<py::sequence>(self))
          ts.push_back(to_tensor(h.ptr(), fn, "self"));
        Tensor& found = const_cast<Tensor&>(to_tensor(found_inf.ptr(), fn, "found_inf"));
        const Tensor& inv = to_tensor(inv_scale.ptr(), fn, "inv_scale");
        _amp_foreach_non_finite_check_and_unscale_(ts, found, inv);
      },
      arg("self"), arg("found_inf"), arg("inv_scale"),
      "Sets found_inf to 1 when a tensor of self holds inf/NaN and multiplies each by inv_scale "
      "in place.");
  m.def(
      "_amp_update_scale_",
      [](py::object self, py::handle growth_tracker, py::handle found_inf, double growth,
         double backoff, int64_t interval) {
        const char* fn = "_amp_update_scale_";
        Tensor& s = const_cast<Tensor&>(to_tensor(self.ptr(), fn, "self"));
        Tensor& g = const_cast<Tensor&>(to_tensor(growth_tracker.ptr(), fn, "growth_tracker"));
        _amp_update_scale_(s, g, to_tensor(found_inf.ptr(), fn, "found_inf"), growth, backoff,
                           interval);
        return self;
      },
      arg("self"), arg("growth_tracker"), arg("found_inf"), arg("scale_growth_factor"),
      arg("scale_backoff_factor"), arg("growth_interval"),
      "Updates the loss scale and the growth tracker in place after a step; returns self.");
}

}  // namespace ember::python
