// Functions of matrices: det / slogdet / logdet (getrf), pinv and matrix_rank (SVD or eigh),
// matrix_power (repeated squaring), matrix and linalg norms, cond, and matrix_exp (Padé
// scaling and squaring, Higham 2005).
#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "ember/blas.h"
#include "ember/reduce.h"
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

/// Batches of `g` (shape batch) as diagonal matrices n x n.
Tensor diag_of(const Tensor& g, int64_t n) {
  DimVector s;
  s.assign(g.sizes());
  s.push_back(n);
  return diag_embed(g.unsqueeze(-1).expand(s));
}

/// d det = det tr(A⁻¹ dA): gA = g conj(det) A⁻ᴴ; singular matrices go through the SVD,
/// det = det(U) det(Vh) prod(S), whose product rule needs no inverse.
Tensor det_backward(const Tensor& g, const Tensor& det, const Tensor& A) {
  if (A.numel() == 0) return zeros_like(A);
  const int64_t n = A.size(-1);
  Tensor d = diag_of(g.mul(det.conj()), n);
  auto nonsingular = [&](const Tensor& M) { return linalg::solve(mH(M), d); };
  auto singular = [&](const Tensor& M) {
    auto [U, S, Vh] = linalg::svd(M, false);
    Tensor alpha = linalg::det(U).mul(linalg::det(Vh)).conj().mul(g);
    Tensor D =
        linalg_ad::prod_safe_zeros_backward(alpha.unsqueeze(-1), S.to(A.dtype()), S.dim() - 1);
    return ember::matmul(U.mul(D.unsqueeze(-2)), Vh);
  };
  Tensor is_singular = ember::abs(det).lt(Scalar(100.0 * eps_of(A.dtype())));
  if (!is_singular.any().item().toBool()) return nonsingular(A);
  if (is_singular.all().item().toBool()) return singular(A);
  // A batch of both kinds: each path sees a harmless stand-in for the matrices it skips.
  Tensor mask = is_singular.unsqueeze(-1).unsqueeze(-1);
  Tensor ones_ = ones_like(A.diagonal(0, -2, -1));
  Tensor eye_ = diag_embed(ones_);
  Tensor distinct = diag_embed(ones_.cumsum(-1));
  return ember::where(mask, singular(ember::where(mask, A, distinct)),
                      nonsingular(ember::where(mask, eye_, A)));
}

}  // namespace

