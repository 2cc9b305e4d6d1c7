// CUDA kernels of the fused optimizer steps (kernels/stubs/optim.h): Adam/AdamW and SGD.
//
// Note [Multi-tensor launch]
// A group's tensors are cut into chunks of kChunk elements. One launch covers a table of up to
// kMaxTensors tensors, passed by value as a kernel argument (under 4 KiB, so no device copy and
// nothing to free): each tensor's slot pointers, its element count, the index of its first
// chunk and its per-tensor scalars (bias corrections depend on each parameter's step). Block b
// handles chunk b: it finds its tensor by a scan of the (at most kMaxTensors) first-chunk
// indices and runs the CPU loop's per-element math (functional.cpp) over the chunk's elements.
// Element loads convert to the opmath type (float for the half types, double for float64) and
// stores round back, as the CPU loop does.
#include <algorithm>
#include <type_traits>

#include "core/kernel_stub.h"
#include "ember/cuda.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/stubs/optim.h"
#include "optim/step_scalars.h"

namespace ember {
namespace cuda {
namespace {

constexpr int kMaxTensors = 48;
constexpr int64_t kChunk = 65536;
constexpr int kOptimBlock = 512;

// One launch's tensors (Note [Multi-tensor launch]). S: the slots per tensor.
template <int S>
struct TensorTable {
  void* ptr[S][kMaxTensors];
  int64_t numel[kMaxTensors];
  int64_t first_chunk[kMaxTensors + 1];  // [count]: the launch's number of chunks
  double scalar[2][kMaxTensors];
  int count;
};
static_assert(sizeof(TensorTable<5>) + 128 <= 4096, "kernel arguments must stay under 4 KiB");

// The tensor holding chunk c: the last k with first_chunk[k] <= c.
template <int S>
__device__ __forceinline__ int tensor_of_chunk(const TensorTable<S>& t, int64_t c) {
  int k = 0;
  while (k + 1 < t.count && t.first_chunk[k + 1] <= c) ++k;
  return k;
}

// Block blockIdx.x's chunk: its tensor k and its elements [begin, end) (Note [Multi-tensor
// launch]).
struct Chunk {
  int k;
  int64_t begin, end;
};
template <int S>
__device__ __forceinline__ Chunk block_chunk(const TensorTable<S>& t) {
  const int64_t c = blockIdx.x;
  const int k = tensor_of_chunk(t, c);
  const int64_t begin = (c - t.first_chunk[k]) * kChunk;
  return {k, begin, begin + kChunk < t.numel[k] ? begin + kChunk : t.numel[k]};
}

// Fills tables and launches `launch(table, chunks)` for each full table and for the last one.
template <int S, class Launch>
class TableLauncher {
 public:
  explicit TableLauncher(const Launch& launch) : launch_(launch) { reset(); }

  void add(void* const (&ptrs)[S], int64_t numel, double s0, double s1) {
    if (numel == 0) return;
    const int64_t chunks = (numel + kChunk - 1) / kChunk;
    const int64_t max_grid = 0x7fffffff;
    if (t_.count == kMaxTensors || t_.first_chunk[t_.count] + chunks > max_grid) flush();
    EMBER_CHECK(chunks <= max_grid, "[optim] a tensor of ", numel, " elements is too large");
    const int k = t_.count;
    for (int s = 0; s < S; ++s) t_.ptr[s][k] = ptrs[s];
    t_.numel[k] = numel;
    t_.scalar[0][k] = s0;
    t_.scalar[1][k] = s1;
    t_.first_chunk[k + 1] = t_.first_chunk[k] + chunks;
    t_.count = k + 1;
  }

  void flush() {
    if (t_.count > 0) launch_(t_, t_.first_chunk[t_.count]);
    reset();
  }

 private:
  void reset() {
    t_ = TensorTable<S>{};
    t_.first_chunk[0] = 0;
  }

