#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Fused recurrent gate kernels (rnn_kernels.cpp, compiled per CPU capability). Every pointer is
// to a contiguous row-major [B, k·H] block; a call handles batch rows [b0, b1).

#include <cstdint>

namespace ember::cpu {

template <class T>
struct RnnKernelsT {
  /// LSTM forward: gates = ig + hg (i, f, g, o); writes hy = σo·tanh(cy), cy, and when `ws` is
  /// not null the activated gates (σi, σf, tanh g, σo) into ws [B, 4H].
  void (*lstm_fwd)(const T* ig, const T* hg, const T* cx, T* hy, T* cy, T* ws, int64_t b0,
                   int64_t b1, int64_t H) = nullptr;
  /// LSTM backward from the activated gates: dgates [B, 4H] (pre-activation) and dcx.
  void (*lstm_bwd)(const T* ghy, const T* gcy, const T* ws, const T* cx, const T* cy, T* dgates,
                   T* dcx, int64_t b0, int64_t b1, int64_t H) = nullptr;
  /// GRU forward (r, z, n): writes hy and, when `ws` is not null, (r, z, n, hg_n) into ws
  /// [B, 4H].
  void (*gru_fwd)(const T* ig, const T* hg, const T* hx, T* hy, T* ws, int64_t b0, int64_t b1,
                  int64_t H) = nullptr;
  /// GRU backward: dig, dhg [B, 3H] (pre-activation, for the input and hidden projections) and
  /// dhx.
  void (*gru_bwd)(const T* ghy, const T* ws, const T* hx, T* dig, T* dhg, T* dhx, int64_t b0,
                  int64_t b1, int64_t H) = nullptr;
};

struct RnnKernels {
  RnnKernelsT<float> f;
  RnnKernelsT<double> d;
};

namespace cap_default {
void register_rnn_kernels(RnnKernels& k);
}
namespace cap_avx2 {
void register_rnn_kernels(RnnKernels& k);
}
namespace cap_avx512 {
void register_rnn_kernels(RnnKernels& k);
}

}  // namespace ember::cpu