namespace {

/// Per matrix: sign (A's dtype) and log|det| (real), from getrf's diagonal and pivots.
std::tuple<Tensor, Tensor> slogdet_impl(const Tensor& A, const char* op) {
  check_square(A, op);
  check_dtype(A, op);
  const DimVector bs = batch_shape(A);
  Tensor LU = colmajor_copy(A, A.dtype());
  Tensor sign = empty_tensor(bs, A.dtype(), A.device());
  Tensor logabs = empty_tensor(bs, toRealValueType(A.dtype()), A.device());
  linalg_slogdet_stub(A.device().type(), LU, sign, logabs);
  return {sign, logabs};
}

/// Singular values (or |eigenvalues| when hermitian) for pinv / matrix_rank.
double default_rtol(const Tensor& A, std::optional<double> atol, std::optional<double> rtol) {
  if (rtol) return *rtol;
  if (atol && *atol > 0) return 0.0;
  return eps_of(A.dtype()) * double(std::max(A.size(-1), A.size(-2)));
}

/// Connects `out` to the graph with a zero derivative: PyTorch's results on these paths (an
/// empty pinv, matrix_power(A, 0)) come from differentiable composites, not fresh tensors.
void record_zero_derivative(OpRecorder& rec, const Tensor& A, const Tensor& out) {
  if (!rec) return;
  rec.args(A.sizes());
  rec.record(
      out, [](VjpCtx& c) { return variable_list{zeros(c.args().ints(0), c.grads[0].options())}; },
      {}, [](JvpCtx& c) { return variable_list{zeros_like(c.outputs[0])}; });
}

void check_pinv_input(const Tensor& A, const char* op) {
  EMBER_CHECK(A.dim() >= 2 && (A.dtype() == kFloat || A.dtype() == kDouble ||
                               A.dtype() == kComplexFloat || A.dtype() == kComplexDouble),
              "[", op,
              "] expected a tensor with 2 or more dimensions of float, double, cfloat "
              "or cdouble types, got ",
              dtype_name(A.dtype()), " of shape ", shape_str(A.sizes()));
}

/// A copy of `x` with dims `d0`, `d1` moved last, as float64 |values| (contiguous).
Tensor abs_double_last(const Tensor& x, int64_t d0, int64_t d1) {
  return ember::abs(x.movedim({d0, d1}, {-2, -1})).to(kDouble).contiguous();
}

/// Reinserts the two reduced dims (size 1) for keepdim.
Tensor keep_dims(Tensor r, int64_t d0, int64_t d1) {
  const int64_t lo = std::min(d0, d1), hi = std::max(d0, d1);
  return r.unsqueeze(lo).unsqueeze(hi);
}

using NormKind = MatrixNormKind;

NormKind numeric_norm_kind(double ord, const char* op) {
  if (ord == 1) return NormKind::One;
  if (ord == -1) return NormKind::NegOne;
  if (ord == 2) return NormKind::Two;
  if (ord == -2) return NormKind::NegTwo;
  if (ord == INFINITY) return NormKind::Inf;
  if (ord == -INFINITY) return NormKind::NegInf;
  EMBER_THROW(Error, "[", op, "] Order ", ord, " not supported.");
}

NormKind string_norm_kind(std::string_view ord, const char* op) {
  if (ord == "fro") return NormKind::Fro;
  if (ord == "nuc") return NormKind::Nuc;
  EMBER_THROW(Error, "[", op, "] Order ", ord, " not supported.");
}

Tensor matrix_norm_impl(const Tensor& A0, NormKind kind, std::vector<int64_t> dim, bool keepdim,
                        std::optional<ScalarType> dtype, const char* op) {
  EMBER_CHECK(A0.dim() >= 2, "[", op, "] The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(A0.is_floating_point() || A0.is_complex(), "[", op,
              "] Expected a floating point "
              "or complex tensor as input. Got ",
              dtype_name(A0.dtype()));
  EMBER_CHECK(dim.size() == 2, "[", op, "] dim must be a 2-tuple. Got ", dim.size(), " dims");
  const int64_t d0 = wrap_dim(dim[0], A0.dim(), op), d1 = wrap_dim(dim[1], A0.dim(), op);
  EMBER_CHECK(d0 != d1, "[", op, "] dims must be different. Got (", dim[0], ", ", dim[1], ")");
  if (dtype) {
    EMBER_CHECK(isComplexType(*dtype) == A0.is_complex() || isComplexType(*dtype), "[", op,
                "] dtype ", dtype_name(*dtype), " cannot hold the values of a ",
                dtype_name(A0.dtype()), " input");
  }
  const Tensor A = dtype ? A0.to(*dtype) : A0;
  const ScalarType out_dt = toRealValueType(A.dtype());
  const bool spectral = kind == NormKind::Nuc || kind == NormKind::Two || kind == NormKind::NegTwo;
  const Tensor Am = A.movedim({d0, d1}, {-2, -1});
  const int64_t m = Am.size(-2), n = Am.size(-1);
  const bool needs_nonempty = kind != NormKind::Fro && kind != NormKind::Nuc;
  if (needs_nonempty) {
    const bool rows_reduced_by_max = kind == NormKind::Inf || kind == NormKind::NegInf;
    // max/min over an empty dim is undefined (PyTorch raises from amax/amin).
    // IndexError, as PyTorch's amax over an empty dim.
    EMBER_CHECK_INDEX(spectral ? (m > 0 && n > 0) : (rows_reduced_by_max ? m > 0 : n > 0), "[", op,
                      "] Expected a non-empty matrix for this norm, got shape ",
                      shape_str(A.sizes()));
  }
  const DimVector bs = batch_shape(Am);
  Tensor out = empty_tensor(bs, kDouble);
  // The kernel reads the singular values for the spectral norms, |A| otherwise.
  const Tensor x =
      spectral ? linalg::svdvals(Am).to(kDouble).contiguous() : abs_double_last(A, d0, d1);
  linalg_matrix_norm_stub(A.device().type(), x, out, kind);
  Tensor r = out.to(out_dt);
  return keepdim ? keep_dims(r, d0, d1) : r;
}

/// Under autograd, matrix norms are composites of recorded ops (PyTorch's decomposition):
/// vector norms, sums and amax/amin of |A|, or the singular values.
Tensor matrix_norm_dispatch(const Tensor& A0, NormKind kind, std::vector<int64_t> dim, bool keepdim,
                            std::optional<ScalarType> dtype, const char* op) {
  if (!autograd::any_needs_recording({A0})) {
    return matrix_norm_impl(A0, kind, std::move(dim), keepdim, dtype, op);
  }
  EMBER_CHECK(dim.size() == 2, "[", op, "] dim must be a 2-tuple. Got ", dim.size(), " dims");
  EMBER_CHECK(A0.dim() >= 2, "[", op, "] The input tensor A must have at least 2 dimensions.");
  int64_t d0 = wrap_dim(dim[0], A0.dim(), op), d1 = wrap_dim(dim[1], A0.dim(), op);
  EMBER_CHECK(d0 != d1, "[", op, "] dims must be different. Got (", dim[0], ", ", dim[1], ")");
  const Tensor A = dtype ? A0.to(*dtype) : A0;
  if (kind == NormKind::Fro) {
    const int64_t dd[2] = {d0, d1};
    return linalg::vector_norm(A, Scalar(2.0), IntArrayRef(dd, 2), keepdim);
  }
  if (kind == NormKind::Nuc || kind == NormKind::Two || kind == NormKind::NegTwo) {
    Tensor S = linalg::svdvals(A.movedim({d0, d1}, {-2, -1}));
    Tensor r = kind == NormKind::Nuc   ? S.sum({-1})
               : kind == NormKind::Two ? S.amax({-1})
                                       : S.amin({-1});
    return keepdim ? keep_dims(r, d0, d1) : r;
  }
  // 1 / -1: max / min over columns of the column sums of |A|; inf / -inf over rows.
  const bool rows = kind == NormKind::Inf || kind == NormKind::NegInf;
  const bool take_max = kind == NormKind::One || kind == NormKind::Inf;
  if (rows) std::swap(d0, d1);
  Tensor s = ember::abs(A).sum({d0}, keepdim);
  const int64_t d = !keepdim && d0 < d1 ? d1 - 1 : d1;
  return take_max ? s.amax({d}, keepdim) : s.amin({d}, keepdim);
}

// matrix_exp: Note [matrix_exp] in the CPU kernel (kernels/cpu/linalg/matrix_exp.cpp).

}  // namespace

namespace linalg {

Tensor det(const Tensor& A) {
  EMBER_OP(linalg_det, A);
  const char* op = "linalg.det";
  check_square(A, op);
  check_dtype(A, op);
  OpRecorder rec(op, {A});
  Tensor LU = colmajor_copy(A, A.dtype());
  Tensor out = empty_tensor(batch_shape(A), A.dtype(), A.device());
  linalg_det_stub(A.device().type(), LU, out);
  if (rec) {
    rec.record(
        out,
        [](VjpCtx& c) { return variable_list{det_backward(c.grads[0], c.saved[1], c.saved[0])}; },
        {A, out});
  }
  return out;
}

// log|det| moves by re tr(A⁻¹ dA); for complex A the sign's phase by i im tr(A⁻¹ dA).
std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  EMBER_OP(linalg_slogdet, A);
  OpRecorder rec("linalg.slogdet", {A});
  auto [sign, logabs] = slogdet_impl(A, "linalg.slogdet");
  if (rec) {
    rec.record({sign, logabs},
               [](VjpCtx& c) {
                 const Tensor &A = c.saved[0], &sign = c.saved[1];
                 const Tensor &gs = c.grads[0], &gl = c.grads[1];
                 Tensor g = gl.to(A.dtype());
                 if (A.is_complex()) {
                   Tensor im = imag(gs.conj().mul(sign)).neg();
                   g = g.add(im.to(A.dtype()).mul(Scalar(std::complex<double>(0, 1))));
                 }
                 if (A.numel() == 0) return variable_list{zeros_like(A)};
                 return variable_list{linalg::solve(mH(A), diag_of(g, A.size(-1)))};
               },
               {A, sign});
  }
  return {sign, logabs};
}

Tensor pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
            bool hermitian) {
  EMBER_OP(linalg_pinv, A, atol, rtol, hermitian);
  const char* op = "linalg.pinv";
  check_pinv_input(A, op);
  const int64_t m = A.size(-2), n = A.size(-1);
  const double at = atol.value_or(0.0), rt = default_rtol(A, atol, rtol);
  // Under autograd: the composite of recorded ops (svd / eigh, where, matmul).
  if (autograd::any_needs_recording({A}) && A.numel() > 0) {
    return pinv(A, std::optional<Tensor>(full({}, at, TensorOptions(kDouble))),
                std::optional<Tensor>(full({}, rt, TensorOptions(kDouble))), hermitian);
  }
  const DimVector bs = batch_shape(A);
  if (A.numel() == 0) {
    OpRecorder rec(op, {A});
    Tensor out = zeros(cat_shape(bs, {n, m}), TensorOptions(A.dtype()));
    record_zero_derivative(rec, A, out);
    return out;
  }
  if (hermitian) {
    auto [w, V] = eigh(A, "L");
    Tensor Y = colmajor_copy(V, A.dtype());
    linalg_pinv_scale_stub(A.device().type(), Y, w, at, rt, true);
    return batched_gemm(Y, V, false, true);
  }
  auto [U, S, Vh] = linalg::svd(A, false);
  linalg_pinv_scale_stub(A.device().type(), Vh, S, at, rt, false);
  // pinv = Vhᴴ diag(1/s) Uᴴ = (diag(1/s) Vh)ᴴ Uᴴ
  return batched_gemm(Vh, U, true, true);
}

