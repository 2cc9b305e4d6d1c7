// Classification and regression losses: cross_entropy / nll_loss, binary cross entropy, KL
// divergence, mse / l1 / smooth_l1 / huber. Validation and formulas follow PyTorch 1.13's
// ATen (Loss.cpp, LossNLL.cpp). Most are composites of recorded ops; binary_cross_entropy
// records its own rule to reproduce PyTorch's gradient at the clamped ends.
#include <cmath>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/sort.h"
#include "kernels/stubs/loss.h"
#include "ops/call_path.h"

namespace ember {

using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

void check_reduction(int64_t reduction, const char* op) {
  EMBER_CHECK_VALUE(reduction >= 0 && reduction <= 2, "[", op, "] ", reduction,
                    " is not a valid value for reduction (0 none, 1 mean, 2 sum)");
}

Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction, const char* op) {
  check_reduction(reduction, op);
  if (reduction == Reduction::Mean) return loss.mean();
  if (reduction == Reduction::Sum) return loss.sum();
  return loss;
}

void check_defined(const Tensor& t, const char* op, const char* what) {
  EMBER_CHECK(t.defined(), "[", op, "] ", what, " must be defined");
}

/// Checks every target is a class in [0, C) or the ignore index (IndexError otherwise, as
/// PyTorch), before any arithmetic reads them.
void check_targets(const Tensor& target, int64_t n_classes, int64_t ignore_index) {
  nll_check_targets_stub(target.device().type(), target.contiguous(), n_classes, ignore_index);
}

// The weighted negative log likelihood of an (N, C, S) input at (N, S) targets, as gathers and
// products so that its gradient (a scatter) and higher derivatives are those of its parts. The
// mean divides by the (non-differentiable) total weight of the kept targets, as PyTorch.
Tensor nll_core(const Tensor& x3, const Tensor& t2, const Tensor& weight, int64_t reduction,
                int64_t ignore_index, IntArrayRef out_shape) {
  const int64_t C = x3.size(1);
  check_targets(t2, C, ignore_index);
  Tensor ignored = t2 == ignore_index;
  Tensor safe = t2.masked_fill(ignored, 0);
  Tensor picked = x3.gather(1, safe.unsqueeze(1)).squeeze(1);  // (N, S)
  Tensor w;                                                    // per-target weight, 0 where ignored
  if (weight.defined()) {
    w = weight.to(x3.dtype()).index_select(0, safe.reshape({-1})).view(safe.sizes());
    w = w.masked_fill(ignored, 0);
  } else {
    w = ones(safe.sizes(), x3.options()).masked_fill(ignored, 0);
  }
  Tensor loss = -(picked * w);
  if (reduction == Reduction::None) return loss.reshape(out_shape);
  if (reduction == Reduction::Sum) return loss.sum();
  return loss.sum() / w.sum();
}

void check_class_weight(const Tensor& weight, int64_t C) {
  if (!weight.defined()) return;
  EMBER_CHECK(weight.dim() <= 1 && weight.numel() == C,
              "weight tensor should be defined either for all ", C,
              " classes or no classes but got weight tensor of shape: ", shape_str(weight.sizes()));
}

