// The binding of the remaining torch.linalg functions (vander, vecdot, tensorinv, tensorsolve,
// ldl_factor(_ex), ldl_solve on _C._linalg) and the LAPACK-style legacy functions (geqrf, ormqr,
// lu, lu_solve, symeig, svd_lowrank, pca_lowrank on _C, with their Tensor methods).
#include "ember/linalg_extra.h"
#include "ops/linalg/symeig.h"
#include "pyember.h"

namespace ember::python {
namespace {

using py::arg;

/// Returns `r`, or writes it into the out= tensor and returns that object.
py::object finish(py::handle out, const Tensor& r, const char* op) {
  if (out.is_none()) return wrap_obj(r);
  write_out(const_cast<Tensor&>(to_tensor(out.ptr(), op, "out")), r, op);
  return py::reinterpret_borrow<py::object>(out);
}

/// A named result tuple of ember.return_types when that module defines `type`, else a tuple;
/// with out= the results are written into the given tensors.
py::object finish_tuple(py::handle out, std::vector<Tensor> rs, const char* type, const char* op) {
  py::tuple items(rs.size());
  if (!out.is_none()) {
    EMBER_CHECK_TYPE(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr()), op,
                     "(): argument 'out' must be a tuple of Tensors");
    py::sequence seq = py::reinterpret_borrow<py::sequence>(out);
    EMBER_CHECK_TYPE(seq.size() == rs.size(), op, "(): expected out= to hold ", rs.size(),
                     " tensors, got ", seq.size());
    for (size_t i = 0; i < rs.size(); ++i) {
      write_out(const_cast<Tensor&>(to_tensor(seq[i].ptr(), op, "out")), rs[i], op);
      items[i] = seq[i];
    }
  } else {
    for (size_t i = 0; i < rs.size(); ++i) items[i] = wrap_obj(rs[i]);
  }
  if (type && py::hasattr(py::module_::import("ember.return_types"), type)) {
    return return_type(type, items);
  }
  return items;
}

template <class F>
auto nogil(const Tensor& a, F&& f) {
  return maybe_without_gil(a.numel() * std::max<int64_t>(1, a.dim() ? a.size(-1) : 1), f);
}

std::optional<int64_t> opt_int(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return std::nullopt;
  return to_int(o.ptr(), fn, name);
}

/// torch's low-rank functions check q with a Python assert.
void assert_rank(const Tensor& A, std::optional<int64_t> q) {
  if (!q || A.dim() < 2) return;
  if (*q < 0 || *q > std::min(A.size(-2), A.size(-1))) {
    PyErr_SetString(
        PyExc_AssertionError,
        ("q(=" + std::to_string(*q) + ") must be non-negative and not greater than min(m, n)=" +
         std::to_string(std::min(A.size(-2), A.size(-1))))
            .c_str());
    throw py::error_already_set();
  }
}

py::object lu_result(const Tensor& A, bool pivot, bool get_infos, py::handle out) {
  auto [LU, piv, info] = nogil(A, [&] { return ember::lu(A, pivot, get_infos); });
  if (get_infos) return finish_tuple(out, {LU, piv, info}, nullptr, "lu");
  return finish_tuple(out, {LU, piv}, nullptr, "lu");
}

py::object symeig_result(const Tensor& A, bool eigenvectors, bool upper, py::handle out) {
  PyErr_WarnEx(PyExc_UserWarning,
               "torch.symeig is deprecated in favor of torch.linalg.eigh and will be removed in a "
               "future PyTorch release.",
               1);
  auto [L, V] = nogil(A, [&] { return ember::symeig(A, eigenvectors, upper); });
  return finish_tuple(out, {L, V}, "symeig", "symeig");
}

}  // namespace

