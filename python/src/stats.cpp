// The binding of statistics, distances, histograms, sets and calculus (include/ember/stats.h).
#include "ember/stats.h"

#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

const char* py_type_name(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }

std::optional<Tensor> opt_tensor(py::handle h, const char* fn, const char* name) {
  if (h.is_none()) return std::nullopt;
  return to_tensor(h.ptr(), fn, name);
}

/// A Python range (a sequence of numbers) as doubles, or nullopt for None.
std::optional<std::vector<double>> to_range(py::handle h, const char* fn) {
  if (h.is_none()) return std::nullopt;
  EMBER_CHECK_TYPE(PySequence_Check(h.ptr()) && !is_tensor(h.ptr()), fn,
                   "(): argument 'range' must be a sequence of floats, not ", py_type_name(h));
  std::vector<double> r;
  for (py::handle v : py::reinterpret_borrow<py::sequence>(h))
    r.push_back(to_double(v.ptr(), fn, "range"));
  return r;
}

std::optional<int64_t> to_compute_mode(py::handle h) {
  if (h.is_none()) return std::nullopt;
  EMBER_CHECK_VALUE(PyUnicode_Check(h.ptr()), py::str(h).cast<std::string>(),
                    " is not a valid value for compute_mode");
  return int64_t(cdist_mode_from_string(h.cast<std::string>()));
}

py::object hist_result(const char* name, const Tensor& hist, py::object edges) {
  static py::object* mod = new py::object(py::module_::import("ember.return_types"));
  py::tuple items = py::make_tuple(wrap_obj(hist), std::move(edges));
  if (py::hasattr(*mod, name)) return return_type(name, items);
  return items;
}

py::object histogram_call(const Tensor& x, py::handle bins, py::handle range, py::handle weight,
                          bool density) {
  const char* fn = "histogram";
  const std::optional<Tensor> w = opt_tensor(weight, fn, "weight");
  std::tuple<Tensor, Tensor> r;
  if (is_tensor(bins.ptr())) {
    EMBER_CHECK_TYPE(range.is_none(), fn,
                     "(): argument 'range' is not accepted together with a bins tensor");
    const Tensor& b = unwrap(bins.ptr());
    r = maybe_without_gil(x.numel(), [&] { return histogram(x, b, w, density); });
  } else {
    EMBER_CHECK_TYPE(PyLong_Check(bins.ptr()) && !PyBool_Check(bins.ptr()), fn,
                     "(): argument 'bins' must be int or Tensor, not ", py_type_name(bins));
    const int64_t n = to_int(bins.ptr(), fn, "bins");
    auto rg = to_range(range, fn);
    r = maybe_without_gil(x.numel(), [&] { return histogram(x, n, rg, w, density); });
  }
  return hist_result("histogram", std::get<0>(r), wrap_obj(std::get<1>(r)));
}

py::object histogramdd_call(const Tensor& x, py::handle bins, py::handle range, py::handle weight,
                            bool density) {
  const char* fn = "histogramdd";
  const std::optional<Tensor> w = opt_tensor(weight, fn, "weight");
  std::tuple<Tensor, std::vector<Tensor>> r;
  bool tensors = false;
  if (PySequence_Check(bins.ptr()) && !is_tensor(bins.ptr())) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(bins);
    tensors = py::len(s) > 0 && is_tensor(s[0].ptr());
  }
  if (tensors) {
    EMBER_CHECK_TYPE(range.is_none(), fn,
                     "(): argument 'range' is not accepted together with bins tensors");
    std::vector<Tensor> b;
    for (py::handle v : py::reinterpret_borrow<py::sequence>(bins))
      b.push_back(to_tensor(v.ptr(), fn, "bins"));
    r = histogramdd(x, b, w, density);
  } else {
    DimVector b = PyLong_Check(bins.ptr()) ? DimVector{to_int(bins.ptr(), fn, "bins")}
                                           : to_int_list(bins.ptr(), fn, "bins");
    r = histogramdd(x, b, to_range(range, fn), w, density);
  }
  py::tuple edges(std::get<1>(r).size());
  for (size_t i = 0; i < std::get<1>(r).size(); ++i) edges[i] = wrap_obj(std::get<1>(r)[i]);
  return hist_result("histogramdd", std::get<0>(r), std::move(edges));
}

