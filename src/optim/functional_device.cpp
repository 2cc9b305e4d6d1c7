// Optimizer steps for parameters off the CPU (include/ember/optim/functional.h).
//
// Note [Device optimizer step]
// The fused loops of functional.cpp read CPU memory. A group whose parameters live on another
// device takes one of two paths instead:
// - the device's fused kernel (fused_adam_stub / fused_sgd_stub, kernels/stubs/optim.h) when it
//   has one and every tensor of the group is contiguous: one launch per table of tensors, the
//   same per-element math as the CPU loop;
// - otherwise the generic step: torch 1.13's single-tensor update (torch/optim/*.py
//   `_single_tensor_*`) written op by op with tensor ops, which run on any device. It rounds
//   after every op as torch does, so it agrees with the CPU loop to rounding. Float16 and
//   bfloat16 groups run it on float32 copies rounded back once per tensor (FloatCopies), like
//   the CPU loops, which compute the half types in float.
// Both validate the group first with the CPU path's rules (one device, one dtype, matching
// shapes), and both keep its state semantics (SGD's first-step buffer, NAdam's mu products).
#include <algorithm>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/tensor_impl.h"
#include "kernels/stubs/optim.h"
#include "optim/functional_device.h"

namespace ember {
EMBER_DEFINE_KERNEL(fused_adam_stub);
EMBER_DEFINE_KERNEL(fused_sgd_stub);
}  // namespace ember

namespace ember::optim::functional {
namespace {

void check_lists(const char* op, size_t n, std::initializer_list<size_t> sizes) {
  for (size_t s : sizes)
    EMBER_CHECK_VALUE(s == n, "[", op, "] expected lists of ", n,
                      " entries (one per parameter), got one of ", s);
}

bool supported_dtype(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half ||
         t == ScalarType::BFloat16;
}

// The CPU path's checks (MultiTensor::add in functional.cpp) for a group on any one device.
// `states` lists the state lists in use (a null entry is skipped); their entries must be
// defined unless `optional_states` (SGD's buffers before the first step).
void check_group(const char* op, const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 std::initializer_list<const std::vector<Tensor>*> states,
                 bool optional_states = false) {
  ScalarType dtype = ScalarType::Undefined;
  Device device = kCPU;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    EMBER_CHECK(p.defined(), "[", op, "] parameter ", i, " is undefined");
    EMBER_CHECK(isFloatingType(p.scalar_type()), "[", op, "] parameter ", i,
                " must be a floating tensor, got ", p.scalar_type());
    EMBER_CHECK(!p.is_inference() || InferenceMode::is_enabled(), "[", op, "] parameter ", i,
                " is an inference tensor: it cannot be updated in place outside "
                "InferenceMode");
    if (i == 0) {
      dtype = p.scalar_type();
      device = p.device();
      EMBER_CHECK(supported_dtype(dtype), "[", op, "] unsupported parameter dtype ", dtype,
                  " (float32, float64, bfloat16 and float16 are supported)");
    }
    EMBER_CHECK(p.scalar_type() == dtype, "[", op, "] all parameters of a group must have the ",
                "same dtype, got ", dtype, " and ", p.scalar_type(), " (parameter ", i, ")");
    EMBER_CHECK(p.device() == device, "[", op, "] all parameters of a group must be on one ",
                "device, got ", device, " and ", p.device(), " (parameter ", i, ")");
    auto check_slot = [&](const Tensor& t, const char* what) {
      EMBER_CHECK(t.defined(), "[", op, "] the ", what, " of parameter ", i, " is undefined");
      EMBER_CHECK(t.sizes() == p.sizes(), "[", op, "] the ", what, " of parameter ", i,
                  " has shape ", t.sizes(), " but the parameter has shape ", p.sizes());
      EMBER_CHECK(t.scalar_type() == p.scalar_type(), "[", op, "] the ", what, " of parameter ", i,
                  " has dtype ", t.scalar_type(), " but the parameter has dtype ", p.scalar_type());
      EMBER_CHECK(t.device() == p.device(), "[", op, "] the ", what, " of parameter ", i, " is on ",
                  t.device(), " but the parameter is on ", p.device());
    };
    check_slot(grads[i], "gradient");
    for (const std::vector<Tensor>* s : states)
      if (s && (!optional_states || (*s)[i].defined())) check_slot((*s)[i], "state");
  }
}

// Whether every tensor of the lists is contiguous (the fused kernels' layout).
bool all_contiguous(std::initializer_list<const std::vector<Tensor>*> lists) {
  for (const std::vector<Tensor>* l : lists)
    if (l)
      for (const Tensor& t : *l)
        if (!t.is_contiguous()) return false;
  return true;
}

void bump_versions(const char* op, std::initializer_list<const std::vector<Tensor>*> lists) {
  for (const std::vector<Tensor>* l : lists)
    if (l)
      for (const Tensor& t : *l) t.unsafeGetTensorImpl()->bump_version(op);
}

// Float16 / bfloat16 groups: the step runs on float32 copies of the parameters, grads and
// states, and the results are rounded back once per tensor, as the CPU loops compute the half
// types in float (and the tensor ops lack some half kernels).
class FloatCopies {
 public:
  // Copies of every list; `written` marks the lists the step updates.
  FloatCopies(std::initializer_list<const std::vector<Tensor>*> lists,
              std::initializer_list<bool> written) {
    auto w = written.begin();
    for (const std::vector<Tensor>* l : lists) {
      std::vector<Tensor> c;
      for (const Tensor& t : *l) c.push_back(t.defined() ? t.to(kFloat) : Tensor());
      copies_.push_back(std::move(c));
      orig_.push_back(l);
      written_.push_back(*w++);
    }
  }
  std::vector<Tensor>& operator[](size_t k) { return copies_[k]; }
  // Rounds the updated copies into the tensors they came from (defined ones).
  void write_back() {
    NoGradGuard no_grad;
    for (size_t k = 0; k < copies_.size(); ++k) {
      if (!written_[k]) continue;
      for (size_t i = 0; i < copies_[k].size(); ++i) {
        Tensor t = (*orig_[k])[i];
        if (t.defined()) t.copy_(copies_[k][i]);
      }
    }
  }

