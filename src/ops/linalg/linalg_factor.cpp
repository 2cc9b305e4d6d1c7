// Factorizations: Cholesky (potrf), QR (geqrf + orgqr/ungqr), LU (getrf) and its unpacking,
// householder_product (orgqr/ungqr). Each matrix is factored in a column-major workspace
// (Note [Linalg workspaces]).
#include "autograd/record.h"
#include "ember/blas.h"
#include "ember/shape_ops.h"
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

std::tuple<Tensor, Tensor> cholesky_kernel(const Tensor& A, bool upper, bool check_errors,
                                           const char* op);

/// A = L Lᴴ (Murray 2016): gA = L⁻ᴴ Φ(Lᴴ gL) L⁻¹, symmetrised.
Tensor cholesky_backward(Tensor gL, bool upper, Tensor L) {
  if (upper) {
    L = mH(L);
    gL = mH(gL);
  }
  Tensor gA = tril(ember::matmul(mH(L), gL));
  gA = gA.add(mH(tril(gA, -1))).mul(Scalar(0.5));
  gA = linalg::solve_triangular(mH(L), gA, true, true);
  return linalg::solve_triangular(L, gA, false, false);
}

/// dL = L Φ(L⁻¹ dA L⁻ᴴ), Φ taking the lower triangle with a halved diagonal.
Tensor cholesky_jvp(const Tensor& dA, const Tensor& L, bool upper) {
  Tensor L_ = upper ? mH(L) : L;
  Tensor phi = linalg::solve_triangular(L_, dA, false, true);
  phi = linalg::solve_triangular(mH(L_), phi, true, false);
  phi = tril(phi, -1).add(diag_embed(phi.diagonal(0, -2, -1).mul(Scalar(0.5))));
  Tensor dL = ember::matmul(L_, phi);
  return upper ? mH(dL) : dL;
}

std::tuple<Tensor, Tensor> cholesky_impl(const Tensor& A, bool upper, bool check_errors,
                                         const char* op) {
  OpRecorder rec(op, {A});
  auto r = cholesky_kernel(A, upper, check_errors, op);
  if (rec) {
    rec.args(upper);
    rec.record(
        std::get<0>(r),
        [](VjpCtx& c) {
          const bool upper = c.args().b(0);
          return variable_list{cholesky_backward(c.grads[0], upper, c.saved[0])};
        },
        {std::get<0>(r)},
        [](JvpCtx& c) {
          const bool upper = c.args().b(0);
          return variable_list{cholesky_jvp(c.tangents[0], c.outputs[0], upper)};
        });
  }
  return r;
}

