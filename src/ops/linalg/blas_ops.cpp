// Matrix products. Every product funnels into `gemm_core`, a batched C = beta*C + alpha*A·B on
// (batch, row, column) element strides run by strided_gemm_stub: operands whose strides fit a
// BLAS layout (plain or transposed, with the conj bit folded into the op) are passed without a
// copy; only operands that fit neither layout are copied. float16/bfloat16 accumulate in float32
// (Note [16-bit float GEMM] in kernels/cpu/linalg/strided_gemm.cpp), integers run through the
// blocked kernel in kernels/cpu/gemm.cpp.
#include <algorithm>
#include <climits>
#include <complex>
#include <limits>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/blas.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "kernels/stubs/blas.h"
#include "ops/call_path.h"
#include "ops/elementwise/elementwise_core.h"

namespace ember {

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

/// The conjugate transpose of the last two dims (a lazy conj on complex tensors).
Tensor mH(const Tensor& t) { return t.mT().conj(); }

Scalar conj_scalar(const Scalar& a) {
  return a.isComplex() ? Scalar(std::conj(a.toComplexDouble())) : a;
}

bool is_one(const Scalar& a) { return a.equal(Scalar(int64_t(1))); }

/// `t * s`, skipping the multiply when s is 1.
Tensor scale(const Tensor& t, const Scalar& s) { return is_one(s) ? t : t.mul(s); }

/// Sum of the defined terms (undefined when none is).
Tensor add_defined(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return a.add(b);
}

/// The jvp of a product f(x, y) linear in each of inputs i and j: f(tx, y) + f(x, ty).
template <class F>
Tensor bilinear_jvp(JvpCtx& c, size_t i, size_t j, F f) {
  Tensor r;
  if (c.tangents[i].defined()) r = f(c.tangents[i], c.inputs[j]);
  if (c.tangents[j].defined()) r = add_defined(r, f(c.inputs[i], c.tangents[j]));
  if (!r.defined()) r = zeros_like(c.outputs[0]);
  return r;
}

/// The jvp of beta * self + alpha * f(x, y) (inputs 0, 1, 2).
template <class F>
Tensor addprod_jvp(JvpCtx& c, const Scalar& beta, const Scalar& alpha, F f) {
  Tensor r;
  if (c.tangents[1].defined() || c.tangents[2].defined())
    r = scale(bilinear_jvp(c, 1, 2, f), alpha);
  if (c.tangents[0].defined() && !(beta.toComplexDouble() == std::complex<double>(0)))
    r = add_defined(r, scale(c.tangents[0], beta).expand(c.outputs[0].sizes()));
  if (!r.defined()) r = zeros_like(c.outputs[0]);
  return r;
}

/// A product of two operands, or the gradient of one operand (from g and the other one).
using Bilinear = Tensor (*)(const Tensor&, const Tensor&);

// The gradients of the products: ga(g, b) for the first operand, gb(a, g) for the second.
Tensor mm_grad_a(const Tensor& g, const Tensor& b) { return mm(g, mH(b)); }
Tensor mm_grad_b(const Tensor& a, const Tensor& g) { return mm(mH(a), g); }

// Note [Column-major product gradients]
// As PyTorch's mm backward, an operand of mm/addmm stored column-major (the transpose of a
// contiguous matrix: nn.Linear's weight.t()) gets a column-major gradient, computed as the
// transposed product. After TBackward the weight's gradient is then contiguous, and the
// accumulation into .grad needs no transposing copy (0.5 ms a step for a 128x1600 weight).
bool col_major(const Tensor& t) {
  return t.dim() == 2 && t.size(0) > 1 && t.size(1) > 1 && t.stride(0) == 1 &&
         t.stride(1) == t.size(0);
}
int64_t col_major_bits(const Tensor& a, const Tensor& b) {
  return (col_major(a) ? 1 : 0) | (col_major(b) ? 2 : 0);
}
Tensor mm_grad_a_cm(const Tensor& g, const Tensor& b) { return mm(b.conj(), g.t()).t(); }
Tensor mm_grad_b_cm(const Tensor& a, const Tensor& g) { return mm(g.t(), a.conj()).t(); }
Tensor bmm_grad_a(const Tensor& g, const Tensor& b) { return bmm(g, mH(b)); }
Tensor bmm_grad_b(const Tensor& a, const Tensor& g) { return bmm(mH(a), g); }
Tensor mv_grad_a(const Tensor& g, const Tensor& v) { return outer(g, v.conj()); }
Tensor mv_grad_b(const Tensor& a, const Tensor& g) { return mv(mH(a), g); }
Tensor dot_grad_a(const Tensor& g, const Tensor& b) { return g.mul(b.conj()); }
Tensor dot_grad_b(const Tensor& a, const Tensor& g) { return g.mul(a.conj()); }

/// Records a bilinear product out = P(a, b) (mm, bmm, mv, dot): grad_a = ga(g, b),
/// grad_b = gb(a, g); tangent P(ta, b) + P(a, tb).
template <Bilinear prod, Bilinear ga, Bilinear gb>
void record_product(OpRecorder& rec, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!rec) return;
  constexpr bool kMM = ga == &mm_grad_a;
  if constexpr (kMM) rec.args(col_major_bits(a, b));
  rec.record(
      out,
      [](VjpCtx& c) {
        const Tensor& g = c.grads[0];
        const int64_t cm = kMM ? c.args().i(0) : 0;  // Note [Column-major product gradients]
        variable_list r(2);
        if (c.needs(0)) r[0] = (cm & 1) ? mm_grad_a_cm(g, c.saved[1]) : ga(g, c.saved[1]);
        if (c.needs(1)) r[1] = (cm & 2) ? mm_grad_b_cm(c.saved[0], g) : gb(c.saved[0], g);
        return r;
      },
      {rec.input_needs_grad(1) ? a : Tensor(), rec.input_needs_grad(0) ? b : Tensor()},
      [](JvpCtx& c) { return variable_list{bilinear_jvp(c, 0, 1, prod)}; });
}

/// Records out = beta·self + alpha·P(m1, m2) (addmm, baddbmm, addmv), gradients as above.
template <Bilinear prod, Bilinear ga, Bilinear gb>
void record_addproduct(OpRecorder& rec, const Tensor& out, const Tensor& m1, const Tensor& m2,
                       const Scalar& beta, const Scalar& alpha) {
  if (!rec) return;
  constexpr bool kMM = ga == &mm_grad_a;
  rec.args(beta, alpha, kMM ? col_major_bits(m1, m2) : int64_t(0));
  rec.record(
      out,
      [](VjpCtx& c) {
        const Scalar &beta = c.args().scalar(0), &alpha = c.args().scalar(1);
        const int64_t cm = c.args().i(2);  // Note [Column-major product gradients]
        const Tensor& g = c.grads[0];
        variable_list r(3);
        if (c.needs(0)) r[0] = g.mul(conj_scalar(beta));
        if (c.needs(1))
          r[1] =
              scale((cm & 1) ? mm_grad_a_cm(g, c.saved[1]) : ga(g, c.saved[1]), conj_scalar(alpha));
        if (c.needs(2))
          r[2] =
              scale((cm & 2) ? mm_grad_b_cm(c.saved[0], g) : gb(c.saved[0], g), conj_scalar(alpha));
        return r;
      },
      {rec.input_needs_grad(2) ? m1 : Tensor(), rec.input_needs_grad(1) ? m2 : Tensor()},
      [](JvpCtx& c) {
        return variable_list{addprod_jvp(c, c.args().scalar(0), c.args().scalar(1), prod)};
      });
}

