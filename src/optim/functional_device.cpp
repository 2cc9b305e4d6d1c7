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
// The public function validates the group first (check_group, shared with the CPU path), and
// both paths keep its state semantics (SGD's first-step buffer, NAdam's mu products).
#include <algorithm>
#include <array>
#include <optional>

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

bool supported_dtype(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half ||
         t == ScalarType::BFloat16;
}

void check_lists(const char* op, size_t n, size_t s) {
  EMBER_CHECK_VALUE(s == n, "[", op, "] expected lists of ", n,
                    " entries (one per parameter), got one of ", s);
}

}  // namespace

void check_group(const char* op, const std::vector<Tensor>& params,
                 const std::vector<Tensor>& grads,
                 std::initializer_list<const std::vector<Tensor>*> states,
                 std::initializer_list<size_t> sizes, bool optional_states) {
  const size_t n = params.size();
  check_lists(op, n, grads.size());
  for (const std::vector<Tensor>* s : states)
    if (s) check_lists(op, n, s->size());
  for (size_t s : sizes) check_lists(op, n, s);
  ScalarType dtype = ScalarType::Undefined;
  Device device = kCPU;
  for (size_t i = 0; i < n; ++i) {
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

namespace {

// Whether every tensor of the lists is contiguous (the fused kernels' layout).
bool all_contiguous(std::initializer_list<const std::vector<Tensor>*> lists) {
  for (const std::vector<Tensor>* l : lists)
    if (l)
      for (const Tensor& t : *l)
        if (t.defined() && !t.is_contiguous()) return false;
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
  // Copies of the lists (params, grads, states...; a null list stays empty); all but the
  // grads are written by the step.
  explicit FloatCopies(const std::vector<const std::vector<Tensor>*>& lists) : orig_(lists) {
    for (const std::vector<Tensor>* l : lists) {
      std::vector<Tensor> c;
      if (l)
        for (const Tensor& t : *l) c.push_back(t.defined() ? t.to(kFloat) : Tensor());
      copies_.push_back(std::move(c));
    }
  }
  std::vector<Tensor>& operator[](size_t k) { return copies_[k]; }
  // Rounds the updated copies into the tensors they came from (defined ones).
  void write_back() {
    NoGradGuard no_grad;
    for (size_t k = 0; k < copies_.size(); ++k) {
      if (k == 1 || !orig_[k]) continue;
      for (size_t i = 0; i < copies_[k].size(); ++i) {
        Tensor t = (*orig_[k])[i];
        if (t.defined()) t.copy_(copies_[k][i]);
      }
    }
  }

 private:
  std::vector<std::vector<Tensor>> copies_;
  std::vector<const std::vector<Tensor>*> orig_;
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

// A parameter's state entries, in the order of the step's state lists (undefined for a list
// not in use).
using States = std::array<Tensor, 3>;

// Runs step(i, param, grad, states) for each parameter without autograd history; `grad` is the
// effective gradient (L2 term `weight_decay`). Float16 and bfloat16 groups run on FloatCopies.
template <class Step>
void for_each_param(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    std::initializer_list<const std::vector<Tensor>*> states, double weight_decay,
                    bool maximize, const Step& step) {
  std::vector<const std::vector<Tensor>*> lists = {&params, &grads};
  lists.insert(lists.end(), states.begin(), states.end());
  std::optional<FloatCopies> copies;
  if (reduced_float(params)) {
    copies.emplace(lists);
    for (size_t k = 0; k < lists.size(); ++k)
      if (lists[k]) lists[k] = &(*copies)[k];
  }
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      States s;
      for (size_t k = 2; k < lists.size(); ++k)
        if (lists[k]) s[k - 2] = (*lists[k])[i];
      Tensor param = (*lists[0])[i];
      step(i, param, effective_grad((*lists[1])[i], param, weight_decay, maximize), s);
    }
  }
  if (copies) copies->write_back();
}

// The exponential moving averages of the gradient (`m`) and of its square (`v`).
void update_avg(Tensor& m, const Tensor& g, double beta1) { m.mul_(beta1).add_(g, 1 - beta1); }
void update_moments(Tensor& m, Tensor& v, const Tensor& g, double beta1, double beta2) {
  update_avg(m, g, beta1);
  v.mul_(beta2).addcmul_(g, g, 1 - beta2);
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
  const std::vector<Tensor>* vmax = amsgrad ? &max_exp_avg_sqs : nullptr;
  check_group(decoupled ? "adamw_step" : "adam_step", params, grads,
              {&exp_avgs, &exp_avg_sqs, vmax}, {steps.size()});
  for_each_param(params, grads, {&exp_avgs, &exp_avg_sqs, vmax}, decoupled ? 0. : weight_decay,
                 maximize, [&](size_t i, Tensor& param, const Tensor& g, States& s) {
                   if (decoupled) param.mul_(1 - lr * weight_decay);
                   update_moments(s[0], s[1], g, beta1, beta2);
                   const AdamScalars c = adam_scalars(steps[i], lr, beta1, beta2);
                   Tensor vd = s[1];
                   if (amsgrad) vd = s[2].maximum_(s[1]);
                   Tensor denom = vd.sqrt().div_(c.bias_correction2_sqrt).add_(eps);
                   param.addcdiv_(s[0], denom, -c.step_size);
                 });
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize) {
  const std::vector<Tensor>* bufs = momentum != 0 ? &momentum_buffers : nullptr;
  check_group("sgd_step", params, grads, {bufs}, {}, true);
  if (!reduced_float(params)) {
    sgd_body(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay, nesterov,
             maximize);
    return;
  }
  FloatCopies f({&params, &grads, bufs});
  sgd_body(f[0], f[1], f[2], lr, momentum, dampening, weight_decay, nesterov, maximize);
  f.write_back();
  NoGradGuard no_grad;
  for (size_t i = 0; bufs && i < params.size(); ++i) {
    if (momentum_buffers[i].defined()) continue;
    momentum_buffers[i] = zeros_like(params[i]);
    momentum_buffers[i].copy_(f[2][i]);
  }
}

void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& state_sums, const std::vector<double>& steps,
                  double lr, double weight_decay, double lr_decay, double eps, bool maximize) {
  check_group("adagrad_step", params, grads, {&state_sums}, {steps.size()});
  for_each_param(params, grads, {&state_sums}, weight_decay, maximize,
                 [&](size_t i, Tensor& param, const Tensor& g, States& s) {
                   s[0].addcmul_(g, g);
                   Tensor std_ = s[0].sqrt().add_(eps);
                   param.addcdiv_(g, std_, -adagrad_lr(lr, lr_decay, steps[i]));
                 });
}

void rmsprop_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                  const std::vector<Tensor>& momentum_buffers, double lr, double alpha, double eps,
                  double weight_decay, double momentum, bool centered, bool maximize) {
  const std::vector<Tensor>* ga = centered ? &grad_avgs : nullptr;
  const std::vector<Tensor>* mb = momentum > 0 ? &momentum_buffers : nullptr;
  check_group("rmsprop_step", params, grads, {&square_avgs, ga, mb});
  for_each_param(params, grads, {&square_avgs, ga, mb}, weight_decay, maximize,
                 [&](size_t, Tensor& param, const Tensor& g, States& s) {
                   s[0].mul_(alpha).addcmul_(g, g, 1 - alpha);
                   Tensor avg;
                   if (centered) {
                     s[1].mul_(alpha).add_(g, 1 - alpha);
                     avg = s[0].addcmul(s[1], s[1], -1).sqrt_();
                   } else {
                     avg = s[0].sqrt();
                   }
                   avg.add_(eps);
                   if (momentum > 0) {
                     s[2].mul_(momentum).addcdiv_(g, avg);
                     param.add_(s[2], -lr);
                   } else {
                     param.addcdiv_(g, avg, -lr);
                   }
                 });
}

