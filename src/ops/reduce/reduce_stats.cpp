// var / std / var_mean / std_mean (Welford on the reduction engine, behind std_var_stub),
// logsumexp and the vector norms (composites of abs, pow and the sums/extrema of reduce_ops.cpp).
#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/ops.h"
#include "kernels/stubs/reduce.h"
#include "ops/call_path.h"
#include "ops/reduce/reduce_core.h"

namespace ember {

using namespace reduce_detail;

Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p) {
  EMBER_OP_CAST(dist, dist, self, other, p);
  return linalg::vector_norm(sub(self, other), p);
}
Tensor Tensor::dist(const Tensor& other, const Scalar& p) const {
  return ember::dist(*this, other, p);
}

namespace {

std::tuple<Tensor, Tensor> var_impl(const Tensor& x0, OptionalIntArrayRef dim,
                                    std::optional<int64_t> correction, bool keepdim, bool take_sqrt,
                                    bool with_mean, const char* op) {
  EMBER_CHECK(x0.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(x0.is_floating_point() || x0.is_complex(), "[", op,
              "] std and var only support "
              "floating point and complex dtypes, got ",
              dtype_name(x0.dtype()));
  const Tensor x = x0.is_conj() ? x0.resolve_conj() : x0;
  const uint64_t mask = dim_mask(x, dim ? *dim : IntArrayRef{}, op);
  const ReduceLayout L = reduce_layout(x, mask, reduced_shape(x, mask, keepdim));
  Tensor out = L.output(toRealValueType(x.dtype()));
  Tensor mean = with_mean ? L.output(x.dtype()) : Tensor();
  std_var_stub(L.input.device().type(), L.input, mask, out, mean, double(correction.value_or(1)),
               take_sqrt);
  return {L.finish(out), with_mean ? L.finish(mean) : Tensor()};
}

std::optional<int64_t> corr(bool unbiased) { return unbiased ? 1 : 0; }

// ---- autograd rules (PyTorch 1.13's var_backward, std_backward, logsumexp_backward,
// norm_backward and their jvps) ----

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

/// real(t) for a complex tensor, t itself otherwise.
Tensor real_part(const Tensor& t) { return t.is_complex() ? real(t) : t; }

struct VarGeom {
  uint64_t mask;
  int64_t nd;
  std::vector<int64_t> dims, sizes;
  double count;
  bool keepdim;
};

/// The geometry recorded as var_rec's first rule arguments.
VarGeom var_geom(const autograd::RuleArgs& a) {
  return VarGeom{uint64_t(a.i(0)), a.i(1), a.ints(2), a.ints(3), a.f(4), a.b(5)};
}

// d var / dx = 2 (x - mean) / (N - correction).
Tensor var_backward(const Tensor& g, const Tensor& x, const VarGeom& G, double correction) {
  const double dof = G.count - correction;
  return (restore_dims(g, G.mask, G.nd, G.keepdim) * Scalar(2.0 / dof)) *
         (x - x.mean(G.dims, true));
}

// As PyTorch: the vjp applied to the tangent, summed (a zero dof gives NaN, not inf).
Tensor var_jvp(const Tensor& t, const Tensor& x, const VarGeom& G, double correction) {
  VarGeom K = G;
  K.keepdim = true;
  if (x.is_complex()) return real(var_backward(t.conj(), x, K, correction)).sum(G.dims, G.keepdim);
  return var_backward(t, x, K, correction).sum(G.dims, G.keepdim);
}

std::tuple<Tensor, Tensor> var_rec(const Tensor& x, OptionalIntArrayRef dim,
                                   std::optional<int64_t> correction, bool keepdim, bool take_sqrt,
                                   bool with_mean, const char* op) {
  OpRecorder rec(op, {x});
  auto [v, m] = var_impl(x, dim, correction, keepdim, take_sqrt, with_mean, op);
  if (rec) {
    const uint64_t mask = dim_mask(x, dim ? *dim : IntArrayRef{}, op);
    rec.args(mask, x.dim(), mask_dims(mask, x.dim()), x.sizes(), double(reduced_count(x, mask)),
             keepdim, double(correction.value_or(1)), take_sqrt, with_mean);
    auto vjp = [](VjpCtx& c) {
      const VarGeom G = var_geom(c.args());
      const double corr = c.args().f(6);
      const bool take_sqrt = c.args().b(7), with_mean = c.args().b(8);
      const Tensor &in = c.saved[0], &res = c.saved[1];
      Tensor gv = c.grads[0];
      // std: d sqrt(v) = dv / (2 std), a zero std gives a zero subgradient.
      if (take_sqrt) gv = where(eq(res, Scalar(0)), Scalar(0.0), gv / (res * Scalar(2.0)));
      Tensor gi = var_backward(gv, in, G, corr);
      if (with_mean)
        gi = gi +
             restore_dims(c.grads[1], G.mask, G.nd, G.keepdim).expand(G.sizes) / Scalar(G.count);
      return variable_list{gi};
    };
    auto jvp = [](JvpCtx& c) {
      const VarGeom G = var_geom(c.args());
      const double corr = c.args().f(6);
      const bool take_sqrt = c.args().b(7), with_mean = c.args().b(8);
      const Tensor &in = c.inputs[0], &res = c.outputs[0];
      const Tensor t = c.tangent_or_zeros(0);
      Tensor tv = var_jvp(t, in, G, corr);
      if (take_sqrt) tv = where(eq(res, Scalar(0)), Scalar(0.0), tv / (res * Scalar(2.0)));
      if (!with_mean) return variable_list{tv};
      return variable_list{tv, t.mean(G.dims, G.keepdim)};
    };
    if (with_mean)
      rec.record(variable_list{v, m}, vjp, {x, v}, jvp);
    else
      rec.record(v, vjp, {x, v}, jvp);
  }
  return {v, m};
}

}  // namespace

Tensor var(const Tensor& self, bool unbiased) {
  EMBER_OP_CAST(var, var, self, unbiased);
  return std::get<0>(var_rec(self, std::nullopt, corr(unbiased), false, false, false, "var"));
}
Tensor var(const Tensor& self, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  EMBER_OP_CAST(var_1, var, self, dim, unbiased, keepdim);
  return std::get<0>(var_rec(self, dim, corr(unbiased), keepdim, false, false, "var"));
}
Tensor var(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction,
           bool keepdim) {
  EMBER_OP_CAST(var_2, var, self, dim, correction, keepdim);
  return std::get<0>(var_rec(self, dim, correction, keepdim, false, false, "var"));
}
Tensor& var_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim,
                std::optional<int64_t> correction, bool keepdim) {
  EMBER_OP(var_out, out, self, dim, correction, keepdim);
  autograd::check_out_not_differentiable("var", {self});
  write_out(out, var(self, dim, correction, keepdim), "var");
  return out;
}
Tensor std(const Tensor& self, bool unbiased) {
  EMBER_OP_CAST(std, std, self, unbiased);
  return std::get<0>(var_rec(self, std::nullopt, corr(unbiased), false, true, false, "std"));
}
Tensor std(const Tensor& self, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  EMBER_OP_CAST(std_1, std, self, dim, unbiased, keepdim);
  return std::get<0>(var_rec(self, dim, corr(unbiased), keepdim, true, false, "std"));
}
Tensor std(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction,
           bool keepdim) {
  EMBER_OP_CAST(std_2, std, self, dim, correction, keepdim);
  return std::get<0>(var_rec(self, dim, correction, keepdim, true, false, "std"));
}
Tensor& std_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim,
                std::optional<int64_t> correction, bool keepdim) {
  EMBER_OP(std_out, out, self, dim, correction, keepdim);
  autograd::check_out_not_differentiable("std", {self});
  write_out(out, ember::std(self, dim, correction, keepdim), "std");
  return out;
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, bool unbiased) {
  EMBER_OP(var_mean, self, unbiased);
  return var_rec(self, std::nullopt, corr(unbiased), false, false, true, "var_mean");
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim, bool unbiased,
                                    bool keepdim) {
  EMBER_OP(var_mean_1, self, dim, unbiased, keepdim);
  return var_rec(self, dim, corr(unbiased), keepdim, false, true, "var_mean");
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim,
                                    std::optional<int64_t> correction, bool keepdim) {
  EMBER_OP(var_mean_2, self, dim, correction, keepdim);
  return var_rec(self, dim, correction, keepdim, false, true, "var_mean");
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, bool unbiased) {
  EMBER_OP(std_mean, self, unbiased);
  return var_rec(self, std::nullopt, corr(unbiased), false, true, true, "std_mean");
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim, bool unbiased,
                                    bool keepdim) {
  EMBER_OP(std_mean_1, self, dim, unbiased, keepdim);
  return var_rec(self, dim, corr(unbiased), keepdim, true, true, "std_mean");
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim,
                                    std::optional<int64_t> correction, bool keepdim) {
  EMBER_OP(std_mean_2, self, dim, correction, keepdim);
  return var_rec(self, dim, correction, keepdim, true, true, "std_mean");
}

