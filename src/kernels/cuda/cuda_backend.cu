// The CUDA device backend (Note [Device backends]): elementwise ops and copies, turning tensors
// into kernel geometry (Note [CUDA kernel interface]). Registered when libember_cuda.so is
// loaded and a GPU is present.

#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/tensor_util.h"
#include "ember/allocator.h"
#include "ember/dispatch_type.h"
#include "ember/cuda.h"
#include "cuda/cuda_context.h"
#include "kernels/cuda/cuda_common.cuh"
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
    EMBER_CUDA_CHECK(
        cudaMemcpy(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToDevice));
    return;
  }
  EMBER_CHECK(dst.dtype() != ScalarType::ComplexHalf && src.dtype() != ScalarType::ComplexHalf,
              "[copy_] copy from ", src.dtype(), " to ", dst.dtype(), " is not supported on cuda");
  for_each_launch<2>({&dst, &src}, [&](const std::array<void*, 2>& p, const Geometry<2>& g) {
    launch_cast(dst.dtype(), p[0], src.dtype(), p[1], g);
  });
}

class CudaBackend final : public DeviceBackend {
 public:
  bool elementwise(OpId op, const Tensor& out, ArrayRef<const Tensor*> inputs,
                   const OpParams& params) override {
    if (!out.is_cuda()) return false;
    for (const Tensor* t : inputs)
      if (!t->is_cuda() || t->device() != out.device()) return false;
    if (out.numel() == 0) return true;
    DeviceGuard guard(out.device());
    switch (op) {
      case OpId::fill: {
        unsigned char bytes[16] = {};
        if (!inputs.empty() || !scalar_bytes(out.dtype(), params.s[0], bytes)) return false;
        check_aligned(out, "fill_");
        for_each_launch<1>({&out}, [&](const std::array<void*, 1>& p, const Geometry<1>& g) {
          launch_fill(out.dtype(), p[0], g, bytes);
        });
        return true;
      }
      case OpId::add: {
        if (inputs.size() != 2) return false;
        const Tensor &a = *inputs[0], &b = *inputs[1];
        const ScalarType dt = out.dtype();
        if (a.dtype() != dt || b.dtype() != dt || dt == ScalarType::ComplexHalf) return false;
        for (const Tensor* t : {&out, &a, &b}) check_aligned(*t, "add");
        const Scalar& s = params.s[0];
        ScalarArg alpha;
        alpha.i = s.toLong();
        alpha.d = s.toDouble();
        alpha.im = s.toComplexDouble().imag();
        alpha.b = s.toBool();
        for_each_launch<3>({&out, &a, &b},
                           [&](const std::array<void*, 3>& p, const Geometry<3>& g) {
                             launch_add(dt, p[0], p[1], p[2], g, alpha);
                           });
        return true;
      }
      // No CUDA kernel (yet): every other elementwise op. The switch lists every op (no
      // default:, -Werror=switch; Note [Op list]).
#define EMBER_CUDA_CASE(o) case OpId::o:
        EMBER_UNARY_OPS(EMBER_CUDA_CASE)
        EMBER_UNARY_PREDICATE_OPS(EMBER_CUDA_CASE)
        EMBER_BINARY_OPS(EMBER_CUDA_CASE)
        EMBER_COMPARISON_OPS(EMBER_CUDA_CASE)
#undef EMBER_CUDA_CASE
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
      case OpId::where:
      case OpId::isclose:
      case OpId::conj_physical:
      case OpId::clamp_tensor:
      case OpId::copy:
#define EMBER_CUDA_CASE(o) case OpId::o:
        EMBER_SPECIAL_UNARY_OPS(EMBER_CUDA_CASE)
        EMBER_SPECIAL_BINARY_OPS(EMBER_CUDA_CASE)
#undef EMBER_CUDA_CASE
        return false;
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
    if (dst_cuda && src_cuda && dst.device() != src.device()) return false;
    if (dst.numel() == 0) return true;
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
      EMBER_CUDA_CHECK(cudaMemcpy(d.data_ptr(), s.data_ptr(), d.nbytes(), cudaMemcpyHostToDevice));
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
    EMBER_CUDA_CHECK(cudaMemcpy(h.data_ptr(), s.data_ptr(), s.nbytes(), cudaMemcpyDeviceToHost));
    if (!direct) Tensor(dst).copy_(h);
    return true;
  }
};

// Registers the backend when a GPU is present (the allocator registers itself likewise).
[[maybe_unused]] const bool g_register_backend = [] {
  static CudaBackend backend;
  if (raw_device_count() > 0) register_device_backend(kCUDA, &backend);
  return true;
}();

}  // namespace
}  // namespace cuda
}  // namespace ember
