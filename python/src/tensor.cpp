// The ember.Tensor class: metadata, Python protocols, copies and conversions, views.
#include <cstring>

#include "core/tensor_util.h"
#include "core/memory_check.h"
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
  if (t.dtype() == kComplexHalf) t = t.to(kComplexFloat);  // exact in complex64
  check_has_memory(t, "tolist");
  PyObject* out = nullptr;
  switch (t.dtype()) {
#define EMBER_TOLIST_CASE(T, N)                                                       \
  case ScalarType::N:                                                                 \
    out = tolist_rec(static_cast<const T*>(t.data_ptr()), t.sizes(), t.strides(), 0); \
    break;
    EMBER_FORALL_SCALAR_TYPES(EMBER_TOLIST_CASE)
#undef EMBER_TOLIST_CASE
    default:
      throw ember::TypeError(
          detail::str_cat("tolist(): unsupported dtype ", dtype_name(t.dtype())));
  }
  return out;
}

Scalar single_item(const Tensor& t, const char* what) {
  EMBER_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python ", what,
                    " (got a tensor of shape ", shape_str(t.sizes()), ")");
  return t.item();
}

/// The single element as a real number: a complex value with a nonzero imaginary part is an
/// error, as PyTorch's checked conversion to `type`.
Scalar real_item(const Tensor& t, const char* type) {
  Scalar s = single_item(t, "scalars");
  if (!s.isComplex()) return s;
  auto z = s.toComplexDouble();
  EMBER_CHECK(z.imag() == 0, "value cannot be converted to type ", type, " without overflow");
  return Scalar(z.real());
}

// ---- the `to` family ----

struct ToArgs {
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
  bool non_blocking = false;
  bool copy = false;
  MemoryFormat format = MemoryFormat::Preserve;
};

/// t.to(o, non_blocking, copy) in `format`, as PyTorch: self when nothing changes and the
/// format is preserve or the one `t` suggests; otherwise a new tensor laid out in the format.
Tensor to_in_format(const Tensor& t, const TensorOptions& o, bool non_blocking, bool copy,
                    MemoryFormat format) {
  if (format == MemoryFormat::Preserve) return t.to(o, non_blocking, copy);
  const ScalarType dtype = o.dtype_opt().value_or(t.dtype());
  const Device device = o.has_device() ? o.device() : t.device();
  if (dtype == t.dtype() && device == t.device() && !copy && suggest_memory_format(t) == format) {
    return t;
  }
  Tensor r = empty_strided(t.sizes(), format_strides(t.sizes(), format),
                           TensorOptions(dtype).device(device));
  r.copy_(t, non_blocking);
  return r;
}

bool is_dtype_like(PyObject* o) {
  return is_dtype(o) || o == reinterpret_cast<PyObject*>(&PyFloat_Type) ||
         o == reinterpret_cast<PyObject*>(&PyLong_Type) ||
         o == reinterpret_cast<PyObject*>(&PyBool_Type) ||
         o == reinterpret_cast<PyObject*>(&PyComplex_Type);
}

/// PyTorch's three forms: to(dtype, non_blocking, copy), to(device, dtype, non_blocking, copy)
/// and to(other, non_blocking, copy); the same names as keywords.
ToArgs parse_to(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const Params p(
      "to", {"a", "b", "c", "d", "*", "dtype", "device", "non_blocking", "copy", "memory_format"});
  PyObject* a[9];
  p.parse(args, nargs, kwnames, a, 0);
  ToArgs r;
  PyObject *dtype = a[4], *device = a[5], *non_blocking = a[6], *copy = a[7];
  auto set = [](PyObject*& slot, PyObject* v, const char* name) {
    if (!v) return;
    if (slot) type_error(detail::str_cat("to() got multiple values for argument '", name, "'"));
    slot = v;
  };
  int flags = 1;  // index of the first positional non_blocking
  if (a[0] && is_tensor(a[0])) {
    r.dtype = unwrap(a[0]).dtype();
    r.device = unwrap(a[0]).device();
  } else if (a[0] && is_dtype_like(a[0])) {
    set(dtype, a[0], "dtype");
  } else {
    set(device, a[0], "device");
    set(dtype, a[1], "dtype");
    flags = 2;
  }
  if (nargs > flags + 2)
    type_error(detail::str_cat("to() takes at most ", flags + 2, " positional arguments but ",
                               nargs, " were given"));
  set(non_blocking, a[flags], "non_blocking");
  set(copy, a[flags + 1], "copy");
  if (dtype && dtype != Py_None) r.dtype = to_dtype(dtype, "to");
  if (device && device != Py_None) r.device = to_device(device, "to");
  if (non_blocking) r.non_blocking = to_bool(non_blocking, "to", "non_blocking");
  if (copy) r.copy = to_bool(copy, "to", "copy");
  r.format = to_memory_format(a[8], "to");
  return r;
}

