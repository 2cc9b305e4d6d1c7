// The CUDA device backend (Note [Device backends]): elementwise ops and copies, turning tensors
// into kernel geometry (Note [CUDA kernel interface]). Registered when libember_cuda.so is
// loaded and a GPU is present.

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/tensor_util.h"
#include "cuda/cuda_context.h"
#include "ember/allocator.h"
#include "ember/cuda.h"
#include "ember/dispatch_type.h"
#include "kernels/cpu/kernel_registry.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/elementwise_kernels.cuh"
#include "ops/device_backend.h"

namespace ember {

namespace cuda {
namespace {

// ---- tensors -> kernel geometry ----

// Strides of `t` broadcast to `sizes` (right-aligned; 0 on broadcast dims).
void broadcast_strides(const Tensor& t, IntArrayRef sizes, int64_t* out) {
  const int64_t nd = int64_t(sizes.size()), td = t.dim();
  for (int64_t d = 0; d < nd; ++d) {
    int64_t j = d - (nd - td);
    out[d] = (j < 0 || t.size(j) == 1) ? 0 : t.stride(j);
  }
}

// Drops size-1 dims and merges adjacent dims that every operand walks as one, so contiguous
// tensors of any rank become one dim. False when more than kMaxDims dims remain.
template <int N>
bool make_geometry(IntArrayRef sizes, const std::array<const Tensor*, N>& ops, Geometry<N>& g) {
  g = Geometry<N>();
  g.numel = 1;
  for (int64_t s : sizes) g.numel *= s;
  if (g.numel == 0) return true;
  const size_t nd = sizes.size();
  int64_t local[N * 16];  // no heap allocation for the usual ranks
  std::vector<int64_t> heap(nd > 16 ? N * nd : 0);
  int64_t* stp = nd > 16 ? heap.data() : local;
  auto st = [&](int k, size_t d) { return stp[k * nd + d]; };
  for (int k = 0; k < N; ++k) broadcast_strides(*ops[k], sizes, stp + k * nd);
  for (size_t d = 0; d < nd; ++d) {
    if (sizes[d] == 1) continue;
    bool merge = g.ndim > 0;
    for (int k = 0; k < N && merge; ++k) merge = g.strides[k][g.ndim - 1] == st(k, d) * sizes[d];
    if (merge) {
      g.sizes[g.ndim - 1] *= sizes[d];
      for (int k = 0; k < N; ++k) g.strides[k][g.ndim - 1] = st(k, d);
      continue;
    }
    if (g.ndim == kMaxDims) return false;
    g.sizes[g.ndim] = sizes[d];
    for (int k = 0; k < N; ++k) g.strides[k][g.ndim] = st(k, d);
    ++g.ndim;
  }
  return true;
}

// Calls launch(data pointers, geometry) for operands `ops` (ops[0] is the output; the others
// broadcast to its shape). A layout that does not coalesce into kMaxDims dims (rare: a
// permuted tensor of rank > 8) is split along its leading dim, one launch per slice.
template <int N, class F>
void for_each_launch(const std::array<const Tensor*, N>& ops, const F& launch) {
  Geometry<N> g;
  if (make_geometry<N>(ops[0]->sizes(), ops, g)) {
    std::array<void*, N> ptrs;
    for (int k = 0; k < N; ++k) ptrs[k] = ops[k]->data_ptr();
    launch(ptrs, g);
    return;
  }
  std::array<Tensor, N> full;
  for (int k = 0; k < N; ++k) full[k] = ops[k]->expand(ops[0]->sizes());
  for (int64_t i = 0; i < full[0].size(0); ++i) {
    std::array<Tensor, N> sub;
    std::array<const Tensor*, N> sub_ptrs;
    for (int k = 0; k < N; ++k) {
      sub[k] = full[k].select(0, i);
      sub_ptrs[k] = &sub[k];
    }
    for_each_launch<N>(sub_ptrs, launch);
  }
}

// Kernels load whole elements: a dtype-reinterpreting view at an odd offset would fault and
// poison the CUDA context, so refuse it with an error instead.
void check_aligned(const Tensor& t, const char* op) {
  auto addr = reinterpret_cast<uintptr_t>(t.data_ptr());
  EMBER_CHECK(addr % t.itemsize() == 0, "[", op, "] the ", t.dtype(),
              " data pointer of a cuda tensor is not aligned to its element size (storage offset ",
              t.storage_offset(), "); such views are not supported on cuda");
}

// `v` converted to `dt` as the CPU fill does, as raw bytes.
bool scalar_bytes(ScalarType dt, const Scalar& v, unsigned char (&out)[16]) {
  if (dt == ScalarType::ComplexHalf || dt == ScalarType::Undefined) return false;
  EMBER_DISPATCH_ALL_TYPES(dt, "fill", [&] {
    scalar_t x = v.to<scalar_t>();
    static_assert(sizeof(x) <= 16);
    std::memcpy(out, &x, sizeof(x));
  });
  return true;
}

// dst = src (same shape, both on this device), any layouts and dtypes.
void copy_on_device(const Tensor& dst, const Tensor& src) {
  check_aligned(dst, "copy_");
  check_aligned(src, "copy_");
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                     cudaMemcpyDeviceToDevice, current_raw_stream()));
    return;
  }
  EMBER_CHECK(dst.dtype() != ScalarType::ComplexHalf && src.dtype() != ScalarType::ComplexHalf,
              "[copy_] copy from ", src.dtype(), " to ", dst.dtype(), " is not supported on cuda");
  for_each_launch<2>({&dst, &src}, [&](const std::array<void*, 2>& p, const Geometry<2>& g) {
    launch_cast(dst.dtype(), p[0], src.dtype(), p[1], g);
  });
}

