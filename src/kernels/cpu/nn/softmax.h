#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The softmax kernel table: fused softmax / log_softmax loops for float and double, compiled per
// CPU capability (softmax_kernels.cpp) and picked with the other kernel families at start-up.

#include <cstdint>

namespace ember::cpu {

/// Softmax over `n` contiguous elements of rows [row_begin, row_end) (row r starts at r * n).
template <class T>
using SoftmaxLastDimFn = void (*)(const T* in, T* out, int64_t row_begin, int64_t row_end,
                                  int64_t n, bool log);
/// Softmax over the middle dim of an (outer, n, inner) contiguous block, for outer slices
/// [o_begin, o_end) and inner columns [i_begin, i_end).
template <class T>
using SoftmaxInnerFn = void (*)(const T* in, T* out, int64_t o_begin, int64_t o_end, int64_t n,
                                int64_t inner, int64_t i_begin, int64_t i_end, bool log);

struct SoftmaxKernels {
  SoftmaxLastDimFn<float> lastdim_f = nullptr;
  SoftmaxLastDimFn<double> lastdim_d = nullptr;
  SoftmaxInnerFn<float> inner_f = nullptr;
  SoftmaxInnerFn<double> inner_d = nullptr;
};

/// Filled by register_softmax_kernels() of the selected capability.
extern SoftmaxKernels g_softmax_kernels;
/// The table of the selected capability (forces kernel registration first).
const SoftmaxKernels& softmax_kernels();

}  // namespace ember::cpu
