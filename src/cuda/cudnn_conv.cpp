// The three convolution maps on CUDA (kernels/stubs/conv.h) through cuDNN's convolution API on
// the current stream: float32 (TF32 tensor cores unless float32_matmul_precision() is
// "highest", as matmul), float64, and float16/bfloat16 with float32 accumulation. Algorithms come
// from cuDNN's heuristics and are cached per shape; deterministic mode keeps only deterministic
// ones. Geometry: Note [Convolutions through cuDNN] (cudnn_conv_geom.h).
#include <cudnn.h>

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "core/tensor_util.h"
#include "cuda/cuda_context.h"
#include "cuda/cudnn_conv_geom.h"
#include "ember/context.h"
#include "ember/cuda.h"
#include "ember/utils.h"
#include "kernels/stubs/conv.h"
#include "ops/device_kernels.h"

namespace ember::cuda {
namespace {

void check_cudnn(cudnnStatus_t st, const char* what) {
  if (st != CUDNN_STATUS_SUCCESS)
    EMBER_THROW(Error, "[cudnn] ", what, " failed: ", cudnnGetErrorString(st));
}
#define EMBER_CUDNN_CHECK(expr) check_cudnn((expr), #expr)

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { EMBER_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d)); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { EMBER_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d)); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() { EMBER_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d)); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

cudnnDataType_t cudnn_type(ScalarType dt, const char* op) {
  switch (dt) {
    case kFloat:
      return CUDNN_DATA_FLOAT;
    case kDouble:
      return CUDNN_DATA_DOUBLE;
    case kHalf:
      return CUDNN_DATA_HALF;
    case kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      EMBER_THROW(NotImplementedError, "[", op, "] not implemented for cuda ", dtype_name(dt),
                  " (supported: float32, float64, float16, bfloat16)");
  }
}

int to_int(int64_t v, const char* op) {
  if (v > INT_MAX)
    EMBER_THROW(NotImplementedError, "[", op, "] cuDNN takes sizes below 2^31, got ", v,
                " (split the batch)");
  return int(v);
}

/// Tensor sizes as cuDNN sees them (at least 2 spatial dims) and the convolution parameters.
struct CudnnGeom {
  int nsp = 0;               // cuDNN's spatial dims: 2 or 3
  std::vector<int> x, w, y;  // N, C, in_c... / K, C / groups, kernel... / N, K, out_c...
  std::vector<int> pad, stride, dilation;
  DimVector x_sizes, y_sizes;  // ember sizes of the cuDNN-side x and y (the real rank)
  bool x_extended = false, y_extended = false;
  int groups = 1;
};

CudnnGeom make_geom(const ConvParams& p, IntArrayRef xs, IntArrayRef ws, IntArrayRef ys,
                    const char* op) {
  CudnnGeom g;
  const int nd = p.nd();
  g.groups = to_int(p.groups, op);
  g.x = {to_int(xs[0], op), to_int(xs[1], op)};
  g.w = {to_int(ws[0], op), to_int(ws[1], op)};
  g.y = {to_int(ys[0], op), to_int(ys[1], op)};
  g.x_sizes = {xs[0], xs[1]};
  g.y_sizes = {ys[0], ys[1]};
  for (int i = 0; i < nd; ++i) {
    const CudnnConvDim d =
        cudnn_conv_dim(xs[2 + i], ys[2 + i], ws[2 + i], p.stride[i], p.pad_l[i], p.dilation[i]);
    g.x_extended = g.x_extended || d.in != xs[2 + i];
    g.y_extended = g.y_extended || d.out != ys[2 + i];
    g.x.push_back(to_int(d.in, op));
    g.y.push_back(to_int(d.out, op));
    g.w.push_back(to_int(ws[2 + i], op));
    g.x_sizes.push_back(d.in);
    g.y_sizes.push_back(d.out);
    g.pad.push_back(to_int(d.pad, op));
    g.stride.push_back(to_int(p.stride[i], op));
    g.dilation.push_back(to_int(p.dilation[i], op));
  }
  if (nd == 1) {  // cuDNN wants 4-d tensors: a trailing spatial dim of one
    g.x.push_back(1), g.w.push_back(1), g.y.push_back(1);
    g.pad.push_back(0), g.stride.push_back(1), g.dilation.push_back(1);
  }
  g.nsp = int(g.pad.size());
  int64_t xn = 1, yn = 1, wn = 1;
  for (int v : g.x) xn *= v;
  for (int v : g.y) yn *= v;
  for (int v : g.w) wn *= v;
  // cuDNN indexes elements with int.
  to_int(xn, op);
  to_int(yn, op);
  to_int(wn, op);
  return g;
}

