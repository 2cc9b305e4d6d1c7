#pragma once
/// Complex constructors and views: view_as_real, view_as_complex, complex, polar, angle
/// (torch.view_as_real, ...). complex32 (torch.chalf) is covered by Tensor::chalf().

#include "ember/tensor.h"

namespace ember {

/// A float view of a complex tensor: a trailing dim of size 2 holds (real, imag); strides
/// doubled, storage shared. RuntimeError for a real tensor or an unresolved conjugate view.
Tensor view_as_real(const Tensor& self);

/// The complex view of a float16/float32/float64 tensor whose last dim has size 2 and stride 1,
/// whose other strides and storage offset are even (the inverse of view_as_real).
Tensor view_as_complex(const Tensor& self);

/// real + i imag from two tensors of the same float dtype (float16, float32, float64),
/// broadcast together (torch.complex; `ember::complex<T>` is the element type, hence the name).
Tensor make_complex(const Tensor& real, const Tensor& imag);
/// make_complex into `out`, whose dtype must be the complex type of the inputs.
Tensor& make_complex_out(Tensor& out, const Tensor& real, const Tensor& imag);

/// abs * (cos(angle) + i sin(angle)) from two tensors of the same float dtype (float32,
/// float64), broadcast together.
Tensor polar(const Tensor& abs, const Tensor& angle);
/// polar into `out`, whose dtype must be the complex type of the inputs.
Tensor& polar_out(Tensor& out, const Tensor& abs, const Tensor& angle);

/// The argument of each element: atan2(imag, real) for complex inputs (gradient 0 at 0); for
/// real inputs 0 where x >= 0, pi where x < 0, NaN where NaN (gradient 0). Integers give the
/// default float dtype.
Tensor angle(const Tensor& self);
/// angle into `out` (any dtype the result casts to, as elementwise out=).
Tensor& angle_out(Tensor& out, const Tensor& self);

}  // namespace ember