Tensor pinv(const Tensor& A, double rcond, bool hermitian) {
  EMBER_OP(linalg_pinv_1, A, rcond, hermitian);
  return pinv(A, 0.0, rcond, hermitian);
}

Tensor matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                   bool hermitian) {
  EMBER_OP_CAST(linalg_matrix_rank, matrix_rank, A, atol, rtol, hermitian);
  const char* op = "linalg.matrix_rank";
  check_pinv_input(A, op);
  const double at = atol.value_or(0.0), rt = default_rtol(A, atol, rtol);
  const DimVector bs = batch_shape(A);
  Tensor out = zeros(bs, TensorOptions(kLong));
  const int64_t m = A.size(-2), n = A.size(-1);
  if (m == 0 || n == 0) return out;
  Tensor S = (hermitian ? eigvalsh(A, "L") : svdvals(A)).to(kDouble).contiguous();
  linalg_matrix_rank_stub(A.device().type(), S, out, at, rt);
  return out;
}

Tensor matrix_rank(const Tensor& A, double tol, bool hermitian) {
  EMBER_OP_CAST(linalg_matrix_rank_1, matrix_rank, A, tol, hermitian);
  return matrix_rank(A, tol, 0.0, hermitian);
}

namespace {

/// The cutoff max(atol, rtol * smax) with tensor tolerances broadcast against `smax` (the batch
/// of largest singular values), in float64. A missing rtol is eps * max(m, n) where atol is
/// absent or not positive, else 0 (PyTorch's rule, elementwise).
Tensor tensor_cutoff(const Tensor& A, const Tensor& smax, const std::optional<Tensor>& atol,
                     const std::optional<Tensor>& rtol, const char* op) {
  for (const auto* t : {&atol, &rtol}) {
    if (!*t) continue;
    EMBER_CHECK(!(*t)->is_complex(), "[", op,
                "] tolerance tensors of complex type are not "
                "supported, got ",
                dtype_name((*t)->dtype()));
  }
  Tensor at = atol ? atol->to(kDouble) : zeros({}, TensorOptions(kDouble));
  Tensor rt;
  if (rtol) {
    rt = rtol->to(kDouble);
  } else {
    const double eps = eps_of(A.dtype()) * double(std::max(A.size(-1), A.size(-2)));
    rt = atol ? where(gt(at, zeros({}, TensorOptions(kDouble))), Scalar(0.0), Scalar(eps))
              : full({}, eps, TensorOptions(kDouble));
  }
  return maximum(at, mul(rt, smax.to(kDouble)));
}

}  // namespace