// ---- logsumexp ----

namespace {
Tensor logsumexp_impl(const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_CHECK(self.defined(), "[logsumexp] input is undefined");
  EMBER_CHECK(!self.is_complex(), "[logsumexp] does not support complex inputs (got ",
              dtype_name(self.dtype()), ")");
  const Tensor x = isIntegralType(self.dtype(), true) ? self.to(get_default_dtype()) : self;
  const uint64_t mask = dim_mask(x, dim, "logsumexp");
  const DimVector shape = reduced_shape(x, mask, keepdim);
  if (x.numel() == 0) return log(sum(exp(x), dim, keepdim));
  // Subtracting the max keeps exp() in range; an infinite max is replaced by 0 so that
  // inf - inf does not turn the result into NaN.
  Tensor m = amax(x, dim, true);
  m = where(isinf(m), Scalar(0.0), m);
  return log(sum(exp(x - m), dim, true)).add(m).view(shape);
}
}  // namespace

// d logsumexp / dx = exp(x - logsumexp(x)) (softmax over the reduced dims).
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_OP_CAST(logsumexp, logsumexp, self, dim, keepdim);
  OpRecorder rec("logsumexp", {self});
  Tensor out = logsumexp_impl(self, dim, keepdim);
  if (rec) {
    const uint64_t mask = dim_mask(self, dim, "logsumexp");
    const int64_t nd = self.dim();
    rec.args(mask, nd, keepdim, mask_dims(mask, nd));
    rec.record(
        out,
        [](VjpCtx& c) {
          const uint64_t mask = uint64_t(c.args().i(0));
          const int64_t nd = c.args().i(1);
          const bool keepdim = c.args().b(2);
          return variable_list{restore_dims(c.grads[0], mask, nd, keepdim) *
                               exp(c.saved[0] - restore_dims(c.saved[1], mask, nd, keepdim))};
        },
        {self, out},
        [](JvpCtx& c) {
          const uint64_t mask = uint64_t(c.args().i(0));
          const int64_t nd = c.args().i(1);
          const bool keepdim = c.args().b(2);
          const std::vector<int64_t>& dims = c.args().ints(3);
          Tensor w = exp(c.inputs[0] - restore_dims(c.outputs[0], mask, nd, keepdim));
          return variable_list{(w * c.tangent_or_zeros(0)).sum(dims, keepdim)};
        });
  }
  return out;
}
Tensor& logsumexp_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_OP(logsumexp_out, out, self, dim, keepdim);
  autograd::check_out_not_differentiable("logsumexp", {self});
  write_out(out, logsumexp(self, dim, keepdim), "logsumexp");
  return out;
}

