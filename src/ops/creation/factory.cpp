// Tensor factories (factory.h): allocation, constant fills, ranges, eye, from_blob and tensors
// from C++ values, with PyTorch 1.13's dtype inference and error checks.
#include "ember/factory.h"
#include "ops/call_path.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "kernels/stubs/core.h"
#include "kernels/stubs/factory.h"
#include "ops/elementwise/elementwise_core.h"

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
  // All-zero bytes are zero in every dtype: a device with a byte-clearing kernel needs no fill.
  if (zeros_stub.get(t.device().type()))
    zeros_stub(t.device().type(), t);
  else
    t.fill_(Scalar(0));
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
  store_scalar_stub(t.device().type(), t, s, "scalar_tensor");
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

namespace {

// arange's checks and length, in PyTorch's accumulate type `acc_t` of the result dtype (int64
// for integers, float for half types, double otherwise); an int64 result computes its length
// in integers (`int64_length`).
template <class acc_t>
int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step,
                      bool int64_length) {
  acc_t xstart = start.to<acc_t>(), xend = end.to<acc_t>(), xstep = step.to<acc_t>();
  double size_d;
  if (int64_length) {
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
  return int64_t(size_d);
}

}  // namespace

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& opts) {
  EMBER_OP(arange_2, start, end, step, opts);
  bool all_int = start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true);
  ScalarType dt = opts.has_dtype() ? opts.dtype() : (all_int ? kLong : get_default_dtype());
  EMBER_CHECK(dt != kBool && !isComplexType(dt), "[arange] \"arange_cpu\" not implemented for '",
              toString(dt), "'");
  int64_t n = isIntegralType(dt, false) ? arange_length<int64_t>(start, end, step, dt == kLong)
              : dt == kHalf || dt == kBFloat16 ? arange_length<float>(start, end, step, false)
                                               : arange_length<double>(start, end, step, false);
  Tensor out = empty_tensor("arange", {n}, dt, Device(kCPU));
  arange_stub(out.device().type(), out, start, step);
  return finish(to_target_device(out, opts), opts);
}

namespace {

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
  if (steps > 0) linspace_stub(out.device().type(), out, start, end);
  return finish(to_target_device(out, opts), opts);
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                const TensorOptions& opts) {
  EMBER_OP(logspace, start, end, steps, base, opts);
  EMBER_CHECK(steps >= 0, "[logspace] number of steps must be non-negative");
  ScalarType dt = range_dtype(start, end, opts);
  EMBER_CHECK(dt != kBool, "[logspace] \"logspace_cpu\" not implemented for 'Bool'");
  Tensor out = empty_tensor("logspace", {steps}, dt, Device(kCPU));
  if (steps > 0) logspace_stub(out.device().type(), out, start, end, base);
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
  eye_stub(out.device().type(), out);
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

// A CPU tensor over the caller's contiguous values (not owned: used before they go away).
template <class T>
Tensor host_values(const T* data, size_t n, IntArrayRef sizes) {
  DataPtr dp(const_cast<T*>(data), nullptr, nullptr, Device(kCPU));
  Storage st(make_intrusive<StorageImpl>(std::move(dp), n * sizeof(T), nullptr));
  return Tensor(make_intrusive<TensorImpl>(std::move(st), scalar_type_of<T>, sizes));
}

template <class T, class It>
Tensor make_tensor(It begin, size_t n, IntArrayRef sizes, const TensorOptions& opts) {
  // Build in the C++ type, then convert: conversion rules live in one place (copy_).
  Tensor t = empty_tensor(sizes, scalar_type_of<T>, Device(kCPU));
  if (n > 0) {
    if constexpr (std::contiguous_iterator<It>) {
      copy_stub(t.device().type(), t, host_values<T>(std::to_address(begin), n, sizes));
    } else {
      // std::vector<bool> packs its values into bits: unpack them first.
      std::unique_ptr<T[]> buf(new T[n]);
      std::copy_n(begin, n, buf.get());
      copy_stub(t.device().type(), t, host_values<T>(buf.get(), n, sizes));
    }
  }
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
  store_scalar_stub(t.device().type(), t, value, "tensor");
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