/// One operand of a batched product: element strides of the batch, row and column dims.
struct Mat {
  Tensor t;
  int64_t bs, rs, cs;
};

Mat mat2(const Tensor& t) { return {t, 0, t.stride(0), t.stride(1)}; }
Mat mat3(const Tensor& t) { return {t, t.stride(0), t.stride(1), t.stride(2)}; }

/// The operands of a product live on one device (a kernel reads them all from there).
void check_same_device(const char* op, std::initializer_list<Tensor> ts) {
  const Tensor& first = *ts.begin();
  for (const Tensor& t : ts)
    EMBER_CHECK(t.device() == first.device(), "[", op,
                "] expected all tensors to be on the same device, but found at least two "
                "devices, ",
                first.device().str(), " and ", t.device().str(), "!");
}

bool is_zero(const Scalar& s) { return s.toComplexDouble() == std::complex<double>(0, 0); }

bool is_blas_type(ScalarType dt) {
  return dt == kFloat || dt == kDouble || dt == kComplexFloat || dt == kComplexDouble;
}

/// C[b] = beta * C[b] + alpha * A[b]·B[b] for b < batch. C must have unit column stride (or
/// n == 1) and a row stride >= n; it is written in place. Same dtype everywhere.
void gemm_core(const char* op, int64_t batch, int64_t m, int64_t n, int64_t k, Mat a, Mat b,
               const Tensor& c, int64_t cbs, int64_t crs, const Scalar& beta, const Scalar& alpha) {
  check_same_device(op, {a.t, b.t, c});
  if (batch == 0 || m == 0 || n == 0) return;
  const ScalarType dt = c.dtype();
  EMBER_CHECK(dt != kBool, "[", op, "] not implemented for 'Bool'");
  const bool integral = isIntegralType(dt, false);
  if (k == 0) {
    // No products to add: C = beta * C (beta == 0 clears C, NaN included).
    Tensor cv = c.as_strided({batch, m, n}, {cbs, crs, 1});
    if (is_zero(beta)) {
      cv.zero_();
    } else if (!beta.equal(Scalar(int64_t(1)))) {
      cv.mul_(integral ? Scalar(beta.toLong()) : beta);
    }
    return;
  }
  EMBER_CHECK(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX, "[", op,
              "] matrix dims must be below 2^31, got ", m, "x", k, " and ", k, "x", n);
  const bool reduced = dt == kHalf || dt == kBFloat16;
  const bool cuda = c.device().type() == kCUDA;
  if (reduced && c.device().type() != kCPU && !cuda) {
    // float32 products, one rounding at the end (PyTorch accumulates in float32 as well); the
    // CPU kernel takes 16-bit operands as they are (Note [16-bit float GEMM]).
    Tensor cv = c.as_strided({batch, m, n}, {cbs, crs, 1});
    Tensor cf = is_zero(beta) ? empty({batch, m, n}, c.options().dtype(kFloat))
                              : cv.to(kFloat).contiguous();
    auto to_float = [&](const Mat& x, int64_t rows, int64_t cols) {
      // A broadcast batch (stride 0) converts one matrix only.
      if (x.bs == 0) {
        Tensor t = x.t.as_strided({rows, cols}, {x.rs, x.cs}).to(kFloat).contiguous();
        return Mat{t, 0, cols, 1};
      }
      Tensor t = x.t.as_strided({batch, rows, cols}, {x.bs, x.rs, x.cs}).to(kFloat).contiguous();
      return Mat{t, rows * cols, cols, 1};
    };
    Mat am = to_float(a, m, k), bm = to_float(b, k, n);
    gemm_core(op, batch, m, n, k, am, bm, cf, m * n, n, beta, alpha);
    cv.copy_(cf);
    return;
  }
  if (!integral && (!reduced || cuda)) {
    EMBER_CHECK(is_blas_type(dt) || reduced, "[", op, "] not implemented for dtype ",
                dtype_name(dt));
    // An operand that fits neither BLAS layout: one contiguous copy of it (every batch entry).
    // cuBLAS has no conjugate-only op (Note [Row-major GEMM on cuBLAS] in src/cuda/blas.cpp):
    // there a conj operand that is not laid out transposed is resolved in the same copy.
    auto needs_copy = [&](const Mat& x, int64_t rows, int64_t cols) {
      const BlasLayout l = blas_layout(rows, cols, x.rs, x.cs);
      return !l.ok || (cuda && x.t.is_conj() && !l.transposed);
    };
    if (needs_copy(a, m, k)) {
      Tensor v = a.t.as_strided({batch, m, k}, {a.bs, a.rs, a.cs});
      a = {(cuda ? v.resolve_conj() : v).contiguous(), m * k, k, 1};
    }
    if (needs_copy(b, k, n)) {
      Tensor v = b.t.as_strided({batch, k, n}, {b.bs, b.rs, b.cs});
      b = {(cuda ? v.resolve_conj() : v).contiguous(), k * n, n, 1};
    }
  }
  strided_gemm_stub(c.device().type(), a.t, MatStrides{a.bs, a.rs, a.cs}, b.t,
                    MatStrides{b.bs, b.rs, b.cs}, c, cbs, crs, batch, m, n, k, beta, alpha);
}

/// Whether `c` (m×n, possibly batched) can be written by gemm_core directly.
bool writable_c(const Tensor& c) {
  const int64_t d = c.dim();
  const int64_t m = c.size(d - 2), n = c.size(d - 1);
  const int64_t rs = c.stride(d - 2), cs = c.stride(d - 1);
  return !c.is_conj() && (n == 1 || cs == 1) && (m == 1 || rs >= std::max<int64_t>(1, n));
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op,
              "] expected both operands to have the same dtype, "
              "but got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
}

/// A scalar coefficient must be representable in the result dtype's category.
void check_coef(const Scalar& s, ScalarType dt, const char* op, const char* name) {
  if (!isComplexType(dt))
    EMBER_CHECK(!s.isComplex(), "[", op, "] ", name, " = ", s, " cannot be converted to ",
                dtype_name(dt), " without overflow");
}

/// Writes `r` into `out`: same dtype required, an empty out is resized, another shape is an
/// error.
Tensor& assign_out(Tensor& out, const Tensor& r, const char* op) {
  // The result carries history exactly when an input needs a gradient.
  autograd::check_out_not_differentiable(op, {r});
  EMBER_CHECK(out.dtype() == r.dtype(), "[", op, "] expected out tensor to have dtype ",
              dtype_name(r.dtype()), ", but got ", dtype_name(out.dtype()), " instead");
  if (out.sizes() != r.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(r.sizes()));
    resize_output(out, r.sizes());
  }
  return out.copy_(r);
}

/// Whether an out= product is written straight into `out`, saving the copy of a fresh result:
/// a contiguous `out` of the result's shape (`sizes`), dtype and device that aliases no input,
/// with no tensor that requires grad. Anything else computes a fresh result and assign_out copies
/// it in (with its resizing and its errors).
bool writes_into(const Tensor& out, IntArrayRef sizes, std::initializer_list<const Tensor*> ins) {
  if (out.sizes() != sizes || !out.is_contiguous() || out.requires_grad() || out.is_conj())
    return false;
  for (const Tensor* t : ins)
    if (t->requires_grad() || t->dtype() != out.dtype() || t->device() != out.device() ||
        out.is_alias_of(*t))
      return false;
  return true;
}

