#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Device backends]
// A non-CPU device plugs in behind this small interface: elementwise ops and copies. The CUDA
// backend (src/kernels/cuda) registers itself when ember is built with nvcc and a GPU is
// present; out-of-tree devices register theirs after register_device_type(). The op layer does
// promotion, broadcasting and output allocation before calling a backend, exactly as for CPU.

#include "ember/tensor.h"
#include "core/op_table.h"

namespace ember {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  /// out = op(inputs...) elementwise. Inputs have the op's compute dtype and broadcast to out's
  /// shape; out has the result dtype. Returns false when the op/dtype is not supported.
  virtual bool elementwise(OpId op, const Tensor& out, ArrayRef<const Tensor*> inputs,
                           const OpParams& params) = 0;
  /// Copies `src` into `dst` (same shape; at least one lives on this backend's device).
  /// Returns false when the combination (dtypes, layouts) is not supported.
  virtual bool copy(const Tensor& dst, const Tensor& src) = 0;
};

/// Whether the copy running on this thread was asked for with non_blocking=True (copy_ and to()
/// set it for their body; a backend may then return before a copy from or to pinned host memory
/// has finished, as PyTorch does).
bool copy_non_blocking();
/// Sets copy_non_blocking() for a scope.
class NonBlockingCopyScope {
 public:
  explicit NonBlockingCopyScope(bool on);
  ~NonBlockingCopyScope();
  NonBlockingCopyScope(const NonBlockingCopyScope&) = delete;
  NonBlockingCopyScope& operator=(const NonBlockingCopyScope&) = delete;

 private:
  bool prev_;
};

/// Installs the backend for device type `t` (not owned).
void register_device_backend(DeviceType t, DeviceBackend* backend);
/// The backend of `t`, or null.
DeviceBackend* device_backend(DeviceType t);

}  // namespace ember
