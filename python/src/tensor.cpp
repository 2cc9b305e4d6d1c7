// The ember.Tensor class: metadata, Python protocols, copies and conversions, views.
#include <cstring>

#include "core/tensor_util.h"
#include "pyember.h"

namespace ember::python {
namespace {

#define FAST(name) \
  PyObject* name(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames)

// ---- tolist / item ----

template <class T>
PyObject* element_to_py(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return PyBool_FromLong(v);
  } else if constexpr (std::is_integral_v<T>) {
    return PyLong_FromLongLong(static_cast<long long>(v));
  } else if constexpr (std::is_same_v<T, complex<float>> || std::is_same_v<T, complex<double>>) {
    return PyComplex_FromDoubles(double(v.real()), double(v.imag()));
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return PyFloat_FromDouble(static_cast<double>(static_cast<float>(v)));
  } else {
    return PyFloat_FromDouble(static_cast<double>(v));
  }
}

template <class T>
PyObject* tolist_rec(const T* data, IntArrayRef sizes, IntArrayRef strides, size_t d) {
  if (d == sizes.size()) return element_to_py(*data);
  const int64_t n = sizes[d];
  PyObject* list = PyList_New(n);
  if (!list) throw PythonErrorSet{};
  for (int64_t i = 0; i < n; ++i) {
    PyObject* item = tolist_rec(data + i * strides[d], sizes, strides, d + 1);
    if (!item) {
      Py_DECREF(list);
      throw PythonErrorSet{};
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyObject* tolist(const Tensor& self) {
  Tensor t = self.resolve_conj();
  if (!t.is_cpu()) t = t.cpu();
  PyObject* out = nullptr;
  switch (t.dtype()) {
#define EMBER_TOLIST_CASE(T, N)                                                              \
  case ScalarType::N:                                                                        \
    out = tolist_rec(static_cast<const T*>(t.data_ptr()), t.sizes(), t.strides(), 0);        \
    break;
    EMBER_FORALL_SCALAR_TYPES(EMBER_TOLIST_CASE)
#undef EMBER_TOLIST_CASE
    default: throw ember::TypeError(detail::str_cat("tolist(): unsupported dtype ", dtype_name(t.dtype())));
  }
  return out;
}

Scalar single_item(const Tensor& t, const char* what) {
  EMBER_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python ",
                    what, " (got a tensor of shape ", shape_str(t.sizes()), ")");
  return t.item();
}

// ---- the `to` family ----

struct ToArgs {
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
  bool non_blocking = false;
  bool copy = false;
};

ToArgs parse_to(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const Params p("to", {"a", "b", "*", "dtype", "device", "non_blocking", "copy",
                               "memory_format"});
  PyObject* a[7];
  p.parse(args, nargs, kwnames, a, 0);
  ToArgs r;
  auto take = [&](PyObject* o) {
    if (!o || o == Py_None) return;
    if (is_tensor(o)) {
      r.dtype = unwrap(o).dtype();
      r.device = unwrap(o).device();
    } else if (is_dtype(o)) {
      r.dtype = to_dtype(o, "to");
    } else if (PyBool_Check(o)) {
      r.non_blocking = o == Py_True;  // to(dtype, non_blocking) positional form
    } else {
      r.device = to_device(o, "to");
    }
  };
  take(a[0]);
  if (a[1] && PyBool_Check(a[1]) && a[0] && !is_dtype(a[0]) && !PyUnicode_Check(a[0]) &&
      !is_tensor(a[0])) {
    r.non_blocking = a[1] == Py_True;
  } else {
    take(a[1]);
  }
  if (a[2] && a[2] != Py_None) r.dtype = to_dtype(a[2], "to");
  if (a[3] && a[3] != Py_None) r.device = to_device(a[3], "to");
  if (a[4]) r.non_blocking = to_bool(a[4], "to", "non_blocking");
  if (a[5]) r.copy = to_bool(a[5], "to", "copy");
  return r;
}

FAST(tensor_to) {
  EMBER_PY_BEGIN
  const Tensor& t = unwrap(self);
  ToArgs r = parse_to(args, nargs, kwnames);
  TensorOptions o;
  if (r.dtype) o = o.dtype(*r.dtype);
  if (r.device) o = o.device(*r.device);
  Tensor out = t.to(o, r.non_blocking, r.copy);
  if (out.is_same(t)) return return_self(self);
  return wrap(std::move(out));
  EMBER_PY_END
}

template <ScalarType ST>
FAST(tensor_convert) {
  EMBER_PY_BEGIN
  static const Params p("type conversion", {"*", "memory_format"});
  PyObject* a[1];
  p.parse(args, nargs, kwnames, a, 0);
  const Tensor& t = unwrap(self);
  if (t.dtype() == ST) return return_self(self);
  return wrap(t.to(ST));
  EMBER_PY_END
}

// ---- views that take *sizes ----

FAST(tensor_size) {
  EMBER_PY_BEGIN
  static const Params p("size", {"dim"});
  PyObject* a[1];
  p.parse(args, nargs, kwnames, a, 0);
  const Tensor& t = unwrap(self);
  if (!a[0] || a[0] == Py_None) return make_size(t.sizes());
  return PyLong_FromLongLong(t.size(to_int(a[0], "size", "dim")));
  EMBER_PY_END
}

FAST(tensor_stride) {
  EMBER_PY_BEGIN
  static const Params p("stride", {"dim"});
  PyObject* a[1];
  p.parse(args, nargs, kwnames, a, 0);
  const Tensor& t = unwrap(self);
  if (!a[0] || a[0] == Py_None) {
    PyObject* tup = PyTuple_New(t.dim());
    for (int64_t i = 0; i < t.dim(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(t.strides()[size_t(i)]));
    return tup;
  }
  return PyLong_FromLongLong(t.stride(to_int(a[0], "stride", "dim")));
  EMBER_PY_END
}

/// Sizes given positionally (`*shape`) or as the keyword `kw` (a sequence).
DimVector shape_args(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, const char* fn,
                     const char* kw) {
  if (kwnames) {
    EMBER_CHECK_TYPE(nargs == 0 && PyTuple_GET_SIZE(kwnames) == 1 &&
                         std::strcmp(PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, 0)), kw) == 0,
                     fn, "() got an unexpected keyword argument");
    return to_int_list(args[0], fn, kw);
  }
  return sizes_from_args(args, nargs, fn);
}

FAST(tensor_view) {
  EMBER_PY_BEGIN
  const Tensor& t = unwrap(self);
  if (nargs == 1 && !kwnames && is_dtype(args[0])) {
    ScalarType dt = *to_dtype(args[0], "view");
    if (dt == t.dtype()) return wrap(make_view(t, t.sizes(), t.strides(), t.storage_offset()));
    EMBER_CHECK(elementSize(dt) == t.itemsize(),
                "[view] viewing a tensor as a dtype of a different element size is not supported "
                "yet: ", dtype_name(t.dtype()), " -> ", dtype_name(dt));
    return wrap(make_view_with_dtype(t, dt, t.sizes(), t.strides(), t.storage_offset()));
  }
  return wrap(t.view(shape_args(args, nargs, kwnames, "view", "size")));
  EMBER_PY_END
}

FAST(tensor_reshape) {
  EMBER_PY_BEGIN
  return wrap(unwrap(self).reshape(shape_args(args, nargs, kwnames, "reshape", "shape")));
  EMBER_PY_END
}

FAST(tensor_permute) {
  EMBER_PY_BEGIN
  return wrap(unwrap(self).permute(shape_args(args, nargs, kwnames, "permute", "dims")));
  EMBER_PY_END
}

FAST(tensor_expand) {
  EMBER_PY_BEGIN
  return wrap(unwrap(self).expand(shape_args(args, nargs, kwnames, "expand", "size")));
  EMBER_PY_END
}

FAST(tensor_item) {
  EMBER_PY_BEGIN
  if (nargs != 0 || kwnames) type_error("item() takes no arguments");
  return scalar_to_py(single_item(unwrap(self), "scalars"));
  EMBER_PY_END
}

FAST(tensor_tolist) {
  EMBER_PY_BEGIN
  if (nargs != 0 || kwnames) type_error("tolist() takes no arguments");
  return tolist(unwrap(self));
  EMBER_PY_END
}

FAST(tensor_dim) {
  EMBER_PY_BEGIN
  if (nargs != 0 || kwnames) type_error("dim() takes no arguments");
  return PyLong_FromLongLong(unwrap(self).dim());
  EMBER_PY_END
}

FAST(tensor_numel) {
  EMBER_PY_BEGIN
  if (nargs != 0 || kwnames) type_error("numel() takes no arguments");
  return PyLong_FromLongLong(unwrap(self).numel());
  EMBER_PY_END
}

FAST(tensor_contiguous) {
  EMBER_PY_BEGIN
  static const Params p("contiguous", {"memory_format"});
  PyObject* a[1];
  p.parse(args, nargs, kwnames, a, 0);
  const Tensor& t = unwrap(self);
  if (t.is_contiguous()) return return_self(self);
  return wrap(t.contiguous());
  EMBER_PY_END
}

py::object repr_fn() {
  static PyObject* fn = nullptr;
  if (!fn) fn = py::object(py::module_::import("ember._tensor_str").attr("tensor_repr")).release().ptr();
  return py::reinterpret_borrow<py::object>(fn);
}

py::object split_result(std::vector<Tensor> parts) {
  py::tuple out(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) out[i] = wrap_obj(std::move(parts[i]));
  return std::move(out);
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", py::dynamic_attr());
  tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());

  // Legacy constructor: Tensor(), Tensor(*sizes) (uninitialised), Tensor(sequence) (copied).
  cls.def(py::init([](py::args a) {
    if (a.empty()) return empty({0}, TensorOptions());
    if (a.size() == 1 && !PyLong_Check(a[0].ptr())) {
      py::object t = py::module_::import("ember").attr("tensor")(a[0], py::arg("dtype") = get_default_dtype());
      return py::cast<Tensor>(t);
    }
    std::vector<PyObject*> v;
    for (auto h : a) v.push_back(h.ptr());
    return empty(sizes_from_args(v.data(), Py_ssize_t(v.size()), "Tensor"), TensorOptions());
  }));
  cls.attr("__array_priority__") = 1000;
  cls.attr("__module__") = "ember";

  // ---- metadata ----
  cls.def_property_readonly("shape", [](const Tensor& t) {
       return py::reinterpret_steal<py::object>(make_size(t.sizes()));
     })
      .def_property_readonly("dtype", [](const Tensor& t) { return t.dtype(); })
      .def_property_readonly("device", [](const Tensor& t) { return t.device(); })
      .def_property_readonly("ndim", [](const Tensor& t) { return t.dim(); })
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.is_cuda(); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t.is_cpu(); })
      .def_property_readonly("is_meta", [](const Tensor& t) { return t.device().type() == kMeta; })
      .def_property_readonly("is_sparse", [](const Tensor&) { return false; })
      .def_property_readonly("is_quantized", [](const Tensor&) { return false; })
      .def_property_readonly("itemsize", [](const Tensor& t) { return t.itemsize(); })
      .def_property_readonly("nbytes", [](const Tensor& t) { return t.nbytes(); })
      .def_property_readonly("_version", [](const Tensor& t) { return t._version(); })
      .def_property_readonly("T", [](const Tensor& t) {
        std::vector<int64_t> dims(size_t(t.dim()));
        for (int64_t i = 0; i < t.dim(); ++i) dims[size_t(i)] = t.dim() - 1 - i;
        return t.permute(dims);
      })
      .def_property_readonly("mT", [](const Tensor& t) { return t.mT(); })
      .def_property_readonly("H", [](const Tensor& t) {
        EMBER_CHECK(t.dim() <= 2, "[H] expected a tensor with 0 or 2 dims, got ", t.dim());
        return t.dim() == 2 ? t.t().conj() : t.conj();
      })
      .def_property_readonly("mH", [](const Tensor& t) { return t.mT().conj(); })
      .def_property(
          "real", [](const Tensor& t) { return t.real(); },
          [](Tensor& t, const py::handle& v) {
            Tensor r = t.real();
            if (is_tensor(v.ptr())) r.copy_(unwrap(v.ptr()));
            else r.fill_(to_scalar(v.ptr(), "real", "value"));
          })
      .def_property(
          "imag", [](const Tensor& t) { return t.imag(); },
          [](Tensor& t, const py::handle& v) {
            Tensor r = t.imag();
            if (is_tensor(v.ptr())) r.copy_(unwrap(v.ptr()));
            else r.fill_(to_scalar(v.ptr(), "imag", "value"));
          })
      .def_property(
          "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
          [](Tensor& t, bool r) { t.set_requires_grad(r); })
      .def_property_readonly("is_leaf", [](const Tensor&) { return true; })
      .def_property_readonly("grad_fn", [](const Tensor&) { return py::none(); })
      .def_property_readonly("grad", [](const Tensor&) { return py::none(); })
      .def_property(
          "data", [](const Tensor& t) { return make_view(t, t.sizes(), t.strides(), t.storage_offset()); },
          [](Tensor& t, const Tensor& v) {
            EMBER_CHECK(v.sizes() == t.sizes() && v.dtype() == t.dtype(),
                        "[data] assigning a tensor of a different shape or dtype to .data is not "
                        "supported");
            t.copy_(v);
          })
      .def("ndimension", [](const Tensor& t) { return t.dim(); })
      .def("nelement", [](const Tensor& t) { return t.numel(); })
      .def("storage_offset", [](const Tensor& t) { return t.storage_offset(); })
      .def("is_contiguous", [](const Tensor& t, py::handle) { return t.is_contiguous(); },
           py::arg("memory_format") = py::none())
      .def("is_complex", [](const Tensor& t) { return t.is_complex(); })
      .def("is_floating_point", [](const Tensor& t) { return t.is_floating_point(); })
      .def("is_signed", [](const Tensor& t) { return t.is_signed(); })
      .def("is_conj", [](const Tensor& t) { return t.is_conj(); })
      .def("is_neg", [](const Tensor&) { return false; })
      .def("element_size", [](const Tensor& t) { return t.element_size(); })
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("get_device", [](const Tensor& t) { return t.is_cpu() ? -1 : t.device().index(); })
      .def("is_same_size", [](const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes(); })
      .def("is_set_to", [](const Tensor& a, const Tensor& b) {
        return a.is_alias_of(b) && a.storage_offset() == b.storage_offset() &&
               a.sizes() == b.sizes() && a.strides() == b.strides();
      });

  // ---- Python protocols ----
  cls.def("__len__", [](const Tensor& t) {
       EMBER_CHECK_TYPE(t.dim() > 0, "len() of a 0-d tensor");
       return t.size(0);
     })
      .def("__iter__", [](const Tensor& t) {
        EMBER_CHECK_TYPE(t.dim() > 0, "iteration over a 0-d tensor");
        py::list parts;
        for (Tensor& p : t.unbind(0)) parts.append(wrap_obj(std::move(p)));
        return py::iter(parts);
      })
      .def("__bool__", [](const Tensor& t) {
        EMBER_CHECK(t.numel() == 1, "Boolean value of Tensor with ",
                    t.numel() == 0 ? "no values" : "more than one value", " is ambiguous");
        return t.item().toBool();
      })
      .def("__float__", [](const Tensor& t) { return single_item(t, "scalars").toDouble(); })
      .def("__int__", [](const Tensor& t) { return single_item(t, "scalars").toLong(); })
      .def("__complex__", [](const Tensor& t) {
        auto z = single_item(t, "scalars").toComplexDouble();
        return std::complex<double>(z.real(), z.imag());
      })
      .def("__index__", [](const Tensor& t) {
        EMBER_CHECK_TYPE(isIntegralType(t.dtype(), true) && t.numel() == 1,
                         "only integer tensors of a single element can be converted to an index");
        return t.item().toLong();
      })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__repr__", [](py::handle self) { return repr_fn()(self); })
      .def("__format__", [](py::handle self, const std::string& spec) -> py::object {
        const Tensor& t = unwrap(self.ptr());
        if (t.dim() == 0 && !spec.empty()) {
          py::object v = py::reinterpret_steal<py::object>(scalar_to_py(t.item()));
          return py::reinterpret_steal<py::object>(PyObject_Format(v.ptr(), py::str(spec).ptr()));
        }
        return repr_fn()(self);
      })
      .def("__deepcopy__", [](const Tensor& t, py::handle) { return t.clone(); })
      .def("__copy__", [](const Tensor& t) { return t; });

  // ---- copies and conversions ----
  cls.def("clone", [](const Tensor& t, py::handle) { return t.clone(); },
          py::arg("memory_format") = py::none())
      .def("copy_", [](py::handle self, const Tensor& src, bool non_blocking) {
        Tensor& t = unwrap(self.ptr());
        maybe_without_gil(t.numel(), [&] { return &t.copy_(src, non_blocking); });
        return py::reinterpret_borrow<py::object>(self);
      }, py::arg("src"), py::arg("non_blocking") = false)
      .def("cpu", [](py::handle self) -> py::object {
        const Tensor& t = unwrap(self.ptr());
        if (t.is_cpu()) return py::reinterpret_borrow<py::object>(self);
        return wrap_obj(t.cpu());
      })
      .def("cuda", [](const Tensor& t, py::handle device, bool nb) {
        Device d = device.is_none() ? Device(kCUDA, 0) : *to_device(device.ptr(), "cuda");
        if (d.type() != kCUDA) d = Device(kCUDA, d.index());
        return t.to(d, nb);
      }, py::arg("device") = py::none(), py::arg("non_blocking") = false)
      .def("type_as", [](const Tensor& t, const Tensor& o) { return t.type_as(o); })
      .def("fill_", [](py::handle self, py::handle v) {
        Tensor& t = unwrap(self.ptr());
        if (is_tensor(v.ptr())) t.fill_(unwrap(v.ptr()));
        else t.fill_(to_scalar(v.ptr(), "fill_", "value"));
        return py::reinterpret_borrow<py::object>(self);
      }, py::arg("value"))
      .def("zero_", [](py::handle self) {
        unwrap(self.ptr()).zero_();
        return py::reinterpret_borrow<py::object>(self);
      })
      .def("detach", [](const Tensor& t) { return make_view(t, t.sizes(), t.strides(), t.storage_offset()); })
      .def("detach_", [](py::handle self) { return py::reinterpret_borrow<py::object>(self); })
      .def("requires_grad_", [](py::handle self, bool r) {
        unwrap(self.ptr()).set_requires_grad(r);
        return py::reinterpret_borrow<py::object>(self);
      }, py::arg("requires_grad") = true)
      .def("conj", [](const Tensor& t) { return t.conj(); })
      .def("resolve_conj", [](const Tensor& t) { return t.resolve_conj(); })
      .def("resolve_neg", [](const Tensor& t) { return t; })
      .def("conj_physical", [](const Tensor& t) { return t.conj_physical(); })
      .def("conj_physical_", [](py::handle self) {
        unwrap(self.ptr()).conj_physical_();
        return py::reinterpret_borrow<py::object>(self);
      });

  // ---- views ----
  cls.def("t", [](const Tensor& t) { return t.t(); })
      .def("t_", [](py::handle self) {
        unwrap(self.ptr()).t_();
        return py::reinterpret_borrow<py::object>(self);
      })
      .def("transpose", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
           py::arg("dim0"), py::arg("dim1"))
      .def("transpose_", [](py::handle self, int64_t a, int64_t b) {
        unwrap(self.ptr()).transpose_(a, b);
        return py::reinterpret_borrow<py::object>(self);
      }, py::arg("dim0"), py::arg("dim1"))
      .def("swapaxes", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
           py::arg("axis0"), py::arg("axis1"))
      .def("swapdims", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
           py::arg("dim0"), py::arg("dim1"))
      .def("squeeze", [](const Tensor& t, std::optional<int64_t> d) {
        return d ? t.squeeze(*d) : t.squeeze();
      }, py::arg("dim") = py::none())
      .def("squeeze_", [](py::handle self, std::optional<int64_t> d) {
        Tensor& t = unwrap(self.ptr());
        if (d) t.squeeze_(*d);
        else t.squeeze_();
        return py::reinterpret_borrow<py::object>(self);
      }, py::arg("dim") = py::none())
      .def("unsqueeze", [](const Tensor& t, int64_t d) { return t.unsqueeze(d); }, py::arg("dim"))
      .def("unsqueeze_", [](py::handle self, int64_t d) {
        unwrap(self.ptr()).unsqueeze_(d);
        return py::reinterpret_borrow<py::object>(self);
      }, py::arg("dim"))
      .def("flatten", [](const Tensor& t, int64_t s, int64_t e) { return t.flatten(s, e); },
           py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("ravel", [](const Tensor& t) { return t.reshape({-1}); })
      .def("unflatten", [](const Tensor& t, int64_t d, py::handle sizes) {
        return t.unflatten(d, to_int_list(sizes.ptr(), "unflatten", "sizes"));
      }, py::arg("dim"), py::arg("sizes"))
      .def("narrow", [](const Tensor& t, int64_t d, int64_t s, int64_t l) { return t.narrow(d, s, l); },
           py::arg("dim"), py::arg("start"), py::arg("length"))
      .def("select", [](const Tensor& t, int64_t d, int64_t i) { return t.select(d, i); },
           py::arg("dim"), py::arg("index"))
      .def("as_strided", [](const Tensor& t, py::handle size, py::handle stride,
                            std::optional<int64_t> off) {
        return t.as_strided(to_int_list(size.ptr(), "as_strided", "size"),
                            to_int_list(stride.ptr(), "as_strided", "stride"), off);
      }, py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none())
      .def("unfold", [](const Tensor& t, int64_t d, int64_t s, int64_t st) { return t.unfold(d, s, st); },
           py::arg("dimension"), py::arg("size"), py::arg("step"))
      .def("diagonal", [](const Tensor& t, int64_t o, int64_t a, int64_t b) { return t.diagonal(o, a, b); },
           py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1)
      .def("movedim", [](const Tensor& t, py::handle s, py::handle d) {
        return t.movedim(to_int_list(s.ptr(), "movedim", "source"),
                         to_int_list(d.ptr(), "movedim", "destination"));
      }, py::arg("source"), py::arg("destination"))
      .def("moveaxis", [](const Tensor& t, py::handle s, py::handle d) {
        return t.movedim(to_int_list(s.ptr(), "moveaxis", "source"),
                         to_int_list(d.ptr(), "moveaxis", "destination"));
      }, py::arg("source"), py::arg("destination"))
      .def("split", [](const Tensor& t, py::handle s, int64_t d) {
        if (PyLong_Check(s.ptr())) return split_result(t.split(to_int(s.ptr(), "split", "split_size"), d));
        return split_result(t.split(to_int_list(s.ptr(), "split", "split_size"), d));
      }, py::arg("split_size"), py::arg("dim") = 0)
      .def("split_with_sizes", [](const Tensor& t, py::handle s, int64_t d) {
        return split_result(t.split_with_sizes(to_int_list(s.ptr(), "split_with_sizes", "split_sizes"), d));
      }, py::arg("split_sizes"), py::arg("dim") = 0)
      .def("chunk", [](const Tensor& t, int64_t c, int64_t d) { return split_result(t.chunk(c, d)); },
           py::arg("chunks"), py::arg("dim") = 0)
      .def("unbind", [](const Tensor& t, int64_t d) { return split_result(t.unbind(d)); },
           py::arg("dim") = 0)
      .def("view_as", [](const Tensor& t, const Tensor& o) { return t.view_as(o); }, py::arg("other"))
      .def("reshape_as", [](const Tensor& t, const Tensor& o) { return t.reshape_as(o); }, py::arg("other"))
      .def("expand_as", [](const Tensor& t, const Tensor& o) { return t.expand_as(o); }, py::arg("other"));

  // ---- fast methods (Note [Fast calls]) ----
  static PyMethodDef* defs[] = {
      new_method_def("to", tensor_to),
      new_method_def("size", tensor_size),
      new_method_def("stride", tensor_stride),
      new_method_def("view", tensor_view),
      new_method_def("reshape", tensor_reshape),
      new_method_def("permute", tensor_permute),
      new_method_def("expand", tensor_expand),
      new_method_def("item", tensor_item),
      new_method_def("tolist", tensor_tolist),
      new_method_def("dim", tensor_dim),
      new_method_def("numel", tensor_numel),
      new_method_def("contiguous", tensor_contiguous),
      new_method_def("float", tensor_convert<kFloat>),
      new_method_def("double", tensor_convert<kDouble>),
      new_method_def("half", tensor_convert<kHalf>),
      new_method_def("bfloat16", tensor_convert<kBFloat16>),
      new_method_def("int", tensor_convert<kInt>),
      new_method_def("long", tensor_convert<kLong>),
      new_method_def("short", tensor_convert<kShort>),
      new_method_def("char", tensor_convert<kChar>),
      new_method_def("byte", tensor_convert<kByte>),
      new_method_def("bool", tensor_convert<kBool>),
      new_method_def("cfloat", tensor_convert<kComplexFloat>),
      new_method_def("cdouble", tensor_convert<kComplexDouble>),
  };
  for (PyMethodDef* d : defs) add_method(d);
  m.attr("_tolist") = py::cpp_function([](const Tensor& t) {
    return py::reinterpret_steal<py::object>(tolist(t));
  });
}

}  // namespace ember::python
