// The dtype x ReduceOp cross product of the process groups' reductions.
//
// Note [Reduce functions]
// Gloo calls a reduce function on whole segments (up to 1 MiB) of two buffers, so each one is
// a plain loop the compiler vectorises; the float32 SUM is split by aliasing (Gloo passes
// out == a) so the loops carry no runtime alias checks. Semantics follow torch.distributed:
//  - bool: SUM and MAX are logical or, PRODUCT and MIN logical and, BXOR exclusive or.
//  - integers wrap around on overflow (two's complement), as torch's tensors do.
//  - float16/bfloat16 compute in float32 and round once per combine.
//  - MIN/MAX propagate NaN (as torch.minimum/maximum).
//  - complex: SUM and PRODUCT (complex multiply); MIN/MAX/BAND/BOR/BXOR are TypeErrors.
//  - BAND/BOR/BXOR on floating dtypes are TypeErrors.
//  - AVG is SUM followed by a division by the group size; it is defined for floating and
//    complex dtypes only (an integer average would truncate silently: TypeError, use SUM).
#include "distributed/reduce_ops.h"

#include <cmath>
#include <complex>
#include <type_traits>

#include "ember/error.h"
#include "ember/half.h"

namespace ember::distributed::detail {
namespace {

template <class T>
struct Wrap {
  // Integer arithmetic in the unsigned type: defined wrap-around instead of signed overflow.
  using U = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                               std::make_unsigned_t<T>, T>;
};

template <class T>
inline T add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = typename Wrap<T>::U;
    return T(U(U(a) + U(b)));
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(a) + float(b));
  } else {
    return a + b;
  }
}
template <class T>
inline T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = typename Wrap<T>::U;
    // uint16 * uint16 promotes to int and may overflow: multiply in 64 bits.
    return T(U(uint64_t(U(a)) * uint64_t(U(b))));
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(a) * float(b));
  } else {
    return a * b;
  }
}
template <class T>
inline T min_(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    float x = a, y = b;
    return (x != x) ? a : (y != y) ? b : (y < x ? b : a);
  } else if constexpr (std::is_floating_point_v<T>) {
    return (a != a) ? a : (b != b) ? b : (b < a ? b : a);
  } else {
    return b < a ? b : a;
  }
}
template <class T>
inline T max_(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    float x = a, y = b;
    return (x != x) ? a : (y != y) ? b : (y > x ? b : a);
  } else if constexpr (std::is_floating_point_v<T>) {
    return (a != a) ? a : (b != b) ? b : (b > a ? b : a);
  } else {
    return b > a ? b : a;
  }
}

struct SumOp {
  template <class T>
  static T apply(T a, T b) {
    return add(a, b);
  }
};
struct ProdOp {
  template <class T>
  static T apply(T a, T b) {
    return mul(a, b);
  }
};
struct MinOp {
  template <class T>
  static T apply(T a, T b) {
    return min_(a, b);
  }
};
struct MaxOp {
  template <class T>
  static T apply(T a, T b) {
    return max_(a, b);
  }
};
struct AndOp {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else
      return T(a & b);
  }
};
struct OrOp {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else
      return T(a | b);
  }
};
struct XorOp {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a != b;
    else
      return T(a ^ b);
  }
};

template <class T, class Op>
void combine(void* out_, const void* a_, const void* b_, size_t n) {
  T* out = static_cast<T*>(out_);
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  for (size_t i = 0; i < n; ++i) out[i] = Op::apply(a[i], b[i]);
}

// The aliasing cases of a vectorisable SUM, each loop free of alias checks.
template <class T>
void sum_fast(void* out_, const void* a_, const void* b_, size_t n) {
  T* out = static_cast<T*>(out_);
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  if (out == a && out == b) {
    T* __restrict o = out;
    for (size_t i = 0; i < n; ++i) o[i] = o[i] + o[i];
  } else if (out == a || out == b) {
    T* __restrict o = out;
    const T* __restrict x = out == a ? b : a;
    for (size_t i = 0; i < n; ++i) o[i] += x[i];
  } else {
    T* __restrict o = out;
    const T* __restrict x = a;
    const T* __restrict y = b;
    for (size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
  }
}

template <class T>
ReduceFn pick(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return &sum_fast<T>;
      return &combine<T, SumOp>;
    case ReduceOp::PRODUCT:
      return &combine<T, ProdOp>;
    case ReduceOp::MIN:
      if constexpr (!std::is_same_v<T, complex<float>> && !std::is_same_v<T, complex<double>>)
        return &combine<T, MinOp>;
      break;
    case ReduceOp::MAX:
      if constexpr (!std::is_same_v<T, complex<float>> && !std::is_same_v<T, complex<double>>)
        return &combine<T, MaxOp>;
      break;
    case ReduceOp::BAND:
      if constexpr (std::is_integral_v<T>) return &combine<T, AndOp>;
      break;
    case ReduceOp::BOR:
      if constexpr (std::is_integral_v<T>) return &combine<T, OrOp>;
      break;
    case ReduceOp::BXOR:
      if constexpr (std::is_integral_v<T>) return &combine<T, XorOp>;
      break;
  }
  return nullptr;
}

