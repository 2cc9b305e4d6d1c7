// The FFT kernels on CUDA (kernels/stubs/fft.h) through cuFFT on the current stream.
//
// Note [FFT passes on cuFFT]
// The input is permuted so that the transformed dims come last (batch dims first) and made
// contiguous; the transform then runs as passes of at most 3 dims (cuFFT's largest rank) over
// dense buffers, from the last dims to the first. r2c transforms the last dims first (the
// halved one among them) and c2c the rest in place; c2r, like the CPU kernel, runs c2c
// (backward) over all dims but the last and then a 1-d c2r over the last, on a copy (cuFFT's
// c2r overwrites its input) whose zero and Nyquist bins have their imaginary parts cleared,
// which is how the CPU reads them. The result is scaled once and copied into `out` unless
// `out`, permuted, already is the dense buffer. Plans are cached (bounded, least recently used)
// per layout, dtype and device; each runs with its own lock so that binding it to a stream
// and a work area from scratch() and enqueueing it is one step.
#include <cublas_v2.h>
#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/tensor_util.h"
#include "cuda/cuda_context.h"
#include "cuda/lru_cache.h"
#include "ember/cuda.h"
#include "kernels/stubs/fft.h"
#include "ops/device_kernels.h"

namespace ember::cuda {
namespace {

void check_cufft(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) EMBER_THROW(Error, "[cufft] ", what, " failed with cufftResult ", int(r));
}
#define EMBER_CUFFT_CHECK(expr) check_cufft((expr), #expr)

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    EMBER_THROW(Error, "[cublas] ", what, " failed with status ", int(s));
}

enum class Kind : int64_t { C2C, R2C, C2R };

/// A cuFFT plan without its own work area (it gets one from scratch() per execution).
struct Plan {
  cufftHandle handle = 0;
  size_t work = 0;
  std::mutex mutex;
  ~Plan() { cufftDestroy(handle); }
};

constexpr size_t kPlanCacheSize = 256;

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
LruCache<std::vector<int64_t>, Plan>& plan_cache() {
  // Lives for the process: plans must not be destroyed after the CUDA runtime shuts down.
  static auto* c = new LruCache<std::vector<int64_t>, Plan>(kPlanCacheSize);
  return *c;
}

/// A dense batched layout: `n` points per transform (real lengths for R2C / C2R), element
/// stride and distance between transforms on each side.
struct Layout {
  Kind kind;
  bool dbl;
  std::vector<int64_t> n;
  int64_t istride, idist, ostride, odist, batch;
};

