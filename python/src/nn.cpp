// The binding of the nn helpers (ember._C._nn): Parameter construction, and the functional
// forms of activations and layers (ember._C._nn.functional, nn_functional.cpp).
#include "pyember.h"

namespace ember::python {

void init_nn_functional(py::module_& nn);  // nn_functional.cpp

void init_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("_nn", "kernels behind ember.nn");
  // Parameter.__new__ makes an instance of the subclass, then points it at the data's tensor.
  nn.def("_set_tensor", [](py::handle self, const Tensor& data) {
    EMBER_CHECK_TYPE(PyObject_IsInstance(self.ptr(), reinterpret_cast<PyObject*>(tensor_type)) == 1,
                     "[Parameter] _set_tensor expects an ember.Tensor instance");
    py::cast<Tensor&>(self) = data;
  });
  init_nn_functional(nn);
}

}  // namespace ember::python
