// NumPy (zero-copy from_numpy / numpy(), __array__) and DLPack 0.6 (__dlpack__,
// __dlpack_device__, from_dlpack).
//
// Note [Foreign memory lifetime]
// A tensor made from a NumPy array or a DLPack capsule holds the producer alive through the
// storage's deleter: a reference to the ndarray, or the DLManagedTensor whose deleter we call.
// Tensors can die on any thread (and with the GIL released), so both deleters take the GIL
// before touching Python objects, and do nothing Python-side once the interpreter is gone.
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <cstring>

#include "core/memory_check.h"
#include "pyember.h"

namespace ember::python {

bool is_ndarray(PyObject* o) { return std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0; }

namespace {

struct NumpyType {
  char kind;
  int size;
  ScalarType st;
  const char* format;  // NumPy typestr without the byte-order mark
};

const NumpyType kNumpyTypes[] = {
    {'b', 1, kBool, "b1"},
    {'u', 1, kByte, "u1"},
    {'i', 1, kChar, "i1"},
    {'i', 2, kShort, "i2"},
    {'i', 4, kInt, "i4"},
    {'i', 8, kLong, "i8"},
    {'f', 2, kHalf, "f2"},
    {'f', 4, kFloat, "f4"},
    {'f', 8, kDouble, "f8"},
    {'c', 8, kComplexFloat, "c8"},
    {'c', 16, kComplexDouble, "c16"},
};

void release_pyobject(PyObject* o) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE s = PyGILState_Ensure();
  Py_DECREF(o);
  PyGILState_Release(s);
}

[[noreturn]] void unsupported_numpy_type(PyObject* arr) {
  py::object name =
      py::reinterpret_borrow<py::object>(arr).attr("dtype").attr("type").attr("__name__");
  throw ember::TypeError(detail::str_cat(
      "can't convert np.ndarray of type numpy.", py::cast<std::string>(name),
      ". The only supported types are: float64, float32, float16, complex64, complex128, int64, "
      "int32, int16, int8, uint8, and bool."));
}

}  // namespace

Tensor tensor_from_numpy_arg(PyObject* arr) {
  EMBER_CHECK_TYPE(is_ndarray(arr), "expected np.ndarray (got ", Py_TYPE(arr)->tp_name, ")");
  py::dict iface = py::reinterpret_borrow<py::object>(arr).attr("__array_interface__");
  std::string typestr = py::cast<std::string>(iface["typestr"]);
  EMBER_CHECK_VALUE(typestr[0] != '>',
                    "given numpy array has byte order different from the native byte order. "
                    "Conversion between byte orders is currently not supported.");
  const NumpyType* nt = nullptr;
  for (const NumpyType& t : kNumpyTypes) {
    if (typestr.compare(1, std::string::npos, t.format) == 0) nt = &t;
  }
  if (!nt) unsupported_numpy_type(arr);
  py::tuple shape = iface["shape"];
  DimVector sizes, strides;
  for (py::handle s : shape) sizes.push_back(py::cast<int64_t>(s));
  // ndarray.strides, not the interface's (None when C-contiguous): PyTorch takes NumPy's
  // strides as they are, zero-size arrays included.
  py::tuple st = py::reinterpret_borrow<py::object>(arr).attr("strides");
  {
    for (py::handle s : st) {
      int64_t b = py::cast<int64_t>(s);
      EMBER_CHECK_VALUE(b >= 0,
                        "At least one stride in the given numpy array is negative, and tensors "
                        "with negative strides are not currently supported. (You can probably "
                        "work around this by making a copy of your array  with array.copy().) ");
      EMBER_CHECK_VALUE(b % nt->size == 0,
                        "given numpy array strides not a multiple of the element byte size. Copy "
                        "the numpy array to reallocate the memory.");
      strides.push_back(b / nt->size);
    }
  }
  py::tuple data = iface["data"];
  void* ptr = reinterpret_cast<void*>(py::cast<uintptr_t>(data[0]));
  Py_INCREF(arr);
  return from_blob(
      ptr, sizes, strides, [arr](void*) { release_pyobject(arr); }, TensorOptions(nt->st));
}

void warn_if_readonly(PyObject* arr) {
  py::object flags = py::reinterpret_borrow<py::object>(arr).attr("flags");
  if (py::cast<bool>(flags.attr("writeable"))) return;
  if (PyErr_WarnEx(PyExc_UserWarning,
                   "The given NumPy array is not writable, and ember does not support "
                   "non-writable tensors: writing to this tensor is undefined behaviour. Copy "
                   "the array or make it writable before converting it to a tensor.",
                   1) != 0) {
    throw py::error_already_set();  // warnings turned into errors
  }
}

