// Shared argument conversion of the nn functional bindings (nn_functional.cpp, nn_ops.cpp,
// conv.cpp): Python values
// to the Options of ember::nn::functional, with torch.nn.functional's names and defaults.
#pragma once

#include <string>
#include <type_traits>

#include "pyember.h"

namespace ember::python::nnf {

namespace F = ember::nn::functional;
using py::arg;

/// None gives an undefined tensor.
inline Tensor opt_tensor(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return Tensor();
  return to_tensor(o.ptr(), fn, name);
}

/// An int (repeated) or a sequence of D ints.
template <size_t D>
ExpandingArray<D> expanding(py::handle o, const char* fn, const char* name) {
  if (PyLong_Check(o.ptr()) || is_tensor(o.ptr()))
    return ExpandingArray<D>(to_int(o.ptr(), fn, name));
  DimVector v = to_int_list(o.ptr(), fn, name);
  if (v.size() == 1) return ExpandingArray<D>(v[0]);
  EMBER_CHECK(v.size() == D, "[", fn, "] expected ", name,
              " to be a single integer value or a list of ", D, " values, but got ", v.size(),
              " values");
  return ExpandingArray<D>(std::vector<int64_t>(v.begin(), v.end()));
}

/// An int or a sequence of ints, as a vector.
inline std::vector<int64_t> int_vector(py::handle o, const char* fn, const char* name) {
  if (PyLong_Check(o.ptr())) return {to_int(o.ptr(), fn, name)};
  DimVector v = to_int_list(o.ptr(), fn, name);
  return std::vector<int64_t>(v.begin(), v.end());
}

/// A tensor argument; TypeError naming the function and argument otherwise.
inline const Tensor& tensor_arg(py::handle o, const char* fn, const char* name) {
  if (!is_tensor(o.ptr()))
    type_error(std::string(fn) + "(): expected a Tensor as argument '" + name + "', but got " +
               Py_TYPE(o.ptr())->tp_name);
  return unwrap(o.ptr());
}

namespace detail {
template <class Fn, class R, class... Args>
auto keep_self(const char* name, Fn fn, R (Fn::*)(const Tensor&, Args...) const) {
  return [name, fn](py::handle input, Args... args) -> py::object {
    const Tensor& x = tensor_arg(input, name, "input");
    if constexpr (std::is_same_v<R, Tensor>) {
      Tensor r = fn(x, std::forward<Args>(args)...);
      if (r.is_same(x)) return py::reinterpret_borrow<py::object>(input);
      return wrap_obj(std::move(r));
    } else {
      return py::object(fn(x, std::forward<Args>(args)...));
    }
  };
}
}  // namespace detail

/// `fn` (a lambda whose first parameter is the input tensor) taking the input as the Python
/// object: a result that is the input tensor itself (an in-place call, or an identity such as
/// dropout in eval) returns that same object, as PyTorch does; a non-tensor input is a
/// TypeError naming the function.
template <class Fn>
auto keep_self(const char* name, Fn fn) {
  return detail::keep_self(name, fn, &Fn::operator());
}

/// torch's mapping of the deprecated size_average / reduce pair to a reduction name (with
/// PyTorch's deprecation warning); `reduction` when both are None.
std::string legacy_reduction(py::handle size_average, py::handle reduce,
                             const std::string& reduction);
/// "none" / "mean" / "sum" ("elementwise_mean" warns and means "mean"); ValueError otherwise.
nn::detail::loss_reduction_t reduction_enum(const std::string& reduction);
/// Both of the above.
inline nn::detail::loss_reduction_t resolve_reduction(py::handle size_average, py::handle reduce,
                                                      const std::string& reduction) {
  return reduction_enum(legacy_reduction(size_average, reduce, reduction));
}

void init_activation(py::module_& f);  // nn_functional.cpp
void init_attention(py::module_& f);   // nn_functional.cpp: multi-head attention
void init_layers(py::module_& f);      // nn_functional.cpp: linear, dropout, norms, embedding
void init_loss(py::module_& f);        // nn_ops.cpp
void init_conv_pool(py::module_& f);   // conv.cpp: conv, pooling, resampling

}  // namespace ember::python::nnf
