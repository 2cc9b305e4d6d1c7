// ember.linalg (the _C._linalg submodule) and the legacy top-level linear-algebra functions
// (det, inverse, logdet, slogdet, cholesky, qr, svd, pinverse, matrix_power, matrix_exp,
// lu_unpack, cholesky_solve, cholesky_inverse, triangular_solve) with their Tensor methods.
#include <cmath>

#include "core/tensor_util.h"
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

/// A named result tuple, or the results written into the out= tuple (returned as given).
py::object finish_tuple(py::handle out, std::vector<Tensor> rs, const char* type, const char* op) {
  if (!out.is_none()) {
    EMBER_CHECK_TYPE(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr()), op,
                     "(): argument 'out' must be a tuple of Tensors");
    py::sequence seq = py::reinterpret_borrow<py::sequence>(out);
    EMBER_CHECK_TYPE(seq.size() == rs.size(), op, "(): expected out= to hold ", rs.size(),
                     " tensors, got ", seq.size());
    py::tuple items(rs.size());
    for (size_t i = 0; i < rs.size(); ++i) {
      Tensor& o = const_cast<Tensor&>(to_tensor(seq[i].ptr(), op, "out"));
      write_out(o, rs[i], op);
      items[i] = seq[i];
    }
    return return_type(type, items);
  }
  py::tuple items(rs.size());
  for (size_t i = 0; i < rs.size(); ++i) items[i] = wrap_obj(rs[i]);
  return return_type(type, items);
}

/// Runs `f` without the GIL for matrices with more than a few elements.
template <class F>
auto nogil(const Tensor& a, F&& f) {
  return maybe_without_gil(a.numel() * std::max<int64_t>(1, a.dim() ? a.size(-1) : 1), f);
}

/// Whether a tolerance argument is a tensor with dims (broadcast against the batch).
bool is_batched_tol(py::handle o) { return is_tensor(o.ptr()) && unwrap(o.ptr()).dim() > 0; }

/// A tolerance argument as a tensor (None stays empty).
std::optional<Tensor> to_tol_tensor(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return std::nullopt;
  if (is_tensor(o.ptr())) return unwrap(o.ptr());
  EMBER_CHECK_TYPE(!PyComplex_Check(o.ptr()), fn, "(): ", name, " must be a real number");
  return full({}, to_double(o.ptr(), fn, name), TensorOptions(kDouble));
}

/// A tolerance argument: None, a number or a 0-dim tensor.
std::optional<double> to_tol(py::handle o, const char* fn, const char* name) {
  if (o.is_none()) return std::nullopt;
  if (is_tensor(o.ptr())) {
    const Tensor& t = unwrap(o.ptr());
    EMBER_CHECK(t.numel() == 1, "[", fn, "] ", name,
                " must be a number or a one-element tensor, "
                "got shape ",
                shape_str(t.sizes()));
    EMBER_CHECK(!t.is_complex(), "[", fn, "] ", name, " tensor of complex type is not supported.");
    return t.item<double>();
  }
  EMBER_CHECK_TYPE(!PyComplex_Check(o.ptr()), fn, "(): ", name, " must be a real number");
  return to_double(o.ptr(), fn, name);
}

/// A dim argument: None, an int, or a sequence of ints.
std::optional<std::vector<int64_t>> to_dims(py::handle o, const char* fn) {
  if (o.is_none()) return std::nullopt;
  if (PyLong_Check(o.ptr()) && !PyBool_Check(o.ptr())) {
    return std::vector<int64_t>{to_int(o.ptr(), fn, "dim")};
  }
  DimVector d = to_int_list(o.ptr(), fn, "dim");
  return std::vector<int64_t>(d.begin(), d.end());
}

/// ord as a number (string ords return false and fill `s`).
bool numeric_ord(py::handle o, double& d, std::string& s, const char* fn) {
  if (PyUnicode_Check(o.ptr())) {
    s = o.cast<std::string>();
    return false;
  }
  EMBER_CHECK_TYPE(!PyComplex_Check(o.ptr()), fn, "(): ord must be a real number or a string");
  d = to_double(o.ptr(), fn, "ord");
  return true;
}

std::optional<ScalarType> opt_dtype(py::handle o, const char* fn) {
  return o.is_none() ? std::nullopt : to_dtype(o.ptr(), fn);
}

}  // namespace

