// Fractional max pooling (Graham 2014): max over pseudo-random overlapping windows placed by
// per-plane samples in [0, 1). A primitive whose kernel returns the argmax indices; the
// gradients scatter/gather through them with recorded ops, so they differentiate again.
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/index_ops.h"
#include "ember/linalg_extra.h"
#include "ember/ops.h"
#include "kernels/stubs/grid.h"
#include "ops/call_path.h"

namespace ember {
namespace {

/// gx = 0; gx[plane, idx] += g, for gx of `in_sizes` (N, C, *in).
Tensor scatter_planes(const Tensor& g, const Tensor& idx, IntArrayRef in_sizes) {
  int64_t plane = 1;
  for (size_t d = 2; d < in_sizes.size(); ++d) plane *= in_sizes[d];
  Tensor z = zeros({in_sizes[0], in_sizes[1], plane}, TensorOptions(g.dtype()).device(g.device()));
  return z.scatter_add(2, idx.flatten(2), g.flatten(2)).view(in_sizes);
}

/// y[plane, j] = t[plane, idx[plane, j]].
Tensor gather_planes(const Tensor& t, const Tensor& idx) {
  return t.flatten(2).gather(2, idx.flatten(2)).view(idx.sizes());
}

std::tuple<Tensor, Tensor> fractional_pool(const char* op, int nd, const Tensor& self,
                                           IntArrayRef kernel_size, IntArrayRef output_size,
                                           const Tensor& samples) {
  EMBER_CHECK(int(kernel_size.size()) == nd, "[", op, "] kernel_size must be a tuple of ", nd,
              " ints, got ", kernel_size);
  EMBER_CHECK(int(output_size.size()) == nd, "[", op, "] output_size must be a tuple of ", nd,
              " ints, got ", output_size);
  const bool unbatched = self.dim() == nd + 1;
  EMBER_CHECK(unbatched || self.dim() == nd + 2, "[", op, "] Expected ", nd + 1, "D or ", nd + 2,
              "D tensor, but got: ", self.sizes());
  for (int64_t d = unbatched ? 0 : 1; d < self.dim(); ++d) {
    EMBER_CHECK(self.size(d) > 0, "[", op,
                "] Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", d, " being empty.");
  }
  EMBER_CHECK(self.dtype() == kFloat || self.dtype() == kDouble, "[", op, "] not implemented for ",
              dtype_name(self.dtype()), " (supported: float32, float64)");
  EMBER_CHECK(samples.dtype() == self.dtype(), "[", op, "] expected scalar type ",
              dtype_name(self.dtype()), " for the random samples but found ",
              dtype_name(samples.dtype()));
  const Tensor x = unbatched ? self.unsqueeze(0) : self;
  const int64_t N = x.size(0), C = x.size(1);
  EMBER_CHECK(
      samples.dim() == 3 && samples.size(0) == N && samples.size(1) == C && samples.size(2) >= nd,
      "[", op, "] expected random samples of shape (", N, ", ", C, ", ", nd, "), got ",
      samples.sizes());
  static const char* names2[] = {"height", "width"};
  static const char* names3[] = {"time", "height", "width"};
  DimVector os;
  os.push_back(N);
  os.push_back(C);
  for (int d = 0; d < nd; ++d) {
    const char* name = nd == 2 ? names2[d] : names3[d];
    const int64_t in = x.size(2 + d), k = kernel_size[size_t(d)], o = output_size[size_t(d)];
    EMBER_CHECK(k > 0 && o > 0, "[", op, "] kernel_size and output_size must be positive, got ",
                kernel_size, " and ", output_size);
    EMBER_CHECK(o + k - 1 <= in, "[", op, "] pool ", name, " ", k, " too large relative to input ",
                name, " ", in);
    os.push_back(o);
  }
  autograd::OpRecorder rec(op, {x});
  Tensor y = empty_tensor(op, os, x.dtype(), x.device());
  Tensor idx = empty_tensor(op, os, kLong, x.device());
  if (y.numel() > 0) {
    Tensor xc = x.contiguous(), sc = samples.narrow(2, 0, nd).contiguous();
    fractional_max_pool_stub(x.device().type(), xc, sc, y, idx, kernel_size);
  }
  if (rec) {
    rec.args(x.sizes());
    rec.record(
        y,
        [](autograd::VjpCtx& c) {
          return autograd::variable_list{scatter_planes(c.grads[0], c.saved[0], c.args().ints(0))};
        },
        {idx},
        [](autograd::JvpCtx& c) {
          return autograd::variable_list{gather_planes(c.tangent_or_zeros(0), c.saved[0])};
        });
  }
  if (unbatched) return {y.squeeze(0), idx.squeeze(0)};
  return {y, idx};
}

}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size,
                                                 const Tensor& random_samples) {
  EMBER_OP_CAST(fractional_max_pool2d, fractional_max_pool2d, self, kernel_size, output_size,
                random_samples);
  return fractional_pool("fractional_max_pool2d", 2, self, kernel_size, output_size,
                         random_samples);
}

std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& self, IntArrayRef kernel_size,
                                                 IntArrayRef output_size,
                                                 const Tensor& random_samples) {
  EMBER_OP_CAST(fractional_max_pool3d, fractional_max_pool3d, self, kernel_size, output_size,
                random_samples);
  return fractional_pool("fractional_max_pool3d", 3, self, kernel_size, output_size,
                         random_samples);
}

}  // namespace ember