/// mat1 (m×k) · mat2 (k×n) into a new tensor (or into `dst`, see writes_into), or beta * self +
/// alpha * product.
Tensor addmm_impl(const Tensor* self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                  const Scalar& alpha, const char* op, const Tensor* dst = nullptr) {
  EMBER_CHECK(m1.dim() == 2, "[", op, "] mat1 must be a matrix, got ", m1.dim(),
              "-D tensor of shape ", shape_str(m1.sizes()));
  EMBER_CHECK(m2.dim() == 2, "[", op, "] mat2 must be a matrix, got ", m2.dim(),
              "-D tensor of shape ", shape_str(m2.sizes()));
  check_same_dtype(m1, m2, op);
  EMBER_CHECK(m1.size(1) == m2.size(0), "[", op, "] mat1 and mat2 shapes cannot be multiplied (",
              m1.size(0), "x", m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")");
  const int64_t m = m1.size(0), k = m1.size(1), n = m2.size(1);
  const ScalarType dt = m1.dtype();
  Tensor out = dst ? *dst : empty({m, n}, TensorOptions().dtype(dt).device(m1.device()));
  Scalar b = 0;
  if (self) {
    check_same_dtype(*self, m1, op);
    check_same_device(op, {*self, m1});
    check_coef(beta, dt, op, "beta");
    check_coef(alpha, dt, op, "alpha");
    Tensor s = self->expand({m, n});
    if (!is_zero(beta)) {
      out.copy_(s);
      b = beta;
    }
  }
  gemm_core(op, 1, m, n, k, mat2(m1), mat2(m2), out, 0, n, b, self ? alpha : Scalar(1));
  return out;
}

/// The shape of batch dims `a` and `b` broadcast together.
DimVector broadcast_batch(IntArrayRef a, IntArrayRef b, const char* op) {
  const size_t nd = std::max(a.size(), b.size());
  DimVector r(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t sa = i < nd - a.size() ? 1 : a[i - (nd - a.size())];
    const int64_t sb = i < nd - b.size() ? 1 : b[i - (nd - b.size())];
    EMBER_CHECK(sa == sb || sa == 1 || sb == 1, "[", op, "] the batch dims ", shape_str(a), " and ",
                shape_str(b), " do not broadcast (size ", sa, " vs ", sb, " at batch dim ", i, ")");
    r[i] = sa == 1 ? sb : sa;
  }
  return r;
}

/// Whether all dims but the last of `t` merge into one dim (a view of shape [-1, last]). Size-1
/// dims take any stride, so each dim of size > 1 is compared with the next dim of size > 1: a
/// (2, 1, 8, 8) batch moved to (2, 1, W, H) has a C stride that says nothing about N's.
bool leading_dims_fold(const Tensor& t) {
  int64_t inner = -1;  // the next leading dim of size > 1, going outwards
  for (int64_t i = t.dim() - 2; i >= 0; --i) {
    if (t.size(i) == 1) continue;
    if (inner >= 0 && t.stride(i) != t.stride(inner) * t.size(inner)) return false;
    inner = i;
  }
  return true;
}

/// Stride of the merged leading dims of a foldable `t`: that of the innermost leading dim of size
/// > 1 (any value when they hold one row).
int64_t folded_row_stride(const Tensor& t) {
  for (int64_t i = t.dim() - 2; i >= 0; --i)
    if (t.size(i) != 1) return t.stride(i);
  return t.stride(t.dim() - 2);
}

}  // namespace

// ---- mm / bmm / matmul ----

namespace {
Tensor baddbmm_impl(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
                    const Scalar& alpha, const Tensor* dst = nullptr);
}

Tensor mm(const Tensor& self, const Tensor& mat2) {
  EMBER_OP_CAST(mm, mm, self, mat2);
  OpRecorder rec("mm", {self, mat2});
  Tensor out = addmm_impl(nullptr, self, mat2, 0, 1, "mm");
  record_product<mm, mm_grad_a, mm_grad_b>(rec, out, self, mat2);
  return out;
}

namespace {
/// out = a · b computed in place (writes_into) for 2-D · 2-D (an mm) or 3-D · 3-D operands of
/// one batch size (a bmm) whose inner sizes agree; false, doing nothing, otherwise (the caller's
/// fresh result and assign_out then give the op's own errors).
bool product_into(Tensor& out, const Tensor& a, const Tensor& b, int64_t dims) {
  if (a.dim() != dims || b.dim() != dims || a.size(-1) != b.size(-2)) return false;
  if (dims == 2) {
    if (!writes_into(out, {a.size(0), b.size(1)}, {&a, &b})) return false;
    addmm_impl(nullptr, a, b, 0, 1, "mm", &out);
  } else {
    if (a.size(0) != b.size(0) || !writes_into(out, {a.size(0), a.size(1), b.size(2)}, {&a, &b}))
      return false;
    baddbmm_impl(empty({0}, TensorOptions().dtype(a.dtype()).device(a.device())), a, b, 0, 1, &out);
  }
  out.unsafeGetTensorImpl()->bump_version(dims == 2 ? "mm" : "bmm");
  return true;
}
}  // namespace

Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  EMBER_OP(mm_out, out, self, mat2);
  if (product_into(out, self, mat2, 2)) return out;
  return assign_out(out, mm(self, mat2), "mm");
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  EMBER_OP_CAST(bmm, bmm, self, mat2);
  OpRecorder rec("bmm", {self, mat2});
  Tensor out = baddbmm(empty({0}, TensorOptions().dtype(self.dtype()).device(self.device())), self,
                       mat2, 0, 1);
  record_product<bmm, bmm_grad_a, bmm_grad_b>(rec, out, self, mat2);
  return out;
}

Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  EMBER_OP(bmm_out, out, self, mat2);
  if (product_into(out, self, mat2, 3)) return out;
  return assign_out(out, bmm(self, mat2), "bmm");
}

