// Factories (zeros ... eye, *_like), ember.tensor / as_tensor from Python data, and random
// numbers (Generator, manual_seed, rand ... normal, the in-place random fills).
#include <cmath>
#include <cstring>

#include "core/complex_half.h"
#include "core/tensor_util.h"
#include "ember/half.h"
#include "pyember.h"

namespace ember::python {

Tensor tensor_from_numpy_arg(PyObject* o);  // interop.cpp
bool is_ndarray(PyObject* o);               // interop.cpp
void warn_if_readonly(PyObject* arr);       // interop.cpp

namespace {

#define FAST(name) \
  PyObject* name(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames)

/// Keyword options shared by the factories.
struct FactoryKw {
  PyObject* out = nullptr;
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
  bool requires_grad = false;
  std::optional<Generator> gen;
};

/// Reads the factory keywords from six parsed slots: out, dtype, layout, device, pin_memory,
/// requires_grad (layout and pin_memory are accepted and ignored: tensors are strided, memory
/// is not pinned).
FactoryKw read_kw(const char* fn, PyObject** a) {
  FactoryKw k;
  if (a[0] && a[0] != Py_None) k.out = a[0];
  k.dtype = to_dtype(a[1], fn);
  k.device = to_device(a[3], fn);
  if (k.out) {
    // As PyTorch: the result takes `out`'s dtype and device unless they are given (and match).
    const Tensor& o = to_tensor(k.out, fn, "out");
    EMBER_CHECK(!k.dtype || *k.dtype == o.dtype(), "dtype ", toString(*k.dtype),
                " does not match dtype of out parameter (", toString(o.dtype()), ")");
    EMBER_CHECK(!k.device || *k.device == o.device(), "device ", k.device->str(),
                " does not match device of out parameter (", o.device().str(), ")");
    k.dtype = o.dtype();
    k.device = o.device();
  }
  if (a[5]) k.requires_grad = to_bool(a[5], fn, "requires_grad");
  return k;
}

#define FACTORY_KW "out", "dtype", "layout", "device", "pin_memory", "requires_grad"

TensorOptions options(const FactoryKw& k) {
  TensorOptions o;
  if (k.dtype) o = o.dtype(*k.dtype);
  if (k.device) o = o.device(*k.device);
  return o;
}

PyObject* finish(Tensor t, const FactoryKw& k) {
  if (k.requires_grad) t.set_requires_grad(true);
  if (k.out) {
    Tensor& o = const_cast<Tensor&>(to_tensor(k.out, "factory", "out"));
    write_out(o, t, "factory");
    return return_self(k.out);
  }
  return wrap(std::move(t));
}

/// PyTorch's default complex dtype: complex128 when the default dtype is float64, else
/// complex64 (never complex32).
ScalarType default_complex() {
  return get_default_dtype() == kDouble ? kComplexDouble : kComplexFloat;
}

/// The dtype PyTorch infers for a fill value: bool, int64, default float or default complex.
ScalarType infer_scalar_dtype(const Scalar& s) {
  switch (s.type()) {
    case kBool:
      return kBool;
    case kLong:
      return kLong;
    case kComplexDouble:
      return default_complex();
    default:
      return get_default_dtype();
  }
}

/// Elements of a tensor of `sizes` (0 when a size is negative: the factory reports that).
int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= std::max<int64_t>(s, 0);
  return n;
}

/// An uninitialised tensor shaped like `x` in `format` (not Preserve), with that format's own
/// strides (size-1 dims included, as PyTorch's), of `k`'s dtype and device or else `x`'s.
Tensor empty_in_format(const Tensor& x, MemoryFormat format, const FactoryKw& k) {
  return empty_strided(
      x.sizes(), format_strides(x.sizes(), format),
      TensorOptions(k.dtype.value_or(x.dtype())).device(k.device.value_or(x.device())));
}

// ---- size-only factories ----

template <int Kind>  // 0 zeros, 1 ones, 2 empty, 3 rand, 4 randn
FAST(sized_factory) {
  EMBER_PY_BEGIN
  static const char* names[] = {"zeros", "ones", "empty", "rand", "randn"};
  const char* fn = names[Kind];
  // Leading positionals are the sizes (`zeros(2, 3)` or `zeros((2, 3))`); the rest are keywords.
  static const Params p(fn, {"*", "size", FACTORY_KW, "generator", "memory_format"});
  PyObject* a[9] = {};
  p.parse(args + nargs, 0, kwnames, a, 0);
  DimVector sizes;
  if (nargs == 0) {
    EMBER_CHECK_TYPE(a[0] != nullptr, fn, "() missing required argument 'size'");
    sizes = to_int_list(a[0], fn, "size");
  } else {
    EMBER_CHECK_TYPE(a[0] == nullptr, fn, "() got multiple values for argument 'size'");
    sizes = sizes_from_args(args, nargs, fn);
  }
  FactoryKw k = read_kw(fn, a + 1);
  if (a[7] && a[7] != Py_None) k.gen = to_generator(a[7], fn);
  // Of these only empty() takes memory_format in PyTorch; new tensors are contiguous.
  if (a[8] && Kind != 2) {
    type_error(detail::str_cat(fn, "() got an unexpected keyword argument 'memory_format'"));
  }
  const MemoryFormat format = to_memory_format(a[8], fn);
  TensorOptions o = options(k);
  Tensor t = maybe_without_gil(numel_of(sizes), [&] {
    switch (Kind) {
      case 0:
        return zeros(sizes, o);
      case 1:
        return ones(sizes, o);
      case 2:
        if (format == MemoryFormat::ChannelsLast || format == MemoryFormat::ChannelsLast3d) {
          return empty_strided(sizes, format_strides(sizes, format), o);
        }
        return empty(sizes, o);
      case 3:
        return rand(sizes, k.gen, o);
      default:
        return randn(sizes, k.gen, o);
    }
  });
  return finish(std::move(t), k);
  EMBER_PY_END
}

// ---- ember.tensor from Python data ----

ScalarType numpy_scalar_dtype(PyObject* o) {
  const char* n = Py_TYPE(o)->tp_name;
  struct Row {
    const char* name;
    ScalarType st;
  };
  static const Row rows[] = {
      {"numpy.bool_", kBool},
      {"numpy.uint8", kByte},
      {"numpy.int8", kChar},
      {"numpy.int16", kShort},
      {"numpy.int32", kInt},
      {"numpy.int64", kLong},
      {"numpy.float16", kHalf},
      {"numpy.float32", kFloat},
      {"numpy.float64", kDouble},
      {"numpy.complex64", kComplexFloat},
      {"numpy.complex128", kComplexDouble},
      {"numpy.longlong", kLong},
      {"numpy.intc", kInt},
  };
  for (const Row& r : rows) {
    if (std::strcmp(n, r.name) == 0) return r.st;
  }
  type_error(detail::str_cat("can't convert np.ndarray of type ", n,
                             ". The only supported types are: float64, float32, float16, "
                             "complex64, complex128, int64, int32, int16, int8, uint8, and bool."));
}

bool is_sequence_like(PyObject* o) {
  return PyList_Check(o) || PyTuple_Check(o) ||
         (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) &&
          !PyByteArray_Check(o) && !PyDict_Check(o));
}

