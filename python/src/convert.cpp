// Conversions between Python objects and ember values, the keyword parser and error mapping.
#include <cstring>
#include <memory>

#include "core/tensor_util.h"
#include "pyember.h"

namespace ember::python {

PyTypeObject* tensor_type = nullptr;

// ---- errors ----

void set_python_error() {
  try {
    throw;
  } catch (const ember::Error& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.kind()) {
      case ErrorKind::Value:
        type = PyExc_ValueError;
        break;
      case ErrorKind::Index:
        type = PyExc_IndexError;
        break;
      case ErrorKind::Type:
        type = PyExc_TypeError;
        break;
      case ErrorKind::NotImplemented:
        type = PyExc_NotImplementedError;
        break;
      case ErrorKind::Runtime:
      case ErrorKind::Internal:
        type = PyExc_RuntimeError;
        break;
    }
    PyErr_SetString(type, e.what());
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const py::error_already_set& e) {
    py::error_already_set(e).restore();
  } catch (const std::bad_alloc&) {
    // As PyTorch's CPU allocator: a RuntimeError (see Note [Checked storage sizes]).
    PyErr_SetString(PyExc_RuntimeError, "[ember] out of memory: a buffer allocation failed");
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "ember: unknown C++ exception");
  }
}

void type_error(const std::string& msg) { throw ember::TypeError(msg); }

// ---- Params ----

Params::Params(const char* fn, std::initializer_list<const char*> names) : fn_(fn) {
  n_positional_ = -1;
  for (const char* n : names) {
    if (std::strcmp(n, "*") == 0) {
      n_positional_ = int(names_.size());
      continue;
    }
    names_.push_back(n);
  }
  if (n_positional_ < 0) n_positional_ = int(names_.size());
}