std::tuple<Tensor, Tensor> cholesky_kernel(const Tensor& A, bool upper, bool check_errors,
                                           const char* op) {
  check_square(A, op);
  check_dtype(A, op);
  const int64_t n = A.size(-1), batch = batch_count(A);
  Tensor L = colmajor_copy(A, A.dtype());
  std::vector<int> infos(size_t(batch), 0);
  if (n > 0) linalg_cholesky_stub(A.device().type(), L, upper, infos);
  if (check_errors) {
    raise_infos(infos, A.dim() > 2, op, [](int info) {
      return "The factorization could not be completed because the input is not "
             "positive-definite (the leading minor of order " +
             std::to_string(info) + " is not positive-definite).";
    });
  }
  return {L, info_tensor(infos, batch_shape(A), A.device())};
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_kernel(const Tensor& A, bool pivot, bool check_errors,
                                                    const char* op);

// The packed factors: L strictly below the diagonal, U on and above it (A = P L U).
std::tuple<Tensor, Tensor, Tensor> lu_factor_impl(const Tensor& A, bool pivot, bool check_errors,
                                                  const char* op) {
  OpRecorder rec(op, {A});
  auto r = lu_factor_kernel(A, pivot, check_errors, op);
  if (rec) {
    rec.args(pivot);
    rec.record(std::get<0>(r),
               [](VjpCtx& c) {
                 const bool pivot = c.args().b(0);
                 const Tensor &LU = c.saved[0], &piv = c.saved[1];
                 auto [P, L, U] = lu_unpack(LU, piv, true, pivot);
                 const int64_t k = std::min(LU.size(-2), LU.size(-1));
                 const Tensor& g = c.grads[0];
                 return variable_list{linalg_ad::lu_backward(g.narrow(-1, 0, k), g.narrow(-2, 0, k),
                                                             P, L, U, pivot)};
               },
               {std::get<0>(r), std::get<1>(r)});
  }
  return r;
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_kernel(const Tensor& A, bool pivot, bool check_errors,
                                                    const char* op) {
  check_matrix(A, op);
  check_dtype(A, op);
  EMBER_CHECK(pivot, "[", op, "] LU without pivoting is not implemented on the CPU");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), batch = batch_count(A);
  Tensor LU = colmajor_copy(A, A.dtype());
  Tensor piv = empty_tensor(cat_shape(batch_shape(A), {k}), kInt, A.device());
  std::vector<int> infos(size_t(batch), 0);
  if (k > 0) linalg_lu_factor_stub(A.device().type(), LU, piv, infos);
  if (check_errors) {
    // A plain RuntimeError, not LinAlgError, as PyTorch 1.13.
    raise_infos<Error>(infos, A.dim() > 2, op, [](int info) {
      return "U[" + std::to_string(info) + "," + std::to_string(info) +
             "] is zero and using it on lu_solve would result in a division by zero. If you "
             "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
             "linalg.lu_factor_ex(A, pivot)";
    });
  }
  return {LU, piv, info_tensor(infos, batch_shape(A), A.device())};
}

/// A = Q R (PyTorch's linalg_qr_backward): saved Q, R; grads gQ, gR; args (complete).
variable_list qr_backward(VjpCtx& c) {
  const bool complete = c.args().b(0);
  const Tensor &Q = c.saved[0], &R = c.saved[1];
  const Tensor &gQ = c.grads[0], &gR = c.grads[1];
  const int64_t m = Q.size(-2), n = R.size(-1);
  EMBER_CHECK(!complete || m <= n,
              "[linalg.qr] The QR decomposition is not differentiable when mode='complete' and "
              "nrows > ncols.");
  Tensor gA = ember::matmul(gR, mH(R)).sub(ember::matmul(mH(Q), gQ));
  if (m >= n) {
    // syminvadj(triu(gA)): X + Xᴴ with the real part of the diagonal halved.
    Tensor sym = triu(gA);
    sym = sym.add(mH(sym));
    sym = sym.sub(diag_embed(real(sym.diagonal(0, -2, -1)).mul(Scalar(0.5)).to(sym.dtype())));
    gA = ember::matmul(Q, sym).add(gQ);
    return {linalg::solve_triangular(mH(R), gA, false, false)};
  }
  // trilImInvAdjSkew(-gA): the lower triangle of X - Xᴴ with the imaginary diagonal halved.
  Tensor X = gA.neg();
  Tensor skew = tril(X.sub(mH(X)));
  if (skew.is_complex()) {
    Tensor im = imag(skew.diagonal(0, -2, -1)).mul(Scalar(0.5));
    skew = skew.sub(diag_embed(im.to(skew.dtype()).mul(Scalar(std::complex<double>(0, 1)))));
  }
  gA = ember::matmul(Q, skew);
  gA = linalg::solve_triangular(mH(R.narrow(-1, 0, m)), gA, false, false);
  DimVector shape;
  shape.assign(R.sizes());
  shape[shape.size() - 1] = n - m;
  gA = cat({gA, zeros(shape, gA.options())}, -1);
  return {gA.add(ember::matmul(Q, gR))};
}

Tensor householder_product_kernel(const Tensor& A, const Tensor& tau);

}  // namespace

namespace linalg {

Tensor cholesky(const Tensor& A, bool upper) {
  EMBER_OP_CAST(linalg_cholesky, cholesky, A, upper);
  return std::get<0>(cholesky_impl(A, upper, true, "linalg.cholesky"));
}

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  EMBER_OP_CAST(linalg_cholesky_ex, cholesky_ex, A, upper, check_errors);
  return cholesky_impl(A, upper, check_errors, "linalg.cholesky_ex");
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode) {
  EMBER_OP_CAST(linalg_qr, qr, A, mode);
  const char* op = "linalg.qr";
  check_matrix(A, op);
  check_dtype(A, op);
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "[", op,
              "] qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  OpRecorder rec(op, {A});
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const bool complete = mode == "complete";
  const int64_t qcols = complete ? m : k;  // columns of Q
  const int64_t rrows = complete ? m : k;  // rows of R
  const DimVector bs = batch_shape(A);
  // Factor in a workspace with max(n, qcols) columns so Q can be formed in place.
  const int64_t wcols = std::max(n, qcols);
  const Device dev = A.device();
  Tensor W = colmajor_empty(cat_shape(bs, {m, wcols}), A.dtype(), dev);
  if (W.numel() > 0) W.narrow(-1, 0, n).copy_(A.resolve_conj());
  Tensor R = colmajor_empty(cat_shape(bs, {rrows, n}), A.dtype(), dev);
  Tensor Q = mode == "r" ? empty_tensor({0}, A.dtype(), dev)
                         : colmajor_empty(cat_shape(bs, {m, qcols}), A.dtype(), dev);
  if (R.numel() > 0) R.zero_();
  if (mode != "r" && Q.numel() > 0 && k == 0) {
    // No reflectors: Q is the identity (m x qcols).
    Q.zero_();
    Q.diagonal(0, -2, -1).fill_(Scalar(1));
  }
  if (k > 0) linalg_qr_stub(A.device().type(), W, R, Q, n, mode != "r");
  if (rec) {
    if (mode == "r") {
      rec.record(R, [](VjpCtx&) -> variable_list {
        EMBER_THROW(Error,
                    "[linalg.qr] The derivative of linalg.qr depends on Q, which is not computed "
                    "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                    "differentiate through linalg.qr.");
      });
    } else {
      rec.args(complete);
      rec.record({Q, R}, qr_backward, {Q, R});
    }
  }
  return {Q, R};
}

std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot) {
  EMBER_OP(linalg_lu_factor, A, pivot);
  auto [LU, piv, info] = lu_factor_impl(A, pivot, true, "linalg.lu_factor");
  return {LU, piv};
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  EMBER_OP(linalg_lu_factor_ex, A, pivot, check_errors);
  return lu_factor_impl(A, pivot, check_errors, "linalg.lu_factor_ex");
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot) {
  EMBER_OP(linalg_lu, A, pivot);
  auto [LU, piv, info] = lu_factor_impl(A, pivot, false, "linalg.lu");
  return lu_unpack(LU, piv, true, true);
}

