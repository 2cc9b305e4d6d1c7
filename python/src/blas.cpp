// matmul and the other matrix products, einsum. matmul/mm/bmm and the `@` operators are fast
// calls (Note [Fast calls]): small products are dominated by call overhead.
#include "pyember.h"

namespace ember::python {
namespace {

using BinFn = Tensor (*)(const Tensor&, const Tensor&);
using BinOutFn = Tensor& (*)(Tensor&, const Tensor&, const Tensor&);

struct Binary {
  const char* name;
  const char* other;  // name of the second argument
  BinFn fn;
  BinOutFn out;
};

const Binary kFast[] = {
    {"matmul", "other", &matmul, &matmul_out},
    {"mm", "mat2", &mm, &mm_out},
    {"bmm", "mat2", &bmm, &bmm_out},
};

int64_t work(const Tensor& a, const Tensor& b) { return a.numel() + b.numel(); }

template <int I>
PyObject* fast_function(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  static const Params params(kFast[I].name, {"input", kFast[I].other, "*", "out"});
  PyObject* a[3] = {};
  params.parse(args, nargs, kwnames, a, 2);
  const Tensor& x = to_tensor(a[0], kFast[I].name, "input");
  const Tensor& y = to_tensor(a[1], kFast[I].name, kFast[I].other);
  if (a[2] && a[2] != Py_None) {
    Tensor& o = const_cast<Tensor&>(to_tensor(a[2], kFast[I].name, "out"));
    maybe_without_gil(work(x, y), [&] { return &kFast[I].out(o, x, y); });
    return return_self(a[2]);
  }
  return wrap(maybe_without_gil(work(x, y), [&] { return kFast[I].fn(x, y); }));
  EMBER_PY_END
}

template <int I>
PyObject* fast_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  static const Params params(kFast[I].name, {kFast[I].other});
  PyObject* a[1] = {};
  params.parse(args, nargs, kwnames, a, 1);
  const Tensor& x = unwrap(self);
  const Tensor& y = to_tensor(a[0], kFast[I].name, kFast[I].other);
  return wrap(maybe_without_gil(work(x, y), [&] { return kFast[I].fn(x, y); }));
  EMBER_PY_END
}

/// `a @ b` (Reflected: `b @ a`); NotImplemented for non-tensors as Python expects.
template <bool Reflected>
PyObject* matmul_dunder(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  EMBER_PY_BEGIN
  if (nargs != 1 || kwnames) type_error("operator takes exactly one argument");
  if (!is_tensor(args[0])) Py_RETURN_NOTIMPLEMENTED;
  const Tensor& x = unwrap(self);
  const Tensor& y = unwrap(args[0]);
  return wrap(
      maybe_without_gil(work(x, y), [&] { return Reflected ? matmul(y, x) : matmul(x, y); }));
  EMBER_PY_END
}

Tensor& out_tensor(py::handle out, const char* fn) {
  return const_cast<Tensor&>(to_tensor(out.ptr(), fn, "out"));
}

/// dims of tensordot: an int, or a pair of int sequences (or of ints standing for one dim each
/// inside a list pair such as ([1], [0])).
std::pair<DimVector, DimVector> tensordot_dims(const Tensor& a, const Tensor& b, py::handle d) {
  if (PyLong_Check(d.ptr()) || (is_tensor(d.ptr()) && unwrap(d.ptr()).dim() == 0)) {
    const int64_t n = is_tensor(d.ptr()) ? unwrap(d.ptr()).item<int64_t>() : d.cast<int64_t>();
    EMBER_CHECK(n >= 0, "[tensordot] tensordot expects dims >= 0, but got dims=", n);
    EMBER_CHECK(n <= a.dim() && n <= b.dim(),
                "[tensordot] tensordot expects dims < ndim_a or "
                "ndim_b, but got dims=",
                n);
    DimVector da, db;
    for (int64_t i = 0; i < n; ++i) {
      da.push_back(a.dim() - n + i);
      db.push_back(i);
    }
    return {da, db};
  }
  EMBER_CHECK_TYPE(
      py::isinstance<py::sequence>(d) && !py::isinstance<py::str>(d) && py::len(d) == 2,
      "tensordot(): argument 'dims' must be an int or a pair of lists of ints");
  py::sequence s = py::reinterpret_borrow<py::sequence>(d);
  auto one = [](py::handle h) -> DimVector {
    if (is_tensor(h.ptr())) {
      Tensor t = unwrap(h.ptr()).to(kLong).contiguous().reshape({-1});
      DimVector r;
      for (int64_t i = 0; i < t.numel(); ++i) r.push_back(t.data_ptr<int64_t>()[i]);
      return r;
    }
    EMBER_CHECK_TYPE(!PyLong_Check(h.ptr()),
                     "tensordot(): argument 'dims_self' must be tuple "
                     "of ints, not int");
    return to_int_list(h.ptr(), "tensordot", "dims");
  };
  return {one(s[0]), one(s[1])};
}

std::vector<Tensor> tensor_seq(py::handle seq, const char* fn, const char* arg) {
  EMBER_CHECK_TYPE(PyList_Check(seq.ptr()) || PyTuple_Check(seq.ptr()), fn, "(): argument '", arg,
                   "' must be tuple of Tensors, not ", Py_TYPE(seq.ptr())->tp_name);
  std::vector<Tensor> out;
  for (py::handle h : seq) {
    EMBER_CHECK_TYPE(is_tensor(h.ptr()), fn, "(): expected Tensor as element ", out.size(),
                     " in argument '", arg, "', but got ", Py_TYPE(h.ptr())->tp_name);
    out.push_back(unwrap(h.ptr()));
  }
  return out;
}

/// The sublist form einsum(op1, sublist1, op2, sublist2, ..., [sublist_out]) as an equation
/// and its operands: subscripts 0-25 are 'A'-'Z', 26-51 'a'-'z', Ellipsis is "...".
std::pair<std::string, std::vector<Tensor>> einsum_sublists(const py::args& args) {
  auto subscripts = [](py::handle list) {
    EMBER_CHECK_TYPE(PyList_Check(list.ptr()) || PyTuple_Check(list.ptr()),
                     "einsum(): expected a list of subscripts, got ",
                     Py_TYPE(list.ptr())->tp_name);
    std::string s;
    for (py::handle item : py::reinterpret_borrow<py::sequence>(list)) {
      if (item.ptr() == Py_Ellipsis) {
        s += "...";
        continue;
      }
      EMBER_CHECK_TYPE(PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr()),
                       "einsum(): subscripts must be ints or Ellipsis, got ",
                       Py_TYPE(item.ptr())->tp_name);
      const int64_t n = to_int(item.ptr(), "einsum", "subscript");
      EMBER_CHECK_VALUE(n >= 0 && n < 52,
                        "einsum(): subscript in subscript list is not within the valid range "
                        "[0, 52)");
      s += n < 26 ? char('A' + n) : char('a' + n - 26);
    }
    return s;
  };
  std::string eq;
  std::vector<Tensor> ops;
  const size_t n = args.size();
  for (size_t i = 0; i + 1 < n; i += 2) {
    EMBER_CHECK_TYPE(is_tensor(args[i].ptr()), "einsum(): operand ", i / 2,
                     " must be a Tensor, not ", Py_TYPE(args[i].ptr())->tp_name);
    ops.push_back(unwrap(args[i].ptr()));
    eq += (i ? "," : "") + subscripts(args[i + 1]);
  }
  if (n % 2 == 1) eq += "->" + subscripts(args[n - 1]);
  return {eq, ops};
}

}  // namespace

