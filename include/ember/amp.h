#pragma once
/// Automatic mixed precision (`torch.autocast`, `at::autocast`): per-thread autocast state per
/// device type, and a guard that opens an autocast region. The policy of each op is a trait of
/// its row in the op list (Note [Autocast layer] in src/ops/autocast_call.h).

#include "ember/device.h"
#include "ember/dtype.h"

namespace ember::autocast {

/// Whether autocast is enabled on this thread for `device` (default CUDA, as at::autocast).
bool is_enabled(DeviceType device = kCUDA);
/// Enables or disables autocast on this thread for `device`.
void set_enabled(DeviceType device, bool enabled);
/// The lower-precision dtype for `device` (CPU: bfloat16, CUDA: float16 by default).
ScalarType get_autocast_dtype(DeviceType device);
/// Sets the lower-precision dtype for `device` (CPU: bfloat16 or float16; CUDA: float16 or
/// bfloat16); other dtypes raise ValueError.
void set_autocast_dtype(DeviceType device, ScalarType dtype);
/// Whether the weight cast cache is used (per thread; default true).
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);
/// Drops the cached casts of this thread.
void clear_cache();
/// Region nesting count of this thread (the cache is cleared when it returns to zero).
int increment_nesting();
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
