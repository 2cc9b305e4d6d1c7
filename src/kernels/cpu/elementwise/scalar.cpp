// The CPU kernel that stores a wrapped number (a Python or C++ scalar operand).
#include "core/kernel_stub.h"
#include "ember/error.h"
#include "kernels/stubs/elementwise.h"

namespace ember {

EMBER_DEFINE_KERNEL(write_scalar_stub);

namespace cpu {
namespace {

void write_scalar_cpu(const Tensor& t, const Scalar& s) {
  void* p = t.data_ptr();
  switch (s.type()) {
    case kBool:
      *static_cast<bool*>(p) = s.toBool();
      break;
    case kLong:
      *static_cast<int64_t*>(p) = s.toLong();
      break;
    case kDouble:
      *static_cast<double*>(p) = s.toDouble();
      break;
    default:
      *static_cast<complex<double>*>(p) = s.toComplexDouble();
      break;
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(write_scalar_stub, kCPU, cpu::write_scalar_cpu);

}  // namespace ember