/// strcmp(a, b) == 0 without a call: parameter names are short and mostly differ at once.
static inline bool same_name(const char* a, const char* b) {
  while (*a && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

void Params::parse(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** out,
                   int required) const {
  const int n = int(names_.size());
  if (nargs > n_positional_) {
    type_error(detail::str_cat(fn_, "() takes ", n_positional_, " positional argument",
                               n_positional_ == 1 ? "" : "s", " but ", nargs, " were given"));
  }
  for (int i = 0; i < n; ++i) out[i] = i < nargs ? args[i] : nullptr;
  if (kwnames) {
    const Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nk; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      const char* kname = PyUnicode_AsUTF8(key);
      if (!kname) throw PythonErrorSet{};
      int found = -1;
      for (int i = 0; i < n; ++i) {
        if (same_name(kname, names_[i])) {
          found = i;
          break;
        }
      }
      if (found < 0) {
        type_error(detail::str_cat(fn_, "() got an unexpected keyword argument '", kname, "'"));
      }
      if (out[found]) {
        type_error(detail::str_cat(fn_, "() got multiple values for argument '", kname, "'"));
      }
      out[found] = args[nargs + k];
    }
  }
  for (int i = 0; i < required; ++i) {
    if (!out[i]) {
      type_error(
          detail::str_cat(fn_, "() missing required argument '", names_[i], "' (pos ", i + 1, ")"));
    }
  }
}

// ---- tensors ----

Tensor& unwrap(PyObject* o) {
  // Unbound methods taking `py::handle self` reach here with any object (Tensor.add_(1.0, x)).
  if (__builtin_expect(!is_tensor(o), 0)) {
    type_error(detail::str_cat("descriptor requires a 'Tensor' object but received a '",
                               Py_TYPE(o)->tp_name, "'"));
  }
  auto* inst = reinterpret_cast<py::detail::instance*>(o);
  // The simple layout (every Tensor object but those of multiply-inheriting subclasses) holds
  // the value pointer in place: no value_and_holder lookup.
  if (__builtin_expect(inst->simple_layout, 1)) {
    return *static_cast<Tensor*>(inst->simple_value_holder[0]);
  }
  return *static_cast<Tensor*>(inst->get_value_and_holder().value_ptr());
}

// Note [Fast Tensor objects]
// A one-element op from Python spends more on its result's Python object than on the op:
// py::cast looks the C++ type up by name (a string hash) three times, searches the instance
// registry for the temporary, and pybind11's dealloc repeats the lookups. wrap() and
// tensor_dealloc() do what py::cast / pybind11_object_dealloc do for the Tensor type's simple
// layout (one C++ type, a std::unique_ptr holder) with the type_info looked up once; any other
// layout falls back to pybind11's own code. install_fast_tensor_objects() checks the layout
// once at import. wrap()'s objects are not entered in pybind11's instance registry (a hash
// insert and erase per result): the registry only lets a C++ `Tensor&` or `Tensor*` cast back
// to Python find the wrapper that holds that very object, and no binding returns a reference
// to a wrapped Tensor (in-place methods return `self`'s Python object). Objects pybind11
// creates itself stay registered, and tensor_dealloc() unregisters them as pybind11 does.
namespace {

const py::detail::type_info* g_tensor_info = nullptr;
destructor g_pybind_dealloc = nullptr;

using TensorHolder = std::unique_ptr<Tensor>;

/// Whether `inst` is the layout wrap() builds: one simple value/holder slot of the Tensor type.
bool simple_tensor_instance(py::detail::instance* inst) {
  return inst->simple_layout && !inst->has_patients;
}

void tensor_dealloc(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (!simple_tensor_instance(inst)) return g_pybind_dealloc(self);
  // Nothing below may be seen half-destroyed by a collection that a destructor triggers.
  if (PyType_IS_GC(Py_TYPE(self))) PyObject_GC_UnTrack(self);
  void* value = inst->simple_value_holder[0];
  if (value) {
    if (inst->simple_instance_registered &&
        !py::detail::deregister_instance(inst, value, g_tensor_info)) {
      py::pybind11_fail("pybind11_object_dealloc(): Tried to deallocate unregistered instance!");
    }
    // As class_::dealloc: the Python error in flight (if any) survives the destructor.
    PyObject *et = nullptr, *ev = nullptr, *etb = nullptr;
    const bool had_error = PyErr_Occurred() != nullptr;
    if (had_error) PyErr_Fetch(&et, &ev, &etb);
    if (inst->simple_holder_constructed) {
      reinterpret_cast<TensorHolder*>(&inst->simple_value_holder[1])->~TensorHolder();
      inst->simple_holder_constructed = false;
    } else if (inst->owned) {
      py::detail::call_operator_delete(static_cast<Tensor*>(value), g_tensor_info->type_size,
                                       g_tensor_info->type_align);
    }
    inst->simple_value_holder[0] = nullptr;
    if (had_error) PyErr_Restore(et, ev, etb);
  }
  if (inst->weakrefs) PyObject_ClearWeakRefs(self);
  PyObject** dict_ptr = _PyObject_GetDictPtr(self);
  if (dict_ptr) Py_CLEAR(*dict_ptr);
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

}  // namespace

void install_fast_tensor_objects() {
  g_tensor_info = py::detail::get_type_info(typeid(Tensor));
  EMBER_INTERNAL_ASSERT(g_tensor_info && g_tensor_info->type == tensor_type &&
                        g_tensor_info->simple_ancestors &&
                        g_tensor_info->holder_size_in_ptrs <= 1 &&
                        py::detail::all_type_info(tensor_type).size() == 1);
  if (tensor_type->tp_dealloc != tensor_dealloc) {
    g_pybind_dealloc = tensor_type->tp_dealloc;
    tensor_type->tp_dealloc = tensor_dealloc;
  }
}

PyObject* wrap(Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  if (__builtin_expect(g_tensor_info == nullptr, 0)) {
    return py::cast(std::move(t), py::return_value_policy::move).release().ptr();
  }
  // As make_new_instance + type_caster_generic::cast(move) + class_::init_instance, for the
  // simple layout (tp_alloc zeroes the flags that allocate_layout would clear).
  PyObject* o = tensor_type->tp_alloc(tensor_type, 0);
  if (!o) throw PythonErrorSet{};
  auto* inst = reinterpret_cast<py::detail::instance*>(o);
  inst->simple_layout = true;
  inst->owned = true;
  py::object guard = py::reinterpret_steal<py::object>(o);  // released on success
  auto* value = new Tensor(std::move(t));
  inst->simple_value_holder[0] = value;
  new (&inst->simple_value_holder[1]) TensorHolder(value);
  inst->simple_holder_constructed = true;
  // Not entered in pybind11's instance registry (Note [Fast Tensor objects]).
  return guard.release().ptr();
}

static std::string py_type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

const Tensor& to_tensor(PyObject* o, const char* fn, const char* arg) {
  if (o && is_tensor(o)) return unwrap(o);
  type_error(detail::str_cat(fn, "(): argument '", arg, "' must be Tensor, not ",
                             o ? py_type_name(o) : std::string("None")));
}

void write_out(Tensor& out, const Tensor& result, const char* op) {
  EMBER_CHECK(!(GradMode::is_enabled() && result.requires_grad()), "[", op, "] ", op,
              "(): functions with out=... arguments don't support automatic differentiation, "
              "but one of the arguments requires grad.");
  EMBER_CHECK(canCast(result.dtype(), out.dtype()), "[", op, "] result type ",
              toString(result.dtype()), " can't be cast to the desired output type ",
              toString(out.dtype()));
  EMBER_CHECK(out.device() == result.device(), "[", op, "] expected out= on ",
              result.device().str(), ", got ", out.device().str());
  if (out.sizes() != result.sizes()) {
    // As the elementwise ops' out=: only an empty tensor is resized.
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(result.sizes()),
                "; pass an empty tensor or one of the result's shape");
    resize_output(out, result.sizes());
  }
  out.copy_(result);
}

// ---- scalars ----

static bool is_numpy_object(PyObject* o) {
  return std::strncmp(Py_TYPE(o)->tp_name, "numpy.", 6) == 0;
}

static bool is_numpy_zero_dim(PyObject* o) {
  if (std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") != 0) return false;
  py::object nd = py::reinterpret_steal<py::object>(PyObject_GetAttrString(o, "ndim"));
  if (!nd) {
    PyErr_Clear();
    return false;
  }
  return PyLong_AsLong(nd.ptr()) == 0;
}

bool is_scalar(PyObject* o) {
  if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) return true;
  if (is_numpy_object(o)) {
    if (is_numpy_zero_dim(o)) return true;
    // NumPy scalar types: numpy.int64, numpy.float32, numpy.bool_, numpy.complex64, ...
    return std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") != 0 &&
           PyObject_HasAttrString(o, "dtype");
  }
  return false;
}

static Scalar long_to_scalar(PyObject* o) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0) throw ember::Error("Overflow when unpacking long");
  if (v == -1 && PyErr_Occurred()) throw PythonErrorSet{};
  return Scalar(int64_t(v));
}

