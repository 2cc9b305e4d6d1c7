// The distribution samplers of random.h (Gamma, Dirichlet, Poisson, binomial) and the
// implicit-reparameterisation gradients that make Gamma and Dirichlet samples differentiable in
// their concentrations. Samples use Note [Per-element random streams]
// (src/kernels/cpu/creation/random_dist.cpp); dtypes and errors follow PyTorch 1.13's CPU ops.
#include "ember/random.h"
#include "ops/call_path.h"

#include <utility>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "kernels/stubs/random_dist.h"

namespace ember {

using autograd::JvpCtx;
using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

Generator pick_generator(const std::optional<Generator>& gen, Device d) {
  return gen ? *gen : default_generator(d);
}

// `t` expanded to `shape` as a contiguous float64 CPU tensor (the kernels' input form).
Tensor as_double(const Tensor& t, IntArrayRef shape) {
  return t.expand(shape).to(Device(kCPU), kDouble).contiguous();
}

// PyTorch's "\"<kernel>\" not implemented for '<dtype>'" unless `t` is float32 or float64 (and
// bfloat16 when `bf16`).
void check_float(const Tensor& t, const char* op, const char* kernel, bool bf16 = false) {
  ScalarType d = t.dtype();
  EMBER_CHECK(d == kFloat || d == kDouble || (bf16 && d == kBFloat16), "[", op, "] \"", kernel,
              "\" not implemented for '", toString(d), "'");
}

// The dtype check of PyTorch's TensorIterator for ops that take no promotion.
void check_same_dtype(const Tensor& first, const Tensor& other, const char* op) {
  EMBER_CHECK(other.dtype() == first.dtype(), "[", op, "] Found dtype ", toString(other.dtype()),
              " but expected ", toString(first.dtype()));
}

// A CPU output of `shape`, moved to `device` by the caller when needed.
Tensor back_to(Tensor out, Device device) { return device.is_cpu() ? out : out.to(device); }

}  // namespace

Tensor _standard_gamma(const Tensor& alpha, std::optional<Generator> gen) {
  EMBER_OP(_standard_gamma, alpha, gen);
  EMBER_CHECK(alpha.defined(), "[_standard_gamma] undefined tensor");
  check_float(alpha, "_standard_gamma", "gamma_cpu");
  OpRecorder rec("_standard_gamma", {alpha});
  Tensor a = as_double(alpha, alpha.sizes());
  Tensor out = empty_tensor(alpha.sizes(), alpha.dtype(), Device(kCPU));
  Generator g = pick_generator(gen, alpha.device());
  if (out.numel() > 0) standard_gamma_stub(kCPU, out, a, g);
  out = back_to(out, alpha.device());
  if (rec) {
    rec.record(
        out,
        [](VjpCtx& c) {
          return variable_list{c.grads[0].mul(_standard_gamma_grad(c.saved[0], c.saved[1]))};
        },
        {alpha, out},
        [](JvpCtx& c) {
          return variable_list{c.tangents[0].mul(_standard_gamma_grad(c.inputs[0], c.outputs[0]))};
        });
  }
  return out;
}

Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output) {
  EMBER_OP(_standard_gamma_grad, self, output);
  EMBER_CHECK(self.defined() && output.defined(), "[_standard_gamma_grad] undefined tensor");
  check_same_dtype(self, output, "_standard_gamma_grad");
  check_float(self, "_standard_gamma_grad", "_standard_gamma_grad_cpu");
  DimVector shape = broadcast_shapes(self.sizes(), output.sizes());
  Tensor out = empty_tensor(shape, self.dtype(), Device(kCPU));
  if (out.numel() > 0)
    standard_gamma_grad_stub(kCPU, out, as_double(self, shape), as_double(output, shape));
  return back_to(out, self.device());
}