py::object isin_call(py::handle elements, py::handle test, bool assume_unique, bool invert) {
  const char* fn = "isin";
  const bool et = is_tensor(elements.ptr()), tt = is_tensor(test.ptr());
  if (et && tt)
    return wrap_obj(isin(unwrap(elements.ptr()), unwrap(test.ptr()), assume_unique, invert));
  if (et)
    return wrap_obj(isin(unwrap(elements.ptr()), to_scalar(test.ptr(), fn, "test_elements"),
                         assume_unique, invert));
  EMBER_CHECK_TYPE(tt, fn, "(): expected elements or test_elements to be a Tensor, got ",
                   py_type_name(elements), " and ", py_type_name(test));
  return wrap_obj(
      isin(to_scalar(elements.ptr(), fn, "elements"), unwrap(test.ptr()), assume_unique, invert));
}

/// trapezoid / cumulative_trapezoid / trapz: a sample-point tensor x or a spacing dx, not both.
template <class FX, class FD>
Tensor trapz_call(const char* fn, const Tensor& y, py::handle x, py::handle dx, int64_t dim,
                  FX with_x, FD with_dx) {
  if (!x.is_none()) {
    EMBER_CHECK_TYPE(dx.is_none(), fn,
                     "() received an invalid combination of arguments: x and dx are exclusive");
    EMBER_CHECK_TYPE(is_tensor(x.ptr()), fn, "(): argument 'x' must be Tensor, not ",
                     py_type_name(x));
    return with_x(y, unwrap(x.ptr()), dim);
  }
  const Scalar d = dx.is_none() ? Scalar(1) : to_scalar(dx.ptr(), fn, "dx");
  return with_dx(y, d, dim);
}

py::tuple gradient_call(const Tensor& x, py::handle spacing, py::handle dim, int64_t edge_order) {
  const char* fn = "gradient";
  std::optional<DimVector> dims;
  if (!dim.is_none())
    dims = PyLong_Check(dim.ptr()) ? DimVector{to_int(dim.ptr(), fn, "dim")}
                                   : to_int_list(dim.ptr(), fn, "dim");
  OptionalIntArrayRef od;
  if (dims) od = IntArrayRef(*dims);
  std::vector<Tensor> r;
  if (spacing.is_none()) {
    r = gradient(x, ArrayRef<Scalar>(), od, edge_order);
  } else if (is_tensor(spacing.ptr()) && unwrap(spacing.ptr()).dim() > 0) {
    // One coordinate tensor.
    const Tensor& c = unwrap(spacing.ptr());
    r = gradient(x, ArrayRef<Tensor>(&c, 1), od, edge_order);
  } else if (is_tensor(spacing.ptr()) || !PySequence_Check(spacing.ptr())) {
    // One number (or a 0-dim tensor) for every dim.
    Scalar s = to_scalar(spacing.ptr(), fn, "spacing");
    r = gradient(x, ArrayRef<Scalar>(&s, 1), od, edge_order);
  } else {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(spacing);
    const bool tensors =
        py::len(seq) > 0 && is_tensor(seq[0].ptr()) && unwrap(seq[0].ptr()).dim() > 0;
    if (tensors) {
      std::vector<Tensor> c;
      for (py::handle v : seq) c.push_back(to_tensor(v.ptr(), fn, "spacing"));
      r = gradient(x, ArrayRef<Tensor>(c), od, edge_order);
    } else {
      std::vector<Scalar> s;
      for (py::handle v : seq) s.push_back(to_scalar(v.ptr(), fn, "spacing"));
      r = gradient(x, ArrayRef<Scalar>(s), od, edge_order);
    }
  }
  py::tuple t(r.size());
  for (size_t i = 0; i < r.size(); ++i) t[i] = wrap_obj(std::move(r[i]));
  return t;
}

}  // namespace