  TensorTable<S> t_;
  const Launch& launch_;
};

// ---- Adam / AdamW ----

struct AdamArgs {
  double beta1, one_minus_beta1, beta2, one_minus_beta2, weight_decay, decay, eps;
  bool maximize, l2, decoupled, amsgrad;
};

// Slots: param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq; scalars: -step_size, sqrt(bc2).
template <class T>
__global__ void __launch_bounds__(kOptimBlock)
    adam_kernel(const __grid_constant__ TensorTable<5> t, const AdamArgs a) {
  using A = opmath_t<T>;
  const auto [k, begin, end] = block_chunk(t);
  T* param = static_cast<T*>(t.ptr[0][k]);
  const T* grad = static_cast<const T*>(t.ptr[1][k]);
  T* m = static_cast<T*>(t.ptr[2][k]);
  T* v = static_cast<T*>(t.ptr[3][k]);
  T* vmax = static_cast<T*>(t.ptr[4][k]);
  const A b1 = A(a.beta1), omb1 = A(a.one_minus_beta1), b2 = A(a.beta2),
          omb2 = A(a.one_minus_beta2), wd = A(a.weight_decay), decay = A(a.decay), ep = A(a.eps);
  const A neg_step = A(t.scalar[0][k]), bc2s = A(t.scalar[1][k]);
  for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    A g = convert<A>(grad[j]);
    if (a.maximize) g = -g;
    A x = convert<A>(param[j]);
    if (a.l2) g = g + wd * x;
    if (a.decoupled) x = x * decay;
    const A mj = convert<A>(m[j]) * b1 + omb1 * g;
    const A vj = convert<A>(v[j]) * b2 + omb2 * (g * g);
    m[j] = convert<T>(mj);
    v[j] = convert<T>(vj);
    A vd = vj;
    if (a.amsgrad) {
      A mx = convert<A>(vmax[j]);
      mx = (vj > mx || vj != vj) ? vj : mx;  // torch.maximum propagates NaN
      vmax[j] = convert<T>(mx);
      vd = mx;
    }
    const A denom = sqrt(vd) / bc2s + ep;
    param[j] = convert<T>(x + neg_step * (mj / denom));
  }
}

void check_contiguous(const char* op, const std::vector<Tensor>& l) {
  for (const Tensor& x : l)
    EMBER_CHECK(x.is_contiguous(), "[", op, "] the cuda kernel expects contiguous tensors");
}

// Launches kernel(table, a) over the group, one launch per table of tensors. fill(i, ptrs,
// scalars) gives parameter i's slot pointers and its two per-tensor scalars.
template <int S, class Args, class Fill>
void launch_group(const char* op, const std::vector<Tensor>& params,
                  void (*kernel)(TensorTable<S>, Args), const Args& a, const Fill& fill) {
  auto launch = [&](const TensorTable<S>& t, int64_t chunks) {
    kernel<<<unsigned(chunks), kOptimBlock, 0, current_raw_stream()>>>(t, a);
    check_launch(op);
  };
  TableLauncher<S, decltype(launch)> tables(launch);
  for (size_t i = 0; i < params.size(); ++i) {
    void* ptrs[S] = {};
    double scalars[2] = {0., 0.};
    fill(i, ptrs, scalars);
    tables.add(ptrs, params[i].numel(), scalars[0], scalars[1]);
  }
  tables.flush();
}

// Calls f(TypeTag<device type>) for the optimizers' dtypes.
template <class F>
void dispatch_optim_dtype(const char* op, ScalarType dt, const F& f) {
  switch (dt) {
    case kFloat:
      f(TypeTag<float>{});
      break;
    case kDouble:
      f(TypeTag<double>{});
      break;
    case kHalf:
      f(TypeTag<__half>{});
      break;
    case kBFloat16:
      f(TypeTag<__nv_bfloat16>{});
      break;
    default:
      EMBER_THROW(NotImplementedError, "[", op, "] not implemented for cuda ", dtype_name(dt));
  }
}

void fused_adam_cuda(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
                     double lr, double beta1, double beta2, double eps, double weight_decay,
                     bool amsgrad, bool maximize, bool decoupled) {
  const char* op = decoupled ? "adamw_step" : "adam_step";
  if (params.empty()) return;
  DeviceGuard guard(params[0].device());
  const size_t n = params.size();
  EMBER_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n &&
                  steps.size() == n && (!amsgrad || max_exp_avg_sqs.size() == n),
              "[", op, "] expected lists of ", n, " entries");
  for (const auto* l : {&params, &grads, &exp_avgs, &exp_avg_sqs}) check_contiguous(op, *l);
  if (amsgrad) check_contiguous(op, max_exp_avg_sqs);
  const AdamArgs a{beta1,     1 - beta1,    beta2,
                   1 - beta2, weight_decay, 1 - lr * weight_decay,
                   eps,       maximize,     !decoupled && weight_decay != 0,
                   decoupled, amsgrad};
  dispatch_optim_dtype(op, params[0].scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_group<5>(op, params, &adam_kernel<T>, a, [&](size_t i, void** ptrs, double* scalars) {
      ptrs[0] = params[i].data_ptr();
      ptrs[1] = grads[i].data_ptr();
      ptrs[2] = exp_avgs[i].data_ptr();
      ptrs[3] = exp_avg_sqs[i].data_ptr();
      ptrs[4] = amsgrad ? max_exp_avg_sqs[i].data_ptr() : nullptr;
      const optim::functional::AdamScalars sc =
          optim::functional::adam_scalars(steps[i], lr, beta1, beta2);
      scalars[0] = -sc.step_size;
      scalars[1] = sc.bias_correction2_sqrt;
    });
  });
}

