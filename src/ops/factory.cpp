// Tensor factories (factory.h): allocation, constant fills, ranges, eye, from_blob and tensors
// from C++ values, with PyTorch 1.13's dtype inference and error checks.
#include "ember/factory.h"
#include "ops/call_path.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/scalar_traits.h"
#include "core/tensor_util.h"
#include "ember/dispatch_type.h"
#include "ember/error.h"
#include "ops/elementwise_core.h"

namespace ember {

namespace {

void check_sizes(IntArrayRef sizes, const char* op) {
  for (int64_t s : sizes)
    EMBER_CHECK(s >= 0, "[", op, "] Trying to create tensor with negative dimension ", s, ": ",
                shape_str(sizes));
}

Tensor finish(Tensor t, const TensorOptions& opts) {
  if (opts.requires_grad()) t.set_requires_grad(true);
  return t;
}

// Value-producing factories compute on the CPU; other devices get a copy (one transfer).
Tensor to_target_device(Tensor cpu, const TensorOptions& opts) {
  Device d = opts.device();
  if (d.is_cpu()) return cpu;
  return cpu.to(d);
}

// The dtype torch.full infers from its fill value.
ScalarType dtype_from_value(const Scalar& v) {
  if (v.isBoolean()) return kBool;
  if (v.isIntegral(false)) return kLong;
  if (v.isComplex()) return get_default_complex_dtype();
  return get_default_dtype();
}

// Storage bytes needed for a strided layout: 1 + sum((size-1)*stride) elements, 0 when empty.
size_t strided_nbytes(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, const char* op) {
  EMBER_CHECK(sizes.size() == strides.size(), "[", op, "] mismatch in length of strides (",
              strides.size(), ") and shape (", sizes.size(), ")");
  check_sizes(sizes, op);
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    EMBER_CHECK(strides[i] >= 0, "[", op, "] negative strides are not supported, got strides ",
                shape_str(strides));
    int64_t span = 0;
    EMBER_CHECK(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
                    !__builtin_add_overflow(extent, span, &extent),
                "[", op, "] Storage size calculation overflowed with sizes=", shape_str(sizes),
                " and strides=", shape_str(strides));
  }
  int64_t nbytes = 0;
  EMBER_CHECK(!__builtin_mul_overflow(extent, int64_t(elementSize(dtype)), &nbytes), "[", op,
              "] Storage size calculation overflowed with sizes=", shape_str(sizes));
  if (nbytes > kMaxStorageBytes) throw_out_of_memory(op, size_t(nbytes));
  return size_t(nbytes);
}

template <class T>
constexpr bool is_reduced_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace

// ---- allocation and constant fills ----

Tensor empty(IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(empty, sizes, opts);
  check_sizes(sizes, "empty");
  return finish(empty_tensor(sizes, opts.dtype(), opts.device()), opts);
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& opts) {
  EMBER_OP(empty_strided, sizes, strides, opts);
  ScalarType dt = opts.dtype();
  size_t nbytes = strided_nbytes(sizes, strides, dt, "empty_strided");
  if (opts.device().is_cpu() && nbytes > host_memory_bytes())
    throw_out_of_memory("empty_strided", nbytes);
  Storage st = Storage::allocate(nbytes, opts.device());
  return finish(Tensor(make_intrusive<TensorImpl>(std::move(st), dt, sizes, strides, 0)), opts);
}

Tensor zeros(IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(zeros, sizes, opts);
  check_sizes(sizes, "zeros");
  Tensor t = empty_tensor("zeros", sizes, opts.dtype(), opts.device());
  // All-zero bytes are zero in every dtype, so a fresh CPU tensor needs only a memset.
  if (t.is_cpu()) {
    if (t.nbytes()) std::memset(t.data_ptr(), 0, t.nbytes());
  } else {
    t.fill_(Scalar(0));
  }
  return finish(t, opts);
}

Tensor ones(IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(ones, sizes, opts);
  check_sizes(sizes, "ones");
  Tensor t = empty_tensor("ones", sizes, opts.dtype(), opts.device());
  t.fill_(Scalar(1));
  return finish(t, opts);
}

Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& opts) {
  EMBER_OP(full, sizes, value, opts);
  check_sizes(sizes, "full");
  ScalarType dt = opts.has_dtype() ? opts.dtype() : dtype_from_value(value);
  Tensor t = empty_tensor("full", sizes, dt, opts.device());
  t.fill_(value);
  return finish(t, opts);
}