void init_stats(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // ---- covariance ----
  auto cov_fn = [](const Tensor& x, int64_t correction, py::handle fw, py::handle aw) {
    return cov(x, correction, opt_tensor(fw, "cov", "fweights"), opt_tensor(aw, "cov", "aweights"));
  };
  m.def("cov", cov_fn, arg("input"), py::kw_only(), arg("correction") = 1,
        arg("fweights") = py::none(), arg("aweights") = py::none());
  cls.def("cov", cov_fn, py::kw_only(), arg("correction") = 1, arg("fweights") = py::none(),
          arg("aweights") = py::none());
  m.def(
      "corrcoef", [](const Tensor& x) { return corrcoef(x); }, arg("input"));
  cls.def("corrcoef", [](const Tensor& x) { return corrcoef(x); });

  // ---- distances ----
  m.def(
      "cdist",
      [](const Tensor& x1, const Tensor& x2, double p, py::handle mode) {
        const auto cm = to_compute_mode(mode);
        const int64_t work = x1.numel() * (x2.dim() >= 2 ? x2.size(-2) : 1);
        return maybe_without_gil(work, [&] { return cdist(x1, x2, p, cm); });
      },
      arg("x1"), arg("x2"), arg("p") = 2.0,
      arg("compute_mode") = "use_mm_for_euclid_dist_if_necessary");
  m.def(
      "_cdist_forward",
      [](const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> mode) {
        return _cdist_forward(x1, x2, p, mode);
      },
      arg("x1"), arg("x2"), arg("p"), arg("compute_mode") = py::none());
  auto pdist_fn = [](const Tensor& x, double p) { return pdist(x, p); };
  m.def("pdist", pdist_fn, arg("input"), arg("p") = 2.0);

  // ---- histograms ----
  m.def("histogram", histogram_call, arg("input"), arg("bins") = 100, py::kw_only(),
        arg("range") = py::none(), arg("weight") = py::none(), arg("density") = false);
  cls.def("histogram", histogram_call, arg("bins") = 100, py::kw_only(), arg("range") = py::none(),
          arg("weight") = py::none(), arg("density") = false);
  m.def("histogramdd", histogramdd_call, arg("input"), arg("bins") = 10, py::kw_only(),
        arg("range") = py::none(), arg("weight") = py::none(), arg("density") = false);

  // ---- set membership ----
  m.def("isin", isin_call, arg("elements"), arg("test_elements"), py::kw_only(),
        arg("assume_unique") = false, arg("invert") = false);

  // ---- calculus ----
  m.def(
      "trapezoid",
      [](const Tensor& y, py::handle x, py::handle dx, int64_t dim) {
        return trapz_call(
            "trapezoid", y, x, dx, dim,
            [](const Tensor& a, const Tensor& b, int64_t d) { return trapezoid(a, b, d); },
            [](const Tensor& a, const Scalar& s, int64_t d) { return trapezoid(a, s, d); });
      },
      arg("y"), arg("x") = py::none(), py::kw_only(), arg("dx") = py::none(), arg("dim") = -1);
  m.def(
      "trapz",
      [](const Tensor& y, py::handle x, py::handle dx, int64_t dim) {
        return trapz_call(
            "trapz", y, x, dx, dim,
            [](const Tensor& a, const Tensor& b, int64_t d) { return trapz(a, b, d); },
            [](const Tensor& a, const Scalar& s, int64_t d) { return trapz(a, s.toDouble(), d); });
      },
      arg("y"), arg("x") = py::none(), py::kw_only(), arg("dx") = py::none(), arg("dim") = -1);
  m.def(
      "cumulative_trapezoid",
      [](const Tensor& y, py::handle x, py::handle dx, int64_t dim) {
        return trapz_call(
            "cumulative_trapezoid", y, x, dx, dim,
            [](const Tensor& a, const Tensor& b, int64_t d) {
              return cumulative_trapezoid(a, b, d);
            },
            [](const Tensor& a, const Scalar& s, int64_t d) {
              return cumulative_trapezoid(a, s, d);
            });
      },
      arg("y"), arg("x") = py::none(), py::kw_only(), arg("dx") = py::none(), arg("dim") = -1);
  m.def("gradient", gradient_call, arg("input"), py::kw_only(), arg("spacing") = py::none(),
        arg("dim") = py::none(), arg("edge_order") = 1);
}

}  // namespace ember::python