// ---- SGD ----

struct SgdArgs {
  double weight_decay, momentum, one_minus_dampening, neg_lr;
  bool maximize, nesterov;
};

// Slots: param, grad, momentum buffer (null without momentum); scalar 0: 1 on the first step.
template <class T>
__global__ void __launch_bounds__(kOptimBlock)
    sgd_kernel(const __grid_constant__ TensorTable<3> t, const SgdArgs a) {
  using A = opmath_t<T>;
  const auto [k, begin, end] = block_chunk(t);
  T* param = static_cast<T*>(t.ptr[0][k]);
  const T* grad = static_cast<const T*>(t.ptr[1][k]);
  T* buf = static_cast<T*>(t.ptr[2][k]);
  const bool first = t.scalar[0][k] != 0;
  const A wd = A(a.weight_decay), mom = A(a.momentum), omd = A(a.one_minus_dampening),
          nlr = A(a.neg_lr);
  const bool has_wd = a.weight_decay != 0;
  for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    A d = convert<A>(grad[j]);
    if (a.maximize) d = -d;
    const A x = convert<A>(param[j]);
    if (has_wd) d = d + wd * x;
    if (buf != nullptr) {
      const A bj = first ? d : convert<A>(buf[j]) * mom + omd * d;
      const T stored = convert<T>(bj);
      buf[j] = stored;
      d = a.nesterov ? d + mom * convert<A>(stored) : convert<A>(stored);
    }
    param[j] = convert<T>(x + nlr * d);
  }
}

void fused_sgd_cuda(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& momentum_buffers,
                    const std::vector<char>& first_step, double lr, double momentum,
                    double dampening, double weight_decay, bool nesterov, bool maximize) {
  const char* op = "sgd_step";
  if (params.empty()) return;
  DeviceGuard guard(params[0].device());
  const size_t n = params.size();
  const bool has_buf = momentum != 0;
  EMBER_CHECK(
      grads.size() == n && first_step.size() == n && (!has_buf || momentum_buffers.size() == n),
      "[", op, "] expected lists of ", n, " entries");
  check_contiguous(op, params);
  check_contiguous(op, grads);
  if (has_buf) check_contiguous(op, momentum_buffers);
  const SgdArgs a{weight_decay, momentum, 1 - dampening, -lr, maximize, nesterov};
  dispatch_optim_dtype(op, params[0].scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_group<3>(op, params, &sgd_kernel<T>, a, [&](size_t i, void** ptrs, double* scalars) {
      ptrs[0] = params[i].data_ptr();
      ptrs[1] = grads[i].data_ptr();
      ptrs[2] = has_buf ? momentum_buffers[i].data_ptr() : nullptr;
      scalars[0] = first_step[i] != 0 ? 1. : 0.;
    });
  });
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(fused_adam_stub, kCUDA, cuda::fused_adam_cuda);
EMBER_REGISTER_KERNEL(fused_sgd_stub, kCUDA, cuda::fused_sgd_cuda);

}  // namespace ember
