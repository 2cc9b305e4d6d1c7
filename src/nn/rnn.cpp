// Recurrent layers and cells: PyTorch 1.13's RNNBase / RNNCellBase (parameter layout and names,
// initialisation, unbatched inputs, default zero states and the shape checks) over the
// ember::lstm / gru / rnn_* ops.
#include "ember/nn/modules/rnn.h"

#include <cmath>

#include "ember/factory.h"
#include "ember/nn/init.h"
#include "ember/ops.h"
#include "ember/rnn.h"

namespace ember::nn {

namespace {
void uniform_all(const std::vector<Tensor>& ps, int64_t hidden) {
  double stdv = hidden > 0 ? 1.0 / std::sqrt(double(hidden)) : 0.0;
  for (const Tensor& p : ps) init::uniform_(p, -stdv, stdv);
}

std::string sizes_str(IntArrayRef s) { return detail::repr_tuple(s); }
}  // namespace

// ---- RNNImplBase ----

template <typename Derived>
RNNImplBase<Derived>::RNNImplBase(const detail::RNNOptionsBase& options_base)
    : options_base_(options_base) {
  RNNImplBase::reset();
}

template <typename Derived>
void RNNImplBase<Derived>::reset() {
  const auto& o = options_base_;
  EMBER_CHECK_VALUE(o.dropout >= 0 && o.dropout <= 1,
                    "[RNN] dropout should be a number in range "
                    "[0, 1] representing the probability of an element being zeroed, got ",
                    o.dropout);
  EMBER_CHECK_VALUE(o.input_size >= 0 && o.hidden_size >= 0,
                    "[RNN] input_size and hidden_size "
                    "must be non-negative, got ",
                    o.input_size, " and ", o.hidden_size);
  EMBER_CHECK_VALUE(o.num_layers >= 1, "[RNN] num_layers must be at least 1, got ", o.num_layers);
  EMBER_CHECK_VALUE(o.proj_size >= 0,
                    "[LSTM] proj_size should be a positive integer or zero to "
                    "disable projections");
  EMBER_CHECK_VALUE(o.proj_size < o.hidden_size || o.proj_size == 0,
                    "[LSTM] proj_size has to be smaller than hidden_size");
  flat_weights_.clear();
  int64_t dirs = o.bidirectional ? 2 : 1;
  int64_t gate_size = o.gates * o.hidden_size;
  int64_t real_hidden = o.proj_size > 0 ? o.proj_size : o.hidden_size;
  for (int64_t layer = 0; layer < o.num_layers; ++layer) {
    for (int64_t dir = 0; dir < dirs; ++dir) {
      int64_t layer_input = layer == 0 ? o.input_size : real_hidden * dirs;
      std::string suffix = "_l" + std::to_string(layer) + (dir == 1 ? "_reverse" : "");
      flat_weights_.push_back(
          this->register_parameter("weight_ih" + suffix, ember::empty({gate_size, layer_input})));
      flat_weights_.push_back(
          this->register_parameter("weight_hh" + suffix, ember::empty({gate_size, real_hidden})));
      if (o.bias) {
        flat_weights_.push_back(
            this->register_parameter("bias_ih" + suffix, ember::empty({gate_size})));
        flat_weights_.push_back(
            this->register_parameter("bias_hh" + suffix, ember::empty({gate_size})));
      }
      if (o.proj_size > 0) {
        flat_weights_.push_back(this->register_parameter(
            "weight_hr" + suffix, ember::empty({o.proj_size, o.hidden_size})));
      }
    }
  }
  reset_parameters();
}

template <typename Derived>
void RNNImplBase<Derived>::reset_parameters() {
  uniform_all(flat_weights_, options_base_.hidden_size);
}

template <typename Derived>
std::string RNNImplBase<Derived>::extra_repr() const {
  const auto& o = options_base_;
  std::string s = std::to_string(o.input_size) + ", " + std::to_string(o.hidden_size);
  if (o.proj_size != 0) s += ", proj_size=" + std::to_string(o.proj_size);
  if (o.num_layers != 1) s += ", num_layers=" + std::to_string(o.num_layers);
  if (!o.bias) s += ", bias=False";
  if (o.batch_first) s += ", batch_first=True";
  if (o.dropout != 0) s += ", dropout=" + detail::repr_double(o.dropout);
  if (o.bidirectional) s += ", bidirectional=True";
  return s;
}

// ---- the shared forward ----

namespace detail {
namespace {
const char* mode_name(RNNMode mode) {
  switch (mode) {
    case RNNMode::RNN_TANH:
    case RNNMode::RNN_RELU:
      return "RNN";
    case RNNMode::LSTM:
      return "LSTM";
    case RNNMode::GRU:
      return "GRU";
  }
  return "RNN";
}

// The whole-sequence op on a time-major batch x (T, B, I) with batched states.
std::tuple<Tensor, std::vector<Tensor>> run_op(RNNMode mode, const RNNOptionsBase& o,
                                               ArrayRef<Tensor> w, bool training, const Tensor& x,
                                               const std::vector<Tensor>& h) {
  switch (mode) {
    case RNNMode::LSTM: {
      auto [out, hn, cn] = ember::lstm(x, {h[0], h[1]}, w, o.bias, o.num_layers, o.dropout,
                                       training, o.bidirectional, false);
      return {out, {hn, cn}};
    }
    case RNNMode::GRU: {
      auto [out, hn] =
          ember::gru(x, h[0], w, o.bias, o.num_layers, o.dropout, training, o.bidirectional, false);
      return {out, {hn}};
    }
    case RNNMode::RNN_TANH:
    case RNNMode::RNN_RELU: {
      auto run = mode == RNNMode::RNN_RELU ? &ember::rnn_relu : &ember::rnn_tanh;
      auto [out, hn] =
          run(x, h[0], w, o.bias, o.num_layers, o.dropout, training, o.bidirectional, false);
      return {out, {hn}};
    }
  }
  EMBER_INTERNAL_ASSERT(false, "unknown RNN mode");
  return {};
}

// A packed batch (sorted by decreasing length) runs each group of equal-length sequences on its
// own, so padding never enters a recurrence and the reverse direction starts at each
// sequence's own end.
std::tuple<Tensor, std::vector<Tensor>> run_packed(RNNMode mode, const RNNOptionsBase& o,
                                                   ArrayRef<Tensor> w, bool training,
                                                   const Tensor& data,
                                                   const std::vector<int64_t>& sizes,
                                                   const std::vector<Tensor>& h) {
  int64_t batch = sizes[0];
  std::vector<int64_t> lengths(size_t(batch), 0);
  for (int64_t bs : sizes)
    for (int64_t b = 0; b < bs; ++b) ++lengths[size_t(b)];
  std::vector<Tensor> steps;
  int64_t offset = 0;
  for (int64_t bs : sizes) {
    steps.push_back(data.narrow(0, offset, bs));
    offset += bs;
  }
  struct Group {
    int64_t length;
    Tensor out;
  };
  std::vector<Group> groups;
  std::vector<std::vector<Tensor>> hidden_parts(h.size());
  for (int64_t b = 0; b < batch;) {
    int64_t e = b;
    while (e < batch && lengths[size_t(e)] == lengths[size_t(b)]) ++e;
    int64_t n = lengths[size_t(b)];
    std::vector<Tensor> seq;
    for (int64_t t = 0; t < n; ++t) seq.push_back(steps[size_t(t)].narrow(0, b, e - b));
    std::vector<Tensor> hg;
    for (const Tensor& s : h) hg.push_back(s.narrow(1, b, e - b));
    auto [out, hn] = run_op(mode, o, w, training, stack(seq), hg);
    groups.push_back({n, out});
    for (size_t i = 0; i < hn.size(); ++i) hidden_parts[i].push_back(hn[i]);
    b = e;
  }
  std::vector<Tensor> rows;
  for (size_t t = 0; t < sizes.size(); ++t) {
    std::vector<Tensor> parts;
    for (const Group& g : groups)
      if (g.length > int64_t(t)) parts.push_back(g.out.select(0, int64_t(t)));
    rows.push_back(cat(parts, 0));
  }
  std::vector<Tensor> hidden;
  for (const auto& parts : hidden_parts) hidden.push_back(cat(parts, 1));
  return {cat(rows, 0), hidden};
}
}  // namespace

std::tuple<Tensor, std::vector<Tensor>> rnn_forward(RNNMode mode, const RNNOptionsBase& o,
                                                    ArrayRef<Tensor> flat_weights, bool training,
                                                    const Tensor& input, const Tensor& batch_sizes,
                                                    const Tensor& sorted_indices,
                                                    const Tensor& unsorted_indices,
                                                    const std::vector<Tensor>& hx) {
  const char* name = mode_name(mode);
  const bool packed = batch_sizes.defined();
  const bool lstm = mode == RNNMode::LSTM;
  Tensor x = input;
  bool unbatched = false;
  std::vector<int64_t> sizes;
  int64_t batch = 0;
  if (packed) {
    EMBER_CHECK(input.dim() == 2, "[", name, "] input must have 2 dimensions, got ", input.dim());
    EMBER_CHECK(batch_sizes.dim() == 1 && batch_sizes.numel() > 0, "[", name,
                "] a packed input needs a non-empty 1-D batch_sizes, got ", batch_sizes.sizes());
    Tensor bs = batch_sizes.to(kLong).contiguous();
    sizes.assign(bs.data_ptr<int64_t>(), bs.data_ptr<int64_t>() + bs.numel());
    batch = sizes[0];
  } else {
    // PyTorch 1.13 (both front ends) unsqueezes any non-3-D input, then finds the wrong rank.
    EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "[", name,
                "] input must have 3 dimensions, got ", input.dim() + 1);
    unbatched = input.dim() == 2;
    if (unbatched) x = x.unsqueeze(o.batch_first ? 0 : 1);
    if (o.batch_first) x = x.transpose(0, 1);
    batch = x.size(1);
  }
  EMBER_CHECK(x.size(-1) == o.input_size, "[", name,
              "] input.size(-1) must be equal to input_size. Expected ", o.input_size, ", got ",
              x.size(-1));

