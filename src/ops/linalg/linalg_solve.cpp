// Solvers and inverses: inv (getrf + getri), solve (getrf + getrs), lu_solve (getrs),
// solve_triangular / triangular_solve (trsm), cholesky_solve / cholesky_inverse (potrs / potri)
// and lstsq (gels, gelsy, gelsd, gelss). Batch dims of the two operands broadcast; each operand
// is copied into a column-major workspace of the broadcast batch (Note [Linalg workspaces]).
#include "autograd/record.h"
#include "ember/blas.h"
#include "ops/call_path.h"
#include "ops/linalg/linalg_util.h"

namespace ember {
using namespace linalg_detail;
using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;
using linalg_ad::mH;

namespace {

/// PyTorch's rule: B is a (batch of) vector(s) when it is 1-D or has A's shape without the
/// last dim.
bool is_vector_rhs(const Tensor& A, const Tensor& B) {
  if (B.dim() == 1) return true;
  if (B.dim() != A.dim() - 1) return false;
  for (int64_t d = 0; d < B.dim(); ++d) {
    if (B.size(d) != A.size(d)) return false;
  }
  return true;
}

/// The broadcast batch shape of two batches of matrices (RuntimeError when incompatible).
DimVector broadcast_batch(const Tensor& A, const Tensor& B) {
  return broadcast_shapes(batch_shape(A), batch_shape(B));
}

void check_same_device(const Tensor& A, const Tensor& B, const char* op) {
  EMBER_CHECK(A.device() == B.device(), "[", op,
              "] Expected all tensors to be on the same device, but found at least two devices, ",
              A.device().str(), " and ", B.device().str(), "!");
}

/// Same dtype (and, first, same device: a kernel reads both from one device).
void check_same_dtype(const Tensor& A, const Tensor& B, const char* op) {
  check_same_device(A, B, op);
  EMBER_CHECK(A.dtype() == B.dtype(), "[", op,
              "] Expected A and B to have the same dtype, but "
              "found A of type ",
              dtype_name(A.dtype()), " and B of type ", dtype_name(B.dtype()), " instead");
}

const char* singular_msg = "The solver failed because the input matrix is singular.";

std::tuple<Tensor, Tensor> solve_kernel(const Tensor& A, const Tensor& B, bool left,
                                        bool check_errors, const char* op);

// X = A⁻¹B: gB solves the adjoint system, gA = -gB Xᴴ (left) or -Xᴴ gB (right).
std::tuple<Tensor, Tensor> solve_impl(const Tensor& A, const Tensor& B, bool left,
                                      bool check_errors, const char* op) {
  OpRecorder rec(op, {A, B});
  auto r = solve_kernel(A, B, left, check_errors, op);
  if (rec) {
    rec.args(left, is_vector_rhs(A, B));
    rec.record(
        std::get<0>(r),
        [](VjpCtx& c) {
          const bool left = c.args().b(0), vector = c.args().b(1);
          const Tensor &A = c.saved[0], &X = c.saved[1];
          Tensor g = vector ? c.grads[0].unsqueeze(-1) : c.grads[0];
          Tensor gB = linalg::solve(mH(A), g, left);
          variable_list res(2);
          if (c.needs(0)) {
            Tensor X2 = vector ? X.unsqueeze(-1) : X;
            res[0] = (left ? ember::matmul(gB, mH(X2)) : ember::matmul(mH(X2), gB)).neg();
          }
          if (c.needs(1)) res[1] = vector ? gB.squeeze(-1) : gB;
          return res;
        },
        {A, std::get<0>(r)},
        [](JvpCtx& c) {
          const bool left = c.args().b(0), vector = c.args().b(1);
          const Tensor &A = c.inputs[0], &X = c.outputs[0];
          Tensor X2 = vector ? X.unsqueeze(-1) : X;
          Tensor rhs;
          if (c.tangents[1].defined()) rhs = vector ? c.tangents[1].unsqueeze(-1) : c.tangents[1];
          if (c.tangents[0].defined()) {
            Tensor t = left ? ember::matmul(c.tangents[0], X2) : ember::matmul(X2, c.tangents[0]);
            rhs = rhs.defined() ? rhs.sub(t) : t.neg();
          }
          Tensor dX = linalg::solve(A, rhs, left);
          return variable_list{vector ? dX.squeeze(-1) : dX};
        });
  }
  return r;
}

std::tuple<Tensor, Tensor> solve_kernel(const Tensor& A, const Tensor& B, bool left,
                                        bool check_errors, const char* op) {
  check_square(A, op);
  check_dtype(A, op);
  check_same_dtype(A, B, op);
  const bool vector = is_vector_rhs(A, B);
  const Tensor B2 = vector ? B.unsqueeze(-1) : B;
  EMBER_CHECK(B2.dim() >= 2, "[", op, "] The input tensor B must have at least 2 dimensions.");
  const int64_t n = A.size(-1);
  EMBER_CHECK((left ? B2.size(-2) : B2.size(-1)) == n, "[", op,
              "] Incompatible shapes of A and "
              "B for the equation ",
              left ? "AX = B" : "XA = B", " (", A.size(-2), "x", A.size(-1), " and ", B2.size(-2),
              "x", B2.size(-1), ")");
  const DimVector bs = broadcast_batch(A, B2);
  const Tensor Bl = left ? B2 : B2.mT();  // solve A X = B or Aᵀ Xᵀ = Bᵀ
  const int64_t k = Bl.size(-1);
  Tensor LU = colmajor_copy(A, A.dtype(), cat_shape(bs, {n, n}));
  Tensor X = colmajor_copy(Bl, A.dtype(), cat_shape(bs, {n, k}));
  int64_t batch = 1;
  for (int64_t s : bs) batch *= s;
  std::vector<int> infos(size_t(batch), 0);
  if (n > 0) linalg_solve_stub(A.device().type(), LU, X, !left, infos);
  if (check_errors) {
    raise_infos(infos, bs.size() > 0, op, [](int) { return std::string(singular_msg); });
  }
  Tensor R = left ? X : X.mT();
  if (vector) R = R.squeeze(-1);
  return {R, info_tensor(infos, bs, A.device())};
}

std::tuple<Tensor, Tensor> inv_kernel(const Tensor& A, bool check_errors, const char* op);

// d(A⁻¹) = -A⁻¹ dA A⁻¹.
std::tuple<Tensor, Tensor> inv_impl(const Tensor& A, bool check_errors, const char* op) {
  OpRecorder rec(op, {A});
  auto r = inv_kernel(A, check_errors, op);
  if (rec) {
    rec.record(
        std::get<0>(r),
        [](VjpCtx& c) {
          Tensor Xh = mH(c.saved[0]);
          return variable_list{ember::matmul(Xh, ember::matmul(c.grads[0], Xh)).neg()};
        },
        {std::get<0>(r)},
        [](JvpCtx& c) {
          const Tensor& X = c.outputs[0];
          return variable_list{ember::matmul(X, ember::matmul(c.tangents[0], X)).neg()};
        });
  }
  return r;
}

std::tuple<Tensor, Tensor> inv_kernel(const Tensor& A, bool check_errors, const char* op) {
  check_square(A, op);
  check_dtype(A, op);
  const int64_t n = A.size(-1), batch = batch_count(A);
  // inv(A) solves A X = I (getrf + getrs, as PyTorch 1.13): the same rounding as solve, and a
  // singular A leaves LAPACK's inf/nan in the _ex result rather than an arbitrary value.
  Tensor LU = colmajor_copy(A, A.dtype());
  Tensor X = colmajor_empty(A.sizes(), A.dtype(), A.device());
  std::vector<int> infos(size_t(batch), 0);
  if (n > 0) {
    X.zero_();
    X.diagonal(0, -2, -1).fill_(Scalar(1));
    // getrf + getrs on the identity: the solve kernel with k == n.
    linalg_solve_stub(A.device().type(), LU, X, false, infos);
  }
  if (check_errors) {
    raise_infos(infos, A.dim() > 2, op, [](int info) {
      return "The diagonal element " + std::to_string(info) +
             " is zero, the inversion could not be completed because the input matrix is "
             "singular.";
    });
  }
  return {X, info_tensor(infos, batch_shape(A), A.device())};
}

/// Writes the conjugate of a complex workspace in place (no-op for real dtypes).
void conj_inplace(Tensor& w) {
  if (w.is_complex() && w.numel() > 0) w.conj_physical_();
}

/// op(A) X = B (left) or X op(A) = B through trsm; op is A, Aᵀ (`trans`) or Aᴴ (`conj_trans`).
Tensor trsm_impl(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit, bool trans) {
  const DimVector bs = broadcast_batch(A, B);
  const int64_t n = A.size(-1), m = B.size(-2), k = B.size(-1);
  Tensor Aw = colmajor_copy(A, A.dtype(), cat_shape(bs, {n, n}));
  Tensor X = colmajor_copy(B, A.dtype(), cat_shape(bs, {m, k}));
  if (X.numel() == 0 || n == 0) return X;
  linalg_triangular_solve_stub(A.device().type(), Aw, X, upper, left, unit, trans);
  return X;
}

/// The triangle of `t` that solve_triangular reads (without the diagonal when unit).
Tensor solved_triangle(const Tensor& t, bool upper, bool unitriangular) {
  return upper ? triu(t, unitriangular ? 1 : 0) : tril(t, unitriangular ? -1 : 0);
}

Tensor lu_solve_kernel(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint);
Tensor lu_solve_LU_backward(const Tensor& gX, const Tensor& LU, const Tensor& pivots,
                            const Tensor& X, bool left, bool adjoint);

}  // namespace

namespace linalg {

Tensor inv(const Tensor& A) {
  EMBER_OP_CAST(linalg_inv, inv, A);
  return std::get<0>(inv_impl(A, true, "linalg.inv"));
}

std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors) {
  EMBER_OP_CAST(linalg_inv_ex, inv_ex, A, check_errors);
  return inv_impl(A, check_errors, "linalg.inv_ex");
}

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  EMBER_OP_CAST(linalg_solve, solve, A, B, left);
  return std::get<0>(solve_impl(A, B, left, true, "linalg.solve"));
}

