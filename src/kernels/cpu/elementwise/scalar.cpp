// The CPU kernel that stores a wrapped number (a Python or C++ scalar operand).
#include <cstring>

#include "core/kernel_stub.h"
#include "ember/error.h"
#include "kernels/cpu/kernel_registry.h"
#include "kernels/stubs/elementwise.h"

namespace ember {

EMBER_DEFINE_KERNEL(write_scalar_stub);

namespace cpu {
namespace {

void write_scalar_cpu(const Tensor& t, const Scalar& s) {
  // The value in its own type, then (for another dtype) the one-element cast loop that `to` runs.
  alignas(16) unsigned char buf[sizeof(complex<double>)];
  switch (s.type()) {
    case kBool:
      *reinterpret_cast<bool*>(buf) = s.toBool();
      break;
    case kLong:
      *reinterpret_cast<int64_t*>(buf) = s.toLong();
      break;
    case kDouble:
      *reinterpret_cast<double*>(buf) = s.toDouble();
      break;
    default:
      *reinterpret_cast<complex<double>*>(buf) = s.toComplexDouble();
      break;
  }
  if (t.dtype() == s.type()) {
    std::memcpy(t.data_ptr(), buf, t.itemsize());
    return;
  }
  ElementwiseFn cast = kernels().get_cast(s.type(), t.dtype());
  EMBER_INTERNAL_ASSERT(cast, "no cast kernel");
  char* data[2] = {static_cast<char*>(t.data_ptr()), reinterpret_cast<char*>(buf)};
  const int64_t strides[2] = {int64_t(t.itemsize()), int64_t(elementSize(s.type()))};
  cast(data, strides, 1, OpParams{});
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(write_scalar_stub, kCPU, cpu::write_scalar_cpu);

}  // namespace ember
