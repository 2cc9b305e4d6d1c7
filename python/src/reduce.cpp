// reductions (sum, mean, max/min, var/std, norms, logsumexp, all/any).
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

/// dim argument: None -> {} (every dim), an int, or a sequence of ints.
DimVector dims_of(py::handle h, const char* fn) {
  if (h.is_none()) return {};
  if (PyLong_Check(h.ptr()) || (is_tensor(h.ptr()) && unwrap(h.ptr()).dim() == 0))
    return {to_int(h.ptr(), fn, "dim")};
  return to_int_list(h.ptr(), fn, "dim");
}
std::optional<int64_t> opt_dim(py::handle h, const char* fn) {
  if (h.is_none()) return std::nullopt;
  return to_int(h.ptr(), fn, "dim");
}
std::optional<ScalarType> dtype_of(py::handle h, const char* fn) { return to_dtype(h.ptr(), fn); }
Tensor& out_of(py::handle h, const char* fn) {
  return const_cast<Tensor&>(to_tensor(h.ptr(), fn, "out"));
}

template <class F>
py::object run(const Tensor& x, F f) {
  return wrap_obj(maybe_without_gil(x.numel(), f));
}
/// The result, or `out` (the same Python object) after writing the result into it.
template <class F>
py::object run_out(const Tensor& x, py::handle out, const char* fn, F f) {
  if (out.is_none()) return run(x, f);
  Tensor r = maybe_without_gil(x.numel(), f);
  write_out(out_of(out, fn), r, fn);
  return py::reinterpret_borrow<py::object>(out);
}
py::object pair(const char* name, std::tuple<Tensor, Tensor> r) {
  return return_type(name, py::make_tuple(wrap_obj(std::get<0>(r)), wrap_obj(std::get<1>(r))));
}
py::object pair_out(const char* name, std::tuple<Tensor, Tensor> r, py::handle out) {
  if (out.is_none()) return pair(name, std::move(r));
  EMBER_CHECK_TYPE(PyTuple_Check(out.ptr()) && PyTuple_GET_SIZE(out.ptr()) == 2, name,
                   "(): argument 'out' must be a tuple of 2 Tensors");
  py::tuple t = py::reinterpret_borrow<py::tuple>(out);
  write_out(out_of(t[0], name), std::get<0>(r), name);
  write_out(out_of(t[1], name), std::get<1>(r), name);
  return return_type(name, py::make_tuple(t[0], t[1]));
}

// sum / nansum / mean / nanmean share the signature (input, dim, keepdim, *, dtype, out).
using SumFn = Tensor (*)(const Tensor&, OptionalIntArrayRef, bool, std::optional<ScalarType>);
using SumOutFn = Tensor& (*)(Tensor&, const Tensor&, OptionalIntArrayRef, bool,
                             std::optional<ScalarType>);

// var / std family: (input, dim, unbiased, keepdim, *, correction); `dim` may be the legacy
// positional `unbiased` bool.
struct VarArgs {
  std::optional<DimVector> dim;
  std::optional<int64_t> correction;
};
VarArgs var_args(py::handle dim, py::handle unbiased, py::handle correction, const char* fn) {
  VarArgs a;
  if (PyBool_Check(dim.ptr())) {
    EMBER_CHECK_TYPE(unbiased.is_none(), fn, "(): unbiased given twice");
    unbiased = dim;
  } else if (!dim.is_none()) {
    a.dim = dims_of(dim, fn);
  }
  if (!unbiased.is_none()) {
    EMBER_CHECK(correction.is_none(), "[", fn, "] cannot specify both unbiased and correction");
    a.correction = to_bool(unbiased.ptr(), fn, "unbiased") ? 1 : 0;
  } else if (!correction.is_none()) {
    a.correction = to_int(correction.ptr(), fn, "correction");
  }
  return a;
}
OptionalIntArrayRef opt_ref(const std::optional<DimVector>& d) {
  if (!d) return std::nullopt;
  return IntArrayRef(*d);
}

