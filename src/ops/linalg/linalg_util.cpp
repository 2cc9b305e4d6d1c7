// Shared helpers of the linalg ops (see linalg_util.h and Note [Linalg workspaces]).
#include "ops/linalg/linalg_util.h"

#include <limits>

#include "ember/blas.h"
#include "ember/shape_ops.h"

namespace ember::linalg_detail {

void check_dtype(const Tensor& a, const char* op, const char* arg) {
  const ScalarType dt = a.dtype();
  EMBER_CHECK(isFloatingType(dt) || isComplexType(dt), "[", op, "] Expected a floating point or ",
              "complex tensor as ", arg, ". Got ", dtype_name(dt));
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kComplexFloat || dt == kComplexDouble, "[", op,
              "] Low precision dtypes not supported. Got ", dtype_name(dt));
}

void check_matrix(const Tensor& a, const char* op, const char* arg) {
  EMBER_CHECK(a.dim() >= 2, "[", op, "] The input tensor ", arg,
              " must have at least 2 dimensions, got shape ", shape_str(a.sizes()));
}

void check_square(const Tensor& a, const char* op, const char* arg) {
  check_matrix(a, op, arg);
  EMBER_CHECK(a.size(-1) == a.size(-2), "[", op, "] ", arg,
              " must be batches of square matrices, but they are ", a.size(-2), " by ", a.size(-1),
              " matrices");
}

int64_t batch_count(const Tensor& a) {
  int64_t n = 1;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) n *= a.size(d);
  return n;
}

DimVector batch_shape(const Tensor& a) {
  DimVector s;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) s.push_back(a.size(d));
  return s;
}

DimVector cat_shape(IntArrayRef batch, std::initializer_list<int64_t> tail) {
  DimVector s;
  s.assign(batch);
  for (int64_t t : tail) s.push_back(t);
  return s;
}

Tensor colmajor_empty(IntArrayRef shape, ScalarType dt, Device device) {
  DimVector swapped;
  swapped.assign(shape);
  const size_t r = swapped.size();
  std::swap(swapped[r - 1], swapped[r - 2]);
  return empty_tensor(swapped, dt, device).mT();
}

Tensor colmajor_copy(const Tensor& a, ScalarType dt) { return colmajor_copy(a, dt, a.sizes()); }

Tensor colmajor_copy(const Tensor& a, ScalarType dt, IntArrayRef shape) {
  Tensor w = colmajor_empty(shape, dt, a.device());
  if (w.numel() > 0) w.copy_(a.resolve_conj());
  return w;
}

Tensor fresh_copy(const Tensor& a) {
  Tensor w = empty_tensor(a.sizes(), a.dtype(), a.device());
  if (w.numel() > 0) w.copy_(a.resolve_conj());
  return w;
}

Tensor info_tensor(const std::vector<int>& infos, IntArrayRef batch, Device device) {
  Tensor t = empty_tensor(batch, kInt, device);
  linalg_info_stub(t.device().type(), t, infos);
  return t;
}

double eps_of(ScalarType dt) {
  return (dt == kFloat || dt == kComplexFloat) ? double(std::numeric_limits<float>::epsilon())
                                               : std::numeric_limits<double>::epsilon();
}

Tensor batched_gemm(const Tensor& A, const Tensor& B, bool adj_a, bool adj_b) {
  const int64_t m = adj_a ? A.size(-1) : A.size(-2);
  const int64_t k = adj_a ? A.size(-2) : A.size(-1);
  const int64_t n = adj_b ? B.size(-2) : B.size(-1);
  Tensor C = colmajor_empty(cat_shape(batch_shape(A), {m, n}), A.dtype(), A.device());
  if (C.numel() == 0) return C;
  if (k == 0) return C.zero_();
  linalg_gemm_stub(A.device().type(), A, B, C, adj_a, adj_b);
  return C;
}

}  // namespace ember::linalg_detail

