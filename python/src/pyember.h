#pragma once
/// Shared pieces of the Python binding: argument parsing, conversions between Python objects and
/// ember values, and the registration of fast (METH_FASTCALL) functions and methods.
///
/// Note [Fast calls]
/// Hot entry points (operators, in-place arithmetic, indexing, the elementwise ops) are plain
/// CPython METH_FASTCALL functions registered on the pybind11 Tensor type, with one keyword
/// parser (`Params`) and no overload cascade: a call costs one parse and one C++ op. The rest of
/// the API goes through ordinary pybind11 definitions. Both paths convert C++ errors with
/// `set_python_error`, so a mistake raises the same Python exception either way.

#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/ember.h"

namespace py = pybind11;

namespace ember::python {

// ---- errors ----

/// Sets the Python error for the exception in flight (ember errors by kind, others as
/// RuntimeError). Call from a catch block.
void set_python_error();

/// Raised by the conversion helpers when the Python error is already set.
struct PythonErrorSet {};

/// Wraps the body of a fast function: returns nullptr with the Python error set on exceptions.
#define EMBER_PY_BEGIN try {
#define EMBER_PY_END                               \
  }                                                \
  catch (const ::ember::python::PythonErrorSet&) { \
    return nullptr;                                \
  }                                                \
  catch (const py::error_already_set& e) {         \
    py::error_already_set(e).restore();            \
    return nullptr;                                \
  }                                                \
  catch (...) {                                    \
    ::ember::python::set_python_error();           \
    return nullptr;                                \
  }

/// Throws TypeError (as a C++ ember::TypeError, converted on the way out).
[[noreturn]] void type_error(const std::string& msg);

// ---- argument parsing ----

/// A parameter list: positional-or-keyword names, then "*", then keyword-only names.
/// `parse` fills one PyObject* per parameter (nullptr when not given).
class Params {
 public:
  Params(const char* fn, std::initializer_list<const char*> names);
  /// Parses a fastcall argument vector; TypeError on unknown/duplicate/too many arguments or a
  /// missing one among the first `required` parameters.
  void parse(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** out,
             int required) const;
  const char* fn() const { return fn_; }
  const char* name(int i) const { return names_[i]; }

 private:
  const char* fn_;
  std::vector<const char*> names_;
  int n_positional_;
};

// ---- Tensor objects ----

/// The Python Tensor type (set when the class is registered).
extern PyTypeObject* tensor_type;
/// True for ember.Tensor and its subclasses.
inline bool is_tensor(PyObject* o) { return PyObject_TypeCheck(o, tensor_type); }
/// The C++ Tensor held by a Python Tensor (precondition: is_tensor(o)).
Tensor& unwrap(PyObject* o);
/// A new Python Tensor holding `t` (None for an undefined tensor).
PyObject* wrap(Tensor t);
inline py::object wrap_obj(Tensor t) {
  return py::reinterpret_steal<py::object>(wrap(std::move(t)));
}
/// Writes `result` into the `out=` tensor of `op` (resized when empty), as the elementwise ops'
/// out=: the result dtype must cast to out's, and a nonempty out must have the result's shape.
void write_out(Tensor& out, const Tensor& result, const char* op);
/// The tensor argument `o` of `fn`; TypeError naming the argument otherwise.
const Tensor& to_tensor(PyObject* o, const char* fn, const char* arg);

// ---- scalars ----

/// Python bool/int/float/complex, NumPy scalars and 0-d arrays of those kinds.
bool is_scalar(PyObject* o);
/// Converts a number; TypeError when `o` is not one.
Scalar to_scalar(PyObject* o, const char* fn = "", const char* arg = "");
/// A Scalar as a Python number (bool, int, float or complex).
PyObject* scalar_to_py(const Scalar& s);
/// Tensor or Scalar, for ops that take either.
struct TensorOrScalar {
  const Tensor* tensor = nullptr;
  Scalar scalar;
};
/// Accepts a tensor or a number; returns false (no error set) for anything else.
bool to_tensor_or_scalar(PyObject* o, TensorOrScalar& out);

// ---- dtypes, devices, sizes ----

