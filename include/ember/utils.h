#pragma once
/// libtorch's small utility names under ember's namespace, so that a libtorch program ports by
/// replacing `torch::` with `ember::` and `TORCH_` with `EMBER_`: `ember::Dtype`,
/// `ember::str`, `ember::optional`, `ember::irange`, the short dtype names (`kF32`),
/// `ember::cuda::is_available()`, `ember::autograd::tensor_list` and the `EMBER_WARN` /
/// `EMBER_ASSERT` macros. The include/ember/compat/ directory maps libtorch's own names onto
/// these (`at::` and `c10::` included: a program ports by also replacing them with `ember::`
/// and `AT_ASSERT` with `EMBER_ASSERT`).

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include "ember/autograd.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/tensor_options.h"
#include "ember/version.h"

namespace ember {

/// libtorch's name for a tensor element type (`torch::Dtype`).
using Dtype = ScalarType;

using std::make_optional;
using std::nullopt;
using std::optional;

/// Rust-style short dtype names, as libtorch's torch/types.h.
constexpr ScalarType kU8 = kUInt8;
constexpr ScalarType kI8 = kInt8;
constexpr ScalarType kI16 = kInt16;
constexpr ScalarType kI32 = kInt32;
constexpr ScalarType kI64 = kInt64;
constexpr ScalarType kF16 = kFloat16;
constexpr ScalarType kF32 = kFloat32;
constexpr ScalarType kF64 = kFloat64;

/// Concatenates the streamed forms of `args` (libtorch's `c10::str` / `torch::str`).
template <class... Args>
std::string str(const Args&... args) {
  return detail::str_cat(args...);
}

/// The half-open integer range [begin, end) that `irange` returns (libtorch's c10::irange).
template <typename I>
class integer_range {
 public:
  class iterator {
   public:
    explicit iterator(I v) : v_(v) {}
    I operator*() const { return v_; }
    iterator& operator++() {
      ++v_;
      return *this;
    }
    bool operator==(const iterator& o) const { return v_ == o.v_; }
    bool operator!=(const iterator& o) const { return v_ != o.v_; }

   private:
    I v_;
  };
  integer_range(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  I begin_, end_;
};

/// `for (auto i : ember::irange(n))`: 0, 1, ..., n-1 (empty when n <= 0).
template <typename I>
integer_range<I> irange(I end) {
  return integer_range<I>(I(0), end);
}
/// begin, ..., end-1 (empty when end <= begin), in the type of `end`.
template <typename I1, typename I2>
integer_range<I2> irange(I1 begin, I2 end) {
  return integer_range<I2>(static_cast<I2>(begin), end);
}

namespace cuda {
/// Whether this build has the CUDA backend and at least one usable GPU.
inline bool is_available() { return cuda_is_available(); }
/// Number of visible CUDA devices (0 without a GPU or without the CUDA backend).
inline int64_t device_count() { return cuda_device_count(); }
/// ember has no cuDNN backend: true exactly when CUDA is available, as programs that test it
/// only want to know whether GPU convolutions run.
inline bool cudnn_is_available() { return cuda_is_available(); }
}  // namespace cuda

namespace autograd {
/// libtorch's other name for a list of tensors in custom Function signatures.
using tensor_list = variable_list;
/// libtorch's older name for a tensor that takes part in autograd (a Tensor since 1.0).
using Variable = Tensor;
}  // namespace autograd

}  // namespace ember

/// Prints "Warning: <message>" to stderr (libtorch's TORCH_WARN, without deduplication).
#define EMBER_WARN(...) \
  (std::cerr << "Warning: " << ::ember::detail::str_cat(__VA_ARGS__) << std::endl)

/// An assertion on the program's own invariants (libtorch's AT_ASSERT): throws ember::Error
/// naming the condition, the file and the line.
#define EMBER_ASSERT(cond, ...)                                       \
  EMBER_CHECK(cond, "[assert] ", #cond, " failed at ", __FILE__, ":", \
              __LINE__ __VA_OPT__(, ": ", ) __VA_ARGS__)