namespace ember::linalg_ad {

Tensor mH(const Tensor& t) { return t.mT().conj(); }

namespace {
Tensor add_defined(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a.add(b);
}
}  // namespace

Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& inp, int64_t dim) {
  if (inp.numel() == 0) return grad.expand_as(inp);
  const int64_t n = inp.size(dim);
  DimVector one_shape;
  one_shape.assign(inp.sizes());
  one_shape[size_t(dim)] = 1;
  Tensor ones_ = ones(one_shape, inp.options());
  // Products of the elements before and after each position: no division by zero.
  Tensor before = cat({ones_, inp.narrow(dim, 0, n - 1)}, dim).cumprod(dim);
  Tensor after = cat({ones_, inp.narrow(dim, 1, n - 1).flip({dim})}, dim).cumprod(dim).flip({dim});
  return grad.mul(before.mul(after).conj());
}

Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U,
                    const Tensor& S, const Tensor& Vh) {
  const int64_t m = U.size(-2), n = Vh.size(-1);
  if (!gU.defined() && !gVh.defined()) {
    if (!gS.defined()) return Tensor();
    return m >= n ? matmul(U, gS.unsqueeze(-1).to(U.dtype()).mul(Vh))
                  : matmul(U.mul(gS.unsqueeze(-2).to(U.dtype())), Vh);
  }
  const bool cplx = U.is_complex();
  auto skew = [](const Tensor& X) { return X.sub(mH(X)); };
  Tensor UhgU = gU.defined() ? skew(matmul(mH(U), gU)) : Tensor();
  Tensor VhgV = gVh.defined() ? skew(matmul(Vh, mH(gVh))) : Tensor();
  Tensor S2 = S.mul(S);
  // E_ij = S_j^2 - S_i^2, ones on the diagonal.
  Tensor E = S2.unsqueeze(-2).sub(S2.unsqueeze(-1)).add(diag_embed(ones_like(S)));
  Tensor Sr = S.to(U.dtype());
  Tensor gA;
  if (gU.defined() && gVh.defined()) {
    gA = UhgU.mul(Sr.unsqueeze(-2)).add(Sr.unsqueeze(-1).mul(VhgV)).div(E);
  } else if (gU.defined()) {
    gA = UhgU.div(E).mul(Sr.unsqueeze(-2));
  } else {
    gA = Sr.unsqueeze(-1).mul(VhgV.div(E));
  }
  if (gS.defined()) gA = gA.add(diag_embed(gS.to(gA.dtype())));
  if (cplx && gU.defined()) {
    gA = gA.add(diag_embed(UhgU.diagonal(0, -2, -1).div(Sr.mul(Scalar(2.0)))));
  }
  if (m > n && gU.defined()) {
    gA = matmul(U, gA);
    Tensor gUSinv = gU.div(Sr.unsqueeze(-2));
    gA = gA.add(gUSinv).sub(matmul(U, matmul(mH(U), gUSinv)));
    return matmul(gA, Vh);
  }
  if (m < n && gVh.defined()) {
    gA = matmul(gA, Vh);
    Tensor SinvgVh = gVh.div(Sr.unsqueeze(-1));
    gA = gA.add(SinvgVh).sub(matmul(matmul(SinvgVh, mH(Vh)), Vh));
    return matmul(U, gA);
  }
  return m >= n ? matmul(U, matmul(gA, Vh)) : matmul(matmul(U, gA), Vh);
}

Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V,
                    bool hermitian) {
  Tensor Vh = mH(V);
  if (!gV.defined()) {
    if (!gL.defined()) return Tensor();
    Tensor gl = gL.to(V.dtype());
    if (hermitian) return matmul(V.mul(gl.unsqueeze(-2)), Vh);
    return linalg::solve(Vh, gl.unsqueeze(-1).mul(Vh));
  }
  Tensor VhgV = matmul(Vh, gV);
  if (hermitian) {
    VhgV = VhgV.sub(mH(VhgV)).mul(Scalar(0.5));
  } else {
    Tensor d = real(VhgV.diagonal(0, -2, -1)).to(V.dtype());
    VhgV = VhgV.sub(matmul(Vh, V.mul(d.unsqueeze(-2))));
  }
  Tensor Lc = L.conj().to(V.dtype());
  // E_ij = conj(L_j) - conj(L_i), ones on the diagonal.
  Tensor E = Lc.unsqueeze(-2).sub(Lc.unsqueeze(-1)).add(diag_embed(ones_like(Lc)));
  Tensor gA = VhgV.div(E);
  // The diagonal of VhgV / E is not meaningful: it is replaced by gL (or zero).
  gA = gA.sub(diag_embed(gA.diagonal(0, -2, -1)));
  if (gL.defined()) gA = gA.add(diag_embed(gL.to(gA.dtype())));
  if (hermitian) return matmul(V, matmul(gA, Vh));
  return linalg::solve(Vh, matmul(gA, Vh));
}

