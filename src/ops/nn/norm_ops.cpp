// batch_norm, layer_norm, group_norm (fused kernels behind kernels/stubs/norm.h), and
// instance_norm / local_response_norm as composites. Validation and running-stat updates follow
// PyTorch 1.13. float16/bfloat16 inputs compute in float32 and round once at the end.
//
// Note [Norm backward]
// The vjp of each fused norm runs the fused backward kernel when grad mode is off (a plain
// backward()). Under create_graph (grad mode on inside the vjp) it evaluates the same formula
// with ember ops instead, so double backward and forward-over-reverse work through their rules.
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ember/shape_ops.h"
#include "kernels/stubs/norm.h"
#include "ops/call_path.h"

namespace ember {

using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

namespace {

ScalarType compute_type(const Tensor& x) { return x.dtype() == kDouble ? kDouble : kFloat; }

/// `t` (an undefined tensor stays undefined) as a contiguous tensor of dtype `ct`.
Tensor as_ct(const Tensor& t, ScalarType ct) {
  return t.defined() ? t.to(ct).contiguous() : Tensor();
}

/// Float64 per-channel statistics `t` as a tensor of dtype `ct` that never shares t's storage
/// (the caller may change it in place; t is saved for backward).
Tensor fresh_as(const Tensor& t, ScalarType ct) { return ct == t.dtype() ? t.clone() : t.to(ct); }

void check_norm_input(const Tensor& input, const char* op) {
  EMBER_CHECK(input.defined(), "[", op, "] input must be defined");
  EMBER_CHECK(input.is_floating_point(), "[", op, "] expected a floating-point input, got ",
              dtype_name(input.dtype()));
}

void check_vec(const Tensor& t, int64_t C, const char* what) {
  if (!t.defined()) return;
  EMBER_CHECK(t.numel() == C, what, " should contain ", C, " elements not ", t.numel());
}

/// Dims of an (N, C, *) tensor other than 1, and the (1, C, 1, ...) broadcast shape.
DimVector non_channel_dims(int64_t nd) {
  DimVector d;
  for (int64_t i = 0; i < nd; ++i)
    if (i != 1) d.push_back(i);
  return d;
}
DimVector channel_shape(int64_t nd, int64_t C) {
  DimVector s(size_t(nd), 1);
  s[1] = C;
  return s;
}

}  // namespace

// ---- batch norm ----

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, bool training,
                                                     double momentum, double eps) {
  EMBER_OP(native_batch_norm, input, weight, bias, running_mean, running_var, training, momentum,
           eps);
  const char* op = "batch_norm";
  check_norm_input(input, op);
  EMBER_CHECK(input.dim() >= 2 || input.numel() == 0,
              "[batch_norm] expected an (N, C, *) input with at least 2 dims, "
              "got ",
              shape_str(input.sizes()));
  // A zero-size input of any rank returns early below, as PyTorch's.
  const int64_t N = input.dim() > 0 ? input.size(0) : 1, C = input.dim() >= 2 ? input.size(1) : 0;
  check_vec(weight, C, "weight");
  check_vec(bias, C, "bias");
  check_vec(running_mean, C, "running_mean");
  check_vec(running_var, C, "running_var");
  EMBER_CHECK(training || (running_mean.defined() && running_var.defined()),
              "[batch_norm] running_mean and running_var must be defined in evaluation mode");
  const ScalarType ct = compute_type(input);
  const int64_t nd = input.dim();
  int64_t S = 1;
  for (int64_t d = 2; d < nd; ++d) S *= input.size(d);

  OpRecorder rec("native_batch_norm", {input, weight, bias});
  if (input.numel() == 0) {
    // As PyTorch: no statistics, an output that still depends on weight and bias.
    rec.resume();
    Tensor out = input.clone();
    if (weight.defined() && weight.numel() > 0) out = out * weight[0];
    if (bias.defined() && bias.numel() > 0) out = out + bias[0];
    return {out, empty({0}, input.options()), empty({0}, input.options())};
  }

  Tensor x = input.to(ct).contiguous();
  const DeviceType dev = x.device().type();
  // The per-channel statistics, in float64 (the vjp reads them too).
  Tensor mean_d = empty({C}, TensorOptions(kDouble).device(x.device())),
         invstd_d = empty({C}, TensorOptions(kDouble).device(x.device()));
  if (training) {
    Tensor var_d = empty({C}, TensorOptions(kDouble).device(x.device()));
    batch_norm_stats_stub(dev, x, eps, mean_d, invstd_d, var_d);
    if (running_mean.defined() || running_var.defined()) {
      NoGradGuard ng;
      if (running_mean.defined()) {
        Tensor m = mean_d.to(running_mean.dtype());
        Tensor& rm = const_cast<Tensor&>(running_mean);
        rm.mul_(1 - momentum).add_(m.view(rm.sizes()), momentum);
      }
      if (running_var.defined()) {
        Tensor v = var_d.to(running_var.dtype());
        Tensor& rv = const_cast<Tensor&>(running_var);
        rv.mul_(1 - momentum).add_(v.view(rv.sizes()), momentum);
      }
    }
  } else {
    Tensor rm = running_mean.to(kDouble).contiguous(), rv = running_var.to(kDouble).contiguous();
    batch_norm_eval_stats_stub(dev, rm, rv, eps, mean_d, invstd_d);
  }
  Tensor wd = weight.defined() ? weight.to(kDouble).contiguous() : Tensor();
  Tensor bd = bias.defined() ? bias.to(kDouble).contiguous() : Tensor();
  Tensor y = empty(x.sizes(), TensorOptions(ct).device(x.device()));
  batch_norm_apply_stub(dev, x, wd, bd, mean_d, invstd_d, y);
  Tensor out = ct == input.dtype() ? y : y.to(input.dtype());
  Tensor save_mean =
      training ? fresh_as(mean_d, ct) : empty({0}, TensorOptions(ct).device(x.device()));
  Tensor save_invstd =
      training ? fresh_as(invstd_d, ct) : empty({0}, TensorOptions(ct).device(x.device()));

  if (rec) {
    rec.args(nd, N, C, S, ct, training, eps);
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t nd = c.args().i(0), C = c.args().i(2);
          const ScalarType ct = c.args().dtype(4);
          const bool training = c.args().b(5);
          const double eps = c.args().f(6);
          const Tensor &xin = c.saved[0], &weight = c.saved[1];
          const Tensor &mean = c.saved[2], &invstd = c.saved[3];
          variable_list r(3);
          if (GradMode::is_enabled()) {
            // Differentiable form (Note [Norm backward]).
            const DimVector dims = non_channel_dims(nd);
            const DimVector cs = channel_shape(nd, C);
            Tensor xs = xin.to(ct);
            Tensor g = c.grads[0].to(ct);
            Tensor w = weight.defined() ? weight.to(ct).view(cs) : Tensor();
            Tensor inv, xhat;
            if (training) {
              Tensor mu = xs.mean(dims, true);
              Tensor xc = xs - mu;
              inv = rsqrt((xc * xc).mean(dims, true) + eps);
              xhat = xc * inv;
            } else {
              inv = invstd.to(ct).view(cs);
              xhat = (xs - mean.to(ct).view(cs)) * inv;
            }
            if (c.needs(0)) {
              Tensor gw = w.defined() ? g * w : g;
              r[0] = training
                         ? inv * (gw - gw.mean(dims, true) - xhat * (gw * xhat).mean(dims, true))
                         : gw * inv;
            }
            if (c.needs(1)) r[1] = (g * xhat).sum(dims);
            if (c.needs(2)) r[2] = g.sum(dims);
            return r;
          }
          Tensor x2 = xin.to(ct).contiguous();
          Tensor g = c.grads[0].to(ct).contiguous();
          Tensor wd2 = c.needs(0) && weight.defined() ? weight.to(kDouble).contiguous() : Tensor();
          Tensor dx =
              c.needs(0) ? empty(x2.sizes(), TensorOptions(ct).device(x2.device())) : Tensor();
          Tensor dw = empty({C}, TensorOptions(kDouble).device(x2.device())),
                 db = empty({C}, TensorOptions(kDouble).device(x2.device()));
          batch_norm_backward_stub(x2.device().type(), g, x2, wd2, mean, invstd, training, dx, dw,
                                   db);
          r[0] = dx;
          if (c.needs(1)) r[1] = dw.to(ct);
          if (c.needs(2)) r[2] = db.to(ct);
          return r;
        },
        // Every tensor the rule reads is saved (version-checked); in evaluation the running
        // statistics are read too (as PyTorch, which raises when they change before backward).
        training ? variable_list{input, weight, mean_d, invstd_d}
                 : variable_list{input, weight, mean_d, invstd_d, running_mean, running_var});
  }
  return {out, save_mean, save_invstd};
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled) {
  EMBER_OP_CAST(batch_norm, batch_norm, input, weight, bias, running_mean, running_var, training,
                momentum, eps, cudnn_enabled);
  return std::get<0>(
      native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

// ---- layer norm ----

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     IntArrayRef normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps) {
  EMBER_OP(native_layer_norm, input, normalized_shape, weight, bias, eps);
  check_norm_input(input, "layer_norm");
  const int64_t k = int64_t(normalized_shape.size());
  EMBER_CHECK(k >= 1,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
              "at least one element, but got normalized_shape = ",
              shape_str(normalized_shape));
  EMBER_CHECK(!weight.defined() || weight.sizes() == normalized_shape,
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              shape_str(weight.sizes()), " and normalized_shape = ", shape_str(normalized_shape));
  EMBER_CHECK(!bias.defined() || bias.sizes() == normalized_shape,
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
              shape_str(bias.sizes()), " and normalized_shape = ", shape_str(normalized_shape));
  const int64_t nd = input.dim();
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(nd - k + i) == normalized_shape[size_t(i)];
  if (!ok) {
    EMBER_THROW(Error, "Given normalized_shape=", shape_str(normalized_shape),
                ", expected input with shape [*, ", shape_str(normalized_shape).substr(1),
                ", but got input of size", shape_str(input.sizes()));
  }
  const int64_t axis = nd - k;
  int64_t M = 1, D = 1;
  for (int64_t i = 0; i < nd; ++i) (i < axis ? M : D) *= input.size(i);
  DimVector stat_shape;
  for (int64_t i = 0; i < nd; ++i) stat_shape.push_back(i < axis ? input.size(i) : 1);

  const ScalarType ct = compute_type(input);
  const DimVector ns(normalized_shape);
  OpRecorder rec("native_layer_norm", {input, weight, bias});
  Tensor x = input.to(ct).contiguous();
  Tensor w = as_ct(weight, ct), b = as_ct(bias, ct);
  Tensor y = empty(x.sizes(), TensorOptions(ct).device(x.device()));
  Tensor mean = empty(stat_shape, TensorOptions(ct).device(x.device())),
         rstd = empty(stat_shape, TensorOptions(ct).device(x.device()));
  layer_norm_stub(x.device().type(), x, w, b, M, D, eps, y, mean, rstd);
  Tensor out = ct == input.dtype() ? y : y.to(input.dtype());
  if (rec) {
    rec.args(nd, axis, ct, eps, ns, M, D);
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t nd = c.args().i(0), axis = c.args().i(1);
          const ScalarType ct = c.args().dtype(2);
          const double eps = c.args().f(3);
          const IntArrayRef ns = c.args().ints(4);
          const int64_t M = c.args().i(5), D = c.args().i(6);
          const Tensor &xin = c.saved[0], &weight = c.saved[1];
          const Tensor &mean = c.saved[3], &rstd = c.saved[4];
          variable_list r(3);
          DimVector lead, norm;
          for (int64_t i = 0; i < nd; ++i) (i < axis ? lead : norm).push_back(i);
          if (GradMode::is_enabled()) {
            // Differentiable form (Note [Norm backward]).
            Tensor xs = xin.to(ct), g = c.grads[0].to(ct);
            Tensor mu = xs.mean(norm, true);
            Tensor xc = xs - mu;
            Tensor rs = rsqrt((xc * xc).mean(norm, true) + eps);
            Tensor xhat = xc * rs;
            if (c.needs(0)) {
              Tensor gw = weight.defined() ? g * weight.to(ct) : g;
              r[0] = rs * (gw - gw.mean(norm, true) - xhat * (gw * xhat).mean(norm, true));
            }
            if (c.needs(1)) r[1] = lead.size() ? (g * xhat).sum(lead) : g * xhat;
            if (c.needs(2)) r[2] = lead.size() ? g.sum(lead) : g;
            return r;
          }
          Tensor x2 = xin.to(ct).contiguous(), g = c.grads[0].to(ct).contiguous();
          Tensor w = as_ct(weight, ct);
          Tensor dx =
              c.needs(0) ? empty(x2.sizes(), TensorOptions(ct).device(x2.device())) : Tensor();
          Tensor dw = c.needs(1) ? empty(ns, TensorOptions(ct).device(x2.device())) : Tensor();
          Tensor db = c.needs(2) ? empty(ns, TensorOptions(ct).device(x2.device())) : Tensor();
          layer_norm_backward_stub(x2.device().type(), g, x2, mean, rstd, w, M, D, dx, dw, db);
          r[0] = dx;
          r[1] = dw;
          r[2] = db;
          return r;
        },
        // As PyTorch: bias is saved too, and mean / rstd (returned to the caller).
        {input, weight, bias, mean, rstd});
  }
  return {out, mean, rstd};
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps, bool cudnn_enable) {
  EMBER_OP_CAST(layer_norm, layer_norm, input, normalized_shape, weight, bias, eps, cudnn_enable);
  return std::get<0>(native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// ---- group norm ----

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps, bool cudnn_enabled) {
  EMBER_OP_CAST(group_norm, group_norm, input, num_groups, weight, bias, eps, cudnn_enabled);
  check_norm_input(input, "group_norm");
  EMBER_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ",
              input.dim());
  const int64_t N = input.size(0), C = input.size(1), G = num_groups;
  EMBER_CHECK(G > 0 && C % G == 0, "Expected number of channels in input to be divisible by ",
              "num_groups, but got input of shape ", shape_str(input.sizes()),
              " and num_groups=", G);
  EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C),
              "Expected weight to be a vector of size equal to the number of channels in input, "
              "but got weight of shape ",
              shape_str(weight.sizes()), " and input of shape ", shape_str(input.sizes()));
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C),
              "Expected bias to be a vector of size equal to the number of channels in input, "
              "but got bias of shape ",
              shape_str(bias.sizes()), " and input of shape ", shape_str(input.sizes()));
  const int64_t nd = input.dim();
  int64_t S = 1;
  for (int64_t d = 2; d < nd; ++d) S *= input.size(d);
  const ScalarType ct = compute_type(input);
  OpRecorder rec("native_group_norm", {input, weight, bias});
  Tensor x = input.to(ct).contiguous();
  Tensor w = as_ct(weight, ct), b = as_ct(bias, ct);
  Tensor y = empty(x.sizes(), TensorOptions(ct).device(x.device()));
  Tensor mean = empty({N, G}, TensorOptions(ct).device(x.device())),
         rstd = empty({N, G}, TensorOptions(ct).device(x.device()));
  group_norm_stub(x.device().type(), x, w, b, G, eps, y, mean, rstd);
  Tensor out = ct == input.dtype() ? y : y.to(input.dtype());
  if (rec) {
    rec.args(nd, N, C, S, G, ct, eps);
    rec.record(
        out,
        [](VjpCtx& c) {
          const int64_t nd = c.args().i(0), N = c.args().i(1), C = c.args().i(2);
          const int64_t G = c.args().i(4);
          const ScalarType ct = c.args().dtype(5);
          const double eps = c.args().f(6);
          const Tensor &xin = c.saved[0], &weight = c.saved[1];
          const Tensor &mean = c.saved[2], &rstd = c.saved[3];
          variable_list r(3);
          if (GradMode::is_enabled()) {
            // Differentiable form (Note [Norm backward]).
            const DimVector cs = channel_shape(nd, C);
            const DimVector dims = non_channel_dims(nd);
            Tensor xs = xin.to(ct).reshape({N, G, -1}), g = c.grads[0].to(ct);
            Tensor mu = xs.mean({2}, true);
            Tensor xc = xs - mu;
            Tensor rs = rsqrt((xc * xc).mean({2}, true) + eps);
            Tensor xhat = (xc * rs).view(xin.sizes());
            if (c.needs(0)) {
              Tensor gw = (weight.defined() ? g * weight.to(ct).view(cs) : g).reshape({N, G, -1});
              Tensor xh = xhat.reshape({N, G, -1});
              r[0] = (rs * (gw - gw.mean({2}, true) - xh * (gw * xh).mean({2}, true)))
                         .view(xin.sizes());
            }
            if (c.needs(1)) r[1] = (g * xhat).sum(dims);
            if (c.needs(2)) r[2] = g.sum(dims);
            return r;
          }
          Tensor x2 = xin.to(ct).contiguous(), g = c.grads[0].to(ct).contiguous();
          Tensor w = as_ct(weight, ct);
          Tensor dx =
              c.needs(0) ? empty(x2.sizes(), TensorOptions(ct).device(x2.device())) : Tensor();
          Tensor dw = c.needs(1) ? empty({C}, TensorOptions(ct).device(x2.device())) : Tensor();
          Tensor db = c.needs(2) ? empty({C}, TensorOptions(ct).device(x2.device())) : Tensor();
          group_norm_backward_stub(x2.device().type(), g, x2, mean, rstd, w, G, dx, dw, db);
          r[0] = dx;
          r[1] = dw;
          r[2] = db;
          return r;
        },
        {input, weight, mean, rstd});
  }
  return out;
}