namespace {

// grad_alpha of Dirichlet samples x (PyTorch's Dirichlet rsample backward):
// _dirichlet_grad(x, alpha, total) * (g - Σ x g) over the last dim.
Tensor dirichlet_backward(const Tensor& g, const Tensor& alpha, const Tensor& x) {
  if (alpha.dim() == 0) return zeros_like(alpha);  // one category: x == 1 whatever alpha
  Tensor total = alpha.sum(IntArrayRef{-1}, true).expand_as(alpha);
  Tensor gx = g.sub(x.mul(g).sum(IntArrayRef{-1}, true));
  return _dirichlet_grad(x, alpha, total).mul(gx);
}

}  // namespace

Tensor _sample_dirichlet(const Tensor& alpha, std::optional<Generator> gen) {
  EMBER_OP(_sample_dirichlet, alpha, gen);
  EMBER_CHECK(alpha.defined(), "[_sample_dirichlet] undefined tensor");
  check_float(alpha, "_sample_dirichlet", "dirichlet");
  OpRecorder rec("_sample_dirichlet", {alpha});
  Tensor a = as_double(alpha, alpha.sizes());
  Tensor out = empty_tensor(alpha.sizes(), alpha.dtype(), Device(kCPU));
  const int64_t k = alpha.dim() == 0 ? 1 : alpha.size(-1);
  Generator g = pick_generator(gen, alpha.device());
  if (out.numel() > 0) sample_dirichlet_stub(kCPU, out, a, k, g);
  out = back_to(out, alpha.device());
  if (rec) {
    rec.record(out,
               [](VjpCtx& c) {
                 return variable_list{dirichlet_backward(c.grads[0], c.saved[0], c.saved[1])};
               },
               {alpha, out});
  }
  return out;
}

Tensor _dirichlet_grad(const Tensor& x, const Tensor& alpha, const Tensor& total) {
  EMBER_OP(_dirichlet_grad, x, alpha, total);
  EMBER_CHECK(x.defined() && alpha.defined() && total.defined(),
              "[_dirichlet_grad] undefined tensor");
  check_same_dtype(x, alpha, "_dirichlet_grad");
  check_same_dtype(x, total, "_dirichlet_grad");
  check_float(x, "_dirichlet_grad", "_dirichlet_grad_cpu");
  DimVector shape = broadcast_shapes(broadcast_shapes(x.sizes(), alpha.sizes()), total.sizes());
  Tensor out = empty_tensor(shape, x.dtype(), Device(kCPU));
  if (out.numel() > 0) {
    dirichlet_grad_stub(kCPU, out, as_double(x, shape), as_double(alpha, shape),
                        as_double(total, shape));
  }
  return back_to(out, x.device());
}

Tensor poisson(const Tensor& rates, std::optional<Generator> gen) {
  EMBER_OP(poisson, rates, gen);
  EMBER_CHECK(rates.defined(), "[poisson] undefined tensor");
  check_float(rates, "poisson", "poisson_cpu", /*bf16=*/true);
  Tensor r = as_double(rates, rates.sizes());
  Tensor out = empty_tensor(rates.sizes(), rates.dtype(), Device(kCPU));
  Generator g = pick_generator(gen, rates.device());
  // The kernel checks every rate (>= 0, not NaN) before drawing.
  if (out.numel() > 0) poisson_stub(kCPU, out, r, g);
  return back_to(out, rates.device());
}

Tensor binomial(const Tensor& count, const Tensor& prob, std::optional<Generator> gen) {
  EMBER_OP(binomial, count, prob, gen);
  EMBER_CHECK(count.defined() && prob.defined(), "[binomial] undefined tensor");
  check_same_dtype(count, prob, "binomial");
  check_float(count, "binomial", "binomial_cpu");
  DimVector shape = broadcast_shapes(count.sizes(), prob.sizes());
  Tensor out = empty_tensor(shape, count.dtype(), Device(kCPU));
  Generator g = pick_generator(gen, count.device());
  if (out.numel() > 0) binomial_stub(kCPU, out, as_double(count, shape), as_double(prob, shape), g);
  return back_to(out, count.device());
}

}  // namespace ember
