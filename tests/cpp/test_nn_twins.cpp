// The C++ twins of what the Python front end had alone: packed sequences
// (ember::nn::utils::rnn) by hand, RNN / LSTM / GRU on a PackedSequence against each sequence
// run alone, ChannelShuffle by hand, MultiheadAttention against its formula written per head,
// the functional linear / one_hot names and the nn warning handler. The Python suite compares
// the same paths with PyTorch 1.13.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;
namespace F = ember::nn::functional;
namespace R = ember::nn::utils::rnn;

namespace {

void expect_close(const Tensor& a, const Tensor& b, double tol = 1e-12) {
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec());
  if (a.numel() == 0) return;
  EXPECT_LE((a.to(kDouble) - b.to(kDouble)).abs().max().item<double>(), tol);
}

std::vector<int64_t> longs(const Tensor& t) {
  Tensor c = t.to(kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// Sequence i of length n holds 10 * i + t at step t (one feature).
Tensor seq(int64_t i, int64_t n) {
  return (arange(0, n, TensorOptions().dtype(kDouble)) + 10.0 * double(i)).unsqueeze(1);
}

}  // namespace

TEST(NnPacked, PackPadRoundTripByHand) {
  // Lengths 2, 3, 1 (unsorted): sorted order is 1, 0, 2.
  std::vector<Tensor> seqs = {seq(0, 2), seq(1, 3), seq(2, 1)};
  R::PackedSequence p = R::pack_sequence(seqs, /*enforce_sorted=*/false);
  EXPECT_EQ(longs(p.batch_sizes()), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(longs(p.sorted_indices()), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(longs(p.unsorted_indices()), (std::vector<int64_t>{1, 0, 2}));
  // Step 0 of seqs 1, 0, 2; step 1 of seqs 1, 0; step 2 of seq 1.
  expect_close(p.data().squeeze(1), tensor(std::vector<double>{10, 0, 20, 11, 1, 12}));

  auto [padded, lengths] = R::pad_packed_sequence(p, /*batch_first=*/true, -1.0);
  EXPECT_EQ(longs(lengths), (std::vector<int64_t>{2, 3, 1}));
  expect_close(padded.squeeze(2),
               tensor(std::vector<double>{0, 1, -1, 10, 11, 12, 20, -1, -1}).reshape({3, 3}));
  std::vector<Tensor> back = R::unpack_sequence(p);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) expect_close(back[i], seqs[i]);

  Tensor ps = R::pad_sequence(seqs, /*batch_first=*/false, 7.0);
  EXPECT_EQ(ps.sizes().vec(), (std::vector<int64_t>{3, 3, 1}));
  EXPECT_EQ(ps.select(1, 2).squeeze(1).to(kLong).sum().item<int64_t>(), 20 + 7 + 7);
  auto total = std::get<0>(R::pad_packed_sequence(p, false, 0.0, 5));
  EXPECT_EQ(total.size(0), 5);
}

TEST(NnPacked, GradientReachesThePaddedInput) {
  Tensor x = arange(0, 6, TensorOptions().dtype(kDouble)).reshape({3, 2, 1}).requires_grad_();
  R::PackedSequence p = R::pack_padded_sequence(x, tensor(std::vector<int64_t>{3, 1}));
  p.data().sum().backward();
  // Only the steps inside each sequence receive a gradient.
  expect_close(x.grad().squeeze(2), tensor(std::vector<double>{1, 1, 1, 0, 1, 0}).reshape({3, 2}));
}

TEST(NnPacked, BadInputThrows) {
  Tensor x = zeros({3, 2, 1});
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{1, 3})), Error);
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{3})), Error);
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{4, 1})), Error);
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{3, 0})), Error);
  EXPECT_THROW(R::pad_sequence(std::vector<Tensor>{}), Error);
  EXPECT_THROW(R::pad_sequence(std::vector<Tensor>{zeros({2, 3}), zeros({2, 4})}), Error);
  R::PackedSequence p = R::pack_padded_sequence(x, tensor(std::vector<int64_t>{3, 1}));
  EXPECT_THROW(R::pad_packed_sequence(p, false, 0.0, 2), ValueError);
}

