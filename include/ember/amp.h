#pragma once
/// Automatic mixed precision (`torch.autocast`, `at::autocast`): per-thread autocast state per
/// device type, and a guard that opens an autocast region. The policy of each op is a trait of
/// its row in the op list (Note [Autocast layer] in src/ops/autocast_call.h).

#include <cstdint>

#include "ember/array_ref.h"
#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/tensor.h"

namespace ember::autocast {

/// Whether autocast is enabled on this thread for `device` (default CUDA, as at::autocast).
bool is_enabled(DeviceType device = kCUDA);
/// Enables or disables autocast on this thread for `device`.
void set_enabled(DeviceType device, bool enabled);
/// The lower-precision dtype for `device` (CPU: bfloat16, CUDA: float16 by default).
ScalarType get_autocast_dtype(DeviceType device);
/// Sets the lower-precision dtype for `device` (CPU: bfloat16 or float16; CUDA: any floating
/// dtype, as at::autocast); other dtypes raise ember::Error (RuntimeError, as PyTorch).
void set_autocast_dtype(DeviceType device, ScalarType dtype);
/// Whether the weight cast cache is used (per thread; default true).
bool is_autocast_cache_enabled();
/// Turns the weight cast cache on or off for this thread.
void set_autocast_cache_enabled(bool enabled);
/// Drops the cached casts of this thread.
void clear_cache();
/// Region nesting count of this thread (the cache is cleared when it returns to zero):
/// increments it and returns the new count.
int increment_nesting();
/// Decrements the nesting count and returns the new count.
int decrement_nesting();

/// An autocast region (`with torch.autocast(device_type, dtype, enabled, cache_enabled)`): sets
/// the state for `device` on construction and restores it on destruction; leaving the outermost
/// region clears the cast cache.
class AutocastGuard {
 public:
  AutocastGuard(DeviceType device, ScalarType dtype, bool enabled = true,
                bool cache_enabled = true);
  /// With the device's current lower-precision dtype.
  explicit AutocastGuard(DeviceType device, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_;
  bool prev_enabled_;
  ScalarType prev_dtype_;
  bool prev_cache_;
};

}  // namespace ember::autocast

namespace ember {

/// The unscale step of gradient scaling (torch._amp_foreach_non_finite_check_and_unscale_): sets
/// `found_inf` (a 1-element float32 tensor) to 1 when a tensor of `self` holds an inf or NaN, and
/// multiplies every tensor of `self` in place by `inv_scale` (a 1-element float32 tensor; a
/// factor of 1 leaves the values as they are). The tensors of `self` are floating and on the
/// device of `found_inf` and `inv_scale`.
void _amp_foreach_non_finite_check_and_unscale_(ArrayRef<Tensor> self, Tensor& found_inf,
                                                const Tensor& inv_scale);

/// The scale update of gradient scaling (torch._amp_update_scale_): when `found_inf` is nonzero,
/// `self` *= backoff and `growth_tracker` = 0; otherwise the tracker counts the step and, on
/// reaching `growth_interval`, `self` *= growth (kept if finite) and the tracker restarts at 0.
/// `self` and `found_inf` are 1-element float32 tensors, `growth_tracker` a 1-element int32
/// tensor. Returns `self`.
Tensor& _amp_update_scale_(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf,
                           double scale_growth_factor, double scale_backoff_factor,
                           int64_t growth_interval);

}  // namespace ember