std::optional<Scalar> norm_p(py::handle p, std::string& s) {
  if (p.is_none()) {
    s = "fro";
    return std::nullopt;
  }
  if (PyUnicode_Check(p.ptr())) {
    s = to_string(p.ptr(), "norm", "p");
    return std::nullopt;
  }
  return to_scalar(p.ptr(), "norm", "p");
}

}  // namespace

void init_reduce(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  struct SumEntry {
    const char* name;
    SumFn fn;
    SumOutFn fn_out;
  };
  for (SumEntry e : {SumEntry{"sum", static_cast<SumFn>(&sum), &sum_out},
                     SumEntry{"nansum", &nansum, &nansum_out},
                     SumEntry{"mean", static_cast<SumFn>(&mean), &mean_out},
                     SumEntry{"nanmean", &nanmean, &nanmean_out}}) {
    m.def(
        e.name,
        [e](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype,
            py::handle out) -> py::object {
          DimVector d = dims_of(dim, e.name);
          auto dt = dtype_of(dtype, e.name);
          if (out.is_none()) return run(x, [&] { return e.fn(x, d, keepdim, dt); });
          Tensor& o = out_of(out, e.name);
          maybe_without_gil(x.numel(), [&] { return &e.fn_out(o, x, d, keepdim, dt); });
          return py::reinterpret_borrow<py::object>(out);
        },
        arg("input"), arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(),
        arg("dtype") = py::none(), arg("out") = py::none());
    cls.def(
        e.name,
        [e](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype) {
          DimVector d = dims_of(dim, e.name);
          auto dt = dtype_of(dtype, e.name);
          return run(x, [&] { return e.fn(x, d, keepdim, dt); });
        },
        arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(), arg("dtype") = py::none());
  }

  auto prod_fn = [](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype,
                    py::handle out) -> py::object {
    auto dt = dtype_of(dtype, "prod");
    if (dim.is_none()) return run_out(x, out, "prod", [&] { return prod(x, dt); });
    const int64_t d = to_int(dim.ptr(), "prod", "dim");
    if (out.is_none()) return run(x, [&] { return prod(x, d, keepdim, dt); });
    prod_out(out_of(out, "prod"), x, d, keepdim, dt);
    return py::reinterpret_borrow<py::object>(out);
  };
  m.def("prod", prod_fn, arg("input"), arg("dim") = py::none(), arg("keepdim") = false,
        py::kw_only(), arg("dtype") = py::none(), arg("out") = py::none());
  cls.def(
      "prod",
      [prod_fn](const Tensor& x, py::handle dim, bool keepdim, py::handle dtype) {
        return prod_fn(x, dim, keepdim, dtype, py::none());
      },
      arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(), arg("dtype") = py::none());

  // max / min: whole tensor, along a dim (values, indices), or elementwise with another tensor.
  for (bool is_max : {true, false}) {
    const char* name = is_max ? "max" : "min";
    auto fn = [is_max, name](const Tensor& x, py::handle dim, bool keepdim, py::handle out,
                             py::handle other) -> py::object {
      if (!dim.is_none() && is_tensor(dim.ptr())) other = dim;
      if (!other.is_none()) {
        const Tensor& o = to_tensor(other.ptr(), name, "other");
        return run_out(x, out, name, [&] { return is_max ? maximum(x, o) : minimum(x, o); });
      }
      if (dim.is_none()) return run_out(x, out, name, [&] { return is_max ? max(x) : min(x); });
      const int64_t d = to_int(dim.ptr(), name, "dim");
      auto r = maybe_without_gil(x.numel(),
                                 [&] { return is_max ? max(x, d, keepdim) : min(x, d, keepdim); });
      return pair_out(name, std::move(r), out);
    };
    m.def(name, fn, arg("input"), arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(),
          arg("out") = py::none(), arg("other") = py::none());
    cls.def(
        name,
        [fn](const Tensor& x, py::handle dim, bool keepdim, py::handle other) {
          return fn(x, dim, keepdim, py::none(), other);
        },
        arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(), arg("other") = py::none());

    const char* aname = is_max ? "amax" : "amin";
    auto afn = [is_max, aname](const Tensor& x, py::handle dim, bool keepdim,
                               py::handle out) -> py::object {
      DimVector d = dims_of(dim, aname);
      return run_out(x, out, aname,
                     [&] { return is_max ? amax(x, d, keepdim) : amin(x, d, keepdim); });
    };
    m.def(aname, afn, arg("input"), arg("dim") = py::tuple(), arg("keepdim") = false, py::kw_only(),
          arg("out") = py::none());
    cls.def(
        aname,
        [afn](const Tensor& x, py::handle dim, bool keepdim) {
          return afn(x, dim, keepdim, py::none());
        },
        arg("dim") = py::tuple(), arg("keepdim") = false);

    const char* argname = is_max ? "argmax" : "argmin";
    auto argfn = [is_max, argname](const Tensor& x, py::handle dim, bool keepdim,
                                   py::handle out) -> py::object {
      auto d = opt_dim(dim, argname);
      return run_out(x, out, argname,
                     [&] { return is_max ? argmax(x, d, keepdim) : argmin(x, d, keepdim); });
    };
    m.def(argname, argfn, arg("input"), arg("dim") = py::none(), arg("keepdim") = false,
          py::kw_only(), arg("out") = py::none());
    cls.def(
        argname,
        [argfn](const Tensor& x, py::handle dim, bool keepdim) {
          return argfn(x, dim, keepdim, py::none());
        },
        arg("dim") = py::none(), arg("keepdim") = false);
  }

  auto aminmax_fn = [](const Tensor& x, py::handle dim, bool keepdim, py::handle out) {
    auto d = opt_dim(dim, "aminmax");
    return pair_out("aminmax", maybe_without_gil(x.numel(), [&] { return aminmax(x, d, keepdim); }),
                    out);
  };
  m.def("aminmax", aminmax_fn, arg("input"), py::kw_only(), arg("dim") = py::none(),
        arg("keepdim") = false, arg("out") = py::none());
  cls.def(
      "aminmax",
      [aminmax_fn](const Tensor& x, py::handle dim, bool keepdim) {
        return aminmax_fn(x, dim, keepdim, py::none());
      },
      py::kw_only(), arg("dim") = py::none(), arg("keepdim") = false);

  // var / std / var_mean / std_mean
  for (int kind = 0; kind < 4; ++kind) {
    static const char* names[] = {"var", "std", "var_mean", "std_mean"};
    const char* name = names[kind];
    auto fn = [kind, name](const Tensor& x, py::handle dim, py::handle unbiased, bool keepdim,
                           py::handle correction, py::handle out) -> py::object {
      VarArgs a = var_args(dim, unbiased, correction, name);
      auto d = opt_ref(a.dim);
      auto c = a.correction;
      if (kind == 0) return run_out(x, out, name, [&] { return var(x, d, c, keepdim); });
      if (kind == 1) return run_out(x, out, name, [&] { return ember::std(x, d, c, keepdim); });
      auto r = maybe_without_gil(x.numel(), [&] {
        return kind == 2 ? var_mean(x, d, c, keepdim) : std_mean(x, d, c, keepdim);
      });
      return py::make_tuple(wrap_obj(std::get<0>(r)), wrap_obj(std::get<1>(r)));
    };
    m.def(name, fn, arg("input"), arg("dim") = py::none(), arg("unbiased") = py::none(),
          arg("keepdim") = false, py::kw_only(), arg("correction") = py::none(),
          arg("out") = py::none());
    if (kind < 2) {
      cls.def(
          name,
          [fn](const Tensor& x, py::handle dim, py::handle unbiased, bool keepdim,
               py::handle correction) {
            return fn(x, dim, unbiased, keepdim, correction, py::none());
          },
          arg("dim") = py::none(), arg("unbiased") = py::none(), arg("keepdim") = false,
          py::kw_only(), arg("correction") = py::none());
    }
  }

  auto lse = [](const Tensor& x, py::handle dim, bool keepdim, py::handle out) -> py::object {
    DimVector d = dims_of(dim, "logsumexp");
    return run_out(x, out, "logsumexp", [&] { return logsumexp(x, d, keepdim); });
  };
  auto dist_fn = [](const Tensor& x, const Tensor& other, py::handle p) {
    return maybe_without_gil(x.numel(),
                             [&] { return dist(x, other, to_scalar(p.ptr(), "dist", "p")); });
  };
  m.def("dist", dist_fn, arg("input"), arg("other"), arg("p") = 2);
  cls.def("dist", dist_fn, arg("other"), arg("p") = 2);
  m.def("logsumexp", lse, arg("input"), arg("dim"), arg("keepdim") = false, py::kw_only(),
        arg("out") = py::none());
  cls.def(
      "logsumexp",
      [lse](const Tensor& x, py::handle dim, bool keepdim) {
        return lse(x, dim, keepdim, py::none());
      },
      arg("dim"), arg("keepdim") = false);

  auto norm_fn = [](const Tensor& x, py::handle p, py::handle dim, bool keepdim, py::handle out,
                    py::handle dtype) -> py::object {
    std::string ps;
    auto pv = norm_p(p, ps);
    DimVector d = dims_of(dim, "norm");
    auto dt = dtype_of(dtype, "norm");
    return run_out(x, out, "norm", [&] {
      return ps.empty() ? norm(x, pv, d, keepdim, dt)
                        : norm(x, std::string_view(ps), d, keepdim, dt);
    });
  };
  m.def("norm", norm_fn, arg("input"), arg("p") = "fro", arg("dim") = py::none(),
        arg("keepdim") = false, arg("out") = py::none(), arg("dtype") = py::none());
  cls.def(
      "norm",
      [norm_fn](const Tensor& x, py::handle p, py::handle dim, bool keepdim, py::handle dtype) {
        return norm_fn(x, p, dim, keepdim, py::none(), dtype);
      },
      arg("p") = "fro", arg("dim") = py::none(), arg("keepdim") = false, arg("dtype") = py::none());

  py::module_ lm = m.attr("_linalg");
  lm.def(
      "vector_norm",
      [](const Tensor& x, py::handle ord, py::handle dim, bool keepdim, py::handle dtype,
         py::handle out) -> py::object {
        const Scalar o = to_scalar(ord.ptr(), "linalg.vector_norm", "ord");
        std::optional<DimVector> d;
        if (!dim.is_none()) d = dims_of(dim, "linalg.vector_norm");
        auto dt = dtype_of(dtype, "linalg.vector_norm");
        return run_out(x, out, "linalg.vector_norm",
                       [&] { return linalg::vector_norm(x, o, opt_ref(d), keepdim, dt); });
      },
      arg("x"), arg("ord") = 2, arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(),
      arg("dtype") = py::none(), arg("out") = py::none());

  for (bool is_all : {true, false}) {
    const char* name = is_all ? "all" : "any";
    auto fn = [is_all, name](const Tensor& x, py::handle dim, bool keepdim,
                             py::handle out) -> py::object {
      if (dim.is_none()) return run_out(x, out, name, [&] { return is_all ? all(x) : any(x); });
      const int64_t d = to_int(dim.ptr(), name, "dim");
      return run_out(x, out, name,
                     [&] { return is_all ? all(x, d, keepdim) : any(x, d, keepdim); });
    };
    m.def(name, fn, arg("input"), arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(),
          arg("out") = py::none());
    cls.def(
        name,
        [fn](const Tensor& x, py::handle dim, bool keepdim) {
          return fn(x, dim, keepdim, py::none());
        },
        arg("dim") = py::none(), arg("keepdim") = false);
  }

  auto cnz = [](const Tensor& x, py::handle dim) {
    DimVector d = dims_of(dim, "count_nonzero");
    return run(x, [&] { return count_nonzero(x, IntArrayRef(d)); });
  };
  m.def("count_nonzero", cnz, arg("input"), arg("dim") = py::none());
  cls.def("count_nonzero", cnz, arg("dim") = py::none());
}

}  // namespace ember::python