void set_tensor(const TensorDesc& t, cudnnDataType_t dt, const std::vector<int>& dims) {
  std::vector<int> strides(dims.size());
  int s = 1;
  for (size_t i = dims.size(); i-- > 0;) strides[i] = s, s *= dims[i];
  EMBER_CUDNN_CHECK(
      cudnnSetTensorNdDescriptor(t.d, dt, int(dims.size()), dims.data(), strides.data()));
}

/// Everything a cuDNN call needs: descriptors, the math mode and the cache key.
struct Call {
  CudnnGeom g;
  cudnnDataType_t dt;
  ScalarType st;
  bool fma_only = false;  // float32 at "highest": no TF32
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  std::vector<int64_t> key;
  double one_d = 1, zero_d = 0;
  float one_f = 1, zero_f = 0;
  const void* one() const { return st == kDouble ? static_cast<const void*>(&one_d) : &one_f; }
  const void* zero() const { return st == kDouble ? static_cast<const void*>(&zero_d) : &zero_f; }
};

void setup(Call& c, int pass, const ConvParams& p, IntArrayRef xs, IntArrayRef ws, IntArrayRef ys,
           ScalarType st, int device, const char* op) {
  c.st = st;
  c.dt = cudnn_type(st, op);
  c.g = make_geom(p, xs, ws, ys, op);
  c.fma_only = st == kFloat && float32_matmul_precision() == MatmulPrecision::Highest;
  set_tensor(c.x, c.dt, c.g.x);
  set_tensor(c.y, c.dt, c.g.y);
  EMBER_CUDNN_CHECK(
      cudnnSetFilterNdDescriptor(c.w.d, c.dt, CUDNN_TENSOR_NCHW, int(c.g.w.size()), c.g.w.data()));
  const cudnnDataType_t compute = st == kDouble ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  EMBER_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(c.conv.d, c.g.nsp, c.g.pad.data(),
                                                    c.g.stride.data(), c.g.dilation.data(),
                                                    CUDNN_CROSS_CORRELATION, compute));
  EMBER_CUDNN_CHECK(cudnnSetConvolutionGroupCount(c.conv.d, c.g.groups));
  const cudnnMathType_t math = st == kDouble ? CUDNN_DEFAULT_MATH
                               : c.fma_only  ? CUDNN_FMA_MATH
                                             : CUDNN_TENSOR_OP_MATH;
  EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(c.conv.d, math));
  const bool det = are_deterministic_algorithms_enabled();
  c.key = {pass, int64_t(st), device, c.fma_only, det, c.g.groups};
  for (const auto* v : {&c.g.x, &c.g.w, &c.g.y, &c.g.pad, &c.g.stride, &c.g.dilation}) {
    c.key.push_back(int64_t(v->size()));
    c.key.insert(c.key.end(), v->begin(), v->end());
  }
}