 private:
  std::vector<std::vector<Tensor>> copies_;
  std::vector<const std::vector<Tensor>*> orig_;
  std::vector<bool> written_;
};

bool reduced_float(const std::vector<Tensor>& params) {
  const ScalarType t = params.empty() ? ScalarType::Float : params[0].scalar_type();
  return t == ScalarType::Half || t == ScalarType::BFloat16;
}

// The grad as the update sees it: negated when maximizing, plus the L2 term.
Tensor effective_grad(const Tensor& grad, const Tensor& param, double weight_decay, bool maximize) {
  Tensor g = maximize ? grad.neg() : grad;
  if (weight_decay != 0) g = g.add(param, weight_decay);
  return g;
}

void adam_body(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor param = params[i];
    Tensor m = exp_avgs[i], v = exp_avg_sqs[i];
    Tensor g = effective_grad(grads[i], param, decoupled ? 0. : weight_decay, maximize);
    if (decoupled) param.mul_(1 - lr * weight_decay);
    m.mul_(beta1).add_(g, 1 - beta1);
    v.mul_(beta2).addcmul_(g, g, 1 - beta2);
    const double step_size = lr / (1 - std::pow(beta1, steps[i]));
    const double bc2_sqrt = std::sqrt(1 - std::pow(beta2, steps[i]));
    Tensor vd = v;
    if (amsgrad) {
      Tensor vmax = max_exp_avg_sqs[i];
      vmax.maximum_(v);
      vd = vmax;
    }
    Tensor denom = vd.sqrt().div_(bc2_sqrt).add_(eps);
    param.addcdiv_(m, denom, -step_size);
  }
}

