// CUDA kernels of random sampling on the Philox stream: each thread draws whole Philox blocks
// and writes the elements that block serves through the map shared with the CPU kernels
// (kernels/common/philox.h), after reserving the same blocks from the same generator, so one
// seed gives the same numbers on CPU and GPU (Note [Reproducible random streams]).
#include <cmath>
#include <limits>

#include "cuda/runtime_internal.h"
#include "ember/cuda.h"
#include "ember/dispatch_type.h"
#include "kernels/common/philox.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_functors.cuh"
#include "kernels/cuda/index_check.cuh"
#include "kernels/stubs/random.h"
#include "ops/device_kernels.h"

namespace ember {
namespace cuda {
namespace {

// Thread per Philox block: map(words, j, e) is element e = b * K + j of the output.
template <int K, class T, class Map>
__global__ void philox_fill_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset, Map map) {
  const int64_t nb = (n + K - 1) / K;
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < nb; b += step) {
    philox::Words w = philox::draw_block(seed, offset, uint64_t(b));
#pragma unroll
    for (int j = 0; j < K; ++j) {
      int64_t e = b * K + j;
      if (e < n) out[e] = map(w, j, e);
    }
  }
}

// Reserves ceil(n / K) blocks of `gen` (as the CPU's for_blocks) and launches the fill.
template <int K, class T, class Map>
void philox_fill(T* out, int64_t n, Generator& gen, const Map& map, const char* name) {
  if (n <= 0) return;
  const int64_t nb = (n + K - 1) / K;
  // A captured kernel would replay these blocks (Note [Random ops in CUDA graphs]).
  check_random_not_capturing(name);
  auto [seed, offset] = gen.reserve(uint64_t(nb));
  philox_fill_kernel<K>
      <<<grid_for(nb), kBlockSize, 0, current_raw_stream()>>>(out, n, seed, offset, map);
  check_launch(name);
}

template <class T>
__host__ __device__ constexpr int uniform_bits() {
  if constexpr (std::is_same_v<T, __half>)
    return philox::kBitsHalf;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return philox::kBitsBFloat16;
  else
    return philox::kBitsFloat;
}

template <class T>
struct UniformFloat {
  float from, range;
  __device__ T operator()(const philox::Words& w, int j, int64_t) const {
    return convert<T>(philox::uniform_float(w.w[j], uniform_bits<T>(), from, range));
  }
};
struct UniformDouble {
  double from, range;
  __device__ double operator()(const philox::Words& w, int j, int64_t) const {
    return philox::uniform_double(w.w[2 * j], w.w[2 * j + 1], from, range);
  }
};
template <class T>
struct NormalFloat {
  float mean, sd;
  __device__ T operator()(const philox::Words& w, int j, int64_t) const {
    return convert<T>(philox::normal_float(philox::normal_float_in(w, j), mean, sd));
  }
};
struct NormalDouble {
  double mean, sd;
  __device__ double operator()(const philox::Words& w, int j, int64_t) const {
    return philox::normal_double(philox::normal_double_in(w, j), mean, sd);
  }
};
template <class T>
struct ExponentialFloat {
  float lambd;
  __device__ T operator()(const philox::Words& w, int j, int64_t) const {
    return convert<T>(philox::exponential_float(w.w[j], lambd));
  }
};
struct ExponentialDouble {
  double lambd;
  __device__ double operator()(const philox::Words& w, int j, int64_t) const {
    return philox::exponential_double(w.w[2 * j], w.w[2 * j + 1], lambd);
  }
};
template <class T>
struct BernoulliScalar {
  double p;
  __device__ T operator()(const philox::Words& w, int j, int64_t) const {
    return convert<T>(philox::bernoulli(w.w[j], p) ? 1 : 0);
  }
};
template <class T>
struct BernoulliTensor {
  const double* p;
  __device__ T operator()(const philox::Words& w, int j, int64_t e) const {
    return convert<T>(philox::bernoulli(w.w[j], p[e]) ? 1 : 0);
  }
};
template <class T>
__device__ T put_integer(int64_t from, uint64_t v) {
  int64_t x = int64_t(uint64_t(from) + v);
  if constexpr (std::is_same_v<T, bool>)
    return x != 0;
  else
    return convert<T>(x);
}
template <class T>
struct Random32 {
  int64_t from;
  uint64_t range;
  __device__ T operator()(const philox::Words& w, int j, int64_t) const {
    return put_integer<T>(from, philox::random32(w.w[j], range));
  }
};
template <class T>
struct Random64 {
  int64_t from;
  uint64_t range;
  __device__ T operator()(const philox::Words& w, int j, int64_t) const {
    return put_integer<T>(from, philox::random64(w.w[2 * j], w.w[2 * j + 1], range));
  }
};

template <class T>
__global__ void fill_kernel(T* out, int64_t n, T v) {
  const int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) out[i] = v;
}

