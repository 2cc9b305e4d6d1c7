// Tensor.__getitem__ / __setitem__: Python index expressions to ember::indexing::TensorIndex.
#include "ember/indexing.h"
#include "pyember.h"

namespace ember::python {

Tensor tensor_from_numpy_arg(PyObject* o);  // interop.cpp
bool is_ndarray(PyObject* o);               // interop.cpp

namespace {

using indexing::Slice;
using indexing::TensorIndex;

/// ember.tensor, for list indices (looked up on first use).
py::object tensor_fn() {
  static PyObject* fn = py::object(py::module_::import("ember._C").attr("tensor")).release().ptr();
  return py::reinterpret_borrow<py::object>(fn);
}

TensorIndex tensor_index(const Tensor& t) {
  // A 0-dim integer tensor of any width is an int (through __index__); otherwise PyTorch 1.13
  // takes long, byte and bool index tensors only.
  EMBER_CHECK_INDEX(t.dtype() == kLong || t.dtype() == kByte || t.dtype() == kBool ||
                        (t.dim() == 0 && isIntegralType(t.dtype(), /*include_bool=*/false)),
                    "tensors used as indices must be long, byte or bool tensors (got ",
                    dtype_name(t.dtype()), ")");
  // 0-dim integer tensors index like Python ints; 0-dim bool and uint8 ones are masks (as
  // PyTorch's legacy byte masks) and index like Python bools.
  if (t.dim() == 0 && (t.dtype() == kBool || t.dtype() == kByte)) {
    return TensorIndex(t.item().toBool());
  }
  if (t.dim() == 0) return TensorIndex(t.item().toLong());
  return TensorIndex(t);
}

TensorIndex to_index(PyObject* o) {
  if (o == Py_None) return TensorIndex(indexing::None);
  if (o == Py_Ellipsis) return TensorIndex(indexing::Ellipsis);
  if (PyBool_Check(o)) return TensorIndex(o == Py_True);
  if (PyLong_Check(o)) return TensorIndex(to_int(o, "index", "index"));
  if (PySlice_Check(o)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(o, &start, &stop, &step) != 0) throw PythonErrorSet{};
    EMBER_CHECK_VALUE(step > 0, "step must be greater than zero");
    auto* s = reinterpret_cast<PySliceObject*>(o);
    std::optional<int64_t> b, e;
    if (s->start != Py_None) b = int64_t(start);
    if (s->stop != Py_None) e = int64_t(stop);
    return TensorIndex(Slice(b, e, int64_t(step)));
  }
  if (is_tensor(o)) return tensor_index(unwrap(o));
  if (is_ndarray(o)) return tensor_index(tensor_from_numpy_arg(o));
  if (PyRange_Check(o)) {
    // A range is the sequence of its ints, as PyTorch: x[range(3)] is x[[0, 1, 2]].
    auto r = py::reinterpret_borrow<py::object>(o);
    auto part = [&](const char* name) {
      return Scalar(to_int(py::object(r.attr(name)).ptr(), "index", "range"));
    };
    return TensorIndex(arange(part("start"), part("stop"), part("step"), TensorOptions(kLong)));
  }
  if (PyList_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o)) {
    // As PyTorch: a sequence index becomes a long (or bool/byte mask) tensor; a string fails
    // there with TypeError.
    py::object t = tensor_fn()(py::handle(o));
    Tensor idx = unwrap(t.ptr());
    if (idx.dtype() != kBool && idx.dtype() != kByte) idx = idx.to(kLong);
    return TensorIndex(idx);
  }
  if (PyIndex_Check(o) && !PyFloat_Check(o)) return TensorIndex(to_int(o, "index", "index"));
  throw ember::IndexError(detail::str_cat(
      "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
      "indices (got ",
      Py_TYPE(o)->tp_name, ")"));
}

/// NumPy's legacy rule, kept by PyTorch: a short list holding a slice, None, Ellipsis, a
/// sequence or a tensor is a tuple of indices (`x[[slice(0, 2), 1]]` is `x[0:2, 1]`).
bool list_as_tuple(PyObject* idx) {
  if (!PyList_Check(idx) || PyList_GET_SIZE(idx) >= 32) return false;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(idx); ++i) {
    PyObject* it = PyList_GET_ITEM(idx, i);
    if (PySlice_Check(it) || it == Py_None || it == Py_Ellipsis || is_tensor(it) ||
        PyList_Check(it) || PyTuple_Check(it) || PyRange_Check(it) || is_ndarray(it)) {
      return true;
    }
  }
  return false;
}

