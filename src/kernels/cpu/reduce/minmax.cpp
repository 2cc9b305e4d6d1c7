// The amax/amin kernels (kernels/stubs/reduce.h) on the reduction engine (Note [Reductions]
// in kernels/cpu/reduce.cpp): NaN wins. A file of its own so that its per-dtype functors
// compile beside the other reductions.
#include "ember/dispatch_type.h"
#include "kernels/cpu/reduce/extreme.h"
#include "kernels/stubs/reduce.h"

namespace ember {

EMBER_DEFINE_KERNEL(amax_stub);
EMBER_DEFINE_KERNEL(amin_stub);

namespace cpu {
namespace {

using namespace reduce_impl;

template <bool Max>
void extreme_cpu(const Tensor& self, uint64_t mask, Tensor& out) {
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(self.dtype(), Max ? "amax" : "amin", [&] {
    ExtremeOp<scalar_t, Max> f;
    run<scalar_t>(self, mask, out, f);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(amax_stub, kCPU, cpu::extreme_cpu<true>);
EMBER_REGISTER_KERNEL(amin_stub, kCPU, cpu::extreme_cpu<false>);

}  // namespace ember
