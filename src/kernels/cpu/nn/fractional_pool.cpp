// CPU kernel of fractional max pooling (kernels/stubs/grid.h), 2-D and 3-D.
//
// The window starts along a dim of input size `in`, output size `out` and window `k` are
// floor((i + u) a) - floor(u a) for i < out - 1 and in - k for the last, a = (in - k) / (out - 1)
// and u the plane's sample in [0, 1) (Graham 2014, pseudo-random overlapping pooling). The
// arithmetic runs in the input's type, as torch's, so float inputs pick the same windows.
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel_internal.h"
#include "kernels/stubs/grid.h"

namespace ember {

EMBER_DEFINE_KERNEL(fractional_max_pool_stub);

namespace cpu {
namespace {

template <class T>
std::vector<int64_t> window_starts(T u, int64_t in, int64_t out, int64_t k) {
  std::vector<int64_t> s(size_t(out), 0);
  if (out > 1) {
    const T a = T(in - k) / T(out - 1);
    for (int64_t i = 0; i + 1 < out; ++i) {
      s[size_t(i)] = int64_t((T(i) + u) * a) - int64_t(u * a);
    }
  }
  if (out > 0) s[size_t(out - 1)] = in - k;
  return s;
}

template <class T>
void pool_impl(const Tensor& input, const Tensor& samples, Tensor& out, Tensor& indices,
               IntArrayRef kernel) {
  const int nd = int(kernel.size());
  const int64_t planes = input.size(0) * input.size(1);
  int64_t in[3] = {1, 1, 1}, os[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  // Pad to three dims (a leading dim of size 1 for 2-D).
  for (int d = 0; d < nd; ++d) {
    in[3 - nd + d] = input.size(2 + d);
    os[3 - nd + d] = out.size(2 + d);
    k[3 - nd + d] = kernel[size_t(d)];
  }
  const int64_t in_plane = in[0] * in[1] * in[2], out_plane = os[0] * os[1] * os[2];
  const T* x = static_cast<const T*>(input.data_ptr());
  const T* u = static_cast<const T*>(samples.data_ptr());
  T* y = static_cast<T*>(out.data_ptr());
  int64_t* ix = static_cast<int64_t*>(indices.data_ptr());
  parallel_for(0, planes, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, in_plane)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) {
                   // Sample j of a plane belongs to spatial dim j for 3-D; for 2-D sample 0 is
                   // the width's and sample 1 the height's.
                   std::vector<int64_t> st[3];
                   for (int d = 0; d < 3; ++d) {
                     const int sd = d - (3 - nd);
                     if (sd < 0) {
                       st[d] = {0};
                       continue;
                     }
                     const int j = nd == 2 ? 1 - sd : sd;
                     st[d] = window_starts(u[p * nd + j], in[d], os[d], k[d]);
                   }
                   const T* plane = x + p * in_plane;
                   for (int64_t o0 = 0; o0 < os[0]; ++o0) {
                     for (int64_t o1 = 0; o1 < os[1]; ++o1) {
                       for (int64_t o2 = 0; o2 < os[2]; ++o2) {
                         const int64_t s0 = st[0][size_t(o0)], s1 = st[1][size_t(o1)],
                                       s2 = st[2][size_t(o2)];
                         int64_t best = (s0 * in[1] + s1) * in[2] + s2;
                         T bv = -std::numeric_limits<T>::infinity();
                         for (int64_t i0 = s0; i0 < s0 + k[0]; ++i0) {
                           for (int64_t i1 = s1; i1 < s1 + k[1]; ++i1) {
                             for (int64_t i2 = s2; i2 < s2 + k[2]; ++i2) {
                               const int64_t o = (i0 * in[1] + i1) * in[2] + i2;
                               const T v = plane[o];
                               if (v > bv || std::isnan(v)) {
                                 bv = v, best = o;
                               }
                             }
                           }
                         }
                         const int64_t q = p * out_plane + (o0 * os[1] + o1) * os[2] + o2;
                         y[q] = plane[best];
                         ix[q] = best;
                       }
                     }
                   }
                 }
               });
}

void fractional_max_pool_cpu(const Tensor& input, const Tensor& samples, Tensor& out,
                             Tensor& indices, IntArrayRef kernel) {
  if (input.dtype() == kDouble) {
    pool_impl<double>(input, samples, out, indices, kernel);
  } else {
    pool_impl<float>(input, samples, out, indices, kernel);
  }
}

}  // namespace
}  // namespace cpu

EMBER_REGISTER_KERNEL(fractional_max_pool_stub, kCPU, cpu::fractional_max_pool_cpu);

}  // namespace ember