/// An algorithm with the math type it runs under.
struct Algo {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::vector<int64_t>, Algo>& algo_cache() {
  static auto* c = new std::map<std::vector<int64_t>, Algo>();  // lives for the process
  return *c;
}

/// The heuristics' candidates in preference order, filtered for determinism; raises (or warns,
/// in warn-only mode) when deterministic mode leaves none.
template <class Perf>
std::vector<Algo> candidates(const Call& c, const Perf* perf, int n, const char* op) {
  std::vector<Algo> all, det;
  for (int i = 0; i < n; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    Algo a{int(perf[i].algo), c.fma_only ? CUDNN_FMA_MATH : perf[i].mathType};
    all.push_back(a);
    if (perf[i].determinism == CUDNN_DETERMINISTIC) det.push_back(a);
  }
  if (!are_deterministic_algorithms_enabled()) return all;
  if (!det.empty()) return det;
  EMBER_CHECK(is_deterministic_algorithms_warn_only_enabled(), "[", op,
              "] cuDNN has no deterministic algorithm for this convolution, and "
              "use_deterministic_algorithms(true) was set");
  EMBER_WARN("[", op, "] cuDNN has no deterministic algorithm for this convolution");
  return all;
}

/// Runs `exec(algo, workspace, bytes)` with the cached algorithm, else each candidate in turn
/// until one is supported; caches the one that ran.
template <class Query, class WsSize, class Exec>
void run_with_algo(Call& c, const char* op, const Query& query, const WsSize& ws_size,
                   const Exec& exec) {
  std::vector<Algo> cached;
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    auto it = algo_cache().find(c.key);
    if (it != algo_cache().end()) cached.push_back(it->second);
  }
  cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
  auto try_all = [&](const std::vector<Algo>& order) {
    for (size_t i = 0; i < order.size(); ++i) {
      const Algo& a = order[i];
      EMBER_CUDNN_CHECK(cudnnSetConvolutionMathType(c.conv.d, a.math));
      size_t bytes = 0;
      if (ws_size(a.algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
      DataPtr ws;
      if (bytes > 0) {
        try {
          ws = scratch(bytes);
        } catch (const Error&) {
          if (i + 1 < order.size()) continue;  // a candidate with less workspace may follow
          throw;
        }
      }
      last = exec(a.algo, ws.get(), bytes);
      if (last == CUDNN_STATUS_SUCCESS) {
        std::lock_guard<std::mutex> lock(cache_mutex());
        algo_cache()[c.key] = a;
        return true;
      }
      if (last != CUDNN_STATUS_NOT_SUPPORTED && last != CUDNN_STATUS_BAD_PARAM) return false;
    }
    return false;
  };
  if (!cached.empty() && try_all(cached)) return;
  if (try_all(query())) return;
  EMBER_THROW(Error, "[", op,
              "] no cuDNN algorithm ran this convolution: ", cudnnGetErrorString(last));
}

cudnnHandle_t handle() {
  cudnnHandle_t h = cudnn_handle();
  EMBER_CUDNN_CHECK(cudnnSetStream(h, current_raw_stream()));
  return h;
}

/// `t` narrowed to `sizes` in every dim from 2 on (the real part of an extended geometry).
Tensor crop(const Tensor& t, IntArrayRef sizes) {
  Tensor r = t;
  for (int64_t d = 2; d < int64_t(sizes.size()); ++d)
    if (r.size(d) != sizes[size_t(d)]) r = r.narrow(d, 0, sizes[size_t(d)]);
  return r;
}

/// `t` zero-extended at the end of its spatial dims to `sizes`.
Tensor extend(const Tensor& t, IntArrayRef sizes) {
  Tensor r = empty_tensor(sizes, t.dtype(), t.device());
  EMBER_CUDA_CHECK(cudaMemsetAsync(r.data_ptr(), 0, r.nbytes(), current_raw_stream()));
  crop(r, t.sizes()).copy_(t);
  return r;
}

void check_operands(std::initializer_list<const Tensor*> ts, const Tensor& out, const char* op) {
  for (const Tensor* t : ts)
    EMBER_CHECK(!t->defined() || (t->device() == out.device() && t->dtype() == out.dtype() &&
                                  t->is_contiguous()),
                "[", op, "] expected contiguous ", dtype_name(out.dtype()), " operands on ",
                out.device().str());
}

void conv_forward_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       const ConvParams& p, Tensor& y) {
  const char* op = "convolution";
  DeviceGuard guard(y.device());
  check_operands({&x, &weight, &bias}, y, op);
  Call c;
  setup(c, 0, p, x.sizes(), weight.sizes(), y.sizes(), y.dtype(), y.device().index(), op);
  cudnnHandle_t h = handle();
  const Tensor xc = c.g.x_extended ? extend(x, c.g.x_sizes) : x;
  Tensor yc = c.g.y_extended ? empty_tensor(c.g.y_sizes, y.dtype(), y.device()) : y;
  auto query = [&] {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
        h, c.x.d, c.w.d, c.conv.d, c.y.d, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
    return candidates(c, perf, n, op);
  };
  auto ws_size = [&](int algo, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, c.x.d, c.w.d, c.conv.d, c.y.d,
                                                   cudnnConvolutionFwdAlgo_t(algo), bytes);
  };
  auto exec = [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionForward(h, c.one(), c.x.d, xc.data_ptr(), c.w.d, weight.data_ptr(),
                                   c.conv.d, cudnnConvolutionFwdAlgo_t(algo), ws, bytes, c.zero(),
                                   c.y.d, yc.data_ptr());
  };
  run_with_algo(c, op, query, ws_size, exec);
  if (c.g.y_extended) y.copy_(crop(yc, y.sizes()));
  if (bias.defined()) {
    std::vector<int> bdims(c.g.y.size(), 1), ydims = c.g.y;
    bdims[1] = ydims[1];
    for (size_t i = 2; i < size_t(p.nd()) + 2; ++i) ydims[i] = int(y.size(int64_t(i)));
    TensorDesc bd, yd;
    set_tensor(bd, c.dt, bdims);
    set_tensor(yd, c.dt, ydims);
    const cudnnStatus_t st =
        cudnnAddTensor(h, c.one(), bd.d, bias.data_ptr(), c.one(), yd.d, y.data_ptr());
    if (st == CUDNN_STATUS_NOT_SUPPORTED) {
      DimVector shape(size_t(y.dim()), 1);
      shape[1] = bias.numel();
      y.add_(bias.view(shape));
    } else {
      check_cudnn(st, "cudnnAddTensor");
    }
  }
}

