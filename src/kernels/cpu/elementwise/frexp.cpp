// frexp's kernel (kernels/stubs/special.h): std::frexp per element. float16 and bfloat16 go
// through float, whose frexp gives the same mantissa and exponent (every 16-bit value,
// subnormals included, is a normal float).
#include <cmath>
#include <type_traits>

#include "core/parallel_internal.h"
#include "ember/dispatch_type.h"
#include "kernels/stubs/special.h"

namespace ember {

EMBER_DEFINE_KERNEL(frexp_stub);

namespace cpu {
namespace {

void frexp_cpu(const Tensor& self, Tensor& mantissa, Tensor& exponent) {
  const int64_t n = self.numel();
  if (n == 0) return;
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "frexp", [&] {
    using T = scalar_t;
    const T* x = self.data_ptr<T>();
    T* m = mantissa.data_ptr<T>();
    int32_t* e = exponent.data_ptr<int32_t>();
    parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        int ex = 0;
        if constexpr (std::is_same_v<T, double>) {
          m[i] = std::frexp(x[i], &ex);
        } else {
          m[i] = T(std::frexp(float(x[i]), &ex));
        }
        e[i] = int32_t(ex);
      }
    });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(frexp_stub, kCPU, cpu::frexp_cpu);

}  // namespace ember
