// Margin, ranking, embedding and likelihood losses, as composites of recorded ops following
// PyTorch 1.13's formulas (Loss.cpp, LossMultiMargin.cpp, LossMultiLabelMargin.cpp,
// nn/functional.py), and ctc_loss with its own alpha/beta recursions.
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "kernels/stubs/core.h"
#include "kernels/stubs/loss.h"
#include "ops/call_path.h"

namespace ember {

using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

Tensor reduce_loss(const Tensor& loss, int64_t reduction, const char* op) {
  EMBER_CHECK_VALUE(reduction >= 0 && reduction <= 2, "[", op, "] ", reduction,
                    " is not a valid value for reduction (0 none, 1 mean, 2 sum)");
  if (reduction == Reduction::Mean) return loss.mean();
  if (reduction == Reduction::Sum) return loss.sum();
  return loss;
}

void check_defined(std::initializer_list<Tensor> ts, const char* op) {
  for (const Tensor& t : ts) EMBER_CHECK(t.defined(), "[", op, "] inputs must be defined");
}

/// The class-index target of a margin loss as an (N, 1) int64 tensor, checked against C.
Tensor class_targets(const Tensor& target, int64_t N, int64_t C, const char* op) {
  EMBER_CHECK(target.dtype() == kLong, "[", op, "] expected scalar type Long but found ",
              dtype_name(target.dtype()));
  EMBER_CHECK(target.numel() == N, "[", op,
              "] inconsistent target size: ", shape_str(target.sizes()), " for ", N, " samples");
  Tensor t = target.reshape({N, 1}).contiguous();
  margin_check_targets_stub(t.device().type(), t, C, op);
  return t;
}

}  // namespace

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, int64_t reduction) {
  EMBER_OP_CAST(poisson_nll_loss, poisson_nll_loss, input, target, log_input, full, eps, reduction);
  check_defined({input, target}, "poisson_nll_loss");
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    Tensor st = target * log(target) - target + 0.5 * log(2 * M_PI * target);
    loss = loss + st.masked_fill(target <= 1, 0);
  }
  return reduce_loss(loss, reduction, "poisson_nll_loss");
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var0, bool full,
                         double eps, int64_t reduction) {
  EMBER_OP(gaussian_nll_loss, input, target, var0, full, eps, reduction);
  check_defined({input, target, var0}, "gaussian_nll_loss");
  Tensor var = var0;
  if (var.sizes() != input.sizes()) {
    const IntArrayRef is = input.sizes(), vs = var.sizes();
    if (input.dim() >= 1 && is.slice(0, is.size() - 1) == vs) {
      var = var.unsqueeze(-1);
    } else if (input.dim() >= 1 && var.dim() == input.dim() &&
               is.slice(0, is.size() - 1) == vs.slice(0, vs.size() - 1) && var.size(-1) == 1) {
    } else {
      EMBER_THROW(ValueError, "var is of incorrect size");
    }
  }
  EMBER_CHECK_VALUE(var.numel() == 0 || !(var < 0).any().item<bool>(),
                    "var has negative entry/entries");
  // The clamp is invisible to autograd, as nn.functional's in-place clamp under no_grad.
  Tensor vc = var + (var.clamp_min(eps) - var).detach();
  Tensor d = input - target;
  Tensor loss = (log(vc) + d * d / vc) * 0.5;
  if (full) loss = loss + 0.5 * std::log(2 * M_PI);
  return reduce_loss(loss, reduction, "gaussian_nll_loss");
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const Scalar& p,
                         const Scalar& margin, const Tensor& weight, int64_t reduction) {
  EMBER_OP_CAST(multi_margin_loss, multi_margin_loss, input, target, p, margin, weight, reduction);
  const char* op = "multi_margin_loss";
  check_defined({input, target}, op);
  const int64_t pv = p.toLong();
  EMBER_CHECK(pv == 1 || pv == 2, "only p == 1 and p == 2 supported");
  EMBER_CHECK((input.dim() <= 2 && input.numel() > 0) || (input.dim() == 2 && input.size(1) > 0),
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              shape_str(input.sizes()));
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.reshape({1, -1});
  const int64_t N = x.size(0), C = x.size(1);
  Tensor t = class_targets(target, N, C, op);
  if (weight.defined())
    EMBER_CHECK(weight.dim() <= 1 && weight.numel() == C, "inconsistent weight size, expected ", C,
                " but got ", shape_str(weight.sizes()));
  Tensor z = (x - x.gather(1, t) + margin.toDouble()).clamp_min(0);
  if (pv == 2) z = z * z;
  if (weight.defined()) z = z * weight.index_select(0, t.reshape({-1})).unsqueeze(1);
  Tensor keep = ones({N, C}, x.options()).scatter(1, t, 0.0);
  Tensor loss = (z * keep).sum({1}) / double(C);
  if (!batched) loss = loss.reshape({});
  return reduce_loss(loss, reduction, op);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  EMBER_OP_CAST(multilabel_margin_loss, multilabel_margin_loss, input, target, reduction);
  const char* op = "multilabel_margin_loss";
  check_defined({input, target}, op);
  EMBER_CHECK(input.dim() <= 2,
              "Expected non-empty vector or matrix with optional 0-dim batch "
              "size, but got: ",
              shape_str(input.sizes()));
  EMBER_CHECK(target.sizes() == input.sizes(),
              "inconsistent target size: ", shape_str(target.sizes()),
              " for input of size: ", shape_str(input.sizes()));
  EMBER_CHECK(target.dtype() == kLong, "expected scalar type Long but found ",
              dtype_name(target.dtype()));
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.reshape({1, -1});
  const int64_t N = x.size(0), C = x.size(1);
  // counts[n, j]: how often class j is listed before the first -1 (duplicates count twice, as
  // PyTorch's loop); is_target[n, i]: whether class i is listed at all.
  Tensor tc = target.reshape({N, C}).contiguous();
  Tensor counts = zeros({N, C}, TensorOptions(kDouble)),
         is_t = zeros({N, C}, TensorOptions(kDouble));
  multilabel_margin_targets_stub(tc.device().type(), tc, counts, is_t, op);
  counts = counts.to(x.dtype());
  Tensor non_t = (1 - is_t).to(x.dtype());
  // z[n, j, i] = max(0, 1 - (x[n, j] - x[n, i])) over listed j and unlisted i.
  Tensor z = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0);
  Tensor loss = (z * counts.unsqueeze(2) * non_t.unsqueeze(1)).sum({1, 2}) / double(C);
  if (!batched) loss = loss.reshape({});
  return reduce_loss(loss, reduction, op);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   int64_t reduction) {
  EMBER_OP(multilabel_soft_margin_loss, input, target, weight, reduction);
  check_defined({input, target}, "multilabel_soft_margin_loss");
  Tensor loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input));
  if (weight.defined()) loss = loss * weight;
  const int64_t class_dim = input.dim() - 1;
  loss = loss.sum({class_dim}) / double(input.size(class_dim));
  return reduce_loss(loss, reduction, "multilabel_soft_margin_loss");
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  EMBER_OP_CAST(soft_margin_loss, soft_margin_loss, input, target, reduction);
  check_defined({input, target}, "soft_margin_loss");
  return reduce_loss(log1p(exp(-input * target)), reduction, "soft_margin_loss");
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, int64_t reduction) {
  EMBER_OP_CAST(cosine_embedding_loss, cosine_embedding_loss, input1, input2, target, margin,
                reduction);
  const char* op = "cosine_embedding_loss";
  check_defined({input1, input2, target}, op);
  const int64_t td = target.dim();
  EMBER_CHECK(td <= 1, "0D or 1D target tensor expected, multi-target not supported");
  if (td == 1) {
    EMBER_CHECK(input1.dim() == 2 && input2.dim() == 2,
                "1D target tensor expects 2D input "
                "tensors, but found inputs with sizes ",
                shape_str(input1.sizes()), " and ", shape_str(input2.sizes()), ".");
  } else {
    EMBER_CHECK(input1.dim() == 1 && input2.dim() == 1,
                "0D target tensor expects 1D input "
                "tensors, but found inputs with sizes ",
                shape_str(input1.sizes()), " and ", shape_str(input2.sizes()), ".");
  }
  const int64_t d = input1.dim() - 1;
  constexpr double kEps = 1e-12;
  Tensor prod = (input1 * input2).sum({d});
  Tensor m1 = (input1 * input1).sum({d}) + kEps;
  Tensor m2 = (input2 * input2).sum({d}) + kEps;
  Tensor cos = prod / (m1 * m2).sqrt();
  Tensor z = zeros_like(cos);
  Tensor out = where(target == 1, 1 - cos, z) + where(target == -1, (cos - margin).clamp_min(0), z);
  return reduce_loss(out, reduction, op);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, int64_t reduction) {
  EMBER_OP_CAST(margin_ranking_loss, margin_ranking_loss, input1, input2, target, margin,
                reduction);
  check_defined({input1, input2, target}, "margin_ranking_loss");
  return reduce_loss((-target * (input1 - input2) + margin).clamp_min(0), reduction,
                     "margin_ranking_loss");
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            int64_t reduction) {
  EMBER_OP_CAST(hinge_embedding_loss, hinge_embedding_loss, input, target, margin, reduction);
  check_defined({input, target}, "hinge_embedding_loss");
  Tensor z = zeros_like(input);
  Tensor out = where(target != 1, (margin - input).clamp_min(0), z) + where(target != -1, input, z);
  return reduce_loss(out, reduction, "hinge_embedding_loss");
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, int64_t reduction) {
  EMBER_OP_CAST(triplet_margin_loss, triplet_margin_loss, anchor, positive, negative, margin, p,
                eps, swap, reduction);
  check_defined({anchor, positive, negative}, "triplet_margin_loss");
  EMBER_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
              "The anchor, positive, and negative tensors are expected to have the same number "
              "of dimensions, but got: anchor ",
              anchor.dim(), "D, positive ", positive.dim(), "D, and negative ", negative.dim(),
              "D inputs");
  Tensor dp = pairwise_distance(anchor, positive, p, eps);
  Tensor dn = pairwise_distance(anchor, negative, p, eps);
  if (swap) dn = minimum(dn, pairwise_distance(positive, negative, p, eps));
  return reduce_loss((dp - dn + margin).clamp_min(0), reduction, "triplet_margin_loss");
}

