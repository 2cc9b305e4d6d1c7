// ember.dtype, ember.device, ember.Size, finfo/iinfo and the global settings.
#include <cfloat>
#include <cstring>
#include <limits>

#include "pyember.h"

namespace ember::python {
namespace {

/// The object behind `ember.float32` etc.: one instance per ScalarType.
struct DType {
  ScalarType st;
};

PyObject* g_dtype_objects[kNumScalarTypes] = {};
PyTypeObject* g_dtype_type = nullptr;
PyTypeObject* g_device_type = nullptr;
PyTypeObject* g_size_type = nullptr;

}  // namespace

bool is_dtype(PyObject* o) { return g_dtype_type && Py_TYPE(o) == g_dtype_type; }

PyObject* dtype_object(ScalarType t) {
  PyObject* o = g_dtype_objects[static_cast<int>(t)];
  EMBER_INTERNAL_ASSERT(o != nullptr, "dtype object missing for ", toString(t));
  return o;
}

std::optional<ScalarType> to_dtype(PyObject* o, const char* fn) {
  if (!o || o == Py_None) return std::nullopt;
  if (is_dtype(o)) {
    auto* inst = reinterpret_cast<py::detail::instance*>(o);
    return static_cast<DType*>(inst->get_value_and_holder().value_ptr())->st;
  }
  // PyTorch accepts Python's number types as dtypes.
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return kDouble;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return kLong;
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return kBool;
  if (o == reinterpret_cast<PyObject*>(&PyComplex_Type)) return kComplexDouble;
  type_error(
      detail::str_cat(fn, "(): argument 'dtype' must be ember.dtype, not ", Py_TYPE(o)->tp_name));
}

Device device_from_string(const std::string& spec) {
  try {
    return Device(spec);
  } catch (const ember::ValueError& e) {
    throw ember::Error(e.what());  // PyTorch raises RuntimeError for a bad device string
  }
}

std::optional<Device> to_device(PyObject* o, const char* fn) {
  if (!o || o == Py_None) return std::nullopt;
  if (g_device_type && Py_TYPE(o) == g_device_type) return py::cast<Device>(py::handle(o));
  if (PyUnicode_Check(o)) return device_from_string(to_string(o, fn, "device"));
  if (PyLong_Check(o)) {
    int64_t i = to_int(o, fn, "device");
    EMBER_CHECK(i >= 0, "Device index must not be negative");
    return Device(kCUDA, int(i));
  }
  type_error(
      detail::str_cat(fn, "(): argument 'device' must be ember.device, not ", Py_TYPE(o)->tp_name));
}

PyObject* device_object(Device d) {
  return py::cast(d, py::return_value_policy::copy).release().ptr();
}

PyObject* make_size(IntArrayRef sizes) {
  const Py_ssize_t n = Py_ssize_t(sizes.size());
  PyObject* t = g_size_type->tp_alloc(g_size_type, n);
  if (!t) throw PythonErrorSet{};
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(sizes[size_t(i)]);
    if (!v) {
      Py_DECREF(t);
      throw PythonErrorSet{};
    }
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

namespace {

std::string device_repr(const Device& d) {
  std::string s = "device(type='" + device_type_name(d.type()) + "'";
  if (d.has_index()) s += ", index=" + std::to_string(d.index());
  return s + ")";
}

// Machine limits of a floating dtype, as torch.finfo.
struct FInfo {
  ScalarType dtype;
  int bits;
  double eps, max, min, tiny, resolution;
};

template <class T>
FInfo finfo_of(ScalarType st, int bits, double resolution) {
  using L = std::numeric_limits<T>;
  return FInfo{st,
               bits,
               double(L::epsilon()),
               double(L::max()),
               double(L::lowest()),
               double(L::min()),
               resolution};
}

FInfo make_finfo(ScalarType t) {
  switch (t) {
    case kHalf:
      return FInfo{kHalf, 16, 0.0009765625, 65504.0, -65504.0, 6.103515625e-05, 0.001};
    case kBFloat16:
      return FInfo{kBFloat16,
                   16,
                   0.0078125,
                   3.3895313892515355e+38,
                   -3.3895313892515355e+38,
                   1.1754943508222875e-38,
                   0.01};
    case kFloat:
    case kComplexFloat:
      return finfo_of<float>(kFloat, 32, 1e-06);
    case kDouble:
    case kComplexDouble:
      return finfo_of<double>(kDouble, 64, 1e-15);
    default:
      throw ember::TypeError(
          detail::str_cat("finfo(): dtype must be a floating point or complex "
                          "type, got ",
                          dtype_name(t)));
  }
}

struct IInfo {
  ScalarType dtype;
  int bits;
  int64_t max, min;
};

IInfo make_iinfo(ScalarType t) {
  switch (t) {
    case kBool:
      throw ember::TypeError("iinfo(): dtype must be an integer type, got bool");
    case kByte:
      return {t, 8, 255, 0};
    case kChar:
      return {t, 8, 127, -128};
    case kShort:
      return {t, 16, 32767, -32768};
    case kInt:
      return {t, 32, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
    case kLong:
      return {t, 64, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    default:
      throw ember::TypeError(
          detail::str_cat("iinfo(): dtype must be an integer type, got ", dtype_name(t)));
  }
}

}  // namespace

void init_types(py::module_& m) {
  // ---- dtype ----
  py::class_<DType> dt(m, "dtype");
  g_dtype_type = reinterpret_cast<PyTypeObject*>(dt.ptr());
  dt.def_property_readonly("is_floating_point", [](const DType& d) { return isFloatingType(d.st); })
      .def_property_readonly("is_complex", [](const DType& d) { return isComplexType(d.st); })
      .def_property_readonly("is_signed", [](const DType& d) { return isSignedType(d.st); })
      .def_property_readonly("itemsize", [](const DType& d) { return elementSize(d.st); })
      .def("to_real", [](const DType& d) { return toRealValueType(d.st); })
      .def("to_complex", [](const DType& d) { return toComplexType(d.st); })
      .def("__repr__", [](const DType& d) { return std::string("ember.") + dtype_name(d.st); })
      .def("__reduce__", [](const DType& d) { return std::string(dtype_name(d.st)); });

  struct Alias {
    ScalarType st;
    const char* names[3];
  };
  const Alias aliases[] = {
      {kBool, {"bool", nullptr, nullptr}},
      {kByte, {"uint8", nullptr, nullptr}},
      {kChar, {"int8", nullptr, nullptr}},
      {kShort, {"int16", "short", nullptr}},
      {kInt, {"int32", "int", nullptr}},
      {kLong, {"int64", "long", nullptr}},
      {kHalf, {"float16", "half", nullptr}},
      {kBFloat16, {"bfloat16", nullptr, nullptr}},
      {kFloat, {"float32", "float", nullptr}},
      {kDouble, {"float64", "double", nullptr}},
      {kComplexHalf, {"complex32", "chalf", nullptr}},
      {kComplexFloat, {"complex64", "cfloat", nullptr}},
      {kComplexDouble, {"complex128", "cdouble", nullptr}},
  };
  for (const Alias& a : aliases) {
    py::object o = py::cast(DType{a.st});
    g_dtype_objects[static_cast<int>(a.st)] = o.inc_ref().ptr();
    for (const char* n : a.names) {
      if (n) m.attr(n) = o;
    }
  }

  // ---- device ----
  py::class_<Device> dev(m, "device");
  g_device_type = reinterpret_cast<PyTypeObject*>(dev.ptr());
  dev.def(py::init([](py::handle spec) {
            if (Py_TYPE(spec.ptr()) == g_device_type) return py::cast<Device>(spec);
            if (PyLong_Check(spec.ptr())) return *to_device(spec.ptr(), "device");
            return device_from_string(to_string(spec.ptr(), "device", "type"));
          }),
          py::arg("type"))
      .def(py::init([](const std::string& type, int64_t index) {
             EMBER_CHECK(type.find(':') == std::string::npos,
                         "type (string) must not include an index because index was passed "
                         "explicitly: ",
                         type);
             EMBER_CHECK(index >= 0, "Device index must not be negative");
             Device base = device_from_string(type);
             return Device(base.type(), int(index));
           }),
           py::arg("type"), py::arg("index"))
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type()); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (!d.has_index()) return py::none();
                               return py::int_(d.index());
                             })
      .def("__repr__", &device_repr)
      .def("__str__", &Device::str)
      .def("__eq__",
           [](const Device& a, py::handle b) -> py::object {
             if (Py_TYPE(b.ptr()) != g_device_type)
               return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a == py::cast<Device>(b));
           })
      .def("__hash__", [](const Device& d) { return int(d.type()) * 1024 + d.index(); })
      .def("__reduce__", [](const Device& d) {
        return py::make_tuple(py::reinterpret_borrow<py::object>((PyObject*)g_device_type),
                              py::make_tuple(d.str()));
      });