std::tuple<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left,
                                    bool check_errors) {
  EMBER_OP(linalg_solve_ex, A, B, left, check_errors);
  return solve_impl(A, B, left, check_errors, "linalg.solve_ex");
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                        bool unitriangular) {
  EMBER_OP(linalg_solve_triangular, A, B, upper, left, unitriangular);
  const char* op = "linalg.solve_triangular";
  check_matrix(A, op, "A");
  check_matrix(B, op, "B");
  check_square(A, op);
  check_dtype(A, op);
  check_same_dtype(A, B, op);
  EMBER_CHECK((left ? B.size(-2) : B.size(-1)) == A.size(-1), "[", op,
              "] Incompatible shapes "
              "of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", A.size(-2), "x", A.size(-1), " and ", B.size(-2),
              "x", B.size(-1), ")");
  OpRecorder rec(op, {A, B});
  Tensor X = trsm_impl(A, B, upper, left, unitriangular, false);
  if (rec) {
    // Only A's triangle (without the diagonal when unit) is read: its gradient is masked.
    rec.args(upper, left, unitriangular);
    rec.record(
        X,
        [](VjpCtx& c) {
          const bool upper = c.args().b(0), left = c.args().b(1), unitriangular = c.args().b(2);
          const Tensor &A = c.saved[0], &X = c.saved[1];
          Tensor gB = linalg::solve_triangular(mH(A), c.grads[0], !upper, left, unitriangular);
          variable_list r(2);
          if (c.needs(0)) {
            r[0] =
                solved_triangle((left ? ember::matmul(gB, mH(X)) : ember::matmul(mH(X), gB)).neg(),
                                upper, unitriangular);
          }
          if (c.needs(1)) r[1] = gB;
          return r;
        },
        {A, X},
        [](JvpCtx& c) {
          const bool upper = c.args().b(0), left = c.args().b(1), unitriangular = c.args().b(2);
          const Tensor &A = c.inputs[0], &X = c.outputs[0];
          Tensor rhs = c.tangents[1];
          if (c.tangents[0].defined()) {
            Tensor dA = solved_triangle(c.tangents[0], upper, unitriangular);
            Tensor t = left ? ember::matmul(dA, X) : ember::matmul(X, dA);
            rhs = rhs.defined() ? rhs.sub(t) : t.neg();
          }
          return variable_list{linalg::solve_triangular(A, rhs, upper, left, unitriangular)};
        });
  }
  return X;
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  EMBER_OP(linalg_lu_solve, LU, pivots, B, left, adjoint);
  const char* op = "linalg.lu_solve";
  check_square(LU, op, "LU");
  check_matrix(B, op, "B");
  check_dtype(LU, op);
  EMBER_CHECK(LU.dtype() == B.dtype(), "[", op,
              "] Expected LU and B to have the same dtype, but "
              "found LU of type ",
              dtype_name(LU.dtype()), " and B of type ", dtype_name(B.dtype()), " instead");
  EMBER_CHECK(pivots.dtype() == kInt, "[", op,
              "] pivots should be a Tensor of scalar type int32."
              " Got ",
              dtype_name(pivots.dtype()));
  const int64_t n = LU.size(-1);
  EMBER_CHECK(pivots.dim() == LU.dim() - 1 && pivots.size(-1) == n, "[", op,
              "] Incompatible "
              "shapes of LU ",
              shape_str(LU.sizes()), " and pivots ", shape_str(pivots.sizes()));
  EMBER_CHECK((left ? B.size(-2) : B.size(-1)) == n, "[", op,
              "] Incompatible shapes of A and B "
              "for the equation ",
              left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", B.size(-2), "x", B.size(-1),
              ")");
  OpRecorder rec(op, {LU, B});
  Tensor X = lu_solve_kernel(LU, pivots, B, left, adjoint);
  if (rec) {
    rec.args(left, adjoint);
    rec.record(X,
               [](VjpCtx& c) {
                 const bool left = c.args().b(0), adjoint = c.args().b(1);
                 const Tensor &LU = c.saved[0], &piv = c.saved[1], &X = c.saved[2];
                 const Tensor& gX = c.grads[0];
                 variable_list r(2);
                 if (c.needs(0)) r[0] = lu_solve_LU_backward(gX, LU, piv, X, left, adjoint);
                 if (c.needs(1)) r[1] = linalg::lu_solve(LU, piv, gX, left, !adjoint);
                 return r;
               },
               {LU, pivots, X});
  }
  return X;
}

}  // namespace linalg

