// The `ember._C` extension module: registers each area of the binding.
#include "pyember.h"

namespace ember::python {
// The _C._distributed submodule (python/src/distributed*.cpp).
void init_distributed(py::module_& m);
// torch.fft, stft/istft and the window functions (python/src/fft.cpp).
void init_fft(py::module_& m);
// torch.special: the Bessel, Airy, error and normal functions (python/src/special_bessel.cpp).
void init_special_bessel(py::module_& m);
// torch.special's other functions and the new elementwise ops (python/src/special.cpp).
void init_special(py::module_& m);
// complex constructors and views, complex32 (python/src/complex.cpp).
void init_complex(py::module_& m);
// statistics, distances, histograms, sets and calculus (python/src/stats.cpp).
void init_stats(py::module_& m);
// the remaining tensor ops (python/src/tensor_extra.cpp).
void init_tensor_extra(py::module_& m);
// the remaining torch.linalg and LAPACK-style functions (python/src/linalg_extra.cpp).
void init_linalg_extra(py::module_& m);
// grid_sample, affine_grid, fractional max pooling and friends (python/src/nn_extra.cpp).
void init_nn_extra(py::module_& m);
void init_attention(py::module_& m);
void init_transformer(py::module_& m);
void init_nested(py::module_& m);
void init_amp(py::module_& m);
// ember.cuda: devices, streams, events, memory, graphs (python/src/cuda.cpp).
void init_cuda(py::module_& m);
// Note [Fast Tensor objects] (python/src/convert.cpp): wrap() and the Tensor type's dealloc.
void install_fast_tensor_objects();
// Note [Operator slots] (python/src/elementwise.cpp): the Tensor type's number and compare slots,
// installed after every attribute of the class is set; and which of them are still in place.
void install_operator_slots();
std::vector<std::string> operator_slots_in_place();
}  // namespace ember::python

PYBIND11_MODULE(_C, m) {
  using namespace ember::python;
  m.doc() = "ember's C++ core";
  // pybind11-level errors (from ordinary definitions) map like the fast path's.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ember::python::PythonErrorSet&) {
    } catch (const ember::Error&) {
      set_python_error();
    } catch (const std::bad_alloc&) {
      set_python_error();
    }
  });
  m.def_submodule("_linalg", "ember.linalg: the functions of torch.linalg");
  m.def_submodule("_special", "ember.special: the functions of torch.special");
  m.def_submodule("_fft", "ember.fft: the functions of torch.fft");
  init_types(m);
  init_tensor(m);
  init_fast_properties();
  init_indexing(m);
  init_elementwise(m);
  init_factory(m);
  init_interop(m);
  init_join(m);
  init_reduce(m);
  init_sort(m);
  init_unique(m);
  init_order_stats(m);
  init_index_ops(m);
  init_shape(m);
  init_blas(m);
  init_linalg(m);
  init_autograd(m);
  init_conv(m);
  init_nn_ops(m);
  init_nn(m);
  init_rnn(m);
  init_optim(m);
  init_call_path(m);
  init_func(m);
  init_data(m);
  init_serialize(m);
  init_profiler(m);
  init_random_dist(m);
  init_distributions(m);
  init_shared_memory(m);
  init_pickle(m);
  init_vision(m);
  init_distributed(m);
  init_fft(m);
  init_special_bessel(m);
  init_special(m);
  init_complex(m);
  init_stats(m);
  init_tensor_extra(m);
  init_linalg_extra(m);
  init_nn_extra(m);
  init_attention(m);
  init_transformer(m);
  init_nested(m);
  init_amp(m);
  init_cuda(m);
  m.attr("__version__") = ember::kVersion;
  m.attr("_cpu_capability") = ember::cpu_capability();
  m.def("_cuda_is_available", [] { return ember::cuda_is_available(); });
  m.def("_cuda_device_count", [] { return ember::cuda_device_count(); });
  m.def(
      "_operator_slots", [] { return operator_slots_in_place(); },
      "The operators whose Tensor type slots call the C++ operator directly (tests).");
  install_argument_errors(m);
  install_fast_tensor_objects();
  install_operator_slots();
}
