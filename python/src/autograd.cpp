// The autograd binding: Tensor's autograd attributes, graph nodes, the engine entry points, grad
// modes, anomaly mode, forward AD and custom Python Functions (the _C._autograd submodule).
//
// The engine runs with the GIL released; every Python callable it may call (hooks, custom
// Function backward/jvp, the anomaly context) takes the GIL itself, and the Python objects the
// graph owns are held through PyRef, which takes the GIL to drop its reference.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "autograd/meta.h"
#include "pyember.h"

namespace ember::python {
namespace {

using autograd::Node;
using autograd::variable_list;

/// A strong reference to a Python object that may be released from any thread.
struct PyRef {
  PyObject* obj;
  explicit PyRef(py::handle h) : obj(h.ptr()) { Py_XINCREF(obj); }
  ~PyRef() {
    if (!obj || !Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(obj);
  }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  py::handle get() const { return obj; }
};
using PyRefPtr = std::shared_ptr<PyRef>;
PyRefPtr make_ref(py::handle h) { return std::make_shared<PyRef>(h); }

/// Undefined tensors are None on the Python side.
py::object to_py(const Tensor& t) { return wrap_obj(t); }

py::tuple to_py_tuple(const variable_list& v) {
  py::tuple out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = to_py(v[i]);
  return out;
}

/// None → undefined, a tensor → itself; TypeError naming `what` for anything else.
Tensor opt_tensor(py::handle o, const char* fn, const char* what) {
  if (o.is_none()) return Tensor();
  if (!is_tensor(o.ptr()))
    type_error(std::string(fn) + "(): expected a Tensor or None for " + what + ", got " +
               Py_TYPE(o.ptr())->tp_name);
  return unwrap(o.ptr());
}

/// A tensor or a sequence of tensors (None entries allowed when `allow_none`).
variable_list tensor_seq(py::handle o, const char* fn, const char* what, bool allow_none) {
  variable_list out;
  if (o.is_none()) return out;
  if (is_tensor(o.ptr())) {
    out.push_back(unwrap(o.ptr()));
    return out;
  }
  if (!PySequence_Check(o.ptr()))
    type_error(std::string(fn) + "(): " + what +
               " must be a Tensor or a sequence of Tensors, got " + Py_TYPE(o.ptr())->tp_name);
  py::sequence s = py::reinterpret_borrow<py::sequence>(o);
  for (py::handle h : s) {
    if (h.is_none() && allow_none) {
      out.emplace_back();
      continue;
    }
    if (!is_tensor(h.ptr()))
      type_error(std::string(fn) + "(): " + what + " must contain Tensors, got " +
                 Py_TYPE(h.ptr())->tp_name);
    out.push_back(unwrap(h.ptr()));
  }
  return out;
}

/// The result of a Python hook: None keeps the gradient, a tensor replaces it.
Tensor hook_result(py::handle r, const char* what) {
  if (r.is_none()) return Tensor();
  if (!is_tensor(r.ptr()))
    type_error(std::string("[") + what + "] a hook must return None or a Tensor, got " +
               Py_TYPE(r.ptr())->tp_name);
  return unwrap(r.ptr());
}

/// Replacement gradients from a node hook: None keeps them, else a tuple of tensors/None.
variable_list hook_results(py::handle r, size_t n, const char* what) {
  if (r.is_none()) return {};
  variable_list out;
  if (is_tensor(r.ptr())) {
    out.push_back(unwrap(r.ptr()));
  } else {
    if (!PySequence_Check(r.ptr()))
      type_error(std::string("[") + what + "] a hook must return None or a tuple of Tensors");
    for (py::handle h : py::reinterpret_borrow<py::sequence>(r))
      out.push_back(h.is_none() ? Tensor() : opt_tensor(h, what, "the hook result"));
  }
  if (out.size() != n)
    throw ember::Error(
        detail::str_cat("[", what, "] hook returned ", out.size(), " gradients, expected ", n));
  return out;
}

/// What remove() of a hook handle does.
struct RemovableHandle {
  std::function<void()> remover;
  bool removed = false;
  void remove() {
    if (removed) return;
    removed = true;
    if (remover) remover();
    remover = nullptr;
  }
};

/// A handle whose remove() takes hook `h` off node `n` (if the node is still alive).
std::shared_ptr<RemovableHandle> node_hook_handle(Node& n, unsigned h) {
  auto handle = std::make_shared<RemovableHandle>();
  std::weak_ptr<Node> w = n.shared_from_this();
  handle->remover = [w, h] {
    if (auto p = w.lock()) p->remove_hook(h);
  };
  return handle;
}

// ---- Tensor attributes ----

py::object tensor_grad(const Tensor& t) {
  if (!t.is_leaf() && !t.retains_grad() && t.requires_grad()) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                     "Its .grad attribute won't be populated during autograd.backward(). If you "
                     "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                     ".retain_grad() on the non-leaf Tensor.",
                     1) != 0)
      throw py::error_already_set();
  }
  return to_py(t.grad());
}

