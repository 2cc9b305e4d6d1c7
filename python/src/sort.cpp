// scans, softmax, sort/topk, median/mode/kthvalue/quantile, unique.
#include <string>
#include <utility>

#include "core/tensor_util.h"
#include "pyember.h"

namespace ember::python {
namespace {

using OptDtype = std::optional<ScalarType>;

Tensor& out_arg(py::handle out, const char* fn) {
  return const_cast<Tensor&>(to_tensor(out.ptr(), fn, "out"));
}

py::object same(py::handle o) { return py::reinterpret_borrow<py::object>(o); }

/// A (values, indices) pair as ember.return_types.<name>.
py::object pair(const char* name, std::tuple<Tensor, Tensor> r) {
  return return_type(name, py::make_tuple(wrap_obj(std::move(std::get<0>(r))),
                                          wrap_obj(std::move(std::get<1>(r)))));
}

/// The two tensors of an out=(values, indices) argument of `name`.
std::pair<Tensor*, Tensor*> out_pair(const char* name, py::handle out) {
  EMBER_CHECK_TYPE(PyTuple_Check(out.ptr()) && PyTuple_GET_SIZE(out.ptr()) == 2, name,
                   "(): argument 'out' must be a tuple of 2 Tensors");
  py::tuple t = py::reinterpret_borrow<py::tuple>(out);
  return {&out_arg(t[0], name), &out_arg(t[1], name)};
}

/// Writes result `v` of sort/msort/topk into out= tensor `o` (`what` names it). The dtype must
/// be the result's. As PyTorch 1.13 does for these ops, an out of another shape is resized,
/// with a UserWarning when it had elements (the deprecated behaviour PyTorch warns about).
void write_sorted_out(Tensor& o, const Tensor& v, const char* name, const char* what) {
  EMBER_CHECK(o.dtype() == v.dtype(), "[", name, "] expected ", what, " tensor to have dtype ",
              dtype_name(v.dtype()), ", but got ", dtype_name(o.dtype()), " instead");
  EMBER_CHECK(o.device() == v.device(), "[", name, "] expected ", what, " on ", v.device().str(),
              ", got ", o.device().str());
  if (o.sizes() != v.sizes()) {
    if (o.numel() != 0) {
      const std::string msg =
          std::string("An output with one or more elements was resized since it had shape ") +
          shape_str(o.sizes()) + ", which does not match the required output shape " +
          shape_str(v.sizes()) + ". This behavior is deprecated; resize it to zero elements " +
          "first (t.resize_(0)) to reuse it.";
      if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) != 0) throw py::error_already_set();
    }
    resize_output(o, v.sizes());
  }
  o.copy_(v);
}

/// Writes a (values, indices) result of sort/topk into an out=(values, indices) tuple.
py::object pair_out(const char* name, py::handle out, std::tuple<Tensor, Tensor> r) {
  auto [v, i] = out_pair(name, out);
  write_sorted_out(*v, std::get<0>(r), name, "out[0]");
  write_sorted_out(*i, std::get<1>(r), name, "out[1]");
  py::tuple t = py::reinterpret_borrow<py::tuple>(out);
  return return_type(name, py::make_tuple(t[0], t[1]));
}

/// cumsum / cumprod share (input, dim, *, dtype, out) and the in-place method.
using CumFn = Tensor (*)(const Tensor&, int64_t, OptDtype);
using CumOutFn = Tensor& (*)(Tensor&, const Tensor&, int64_t, OptDtype);
using CumInplaceFn = Tensor& (Tensor::*)(int64_t, OptDtype);

/// cummax / cummin: (input, dim, *, out=(values, indices)).
using ExtFn = std::tuple<Tensor, Tensor> (*)(const Tensor&, int64_t);
using ExtOutFn = std::tuple<Tensor&, Tensor&> (*)(Tensor&, Tensor&, const Tensor&, int64_t);

}  // namespace