  const size_t nstates = lstm ? 2 : 1;
  EMBER_CHECK(hx.empty() || hx.size() == nstates, "[", name, "] expected ", nstates,
              " hidden state tensors, got ", hx.size());
  const int64_t layers = o.num_layers * (o.bidirectional ? 2 : 1);
  const int64_t real_hidden = o.proj_size > 0 ? o.proj_size : o.hidden_size;
  const char* what = lstm ? "hx and cx" : "hx";
  std::vector<Tensor> h;
  for (size_t i = 0; i < nstates; ++i) {
    std::vector<int64_t> expected = {layers, batch, i == 0 ? real_hidden : o.hidden_size};
    if (hx.empty()) {
      h.push_back(ember::zeros(expected, x.options()));
      continue;
    }
    Tensor s = hx[i];
    if (!packed && unbatched) {
      EMBER_CHECK(s.dim() == 2, "[", name, "] For unbatched 2-D input, ", what,
                  " should also be 2-D but got ", s.dim(), "-D tensor");
      s = s.unsqueeze(1);
    } else if (!packed) {
      EMBER_CHECK(s.dim() == 3, "[", name, "] For batched 3-D input, ", what,
                  " should also be 3-D but got ", s.dim(), "-D tensor");
    }
    if (packed && sorted_indices.defined() && s.dim() == 3) s = s.index_select(1, sorted_indices);
    EMBER_CHECK(s.sizes().vec() == expected, "[", name, "] Expected hidden",
                lstm ? (i == 0 ? "[0]" : "[1]") : "", " size ", sizes_str(expected), ", got ",
                sizes_str(s.sizes()));
    h.push_back(s);
  }

