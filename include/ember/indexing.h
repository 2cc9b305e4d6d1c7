#pragma once
/// Basic indexing: `x.index({Slice(1, None, 2), 0, None, Ellipsis})`, as libtorch's
/// `torch::indexing`.

#include <optional>

#include "ember/tensor.h"

namespace ember::indexing {

/// `None` in an index list inserts a new dim; in a Slice it means "default".
inline constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
/// `...` in an index list.
inline constexpr EllipsisIndexType Ellipsis{};

/// `start:stop:step`; missing bounds default as in Python. step must be positive.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start), stop_(stop), step_(step) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  std::optional<int64_t> step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_, step_;
};

/// One entry of an index list: None, Ellipsis, an integer, a bool, a Slice or a Tensor.
class TensorIndex {
 public:
  enum class Kind { None, Ellipsis, Integer, Boolean, Slice, Tensor };
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}               // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}        // NOLINT
  TensorIndex(const char* s);                                      // NOLINT: "..." only
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T i) : kind_(Kind::Integer), integer_(int64_t(i)) {}  // NOLINT
  TensorIndex(bool b) : kind_(Kind::Boolean), boolean_(b) {}       // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}          // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_ellipsis() const { return kind_ == Kind::Ellipsis; }
  bool is_integer() const { return kind_ == Kind::Integer; }
  bool is_boolean() const { return kind_ == Kind::Boolean; }
  bool is_slice() const { return kind_ == Kind::Slice; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace ember::indexing