void sgd_body(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor param = params[i];
    Tensor d = effective_grad(grads[i], param, weight_decay, maximize);
    if (momentum != 0) {
      Tensor& buf = momentum_buffers[i];
      if (!buf.defined()) {
        // torch clones the (decayed) gradient; the buffer takes the parameter's layout, as on
        // the CPU path.
        buf = zeros_like(param);
        buf.copy_(d);
      } else {
        buf.mul_(momentum).add_(d, 1 - dampening);
      }
      d = nesterov ? d.add(buf, momentum) : buf;
    }
    param.add_(d, -lr);
  }
}

}  // namespace

namespace generic {

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled) {
  const char* op = decoupled ? "adamw_step" : "adam_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
  if (amsgrad) check_lists(op, n, {max_exp_avg_sqs.size()});
  check_group(op, params, grads, {&exp_avgs, &exp_avg_sqs, amsgrad ? &max_exp_avg_sqs : nullptr});
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs},
                  {true, false, true, true, true});
    generic::adam_step(f[0], f[1], f[2], f[3], f[4], steps, lr, beta1, beta2, eps, weight_decay,
                       amsgrad, maximize, decoupled);
    f.write_back();
    return;
  }
  adam_body(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2, eps,
            weight_decay, amsgrad, maximize, decoupled);
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize) {
  const char* op = "sgd_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size()});
  if (momentum != 0) check_lists(op, n, {momentum_buffers.size()});
  check_group(op, params, grads, {momentum != 0 ? &momentum_buffers : nullptr}, true);
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &momentum_buffers}, {true, false, true});
    generic::sgd_step(f[0], f[1], f[2], lr, momentum, dampening, weight_decay, nesterov, maximize);
    f.write_back();
    NoGradGuard no_grad;
    for (size_t i = 0; momentum != 0 && i < n; ++i) {
      if (momentum_buffers[i].defined()) continue;
      momentum_buffers[i] = zeros_like(params[i]);
      momentum_buffers[i].copy_(f[2][i]);
    }
    return;
  }
  sgd_body(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay, nesterov,
           maximize);
}

void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& state_sums, const std::vector<double>& steps,
                  double lr, double weight_decay, double lr_decay, double eps, bool maximize) {
  const char* op = "adagrad_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), state_sums.size(), steps.size()});
  check_group(op, params, grads, {&state_sums});
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &state_sums}, {true, false, true});
    generic::adagrad_step(f[0], f[1], f[2], steps, lr, weight_decay, lr_decay, eps, maximize);
    f.write_back();
    return;
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < n; ++i) {
    Tensor param = params[i], sum = state_sums[i];
    Tensor g = effective_grad(grads[i], param, weight_decay, maximize);
    const double clr = lr / (1 + (steps[i] - 1) * lr_decay);
    sum.addcmul_(g, g);
    Tensor std_ = sum.sqrt().add_(eps);
    param.addcdiv_(g, std_, -clr);
  }
}

void rmsprop_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                  const std::vector<Tensor>& momentum_buffers, double lr, double alpha, double eps,
                  double weight_decay, double momentum, bool centered, bool maximize) {
  const char* op = "rmsprop_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), square_avgs.size()});
  if (centered) check_lists(op, n, {grad_avgs.size()});
  if (momentum > 0) check_lists(op, n, {momentum_buffers.size()});
  check_group(
      op, params, grads,
      {&square_avgs, centered ? &grad_avgs : nullptr, momentum > 0 ? &momentum_buffers : nullptr});
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &square_avgs, &grad_avgs, &momentum_buffers},
                  {true, false, true, true, true});
    generic::rmsprop_step(f[0], f[1], f[2], f[3], f[4], lr, alpha, eps, weight_decay, momentum,
                          centered, maximize);
    f.write_back();
    return;
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < n; ++i) {
    Tensor param = params[i], sq = square_avgs[i];
    Tensor g = effective_grad(grads[i], param, weight_decay, maximize);
    sq.mul_(alpha).addcmul_(g, g, 1 - alpha);
    Tensor avg;
    if (centered) {
      Tensor ga = grad_avgs[i];
      ga.mul_(alpha).add_(g, 1 - alpha);
      avg = sq.addcmul(ga, ga, -1).sqrt_();
    } else {
      avg = sq.sqrt();
    }
    avg.add_(eps);
    if (momentum > 0) {
      Tensor buf = momentum_buffers[i];
      buf.mul_(momentum).addcdiv_(g, avg);
      param.add_(buf, -lr);
    } else {
      param.addcdiv_(g, avg, -lr);
    }
  }
}