// Runs op through the family launchers; operands: out, then the inputs (at most 3).
bool run_elementwise(OpId op, const Tensor& out, ArrayRef<const Tensor*> inputs,
                     const OpParams& params) {
  EwArgs a;
  a.nin = int(inputs.size());
  a.out_dtype = out.dtype();
  a.in_dtype = inputs[0]->dtype();
  a.params = &params;
  for (const Tensor* t : inputs)
    if (t->dtype() != a.in_dtype) return false;
  const char* name = op_name(op);
  check_aligned(out, name);
  for (const Tensor* t : inputs) check_aligned(*t, name);
  // Pad to four operands with the output: its strides then constrain the coalescing twice.
  std::array<const Tensor*, 4> ops = {&out, &out, &out, &out};
  for (size_t k = 0; k < inputs.size(); ++k) ops[k + 1] = inputs[k];
  bool ok = true;
  for_each_launch<4>(ops, [&](const std::array<void*, 4>& p, const Geometry<4>& g) {
    if (!ok) return;
    a.out = p[0];
    for (int k = 0; k < a.nin; ++k) a.in[k] = p[k + 1];
    a.g = g;
    ok = launch_ew_unary(op, a) || launch_ew_unary_float(op, a) || launch_ew_unary_complex(op, a) ||
         launch_ew_predicate(op, a) || launch_ew_binary(op, a) || launch_ew_compare(op, a) ||
         launch_ew_minmax(op, a) || launch_ew_activation(op, a) || launch_ew_special(op, a);
  });
  return ok;
}

bool run_where(const Tensor& out, ArrayRef<const Tensor*> inputs) {
  if (inputs.size() != 3 || inputs[0]->dtype() != kBool || inputs[1]->dtype() != out.dtype() ||
      inputs[2]->dtype() != out.dtype() || out.dtype() == ScalarType::ComplexHalf)
    return false;
  check_aligned(out, "where");
  for (const Tensor* t : inputs) check_aligned(*t, "where");
  EwArgs a;
  a.nin = 3;
  a.out_dtype = out.dtype();
  a.in_dtype = out.dtype();
  for_each_launch<4>({&out, inputs[0], inputs[1], inputs[2]},
                     [&](const std::array<void*, 4>& p, const Geometry<4>& g) {
                       a.out = p[0];
                       for (int k = 0; k < 3; ++k) a.in[k] = p[k + 1];
                       a.g = g;
                       launch_ew_where(a);
                     });
  return true;
}

// A pointer the host may read or write for a copy: the data of a CPU tensor.
const void* host_ptr(const Tensor& t) { return t.data_ptr(); }

// Waits for a host<->device copy on the current stream unless it may run on: a non-blocking
// copy from or to pinned memory (the pinned block then records the stream's use of it).
void finish_host_copy(const void* host, bool may_overlap) {
  cudaStream_t stream = current_raw_stream();
  if (may_overlap && copy_non_blocking() && is_pinned_ptr(host)) {
    pinned_record_use(host, stream);
    return;
  }
  check_not_capturing("copy_");
  sync_current_stream();
}

