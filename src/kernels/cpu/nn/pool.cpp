// CPU kernels of max pooling: the per-dim window tables of a pooling geometry, then the plane
// loops of pool_cpu.cpp. Tables are built here, after the outputs exist, so they never outgrow
// them.
#include <algorithm>

#include "kernels/cpu/nn/pool_cpu.h"
#include "kernels/stubs/pool.h"
#include "kernels/stubs/pool_taps.h"

namespace ember {

EMBER_DEFINE_KERNEL(max_pool_stub);
EMBER_DEFINE_KERNEL(adaptive_max_pool_stub);
EMBER_DEFINE_KERNEL(max_pool_backward_stub);
EMBER_DEFINE_KERNEL(max_pool_taps_stub);
EMBER_DEFINE_KERNEL(max_pool_taps_backward_stub);
EMBER_DEFINE_KERNEL(max_pool_taps_to_indices_stub);

namespace cpu {
namespace {

/// Windows of a regular pool (taps inside the input only) from input x (N, C, in...) to output
/// y (N, C, out...).
PoolWindows regular_windows(IntArrayRef xs, IntArrayRef ys, IntArrayRef k, IntArrayRef s,
                            IntArrayRef p, IntArrayRef d) {
  PoolWindows w;
  const int nd = int(k.size());
  const int off = 3 - nd;
  for (int j = 0; j < 3; ++j) {
    const int i = j - off;
    if (i < 0) {
      w.first[j] = {0}, w.count[j] = {1};
      continue;
    }
    const int64_t out = ys[size_t(2 + i)];
    w.in[j] = xs[size_t(2 + i)], w.out[j] = out, w.step[j] = d[i];
    for (int64_t o = 0; o < out; ++o) {
      int64_t start = o * s[i] - p[i];
      const int64_t end = std::min(start + (k[i] - 1) * d[i] + 1, w.in[j]);
      if (start < 0) start += (-start + d[i] - 1) / d[i] * d[i];  // first tap >= 0
      w.first[j].push_back(start);
      w.count[j].push_back(end > start ? (end - start + d[i] - 1) / d[i] : 0);
    }
  }
  return w;
}

PoolWindows adaptive_windows(const Tensor& x, const Tensor& y) {
  PoolWindows w;
  const int nd = int(x.dim()) - 2;
  const int off = 3 - nd;
  for (int j = 0; j < 3; ++j) {
    const int i = j - off;
    if (i < 0) {
      w.first[j] = {0}, w.count[j] = {1};
      continue;
    }
    const int64_t in = x.size(2 + i), out = y.size(2 + i);
    w.in[j] = in, w.out[j] = out;
    for (int64_t o = 0; o < out; ++o) {
      const int64_t s = (o * in) / out, e = ((o + 1) * in + out - 1) / out;
      w.first[j].push_back(s);
      w.count[j].push_back(e - s);
    }
  }
  return w;
}

void max_pool_cpu(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, Tensor& y, Tensor& indices) {
  max_pool_forward(x.dtype(), x.data_ptr(), y.data_ptr(), indices.data_ptr<int64_t>(),
                   x.size(0) * x.size(1),
                   regular_windows(x.sizes(), y.sizes(), kernel_size, stride, padding, dilation));
}

PoolTaps taps_of(IntArrayRef k) {
  PoolTaps t;
  for (size_t i = 0; i < k.size(); ++i) t.k[3 - k.size() + i] = k[i];
  return t;
}

void max_pool_taps_cpu(const Tensor& x, IntArrayRef kernel_size, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, Tensor& y, Tensor& taps) {
  max_pool_forward_taps(
      x.dtype(), x.data_ptr(), y.data_ptr(), taps.data_ptr<uint8_t>(), x.size(0) * x.size(1),
      regular_windows(x.sizes(), y.sizes(), kernel_size, stride, padding, dilation),
      taps_of(kernel_size));
}

void max_pool_taps_backward_cpu(const Tensor& grad, const Tensor& taps, IntArrayRef kernel_size,
                                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                Tensor& grad_input) {
  max_pool_backward_taps(
      grad.dtype(), grad.data_ptr(), taps.data_ptr<uint8_t>(), grad_input.data_ptr(),
      grad_input.size(0) * grad_input.size(1),
      regular_windows(grad_input.sizes(), grad.sizes(), kernel_size, stride, padding, dilation),
      taps_of(kernel_size));
}

void max_pool_taps_to_indices_cpu(const Tensor& taps, IntArrayRef kernel_size, IntArrayRef stride,
                                  IntArrayRef padding, IntArrayRef dilation, IntArrayRef in_sizes,
                                  Tensor& indices) {
  max_pool_taps_to_indices(
      taps.data_ptr<uint8_t>(), indices.data_ptr<int64_t>(), taps.size(0) * taps.size(1),
      regular_windows(in_sizes, taps.sizes(), kernel_size, stride, padding, dilation),
      taps_of(kernel_size));
}

void adaptive_max_pool_cpu(const Tensor& x, Tensor& y, Tensor& indices) {
  max_pool_forward(x.dtype(), x.data_ptr(), y.data_ptr(), indices.data_ptr<int64_t>(),
                   x.size(0) * x.size(1), adaptive_windows(x, y));
}

void max_pool_backward_cpu(const Tensor& grad, const Tensor& indices, Tensor& grad_input) {
  const int64_t planes = grad_input.size(0) * grad_input.size(1);
  max_pool_backward(grad.dtype(), grad.data_ptr(), indices.data_ptr<int64_t>(),
                    grad_input.data_ptr(), planes, grad_input.numel() / planes,
                    grad.numel() / planes);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(max_pool_stub, kCPU, cpu::max_pool_cpu);
EMBER_REGISTER_KERNEL(adaptive_max_pool_stub, kCPU, cpu::adaptive_max_pool_cpu);
EMBER_REGISTER_KERNEL(max_pool_backward_stub, kCPU, cpu::max_pool_backward_cpu);
EMBER_REGISTER_KERNEL(max_pool_taps_stub, kCPU, cpu::max_pool_taps_cpu);
EMBER_REGISTER_KERNEL(max_pool_taps_backward_stub, kCPU, cpu::max_pool_taps_backward_cpu);
EMBER_REGISTER_KERNEL(max_pool_taps_to_indices_stub, kCPU, cpu::max_pool_taps_to_indices_cpu);

}  // namespace ember
