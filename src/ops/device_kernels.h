#pragma once
#include "ops/op_layer.h"  // Note [Layer includes]
// Note [Kernels per device]
// Each (device type, OpId, dtype) says whether a kernel exists. CPU has every op: each op body
// reaches its loops through kernel stubs (Note [Kernel stubs], src/core/kernel_stub.h), whose CPU
// slots src/kernels/cpu fills. Any other device has exactly what its backend registers, and an op
// called there without one raises "[op] not implemented for <device> <dtype>" at the entry of the
// call path, before anything reads memory (no host loop ever runs on device memory). Views and
// composite ops need no kernel: views touch no data, composites reach their primitives' checks.

#include <initializer_list>

#include "core/op_table.h"
#include "ember/device.h"
#include "ember/dtype.h"

namespace ember {

/// Declares that device type `t` has a kernel for `op` in each of `dtypes`.
void register_kernel(DeviceType t, OpId op, std::initializer_list<ScalarType> dtypes);
/// The same for every dtype.
void register_kernel_all_dtypes(DeviceType t, OpId op);
/// Whether `t` has a kernel for `op` in `dtype` (always true on CPU; views and composites need
/// none).
bool has_kernel(DeviceType t, OpId op, ScalarType dtype);

}  // namespace ember