[[noreturn]] void invalid_data(PyObject* o) {
  type_error(detail::str_cat("new(): invalid data type '", Py_TYPE(o)->tp_name, "'"));
}

/// Shape and dtype of nested data, as PyTorch infers them (promotion over all leaves).
void infer(PyObject* o, std::optional<ScalarType>& dt) {
  auto join = [&](ScalarType t) { dt = dt ? promoteTypes(*dt, t) : t; };
  // NumPy scalars first: numpy.float64 and numpy.complex128 subclass Python's float and
  // complex, but keep their own dtype (as in PyTorch).
  if (std::strncmp(Py_TYPE(o)->tp_name, "numpy.", 6) == 0 && !is_ndarray(o)) {
    return join(numpy_scalar_dtype(o));
  }
  if (PyBool_Check(o)) return join(kBool);
  if (PyLong_Check(o)) return join(kLong);
  if (PyFloat_Check(o)) return join(get_default_dtype());
  if (PyComplex_Check(o)) {
    // As PyTorch's tensor(): a complex number needs a float32 or float64 default dtype.
    EMBER_CHECK(get_default_dtype() == kFloat || get_default_dtype() == kDouble,
                "invalid default scalar type for complex");
    return join(default_complex());
  }
  if (is_tensor(o)) return join(unwrap(o).dtype());
  if (is_ndarray(o)) return join(tensor_from_numpy_arg(o).dtype());
  if (!is_sequence_like(o)) invalid_data(o);
  py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(o, "not a sequence"));
  if (!seq) throw PythonErrorSet{};
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) infer(items[i], dt);
}