namespace {
// A packed batch through `m` must equal each sequence run alone (the padded path).
template <typename Module, typename Run>
void check_packed_against_single(Module m, Run run) {
  m->to(kDouble);
  std::vector<int64_t> lens = {2, 4, 3};
  std::vector<Tensor> seqs;
  for (size_t i = 0; i < lens.size(); ++i)
    seqs.push_back(randn({lens[i], 3}, TensorOptions().dtype(kDouble)));
  R::PackedSequence p = R::pack_sequence(seqs, /*enforce_sorted=*/false);
  auto [out, h] = run(m, p);
  auto [padded, lengths] = R::pad_packed_sequence(out, /*batch_first=*/true);
  for (size_t i = 0; i < lens.size(); ++i) {
    auto [o1, h1] = m->forward(seqs[i].unsqueeze(1));
    expect_close(padded.select(0, int64_t(i)).narrow(0, 0, lens[i]), o1.squeeze(1), 1e-12);
    expect_close(h.select(1, int64_t(i)), h1.select(1, 0), 1e-12);
  }
}
}  // namespace

TEST(NnPacked, RnnLayersOnPackedSequences) {
  check_packed_against_single(
      nn::RNN(nn::RNNOptions(3, 4).num_layers(2).bidirectional(true)),
      [](nn::RNN& m, const R::PackedSequence& p) { return m->forward_with_packed_input(p); });
  check_packed_against_single(
      nn::GRU(nn::GRUOptions(3, 4).bidirectional(true)),
      [](nn::GRU& m, const R::PackedSequence& p) { return m->forward_with_packed_input(p); });
  // LSTM: compare h_n; c_n follows the same path.
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).proj_size(2));
  lstm->to(kDouble);
  std::vector<Tensor> seqs = {randn({3, 3}, TensorOptions().dtype(kDouble)),
                              randn({1, 3}, TensorOptions().dtype(kDouble))};
  auto [out, hc] = lstm->forward_with_packed_input(R::pack_sequence(seqs));
  for (size_t i = 0; i < seqs.size(); ++i) {
    auto [o1, hc1] = lstm->forward(seqs[i].unsqueeze(1));
    expect_close(std::get<0>(hc).select(1, int64_t(i)), std::get<0>(hc1).select(1, 0));
    expect_close(std::get<1>(hc).select(1, int64_t(i)), std::get<1>(hc1).select(1, 0));
  }
  EXPECT_EQ(out.data().sizes().vec(), (std::vector<int64_t>{4, 2}));
  // A hidden state of the wrong batch size is an error.
  EXPECT_THROW(lstm->forward_with_packed_input(
                   R::pack_sequence(seqs),
                   std::make_tuple(zeros({2, 1, 2}, kDouble), zeros({2, 1, 5}, kDouble))),
               Error);
}

