#pragma once
/// The elementwise op families as X-macro lists. Each list generates, from this one place, the
/// public functions (ops.h), the Tensor methods (tensor.h) and the op ids (src/ops/op_table.h).

/// Unary ops `f(x)`: function, method, in-place `x.f_()` and `f_out(out, x)`.
#define EMBER_UNARY_OPS(_) \
  _(neg) _(abs) _(sign) _(sgn) _(reciprocal) _(sqrt) _(rsqrt) _(square) \
  _(exp) _(exp2) _(expm1) _(log) _(log2) _(log10) _(log1p) \
  _(sin) _(cos) _(tan) _(asin) _(acos) _(atan) _(sinh) _(cosh) _(tanh) \
  _(asinh) _(acosh) _(atanh) _(sigmoid) _(erf) _(erfc) _(erfinv) \
  _(floor) _(ceil) _(trunc) _(frac) _(bitwise_not) _(logical_not) \
  _(relu) _(relu6) _(selu) _(silu) _(mish) _(softsign) _(hardsigmoid) _(hardswish) \
  _(tanhshrink) _(logsigmoid) _(lgamma) _(digamma) _(i0) _(sinc) _(deg2rad) _(rad2deg)

/// Unary predicates with a bool result: function, method, `f_out(out, x)`; no in-place form.
#define EMBER_UNARY_PREDICATE_OPS(_) \
  _(isnan) _(isinf) _(isfinite) _(isposinf) _(isneginf) _(isreal) _(signbit)

/// Binary ops `f(a, b)` with tensor or scalar `b`: function, method, in-place, `f_out`.
#define EMBER_BINARY_OPS(_) \
  _(mul) _(true_divide) _(floor_divide) _(remainder) _(fmod) _(pow) _(float_power) \
  _(atan2) _(minimum) _(maximum) _(fmin) _(fmax) _(hypot) _(copysign) _(nextafter) \
  _(xlogy) _(logical_and) _(logical_or) _(logical_xor) \
  _(bitwise_and) _(bitwise_or) _(bitwise_xor) _(bitwise_left_shift) _(bitwise_right_shift) \
  _(logaddexp) _(logaddexp2) _(heaviside) _(gcd) _(lcm) _(igamma) _(igammac)

/// Comparisons with a bool result (in-place keeps the dtype of self, as PyTorch).
#define EMBER_COMPARISON_OPS(_) _(eq) _(ne) _(lt) _(le) _(gt) _(ge)