// ---- CTC ----

// The alpha/beta recursions and their gradient run in the ctc_loss kernel (Note [CTC recursion]
// in src/kernels/cpu/nn/loss.cpp); the op validates, converts and reduces.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  EMBER_OP_CAST(ctc_loss, ctc_loss, log_probs, targets, input_lengths, target_lengths, blank,
                reduction, zero_infinity);
  const char* op = "ctc_loss";
  check_defined({log_probs, targets}, op);
  EMBER_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2,
              "[ctc_loss] log_probs must be (T, N, "
              "C) or (T, C), got ",
              shape_str(log_probs.sizes()));
  EMBER_CHECK(log_probs.is_floating_point(), "[ctc_loss] log_probs must be floating, got ",
              dtype_name(log_probs.dtype()));
  const bool batched = log_probs.dim() == 3;
  Tensor lp3 = batched ? log_probs : log_probs.unsqueeze(1);
  const int64_t Tmax = lp3.size(0), N = lp3.size(1), C = lp3.size(2);
  EMBER_CHECK(blank >= 0 && blank < C, "blank must be in label range");
  EMBER_CHECK(int64_t(input_lengths.size()) == N, "input_lengths must be of size batch_size");
  EMBER_CHECK(int64_t(target_lengths.size()) == N, "target_lengths must be of size batch_size");
  EMBER_CHECK(!targets.is_floating_point(), "[ctc_loss] targets must be integers, got ",
              dtype_name(targets.dtype()));
  Tensor tg = targets.to(kLong).contiguous();
  int64_t pos = 0;
  const bool padded = tg.dim() == 2;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t Ti = input_lengths[size_t(n)], Li = target_lengths[size_t(n)];
    EMBER_CHECK(Ti >= 0 && Ti <= Tmax, "Expected input_lengths to have value at most ", Tmax,
                ", but got value ", Ti, " (while checking arguments for ctc_loss_cpu)");
    EMBER_CHECK(Li >= 0, "[ctc_loss] target lengths must be non-negative, got ", Li);
    if (padded) {
      EMBER_CHECK(Li <= tg.size(1), "Expected tensor to have size at least ", Li,
                  " at dimension 1, but got size ", tg.size(1),
                  " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
    } else {
      EMBER_CHECK(pos + Li <= tg.numel(), "[ctc_loss] targets hold ", tg.numel(),
                  " labels but target_lengths ask for more");
      pos += Li;
    }
  }

  const ScalarType ct = log_probs.dtype() == kDouble ? kDouble : kFloat;
  OpRecorder rec(op, {log_probs});
  Tensor lpc = lp3.to(ct).contiguous();
  Tensor nll = empty({N}, TensorOptions(kDouble));
  Tensor grad = rec ? zeros({Tmax, N, C}, TensorOptions(kDouble)) : Tensor();
  // The kernel checks the labels (IndexError) before any recursion runs.
  ctc_loss_stub(lpc.device().type(), lpc, tg, input_lengths, target_lengths, blank, zero_infinity,
                nll, grad);
  Tensor per = nll.to(ct);
  Tensor out;
  if (reduction == Reduction::Mean) {
    std::vector<double> lengths(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n)
      lengths[size_t(n)] = double(std::max<int64_t>(1, target_lengths[size_t(n)]));
    Tensor tl = tensor(lengths, TensorOptions(kDouble));
    out = (per / tl.to(ct)).mean();
  } else {
    out = reduce_loss(per, reduction, op);
    if (!batched && reduction == Reduction::None) out = out.reshape({});
  }
  out = out.to(log_probs.dtype());
  if (rec) {
    std::vector<double> scale(static_cast<size_t>(N), 1.0);
    if (reduction == Reduction::Mean)
      for (int64_t n = 0; n < N; ++n)
        scale[size_t(n)] =
            1.0 / double(std::max<int64_t>(1, target_lengths[size_t(n)])) / double(N);
    Tensor sc = tensor(scale, TensorOptions(kDouble)).reshape({1, N, 1});
    Tensor gfull = (grad * sc).to(ct);
    // gfull comes from the inputs: they are saved so that changing them before backward is
    // an error, as in PyTorch.
    rec.args(reduction, batched, N);
    rec.record(out,
               [](VjpCtx& c) {
                 const int64_t reduction = c.args().i(0), N = c.args().i(2);
                 const bool batched = c.args().b(1);
                 const Tensor& gfull = c.saved[2];
                 // The gradient is a constant of log_probs here: double backward is not supported.
                 Tensor g = c.grads[0];
                 g = reduction == Reduction::None ? g.reshape({1, N, 1}) : g.reshape({1, 1, 1});
                 Tensor r = gfull * g;
                 return variable_list{batched ? r : r.squeeze(1)};
               },
               {log_probs, targets, gfull});
  }
  return out;
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, int64_t reduction,
                bool zero_infinity) {
  EMBER_OP_CAST(ctc_loss_1, ctc_loss, log_probs, targets, input_lengths, target_lengths, blank,
                reduction, zero_infinity);
  EMBER_CHECK(input_lengths.defined() && target_lengths.defined(),
              "[ctc_loss] lengths must be defined");
  Tensor il = input_lengths.to(kLong).contiguous().reshape({-1});
  Tensor tl = target_lengths.to(kLong).contiguous().reshape({-1});
  const std::vector<int64_t> a = int64_values_stub(il.device().type(), il);
  const std::vector<int64_t> b = int64_values_stub(tl.device().type(), tl);
  return ctc_loss(log_probs, targets, IntArrayRef(a.data(), a.size()),
                  IntArrayRef(b.data(), b.size()), blank, reduction, zero_infinity);
}

}  // namespace ember