namespace {
Tensor lu_solve_kernel(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_same_device(LU, pivots, op);
  check_same_device(LU, B, op);
  const int64_t n = LU.size(-1);
  const DimVector bs = broadcast_batch(LU, B);
  // X op(A) = B is op(A)ᴴ Xᴴ = Bᴴ: solve on the conjugate transpose and conjugate back.
  const Tensor Bl = left ? B : B.mT().conj();
  const int64_t k = Bl.size(-1);
  Tensor A = colmajor_copy(LU, LU.dtype(), cat_shape(bs, {n, n}));
  Tensor P = fresh_copy(pivots.expand(cat_shape(bs, {n})));
  Tensor X = colmajor_copy(Bl, LU.dtype(), cat_shape(bs, {n, k}));
  const bool conj_t = left ? adjoint : !adjoint;
  if (X.numel() > 0 && n > 0) linalg_lu_solve_stub(LU.device().type(), A, P, X, conj_t, op);
  if (left) return X;
  conj_inplace(X);
  return X.mT();
}

/// The gradient of lu_solve with respect to the packed LU factors.
Tensor lu_solve_LU_backward(const Tensor& gX, const Tensor& LU, const Tensor& pivots,
                            const Tensor& X, bool left, bool adjoint) {
  auto [P, L, U] = lu_unpack(LU, pivots, true, left == adjoint);
  using linalg::solve_triangular;
  if (left != adjoint) {
    Tensor rhs = ember::matmul(left ? gX : mH(gX), left ? mH(X) : X).neg();
    Tensor gR = solve_triangular(mH(U), rhs, false, true, false);
    Tensor gL = tril(solve_triangular(mH(L), ember::matmul(gR, mH(U)), true, true, true), -1);
    return gL.add(triu(gR));
  }
  Tensor gR =
      ember::matmul(matmul(ember::matmul(P.mT(), left ? X : mH(X)), left ? mH(gX) : gX), P).neg();
  gR = solve_triangular(mH(L), gR, true, false, true);
  Tensor gU = triu(solve_triangular(mH(U), ember::matmul(mH(L), gR), false, false, false));
  return tril(gR, -1).add(gU);
}
}  // namespace