Scalar to_scalar(PyObject* o, const char* fn, const char* arg) {
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) return long_to_scalar(o);
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) {
    Py_complex c = PyComplex_AsCComplex(o);
    return Scalar(complex<double>(c.real, c.imag));
  }
  if (is_tensor(o)) {
    const Tensor& t = unwrap(o);
    if (t.numel() == 1 && t.dim() == 0) return t.item();
  } else if (is_scalar(o)) {
    // NumPy scalars and 0-d arrays: .item() gives the matching Python number.
    py::object item = py::reinterpret_steal<py::object>(PyObject_CallMethod(o, "item", nullptr));
    if (!item) throw PythonErrorSet{};
    return to_scalar(item.ptr(), fn, arg);
  }
  type_error(detail::str_cat(fn, "(): argument '", arg, "' must be Number, not ", py_type_name(o)));
}

PyObject* scalar_to_py(const Scalar& s) {
  switch (s.type()) {
    case kBool:
      return PyBool_FromLong(s.toBool());
    case kLong:
      return PyLong_FromLongLong(s.toLong());
    case kComplexDouble: {
      auto z = s.toComplexDouble();
      return PyComplex_FromDoubles(z.real(), z.imag());
    }
    default:
      return PyFloat_FromDouble(s.toDouble());
  }
}

Tensor tensor_from_numpy_arg(PyObject* o);  // interop.cpp