void check_long_target(const Tensor& target) {
  EMBER_CHECK(target.dtype() == kLong, "expected scalar type Long but found ",
              dtype_name(target.dtype()));
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  EMBER_OP_CAST(nll_loss, nll_loss, input, target, weight, reduction, ignore_index);
  check_defined(input, "nll_loss", "input");
  check_defined(target, "nll_loss", "target");
  check_reduction(reduction, "nll_loss");
  EMBER_CHECK_VALUE(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  if (input.dim() != 1) {
    EMBER_CHECK_VALUE(target.dim() >= 1 && input.size(0) == target.size(0),
                      "Expected input batch_size (", input.size(0),
                      ") to match target batch_size (", target.dim() ? target.size(0) : 0, ").");
  }
  if (input.dim() <= 2) {
    EMBER_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
    const bool no_batch = input.dim() == 1 && target.dim() == 0;
    EMBER_CHECK(no_batch || input.size(0) == target.size(0),
                "size mismatch (got input: ", shape_str(input.sizes()),
                ", target: ", shape_str(target.sizes()), ")");
  } else {
    const IntArrayRef want = input.sizes().slice(2), got = target.sizes().slice(1);
    DimVector expect{input.size(0)};
    for (int64_t v : want) expect.push_back(v);
    EMBER_CHECK(want == got, "Expected target size ", shape_str(expect), ", got ",
                shape_str(target.sizes()));
  }
  check_long_target(target);
  EMBER_CHECK(input.is_floating_point(), "[nll_loss] expected a floating input, got ",
              dtype_name(input.dtype()));
  const int64_t C = input.dim() == 1 ? input.size(0) : input.size(1);
  check_class_weight(weight, C);
  // Canonical (N, C, S) / (N, S) views.
  Tensor x3, t2;
  if (input.dim() == 1) {
    x3 = input.reshape({1, C, 1});
    t2 = target.reshape({1, 1});
  } else {
    int64_t S = 1;
    for (int64_t d = 2; d < input.dim(); ++d) S *= input.size(d);
    x3 = input.reshape({input.size(0), C, S});
    t2 = target.reshape({input.size(0), S});
  }
  return nll_core(x3, t2, weight, reduction, ignore_index, target.sizes());
}

Tensor nll_loss2d(const Tensor& input, const Tensor& target, const Tensor& weight,
                  int64_t reduction, int64_t ignore_index) {
  EMBER_OP_CAST(nll_loss2d, nll_loss2d, input, target, weight, reduction, ignore_index);
  check_defined(input, "nll_loss2d", "input");
  check_defined(target, "nll_loss2d", "target");
  EMBER_CHECK(input.dim() == 4, "[nll_loss2d] only batches of spatial inputs supported (4D ",
              "tensors), but got input of size: ", shape_str(input.sizes()));
  EMBER_CHECK(target.dim() == 3, "[nll_loss2d] only batches of spatial targets supported (3D ",
              "tensors) but got targets of size: ", shape_str(target.sizes()));
  return nll_loss(input, target, weight, reduction, ignore_index);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t reduction, int64_t ignore_index, double label_smoothing) {
  EMBER_OP_CAST(cross_entropy, cross_entropy, input, target, weight, reduction, ignore_index,
                label_smoothing);
  check_defined(input, "cross_entropy", "input");
  check_defined(target, "cross_entropy", "target");
  check_reduction(reduction, "cross_entropy");
  EMBER_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  EMBER_CHECK_VALUE(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(class_dim);
  DimVector wshape(size_t(input.dim()), 1);
  wshape[size_t(class_dim)] = C;

  if (input.sizes() == target.sizes()) {
    // Class probabilities.
    EMBER_CHECK(target.is_floating_point(),
                "Expected floating point type for target with class probabilities, got ",
                dtype_name(target.dtype()));
    EMBER_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    EMBER_CHECK(
        !weight.defined() || (weight.dim() == 1 && weight.numel() == C),
        "cross_entropy: weight tensor should be defined either for all ", C,
        " classes or no classes but got weight tensor of shape: ", shape_str(weight.sizes()));
    Tensor logp = log_softmax(input, class_dim, input.dtype());
    Tensor t =
        label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / double(C) : target;
    Tensor prod = logp * t;
    if (weight.defined()) prod = prod * weight.view(wshape);
    switch (reduction) {
      case Reduction::Mean:
        if (input.numel() == 0) return -prod.sum() * std::nan("");
        return -prod.sum() / double(input.numel() / C);
      case Reduction::Sum:
        return -prod.sum();
      default:
        return -prod.sum({class_dim});
    }
  }

  Tensor logp = log_softmax(input, class_dim, input.dtype());
  Tensor nll = nll_loss(logp, target, weight, reduction, ignore_index);
  if (label_smoothing <= 0) return nll;

  Tensor ignore_mask = target == ignore_index;
  Tensor smooth = weight.defined() ? -(logp * weight.to(logp.dtype()).view(wshape)).sum({class_dim})
                                   : -logp.sum({class_dim});
  smooth = smooth.masked_fill(ignore_mask, 0.0);
  Tensor ret;
  switch (reduction) {
    case Reduction::Mean:
      if (weight.defined()) {
        Tensor kept = target.masked_select(ignore_mask.logical_not()).reshape({-1});
        ret = smooth.sum() / weight.to(logp.dtype()).gather(0, kept).sum();
      } else {
        // PyTorch 1.13 averages over the kept targets only.
        ret = smooth.sum() / ignore_mask.logical_not().sum().to(smooth.dtype());
      }
      break;
    case Reduction::Sum:
      ret = smooth.sum();
      break;
    default:
      ret = smooth;
  }
  return (1 - label_smoothing) * nll + ret * (label_smoothing / double(C));
}

// ---- binary cross entropy ----

namespace {
Tensor weighted(const Tensor& loss, const Tensor& weight) {
  return weight.defined() ? loss * weight : loss;
}
}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            int64_t reduction) {
  EMBER_OP_CAST(binary_cross_entropy, binary_cross_entropy, input, target, weight, reduction);
  check_defined(input, "binary_cross_entropy", "input");
  check_defined(target, "binary_cross_entropy", "target");
  check_reduction(reduction, "binary_cross_entropy");
  EMBER_CHECK(input.is_floating_point() && target.is_floating_point(),
              "[binary_cross_entropy] expected floating input and target, got ",
              dtype_name(input.dtype()), " and ", dtype_name(target.dtype()));
  EMBER_CHECK(input.sizes() == target.sizes(), "[binary_cross_entropy] input ",
              shape_str(input.sizes()), " and target ", shape_str(target.sizes()),
              " must have the same shape");
  EMBER_CHECK(input.numel() == 0 || ((input >= 0) & (input <= 1)).all().item<bool>(),
              "all elements of input should be between 0 and 1");
  // Per element: (t - 1) * max(log(1 - x), -100) - t * max(log(x), -100), times the weight.
  OpRecorder rec("binary_cross_entropy", {input, target});
  Tensor lx = log(input).clamp_min(-100);
  Tensor l1x = log1p(-input).clamp_min(-100);
  Tensor per = weighted((target - 1) * l1x - target * lx, weight);
  Tensor out = apply_loss_reduction(per, reduction, "binary_cross_entropy");
  if (rec) {
    rec.args(reduction, input.numel());
    rec.record(out,
               [](VjpCtx& c) {
                 const int64_t reduction = c.args().i(0), n = c.args().i(1);
                 const Tensor &x = c.saved[0], &t = c.saved[1], &w = c.saved[2];
                 Tensor g = c.grads[0];
                 if (reduction == Reduction::Mean) g = g / double(n);
                 variable_list r(2);
                 // PyTorch's rule: w * (x - t) / max((1 - x) * x, 1e-12).
                 if (c.needs(0)) r[0] = weighted(g * (x - t) / ((1 - x) * x).clamp_min(1e-12), w);
                 if (c.needs(1))
                   r[1] = weighted(g * (log1p(-x) - log(x)), w);  // -logit(x), unclamped as PyTorch
                 return r;
               },
               {input, target, weight});
  }
  return out;
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        int64_t reduction) {
  EMBER_OP_CAST(binary_cross_entropy_with_logits, binary_cross_entropy_with_logits, input, target,
                weight, pos_weight, reduction);
  check_defined(input, "binary_cross_entropy_with_logits", "input");
  check_defined(target, "binary_cross_entropy_with_logits", "target");
  check_reduction(reduction, "binary_cross_entropy_with_logits");
  // (1 - t) * x - lw * logsigmoid(x), lw = 1 + (pos_weight - 1) * t: stable for any x.
  Tensor ls = logsigmoid(input);
  if (pos_weight.defined()) ls = ls * ((pos_weight - 1) * target + 1);
  Tensor loss = weighted((1 - target) * input - ls, weight);
  return apply_loss_reduction(loss, reduction, "binary_cross_entropy_with_logits");
}

Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction, bool log_target) {
  EMBER_OP_CAST(kl_div, kl_div, input, target, reduction, log_target);
  check_defined(input, "kl_div", "input");
  check_defined(target, "kl_div", "target");
  Tensor out = log_target ? exp(target) * (target - input) : xlogy(target, target) - target * input;
  return apply_loss_reduction(out, reduction, "kl_div");
}