namespace linalg {

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A, const Tensor& B,
                                                 std::optional<double> rcond,
                                                 std::optional<std::string_view> driver) {
  EMBER_OP_CAST(linalg_lstsq, lstsq, A, B, rcond, driver);
  const char* op = "linalg.lstsq";
  check_matrix(A, op, "input");
  EMBER_CHECK(B.dim() >= 1, "[", op, "] other must have at least 1 dimension.");
  check_dtype(A, op);
  EMBER_CHECK(A.dtype() == B.dtype(), "[", op,
              "] Expected input and other to have the same "
              "dtype, but got input's dtype ",
              dtype_name(A.dtype()), " and other's dtype ", dtype_name(B.dtype()));
  EMBER_CHECK(A.dim() >= B.dim() && A.dim() - B.dim() <= 1, "[", op,
              "] input.dim() must be "
              "greater or equal to other.dim() and (input.dim() - other.dim()) <= 1, got ",
              A.dim(), " and ", B.dim());
  // Unlike solve, lstsq takes B as (a batch of) vectors whenever it has one dim less than A.
  const bool vector = A.dim() - B.dim() == 1;
  const Tensor B2 = vector ? B.unsqueeze(-1) : B;
  EMBER_CHECK(A.size(-2) == B2.size(-2), "[", op, "] input.size(-2) should match other.size(",
              vector ? -1 : -2, "), got shapes ", shape_str(A.sizes()), " and ",
              shape_str(B.sizes()));
  const std::string drv(driver.value_or("gelsy"));
  EMBER_CHECK(drv == "gels" || drv == "gelsy" || drv == "gelsd" || drv == "gelss", "[", op,
              "] parameter `driver` should be one of (gels, gelsy, gelsd, gelss), got ", drv);
  const DimVector bs = broadcast_batch(A, B2);
  OpRecorder rec(op, {A, B});
  const int64_t m = A.size(-2), n = A.size(-1), k = B2.size(-1), mn = std::max(m, n);
  const int64_t kmin = std::min(m, n);
  const ScalarType rdt = toRealValueType(A.dtype());
  const double rc = rcond.value_or(eps_of(A.dtype()) * double(mn));
  Tensor Aw = colmajor_copy(A, A.dtype(), cat_shape(bs, {m, n}));
  Tensor X = colmajor_empty(cat_shape(bs, {mn, k}), A.dtype());
  if (X.numel() > 0) {
    X.zero_();
    if (m > 0) X.narrow(-2, 0, m).copy_(B2.resolve_conj());
  }
  int64_t batch = 1;
  for (int64_t s : bs) batch *= s;
  const LstsqDriver driver_kind = drv == "gels"    ? LstsqDriver::Gels
                                  : drv == "gelsy" ? LstsqDriver::Gelsy
                                  : drv == "gelsd" ? LstsqDriver::Gelsd
                                                   : LstsqDriver::Gelss;
  const bool has_rank = drv != "gels";
  const bool has_sv = drv == "gelsd" || drv == "gelss";
  Tensor rank = has_rank ? zeros(bs, TensorOptions(kLong)) : empty_tensor({0}, kLong);
  Tensor sv = has_sv ? zeros(cat_shape(bs, {kmin}), TensorOptions(rdt)) : empty_tensor({0}, rdt);
  std::vector<int> infos(size_t(batch), 0);
  if (m > 0 && n > 0 && k > 0) {
    linalg_lstsq_stub(A.device().type(), Aw, X, rank, sv, driver_kind, rc, infos);
  } else if (has_rank) {
    rank.zero_();
  }
  // PyTorch 1.13 does not raise for a rank-deficient A with gels: the solution is whatever
  // LAPACK left in B (zero for a zero A). Only the SVD drivers' non-convergence is an error.
  if (drv == "gels") {
    for (int& i : infos) i = std::min(i, 0);
  }
  raise_infos(infos, bs.size() > 0, op, [&](int info) {
    return "The algorithm failed to converge (error code: " + std::to_string(info) + ").";
  });
  Tensor solution = X.narrow(-2, 0, n);
  Tensor residuals = empty_tensor({0}, rdt);
  if (m > n && drv != "gelsy") {
    // The residuals are defined only where every A has full rank n.
    const bool compute = !has_sv || rank.eq(Scalar(n)).all().item().toBool();
    if (compute) {
      residuals = zeros(cat_shape(bs, {k}), TensorOptions(rdt));
      linalg_lstsq_residuals_stub(A.device().type(), X, n, residuals);
    }
  }
  if (vector) solution = solution.squeeze(-1);
  if (rec) {
    // The solution is pinv(A) B (PyTorch differentiates only the solution).
    rec.args(vector);
    rec.record(solution,
               [](VjpCtx& c) {
                 const bool vector = c.args().b(0);
                 const Tensor &A = c.saved[0], &B = c.saved[1];
                 Tensor gX = vector ? c.grads[0].unsqueeze(-1) : c.grads[0];
                 Tensor B2 = vector ? B.unsqueeze(-1) : B;
                 Tensor pinvA = linalg::pinv(A);
                 variable_list r(2);
                 if (c.needs(0))
                   r[0] = linalg_ad::pinv_backward(ember::matmul(gX, mH(B2)), pinvA, A);
                 if (c.needs(1)) {
                   Tensor gB = ember::matmul(mH(pinvA), gX);
                   r[1] = vector ? gB.squeeze(-1) : gB;
                 }
                 return r;
               },
               {A, B});
  }
  return {solution, residuals, rank, sv};
}

}  // namespace linalg

