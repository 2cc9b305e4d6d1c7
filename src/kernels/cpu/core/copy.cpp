// The CPU kernels of copies, fills and element reads: copies and fills run the elementwise
// engine's cast and fill loops (DESIGN.md §5), so every dtype conversion lives in one place.
#include "kernels/stubs/core.h"

#include <complex>
#include <cstring>

#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "kernels/cpu/elementwise/elementwise.h"

namespace ember {

EMBER_DEFINE_KERNEL(copy_stub);
EMBER_DEFINE_KERNEL(fill_stub);
EMBER_DEFINE_KERNEL(item_stub);
EMBER_DEFINE_KERNEL(int64_values_stub);

namespace cpu {
namespace {

void copy_cpu(Tensor& dst, const Tensor& src) {
  ElementwiseFn fn = kernels().get_cast(src.dtype(), dst.dtype());
  EMBER_INTERNAL_ASSERT(fn, "no cast kernel");
  const Tensor* ins[1] = {&src};
  run_plan(make_plan(dst, ArrayRef<const Tensor*>(ins, 1)), fn, {});
}

void fill_cpu(Tensor& dst, const Scalar& value) {
  OpParams p;
  p.s[0] = value;
  ElementwiseFn fn = kernels().get(OpId::fill, dst.dtype());
  EMBER_CHECK(fn, "[fill_] not implemented for '", dst.dtype(), "'");
  run_plan(make_plan(dst, {}), fn, p);
}

template <class T>
Scalar maybe_conj(T v, bool) {
  return Scalar(v);
}
template <class T>
Scalar maybe_conj(complex<T> v, bool conj) {
  return Scalar(conj ? std::conj(v) : v);
}

Scalar item_cpu(const Tensor& t, bool conj) {
  const void* p = t.data_ptr();
  return EMBER_DISPATCH_ALL_TYPES(t.dtype(), "item", [&]() -> Scalar {
    scalar_t v;
    std::memcpy(&v, p, sizeof(v));
    return maybe_conj(v, conj);
  });
}

std::vector<int64_t> int64_values_cpu(const Tensor& t) {
  const int64_t* p = t.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + t.numel());
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(copy_stub, kCPU, cpu::copy_cpu);
EMBER_REGISTER_KERNEL(fill_stub, kCPU, cpu::fill_cpu);
EMBER_REGISTER_KERNEL(item_stub, kCPU, cpu::item_cpu);
EMBER_REGISTER_KERNEL(int64_values_stub, kCPU, cpu::int64_values_cpu);

}  // namespace ember
