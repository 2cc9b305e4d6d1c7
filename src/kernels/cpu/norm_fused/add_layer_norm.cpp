// CPU kernel of `_add_layer_norm`: each row's sum x + r is formed once into a per-thread float
// buffer that stays in L1, so the inputs are read once and the output written once; mean and
// variance then come from that buffer in two short passes (no cancellation of E[x²] - E[x]²).
#include <cmath>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/half.h"
#include "kernels/stubs/add_layer_norm.h"

namespace ember {

EMBER_DEFINE_KERNEL(add_layer_norm_stub);

namespace cpu {
namespace {

template <class T>
struct Acc {
  using type = float;
};
template <>
struct Acc<double> {
  using type = double;
};

template <class T>
inline typename Acc<T>::type load(T v) {
  return static_cast<typename Acc<T>::type>(v);
}
inline float load(BFloat16 v) { return float(v); }

template <class T>
void add_layer_norm_rows(const T* x, const T* r, const T* w, const T* b, T* y, int64_t M, int64_t D,
                         double eps) {
  using A = typename Acc<T>::type;
  // Rows per task: about 64 KiB of work each, so small inputs stay on one thread.
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1));
  parallel_for(0, M, grain, [&](int64_t m0, int64_t m1) {
    std::vector<A> buf(static_cast<size_t>(D));
    A* s = buf.data();
    for (int64_t m = m0; m < m1; ++m) {
      const T* xr = x + m * D;
      const T* rr = r + m * D;
      T* yr = y + m * D;
      A sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < D; ++j) {
        A v = load(xr[j]) + load(rr[j]);
        s[j] = v;
        sum += v;
      }
      const A mean = sum / A(D);
      A sq = 0;
#pragma omp simd reduction(+ : sq)
      for (int64_t j = 0; j < D; ++j) {
        A c = s[j] - mean;
        sq += c * c;
      }
      const A rstd = A(1) / std::sqrt(sq / A(D) + A(eps));
      if (w && b) {
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) yr[j] = T((s[j] - mean) * rstd * load(w[j]) + load(b[j]));
      } else {
        for (int64_t j = 0; j < D; ++j) {
          A v = (s[j] - mean) * rstd;
          if (w) v *= load(w[j]);
          if (b) v += load(b[j]);
          yr[j] = T(v);
        }
      }
    }
  });
}

template <class T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

void add_layer_norm(const Tensor& x, const Tensor& r, const Tensor& weight, const Tensor& bias,
                    int64_t M, int64_t D, double eps, Tensor& y) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    add_layer_norm_rows<T>(static_cast<const T*>(x.data_ptr()), static_cast<const T*>(r.data_ptr()),
                           ptr_or_null<T>(weight), ptr_or_null<T>(bias),
                           static_cast<T*>(y.data_ptr()), M, D, eps);
  };
  switch (x.dtype()) {
    case kFloat:
      run(float{});
      break;
    case kDouble:
      run(double{});
      break;
    default:
      run(BFloat16{});
      break;
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(add_layer_norm_stub, kCPU, cpu::add_layer_norm);

}  // namespace ember