// Copies between two devices: packed on the source device, moved with a peer copy on the
// destination's current stream (ordered after the source stream's work by an event), then cast
// or scattered on the destination device.
void copy_across_devices(const Tensor& dst, const Tensor& src) {
  Tensor s = src;
  {
    DeviceGuard g(src.device());
    if (!s.is_contiguous()) {
      s = empty_tensor(src.sizes(), src.dtype(), src.device());
      copy_on_device(s, src);
    }
  }
  DeviceGuard g(dst.device());
  const bool direct = dst.is_contiguous() && dst.dtype() == s.dtype();
  Tensor d = direct ? dst : empty_tensor(s.sizes(), s.dtype(), dst.device());
  const int src_dev = src.device().index(), dst_dev = dst.device().index();
  cudaStream_t src_stream = current_raw_stream(src_dev), dst_stream = current_raw_stream(dst_dev);
  cudaEvent_t ready = nullptr, done = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  {
    DeviceGuard gs(src.device());
    EMBER_CUDA_CHECK(cudaEventRecord(ready, src_stream));
  }
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(dst_stream, ready, 0));
  EMBER_CUDA_CHECK(
      cudaMemcpyPeerAsync(d.data_ptr(), dst_dev, s.data_ptr(), src_dev, s.nbytes(), dst_stream));
  EMBER_CUDA_CHECK(cudaEventRecord(done, dst_stream));
  {
    // The source's memory stays in use until the copy has read it.
    DeviceGuard gs(src.device());
    EMBER_CUDA_CHECK(cudaStreamWaitEvent(src_stream, done, 0));
  }
  EMBER_CUDA_CHECK(cudaEventDestroy(ready));
  EMBER_CUDA_CHECK(cudaEventDestroy(done));
  if (!direct) copy_on_device(dst, d);
}

class CudaBackend final : public DeviceBackend {
 public:
  bool elementwise(OpId op, const Tensor& out, ArrayRef<const Tensor*> inputs,
                   const OpParams& params) override {
    if (!out.is_cuda()) return false;
    for (const Tensor* t : inputs)
      if (!t->is_cuda() || t->device() != out.device()) return false;
    DeviceGuard guard(out.device());
    switch (op) {
      case OpId::fill: {
        unsigned char bytes[16] = {};
        if (!inputs.empty() || !scalar_bytes(out.dtype(), params.s[0], bytes)) return false;
        if (out.numel() == 0) return true;
        check_aligned(out, "fill_");
        for_each_launch<1>({&out}, [&](const std::array<void*, 1>& p, const Geometry<1>& g) {
          launch_fill(out.dtype(), p[0], g, bytes);
        });
        return true;
      }
      case OpId::copy:
        if (inputs.size() != 1 || out.dtype() == ScalarType::ComplexHalf ||
            inputs[0]->dtype() == ScalarType::ComplexHalf)
          return false;
        if (out.numel() != 0) copy_on_device(out, *inputs[0]);
        return true;
      case OpId::where:
        return run_where(out, inputs);
#define EMBER_CUDA_CASE(o) case OpId::o:
        EMBER_UNARY_OPS(EMBER_CUDA_CASE)
        EMBER_UNARY_PREDICATE_OPS(EMBER_CUDA_CASE)
        EMBER_BINARY_OPS(EMBER_CUDA_CASE)
        EMBER_COMPARISON_OPS(EMBER_CUDA_CASE)
        EMBER_SPECIAL_UNARY_OPS(EMBER_CUDA_CASE)
        EMBER_SPECIAL_BINARY_OPS(EMBER_CUDA_CASE)
#undef EMBER_CUDA_CASE
      case OpId::add:
      case OpId::sub:
      case OpId::div_trunc:
      case OpId::div_floor:
      case OpId::round_decimals:
      case OpId::clamp:
      case OpId::logit:
      case OpId::polygamma:
      case OpId::mvlgamma:
      case OpId::nan_to_num:
      case OpId::leaky_relu:
      case OpId::elu:
      case OpId::celu:
      case OpId::gelu:
      case OpId::gelu_tanh:
      case OpId::softplus:
      case OpId::hardtanh:
      case OpId::hardshrink:
      case OpId::softshrink:
      case OpId::threshold:
      case OpId::lerp_scalar:
      case OpId::lerp_tensor:
      case OpId::addcmul:
      case OpId::addcdiv:
      case OpId::isclose:
      case OpId::conj_physical:
      case OpId::clamp_tensor:
        // The dtypes of the CPU kernels (Note [Op table]): a dtype the CPU has no kernel for
        // is not implemented on cuda either.
        if (inputs.empty() || !cpu::kernels().get(op, inputs[0]->dtype())) return false;
        return run_elementwise(op, out, inputs, params);
        // Backends are only called with elementwise ops.
#define EMBER_CUDA_NOT_ELEMENTWISE(o, schema, traits) case OpId::o:
        EMBER_NON_ELEMENTWISE_OPS(EMBER_CUDA_NOT_ELEMENTWISE)
#undef EMBER_CUDA_NOT_ELEMENTWISE
      case OpId::kCount:
        EMBER_INTERNAL_ASSERT(false, "[cuda elementwise] not an elementwise op: ",
                              op == OpId::kCount ? "kCount" : op_info(op).id);
        break;
    }
    return false;
  }