void adadelta_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& acc_deltas,
                   double lr, double rho, double eps, double weight_decay, bool maximize) {
  const char* op = "adadelta_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), square_avgs.size(), acc_deltas.size()});
  check_group(op, params, grads, {&square_avgs, &acc_deltas});
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &square_avgs, &acc_deltas}, {true, false, true, true});
    generic::adadelta_step(f[0], f[1], f[2], f[3], lr, rho, eps, weight_decay, maximize);
    f.write_back();
    return;
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < n; ++i) {
    Tensor param = params[i], sq = square_avgs[i], acc = acc_deltas[i];
    Tensor g = effective_grad(grads[i], param, weight_decay, maximize);
    sq.mul_(rho).addcmul_(g, g, 1 - rho);
    Tensor std_ = sq.add(eps).sqrt_();
    Tensor delta = acc.add(eps).sqrt_().div_(std_).mul_(g);
    acc.mul_(rho).addcmul_(delta, delta, 1 - rho);
    param.add_(delta, -lr);
  }
}

void adamax_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_infs,
                 const std::vector<double>& steps, double lr, double beta1, double beta2,
                 double eps, double weight_decay, bool maximize) {
  const char* op = "adamax_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_infs.size(), steps.size()});
  check_group(op, params, grads, {&exp_avgs, &exp_infs});
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &exp_avgs, &exp_infs}, {true, false, true, true});
    generic::adamax_step(f[0], f[1], f[2], f[3], steps, lr, beta1, beta2, eps, weight_decay,
                         maximize);
    f.write_back();
    return;
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < n; ++i) {
    Tensor param = params[i], m = exp_avgs[i], u = exp_infs[i];
    Tensor g = effective_grad(grads[i], param, weight_decay, maximize);
    m.mul_(beta1).add_(g, 1 - beta1);
    // torch takes amax over the stacked pair; maximum propagates NaN the same way.
    u.mul_(beta2).maximum_(g.abs().add_(eps));
    const double clr = lr / (1 - std::pow(beta1, steps[i]));
    param.addcdiv_(m, u, -clr);
  }
}

void nadam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                std::vector<double>& mu_products, const std::vector<double>& steps, double lr,
                double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                bool maximize) {
  const char* op = "nadam_step";
  const size_t n = params.size();
  check_lists(
      op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), mu_products.size(), steps.size()});
  check_group(op, params, grads, {&exp_avgs, &exp_avg_sqs});
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &exp_avgs, &exp_avg_sqs}, {true, false, true, true});
    generic::nadam_step(f[0], f[1], f[2], f[3], mu_products, steps, lr, beta1, beta2, eps,
                        weight_decay, momentum_decay, maximize);
    f.write_back();
    return;
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < n; ++i) {
    Tensor param = params[i], m = exp_avgs[i], v = exp_avg_sqs[i];
    Tensor g = effective_grad(grads[i], param, weight_decay, maximize);
    const NadamScalars s =
        nadam_scalars(mu_products[i], steps[i], lr, beta1, beta2, momentum_decay);
    m.mul_(beta1).add_(g, 1 - beta1);
    v.mul_(beta2).addcmul_(g, g, 1 - beta2);
    Tensor denom = v.div(s.bias_correction2).sqrt_().add_(eps);
    param.addcdiv_(g, denom, s.grad_coef);
    param.addcdiv_(m, denom, s.avg_coef);
  }
}