DimVector infer_sizes(PyObject* o) {
  DimVector sizes;
  py::object cur = py::reinterpret_borrow<py::object>(o);
  while (true) {
    PyObject* c = cur.ptr();
    if (is_tensor(c)) {
      for (int64_t s : unwrap(c).sizes()) sizes.push_back(s);
      break;
    }
    if (is_ndarray(c)) {
      for (int64_t s : tensor_from_numpy_arg(c).sizes()) sizes.push_back(s);
      break;
    }
    if (PyBool_Check(c) || PyLong_Check(c) || PyFloat_Check(c) || PyComplex_Check(c) ||
        !is_sequence_like(c)) {
      break;
    }
    const Py_ssize_t n = PySequence_Size(c);
    if (n < 0) throw PythonErrorSet{};
    sizes.push_back(n);
    if (n == 0) break;
    cur = py::reinterpret_steal<py::object>(PySequence_GetItem(c, 0));
    if (!cur) throw PythonErrorSet{};
  }
  return sizes;
}

template <class T>
void store_scalar(char* p, const Scalar& s) {
  *reinterpret_cast<T*>(p) = s.to<T>();
}
template <>
void store_scalar<Half>(char* p, const Scalar& s) {
  *reinterpret_cast<Half*>(p) = Half(s.to<float>());
}
template <>
void store_scalar<BFloat16>(char* p, const Scalar& s) {
  *reinterpret_cast<BFloat16*>(p) = BFloat16(s.to<float>());
}
// complex32: both parts rounded to binary16 (Note [complex32]).
void store_complex_half(char* p, const Scalar& s) {
  *reinterpret_cast<ComplexHalf*>(p) = ComplexHalf(s.toComplexDouble());
}
using StoreFn = void (*)(char*, const Scalar&);

StoreFn store_fn(ScalarType t) {
  switch (t) {
#define EMBER_STORE_CASE(T, N) \
  case ScalarType::N:          \
    return &store_scalar<T>;
    EMBER_FORALL_SCALAR_TYPES(EMBER_STORE_CASE)
#undef EMBER_STORE_CASE
    case ScalarType::ComplexHalf:
      return &store_complex_half;
    default:
      throw ember::TypeError(detail::str_cat("tensor(): unsupported dtype ", dtype_name(t)));
  }
}

/// An element of tensor(data, dtype) as PyTorch checks it: a complex number into a real dtype
/// is a TypeError, a value out of an integer dtype's range a RuntimeError (negative values wrap
/// into uint8, as c10::checked_convert).
void check_element(const Scalar& s, ScalarType t, bool from_tensor = false) {
  if (isComplexType(t) || t == kBool) return;
  if (s.isComplex()) {
    // A complex Python number fails to unpack (TypeError); a complex tensor element fails to
    // convert (RuntimeError).
    EMBER_CHECK(!from_tensor, "value cannot be converted to type ", dtype_name(t),
                " without overflow");
    type_error(detail::str_cat("tensor(): can't convert a complex number to ", dtype_name(t)));
  }
  if (!isIntegralType(t, /*include_bool=*/false) || s.isBoolean()) return;
  EMBER_CHECK(value_fits(s, t), "value cannot be converted to type ", dtype_name(t),
              " without overflow");  // NaN fails too
}

struct Store {
  Tensor out;
  StoreFn fn;
  size_t itemsize;
  IntArrayRef sizes;
  ScalarType dtype;
};