// ---- norms ----

namespace {
Tensor vector_norm_compute(const Tensor& self, double p, IntArrayRef dims, bool keepdim,
                           std::optional<ScalarType> dtype, const char* op,
                           bool torch_norm = false) {
  EMBER_CHECK(self.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(self.is_floating_point() || self.is_complex(), "[", op,
              "] Expected a floating "
              "point or complex tensor as input. Got ",
              dtype_name(self.dtype()));
  if (dtype) {
    EMBER_CHECK(isFloatingType(*dtype) || isComplexType(*dtype), "[", op,
                "] dtype should be "
                "floating point or complex, but got ",
                dtype_name(*dtype));
    EMBER_CHECK(isComplexType(*dtype) == self.is_complex(), "[", op, "] dtype should be ",
                self.is_complex() ? "complex" : "real", " for ", dtype_name(self.dtype()),
                " input, but got ", dtype_name(*dtype));
  }
  const Tensor x = dtype ? self.to(*dtype) : self;
  const uint64_t mask = dim_mask(x, dims, op);
  // torch.norm (unlike linalg.vector_norm) gives 0 for an empty input, whatever p is.
  if (torch_norm && x.numel() == 0) return sum(abs(x), dims, keepdim);
  if (p < 0 || std::isinf(p)) {
    bool empty = x.numel() == 0 && (dims.empty() || x.dim() == 0);
    for (int64_t d = 0; d < x.dim(); ++d) empty |= ((mask >> d) & 1) && x.size(d) == 0;
    EMBER_CHECK(!empty, "[", op, "] cannot compute the ", p,
                " norm on an empty tensor because "
                "the operation does not have an identity");
  }
  // Half and bfloat16 are computed in float32 and rounded once.
  const ScalarType rt = toRealValueType(x.dtype());
  if (isReducedFloatingType(rt))
    return vector_norm_compute(abs(x).to(kFloat), p, dims, keepdim, std::nullopt, op, torch_norm)
        .to(rt);
  const Tensor a = abs(x);
  if (std::isinf(p)) {
    if (x.numel() == 0) return sum(a, dims, keepdim);  // only kept zero-size dims remain
    return p > 0 ? amax(a, dims, keepdim) : amin(a, dims, keepdim);
  }
  if (p == 0) return sum(ne(a, Scalar(0)).to(a.dtype()), dims, keepdim);
  if (p == 1) return sum(a, dims, keepdim);
  if (p == 2) return sqrt(sum(a * a, dims, keepdim));
  return pow(sum(pow(a, Scalar(p)), dims, keepdim), Scalar(1.0 / p));
}

// PyTorch 1.13's norm_backward with grad and norm of keepdim shape: a zero norm gives the
// zero subgradient, p = inf shares the gradient among the ties of the largest |x|.
Tensor norm_backward(const Tensor& grad, const Tensor& self, double p, const Tensor& norm,
                     const std::vector<int64_t>& dims) {
  if (p == 0.0) return zeros_like(self).mul(grad);
  if (p == 1.0) return sgn(self) * grad;
  if (p == 2.0) return grad * where(eq(norm, Scalar(0)), Scalar(0.0), self / norm);
  if (std::isinf(p)) {
    const Tensor self_abs = abs(self);
    const Tensor mask = logical_or(eq(self_abs, norm), isnan(self_abs));
    return sgn(self) * ((grad / mask.sum(dims, true)) * mask);
  }
  if (p < 1.0) {
    Tensor scaled =
        sgn(self) * where(eq(self, Scalar(0)), Scalar(0.0), pow(abs(self), Scalar(p - 1)));
    return scaled * grad * pow(norm, Scalar(1 - p));
  }
  Tensor scale_v = where(eq(norm, Scalar(0)), Scalar(0.0), grad / pow(norm, Scalar(p - 1)));
  if (p < 2.0) return sgn(self) * pow(abs(self), Scalar(p - 1)) * scale_v;
  return self * pow(abs(self), Scalar(p - 2)) * scale_v;
}

/// norm_backward for vector_norm_impl's rules, from their args (mask, nd, keepdim, dims, p,
/// dtype): `g` and `norm` have the result's shape, `x0` is the input before the dtype cast.
Tensor norm_weight(const autograd::RuleArgs& a, const Tensor& g, const Tensor& x0,
                   const Tensor& norm) {
  const uint64_t mask = uint64_t(a.i(0));
  const int64_t nd = a.i(1);
  const bool keepdim = a.b(2);
  const std::optional<ScalarType> dtype = opt_dtype(a, 5);
  const Tensor x = dtype ? x0.to(*dtype) : x0;
  return norm_backward(restore_dims(g, mask, nd, keepdim), x, a.f(4),
                       restore_dims(norm, mask, nd, keepdim), a.ints(3));
}

Tensor vector_norm_impl(const Tensor& self, double p, IntArrayRef dims0, bool keepdim,
                        std::optional<ScalarType> dtype, const char* op, bool torch_norm = false) {
  OpRecorder rec(op, {self});
  Tensor out = vector_norm_compute(self, p, dims0, keepdim, dtype, op, torch_norm);
  if (rec) {
    if (torch_norm) rec.set_overload(1);  // torch.norm's NormBackward1 (Note [Node names])
    const uint64_t mask = dim_mask(self, dims0, op);
    const int64_t nd = self.dim();
    rec.args(mask, nd, keepdim, mask_dims(mask, nd), p, dtype);
    rec.record(
        out,
        [](VjpCtx& c) {
          return variable_list{norm_weight(c.args(), c.grads[0], c.saved[0], c.saved[1])};
        },
        {self, out},
        [](JvpCtx& c) {
          const bool keepdim = c.args().b(2);
          const std::vector<int64_t>& dims = c.args().ints(3);
          const double p = c.args().f(4);
          const Tensor& norm = c.outputs[0];
          if (p == 0.0) return variable_list{zeros_like(norm)};
          Tensor w = norm_weight(c.args(), ones_like(norm), c.inputs[0], norm);
          Tensor t = c.tangent_or_zeros(0);
          return variable_list{real_part(w * t.conj()).sum(dims, keepdim).to(norm.dtype())};
        });
  }
  return out;
}
}  // namespace

Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim,
                          bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(linalg_vector_norm, linalg_vector_norm, self, ord, dim, keepdim, dtype);
  EMBER_CHECK(!ord.isComplex(), "[linalg.vector_norm] ord must be a real number");
  return vector_norm_impl(self, ord.toDouble(), dim ? *dim : IntArrayRef{}, keepdim, dtype,
                          "linalg.vector_norm");
}
Tensor& linalg_vector_norm_out(Tensor& out, const Tensor& self, const Scalar& ord,
                               OptionalIntArrayRef dim, bool keepdim,
                               std::optional<ScalarType> dtype) {
  EMBER_OP(linalg_vector_norm_out, out, self, ord, dim, keepdim, dtype);
  autograd::check_out_not_differentiable("linalg.vector_norm", {self});
  write_out(out, linalg_vector_norm(self, ord, dim, keepdim, dtype), "linalg.vector_norm");
  return out;
}
namespace linalg {
Tensor vector_norm(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  EMBER_OP(linalg_vector_norm_1, self, ord, dim, keepdim, dtype);
  return linalg_vector_norm(self, ord, dim, keepdim, dtype);
}
}  // namespace linalg