namespace {
Tensor pinv_composite(const Tensor& A, const std::optional<Tensor>& atol,
                      const std::optional<Tensor>& rtol, bool hermitian, const char* op);
}

Tensor pinv(const Tensor& A, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
            bool hermitian) {
  EMBER_OP(linalg_pinv_2, A, atol, rtol, hermitian);
  const char* op = "linalg.pinv";
  check_pinv_input(A, op);
  if (A.numel() == 0) return pinv(A, std::optional<double>(0.0), std::optional<double>(0.0));
  // One node with PyTorch's pinv_backward (the composite below would differentiate the
  // thresholded factors instead).
  OpRecorder rec(op, {A});
  Tensor out = pinv_composite(A, atol, rtol, hermitian, op);
  if (rec) {
    rec.record(out,
               [](VjpCtx& c) {
                 return variable_list{linalg_ad::pinv_backward(c.grads[0], c.saved[1], c.saved[0])};
               },
               {A, out});
  }
  return out;
}

namespace {
Tensor pinv_composite(const Tensor& A, const std::optional<Tensor>& atol,
                      const std::optional<Tensor>& rtol, bool hermitian, const char* op) {
  if (hermitian) {
    auto [w, V] = eigh(A, "L");
    Tensor aw = abs(w);
    Tensor tol = tensor_cutoff(A, aw.amax({-1}), atol, rtol, op).unsqueeze(-1);
    Tensor f = where(gt(aw.to(kDouble), tol), reciprocal(w), zeros({}, TensorOptions(w.dtype())));
    return ember::matmul(mul(V, f.unsqueeze(-2)), V.mT().conj());
  }
  auto [U, S, Vh] = linalg::svd(A, false);
  Tensor tol = tensor_cutoff(A, S.select(-1, 0), atol, rtol, op).unsqueeze(-1);
  Tensor f = where(gt(S.to(kDouble), tol), reciprocal(S), zeros({}, TensorOptions(S.dtype())));
  return ember::matmul(mul(Vh.mT().conj(), f.unsqueeze(-2)), U.mT().conj());
}
}  // namespace

