#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Fused CPU loops of batch / layer / group normalization, forward and backward, for float and
// double on contiguous data (norm_cpu.cpp). Statistics accumulate in double; callers validate
// shapes and allocate every output.

#include <cstdint>

namespace ember::cpu {

/// Per-channel mean and biased variance of an (N, C, S) input.
template <class T>
void bn_stats(const T* x, int64_t N, int64_t C, int64_t S, double* mean, double* var);
/// y = x * scale[c] + shift[c] over an (N, C, S) tensor.
template <class T>
void bn_apply(const T* x, T* y, int64_t N, int64_t C, int64_t S, const double* scale,
              const double* shift);
/// Per-channel sums of g and g * (x - mean[c]) over an (N, C, S) tensor.
template <class T>
void bn_grad_sums(const T* g, const T* x, int64_t N, int64_t C, int64_t S, const double* mean,
                  double* sum_g, double* sum_gx);
/// dx = g * a[c] + x * b[c] + d[c] over an (N, C, S) tensor.
template <class T>
void bn_backward_apply(const T* g, const T* x, T* dx, int64_t N, int64_t C, int64_t S,
                       const double* a, const double* b, const double* d);

/// Normalizes M rows of D elements: y = (x - mean) * rstd * w + b (w, b of D elements or null);
/// writes mean and rstd per row.
template <class T>
void ln_forward(const T* x, const T* w, const T* b, T* y, int64_t M, int64_t D, double eps, T* mean,
                T* rstd);
/// Layer-norm backward: dx (when non-null), and dw / db (when non-null, D elements each).
template <class T>
void ln_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t M,
                 int64_t D, T* dx, T* dw, T* db);

/// Group norm of an (N, C, S) input with G groups: y, and mean / rstd per (n, g).
template <class T>
void gn_forward(const T* x, const T* w, const T* b, T* y, int64_t N, int64_t C, int64_t S,
                int64_t G, double eps, T* mean, T* rstd);
/// Group-norm backward: dx (when non-null), dw / db (C elements each, when non-null).
template <class T>
void gn_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                 int64_t C, int64_t S, int64_t G, T* dx, T* dw, T* db);

}  // namespace ember::cpu
