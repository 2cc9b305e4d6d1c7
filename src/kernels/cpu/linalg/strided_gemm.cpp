// The batched strided GEMM behind every matrix product (kernels/stubs/blas.h): float and complex
// through OpenBLAS, integers through the blocked kernel of kernels/cpu/gemm.cpp.
#include "core/parallel_internal.h"
#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/stubs/blas.h"

namespace ember {

EMBER_DEFINE_KERNEL(strided_gemm_stub);

namespace cpu {
namespace {

// Note [Batched GEMM threading]
// OpenBLAS splits one product across threads well once a matrix holds enough work, but for
// small matrices its per-call thread start-up costs more than the product. A batch of small
// products is therefore split across ember's threads with BLAS single-threaded in each, and a
// batch of large ones runs one product at a time on all threads. The switch is at m*n*k of
// 256^3 (measured with bench/ops_side_by_side.py: 64x128x128 batches are 1.6-1.9x faster split
// across the batch on 2 threads, while 512^3 products gain from threads inside BLAS). A batch
// smaller than the thread count also stays inside BLAS.
constexpr double kBatchAcrossMaxWork = 256.0 * 256.0 * 256.0;

void strided_gemm_cpu(const Tensor& a, MatStrides sa, const Tensor& b, MatStrides sb,
                      const Tensor& c, int64_t cbs, int64_t crs, int64_t batch, int64_t m,
                      int64_t n, int64_t k, const Scalar& beta, const Scalar& alpha) {
  const ScalarType dt = c.dtype();
  const int nt = get_num_threads();
  const bool across = batch > 1 && nt > 1 && batch >= nt &&
                      double(m) * double(n) * double(k) <= kBatchAcrossMaxWork;
  const size_t item = c.itemsize();
  const char* ap = static_cast<const char*>(a.data_ptr());
  const char* bp = static_cast<const char*>(b.data_ptr());
  char* cp = static_cast<char*>(c.data_ptr());
  if (isIntegralType(dt, false)) {
    const int64_t ia = alpha.toLong(), ib = beta.toLong();
    auto one = [&](int64_t i) {
      int_gemm(dt, m, n, k, ia, ap + size_t(i * sa.bs) * item, sa.rs, sa.cs,
               bp + size_t(i * sb.bs) * item, sb.rs, sb.cs, ib, cp + size_t(i * cbs) * item, crs,
               1);
    };
    if (across) {
      parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t i = b0; i < b1; ++i) one(i);
      });
    } else {
      for (int64_t i = 0; i < batch; ++i) one(i);
    }
    return;
  }
  const BlasLayout la = blas_layout(m, k, sa.rs, sa.cs);
  const BlasLayout lb = blas_layout(k, n, sb.rs, sb.cs);
  // The conj bit folds into the op: conj(A) read as stored is R, conj(A)^T is C.
  const Op la_op = la.transposed ? Op::T : Op::N, lb_op = lb.transposed ? Op::T : Op::N;
  const Op opa = a.is_conj() ? (la_op == Op::N ? Op::R : Op::C) : la_op;
  const Op opb = b.is_conj() ? (lb_op == Op::N ? Op::R : Op::C) : lb_op;
  const int64_t ldc = m == 1 ? std::max<int64_t>(1, n) : crs;
  auto one = [&](int64_t i) {
    blas_gemm(dt, opa, opb, m, n, k, alpha, ap + size_t(i * sa.bs) * item, la.ld,
              bp + size_t(i * sb.bs) * item, lb.ld, beta, cp + size_t(i * cbs) * item, ldc);
  };
  if (across) {
    set_blas_threads(1);
    parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) one(i);
    });
  } else {
    sync_blas_threads();
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(strided_gemm_stub, kCPU, cpu::strided_gemm_cpu);

}  // namespace ember