void set_tensor_grad(const Tensor& t, py::handle v) {
  if (v.is_none()) {
    t.mutable_grad() = Tensor();
    return;
  }
  if (!is_tensor(v.ptr()))
    type_error(std::string("assigned grad expected to be a Tensor or None but got grad of type ") +
               Py_TYPE(v.ptr())->tp_name);
  const Tensor& g = unwrap(v.ptr());
  EMBER_CHECK(g.dtype() == t.dtype(), "[grad] assigned grad has data of a different type");
  EMBER_CHECK(g.device() == t.device(),
              "[grad] assigned grad has data located on a different device");
  EMBER_CHECK(g.sizes() == t.sizes(), "[grad] assigned grad has data of a different size");
  t.mutable_grad() = g;
}

// PyTorch gives each kind of node its own Python class (type(y.grad_fn).__name__ is
// "AddBackward0"); ember's nodes share a few C++ classes, so each node name gets a subclass of
// Node, made once, and the node's Python object takes it (Note [Node names]).
py::object node_to_py(const std::shared_ptr<Node>& fn) {
  if (!fn) return py::none();
  py::object obj = py::cast(fn);
  static py::object base = py::type::of<Node>();
  // Leaked on purpose: lives as long as the interpreter, and classes must outlive their nodes.
  static py::dict* classes = new py::dict();
  const py::str name(fn->name());
  py::object cls;
  if (classes->contains(name)) {
    cls = (*classes)[name];
  } else {
    py::dict ns;
    ns["__module__"] = py::str("builtins");  // as PyTorch's generated node classes
    ns["__slots__"] = py::tuple();           // the base's layout: __class__ can be assigned
    cls = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
        name, py::make_tuple(base), ns);
    (*classes)[name] = cls;
  }
  py::handle type = py::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())));
  if (!type.is(cls) && (type.is(base) || classes->contains(type.attr("__name__"))))
    obj.attr("__class__") = cls;
  return obj;
}

py::object next_functions(const Node& n) {
  const auto& edges = n.next_edges();
  py::tuple out(edges.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    py::object fn = node_to_py(edges[i].function);
    out[i] = py::make_tuple(fn, edges[i].input_nr);
  }
  return out;
}

