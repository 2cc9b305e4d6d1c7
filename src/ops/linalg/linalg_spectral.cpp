// Spectral decompositions: svd / svdvals (gesdd), eigh / eigvalsh (syevd / heevd), eig /
// eigvals (geev). Signs and phases of singular and eigen vectors are LAPACK's; only the
// reconstructions (A = U S Vᴴ, A = V diag(w) Vᴴ) and the values are unique.
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

namespace {

/// PyTorch's linalg_eig_jvp: dP = V⁻¹ dA V; dL = diag(dP) (real for Hermitian A); dV = V (dP / E)
/// off the diagonal, E_ij = L_j - L_i, normalised to unit columns when not Hermitian.
std::pair<Tensor, Tensor> eig_jvp(const Tensor& dA_in, const Tensor& L, const Tensor& V,
                                  bool hermitian, bool vectors) {
  Tensor dA = dA_in.to(V.dtype());
  Tensor dP = hermitian ? ember::matmul(linalg_ad::mH(V), ember::matmul(dA, V))
                        : linalg::solve(V, ember::matmul(dA, V));
  Tensor dL = dP.diagonal(0, -2, -1);
  dL = hermitian && dL.is_complex() ? real(dL) : dL.clone();
  if (!vectors) return {dL, Tensor()};
  Tensor Lc = L.to(V.dtype());
  Tensor E = Lc.unsqueeze(-2).sub(Lc.unsqueeze(-1)).add(diag_embed(ones_like(Lc)));
  Tensor r = dP.div(E);
  r = r.sub(diag_embed(r.diagonal(0, -2, -1)));
  Tensor dV = ember::matmul(V, r);
  if (!hermitian) {
    Tensor d = real(ember::matmul(linalg_ad::mH(V), dV).diagonal(0, -2, -1)).to(V.dtype());
    dV = dV.sub(V.mul(d.unsqueeze(-2)));
  }
  return {dL, dV};
}

/// The saved factors, or (under create_graph) factors recomputed as recorded functions of A so
/// the gradient of values-only ops can be differentiated again.
bool recompute_factors() { return GradMode::is_enabled(); }

void check_uplo(std::string_view uplo, const char* op) {
  EMBER_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u", "[", op,
              "] Expected UPLO argument to be 'L' or 'U', but got ", uplo);
}

std::string no_convergence(int info, const char* what) {
  return std::string(
             "The algorithm failed to converge because the input matrix is "
             "ill-conditioned or has too many repeated ") +
         what + " (error code: " + std::to_string(info) + ").";
}

/// The first k columns of u and rows of vh (the reduced factors) when `full`.
std::pair<Tensor, Tensor> narrowed(const Tensor& u, const Tensor& vh, bool full, int64_t k) {
  return full ? std::pair{u.narrow(-1, 0, k), vh.narrow(-2, 0, k)} : std::pair{u, vh};
}

/// (U, S, Vh) through gesdd; `uv` false computes S alone (U, Vh undefined).
std::tuple<Tensor, Tensor, Tensor> svd_kernel(const Tensor& A, bool full, bool uv, const char* op);

// Values alone are differentiated through the vectors, computed only when recording.
std::tuple<Tensor, Tensor, Tensor> svd_impl(const Tensor& A, bool full, bool uv, const char* op) {
  OpRecorder rec(op, {A});
  if (!rec) return svd_kernel(A, full, uv, op);
  auto [U, S, Vh] = svd_kernel(A, full && uv, true, op);
  if (uv) {
    rec.args(full, S.size(-1));
    rec.record(
        {U, S, Vh},
        [](VjpCtx& c) {
          const bool full = c.args().b(0);
          const int64_t k = c.args().i(1);
          auto [u, vh] = narrowed(c.saved[0], c.saved[2], full, k);
          auto [gu, gvh] = narrowed(c.grads[0], c.grads[2], full, k);
          return variable_list{linalg_ad::svd_backward(gu, c.grads[1], gvh, u, c.saved[1], vh)};
        },
        {U, S, Vh});
    return {U, S, Vh};
  }
  rec.record(
      S,
      [](VjpCtx& c) {
        if (recompute_factors()) {
          auto [u, s, vh] = linalg::svd(c.saved[3], false);
          return variable_list{linalg_ad::svd_backward(Tensor(), c.grads[0], Tensor(), u, s, vh)};
        }
        return variable_list{linalg_ad::svd_backward(Tensor(), c.grads[0], Tensor(), c.saved[0],
                                                     c.saved[1], c.saved[2])};
      },
      {U.detach(), S, Vh.detach(), A});
  return {empty_tensor({0}, A.dtype(), A.device()), S, empty_tensor({0}, A.dtype(), A.device())};
}

std::tuple<Tensor, Tensor, Tensor> svd_kernel(const Tensor& A, bool full, bool uv, const char* op) {
  check_matrix(A, op);
  check_dtype(A, op);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), batch = batch_count(A);
  const DimVector bs = batch_shape(A);
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  Tensor W = colmajor_copy(A, A.dtype());
  Tensor S = empty_tensor(cat_shape(bs, {k}), toRealValueType(A.dtype()), A.device());
  Tensor U, Vh;
  if (uv) {
    U = colmajor_empty(cat_shape(bs, {m, ucols}), A.dtype(), A.device());
    Vh = colmajor_empty(cat_shape(bs, {vrows, n}), A.dtype(), A.device());
    if (k == 0) {
      // No singular values: the orthonormal bases are identities (empty when reduced).
      for (Tensor* t : {&U, &Vh}) {
        if (t->numel() == 0) continue;
        t->zero_();
        t->diagonal(0, -2, -1).fill_(Scalar(1));
      }
    }
  }
  std::vector<int> infos(size_t(batch), 0);
  if (k > 0) {
    // gesdd rejects NaN/inf as illegal arguments: report them as PyTorch does (LinAlgError).
    const int64_t bad = linalg_first_nonfinite_stub(A.device().type(), W);
    if (bad >= 0) {
      std::vector<int> bad_infos(size_t(bad) + 1, 0);
      bad_infos.back() = 1;
      raise_infos(bad_infos, A.dim() > 2, op, [](int) {
        return std::string(
            "The algorithm failed to converge because the input matrix "
            "contained non-finite values.");
      });
    }
    linalg_svd_stub(A.device().type(), W, S, U, Vh, uv, full, infos);
  }
  raise_infos(infos, A.dim() > 2, op,
              [](int info) { return no_convergence(info, "singular values"); });
  return {U, S, Vh};
}

