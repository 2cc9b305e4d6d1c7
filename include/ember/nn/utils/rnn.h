#pragma once
/// Variable-length sequences for the recurrent layers (libtorch's torch::nn::utils::rnn):
/// PackedSequence and packing / padding. Every function is composed of differentiable ember
/// ops, so gradients flow through packing and padding.

#include <optional>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember::nn::utils::rnn {

/// The inverse of a permutation of 0..n-1; an undefined tensor stays undefined.
Tensor invert_permutation(const Tensor& permutation);

/// A time-major packed batch: `data` (sum of lengths, *) holds step 0 of every sequence, then
/// step 1 of those longer than 1, ...; batch_sizes (int64, CPU) counts the sequences at each
/// step. sorted_indices (undefined when the batch came sorted) is the order by decreasing
/// length; unsorted_indices its inverse.
class PackedSequence {
 public:
  explicit PackedSequence(Tensor data = {}, Tensor batch_sizes = {}, Tensor sorted_indices = {},
                          Tensor unsorted_indices = {});

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  /// The same sequence with its data converted (batch sizes stay int64 on the CPU).
  PackedSequence to(const TensorOptions& options) const;
  PackedSequence cpu() const;
  bool is_cuda() const { return data_.is_cuda(); }

 private:
  Tensor data_;
  Tensor batch_sizes_;
  Tensor sorted_indices_;
  Tensor unsorted_indices_;
};

/// Packs a padded batch (T, B, *) ((B, T, *) when batch_first) whose sequences have `lengths`
/// (1-D, CPU). With enforce_sorted the lengths must be decreasing; otherwise the batch is
/// sorted and the permutation kept in the result.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false,
                                    bool enforce_sorted = true);
/// The inverse of pack_padded_sequence: (padded batch, lengths as int64) in the original batch
/// order; total_length pads the time dim to that length (at least the longest sequence).
std::tuple<Tensor, Tensor> pad_packed_sequence(const PackedSequence& sequence,
                                               bool batch_first = false, double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);
/// Stacks tensors (L_i, *) into (max L, B, *) ((B, max L, *) when batch_first), padding with
/// padding_value; trailing dims must agree.
Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first = false,
                    double padding_value = 0.0);
/// The sequences of a padded batch cut back to their lengths.
std::vector<Tensor> unpad_sequence(const Tensor& padded_sequences, const Tensor& lengths,
                                   bool batch_first = false);
/// pad_sequence then pack_padded_sequence.
PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted = true);
/// The sequences of a PackedSequence, in their original order.
std::vector<Tensor> unpack_sequence(const PackedSequence& packed_sequences);

}  // namespace ember::nn::utils::rnn