bool to_tensor_or_scalar(PyObject* o, TensorOrScalar& out) {
  if (is_tensor(o)) {
    out.tensor = &unwrap(o);
    return true;
  }
  if (PyBool_Check(o)) {
    out.scalar = Scalar(o == Py_True);
    return true;
  }
  if (PyLong_Check(o)) {
    out.scalar = long_to_scalar(o);
    return true;
  }
  if (PyFloat_Check(o)) {
    out.scalar = Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (PyComplex_Check(o)) {
    out.scalar = to_scalar(o);
    return true;
  }
  if (is_numpy_object(o)) {
    if (std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0) return false;  // caller converts
    if (is_scalar(o)) {
      out.scalar = to_scalar(o);
      return true;
    }
  }
  return false;
}

// ---- ints and other plain arguments ----

int64_t to_int(PyObject* o, const char* fn, const char* arg) {
  if (PyLong_Check(o)) return long_to_scalar(o).toLong();
  if (!PyFloat_Check(o) && !PyComplex_Check(o) && PyIndex_Check(o)) {
    py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (idx) return long_to_scalar(idx.ptr()).toLong();
    PyErr_Clear();
  }
  type_error(detail::str_cat(fn, "(): argument '", arg, "' must be int, not ", py_type_name(o)));
}

double to_double(PyObject* o, const char* fn, const char* arg) {
  if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);
  if (PyLong_Check(o) || (!PyComplex_Check(o) && is_scalar(o)) ||
      (is_tensor(o) && unwrap(o).dim() == 0)) {
    Scalar s = to_scalar(o, fn, arg);
    if (!s.isComplex()) return s.toDouble();
  }
  type_error(detail::str_cat(fn, "(): argument '", arg, "' must be float, not ", py_type_name(o)));
}

bool to_bool(PyObject* o, const char* fn, const char* arg) {
  if (PyBool_Check(o)) return o == Py_True;
  if (is_numpy_object(o) && std::strcmp(Py_TYPE(o)->tp_name, "numpy.bool_") == 0) {
    return PyObject_IsTrue(o) == 1;
  }
  type_error(detail::str_cat(fn, "(): argument '", arg, "' must be bool, not ", py_type_name(o)));
}

std::string to_string(PyObject* o, const char* fn, const char* arg) {
  if (PyUnicode_Check(o)) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) throw PythonErrorSet{};
    return std::string(s, size_t(n));
  }
  type_error(detail::str_cat(fn, "(): argument '", arg, "' must be str, not ", py_type_name(o)));
}

DimVector to_int_list(PyObject* o, const char* fn, const char* arg) {
  DimVector out;
  if (PyTuple_Check(o) || PyList_Check(o)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    out.resize(size_t(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* it = items[i];
      if (PyLong_Check(it)) {
        out[size_t(i)] = long_to_scalar(it).toLong();
      } else if (!PyFloat_Check(it) && PyIndex_Check(it)) {
        out[size_t(i)] = to_int(it, fn, arg);
      } else {
        type_error(detail::str_cat(fn, "(): argument '", arg,
                                   "' must be tuple of ints, but found element of type ",
                                   py_type_name(it), " at pos ", i));
      }
    }
    return out;
  }
  if (PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o))) {
    out.push_back(to_int(o, fn, arg));
    return out;
  }
  type_error(
      detail::str_cat(fn, "(): argument '", arg, "' must be tuple of ints, not ", py_type_name(o)));
}

DimVector sizes_from_args(PyObject* const* args, Py_ssize_t nargs, const char* fn) {
  if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
    return to_int_list(args[0], fn, "size");
  }
  DimVector out(size_t(nargs), 0);
  for (Py_ssize_t i = 0; i < nargs; ++i) out[size_t(i)] = to_int(args[i], fn, "size");
  return out;
}

MemoryFormat to_memory_format(PyObject* o, const char* fn) {
  if (!o || o == Py_None) return MemoryFormat::Preserve;
  if (std::strcmp(Py_TYPE(o)->tp_name, "memory_format") == 0) {
    const std::string name =
        py::cast<std::string>(py::reinterpret_borrow<py::object>(o).attr("_name"));
    if (name == "preserve_format") return MemoryFormat::Preserve;
    if (name == "contiguous_format") return MemoryFormat::Contiguous;
    if (name == "channels_last") return MemoryFormat::ChannelsLast;
    if (name == "channels_last_3d") return MemoryFormat::ChannelsLast3d;
  }
  type_error(detail::str_cat(fn, "(): argument 'memory_format' must be ember.memory_format, not ",
                             py_type_name(o)));
}

namespace {

/// Dims from the fastest-varying to the slowest in format `f` (channels-last formats).
std::vector<size_t> format_order(MemoryFormat f) {
  if (f == MemoryFormat::ChannelsLast) return {1, 3, 2, 0};
  return {1, 4, 3, 2, 0};
}

void check_rank(IntArrayRef sizes, MemoryFormat f) {
  if (f == MemoryFormat::ChannelsLast) {
    EMBER_CHECK(sizes.size() == 4, "required rank 4 tensor to use channels_last format");
  } else if (f == MemoryFormat::ChannelsLast3d) {
    EMBER_CHECK(sizes.size() == 5, "required rank 5 tensor to use channels_last_3d format");
  }
}

}  // namespace

