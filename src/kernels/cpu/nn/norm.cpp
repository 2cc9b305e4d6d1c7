// CPU kernels of batch, layer and group normalization: per-channel scalar steps around the fused
// loops of norm_cpu.cpp. Per-channel arithmetic stays in double, as the loops accumulate.
#include <cmath>
#include <vector>

#include "kernels/cpu/nn/norm_cpu.h"
#include "kernels/stubs/norm.h"

namespace ember {

EMBER_DEFINE_KERNEL(batch_norm_stats_stub);
EMBER_DEFINE_KERNEL(batch_norm_eval_stats_stub);
EMBER_DEFINE_KERNEL(batch_norm_apply_stub);
EMBER_DEFINE_KERNEL(batch_norm_backward_stub);
EMBER_DEFINE_KERNEL(layer_norm_stub);
EMBER_DEFINE_KERNEL(layer_norm_backward_stub);
EMBER_DEFINE_KERNEL(group_norm_stub);
EMBER_DEFINE_KERNEL(group_norm_backward_stub);

namespace cpu {
namespace {

/// Runs `f(T{})` with T the C++ type of the compute dtype (float32 or float64).
template <class F>
void float_or_double(ScalarType dt, const F& f) {
  if (dt == kFloat)
    f(float{});
  else
    f(double{});
}

template <class T>
T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

/// The (N, C, S) view of an (N, C, *) tensor.
void ncs(const Tensor& x, int64_t& N, int64_t& C, int64_t& S) {
  N = x.size(0), C = x.size(1), S = 1;
  for (int64_t d = 2; d < x.dim(); ++d) S *= x.size(d);
}

void batch_norm_stats(const Tensor& x, double eps, Tensor& mean, Tensor& invstd, Tensor& var) {
  int64_t N, C, S;
  ncs(x, N, C, S);
  double* m = mean.data_ptr<double>();
  double* inv = invstd.data_ptr<double>();
  double* unb = var.data_ptr<double>();
  std::vector<double> v(static_cast<size_t>(C));
  float_or_double(x.dtype(), [&](auto t) {
    using T = decltype(t);
    bn_stats(x.data_ptr<T>(), N, C, S, m, v.data());
  });
  // The running variance is unbiased (as PyTorch).
  const double M = double(N * S);
  for (int64_t c = 0; c < C; ++c) {
    inv[c] = 1.0 / std::sqrt(v[size_t(c)] + eps);
    unb[c] = v[size_t(c)] * M / (M - 1);
  }
}

void batch_norm_eval_stats(const Tensor& running_mean, const Tensor& running_var, double eps,
                           Tensor& mean, Tensor& invstd) {
  const double* rm = running_mean.data_ptr<double>();
  const double* rv = running_var.data_ptr<double>();
  double* m = mean.data_ptr<double>();
  double* inv = invstd.data_ptr<double>();
  for (int64_t c = 0, C = mean.numel(); c < C; ++c) {
    m[c] = rm[c];
    inv[c] = 1.0 / std::sqrt(rv[c] + eps);
  }
}

void batch_norm_apply(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& mean,
                      const Tensor& invstd, Tensor& y) {
  int64_t N, C, S;
  ncs(x, N, C, S);
  const double* w = ptr_or_null<double>(weight);
  const double* b = ptr_or_null<double>(bias);
  const double* m = mean.data_ptr<double>();
  const double* inv = invstd.data_ptr<double>();
  // One multiply-add per element: the statistics and the affine map fold into scale and shift.
  std::vector<double> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    scale[size_t(c)] = (w ? w[c] : 1.0) * inv[c];
    shift[size_t(c)] = (b ? b[c] : 0.0) - m[c] * scale[size_t(c)];
  }
  float_or_double(x.dtype(), [&](auto t) {
    using T = decltype(t);
    bn_apply(x.data_ptr<T>(), y.data_ptr<T>(), N, C, S, scale.data(), shift.data());
  });
}

void batch_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& weight,
                         const Tensor& mean_t, const Tensor& invstd_t, bool training,
                         Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  int64_t N, C, S;
  ncs(x, N, C, S);
  const double* mean = mean_t.data_ptr<double>();
  const double* invstd = invstd_t.data_ptr<double>();
  double* sg = grad_bias.data_ptr<double>();
  double* dw = grad_weight.data_ptr<double>();
  const size_t nc = size_t(C);
  std::vector<double> sgx(nc);
  float_or_double(x.dtype(), [&](auto t) {
    using T = decltype(t);
    bn_grad_sums(grad.data_ptr<T>(), x.data_ptr<T>(), N, C, S, mean, sg, sgx.data());
  });
  if (grad_input.defined()) {
    // dx = g * a[c] + x * b[c] + d[c]: in training the batch statistics depend on x too.
    const double M = double(N * S);
    const double* wd = ptr_or_null<double>(weight);
    std::vector<double> a(nc), b(nc), d(nc);
    for (int64_t k = 0; k < C; ++k) {
      const size_t i = size_t(k);
      const double w = wd ? wd[k] : 1.0;
      a[i] = w * invstd[i];
      if (training) {
        b[i] = -a[i] * invstd[i] * invstd[i] * sgx[i] / M;
        d[i] = -a[i] * sg[i] / M - b[i] * mean[i];
      } else {
        b[i] = d[i] = 0;
      }
    }
    float_or_double(x.dtype(), [&](auto t) {
      using T = decltype(t);
      bn_backward_apply(grad.data_ptr<T>(), x.data_ptr<T>(), grad_input.data_ptr<T>(), N, C, S,
                        a.data(), b.data(), d.data());
    });
  }
  for (int64_t k = 0; k < C; ++k) dw[k] = sgx[size_t(k)] * invstd[k];
}

void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t M, int64_t D,
                double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  float_or_double(x.dtype(), [&](auto t) {
    using T = decltype(t);
    ln_forward(x.data_ptr<T>(), ptr_or_null<T>(weight), ptr_or_null<T>(bias), y.data_ptr<T>(), M, D,
               eps, mean.data_ptr<T>(), rstd.data_ptr<T>());
  });
}