void init_blas(py::module_& m) {
  using py::arg;
  static FastFn fns[] = {fast_function<0>, fast_function<1>, fast_function<2>};
  static FastFn methods[] = {fast_method<0>, fast_method<1>, fast_method<2>};
  for (int i = 0; i < 3; ++i) {
    add_function(m, new_method_def(kFast[i].name, fns[i]));
    add_method(new_method_def(kFast[i].name, methods[i]));
  }
  add_method(new_method_def("__matmul__", matmul_dunder<false>));
  add_method(new_method_def("__rmatmul__", matmul_dunder<true>));
  // torch.Tensor has no __imatmul__: `a @= b` rebinds `a` to a new tensor. Defining it with
  // the same result keeps that behaviour.
  add_method(new_method_def("__imatmul__", matmul_dunder<false>));

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // beta * input + alpha * product families.
  using AddFn =
      Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  using AddOutFn = Tensor& (*)(Tensor&, const Tensor&, const Tensor&, const Tensor&, const Scalar&,
                               const Scalar&);
  using AddInFn = Tensor& (Tensor::*)(const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  struct AddOp {
    const char* name;
    const char* a1;
    const char* a2;
    AddFn fn;
    AddOutFn out;
    AddInFn inplace;
  };
  const AddOp add_ops[] = {
      {"addmm", "mat1", "mat2", &addmm, &addmm_out, &Tensor::addmm_},
      {"addmv", "mat", "vec", &addmv, &addmv_out, &Tensor::addmv_},
      {"addr", "vec1", "vec2", &addr, &addr_out, &Tensor::addr_},
      {"addbmm", "batch1", "batch2", &addbmm, &addbmm_out, &Tensor::addbmm_},
      {"baddbmm", "batch1", "batch2", &baddbmm, &baddbmm_out, &Tensor::baddbmm_},
  };
  for (const AddOp& op : add_ops) {
    m.def(
        op.name,
        [op](const Tensor& x, const Tensor& a, const Tensor& b, const Scalar& beta,
             const Scalar& alpha, py::handle out) -> py::object {
          const int64_t n = x.numel() + a.numel() + b.numel();
          if (out.is_none())
            return wrap_obj(maybe_without_gil(n, [&] { return op.fn(x, a, b, beta, alpha); }));
          maybe_without_gil(
              n, [&] { return &op.out(out_tensor(out, op.name), x, a, b, beta, alpha); });
          return py::reinterpret_borrow<py::object>(out);
        },
        arg("input"), arg(op.a1), arg(op.a2), py::kw_only(), arg("beta") = 1, arg("alpha") = 1,
        arg("out") = py::none());
    cls.def(
        op.name,
        [op](const Tensor& x, const Tensor& a, const Tensor& b, const Scalar& beta,
             const Scalar& alpha) {
          return maybe_without_gil(x.numel() + a.numel() + b.numel(),
                                   [&] { return op.fn(x, a, b, beta, alpha); });
        },
        arg(op.a1), arg(op.a2), py::kw_only(), arg("beta") = 1, arg("alpha") = 1);
    cls.def(
        strdup((std::string(op.name) + "_").c_str()),
        [op](py::handle self, const Tensor& a, const Tensor& b, const Scalar& beta,
             const Scalar& alpha) {
          Tensor& x = unwrap(self.ptr());
          maybe_without_gil(x.numel() + a.numel() + b.numel(),
                            [&] { return &(x.*op.inplace)(a, b, beta, alpha); });
          return py::reinterpret_borrow<py::object>(self);
        },
        arg(op.a1), arg(op.a2), py::kw_only(), arg("beta") = 1, arg("alpha") = 1);
  }

  // Two-tensor products with out=.
  struct Bin {
    const char* name;
    const char* other;
    BinFn fn;
    BinOutFn out;
    bool method;
  };
  const Bin bins[] = {
      {"mv", "vec", &mv, &mv_out, true},
      {"dot", "other", &dot, &dot_out, true},
      {"inner", "other", &inner, &inner_out, true},
      {"vdot", "other", &vdot, &vdot_out, true},
      {"outer", "vec2", &outer, &outer_out, true},
      {"ger", "vec2", &ger, &ger_out, true},
      {"kron", "other", &kron, &kron_out, true},
  };
  for (const Bin& b : bins) {
    m.def(
        b.name,
        [b](const Tensor& x, const Tensor& y, py::handle out) -> py::object {
          if (out.is_none())
            return wrap_obj(maybe_without_gil(work(x, y), [&] { return b.fn(x, y); }));
          maybe_without_gil(work(x, y), [&] { return &b.out(out_tensor(out, b.name), x, y); });
          return py::reinterpret_borrow<py::object>(out);
        },
        arg("input"), arg(b.other), py::kw_only(), arg("out") = py::none());
    if (b.method)
      cls.def(
          b.name,
          [b](const Tensor& x, const Tensor& y) {
            return maybe_without_gil(work(x, y), [&] { return b.fn(x, y); });
          },
          arg(b.other));
  }

  m.def(
      "tensordot",
      [](const Tensor& a, const Tensor& b, py::handle dims, py::handle out) -> py::object {
        auto [da, db] = tensordot_dims(a, b, dims);
        if (out.is_none())
          return wrap_obj(maybe_without_gil(work(a, b), [&] { return tensordot(a, b, da, db); }));
        maybe_without_gil(
            work(a, b), [&] { return &tensordot_out(out_tensor(out, "tensordot"), a, b, da, db); });
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("a"), arg("b"), arg("dims") = 2, py::kw_only(), arg("out") = py::none());

  m.def("einsum", [](py::args args) {
    if (args.size() >= 2 && is_tensor(args[0].ptr())) {
      auto [eq, ops] = einsum_sublists(args);
      int64_t n = 0;
      for (const Tensor& t : ops) n += t.numel();
      return wrap_obj(maybe_without_gil(n, [&] { return einsum(eq, ops); }));
    }
    EMBER_CHECK_TYPE(args.size() >= 1 && py::isinstance<py::str>(args[0]),
                     "einsum(): argument 'equation' must be str");
    std::string eq = args[0].cast<std::string>();
    std::vector<Tensor> ops;
    if (args.size() == 2 && !is_tensor(args[1].ptr())) {
      ops = tensor_seq(args[1], "einsum", "tensors");
    } else {
      for (size_t i = 1; i < args.size(); ++i) {
        EMBER_CHECK_TYPE(is_tensor(args[i].ptr()), "einsum(): operand ", i - 1,
                         " must be a Tensor, not ", Py_TYPE(args[i].ptr())->tp_name);
        ops.push_back(unwrap(args[i].ptr()));
      }
    }
    int64_t n = 0;
    for (const Tensor& t : ops) n += t.numel();
    return wrap_obj(maybe_without_gil(n, [&] { return einsum(eq, ops); }));
  });

  m.def(
      "cross",
      [](const Tensor& a, const Tensor& b, std::optional<int64_t> dim,
         py::handle out) -> py::object {
        if (out.is_none()) return wrap_obj(cross(a, b, dim));
        cross_out(out_tensor(out, "cross"), a, b, dim);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("other"), arg("dim") = py::none(), py::kw_only(), arg("out") = py::none());
  cls.def(
      "cross",
      [](const Tensor& a, const Tensor& b, std::optional<int64_t> dim) { return cross(a, b, dim); },
      arg("other"), arg("dim") = py::none());
  m.def(
      "trace", [](const Tensor& a) { return trace(a); }, arg("input"));
  cls.def("trace", [](const Tensor& a) { return trace(a); });

  m.def("chain_matmul", [](py::args args, py::kwargs kw) -> py::object {
    std::vector<Tensor> ms;
    for (py::handle h : args) {
      EMBER_CHECK_TYPE(is_tensor(h.ptr()), "chain_matmul(): expected Tensors, got ",
                       Py_TYPE(h.ptr())->tp_name);
      ms.push_back(unwrap(h.ptr()));
    }
    py::handle out = py::none();
    for (auto item : kw) {
      EMBER_CHECK_TYPE(item.first.cast<std::string>() == "out",
                       "chain_matmul() got an unexpected keyword argument '",
                       item.first.cast<std::string>(), "'");
      out = item.second;
    }
    if (out.is_none()) return wrap_obj(chain_matmul(ms));
    chain_matmul_out(out_tensor(out, "chain_matmul"), ms);
    return py::reinterpret_borrow<py::object>(out);
  });

  py::module_ lm = m.attr("_linalg");
  lm.def(
      "matmul",
      [](const Tensor& a, const Tensor& b, py::handle out) -> py::object {
        if (out.is_none())
          return wrap_obj(maybe_without_gil(work(a, b), [&] { return linalg_matmul(a, b); }));
        linalg_matmul_out(out_tensor(out, "linalg.matmul"), a, b);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("other"), py::kw_only(), arg("out") = py::none());
  lm.def(
      "multi_dot",
      [](py::handle tensors, py::handle out) -> py::object {
        std::vector<Tensor> ts = tensor_seq(tensors, "linalg.multi_dot", "tensors");
        if (out.is_none()) return wrap_obj(linalg_multi_dot(ts));
        linalg_multi_dot_out(out_tensor(out, "linalg.multi_dot"), ts);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("tensors"), py::kw_only(), arg("out") = py::none());
  lm.def(
      "cross",
      [](const Tensor& a, const Tensor& b, int64_t dim, py::handle out) -> py::object {
        if (out.is_none()) return wrap_obj(linalg_cross(a, b, dim));
        linalg_cross_out(out_tensor(out, "linalg.cross"), a, b, dim);
        return py::reinterpret_borrow<py::object>(out);
      },
      arg("input"), arg("other"), py::kw_only(), arg("dim") = -1, arg("out") = py::none());
}

}  // namespace ember::python
