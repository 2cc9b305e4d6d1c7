#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The elementwise loop engine (DESIGN.md §5): a plan over an output and its (already broadcast
// and promoted) inputs, with dims ordered fastest-first and coalesced, run in 1-D runs across
// threads.

#include <array>

#include "ember/tensor.h"
#include "kernels/cpu/kernel_registry.h"

namespace ember::cpu {

struct ElementwisePlan {
  static constexpr int kMaxOperands = 4;
  int ntensors = 0;                             ///< output + inputs
  DimVector shape;                              ///< iteration shape, fastest dim first
  std::array<DimVector, kMaxOperands> strides;  ///< byte strides, fastest dim first
  std::array<char*, kMaxOperands> data{};
  int64_t numel = 0;
  int64_t out_bytes = 0;  ///< numel * the output's element size
};

/// Plans `out = f(inputs...)`. `out` must have the broadcast shape of the inputs; inputs are
/// broadcast to it (stride 0 on new or size-1 dims).
ElementwisePlan make_plan(const Tensor& out, ArrayRef<const Tensor*> inputs);

/// Default minimum elements per thread.
constexpr int64_t kGrainSize = 32768;

/// Runs `fn` over the plan, in parallel above `grain` elements.
void run_plan(const ElementwisePlan& plan, ElementwiseFn fn, const OpParams& params,
              int64_t grain = kGrainSize);

}  // namespace ember::cpu