void init_tensor_autograd(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def_property(
         "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
         [](Tensor& t, bool r) { t.set_requires_grad(r); })
      .def(
          "requires_grad_",
          [](py::handle self, bool r) {
            unwrap(self.ptr()).set_requires_grad(r);
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("requires_grad") = true)
      .def_property_readonly("is_leaf", [](const Tensor& t) { return t.is_leaf(); })
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object { return node_to_py(t.grad_fn()); })
      .def_property_readonly("output_nr", [](const Tensor& t) { return t.output_nr(); })
      .def_property(
          "data", [](const Tensor& t) { return t.variable_data(); },
          // As torch: the tensor takes v's storage, dtype and shape (no copy), keeping its
          // identity and autograd state.
          [](Tensor& t, const Tensor& v) {
            t.unsafeGetTensorImpl()->set_data_from(*v.unsafeGetTensorImpl());
          })
      .def("detach", [](const Tensor& t) { return t.detach(); })
      .def("detach_",
           [](py::handle self) {
             unwrap(self.ptr()).detach_();
             return py::reinterpret_borrow<py::object>(self);
           })
      .def("retain_grad", [](const Tensor& t) { t.retain_grad(); })
      .def_property_readonly("retains_grad", [](const Tensor& t) { return t.retains_grad(); })
      .def(
          "backward",
          [](const Tensor& t, py::object gradient, std::optional<bool> retain_graph,
             bool create_graph, py::object inputs) {
            Tensor g = opt_tensor(gradient, "backward", "gradient");
            std::optional<variable_list> in;
            if (!inputs.is_none()) {
              in = tensor_seq(inputs, "backward", "inputs", false);
              EMBER_CHECK(!in->empty(),
                          "[backward] 'inputs' argument to backward() cannot be empty.");
            }
            py::gil_scoped_release nogil;
            t.backward(g, retain_graph, create_graph, in);
          },
          py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(),
          py::arg("create_graph") = false, py::arg("inputs") = py::none())
      .def(
          "register_hook",
          [](const Tensor& t, py::function fn) {
            EMBER_CHECK(t.requires_grad(),
                        "[register_hook] cannot register a hook on a tensor that doesn't require "
                        "gradient");
            PyRefPtr ref = make_ref(fn);
            unsigned h = t.register_hook(
                std::function<Tensor(const Tensor&)>([ref](const Tensor& g) -> Tensor {
                  py::gil_scoped_acquire gil;
                  py::object r = ref->get()(to_py(g));
                  return hook_result(r, "register_hook");
                }));
            auto handle = std::make_shared<RemovableHandle>();
            handle->remover = [t, h] { t.remove_hook(h); };
            return handle;
          },
          py::arg("hook"))
      .def(
          "register_post_accumulate_grad_hook",
          [](py::handle self, py::function fn) {
            const Tensor& t = unwrap(self.ptr());
            EMBER_CHECK(t.requires_grad(),
                        "[register_post_accumulate_grad_hook] cannot register a hook on a tensor "
                        "that doesn't require gradient");
            EMBER_CHECK(t.is_leaf(),
                        "[register_post_accumulate_grad_hook] post accumulate grad hooks cannot "
                        "be registered on non-leaf tensors");
            PyRefPtr ref = make_ref(fn);
            unsigned h = t.register_post_accumulate_grad_hook([ref](const Tensor& var) {
              py::gil_scoped_acquire gil;
              ref->get()(to_py(var));
            });
            auto handle = std::make_shared<RemovableHandle>();
            handle->remover = [t, h] { t.remove_hook(h); };
            return handle;
          },
          py::arg("hook"))
      .def_property_readonly("_base", [](const Tensor& t) { return to_py(t._base()); })
      .def("_is_view", [](const Tensor& t) { return t.is_view(); })
      .def("is_inference", [](const Tensor& t) { return t.is_inference(); })
      .def(
          "_fw_grad", [](const Tensor& t, uint64_t level) { return to_py(t._fw_grad(level)); },
          py::arg("level"))
      .def(
          "_set_fw_grad",
          [](const Tensor& t, const Tensor& g, uint64_t level, bool is_inplace_op) {
            t._set_fw_grad(g, level, is_inplace_op);
          },
          py::arg("tangent"), py::arg("level"), py::arg("is_inplace_op") = false);
  // `del t.grad` (pybind11 properties have no deleter).
  py::object prop = py::module_::import("builtins").attr("property");
  py::object getter = py::cpp_function([](const Tensor& t) { return tensor_grad(t); });
  py::object setter =
      py::cpp_function([](const Tensor& t, py::handle v) { set_tensor_grad(t, v); });
  py::object deleter = py::cpp_function([](const Tensor& t) { t.mutable_grad() = Tensor(); });
  cls.attr("grad") = prop(getter, setter, deleter, "The accumulated gradient (None until set).");
}

// ---- custom Python functions ----