// *_like keep the layout of dense inputs (PyTorch's preserve_format).
Tensor empty_like(const Tensor& t, const TensorOptions& opts) {
  EMBER_OP(empty_like, t, opts);
  EMBER_CHECK(t.defined(), "[empty_like] undefined tensor");
  ScalarType dt = opts.has_dtype() ? opts.dtype() : t.dtype();
  Device dev = opts.has_device() ? opts.device() : t.device();
  return finish(empty_like_layout(t.sizes(), dt, dev, {t}), opts);
}

Tensor zeros_like(const Tensor& t, const TensorOptions& opts) {
  EMBER_OP(zeros_like, t, opts);
  Tensor r = empty_like(t, opts.requires_grad(false));
  r.fill_(Scalar(0));
  return finish(r, opts);
}

Tensor ones_like(const Tensor& t, const TensorOptions& opts) {
  EMBER_OP(ones_like, t, opts);
  Tensor r = empty_like(t, opts.requires_grad(false));
  r.fill_(Scalar(1));
  return finish(r, opts);
}

Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& opts) {
  EMBER_OP(full_like, t, value, opts);
  Tensor r = empty_like(t, opts.requires_grad(false));
  r.fill_(value);
  return finish(r, opts);
}

Tensor scalar_tensor(const Scalar& s, const TensorOptions& opts) {
  EMBER_OP(scalar_tensor, s, opts);
  // torch.scalar_tensor uses the default dtype, not the scalar's type.
  Tensor t = empty_tensor({}, opts.dtype(), Device(kCPU));
  EMBER_DISPATCH_ALL_TYPES(t.dtype(), "scalar_tensor",
                           [&] { *static_cast<scalar_t*>(t.data_ptr()) = s.to<scalar_t>(); });
  return finish(to_target_device(t, opts), opts);
}

// ---- ranges ----

Tensor arange(const Scalar& end, const TensorOptions& opts) {
  EMBER_OP(arange, end, opts);
  return arange(Scalar(int64_t(0)), end, Scalar(int64_t(1)), opts);
}

Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& opts) {
  EMBER_OP(arange_1, start, end, opts);
  return arange(start, end, Scalar(int64_t(1)), opts);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& opts) {
  EMBER_OP(arange_2, start, end, step, opts);
  bool all_int = start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true);
  ScalarType dt = opts.has_dtype() ? opts.dtype() : (all_int ? kLong : get_default_dtype());
  EMBER_CHECK(dt != kBool && !isComplexType(dt), "[arange] \"arange_cpu\" not implemented for '",
              toString(dt), "'");
  Tensor out;
  EMBER_DISPATCH_REAL_TYPES(dt, "arange", [&] {
    // PyTorch's accumulate type: int64 for integers, float for half types, double otherwise.
    using acc_t = std::conditional_t<std::is_integral_v<scalar_t>, int64_t,
                                     std::conditional_t<is_reduced_v<scalar_t>, float, double>>;
    acc_t xstart = start.to<acc_t>(), xend = end.to<acc_t>(), xstep = step.to<acc_t>();
    double size_d;
    if constexpr (std::is_same_v<scalar_t, int64_t>) {
      size_d = std::ceil(double(xend - xstart) / double(xstep));
    } else {
      size_d = std::ceil((end.toDouble() - start.toDouble()) / step.toDouble());
    }
    EMBER_CHECK(xstep > 0 || xstep < 0, "[arange] step must be nonzero");
    EMBER_CHECK(std::isfinite(double(xstart)) && std::isfinite(double(xend)),
                "[arange] unsupported range: ", start, " -> ", end);
    EMBER_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart),
                "[arange] upper bound and larger bound inconsistent with step sign");
    EMBER_CHECK(size_d >= 0 && size_d <= double(std::numeric_limits<int64_t>::max()),
                "[arange] invalid size, possible overflow?");
    int64_t n = int64_t(size_d);
    out = empty_tensor("arange", {n}, dt, Device(kCPU));
    auto* p = static_cast<scalar_t*>(out.data_ptr());
    // Each element is start + step * i in the accumulate type (PyTorch's scalar path).
    for (int64_t i = 0; i < n; ++i) p[i] = scalar_t(xstart + xstep * acc_t(i));
  });
  return finish(to_target_device(out, opts), opts);
}

