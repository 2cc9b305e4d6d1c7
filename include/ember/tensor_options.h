#pragma once
/// TensorOptions: dtype, device and requires_grad for factories, with chained setters.

#include <optional>

#include "ember/device.h"
#include "ember/dtype.h"

namespace ember {

/// Options for creating a tensor. Unset fields take defaults (default dtype, CPU, no grad).
struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}     // NOLINT: implicit as libtorch
  TensorOptions(Device d) : device_(d) {}        // NOLINT
  TensorOptions(DeviceType d) : device_(d) {}    // NOLINT

  TensorOptions dtype(ScalarType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions dtype(std::optional<ScalarType> t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }
  /// The dtype, or the default dtype when unset.
  ScalarType dtype() const { return dtype_ ? *dtype_ : get_default_dtype(); }
  bool has_dtype() const { return dtype_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  Device device() const { return device_ ? *device_ : Device(kCPU); }
  bool has_device() const { return device_.has_value(); }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

/// `ember::dtype(kFloat)`: a TensorOptions with only the dtype set.
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace ember