namespace {
Tensor matmul_impl(const Tensor& a, const Tensor& b);

/// The vjp of matmul for the batched / broadcast shapes (the 1-D and 2-D cases are composites
/// of dot / mv / mm). 1-D operands are treated as a row (a) or a column (b). The args are the
/// operands' shapes: each operand is saved only for the other one's gradient.
variable_list matmul_backward(VjpCtx& c) {
  const IntArrayRef as_ = c.args().ints(0), bs_ = c.args().ints(1);
  const Tensor &a = c.saved[0], &b = c.saved[1];
  const bool a1 = as_.size() == 1, b1 = bs_.size() == 1;
  DimVector a2s(as_), b2s(bs_);
  if (a1) a2s.insert(0, 1);
  if (b1) b2s.push_back(1);
  Tensor g = c.grads[0];
  if (a1) g = g.unsqueeze(-2);
  if (b1) g = g.unsqueeze(-1);
  variable_list r(2);
  if (c.needs(0)) {
    Tensor b2 = b1 ? b.unsqueeze(-1) : b;
    r[0] = autograd::sum_to(matmul(g, mH(b2)), a2s).reshape(as_);
  }
  if (c.needs(1)) {
    Tensor a2 = a1 ? a.unsqueeze(0) : a;
    if (b2s.size() == 2) {
      // One matrix against a batch: fold the batch into the contraction.
      const int64_t k = a2.size(-1), n = b2s[1];
      DimVector as;
      as.assign(g.sizes());
      as[as.size() - 1] = k;
      // Explicit row count: reshape cannot infer -1 when k or n is zero.
      int64_t rows = 1;
      for (size_t i = 0; i + 1 < as.size(); ++i) rows *= as[i];
      r[1] = mm(mH(a2.expand(as).reshape({rows, k})), g.reshape({rows, n})).reshape(bs_);
    } else {
      r[1] = autograd::sum_to(matmul(mH(a2), g), b2s).reshape(bs_);
    }
  }
  return r;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_OP_CAST(matmul, matmul, a, b);
  const int64_t da = a.dim(), db = b.dim();
  // 1-D and 2-D operands go to dot / mv / mm, which record themselves.
  if ((da == 1 || da == 2) && (db == 1 || db == 2)) return matmul_impl(a, b);
  OpRecorder rec("matmul", {a, b});
  Tensor out = matmul_impl(a, b);
  if (rec) {
    rec.args(a.sizes(), b.sizes());
    rec.record(out, matmul_backward,
               {rec.input_needs_grad(1) ? a : Tensor(), rec.input_needs_grad(0) ? b : Tensor()},
               [](JvpCtx& c) {
                 return variable_list{bilinear_jvp(
                     c, 0, 1, [](const Tensor& x, const Tensor& y) { return matmul(x, y); })};
               });
  }
  return out;
}

namespace {
Tensor matmul_impl(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  EMBER_CHECK(da >= 1 && db >= 1,
              "[matmul] both arguments to matmul need to be at least 1D, "
              "but they are ",
              da, "D and ", db, "D");
  check_same_dtype(a, b, "matmul");
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);
  const int64_t k = a.size(-1);
  const int64_t kb = db == 1 ? b.size(0) : b.size(-2);
  EMBER_CHECK(k == kb, "[matmul] shapes ", shape_str(a.sizes()), " and ", shape_str(b.sizes()),
              " cannot be multiplied (", k, " != ", kb, ")");
  if (da >= 3 && db <= 2 && leading_dims_fold(a)) {
    // A batch times one matrix: the batch folds into the rows of one big GEMM, no copy.
    DimVector shape;
    for (int64_t i = 0; i + 1 < da; ++i) shape.push_back(a.size(i));
    int64_t m_all = 1;
    for (int64_t i = 0; i + 1 < da; ++i) m_all *= a.size(i);
    const int64_t n = db == 1 ? 1 : b.size(1);
    if (db == 2) shape.push_back(n);
    Tensor out = empty(shape, TensorOptions().dtype(a.dtype()).device(a.device()));
    Mat am{a, 0, folded_row_stride(a), a.stride(-1)};
    Mat bm = db == 1 ? Mat{b, 0, b.stride(0), 1} : mat2(b);
    gemm_core("matmul", 1, m_all, n, k, am, bm, out, 0, n, 0, 1);
    return out;
  }
  // General case: batch dims broadcast; stride-0 batches are read in place.
  Tensor a2 = da == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = db == 1 ? b.unsqueeze(-1) : b;
  const int64_t m = a2.size(-2), n = b2.size(-1);
  IntArrayRef ba(a2.sizes().data(), a2.dim() - 2), bb(b2.sizes().data(), b2.dim() - 2);
  DimVector batch = broadcast_batch(ba, bb, "matmul");
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  DimVector sa = batch, sb = batch;
  sa.push_back(m);
  sa.push_back(k);
  sb.push_back(k);
  sb.push_back(n);
  Tensor ae = a2.expand(sa).reshape({nb, m, k});
  Tensor be = b2.expand(sb).reshape({nb, k, n});
  DimVector so = batch;
  so.push_back(m);
  so.push_back(n);
  Tensor out = empty(so, TensorOptions().dtype(a.dtype()).device(a.device()));
  gemm_core("matmul", nb, m, n, k, mat3(ae), mat3(be), out, m * n, n, 0, 1);
  if (da == 1) out = out.squeeze(-2);
  if (db == 1) out = out.squeeze(-1);
  return out;
}
}  // namespace

Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  EMBER_OP(matmul_out, out, self, other);
  if ((self.dim() == 2 || self.dim() == 3) && product_into(out, self, other, self.dim()))
    return out;
  return assign_out(out, matmul(self, other), "matmul");
}

Tensor linalg_matmul(const Tensor& self, const Tensor& other) {
  EMBER_OP(linalg_matmul, self, other);
  return matmul(self, other);
}
Tensor& linalg_matmul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  EMBER_OP(linalg_matmul_out, out, self, other);
  if ((self.dim() == 2 || self.dim() == 3) && product_into(out, self, other, self.dim()))
    return out;
  return assign_out(out, matmul(self, other), "linalg.matmul");
}

// ---- addmm / addmv / addr / baddbmm / addbmm ----

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha) {
  EMBER_OP_CAST(addmm, addmm, self, mat1, mat2, beta, alpha);
  OpRecorder rec("addmm", {self, mat1, mat2});
  Tensor out = addmm_impl(&self, mat1, mat2, beta, alpha, "addmm");
  record_addproduct<mm, mm_grad_a, mm_grad_b>(rec, out, mat1, mat2, beta, alpha);
  return out;
}

Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  const Scalar& beta, const Scalar& alpha) {
  EMBER_OP(addmm_out, out, self, mat1, mat2, beta, alpha);
  if (mat1.dim() == 2 && mat2.dim() == 2 &&
      writes_into(out, {mat1.size(0), mat2.size(1)}, {&self, &mat1, &mat2})) {
    addmm_impl(&self, mat1, mat2, beta, alpha, "addmm", &out);
    out.unsafeGetTensorImpl()->bump_version("addmm");
    return out;
  }
  return assign_out(out, addmm(self, mat1, mat2, beta, alpha), "addmm");
}

Tensor baddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha) {
  EMBER_OP_CAST(baddbmm, baddbmm, self, b1, b2, beta, alpha);
  OpRecorder rec("baddbmm", {self, b1, b2});
  Tensor out = baddbmm_impl(self, b1, b2, beta, alpha);
  record_addproduct<bmm, bmm_grad_a, bmm_grad_b>(rec, out, b1, b2, beta, alpha);
  return out;
}

