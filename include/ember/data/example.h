#pragma once
/// Example: one sample or one batch of a dataset, as libtorch's torch::data::Example.
///
///   ember::data::Example<> e{image, label};   // Example<Tensor, Tensor>
///   ember::data::TensorExample u{image};      // data only, converts to the tensor

#include <utility>

#include "ember/tensor.h"

namespace ember::data {

/// A sample (or a batch: data and target stacked along a new first dim). `target` may be
/// undefined for unlabelled data in ember's own datasets.
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

namespace example {
/// The Target of an Example without a target.
using NoTarget = void;
}  // namespace example

/// An Example with data only; it converts to its data.
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  Example(Data data) : data(std::move(data)) {}  // NOLINT: implicit as libtorch

  operator Data&() { return data; }              // NOLINT
  operator const Data&() const { return data; }  // NOLINT

  Data data;
};

/// An Example holding one tensor and no target.
using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace ember::data
