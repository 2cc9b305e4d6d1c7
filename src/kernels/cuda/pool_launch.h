#pragma once
// Plain C++: the max-pooling launchers of pool.cu, called by the stub entries of
// src/cuda/pool.cpp (Note [CUDA kernel interface]: kernel files see no Tensor).

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cuda {

/// A pooling geometry over 3 spatial dims (a 1-d or 2-d pool has leading dims of size 1 with
/// kernel 1, stride 1, padding 0, dilation 1). `adaptive`: windows are PyTorch's adaptive ones
/// and k, s, p, d are unused.
struct PoolGeom {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  bool adaptive = false;
};

/// y, idx (planes x out...) = the max of each window of x (planes x in...) and its flat offset
/// in the plane; NaN wins, else the first maximum. False: dtype not supported.
bool launch_max_pool(ScalarType dt, const void* x, void* y, int64_t* idx, const PoolGeom& g);

/// gx (planes x in_plane) = 0, then gx[p, idx[p, o]] += gy[p, o] for offsets inside the plane.
/// `deterministic`: one thread per plane in output order (the CPU's order), else atomics.
bool launch_max_pool_backward(ScalarType dt, const void* gy, const int64_t* idx, void* gx,
                              int64_t planes, int64_t in_plane, int64_t out_plane,
                              bool deterministic);

}  // namespace ember::cuda