Tensor matrix_rank(const Tensor& A, const std::optional<Tensor>& atol,
                   const std::optional<Tensor>& rtol, bool hermitian) {
  EMBER_OP_CAST(linalg_matrix_rank_2, matrix_rank, A, atol, rtol, hermitian);
  const char* op = "linalg.matrix_rank";
  check_pinv_input(A, op);
  if (A.size(-2) == 0 || A.size(-1) == 0) {
    Tensor z = zeros(batch_shape(A), TensorOptions(kLong));
    Tensor tol = tensor_cutoff(A, zeros({}, TensorOptions(kDouble)), atol, rtol, op);
    return zeros(broadcast_shapes(z.sizes(), tol.sizes()), TensorOptions(kLong));
  }
  Tensor S = abs(hermitian ? eigvalsh(A, "L") : svdvals(A)).to(kDouble);
  Tensor tol = tensor_cutoff(A, S.amax({-1}), atol, rtol, op);
  return gt(S, tol.unsqueeze(-1)).sum({-1});
}

Tensor matrix_power(const Tensor& A, int64_t n) {
  EMBER_OP(linalg_matrix_power, A, n);
  const char* op = "linalg.matrix_power";
  check_square(A, op);
  if (n == 0) {
    OpRecorder rec(op, {A});
    Tensor r = zeros(A.sizes(), TensorOptions(A.dtype()));
    if (r.numel() > 0) r.diagonal(0, -2, -1).fill_(Scalar(1));
    record_zero_derivative(rec, A, r);
    return r;
  }
  Tensor base = n < 0 ? inv(A) : A;
  uint64_t e = n < 0 ? uint64_t(-(n + 1)) + 1 : uint64_t(n);
  if (e == 1) return n < 0 ? base : A.clone();
  // Binary powering: at most 2 log2(n) products.
  Tensor result;
  while (e > 0) {
    if (e & 1) result = result.defined() ? ember::matmul(result, base) : base;
    e >>= 1;
    if (e > 0) base = ember::matmul(base, base);
  }
  return result.is_same(A) ? A.clone() : result;
}