namespace {
Tensor baddbmm_impl(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
                    const Scalar& alpha, const Tensor* dst) {
  const bool plain = self.numel() == 0 && self.dim() == 1 && is_zero(beta);
  const char* op = plain ? "bmm" : "baddbmm";
  EMBER_CHECK(b1.dim() == 3, "[", op, "] batch1 must be a 3D tensor, got ", b1.dim(),
              "-D tensor of shape ", shape_str(b1.sizes()));
  EMBER_CHECK(b2.dim() == 3, "[", op, "] batch2 must be a 3D tensor, got ", b2.dim(),
              "-D tensor of shape ", shape_str(b2.sizes()));
  check_same_dtype(b1, b2, op);
  const int64_t nb = b1.size(0), m = b1.size(1), k = b1.size(2), n = b2.size(2);
  EMBER_CHECK(b2.size(0) == nb && b2.size(1) == k, "[", op,
              "] expected size for first two dimensions of batch2 tensor to be: [", nb, ", ", k,
              "] but got: [", b2.size(0), ", ", b2.size(1), "] (batch1 ", shape_str(b1.sizes()),
              ", batch2 ", shape_str(b2.sizes()), ")");
  Tensor out =
      dst ? *dst : empty({nb, m, n}, TensorOptions().dtype(b1.dtype()).device(b1.device()));
  Scalar b = 0;
  if (!plain) {
    check_same_dtype(self, b1, op);
    check_same_device(op, {self, b1});
    check_coef(beta, b1.dtype(), op, "beta");
    check_coef(alpha, b1.dtype(), op, "alpha");
    Tensor s = self.expand({nb, m, n});
    if (!is_zero(beta)) {
      out.copy_(s);
      b = beta;
    }
  }
  gemm_core(op, nb, m, n, k, mat3(b1), mat3(b2), out, m * n, n, b, alpha);
  return out;
}
}  // namespace

Tensor& baddbmm_out(Tensor& out, const Tensor& self, const Tensor& b1, const Tensor& b2,
                    const Scalar& beta, const Scalar& alpha) {
  EMBER_OP(baddbmm_out, out, self, b1, b2, beta, alpha);
  if (b1.dim() == 3 && b2.dim() == 3 &&
      writes_into(out, {b1.size(0), b1.size(1), b2.size(2)}, {&self, &b1, &b2})) {
    baddbmm_impl(self, b1, b2, beta, alpha, &out);
    out.unsafeGetTensorImpl()->bump_version("baddbmm");
    return out;
  }
  return assign_out(out, baddbmm(self, b1, b2, beta, alpha), "baddbmm");
}

Tensor addbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha) {
  EMBER_OP_CAST(addbmm, addbmm, self, b1, b2, beta, alpha);
  const char* op = "addbmm";
  EMBER_CHECK(b1.dim() == 3, "[", op, "] batch1 must be a 3D tensor, got ", b1.dim(), "-D");
  EMBER_CHECK(b2.dim() == 3, "[", op, "] batch2 must be a 3D tensor, got ", b2.dim(), "-D");
  EMBER_CHECK(b1.size(0) == b2.size(0), "[", op,
              "] batch1 and batch2 must have same number of batches, got ", b1.size(0), " and ",
              b2.size(0));
  EMBER_CHECK(b1.size(2) == b2.size(1), "[", op, "] incompatible matrix sizes for bmm (",
              b1.size(1), "x", b1.size(2), " and ", b2.size(1), "x", b2.size(2), ")");
  // sum_b A[b]·B[b] is one GEMM over the concatenated inner dim: [n, B*k] · [B*k, p].
  const int64_t nb = b1.size(0), m = b1.size(1), k = b1.size(2), n = b2.size(2);
  Tensor a2 = b1.permute({1, 0, 2}).reshape({m, nb * k});
  Tensor c2 = b2.reshape({nb * k, n});
  // Under autograd, a composite of recorded ops (the views above and addmm).
  if (autograd::any_needs_recording({self, b1, b2})) return addmm(self, a2, c2, beta, alpha);
  return addmm_impl(&self, a2, c2, beta, alpha, op);
}

Tensor& addbmm_out(Tensor& out, const Tensor& self, const Tensor& b1, const Tensor& b2,
                   const Scalar& beta, const Scalar& alpha) {
  EMBER_OP(addbmm_out, out, self, b1, b2, beta, alpha);
  return assign_out(out, addbmm(self, b1, b2, beta, alpha), "addbmm");
}

namespace {

Tensor addmv_impl(const Tensor* self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
                  const Scalar& alpha, const char* op) {
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1, "[", op,
              "] vector + matrix @ vector expected, got ", mat.dim(), "-D matrix and ", vec.dim(),
              "-D vector");
  EMBER_CHECK(mat.size(1) == vec.size(0), "[", op, "] size mismatch, got matrix ",
              shape_str(mat.sizes()), " and vector ", shape_str(vec.sizes()));
  check_same_dtype(mat, vec, op);
  const int64_t m = mat.size(0), k = mat.size(1);
  const ScalarType dt = mat.dtype();
  Tensor out = empty({m}, TensorOptions().dtype(dt).device(mat.device()));
  Scalar b = 0;
  if (self) {
    check_same_dtype(*self, mat, op);
    check_same_device(op, {*self, mat});
    check_coef(beta, dt, op, "beta");
    check_coef(alpha, dt, op, "alpha");
    Tensor s = self->expand({m});
    if (!is_zero(beta)) {
      out.copy_(s);
      b = beta;
    }
  }
  gemm_core(op, 1, m, 1, k, mat2(mat), Mat{vec, 0, vec.stride(0), 1}, out, 0, 1, b,
            self ? alpha : Scalar(1));
  return out;
}

