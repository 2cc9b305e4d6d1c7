// Normalization layers: PyTorch 1.13's _NormBase / _BatchNorm / _InstanceNorm logic (buffers,
// the num_batches_tracked count, cumulative-average momentum, unbatched instance-norm input).
#include "ember/nn/modules/normalization.h"

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/init.h"

namespace ember::nn {

namespace F = functional;

namespace {
std::string momentum_repr(const std::optional<double>& m) {
  return m ? detail::repr_double(*m) : "None";
}
std::string momentum_repr(double m) { return detail::repr_double(m); }

template <typename Options>
const char* norm_kind() {
  return std::is_same_v<Options, BatchNormOptions> ? "BatchNorm" : "InstanceNorm";
}
}  // namespace

template <size_t D, typename Derived, typename Options>
NormImplBase<D, Derived, Options>::NormImplBase(const Options& options_) : options(options_) {
  NormImplBase::reset();
}

template <size_t D, typename Derived, typename Options>
void NormImplBase<D, Derived, Options>::reset() {
  int64_t c = options.num_features();
  EMBER_CHECK_VALUE(c >= 0, "[", norm_kind<Options>(), D,
                    "d] num_features must be "
                    "non-negative, got ",
                    c);
  bool affine = options.affine();
  weight = this->register_parameter("weight", affine ? ember::empty({c}) : Tensor(), affine);
  bias = this->register_parameter("bias", affine ? ember::empty({c}) : Tensor(), affine);
  bool track = options.track_running_stats();
  running_mean = this->register_buffer("running_mean", track ? ember::zeros({c}) : Tensor());
  running_var = this->register_buffer("running_var", track ? ember::ones({c}) : Tensor());
  num_batches_tracked = this->register_buffer(
      "num_batches_tracked", track ? ember::zeros({}, TensorOptions(kLong)) : Tensor());
  reset_parameters();
}

template <size_t D, typename Derived, typename Options>
void NormImplBase<D, Derived, Options>::reset_running_stats() {
  NoGradGuard g;
  if (!options.track_running_stats()) return;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <size_t D, typename Derived, typename Options>
void NormImplBase<D, Derived, Options>::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

template <size_t D, typename Derived, typename Options>
std::string NormImplBase<D, Derived, Options>::extra_repr() const {
  return std::to_string(options.num_features()) + ", eps=" + detail::repr_double(options.eps()) +
         ", momentum=" + momentum_repr(options.momentum()) +
         ", affine=" + detail::repr_bool(options.affine()) +
         ", track_running_stats=" + detail::repr_bool(options.track_running_stats());
}

template <size_t D, typename Derived>
Tensor BatchNormImplBase<D, Derived>::forward(const Tensor& input) {
  const auto& o = this->options;
  if constexpr (D == 1) {
    EMBER_CHECK_VALUE(input.dim() == 2 || input.dim() == 3,
                      "[BatchNorm1d] expected 2D or 3D "
                      "input (got ",
                      input.dim(), "D input)");
  } else {
    EMBER_CHECK_VALUE(input.dim() == int64_t(D) + 2, "[BatchNorm", D, "d] expected ", D + 2,
                      "D input (got ", input.dim(), "D input)");
  }
  double factor = o.momentum().value_or(0.0);
  if (this->is_training() && o.track_running_stats()) {
    {
      NoGradGuard g;
      this->num_batches_tracked.add_(1);
    }
    if (!o.momentum()) factor = 1.0 / this->num_batches_tracked.template item<double>();
  }
  bool use_batch_stats =
      this->is_training() || (!this->running_mean.defined() && !this->running_var.defined());
  bool pass_stats = !this->is_training() || o.track_running_stats();
  return F::batch_norm(input, pass_stats ? this->running_mean : Tensor(),
                       pass_stats ? this->running_var : Tensor(),
                       F::BatchNormFuncOptions()
                           .weight(this->weight)
                           .bias(this->bias)
                           .training(use_batch_stats)
                           .momentum(factor)
                           .eps(o.eps()));
}

template <size_t D, typename Derived>
Tensor InstanceNormImplBase<D, Derived>::forward(const Tensor& input) {
  const auto& o = this->options;
  EMBER_CHECK_VALUE(input.dim() == int64_t(D) + 1 || input.dim() == int64_t(D) + 2, "[InstanceNorm",
                    D, "d] expected ", D + 1, "D or ", D + 2, "D input (got ", input.dim(),
                    "D input)");
  if (input.dim() == int64_t(D) + 1) return forward(input.unsqueeze(0)).squeeze(0);
  EMBER_CHECK_VALUE(!o.affine() || input.size(1) == o.num_features(), "[InstanceNorm", D,
                    "d] expected input's size at dim=1 to match num_features (", o.num_features(),
                    "), but got: ", input.size(1), ".");
  return F::instance_norm(input,
                          F::InstanceNormFuncOptions()
                              .running_mean(this->running_mean)
                              .running_var(this->running_var)
                              .weight(this->weight)
                              .bias(this->bias)
                              .use_input_stats(this->is_training() || !o.track_running_stats())
                              .momentum(o.momentum())
                              .eps(o.eps()));
}

template class NormImplBase<1, BatchNorm1dImpl, BatchNormOptions>;
template class NormImplBase<2, BatchNorm2dImpl, BatchNormOptions>;
template class NormImplBase<3, BatchNorm3dImpl, BatchNormOptions>;
template class NormImplBase<1, InstanceNorm1dImpl, InstanceNormOptions>;
template class NormImplBase<2, InstanceNorm2dImpl, InstanceNormOptions>;
template class NormImplBase<3, InstanceNorm3dImpl, InstanceNormOptions>;
template class BatchNormImplBase<1, BatchNorm1dImpl>;
template class BatchNormImplBase<2, BatchNorm2dImpl>;
template class BatchNormImplBase<3, BatchNorm3dImpl>;
template class InstanceNormImplBase<1, InstanceNorm1dImpl>;
template class InstanceNormImplBase<2, InstanceNorm2dImpl>;
template class InstanceNormImplBase<3, InstanceNorm3dImpl>;

// ---- LayerNorm ----

LayerNormImpl::LayerNormImpl(LayerNormOptions options_) : options(std::move(options_)) { reset(); }

void LayerNormImpl::reset() {
  for (int64_t s : options.normalized_shape())
    EMBER_CHECK_VALUE(s >= 0, "[LayerNorm] normalized_shape must be non-negative, got ",
                      detail::repr_tuple(options.normalized_shape()));
  bool affine = options.elementwise_affine();
  weight = register_parameter("weight",
                              affine ? ember::empty(options.normalized_shape()) : Tensor(), affine);
  bias = register_parameter("bias", affine ? ember::empty(options.normalized_shape()) : Tensor(),
                            affine);
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

std::string LayerNormImpl::extra_repr() const {
  return detail::repr_tuple(options.normalized_shape()) +
         ", eps=" + detail::repr_double(options.eps()) +
         ", elementwise_affine=" + detail::repr_bool(options.elementwise_affine());
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return F::layer_norm(input, F::LayerNormFuncOptions(options.normalized_shape())
                                  .weight(weight)
                                  .bias(bias)
                                  .eps(options.eps()));
}

// ---- GroupNorm ----

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options_) : options(options_) { reset(); }

void GroupNormImpl::reset() {
  EMBER_CHECK_VALUE(options.num_groups() > 0, "[GroupNorm] num_groups must be positive, got ",
                    options.num_groups());
  EMBER_CHECK_VALUE(options.num_channels() % options.num_groups() == 0,
                    "[GroupNorm] num_channels (", options.num_channels(),
                    ") must be divisible by num_groups (", options.num_groups(), ")");
  bool affine = options.affine();
  int64_t c = options.num_channels();
  weight = register_parameter("weight", affine ? ember::empty({c}) : Tensor(), affine);
  bias = register_parameter("bias", affine ? ember::empty({c}) : Tensor(), affine);
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

std::string GroupNormImpl::extra_repr() const {
  return std::to_string(options.num_groups()) + ", " + std::to_string(options.num_channels()) +
         ", eps=" + detail::repr_double(options.eps()) +
         ", affine=" + detail::repr_bool(options.affine());
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return F::group_norm(
      input,
      F::GroupNormFuncOptions(options.num_groups()).weight(weight).bias(bias).eps(options.eps()));
}

// ---- LocalResponseNorm ----

std::string LocalResponseNormImpl::extra_repr() const {
  return std::to_string(options.size()) + ", alpha=" + detail::repr_double(options.alpha()) +
         ", beta=" + detail::repr_double(options.beta()) +
         ", k=" + detail::repr_double(options.k());
}

Tensor LocalResponseNormImpl::forward(const Tensor& input) {
  return F::local_response_norm(input, options);
}

}  // namespace ember::nn
