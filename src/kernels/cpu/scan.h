#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The scan kernels behind cumsum / cumprod / cummax / cummin / logcumsumexp (scan.cpp). The op
// functions (ops/scan_ops.cpp) validate, cast the input to the result dtype and lay it out as a
// contiguous (outer, n, inner) block; the kernels only see that block.

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cpu {

/// Which running reduction a scan computes.
enum class ScanKind : uint8_t { Sum, Prod, Max, Min, LogSumExp };

/// Whether scan `kind` has a kernel for dtype `dt`: sum/prod take integers, floating and
/// complex types; max/min take bool, integers and floating types; logsumexp floating types
/// (PyTorch 1.13's CPU set plus float16, which it lacks).
bool scan_supported(ScanKind kind, ScalarType dt);

/// Scans the middle dim of the contiguous (outer, n, inner) block `in` into `out`, both of
/// dtype `dt` (scan_supported must hold). `out` may be `in` itself (exactly, not a partial
/// overlap). Max/Min also write the int64 index of each running extremum into `idx` (same
/// layout; ignored otherwise). Lines run in parallel, each scanned in order by one thread, so
/// results do not depend on the thread count.
void scan_contiguous(ScanKind kind, ScalarType dt, const void* in, void* out, int64_t* idx,
                     int64_t outer, int64_t n, int64_t inner);

}  // namespace ember::cpu