  if (packed) {
    auto [out, hn] = run_packed(mode, o, flat_weights, training, x, sizes, h);
    if (unsorted_indices.defined())
      for (Tensor& s : hn) s = s.index_select(1, unsorted_indices);
    return {out, hn};
  }
  auto [out, hn] = run_op(mode, o, flat_weights, training, x, h);
  if (o.batch_first) out = out.transpose(0, 1);
  if (unbatched) {
    out = out.squeeze(o.batch_first ? 0 : 1);
    for (Tensor& s : hn) s = s.squeeze(1);
  }
  return {out, hn};
}
}  // namespace detail

// ---- RNN / LSTM / GRU ----

namespace {
detail::RNNOptionsBase base_of(const RNNOptions& o) {
  return {1,        o.input_size(),  o.hidden_size(), o.num_layers(),
          o.bias(), o.batch_first(), o.dropout(),     o.bidirectional(),
          0};
}
detail::RNNOptionsBase base_of(const LSTMOptions& o) {
  return {
      4,           o.input_size(),    o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(),
      o.dropout(), o.bidirectional(), o.proj_size()};
}
detail::RNNOptionsBase base_of(const GRUOptions& o) {
  return {3,        o.input_size(),  o.hidden_size(), o.num_layers(),
          o.bias(), o.batch_first(), o.dropout(),     o.bidirectional(),
          0};
}

std::vector<Tensor> states(const Tensor& hx) {
  return hx.defined() ? std::vector<Tensor>{hx} : std::vector<Tensor>{};
}
std::vector<Tensor> states(const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  if (!hx) return {};
  return {std::get<0>(*hx), std::get<1>(*hx)};
}
using utils::rnn::PackedSequence;
PackedSequence repack(const Tensor& data, const PackedSequence& like) {
  return PackedSequence(data, like.batch_sizes(), like.sorted_indices(), like.unsorted_indices());
}
}  // namespace