/// Writes `o` (data for dims [d, ndim)) at `offset` elements into the contiguous output.
void store(const Store& st, PyObject* o, size_t d, int64_t offset, int64_t block) {
  char* base = static_cast<char*>(st.out.data_ptr());
  if (d == st.sizes.size()) {
    if (is_tensor(o) || is_ndarray(o)) {
      Tensor t = is_tensor(o) ? unwrap(o) : tensor_from_numpy_arg(o);
      EMBER_CHECK_VALUE(t.numel() == 1,
                        "only one element tensors can be converted to Python "
                        "scalars");
      Scalar v = t.item();
      check_element(v, st.dtype, /*from_tensor=*/true);
      st.fn(base + offset * int64_t(st.itemsize), v);
      return;
    }
    if (!(PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) ||
          is_scalar(o))) {
      // PyTorch raises TypeError for a ragged nesting (a sequence where a number belongs).
      if (is_sequence_like(o)) {
        throw ember::TypeError(detail::str_cat("tensor(): expected a number at dim ", d, " (got ",
                                               Py_TYPE(o)->tp_name, ")"));
      }
      invalid_data(o);
    }
    Scalar v = to_scalar(o, "tensor", "data");
    check_element(v, st.dtype);
    st.fn(base + offset * int64_t(st.itemsize), v);
    return;
  }
  const int64_t n = st.sizes[d];
  const int64_t inner = block / std::max<int64_t>(n, 1);
  if (is_tensor(o) || is_ndarray(o)) {
    Tensor t = is_tensor(o) ? unwrap(o) : tensor_from_numpy_arg(o);
    IntArrayRef want(st.sizes.data() + d, st.sizes.size() - d);
    EMBER_CHECK_VALUE(t.sizes() == want, "expected a tensor of shape ", want, " at dim ", d,
                      " (got ", t.sizes(), ")");
    Tensor dst = st.out.reshape({-1}).narrow(0, offset, block).view(want);
    dst.copy_(t);
    return;
  }
  if (!is_sequence_like(o)) {
    if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) ||
        is_scalar(o)) {
      throw ember::TypeError(detail::str_cat("tensor(): expected a sequence of length ", n,
                                             " at dim ", d, " (got a number)"));
    }
    invalid_data(o);
  }
  py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(o, "not a sequence"));
  if (!seq) throw PythonErrorSet{};
  const Py_ssize_t len = PySequence_Fast_GET_SIZE(seq.ptr());
  EMBER_CHECK_VALUE(len == n, "expected sequence of length ", n, " at dim ", d, " (got ", len, ")");
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  for (Py_ssize_t i = 0; i < len; ++i) store(st, items[i], d + 1, offset + i * inner, inner);
}

Tensor tensor_from_data(PyObject* data, std::optional<ScalarType> dtype) {
  if (is_tensor(data)) {
    const Tensor& t = unwrap(data);
    return t.to(dtype.value_or(t.dtype()), false, /*copy=*/true);
  }
  if (is_ndarray(data)) {
    Tensor t = tensor_from_numpy_arg(data);
    return t.to(dtype.value_or(t.dtype()), false, /*copy=*/true);
  }
  std::optional<ScalarType> inferred;
  if (!dtype) {
    infer(data, inferred);
    if (!inferred) inferred = get_default_dtype();  // empty sequences
  }
  const ScalarType dt = dtype ? *dtype : *inferred;
  DimVector sizes = infer_sizes(data);
  Store st{empty(sizes, TensorOptions(dt)), store_fn(dt), elementSize(dt), {}, dt};
  st.sizes = IntArrayRef(sizes);
  store(st, data, 0, 0, st.out.numel());
  return st.out;
}

FAST(py_tensor) {
  EMBER_PY_BEGIN
  static const Params p("tensor", {"data", "*", "dtype", "device", "requires_grad", "pin_memory"});
  PyObject* a[5];
  p.parse(args, nargs, kwnames, a, 1);
  FactoryKw k;
  k.dtype = to_dtype(a[1], "tensor");
  k.device = to_device(a[2], "tensor");
  if (a[3]) k.requires_grad = to_bool(a[3], "tensor", "requires_grad");
  Tensor t = tensor_from_data(a[0], k.dtype);
  if (k.device && *k.device != t.device()) t = t.to(*k.device);
  return finish(std::move(t), k);
  EMBER_PY_END
}

FAST(py_as_tensor) {
  EMBER_PY_BEGIN
  static const Params p("as_tensor", {"data", "dtype", "device"});
  PyObject* a[3];
  p.parse(args, nargs, kwnames, a, 1);
  auto dt = to_dtype(a[1], "as_tensor");
  auto dev = to_device(a[2], "as_tensor");
  Tensor t;
  if (is_tensor(a[0])) {
    t = unwrap(a[0]);
  } else if (is_ndarray(a[0])) {
    t = tensor_from_numpy_arg(a[0]);  // shares memory
    warn_if_readonly(a[0]);
  } else {
    t = tensor_from_data(a[0], dt);
  }
  TensorOptions o;
  if (dt) o = o.dtype(*dt);
  if (dev) o = o.device(*dev);
  Tensor r = t.to(o);
  if (is_tensor(a[0]) && r.is_same(t)) return return_self(a[0]);
  return wrap(std::move(r));
  EMBER_PY_END
}

// ---- value factories ----