FAST(tensor_to) {
  EMBER_PY_BEGIN
  const Tensor& t = unwrap(self);
  ToArgs r = parse_to(args, nargs, kwnames);
  TensorOptions o;
  if (r.dtype) o = o.dtype(*r.dtype);
  if (r.device) o = o.device(*r.device);
  Tensor out = maybe_without_gil(
      t.numel(), [&] { return to_in_format(t, o, r.non_blocking, r.copy, r.format); });
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
  const MemoryFormat format = to_memory_format(a[0], "type conversion");
  Tensor out =
      t.dtype() == ST && format == MemoryFormat::Preserve ? t : maybe_without_gil(t.numel(), [&] {
        return to_in_format(t, TensorOptions(ST), false, false, format);
      });
  if (out.is_same(t)) return return_self(self);
  return wrap(std::move(out));
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
    for (int64_t i = 0; i < t.dim(); ++i)
      PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(t.strides()[size_t(i)]));
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

/// `t.view(dtype)`: the same bytes as another dtype. With a different element size the last
/// dimension (stride 1) grows or shrinks by the size ratio, as PyTorch's.
Tensor view_as_dtype(const Tensor& t, ScalarType dt) {
  if (dt == t.dtype()) return make_view(t, t.sizes(), t.strides(), t.storage_offset());
  const int64_t from = t.itemsize(), to = int64_t(elementSize(dt));
  if (from == to) return make_view_with_dtype(t, dt, t.sizes(), t.strides(), t.storage_offset());
  EMBER_CHECK(t.dim() > 0,
              "[view] a 0-dim tensor cannot be viewed as a dtype of a different "
              "element size (",
              dtype_name(t.dtype()), " -> ", dtype_name(dt), ")");
  EMBER_CHECK(t.stride(-1) == 1, "[view] self.stride(-1) must be 1 to view ", dtype_name(t.dtype()),
              " as ", dtype_name(dt), " (different element sizes), but got ", t.stride(-1));
  DimVector sizes(t.sizes()), strides(t.strides());
  const size_t last = sizes.size() - 1;
  int64_t offset = t.storage_offset();
  if (from > to) {
    const int64_t r = from / to;
    for (size_t i = 0; i < last; ++i) strides[i] *= r;
    sizes[last] *= r;
    offset *= r;
  } else {
    const int64_t r = to / from;
    EMBER_CHECK(sizes[last] % r == 0, "[view] self.size(-1) must be divisible by ", r, " to view ",
                dtype_name(t.dtype()), " as ", dtype_name(dt),
                " (different element sizes), but got ", sizes[last]);
    EMBER_CHECK(offset % r == 0, "[view] self.storage_offset() must be divisible by ", r,
                " to view ", dtype_name(t.dtype()), " as ", dtype_name(dt),
                " (different element sizes), but got ", offset);
    for (size_t i = 0; i < last; ++i) {
      EMBER_CHECK(strides[i] % r == 0, "[view] self.stride(", i, ") must be divisible by ", r,
                  " to view ", dtype_name(t.dtype()), " as ", dtype_name(dt),
                  " (different element sizes), but got ", strides[i]);
      strides[i] /= r;
    }
    sizes[last] /= r;
    offset /= r;
  }
  return make_view_with_dtype(t, dt, sizes, strides, offset);
}

FAST(tensor_view) {
  EMBER_PY_BEGIN
  const Tensor& t = unwrap(self);
  if (nargs == 1 && !kwnames && is_dtype(args[0])) {
    return wrap(view_as_dtype(t, *to_dtype(args[0], "view")));
  }
  if (nargs == 0 && kwnames && PyTuple_GET_SIZE(kwnames) == 1 &&
      std::strcmp(PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, 0)), "dtype") == 0) {
    return wrap(view_as_dtype(t, *to_dtype(args[0], "view")));
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
  // As PyTorch: the default is contiguous_format, and preserve_format is refused.
  const MemoryFormat format =
      a[0] && a[0] != Py_None ? to_memory_format(a[0], "contiguous") : MemoryFormat::Contiguous;
  EMBER_CHECK(format != MemoryFormat::Preserve,
              "preserve memory format is unsupported by the contiguous operator");
  if (format != MemoryFormat::Contiguous) format_strides(t.sizes(), format);  // rank check
  if (is_contiguous_as(t, format)) return return_self(self);
  return wrap(maybe_without_gil(t.numel(), [&] { return copy_as(t, format); }));
  EMBER_PY_END
}