std::tuple<Tensor, Tensor> triangular_solve(const Tensor& B, const Tensor& A, bool upper,
                                            bool transpose, bool unitriangular) {
  EMBER_OP_CAST(triangular_solve, triangular_solve, B, A, upper, transpose, unitriangular);
  const char* op = "triangular_solve";
  check_matrix(B, op, "self");
  check_matrix(A, op, "A");
  check_square(A, op);
  check_dtype(A, op);
  check_same_dtype(A, B, op);
  EMBER_CHECK(B.size(-2) == A.size(-1), "[", op,
              "] Incompatible matrix sizes for triangular "
              "solve: A ",
              shape_str(A.sizes()), ", b ", shape_str(B.sizes()));
  const DimVector bs = broadcast_batch(A, B);
  OpRecorder rec(op, {B, A});
  Tensor X = trsm_impl(A, B, upper, true, unitriangular, transpose);
  Tensor Ac = colmajor_copy(A, A.dtype(), cat_shape(bs, {A.size(-2), A.size(-1)}));
  if (rec) {
    // The second output is a copy of A: its gradient goes to A unchanged.
    rec.args(upper, transpose, unitriangular);
    rec.record(
        {X, Ac},
        [](VjpCtx& c) {
          const bool upper = c.args().b(0), transpose = c.args().b(1);
          const bool unitriangular = c.args().b(2);
          const Tensor &A = c.saved[0], &X = c.saved[1];
          const Tensor &gX = c.grads[0], &gM = c.grads[1];
          variable_list r(2);
          Tensor gB = std::get<0>(triangular_solve(gX, A.conj(), upper, !transpose, unitriangular));
          if (c.needs(0)) r[0] = gB;
          if (c.needs(1)) {
            Tensor gA =
                transpose ? ember::matmul(X.conj(), gB.mT()).neg() : ember::matmul(gB, mH(X)).neg();
            gA = upper ? triu(gA, unitriangular ? 1 : 0) : tril(gA, unitriangular ? -1 : 0);
            r[1] = gA.add(gM);
          }
          return r;
        },
        {A, X},
        [](JvpCtx& c) {
          // Only the triangle the solve reads moves X (PyTorch 1.13's jvp uses all of
          // dA, which disagrees with its own vjp for a non-triangular A).
          const bool upper = c.args().b(0), transpose = c.args().b(1);
          const bool unitriangular = c.args().b(2);
          const Tensor &A = c.inputs[1], &X = c.outputs[0];
          Tensor dA = c.tangent_or_zeros(1);
          Tensor dT = upper ? triu(dA, unitriangular ? 1 : 0) : tril(dA, unitriangular ? -1 : 0);
          if (transpose) dT = dT.mT();
          Tensor rhs = c.tangent_or_zeros(0).sub(ember::matmul(dT, X));
          Tensor dX = std::get<0>(triangular_solve(rhs, A, upper, transpose, unitriangular));
          return variable_list{dX, zeros_like(c.outputs[1]).add(dA)};
        });
  }
  return {X, Ac};
}

