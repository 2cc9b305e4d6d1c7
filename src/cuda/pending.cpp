// Weak stand-ins for the functions of cuda_context.h while their definitions are being written;
// a strong definition elsewhere in libember_cuda replaces each one.
#include "cuda/cuda_context.h"

#define EMBER_PENDING(what) EMBER_THROW(::ember::NotImplementedError, "[cuda] ", what, " is pending")

namespace ember::cuda {
__attribute__((weak)) void check_not_capturing(const char*) {}
__attribute__((weak)) cublasContext* cublas_handle() { EMBER_PENDING("cublas_handle"); }
__attribute__((weak)) cublasLtContext* cublaslt_handle() { EMBER_PENDING("cublaslt_handle"); }
__attribute__((weak)) cusolverDnContext* cusolver_handle() { EMBER_PENDING("cusolver_handle"); }
__attribute__((weak)) cudnnContext* cudnn_handle() { EMBER_PENDING("cudnn_handle"); }
__attribute__((weak)) Allocator* caching_allocator() { EMBER_PENDING("caching_allocator"); }
__attribute__((weak)) DataPtr scratch(size_t) { EMBER_PENDING("scratch"); }
__attribute__((weak)) std::map<std::string, int64_t> allocator_stats(int) { return {}; }
__attribute__((weak)) void allocator_reset_peak(int) {}
__attribute__((weak)) void allocator_empty_cache() {}
__attribute__((weak)) std::string allocator_summary(int, bool) { return ""; }
__attribute__((weak)) void allocator_set_fraction(double, int) {}
__attribute__((weak)) void allocator_record_stream(void*, cudaStream_t, int) {}
__attribute__((weak)) void allocator_begin_pool(int, MempoolId, cudaStream_t) {}
__attribute__((weak)) void allocator_end_pool(int, MempoolId) {}
__attribute__((weak)) void allocator_release_pool(int, MempoolId) {}
__attribute__((weak)) Allocator* pinned_allocator() { EMBER_PENDING("pinned_allocator"); }
__attribute__((weak)) bool is_pinned_ptr(const void*) { return false; }
__attribute__((weak)) void pinned_record_use(const void*, cudaStream_t) {}
}  // namespace ember::cuda