template <class T>
void divide(void* data, size_t n, int64_t d) {
  T* p = static_cast<T*>(data);
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    for (size_t i = 0; i < n; ++i) p[i] = T(float(p[i]) / float(d));
  } else if constexpr (std::is_same_v<T, complex<float>>) {
    for (size_t i = 0; i < n; ++i) p[i] /= float(d);
  } else if constexpr (std::is_same_v<T, complex<double>>) {
    for (size_t i = 0; i < n; ++i) p[i] /= double(d);
  } else {
    for (size_t i = 0; i < n; ++i) p[i] /= T(d);
  }
}

}  // namespace

void check_reduce_supported(const char* opname, ReduceOp op, ScalarType dtype) {
  EMBER_CHECK_TYPE(dtype != ScalarType::ComplexHalf && dtype != ScalarType::Undefined, "[", opname,
                   "] tensors of dtype ", dtype_name(dtype),
                   " are not supported by the process group");
  if (isComplexType(dtype)) {
    EMBER_CHECK_TYPE(op == ReduceOp::SUM || op == ReduceOp::AVG || op == ReduceOp::PRODUCT, "[",
                     opname, "] ReduceOp.", reduce_op_name(op), " is not defined on complex ",
                     "tensors (", dtype_name(dtype), "); use SUM, AVG or PRODUCT");
  }
  if (isFloatingType(dtype) || isComplexType(dtype)) {
    EMBER_CHECK_TYPE(op != ReduceOp::BAND && op != ReduceOp::BOR && op != ReduceOp::BXOR, "[",
                     opname, "] ReduceOp.", reduce_op_name(op),
                     " is a bitwise reduction: it needs an integer or bool tensor, got ",
                     dtype_name(dtype));
  } else {
    EMBER_CHECK_TYPE(op != ReduceOp::AVG, "[", opname,
                     "] ReduceOp.AVG is not supported for integer and bool tensors (got ",
                     dtype_name(dtype), "): the average would be truncated; use SUM and divide");
  }
}

ReduceFn reduce_function(const char* opname, ReduceOp op, ScalarType dtype) {
  check_reduce_supported(opname, op, dtype);
  ReduceFn fn = nullptr;
  switch (dtype) {
#define EMBER_PICK_REDUCE(T, N) \
  case ScalarType::N:           \
    fn = pick<T>(op);           \
    break;
    EMBER_FORALL_SCALAR_TYPES(EMBER_PICK_REDUCE)
#undef EMBER_PICK_REDUCE
    default:
      break;
  }
  EMBER_INTERNAL_ASSERT(fn != nullptr, "no reduce function for ", reduce_op_name(op), " on ",
                        dtype_name(dtype));
  return fn;
}

void divide_in_place(void* data, ScalarType dtype, size_t n, int64_t divisor) {
  switch (dtype) {
    case ScalarType::Half:
      return divide<Half>(data, n, divisor);
    case ScalarType::BFloat16:
      return divide<BFloat16>(data, n, divisor);
    case ScalarType::Float:
      return divide<float>(data, n, divisor);
    case ScalarType::Double:
      return divide<double>(data, n, divisor);
    case ScalarType::ComplexFloat:
      return divide<complex<float>>(data, n, divisor);
    case ScalarType::ComplexDouble:
      return divide<complex<double>>(data, n, divisor);
    default:
      EMBER_INTERNAL_ASSERT(false, "divide_in_place on ", dtype_name(dtype));
  }
}

}  // namespace ember::distributed::detail

namespace ember::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::AVG:
      return "AVG";
    case ReduceOp::PRODUCT:
      return "PRODUCT";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::MAX:
      return "MAX";
    case ReduceOp::BAND:
      return "BAND";
    case ReduceOp::BOR:
      return "BOR";
    case ReduceOp::BXOR:
      return "BXOR";
  }
  return "?";
}

}  // namespace ember::distributed