RNNImpl::RNNImpl(const RNNOptions& options_) : RNNImplBase(base_of(options_)), options(options_) {}

namespace {
detail::RNNMode rnn_mode(const RNNOptions& o) {
  return std::holds_alternative<enumtype::kReLU>(o.nonlinearity()) ? detail::RNNMode::RNN_RELU
                                                                   : detail::RNNMode::RNN_TANH;
}
}  // namespace

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, h] = detail::rnn_forward(rnn_mode(options), options_base_, flat_weights_,
                                      is_training(), input, {}, {}, {}, states(hx));
  return {out, h[0]};
}

std::tuple<PackedSequence, Tensor> RNNImpl::forward_with_packed_input(const PackedSequence& p,
                                                                      Tensor hx) {
  auto [out, h] =
      detail::rnn_forward(rnn_mode(options), options_base_, flat_weights_, is_training(), p.data(),
                          p.batch_sizes(), p.sorted_indices(), p.unsorted_indices(), states(hx));
  return {repack(out, p), h[0]};
}

LSTMImpl::LSTMImpl(const LSTMOptions& options_)
    : RNNImplBase(base_of(options_)), options(options_) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  auto [out, h] = detail::rnn_forward(detail::RNNMode::LSTM, options_base_, flat_weights_,
                                      is_training(), input, {}, {}, {}, states(hx_opt));
  return {out, {h[0], h[1]}};
}

std::tuple<PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const PackedSequence& p, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  auto [out, h] = detail::rnn_forward(detail::RNNMode::LSTM, options_base_, flat_weights_,
                                      is_training(), p.data(), p.batch_sizes(), p.sorted_indices(),
                                      p.unsorted_indices(), states(hx_opt));
  return {repack(out, p), {h[0], h[1]}};
}

GRUImpl::GRUImpl(const GRUOptions& options_) : RNNImplBase(base_of(options_)), options(options_) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, h] = detail::rnn_forward(detail::RNNMode::GRU, options_base_, flat_weights_,
                                      is_training(), input, {}, {}, {}, states(hx));
  return {out, h[0]};
}

std::tuple<PackedSequence, Tensor> GRUImpl::forward_with_packed_input(const PackedSequence& p,
                                                                      Tensor hx) {
  auto [out, h] = detail::rnn_forward(detail::RNNMode::GRU, options_base_, flat_weights_,
                                      is_training(), p.data(), p.batch_sizes(), p.sorted_indices(),
                                      p.unsorted_indices(), states(hx));
  return {repack(out, p), h[0]};
}

template class RNNImplBase<RNNImpl>;
template class RNNImplBase<LSTMImpl>;
template class RNNImplBase<GRUImpl>;

// ---- cells ----

template <typename Derived>
RNNCellImplBase<Derived>::RNNCellImplBase(int64_t input_size, int64_t hidden_size, bool bias,
                                          int64_t gates)
    : input_size_(input_size), hidden_size_(hidden_size), bias_(bias), gates_(gates) {
  RNNCellImplBase::reset();
}