// ---- regression ----

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  EMBER_OP_CAST(mse_loss, mse_loss, input, target, reduction);
  check_defined(input, "mse_loss", "input");
  check_defined(target, "mse_loss", "target");
  Tensor d = input - target;
  return apply_loss_reduction(d * d, reduction, "mse_loss");
}

Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  EMBER_OP_CAST(l1_loss, l1_loss, input, target, reduction);
  check_defined(input, "l1_loss", "input");
  check_defined(target, "l1_loss", "target");
  return apply_loss_reduction(abs(input - target), reduction, "l1_loss");
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  EMBER_OP_CAST(smooth_l1_loss, smooth_l1_loss, input, target, reduction, beta);
  check_defined(input, "smooth_l1_loss", "input");
  check_defined(target, "smooth_l1_loss", "target");
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  Tensor d = input - target;
  if (beta == 0) {
    // |d|, with PyTorch's subgradient -1 at d == 0 for both input and target (its kernel
    // tests x <= -beta first, and runs with the arguments swapped for the target).
    OpRecorder rec("smooth_l1_loss", {input, target});
    Tensor out = apply_loss_reduction(abs(d), reduction, "smooth_l1_loss");
    if (rec) {
      rec.args(reduction, d.numel());
      rec.record(out,
                 [](VjpCtx& c) {
                   const int64_t reduction = c.args().i(0), n = c.args().i(1);
                   const Tensor &x = c.saved[0], &t = c.saved[1];
                   Tensor g = c.grads[0];
                   if (reduction == Reduction::Mean) g = g / double(n);
                   variable_list r(2);
                   if (c.needs(0)) r[0] = g * where(x - t <= 0, -1.0, 1.0);
                   if (c.needs(1)) r[1] = g * where(t - x <= 0, -1.0, 1.0);
                   return r;
                 },
                 {input, target});
    }
    return out;
  }
  Tensor z = abs(d);
  Tensor loss = where(z < beta, d * d * (0.5 / beta), z - 0.5 * beta);
  return apply_loss_reduction(loss, reduction, "smooth_l1_loss");
}

Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
  EMBER_OP_CAST(huber_loss, huber_loss, input, target, reduction, delta);
  check_defined(input, "huber_loss", "input");
  check_defined(target, "huber_loss", "target");
  EMBER_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  Tensor d = input - target;
  Tensor z = abs(d);
  Tensor loss = where(z < delta, d * d * 0.5, (z - 0.5 * delta) * delta);
  return apply_loss_reduction(loss, reduction, "huber_loss");
}

}  // namespace ember