Tensor matrix_norm(const Tensor& A, double ord, std::vector<int64_t> dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  EMBER_OP(linalg_matrix_norm, A, ord, dim, keepdim, dtype);
  const char* op = "linalg.matrix_norm";
  return matrix_norm_dispatch(A, numeric_norm_kind(ord, op), std::move(dim), keepdim, dtype, op);
}

Tensor matrix_norm(const Tensor& A, std::string_view ord, std::vector<int64_t> dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  EMBER_OP(linalg_matrix_norm_1, A, ord, dim, keepdim, dtype);
  const char* op = "linalg.matrix_norm";
  return matrix_norm_dispatch(A, string_norm_kind(ord, op), std::move(dim), keepdim, dtype, op);
}

namespace {

/// linalg.norm's rules: `dim` has one or two entries; without it, an `ord` needs a 1-D or 2-D A.
void check_norm_dims(const Tensor& A, const std::optional<std::vector<int64_t>>& dim,
                     bool has_ord) {
  const char* op = "linalg.norm";
  if (dim) {
    EMBER_CHECK(dim->size() == 1 || dim->size() == 2, "[", op,
                "] If dim is specified, it must be of length 1 or 2. Got ", dim->size(), " dims");
  } else if (has_ord) {
    EMBER_CHECK(A.dim() == 1 || A.dim() == 2, "[", op,
                "] If dim is not specified but ord is, the input must be 1D or 2D. Got ", A.dim(),
                "D.");
  }
}

}  // namespace

Tensor norm(const Tensor& A, std::optional<double> ord, std::optional<std::vector<int64_t>> dim,
            bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(linalg_norm, norm, A, ord, dim, keepdim, dtype);
  check_norm_dims(A, dim, ord.has_value());
  if (ord && ((dim && dim->size() == 2) || (!dim && A.dim() == 2))) {
    return matrix_norm(A, *ord, dim ? *dim : std::vector<int64_t>{0, 1}, keepdim, dtype);
  }
  const Scalar o(ord.value_or(2.0));
  if (dim) return vector_norm(A, o, IntArrayRef(*dim), keepdim, dtype);
  return vector_norm(A, o, std::nullopt, keepdim, dtype);
}

Tensor norm(const Tensor& A, std::string_view ord, std::optional<std::vector<int64_t>> dim,
            bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(linalg_norm_1, norm, A, ord, dim, keepdim, dtype);
  check_norm_dims(A, dim, true);
  return matrix_norm(A, ord, dim ? *dim : std::vector<int64_t>{0, 1}, keepdim, dtype);
}

