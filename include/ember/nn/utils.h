#pragma once
/// ember::nn::utils: gradient clipping, parameter/vector conversion and packed sequences.

#include <vector>

#include "ember/nn/utils/rnn.h"
#include "ember/tensor.h"

namespace ember::nn::utils {

/// Scales the gradients of `parameters` in place so their joint `norm_type` norm is at most
/// `max_norm`; returns the norm before clipping. A non-finite norm is an error when
/// `error_if_nonfinite`. The norms are computed per tensor and combined (the foreach path).
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
/// Clamps every gradient to [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);
/// The parameters flattened and concatenated into one vector.
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);
/// Copies consecutive slices of `vec` into the parameters.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace ember::nn::utils
