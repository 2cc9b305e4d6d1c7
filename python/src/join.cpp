// cat / stack and the h/v/d/column stacks, atleast_Nd; tril / triu.
#include "pyember.h"

namespace ember::python {
namespace {

std::vector<Tensor> tensor_list(py::handle seq, const char* fn) {
  EMBER_CHECK_TYPE(PyList_Check(seq.ptr()) || PyTuple_Check(seq.ptr()), fn,
                   "(): argument 'tensors' must be tuple of Tensors, not ",
                   Py_TYPE(seq.ptr())->tp_name);
  std::vector<Tensor> out;
  for (py::handle h : seq) {
    EMBER_CHECK_TYPE(is_tensor(h.ptr()), fn, "(): expected Tensor as element ", out.size(),
                     " in argument 'tensors', but got ", Py_TYPE(h.ptr())->tp_name);
    out.push_back(unwrap(h.ptr()));
  }
  return out;
}

/// Runs a join into `out` (when given: the same Python object is returned) or a new tensor.
py::object joined(py::handle out, const std::vector<Tensor>& ts,
                  Tensor (*fn)(ArrayRef<Tensor>), const char* name) {
  int64_t numel = 0;
  for (const Tensor& t : ts) numel += t.numel();
  Tensor r = maybe_without_gil(numel, [&] { return fn(ts); });
  if (out.is_none()) return wrap_obj(std::move(r));
  Tensor& o = const_cast<Tensor&>(to_tensor(out.ptr(), name, "out"));
  cat_out(o, {r}, 0);
  return py::reinterpret_borrow<py::object>(out);
}

py::object atleast(py::args args, Tensor (*fn)(const Tensor&), const char* name) {
  // atleast_1d(a) -> tensor; atleast_1d(a, b) or atleast_1d([a, b]) -> tuple
  py::handle seq = args;
  if (args.size() == 1 && !is_tensor(args[0].ptr())) seq = args[0];
  if (args.size() == 1 && is_tensor(args[0].ptr())) return wrap_obj(fn(unwrap(args[0].ptr())));
  std::vector<Tensor> ts = tensor_list(seq, name);
  py::tuple r(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) r[i] = wrap_obj(fn(ts[i]));
  return std::move(r);
}

}  // namespace

void init_join(py::module_& m) {
  using py::arg;
  for (const char* name : {"cat", "concat"}) {
    m.def(name, [name](py::handle tensors, int64_t dim, py::handle out) -> py::object {
      std::vector<Tensor> ts = tensor_list(tensors, name);
      int64_t numel = 0;
      for (const Tensor& t : ts) numel += t.numel();
      if (out.is_none()) return wrap_obj(maybe_without_gil(numel, [&] { return cat(ts, dim); }));
      Tensor& o = const_cast<Tensor&>(to_tensor(out.ptr(), name, "out"));
      maybe_without_gil(numel, [&] { return &cat_out(o, ts, dim); });
      return py::reinterpret_borrow<py::object>(out);
    }, arg("tensors"), arg("dim") = 0, py::kw_only(), arg("out") = py::none());
  }
  m.def("stack", [](py::handle tensors, int64_t dim, py::handle out) -> py::object {
    std::vector<Tensor> ts = tensor_list(tensors, "stack");
    if (out.is_none()) return wrap_obj(stack(ts, dim));
    stack_out(const_cast<Tensor&>(to_tensor(out.ptr(), "stack", "out")), ts, dim);
    return py::reinterpret_borrow<py::object>(out);
  }, arg("tensors"), arg("dim") = 0, py::kw_only(), arg("out") = py::none());
  struct Named {
    const char* name;
    Tensor (*fn)(ArrayRef<Tensor>);
  };
  for (Named n : {Named{"hstack", &hstack}, Named{"vstack", &vstack}, Named{"row_stack", &vstack},
                  Named{"dstack", &dstack}, Named{"column_stack", &column_stack}}) {
    m.def(n.name, [n](py::handle tensors, py::handle out) {
      return joined(out, tensor_list(tensors, n.name), n.fn, n.name);
    }, arg("tensors"), py::kw_only(), arg("out") = py::none());
  }
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));
  for (bool lower : {true, false}) {
    const char* name = lower ? "tril" : "triu";
    auto fn = lower ? &tril : &triu;
    auto fn_out = lower ? &tril_out : &triu_out;
    auto fn_ = lower ? &tril_ : &triu_;
    m.def(name, [fn, fn_out, name](const Tensor& x, int64_t k, py::handle out) -> py::object {
      if (out.is_none()) return wrap_obj(maybe_without_gil(x.numel(), [&] { return fn(x, k); }));
      fn_out(const_cast<Tensor&>(to_tensor(out.ptr(), name, "out")), x, k);
      return py::reinterpret_borrow<py::object>(out);
    }, arg("input"), arg("diagonal") = 0, py::kw_only(), arg("out") = py::none());
    cls.def(name, [fn](const Tensor& x, int64_t k) { return fn(x, k); }, arg("diagonal") = 0);
    cls.def(lower ? "tril_" : "triu_", [fn_](py::handle self, int64_t k) {
      fn_(unwrap(self.ptr()), k);
      return py::reinterpret_borrow<py::object>(self);
    }, arg("diagonal") = 0);
  }
  m.def("atleast_1d", [](py::args a) { return atleast(a, &atleast_1d, "atleast_1d"); });
  m.def("atleast_2d", [](py::args a) { return atleast(a, &atleast_2d, "atleast_2d"); });
  m.def("atleast_3d", [](py::args a) { return atleast(a, &atleast_3d, "atleast_3d"); });
}

}  // namespace ember::python