/// A Python object `ctx` wrapping the C++ context of one Function call.
struct PyFunctionCtx {
  std::shared_ptr<autograd::AutogradContext> ctx;
  std::vector<bool> needs_input_grad;  ///< per forward argument
};

/// Calls `cls.<name>` and returns the result; used for backward/jvp under the GIL.
variable_list call_rule(const PyRefPtr& cls, const PyRefPtr& ctx_obj, const char* name,
                        const variable_list& in, const std::vector<int>& tensor_pos, int nargs,
                        const std::string& node, bool per_argument) {
  py::gil_scoped_acquire gil;
  py::tuple args(in.size() + 1);
  args[0] = py::reinterpret_borrow<py::object>(ctx_obj->get());
  for (size_t i = 0; i < in.size(); ++i) args[i + 1] = to_py(in[i]);
  py::object r = cls->get().attr(name)(*args);
  std::vector<py::object> items;
  if (PyTuple_Check(r.ptr()) || PyList_Check(r.ptr())) {
    for (py::handle h : py::reinterpret_borrow<py::sequence>(r))
      items.push_back(py::reinterpret_borrow<py::object>(h));
  } else {
    items.push_back(r);
  }
  variable_list out;
  if (!per_argument) {
    for (auto& o : items) out.push_back(opt_tensor(o, name, "the result"));
    return out;
  }
  // backward returns one gradient per forward argument; trailing extra Nones are allowed.
  size_t n = items.size();
  while (n > size_t(nargs) && items[n - 1].is_none()) --n;
  EMBER_CHECK(n == size_t(nargs), "[", node, "] function backward returned an incorrect number of ",
              "gradients (expected ", nargs, ", got ", items.size(), ")");
  std::vector<bool> is_tensor_arg(size_t(nargs), false);
  for (int p : tensor_pos) is_tensor_arg[size_t(p)] = true;
  for (size_t i = 0; i < size_t(nargs); ++i) {
    if (!is_tensor_arg[i] && !items[i].is_none())
      throw ember::Error(detail::str_cat("[", node,
                                         "] function backward returned a gradient different than "
                                         "None at position ",
                                         i + 1,
                                         ", but the corresponding forward input was not a "
                                         "Variable"));
  }
  for (int p : tensor_pos) out.push_back(opt_tensor(items[size_t(p)], name, "a gradient"));
  return out;
}

bool overrides(py::handle cls, const char* name, py::handle base) {
  if (!py::hasattr(cls, name)) return false;
  if (!py::hasattr(base, name)) return true;
  // Walk the MRO: the first class defining `name` must not be the base.
  for (py::handle k : cls.attr("__mro__")) {
    py::object d = k.attr("__dict__");
    if (d.contains(name)) return !k.is(base);
  }
  return false;
}

