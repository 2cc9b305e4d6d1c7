// kthvalue, median/nanmedian, mode, quantile/nanquantile.
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

Tensor& out_arg(py::handle out, const char* fn) {
  return const_cast<Tensor&>(to_tensor(out.ptr(), fn, "out"));
}

/// A (values, indices) pair as ember.return_types.<name>.
py::object pair(const char* name, std::tuple<Tensor, Tensor> r) {
  return return_type(name, py::make_tuple(wrap_obj(std::move(std::get<0>(r))),
                                          wrap_obj(std::move(std::get<1>(r)))));
}

/// The pair, or written into an out=(values, indices) tuple whose dtypes must match.
py::object pair_or_out(const char* name, py::handle out, std::tuple<Tensor, Tensor> r) {
  if (out.is_none()) return pair(name, std::move(r));
  EMBER_CHECK_TYPE(PyTuple_Check(out.ptr()) && PyTuple_GET_SIZE(out.ptr()) == 2, name,
                   "(): argument 'out' must be a tuple of 2 Tensors");
  py::tuple t = py::reinterpret_borrow<py::tuple>(out);
  for (int i = 0; i < 2; ++i) {
    Tensor& o = out_arg(t[i], name);
    const Tensor& v = i == 0 ? std::get<0>(r) : std::get<1>(r);
    EMBER_CHECK(o.dtype() == v.dtype(), "[", name, "] expected out[", i, "] dtype ",
                dtype_name(v.dtype()), ", got ", dtype_name(o.dtype()));
    write_out(o, v, name);
  }
  return return_type(name, py::make_tuple(t[0], t[1]));
}

/// median/nanmedian: no dim gives the value of all elements; a dim gives (values, indices).
py::object median_call(bool nan, const Tensor& x, py::handle dim, py::handle keepdim,
                       py::handle out) {
  const char* name = nan ? "nanmedian" : "median";
  if (dim.is_none()) {
    EMBER_CHECK_TYPE(keepdim.is_none() && out.is_none(), name,
                     "(): keepdim and out are only accepted together with dim");
    return wrap_obj(maybe_without_gil(x.numel(), [&] { return nan ? nanmedian(x) : median(x); }));
  }
  const int64_t d = to_int(dim.ptr(), name, "dim");
  const bool k = keepdim.is_none() ? false : to_bool(keepdim.ptr(), name, "keepdim");
  auto r = maybe_without_gil(x.numel(), [&] { return nan ? nanmedian(x, d, k) : median(x, d, k); });
  return pair_or_out(name, out, std::move(r));
}

/// quantile/nanquantile with q a number or a tensor; out= must have the input's dtype.
py::object quantile_call(bool nan, const Tensor& x, py::handle q, py::handle dim, bool keepdim,
                         const std::string& interpolation, py::handle out) {
  const char* name = nan ? "nanquantile" : "quantile";
  std::optional<int64_t> d;
  if (!dim.is_none()) d = to_int(dim.ptr(), name, "dim");
  Tensor r;
  if (is_tensor(q.ptr())) {
    const Tensor& qt = unwrap(q.ptr());
    r = maybe_without_gil(x.numel(), [&] {
      return nan ? nanquantile(x, qt, d, keepdim, interpolation)
                 : quantile(x, qt, d, keepdim, interpolation);
    });
  } else {
    EMBER_CHECK_TYPE(PyFloat_Check(q.ptr()) || PyLong_Check(q.ptr()) || is_scalar(q.ptr()), name,
                     "(): argument 'q' must be a float or a Tensor, not ",
                     Py_TYPE(q.ptr())->tp_name);
    const double qv = to_double(q.ptr(), name, "q");
    r = maybe_without_gil(x.numel(), [&] {
      return nan ? nanquantile(x, qv, d, keepdim, interpolation)
                 : quantile(x, qv, d, keepdim, interpolation);
    });
  }
  if (out.is_none()) return wrap_obj(std::move(r));
  Tensor& o = out_arg(out, name);
  EMBER_CHECK(o.dtype() == x.dtype(), "[", name,
              "] out tensor must be same dtype as the input "
              "tensor, got out ",
              dtype_name(o.dtype()), " and input ", dtype_name(x.dtype()));
  write_out(o, r, name);
  return py::reinterpret_borrow<py::object>(out);
}

}  // namespace

void init_order_stats(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  m.def(
      "kthvalue",
      [](const Tensor& x, int64_t k, int64_t dim, bool keepdim, py::handle out) {
        auto r = maybe_without_gil(x.numel(), [&] { return kthvalue(x, k, dim, keepdim); });
        return pair_or_out("kthvalue", out, std::move(r));
      },
      arg("input"), arg("k"), arg("dim") = -1, arg("keepdim") = false, py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "kthvalue",
      [](const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
        return pair("kthvalue",
                    maybe_without_gil(x.numel(), [&] { return kthvalue(x, k, dim, keepdim); }));
      },
      arg("k"), arg("dim") = -1, arg("keepdim") = false);

  for (bool nan : {false, true}) {
    const char* name = nan ? "nanmedian" : "median";
    m.def(
        name,
        [nan](const Tensor& x, py::handle dim, py::handle keepdim, py::handle out) {
          return median_call(nan, x, dim, keepdim, out);
        },
        arg("input"), arg("dim") = py::none(), arg("keepdim") = py::none(), py::kw_only(),
        arg("out") = py::none());
    cls.def(
        name,
        [nan](const Tensor& x, py::handle dim, py::handle keepdim) {
          return median_call(nan, x, dim, keepdim, py::none());
        },
        arg("dim") = py::none(), arg("keepdim") = py::none());
  }

  m.def(
      "mode",
      [](const Tensor& x, int64_t dim, bool keepdim, py::handle out) {
        auto r = maybe_without_gil(x.numel(), [&] { return mode(x, dim, keepdim); });
        return pair_or_out("mode", out, std::move(r));
      },
      arg("input"), arg("dim") = -1, arg("keepdim") = false, py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "mode",
      [](const Tensor& x, int64_t dim, bool keepdim) {
        return pair("mode", maybe_without_gil(x.numel(), [&] { return mode(x, dim, keepdim); }));
      },
      arg("dim") = -1, arg("keepdim") = false);

  for (bool nan : {false, true}) {
    const char* name = nan ? "nanquantile" : "quantile";
    m.def(
        name,
        [nan](const Tensor& x, py::handle q, py::handle dim, bool keepdim,
              const std::string& interpolation, py::handle out) {
          return quantile_call(nan, x, q, dim, keepdim, interpolation, out);
        },
        arg("input"), arg("q"), arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(),
        arg("interpolation") = "linear", arg("out") = py::none());
    cls.def(
        name,
        [nan](const Tensor& x, py::handle q, py::handle dim, bool keepdim,
              const std::string& interpolation) {
          return quantile_call(nan, x, q, dim, keepdim, interpolation, py::none());
        },
        arg("q"), arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(),
        arg("interpolation") = "linear");
  }
}

}  // namespace ember::python
