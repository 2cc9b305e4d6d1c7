// CPU kernels of the statistics ops: the capability dispatch of the direct cdist loops and the
// histogram binning.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/parallel_internal.h"
#include "ember/error.h"
#include "ember/version.h"
#include "kernels/cpu/stats/cdist.h"
#include "kernels/stubs/stats.h"

namespace ember {

EMBER_DEFINE_KERNEL(cdist_stub);
EMBER_DEFINE_KERNEL(histogramdd_stub);

namespace cpu {
namespace {

enum class Cap { Default, Avx2, Avx512 };

/// The kernel capability in use (the one the elementwise families were registered with).
Cap selected_cap() {
  static const Cap cap = [] {
    const char* c = cpu_capability();
    return std::strcmp(c, "avx512") == 0 ? Cap::Avx512
           : std::strcmp(c, "avx2") == 0 ? Cap::Avx2
                                         : Cap::Default;
  }();
  return cap;
}

void cdist_cpu(const Tensor& x1, const Tensor& x2, double p, Tensor& out) {
  const int64_t B = x1.size(0), P = x1.size(1), M = x1.size(2), R = x2.size(1);
  if (out.numel() == 0) return;
  if (M == 0) {
    out.zero_();
    return;
  }
  if (x1.dtype() == kFloat) {
    auto f = selected_cap() == Cap::Avx512 ? cap_avx512::cdist_float
             : selected_cap() == Cap::Avx2 ? cap_avx2::cdist_float
                                           : cap_default::cdist_float;
    f(x1.data_ptr<float>(), x2.data_ptr<float>(), out.data_ptr<float>(), B, P, R, M, p);
  } else {
    EMBER_CHECK(x1.dtype() == kDouble, "[cdist] not implemented for '", dtype_name(x1.dtype()),
                "'");
    auto f = selected_cap() == Cap::Avx512 ? cap_avx512::cdist_double
             : selected_cap() == Cap::Avx2 ? cap_avx2::cdist_double
                                           : cap_default::cdist_double;
    f(x1.data_ptr<double>(), x2.data_ptr<double>(), out.data_ptr<double>(), B, P, R, M, p);
  }
}

/// The bin of `v` among the n + 1 increasing `edges` (v within the outer edges).
template <class T>
int64_t find_bin(const T* edges, int64_t n, T v, bool uniform) {
  int64_t pos;
  if (uniform) {
    // Division, then a look at the neighbouring edges: a value next to an edge may round into
    // the wrong bin, and the edges themselves decide.
    pos = std::clamp<int64_t>(int64_t((v - edges[0]) * T(n) / (edges[n] - edges[0])), 0, n);
    const int64_t lo = std::max<int64_t>(0, pos - 1), hi = std::min<int64_t>(pos + 2, n + 1);
    pos = std::upper_bound(edges + lo, edges + hi, v) - edges - 1;
  } else {
    pos = std::upper_bound(edges, edges + n + 1, v) - edges - 1;
  }
  return pos == n ? n - 1 : pos;  // the last bin includes its right edge
}

template <class T>
void histogram_impl(const Tensor& input, const Tensor& weight, ArrayRef<Tensor> edges, bool uniform,
                    Tensor& hist) {
  const int64_t N = input.size(0), D = input.size(1);
  std::vector<const T*> e(static_cast<size_t>(D));
  std::vector<int64_t> nb(static_cast<size_t>(D)), stride(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    e[d] = edges[d].data_ptr<T>();
    nb[d] = edges[d].numel() - 1;
  }
  int64_t s = 1;
  for (int64_t d = D - 1; d >= 0; --d) {
    stride[d] = s;
    s *= nb[d];
  }
  const int64_t nbins = s;
  const T* x = input.data_ptr<T>();
  const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
  double* h = hist.data_ptr<double>();
  // Each thread counts its rows into a private histogram; the sums are added in thread order.
  const int nt = std::max(1, std::min<int>(detail::g_num_threads, int(N / 4096)));
  const int64_t per = (N + nt - 1) / std::max(1, nt);
  std::vector<std::vector<double>> local(static_cast<size_t>(nt));
  parallel_for(0, nt, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      double* hh;
      if (t == 0) {
        hh = h;
      } else {
        local[t].assign(size_t(nbins), 0.0);
        hh = local[t].data();
      }
      const int64_t r0 = t * per, r1 = std::min(N, r0 + per);
      for (int64_t r = r0; r < r1; ++r) {
        int64_t idx = 0;
        bool in = true;
        for (int64_t d = 0; d < D; ++d) {
          const T v = x[r * D + d];
          if (v < e[d][0] || v > e[d][nb[d]]) {
            in = false;
            break;
          }
          // NaN passes the range check and lands in the last bin, as in PyTorch 1.13.
          idx += (v == v ? find_bin(e[d], nb[d], v, uniform) : nb[d] - 1) * stride[d];
        }
        if (in) hh[idx] += w ? double(w[r]) : 1.0;
      }
    }
  });
  for (int t = 1; t < nt; ++t)
    for (int64_t i = 0; i < nbins; ++i) h[i] += local[t][i];
}

void histogramdd_cpu(const Tensor& input, const Tensor& weight, ArrayRef<Tensor> edges,
                     bool uniform, Tensor& hist) {
  if (input.dtype() == kFloat) {
    histogram_impl<float>(input, weight, edges, uniform, hist);
  } else {
    EMBER_CHECK(input.dtype() == kDouble, "[histogramdd] not implemented for '",
                dtype_name(input.dtype()), "'");
    histogram_impl<double>(input, weight, edges, uniform, hist);
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(cdist_stub, kCPU, cpu::cdist_cpu);
EMBER_REGISTER_KERNEL(histogramdd_stub, kCPU, cpu::histogramdd_cpu);

}  // namespace ember
