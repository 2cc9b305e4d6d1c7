// gradcheck / gradgradcheck: the analytical Jacobian (by vjp, and by jvp when asked) against
// central finite differences. Complex tensors are treated as pairs of reals: a vjp with grad
// output g is the gradient of Re<g, f(x)> (PyTorch's conjugate-Wirtinger convention), so the
// row of Re f_i comes from g = e_i and the row of Im f_i from g = i·e_i.

#include <cmath>
#include <sstream>

#include "autograd/meta.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/random.h"

namespace ember::autograd {

namespace {

using Fn = std::function<variable_list(const variable_list&)>;

/// Real coordinates of a tensor: one per element, two (re, im) for complex.
std::vector<double> coords(const Tensor& t) {
  Tensor c = t.detach().resolve_conj().contiguous();
  std::vector<double> r;
  if (c.is_complex()) {
    Tensor d = c.to(kComplexDouble).contiguous();
    auto* p = d.data_ptr<complex<double>>();
    for (int64_t i = 0; i < d.numel(); ++i) {
      r.push_back(p[i].real());
      r.push_back(p[i].imag());
    }
  } else {
    Tensor d = c.to(kDouble).contiguous();
    auto* p = d.data_ptr<double>();
    r.assign(p, p + d.numel());
  }
  return r;
}

int64_t ncoords(const Tensor& t) { return t.numel() * (t.is_complex() ? 2 : 1); }

/// Address of logical element k of a strided tensor.
char* element_ptr(const Tensor& t, int64_t k) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (k % t.size(d)) * t.stride(d);
    k /= t.size(d);
  }
  return static_cast<char*>(t.data_ptr()) + off * int64_t(t.element_size());
}

/// Adds `delta` to real coordinate c of t (in place, without a version bump).
void perturb(const Tensor& t, int64_t c, double delta) {
  bool cplx = t.is_complex();
  char* p = element_ptr(t, cplx ? c / 2 : c);
  switch (t.dtype()) {
    case kDouble:
      *reinterpret_cast<double*>(p) += delta;
      break;
    case kFloat:
      *reinterpret_cast<float*>(p) += float(delta);
      break;
    case kComplexDouble:
      reinterpret_cast<double*>(p)[c % 2] += delta;
      break;
    case kComplexFloat:
      reinterpret_cast<float*>(p)[c % 2] += float(delta);
      break;
    default:
      EMBER_CHECK(false, "[gradcheck] unsupported input dtype ", t.dtype());
  }
}

variable_list diff_outputs(const variable_list& outs) {
  variable_list r;
  for (const Tensor& o : outs)
    if (o.defined() && (o.is_floating_point() || o.is_complex())) r.push_back(o);
  return r;
}

[[noreturn]] void mismatch(const char* kind, size_t oi, size_t ii, int64_t row, int64_t col,
                           double num, double ana) {
  std::ostringstream s;
  s << "[gradcheck] Jacobian mismatch for output " << oi << " with respect to input " << ii << " ("
    << kind << "): at real coordinate (output " << row << ", input " << col << "), numerical "
    << num << " vs analytical " << ana;
  throw Error(s.str());
}

bool close(double a, double b, const GradcheckOptions& o) {
  return std::abs(a - b) <= o.atol + o.rtol * std::abs(a);
}

}  // namespace