/// The ember.dtype object of `t`.
PyObject* dtype_object(ScalarType t);
/// dtype argument: None → nullopt; an ember.dtype, or Python's bool/int/float/complex types.
std::optional<ScalarType> to_dtype(PyObject* o, const char* fn = "");
bool is_dtype(PyObject* o);
/// device argument: ember.device, "cpu"/"cuda:0" strings, an int (CUDA index); None → nullopt.
std::optional<Device> to_device(PyObject* o, const char* fn = "");
PyObject* device_object(Device d);
/// Parses "cpu", "cuda:1", ...; RuntimeError (as PyTorch) for a bad string.
Device device_from_string(const std::string& spec);
/// A sequence of ints (ember.Size, tuple, list, 0-d integer tensors inside); TypeError otherwise.
DimVector to_int_list(PyObject* o, const char* fn, const char* arg);
/// An int argument (Python int, NumPy integer, integer 0-d tensor via __index__).
int64_t to_int(PyObject* o, const char* fn, const char* arg);
double to_double(PyObject* o, const char* fn, const char* arg);
bool to_bool(PyObject* o, const char* fn, const char* arg);
/// Sizes given as `*size` or one sequence: f(2, 3) or f((2, 3)) or f([2, 3]).
DimVector sizes_from_args(PyObject* const* args, Py_ssize_t nargs, const char* fn);
/// A new ember.Size.
PyObject* make_size(IntArrayRef sizes);
/// std::string from a Python str; TypeError otherwise.
std::string to_string(PyObject* o, const char* fn, const char* arg);
/// PyTorch's memory_format argument. ember tensors take any strides, so the channels-last
/// formats are just those strides (N, C, H, W) -> (HWC, 1, WC, C).
enum class MemoryFormat : uint8_t { Preserve, Contiguous, ChannelsLast, ChannelsLast3d };
/// None and ember.preserve_format -> Preserve, ember.contiguous_format -> Contiguous, ...;
/// TypeError for anything else.
MemoryFormat to_memory_format(PyObject* o, const char* fn);
/// The strides of a dense tensor of `sizes` in format `f` (not Preserve); RuntimeError when the
/// rank does not fit the format (channels_last needs 4 dims, channels_last_3d 5).
DimVector format_strides(IntArrayRef sizes, MemoryFormat f);
/// Whether `t` is dense in format `f` (size-1 dims ignored, as PyTorch's is_contiguous(f)).
bool is_contiguous_as(const Tensor& t, MemoryFormat f);
/// PyTorch's suggest_memory_format(): a channels-last format when `t`'s strides are ordered
/// as one, else Contiguous.
MemoryFormat suggest_memory_format(const Tensor& t);
/// A copy of `t` in format `f` (not Preserve).
Tensor copy_as(const Tensor& t, MemoryFormat f);
/// A Generator argument (None → nullopt).
std::optional<Generator> to_generator(PyObject* o, const char* fn);

/// True when an op on `numel` elements is long enough to be worth releasing the GIL.
inline bool release_gil_for(int64_t numel) { return numel >= (1 << 14); }

/// Runs `f` with the GIL released when the work is large.
template <class F>
auto maybe_without_gil(int64_t numel, F&& f) {
  if (release_gil_for(numel)) {
    py::gil_scoped_release nogil;
    return f();
  }
  return f();
}

/// Returns `self` with a new reference (in-place methods and `out=` return the same object).
inline PyObject* return_self(PyObject* self) {
  Py_INCREF(self);
  return self;
}

// ---- registration ----

/// A METH_FASTCALL|METH_KEYWORDS C function.
using FastFn = PyObject* (*)(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames);

/// Adds a METH_FASTCALL|METH_KEYWORDS method to the Tensor type. `def` must outlive the type.
void add_method(PyMethodDef* def);
/// Adds a METH_FASTCALL|METH_KEYWORDS function to `module`.
void add_function(py::module_& m, PyMethodDef* def);
/// Storage for generated PyMethodDefs (never freed: they live as long as the module).
PyMethodDef* new_method_def(const char* name, FastFn fn, const char* doc = "");

// ---- per-area initialisers (one .cpp each) ----
/// A named result tuple of ember.return_types (e.g. "max": values, indices), like
/// torch.return_types; `name` must be one of the names that module defines.
py::object return_type(const char* name, py::tuple items);