void adadelta_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& acc_deltas,
                   double lr, double rho, double eps, double weight_decay, bool maximize) {
  check_group("adadelta_step", params, grads, {&square_avgs, &acc_deltas});
  for_each_param(params, grads, {&square_avgs, &acc_deltas}, weight_decay, maximize,
                 [&](size_t, Tensor& param, const Tensor& g, States& s) {
                   s[0].mul_(rho).addcmul_(g, g, 1 - rho);
                   Tensor std_ = s[0].add(eps).sqrt_();
                   Tensor delta = s[1].add(eps).sqrt_().div_(std_).mul_(g);
                   s[1].mul_(rho).addcmul_(delta, delta, 1 - rho);
                   param.add_(delta, -lr);
                 });
}

void adamax_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_infs,
                 const std::vector<double>& steps, double lr, double beta1, double beta2,
                 double eps, double weight_decay, bool maximize) {
  check_group("adamax_step", params, grads, {&exp_avgs, &exp_infs}, {steps.size()});
  for_each_param(params, grads, {&exp_avgs, &exp_infs}, weight_decay, maximize,
                 [&](size_t i, Tensor& param, const Tensor& g, States& s) {
                   update_avg(s[0], g, beta1);
                   // torch takes amax over the stacked pair; maximum propagates NaN the same way.
                   s[1].mul_(beta2).maximum_(g.abs().add_(eps));
                   param.addcdiv_(s[0], s[1], -bias_corrected_lr(lr, beta1, steps[i]));
                 });
}