void layer_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& mean,
                         const Tensor& rstd, const Tensor& weight, int64_t M, int64_t D,
                         Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  float_or_double(x.dtype(), [&](auto t) {
    using T = decltype(t);
    ln_backward(grad.data_ptr<T>(), x.data_ptr<T>(), mean.data_ptr<T>(), rstd.data_ptr<T>(),
                ptr_or_null<T>(weight), M, D, ptr_or_null<T>(grad_input),
                ptr_or_null<T>(grad_weight), ptr_or_null<T>(grad_bias));
  });
}

void group_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t groups,
                double eps, Tensor& y, Tensor& mean, Tensor& rstd) {
  int64_t N, C, S;
  ncs(x, N, C, S);
  float_or_double(x.dtype(), [&](auto t) {
    using T = decltype(t);
    gn_forward(x.data_ptr<T>(), ptr_or_null<T>(weight), ptr_or_null<T>(bias), y.data_ptr<T>(), N, C,
               S, groups, eps, mean.data_ptr<T>(), rstd.data_ptr<T>());
  });
}

void group_norm_backward(const Tensor& grad, const Tensor& x, const Tensor& mean,
                         const Tensor& rstd, const Tensor& weight, int64_t groups,
                         Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias) {
  int64_t N, C, S;
  ncs(x, N, C, S);
  float_or_double(x.dtype(), [&](auto t) {
    using T = decltype(t);
    gn_backward(grad.data_ptr<T>(), x.data_ptr<T>(), mean.data_ptr<T>(), rstd.data_ptr<T>(),
                ptr_or_null<T>(weight), N, C, S, groups, ptr_or_null<T>(grad_input),
                ptr_or_null<T>(grad_weight), ptr_or_null<T>(grad_bias));
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(batch_norm_stats_stub, kCPU, cpu::batch_norm_stats);
EMBER_REGISTER_KERNEL(batch_norm_eval_stats_stub, kCPU, cpu::batch_norm_eval_stats);
EMBER_REGISTER_KERNEL(batch_norm_apply_stub, kCPU, cpu::batch_norm_apply);
EMBER_REGISTER_KERNEL(batch_norm_backward_stub, kCPU, cpu::batch_norm_backward);
EMBER_REGISTER_KERNEL(layer_norm_stub, kCPU, cpu::layer_norm);
EMBER_REGISTER_KERNEL(layer_norm_backward_stub, kCPU, cpu::layer_norm_backward);
EMBER_REGISTER_KERNEL(group_norm_stub, kCPU, cpu::group_norm);
EMBER_REGISTER_KERNEL(group_norm_backward_stub, kCPU, cpu::group_norm_backward);

}  // namespace ember
