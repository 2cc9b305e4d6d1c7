// The all, any and count_nonzero kernels (kernels/stubs/reduce.h) on the reduction engine
// (Note [Reductions] in kernels/cpu/reduce.cpp). A file of its own so that its per-dtype
// functors compile beside the other reductions.
#include <type_traits>

#include "ember/dispatch_type.h"
#include "kernels/common/reduce_logical.h"
#include "kernels/cpu/reduce/driver.h"
#include "kernels/stubs/reduce.h"

namespace ember {

EMBER_DEFINE_KERNEL(all_stub);
EMBER_DEFINE_KERNEL(any_stub);
EMBER_DEFINE_KERNEL(count_nonzero_stub);

namespace cpu {
namespace {

using namespace reduce_impl;

// all / any / count_nonzero.
template <class T, class O, int kKind>  // 0 all, 1 any, 2 count
struct LogicalOp {
  using acc_t = scalar::logical_acc_t<kKind>;
  using out_t = O;
  static constexpr bool kVertical = true;
  acc_t init() const { return kKind == 0; }
  static bool nz(T x) { return x != T(0); }
  acc_t step(acc_t a, T x) const { return scalar::logical_step<kKind>(a, nz(x)); }
  acc_t combine(acc_t a, acc_t b) const { return scalar::logical_combine<kKind>(a, b); }
  acc_t reduce(const T* p, int64_t n, int64_t s, int64_t) const {
    if constexpr (kKind == 2) {
      int64_t c = 0;
      if (s == 1)
        for (int64_t i = 0; i < n; ++i) c += nz(p[i]);
      else
        for (int64_t i = 0; i < n; ++i) c += nz(p[i * s]);
      return c;
    } else {
      for (int64_t i = 0; i < n; ++i)
        if (nz(p[i * s]) != (kKind == 0)) return kKind == 1;
      return kKind == 0;
    }
  }
  out_t project(acc_t a) const { return O(a); }
  void project_extra(int64_t, acc_t) const {}
  void vertical(out_t* out, const T* base, int64_t rows, int64_t rs, int64_t w, int64_t oi) const {
    vertical_simple(*this, out, base, rows, rs, w, oi);
  }
};

// kKind: 0 all, 1 any (uint8 out for a uint8 input, bool otherwise), 2 count_nonzero (int64).
template <int kKind>
void logical_cpu(const Tensor& self, uint64_t mask, Tensor& out) {
  constexpr const char* name = kKind == 0 ? "all" : kKind == 1 ? "any" : "count_nonzero";
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), name, [&] {
    using T = scalar_t;
    using O = std::conditional_t<kKind == 2, int64_t,
                                 std::conditional_t<std::is_same_v<T, uint8_t>, uint8_t, bool>>;
    LogicalOp<T, O, kKind> f;
    run<T>(self, mask, out, f);
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(all_stub, kCPU, cpu::logical_cpu<0>);
EMBER_REGISTER_KERNEL(any_stub, kCPU, cpu::logical_cpu<1>);
EMBER_REGISTER_KERNEL(count_nonzero_stub, kCPU, cpu::logical_cpu<2>);

}  // namespace ember