py::object function_apply(py::object cls, py::args args) {
  // Leaked on purpose: they live as long as the interpreter.
  static py::handle base =
      py::object(py::module_::import("ember.autograd.function").attr("Function")).release();
  static py::handle ctx_type =
      py::object(py::module_::import("ember.autograd.function").attr("FunctionCtx")).release();
  const int nargs = int(args.size());
  variable_list inputs;
  std::vector<int> tensor_pos;
  for (int i = 0; i < nargs; ++i) {
    if (is_tensor(args[size_t(i)].ptr())) {
      inputs.push_back(unwrap(args[size_t(i)].ptr()));
      tensor_pos.push_back(i);
    }
  }
  auto ctx = std::make_shared<autograd::AutogradContext>();
  autograd::CppFunctionImpl::prepare(*ctx, inputs);
  py::object ctx_obj = ctx_type();
  auto& pc = ctx_obj.attr("_cpp").cast<PyFunctionCtx&>();
  pc.ctx = ctx;
  pc.needs_input_grad.assign(size_t(nargs), false);
  for (size_t k = 0; k < tensor_pos.size(); ++k)
    pc.needs_input_grad[size_t(tensor_pos[k])] = ctx->needs_input_grad(k);

  const bool setup_style = overrides(cls, "setup_context", base);
  py::object result;
  {
    // forward runs without recording in either mode (as PyTorch): its outputs get their
    // history and tangents from backward/jvp.
    AutoGradMode no_grad(false);
    struct Pause {
      bool prev = autograd::tls().paused;
      Pause() { autograd::tls().paused = true; }
      ~Pause() { autograd::tls().paused = prev; }
    } pause;
    if (setup_style) {
      result = cls.attr("forward")(*args);
      cls.attr("setup_context")(ctx_obj, py::tuple(args), result);
    } else {
      py::tuple fargs(size_t(nargs) + 1);
      fargs[0] = ctx_obj;
      for (int i = 0; i < nargs; ++i) fargs[size_t(i) + 1] = args[size_t(i)];
      result = cls.attr("forward")(*fargs);
    }
  }
  // Outputs: a tensor, or a tuple whose tensor items are the differentiable candidates.
  const bool is_tuple = PyTuple_Check(result.ptr());
  std::vector<py::object> items;
  if (is_tuple) {
    for (py::handle h : py::reinterpret_borrow<py::tuple>(result))
      items.push_back(py::reinterpret_borrow<py::object>(h));
  } else {
    items.push_back(result);
  }
  variable_list outs;
  std::vector<size_t> out_pos;
  for (size_t i = 0; i < items.size(); ++i) {
    if (is_tensor(items[i].ptr())) {
      outs.push_back(unwrap(items[i].ptr()));
      out_pos.push_back(i);
    }
  }
  std::string name = py::str(cls.attr("__name__")).cast<std::string>() + "Backward";
  PyRefPtr cls_ref = make_ref(cls);
  PyRefPtr ctx_ref = make_ref(ctx_obj);
  // backward takes one gradient per forward output (None for non-tensor outputs).
  autograd::CppFunctionImpl::BackwardFn bw = [cls_ref, ctx_ref, tensor_pos, nargs, name, out_pos,
                                              n_items = items.size()](autograd::AutogradContext*,
                                                                      variable_list g) {
    variable_list per_out(n_items);
    for (size_t k = 0; k < out_pos.size() && k < g.size(); ++k) per_out[out_pos[k]] = g[k];
    return call_rule(cls_ref, ctx_ref, "backward", per_out, tensor_pos, nargs, name, true);
  };
  autograd::CppFunctionImpl::JvpFn jvp;
  if (overrides(cls, "jvp", base)) {
    jvp = [cls_ref, ctx_ref, tensor_pos, nargs, name, out_pos, n_items = items.size()](
              autograd::AutogradContext*, variable_list t) {
      // jvp takes one tangent per forward argument (None for non-tensors).
      variable_list per_arg(static_cast<size_t>(nargs));
      for (size_t k = 0; k < tensor_pos.size() && k < t.size(); ++k)
        per_arg[size_t(tensor_pos[k])] = t[k];
      variable_list r = call_rule(cls_ref, ctx_ref, "jvp", per_arg, tensor_pos, nargs, name, false);
      // One tangent per forward output: keep those of the tensor outputs.
      if (r.size() == n_items && n_items != out_pos.size()) {
        variable_list sel;
        for (size_t p : out_pos) sel.push_back(r[p]);
        return sel;
      }
      return r;
    };
  }
  variable_list wrapped = autograd::CppFunctionImpl::wrap_outputs(name, inputs, outs, ctx,
                                                                  std::move(bw), std::move(jvp));
  for (size_t k = 0; k < out_pos.size() && k < wrapped.size(); ++k) {
    // The same tensor (e.g. an input marked dirty) keeps its Python object.
    if (!wrapped[k].is_same(outs[k])) items[out_pos[k]] = to_py(wrapped[k]);
  }
  if (!is_tuple) return items[0];
  py::tuple out(items.size());
  for (size_t i = 0; i < items.size(); ++i) out[i] = items[i];
  return out;
}