void init_types(py::module_& m);        // dtype, device, Size, finfo/iinfo
void init_tensor(py::module_& m);       // the Tensor class: metadata, copies, views, operators
void init_indexing(py::module_& m);     // __getitem__ / __setitem__
void init_elementwise(py::module_& m);  // the op-table families and their special cases
void init_factory(py::module_& m);      // factories, ember.tensor, random
void init_interop(py::module_& m);      // NumPy and DLPack
void init_join(py::module_& m);         // cat, stack, h/v/d/column_stack, atleast_Nd
void init_reduce(py::module_& m);       // reductions
void init_sort(py::module_& m);         // scans, softmax, sorting
void init_unique(py::module_& m);       // unique, unique_consecutive
void init_order_stats(py::module_& m);  // kthvalue, median, mode, quantile
void init_index_ops(py::module_& m);    // index_select, gather/scatter, masked_*, nonzero, take
void init_shape(py::module_& m);        // flip/roll/repeat/tile/diag/pad/searchsorted/...
void init_blas(py::module_& m);         // matmul and the matrix products, einsum
void init_linalg(py::module_& m);       // the _C._linalg submodule (ember.linalg)
void init_autograd(py::module_& m);     // Tensor autograd attributes and _C._autograd
void init_conv(py::module_& m);         // _C._nn: convolution, pooling, resampling
void init_nn_ops(py::module_& m);       // _C._nn: losses, normalization, dropout, embedding
void init_nn(py::module_& m);           // _C._nn: linear, init helpers, clip_grad
void init_rnn(py::module_& m);          // _C._nn: RNN / LSTM / GRU layers and cells
void init_optim(py::module_& m);        // _C._optim: multi-tensor optimizer steps
void init_data(py::module_& m);         // _C._data: IDX reader, image transforms
void init_serialize(py::module_& m);    // _C._serialize: safetensors save/load
void init_profiler(py::module_& m);     // _C._profiler: sessions, ranges, schedules, tables
void init_random_dist(py::module_& m);  // gamma-family ops and the distribution samplers
void init_distributions(py::module_& m);  // _C._distributions: C++ distribution kernels
void init_shared_memory(py::module_& m);  // _C._shm: shared-memory storages, fd handles
void init_pickle(py::module_& m);       // _C._pickle: PyTorch zip/pickle checkpoints
void init_vision(py::module_& m);       // _C._vision: PNG/JPEG codecs
void init_call_path(py::module_& m);    // _C._call_path: the op list, call-path test hooks
void init_func(py::module_& m);         // _C._func: grad, vjp, jvp, vmap, jacobians
void init_fast_properties();            // C getters for shape, dtype, ndim (after init_tensor)
/// Gives every pybind11 function and method of `m` (submodules and classes included) PyTorch's
/// "received an invalid combination of arguments" TypeError; call last (Note [Argument type
/// errors] in arg_errors.cpp).
void install_argument_errors(py::module_& m);

}  // namespace ember::python

// pybind11 casters so ordinary definitions can take numbers, dtypes and devices directly.
namespace pybind11::detail {
template <>
struct type_caster<ember::Scalar> {
  PYBIND11_TYPE_CASTER(ember::Scalar, const_name("Number"));
  bool load(handle src, bool) {
    if (!src || !ember::python::is_scalar(src.ptr())) {
      if (!src || !ember::python::is_tensor(src.ptr()) ||
          ember::python::unwrap(src.ptr()).dim() != 0)
        return false;
    }
    value = ember::python::to_scalar(src.ptr());
    return true;
  }
  static handle cast(const ember::Scalar& s, return_value_policy, handle) {
    return ember::python::scalar_to_py(s);
  }
};
template <>
struct type_caster<ember::ScalarType> {
  PYBIND11_TYPE_CASTER(ember::ScalarType, const_name("dtype"));
  bool load(handle src, bool) {
    if (!src || src.is_none()) return false;
    if (!ember::python::is_dtype(src.ptr()) && src.ptr() != (PyObject*)&PyFloat_Type &&
        src.ptr() != (PyObject*)&PyLong_Type && src.ptr() != (PyObject*)&PyBool_Type &&
        src.ptr() != (PyObject*)&PyComplex_Type)
      return false;
    value = *ember::python::to_dtype(src.ptr());
    return true;
  }
  static handle cast(ember::ScalarType t, return_value_policy, handle) {
    PyObject* o = ember::python::dtype_object(t);
    Py_INCREF(o);
    return o;
  }
};
}  // namespace pybind11::detail