int64_t real_numel(const Tensor& t) { return t.numel() * (t.is_complex() ? 2 : 1); }

template <class F>
void dispatch_floating(ScalarType dt, const char* op, const F& f) {
  EMBER_DISPATCH_FLOATING_TYPES(dt, op, [&] { f(TypeTag<device_t<scalar_t>>{}); });
}
template <class F>
void dispatch_real_and_bool(ScalarType dt, const char* op, const F& f) {
  EMBER_DISPATCH_REAL_TYPES_AND_BOOL(dt, op, [&] { f(TypeTag<device_t<scalar_t>>{}); });
}

// ---- the stubs' CUDA kernels (contiguous `self` on the device) ----

void uniform_cuda(Tensor& self, double from, double to, Generator& gen) {
  DeviceGuard g(self.device());
  const int64_t n = real_numel(self);
  dispatch_floating(toRealValueType(self.dtype()), "uniform_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(self.data_ptr());
    if constexpr (std::is_same_v<T, double>)
      philox_fill<philox::kPerDouble>(p, n, gen, UniformDouble{from, to - from}, "uniform_");
    else
      philox_fill<philox::kPerFloat>(p, n, gen, UniformFloat<T>{float(from), float(to - from)},
                                     "uniform_");
  });
}

void normal_cuda(Tensor& self, double mean, double std, Generator& gen) {
  DeviceGuard g(self.device());
  const int64_t n = real_numel(self);
  dispatch_floating(toRealValueType(self.dtype()), "normal_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(self.data_ptr());
    if constexpr (std::is_same_v<T, double>)
      philox_fill<philox::kPerDouble>(p, n, gen, NormalDouble{mean, std}, "normal_");
    else
      philox_fill<philox::kPerFloat>(p, n, gen, NormalFloat<T>{float(mean), float(std)}, "normal_");
  });
}

void exponential_cuda(Tensor& self, double lambd, Generator& gen) {
  DeviceGuard g(self.device());
  const int64_t n = self.numel();
  dispatch_floating(self.dtype(), "exponential_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(self.data_ptr());
    if (lambd == 0) {
      // +inf for every draw, and no blocks reserved (as the CPU kernel).
      fill_kernel<<<grid_for(n), kBlockSize, 0, current_raw_stream()>>>(
          p, n, convert<T>(std::numeric_limits<float>::infinity()));
      check_launch("exponential_");
      return;
    }
    if constexpr (std::is_same_v<T, double>)
      philox_fill<philox::kPerDouble>(p, n, gen, ExponentialDouble{lambd}, "exponential_");
    else
      philox_fill<philox::kPerFloat>(p, n, gen, ExponentialFloat<T>{float(lambd)}, "exponential_");
  });
}

void bernoulli_scalar_cuda(Tensor& self, double p, Generator& gen) {
  DeviceGuard g(self.device());
  dispatch_real_and_bool(self.dtype(), "bernoulli_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    philox_fill<philox::kPerFloat>(static_cast<T*>(self.data_ptr()), self.numel(), gen,
                                   BernoulliScalar<T>{p}, "bernoulli_");
  });
}

struct BadProbability {
  __device__ bool operator()(double p) const { return !(p >= 0 && p <= 1); }
};

