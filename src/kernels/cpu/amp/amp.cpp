// CPU kernels of gradient scaling: the inf/NaN check with unscaling, and the loss-scale update.
#include "kernels/stubs/amp.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/dispatch_type.h"

namespace ember {

EMBER_DEFINE_KERNEL(amp_non_finite_check_and_unscale_stub);
EMBER_DEFINE_KERNEL(amp_update_scale_stub);

namespace cpu {
namespace {

void non_finite_check_and_unscale_cpu(Tensor& t, Tensor& found_inf, const Tensor& inv_scale) {
  const float inv = *static_cast<const float*>(inv_scale.data_ptr());
  bool found = false;
  const int64_t n = t.numel();
  EMBER_DISPATCH_FLOATING_TYPES(t.dtype(), "_amp_foreach_non_finite_check_and_unscale_", [&] {
    // Reduced floats compute in float32, as PyTorch's opmath type.
    using opmath_t = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    auto* p = static_cast<scalar_t*>(t.data_ptr());
    if (inv == 1.0f) {
      for (int64_t i = 0; i < n && !found; ++i) found = !std::isfinite(opmath_t(p[i]));
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const opmath_t v = opmath_t(p[i]);
      found |= !std::isfinite(v);
      p[i] = scalar_t(v * opmath_t(inv));
    }
  });
  if (found) *static_cast<float*>(found_inf.data_ptr()) = 1.0f;
}

// Note [Loss scale update]
// After a step with an inf/NaN gradient the scale backs off and the count of clean steps
// restarts; after `growth_interval` clean steps in a row the scale grows, unless growing would
// overflow float32 (then it stays), and the count restarts.
void update_scale_cpu(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf,
                      double growth_factor, double backoff_factor, int64_t growth_interval) {
  float* s = static_cast<float*>(scale.data_ptr());
  int32_t* tracker = static_cast<int32_t*>(growth_tracker.data_ptr());
  const float inf = *static_cast<const float*>(found_inf.data_ptr());
  if (inf != 0.0f) {
    *s = static_cast<float>(*s * backoff_factor);
    *tracker = 0;
    return;
  }
  const int64_t successful = int64_t(*tracker) + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*s * growth_factor);
    if (std::isfinite(grown)) *s = grown;
    *tracker = 0;
  } else {
    *tracker = static_cast<int32_t>(successful);
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(amp_non_finite_check_and_unscale_stub, kCPU,
                      cpu::non_finite_check_and_unscale_cpu);
EMBER_REGISTER_KERNEL(amp_update_scale_stub, kCPU, cpu::update_scale_cpu);

}  // namespace ember
