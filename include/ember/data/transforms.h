#pragma once
/// Transforms, in two shapes:
/// - libtorch's templates, applied to a dataset with `.map(...)`: BatchTransform, Transform,
///   Lambda, BatchLambda, TensorTransform, TensorLambda, Normalize<>, Stack<>, Collate;
/// - image transforms on one image (C×H×W) or a batch (N×C×H×W) tensor (RandomCrop, ...). They
///   return a TensorLambda<>, so they are plain tensor functions and also map over a dataset.
///   Random ones draw their parameters per image of a batch from an ember::Generator (the
///   default one when none).

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "ember/array_ref.h"
#include "ember/data/example.h"
#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::data::transforms {

/// Turns a batch into another batch (e.g. a vector of examples into one stacked example).
template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  /// Transforms a whole batch.
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

/// Transforms each example of a batch on its own (apply() per element).
template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  /// Transforms one example.
  virtual OutputType apply(InputType input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (auto&& input : input_batch) out.push_back(apply(std::move(input)));
    return out;
  }
};

/// A BatchTransform given by a function of the whole batch.
template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using typename BatchTransform<Input, Output>::InputBatchType;
  using typename BatchTransform<Input, Output>::OutputBatchType;
  using FunctionType = std::function<OutputBatchType(InputBatchType)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  OutputBatchType apply_batch(InputBatchType input_batch) override {
    return function_(std::move(input_batch));
  }

 private:
  FunctionType function_;
};

/// A Transform given by a function of one example.
template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using typename Transform<Input, Output>::InputType;
  using typename Transform<Input, Output>::OutputType;
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  OutputType apply(InputType input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

/// A transform of the data tensor of each example (the target passes through).
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  using typename Transform<E, E>::InputType;
  using typename Transform<E, E>::OutputType;
  /// Transforms one data tensor.
  virtual Tensor operator()(Tensor input) = 0;
  OutputType apply(InputType input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

/// A TensorTransform given by a tensor function.
template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

namespace detail {
/// `values` as a float32 C×1×1 tensor (one value per channel). ValueError when empty, or when
/// `nonzero` and a value is zero.
Tensor channel_param(ArrayRef<double> values, const char* what, bool nonzero);
/// (x - mean) / stddev with the checks of Normalize (floating input, channel counts).
Tensor normalize(const Tensor& x, const Tensor& mean, const Tensor& stddev);
/// Stacks the examples' data (and targets, when all are defined) along a new dim 0.
Example<> stack(std::vector<Example<>> examples);
/// Stacks the tensors along a new dim 0.
Tensor stack(std::vector<TensorExample> examples);
}  // namespace detail

/// (x - mean[c]) / stddev[c] per channel (dim -3; one value broadcasts to every channel), as
/// libtorch: `mean` and `stddev` are float32 C×1×1 tensors. ValueError on an empty list or a
/// zero stddev; floating inputs only (TypeError).
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(detail::channel_param(mean, "mean", false)),
        stddev(detail::channel_param(stddev, "std", true)) {}
  Tensor operator()(Tensor input) override { return detail::normalize(input, mean, stddev); }
  Tensor mean, stddev;
};

/// Collates a vector of examples into one batch.
template <typename T, typename BatchType = std::vector<T>>
using Collation = BatchTransform<BatchType, T>;
/// A Collation given by a function.
template <typename T, typename BatchType = std::vector<T>>
using Collate = BatchLambda<BatchType, T>;

/// Stacks a vector of examples into one example whose tensors have a new first (batch) dim.
template <typename T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    return detail::stack(std::move(examples));
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    return detail::stack(std::move(examples));
  }
};

/// Zero-pads by `padding` on each side, then crops a random size[0]×size[1] window (per image).
/// RuntimeError when the (padded) image is smaller than the crop.
TensorLambda<> RandomCrop(std::vector<int64_t> size, int64_t padding = 0,
                          std::optional<Generator> gen = std::nullopt);
/// Mirrors each image left-right with probability p.
TensorLambda<> RandomHorizontalFlip(double p = 0.5, std::optional<Generator> gen = std::nullopt);
/// Rotates each image about its centre by an angle uniform in [-degrees, degrees] (counter-
/// clockwise positive, nearest neighbour, zero fill), as torchvision's RandomRotation.
TensorLambda<> RandomRotation(double degrees, std::optional<Generator> gen = std::nullopt);
/// Converts dtype with rescaling as torchvision: integers map [0, max] to floats [0, 1], floats
/// to integers by x * (max + 1 - 0.001), float to float by a cast.
TensorLambda<> ConvertImageDtype(ScalarType dtype);
/// Rotates every image by `degrees` (counter-clockwise, about the centre, nearest neighbour,
/// zero fill): torchvision's functional rotate with its defaults. float32/float64/uint8.
Tensor rotate(const Tensor& image, double degrees);
/// Applies the tensor functions in order (TensorLambda<>, Normalize<> and lambdas alike).
TensorLambda<> Compose(std::vector<std::function<Tensor(Tensor)>> transforms);

}  // namespace ember::data::transforms