namespace {

Tensor cond_empty(const Tensor& A) {
  return zeros(batch_shape(A), TensorOptions(toRealValueType(A.dtype())));
}

/// norm(A) * norm(inv(A)), with inf for singular matrices (as PyTorch and NumPy).
Tensor cond_by_inverse(const Tensor& A, NormKind kind) {
  auto [Ainv, info] = inv_ex(A);
  if (autograd::any_needs_recording({A})) {
    const std::vector<int64_t> d{-2, -1};
    return ember::mul(matrix_norm_dispatch(A, kind, d, false, std::nullopt, "linalg.cond"),
                      matrix_norm_dispatch(Ainv, kind, d, false, std::nullopt, "linalg.cond"));
  }
  // A singular matrix's inverse is zeroed so its norm is finite (the SVD of an inf-filled matrix
  // is undefined); its condition number is set below.
  linalg_zero_failed_stub(A.device().type(), Ainv, info);
  const std::vector<int64_t> d{-2, -1};
  const char* op = "linalg.cond";
  const Tensor norm_a = matrix_norm_impl(A, kind, d, false, std::nullopt, op);
  Tensor r = ember::mul(norm_a, matrix_norm_impl(Ainv, kind, d, false, std::nullopt, op));
  // Singular: norm(A) * inf, so a zero matrix gives nan, then inf through nan_to_num for all
  // norms but the nuclear one (PyTorch 1.13 skips it there).
  r = ember::where(ember::gt(info, Scalar(0)), ember::mul(norm_a, Scalar(INFINITY)), r);
  if (kind != NormKind::Nuc) r.nan_to_num_(INFINITY, INFINITY, -INFINITY);
  return r;
}

}  // namespace

Tensor cond(const Tensor& A, std::optional<double> p) {
  EMBER_OP_CAST(linalg_cond, cond, A, p);
  const char* op = "linalg.cond";
  EMBER_CHECK(A.dim() >= 2, "[", op, "] The input tensor must have at least 2 dimensions.");
  const double ord = p.value_or(2.0);
  EMBER_CHECK(ord == 2 || ord == -2 || ord == 1 || ord == -1 || std::isinf(ord), "[", op,
              "] linalg.cond got an invalid norm type: ", ord);
  if (A.numel() == 0) {
    check_dtype(A, op);
    if (std::abs(ord) != 2) check_square(A, op);
    return cond_empty(A);
  }
  if (std::abs(ord) == 2) {
    Tensor S = svdvals(A);
    const int64_t k = S.size(-1);
    Tensor smax = S.narrow(-1, 0, 1), smin = S.narrow(-1, k - 1, 1);
    return (ord == 2 ? ember::div(smax, smin) : ember::div(smin, smax)).squeeze(-1);
  }
  check_square(A, op);
  check_dtype(A, op);
  return cond_by_inverse(A, numeric_norm_kind(ord, op));
}

Tensor cond(const Tensor& A, std::string_view p) {
  EMBER_OP_CAST(linalg_cond_1, cond, A, p);
  const char* op = "linalg.cond";
  EMBER_CHECK(A.dim() >= 2, "[", op, "] The input tensor must have at least 2 dimensions.");
  EMBER_CHECK(p == "fro" || p == "nuc", "[", op, "] linalg.cond got an invalid norm type: ", p);
  check_square(A, op);
  check_dtype(A, op);
  if (A.numel() == 0) return cond_empty(A);
  return cond_by_inverse(A, string_norm_kind(p, op));
}

namespace {
/// The differential of exp at A applied to E (adjoint: at Aᴴ), from the upper-right block of
/// exp([[A, E], [0, A]]).
Tensor matrix_exp_differential(const Tensor& A, const Tensor& E, bool adjoint) {
  const int64_t n = A.size(-1);
  Tensor a = adjoint ? mH(A) : A;
  Tensor top = cat({a, E}, -1);
  Tensor bottom = cat({zeros_like(a), a}, -1);
  return linalg::matrix_exp(cat({top, bottom}, -2)).narrow(-2, 0, n).narrow(-1, n, n);
}
Tensor matrix_exp_kernel(const Tensor& A);
}  // namespace