/// `a` (1-D) · `b` (1-D) as a 1×k by k×1 product.
Tensor dot_impl(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "[", op, "] 1D tensors expected, but got ", a.dim(),
              "D and ", b.dim(), "D tensors");
  EMBER_CHECK(a.dtype() == b.dtype(), "[", op,
              "] expected both vectors to have same dtype, but found ", dtype_name(a.dtype()),
              " and ", dtype_name(b.dtype()));
  EMBER_CHECK(a.size(0) == b.size(0), "[", op, "] inconsistent tensor size, expected tensor [",
              a.size(0), "] and src [", b.size(0), "] to have the same number of elements");
  Tensor out = empty({}, TensorOptions().dtype(a.dtype()).device(a.device()));
  gemm_core(op, 1, 1, 1, a.size(0), Mat{a, 0, 1, a.stride(0)}, Mat{b, 0, b.stride(0), 1}, out, 0, 1,
            0, 1);
  return out;
}

}  // namespace

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha) {
  EMBER_OP_CAST(addmv, addmv, self, mat, vec, beta, alpha);
  OpRecorder rec("addmv", {self, mat, vec});
  Tensor out = addmv_impl(&self, mat, vec, beta, alpha, "addmv");
  record_addproduct<mv, mv_grad_a, mv_grad_b>(rec, out, mat, vec, beta, alpha);
  return out;
}
Tensor& addmv_out(Tensor& out, const Tensor& self, const Tensor& mat, const Tensor& vec,
                  const Scalar& beta, const Scalar& alpha) {
  EMBER_OP(addmv_out, out, self, mat, vec, beta, alpha);
  return assign_out(out, addmv(self, mat, vec, beta, alpha), "addmv");
}
Tensor mv(const Tensor& self, const Tensor& vec) {
  EMBER_OP_CAST(mv, mv, self, vec);
  OpRecorder rec("mv", {self, vec});
  Tensor out = addmv_impl(nullptr, self, vec, 0, 1, "mv");
  record_product<mv, mv_grad_a, mv_grad_b>(rec, out, self, vec);
  return out;
}
Tensor& mv_out(Tensor& out, const Tensor& self, const Tensor& vec) {
  EMBER_OP(mv_out, out, self, vec);
  return assign_out(out, mv(self, vec), "mv");
}
Tensor dot(const Tensor& self, const Tensor& other) {
  EMBER_OP_CAST(dot, dot, self, other);
  OpRecorder rec("dot", {self, other});
  Tensor out = dot_impl(self, other, "dot");
  record_product<dot, dot_grad_a, dot_grad_b>(rec, out, self, other);
  return out;
}
Tensor& dot_out(Tensor& out, const Tensor& self, const Tensor& other) {
  EMBER_OP(dot_out, out, self, other);
  return assign_out(out, dot(self, other), "dot");
}
Tensor vdot(const Tensor& self, const Tensor& other) {
  EMBER_OP_CAST(vdot, vdot, self, other);
  OpRecorder rec("vdot", {self, other});
  // The conj bit of the first operand turns into a conjugating BLAS op, no copy.
  Tensor out = dot_impl(self.is_complex() ? self.conj() : self, other, "vdot");
  if (rec) {
    // vdot(a, b) = sum(conj(a) * b): grad_a = conj(g) * b, grad_b = g * a.
    rec.record(
        out,
        [](VjpCtx& c) {
          const Tensor& g = c.grads[0];
          variable_list r(2);
          if (c.needs(0)) r[0] = g.conj().mul(c.saved[1]);
          if (c.needs(1)) r[1] = g.mul(c.saved[0]);
          return r;
        },
        {self, other},
        [](JvpCtx& c) {
          return variable_list{
              bilinear_jvp(c, 0, 1, [](const Tensor& x, const Tensor& y) { return vdot(x, y); })};
        });
  }
  return out;
}
Tensor& vdot_out(Tensor& out, const Tensor& self, const Tensor& other) {
  EMBER_OP(vdot_out, out, self, other);
  return assign_out(out, vdot(self, other), "vdot");
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  EMBER_OP(outer, self, vec2);
  EMBER_CHECK(self.dim() == 1, "[outer] expected 1-D argument self, but got ", self.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, "[outer] expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  return mul(self.unsqueeze(1), vec2);
}
Tensor& outer_out(Tensor& out, const Tensor& self, const Tensor& vec2) {
  EMBER_OP(outer_out, out, self, vec2);
  return assign_out(out, outer(self, vec2), "outer");
}
Tensor ger(const Tensor& self, const Tensor& vec2) {
  EMBER_OP(ger, self, vec2);
  return outer(self, vec2);
}
Tensor& ger_out(Tensor& out, const Tensor& self, const Tensor& vec2) {
  EMBER_OP(ger_out, out, self, vec2);
  return assign_out(out, outer(self, vec2), "ger");
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
            const Scalar& alpha) {
  EMBER_OP_CAST(addr, addr, self, vec1, vec2, beta, alpha);
  const char* op = "addr";
  EMBER_CHECK(vec1.dim() == 1, "[addr] expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, "[addr] expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  const ScalarType rt = result_type({self, vec1, vec2});
  if (isIntegralType(rt, true)) {
    EMBER_CHECK(!beta.isFloatingPoint() && !beta.isComplex(),
                "[addr] for integral input "
                "tensors, argument beta must not be a floating point number (got ",
                beta, ")");
    EMBER_CHECK(!alpha.isFloatingPoint() && !alpha.isComplex(),
                "[addr] for integral input "
                "tensors, argument alpha must not be a floating point number (got ",
                alpha, ")");
  }
  check_coef(beta, rt, op, "beta");
  check_coef(alpha, rt, op, "alpha");
  const DimVector shape{vec1.size(0), vec2.size(0)};
  Tensor s = self.expand(shape);
  Tensor prod = outer(vec1.to(rt), vec2.to(rt));
  if (rt == kBool) {
    // Boolean coefficients: (beta && self) || (alpha && vec1 ⊗ vec2).
    Tensor r = alpha.toBool() ? prod : zeros(shape, prod.options().dtype(kBool));
    if (beta.toBool()) r = logical_or(r, s);
    return r.to(kBool);
  }
  Tensor r = alpha.equal(Scalar(int64_t(1))) ? prod : mul(prod, alpha);
  if (!is_zero(beta)) r = add(mul(s.to(rt), beta), r);
  return r.to(rt).expand(shape).contiguous();
}

Tensor& addr_out(Tensor& out, const Tensor& self, const Tensor& vec1, const Tensor& vec2,
                 const Scalar& beta, const Scalar& alpha) {
  EMBER_OP(addr_out, out, self, vec1, vec2, beta, alpha);
  return assign_out(out, addr(self, vec1, vec2, beta, alpha), "addr");
}

// ---- inner / tensordot ----

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  EMBER_OP_CAST(tensordot, tensordot, a, b, dims_a, dims_b);
  const char* op = "tensordot";
  EMBER_CHECK(dims_a.size() == dims_b.size(),
              "[tensordot] both dimension lists should have the "
              "same length, got ",
              dims_a.size(), " and ", dims_b.size());
  check_same_dtype(a, b, op);
  const int64_t na = a.dim(), nbd = b.dim();
  std::vector<bool> ca(size_t(std::max<int64_t>(na, 1)), false),
      cb(size_t(std::max<int64_t>(nbd, 1)), false);
  DimVector pa, pb;
  int64_t ksz = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t da = wrap_dim(dims_a[i], na, op), db = wrap_dim(dims_b[i], nbd, op);
    EMBER_CHECK(a.size(da) == b.size(db),
                "[tensordot] contracted dimensions need to match, but "
                "first has size ",
                a.size(da), " in dim ", da, " and second has size ", b.size(db), " in dim ", db);
    EMBER_CHECK(!ca[size_t(da)] && !cb[size_t(db)], "[tensordot] dim ", da, " or ", db,
                " appears multiple times in the contraction lists");
    ca[size_t(da)] = true;
    cb[size_t(db)] = true;
    ksz *= a.size(da);
  }
  DimVector out_shape, free_a, free_b;
  int64_t msz = 1, nsz = 1;
  for (int64_t i = 0; i < na; ++i)
    if (!ca[size_t(i)]) {
      free_a.push_back(i);
      out_shape.push_back(a.size(i));
      msz *= a.size(i);
    }
  for (int64_t i = 0; i < nbd; ++i)
    if (!cb[size_t(i)]) {
      free_b.push_back(i);
      out_shape.push_back(b.size(i));
      nsz *= b.size(i);
    }
  pa = free_a;
  for (int64_t d : dims_a) pa.push_back(wrap_dim(d, na, op));
  for (int64_t d : dims_b) pb.push_back(wrap_dim(d, nbd, op));
  for (int64_t d : free_b) pb.push_back(d);
  Tensor a2 = a.permute(pa).reshape({msz, ksz});
  Tensor b2 = b.permute(pb).reshape({ksz, nsz});
  return mm(a2, b2).view(out_shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  EMBER_OP_CAST(tensordot_1, tensordot, a, b, dims);
  EMBER_CHECK(dims >= 0, "[tensordot] tensordot expects dims >= 0, but got dims=", dims);
  EMBER_CHECK(dims <= a.dim() && dims <= b.dim(),
              "[tensordot] tensordot expects dims < ndim_a "
              "or ndim_b, but got dims=",
              dims, " for shapes ", shape_str(a.sizes()), " and ", shape_str(b.sizes()));
  DimVector da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a.dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

Tensor& tensordot_out(Tensor& out, const Tensor& a, const Tensor& b, IntArrayRef dims_a,
                      IntArrayRef dims_b) {
  EMBER_OP(tensordot_out, out, a, b, dims_a, dims_b);
  return assign_out(out, tensordot(a, b, dims_a, dims_b), "tensordot");
}

Tensor inner(const Tensor& self, const Tensor& other) {
  EMBER_OP(inner, self, other);
  if (self.dim() == 0 || other.dim() == 0) return mul(self, other);
  EMBER_CHECK(self.size(-1) == other.size(-1),
              "[inner] the last dimension must match on both "
              "input tensors but got shapes ",
              shape_str(self.sizes()), " and ", shape_str(other.sizes()));
  const int64_t last_a = self.dim() - 1, last_b = other.dim() - 1;
  return tensordot(self, other, IntArrayRef(&last_a, 1), IntArrayRef(&last_b, 1));
}

Tensor& inner_out(Tensor& out, const Tensor& self, const Tensor& other) {
  EMBER_OP(inner_out, out, self, other);
  return assign_out(out, inner(self, other), "inner");
}

// ---- kron / cross / trace ----

Tensor kron(const Tensor& self, const Tensor& other) {
  EMBER_OP(kron, self, other);
  // kron(a, b) over interleaved dims: a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...] reshaped.
  const int64_t nd = std::max(self.dim(), other.dim());
  DimVector sa, sb, so;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t x = i < nd - self.dim() ? 1 : self.size(i - (nd - self.dim()));
    const int64_t y = i < nd - other.dim() ? 1 : other.size(i - (nd - other.dim()));
    sa.push_back(x);
    sa.push_back(1);
    sb.push_back(1);
    sb.push_back(y);
    so.push_back(x * y);
  }
  return mul(self.reshape(sa), other.reshape(sb)).reshape(so);
}

Tensor& kron_out(Tensor& out, const Tensor& self, const Tensor& other) {
  EMBER_OP(kron_out, out, self, other);
  return assign_out(out, kron(self, other), "kron");
}

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  EMBER_OP(linalg_cross, self, other, dim);
  const char* op = "linalg.cross";
  EMBER_CHECK(self.dim() == other.dim(),
              "[linalg.cross] inputs must have the same number of "
              "dimensions, got ",
              shape_str(self.sizes()), " and ", shape_str(other.sizes()));
  check_same_dtype(self, other, op);
  EMBER_CHECK(self.dtype() != kBool, "[linalg.cross] not implemented for 'Bool'");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  EMBER_CHECK(self.size(d) == 3 && other.size(d) == 3, "[linalg.cross] inputs dimension ", dim,
              " must have length 3, got ", self.size(d), " and ", other.size(d));
  Tensor ins[2] = {self, other};
  DimVector shape = broadcast_all(ArrayRef<Tensor>(ins, 2), op);
  Tensor a = self.expand(shape), b = other.expand(shape);
  auto c = [&](const Tensor& t, int64_t i) { return t.select(d, i); };
  Tensor r0 = sub(mul(c(a, 1), c(b, 2)), mul(c(a, 2), c(b, 1)));
  Tensor r1 = sub(mul(c(a, 2), c(b, 0)), mul(c(a, 0), c(b, 2)));
  Tensor r2 = sub(mul(c(a, 0), c(b, 1)), mul(c(a, 1), c(b, 0)));
  return stack({r0, r1, r2}, d);
}

