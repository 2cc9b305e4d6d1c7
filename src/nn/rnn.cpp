// Recurrent layers and cells: PyTorch 1.13's RNNBase / RNNCellBase (parameter layout and names,
// initialisation, unbatched inputs, default zero states and the shape checks) over the
// ember::lstm / gru / rnn_* ops.
#include "ember/nn/modules/rnn.h"

#include <cmath>

#include "ember/factory.h"
#include "ember/nn/init.h"
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

template <typename Derived>
std::tuple<Tensor, bool> RNNImplBase<Derived>::prepare_input(const Tensor& input,
                                                             const char* name) const {
  const auto& o = options_base_;
  EMBER_CHECK_VALUE(input.dim() == 2 || input.dim() == 3, "[", name, "] ", name,
                    ": Expected input to be 2-D or 3-D but received ", input.dim(), "-D tensor");
  bool unbatched = input.dim() == 2;
  Tensor x = unbatched ? input.unsqueeze(o.batch_first ? 0 : 1) : input;
  EMBER_CHECK(x.size(2) == o.input_size, "[", name,
              "] input.size(-1) must be equal to "
              "input_size. Expected ",
              o.input_size, ", got ", x.size(2));
  return {x, unbatched};
}

template <typename Derived>
Tensor RNNImplBase<Derived>::prepare_hidden(const Tensor& input, const Tensor& hx, bool unbatched,
                                            int64_t size, const char* name,
                                            const char* what) const {
  const auto& o = options_base_;
  int64_t batch = input.size(o.batch_first ? 0 : 1);
  int64_t layers = o.num_layers * (o.bidirectional ? 2 : 1);
  std::vector<int64_t> expected = {layers, batch, size};
  if (!hx.defined()) return ember::zeros(expected, input.options());
  Tensor h = hx;
  if (unbatched) {
    EMBER_CHECK(hx.dim() == 2, "[", name, "] For unbatched 2-D input, ", what,
                " should also be 2-D but got ", hx.dim(), "-D tensor");
    h = hx.unsqueeze(1);
  } else {
    EMBER_CHECK(hx.dim() == 3, "[", name, "] For batched 3-D input, ", what,
                " should also be 3-D but got ", hx.dim(), "-D tensor");
  }
  EMBER_CHECK(h.sizes().vec() == expected, "[", name, "] Expected hidden size ",
              sizes_str(expected), ", got ", sizes_str(h.sizes()));
  return h;
}

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
}  // namespace

RNNImpl::RNNImpl(const RNNOptions& options_) : RNNImplBase(base_of(options_)), options(options_) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  const auto& o = options_base_;
  auto [x, unbatched] = prepare_input(input, "RNN");
  Tensor h = prepare_hidden(x, hx, unbatched, o.hidden_size, "RNN", "hx");
  bool relu = std::holds_alternative<enumtype::kReLU>(options.nonlinearity());
  auto run = relu ? &ember::rnn_relu : &ember::rnn_tanh;
  auto [out, hn] = run(x, h, flat_weights_, o.bias, o.num_layers, o.dropout, is_training(),
                       o.bidirectional, o.batch_first);
  if (unbatched) return {out.squeeze(o.batch_first ? 0 : 1), hn.squeeze(1)};
  return {out, hn};
}

LSTMImpl::LSTMImpl(const LSTMOptions& options_)
    : RNNImplBase(base_of(options_)), options(options_) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  const auto& o = options_base_;
  auto [x, unbatched] = prepare_input(input, "LSTM");
  int64_t real_hidden = o.proj_size > 0 ? o.proj_size : o.hidden_size;
  Tensor h0 = hx_opt ? std::get<0>(*hx_opt) : Tensor();
  Tensor c0 = hx_opt ? std::get<1>(*hx_opt) : Tensor();
  Tensor h = prepare_hidden(x, h0, unbatched, real_hidden, "LSTM", "hx and cx");
  Tensor c = prepare_hidden(x, c0, unbatched, o.hidden_size, "LSTM", "hx and cx");
  auto [out, hn, cn] = ember::lstm(x, {h, c}, flat_weights_, o.bias, o.num_layers, o.dropout,
                                   is_training(), o.bidirectional, o.batch_first);
  if (unbatched) return {out.squeeze(o.batch_first ? 0 : 1), {hn.squeeze(1), cn.squeeze(1)}};
  return {out, {hn, cn}};
}

GRUImpl::GRUImpl(const GRUOptions& options_) : RNNImplBase(base_of(options_)), options(options_) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  const auto& o = options_base_;
  auto [x, unbatched] = prepare_input(input, "GRU");
  Tensor h = prepare_hidden(x, hx, unbatched, o.hidden_size, "GRU", "hx");
  auto [out, hn] = ember::gru(x, h, flat_weights_, o.bias, o.num_layers, o.dropout, is_training(),
                              o.bidirectional, o.batch_first);
  if (unbatched) return {out.squeeze(o.batch_first ? 0 : 1), hn.squeeze(1)};
  return {out, hn};
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