std::tuple<Tensor, Tensor> eigh_kernel(const Tensor& A, std::string_view uplo, bool vectors,
                                       const char* op);

std::tuple<Tensor, Tensor> eigh_impl(const Tensor& A, std::string_view uplo, bool vectors,
                                     const char* op) {
  OpRecorder rec(op, {A});
  if (!rec) return eigh_kernel(A, uplo, vectors, op);
  auto [w, V] = eigh_kernel(A, uplo, true, op);
  if (vectors) {
    rec.record(
        {w, V},
        [](VjpCtx& c) {
          return variable_list{
              linalg_ad::eig_backward(c.grads[0], c.grads[1], c.saved[0], c.saved[1], true)};
        },
        {w, V},
        [](JvpCtx& c) {
          auto [dL, dV] = eig_jvp(c.tangents[0], c.outputs[0], c.outputs[1], true, true);
          return variable_list{dL, dV};
        });
    return {w, V};
  }
  rec.args(std::string(uplo));
  rec.record(
      w,
      [](VjpCtx& c) {
        if (recompute_factors()) {
          auto [l, v] = linalg::eigh(c.saved[2], c.args().str(0));
          return variable_list{linalg_ad::eig_backward(c.grads[0], Tensor(), l, v, true)};
        }
        return variable_list{
            linalg_ad::eig_backward(c.grads[0], Tensor(), c.saved[0], c.saved[1], true)};
      },
      {w, V.detach(), A},
      [](JvpCtx& c) {
        return variable_list{eig_jvp(c.tangents[0], c.outputs[0], c.saved[1], true, false).first};
      });
  return {w, empty_tensor({0}, A.dtype(), A.device())};
}

std::tuple<Tensor, Tensor> eigh_kernel(const Tensor& A, std::string_view uplo, bool vectors,
                                       const char* op) {
  check_square(A, op);
  check_dtype(A, op);
  check_uplo(uplo, op);
  const bool upper = uplo == "U" || uplo == "u";
  const int64_t n = A.size(-1), batch = batch_count(A);
  Tensor V = colmajor_copy(A, A.dtype());
  Tensor w = empty_tensor(cat_shape(batch_shape(A), {n}), toRealValueType(A.dtype()), A.device());
  std::vector<int> infos(size_t(batch), 0);
  if (n > 0) linalg_eigh_stub(A.device().type(), V, w, vectors, upper, infos);
  raise_infos(infos, A.dim() > 2, op, [](int info) { return no_convergence(info, "eigenvalues"); });
  return {w, V};
}

std::tuple<Tensor, Tensor> eig_kernel(const Tensor& A, bool vectors, const char* op);