Tensor lu_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L,
                   const Tensor& U, bool pivot) {
  if (!gL.defined() && !gU.defined()) return Tensor();
  const int64_t m = L.size(-2), n = U.size(-1), k = std::min(m, n);
  using linalg::solve_triangular;
  Tensor gA;
  if (m == n) {
    if (gL.defined()) gA = tril(matmul(mH(L), gL), -1);
    if (gU.defined()) gA = add_defined(gA, triu(matmul(gU, mH(U))));
    gA = solve_triangular(mH(U), gA, false, false, false);
    gA = solve_triangular(mH(L), gA, true, true, true);
  } else if (m < n) {
    Tensor U1 = U.narrow(-1, 0, k);
    if (gL.defined()) gA = matmul(mH(L), gL);
    if (gU.defined()) gA = add_defined(gA, matmul(triu(gU), mH(U)).neg());
    gA = solve_triangular(mH(U1), tril(gA, -1), false, false, false);
    if (gU.defined()) {
      gA = cat({gA.add(triu(gU.narrow(-1, 0, k))), gU.narrow(-1, k, n - k)}, -1);
    }
    gA = solve_triangular(mH(L), gA, true, true, true);
    if (!gU.defined()) gA = cat({gA, zeros_like(U.narrow(-1, k, n - k))}, -1);
  } else {
    Tensor L1 = L.narrow(-2, 0, k);
    if (gU.defined()) gA = matmul(gU, mH(U));
    if (gL.defined()) gA = add_defined(gA, matmul(mH(L), tril(gL, -1)).neg());
    gA = solve_triangular(mH(L1), triu(gA), true, true, true);
    if (gL.defined()) {
      gA = cat({gA.add(tril(gL.narrow(-2, 0, k), -1)), gL.narrow(-2, k, m - k)}, -2);
    }
    gA = solve_triangular(mH(U), gA, false, false, false);
    if (!gL.defined()) gA = cat({gA, zeros_like(L.narrow(-2, k, m - k))}, -2);
  }
  return pivot ? matmul(P, gA) : gA;
}

Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1);
  Tensor pinvAh = mH(pinvA), gradh = mH(grad);
  if (m <= n) {
    Tensor K = matmul(gradh, pinvA);
    Tensor KpinvAh = matmul(K, pinvAh);
    return mH(matmul(pinvA, K))
        .neg()
        .add(KpinvAh)
        .sub(matmul(matmul(A, pinvA), KpinvAh))
        .add(matmul(matmul(pinvAh, pinvA), gradh.sub(matmul(K, A))));
  }
  Tensor K = matmul(pinvA, gradh);
  Tensor pinvAhK = matmul(pinvAh, K);
  return mH(matmul(K, pinvA))
      .neg()
      .add(matmul(matmul(gradh.sub(matmul(A, K)), pinvA), pinvAh))
      .add(pinvAhK)
      .sub(matmul(matmul(pinvAhK, pinvA), A));
}

std::tuple<Tensor, Tensor> householder_product_backward(const Tensor& grad, const Tensor& A,
                                                        const Tensor& tau) {
  // dQ = sum_i L_i dH_i R_i with L_i = H_0 ⋯ H_{i-1}, R_i = H_{i+1} ⋯ H_{k-1} E: with
  // K_i = L_iᴴ G R_iᴴ, gtau_i = -v_iᴴ K_i v_i and gv_i = -conj(tau_i) K_i v_i - tau_i K_iᴴ v_i.
  const int64_t m = A.size(-2), n = A.size(-1), k = tau.size(-1);
  // No gradient at all for an empty input or tau, as PyTorch.
  if (A.numel() == 0 || tau.numel() == 0) return {Tensor(), Tensor()};
  const TensorOptions opts = TensorOptions(A.dtype());
  Tensor V = tril(A, -1).add(eye(m, n, opts));
  const size_t kk = size_t(k);
  std::vector<Tensor> v(kk), t(kk), H(kk);
  for (int64_t i = 0; i < k; ++i) {
    v[size_t(i)] = V.select(-1, i).unsqueeze(-1);
    t[size_t(i)] = tau.select(-1, i).unsqueeze(-1).unsqueeze(-1);
    H[size_t(i)] = eye(m, m, opts).sub(t[size_t(i)].mul(matmul(v[size_t(i)], mH(v[size_t(i)]))));
  }
  std::vector<Tensor> R(kk);
  R[size_t(k - 1)] = eye(m, n, opts);
  for (int64_t i = k - 1; i > 0; --i) R[size_t(i - 1)] = matmul(H[size_t(i)], R[size_t(i)]);
  std::vector<Tensor> gv, gt;
  Tensor Lh;  // L_iᴴ; undefined for the identity
  for (int64_t i = 0; i < k; ++i) {
    const Tensor &vi = v[size_t(i)], &ti = t[size_t(i)];
    Tensor K = matmul(grad, mH(R[size_t(i)]));
    if (Lh.defined()) K = matmul(Lh, K);
    gt.push_back(matmul(mH(vi), matmul(K, vi)).neg().squeeze(-1).squeeze(-1));
    gv.push_back(ti.conj().mul(matmul(K, vi)).add(ti.mul(matmul(mH(K), vi))).neg().squeeze(-1));
    Lh = Lh.defined() ? matmul(mH(H[size_t(i)]), Lh) : mH(H[size_t(i)]);
  }
  for (int64_t i = k; i < n; ++i) gv.push_back(zeros_like(A.select(-1, i)));
  return {tril(stack(gv, -1), -1), stack(gt, -1)};
}

}  // namespace ember::linalg_ad