void radam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<double>& steps, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool maximize) {
  const char* op = "radam_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
  check_group(op, params, grads, {&exp_avgs, &exp_avg_sqs});
  if (reduced_float(params)) {
    FloatCopies f({&params, &grads, &exp_avgs, &exp_avg_sqs}, {true, false, true, true});
    generic::radam_step(f[0], f[1], f[2], f[3], steps, lr, beta1, beta2, eps, weight_decay,
                        maximize);
    f.write_back();
    return;
  }
  NoGradGuard no_grad;
  for (size_t i = 0; i < n; ++i) {
    Tensor param = params[i], m = exp_avgs[i], v = exp_avg_sqs[i];
    Tensor g = effective_grad(grads[i], param, weight_decay, maximize);
    m.mul_(beta1).add_(g, 1 - beta1);
    v.mul_(beta2).addcmul_(g, g, 1 - beta2);
    const RadamScalars s = radam_scalars(steps[i], beta1, beta2);
    Tensor upd = m.div(s.bias_correction1).mul_(lr);
    if (s.rect >= 0) {
      // sqrt(bias_correction2) / (sqrt(v) + eps): a scalar over a tensor, divided directly.
      Tensor adaptive = full_like(v, s.bias_correction2_sqrt).div_(v.sqrt().add_(eps));
      upd.mul_(adaptive).mul_(s.rect);
    }
    param.sub_(upd);
  }
}

}  // namespace generic

namespace device {

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled) {
  const char* op = decoupled ? "adamw_step" : "adam_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
  if (amsgrad) check_lists(op, n, {max_exp_avg_sqs.size()});
  const std::vector<Tensor>* vmax = amsgrad ? &max_exp_avg_sqs : nullptr;
  check_group(op, params, grads, {&exp_avgs, &exp_avg_sqs, vmax});
  const DeviceType dt = params[0].device().type();
  if (fused_adam_stub.get(dt) && all_contiguous({&params, &grads, &exp_avgs, &exp_avg_sqs, vmax})) {
    fused_adam_stub(dt, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1,
                    beta2, eps, weight_decay, amsgrad, maximize, decoupled);
    bump_versions(op, {&params, &exp_avgs, &exp_avg_sqs, vmax});
    return;
  }
  generic::adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2,
                     eps, weight_decay, amsgrad, maximize, decoupled);
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize) {
  const char* op = "sgd_step";
  const size_t n = params.size();
  check_lists(op, n, {grads.size()});
  if (momentum != 0) check_lists(op, n, {momentum_buffers.size()});
  check_group(op, params, grads, {momentum != 0 ? &momentum_buffers : nullptr}, true);
  bool contiguous = all_contiguous({&params, &grads});
  if (momentum != 0)
    for (const Tensor& b : momentum_buffers)
      contiguous = contiguous && (!b.defined() || b.is_contiguous());
  const DeviceType dt = params[0].device().type();
  if (!fused_sgd_stub.get(dt) || !contiguous) {
    generic::sgd_step(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay,
                      nesterov, maximize);
    return;
  }
  std::vector<char> first(n, 0);
  if (momentum != 0) {
    for (size_t i = 0; i < n; ++i) {
      if (momentum_buffers[i].defined()) continue;
      // Contiguous like its (contiguous) parameter; the kernel writes the first value.
      momentum_buffers[i] = zeros_like(params[i]);
      first[i] = 1;
    }
  }
  static const std::vector<Tensor> kNone;
  const std::vector<Tensor>& bufs = momentum != 0 ? momentum_buffers : kNone;
  fused_sgd_stub(dt, params, grads, bufs, first, lr, momentum, dampening, weight_decay, nesterov,
                 maximize);
  bump_versions(op, {&params, momentum != 0 ? &momentum_buffers : nullptr});
}

}  // namespace device

}  // namespace ember::optim::functional