Tensor matrix_exp(const Tensor& A) {
  EMBER_OP(linalg_matrix_exp, A);
  OpRecorder rec("linalg.matrix_exp", {A});
  Tensor out = matrix_exp_kernel(A);
  if (rec) {
    rec.record(
        out,
        [](VjpCtx& c) {
          return variable_list{matrix_exp_differential(c.saved[0], c.grads[0], true)};
        },
        {A},
        [](JvpCtx& c) {
          return variable_list{matrix_exp_differential(c.inputs[0], c.tangents[0], false)};
        });
  }
  return out;
}

namespace {
Tensor matrix_exp_kernel(const Tensor& A) {
  const char* op = "linalg.matrix_exp";
  check_square(A, op);
  if (A.dtype() == kBFloat16 || A.dtype() == kHalf) {
    // PyTorch 1.13 takes bfloat16 (computed here in float32, then rounded) but has no float16
    // kernel; empty inputs of either return early there.
    if (A.numel() == 0) return empty_tensor(A.sizes(), A.dtype());
    EMBER_CHECK(A.dtype() == kBFloat16, "[", op,
                "] \"matrix_exp\" not implemented for 'Half' "
                "(hint: convert the input to float32)");
    return linalg::matrix_exp(A.to(kFloat)).to(kBFloat16);
  }
  check_dtype(A, op);
  // Single precision runs in double and rounds once: squaring amplifies the Padé step's
  // rounding error by the matrix norm, which costs float32 several digits otherwise.
  if (A.dtype() == kFloat || A.dtype() == kComplexFloat) {
    const ScalarType wide = A.dtype() == kFloat ? kDouble : kComplexDouble;
    return linalg::matrix_exp(A.to(wide)).to(A.dtype()).contiguous();
  }
  Tensor X = colmajor_copy(A, A.dtype());
  if (X.numel() == 0) return X;
  linalg_matrix_exp_stub(A.device().type(), X);
  return X;
}
}  // namespace

}  // namespace linalg

// A composite of recorded ops under autograd (slogdet, log, where).
Tensor logdet(const Tensor& A) {
  EMBER_OP(logdet, A);
  auto [sign, logabs] =
      autograd::any_needs_recording({A}) ? linalg::slogdet(A) : slogdet_impl(A, "logdet");
  if (A.is_complex()) return ember::add(ember::log(sign), logabs);
  // A negative determinant has no real logarithm.
  return ember::where(ember::lt(sign, Scalar(0)), Scalar(NAN), logabs);
}

}  // namespace ember

namespace ember {

Tensor Tensor::det() const { return linalg::det(*this); }
Tensor Tensor::logdet() const { return ember::logdet(*this); }
std::tuple<Tensor, Tensor> Tensor::slogdet() const { return linalg::slogdet(*this); }
Tensor Tensor::inverse() const {
  EMBER_OP_CAST(inverse, linalg::inv, *this);
  return linalg::inv(*this);
}
Tensor Tensor::cholesky(bool upper) const { return linalg::cholesky(*this, upper); }
std::tuple<Tensor, Tensor> Tensor::qr(bool some) const { return ember::qr(*this, some); }
std::tuple<Tensor, Tensor, Tensor> Tensor::svd(bool some, bool compute_uv) const {
  return ember::svd(*this, some, compute_uv);
}
Tensor Tensor::pinverse(double rcond) const {
  EMBER_OP_CAST(pinverse, linalg::pinv, *this, rcond);
  return linalg::pinv(*this, rcond);
}
Tensor Tensor::matrix_power(int64_t n) const { return linalg::matrix_power(*this, n); }
Tensor Tensor::matrix_exp() const { return linalg::matrix_exp(*this); }

}  // namespace ember