  bool copy(const Tensor& dst, const Tensor& src) override {
    const bool dst_cuda = dst.is_cuda(), src_cuda = src.is_cuda();
    if (!(dst_cuda || dst.is_cpu()) || !(src_cuda || src.is_cpu())) return false;
    if (dst.dtype() == ScalarType::ComplexHalf || src.dtype() == ScalarType::ComplexHalf)
      return false;
    if (dst.numel() == 0) return true;
    if (dst_cuda && src_cuda && dst.device() != src.device()) {
      copy_across_devices(dst, src);
      return true;
    }
    DeviceGuard guard(dst_cuda ? dst.device() : src.device());

    if (dst_cuda && src_cuda) {
      copy_on_device(dst, src);
      return true;
    }
    if (dst_cuda) {
      // Host to device: convert and pack on the CPU with ember's CPU kernels, upload one
      // contiguous block, and scatter on the device when dst is strided.
      Tensor s = src.dtype() == dst.dtype() ? src : src.to(dst.dtype());
      s = s.contiguous();
      Tensor d = dst.is_contiguous() ? dst : empty_tensor(dst.sizes(), dst.dtype(), dst.device());
      EMBER_CUDA_CHECK(cudaMemcpyAsync(d.data_ptr(), host_ptr(s), d.nbytes(),
                                       cudaMemcpyHostToDevice, current_raw_stream()));
      // Only the caller's own pinned buffer may still be read after returning.
      finish_host_copy(host_ptr(s), s.is_same(src));
      if (!d.is_same(dst)) copy_on_device(dst, d);
      return true;
    }
    // Device to host: pack on the device, download one block, and let the CPU kernels cast and
    // scatter when dst differs in dtype or layout.
    Tensor s = src;
    if (!s.is_contiguous()) {
      s = empty_tensor(src.sizes(), src.dtype(), src.device());
      copy_on_device(s, src);
    }
    const bool direct = dst.is_contiguous() && dst.dtype() == s.dtype();
    Tensor h = direct ? dst : empty_tensor(s.sizes(), s.dtype(), Device(kCPU));
    EMBER_CUDA_CHECK(cudaMemcpyAsync(const_cast<void*>(host_ptr(h)), s.data_ptr(), s.nbytes(),
                                     cudaMemcpyDeviceToHost, current_raw_stream()));
    finish_host_copy(host_ptr(h), direct);
    if (!direct) Tensor(dst).copy_(h);
    return true;
  }
};

}  // namespace

int current_sm_count() {
  static std::atomic<int> counts[64] = {};
  const int dev = raw_current_device();
  if (dev < 0 || dev >= 64) return 1;
  int c = counts[dev].load(std::memory_order_relaxed);
  if (c == 0) {
    EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, dev));
    if (c <= 0) c = 1;
    counts[dev].store(c, std::memory_order_relaxed);
  }
  return c;
}

namespace {

// Registers the backend when a GPU is present (the allocator registers itself likewise).
[[maybe_unused]] const bool g_register_backend = [] {
  static CudaBackend backend;
  if (raw_device_count() > 0) register_device_backend(kCUDA, &backend);
  return true;
}();

}  // namespace
}  // namespace cuda
}  // namespace ember