Tensor& linalg_cross_out(Tensor& out, const Tensor& self, const Tensor& other, int64_t dim) {
  EMBER_OP(linalg_cross_out, out, self, other, dim);
  return assign_out(out, linalg_cross(self, other, dim), "linalg.cross");
}

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  EMBER_OP_CAST(cross, cross, self, other, dim);
  if (dim) return linalg_cross(self, other, *dim);
  // Deprecated default: the first dim of size 3 of the input.
  for (int64_t i = 0; i < self.dim(); ++i)
    if (self.size(i) == 3) return linalg_cross(self, other, i);
  EMBER_THROW(Error, "[cross] no dimension of size 3 in input of shape ", shape_str(self.sizes()));
}

Tensor& cross_out(Tensor& out, const Tensor& self, const Tensor& other,
                  std::optional<int64_t> dim) {
  EMBER_OP(cross_out, out, self, other, dim);
  return assign_out(out, cross(self, other, dim), "cross");
}

Tensor trace(const Tensor& self) {
  EMBER_OP_CAST(trace, trace, self);
  EMBER_CHECK(self.dim() == 2, "[trace] expected a matrix, but got tensor with dim ", self.dim());
  const ScalarType dt = self.dtype();
  EMBER_CHECK(dt != kBool, "[trace] not implemented for 'Bool'");
  const ScalarType rt = isIntegralType(dt, false) ? kLong : dt;
  Tensor x = self.resolve_conj();
  OpRecorder rec("trace", {self});
  Tensor out = empty({}, TensorOptions().dtype(rt).device(self.device()));
  out.fill_(trace_stub(self.device().type(), x));
  if (rec) {
    rec.args(self.size(0), self.size(1));
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t n = c.args().i(0), m = c.args().i(1);
          const Tensor& g = c.grads[0];
          return variable_list{g.mul(eye(n, m, g.options()))};
        },
        {}, [](JvpCtx& c) { return variable_list{trace(c.tangents[0])}; });
  }
  return out;
}

// ---- multi_dot / chain_matmul ----

Tensor linalg_multi_dot(ArrayRef<Tensor> ts) {
  EMBER_OP_CAST(linalg_multi_dot, linalg_multi_dot, ts);
  const char* op = "linalg.multi_dot";
  const size_t n = ts.size();
  EMBER_CHECK(n >= 2, "[linalg.multi_dot] expected at least 2 tensors but got ", n);
  const int64_t d0 = ts[0].dim(), dl = ts[n - 1].dim();
  EMBER_CHECK(d0 == 1 || d0 == 2, "[linalg.multi_dot] the first tensor must be 1D or 2D but got ",
              d0, "D");
  EMBER_CHECK(dl == 1 || dl == 2, "[linalg.multi_dot] the last tensor must be 1D or 2D but got ",
              dl, "D");
  std::vector<Tensor> ms(ts.begin(), ts.end());
  for (size_t i = 1; i + 1 < n; ++i)
    EMBER_CHECK(ms[i].dim() == 2, "[linalg.multi_dot] tensor ", i, " must be 2D but got ",
                ms[i].dim(), "D");
  for (size_t i = 1; i < n; ++i)
    EMBER_CHECK(ms[i].dtype() == ms[0].dtype(),
                "[linalg.multi_dot] all tensors must have the "
                "same dtype but tensor 0 is ",
                dtype_name(ms[0].dtype()), " and tensor ", i, " is ", dtype_name(ms[i].dtype()));
  if (d0 == 1) ms[0] = ms[0].unsqueeze(0);
  if (dl == 1) ms[n - 1] = ms[n - 1].unsqueeze(1);
  for (size_t i = 0; i + 1 < n; ++i)
    EMBER_CHECK(ms[i].size(1) == ms[i + 1].size(0), "[", op, "] tensors ", i, " and ", i + 1,
                " with shapes ", shape_str(ms[i].sizes()), " and ", shape_str(ms[i + 1].sizes()),
                " cannot be multiplied");
  Tensor r;
  if (n == 2) {
    r = mm(ms[0], ms[1]);
  } else {
    // Matrix-chain order by the classic O(n^3) dynamic programme over the dims p[0..n].
    std::vector<double> p(n + 1);
    for (size_t i = 0; i < n; ++i) p[i] = double(ms[i].size(0));
    p[n] = double(ms[n - 1].size(1));
    std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0));
    std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
    for (size_t len = 1; len < n; ++len)
      for (size_t i = 0; i + len < n; ++i) {
        const size_t j = i + len;
        cost[i][j] = std::numeric_limits<double>::infinity();
        for (size_t s = i; s < j; ++s) {
          const double c = cost[i][s] + cost[s + 1][j] + p[i] * p[s + 1] * p[j + 1];
          if (c < cost[i][j]) {
            cost[i][j] = c;
            split[i][j] = s;
          }
        }
      }
    auto chain = [&](auto&& self_fn, size_t i, size_t j) -> Tensor {
      if (i == j) return ms[i];
      const size_t s = split[i][j];
      return mm(self_fn(self_fn, i, s), self_fn(self_fn, s + 1, j));
    };
    r = chain(chain, 0, n - 1);
  }
  if (d0 == 1 && dl == 1) return r.view({});
  if (d0 == 1) return r.squeeze(0);
  if (dl == 1) return r.squeeze(1);
  return r;
}