template <typename Derived>
void RNNCellImplBase<Derived>::reset() {
  EMBER_CHECK_VALUE(input_size_ >= 0 && hidden_size_ >= 0,
                    "[RNNCell] input_size and "
                    "hidden_size must be non-negative, got ",
                    input_size_, " and ", hidden_size_);
  int64_t g = gates_ * hidden_size_;
  weight_ih = this->register_parameter("weight_ih", ember::empty({g, input_size_}));
  weight_hh = this->register_parameter("weight_hh", ember::empty({g, hidden_size_}));
  bias_ih = this->register_parameter("bias_ih", bias_ ? ember::empty({g}) : Tensor(), bias_);
  bias_hh = this->register_parameter("bias_hh", bias_ ? ember::empty({g}) : Tensor(), bias_);
  reset_parameters();
}

template <typename Derived>
void RNNCellImplBase<Derived>::reset_parameters() {
  std::vector<Tensor> ps = {weight_ih, weight_hh};
  if (bias_) {
    ps.push_back(bias_ih);
    ps.push_back(bias_hh);
  }
  uniform_all(ps, hidden_size_);
}

template <typename Derived>
std::string RNNCellImplBase<Derived>::extra_repr() const {
  std::string s = std::to_string(input_size_) + ", " + std::to_string(hidden_size_);
  if (!bias_) s += ", bias=False";
  return s;
}

template <typename Derived>
std::tuple<Tensor, Tensor, bool> RNNCellImplBase<Derived>::prepare(const Tensor& input,
                                                                   const Tensor& hx,
                                                                   const char* name) const {
  EMBER_CHECK_VALUE(input.dim() == 1 || input.dim() == 2, "[", name, "] ", name,
                    ": Expected input to be 1-D or 2-D but received ", input.dim(), "-D tensor");
  bool unbatched = input.dim() == 1;
  Tensor x = unbatched ? input.unsqueeze(0) : input;
  EMBER_CHECK(x.size(1) == input_size_, "[", name, "] input has inconsistent input_size: got ",
              x.size(1), " expected ", input_size_);
  if (!hx.defined()) return {x, ember::zeros({x.size(0), hidden_size_}, x.options()), unbatched};
  EMBER_CHECK(hx.dim() == input.dim(), "[", name, "] hidden state must be ", input.dim(),
              "-D like the input, got ", hx.dim(), "-D");
  Tensor h = unbatched ? hx.unsqueeze(0) : hx;
  EMBER_CHECK(h.size(0) == x.size(0), "[", name, "] Input batch size ", x.size(0),
              " doesn't match hidden0 batch size ", h.size(0));
  EMBER_CHECK(h.size(1) == hidden_size_, "[", name, "] hidden0 has inconsistent hidden_size: got ",
              h.size(1), ", expected ", hidden_size_);
  return {x, h, unbatched};
}

template class RNNCellImplBase<RNNCellImpl>;
template class RNNCellImplBase<LSTMCellImpl>;
template class RNNCellImplBase<GRUCellImpl>;

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 1), options(o) {}

std::string RNNCellImpl::extra_repr() const {
  std::string s = RNNCellImplBase::extra_repr();
  if (std::holds_alternative<enumtype::kReLU>(options.nonlinearity())) s += ", nonlinearity=relu";
  return s;
}

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  auto [x, h, unbatched] = prepare(input, hx, "RNNCell");
  Tensor out = std::holds_alternative<enumtype::kReLU>(options.nonlinearity())
                   ? rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                   : rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched ? out.squeeze(0) : out;
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 4), options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  Tensor h0 = hx_opt ? std::get<0>(*hx_opt) : Tensor();
  Tensor c0 = hx_opt ? std::get<1>(*hx_opt) : Tensor();
  auto [x, h, unbatched] = prepare(input, h0, "LSTMCell");
  auto [x2, c, unbatched2] = prepare(input, c0, "LSTMCell");
  (void)x2;
  (void)unbatched2;
  auto [hy, cy] = lstm_cell(x, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
  if (unbatched) return {hy.squeeze(0), cy.squeeze(0)};
  return {hy, cy};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 3), options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  auto [x, h, unbatched] = prepare(input, hx, "GRUCell");
  Tensor out = gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace ember::nn
