#pragma once
// Element-wise reductions of the process groups: one function per (ReduceOp, dtype), applied
// by Gloo to whole segments of the buffers it exchanges (Note [Reduce functions] in
// reduce_ops.cpp).

#include <cstddef>
#include <cstdint>

#include "ember/distributed.h"
#include "ember/dtype.h"

namespace ember::distributed::detail {

/// out[i] = a[i] (op) b[i] for n elements; `out` may be `a` or `b`.
using ReduceFn = void (*)(void* out, const void* a, const void* b, size_t n);

/// Raises TypeError when `op` is not defined on `dtype` (`opname` starts the message).
void check_reduce_supported(const char* opname, ReduceOp op, ScalarType dtype);
/// The function combining two buffers of `dtype` under `op` (AVG gives SUM: divide after).
ReduceFn reduce_function(const char* opname, ReduceOp op, ScalarType dtype);
/// data[i] /= divisor for a floating or complex `dtype` (the AVG step after a SUM).
void divide_in_place(void* data, ScalarType dtype, size_t n, int64_t divisor);

}  // namespace ember::distributed::detail