FAST(py_full) {
  EMBER_PY_BEGIN
  static const Params p("full", {"size", "fill_value", "*", FACTORY_KW});
  PyObject* a[8];
  p.parse(args, nargs, kwnames, a, 2);
  FactoryKw k = read_kw("full", a + 2);
  Scalar v = to_scalar(a[1], "full", "fill_value");
  if (!k.dtype) k.dtype = infer_scalar_dtype(v);
  DimVector sizes = to_int_list(a[0], "full", "size");
  TensorOptions o = options(k);
  return finish(maybe_without_gil(numel_of(sizes), [&] { return full(sizes, v, o); }), k);
  EMBER_PY_END
}

template <int Kind>  // 0 zeros_like, 1 ones_like, 2 empty_like, 3 rand_like, 4 randn_like
FAST(like_factory) {
  EMBER_PY_BEGIN
  static const char* names[] = {"zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"};
  static const Params p(names[Kind], {"input", "*", FACTORY_KW, "memory_format"});
  PyObject* a[8];
  p.parse(args, nargs, kwnames, a, 1);
  const Tensor& x = to_tensor(a[0], names[Kind], "input");
  FactoryKw k = read_kw(names[Kind], a + 1);
  TensorOptions o = options(k);
  const MemoryFormat format = to_memory_format(a[7], names[Kind]);
  Tensor t = maybe_without_gil(x.numel(), [&] {
    if (format != MemoryFormat::Preserve) {
      Tensor r = empty_in_format(x, format, k);
      switch (Kind) {
        case 0:
          return r.zero_();
        case 1:
          return r.fill_(1);
        case 2:
          return r;
        case 3:
          return r.uniform_(0, 1, std::nullopt);
        default:
          return r.normal_(0, 1, std::nullopt);
      }
    }
    // Preserve: x's layout.
    switch (Kind) {
      case 0:
        return zeros_like(x, o);
      case 1:
        return ones_like(x, o);
      case 2:
        return empty_like(x, o);
      case 3:
        return rand_like(x, o);
      default:
        return randn_like(x, o);
    }
  });
  return finish(std::move(t), k);
  EMBER_PY_END
}

FAST(py_full_like) {
  EMBER_PY_BEGIN
  static const Params p("full_like", {"input", "fill_value", "*", FACTORY_KW, "memory_format"});
  PyObject* a[9];
  p.parse(args, nargs, kwnames, a, 2);
  const Tensor& x = to_tensor(a[0], "full_like", "input");
  FactoryKw k = read_kw("full_like", a + 2);
  const MemoryFormat format = to_memory_format(a[8], "full_like");
  const Scalar v = to_scalar(a[1], "full_like", "fill_value");
  if (format != MemoryFormat::Preserve) return finish(empty_in_format(x, format, k).fill_(v), k);
  return finish(full_like(x, v, options(k)), k);
  EMBER_PY_END
}

FAST(py_arange) {
  EMBER_PY_BEGIN
  static const Params p("arange", {"start", "end", "step", "*", FACTORY_KW});
  PyObject* a[9];
  p.parse(args, nargs, kwnames, a, 0);
  FactoryKw k = read_kw("arange", a + 3);
  TensorOptions o = options(k);
  for (int i = 0; i < 3; ++i) {
    EMBER_CHECK(!a[i] || !PyComplex_Check(a[i]),
                "arange(): value cannot be converted to type double without overflow");
  }
  Tensor t;
  if (!a[0] || !a[1]) {
    // arange(end) and arange(end=...): the one bound given is the end.
    PyObject* end = a[0] ? a[0] : a[1];
    EMBER_CHECK_TYPE(end && !a[2] && (nargs > 0 || !a[0]),
                     "arange() missing required argument 'end'");
    t = arange(to_scalar(end, "arange", "end"), o);
  } else if (!a[2]) {
    t = arange(to_scalar(a[0], "arange", "start"), to_scalar(a[1], "arange", "end"), o);
  } else {
    t = arange(to_scalar(a[0], "arange", "start"), to_scalar(a[1], "arange", "end"),
               to_scalar(a[2], "arange", "step"), o);
  }
  return finish(std::move(t), k);
  EMBER_PY_END
}

FAST(py_linspace) {
  EMBER_PY_BEGIN
  static const Params p("linspace", {"start", "end", "steps", "*", FACTORY_KW});
  PyObject* a[9];
  p.parse(args, nargs, kwnames, a, 3);
  FactoryKw k = read_kw("linspace", a + 3);
  return finish(linspace(to_scalar(a[0], "linspace", "start"), to_scalar(a[1], "linspace", "end"),
                         to_int(a[2], "linspace", "steps"), options(k)),
                k);
  EMBER_PY_END
}

