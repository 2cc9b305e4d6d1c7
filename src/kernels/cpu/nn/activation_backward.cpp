// Fused activation backward loops (kernels/stubs/activation_backward.h). relu's backward reads
// the gradient and the saved output once and writes the result once; the composite it replaces
// (where(out > 0, grad, 0)) also wrote and re-read a bool mask. Memory-bound: one select per
// element, built for AVX2 as well as the baseline and chosen by cpu_capability().
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/parallel_internal.h"
#include "ember/version.h"
#include "kernels/stubs/activation_backward.h"

namespace ember {

EMBER_DEFINE_KERNEL(relu_backward_stub);

namespace cpu {
namespace {

// 16-bit floats compare on their bits: out > 0 exactly when the bits lie in [1, +inf] (sign
// clear, not zero, not NaN).
template <uint16_t kInfBits>
struct Pos16 {
  static bool pos(uint16_t b) { return uint16_t(b - 1) < kInfBits; }
};

// The selects are masks on the gradient's bits: a conditional load (o > 0 ? g[i] : 0) is not
// vectorized without masked loads, and the branch it leaves mispredicts on random signs.
template <class T>
[[gnu::always_inline]] inline void relu_bwd_loop(const T* __restrict__ g, const T* __restrict__ o,
                                                 T* __restrict__ r, int64_t n) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  for (int64_t i = 0; i < n; ++i) {
    U bits;
    std::memcpy(&bits, g + i, sizeof(T));
    bits &= U(0) - U(o[i] > T(0));
    std::memcpy(r + i, &bits, sizeof(T));
  }
}
template <uint16_t kInfBits>
[[gnu::always_inline]] inline void relu_bwd_loop16(const uint16_t* __restrict__ g,
                                                   const uint16_t* __restrict__ o,
                                                   uint16_t* __restrict__ r, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    r[i] = uint16_t(g[i] & (0u - uint16_t(Pos16<kInfBits>::pos(o[i]))));
}

// kind: 0 float, 1 double, 2 bfloat16, 3 float16. Inlined into each ISA's entry point below.
[[gnu::always_inline]] inline void relu_bwd_kind(int kind, const void* g, const void* o, void* r,
                                                 int64_t n) {
  switch (kind) {
    case 0:
      return relu_bwd_loop(static_cast<const float*>(g), static_cast<const float*>(o),
                           static_cast<float*>(r), n);
    case 1:
      return relu_bwd_loop(static_cast<const double*>(g), static_cast<const double*>(o),
                           static_cast<double*>(r), n);
    case 2:
      return relu_bwd_loop16<0x7f80>(static_cast<const uint16_t*>(g),
                                     static_cast<const uint16_t*>(o), static_cast<uint16_t*>(r), n);
    default:
      return relu_bwd_loop16<0x7c00>(static_cast<const uint16_t*>(g),
                                     static_cast<const uint16_t*>(o), static_cast<uint16_t*>(r), n);
  }
}

void relu_bwd_base(int kind, const void* g, const void* o, void* r, int64_t n) {
  relu_bwd_kind(kind, g, o, r, n);
}

[[gnu::target("avx2")]] void relu_bwd_avx2(int kind, const void* g, const void* o, void* r,
                                           int64_t n) {
  relu_bwd_kind(kind, g, o, r, n);
}

using LoopFn = void (*)(int, const void*, const void*, void*, int64_t);

// The AVX2 loop for the avx2 and avx512 kernel sets (a select gains nothing from 512 bits).
LoopFn pick_loop() {
  static const LoopFn fn =
      std::strcmp(cpu_capability(), "default") == 0 ? relu_bwd_base : relu_bwd_avx2;
  return fn;
}

void relu_backward_cpu(const Tensor& grad, const Tensor& out, Tensor& grad_input) {
  const ScalarType dt = grad_input.dtype();
  const int kind = dt == kFloat ? 0 : dt == kDouble ? 1 : dt == kBFloat16 ? 2 : 3;
  const int64_t n = grad_input.numel();
  const size_t isz = grad_input.itemsize();
  const char* g = static_cast<const char*>(grad.data_ptr());
  const char* o = static_cast<const char*>(out.data_ptr());
  char* r = static_cast<char*>(grad_input.data_ptr());
  const LoopFn loop = pick_loop();
  // Chunks of at least 64 KiB of output: below that a thread hand-off costs more than the loop.
  parallel_for(0, n, int64_t(65536 / isz), [&](int64_t b, int64_t e) {
    loop(kind, g + size_t(b) * isz, o + size_t(b) * isz, r + size_t(b) * isz, e - b);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(relu_backward_stub, kCPU, cpu::relu_backward_cpu);

}  // namespace ember