cufftType plan_type(Kind k, bool dbl) {
  switch (k) {
    case Kind::C2C:
      return dbl ? CUFFT_Z2Z : CUFFT_C2C;
    case Kind::R2C:
      return dbl ? CUFFT_D2Z : CUFFT_R2C;
    case Kind::C2R:
      return dbl ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

std::shared_ptr<Plan> get_plan(const Layout& l) {
  const int device = raw_current_device();
  std::vector<int64_t> key{device,  int64_t(l.kind), l.dbl,   l.istride,
                           l.idist, l.ostride,       l.odist, l.batch};
  key.insert(key.end(), l.n.begin(), l.n.end());
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    if (auto p = plan_cache().find(key)) return p;
  }
  auto plan = std::make_shared<Plan>();
  EMBER_CUFFT_CHECK(cufftCreate(&plan->handle));
  EMBER_CUFFT_CHECK(cufftSetAutoAllocation(plan->handle, 0));
  const int rank = int(l.n.size());
  long long n[3], inembed[3], onembed[3];
  for (int i = 0; i < rank; ++i) n[i] = inembed[i] = onembed[i] = l.n[size_t(i)];
  if (l.kind == Kind::R2C) onembed[rank - 1] = n[rank - 1] / 2 + 1;
  if (l.kind == Kind::C2R) inembed[rank - 1] = n[rank - 1] / 2 + 1;
  size_t work = 0;
  EMBER_CUFFT_CHECK(cufftMakePlanMany64(plan->handle, rank, n, inembed, l.istride, l.idist, onembed,
                                        l.ostride, l.odist, plan_type(l.kind, l.dbl), l.batch,
                                        &work));
  plan->work = work;
  std::lock_guard<std::mutex> lock(cache_mutex());
  plan_cache().insert(key, plan);
  return plan;
}

/// Enqueues `plan` on the current stream from `in` to `out` (C2C: `forward` picks the sign).
void execute(const std::shared_ptr<Plan>& plan, const Layout& l, void* in, void* out,
             bool forward) {
  std::lock_guard<std::mutex> lock(plan->mutex);
  EMBER_CUFFT_CHECK(cufftSetStream(plan->handle, current_raw_stream()));
  DataPtr ws = plan->work ? scratch(plan->work) : DataPtr();
  EMBER_CUFFT_CHECK(cufftSetWorkArea(plan->handle, ws.get()));
  const int dir = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
  switch (l.kind) {
    case Kind::C2C:
      if (l.dbl)
        EMBER_CUFFT_CHECK(cufftExecZ2Z(plan->handle, static_cast<cufftDoubleComplex*>(in),
                                       static_cast<cufftDoubleComplex*>(out), dir));
      else
        EMBER_CUFFT_CHECK(cufftExecC2C(plan->handle, static_cast<cufftComplex*>(in),
                                       static_cast<cufftComplex*>(out), dir));
      break;
    case Kind::R2C:
      if (l.dbl)
        EMBER_CUFFT_CHECK(cufftExecD2Z(plan->handle, static_cast<cufftDoubleReal*>(in),
                                       static_cast<cufftDoubleComplex*>(out)));
      else
        EMBER_CUFFT_CHECK(cufftExecR2C(plan->handle, static_cast<cufftReal*>(in),
                                       static_cast<cufftComplex*>(out)));
      break;
    case Kind::C2R:
      if (l.dbl)
        EMBER_CUFFT_CHECK(cufftExecZ2D(plan->handle, static_cast<cufftDoubleComplex*>(in),
                                       static_cast<cufftDoubleReal*>(out)));
      else
        EMBER_CUFFT_CHECK(cufftExecC2R(plan->handle, static_cast<cufftComplex*>(in),
                                       static_cast<cufftReal*>(out)));
      break;
  }
}

int64_t prod(IntArrayRef s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

/// c2c over dims [lo, hi) of the dense complex buffer of shape `s` (in place when in == out).
void c2c_pass(const void* in, void* out, IntArrayRef s, size_t lo, size_t hi, bool dbl,
              bool forward) {
  const int64_t outer = prod(s, 0, lo), pts = prod(s, lo, hi), inner = prod(s, hi, s.size());
  Layout l{Kind::C2C, dbl,  std::vector<int64_t>(s.begin() + lo, s.begin() + hi), 1, pts, 1,
           pts,       outer};
  if (inner == 1) {
    execute(get_plan(l), l, const_cast<void*>(in), out, forward);
    return;
  }
  // Dims after the chunk: one plan over the inner elements, once per outer index.
  l.istride = l.ostride = inner;
  l.idist = l.odist = 1;
  l.batch = inner;
  auto plan = get_plan(l);
  const size_t esize = dbl ? 16 : 8;
  const size_t block = size_t(pts * inner) * esize;
  for (int64_t o = 0; o < outer; ++o)
    execute(plan, l, static_cast<char*>(const_cast<void*>(in)) + size_t(o) * block,
            static_cast<char*>(out) + size_t(o) * block, forward);
}

/// Multiplies the `n` elements (complex: `n` complex values) at `p` by `scale`.
void scale_buffer(void* p, int64_t n, bool complex, bool dbl, double scale) {
  if (scale == 1.0 || n == 0) return;
  cublasHandle_t h = cublas_handle();
  check_cublas(cublasSetStream(h, current_raw_stream()), "cublasSetStream");
  const float sf = float(scale);
  if (complex && dbl)
    check_cublas(cublasZdscal_64(h, n, &scale, static_cast<cuDoubleComplex*>(p), 1), "Zdscal");
  else if (complex)
    check_cublas(cublasCsscal_64(h, n, &sf, static_cast<cuComplex*>(p), 1), "Csscal");
  else if (dbl)
    check_cublas(cublasDscal_64(h, n, &scale, static_cast<double*>(p), 1), "Dscal");
  else
    check_cublas(cublasSscal_64(h, n, &sf, static_cast<float*>(p), 1), "Sscal");
}

/// The permutation that puts `dims` (ascending) last, the other dims first in order.
DimVector dims_last(int64_t ndim, IntArrayRef dims) {
  DimVector perm;
  for (int64_t d = 0; d < ndim; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  for (int64_t d : dims) perm.push_back(d);
  return perm;
}

void check_fft(const Tensor& self, const Tensor& out, IntArrayRef dims, bool complex_in,
               const char* op) {
  const ScalarType want = complex_in
                              ? (self.dtype() == kComplexDouble ? kComplexDouble : kComplexFloat)
                              : (self.dtype() == kDouble ? kDouble : kFloat);
  EMBER_CHECK_T(NotImplementedError, self.dtype() == want, "[", op, "] not implemented for cuda ",
                dtype_name(self.dtype()));
  EMBER_CHECK(self.device() == out.device(), "[", op, "] input on ", self.device().str(),
              ", output on ", out.device().str());
  EMBER_INTERNAL_ASSERT(!dims.empty() && out.is_contiguous(), "[", op, "] bad stub arguments");
}

/// The dense buffer a transform writes: `out` permuted when that is dense, else a new one.
Tensor dense_target(const Tensor& out_perm) {
  return out_perm.is_contiguous()
             ? out_perm
             : empty_tensor(out_perm.sizes(), out_perm.dtype(), out_perm.device());
}

void fft_c2c_cuda(const Tensor& self, Tensor& out, IntArrayRef dims, double scale, bool forward) {
  DeviceGuard guard(out.device());
  check_fft(self, out, dims, true, "fft_c2c");
  if (out.numel() == 0) return;
  const bool dbl = self.dtype() == kComplexDouble;
  const DimVector perm = dims_last(self.dim(), dims);
  const Tensor x = (self.is_conj() ? self.resolve_conj() : self).permute(perm).contiguous();
  Tensor op = out.permute(perm);
  Tensor dst = dense_target(op);
  const IntArrayRef s = x.sizes();
  const size_t first = s.size() - dims.size();
  const void* src = x.data_ptr();
  for (size_t hi = s.size(); hi > first;) {
    const size_t lo = std::max(first, hi >= 3 ? hi - 3 : 0);
    c2c_pass(src, dst.data_ptr(), s, lo, hi, dbl, forward);
    src = dst.data_ptr();
    hi = lo;
  }
  scale_buffer(dst.data_ptr(), dst.numel(), true, dbl, scale);
  if (!dst.is_same(op)) op.copy_(dst);
}

void fft_r2c_cuda(const Tensor& self, Tensor& out, IntArrayRef dims, double scale) {
  DeviceGuard guard(out.device());
  check_fft(self, out, dims, false, "fft_r2c");
  if (out.numel() == 0) return;
  const bool dbl = self.dtype() == kDouble;
  const DimVector perm = dims_last(self.dim(), dims);
  const Tensor x = self.permute(perm).contiguous();
  Tensor op = out.permute(perm);
  Tensor dst = dense_target(op);
  const IntArrayRef s = x.sizes();
  const size_t nd = s.size(), first = nd - dims.size();
  // The last (up to 3) dims, the halved one among them, real to complex.
  const size_t lo = std::max(first, nd >= 3 ? nd - 3 : 0);
  const int64_t pts = prod(s, lo, nd);
  const int64_t half_pts = pts / s[nd - 1] * (s[nd - 1] / 2 + 1);
  Layout l{Kind::R2C, dbl,           std::vector<int64_t>(s.begin() + lo, s.end()), 1, pts, 1,
           half_pts,  prod(s, 0, lo)};
  execute(get_plan(l), l, const_cast<void*>(x.data_ptr()), dst.data_ptr(), true);
  // The remaining dims complex to complex, in place on the half spectrum.
  const IntArrayRef hs = dst.sizes();
  for (size_t hi = lo; hi > first;) {
    const size_t lo2 = std::max(first, hi >= 3 ? hi - 3 : 0);
    c2c_pass(dst.data_ptr(), dst.data_ptr(), hs, lo2, hi, dbl, true);
    hi = lo2;
  }
  scale_buffer(dst.data_ptr(), dst.numel(), true, dbl, scale);
  if (!dst.is_same(op)) op.copy_(dst);
}

void fft_c2r_cuda(const Tensor& self, Tensor& out, IntArrayRef dims, double scale) {
  DeviceGuard guard(out.device());
  check_fft(self, out, dims, true, "fft_c2r");
  if (out.numel() == 0) return;
  const bool dbl = self.dtype() == kComplexDouble;
  const DimVector perm = dims_last(self.dim(), dims);
  const Tensor xp = (self.is_conj() ? self.resolve_conj() : self).permute(perm);
  // A buffer of our own: cuFFT's c2r overwrites its input.
  Tensor tmp = empty_tensor(xp.sizes(), xp.dtype(), out.device());
  const IntArrayRef s = tmp.sizes();
  const size_t nd = s.size(), first = nd - dims.size();
  if (dims.size() > 1) {
    const Tensor x = xp.contiguous();
    const void* src = x.data_ptr();
    for (size_t hi = nd - 1; hi > first;) {
      const size_t lo = std::max(first, hi >= 3 ? hi - 3 : 0);
      c2c_pass(src, tmp.data_ptr(), s, lo, hi, dbl, false);
      src = tmp.data_ptr();
      hi = lo;
    }
  } else {
    tmp.copy_(xp);
  }
  Tensor op = out.permute(perm);
  Tensor dst = dense_target(op);
  const int64_t n = op.size(int64_t(nd) - 1), bins = s[nd - 1], rows = tmp.numel() / bins;
  EMBER_INTERNAL_ASSERT(bins == n / 2 + 1, "[fft_c2r] expected ", n / 2 + 1, " bins, got ", bins);
  // The imaginary parts of the zero and (even n) Nyquist bins do not take part.
  const size_t real = dbl ? 8 : 4, pitch = size_t(bins) * 2 * real;
  cudaStream_t stream = current_raw_stream();
  char* base = static_cast<char*>(tmp.data_ptr());
  EMBER_CUDA_CHECK(cudaMemset2DAsync(base + real, pitch, 0, real, size_t(rows), stream));
  if (n % 2 == 0 && n / 2 < bins)
    EMBER_CUDA_CHECK(cudaMemset2DAsync(base + size_t(n / 2) * 2 * real + real, pitch, 0, real,
                                       size_t(rows), stream));
  Layout l{Kind::C2R, dbl, {n}, 1, bins, 1, n, rows};
  execute(get_plan(l), l, tmp.data_ptr(), dst.data_ptr(), false);
  scale_buffer(dst.data_ptr(), dst.numel(), false, dbl, scale);
  if (!dst.is_same(op)) op.copy_(dst);
}

[[maybe_unused]] const bool registered = [] {
  register_kernel(kCUDA, OpId::_fft_c2c, {kComplexFloat, kComplexDouble});
  register_kernel(kCUDA, OpId::_fft_r2c, {kFloat, kDouble});
  register_kernel(kCUDA, OpId::_fft_c2r, {kComplexFloat, kComplexDouble});
  return true;
}();

}  // namespace
}  // namespace ember::cuda

namespace ember {
EMBER_REGISTER_KERNEL(fft_c2c_stub, kCUDA, cuda::fft_c2c_cuda);
EMBER_REGISTER_KERNEL(fft_r2c_stub, kCUDA, cuda::fft_r2c_cuda);
EMBER_REGISTER_KERNEL(fft_c2r_stub, kCUDA, cuda::fft_c2r_cuda);
}  // namespace ember