// Complex outputs even for a real A: the node keeps the real part of A's gradient.
std::tuple<Tensor, Tensor> eig_impl(const Tensor& A, bool vectors, const char* op) {
  OpRecorder rec(op, {A});
  if (!rec) return eig_kernel(A, vectors, op);
  auto [w, V] = eig_kernel(A, true, op);
  if (vectors) {
    rec.record(
        {w, V},
        [](VjpCtx& c) {
          return variable_list{
              linalg_ad::eig_backward(c.grads[0], c.grads[1], c.saved[0], c.saved[1], false)};
        },
        {w, V},
        [](JvpCtx& c) {
          auto [dL, dV] = eig_jvp(c.tangents[0], c.outputs[0], c.outputs[1], false, true);
          return variable_list{dL, dV};
        });
    return {w, V};
  }
  rec.record(
      w,
      [](VjpCtx& c) {
        if (recompute_factors()) {
          auto [l, v] = linalg::eig(c.saved[2]);
          return variable_list{linalg_ad::eig_backward(c.grads[0], Tensor(), l, v, false)};
        }
        return variable_list{
            linalg_ad::eig_backward(c.grads[0], Tensor(), c.saved[0], c.saved[1], false)};
      },
      {w, V.detach(), A},
      [](JvpCtx& c) {
        return variable_list{eig_jvp(c.tangents[0], c.outputs[0], c.saved[1], false, false).first};
      });
  return {w, empty_tensor({0}, V.dtype())};
}

std::tuple<Tensor, Tensor> eig_kernel(const Tensor& A, bool vectors, const char* op) {
  check_square(A, op);
  check_dtype(A, op);
  const int64_t n = A.size(-1), batch = batch_count(A);
  const ScalarType cdt = toComplexType(A.dtype());
  Tensor W = colmajor_copy(A, A.dtype());
  Tensor w = empty_tensor(cat_shape(batch_shape(A), {n}), cdt);
  Tensor V = vectors ? colmajor_empty(A.sizes(), cdt) : Tensor();
  std::vector<int> infos(size_t(batch), 0);
  if (n > 0) {
    // geev rejects NaN and inf as illegal arguments (and prints to stderr): check first, with
    // PyTorch's message and type (RuntimeError).
    const int64_t bad = linalg_first_nonfinite_stub(A.device().type(), W);
    EMBER_CHECK(bad < 0, "[", op, "] input tensor should not contain infs or NaNs.");
    linalg_eig_stub(A.device().type(), W, w, V, vectors, infos);
  }
  raise_infos(infos, A.dim() > 2, op, [](int info) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has "
           "too many repeated eigenvalues (error code: " +
           std::to_string(info) + ").";
  });
  return {w, V};
}

}  // namespace

namespace linalg {

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices,
                                       std::optional<std::string_view> driver) {
  EMBER_OP_CAST(linalg_svd, svd, A, full_matrices, driver);
  EMBER_CHECK(!driver.has_value(),
              "[linalg.svd] keyword argument `driver=` is only supported on "
              "CUDA inputs with cuSOLVER backend.");
  return svd_impl(A, full_matrices, true, "linalg.svd");
}

Tensor svdvals(const Tensor& A) {
  EMBER_OP_CAST(linalg_svdvals, svdvals, A);
  return std::get<1>(svd_impl(A, false, false, "linalg.svdvals"));
}

std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view uplo) {
  EMBER_OP_CAST(linalg_eigh, eigh, A, uplo);
  return eigh_impl(A, uplo, true, "linalg.eigh");
}

Tensor eigvalsh(const Tensor& A, std::string_view uplo) {
  EMBER_OP_CAST(linalg_eigvalsh, eigvalsh, A, uplo);
  return std::get<0>(eigh_impl(A, uplo, false, "linalg.eigvalsh"));
}

std::tuple<Tensor, Tensor> eig(const Tensor& A) {
  EMBER_OP_CAST(linalg_eig, eig, A);
  return eig_impl(A, true, "linalg.eig");
}

Tensor eigvals(const Tensor& A) {
  EMBER_OP_CAST(linalg_eigvals, eigvals, A);
  return std::get<0>(eig_impl(A, false, "linalg.eigvals"));
}

}  // namespace linalg

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool some, bool compute_uv) {
  EMBER_OP_CAST(svd, svd, A, some, compute_uv);
  if (!compute_uv) {
    Tensor S = std::get<1>(svd_impl(A, false, false, "svd"));
    const DimVector bs = batch_shape(A);
    const TensorOptions opts = TensorOptions(A.dtype()).device(A.device());
    Tensor U = zeros(cat_shape(bs, {A.size(-2), A.size(-2)}), opts);
    Tensor V = zeros(cat_shape(bs, {A.size(-1), A.size(-1)}), opts);
    return {U, S, V};
  }
  auto [U, S, Vh] = svd_impl(A, !some, true, "svd");
  return {U, S, Vh.mT().conj().resolve_conj()};
}

}  // namespace ember