namespace {
Tensor cholesky_solve_kernel(const Tensor& B, const Tensor& L, bool upper, const DimVector& bs);
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  EMBER_OP_CAST(cholesky_solve, cholesky_solve, B, L, upper);
  const char* op = "cholesky_solve";
  check_matrix(B, op, "self");
  check_matrix(L, op, "input2");
  check_square(L, op, "input2");
  check_dtype(L, op);
  EMBER_CHECK(L.dtype() == B.dtype(), "[", op,
              "] Expected b and A to have the same dtype, but "
              "found b of type ",
              dtype_name(B.dtype()), " and A of type ", dtype_name(L.dtype()), " instead.");
  const int64_t n = L.size(-1);
  EMBER_CHECK(B.size(-2) == n, "[", op,
              "] Incompatible matrix sizes for cholesky_solve: each A "
              "matrix is ",
              n, " by ", n, " but each b matrix is ", B.size(-2), " by ", B.size(-1));
  const DimVector bs = broadcast_batch(L, B);
  OpRecorder rec(op, {B, L});
  Tensor X = cholesky_solve_kernel(B, L, upper, bs);
  if (rec) {
    // X = (L Lᴴ)⁻¹ B.
    rec.args(upper);
    rec.record(X,
               [](VjpCtx& c) {
                 const bool upper = c.args().b(0);
                 const Tensor &L = c.saved[0], &X = c.saved[1];
                 Tensor gB = cholesky_solve(c.grads[0], L, upper);
                 variable_list r(2);
                 if (c.needs(0)) r[0] = gB;
                 if (c.needs(1)) {
                   Tensor common = ember::matmul(gB, mH(X));
                   common = common.add(mH(common));
                   r[1] = (upper ? ember::matmul(L, common) : ember::matmul(common, L)).neg();
                 }
                 return r;
               },
               {L, X});
  }
  return X;
}

