#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Reduced-precision GEMM glue (Note [16-bit float GEMM]): oneDNN's matmul primitive for
// bfloat16/float16 operands with float32 accumulation, and the conversions the fallbacks use.

#include <cstdint>

#include "ember/dtype.h"
#include "kernels/stubs/blas.h"

namespace ember::cpu {

/// Whether oneDNN has a fast (non-reference) matmul for operands of dtype `ab` (bfloat16 or
/// float16) on this CPU; probed once.
bool dnnl_gemm_available(ScalarType ab);

/// C[i] = alpha * A[i]·B[i] + beta * C[i] (i < batch) through oneDNN's matmul: A, B of dtype `ab`
/// (element strides sa, sb; a batch stride 0 broadcasts), C of dtype `cdt` (float32 or `ab`) with
/// batch stride cbs, row stride crs and unit column stride; float32 accumulation, C rounded once.
/// beta == 0 overwrites C. Returns false (nothing written) when oneDNN has no fast kernel for it.
bool dnnl_gemm(ScalarType ab, ScalarType cdt, int64_t batch, int64_t m, int64_t n, int64_t k,
               const void* a, MatStrides sa, const void* b, MatStrides sb, void* c, int64_t cbs,
               int64_t crs, float alpha, float beta);

/// Converts a (batch, rows, cols) strided matrix of dtype `from` into `to` at `dst` with strides
/// `ds` (unit column stride), through the selected capability's cast loops (bit for bit a `to`).
void convert_matrix(ScalarType from, const void* src, MatStrides ss, ScalarType to, void* dst,
                    MatStrides ds, int64_t batch, int64_t rows, int64_t cols);

}  // namespace ember::cpu