void nadam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                std::vector<double>& mu_products, const std::vector<double>& steps, double lr,
                double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                bool maximize) {
  check_group("nadam_step", params, grads, {&exp_avgs, &exp_avg_sqs},
              {mu_products.size(), steps.size()});
  for_each_param(params, grads, {&exp_avgs, &exp_avg_sqs}, weight_decay, maximize,
                 [&](size_t i, Tensor& param, const Tensor& g, States& s) {
                   const NadamScalars c =
                       nadam_scalars(mu_products[i], steps[i], lr, beta1, beta2, momentum_decay);
                   update_moments(s[0], s[1], g, beta1, beta2);
                   Tensor denom = s[1].div(c.bias_correction2).sqrt_().add_(eps);
                   param.addcdiv_(g, denom, c.grad_coef);
                   param.addcdiv_(s[0], denom, c.avg_coef);
                 });
}

void radam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<double>& steps, double lr, double beta1, double beta2, double eps,
                double weight_decay, bool maximize) {
  check_group("radam_step", params, grads, {&exp_avgs, &exp_avg_sqs}, {steps.size()});
  for_each_param(params, grads, {&exp_avgs, &exp_avg_sqs}, weight_decay, maximize,
                 [&](size_t i, Tensor& param, const Tensor& g, States& s) {
                   update_moments(s[0], s[1], g, beta1, beta2);
                   const RadamScalars c = radam_scalars(steps[i], beta1, beta2);
                   Tensor upd = s[0].div(c.bias_correction1).mul_(lr);
                   if (c.rect >= 0) {
                     // sqrt(bias_correction2) / (sqrt(v) + eps): a scalar over a tensor.
                     Tensor adaptive =
                         full_like(s[1], c.bias_correction2_sqrt).div_(s[1].sqrt().add_(eps));
                     upd.mul_(adaptive).mul_(c.rect);
                   }
                   param.sub_(upd);
                 });
}

}  // namespace generic

namespace device {

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
               double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
               bool maximize, bool decoupled) {
  const std::vector<Tensor>* vmax = amsgrad ? &max_exp_avg_sqs : nullptr;
  const DeviceType dt = params[0].device().type();
  if (fused_adam_stub.get(dt) && all_contiguous({&params, &grads, &exp_avgs, &exp_avg_sqs, vmax})) {
    fused_adam_stub(dt, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1,
                    beta2, eps, weight_decay, amsgrad, maximize, decoupled);
    bump_versions(decoupled ? "adamw_step" : "adam_step", {&params, &exp_avgs, &exp_avg_sqs, vmax});
    return;
  }
  generic::adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2,
                     eps, weight_decay, amsgrad, maximize, decoupled);
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, double lr, double momentum, double dampening,
              double weight_decay, bool nesterov, bool maximize) {
  const std::vector<Tensor>* bufs = momentum != 0 ? &momentum_buffers : nullptr;
  const DeviceType dt = params[0].device().type();
  if (!fused_sgd_stub.get(dt) || !all_contiguous({&params, &grads, bufs})) {
    generic::sgd_step(params, grads, momentum_buffers, lr, momentum, dampening, weight_decay,
                      nesterov, maximize);
    return;
  }
  std::vector<char> first(params.size(), 0);
  for (size_t i = 0; bufs && i < params.size(); ++i) {
    if (momentum_buffers[i].defined()) continue;
    // Contiguous like its (contiguous) parameter; the kernel writes the first value.
    momentum_buffers[i] = zeros_like(params[i]);
    first[i] = 1;
  }
  static const std::vector<Tensor> kNone;
  fused_sgd_stub(dt, params, grads, bufs ? momentum_buffers : kNone, first, lr, momentum, dampening,
                 weight_decay, nesterov, maximize);
  bump_versions("sgd_step", {&params, bufs});
}

}  // namespace device

}  // namespace ember::optim::functional
