#pragma once
#include "kernels/cpu/kernel_layer.h"  // Note [Layer includes]
// The kernels of the loss ops (src/ops/nn/loss_ops.cpp, loss_ops2.cpp) that read target values:
// class-index checks, the multilabel target tables and the CTC recursions (Note [Kernel stubs]).

#include <cstdint>
#include <vector>

#include "core/kernel_stub.h"
#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember {

/// Checks that every value of the contiguous int64 `target` is a class in [0, n_classes) or
/// `ignore_index` (IndexError "Target <t> is out of bounds." otherwise).
EMBER_DECLARE_KERNEL(nll_check_targets_stub,
                     void(const Tensor& target, int64_t n_classes, int64_t ignore_index));

/// Checks that every value of the contiguous int64 `target` is a class in [0, n_classes)
/// (IndexError "[<op>] target <t> is out of range for <C> classes" otherwise).
EMBER_DECLARE_KERNEL(margin_check_targets_stub,
                     void(const Tensor& target, int64_t n_classes, const char* op));

/// From the contiguous int64 (N, C) `target` (each row a list of classes ended by the first
/// negative value), adds into the zeroed contiguous double (N, C) `counts` how often each class
/// is listed and sets `is_target` to 1 where a class is listed; IndexError for a class >= C.
EMBER_DECLARE_KERNEL(multilabel_margin_targets_stub,
                     void(const Tensor& target, Tensor& counts, Tensor& is_target, const char* op));

/// The CTC negative log likelihood of each sample (Note [CTC recursion] in
/// src/kernels/cpu/nn/loss.cpp). `log_probs` is a contiguous float or double (T, N, C) tensor;
/// `targets` is contiguous int64, padded (N, S) or the labels of every sample one after the
/// other; the lengths are already validated against the shapes. Raises IndexError for a label
/// outside [0, C). Writes `nll`, a contiguous double (N) tensor (0 for an infinite loss when
/// `zero_infinity`), and when `grad` is defined (a zeroed contiguous double (T, N, C) tensor)
/// d nll / d log_probs of every sample not zeroed.
EMBER_DECLARE_KERNEL(ctc_loss_stub,
                     void(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                          IntArrayRef target_lengths, int64_t blank, bool zero_infinity,
                          Tensor& nll, Tensor& grad));

}  // namespace ember