void init_linalg_extra(py::module_& m) {
  py::module_ lm = m.attr("_linalg");
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // ---- torch.linalg ----
  lm.def(
      "vander",
      [](const Tensor& x, py::handle N) { return linalg::vander(x, opt_int(N, "vander", "N")); },
      arg("x"), py::kw_only(), arg("N") = py::none());
  lm.def(
      "vecdot",
      [](const Tensor& x, const Tensor& y, int64_t dim, py::handle out) {
        return finish(out, linalg::vecdot(x, y, dim), "linalg.vecdot");
      },
      arg("x"), arg("y"), py::kw_only(), arg("dim") = -1, arg("out") = py::none());
  lm.def(
      "tensorinv",
      [](const Tensor& A, int64_t ind, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::tensorinv(A, ind); }), "linalg.tensorinv");
      },
      arg("A"), arg("ind") = 2, py::kw_only(), arg("out") = py::none());
  lm.def(
      "tensorsolve",
      [](const Tensor& A, const Tensor& B, py::handle dims, py::handle out) {
        Tensor r;
        if (dims.is_none()) {
          r = nogil(A, [&] { return linalg::tensorsolve(A, B); });
        } else {
          DimVector d = to_int_list(dims.ptr(), "linalg.tensorsolve", "dims");
          r = nogil(A, [&] { return linalg::tensorsolve(A, B, IntArrayRef(d)); });
        }
        return finish(out, r, "linalg.tensorsolve");
      },
      arg("A"), arg("B"), arg("dims") = py::none(), py::kw_only(), arg("out") = py::none());
  lm.def(
      "ldl_factor_ex",
      [](const Tensor& A, bool hermitian, bool check_errors, py::handle out) {
        auto [LD, piv, info] =
            nogil(A, [&] { return linalg::ldl_factor_ex(A, hermitian, check_errors); });
        return finish_tuple(out, {LD, piv, info}, "linalg_ldl_factor_ex", "linalg.ldl_factor_ex");
      },
      arg("A"), py::kw_only(), arg("hermitian") = false, arg("check_errors") = false,
      arg("out") = py::none());
  lm.def(
      "ldl_factor",
      [](const Tensor& A, bool hermitian, py::handle out) {
        auto [LD, piv] = nogil(A, [&] { return linalg::ldl_factor(A, hermitian); });
        return finish_tuple(out, {LD, piv}, "linalg_ldl_factor", "linalg.ldl_factor");
      },
      arg("A"), py::kw_only(), arg("hermitian") = false, arg("out") = py::none());
  lm.def(
      "ldl_solve",
      [](const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian, py::handle out) {
        return finish(out, nogil(B, [&] { return linalg::ldl_solve(LD, pivots, B, hermitian); }),
                      "linalg.ldl_solve");
      },
      arg("LD"), arg("pivots"), arg("B"), py::kw_only(), arg("hermitian") = false,
      arg("out") = py::none());

  // ---- top-level LAPACK-style functions ----
  m.def(
      "geqrf",
      [](const Tensor& A, py::handle out) {
        auto [a, tau] = nogil(A, [&] { return ember::geqrf(A); });
        return finish_tuple(out, {a, tau}, "geqrf", "geqrf");
      },
      arg("input"), py::kw_only(), arg("out") = py::none());
  cls.def("geqrf", [](const Tensor& A) {
    auto [a, tau] = nogil(A, [&] { return ember::geqrf(A); });
    return finish_tuple(py::none(), {a, tau}, "geqrf", "geqrf");
  });
  m.def(
      "ormqr",
      [](const Tensor& A, const Tensor& tau, const Tensor& C, bool left, bool transpose,
         py::handle out) {
        return finish(out, nogil(C, [&] { return ember::ormqr(A, tau, C, left, transpose); }),
                      "ormqr");
      },
      arg("input"), arg("input2"), arg("input3"), arg("left") = true, arg("transpose") = false,
      py::kw_only(), arg("out") = py::none());
  cls.def(
      "ormqr",
      [](const Tensor& A, const Tensor& tau, const Tensor& C, bool left, bool transpose) {
        return ember::ormqr(A, tau, C, left, transpose);
      },
      arg("input2"), arg("input3"), arg("left") = true, arg("transpose") = false);
  m.def(
      "lu",
      [](const Tensor& A, bool pivot, bool get_infos, py::handle out) {
        return lu_result(A, pivot, get_infos, out);
      },
      arg("A"), arg("pivot") = true, arg("get_infos") = false, arg("out") = py::none());
  cls.def(
      "lu",
      [](const Tensor& A, bool pivot, bool get_infos) {
        return lu_result(A, pivot, get_infos, py::none());
      },
      arg("pivot") = true, arg("get_infos") = false);
  m.def(
      "lu_solve",
      [](const Tensor& b, const Tensor& LU, const Tensor& piv, py::handle out) {
        return finish(out, nogil(LU, [&] { return ember::lu_solve(b, LU, piv); }), "lu_solve");
      },
      arg("input"), arg("LU_data"), arg("LU_pivots"), py::kw_only(), arg("out") = py::none());
  cls.def(
      "lu_solve",
      [](const Tensor& b, const Tensor& LU, const Tensor& piv) {
        return ember::lu_solve(b, LU, piv);
      },
      arg("LU_data"), arg("LU_pivots"));
  m.def(
      "symeig",
      [](const Tensor& A, bool eigenvectors, bool upper, py::handle out) {
        return symeig_result(A, eigenvectors, upper, out);
      },
      arg("input"), arg("eigenvectors") = false, arg("upper") = true, py::kw_only(),
      arg("out") = py::none());
  cls.def(
      "symeig",
      [](const Tensor& A, bool eigenvectors, bool upper) {
        return symeig_result(A, eigenvectors, upper, py::none());
      },
      arg("eigenvectors") = false, arg("upper") = true);
  m.def(
      "svd_lowrank",
      [](const Tensor& A, py::handle q, py::handle niter, py::handle M) {
        const std::optional<int64_t> qq = opt_int(q, "svd_lowrank", "q");
        assert_rank(A, qq.value_or(6));
        Tensor Mt = M.is_none() ? Tensor() : to_tensor(M.ptr(), "svd_lowrank", "M");
        auto [U, S, V] = ember::svd_lowrank(A, qq, opt_int(niter, "svd_lowrank", "niter"), Mt);
        return py::make_tuple(wrap_obj(U), wrap_obj(S), wrap_obj(V));
      },
      arg("A"), arg("q") = 6, arg("niter") = 2, arg("M") = py::none());
  m.def(
      "pca_lowrank",
      [](const Tensor& A, py::handle q, bool center, int64_t niter) {
        auto [U, S, V] = ember::pca_lowrank(A, opt_int(q, "pca_lowrank", "q"), center, niter);
        return py::make_tuple(wrap_obj(U), wrap_obj(S), wrap_obj(V));
      },
      arg("A"), arg("q") = py::none(), arg("center") = true, arg("niter") = 2);
}

}  // namespace ember::python