DimVector format_strides(IntArrayRef sizes, MemoryFormat f) {
  check_rank(sizes, f);
  DimVector strides(sizes.size(), 1);
  if (f == MemoryFormat::Contiguous) {
    int64_t acc = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = acc;
      acc *= std::max<int64_t>(sizes[i], 1);
    }
    return strides;
  }
  // As c10's get_channels_last_strides: raw sizes, so a zero size gives zero strides above it.
  int64_t acc = 1;
  for (size_t d : format_order(f)) {
    strides[d] = acc;
    acc *= sizes[d];
  }
  return strides;
}

bool is_contiguous_as(const Tensor& t, MemoryFormat f) {
  if (f == MemoryFormat::Preserve) return true;
  // As PyTorch: every zero-size tensor is contiguous.
  if (f == MemoryFormat::Contiguous) return t.numel() == 0 || t.is_contiguous();
  const size_t rank = f == MemoryFormat::ChannelsLast ? 4 : 5;
  if (size_t(t.dim()) != rank) return false;
  int64_t expected = 1;
  for (size_t d : format_order(f)) {
    const int64_t size = t.sizes()[d];
    if (size == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= size;
  }
  return true;
}

MemoryFormat suggest_memory_format(const Tensor& t) {
  // c10's is_channels_last_strides_2d/3d: strides ordered as the channels-last dims, ties on
  // size-1 dims resolved towards the default (contiguous) layout.
  const size_t rank = size_t(t.dim());
  if (rank != 4 && rank != 5) return MemoryFormat::Contiguous;
  const MemoryFormat f = rank == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
  IntArrayRef sizes = t.sizes(), strides = t.strides();
  if (strides[1] == 0) return MemoryFormat::Contiguous;
  int64_t min = 0;
  for (size_t d : format_order(f)) {
    if (sizes[d] == 0 || strides[d] < min) return MemoryFormat::Contiguous;
    if (d == 0 && min == strides[1]) return MemoryFormat::Contiguous;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return f;
}

Tensor copy_as(const Tensor& t, MemoryFormat f) {
  Tensor out = empty_strided(t.sizes(), format_strides(t.sizes(), f), t.options());
  out.copy_(t);
  return out;
}

std::optional<Generator> to_generator(PyObject* o, const char* fn) {
  if (!o || o == Py_None) return std::nullopt;
  try {
    return py::cast<Generator>(py::handle(o));
  } catch (const py::cast_error&) {
    type_error(
        detail::str_cat(fn, "(): argument 'generator' must be Generator, not ", py_type_name(o)));
  }
}

// ---- registration ----

void add_method(PyMethodDef* def) {
  PyObject* descr = PyDescr_NewMethod(tensor_type, def);
  if (!descr ||
      PyObject_SetAttrString(reinterpret_cast<PyObject*>(tensor_type), def->ml_name, descr) != 0) {
    Py_XDECREF(descr);
    throw py::error_already_set();
  }
  Py_DECREF(descr);
}

void add_function(py::module_& m, PyMethodDef* def) {
  py::object name = py::str(m.attr("__name__"));
  PyObject* fn = PyCFunction_NewEx(def, nullptr, name.ptr());
  if (!fn || PyModule_AddObject(m.ptr(), def->ml_name, fn) != 0) {
    Py_XDECREF(fn);
    throw py::error_already_set();
  }
}

PyMethodDef* new_method_def(const char* name, FastFn fn, const char* doc) {
  // Leaked on purpose: method definitions must outlive every function object made from them.
  auto* def = new PyMethodDef{name, reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(fn)),
                              METH_FASTCALL | METH_KEYWORDS, doc};
  return def;
}

}  // namespace ember::python

namespace ember::python {

py::object return_type(const char* name, py::tuple items) {
  // The classes live in python/ember/return_types.py; the module is imported once and kept
  // for the life of the process (never destroyed after the interpreter is gone).
  static py::object* mod = new py::object(py::module_::import("ember.return_types"));
  return mod->attr(name)(std::move(items));
}

}  // namespace ember::python