  py::implicitly_convertible<py::str, Device>();

  // ---- Size: a tuple subclass defined in Python (ember/_size.py) and built here fast ----
  py::object size_cls = py::module_::import("ember._size").attr("Size");
  g_size_type = reinterpret_cast<PyTypeObject*>(size_cls.inc_ref().ptr());
  m.attr("Size") = size_cls;

  // ---- finfo / iinfo ----
  py::class_<FInfo>(m, "finfo")
      .def(py::init([](std::optional<ScalarType> t) {
             return make_finfo(t.value_or(get_default_dtype()));
           }),
           py::arg("type") = py::none())
      .def_readonly("bits", &FInfo::bits)
      .def_readonly("eps", &FInfo::eps)
      .def_readonly("max", &FInfo::max)
      .def_readonly("min", &FInfo::min)
      .def_readonly("tiny", &FInfo::tiny)
      .def_readonly("smallest_normal", &FInfo::tiny)
      .def_readonly("resolution", &FInfo::resolution)
      .def_property_readonly("dtype",
                             [](const FInfo& f) { return std::string(dtype_name(f.dtype)); })
      .def("__repr__", [](const FInfo& f) {
        return detail::str_cat("finfo(resolution=", f.resolution, ", min=", f.min, ", max=", f.max,
                               ", eps=", f.eps, ", tiny=", f.tiny, ", dtype=", dtype_name(f.dtype),
                               ")");
      });
  py::class_<IInfo>(m, "iinfo")
      .def(py::init([](ScalarType t) { return make_iinfo(t); }), py::arg("type"))
      .def_readonly("bits", &IInfo::bits)
      .def_readonly("max", &IInfo::max)
      .def_readonly("min", &IInfo::min)
      .def_property_readonly("dtype",
                             [](const IInfo& f) { return std::string(dtype_name(f.dtype)); })
      .def("__repr__", [](const IInfo& f) {
        return detail::str_cat("iinfo(min=", f.min, ", max=", f.max,
                               ", dtype=", dtype_name(f.dtype), ")");
      });