std::vector<TensorIndex> to_indices(PyObject* idx) {
  std::vector<TensorIndex> out;
  // The same rule makes a short ndarray of 2+ dims a tuple of its rows (its items are
  // sequences), as PyTorch's treatSequenceAsTuple.
  if (is_ndarray(idx)) {
    py::object arr = py::reinterpret_borrow<py::object>(idx);
    const Py_ssize_t nd = py::cast<Py_ssize_t>(arr.attr("ndim"));
    const Py_ssize_t len = nd > 0 ? PySequence_Size(idx) : -1;
    if (nd >= 2 && len > 0 && len < 32) {
      py::list rows(arr);
      for (py::handle r : rows) out.push_back(to_index(r.ptr()));
      return out;
    }
  }
  if (PyTuple_Check(idx) || list_as_tuple(idx)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(idx);
    PyObject** items = PySequence_Fast_ITEMS(idx);
    out.reserve(size_t(n));
    for (Py_ssize_t i = 0; i < n; ++i) out.push_back(to_index(items[i]));
  } else {
    out.push_back(to_index(idx));
  }
  return out;
}

[[noreturn]] void zero_dim_index() {
  throw ember::IndexError(
      "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
      "C++ to convert a 0-dim tensor to a number");
}

PyObject* getitem(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  if (nargs != 1 || kwnames) type_error("__getitem__ takes exactly one argument");
  const Tensor& t = unwrap(self);
  PyObject* idx = args[0];
  if (PyLong_Check(idx) && !PyBool_Check(idx)) {  // the common `x[i]`
    if (t.dim() == 0) zero_dim_index();
    return wrap(t.select(0, to_int(idx, "index", "index")));
  }
  if (t.dim() == 0 && ((PyLong_Check(idx) && !PyBool_Check(idx)) || PySlice_Check(idx))) {
    zero_dim_index();
  }
  std::vector<TensorIndex> ind = to_indices(idx);
  Tensor r = t.index(ArrayRef<TensorIndex>(ind.data(), ind.size()));
  // A bool index is a mask in PyTorch (and NumPy): advanced indexing, whose result is a copy.
  bool has_bool = false;
  for (const TensorIndex& i : ind) {
    if (i.is_tensor()) return wrap(std::move(r));  // advanced indexing already copied
    has_bool = has_bool || i.is_boolean();
  }
  if (has_bool) return wrap(maybe_without_gil(r.numel(), [&] { return r.clone(); }));
  return wrap(std::move(r));
  EMBER_PY_END
}

PyObject* setitem(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  if (nargs != 2 || kwnames) type_error("__setitem__ takes exactly two arguments");
  Tensor& t = unwrap(self);
  std::vector<TensorIndex> ind = to_indices(args[0]);
  ArrayRef<TensorIndex> ref(ind.data(), ind.size());
  PyObject* v = args[1];
  if (is_tensor(v) || is_ndarray(v)) {
    Tensor value = is_tensor(v) ? unwrap(v) : tensor_from_numpy_arg(v);
    maybe_without_gil(t.numel(), [&] { return &t.index_put_(ref, value); });
  } else if (is_scalar(v)) {
    t.index_put_(ref, to_scalar(v));
  } else {
    type_error(detail::str_cat("can't assign a ", Py_TYPE(v)->tp_name, " to a ",
                               dtype_name(t.dtype()), " tensor"));
  }
  Py_RETURN_NONE;
  EMBER_PY_END
}

}  // namespace

void init_indexing(py::module_& m) {
  static PyMethodDef defs[] = {
      {"__getitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(getitem)),
       METH_FASTCALL | METH_KEYWORDS, nullptr},
      {"__setitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(setitem)),
       METH_FASTCALL | METH_KEYWORDS, nullptr},
  };
  for (PyMethodDef& d : defs) add_method(&d);
  (void)m;
}

}  // namespace ember::python
