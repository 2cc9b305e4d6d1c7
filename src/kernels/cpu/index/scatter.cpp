// CPU kernels of gather and scatter: one GatherLoop over the index shape (index_loops.h).
#include "ember/tensor.h"
#include "kernels/cpu/index/index_loops.h"
#include "kernels/stubs/index.h"

namespace ember {

EMBER_DEFINE_KERNEL(gather_stub);
EMBER_DEFINE_KERNEL(scatter_stub);

namespace cpu {
namespace {

void gather_cpu(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  GatherLoop l;
  l.sizes = index.sizes();
  l.dim = dim;
  l.dst = static_cast<char*>(out.data_ptr());
  l.dst_strides = out.strides();
  l.src = static_cast<const char*>(self.data_ptr());
  l.src_strides = self.strides();
  l.index = index.data_ptr<int64_t>();
  l.dim_size = self.size(dim);
  gather_kernel(l, self.element_size());
}

void scatter_cpu(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 const Tensor& value, ScatterOp op) {
  GatherLoop l;
  l.sizes = index.sizes();
  l.dim = dim;
  l.dst = static_cast<char*>(self.data_ptr());
  l.dst_strides = self.strides();
  if (src.defined()) {
    l.src = static_cast<const char*>(src.data_ptr());
    l.src_strides = src.strides();
  } else {
    l.src_strides = DimVector(size_t(self.dim()), 0);
    l.value = value.data_ptr();
  }
  l.index = index.data_ptr<int64_t>();
  scatter_kernel(l, self.dtype(), op);
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(gather_stub, kCPU, cpu::gather_cpu);
EMBER_REGISTER_KERNEL(scatter_stub, kCPU, cpu::scatter_cpu);

}  // namespace ember