namespace {

// ---- NumPy ----

py::object to_numpy(py::handle self, bool force) {
  Tensor t = unwrap(self.ptr());
  check_has_memory(t, "numpy");
  py::handle base = self;
  py::object holder;
  if (force) {
    t = t.cpu().resolve_conj();
    holder = wrap_obj(t);
    base = holder;
  } else {
    EMBER_CHECK_TYPE(t.is_cpu(), "can't convert ", t.device().str(),
                     " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                     "memory first.");
    EMBER_CHECK(!t.requires_grad(),
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead.");
    EMBER_CHECK(!t.is_conj(),
                "Can't call numpy() on Tensor that has conjugate bit set. Use "
                "tensor.resolve_conj().numpy() instead.");
  }
  const NumpyType* nt = nullptr;
  for (const NumpyType& x : kNumpyTypes) {
    if (x.st == t.dtype()) nt = &x;
  }
  EMBER_CHECK_TYPE(nt != nullptr, "Got unsupported ScalarType ", toString(t.dtype()));
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t.strides()) strides.push_back(py::ssize_t(s * nt->size));
  py::dtype dt((std::string("=") + nt->format).c_str());
  return py::array(dt, shape, strides, t.data_ptr(), base);
}

// ---- DLPack ----

struct DLPackContext {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed;
};

DLDataType to_dl_dtype(ScalarType t) {
  DLDataType d;
  d.lanes = 1;
  d.bits = uint8_t(elementSize(t) * 8);
  switch (t) {
    case kBool:
      throw ember::Error("Bool type is not supported by dlpack");
    case kByte:
      d.code = kDLUInt;
      break;
    case kChar:
    case kShort:
    case kInt:
    case kLong:
      d.code = kDLInt;
      break;
    case kHalf:
    case kFloat:
    case kDouble:
      d.code = kDLFloat;
      break;
    case kBFloat16:
      d.code = kDLBfloat;
      break;
    case kComplexFloat:
    case kComplexDouble:
      d.code = kDLComplex;
      break;
    default:
      throw ember::TypeError(detail::str_cat("dlpack: unsupported dtype ", dtype_name(t)));
  }
  return d;
}

ScalarType from_dl_dtype(DLDataType d) {
  EMBER_CHECK(d.lanes == 1, "[from_dlpack] only lanes == 1 is supported, got ", int(d.lanes));
  switch (d.code) {
    case kDLUInt:
      EMBER_CHECK(d.bits == 8, "[from_dlpack] unsupported kUInt bits ", int(d.bits));
      return kByte;
    case kDLInt:
      switch (d.bits) {
        case 8:
          return kChar;
        case 16:
          return kShort;
        case 32:
          return kInt;
        case 64:
          return kLong;
      }
      break;
    case kDLFloat:
      switch (d.bits) {
        case 16:
          return kHalf;
        case 32:
          return kFloat;
        case 64:
          return kDouble;
      }
      break;
    case kDLBfloat:
      if (d.bits == 16) return kBFloat16;
      break;
    case kDLComplex:
      if (d.bits == 64) return kComplexFloat;
      if (d.bits == 128) return kComplexDouble;
      break;
  }
  throw ember::Error(detail::str_cat("[from_dlpack] unsupported DLPack dtype code ", int(d.code),
                                     " with ", int(d.bits), " bits"));
}

void dl_deleter(DLManagedTensor* m) { delete static_cast<DLPackContext*>(m->manager_ctx); }

void capsule_destructor(PyObject* cap) {
  // Only an unconsumed capsule still owns its tensor.
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}

py::object to_dlpack(const Tensor& t) {
  auto* ctx = new DLPackContext{t, {}, {}, {}};
  ctx->shape.assign(t.sizes().begin(), t.sizes().end());
  ctx->strides.assign(t.strides().begin(), t.strides().end());
  DLTensor& dl = ctx->managed.dl_tensor;
  try {
    EMBER_CHECK(!t.is_conj(),
                "[__dlpack__] cannot export a tensor with the conjugate bit set; "
                "call resolve_conj() first");
    dl.dtype = to_dl_dtype(t.dtype());
  } catch (...) {
    delete ctx;
    throw;
  }
  dl.data = t.data_ptr();
  dl.byte_offset = 0;
  dl.device.device_type = t.is_cuda() ? kDLCUDA : kDLCPU;
  dl.device.device_id = t.is_cuda() ? std::max(t.device().index(), 0) : 0;
  dl.ndim = int(t.dim());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = dl_deleter;
  PyObject* cap = PyCapsule_New(&ctx->managed, "dltensor", capsule_destructor);
  if (!cap) {
    delete ctx;
    throw PythonErrorSet{};
  }
  return py::reinterpret_steal<py::object>(cap);
}

void release_dlpack(DLManagedTensor* m) {
  if (!m->deleter) return;
  // Producers' deleters may touch Python objects (NumPy's does).
  if (Py_IsInitialized()) {
    PyGILState_STATE s = PyGILState_Ensure();
    m->deleter(m);
    PyGILState_Release(s);
  } else {
    m->deleter(m);
  }
}

Tensor from_dlpack_capsule(PyObject* cap) {
  EMBER_CHECK(PyCapsule_CheckExact(cap),
              "from_dlpack received an invalid capsule: __dlpack__ "
              "returned ",
              Py_TYPE(cap)->tp_name);
  EMBER_CHECK(PyCapsule_IsValid(cap, "dltensor"),
              "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
              "consumed only once, so you might have already constructed a tensor from it once.");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
  const DLTensor& dl = m->dl_tensor;
  Device dev(kCPU);
  if (dl.device.device_type == kDLCUDA) {
    dev = Device(kCUDA, dl.device.device_id);
  } else {
    EMBER_CHECK(dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost,
                "[from_dlpack] unsupported device type ", int(dl.device.device_type));
  }
  ScalarType st = from_dl_dtype(dl.dtype);
  DimVector sizes, strides;
  for (int i = 0; i < dl.ndim; ++i) sizes.push_back(dl.shape[i]);
  if (dl.strides) {
    for (int i = 0; i < dl.ndim; ++i) strides.push_back(dl.strides[i]);
  } else {
    strides.resize(size_t(dl.ndim));
    int64_t acc = 1;
    for (int i = dl.ndim; i-- > 0;) {
      strides[size_t(i)] = acc;
      acc *= std::max<int64_t>(sizes[size_t(i)], 1);
    }
  }
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  Tensor t = from_blob(
      data, sizes, strides, [m](void*) { release_dlpack(m); }, TensorOptions(st).device(dev));
  // Consumed: the tensor now owns the managed tensor.
  PyCapsule_SetName(cap, "used_dltensor");
  return t;
}

}  // namespace

void init_interop(py::module_& m) {
  using py::arg;
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));
  cls.def(
      "numpy", [](py::handle self, bool force) { return to_numpy(self, force); }, py::kw_only(),
      arg("force") = false);
  cls.def(
      "__array__",
      [](py::handle self, py::handle dtype) {
        py::object a = to_numpy(self, false);
        if (!dtype.is_none()) return a.attr("astype")(dtype, py::arg("copy") = false);
        return a;
      },
      arg("dtype") = py::none());
  cls.def(
      "__dlpack__", [](const Tensor& t, py::handle) { return to_dlpack(t); },
      arg("stream") = py::none());
  cls.def("__dlpack_device__", [](const Tensor& t) {
    return py::make_tuple(int(t.is_cuda() ? kDLCUDA : kDLCPU),
                          t.is_cuda() ? std::max(t.device().index(), 0) : 0);
  });
  m.def(
      "from_numpy",
      [](py::handle a) {
        EMBER_CHECK_TYPE(is_ndarray(a.ptr()), "expected np.ndarray (got ",
                         Py_TYPE(a.ptr())->tp_name, ")");
        Tensor t = tensor_from_numpy_arg(a.ptr());
        warn_if_readonly(a.ptr());  // as PyTorch: the tensor shares memory it may not write
        return t;
      },
      arg("ndarray"));
  m.def(
      "from_dlpack",
      [](py::handle ext) {
        if (PyCapsule_CheckExact(ext.ptr())) return from_dlpack_capsule(ext.ptr());
        // PyTorch treats anything without __dlpack__ as a capsule and fails with RuntimeError.
        EMBER_CHECK(
            py::hasattr(ext, "__dlpack__"),
            "from_dlpack received an invalid capsule: expected an object with __dlpack__ or "
            "a DLPack capsule, got ",
            Py_TYPE(ext.ptr())->tp_name);
        py::object cap = ext.attr("__dlpack__")();
        return from_dlpack_capsule(cap.ptr());
      },
      arg("ext_tensor"));
  m.def(
      "to_dlpack", [](const Tensor& t) { return to_dlpack(t); }, arg("tensor"));
}

}  // namespace ember::python
