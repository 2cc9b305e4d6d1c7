#pragma once
/// Recurrent layers and cells with libtorch's ATen signatures (rnn_ops.cpp): lstm, gru,
/// rnn_tanh, rnn_relu over whole sequences, and their one-step cells.
///
/// Weights follow torch's layout: for a layer with hidden size H, w_ih is [G*H, I], w_hh is
/// [G*H, P] and the biases [G*H], with G = 4 (LSTM gates i, f, g, o), 3 (GRU gates r, z, n) or
/// 1 (Elman RNN); P = H except for an LSTM with projections, whose w_hr is [P, H]. Float32 and
/// float64 on CPU; every input must share the input's dtype. All ops are differentiable
/// (twice, and in forward mode).

#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// One LSTM step: gates = input·w_ihᵀ + b_ih + hx·w_hhᵀ + b_hh split into (i, f, g, o);
/// cy = σ(f)·cx + σ(i)·tanh(g), hy = σ(o)·tanh(cy). input is [B, I] or unbatched [I]; hx = {h, c}
/// of [B, H] (or [H]). Returns (hy, cy). Biases may be undefined (no bias).
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, ArrayRef<Tensor> hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {},
                                     const Tensor& b_hh = {});
/// One GRU step (torch's formula: n = tanh(W_in x + b_in + r·(W_hn h + b_hn)),
/// hy = (1 - z)·n + z·hx). Returns hy of hx's shape.
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// One Elman step: hy = tanh(input·w_ihᵀ + b_ih + hx·w_hhᵀ + b_hh).
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
/// One Elman step with relu instead of tanh.
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

/// A multi-layer LSTM over a sequence. input: [T, B, I] ([B, T, I] when batch_first) or
/// unbatched [T, I]; hx = {h0, c0} with h0 [L·D, B, P] and c0 [L·D, B, H] (no batch dim when
/// unbatched), D = 2 when bidirectional. params: per layer, per direction (forward first),
/// w_ih, w_hh[, b_ih, b_hh][, w_hr]; projections are used when h0 and c0 differ in their last
/// dim. Between layers, dropout with probability `dropout` when `train`. Returns (output
/// [T, B, D·P] (batch_first: [B, T, D·P]), h_n, c_n). T must be > 0 (RuntimeError).
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, ArrayRef<Tensor> hx,
                                        ArrayRef<Tensor> params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional, bool batch_first);
/// A multi-layer GRU; hx is h0 [L·D, B, H]. Returns (output, h_n). Layout as lstm.
std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, ArrayRef<Tensor> params,
                               bool has_biases, int64_t num_layers, double dropout, bool train,
                               bool bidirectional, bool batch_first);
/// A multi-layer Elman RNN with tanh. Returns (output, h_n). Layout as lstm.
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, ArrayRef<Tensor> params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first);
/// A multi-layer Elman RNN with relu. Returns (output, h_n). Layout as lstm.
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, ArrayRef<Tensor> params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first);

/// The fused LSTM gate step: gates = igates + hgates ([B, 4H], biases already added) split into
/// (i, f, g, o); returns (σ(o)·tanh(cy), cy) with cy = σ(f)·cx + σ(i)·tanh(g). Differentiable in
/// all three inputs. Building block of lstm / lstm_cell.
std::tuple<Tensor, Tensor> lstm_fused_gates(const Tensor& igates, const Tensor& hgates,
                                            const Tensor& cx);
/// The fused GRU gate step: igates = x·w_ihᵀ + b_ih and hgates = h·w_hhᵀ + b_hh ([B, 3H]);
/// returns hy of hx's shape [B, H]. Building block of gru / gru_cell.
Tensor gru_fused_gates(const Tensor& igates, const Tensor& hgates, const Tensor& hx);

}  // namespace ember