void init_sort(py::module_& m) {
  using py::arg;
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // ---- softmax ----
  for (bool log : {false, true}) {
    const char* name = log ? "log_softmax" : "softmax";
    auto fn = log ? &log_softmax : &softmax;
    auto fn_out = log ? &log_softmax_out : &softmax_out;
    m.def(
        name,
        [fn, fn_out, name](const Tensor& x, int64_t dim, OptDtype dtype,
                           py::handle out) -> py::object {
          if (out.is_none())
            return wrap_obj(maybe_without_gil(x.numel(), [&] { return fn(x, dim, dtype); }));
          Tensor& o = out_arg(out, name);
          maybe_without_gil(x.numel(), [&] { return &fn_out(o, x, dim, dtype); });
          return same(out);
        },
        arg("input"), arg("dim"), arg("dtype") = py::none(), py::kw_only(),
        arg("out") = py::none());
    cls.def(
        name,
        [fn](const Tensor& x, int64_t dim, OptDtype dtype) {
          return maybe_without_gil(x.numel(), [&] { return fn(x, dim, dtype); });
        },
        arg("dim"), arg("dtype") = py::none());
  }

  // ---- scans ----
  struct CumEntry {
    const char* name;
    const char* inplace;
    CumFn fn;
    CumOutFn fn_out;
    CumInplaceFn fn_;
  };
  for (CumEntry e : {CumEntry{"cumsum", "cumsum_", &cumsum, &cumsum_out, &Tensor::cumsum_},
                     CumEntry{"cumprod", "cumprod_", &cumprod, &cumprod_out, &Tensor::cumprod_}}) {
    m.def(
        e.name,
        [e](const Tensor& x, int64_t dim, OptDtype dtype, py::handle out) -> py::object {
          if (out.is_none())
            return wrap_obj(maybe_without_gil(x.numel(), [&] { return e.fn(x, dim, dtype); }));
          Tensor& o = out_arg(out, e.name);
          maybe_without_gil(x.numel(), [&] { return &e.fn_out(o, x, dim, dtype); });
          return same(out);
        },
        arg("input"), arg("dim"), py::kw_only(), arg("dtype") = py::none(),
        arg("out") = py::none());
    cls.def(
        e.name,
        [e](const Tensor& x, int64_t dim, OptDtype dtype) {
          return maybe_without_gil(x.numel(), [&] { return e.fn(x, dim, dtype); });
        },
        arg("dim"), py::kw_only(), arg("dtype") = py::none());
    cls.def(
        e.inplace,
        [e](py::handle self, int64_t dim, OptDtype dtype) {
          Tensor& t = unwrap(self.ptr());
          maybe_without_gil(t.numel(), [&] { return &(t.*e.fn_)(dim, dtype); });
          return same(self);
        },
        arg("dim"), py::kw_only(), arg("dtype") = py::none());
  }
  struct ExtEntry {
    const char* name;
    ExtFn fn;
    ExtOutFn fn_out;
  };
  for (ExtEntry e :
       {ExtEntry{"cummax", &cummax, &cummax_out}, ExtEntry{"cummin", &cummin, &cummin_out}}) {
    m.def(
        e.name,
        [e](const Tensor& x, int64_t dim, py::handle out) -> py::object {
          if (out.is_none())
            return pair(e.name, maybe_without_gil(x.numel(), [&] { return e.fn(x, dim); }));
          auto [v, i] = out_pair(e.name, out);
          maybe_without_gil(x.numel(), [&] { return (e.fn_out(*v, *i, x, dim), 0); });
          py::tuple t = py::reinterpret_borrow<py::tuple>(out);
          return return_type(e.name, py::make_tuple(t[0], t[1]));
        },
        arg("input"), arg("dim"), py::kw_only(), arg("out") = py::none());
    cls.def(
        e.name,
        [e](const Tensor& x, int64_t dim) {
          return pair(e.name, maybe_without_gil(x.numel(), [&] { return e.fn(x, dim); }));
        },
        arg("dim"));
  }
  m.def(
      "logcumsumexp",
      [](const Tensor& x, int64_t dim, py::handle out) -> py::object {
        if (out.is_none())
          return wrap_obj(maybe_without_gil(x.numel(), [&] { return logcumsumexp(x, dim); }));
        Tensor& o = out_arg(out, "logcumsumexp");
        maybe_without_gil(x.numel(), [&] { return &logcumsumexp_out(o, x, dim); });
        return same(out);
      },
      arg("input"), arg("dim"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "logcumsumexp",
      [](const Tensor& x, int64_t dim) {
        return maybe_without_gil(x.numel(), [&] { return logcumsumexp(x, dim); });
      },
      arg("dim"));

  // ---- sorting ----
  m.def(
      "sort",
      [](const Tensor& x, int64_t dim, bool descending, std::optional<bool> stable,
         py::handle out) -> py::object {
        auto r = maybe_without_gil(x.numel(), [&] { return sort(x, stable, dim, descending); });
        return out.is_none() ? pair("sort", std::move(r)) : pair_out("sort", out, std::move(r));
      },
      arg("input"), arg("dim") = -1, arg("descending") = false, py::kw_only(),
      arg("stable") = py::none(), arg("out") = py::none());
  cls.def(
      "sort",
      [](const Tensor& x, int64_t dim, bool descending, std::optional<bool> stable) {
        return pair("sort",
                    maybe_without_gil(x.numel(), [&] { return sort(x, stable, dim, descending); }));
      },
      arg("dim") = -1, arg("descending") = false, py::kw_only(), arg("stable") = py::none());
  m.def(
      "argsort",
      [](const Tensor& x, int64_t dim, bool descending, bool stable) {
        return maybe_without_gil(x.numel(), [&] { return argsort(x, stable, dim, descending); });
      },
      arg("input"), arg("dim") = -1, arg("descending") = false, py::kw_only(),
      arg("stable") = false);
  cls.def(
      "argsort",
      [](const Tensor& x, int64_t dim, bool descending, bool stable) {
        return maybe_without_gil(x.numel(), [&] { return argsort(x, stable, dim, descending); });
      },
      arg("dim") = -1, arg("descending") = false, py::kw_only(), arg("stable") = false);
  m.def(
      "msort",
      [](const Tensor& x, py::handle out) -> py::object {
        Tensor r = maybe_without_gil(x.numel(), [&] { return msort(x); });
        if (out.is_none()) return wrap_obj(std::move(r));
        write_sorted_out(out_arg(out, "msort"), r, "msort", "out");
        return same(out);
      },
      arg("input"), py::kw_only(), arg("out") = py::none());
  cls.def("msort", [](const Tensor& x) { return msort(x); });
  m.def(
      "topk",
      [](const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted,
         py::handle out) -> py::object {
        auto r = maybe_without_gil(x.numel(), [&] { return topk(x, k, dim, largest, sorted); });
        return out.is_none() ? pair("topk", std::move(r)) : pair_out("topk", out, std::move(r));
      },
      arg("input"), arg("k"), arg("dim") = -1, arg("largest") = true, arg("sorted") = true,
      py::kw_only(), arg("out") = py::none());
  cls.def(
      "topk",
      [](const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
        return pair("topk",
                    maybe_without_gil(x.numel(), [&] { return topk(x, k, dim, largest, sorted); }));
      },
      arg("k"), arg("dim") = -1, arg("largest") = true, arg("sorted") = true);
}

}  // namespace ember::python