namespace {
Tensor cholesky_solve_kernel(const Tensor& B, const Tensor& L, bool upper, const DimVector& bs) {
  const int64_t n = L.size(-1);
  const int64_t k = B.size(-1);
  Tensor Lw = colmajor_copy(L, L.dtype(), cat_shape(bs, {n, n}));
  Tensor X = colmajor_copy(B, L.dtype(), cat_shape(bs, {n, k}));
  if (X.numel() == 0 || n == 0) return X;
  linalg_cholesky_solve_stub(L.device().type(), Lw, X, upper);
  return X;
}
}  // namespace

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  EMBER_OP_CAST(cholesky_inverse, cholesky_inverse, L, upper);
  const char* op = "cholesky_inverse";
  check_square(L, op, "input");
  check_dtype(L, op);
  const int64_t batch = batch_count(L);
  OpRecorder rec(op, {L});
  Tensor X = colmajor_copy(L, L.dtype());
  auto record = [&] {
    if (!rec) return;
    // d((L Lᴴ)⁻¹) pulled back through L.
    rec.args(upper);
    rec.record(
        X,
        [](VjpCtx& c) {
          const bool upper = c.args().b(0);
          const Tensor &L = c.saved[0], &X = c.saved[1];
          const Tensor& g = c.grads[0];
          Tensor common = ember::matmul(X, ember::matmul(g.add(mH(g)), X));
          return variable_list{(upper ? ember::matmul(L, common) : ember::matmul(common, L)).neg()};
        },
        {L, X},
        [](JvpCtx& c) {
          // dX = P + Pᴴ with P = -X dL Lᴴ X (lower) or -X dUᴴ U X (upper), the tangent the vjp
          // above is the adjoint of (PyTorch 1.13's jvp orders these factors wrongly).
          const bool upper = c.args().b(0);
          const Tensor &L = c.inputs[0], &X = c.outputs[0];
          Tensor dL = c.tangent_or_zeros(0);
          Tensor inner = upper ? ember::matmul(mH(dL), L) : ember::matmul(dL, mH(L));
          Tensor P = ember::matmul(X, ember::matmul(inner, X)).neg();
          return variable_list{P.add(mH(P))};
        });
  };
  if (X.numel() == 0) {
    record();
    return X;
  }
  std::vector<int> infos(size_t(batch), 0);
  linalg_cholesky_inverse_stub(L.device().type(), X, upper, infos);
  raise_infos(infos, L.dim() > 2, op, [](int info) {
    return "The diagonal element " + std::to_string(info) +
           " is zero, the inversion could not be completed because the input matrix is "
           "singular.";
  });
  record();
  return X;
}

}  // namespace ember
