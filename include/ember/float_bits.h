#pragma once
/// frexp and ldexp: a floating tensor's binary mantissa and exponent, and scaling by powers of
/// two (torch.frexp / torch.ldexp). The Tensor methods are declared in tensor.h.

#include <tuple>

#include "ember/tensor.h"

namespace ember {

/// Splits each element into a mantissa (self's dtype; |m| in [0.5, 1), or self where it is 0,
/// inf or NaN) and an int32 exponent with self = m * 2^exponent. Floating dtypes only
/// (RuntimeError otherwise). The mantissa is differentiable: d m / d self = 2^-exponent.
std::tuple<Tensor, Tensor> frexp(const Tensor& self);
/// frexp into `mantissa` (self's dtype) and `exponent` (int32), resized when empty.
std::tuple<Tensor&, Tensor&> frexp_out(Tensor& mantissa, Tensor& exponent, const Tensor& self);

/// self * 2^other, with PyTorch's dtypes: 2^other is computed as pow(2.0, other) (float32 for
/// integer `other`), then multiplied with self under the usual promotion.
Tensor ldexp(const Tensor& self, const Tensor& other);
Tensor& ldexp_out(Tensor& out, const Tensor& self, const Tensor& other);

}  // namespace ember