namespace {

template <class T>
void linspace_fill(T* p, const Scalar& s, const Scalar& e, int64_t steps) {
  int64_t halfway = steps / 2;
  if constexpr (std::is_integral_v<T>) {
    // Integers step in double (the range may not fit T), then truncate, as PyTorch.
    T start = s.to<T>(), end = e.to<T>();
    double step = (double(end) - double(start)) / double(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = i < halfway ? T(start + step * double(i)) : T(end - step * double(steps - i - 1));
  } else if constexpr (is_reduced_v<T>) {
    // Half arithmetic rounds after every operation (c10::Half semantics).
    auto r = [](float x) { return float(T(x)); };
    float start = r(s.to<float>()), end = r(e.to<float>());
    float step = r(r(end - start) / r(float(steps - 1)));
    for (int64_t i = 0; i < steps; ++i)
      p[i] = i < halfway ? T(start + r(step * r(float(i))))
                         : T(end - r(step * r(float(steps - i - 1))));
  } else {
    using R = typename real_of<T>::type;
    T start = s.to<T>(), end = e.to<T>();
    T step = (end - start) / R(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = i < halfway ? start + step * R(i) : end - step * R(steps - i - 1);
  }
}

ScalarType range_dtype(const Scalar& start, const Scalar& end, const TensorOptions& opts) {
  if (opts.has_dtype()) return opts.dtype();
  return start.isComplex() || end.isComplex() ? get_default_complex_dtype() : get_default_dtype();
}

}  // namespace

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions& opts) {
  EMBER_OP(linspace, start, end, steps, opts);
  EMBER_CHECK(steps >= 0, "[linspace] number of steps must be non-negative");
  ScalarType dt = range_dtype(start, end, opts);
  EMBER_CHECK(dt != kBool, "[linspace] \"linspace_cpu\" not implemented for 'Bool'");
  Tensor out = empty_tensor("linspace", {steps}, dt, Device(kCPU));
  if (steps > 0) {
    EMBER_DISPATCH_ALL_TYPES(dt, "linspace", [&] {
      auto* p = static_cast<scalar_t*>(out.data_ptr());
      if constexpr (!std::is_same_v<scalar_t, bool>) {
        if (steps == 1)
          p[0] = start.to<scalar_t>();
        else
          linspace_fill(p, start, end, steps);
      }
    });
  }
  return finish(to_target_device(out, opts), opts);
}

namespace {

template <class T>
void logspace_fill(T* p, const Scalar& start, const Scalar& end, int64_t steps, double base) {
  int64_t halfway = steps / 2;
  if constexpr (is_complex_v<T>) {
    complex<double> s = start.toComplexDouble(), e = end.toComplexDouble(), b(base);
    if (steps == 1) {
      p[0] = T(std::pow(b, s));
      return;
    }
    complex<double> step = (e - s) / double(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = T(std::pow(b, i < halfway ? s + step * double(i) : e - step * double(steps - i - 1)));
  } else if constexpr (std::is_integral_v<T>) {
    if (steps == 1) {
      p[0] = T(std::pow(base, start.toDouble()));
      return;
    }
    // Integers: exponents and base in float, as PyTorch (avoids promotion to double).
    float fbase = float(base);
    T s = start.to<T>(), e = end.to<T>();
    float step = float(e - s) / float(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = T(i < halfway ? std::pow(fbase, float(s) + step * float(i))
                           : std::pow(fbase, float(e) - step * float(steps - i - 1)));
  } else {
    if (steps == 1) {
      p[0] = T(std::pow(base, start.toDouble()));
      return;
    }
    T s = start.to<T>(), e = end.to<T>();
    // (end - start) is computed in T (rounded for half types), then widened to double.
    double diff;
    if constexpr (std::is_same_v<T, double>)
      diff = e - s;
    else
      diff = double(T(float(e) - float(s)));
    double step = diff / double(steps - 1);
    for (int64_t i = 0; i < steps; ++i)
      p[i] = T(i < halfway ? std::pow(base, double(s) + step * double(i))
                           : std::pow(base, double(e) - step * double(steps - i - 1)));
  }
}

}  // namespace

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                const TensorOptions& opts) {
  EMBER_OP(logspace, start, end, steps, base, opts);
  EMBER_CHECK(steps >= 0, "[logspace] number of steps must be non-negative");
  ScalarType dt = range_dtype(start, end, opts);
  EMBER_CHECK(dt != kBool, "[logspace] \"logspace_cpu\" not implemented for 'Bool'");
  Tensor out = empty_tensor("logspace", {steps}, dt, Device(kCPU));
  if (steps > 0) {
    EMBER_DISPATCH_ALL_TYPES(dt, "logspace", [&] {
      if constexpr (!std::is_same_v<scalar_t, bool>)
        logspace_fill(static_cast<scalar_t*>(out.data_ptr()), start, end, steps, base);
    });
  }
  return finish(to_target_device(out, opts), opts);
}

Tensor eye(int64_t n, const TensorOptions& opts) {
  EMBER_OP(eye, n, opts);
  return eye(n, n, opts);
}

Tensor eye(int64_t n, int64_t m, const TensorOptions& opts) {
  EMBER_OP(eye_1, n, m, opts);
  EMBER_CHECK(n >= 0, "[eye] n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "[eye] m must be greater or equal to 0, got ", m);
  Tensor out = zeros({n, m}, TensorOptions().dtype(opts.dtype()));
  EMBER_DISPATCH_ALL_TYPES(out.dtype(), "eye", [&] {
    auto* p = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = scalar_t(1);
  });
  return finish(to_target_device(out, opts), opts);
}

// ---- from_blob ----

namespace {
// The DataPtr context owns a copy of the user's deleter; it runs when the storage dies.
void call_blob_deleter(void* ctx, void* ptr) {
  auto* fn = static_cast<std::function<void(void*)>*>(ctx);
  if (*fn) (*fn)(ptr);
  delete fn;
}

Tensor wrap_blob(IntArrayRef sizes, IntArrayRef strides, DataPtr dp, size_t nbytes,
                 const TensorOptions& opts) {
  Storage st(make_intrusive<StorageImpl>(std::move(dp), nbytes, nullptr));
  return finish(Tensor(make_intrusive<TensorImpl>(std::move(st), opts.dtype(), sizes, strides, 0)),
                opts);
}
}  // namespace

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& opts) {
  EMBER_OP(from_blob, data, sizes, strides, deleter, opts);
  // Validate first: once the DataPtr exists, a failure would run the user's deleter.
  size_t nbytes = strided_nbytes(sizes, strides, opts.dtype(), "from_blob");
  auto* ctx = new std::function<void(void*)>(deleter);
  DataPtr dp(data, ctx, &call_blob_deleter, opts.device());
  return wrap_blob(sizes, strides, std::move(dp), nbytes, opts);
}

Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& opts) {
  EMBER_OP(from_blob_1, data, sizes, deleter, opts);
  check_sizes(sizes, "from_blob");
  return from_blob(data, sizes, contiguous_strides(sizes), deleter, opts);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& opts) {
  EMBER_OP(from_blob_2, data, sizes, strides, opts);
  size_t nbytes = strided_nbytes(sizes, strides, opts.dtype(), "from_blob");
  DataPtr dp(data, nullptr, nullptr, opts.device());
  return wrap_blob(sizes, strides, std::move(dp), nbytes, opts);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& opts) {
  EMBER_OP(from_blob_3, data, sizes, opts);
  check_sizes(sizes, "from_blob");
  return from_blob(data, sizes, contiguous_strides(sizes), opts);
}

// ---- tensors from C++ values ----

namespace {

// libtorch's rule (compute_desired_dtype): int and int64 -> int64, float and double -> the
// default dtype, every other type keeps its own dtype.
template <class T>
ScalarType desired_dtype() {
  ScalarType st = scalar_type_of<T>;
  if (st == kInt || st == kLong) return kLong;
  if (st == kFloat || st == kDouble) return get_default_dtype();
  return st;
}

template <class T, class It>
Tensor make_tensor(It begin, size_t n, IntArrayRef sizes, const TensorOptions& opts) {
  // Build in the C++ type, then convert: conversion rules live in one place (copy_).
  Tensor t = empty_tensor(sizes, scalar_type_of<T>, Device(kCPU));
  auto* p = static_cast<T*>(t.data_ptr());
  It it = begin;
  for (size_t i = 0; i < n; ++i, ++it) p[i] = T(*it);
  ScalarType dt = opts.has_dtype() ? opts.dtype() : desired_dtype<T>();
  if (dt != t.dtype()) t = t.to(dt);
  return finish(to_target_device(t, opts), opts);
}

}  // namespace

template <class T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& opts) {
  return make_tensor<T>(values.begin(), values.size(), {int64_t(values.size())}, opts);
}

