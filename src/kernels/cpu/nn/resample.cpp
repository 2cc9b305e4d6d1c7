// CPU kernels of the sliding-block ops: one image at a time through the convolution's
// im2col / col2im (kernels/cpu/conv_dnnl.h).
#include <algorithm>

#include "kernels/cpu/nn/conv_dnnl.h"
#include "kernels/stubs/resample.h"

namespace ember {

EMBER_DEFINE_KERNEL(im2col_stub);
EMBER_DEFINE_KERNEL(col2im_stub);

namespace cpu {
namespace {

/// The number of blocks along spatial dim `i` of an image of size `in`.
int64_t blocks(int64_t in, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s, int i) {
  const int64_t span = in + 2 * p[size_t(i)] - (d[size_t(i)] * (k[size_t(i)] - 1) + 1);
  return span < 0 ? 0 : span / s[size_t(i)] + 1;
}

ConvGeom block_geom(int64_t h, int64_t w, IntArrayRef k, IntArrayRef d, IntArrayRef p,
                    IntArrayRef s) {
  ConvGeom g;
  g.nd = 2;
  g.in[0] = h, g.in[1] = w;
  g.out[0] = blocks(h, k, d, p, s, 0), g.out[1] = blocks(w, k, d, p, s, 1);
  for (int i = 0; i < 2; ++i) {
    g.kernel[i] = k[size_t(i)], g.dilation[i] = d[size_t(i)];
    g.pad_l[i] = g.pad_r[i] = p[size_t(i)], g.stride[i] = s[size_t(i)];
  }
  return g;
}

template <class T>
void im2col_run(const Tensor& x, Tensor& cols, const ConvGeom& g) {
  const int64_t n = x.size(0), c = x.size(1), hw = x.size(2) * x.size(3);
  const int64_t per = cols.size(1) * cols.size(2);
  for (int64_t i = 0; i < n; ++i)
    cpu::im2col(x.data_ptr<T>() + i * c * hw, cols.data_ptr<T>() + i * per, c, g);
}

template <class T>
void col2im_run(const Tensor& cols, Tensor& x, const ConvGeom& g) {
  const int64_t n = x.size(0), c = x.size(1), hw = x.size(2) * x.size(3);
  const int64_t per = cols.numel() / std::max<int64_t>(n, 1);
  for (int64_t i = 0; i < n; ++i)
    cpu::col2im(cols.data_ptr<T>() + i * per, x.data_ptr<T>() + i * c * hw, c, g);
}

void im2col_cpu(const Tensor& x, Tensor& cols, IntArrayRef kernel, IntArrayRef dilation,
                IntArrayRef padding, IntArrayRef stride) {
  const ConvGeom g = block_geom(x.size(2), x.size(3), kernel, dilation, padding, stride);
  if (x.dtype() == kDouble)
    im2col_run<double>(x, cols, g);
  else
    im2col_run<float>(x, cols, g);
}

void col2im_cpu(const Tensor& cols, Tensor& x, IntArrayRef kernel, IntArrayRef dilation,
                IntArrayRef padding, IntArrayRef stride) {
  const ConvGeom g = block_geom(x.size(2), x.size(3), kernel, dilation, padding, stride);
  if (x.dtype() == kDouble)
    col2im_run<double>(cols, x, g);
  else
    col2im_run<float>(cols, x, g);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(im2col_stub, kCPU, cpu::im2col_cpu);
EMBER_REGISTER_KERNEL(col2im_stub, kCPU, cpu::col2im_cpu);

}  // namespace ember