void bernoulli_tensor_cuda(Tensor& self, const Tensor& p, Generator& gen) {
  DeviceGuard g(self.device());
  EMBER_CHECK(p.is_cuda() && p.device() == self.device() && p.dtype() == kDouble &&
                  p.is_contiguous() && p.numel() == self.numel(),
              "[bernoulli_] expected probabilities as a contiguous float64 tensor on ",
              self.device());
  const double* pp = static_cast<const double*>(p.data_ptr());
  // Every probability is checked before any draw (Note [Device value checks]).
  int64_t bad = first_bad(pp, p.numel(), BadProbability{}, "bernoulli_ check");
  if (bad >= 0) {
    double v = 0;
    read_device(&v, pp + bad);
    EMBER_THROW(Error, "[bernoulli_] expected all probabilities in [0, 1], but got p=", v);
  }
  dispatch_real_and_bool(self.dtype(), "bernoulli_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    philox_fill<philox::kPerFloat>(static_cast<T*>(self.data_ptr()), self.numel(), gen,
                                   BernoulliTensor<T>{pp}, "bernoulli_");
  });
}

void random_cuda(Tensor& self, int64_t from, uint64_t range, Generator& gen) {
  DeviceGuard g(self.device());
  dispatch_real_and_bool(self.dtype(), "random_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(self.data_ptr());
    if (philox::random_one_word(range))
      philox_fill<philox::kPerFloat>(p, self.numel(), gen, Random32<T>{from, range}, "random_");
    else
      philox_fill<philox::kPerDouble>(p, self.numel(), gen, Random64<T>{from, range}, "random_");
  });
}

}  // namespace
}  // namespace cuda

EMBER_REGISTER_KERNEL(uniform_stub, kCUDA, cuda::uniform_cuda);
EMBER_REGISTER_KERNEL(normal_stub, kCUDA, cuda::normal_cuda);
EMBER_REGISTER_KERNEL(exponential_stub, kCUDA, cuda::exponential_cuda);
EMBER_REGISTER_KERNEL(bernoulli_scalar_stub, kCUDA, cuda::bernoulli_scalar_cuda);
EMBER_REGISTER_KERNEL(bernoulli_tensor_stub, kCUDA, cuda::bernoulli_tensor_cuda);
EMBER_REGISTER_KERNEL(random_stub, kCUDA, cuda::random_cuda);

namespace {
// randperm and multinomial draw on the host from the device's generator (src/ops/creation/
// random.cpp) and copy the result to the device; normal with tensor arguments is normal_ + mul
// + add.
[[maybe_unused]] const bool g_register_random = [] {
  using S = ScalarType;
  const std::initializer_list<ScalarType> floating = {S::Float, S::Double, S::Half, S::BFloat16};
  const std::initializer_list<ScalarType> floating_complex = {
      S::Float, S::Double, S::Half, S::BFloat16, S::ComplexFloat, S::ComplexDouble};
  const std::initializer_list<ScalarType> real_bool = {S::Bool,  S::Byte,  S::Char, S::Short,
                                                       S::Int,   S::Long,  S::Half, S::BFloat16,
                                                       S::Float, S::Double};
  for (OpId op : {OpId::uniform_, OpId::normal_, OpId::rand, OpId::rand_1, OpId::randn,
                  OpId::randn_1, OpId::rand_like, OpId::randn_like, OpId::normal_3})
    register_kernel(kCUDA, op, floating_complex);
  for (OpId op :
       {OpId::exponential_, OpId::normal, OpId::normal_1, OpId::normal_2, OpId::multinomial})
    register_kernel(kCUDA, op, floating);
  for (OpId op : {OpId::bernoulli_, OpId::bernoulli__1, OpId::bernoulli, OpId::bernoulli_1,
                  OpId::random_, OpId::randint, OpId::randint_1, OpId::randint_2, OpId::randint_3,
                  OpId::randperm, OpId::randperm_1})
    register_kernel(kCUDA, op, real_bool);
  return true;
}();
}  // namespace

}  // namespace ember
