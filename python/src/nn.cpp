// The binding of the nn helpers (ember._C._nn): Parameter construction, gradient clipping
// (ember::nn::utils), and the functional forms of activations and layers
// (ember._C._nn.functional, nn_functional.cpp).
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

  // ---- torch.nn.utils.clip_grad over ember::nn::utils ----
  auto params = [](py::handle ps) {
    std::vector<Tensor> out;
    if (is_tensor(ps.ptr())) return std::vector<Tensor>{unwrap(ps.ptr())};
    for (py::handle p : ps) out.push_back(to_tensor(p.ptr(), "clip_grad", "parameters"));
    return out;
  };
  nn.def(
      "clip_grad_norm_",
      [params](py::handle parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
        std::vector<Tensor> ps = params(parameters);
        double norm = nn::utils::clip_grad_norm_(ps, max_norm, norm_type, error_if_nonfinite);
        // torch returns the norm as a 0-d tensor of the gradients' dtype.
        ScalarType dtype = kFloat;
        for (const Tensor& p : ps)
          if (p.defined() && p.grad().defined()) {
            dtype = p.grad().scalar_type();
            break;
          }
        return wrap_obj(full({}, norm, TensorOptions().dtype(dtype)));
      },
      py::arg("parameters"), py::arg("max_norm"), py::arg("norm_type") = 2.0,
      py::arg("error_if_nonfinite") = false);
  nn.def(
      "clip_grad_value_",
      [params](py::handle parameters, double clip_value) {
        nn::utils::clip_grad_value_(params(parameters), clip_value);
      },
      py::arg("parameters"), py::arg("clip_value"));
}

}  // namespace ember::python