bool gradcheck(const Fn& fn, const variable_list& inputs, const GradcheckOptions& opts) {
  try {
    std::vector<size_t> diff_in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].defined() && inputs[i].requires_grad()) diff_in.push_back(i);
      if (inputs[i].defined() && inputs[i].requires_grad() &&
          !(inputs[i].dtype() == kDouble || inputs[i].dtype() == kComplexDouble)) {
        // PyTorch warns; finite differences in float32 are rarely within tolerance.
      }
    }
    EMBER_CHECK(!diff_in.empty(),
                "[gradcheck] gradcheck expects at least one input tensor to "
                "require gradient, but none of the them have requires_grad=True.");
    variable_list outs = diff_outputs(fn(inputs));
    // Numerical Jacobians: num[o][i] is rows(o) x cols(i), row-major.
    std::vector<std::vector<std::vector<double>>> num(
        outs.size(), std::vector<std::vector<double>>(inputs.size()));
    for (size_t ii : diff_in) {
      const Tensor x = inputs[ii].detach();
      int64_t nc = ncoords(x);
      for (size_t oi = 0; oi < outs.size(); ++oi)
        num[oi][ii].assign(size_t(ncoords(outs[oi]) * nc), 0.0);
      for (int64_t c = 0; c < nc; ++c) {
        variable_list plus, minus;
        {
          NoGradGuard ng;
          perturb(x, c, opts.eps);
          plus = diff_outputs(fn(inputs));
          perturb(x, c, -2 * opts.eps);
          minus = diff_outputs(fn(inputs));
          perturb(x, c, opts.eps);
        }
        for (size_t oi = 0; oi < outs.size(); ++oi) {
          auto a = coords(plus[oi]), b = coords(minus[oi]);
          int64_t nr = int64_t(a.size());
          for (int64_t r = 0; r < nr; ++r)
            num[oi][ii][size_t(r * nc + c)] = (a[size_t(r)] - b[size_t(r)]) / (2 * opts.eps);
        }
      }
    }
    variable_list diff_inputs;
    for (size_t ii : diff_in) diff_inputs.push_back(inputs[ii]);
    if (opts.check_backward_ad) {
      for (size_t oi = 0; oi < outs.size(); ++oi) {
        const Tensor& o = outs[oi];
        int64_t nr = ncoords(o);
        for (int64_t r = 0; r < nr; ++r) {
          Tensor g = zeros_like(o);
          {
            NoGradGuard ng;
            Tensor flat = g.view({-1});
            if (o.is_complex())
              flat[r / 2].fill_(r % 2 ? Scalar(complex<double>(0, 1)) : Scalar(1.0));
            else
              flat[r].fill_(1.0);
          }
          variable_list gi = grad({o}, diff_inputs, {g}, true, false, true);
          for (size_t k = 0; k < diff_in.size(); ++k) {
            size_t ii = diff_in[k];
            int64_t nc = ncoords(inputs[ii]);
            std::vector<double> ana =
                gi[k].defined() ? coords(gi[k]) : std::vector<double>(size_t(nc), 0.0);
            for (int64_t c = 0; c < nc; ++c) {
              double n = num[oi][ii][size_t(r * nc + c)];
              if (!close(n, ana[size_t(c)], opts))
                mismatch("backward", oi, ii, r, c, n, ana[size_t(c)]);
            }
          }
        }
      }
    }
    if (opts.check_forward_ad) {
      for (size_t k = 0; k < diff_in.size(); ++k) {
        size_t ii = diff_in[k];
        int64_t nc = ncoords(inputs[ii]);
        for (int64_t c = 0; c < nc; ++c) {
          forward_ad::dual_level lvl;
          variable_list duals = inputs;
          Tensor t = zeros_like(inputs[ii]);
          {
            NoGradGuard ng;
            Tensor flat = t.view({-1});
            if (t.is_complex())
              flat[c / 2].fill_(c % 2 ? Scalar(complex<double>(0, 1)) : Scalar(1.0));
            else
              flat[c].fill_(1.0);
          }
          duals[ii] = forward_ad::make_dual(inputs[ii].detach(), t);
          variable_list o2 = diff_outputs(fn(duals));
          for (size_t oi = 0; oi < o2.size(); ++oi) {
            Tensor tan = forward_ad::unpack_dual(o2[oi]).second;
            int64_t nr = ncoords(o2[oi]);
            std::vector<double> ana =
                tan.defined() ? coords(tan) : std::vector<double>(size_t(nr), 0.0);
            for (int64_t r = 0; r < nr; ++r) {
              double n = num[oi][ii][size_t(r * nc + c)];
              if (!close(n, ana[size_t(r)], opts))
                mismatch("forward AD", oi, ii, r, c, n, ana[size_t(r)]);
            }
          }
        }
      }
    }
    return true;
  } catch (const Error&) {
    if (opts.raise_exception) throw;
    return false;
  }
}

bool gradgradcheck(const Fn& fn, const variable_list& inputs, const GradcheckOptions& opts) {
  variable_list outs;
  {
    NoGradGuard ng;
    outs = diff_outputs(fn(inputs));
  }
  // Random grad outputs (seeded so a failure reproduces), themselves differentiated.
  Generator gen;
  gen.manual_seed(0);
  variable_list gos;
  for (const Tensor& o : outs) gos.push_back(randn(o.sizes(), gen, o.options()).requires_grad_());
  size_t n_in = inputs.size();
  std::vector<size_t> diff_in;
  for (size_t i = 0; i < n_in; ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) diff_in.push_back(i);
  Fn vjp_fn = [&](const variable_list& args) {
    // gradcheck's finite differences call this under no-grad; the vjp needs a graph.
    AutoGradMode on(true);
    variable_list xs(args.begin(), args.begin() + long(n_in));
    variable_list gs(args.begin() + long(n_in), args.end());
    variable_list o = diff_outputs(fn(xs));
    variable_list din;
    for (size_t i : diff_in) din.push_back(xs[i]);
    variable_list r = grad(o, din, gs, true, true, true);
    variable_list res;
    for (size_t k = 0; k < r.size(); ++k) res.push_back(r[k].defined() ? r[k] : zeros_like(din[k]));
    return res;
  };
  variable_list all = inputs;
  all.insert(all.end(), gos.begin(), gos.end());
  GradcheckOptions o2 = opts;
  o2.check_forward_ad = false;
  return gradcheck(vjp_fn, all, o2);
}

}  // namespace ember::autograd