void init_linalg(py::module_& m) {
  py::module_ lm = m.attr("_linalg");  // created first in module.cpp
  py::register_exception<LinAlgError>(lm, "LinAlgError", PyExc_RuntimeError);
  lm.attr("LinAlgError").attr("__module__") = "ember.linalg";
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));

  // ---- inverses and solvers ----
  lm.def(
      "inv",
      [](const Tensor& A, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::inv(A); }), "linalg.inv");
      },
      arg("A"), py::kw_only(), arg("out") = py::none());
  lm.def(
      "inv_ex",
      [](const Tensor& A, bool check, py::handle out) {
        auto [X, info] = nogil(A, [&] { return linalg::inv_ex(A, check); });
        return finish_tuple(out, {X, info}, "linalg_inv_ex", "linalg.inv_ex");
      },
      arg("A"), py::kw_only(), arg("check_errors") = false, arg("out") = py::none());
  lm.def(
      "solve",
      [](const Tensor& A, const Tensor& B, bool left, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::solve(A, B, left); }), "linalg.solve");
      },
      arg("A"), arg("B"), py::kw_only(), arg("left") = true, arg("out") = py::none());
  lm.def(
      "solve_ex",
      [](const Tensor& A, const Tensor& B, bool left, bool check, py::handle out) {
        auto [X, info] = nogil(A, [&] { return linalg::solve_ex(A, B, left, check); });
        return finish_tuple(out, {X, info}, "linalg_solve_ex", "linalg.solve_ex");
      },
      arg("A"), arg("B"), py::kw_only(), arg("left") = true, arg("check_errors") = false,
      arg("out") = py::none());
  lm.def(
      "solve_triangular",
      [](const Tensor& A, const Tensor& B, bool upper, bool left, bool unit, py::handle out) {
        return finish(out,
                      nogil(A, [&] { return linalg::solve_triangular(A, B, upper, left, unit); }),
                      "linalg.solve_triangular");
      },
      arg("A"), arg("B"), py::kw_only(), arg("upper"), arg("left") = true,
      arg("unitriangular") = false, arg("out") = py::none());
  lm.def(
      "lu_solve",
      [](const Tensor& LU, const Tensor& piv, const Tensor& B, bool left, bool adjoint,
         py::handle out) {
        return finish(out, nogil(LU, [&] { return linalg::lu_solve(LU, piv, B, left, adjoint); }),
                      "linalg.lu_solve");
      },
      arg("LU"), arg("pivots"), arg("B"), py::kw_only(), arg("left") = true, arg("adjoint") = false,
      arg("out") = py::none());
  lm.def(
      "lstsq",
      [](const Tensor& A, const Tensor& B, py::handle rcond, py::handle driver) {
        std::optional<std::string> drv;
        if (!driver.is_none()) drv = to_string(driver.ptr(), "linalg.lstsq", "driver");
        const std::optional<double> rc = to_tol(rcond, "linalg.lstsq", "rcond");
        auto [X, res, rank, sv] = nogil(A, [&] {
          return linalg::lstsq(A, B, rc,
                               drv ? std::optional<std::string_view>(*drv) : std::nullopt);
        });
        return finish_tuple(py::none(), {X, res, rank, sv}, "linalg_lstsq", "linalg.lstsq");
      },
      arg("A"), arg("B"), arg("rcond") = py::none(), py::kw_only(), arg("driver") = py::none());

  // ---- factorizations ----
  lm.def(
      "cholesky",
      [](const Tensor& A, bool upper, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::cholesky(A, upper); }), "linalg.cholesky");
      },
      arg("A"), py::kw_only(), arg("upper") = false, arg("out") = py::none());
  lm.def(
      "cholesky_ex",
      [](const Tensor& A, bool upper, bool check, py::handle out) {
        auto [L, info] = nogil(A, [&] { return linalg::cholesky_ex(A, upper, check); });
        return finish_tuple(out, {L, info}, "linalg_cholesky_ex", "linalg.cholesky_ex");
      },
      arg("A"), py::kw_only(), arg("upper") = false, arg("check_errors") = false,
      arg("out") = py::none());
  lm.def(
      "qr",
      [](const Tensor& A, std::string mode, py::handle out) {
        auto [Q, R] = nogil(A, [&] { return linalg::qr(A, mode); });
        return finish_tuple(out, {Q, R}, "linalg_qr", "linalg.qr");
      },
      arg("A"), arg("mode") = "reduced", py::kw_only(), arg("out") = py::none());
  lm.def(
      "lu_factor",
      [](const Tensor& A, bool pivot, py::handle out) {
        auto [LU, piv] = nogil(A, [&] { return linalg::lu_factor(A, pivot); });
        return finish_tuple(out, {LU, piv}, "linalg_lu_factor", "linalg.lu_factor");
      },
      arg("A"), py::kw_only(), arg("pivot") = true, arg("out") = py::none());
  lm.def(
      "lu_factor_ex",
      [](const Tensor& A, bool pivot, bool check, py::handle out) {
        auto [LU, piv, info] = nogil(A, [&] { return linalg::lu_factor_ex(A, pivot, check); });
        return finish_tuple(out, {LU, piv, info}, "linalg_lu_factor_ex", "linalg.lu_factor_ex");
      },
      arg("A"), py::kw_only(), arg("pivot") = true, arg("check_errors") = false,
      arg("out") = py::none());
  lm.def(
      "lu",
      [](const Tensor& A, bool pivot, py::handle out) {
        auto [P, L, U] = nogil(A, [&] { return linalg::lu(A, pivot); });
        return finish_tuple(out, {P, L, U}, "linalg_lu", "linalg.lu");
      },
      arg("A"), py::kw_only(), arg("pivot") = true, arg("out") = py::none());
  lm.def(
      "householder_product",
      [](const Tensor& A, const Tensor& tau, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::householder_product(A, tau); }),
                      "linalg.householder_product");
      },
      arg("A"), arg("tau"), py::kw_only(), arg("out") = py::none());

  // ---- spectral ----
  lm.def(
      "svd",
      [](const Tensor& A, bool full, py::handle driver, py::handle out) {
        EMBER_CHECK(driver.is_none(),
                    "[linalg.svd] keyword argument `driver=` is only supported on "
                    "CUDA inputs with cuSOLVER backend.");
        auto [U, S, Vh] = nogil(A, [&] { return linalg::svd(A, full); });
        return finish_tuple(out, {U, S, Vh}, "linalg_svd", "linalg.svd");
      },
      arg("A"), arg("full_matrices") = true, py::kw_only(), arg("driver") = py::none(),
      arg("out") = py::none());
  lm.def(
      "svdvals",
      [](const Tensor& A, py::handle driver, py::handle out) {
        EMBER_CHECK(driver.is_none(),
                    "[linalg.svdvals] keyword argument `driver=` is only supported "
                    "on CUDA inputs with cuSOLVER backend.");
        return finish(out, nogil(A, [&] { return linalg::svdvals(A); }), "linalg.svdvals");
      },
      arg("A"), py::kw_only(), arg("driver") = py::none(), arg("out") = py::none());
  lm.def(
      "eigh",
      [](const Tensor& A, std::string uplo, py::handle out) {
        auto [w, V] = nogil(A, [&] { return linalg::eigh(A, uplo); });
        return finish_tuple(out, {w, V}, "linalg_eigh", "linalg.eigh");
      },
      arg("A"), arg("UPLO") = "L", py::kw_only(), arg("out") = py::none());
  lm.def(
      "eigvalsh",
      [](const Tensor& A, std::string uplo, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::eigvalsh(A, uplo); }), "linalg.eigvalsh");
      },
      arg("A"), arg("UPLO") = "L", py::kw_only(), arg("out") = py::none());
  lm.def(
      "eig",
      [](const Tensor& A, py::handle out) {
        auto [w, V] = nogil(A, [&] { return linalg::eig(A); });
        return finish_tuple(out, {w, V}, "linalg_eig", "linalg.eig");
      },
      arg("A"), py::kw_only(), arg("out") = py::none());
  lm.def(
      "eigvals",
      [](const Tensor& A, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::eigvals(A); }), "linalg.eigvals");
      },
      arg("A"), py::kw_only(), arg("out") = py::none());

  // ---- functions of matrices ----
  lm.def(
      "det",
      [](const Tensor& A, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::det(A); }), "linalg.det");
      },
      arg("A"), py::kw_only(), arg("out") = py::none());
  lm.def(
      "slogdet",
      [](const Tensor& A, py::handle out) {
        auto [s, l] = nogil(A, [&] { return linalg::slogdet(A); });
        return finish_tuple(out, {s, l}, "linalg_slogdet", "linalg.slogdet");
      },
      arg("A"), py::kw_only(), arg("out") = py::none());
  lm.def(
      "pinv",
      [](const Tensor& A, py::handle rcond, bool hermitian, py::handle atol, py::handle rtol,
         py::handle out) {
        const char* fn = "linalg.pinv";
        if (rcond.is_none() && (is_batched_tol(atol) || is_batched_tol(rtol))) {
          auto at = to_tol_tensor(atol, fn, "atol"), rt = to_tol_tensor(rtol, fn, "rtol");
          return finish(out, nogil(A, [&] { return linalg::pinv(A, at, rt, hermitian); }), fn);
        }
        std::optional<double> at = to_tol(atol, fn, "atol"), rt = to_tol(rtol, fn, "rtol");
        if (!rcond.is_none()) {
          EMBER_CHECK(!at && !rt, "[", fn, "] rcond cannot be combined with atol or rtol");
          at = 0.0;
          rt = to_tol(rcond, fn, "rcond");
        }
        return finish(out, nogil(A, [&] { return linalg::pinv(A, at, rt, hermitian); }), fn);
      },
      arg("A"), arg("rcond") = py::none(), arg("hermitian") = false, py::kw_only(),
      arg("atol") = py::none(), arg("rtol") = py::none(), arg("out") = py::none());
  lm.def(
      "matrix_rank",
      [](const Tensor& A, py::handle tol, bool hermitian, py::handle atol, py::handle rtol,
         py::handle out) {
        const char* fn = "linalg.matrix_rank";
        if (tol.is_none() && (is_batched_tol(atol) || is_batched_tol(rtol))) {
          auto at = to_tol_tensor(atol, fn, "atol"), rt = to_tol_tensor(rtol, fn, "rtol");
          return finish(out, nogil(A, [&] { return linalg::matrix_rank(A, at, rt, hermitian); }),
                        fn);
        }
        std::optional<double> at = to_tol(atol, fn, "atol"), rt = to_tol(rtol, fn, "rtol");
        if (!tol.is_none()) {
          EMBER_CHECK(!at && !rt, "[", fn, "] tol cannot be combined with atol or rtol");
          at = to_tol(tol, fn, "tol");
          rt = 0.0;
        }
        return finish(out, nogil(A, [&] { return linalg::matrix_rank(A, at, rt, hermitian); }), fn);
      },
      arg("A"), arg("tol") = py::none(), arg("hermitian") = false, py::kw_only(),
      arg("atol") = py::none(), arg("rtol") = py::none(), arg("out") = py::none());
  lm.def(
      "matrix_power",
      [](const Tensor& A, int64_t n, py::handle out) {
        return finish(out, nogil(A, [&] { return linalg::matrix_power(A, n); }),
                      "linalg.matrix_power");
      },
      arg("A"), arg("n"), py::kw_only(), arg("out") = py::none());
  lm.def(
      "matrix_exp",
      [](const Tensor& A) { return wrap_obj(nogil(A, [&] { return linalg::matrix_exp(A); })); },
      arg("A"));
  lm.def(
      "matrix_norm",
      [](const Tensor& A, py::handle ord, py::handle dim, bool keepdim, py::handle dtype,
         py::handle out) {
        const char* fn = "linalg.matrix_norm";
        std::optional<std::vector<int64_t>> d = to_dims(dim, fn);
        const std::vector<int64_t> dims = d ? *d : std::vector<int64_t>{-2, -1};
        const std::optional<ScalarType> dt = opt_dtype(dtype, fn);
        double o = 0;
        std::string s;
        const bool numeric = numeric_ord(ord, o, s, fn);
        Tensor r = nogil(A, [&] {
          return numeric ? linalg::matrix_norm(A, o, dims, keepdim, dt)
                         : linalg::matrix_norm(A, s, dims, keepdim, dt);
        });
        return finish(out, r, fn);
      },
      arg("A"), arg("ord") = "fro", arg("dim") = py::make_tuple(-2, -1), arg("keepdim") = false,
      py::kw_only(), arg("dtype") = py::none(), arg("out") = py::none());
  lm.def(
      "norm",
      [](const Tensor& A, py::handle ord, py::handle dim, bool keepdim, py::handle dtype,
         py::handle out) {
        const char* fn = "linalg.norm";
        std::optional<std::vector<int64_t>> d = to_dims(dim, fn);
        const std::optional<ScalarType> dt = opt_dtype(dtype, fn);
        double o = 0;
        std::string s;
        const bool numeric = ord.is_none() || numeric_ord(ord, o, s, fn);
        Tensor r = nogil(A, [&] {
          if (!numeric) return linalg::norm(A, s, d, keepdim, dt);
          return linalg::norm(A, ord.is_none() ? std::nullopt : std::optional<double>(o), d,
                              keepdim, dt);
        });
        return finish(out, r, fn);
      },
      arg("A"), arg("ord") = py::none(), arg("dim") = py::none(), arg("keepdim") = false,
      py::kw_only(), arg("dtype") = py::none(), arg("out") = py::none());
  if (!py::hasattr(lm, "vector_norm")) {
    lm.def(
        "vector_norm",
        [](const Tensor& x, py::handle ord, py::handle dim, bool keepdim, py::handle dtype,
           py::handle out) {
          const char* fn = "linalg.vector_norm";
          std::optional<std::vector<int64_t>> d = to_dims(dim, fn);
          const std::optional<ScalarType> dt = opt_dtype(dtype, fn);
          const Scalar o(to_double(ord.ptr(), fn, "ord"));
          Tensor r = d ? linalg::vector_norm(x, o, IntArrayRef(*d), keepdim, dt)
                       : linalg::vector_norm(x, o, std::nullopt, keepdim, dt);
          return finish(out, r, fn);
        },
        arg("x"), arg("ord") = 2, arg("dim") = py::none(), arg("keepdim") = false, py::kw_only(),
        arg("dtype") = py::none(), arg("out") = py::none());
  }
  lm.def(
      "cond",
      [](const Tensor& A, py::handle p, py::handle out) {
        const char* fn = "linalg.cond";
        double o = 0;
        std::string s;
        const bool numeric = p.is_none() || numeric_ord(p, o, s, fn);
        Tensor r = nogil(A, [&] {
          if (!numeric) return linalg::cond(A, s);
          return linalg::cond(A, p.is_none() ? std::nullopt : std::optional<double>(o));
        });
        return finish(out, r, fn);
      },
      arg("A"), arg("p") = py::none(), py::kw_only(), arg("out") = py::none());

  // ---- legacy top-level spellings and their methods ----
  m.def(
      "det", [](const Tensor& A) { return wrap_obj(det(A)); }, arg("input"));
  m.def(
      "logdet", [](const Tensor& A) { return wrap_obj(logdet(A)); }, arg("input"));
  m.def(
      "inverse",
      [](const Tensor& A, py::handle out) {
        return finish(out, nogil(A, [&] { return inverse(A); }), "inverse");
      },
      arg("input"), py::kw_only(), arg("out") = py::none());
  m.def(
      "slogdet",
      [](const Tensor& A, py::handle out) {
        auto [s, l] = slogdet(A);
        return finish_tuple(out, {s, l}, "slogdet", "slogdet");
      },
      arg("input"), py::kw_only(), arg("out") = py::none());
  m.def(
      "cholesky",
      [](const Tensor& A, bool upper, py::handle out) {
        return finish(out, nogil(A, [&] { return cholesky(A, upper); }), "cholesky");
      },
      arg("input"), arg("upper") = false, py::kw_only(), arg("out") = py::none());
  m.def(
      "qr",
      [](const Tensor& A, bool some, py::handle out) {
        auto [Q, R] = nogil(A, [&] { return qr(A, some); });
        return finish_tuple(out, {Q, R}, "qr", "qr");
      },
      arg("input"), arg("some") = true, py::kw_only(), arg("out") = py::none());
  m.def(
      "svd",
      [](const Tensor& A, bool some, bool uv, py::handle out) {
        auto [U, S, V] = nogil(A, [&] { return svd(A, some, uv); });
        return finish_tuple(out, {U, S, V}, "svd", "svd");
      },
      arg("input"), arg("some") = true, arg("compute_uv") = true, py::kw_only(),
      arg("out") = py::none());
  m.def(
      "pinverse", [](const Tensor& A, double rcond) { return wrap_obj(A.pinverse(rcond)); },
      arg("input"), arg("rcond") = 1e-15);
  m.def(
      "matrix_power",
      [](const Tensor& A, int64_t n, py::handle out) {
        return finish(out, matrix_power(A, n), "matrix_power");
      },
      arg("input"), arg("n"), py::kw_only(), arg("out") = py::none());
  m.def(
      "matrix_exp", [](const Tensor& A) { return wrap_obj(matrix_exp(A)); }, arg("input"));
  m.def(
      "lu_unpack",
      [](const Tensor& LU, const Tensor& piv, bool data, bool pivots, py::handle out) {
        auto [P, L, U] = lu_unpack(LU, piv, data, pivots);
        return finish_tuple(out, {P, L, U}, "lu_unpack", "lu_unpack");
      },
      arg("LU_data"), arg("LU_pivots"), arg("unpack_data") = true, arg("unpack_pivots") = true,
      py::kw_only(), arg("out") = py::none());
  m.def(
      "cholesky_solve",
      [](const Tensor& B, const Tensor& L, bool upper, py::handle out) {
        return finish(out, nogil(L, [&] { return cholesky_solve(B, L, upper); }), "cholesky_solve");
      },
      arg("input"), arg("input2"), arg("upper") = false, py::kw_only(), arg("out") = py::none());
  m.def(
      "cholesky_inverse",
      [](const Tensor& L, bool upper, py::handle out) {
        return finish(out, nogil(L, [&] { return cholesky_inverse(L, upper); }),
                      "cholesky_inverse");
      },
      arg("input"), arg("upper") = false, py::kw_only(), arg("out") = py::none());
  m.def(
      "triangular_solve",
      [](const Tensor& B, const Tensor& A, bool upper, bool transpose, bool unit, py::handle out) {
        auto [X, Ac] = nogil(A, [&] { return triangular_solve(B, A, upper, transpose, unit); });
        return finish_tuple(out, {X, Ac}, "triangular_solve", "triangular_solve");
      },
      arg("input"), arg("A"), arg("upper") = true, arg("transpose") = false,
      arg("unitriangular") = false, py::kw_only(), arg("out") = py::none());
  m.def(
      "orgqr",
      [](const Tensor& A, const Tensor& tau) {
        return wrap_obj(linalg::householder_product(A, tau));
      },
      arg("input"), arg("input2"));

  cls.def("det", [](const Tensor& A) { return A.det(); });
  cls.def("logdet", [](const Tensor& A) { return A.logdet(); });
  cls.def("inverse", [](const Tensor& A) { return A.inverse(); });
  cls.def("slogdet", [](const Tensor& A) {
    auto [s, l] = A.slogdet();
    return finish_tuple(py::none(), {s, l}, "slogdet", "slogdet");
  });
  cls.def(
      "cholesky", [](const Tensor& A, bool upper) { return A.cholesky(upper); },
      arg("upper") = false);
  cls.def(
      "qr",
      [](const Tensor& A, bool some) {
        auto [Q, R] = A.qr(some);
        return finish_tuple(py::none(), {Q, R}, "qr", "qr");
      },
      arg("some") = true);
  cls.def(
      "svd",
      [](const Tensor& A, bool some, bool uv) {
        auto [U, S, V] = A.svd(some, uv);
        return finish_tuple(py::none(), {U, S, V}, "svd", "svd");
      },
      arg("some") = true, arg("compute_uv") = true);
  cls.def(
      "pinverse", [](const Tensor& A, double rcond) { return A.pinverse(rcond); },
      arg("rcond") = 1e-15);
  cls.def(
      "matrix_power", [](const Tensor& A, int64_t n) { return A.matrix_power(n); }, arg("n"));
  cls.def("matrix_exp", [](const Tensor& A) { return A.matrix_exp(); });
  cls.def(
      "cholesky_solve",
      [](const Tensor& B, const Tensor& L, bool upper) { return cholesky_solve(B, L, upper); },
      arg("input2"), arg("upper") = false);
  cls.def(
      "cholesky_inverse", [](const Tensor& L, bool upper) { return cholesky_inverse(L, upper); },
      arg("upper") = false);
  cls.def(
      "triangular_solve",
      [](const Tensor& B, const Tensor& A, bool upper, bool transpose, bool unit) {
        auto [X, Ac] = triangular_solve(B, A, upper, transpose, unit);
        return finish_tuple(py::none(), {X, Ac}, "triangular_solve", "triangular_solve");
      },
      arg("A"), arg("upper") = true, arg("transpose") = false, arg("unitriangular") = false);
  cls.def(
      "orgqr",
      [](const Tensor& A, const Tensor& tau) { return linalg::householder_product(A, tau); },
      arg("input2"));
}

}  // namespace ember::python