  // ---- global settings ----
  m.def(
      "set_default_dtype",
      [](ScalarType t) {
        EMBER_CHECK_TYPE(t == kFloat || t == kDouble || t == kHalf || t == kBFloat16,
                         "only floating-point types are supported as the default type");
        set_default_dtype(t);
      },
      py::arg("d"));
  m.def("get_default_dtype", [] { return get_default_dtype(); });
  m.def(
      "set_num_threads",
      [](py::handle o) {
        // PyTorch raises RuntimeError (not TypeError) for a non-int here.
        EMBER_CHECK(!PyBool_Check(o.ptr()) && !is_tensor(o.ptr()) && PyIndex_Check(o.ptr()),
                    "set_num_threads expects an int, but got ", Py_TYPE(o.ptr())->tp_name);
        const int64_t n = to_int(o.ptr(), "set_num_threads", "int");
        EMBER_CHECK(n > 0, "set_num_threads expects a positive integer, got ", n);
        set_num_threads(int(n));
      },
      py::arg("int"));
  m.def("get_num_threads", [] { return get_num_threads(); });
  m.def(
      "use_deterministic_algorithms",
      [](py::handle mode, bool warn_only) {
        EMBER_CHECK_TYPE(PyBool_Check(mode.ptr()),
                         "use_deterministic_algorithms expects a bool, but got ",
                         Py_TYPE(mode.ptr())->tp_name);
        use_deterministic_algorithms(mode.ptr() == Py_True, warn_only);
      },
      py::arg("mode"), py::kw_only(), py::arg("warn_only") = false);
  m.def("are_deterministic_algorithms_enabled",
        [] { return are_deterministic_algorithms_enabled(); });
  m.def("is_deterministic_algorithms_warn_only_enabled",
        [] { return is_deterministic_algorithms_warn_only_enabled(); });
  m.def(
      "promote_types", [](ScalarType a, ScalarType b) { return promoteTypes(a, b); },
      py::arg("type1"), py::arg("type2"));
  m.def(
      "can_cast", [](ScalarType from, ScalarType to) { return canCast(from, to); },
      py::arg("from_"), py::arg("to"));
  m.def(
      "is_floating_point", [](const Tensor& t) { return t.is_floating_point(); }, py::arg("input"));
  m.def(
      "is_complex", [](const Tensor& t) { return t.is_complex(); }, py::arg("input"));
  m.def(
      "is_tensor", [](py::handle o) { return is_tensor(o.ptr()); }, py::arg("obj"));
  m.def(
      "numel", [](const Tensor& t) { return t.numel(); }, py::arg("input"));
}

}  // namespace ember::python
