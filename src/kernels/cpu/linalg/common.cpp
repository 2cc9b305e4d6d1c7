// Kernels shared by several linalg ops (kernels/stubs/linalg.h): infos, the non-finite scan and
// the batched column-major product.
#include "kernels/cpu/linalg/lapack.h"
#include "kernels/stubs/linalg.h"

namespace ember {

EMBER_DEFINE_KERNEL(linalg_info_stub);
EMBER_DEFINE_KERNEL(linalg_first_nonfinite_stub);
EMBER_DEFINE_KERNEL(linalg_gemm_stub);

namespace cpu {
namespace {

using namespace linalg_impl;

// LAPACKE scans every input for NaN and reports it as an illegal argument; PyTorch calls LAPACK
// directly and lets NaN propagate, so the scan is switched off once.
const bool nancheck_off = [] {
  LAPACKE_set_nancheck(0);
  return true;
}();

void info_cpu(Tensor& info, const std::vector<int>& infos) {
  int32_t* p = ptr<int32_t>(info);
  for (size_t i = 0; i < infos.size(); ++i) p[i] = infos[i];
}

template <class T>
int64_t first_nonfinite(const T* p, int64_t batch, int64_t per) {
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = b * per; i < (b + 1) * per; ++i) {
      if (!std::isfinite(std::real(p[i])) || !std::isfinite(std::imag(p[i]))) return b;
    }
  }
  return -1;
}

int64_t first_nonfinite_cpu(const Tensor& w) {
  const int64_t batch = matrix_batch(w), per = w.size(-2) * w.size(-1);
  int64_t bad = -1;
  EMBER_DISPATCH_LINALG_TYPES(w.dtype(), "linalg",
                              [&] { bad = first_nonfinite(ptr<scalar_t>(w), batch, per); });
  return bad;
}

void linalg_gemm_cpu(const Tensor& A, const Tensor& B, Tensor& C, bool adj_a, bool adj_b) {
  const int64_t m = C.size(-2), n = C.size(-1);
  const int64_t k = adj_a ? A.size(-2) : A.size(-1);
  const int64_t batch = matrix_batch(C);
  EMBER_DISPATCH_LINALG_TYPES(A.dtype(), "matmul", [&] {
    const scalar_t* a = ptr<scalar_t>(A);
    const scalar_t* b = ptr<scalar_t>(B);
    scalar_t* c = ptr<scalar_t>(C);
    const CBLAS_TRANSPOSE ta =
        adj_a ? (is_complex_v<scalar_t> ? CblasConjTrans : CblasTrans) : CblasNoTrans;
    const CBLAS_TRANSPOSE tb =
        adj_b ? (is_complex_v<scalar_t> ? CblasConjTrans : CblasTrans) : CblasNoTrans;
    for_each_matrix(batch, 2.0 * m * n * k, [&](int64_t i) {
      lapack::gemm(ta, tb, int(m), int(n), int(k), scalar_t(1), a + i * m * k, int(adj_a ? k : m),
                   b + i * k * n, int(adj_b ? n : k), scalar_t(0), c + i * m * n, int(m));
    });
  });
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(linalg_info_stub, kCPU, cpu::info_cpu);
EMBER_REGISTER_KERNEL(linalg_first_nonfinite_stub, kCPU, cpu::first_nonfinite_cpu);
EMBER_REGISTER_KERNEL(linalg_gemm_stub, kCPU, cpu::linalg_gemm_cpu);

}  // namespace ember