template <class T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& opts) {
  return make_tensor<T>(values.begin(), values.size(), {int64_t(values.size())}, opts);
}

template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> values, const TensorOptions& opts) {
  int64_t rows = int64_t(values.size());
  int64_t cols = rows ? int64_t(values.begin()->size()) : 0;
  std::vector<T> flat;
  flat.reserve(size_t(rows * cols));
  int64_t r = 0;
  for (const auto& row : values) {
    EMBER_CHECK_VALUE(int64_t(row.size()) == cols, "[tensor] expected sequence of length ", cols,
                      " at dim 1 (got ", row.size(), ") in row ", r);
    flat.insert(flat.end(), row.begin(), row.end());
    ++r;
  }
  return make_tensor<T>(flat.begin(), flat.size(), {rows, cols}, opts);
}

Tensor tensor(const Scalar& value, const TensorOptions& opts) {
  EMBER_OP(tensor, value, opts);
  ScalarType dt;
  if (opts.has_dtype())
    dt = opts.dtype();
  else if (value.isBoolean())
    dt = kBool;
  else if (value.isIntegral(false))
    dt = kLong;
  else if (value.isComplex())
    dt = kComplexDouble;  // libtorch keeps complex<double> as complex128
  else
    dt = get_default_dtype();
  Tensor t = empty_tensor({}, dt, Device(kCPU));
  EMBER_DISPATCH_ALL_TYPES(dt, "tensor",
                           [&] { *static_cast<scalar_t*>(t.data_ptr()) = value.to<scalar_t>(); });
  return finish(to_target_device(t, opts), opts);
}

#define EMBER_INSTANTIATE_TENSOR(T)                                          \
  template Tensor tensor<T>(std::initializer_list<T>, const TensorOptions&); \
  template Tensor tensor<T>(const std::vector<T>&, const TensorOptions&);    \
  template Tensor tensor<T>(std::initializer_list<std::initializer_list<T>>, const TensorOptions&);
EMBER_INSTANTIATE_TENSOR(bool)
EMBER_INSTANTIATE_TENSOR(uint8_t)
EMBER_INSTANTIATE_TENSOR(int8_t)
EMBER_INSTANTIATE_TENSOR(int16_t)
EMBER_INSTANTIATE_TENSOR(int32_t)
EMBER_INSTANTIATE_TENSOR(int64_t)
EMBER_INSTANTIATE_TENSOR(float)
EMBER_INSTANTIATE_TENSOR(double)
EMBER_INSTANTIATE_TENSOR(Half)
EMBER_INSTANTIATE_TENSOR(BFloat16)
EMBER_INSTANTIATE_TENSOR(complex<float>)
EMBER_INSTANTIATE_TENSOR(complex<double>)
#undef EMBER_INSTANTIATE_TENSOR

}  // namespace ember