void conv_backward_data_cuda(const Tensor& grad, const Tensor& weight, const ConvParams& p,
                             Tensor& grad_input) {
  const char* op = "convolution_backward_data";
  DeviceGuard guard(grad_input.device());
  check_operands({&grad, &weight}, grad_input, op);
  Call c;
  setup(c, 1, p, grad_input.sizes(), weight.sizes(), grad.sizes(), grad_input.dtype(),
        grad_input.device().index(), op);
  cudnnHandle_t h = handle();
  const Tensor dy = c.g.y_extended ? extend(grad, c.g.y_sizes) : grad;
  Tensor dx =
      c.g.x_extended ? empty_tensor(c.g.x_sizes, grad.dtype(), grad_input.device()) : grad_input;
  auto query = [&] {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int n = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        h, c.w.d, c.y.d, c.conv.d, c.x.d, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
    return candidates(c, perf, n, op);
  };
  auto ws_size = [&](int algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, c.w.d, c.y.d, c.conv.d, c.x.d,
                                                        cudnnConvolutionBwdDataAlgo_t(algo), bytes);
  };
  auto exec = [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionBackwardData(h, c.one(), c.w.d, weight.data_ptr(), c.y.d, dy.data_ptr(),
                                        c.conv.d, cudnnConvolutionBwdDataAlgo_t(algo), ws, bytes,
                                        c.zero(), c.x.d, dx.data_ptr());
  };
  run_with_algo(c, op, query, ws_size, exec);
  if (c.g.x_extended) grad_input.copy_(crop(dx, grad_input.sizes()));
}

void conv_backward_weight_cuda(const Tensor& x, const Tensor& grad, const ConvParams& p,
                               Tensor& grad_weight, Tensor& grad_bias) {
  const char* op = "convolution_backward_weight";
  DeviceGuard guard(grad_weight.device());
  check_operands({&x, &grad, &grad_bias}, grad_weight, op);
  Call c;
  setup(c, 2, p, x.sizes(), grad_weight.sizes(), grad.sizes(), grad_weight.dtype(),
        grad_weight.device().index(), op);
  cudnnHandle_t h = handle();
  const Tensor xc = c.g.x_extended ? extend(x, c.g.x_sizes) : x;
  const Tensor dy = c.g.y_extended ? extend(grad, c.g.y_sizes) : grad;
  auto query = [&] {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n = 0;
    EMBER_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        h, c.x.d, c.y.d, c.conv.d, c.w.d, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf));
    return candidates(c, perf, n, op);
  };
  auto ws_size = [&](int algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, c.x.d, c.y.d, c.conv.d, c.w.d, cudnnConvolutionBwdFilterAlgo_t(algo), bytes);
  };
  auto exec = [&](int algo, void* ws, size_t bytes) {
    return cudnnConvolutionBackwardFilter(h, c.one(), c.x.d, xc.data_ptr(), c.y.d, dy.data_ptr(),
                                          c.conv.d, cudnnConvolutionBwdFilterAlgo_t(algo), ws,
                                          bytes, c.zero(), c.w.d, grad_weight.data_ptr());
  };
  run_with_algo(c, op, query, ws_size, exec);
  if (grad_bias.defined()) {
    // The bias gradient sums `dy` (zero-extended or not: the extension adds zeros).
    std::vector<int> bdims(c.g.y.size(), 1);
    bdims[1] = c.g.y[1];
    TensorDesc bd;
    set_tensor(bd, c.dt, bdims);
    const cudnnStatus_t st = cudnnConvolutionBackwardBias(h, c.one(), c.y.d, dy.data_ptr(),
                                                          c.zero(), bd.d, grad_bias.data_ptr());
    if (st == CUDNN_STATUS_NOT_SUPPORTED) {
      DimVector dims{0};
      for (int i = 0; i < p.nd(); ++i) dims.push_back(2 + i);
      grad_bias.copy_(grad.sum(dims));
    } else {
      check_cudnn(st, "cudnnConvolutionBackwardBias");
    }
  }
}

[[maybe_unused]] const bool registered = [] {
  for (OpId id :
       {OpId::convolution, OpId::conv1d, OpId::conv2d, OpId::conv3d, OpId::conv1d_1, OpId::conv2d_1,
        OpId::conv3d_1, OpId::conv_transpose1d, OpId::conv_transpose2d, OpId::conv_transpose3d})
    register_kernel(kCUDA, id, {kFloat, kDouble, kHalf, kBFloat16});
  return true;
}();

}  // namespace
}  // namespace ember::cuda

namespace ember {
EMBER_REGISTER_KERNEL(conv_forward_stub, kCUDA, cuda::conv_forward_cuda);
EMBER_REGISTER_KERNEL(conv_backward_data_stub, kCUDA, cuda::conv_backward_data_cuda);
EMBER_REGISTER_KERNEL(conv_backward_weight_stub, kCUDA, cuda::conv_backward_weight_cuda);
}  // namespace ember