FAST(py_logspace) {
  EMBER_PY_BEGIN
  static const Params p("logspace", {"start", "end", "steps", "base", "*", FACTORY_KW});
  PyObject* a[10];
  p.parse(args, nargs, kwnames, a, 3);
  FactoryKw k = read_kw("logspace", a + 4);
  double base = a[3] ? to_double(a[3], "logspace", "base") : 10.0;
  return finish(logspace(to_scalar(a[0], "logspace", "start"), to_scalar(a[1], "logspace", "end"),
                         to_int(a[2], "logspace", "steps"), base, options(k)),
                k);
  EMBER_PY_END
}

FAST(py_eye) {
  EMBER_PY_BEGIN
  static const Params p("eye", {"n", "m", "*", FACTORY_KW});
  PyObject* a[8];
  p.parse(args, nargs, kwnames, a, 1);
  FactoryKw k = read_kw("eye", a + 2);
  int64_t n = to_int(a[0], "eye", "n");
  Tensor t =
      (a[1] && a[1] != Py_None) ? eye(n, to_int(a[1], "eye", "m"), options(k)) : eye(n, options(k));
  return finish(std::move(t), k);
  EMBER_PY_END
}

FAST(py_empty_strided) {
  EMBER_PY_BEGIN
  static const Params p("empty_strided", {"size", "stride", "*", FACTORY_KW});
  PyObject* a[8];
  p.parse(args, nargs, kwnames, a, 2);
  FactoryKw k = read_kw("empty_strided", a + 2);
  return finish(empty_strided(to_int_list(a[0], "empty_strided", "size"),
                              to_int_list(a[1], "empty_strided", "stride"), options(k)),
                k);
  EMBER_PY_END
}

FAST(py_scalar_tensor) {
  EMBER_PY_BEGIN
  static const Params p("scalar_tensor", {"s", "*", FACTORY_KW});
  PyObject* a[7];
  p.parse(args, nargs, kwnames, a, 1);
  FactoryKw k = read_kw("scalar_tensor", a + 1);
  const Scalar v = to_scalar(a[0], "scalar_tensor", "s");
  const ScalarType dt = k.dtype.value_or(get_default_dtype());
  EMBER_CHECK(!v.isComplex() || isComplexType(dt), "value ", v, " cannot be converted to type ",
              dtype_name(dt), " without overflow");
  return finish(scalar_tensor(v, options(k)), k);
  EMBER_PY_END
}

// ---- random ----

FAST(py_randint) {
  EMBER_PY_BEGIN
  // randint(high, size) or randint(low, high, size), keywords after.
  static const Params p("randint",
                        {"a", "b", "c", "*", FACTORY_KW, "generator", "low", "high", "size"});
  PyObject* a[13] = {};
  p.parse(args, nargs, kwnames, a, 0);
  FactoryKw k = read_kw("randint", a + 3);
  k.gen = to_generator(a[9], "randint");
  PyObject *low = a[10], *high = a[11], *size = a[12];
  if (nargs == 3) {
    low = a[0], high = a[1], size = a[2];
  } else if (nargs == 2) {
    // randint(low, high, size=...) or randint(high, size).
    if (size)
      low = a[0], high = a[1];
    else
      high = a[0], size = a[1];
  } else if (nargs == 1) {
    if (high)
      low = a[0];
    else
      high = a[0];
  }
  EMBER_CHECK_TYPE(high && size, "randint() missing required arguments 'high' and 'size'");
  int64_t lo = low ? to_int(low, "randint", "low") : 0;
  if (!k.dtype) k.dtype = kLong;
  return finish(randint(lo, to_int(high, "randint", "high"), to_int_list(size, "randint", "size"),
                        k.gen, options(k)),
                k);
  EMBER_PY_END
}

FAST(py_randperm) {
  EMBER_PY_BEGIN
  static const Params p("randperm", {"n", "*", FACTORY_KW, "generator"});
  PyObject* a[8];
  p.parse(args, nargs, kwnames, a, 1);
  FactoryKw k = read_kw("randperm", a + 1);
  k.gen = to_generator(a[7], "randperm");
  if (!k.dtype) k.dtype = kLong;
  return finish(randperm(to_int(a[0], "randperm", "n"), k.gen, options(k)), k);
  EMBER_PY_END
}

