#pragma once
// The namespace and function attributes of the shared scalar rules (Note [Shared scalar rules]
// in kernels/common/elementwise_scalar.h): `scalar` inside the includer's build namespace, and
// __host__ __device__ under nvcc.

#if defined(__CUDACC__)
#define EMBER_SCALAR_HD __host__ __device__ inline
#else
#define EMBER_SCALAR_HD inline
#endif

#if defined(__CUDACC__)
#define EMBER_SCALAR_NS_BEGIN namespace ember::cuda::scalar {
#elif defined(EMBER_CPU_CAP)
#define EMBER_SCALAR_NS_BEGIN namespace ember::cpu::EMBER_CPU_CAP::scalar {
#else
#define EMBER_SCALAR_NS_BEGIN namespace ember::cpu::scalar {
#endif
#define EMBER_SCALAR_NS_END }
