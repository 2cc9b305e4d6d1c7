// linear / bilinear and the distance helpers of nn.functional. All are composites of recorded
// ops (addmm, matmul, reductions), so their gradients and higher derivatives come free.
#include <cmath>

#include "core/tensor_util.h"
#include "ember/blas.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include "ops/call_path.h"

namespace ember {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  EMBER_OP_CAST(linear, linear, input, weight, bias);
  EMBER_CHECK(input.defined() && weight.defined(), "[linear] input and weight must be defined");
  EMBER_CHECK(input.dim() >= 1, "[linear] input must have at least 1 dim, got a 0-dim tensor");
  EMBER_CHECK(weight.dim() == 1 || weight.dim() == 2, "[linear] weight must be 1-D or 2-D, got ",
              shape_str(weight.sizes()));
  EMBER_CHECK(input.size(-1) == weight.size(-1), "[linear] mat1 and mat2 shapes cannot be ",
              "multiplied: input ", shape_str(input.sizes()), " and weight ",
              shape_str(weight.sizes()), " (in_features must match input.size(-1))");
  if (bias.defined()) {
    const int64_t out_f = weight.dim() == 2 ? weight.size(0) : 1;
    EMBER_CHECK(bias.dim() <= 1 && (bias.numel() == out_f || bias.numel() == 1), "[linear] bias ",
                shape_str(bias.sizes()), " does not match out_features ", out_f);
  }
  const Tensor wt = weight.dim() == 2 ? weight.t() : weight;
  if (weight.dim() == 2 && bias.defined()) {
    // One gemm with the bias as beta * C, folding leading dims when that needs no copy (as
    // PyTorch does for a contiguous 3-D input).
    if (input.dim() == 2) return addmm(bias, input, wt);
    if (input.dim() >= 3 && input.is_contiguous()) {
      DimVector out_shape(input.sizes());
      out_shape.back() = weight.size(0);
      return addmm(bias, input.reshape({-1, input.size(-1)}), wt).view(out_shape);
    }
  }
  Tensor out = matmul(input, wt);
  return bias.defined() ? out + bias : out;
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
  EMBER_OP_CAST(bilinear, bilinear, input1, input2, weight, bias);
  EMBER_CHECK(input1.defined() && input2.defined() && weight.defined(),
              "[bilinear] inputs and weight must be defined");
  EMBER_CHECK(input1.dim() == input2.dim(), "[bilinear] input dimensions do not match: got ",
              input1.dim(), " and ", input2.dim());
  EMBER_CHECK(input1.dim() >= 1, "[bilinear] inputs must have at least 1 dim");
  for (int64_t d = 0; d + 1 < input1.dim(); ++d) {
    EMBER_CHECK(input1.size(d) == input2.size(d), "[bilinear] input batch dimensions do not ",
                "match: got ", shape_str(input1.sizes()), " and ", shape_str(input2.sizes()));
  }
  EMBER_CHECK(weight.dim() == 3, "[bilinear] weight must be 3-D, got ", shape_str(weight.sizes()));
  EMBER_CHECK(input1.size(-1) == weight.size(1), "[bilinear] input1 size does not match weight ",
              "size: got ", input1.size(-1), " but expected ", weight.size(1));
  EMBER_CHECK(input2.size(-1) == weight.size(2), "[bilinear] input2 size does not match weight ",
              "size: got ", input2.size(-1), " but expected ", weight.size(2));
  if (bias.defined()) {
    EMBER_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), "[bilinear] bias size does ",
                "not match weight size: got ", shape_str(bias.sizes()), " but expected [",
                weight.size(0), "]");
  }
  const int64_t in1 = weight.size(1), in2 = weight.size(2), out_f = weight.size(0);
  DimVector out_shape(input1.sizes());
  out_shape.back() = out_f;
  // (B, in1) @ (in1, out*in2) -> (B, out, in2), then contract in2 with x2.
  Tensor x1 = input1.reshape({-1, in1});
  Tensor x2 = input2.reshape({-1, in2});
  Tensor w = weight.permute({1, 0, 2}).reshape({in1, out_f * in2});
  Tensor t = matmul(x1, w).view({-1, out_f, in2});
  Tensor y = matmul(t, x2.unsqueeze(2)).squeeze(2);
  if (bias.defined()) y = y + bias;
  return y.reshape(out_shape);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  EMBER_OP_CAST(cosine_similarity, cosine_similarity, x1, x2, dim, eps);
  EMBER_CHECK(x1.defined() && x2.defined(), "[cosine_similarity] inputs must be defined");
  const DimVector shape = broadcast_shapes(x1.sizes(), x2.sizes());
  const int64_t nd = int64_t(shape.size());
  const int64_t d = wrap_dim(dim, nd, "cosine_similarity");
  // PyTorch 1.13: sum(x1 * x2) / sqrt(clamp_min(|x1|^2 * |x2|^2, eps^2)).
  Tensor a = x1.expand(shape), b = x2.expand(shape);
  Tensor w12 = (a * b).sum({d});
  Tensor w1 = (a * a).sum({d});
  Tensor w2 = (b * b).sum({d});
  Tensor n12 = (w1 * w2).clamp_min(eps * eps).sqrt();
  return w12 / n12;
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  EMBER_OP(pairwise_distance, x1, x2, p, eps, keepdim);
  EMBER_CHECK(x1.defined() && x2.defined(), "[pairwise_distance] inputs must be defined");
  const int64_t nd = std::max(x1.dim(), x2.dim());
  const int64_t d = nd == 0 ? 0 : nd - 1;
  Tensor diff = x1 - x2 + eps;
  if (nd == 0) return linalg_vector_norm(diff, p, std::nullopt, false);
  const int64_t dims[1] = {d};
  return linalg_vector_norm(diff, p, IntArrayRef(dims, 1), keepdim);
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  EMBER_OP(normalize, input, p, dim, eps);
  EMBER_CHECK(input.defined(), "[normalize] input must be defined");
  const int64_t d = wrap_dim(dim, input.dim(), "normalize");
  const int64_t dims[1] = {d};
  Tensor n = input.dim() == 0 ? linalg_vector_norm(input, p, std::nullopt, true)
                              : linalg_vector_norm(input, p, IntArrayRef(dims, 1), true);
  return input / n.clamp_min(eps).expand_as(input);
}

}  // namespace ember