py::object repr_fn() {
  static PyObject* fn = nullptr;
  if (!fn)
    fn = py::object(py::module_::import("ember._tensor_str").attr("tensor_repr")).release().ptr();
  return py::reinterpret_borrow<py::object>(fn);
}

py::object split_result(std::vector<Tensor> parts) {
  py::tuple out(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) out[i] = wrap_obj(std::move(parts[i]));
  return out;
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", py::dynamic_attr());
  tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());

  // Legacy constructor: Tensor(), Tensor(*sizes) (uninitialised), Tensor(sequence) (copied).
  cls.def(py::init([](py::args a) {
    if (a.empty()) return empty({0}, TensorOptions());
    if (a.size() == 1 && !PyLong_Check(a[0].ptr())) {
      py::object t =
          py::module_::import("ember").attr("tensor")(a[0], py::arg("dtype") = get_default_dtype());
      return py::cast<Tensor>(t);
    }
    std::vector<PyObject*> v;
    for (auto h : a) v.push_back(h.ptr());
    return empty(sizes_from_args(v.data(), Py_ssize_t(v.size()), "Tensor"), TensorOptions());
  }));
  cls.attr("__array_priority__") = 1000;
  cls.attr("__module__") = "ember";

  // ---- metadata ----
  cls.def_property_readonly(
         "shape",
         [](const Tensor& t) { return py::reinterpret_steal<py::object>(make_size(t.sizes())); })
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
      .def_property_readonly("T",
                             [](const Tensor& t) {
                               std::vector<int64_t> dims(size_t(t.dim()));
                               for (int64_t i = 0; i < t.dim(); ++i)
                                 dims[size_t(i)] = t.dim() - 1 - i;
                               return t.permute(dims);
                             })
      .def_property_readonly("mT", [](const Tensor& t) { return t.mT(); })
      .def_property_readonly("H",
                             [](const Tensor& t) {
                               EMBER_CHECK(
                                   t.dim() == 0 || t.dim() == 2,
                                   "tensor.H is only supported on matrices (2-D tensors). Got ",
                                   t.dim(), "-D tensor.");
                               return t.dim() == 2 ? t.t().conj() : t.conj();
                             })
      .def_property_readonly("mH", [](const Tensor& t) { return t.mT().conj(); })
      .def_property(
          "real", [](const Tensor& t) { return t.real(); },
          [](Tensor& t, const py::handle& v) {
            Tensor r = t.real();
            if (is_tensor(v.ptr()))
              r.copy_(unwrap(v.ptr()));
            else
              r.fill_(to_scalar(v.ptr(), "real", "value"));
          })
      .def_property(
          "imag", [](const Tensor& t) { return t.imag(); },
          [](Tensor& t, const py::handle& v) {
            Tensor r = t.imag();
            if (is_tensor(v.ptr()))
              r.copy_(unwrap(v.ptr()));
            else
              r.fill_(to_scalar(v.ptr(), "imag", "value"));
          })
      .def("ndimension", [](const Tensor& t) { return t.dim(); })
      .def("nelement", [](const Tensor& t) { return t.numel(); })
      .def("storage_offset", [](const Tensor& t) { return t.storage_offset(); })
      .def(
          "is_contiguous",
          [](const Tensor& t, py::handle format) {
            const MemoryFormat f = format.is_none()
                                       ? MemoryFormat::Contiguous
                                       : to_memory_format(format.ptr(), "is_contiguous");
            EMBER_CHECK(f != MemoryFormat::Preserve,
                        "is_contiguous: preserve_format is not a format of a tensor");
            return is_contiguous_as(t, f);
          },
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
  cls.def("__len__",
          [](const Tensor& t) {
            EMBER_CHECK_TYPE(t.dim() > 0, "len() of a 0-d tensor");
            return t.size(0);
          })
      .def("__iter__",
           [](const Tensor& t) {
             EMBER_CHECK_TYPE(t.dim() > 0, "iteration over a 0-d tensor");
             py::list parts;
             for (Tensor& p : t.unbind(0)) parts.append(wrap_obj(std::move(p)));
             return py::iter(parts);
           })
      .def("__bool__",
           [](const Tensor& t) {
             EMBER_CHECK(t.numel() == 1, "Boolean value of Tensor with ",
                         t.numel() == 0 ? "no values" : "more than one value", " is ambiguous");
             return t.item().toBool();
           })
      .def("__float__", [](const Tensor& t) { return real_item(t, "double").toDouble(); })
      .def("__int__",
           [](const Tensor& t) -> py::object {
             Scalar s = real_item(t, "int64_t");
             if (s.isIntegral(true)) return py::int_(s.toLong());
             // As Python's int(float): truncates, ValueError for NaN, OverflowError for inf.
             PyObject* r = PyNumber_Long(py::float_(s.toDouble()).ptr());
             if (!r) throw py::error_already_set();
             return py::reinterpret_steal<py::object>(r);
           })
      .def("__complex__",
           [](const Tensor& t) {
             auto z = single_item(t, "scalars").toComplexDouble();
             return std::complex<double>(z.real(), z.imag());
           })
      .def("__index__",
           [](const Tensor& t) {
             EMBER_CHECK_TYPE(
                 isIntegralType(t.dtype(), true) && t.numel() == 1,
                 "only integer tensors of a single element can be converted to an index");
             return t.item().toLong();
           })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("__repr__", [](py::handle self) { return repr_fn()(self); })
      .def("__format__",
           [](py::handle self, const std::string& spec) -> py::object {
             const Tensor& t = unwrap(self.ptr());
             // As PyTorch: a 0-d tensor formats as its value; others only with an empty spec.
             if (t.dim() == 0) {
               py::object v = py::reinterpret_steal<py::object>(scalar_to_py(t.item()));
               return py::reinterpret_steal<py::object>(
                   PyObject_Format(v.ptr(), py::str(spec).ptr()));
             }
             EMBER_CHECK_TYPE(spec.empty(),
                              "unsupported format string passed to Tensor.__format__");
             return py::str(self);
           })
      .def("__deepcopy__", [](const Tensor& t, py::handle) { return t.clone(); })
      .def("__copy__", [](const Tensor& t) { return t; });

  // ---- copies and conversions ----
  cls.def(
         "clone",
         [](const Tensor& t, py::handle format) {
           const MemoryFormat f = to_memory_format(format.ptr(), "clone");
           return maybe_without_gil(
               t.numel(), [&] { return f == MemoryFormat::Preserve ? t.clone() : copy_as(t, f); });
         },
         py::arg("memory_format") = py::none())
      .def(
          "copy_",
          [](py::handle self, py::handle src, bool non_blocking) {
            Tensor& t = unwrap(self.ptr());
            if (!is_tensor(src.ptr())) {
              // PyTorch accepts a number (filled in) but not other objects.
              if (!is_scalar(src.ptr())) {
                type_error(detail::str_cat("copy_(): argument 'src' must be Tensor, not ",
                                           Py_TYPE(src.ptr())->tp_name));
              }
              t.fill_(to_scalar(src.ptr(), "copy_", "src"));
            } else {
              const Tensor& s = unwrap(src.ptr());
              maybe_without_gil(t.numel(), [&] { return &t.copy_(s, non_blocking); });
            }
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("src"), py::arg("non_blocking") = false)
      .def("cpu",
           [](py::handle self) -> py::object {
             const Tensor& t = unwrap(self.ptr());
             if (t.is_cpu()) return py::reinterpret_borrow<py::object>(self);
             return wrap_obj(t.cpu());
           })
      .def(
          "cuda",
          [](const Tensor& t, py::handle device, bool nb) {
            Device d = device.is_none() ? Device(kCUDA, -1) : *to_device(device.ptr(), "cuda");
            if (d.type() != kCUDA) d = Device(kCUDA, d.index());
            return t.to(d, nb);
          },
          py::arg("device") = py::none(), py::arg("non_blocking") = false)
      .def("type_as", [](const Tensor& t, const Tensor& o) { return t.type_as(o); })
      .def(
          "fill_",
          [](py::handle self, py::handle v) {
            Tensor& t = unwrap(self.ptr());
            if (is_tensor(v.ptr()))
              t.fill_(unwrap(v.ptr()));
            else
              t.fill_(to_scalar(v.ptr(), "fill_", "value"));
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("value"))
      .def("zero_",
           [](py::handle self) {
             unwrap(self.ptr()).zero_();
             return py::reinterpret_borrow<py::object>(self);
           })
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
      .def("t_",
           [](py::handle self) {
             unwrap(self.ptr()).t_();
             return py::reinterpret_borrow<py::object>(self);
           })
      .def(
          "transpose", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
          py::arg("dim0"), py::arg("dim1"))
      .def(
          "transpose_",
          [](py::handle self, int64_t a, int64_t b) {
            unwrap(self.ptr()).transpose_(a, b);
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("dim0"), py::arg("dim1"))
      .def(
          "swapaxes", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
          py::arg("axis0"), py::arg("axis1"))
      .def(
          "swapdims", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
          py::arg("dim0"), py::arg("dim1"))
      .def(
          "squeeze",
          [](const Tensor& t, std::optional<int64_t> d) { return d ? t.squeeze(*d) : t.squeeze(); },
          py::arg("dim") = py::none())
      .def(
          "squeeze_",
          [](py::handle self, std::optional<int64_t> d) {
            Tensor& t = unwrap(self.ptr());
            if (d)
              t.squeeze_(*d);
            else
              t.squeeze_();
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("dim") = py::none())
      .def(
          "unsqueeze", [](const Tensor& t, int64_t d) { return t.unsqueeze(d); }, py::arg("dim"))
      .def(
          "unsqueeze_",
          [](py::handle self, int64_t d) {
            unwrap(self.ptr()).unsqueeze_(d);
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("dim"))
      .def(
          "flatten", [](const Tensor& t, int64_t s, int64_t e) { return t.flatten(s, e); },
          py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("ravel", [](const Tensor& t) { return t.reshape({-1}); })
      .def(
          "unflatten",
          [](const Tensor& t, int64_t d, py::handle sizes) {
            return t.unflatten(d, to_int_list(sizes.ptr(), "unflatten", "sizes"));
          },
          py::arg("dim"), py::arg("sizes"))
      .def(
          "narrow",
          [](const Tensor& t, int64_t d, int64_t s, int64_t l) { return t.narrow(d, s, l); },
          py::arg("dim"), py::arg("start"), py::arg("length"))
      .def(
          "select", [](const Tensor& t, int64_t d, int64_t i) { return t.select(d, i); },
          py::arg("dim"), py::arg("index"))
      .def(
          "as_strided",
          [](const Tensor& t, py::handle size, py::handle stride, std::optional<int64_t> off) {
            return t.as_strided(to_int_list(size.ptr(), "as_strided", "size"),
                                to_int_list(stride.ptr(), "as_strided", "stride"), off);
          },
          py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none())
      .def(
          "unfold",
          [](const Tensor& t, int64_t d, int64_t s, int64_t st) { return t.unfold(d, s, st); },
          py::arg("dimension"), py::arg("size"), py::arg("step"))
      .def(
          "diagonal",
          [](const Tensor& t, int64_t o, int64_t a, int64_t b) { return t.diagonal(o, a, b); },
          py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1)
      .def(
          "movedim",
          [](const Tensor& t, py::handle s, py::handle d) {
            return t.movedim(to_int_list(s.ptr(), "movedim", "source"),
                             to_int_list(d.ptr(), "movedim", "destination"));
          },
          py::arg("source"), py::arg("destination"))
      .def(
          "moveaxis",
          [](const Tensor& t, py::handle s, py::handle d) {
            return t.movedim(to_int_list(s.ptr(), "moveaxis", "source"),
                             to_int_list(d.ptr(), "moveaxis", "destination"));
          },
          py::arg("source"), py::arg("destination"))
      .def(
          "split",
          [](const Tensor& t, py::handle s, int64_t d) {
            // One size (an int, NumPy integer or 0-dim tensor) or a sequence of sizes.
            if (!PyTuple_Check(s.ptr()) && !PyList_Check(s.ptr())) {
              return split_result(t.split(to_int(s.ptr(), "split", "split_size"), d));
            }
            return split_result(t.split(to_int_list(s.ptr(), "split", "split_size"), d));
          },
          py::arg("split_size"), py::arg("dim") = 0)
      .def(
          "split_with_sizes",
          [](const Tensor& t, py::handle s, int64_t d) {
            return split_result(
                t.split_with_sizes(to_int_list(s.ptr(), "split_with_sizes", "split_sizes"), d));
          },
          py::arg("split_sizes"), py::arg("dim") = 0)
      .def(
          "chunk",
          [](const Tensor& t, int64_t c, int64_t d) { return split_result(t.chunk(c, d)); },
          py::arg("chunks"), py::arg("dim") = 0)
      .def(
          "unbind", [](const Tensor& t, int64_t d) { return split_result(t.unbind(d)); },
          py::arg("dim") = 0)
      .def(
          "view_as", [](const Tensor& t, const Tensor& o) { return t.view_as(o); },
          py::arg("other"))
      .def(
          "reshape_as", [](const Tensor& t, const Tensor& o) { return t.reshape_as(o); },
          py::arg("other"))
      .def(
          "expand_as", [](const Tensor& t, const Tensor& o) { return t.expand_as(o); },
          py::arg("other"));

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
  m.attr("_tolist") = py::cpp_function(
      [](const Tensor& t) { return py::reinterpret_steal<py::object>(tolist(t)); });
}

}  // namespace ember::python
