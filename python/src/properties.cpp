// The hottest Tensor attributes as C getters (a pybind11 property costs about twice as much).
#include "pyember.h"

namespace ember::python {
namespace {

PyObject* get_shape(PyObject* self, void*) {
  EMBER_PY_BEGIN
  return make_size(unwrap(self).sizes());
  EMBER_PY_END
}

PyObject* get_dtype(PyObject* self, void*) {
  PyObject* o = dtype_object(unwrap(self).dtype());
  Py_INCREF(o);
  return o;
}

PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLongLong(unwrap(self).dim()); }

PyObject* get_is_cuda(PyObject* self, void*) { return PyBool_FromLong(unwrap(self).is_cuda()); }

PyGetSetDef g_getsets[] = {
    {"shape", get_shape, nullptr, "The sizes as an ember.Size.", nullptr},
    {"dtype", get_dtype, nullptr, "The element type.", nullptr},
    {"ndim", get_ndim, nullptr, "Number of dimensions.", nullptr},
    {"is_cuda", get_is_cuda, nullptr, "True for CUDA tensors.", nullptr},
};

}  // namespace

void init_fast_properties() {
  for (PyGetSetDef& def : g_getsets) {
    PyObject* descr = PyDescr_NewGetSet(tensor_type, &def);
    if (!descr || PyObject_SetAttrString(reinterpret_cast<PyObject*>(tensor_type), def.name,
                                         descr) != 0) {
      Py_XDECREF(descr);
      throw py::error_already_set();
    }
    Py_DECREF(descr);
  }
}

}  // namespace ember::python