FAST(py_normal) {
  EMBER_PY_BEGIN
  static const Params p("normal", {"mean", "std", "size", "*", "generator", FACTORY_KW});
  PyObject* a[10];
  p.parse(args, nargs, kwnames, a, 0);
  FactoryKw k = read_kw("normal", a + 4);
  k.gen = to_generator(a[3], "normal");
  PyObject* mean = a[0];
  PyObject* stdv = a[1];
  const bool mt = mean && is_tensor(mean), st = stdv && is_tensor(stdv);
  Tensor t;
  if (mt && st) {
    t = normal(unwrap(mean), unwrap(stdv), k.gen);
  } else if (mt) {
    t = normal(unwrap(mean), stdv ? to_double(stdv, "normal", "std") : 1.0, k.gen);
  } else if (st) {
    t = normal(mean ? to_double(mean, "normal", "mean") : 0.0, unwrap(stdv), k.gen);
  } else {
    EMBER_CHECK_TYPE(a[2] != nullptr, "normal(): with float mean and std, 'size' is required");
    t = normal(mean ? to_double(mean, "normal", "mean") : 0.0,
               stdv ? to_double(stdv, "normal", "std") : 1.0, to_int_list(a[2], "normal", "size"),
               k.gen, options(k));
  }
  return finish(std::move(t), k);
  EMBER_PY_END
}

/// A generator state argument, checked with PyTorch's exception types.
const Tensor& checked_state(const Tensor& s) {
  EMBER_CHECK_TYPE(s.dtype() == kByte, "RNG state must be a uint8 tensor, got ",
                   dtype_name(s.dtype()));
  EMBER_CHECK(s.numel() == 16, "[set_state] expected a generator state of 16 bytes, got ",
              s.numel());
  return s;
}

/// A seed as PyTorch unpacks it: an int in [-2^63, 2^64), negative values wrapping into uint64;
/// RuntimeError otherwise.
uint64_t seed_value(PyObject* o) {
  EMBER_CHECK(PyLong_Check(o) && !PyBool_Check(o), "manual_seed expected a long, but got ",
              Py_TYPE(o)->tp_name);
  const unsigned long long u = PyLong_AsUnsignedLongLong(o);
  if (!PyErr_Occurred()) return uint64_t(u);
  PyErr_Clear();
  return uint64_t(to_int(o, "manual_seed", "seed"));  // overflow: RuntimeError
}

}  // namespace

