// ember::nn::functional sampling functions: torch.nn.functional's argument handling (string
// modes, output_ratio, the random samples torch draws) over the ops of
// src/ops/nn/grid_ops.cpp and src/ops/nn/fractional_pool_ops.cpp.
#include "ember/nn/functional/sampling.h"

#include "ember/linalg_extra.h"
#include "ember/random.h"

namespace ember::nn::functional {

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& o) {
  return ember::grid_sample(input, grid, o.mode(), o.padding_mode(), o.align_corners());
}

Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners) {
  return ember::affine_grid(theta, size, align_corners);
}

namespace {

template <size_t D>
std::tuple<Tensor, Tensor> fractional(const Tensor& x, const FractionalMaxPoolFuncOptions<D>& o) {
  const char* fn = D == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
  const int64_t nd = int64_t(D);
  EMBER_CHECK_VALUE(o.output_size() || o.output_ratio(), "[", fn,
                    "] requires specifying either an output_size or an output_ratio");
  std::vector<int64_t> out;
  if (o.output_size()) {
    out = o.output_size()->vec();
  } else {
    std::vector<double> ratio = *o.output_ratio();
    if (ratio.size() == 1) ratio.assign(D, ratio[0]);
    EMBER_CHECK_VALUE(ratio.size() == D, "[", fn, "] output_ratio must hold 1 or ", nd,
                      " values, got ", ratio.size());
    EMBER_CHECK_INDEX(x.dim() >= nd, "[", fn, "] Dimension out of range: input has ", x.dim(),
                      " dims");
    for (int64_t d = 0; d < nd; ++d) {
      out.push_back(int64_t(double(x.size(x.dim() - nd + d)) * ratio[size_t(d)]));
    }
  }
  Tensor s = o._random_samples();
  if (!s.defined()) {
    EMBER_CHECK_INDEX(x.dim() >= nd + 1, "[", fn,
                      "] Dimension out of range (expected an input with at least ", nd + 1,
                      " dims, but got ", x.dim(), ")");
    const int64_t n_batch = x.dim() == nd + 1 ? 1 : x.size(0);
    s = rand({n_batch, x.size(x.dim() - nd - 1), nd}, TensorOptions(x.dtype()).device(x.device()));
  }
  const std::vector<int64_t> k = o.kernel_size().vec();
  return D == 2 ? ember::fractional_max_pool2d(x, k, out, s)
                : ember::fractional_max_pool3d(x, k, out, s);
}

}  // namespace

Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return std::get<0>(fractional(input, options));
}
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return fractional(input, options);
}
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return std::get<0>(fractional(input, options));
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return fractional(input, options);
}

}  // namespace ember::nn::functional
