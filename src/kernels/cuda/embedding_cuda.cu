// CUDA kernel of embedding's index check (kernels/stubs/embedding.h): the lookup is
// index_select and its gradient index_add (deterministic when requested), whose kernels are in
// index_cuda.cu. embedding_bag's bag kernels have no CUDA version yet.
#include "core/tensor_util.h"
#include "ember/cuda.h"
#include "kernels/cuda/index_check.cuh"
#include "kernels/stubs/embedding.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// The first index outside [0, num) raises the CPU's IndexError (Note [Device value checks]).
void embedding_check_indices_cuda(const Tensor& indices, int64_t num) {
  EMBER_CHECK(indices.is_cuda() && indices.dtype() == kLong && indices.is_contiguous(),
              "[embedding] expected contiguous int64 cuda indices");
  DeviceGuard g(indices.device());
  int64_t v;
  if (first_out_of_range(static_cast<const int64_t*>(indices.data_ptr()), indices.numel(),
                         OutOfRange{0, num, false, 0}, "embedding", &v)) {
    Tensor one = empty_tensor({1}, kLong, Device(kCPU));
    one.data_ptr<int64_t>()[0] = v;
    embedding_check_indices_stub(kCPU, one, num);
  }
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(embedding_check_indices_stub, kCUDA, cuda::embedding_check_indices_cuda);

namespace {
[[maybe_unused]] const bool g_register_embedding = [] {
  using S = ScalarType;
  for (OpId op : {OpId::embedding, OpId::embedding_renorm_})
    register_kernel(kCUDA, op, {S::Float, S::Double, S::Half, S::BFloat16});
  return true;
}();
}  // namespace

}  // namespace ember