void init_function(py::module_& ag) {
  py::class_<PyFunctionCtx, std::shared_ptr<PyFunctionCtx>>(ag, "_FunctionCtxState")
      .def(py::init<>())
      .def("save_for_backward",
           [](PyFunctionCtx& c, py::args ts) {
             variable_list v;
             for (py::handle h : ts) v.push_back(opt_tensor(h, "save_for_backward", "a tensor"));
             c.ctx->save_for_backward(std::move(v));
           })
      .def("saved_tensors",
           [](PyFunctionCtx& c) {
             variable_list v = c.ctx->get_saved_variables();
             return to_py_tuple(v);
           })
      .def("mark_dirty",
           [](PyFunctionCtx& c, py::args ts) {
             c.ctx->mark_dirty(tensor_seq(py::tuple(ts), "mark_dirty", "args", false));
           })
      .def("mark_non_differentiable",
           [](PyFunctionCtx& c, py::args ts) {
             c.ctx->mark_non_differentiable(
                 tensor_seq(py::tuple(ts), "mark_non_differentiable", "args", false));
           })
      .def("set_materialize_grads",
           [](PyFunctionCtx& c, bool v) { c.ctx->set_materialize_grads(v); })
      .def("needs_input_grad", [](PyFunctionCtx& c) {
        py::tuple t(c.needs_input_grad.size());
        for (size_t i = 0; i < c.needs_input_grad.size(); ++i)
          t[i] = py::bool_(c.needs_input_grad[i]);
        return t;
      });
  ag.def("_function_apply", &function_apply);
}

// ---- engine, modes, anomaly, forward AD ----

struct InferenceModeGuard {
  std::unique_ptr<InferenceMode> guard;
};