// ---- instance norm (batch norm over (1, N*C, *), as PyTorch) ----

Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps, bool cudnn_enabled) {
  EMBER_OP_CAST(instance_norm, instance_norm, input, weight, bias, running_mean, running_var,
                use_input_stats, momentum, eps, cudnn_enabled);
  check_norm_input(input, "instance_norm");
  EMBER_CHECK(input.dim() >= 2, "[instance_norm] expected an (N, C, *) input, got ",
              shape_str(input.sizes()));
  EMBER_CHECK(use_input_stats || (running_mean.defined() && running_var.defined()),
              "Expected running_mean and running_var to be defined when use_input_stats is "
              "false");
  const int64_t N = input.size(0), C = input.size(1);
  DimVector shape_(input.sizes());
  shape_[0] = 1;
  shape_[1] = N * C;
  Tensor w = weight.defined() ? weight.repeat({N}) : Tensor();
  Tensor b = bias.defined() ? bias.repeat({N}) : Tensor();
  Tensor rm = running_mean.defined() ? running_mean.repeat({N}) : Tensor();
  Tensor rv = running_var.defined() ? running_var.repeat({N}) : Tensor();
  Tensor out =
      batch_norm(input.contiguous().view(shape_), w, b, rm, rv, use_input_stats, momentum, eps);
  if (use_input_stats) {
    NoGradGuard ng;
    if (running_mean.defined())
      const_cast<Tensor&>(running_mean).copy_(rm.view({N, C}).mean({0}, false));
    if (running_var.defined())
      const_cast<Tensor&>(running_var).copy_(rv.view({N, C}).mean({0}, false));
  }
  return out.view(input.sizes());
}

// ---- local response norm (the composite of nn.functional) ----

Tensor local_response_norm(const Tensor& input, int64_t size, double alpha, double beta, double k) {
  EMBER_OP(local_response_norm, input, size, alpha, beta, k);
  EMBER_CHECK(input.defined(), "[local_response_norm] input must be defined");
  EMBER_CHECK_VALUE(input.dim() >= 3, "Expected 3D or higher dimensionality input (got ",
                    input.dim(), " dimensions)");
  EMBER_CHECK(size > 0, "[local_response_norm] size must be positive, got ", size);
  if (input.numel() == 0) return input;
  // Average of x^2 over a window of `size` channels, zero-padded by size/2 before and
  // (size-1)/2 after, as avg_pool over the channel dim does.
  Tensor sq = input * input;
  DimVector pad_shape(input.sizes());
  pad_shape[1] = size / 2;
  Tensor before = zeros(pad_shape, input.options());
  pad_shape[1] = (size - 1) / 2;
  Tensor after = zeros(pad_shape, input.options());
  Tensor padded = cat({before, sq, after}, 1);
  Tensor div = padded.unfold(1, size, 1).sum({-1}) / double(size);
  div = (div * alpha + k).pow(beta);
  return input / div;
}

}  // namespace ember