TEST(NnPacked, ChannelShuffleByHand) {
  Tensor x = arange(0, 6, TensorOptions().dtype(kDouble)).reshape({1, 6, 1});
  nn::ChannelShuffle m(2);
  // Groups {0, 1, 2} and {3, 4, 5} interleave.
  expect_close(m(x).flatten(), tensor(std::vector<double>{0, 3, 1, 4, 2, 5}));
  expect_close(F::channel_shuffle(x, F::ChannelShuffleFuncOptions(3)).flatten(),
               tensor(std::vector<double>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(m->extra_repr(), "groups=2");
  EXPECT_THROW(F::channel_shuffle(x, F::ChannelShuffleFuncOptions(4)), Error);
  EXPECT_THROW(F::channel_shuffle(x, F::ChannelShuffleFuncOptions(0)), Error);
  EXPECT_THROW(F::channel_shuffle(x.flatten(), F::ChannelShuffleFuncOptions(2)), Error);
}

TEST(NnPacked, FunctionalNamesAndWarnings) {
  Tensor x = randn({2, 3}, TensorOptions().dtype(kDouble));
  Tensor w = randn({4, 3}, TensorOptions().dtype(kDouble));
  Tensor b = randn({4}, TensorOptions().dtype(kDouble));
  expect_close(F::linear(x, w, b), matmul(x, w.t()) + b);
  expect_close(F::one_hot(tensor(std::vector<int64_t>{2, 0}), 3).to(kDouble),
               tensor(std::vector<double>{0, 0, 1, 1, 0, 0}).reshape({2, 3}));

  static std::vector<std::string> seen;
  seen.clear();
  auto previous = nn::set_warning_handler([](const std::string& m) { seen.push_back(m); });
  F::mse_loss(x, x.select(0, 0));  // broadcast target: warns
  F::mse_loss(x, x);               // same size: silent
  nn::set_warning_handler(previous);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("target size"), std::string::npos);
}

TEST(NnAttention, MatchesPerHeadFormula) {
  const int64_t L = 3, S = 4, N = 2, E = 6, H = 2, D = E / H;
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(E, H));
  m->to(kDouble);
  {
    NoGradGuard g;
    m->in_proj_bias.copy_(randn({3 * E}, TensorOptions().dtype(kDouble)));
    m->out_proj->bias.copy_(randn({E}, TensorOptions().dtype(kDouble)));
  }
  Tensor q = randn({L, N, E}, TensorOptions().dtype(kDouble));
  Tensor k = randn({S, N, E}, TensorOptions().dtype(kDouble));
  Tensor v = randn({S, N, E}, TensorOptions().dtype(kDouble));
  Tensor mask = zeros({L, S}, TensorOptions().dtype(kBool));
  mask.select(1, 3).fill_(true);  // nobody attends to key 3
  auto [out, weights] = m->forward(q, k, v, Tensor(), true, mask, /*average_attn_weights=*/false);
  ASSERT_EQ(out.sizes().vec(), (std::vector<int64_t>{L, N, E}));
  ASSERT_EQ(weights.sizes().vec(), (std::vector<int64_t>{N, H, L, S}));

  auto w = m->in_proj_weight.chunk(3);
  auto b = m->in_proj_bias.chunk(3);
  Tensor heads_out = zeros({L, N, E}, TensorOptions().dtype(kDouble));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t h = 0; h < H; ++h) {
      auto rows = [&](const Tensor& x, int64_t i) {
        Tensor proj = matmul(x.select(1, n), w[size_t(i)].t()) + b[size_t(i)];
        return proj.narrow(1, h * D, D);
      };
      Tensor qh = rows(q, 0), kh = rows(k, 1), vh = rows(v, 2);
      Tensor scores = matmul(qh, kh.t()) / std::sqrt(double(D));
      scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
      Tensor attn = softmax(scores, -1);
      expect_close(weights.select(0, n).select(0, h), attn, 1e-12);
      heads_out.select(1, n).narrow(1, h * D, D).copy_(matmul(attn, vh));
    }
  }
  Tensor want = matmul(heads_out, m->out_proj->weight.t()) + m->out_proj->bias;
  expect_close(out, want, 1e-12);
  EXPECT_EQ(weights.select(3, 3).abs().max().item<double>(), 0.0);

  // batch_first and unbatched inputs give the same values.
  nn::MultiheadAttention bf(nn::MultiheadAttentionOptions(E, H).batch_first(true));
  bf->to(kDouble);
  bf->load_state_dict(m->state_dict());
  expect_close(std::get<0>(bf->forward(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1),
                                       Tensor(), true, mask))
                   .transpose(0, 1),
               out, 1e-12);
  expect_close(
      std::get<0>(m->forward(q.select(1, 0), k.select(1, 0), v.select(1, 0), Tensor(), true, mask)),
      out.select(1, 0), 1e-12);
  // Shape assertions are AssertionError (a ValueError in C++).
  EXPECT_THROW(m(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)), nn::AssertionError);
  EXPECT_THROW(nn::MultiheadAttention(nn::MultiheadAttentionOptions(E, 4)), ValueError);
  EXPECT_THROW(m->forward(q, k, v, Tensor(), true, zeros({5, 5}, TensorOptions().dtype(kBool))),
               Error);
}
