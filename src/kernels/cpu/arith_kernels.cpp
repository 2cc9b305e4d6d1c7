// Binary and ternary arithmetic: add, sub, mul, division family, pow, min/max, lerp, addcmul,
// addcdiv, clamp.
#include "kernels/cpu/loops.h"

namespace ember::cpu::EMBER_CPU_CAP {
namespace {

// add/sub: a + alpha * b (params: s[0] = alpha).
template <class C>
struct Add {
  C alpha;
  explicit Add(const OpParams& p) : alpha(p.s[0].to<C>()) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a || (alpha && b);
    else return a + alpha * b;
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return a + alpha * b; }
};
template <class C>
struct Sub {
  C alpha;
  explicit Sub(const OpParams& p) : alpha(p.s[0].to<C>()) {}
  C operator()(C a, C b) const { return a - alpha * b; }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return a - alpha * b; }
};
template <class C>
struct Mul {
  explicit Mul(const OpParams&) {}
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else return a * b;
  }
  Vec<C> vec(Vec<C> a, Vec<C> b) const { return a * b; }
};

}  // namespace

void register_arith_kernels(KernelTable& t) {
  reg<Add, 2>(t, OpId::add, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
  reg<Sub, 2>(t, OpId::sub, IntTypes{}, FloatTypes{}, ComplexTypes{});
  reg<Mul, 2>(t, OpId::mul, BoolType{}, IntTypes{}, FloatTypes{}, ComplexTypes{});
}

}  // namespace ember::cpu::EMBER_CPU_CAP