Tensor householder_product(const Tensor& A, const Tensor& tau) {
  EMBER_OP_CAST(linalg_householder_product, householder_product, A, tau);
  const char* op = "linalg.householder_product";
  EMBER_CHECK(A.dim() >= 2, "[", op, "] input must have at least 2 dimensions, got shape ",
              shape_str(A.sizes()));
  EMBER_CHECK(A.size(-2) >= A.size(-1), "[", op,
              "] input.shape[-2] must be greater than or "
              "equal to input.shape[-1], got shape ",
              shape_str(A.sizes()));
  EMBER_CHECK(A.size(-1) >= tau.size(-1), "[", op,
              "] input.shape[-1] must be greater than or "
              "equal to tau.shape[-1], got ",
              A.size(-1), " and ", tau.size(-1));
  EMBER_CHECK(A.dim() - tau.dim() == 1, "[", op,
              "] Expected tau to have one dimension less "
              "than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", A.dim());
  for (int64_t d = 0; d + 2 < A.dim(); ++d) {
    EMBER_CHECK(A.size(d) == tau.size(d), "[", op,
                "] Expected batch dimensions of tau to be "
                "equal to input.shape[:-2], got shapes ",
                shape_str(A.sizes()), " and ", shape_str(tau.sizes()));
  }
  EMBER_CHECK(A.dtype() == tau.dtype(), "[", op, "] tau dtype ", dtype_name(tau.dtype()),
              " does not match input dtype ", dtype_name(A.dtype()));
  check_dtype(A, op);
  OpRecorder rec(op, {A, tau});
  Tensor Q = householder_product_kernel(A, tau);
  if (rec) {
    // The tangent is derived from this vjp (linear in the gradient, built from recorded ops).
    rec.record(Q,
               [](VjpCtx& c) {
                 auto [gA, gtau] =
                     linalg_ad::householder_product_backward(c.grads[0], c.saved[0], c.saved[1]);
                 return variable_list{gA, gtau};
               },
               {A, tau});
  }
  return Q;
}

}  // namespace linalg

namespace {
Tensor householder_product_kernel(const Tensor& A, const Tensor& tau) {
  const int64_t m = A.size(-2), n = A.size(-1);
  Tensor Q = colmajor_copy(A, A.dtype());
  Tensor T = fresh_copy(tau);
  if (n == 0 || m == 0) return Q;
  linalg_householder_product_stub(A.device().type(), Q, T);
  return Q;
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots,
                                             bool unpack_data, bool unpack_pivots) {
  EMBER_OP(lu_unpack, LU, pivots, unpack_data, unpack_pivots);
  const char* op = "lu_unpack";
  EMBER_CHECK(LU.dim() >= 2, "[", op,
              "] torch.lu_unpack: Expected tensor with 2 or more "
              "dimensions. Got size: ",
              shape_str(LU.sizes()), " instead");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  EMBER_CHECK(pivots.dim() >= 1 && pivots.size(-1) == k, "[", op,
              "] torch.lu_unpack: Expected "
              "LU_pivots.size(-1) == min(LU.size(-1), LU.size(-2)), but got ",
              pivots.size(-1), " and LU of shape ", shape_str(LU.sizes()));
  EMBER_CHECK(pivots.dtype() == kInt, "[", op,
              "] torch.lu_unpack: LU_pivots is expected to be a "
              "contiguous tensor of torch.int32 dtype. Got ",
              dtype_name(pivots.dtype()));
  const DimVector bs = batch_shape(LU);
  Tensor L = empty_tensor({0}, LU.dtype()), U = empty_tensor({0}, LU.dtype());
  Tensor P = empty_tensor({0}, LU.dtype());
  if (unpack_data) {
    L = tril(LU.narrow(-1, 0, k), -1);
    if (L.numel() > 0) L.diagonal(0, -2, -1).fill_(Scalar(1));
    U = triu(LU.narrow(-2, 0, k));
  }
  if (unpack_pivots) {
    P = zeros(cat_shape(bs, {m, m}), TensorOptions(LU.dtype()));
    Tensor piv = fresh_copy(pivots.expand(cat_shape(bs, {k})));
    linalg_lu_pivots_stub(LU.device().type(), piv, P, op);
  }
  return {P, L, U};
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, bool some) {
  EMBER_OP_CAST(qr, qr, A, some);
  return linalg::qr(A, some ? "reduced" : "complete");
}

}  // namespace ember
