// The binding of complex constructors and views (view_as_real, view_as_complex, complex, polar,
// angle) and of Tensor.angle / Tensor.chalf.
#include "ember/complex_ops.h"

#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

/// Returns `r`, or writes it into `out` through `fn` and returns the out object itself.
template <class F>
py::object with_out(py::handle out, const char* op, F&& fn) {
  if (out.is_none()) return wrap_obj(fn(nullptr));
  Tensor& o = const_cast<Tensor&>(to_tensor(out.ptr(), op, "out"));
  fn(&o);
  return py::reinterpret_borrow<py::object>(out);
}

const Tensor& tensor_arg(py::handle h, const char* fn, const char* name, int pos) {
  EMBER_CHECK_TYPE(is_tensor(h.ptr()), fn, "(): argument '", name, "' (position ", pos,
                   ") must be Tensor, not ", Py_TYPE(h.ptr())->tp_name);
  return unwrap(h.ptr());
}

py::object complex_call(py::handle real, py::handle imag, py::handle out) {
  const Tensor& re = tensor_arg(real, "complex", "real", 1);
  const Tensor& im = tensor_arg(imag, "complex", "imag", 2);
  return with_out(out, "complex", [&](Tensor* o) {
    return o ? make_complex_out(*o, re, im) : make_complex(re, im);
  });
}

py::object polar_call(py::handle abs, py::handle angle, py::handle out) {
  const Tensor& r = tensor_arg(abs, "polar", "abs", 1);
  const Tensor& theta = tensor_arg(angle, "polar", "angle", 2);
  return with_out(out, "polar",
                  [&](Tensor* o) { return o ? polar_out(*o, r, theta) : polar(r, theta); });
}

py::object angle_call(py::handle input, py::handle out) {
  const Tensor& x = tensor_arg(input, "angle", "input", 1);
  return with_out(out, "angle", [&](Tensor* o) { return o ? angle_out(*o, x) : ember::angle(x); });
}

}  // namespace

void init_complex(py::module_& m) {
  m.def(
      "view_as_real",
      [](py::handle x) { return view_as_real(tensor_arg(x, "view_as_real", "input", 1)); },
      arg("input"), "A float view of a complex tensor with a trailing dim of size 2.");
  m.def(
      "view_as_complex",
      [](py::handle x) { return view_as_complex(tensor_arg(x, "view_as_complex", "input", 1)); },
      arg("input"), "The complex view of a float tensor whose last dim holds (real, imag).");
  m.def("complex", &complex_call, arg("real"), arg("imag"), py::kw_only(), arg("out") = py::none(),
        "real + i imag from two tensors of one float dtype.");
  m.def("polar", &polar_call, arg("abs"), arg("angle"), py::kw_only(), arg("out") = py::none(),
        "abs * (cos(angle) + i sin(angle)).");
  m.def("angle", &angle_call, arg("input"), py::kw_only(), arg("out") = py::none(),
        "The argument of each element (0 or pi for real inputs).");

  py::object T = m.attr("Tensor");
  T.attr("angle") =
      py::cpp_function([](py::handle self) { return ember::angle(unwrap(self.ptr())); },
                       py::is_method(T), py::name("angle"));
  T.attr("chalf") = py::cpp_function(
      [](py::handle self, py::handle memory_format) {
        py::object to = py::reinterpret_borrow<py::object>(self).attr("to");
        py::object dt = py::reinterpret_borrow<py::object>(dtype_object(kComplexHalf));
        if (memory_format.is_none()) return to(dt);
        return to(dt, py::arg("memory_format") = memory_format);
      },
      py::is_method(T), py::name("chalf"), py::kw_only(), arg("memory_format") = py::none());
}

}  // namespace ember::python
