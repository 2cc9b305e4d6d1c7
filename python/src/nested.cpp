// The binding of nested tensors (include/ember/nested.h): the NestedTensor class and the
// functions of _C._nested, and nested overloads of the functions that take tensors
// (ember.matmul, F.linear, F.softmax, ...).
//
// Note [Nested overloads]
// ember has no __torch_function__. A function that should also take a nested tensor is
// replaced on its module by a small METH_FASTCALL switch holding the original function and
// the nested implementation (a function of _C._nested): when no argument is a NestedTensor
// (one type test per argument) it forwards the call unchanged to the original, so dense calls
// keep their behaviour and errors at the cost of one forwarding call. Appending a pybind11
// overload would not do: the dense functions take their input as a Python object and raise
// TypeError for anything else, so a later overload is never reached, and the fast-call
// functions are not pybind11 functions at all. The originals stay reachable as
// _C._nested._dense_<module>_<name> (so install_argument_errors still patches them).
#include <memory>
#include <string>
#include <vector>

#include "ember/nested.h"
#include "pyember.h"

namespace ember::python {
namespace {

using nested::NestedTensor;
using py::arg;

PyTypeObject* nested_type = nullptr;

bool is_nested(PyObject* o) { return nested_type && PyObject_TypeCheck(o, nested_type); }

/// is_nested for the switch's argument scan: dense tensors and plain numbers are decided by
/// their exact type, without PyType_IsSubtype's walk of the MRO.
inline bool may_be_nested(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  if (t == tensor_type || t == &PyFloat_Type || t == &PyLong_Type || o == Py_None) return false;
  return is_nested(o);
}

PyObject* nested_switch(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  // self: (dense, nested). Keyword values follow the positional arguments in `args`.
  const Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  for (Py_ssize_t i = 0; i < total; ++i) {
    if (may_be_nested(args[i]))
      return PyObject_Vectorcall(PyTuple_GET_ITEM(self, 1), args, size_t(nargs), kwnames);
  }
  return PyObject_Vectorcall(PyTuple_GET_ITEM(self, 0), args, size_t(nargs), kwnames);
}

/// Makes `mod.<name>` also take nested tensors, calling `nested_mod.<impl>` for them.
void add_nested_overload(py::module_& mod, const char* name, py::module_& nested_mod,
                         const std::string& impl, const std::string& tag) {
  if (!py::hasattr(mod, name)) return;
  py::object dense = mod.attr(name);
  py::object nested_fn = nested_mod.attr(impl.c_str());
  nested_mod.attr(("_dense_" + tag + "_" + name).c_str()) = dense;
  // The name must outlive the method definition.
  static std::vector<std::unique_ptr<std::string>> names;
  names.push_back(std::make_unique<std::string>(name));
  PyMethodDef* def = new_method_def(names.back()->c_str(), &nested_switch,
                                    "Also takes nested tensors (ember.nested).");
  py::tuple pair = py::make_tuple(dense, nested_fn);
  py::object modname = mod.attr("__name__");
  PyObject* fn = PyCFunction_NewEx(def, pair.ptr(), modname.ptr());
  if (!fn) throw py::error_already_set();
  mod.attr(name) = py::reinterpret_steal<py::object>(fn);
}

const char* const kFn = "nested";

std::vector<Tensor> tensor_list(py::handle seq, const char* fn) {
  EMBER_CHECK_TYPE(PyList_Check(seq.ptr()) || PyTuple_Check(seq.ptr()), "[", fn, "] ", fn,
                   "(): Expected first argument to be a list of tensors");
  std::vector<Tensor> out;
  for (py::handle o : seq) {
    EMBER_CHECK_TYPE(is_tensor(o.ptr()), "[", fn, "] ", fn,
                     "(): Expected first argument to be a list of tensors");
    out.push_back(unwrap(o.ptr()));
  }
  return out;
}

std::optional<ScalarType> opt_dtype(py::handle o, const char* fn) {
  return o.is_none() ? std::nullopt : to_dtype(o.ptr(), fn);
}

std::optional<Device> opt_device(py::handle o, const char* fn) {
  return o.is_none() ? std::nullopt : to_device(o.ptr(), fn);
}

py::object wrap_nt(NestedTensor nt) { return py::cast(std::move(nt)); }

// `dense <op> nested` and calls that mix a nested tensor with a dense one where torch 1.13
// wants both nested.
[[noreturn]] void both_nested(const char* op, bool self_nested) {
  throw Error(
      std::string("[") + op + "] Expected both to be nested, but got a " +
      (self_nested ? "nested self and non-nested other" : "non-nested self and nested other"));
}

int64_t implicit_softmax_dim(const NestedTensor& x, py::handle dim, const char* fn) {
  if (!dim.is_none()) return to_int(dim.ptr(), fn, "dim");
  const int64_t n = x.dim();
  return (n == 0 || n == 1 || n == 3) ? 0 : 1;
}

std::vector<int64_t> int_vec(py::handle o, const char* fn, const char* name) {
  if (PyLong_Check(o.ptr())) return {to_int(o.ptr(), fn, name)};
  DimVector d = to_int_list(o.ptr(), fn, name);
  return std::vector<int64_t>(d.begin(), d.end());
}

Tensor opt_tensor_arg(py::handle o, const char* fn, const char* name) {
  return o.is_none() ? Tensor() : to_tensor(o.ptr(), fn, name);
}

// One binary op (add/sub/mul/div) of a nested tensor with a nested tensor, a number or a 0-dim
// tensor; `other` may also come first (reflected operators).
py::object binary(const char* op, const NestedTensor& a, py::handle other, const Scalar& alpha,
                  bool reflected) {
  const std::string_view o(op);
  if (py::isinstance<NestedTensor>(other)) {
    const NestedTensor& b = other.cast<const NestedTensor&>();
    const NestedTensor& l = reflected ? b : a;
    const NestedTensor& r = reflected ? a : b;
    if (o == "add") return wrap_nt(nested::add(l, r, alpha));
    if (o == "sub") return wrap_nt(nested::sub(l, r, alpha));
    if (o == "mul") return wrap_nt(nested::mul(l, r));
    return wrap_nt(nested::div(l, r));
  }
  if (is_tensor(other.ptr()) && unwrap(other.ptr()).dim() != 0) {
    throw Error(
        std::string("[") + op + "] Expected both self and other to be nested, but got a " +
        (reflected ? "non-nested self and nested other" : "nested self and non-nested other"));
  }
  if (!is_tensor(other.ptr()) && !is_scalar(other.ptr()))
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  const Scalar s = to_scalar(other.ptr(), op, "other");
  if (reflected) {
    if (o == "add") return wrap_nt(nested::add(a, s));
    if (o == "sub") return wrap_nt(nested::rsub(a, s));
    if (o == "mul") return wrap_nt(nested::mul(a, s));
    return wrap_nt(nested::rdiv(a, s));
  }
  if (o == "add") return wrap_nt(nested::add(a, s, alpha));
  if (o == "sub") return wrap_nt(nested::sub(a, s, alpha));
  if (o == "mul") return wrap_nt(nested::mul(a, s));
  return wrap_nt(nested::div(a, s));
}

// A binary op at module level: either operand may be the nested one.
py::object module_binary(const char* op, py::handle input, py::handle other, const Scalar& alpha) {
  if (py::isinstance<NestedTensor>(input))
    return binary(op, input.cast<const NestedTensor&>(), other, alpha, false);
  EMBER_CHECK(!is_tensor(input.ptr()) || unwrap(input.ptr()).dim() == 0, "[", op,
              "] Expected both self and other to be nested, but got a non-nested self and nested "
              "other");
  return binary(op, other.cast<const NestedTensor&>(), input, alpha, true);
}

py::object matmul_any(py::handle a, py::handle b, const char* op) {
  const bool an = py::isinstance<NestedTensor>(a), bn = py::isinstance<NestedTensor>(b);
  if (!an) both_nested(op, false);
  const NestedTensor& x = a.cast<const NestedTensor&>();
  if (bn) {
    const NestedTensor& y = b.cast<const NestedTensor&>();
    return wrap_nt(std::string_view(op) == "bmm" ? nested::bmm(x, y) : nested::matmul(x, y));
  }
  const Tensor& w = to_tensor(b.ptr(), op, "other");
  return wrap_nt(std::string_view(op) == "bmm" ? nested::bmm(x, w) : nested::matmul(x, w));
}

// The unary elementwise ops every nested tensor has as methods (and as _C._nested functions).
#define EMBER_NESTED_PY_UNARY(op) {#op, [](const Tensor& b) { return ember::op(b); }},
const std::pair<const char*, Tensor (*)(const Tensor&)> kUnary[] = {
    EMBER_UNARY_OPS(EMBER_NESTED_PY_UNARY)};
#undef EMBER_NESTED_PY_UNARY

}  // namespace

void init_nested(py::module_& m) {
  py::module_ nm = m.def_submodule("_nested", "ember.nested: nested (ragged) tensors");
  py::class_<NestedTensor> cls(nm, "NestedTensor",
                               "A list of tensors of equal rank and dtype whose sizes may "
                               "differ, packed in one buffer (torch.nested's nested tensor).");
  nested_type = reinterpret_cast<PyTypeObject*>(cls.ptr());

  // ---- metadata ----
  cls.def_property_readonly("is_nested", [](const NestedTensor&) { return true; })
      .def("dim", &NestedTensor::dim)
      .def_property_readonly("ndim", &NestedTensor::dim)
      .def("ndimension", &NestedTensor::dim)
      .def(
          "size",
          [](const NestedTensor& x, py::handle d) -> int64_t {
            EMBER_CHECK(!d.is_none(),
                        "[size] a nested tensor has no single size: its components' sizes "
                        "differ (use size(dim), unbind() or nested_size)");
            return x.size(to_int(d.ptr(), "size", "dim"));
          },
          arg("dim") = py::none())
      .def("numel", &NestedTensor::numel)
      .def("is_contiguous", [](const NestedTensor&) { return true; })
      .def_property_readonly("dtype",
                             [](const NestedTensor& x) {
                               return py::reinterpret_borrow<py::object>(dtype_object(x.dtype()));
                             })
      .def_property_readonly("device",
                             [](const NestedTensor& x) {
                               return py::reinterpret_steal<py::object>(device_object(x.device()));
                             })
      .def_property_readonly("is_cuda", [](const NestedTensor& x) { return x.device().is_cuda(); })
      .def_property_readonly("is_leaf", [](const NestedTensor& x) { return x.buffer().is_leaf(); })
      .def_property(
          "requires_grad", [](const NestedTensor& x) { return x.requires_grad(); },
          [](NestedTensor& x, bool r) { x.requires_grad_(r); })
      .def(
          "requires_grad_",
          [](py::object self, bool r) {
            self.cast<NestedTensor&>().requires_grad_(r);
            return self;
          },
          arg("requires_grad") = true)
      .def_property_readonly("grad",
                             [](const NestedTensor& x) -> py::object {
                               const Tensor& g = x.buffer().grad();
                               if (!g.defined()) return py::none();
                               return wrap_nt(x.with_buffer(g));
                             })
      .def(
          "backward",
          [](const NestedTensor& x, py::handle gradient, py::handle retain_graph,
             bool create_graph) {
            EMBER_CHECK(py::isinstance<NestedTensor>(gradient),
                        "[backward] a nested tensor's "
                        "backward needs a nested gradient of the same structure");
            const NestedTensor& g = gradient.cast<const NestedTensor&>();
            EMBER_CHECK(nested::same_structure(x, g),
                        "[backward] the gradient's nested sizes differ from the tensor's");
            std::optional<bool> rg;
            if (!retain_graph.is_none())
              rg = to_bool(retain_graph.ptr(), "backward", "retain_graph");
            x.buffer().backward(g.buffer(), rg, create_graph);
          },
          arg("gradient") = py::none(), arg("retain_graph") = py::none(),
          arg("create_graph") = false)
      .def("_buffer", [](const NestedTensor& x) { return wrap_obj(x.buffer()); })
      .def("_nested_tensor_size",
           [](const NestedTensor& x) { return wrap_obj(x.nested_sizes().clone()); })
      .def("_offsets", [](const NestedTensor& x) { return x.offsets(); })
      .def(
          "unbind",
          [](const NestedTensor& x, int64_t dim) {
            EMBER_CHECK(dim == 0,
                        "[unbind] NestedTensor can only be unbound along dimension 0 got "
                        "dimension ",
                        dim, " instead.");
            py::tuple out(size_t(x.num_components()));
            for (int64_t i = 0; i < x.num_components(); ++i) out[size_t(i)] = wrap_obj(x[i]);
            return out;
          },
          arg("dim") = 0)
      .def("__getitem__",
           [](const NestedTensor& x, py::handle i) {
             EMBER_CHECK_T(NotImplementedError, PyIndex_Check(i.ptr()),
                           "[__getitem__] a nested tensor is indexed by one integer only");
             return wrap_obj(x[to_int(i.ptr(), "__getitem__", "index")]);
           })
      .def(
          "to_padded_tensor",
          [](const NestedTensor& x, double padding, py::handle output_size) {
            std::optional<std::vector<int64_t>> os;
            if (!output_size.is_none())
              os = int_vec(output_size, "to_padded_tensor", "output_size");
            return wrap_obj(x.to_padded_tensor(padding, os));
          },
          arg("padding"), arg("output_size") = py::none())
      .def("clone", [](const NestedTensor& x) { return nested::clone(x); })
      .def("detach", [](const NestedTensor& x) { return nested::detach(x); })
      .def("contiguous", [](py::object self) { return self; })
      .def(
          "to",
          [](const NestedTensor& x, py::handle dtype) {
            return nested::to(x, *to_dtype(dtype.ptr(), "to"));
          },
          arg("dtype"))
      .def("float", [](const NestedTensor& x) { return nested::to(x, kFloat); })
      .def("double", [](const NestedTensor& x) { return nested::to(x, kDouble); })
      .def(
          "gelu", [](const NestedTensor& x, const std::string& a) { return nested::gelu(x, a); },
          arg("approximate") = "none")
      .def(
          "softmax",
          [](const NestedTensor& x, int64_t dim, py::handle dtype) {
            return nested::softmax(x, dim, opt_dtype(dtype, "softmax"));
          },
          arg("dim"), arg("dtype") = py::none())
      .def(
          "log_softmax",
          [](const NestedTensor& x, int64_t dim, py::handle dtype) {
            return nested::log_softmax(x, dim, opt_dtype(dtype, "log_softmax"));
          },
          arg("dim"), arg("dtype") = py::none())
      .def("transpose", &nested::transpose, arg("dim0"), arg("dim1"))
      .def(
          "matmul", [](py::handle a, py::handle b) { return matmul_any(a, b, "matmul"); },
          arg("other"))
      .def(
          "bmm", [](py::handle a, py::handle b) { return matmul_any(a, b, "bmm"); }, arg("mat2"))
      .def("__matmul__", [](py::handle a, py::handle b) { return matmul_any(a, b, "matmul"); })
      .def("__rmatmul__",
           [](py::handle a, py::handle) -> py::object { both_nested("matmul", false); })
      .def("__neg__", [](const NestedTensor& x) { return nested::neg(x); })
      .def("relu_", [](py::object self) {
        NestedTensor& x = self.cast<NestedTensor&>();
        Tensor b = x.buffer();
        ember::relu_(b);
        return self;
      });
  for (const auto& [name, fn] : kUnary) {
    auto f = fn;
    cls.def(name, [f](const NestedTensor& x) { return nested::map_elementwise(x, f); });
  }
  for (const char* op : {"add", "sub", "mul", "div"}) {
    const std::string o(op);
    cls.def(
        op,
        [op](const NestedTensor& x, py::handle other, const Scalar& alpha) {
          return binary(op, x, other, alpha, false);
        },
        arg("other"), py::kw_only(), arg("alpha") = 1);
    const char* dunder = o == "div" ? "__truediv__" : nullptr;
    const char* rdunder = o == "div" ? "__rtruediv__" : nullptr;
    static const std::string names[] = {"__add__",  "__radd__", "__sub__",
                                        "__rsub__", "__mul__",  "__rmul__"};
    if (!dunder) {
      const size_t k = o == "add" ? 0 : o == "sub" ? 2 : 4;
      dunder = names[k].c_str();
      rdunder = names[k + 1].c_str();
    }
    cls.def(dunder, [op](const NestedTensor& x, py::handle other) {
      return binary(op, x, other, 1, false);
    });
    cls.def(rdunder, [op](const NestedTensor& x, py::handle other) {
      return binary(op, x, other, 1, true);
    });
    // In-place forms write the buffer (autograd permitting, as for a dense tensor).
    cls.def((o + "_").c_str(), [op](py::object self, py::handle other) {
      NestedTensor& x = self.cast<NestedTensor&>();
      py::object r = binary(op, x, other, 1, false);
      EMBER_CHECK(r.ptr() != Py_NotImplemented, "[", op, "_] unsupported operand");
      Tensor b = x.buffer();
      b.copy_(r.cast<const NestedTensor&>().buffer());
      return self;
    });
  }

  // ---- construction and conversion ----
  nm.def(
      "nested_tensor",
      [](py::handle list, py::handle dtype, py::handle device, bool requires_grad) {
        return nested::nested_tensor(tensor_list(list, "nested_tensor"),
                                     opt_dtype(dtype, "nested_tensor"), requires_grad,
                                     opt_device(device, "nested_tensor"));
      },
      arg("tensor_list"), arg("dtype") = py::none(), arg("device") = py::none(),
      arg("requires_grad") = false);
  nm.def(
      "as_nested_tensor",
      [](py::handle list, py::handle dtype, py::handle device) {
        return nested::as_nested_tensor(tensor_list(list, "as_nested_tensor"),
                                        opt_dtype(dtype, "as_nested_tensor"),
                                        opt_device(device, "as_nested_tensor"));
      },
      arg("tensor_list"), arg("dtype") = py::none(), arg("device") = py::none());
  nm.def(
      "to_padded_tensor",
      [](py::handle input, double padding, py::handle output_size) {
        EMBER_CHECK_T(NotImplementedError, py::isinstance<NestedTensor>(input),
                      "[to_padded_tensor] expects a nested tensor, got ",
                      Py_TYPE(input.ptr())->tp_name);
        std::optional<std::vector<int64_t>> os;
        if (!output_size.is_none()) os = int_vec(output_size, "to_padded_tensor", "output_size");
        return wrap_obj(nested::to_padded_tensor(input.cast<const NestedTensor&>(), padding, os));
      },
      arg("input"), arg("padding"), arg("output_size") = py::none());
  nm.def(
      "from_padded",
      [](const Tensor& padded, const Tensor& mask) { return nested::from_padded(padded, mask); },
      arg("padded"), arg("padding_mask"));
  nm.def(
      "from_packed_rows",
      [](const Tensor& rows, std::vector<int64_t> lengths) {
        return nested::from_packed_rows(rows, lengths);
      },
      arg("rows"), arg("lengths"));
  nm.def(
      "_from_buffer",
      [](const Tensor& buffer, const Tensor& sizes) { return NestedTensor(buffer, sizes); },
      arg("buffer"), arg("nested_sizes"));

  // ---- nested implementations behind the overloads (Note [Nested overloads]) ----
  for (const auto& [name, fn] : kUnary) {
    auto f = fn;
    nm.def(
        name, [f](const NestedTensor& x) { return nested::map_elementwise(x, f); }, arg("input"));
  }
  for (const char* op : {"add", "sub", "mul", "div"}) {
    nm.def(
        op,
        [op](py::handle input, py::handle other, const Scalar& alpha, py::handle out) {
          EMBER_CHECK(out.is_none(), "[", op, "] out= is not supported for nested tensors");
          return module_binary(op, input, other, alpha);
        },
        arg("input"), arg("other"), py::kw_only(), arg("alpha") = 1, arg("out") = py::none());
  }
  nm.def(
      "matmul",
      [](py::handle a, py::handle b, py::handle out) {
        EMBER_CHECK(out.is_none(), "[matmul] out= is not supported for nested tensors");
        return matmul_any(a, b, "matmul");
      },
      arg("input"), arg("other"), py::kw_only(), arg("out") = py::none());
  nm.def(
      "bmm",
      [](py::handle a, py::handle b, py::handle out) {
        EMBER_CHECK(out.is_none(), "[bmm] out= is not supported for nested tensors");
        return matmul_any(a, b, "bmm");
      },
      arg("input"), arg("mat2"), py::kw_only(), arg("out") = py::none());
  for (bool log : {false, true}) {
    const char* name = log ? "log_softmax" : "softmax";
    nm.def(
        name,
        [log, name](const NestedTensor& x, int64_t dim, py::handle dtype) {
          auto dt = opt_dtype(dtype, name);
          return log ? nested::log_softmax(x, dim, dt) : nested::softmax(x, dim, dt);
        },
        arg("input"), arg("dim"), arg("dtype") = py::none());
    // torch.nn.functional's form: dim may be omitted, and _stacklevel comes before dtype.
    nm.def((std::string("_f_") + name).c_str(),
           [log, name](const NestedTensor& x, py::handle dim, py::handle stacklevel,
                       py::handle dtype) {
             const int64_t d = implicit_softmax_dim(x, dim, name);
             auto dt = opt_dtype(dtype, name);
             return log ? nested::log_softmax(x, d, dt) : nested::softmax(x, d, dt);
           },
           arg("input"), arg("dim") = py::none(), arg("_stacklevel") = 3,
           arg("dtype") = py::none());
  }
  nm.def("transpose", &nested::transpose, arg("input"), arg("dim0"), arg("dim1"));
  nm.def(
      "linear",
      [](const NestedTensor& x, const Tensor& w, py::handle bias) {
        return nested::linear(x, w, opt_tensor_arg(bias, "linear", "bias"));
      },
      arg("input"), arg("weight"), arg("bias") = py::none());
  nm.def(
      "layer_norm",
      [](const NestedTensor& x, py::handle shape, py::handle weight, py::handle bias, double eps) {
        auto ns = int_vec(shape, "layer_norm", "normalized_shape");
        return nested::layer_norm(x, ns, opt_tensor_arg(weight, "layer_norm", "weight"),
                                  opt_tensor_arg(bias, "layer_norm", "bias"), eps);
      },
      arg("input"), arg("normalized_shape"), arg("weight") = py::none(), arg("bias") = py::none(),
      arg("eps") = 1e-5);
  nm.def(
      "dropout",
      [](py::object input, double p, bool training, bool inplace) -> py::object {
        NestedTensor& x = input.cast<NestedTensor&>();
        if (!inplace) return wrap_nt(nested::dropout(x, p, training));
        Tensor b = x.buffer();
        ember::dropout_(b, p, training);
        return input;
      },
      arg("input"), arg("p") = 0.5, arg("training") = true, arg("inplace") = false);
  for (const char* name : {"relu", "silu"}) {
    const bool relu = std::string_view(name) == "relu";
    nm.def((std::string("_f_") + name).c_str(),
           [relu](py::object input, bool inplace) -> py::object {
             NestedTensor& x = input.cast<NestedTensor&>();
             if (!inplace) return wrap_nt(relu ? nested::relu(x) : nested::silu(x));
             Tensor b = x.buffer();
             relu ? ember::relu_(b) : ember::silu_(b);
             return input;
           },
           arg("input"), arg("inplace") = false);
  }
  nm.def(
      "gelu", [](const NestedTensor& x, const std::string& a) { return nested::gelu(x, a); },
      arg("input"), arg("approximate") = "none");

  // ---- install the overloads ----
  for (const char* name : {"relu", "tanh", "sigmoid", "neg", "negative", "abs", "exp", "add", "sub",
                           "mul", "div", "matmul", "bmm", "softmax", "log_softmax", "transpose"}) {
    std::string impl = std::string_view(name) == "negative" ? "neg" : name;
    add_nested_overload(m, name, nm, impl, "C");
  }
  py::module_ f = m.attr("_nn").attr("functional");
  for (const char* name : {"linear", "layer_norm", "dropout", "gelu", "tanh", "sigmoid"})
    add_nested_overload(f, name, nm, name, "F");
  add_nested_overload(f, "softmax", nm, "_f_softmax", "F");
  add_nested_overload(f, "log_softmax", nm, "_f_log_softmax", "F");
  add_nested_overload(f, "relu", nm, "_f_relu", "F");
  add_nested_overload(f, "silu", nm, "_f_silu", "F");
}

}  // namespace ember::python
