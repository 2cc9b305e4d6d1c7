#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The per-capability kernel tables: elementwise kernels indexed by (OpId, compute dtype), and
// cast kernels indexed by (source dtype, destination dtype).

#include <cstdint>

#include "core/op_table.h"
#include "ember/scalar.h"

namespace ember::cpu {

/// A 1-D inner loop: `data[0]` is the output, `data[1..]` the inputs; `strides` are in bytes,
/// one per operand; `n` elements. Every input has the op's compute dtype.
using ElementwiseFn = void (*)(char** data, const int64_t* strides, int64_t n, const OpParams& p);

class KernelTable {
 public:
  void set(OpId op, ScalarType t, ElementwiseFn fn) { fns_[int(op)][int(t)] = fn; }
  ElementwiseFn get(OpId op, ScalarType t) const { return fns_[int(op)][int(t)]; }
  void set_cast(ScalarType from, ScalarType to, ElementwiseFn fn) {
    casts_[int(from)][int(to)] = fn;
  }
  ElementwiseFn get_cast(ScalarType from, ScalarType to) const {
    return casts_[int(from)][int(to)];
  }

 private:
  ElementwiseFn fns_[kNumElementwiseOps][kNumScalarTypes] = {};
  ElementwiseFn casts_[kNumScalarTypes][kNumScalarTypes] = {};
};

/// The kernel table of the CPU capability chosen at start-up.
const KernelTable& kernels();

// Note [Kernel families]
// Each family is one file src/kernels/cpu/<folder>/<family>_kernels.cpp, compiled once per
// capability into namespace ember::cpu::cap_<capability>, defining register_<family>_kernels().
#define EMBER_KERNEL_FAMILIES(_) \
  _(copy) _(arith) _(compare) _(unary) _(activation) _(reduce) _(softmax) _(bessel) _(special)

#define EMBER_DECLARE_FAMILY(family) void register_##family##_kernels(KernelTable& t);
namespace cap_default {
EMBER_KERNEL_FAMILIES(EMBER_DECLARE_FAMILY)
}
namespace cap_avx2 {
EMBER_KERNEL_FAMILIES(EMBER_DECLARE_FAMILY)
}
namespace cap_avx512 {
EMBER_KERNEL_FAMILIES(EMBER_DECLARE_FAMILY)
}
#undef EMBER_DECLARE_FAMILY

}  // namespace ember::cpu
