// Pooling layers: forwards through ember::nn::functional; reprs as PyTorch 1.13 prints them
// (one number when every dim agrees, a tuple otherwise; AvgPool1d and MaxUnpool always tuples).
#include "ember/nn/modules/pooling.h"

#include <cmath>

namespace ember::nn {

namespace F = functional;

namespace {
std::string size_repr(IntArrayRef v) {
  for (int64_t e : v)
    if (e != v[0]) return detail::repr_tuple(v);
  return std::to_string(v[0]);
}

template <size_t D>
std::string size_repr(const ExpandingArray<D, std::optional<int64_t>>& v) {
  bool uniform = v[0].has_value();
  for (size_t i = 0; i < D; ++i) uniform = uniform && v[i] == v[0];
  if (uniform) return std::to_string(*v[0]);
  std::string s = "(";
  for (size_t i = 0; i < D; ++i)
    s += (i ? ", " : "") + (v[i] ? std::to_string(*v[i]) : std::string("None"));
  return s + ")";
}

template <size_t D>
std::string size_repr(const ExpandingArray<D, int64_t>& v) {
  return size_repr(v.ref());
}

// Python prints an integral norm_type given as an int without ".0".
std::string number_repr(double v) {
  return v == std::floor(v) && std::abs(v) < 1e15 ? std::to_string(int64_t(v))
                                                  : detail::repr_double(v);
}
}  // namespace

template <size_t D, typename Derived>
std::string AvgPoolImpl<D, Derived>::extra_repr() const {
  auto r = [](IntArrayRef v) { return D == 1 ? detail::repr_tuple(v) : size_repr(v); };
  return "kernel_size=" + r(options.kernel_size()) + ", stride=" + r(options.stride()) +
         ", padding=" + r(options.padding());
}

template <size_t D, typename Derived>
std::string MaxPoolImpl<D, Derived>::extra_repr() const {
  return "kernel_size=" + size_repr(options.kernel_size().ref()) +
         ", stride=" + size_repr(options.stride().ref()) +
         ", padding=" + size_repr(options.padding().ref()) +
         ", dilation=" + size_repr(options.dilation().ref()) +
         ", ceil_mode=" + detail::repr_bool(options.ceil_mode());
}

template <size_t D, typename output_size_t, typename Derived>
std::string AdaptivePoolImpl<D, output_size_t, Derived>::extra_repr() const {
  return "output_size=" + size_repr(options.output_size());
}

template <size_t D, typename Derived>
std::string MaxUnpoolImpl<D, Derived>::extra_repr() const {
  return "kernel_size=" + detail::repr_tuple(options.kernel_size()) +
         ", stride=" + detail::repr_tuple(options.stride()) +
         ", padding=" + detail::repr_tuple(options.padding());
}

template <size_t D, typename Derived>
std::string LPPoolImpl<D, Derived>::extra_repr() const {
  return "norm_type=" + number_repr(options.norm_type()) +
         ", kernel_size=" + size_repr(options.kernel_size().ref()) +
         ", stride=" + size_repr(options.stride().ref()) +
         ", ceil_mode=" + detail::repr_bool(options.ceil_mode());
}

#define EMBER_POOL_DEFS(N)                                                                      \
  template class AvgPoolImpl<N, AvgPool##N##dImpl>;                                             \
  template class MaxPoolImpl<N, MaxPool##N##dImpl>;                                             \
  template class AdaptivePoolImpl<N, AdaptiveAvgPool##N##dOptions::output_size_t_,              \
                                  AdaptiveAvgPool##N##dImpl>;                                   \
  template class AdaptivePoolImpl<N, AdaptiveMaxPool##N##dOptions::output_size_t_,              \
                                  AdaptiveMaxPool##N##dImpl>;                                   \
  template class MaxUnpoolImpl<N, MaxUnpool##N##dImpl>;                                         \
  template class LPPoolImpl<N, LPPool##N##dImpl>;                                               \
  Tensor AvgPool##N##dImpl::forward(const Tensor& input) {                                      \
    return F::avg_pool##N##d(input, options);                                                   \
  }                                                                                             \
  Tensor MaxPool##N##dImpl::forward(const Tensor& input) {                                      \
    return F::max_pool##N##d(input, options);                                                   \
  }                                                                                             \
  std::tuple<Tensor, Tensor> MaxPool##N##dImpl::forward_with_indices(const Tensor& input) {     \
    return F::max_pool##N##d_with_indices(input, options);                                      \
  }                                                                                             \
  Tensor AdaptiveAvgPool##N##dImpl::forward(const Tensor& input) {                              \
    return F::adaptive_avg_pool##N##d(input, options);                                          \
  }                                                                                             \
  Tensor AdaptiveMaxPool##N##dImpl::forward(const Tensor& input) {                              \
    return F::adaptive_max_pool##N##d(input, options);                                          \
  }                                                                                             \
  std::tuple<Tensor, Tensor> AdaptiveMaxPool##N##dImpl::forward_with_indices(                   \
      const Tensor& input) {                                                                    \
    return F::adaptive_max_pool##N##d_with_indices(input, options);                             \
  }                                                                                             \
  Tensor MaxUnpool##N##dImpl::forward(const Tensor& input, const Tensor& indices,               \
                                      const std::optional<std::vector<int64_t>>& output_size) { \
    F::MaxUnpool##N##dFuncOptions fo(options.kernel_size());                                    \
    fo.stride(options.stride()).padding(options.padding()).output_size(output_size);            \
    return F::max_unpool##N##d(input, indices, fo);                                             \
  }                                                                                             \
  Tensor LPPool##N##dImpl::forward(const Tensor& input) { return F::lp_pool##N##d(input, options); }
EMBER_POOL_DEFS(1)
EMBER_POOL_DEFS(2)
EMBER_POOL_DEFS(3)
#undef EMBER_POOL_DEFS

}  // namespace ember::nn
