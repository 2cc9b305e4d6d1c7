#pragma once
// Status checks and settings shared by the cuBLAS / cuSOLVER calls of src/cuda/blas.cpp and
// src/cuda/linalg.cpp.

#include <cublas_v2.h>
#include <cusolverDn.h>

#include "ember/context.h"
#include "ember/error.h"

namespace ember::cuda {

/// Throws ember::Error naming the cuBLAS call `what` unless `s` is success.
inline void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    EMBER_THROW(::ember::Error, "[cuda] ", what, " failed: ", cublasGetStatusName(s), " (",
                cublasGetStatusString(s), ")");
}

/// Throws ember::Error naming the cuSOLVER call `what` unless `s` is success.
inline void check_cusolver(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    EMBER_THROW(::ember::Error, "[cuda] ", what, " failed: cusolver status ", int(s));
}

/// Whether float32 products may use TF32 tensor cores: float32_matmul_precision() "high" or
/// "medium" (torch.backends.cuda.matmul.allow_tf32 maps onto "high", as in PyTorch).
inline bool tf32_allowed() { return float32_matmul_precision() != MatmulPrecision::Highest; }

/// Sets the handle's math mode for the next call: TF32 tensor ops only when `tf32`, so that a
/// handle another op left in TF32 mode never rounds a "highest" float32 product.
inline void set_math_mode(cublasHandle_t h, bool tf32) {
  check_cublas(cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
               "cublasSetMathMode");
}

}  // namespace ember::cuda