Tensor& linalg_multi_dot_out(Tensor& out, ArrayRef<Tensor> ts) {
  EMBER_OP(linalg_multi_dot_out, out, ts);
  return assign_out(out, linalg_multi_dot(ts), "linalg.multi_dot");
}

Tensor chain_matmul(ArrayRef<Tensor> ms) {
  EMBER_OP_CAST(chain_matmul, chain_matmul, ms);
  EMBER_CHECK(!ms.empty(), "[chain_matmul] expected one or more matrices");
  for (size_t i = 0; i < ms.size(); ++i)
    EMBER_CHECK(ms[i].dim() == 2, "[chain_matmul] tensor ", i, " has dimension ", ms[i].dim(),
                ", expected 2 instead");
  if (ms.size() == 1) return ms[0].clone();
  return linalg_multi_dot(ms);
}

Tensor& chain_matmul_out(Tensor& out, ArrayRef<Tensor> ms) {
  EMBER_OP(chain_matmul_out, out, ms);
  return assign_out(out, chain_matmul(ms), "chain_matmul");
}

// ---- Tensor methods ----

Tensor Tensor::matmul(const Tensor& other) const { return ember::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& mat2) const { return ember::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return ember::bmm(*this, mat2); }
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta,
                     const Scalar& alpha) const {
  return ember::addmm(*this, m1, m2, beta, alpha);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta,
                     const Scalar& alpha) const {
  return ember::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addr(const Tensor& v1, const Tensor& v2, const Scalar& beta,
                    const Scalar& alpha) const {
  return ember::addr(*this, v1, v2, beta, alpha);
}
Tensor Tensor::addbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta,
                      const Scalar& alpha) const {
  return ember::addbmm(*this, b1, b2, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta,
                       const Scalar& alpha) const {
  return ember::baddbmm(*this, b1, b2, beta, alpha);
}

namespace {
/// In-place `self = r`: the result must have self's shape (no broadcasting of self) and a
/// dtype that self holds exactly.
Tensor& assign_inplace(Tensor& self, const Tensor& r, const char* op) {
  EMBER_CHECK(r.sizes() == self.sizes(), "[", op, "] the result of shape ", shape_str(r.sizes()),
              " does not match the in-place tensor of shape ", shape_str(self.sizes()));
  EMBER_CHECK(r.dtype() == self.dtype(), "[", op, "] result type ", dtype_name(r.dtype()),
              " can't be cast to the desired output type ", dtype_name(self.dtype()));
  return self.copy_(r);
}
}  // namespace

Tensor& Tensor::addmm_(const Tensor& m1, const Tensor& m2, const Scalar& beta,
                       const Scalar& alpha) {
  EMBER_OP(addmm_, *this, m1, m2, beta, alpha);
  // Written straight into self when its layout suits BLAS and it does not alias an operand.
  if (m1.dim() == 2 && m2.dim() == 2 && dim() == 2 && size(0) == m1.size(0) &&
      size(1) == m2.size(1) && m1.size(1) == m2.size(0) && dtype() == m1.dtype() &&
      dtype() == m2.dtype() && (is_cpu() || is_cuda()) && m1.device() == device() &&
      m2.device() == device() && writable_c(*this) && !is_alias_of(m1) && !is_alias_of(m2) &&
      numel() > 0 &&
      (is_blas_type(dtype()) ||
       (is_cpu() ? isIntegralType(dtype(), false) : dtype() == kHalf || dtype() == kBFloat16)) &&
      !autograd::any_needs_recording({*this, m1, m2})) {
    check_coef(beta, dtype(), "addmm_", "beta");
    check_coef(alpha, dtype(), "addmm_", "alpha");
    gemm_core("addmm_", 1, size(0), size(1), m1.size(1), mat2(m1), mat2(m2), *this, 0, stride(0),
              beta, alpha);
    impl_->bump_version("addmm_");
    return *this;
  }
  return assign_inplace(*this, ember::addmm(*this, m1, m2, beta, alpha), "addmm_");
}
Tensor& Tensor::addmv_(const Tensor& mat, const Tensor& vec, const Scalar& beta,
                       const Scalar& alpha) {
  EMBER_OP(addmv_, *this, mat, vec, beta, alpha);
  return assign_inplace(*this, ember::addmv(*this, mat, vec, beta, alpha), "addmv_");
}
Tensor& Tensor::addr_(const Tensor& v1, const Tensor& v2, const Scalar& beta, const Scalar& alpha) {
  EMBER_OP(addr_, *this, v1, v2, beta, alpha);
  return assign_inplace(*this, ember::addr(*this, v1, v2, beta, alpha), "addr_");
}
Tensor& Tensor::addbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta,
                        const Scalar& alpha) {
  EMBER_OP(addbmm_, *this, b1, b2, beta, alpha);
  return assign_inplace(*this, ember::addbmm(*this, b1, b2, beta, alpha), "addbmm_");
}
Tensor& Tensor::baddbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta,
                         const Scalar& alpha) {
  EMBER_OP(baddbmm_, *this, b1, b2, beta, alpha);
  return assign_inplace(*this, ember::baddbmm(*this, b1, b2, beta, alpha), "baddbmm_");
}
Tensor Tensor::mv(const Tensor& vec) const { return ember::mv(*this, vec); }
Tensor Tensor::dot(const Tensor& other) const { return ember::dot(*this, other); }
Tensor Tensor::vdot(const Tensor& other) const { return ember::vdot(*this, other); }
Tensor Tensor::outer(const Tensor& vec2) const { return ember::outer(*this, vec2); }
Tensor Tensor::ger(const Tensor& vec2) const { return ember::ger(*this, vec2); }
Tensor Tensor::inner(const Tensor& other) const { return ember::inner(*this, other); }
Tensor Tensor::kron(const Tensor& other) const { return ember::kron(*this, other); }
Tensor Tensor::cross(const Tensor& other, std::optional<int64_t> dim) const {
  return ember::cross(*this, other, dim);
}
Tensor Tensor::trace() const { return ember::trace(*this); }

}  // namespace ember
