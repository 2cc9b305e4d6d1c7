// _C._func: the function transforms of include/ember/func.h over flat tensor lists. The
// Python package (ember/func) flattens pytrees and calls these, so the transforms themselves
// exist once, in C++.
#include "ember/func.h"
#include "core/op_table.h"
#include "func/batching.h"
#include "func/levels.h"
#include "pyember.h"

namespace ember::python {

namespace {

using func::TensorList;

TensorList to_list(const py::handle& seq, const char* what) {
  TensorList r;
  for (const py::handle& h : seq) {
    if (h.is_none()) {
      r.emplace_back();
      continue;
    }
    EMBER_CHECK_TYPE(is_tensor(h.ptr()), "[", what, "] expected tensors, got ",
                     std::string(py::str(py::type::of(h).attr("__name__"))));
    r.push_back(unwrap(h.ptr()));
  }
  return r;
}

py::list to_py(const TensorList& ts) {
  py::list r;
  for (const Tensor& t : ts) r.append(wrap_obj(t));
  return r;
}

// A Python callable of a list of tensors returning a list of tensors, as a func::Fn.
func::Fn as_fn(py::function f, const char* what) {
  return [f = std::move(f), what](const TensorList& a) {
    py::object r = f(to_py(a));
    return to_list(r, what);
  };
}

std::vector<std::optional<int64_t>> dims(const py::object& o) {
  std::vector<std::optional<int64_t>> r;
  if (o.is_none()) return r;
  for (const py::handle& h : o) {
    if (h.is_none())
      r.emplace_back();
    else
      r.emplace_back(h.cast<int64_t>());
  }
  return r;
}

func::VmapRandomness randomness(const std::string& s) {
  if (s == "error") return func::VmapRandomness::Error;
  if (s == "different") return func::VmapRandomness::Different;
  if (s == "same") return func::VmapRandomness::Same;
  EMBER_THROW(ValueError,
              "[vmap] Only allowed values for randomness are 'error', 'different', "
              "or 'same'. Got ",
              s);
}

}  // namespace

void init_func(py::module_& m) {
  py::module_ f = m.def_submodule("_func", "function transforms over flat tensor lists");
  // `out_dims`: a list, or a callable of the number of outputs returning one.
  f.def("vmap", [](py::function fn, py::list args, py::object in_dims, py::object out_dims,
                   const std::string& rnd, std::optional<int64_t> chunk) {
    func::VmapOptions o;
    o.in_dims = dims(in_dims);
    if (PyCallable_Check(out_dims.ptr()))
      o.out_dims_fn = [out_dims](size_t n) { return dims(out_dims(n)); };
    else
      o.out_dims = dims(out_dims);
    o.randomness = randomness(rnd);
    o.chunk_size = chunk;
    return to_py(func::vmap_call(as_fn(std::move(fn), "vmap"), to_list(args, "vmap"), o));
  });
  f.def("grad_and_value", [](py::function fn, py::list args, std::vector<int64_t> argnums) {
    func::GradAndValue r =
        func::grad_and_value_call(as_fn(std::move(fn), "grad"), to_list(args, "grad"), argnums);
    return py::make_tuple(to_py(r.grads), to_py(r.outputs));
  });
  f.def("vjp", [](py::function fn, py::list primals) {
    func::VjpResult r = func::vjp(as_fn(std::move(fn), "vjp"), to_list(primals, "vjp"));
    auto vjp_fn = r.vjp_fn;
    py::cpp_function pf([vjp_fn](py::list cots) { return to_py(vjp_fn(to_list(cots, "vjp"))); });
    return py::make_tuple(to_py(r.outputs), pf);
  });
  f.def("jvp", [](py::function fn, py::list primals, py::list tangents) {
    auto [o, t] =
        func::jvp(as_fn(std::move(fn), "jvp"), to_list(primals, "jvp"), to_list(tangents, "jvp"));
    return py::make_tuple(to_py(o), to_py(t));
  });
  f.def("jacrev", [](py::function fn, py::list args, std::vector<int64_t> argnums) {
    return to_py(
        func::jacrev_call(as_fn(std::move(fn), "jacrev"), to_list(args, "jacrev"), argnums));
  });
  f.def("jacfwd", [](py::function fn, py::list args, std::vector<int64_t> argnums) {
    return to_py(
        func::jacfwd_call(as_fn(std::move(fn), "jacfwd"), to_list(args, "jacfwd"), argnums));
  });
  f.def("is_batchedtensor",
        [](py::object t) { return is_tensor(t.ptr()) && func::is_batchedtensor(unwrap(t.ptr())); });
  f.def("transform_depth", [] { return func::transform_stack().size(); });
  // The ops of the op list that are primitives (not composite, not out=) with no batching
  // rule, and those whose rule loops over the batch (tests/python/test_func_vmap.py).
  f.def("batching_coverage", [] {
    py::list missing, loops, covered;
    for (size_t k = 0; k < kNumOps; ++k) {
      OpId op = OpId(k);
      if (is_elementwise(op)) continue;
      const OpInfo& info = op_info(op);
      using namespace op_trait;
      if (info.traits & (kComposite | kOut | kDynamicShape | kFactory)) continue;
      if (!func::batch_rule(op))
        missing.append(info.id);
      else if (func::batch_rule_is_loop(op))
        loops.append(info.id);
      else
        covered.append(info.id);
    }
    return py::make_tuple(covered, loops, missing);
  });
}

}  // namespace ember::python
