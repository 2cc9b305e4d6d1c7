#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The direct p-norm distance loops, compiled once per CPU capability (cdist_kernels.cpp) and
// picked by the capability in use (stats.cpp).

#include <cstdint>

namespace ember::cpu {

#define EMBER_CDIST_DECLARE(cap)                                                                  \
  namespace cap {                                                                                 \
  /** Distances of (B, P, M) x1 to (B, R, M) x2 into (B, P, R) out (all contiguous). */           \
  void cdist_float(const float* x1, const float* x2, float* out, int64_t B, int64_t P, int64_t R, \
                   int64_t M, double p);                                                          \
  void cdist_double(const double* x1, const double* x2, double* out, int64_t B, int64_t P,        \
                    int64_t R, int64_t M, double p);                                              \
  }
EMBER_CDIST_DECLARE(cap_default)
EMBER_CDIST_DECLARE(cap_avx2)
EMBER_CDIST_DECLARE(cap_avx512)
#undef EMBER_CDIST_DECLARE

}  // namespace ember::cpu
