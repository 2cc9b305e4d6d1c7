// ember::nn::functional pooling: unpack Options into the ember pooling ops; adaptive sizes left
// unset take the input's, max_unpool infers its output size and lp_pool is built from avg_pool.
#include "ember/nn/functional/pooling.h"

#include <cmath>

#include "ember/conv.h"
#include "ember/ops.h"

namespace ember::nn::functional {

#define EMBER_FUNCTIONAL_POOL(N)                                                                 \
  Tensor avg_pool##N##d(const Tensor& input, const AvgPool##N##dFuncOptions& o) {                \
    return ember::avg_pool##N##d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), \
                                 o.count_include_pad(), o.divisor_override());                   \
  }                                                                                              \
  Tensor max_pool##N##d(const Tensor& input, const MaxPool##N##dFuncOptions& o) {                \
    return ember::max_pool##N##d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(),  \
                                 o.ceil_mode());                                                 \
  }                                                                                              \
  std::tuple<Tensor, Tensor> max_pool##N##d_with_indices(const Tensor& input,                    \
                                                         const MaxPool##N##dFuncOptions& o) {    \
    return ember::max_pool##N##d_with_indices(input, o.kernel_size(), o.stride(), o.padding(),   \
                                              o.dilation(), o.ceil_mode());                      \
  }
EMBER_FUNCTIONAL_POOL(1)
EMBER_FUNCTIONAL_POOL(2)
EMBER_FUNCTIONAL_POOL(3)
#undef EMBER_FUNCTIONAL_POOL

namespace {
// Unset entries keep the input's trailing spatial sizes (PyTorch's None).
template <size_t D, typename T>
std::vector<int64_t> resolve_output_size(const Tensor& input, const ExpandingArray<D, T>& size,
                                         const char* name) {
  EMBER_CHECK(input.dim() == int64_t(D) + 1 || input.dim() == int64_t(D) + 2, "[", name,
              "] expected a ", D + 1, "-D or ", D + 2, "-D input, got ", input.sizes());
  std::vector<int64_t> out(D);
  for (size_t d = 0; d < D; ++d) {
    if constexpr (std::is_same_v<T, int64_t>) {
      out[d] = size[d];
    } else {
      out[d] = size[d].has_value() ? *size[d] : input.size(input.dim() - int64_t(D) + int64_t(d));
    }
  }
  return out;
}
}  // namespace

#define EMBER_FUNCTIONAL_ADAPTIVE(N)                                                               \
  Tensor adaptive_avg_pool##N##d(const Tensor& input, const AdaptiveAvgPool##N##dFuncOptions& o) { \
    return ember::adaptive_avg_pool##N##d(                                                         \
        input, resolve_output_size(input, o.output_size(), "adaptive_avg_pool" #N "d"));           \
  }                                                                                                \
  std::tuple<Tensor, Tensor> adaptive_max_pool##N##d_with_indices(                                 \
      const Tensor& input, const AdaptiveMaxPool##N##dFuncOptions& o) {                            \
    return ember::adaptive_max_pool##N##d(                                                         \
        input, resolve_output_size(input, o.output_size(), "adaptive_max_pool" #N "d"));           \
  }                                                                                                \
  Tensor adaptive_max_pool##N##d(const Tensor& input, const AdaptiveMaxPool##N##dFuncOptions& o) { \
    return std::get<0>(adaptive_max_pool##N##d_with_indices(input, o));                            \
  }
EMBER_FUNCTIONAL_ADAPTIVE(1)
EMBER_FUNCTIONAL_ADAPTIVE(2)
EMBER_FUNCTIONAL_ADAPTIVE(3)
#undef EMBER_FUNCTIONAL_ADAPTIVE

namespace {
// PyTorch's _unpool_output_size: the default size, or the requested one if within a stride.
template <size_t D>
std::vector<int64_t> unpool_output_size(const Tensor& input, const MaxUnpoolFuncOptions<D>& o,
                                        const char* name) {
  EMBER_CHECK(input.dim() == int64_t(D) + 1 || input.dim() == int64_t(D) + 2, "[", name,
              "] expected a ", D + 1, "-D or ", D + 2, "-D input, got ", input.sizes());
  std::vector<int64_t> def(D);
  for (size_t d = 0; d < D; ++d) {
    EMBER_CHECK_VALUE(o.kernel_size()[d] > 0 && o.stride()[d] > 0, "[", name,
                      "] kernel_size and stride must be positive");
    def[d] = (input.size(input.dim() - int64_t(D) + int64_t(d)) - 1) * o.stride()[d] -
             2 * o.padding()[d] + o.kernel_size()[d];
  }
  if (!o.output_size()) return def;
  std::vector<int64_t> out = *o.output_size();
  if (out.size() == D + 2 || (out.size() == D + 1 && input.dim() == int64_t(D) + 1))
    out.erase(out.begin(), out.end() - int64_t(D));
  EMBER_CHECK_VALUE(out.size() == D, "[", name, "] output_size should have ", D, " or ", D + 2,
                    " elements, but it has ", o.output_size()->size());
  for (size_t d = 0; d < D; ++d) {
    EMBER_CHECK_VALUE(out[d] > def[d] - o.stride()[d] && out[d] < def[d] + o.stride()[d], "[", name,
                      "] invalid output_size ", out[d], " in dim ", d, " (it must be between ",
                      def[d] - o.stride()[d], " and ", def[d] + o.stride()[d], ", exclusive)");
  }
  return out;
}
}  // namespace

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  return ember::max_unpool1d(input, indices, unpool_output_size(input, o, "max_unpool1d"));
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  return ember::max_unpool2d(input, indices, unpool_output_size(input, o, "max_unpool2d"));
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  return ember::max_unpool3d(input, indices, unpool_output_size(input, o, "max_unpool3d"),
                             o.stride(), o.padding());
}

namespace {
// PyTorch's lp_pool: avg of x^p over the window, times the window size, to the power 1/p
// (sign(out) * relu(|out|) keeps the gradient finite at zero windows).
template <size_t D, typename AvgFn>
Tensor lp_pool(const Tensor& input, const LPPoolOptions<D>& o, AvgFn avg) {
  double p = o.norm_type();
  EMBER_CHECK_VALUE(p != 0, "[lp_pool] norm_type must be non-zero");
  Tensor out = avg(input.pow(p));
  int64_t window = 1;
  for (size_t d = 0; d < D; ++d) window *= o.kernel_size()[d];
  return (sign(out) * relu(abs(out))).mul(double(window)).pow(1.0 / p);
}
}  // namespace

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  return lp_pool<1>(input, o, [&](const Tensor& x) {
    return ember::avg_pool1d(x, o.kernel_size(), o.stride(), 0, o.ceil_mode());
  });
}
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  return lp_pool<2>(input, o, [&](const Tensor& x) {
    return ember::avg_pool2d(x, o.kernel_size(), o.stride(), 0, o.ceil_mode());
  });
}
Tensor lp_pool3d(const Tensor& input, const LPPool3dFuncOptions& o) {
  return lp_pool<3>(input, o, [&](const Tensor& x) {
    return ember::avg_pool3d(x, o.kernel_size(), o.stride(), 0, o.ceil_mode());
  });
}

}  // namespace ember::nn::functional
