#pragma once
/// Recurrent layers (RNN, LSTM, GRU) and cells (RNNCell, LSTMCell, GRUCell) with PyTorch 1.13's
/// parameter names (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0,
/// ..._reverse), all drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

#include <optional>
#include <tuple>
#include <vector>

#include "ember/nn/cloneable.h"
#include "ember/nn/options/rnn.h"
#include "ember/nn/pimpl.h"
#include "ember/nn/utils/rnn.h"

namespace ember::nn {

namespace detail {
/// What the three layer types share: the gate count and the options they all have.
struct RNNOptionsBase {
  int64_t gates = 1;  ///< 4 (LSTM), 3 (GRU) or 1 (Elman RNN)
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;
  double dropout = 0.0;
  bool bidirectional = false;
  int64_t proj_size = 0;
};

/// Which recurrence a layer runs.
enum class RNNMode { RNN_TANH, RNN_RELU, LSTM, GRU };

/// The forward pass of RNN, LSTM and GRU, shared by both front ends. `input` is padded
/// ((T, B, I), (B, T, I) with batch_first, or unbatched (T, I)) when batch_sizes is undefined,
/// else the data of a PackedSequence (sum of lengths, I) with its batch_sizes and
/// sorted/unsorted indices. `hx` holds nothing (zeros), h_0, or h_0 and c_0 (LSTM), in the
/// caller's batch order. Returns (output, {h_n[, c_n]}); a packed input gives packed data.
std::tuple<Tensor, std::vector<Tensor>> rnn_forward(RNNMode mode, const RNNOptionsBase& options,
                                                    ArrayRef<Tensor> flat_weights, bool training,
                                                    const Tensor& input, const Tensor& batch_sizes,
                                                    const Tensor& sorted_indices,
                                                    const Tensor& unsorted_indices,
                                                    const std::vector<Tensor>& hx);
}  // namespace detail

/// The shared part of RNN, LSTM and GRU: parameter registration, initialisation, repr and the
/// input / hidden-state checks.
template <typename Derived>
class RNNImplBase : public Cloneable<Derived> {
 public:
  explicit RNNImplBase(const detail::RNNOptionsBase& options_base);
  void reset() override;
  /// Redraws every weight and bias from U(-1/sqrt(hidden), 1/sqrt(hidden)).
  void reset_parameters();
  std::string extra_repr() const override;
  /// Every parameter, layer by layer and direction by direction (the ops' `params` order).
  std::vector<Tensor> all_weights() const { return flat_weights_; }
  /// A no-op (weights are not kept in one buffer); kept for libtorch compatibility.
  void flatten_parameters() {}

 protected:
  detail::RNNOptionsBase options_base_;
  std::vector<Tensor> flat_weights_;
};

/// A multi-layer Elman RNN with tanh or relu.
class RNNImpl : public RNNImplBase<RNNImpl> {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  /// (output, h_n); input (T, B, I) ((B, T, I) when batch_first) or unbatched (T, I); hx
  /// (L * D, B, H), zeros when undefined.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  /// (packed output, h_n) of a PackedSequence; h_n in the input's original batch order.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  RNNOptions options;
};
EMBER_MODULE(RNN);

/// A multi-layer LSTM, with optional projections (proj_size).
class LSTMImpl : public RNNImplBase<LSTMImpl> {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size)
      : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  /// (output, (h_n, c_n)); hx_opt = (h_0 (L * D, B, proj_size or H), c_0 (L * D, B, H)).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);
  /// (packed output, (h_n, c_n)) of a PackedSequence.
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input,
      std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);

  LSTMOptions options;
};
EMBER_MODULE(LSTM);

/// A multi-layer GRU.
class GRUImpl : public RNNImplBase<GRUImpl> {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  GRUOptions options;
};
EMBER_MODULE(GRU);

/// The shared part of the cells: weight_ih (G * H, I), weight_hh (G * H, H), bias_ih, bias_hh.
template <typename Derived>
class RNNCellImplBase : public Cloneable<Derived> {
 public:
  RNNCellImplBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t gates);
  void reset() override;
  void reset_parameters();
  std::string extra_repr() const override;

  Tensor weight_ih;
  Tensor weight_hh;
  Tensor bias_ih;  ///< undefined without bias
  Tensor bias_hh;

 protected:
  /// Batched input and a checked (batched) hidden state; zeros when `hx` is undefined.
  std::tuple<Tensor, Tensor, bool> prepare(const Tensor& input, const Tensor& hx,
                                           const char* name) const;

  int64_t input_size_;
  int64_t hidden_size_;
  bool bias_;
  int64_t gates_;
};

class RNNCellImpl : public RNNCellImplBase<RNNCellImpl> {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size)
      : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  std::string extra_repr() const override;
  /// h' of (B, H) (or (H) for an unbatched (I) input).
  Tensor forward(const Tensor& input, Tensor hx = {});

  RNNCellOptions options;
};
EMBER_MODULE(RNNCell);

class LSTMCellImpl : public RNNCellImplBase<LSTMCellImpl> {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size)
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  /// (h', c').
  std::tuple<Tensor, Tensor> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);

  LSTMCellOptions options;
};
EMBER_MODULE(LSTMCell);

class GRUCellImpl : public RNNCellImplBase<GRUCellImpl> {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size)
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});

  GRUCellOptions options;
};
EMBER_MODULE(GRUCell);

}  // namespace ember::nn
