// CPU kernels of the convolution maps, first match: for float32, ember's small-channel kernels
// (conv_small.cpp) and its direct kernels (conv_direct_kernels.cpp) where each was measured
// faster; oneDNN where it has a primitive; else the im2col + BLAS reference of conv_im2col.cpp.
// bfloat16/float16 without a oneDNN kernel of their own run the float32 ones on converted copies
// and are rounded once.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/version.h"
#include "kernels/cpu/elementwise/elementwise.h"
#include "kernels/cpu/kernel_registry.h"
#include "kernels/cpu/nn/conv_dnnl.h"
#include "kernels/stubs/conv.h"

namespace ember {

EMBER_DEFINE_KERNEL(conv_forward_stub);
EMBER_DEFINE_KERNEL(conv_backward_data_stub);
EMBER_DEFINE_KERNEL(conv_backward_weight_stub);

namespace cpu {
namespace {

ConvGeom make_geom(const ConvParams& s, IntArrayRef x, IntArrayRef w, IntArrayRef y) {
  ConvGeom g;
  g.nd = s.nd();
  g.n = x[0], g.c = x[1], g.k = w[0], g.groups = s.groups;
  for (int i = 0; i < g.nd; ++i) {
    g.in[i] = x[2 + i], g.out[i] = y[2 + i], g.kernel[i] = w[2 + i];
    g.stride[i] = s.stride[i], g.dilation[i] = s.dilation[i], g.pad_l[i] = s.pad_l[i];
    // oneDNN checks floor((in + pl + pr - extent) / stride) + 1 == out: keep the requested right
    // padding when it passes, else the nearest value that does (output_padding, unused rows).
    const int64_t extent = s.dilation[i] * (g.kernel[i] - 1) + 1;
    const int64_t exact = (g.out[i] - 1) * s.stride[i] + extent - g.in[i] - g.pad_l[i];
    g.pad_r[i] = exact + std::clamp<int64_t>(s.pad_r[i] - exact, 0, s.stride[i] - 1);
  }
  return g;
}

/// dst = src converted to dst's dtype, by the cast loops every copy runs (bit for bit a `to`).
void cast_into(const Tensor& dst, const Tensor& src) {
  ElementwiseFn fn = kernels().get_cast(src.dtype(), dst.dtype());
  EMBER_INTERNAL_ASSERT(fn, "no cast kernel");
  const Tensor* ins[1] = {&src};
  run_plan(make_plan(dst, ArrayRef<const Tensor*>(ins, 1)), fn, {});
}

Tensor to_float(const Tensor& t) {
  Tensor f = empty_tensor(t.sizes(), kFloat);
  cast_into(f, t);
  return f;
}

/// Whether the direct kernels were measured faster than oneDNN for this pass on 1 and 2 threads
/// (avx2, Zen 3; the grid is in Note [Direct convolutions]): kernels of 2 to 9 taps and at most
/// 256 input channels; backward weights only at stride 1 from at most 32 input channels on
/// images of at most 32x32 (larger images stream from L3 once per tile row); backward data only
/// into 16 or 32 input channels (whole vector pairs) from at least 32 output channels (its
/// tiles add into the gradient once per tap).
bool direct_conv_pays(ConvPass pass, const ConvGeom& g) {
  int64_t in = 1, taps = 1;
  bool unit_stride = true;
  for (int i = 0; i < g.nd; ++i) {
    in *= g.in[i], taps *= g.kernel[i];
    unit_stride = unit_stride && g.stride[i] == 1;
  }
  if (taps < 2 || taps > 9 || g.c > 256) return false;
  switch (pass) {
    case ConvPass::Forward:
      return true;
    case ConvPass::BackwardData:
      return (g.c == 16 || g.c == 32) && g.k >= 32;
    case ConvPass::BackwardWeights:
      return unit_stride && in <= 32 * 32 && g.c <= 32;
  }
  return false;
}

/// The direct float32 kernels (Note [Direct convolutions]) on the avx2 kernel set, where
/// direct_conv_pays. EMBER_DIRECT_CONV=0 turns them off; =1 uses them wherever they apply, on
/// any kernel set (the tests run each set's kernels this way).
bool try_direct_conv(ConvPass pass, const ConvGeom& g, const float* a, const float* b, float* out,
                     float* bias) {
  using Fn = bool (*)(ConvPass, const ConvGeom&, const float*, const float*, float*, float*);
  static const std::pair<Fn, bool> pick = []() -> std::pair<Fn, bool> {
    const std::string_view cap = cpu_capability();
    const Fn fn = cap == "avx512" ? cap_avx512::direct_conv
                  : cap == "avx2" ? cap_avx2::direct_conv
                                  : cap_default::direct_conv;
    const char* env = std::getenv("EMBER_DIRECT_CONV");
    if (env && std::strcmp(env, "0") == 0) return {nullptr, false};
    if (env && std::strcmp(env, "1") == 0) return {fn, true};
    return {cap == "avx2" ? fn : nullptr, false};
  }();
  if (!pick.first || (!pick.second && !direct_conv_pays(pass, g))) return false;
  return pick.first(pass, g, a, b, out, bias);
}

/// Runs one map into `out`; `bias` is the forward bias or the bias gradient (may be undefined).
void run_pass(ConvPass pass, const ConvGeom& g, const Tensor& a, const Tensor& b, const Tensor& out,
              const Tensor& bias) {
  const ScalarType dt = out.dtype();
  void* bias_ptr = bias.defined() ? bias.data_ptr() : nullptr;
  if (dt == kFloat && small_channel_conv(pass, g, a.data_ptr<float>(), b.data_ptr<float>(),
                                         out.data_ptr<float>(), static_cast<float*>(bias_ptr)))
    return;
  if (dt == kFloat && try_direct_conv(pass, g, a.data_ptr<float>(), b.data_ptr<float>(),
                                      out.data_ptr<float>(), static_cast<float*>(bias_ptr)))
    return;
  if (dt != kDouble && dnnl_conv(pass, g, dt, a.data_ptr(), b.data_ptr(), out.data_ptr(), bias_ptr))
    return;
  if (dt == kBFloat16 || dt == kHalf) {
    // No 16-bit oneDNN kernel on this CPU (oneDNN 2.x has bfloat16 convolutions only from
    // AVX-512 on): compute in float32, oneDNN first, and round once.
    Tensor af = to_float(a), bf = to_float(b), of = empty_tensor(out.sizes(), kFloat);
    Tensor biasf;
    if (bias.defined())
      biasf = pass == ConvPass::Forward ? to_float(bias) : empty_tensor(bias.sizes(), kFloat);
    void* biasf_ptr = biasf.defined() ? biasf.data_ptr() : nullptr;
    float* bf_ptr = static_cast<float*>(biasf_ptr);
    if (!small_channel_conv(pass, g, af.data_ptr<float>(), bf.data_ptr<float>(),
                            of.data_ptr<float>(), bf_ptr) &&
        !try_direct_conv(pass, g, af.data_ptr<float>(), bf.data_ptr<float>(), of.data_ptr<float>(),
                         bf_ptr) &&
        !dnnl_conv(pass, g, kFloat, af.data_ptr(), bf.data_ptr(), of.data_ptr(), biasf_ptr))
      ref_conv(pass, g, kFloat, af.data_ptr(), bf.data_ptr(), of.data_ptr(), biasf_ptr);
    cast_into(out, of);
    if (bias.defined() && pass == ConvPass::BackwardWeights) cast_into(bias, biasf);
    return;
  }
  ref_conv(pass, g, dt, a.data_ptr(), b.data_ptr(), out.data_ptr(), bias_ptr);
}

void conv_forward_cpu(const Tensor& x, const Tensor& weight, const Tensor& bias,
                      const ConvParams& p, Tensor& y) {
  run_pass(ConvPass::Forward, make_geom(p, x.sizes(), weight.sizes(), y.sizes()), x, weight, y,
           bias);
}

void conv_backward_data_cpu(const Tensor& grad, const Tensor& weight, const ConvParams& p,
                            Tensor& grad_input) {
  run_pass(ConvPass::BackwardData, make_geom(p, grad_input.sizes(), weight.sizes(), grad.sizes()),
           grad, weight, grad_input, Tensor());
}

void conv_backward_weight_cpu(const Tensor& x, const Tensor& grad, const ConvParams& p,
                              Tensor& grad_weight, Tensor& grad_bias) {
  run_pass(ConvPass::BackwardWeights, make_geom(p, x.sizes(), grad_weight.sizes(), grad.sizes()), x,
           grad, grad_weight, grad_bias);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(conv_forward_stub, kCPU, cpu::conv_forward_cpu);
EMBER_REGISTER_KERNEL(conv_backward_data_stub, kCPU, cpu::conv_backward_data_cpu);
EMBER_REGISTER_KERNEL(conv_backward_weight_stub, kCPU, cpu::conv_backward_weight_cpu);

}  // namespace ember