void init_engine(py::module_& ag) {
  ag.def(
      "_grad",
      [](py::object outputs, py::object inputs, py::object grad_outputs,
         std::optional<bool> retain_graph, bool create_graph, bool allow_unused,
         bool materialize_grads) {
        variable_list outs = tensor_seq(outputs, "grad", "outputs", false);
        variable_list ins = tensor_seq(inputs, "grad", "inputs", false);
        variable_list gos = tensor_seq(grad_outputs, "grad", "grad_outputs", true);
        variable_list r;
        {
          py::gil_scoped_release nogil;
          r = autograd::grad(outs, ins, gos, retain_graph, create_graph, allow_unused,
                             materialize_grads);
        }
        return to_py_tuple(r);
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs"), py::arg("retain_graph"),
      py::arg("create_graph"), py::arg("allow_unused"), py::arg("materialize_grads"));
  ag.def(
      "_backward",
      [](py::object tensors, py::object grad_tensors, std::optional<bool> retain_graph,
         bool create_graph, py::object inputs) {
        variable_list ts = tensor_seq(tensors, "backward", "tensors", false);
        variable_list gs = tensor_seq(grad_tensors, "backward", "grad_tensors", true);
        variable_list in = tensor_seq(inputs, "backward", "inputs", false);
        py::gil_scoped_release nogil;
        autograd::backward(ts, gs, retain_graph, create_graph, in);
      },
      py::arg("tensors"), py::arg("grad_tensors"), py::arg("retain_graph"), py::arg("create_graph"),
      py::arg("inputs"));

  ag.def("is_grad_enabled", [] { return GradMode::is_enabled(); });
  ag.def("_set_grad_enabled", [](bool v) { GradMode::set_enabled(v); });
  ag.def("is_inference_mode_enabled", [] { return InferenceMode::is_enabled(); });
  py::class_<InferenceModeGuard>(ag, "_InferenceModeGuard")
      .def(py::init([](bool mode) {
        auto g = std::make_unique<InferenceModeGuard>();
        g->guard = std::make_unique<InferenceMode>(mode);
        return g;
      }))
      .def("exit", [](InferenceModeGuard& g) { g.guard.reset(); });

  ag.def(
      "_set_anomaly_enabled",
      [](bool enabled, bool check_nan) { autograd::AnomalyMode::set_enabled(enabled, check_nan); },
      py::arg("enabled"), py::arg("check_nan") = true);
  ag.def("is_anomaly_enabled", [] { return autograd::AnomalyMode::is_enabled(); });
  ag.def("is_anomaly_check_nan_enabled", [] { return autograd::AnomalyMode::should_check_nan(); });
  // The creation trace of a node under anomaly mode is the Python stack where the op ran.
  autograd::set_anomaly_context([]() -> std::string {
    if (!Py_IsInitialized()) return {};
    py::gil_scoped_acquire gil;
    try {
      py::object lines = py::module_::import("traceback").attr("format_stack")();
      return py::str("").attr("join")(lines).cast<std::string>();
    } catch (py::error_already_set&) {
      return {};
    }
  });

  ag.def("_enter_dual_level", [] { return autograd::forward_ad::enter_dual_level(); });
  ag.def(
      "_exit_dual_level", [](uint64_t level) { autograd::forward_ad::exit_dual_level(level); },
      py::arg("level"));
  ag.def("_current_level", [] { return autograd::forward_ad::current_level(); });
  ag.def(
      "_make_dual",
      [](const Tensor& primal, const Tensor& tangent, std::optional<uint64_t> level) {
        return autograd::forward_ad::make_dual(primal, tangent, level);
      },
      py::arg("tensor"), py::arg("tangent"), py::arg("level") = py::none());
  ag.def(
      "_unpack_dual",
      [](const Tensor& t, std::optional<uint64_t> level) {
        auto [p, tg] = autograd::forward_ad::unpack_dual(t, level);
        return py::make_tuple(to_py(p), to_py(tg));
      },
      py::arg("tensor"), py::arg("level") = py::none());
}

void init_node(py::module_& ag) {
  py::class_<RemovableHandle, std::shared_ptr<RemovableHandle>>(ag, "RemovableHandle")
      .def("remove", &RemovableHandle::remove)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](RemovableHandle& h, py::args) { h.remove(); });

  py::class_<Node, std::shared_ptr<Node>>(ag, "Node", py::dynamic_attr())
      .def("name", &Node::name)
      .def_property_readonly("next_functions", &next_functions)
      .def_property_readonly("_sequence_nr", &Node::sequence_nr)
      .def("_num_inputs", &Node::num_inputs)
      .def_property_readonly(
          "variable",
          [](const Node& n) -> py::object {
            auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(&n);
            if (!acc)
              throw py::attribute_error("'" + n.name() + "' object has no attribute 'variable'");
            return to_py(Tensor(acc->variable()));
          })
      .def_property_readonly("metadata",
                             [](py::object self) {
                               py::object d = self.attr("__dict__");
                               if (!d.contains("_metadata")) d["_metadata"] = py::dict();
                               return d["_metadata"];
                             })
      .def(
          "register_hook",
          [](Node& n, py::function fn) {
            PyRefPtr ref = make_ref(fn);
            std::string nm = n.name();
            unsigned h = n.register_hook(
                [ref, nm](const variable_list& gi, const variable_list& go) -> variable_list {
                  py::gil_scoped_acquire gil;
                  py::object r = ref->get()(to_py_tuple(gi), to_py_tuple(go));
                  return hook_results(r, gi.size(), nm.c_str());
                });
            return node_hook_handle(n, h);
          },
          py::arg("fn"))
      .def(
          "register_prehook",
          [](Node& n, py::function fn) {
            PyRefPtr ref = make_ref(fn);
            std::string nm = n.name();
            unsigned h = n.register_prehook([ref, nm](const variable_list& go) -> variable_list {
              py::gil_scoped_acquire gil;
              py::object r = ref->get()(to_py_tuple(go));
              return hook_results(r, go.size(), nm.c_str());
            });
            return node_hook_handle(n, h);
          },
          py::arg("fn"))
      .def("__repr__", [](const Node& n) {
        char addr[32];
        std::snprintf(addr, sizeof addr, "%p", static_cast<const void*>(&n));
        return "<" + n.name() + " object at " + addr + ">";
      });
}

}  // namespace

void init_autograd(py::module_& m) {
  py::module_ ag = m.def_submodule("_autograd", "ember.autograd's C++ half");
  init_node(ag);
  init_tensor_autograd(m);
  init_function(ag);
  init_engine(ag);
}

}  // namespace ember::python
