// CUDA kernels of the loss ops' target checks (kernels/stubs/loss.h): the losses themselves are
// compositions of gather, masked_fill and reductions. The first bad target is found on the device
// and the CPU's check of that value raises the CPU's error (Note [Device value checks]).
#include "core/tensor_util.h"
#include "ember/cuda.h"
#include "kernels/cuda/index_check.cuh"
#include "kernels/stubs/loss.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// The value of the first target outside [0, n_classes) (and not ignore_index), if any.
bool bad_target(const Tensor& target, int64_t n_classes, bool has_ignore, int64_t ignore,
                const char* name, int64_t* v) {
  EMBER_CHECK(target.is_cuda() && target.dtype() == kLong && target.is_contiguous(), "[", name,
              "] expected a contiguous int64 cuda target");
  DeviceGuard g(target.device());
  return first_out_of_range(static_cast<const int64_t*>(target.data_ptr()), target.numel(),
                            OutOfRange{0, n_classes, has_ignore, ignore}, name, v);
}

Tensor one_value(int64_t v) {
  Tensor t = empty_tensor({1}, kLong, Device(kCPU));
  t.data_ptr<int64_t>()[0] = v;
  return t;
}

void nll_check_targets_cuda(const Tensor& target, int64_t n_classes, int64_t ignore_index) {
  int64_t v;
  if (bad_target(target, n_classes, true, ignore_index, "nll_loss", &v))
    nll_check_targets_stub(kCPU, one_value(v), n_classes, ignore_index);
}

void margin_check_targets_cuda(const Tensor& target, int64_t n_classes, const char* op) {
  int64_t v;
  if (bad_target(target, n_classes, false, 0, op, &v))
    margin_check_targets_stub(kCPU, one_value(v), n_classes, op);
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(nll_check_targets_stub, kCUDA, cuda::nll_check_targets_cuda);
EMBER_REGISTER_KERNEL(margin_check_targets_stub, kCUDA, cuda::margin_check_targets_cuda);

namespace {
[[maybe_unused]] const bool g_register_loss = [] {
  using S = ScalarType;
  for (OpId op : {OpId::nll_loss, OpId::nll_loss2d, OpId::cross_entropy})
    register_kernel(kCUDA, op, {S::Float, S::Double, S::Half, S::BFloat16});
  return true;
}();
}  // namespace

}  // namespace ember