Tensor norm(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(norm, norm, self, p, dim, keepdim, dtype);
  const double pv = p ? p->toDouble() : 2.0;
  return vector_norm_impl(self, pv, dim, keepdim, dtype, "norm", true);
}
Tensor norm(const Tensor& self, std::string_view p, IntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(norm_1, norm, self, p, dim, keepdim, dtype);
  if (p == "fro") return vector_norm_impl(self, 2.0, dim, keepdim, dtype, "norm", true);
  if (p == "nuc") {
    // Sum of singular values of the matrices spanned by the two dims (the last two by default).
    EMBER_CHECK(self.is_floating_point() || self.is_complex(),
                "[norm] the nuclear norm "
                "expects a floating point or complex input, got ",
                dtype_name(self.dtype()));
    EMBER_CHECK(dim.empty() ? self.dim() == 2 : dim.size() == 2,
                "[norm] the nuclear norm "
                "needs a 2-D input or two dims, got shape ",
                shape_str(self.sizes()), " and dim ", shape_str(dim));
    const Tensor x = dtype ? self.to(*dtype) : self;
    const int64_t d0 = wrap_dim(dim.empty() ? 0 : dim[0], x.dim(), "norm");
    const int64_t d1 = wrap_dim(dim.empty() ? 1 : dim[1], x.dim(), "norm");
    EMBER_CHECK(d0 != d1, "[norm] the nuclear norm needs two different dims, got ", d0, " twice");
    Tensor r = sum(linalg::svdvals(x.movedim({d0, d1}, {-2, -1})), {-1});
    if (keepdim) {
      r = r.unsqueeze(std::min(d0, d1)).unsqueeze(std::max(d0, d1));
    }
    return r;
  }
  EMBER_THROW(Error, "[norm] invalid norm type '", p, "': expected a number, 'fro' or 'nuc'");
}
Tensor norm(const Tensor& self, const char* p, IntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  EMBER_OP_CAST(norm_2, norm, self, p, dim, keepdim, dtype);
  return norm(self, std::string_view(p), dim, keepdim, dtype);
}

// ---- Tensor methods ----

Tensor Tensor::var(bool unbiased) const { return ember::var(*this, unbiased); }
Tensor Tensor::var(OptionalIntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::var(*this, dim, unbiased, keepdim);
}
Tensor Tensor::var(OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim) const {
  return ember::var(*this, dim, correction, keepdim);
}
Tensor Tensor::std(bool unbiased) const { return ember::std(*this, unbiased); }
Tensor Tensor::std(OptionalIntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::std(*this, dim, unbiased, keepdim);
}
Tensor Tensor::std(OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim) const {
  return ember::std(*this, dim, correction, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const {
  return ember::logsumexp(*this, dim, keepdim);
}
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim,
                    std::optional<ScalarType> dtype) const {
  return ember::norm(*this, p, dim, keepdim, dtype);
}

}  // namespace ember