void init_factory(py::module_& m) {
  static PyMethodDef* fns[] = {
      new_method_def("zeros", sized_factory<0>),
      new_method_def("ones", sized_factory<1>),
      new_method_def("empty", sized_factory<2>),
      new_method_def("rand", sized_factory<3>),
      new_method_def("randn", sized_factory<4>),
      new_method_def("zeros_like", like_factory<0>),
      new_method_def("ones_like", like_factory<1>),
      new_method_def("empty_like", like_factory<2>),
      new_method_def("rand_like", like_factory<3>),
      new_method_def("randn_like", like_factory<4>),
      new_method_def("full", py_full),
      new_method_def("full_like", py_full_like),
      new_method_def("tensor", py_tensor),
      new_method_def("as_tensor", py_as_tensor),
      new_method_def("arange", py_arange),
      new_method_def("linspace", py_linspace),
      new_method_def("logspace", py_logspace),
      new_method_def("eye", py_eye),
      new_method_def("empty_strided", py_empty_strided),
      new_method_def("scalar_tensor", py_scalar_tensor),
      new_method_def("randint", py_randint),
      new_method_def("randperm", py_randperm),
      new_method_def("normal", py_normal),
  };
  for (PyMethodDef* d : fns) add_function(m, d);

  using py::arg;
  py::class_<Generator>(m, "Generator")
      .def(py::init([](py::handle device) {
             auto d = to_device(device.ptr(), "Generator");
             return Generator(d.value_or(Device(kCPU)));
           }),
           arg("device") = "cpu")
      .def(
          "manual_seed",
          [](py::handle self, py::handle seed) {
            py::cast<Generator&>(self).manual_seed(seed_value(seed.ptr()));
            return py::reinterpret_borrow<py::object>(self);
          },
          arg("seed"))
      .def("seed", &Generator::seed)
      .def("initial_seed", &Generator::initial_seed)
      .def("get_state", &Generator::get_state)
      .def(
          "set_state",
          [](py::handle self, const Tensor& s) {
            py::cast<Generator&>(self).set_state(checked_state(s));
            return py::reinterpret_borrow<py::object>(self);
          },
          arg("new_state"))
      .def_property_readonly("device", &Generator::device);

  m.def(
      "manual_seed",
      [](py::handle seed) {
        // As torch.manual_seed: int(seed) first (so 2.5 and "7" are seeds; "a" is a ValueError).
        py::object i = py::reinterpret_steal<py::object>(PyNumber_Long(seed.ptr()));
        if (!i) throw py::error_already_set();
        manual_seed(seed_value(i.ptr()));
        return default_generator();
      },
      arg("seed"));
  m.def("seed", [] { return default_generator().seed(); });
  m.def("initial_seed", [] { return default_generator().initial_seed(); });
  m.def("get_rng_state", [] { return default_generator().get_state(); });
  m.def(
      "set_rng_state", [](const Tensor& s) { default_generator().set_state(checked_state(s)); },
      arg("new_state"));
  m.attr("default_generator") = default_generator();

  m.def(
      "bernoulli",
      [](const Tensor& x, py::handle p, py::handle gen) {
        auto g = to_generator(gen.ptr(), "bernoulli");
        if (p.is_none()) return bernoulli(x, g);
        return bernoulli(x, to_double(p.ptr(), "bernoulli", "p"), g);
      },
      arg("input"), arg("p") = py::none(), py::kw_only(), arg("generator") = py::none());
  m.def(
      "multinomial",
      [](const Tensor& x, int64_t n, bool repl, py::handle gen) {
        return multinomial(x, n, repl, to_generator(gen.ptr(), "multinomial"));
      },
      arg("input"), arg("num_samples"), arg("replacement") = false, py::kw_only(),
      arg("generator") = py::none());

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));
  auto self_obj = [](py::handle s) { return py::reinterpret_borrow<py::object>(s); };
  cls.def(
      "uniform_",
      [self_obj](py::handle s, double from, double to, py::handle gen) {
        unwrap(s.ptr()).uniform_(from, to, to_generator(gen.ptr(), "uniform_"));
        return self_obj(s);
      },
      arg("from") = 0.0, arg("to") = 1.0, py::kw_only(), arg("generator") = py::none());
  cls.def(
      "normal_",
      [self_obj](py::handle s, double mean, double std, py::handle gen) {
        unwrap(s.ptr()).normal_(mean, std, to_generator(gen.ptr(), "normal_"));
        return self_obj(s);
      },
      arg("mean") = 0.0, arg("std") = 1.0, py::kw_only(), arg("generator") = py::none());
  cls.def(
      "exponential_",
      [self_obj](py::handle s, double l, py::handle gen) {
        unwrap(s.ptr()).exponential_(l, to_generator(gen.ptr(), "exponential_"));
        return self_obj(s);
      },
      arg("lambd") = 1.0, py::kw_only(), arg("generator") = py::none());
  cls.def(
      "bernoulli_",
      [self_obj](py::handle s, py::handle p, py::handle gen) {
        Tensor& t = unwrap(s.ptr());
        auto g = to_generator(gen.ptr(), "bernoulli_");
        if (is_tensor(p.ptr()))
          t.bernoulli_(unwrap(p.ptr()), g);
        else
          t.bernoulli_(to_double(p.ptr(), "bernoulli_", "p"), g);
        return self_obj(s);
      },
      arg("p") = 0.5, py::kw_only(), arg("generator") = py::none());
  cls.def(
      "bernoulli",
      [](const Tensor& t, py::handle gen) {
        return t.bernoulli(to_generator(gen.ptr(), "bernoulli"));
      },
      py::kw_only(), arg("generator") = py::none());
  cls.def(
      "random_",
      [self_obj](py::handle s, py::handle a, py::handle b, py::handle gen) {
        Tensor& t = unwrap(s.ptr());
        auto g = to_generator(gen.ptr(), "random_");
        if (a.is_none()) {
          t.random_(0, std::nullopt, g);
        } else if (b.is_none()) {
          t.random_(0, to_int(a.ptr(), "random_", "to"), g);
        } else {
          t.random_(to_int(a.ptr(), "random_", "from"), to_int(b.ptr(), "random_", "to"), g);
        }
        return self_obj(s);
      },
      arg("from") = py::none(), arg("to") = py::none(), py::kw_only(),
      arg("generator") = py::none());
}

}  // namespace ember::python
