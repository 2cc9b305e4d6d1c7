#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// Fused attention tiles (attention_kernels.cpp, compiled per CPU capability; Note [Flash
// attention tiles]). attention.cpp threads them over (batch, query block) in the forward and
// (batch, key blocks) in the backward.

#include <cstdint>

namespace ember::cpu {

/// One call's tensors, flattened to B = prod(leading dims) contiguous [L, E] / [S, E] / [S, Ev]
/// blocks; `lse` and `delta` are [B, L].
template <class T>
struct FlashParams {
  const T *q = nullptr, *k = nullptr, *v = nullptr;
  const T* go = nullptr;     ///< grad of out (backward)
  const T* lse = nullptr;    ///< logsumexp per query (backward)
  const T* delta = nullptr;  ///< rowsum(go ∘ out) per query (backward)
  T* out = nullptr;
  T* out_lse = nullptr;
  T *gk = nullptr, *gv = nullptr;
  int64_t L = 0, S = 0, E = 0, Ev = 0;
  /// mask element (b, i, j) at mask_off[b] + i * mask_sl + j * mask_ss; null when no mask.
  const void* mask = nullptr;
  bool mask_bool = false;
  const int64_t* mask_off = nullptr;
  int64_t mask_sl = 0, mask_ss = 0;
  bool causal = false;
  T scale = 1;
  int64_t bq = 64, bk = 256;  ///< tile sizes (queries, keys)
};

template <class T>
struct AttentionKernelsT {
  /// Forward of queries [i0, i1) of batch b: writes out and out_lse. `ws` holds
  /// bq*bk + bq*Ev + 3*bq elements.
  void (*fwd)(const FlashParams<T>& p, int64_t b, int64_t i0, int64_t i1, T* ws) = nullptr;
  /// Backward of keys [j0, j1) of batch b over every query: accumulates into gk, gv (rows
  /// j0..j1, owned by the caller) and into dq ([B, L, E]). `ws` holds 2*bq*bk elements.
  void (*bwd)(const FlashParams<T>& p, int64_t b, int64_t j0, int64_t j1, T* dq, T* ws) = nullptr;
};

struct AttentionKernels {
  AttentionKernelsT<float> f;
  AttentionKernelsT<double> d;
};

namespace cap_default {
void register_attention_kernels(AttentionKernels& k);
}
namespace cap_avx2 {
void register_attention_kernels(AttentionKernels& k);
}
namespace cap_avx512 {
void register_attention_kernels(AttentionKernels& k);
}

}  // namespace ember::cpu
