// Shared helpers of the linalg ops (see linalg_util.h and Note [Linalg workspaces]).
#include "ops/linalg_util.h"

#include <limits>

namespace ember::linalg_detail {

namespace {
// LAPACKE scans every input for NaN and reports it as an illegal argument; PyTorch calls LAPACK
// directly and lets NaN propagate, so the scan is switched off once.
const bool nancheck_off = [] {
  LAPACKE_set_nancheck(0);
  return true;
}();
}  // namespace

void check_dtype(const Tensor& a, const char* op, const char* arg) {
  const ScalarType dt = a.dtype();
  EMBER_CHECK(isFloatingType(dt) || isComplexType(dt), "[", op, "] Expected a floating point or ",
              "complex tensor as ", arg, ". Got ", dtype_name(dt));
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kComplexFloat || dt == kComplexDouble, "[", op,
              "] Low precision dtypes not supported. Got ", dtype_name(dt));
}

void check_matrix(const Tensor& a, const char* op, const char* arg) {
  EMBER_CHECK(a.dim() >= 2, "[", op, "] The input tensor ", arg,
              " must have at least 2 dimensions, got shape ", shape_str(a.sizes()));
}

void check_square(const Tensor& a, const char* op, const char* arg) {
  check_matrix(a, op, arg);
  EMBER_CHECK(a.size(-1) == a.size(-2), "[", op, "] ", arg,
              " must be batches of square matrices, but they are ", a.size(-2), " by ", a.size(-1),
              " matrices");
}

void check_cpu(const Tensor& a, const char* op) {
  EMBER_CHECK(a.is_cpu(), "[", op, "] only CPU tensors are supported, got ", a.device().str());
}

int64_t batch_count(const Tensor& a) {
  int64_t n = 1;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) n *= a.size(d);
  return n;
}

DimVector batch_shape(const Tensor& a) {
  DimVector s;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) s.push_back(a.size(d));
  return s;
}

DimVector cat_shape(IntArrayRef batch, std::initializer_list<int64_t> tail) {
  DimVector s;
  s.assign(batch);
  for (int64_t t : tail) s.push_back(t);
  return s;
}

Tensor colmajor_empty(IntArrayRef shape, ScalarType dt) {
  DimVector swapped;
  swapped.assign(shape);
  const size_t r = swapped.size();
  std::swap(swapped[r - 1], swapped[r - 2]);
  return empty_tensor(swapped, dt).mT();
}

Tensor colmajor_copy(const Tensor& a, ScalarType dt) { return colmajor_copy(a, dt, a.sizes()); }

Tensor colmajor_copy(const Tensor& a, ScalarType dt, IntArrayRef shape) {
  Tensor w = colmajor_empty(shape, dt);
  if (w.numel() > 0) w.copy_(a.resolve_conj());
  return w;
}

Tensor fresh_copy(const Tensor& a) {
  Tensor w = empty_tensor(a.sizes(), a.dtype());
  if (w.numel() > 0) w.copy_(a.resolve_conj());
  return w;
}

Tensor info_tensor(const std::vector<int>& infos, IntArrayRef batch) {
  Tensor t = empty_tensor(batch, kInt);
  int32_t* p = ptr<int32_t>(t);
  for (size_t i = 0; i < infos.size(); ++i) p[i] = infos[i];
  return t;
}

double eps_of(ScalarType dt) {
  return (dt == kFloat || dt == kComplexFloat) ? double(std::numeric_limits<float>::epsilon())
                                               : std::numeric_limits<double>::epsilon();
}

Tensor batched_gemm(const Tensor& A, const Tensor& B, bool adj_a, bool adj_b) {
  const int64_t m = adj_a ? A.size(-1) : A.size(-2);
  const int64_t k = adj_a ? A.size(-2) : A.size(-1);
  const int64_t n = adj_b ? B.size(-2) : B.size(-1);
  Tensor C = colmajor_empty(cat_shape(batch_shape(A), {m, n}), A.dtype());
  const int64_t batch = batch_count(A);
  if (C.numel() == 0) return C;
  if (k == 0) return C.zero_();
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
  return C;
}

}  // namespace ember::linalg_detail
