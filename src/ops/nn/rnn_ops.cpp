// Recurrent layers and cells (include/ember/rnn.h). See Note [Recurrent layers as composites].
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/blas.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/rnn.h"
#include "kernels/stubs/rnn.h"
#include "ops/call_path.h"

namespace ember {

// Note [Recurrent layers as composites]
// A layer is built from recorded ops, so reverse mode, double backward and forward mode come
// from the ops' own rules: one GEMM projects the input of every time step at once, a primitive
// `unbind` hands out the steps (its vjp stacks the step gradients in one copy, where a chain of
// select()s would scatter each into a zero tensor of the whole sequence), and each step is a
// GEMM with w_hh plus one fused gate op (lstm_fused_gates / gru_fused_gates). A fused gate op
// computes its vjp with a fused kernel from the activated gates it kept; when the backward is
// itself recorded (create_graph) it recomputes the gates with ember ops instead, so that its
// gradient is differentiable in every input. Its jvp is written with ember ops.

namespace {

using autograd::OpRecorder;
using autograd::variable_list;
using autograd::VjpCtx;

void check_rnn_tensor(const Tensor& t, const char* op, const char* what, ScalarType dt) {
  EMBER_CHECK(t.defined(), "[", op, "] ", what, " is undefined");
  EMBER_CHECK(t.is_cpu(), "[", op, "] only CPU tensors are supported, got ", what, " on ",
              t.device().str());
  EMBER_CHECK(t.dtype() == dt, "[", op, "] expected ", what, " to have dtype ", dtype_name(dt),
              " (the input's), got ", dtype_name(t.dtype()));
}

void check_rnn_dtype(const Tensor& input, const char* op) {
  EMBER_CHECK(input.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(input.dtype() == kFloat || input.dtype() == kDouble, "[", op,
              "] supports float32 and float64 tensors, got ", dtype_name(input.dtype()));
}

/// The steps of `x` along dim 0 as one recorded op; the vjp stacks the step gradients.
std::vector<Tensor> unbind_steps(const Tensor& x) {
  OpRecorder rec("unbind", {x});
  const Tensor base = x.detach();
  std::vector<Tensor> steps;
  steps.reserve(size_t(x.size(0)));
  for (int64_t t = 0; t < x.size(0); ++t) steps.push_back(base.select(0, t));
  if (rec) {
    rec.args(steps.size());
    rec.record(
        variable_list(steps.begin(), steps.end()),
        [](VjpCtx& c) { return variable_list{stack(c.grads, 0)}; }, {},
        [](autograd::JvpCtx& c) {
          const int64_t n = c.args().i(0);
          const Tensor t = c.tangent_or_zeros(0);
          variable_list r;
          for (int64_t i = 0; i < n; ++i) r.push_back(t.select(0, i));
          return r;
        });
  }
  return steps;
}

// ---- fused LSTM gates ----

/// The LSTM gate vjp with ember ops (differentiable): from the inputs, not the saved gates.
variable_list lstm_gates_vjp_ops(const Tensor& ig, const Tensor& hg, const Tensor& cx,
                                 const Tensor& ghy, const Tensor& gcy) {
  const std::vector<Tensor> ch = (ig + hg).chunk(4, 1);
  const Tensor i = sigmoid(ch[0]), f = sigmoid(ch[1]), g = tanh(ch[2]), o = sigmoid(ch[3]);
  const Tensor tc = tanh(f * cx + i * g);
  const Tensor dc = gcy + ghy * o * (1 - tc * tc);
  const Tensor dgates = cat(
      {dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g * g), ghy * tc * o * (1 - o)},
      1);
  return {dgates, dgates, dc * f};
}

// ---- fused GRU gates ----

variable_list gru_gates_vjp_ops(const Tensor& ig, const Tensor& hg, const Tensor& hx,
                                const Tensor& ghy) {
  const std::vector<Tensor> gi = ig.chunk(3, 1), gh = hg.chunk(3, 1);
  const Tensor r = sigmoid(gi[0] + gh[0]), z = sigmoid(gi[1] + gh[1]);
  const Tensor n = tanh(gi[2] + r * gh[2]);
  const Tensor dz = ghy * (hx - n) * z * (1 - z);
  const Tensor dn = ghy * (1 - z) * (1 - n * n);
  const Tensor dr = dn * gh[2] * r * (1 - r);
  return {cat({dr, dz, dn}, 1), cat({dr, dz, dn * r}, 1), ghy * z};
}

/// The LSTM gate tangents (hy, cy) with ember ops, from the primal inputs and outputs.
variable_list lstm_gates_jvp(autograd::JvpCtx& c) {
  const std::vector<Tensor> ch = (c.inputs[0] + c.inputs[1]).chunk(4, 1);
  const std::vector<Tensor> t = (c.tangent_or_zeros(0) + c.tangent_or_zeros(1)).chunk(4, 1);
  const Tensor i = sigmoid(ch[0]), f = sigmoid(ch[1]), g = tanh(ch[2]), o = sigmoid(ch[3]);
  const Tensor tcy = f * c.tangent_or_zeros(2) + (f * (1 - f) * t[1]) * c.inputs[2] +
                     (i * (1 - i) * t[0]) * g + i * ((1 - g * g) * t[2]);
  const Tensor tc = tanh(c.outputs[1]);
  return {o * (1 - o) * t[3] * tc + o * (1 - tc * tc) * tcy, tcy};
}

/// The GRU gate tangent with ember ops.
variable_list gru_gates_jvp(autograd::JvpCtx& c) {
  const std::vector<Tensor> gi = c.inputs[0].chunk(3, 1), gh = c.inputs[1].chunk(3, 1);
  const std::vector<Tensor> ti = c.tangent_or_zeros(0).chunk(3, 1),
                            th = c.tangent_or_zeros(1).chunk(3, 1);
  const Tensor r = sigmoid(gi[0] + gh[0]), z = sigmoid(gi[1] + gh[1]);
  const Tensor n = tanh(gi[2] + r * gh[2]);
  const Tensor tr = r * (1 - r) * (ti[0] + th[0]), tz = z * (1 - z) * (ti[1] + th[1]);
  const Tensor tn = (1 - n * n) * (ti[2] + tr * gh[2] + r * th[2]);
  return {(1 - z) * tn + tz * (c.inputs[2] - n) + z * c.tangent_or_zeros(2)};
}

/// Validates the operands of a fused gate op: [B, G·H] gates, [B, H] state, one float dtype.
void check_gates(const Tensor& ig, const Tensor& hg, const Tensor& state, int64_t G,
                 const char* op) {
  check_rnn_dtype(ig, op);
  check_rnn_tensor(ig, op, "igates", ig.dtype());
  check_rnn_tensor(hg, op, "hgates", ig.dtype());
  check_rnn_tensor(state, op, "the state", ig.dtype());
  EMBER_CHECK(state.dim() == 2, "[", op, "] expected a 2-D state [batch, hidden], got shape ",
              shape_str(state.sizes()));
  const int64_t B = state.size(0), H = state.size(1);
  EMBER_CHECK(ig.dim() == 2 && ig.size(0) == B && ig.size(1) == G * H && hg.sizes() == ig.sizes(),
              "[", op, "] expected igates and hgates of shape [", B, ", ", G * H,
              "] for a state of shape ", shape_str(state.sizes()), ", got ", shape_str(ig.sizes()),
              " and ", shape_str(hg.sizes()));
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_fused_gates(const Tensor& igates, const Tensor& hgates,
                                            const Tensor& cx) {
  EMBER_OP(lstm_fused_gates, igates, hgates, cx);
  const char* op = "lstm_fused_gates";
  check_gates(igates, hgates, cx, 4, op);
  const int64_t B = cx.size(0), H = cx.size(1);
  const ScalarType dt = igates.dtype();
  OpRecorder rec(op, {igates, hgates, cx});
  const Tensor ig = igates.contiguous(), hg = hgates.contiguous(), c0 = cx.contiguous();
  Tensor hy = empty_tensor({B, H}, dt), cy = empty_tensor({B, H}, dt);
  Tensor ws = rec.reverse() ? empty_tensor({B, 4 * H}, dt) : Tensor();
  lstm_gates_fwd_stub(ig.device().type(), ig, hg, c0, hy, cy, ws);
  if (rec) {
    rec.args(B, H);
    rec.record(
        variable_list{hy, cy},
        [](VjpCtx& c) -> variable_list {
          const int64_t B = c.args().i(0), H = c.args().i(1);
          const Tensor &ig = c.saved[0], &hg = c.saved[1], &cx = c.saved[2];
          const Tensor &ghy = c.grads[0], &gcy = c.grads[1];
          if (GradMode::is_enabled() || !c.saved[4].defined())
            return lstm_gates_vjp_ops(ig, hg, cx, ghy, gcy);
          const Tensor &cy = c.saved[3], &ws = c.saved[4];
          const ScalarType dt = ws.dtype();
          Tensor dg = empty_tensor({B, 4 * H}, dt), dcx = empty_tensor({B, H}, dt);
          const Tensor gh = ghy.to(dt).contiguous(), gc = gcy.to(dt).contiguous();
          const Tensor c0 = cx.contiguous();
          lstm_gates_bwd_stub(ws.device().type(), gh, gc, ws, c0, cy, dg, dcx);
          return {c.needs(0) ? dg : Tensor(), c.needs(1) ? dg : Tensor(),
                  c.needs(2) ? dcx : Tensor()};
        },
        {igates, hgates, cx, cy, ws}, lstm_gates_jvp);
  }
  return {hy, cy};
}

Tensor gru_fused_gates(const Tensor& igates, const Tensor& hgates, const Tensor& hx) {
  EMBER_OP(gru_fused_gates, igates, hgates, hx);
  const char* op = "gru_fused_gates";
  check_gates(igates, hgates, hx, 3, op);
  const int64_t B = hx.size(0), H = hx.size(1);
  const ScalarType dt = igates.dtype();
  OpRecorder rec(op, {igates, hgates, hx});
  const Tensor ig = igates.contiguous(), hg = hgates.contiguous(), h0 = hx.contiguous();
  Tensor hy = empty_tensor({B, H}, dt);
  Tensor ws = rec.reverse() ? empty_tensor({B, 4 * H}, dt) : Tensor();
  gru_gates_fwd_stub(ig.device().type(), ig, hg, h0, hy, ws);
  if (rec) {
    rec.args(B, H);
    rec.record(
        hy,
        [](VjpCtx& c) -> variable_list {
          const int64_t B = c.args().i(0), H = c.args().i(1);
          const Tensor &ig = c.saved[0], &hg = c.saved[1], &hx = c.saved[2];
          const Tensor& ghy = c.grads[0];
          if (GradMode::is_enabled() || !c.saved[3].defined())
            return gru_gates_vjp_ops(ig, hg, hx, ghy);
          const Tensor& ws = c.saved[3];
          const ScalarType dt = ws.dtype();
          Tensor dig = empty_tensor({B, 3 * H}, dt), dhg = empty_tensor({B, 3 * H}, dt),
                 dhx = empty_tensor({B, H}, dt);
          const Tensor g = ghy.to(dt).contiguous(), h0 = hx.contiguous();
          gru_gates_bwd_stub(ws.device().type(), g, ws, h0, dig, dhg, dhx);
          return {c.needs(0) ? dig : Tensor(), c.needs(1) ? dhg : Tensor(),
                  c.needs(2) ? dhx : Tensor()};
        },
        {igates, hgates, hx, ws}, gru_gates_jvp);
  }
  return hy;
}

// ---- cells ----

namespace {

enum class Mode { LSTM, GRU, RNN_TANH, RNN_RELU };

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::LSTM:
      return "lstm";
    case Mode::GRU:
      return "gru";
    case Mode::RNN_TANH:
      return "rnn_tanh";
    case Mode::RNN_RELU:
      return "rnn_relu";
  }
  return "rnn";
}

int64_t gate_count(Mode m) {
  switch (m) {
    case Mode::LSTM:
      return 4;
    case Mode::GRU:
      return 3;
    case Mode::RNN_TANH:
    case Mode::RNN_RELU:
      return 1;
  }
  return 1;
}

/// x·wᵀ + b (b optional).
Tensor linear_rows(const Tensor& x, const Tensor& w, const Tensor& b) {
  return b.defined() ? addmm(b, x, w.t()) : mm(x, w.t());
}

/// Checks the weights of one cell / layer direction: w_ih [G·H, in], w_hh [G·H, P], biases
/// [G·H], w_hr [P, H].
void check_weights(const char* op, int64_t G, int64_t H, int64_t P, int64_t in, const Tensor& w_ih,
                   const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, const Tensor& w_hr,
                   ScalarType dt) {
  check_rnn_tensor(w_ih, op, "w_ih", dt);
  check_rnn_tensor(w_hh, op, "w_hh", dt);
  EMBER_CHECK(w_ih.dim() == 2 && w_ih.size(0) == G * H, "[", op, "] expected w_ih of shape [",
              G * H, ", ", in, "], got ", shape_str(w_ih.sizes()));
  EMBER_CHECK(w_ih.size(1) == in, "[", op, "] input has inconsistent input_size: got ", in,
              " expected ", w_ih.size(1));
  EMBER_CHECK(w_hh.dim() == 2 && w_hh.size(0) == G * H && w_hh.size(1) == P, "[", op,
              "] expected w_hh of shape [", G * H, ", ", P, "], got ", shape_str(w_hh.sizes()));
  for (const Tensor* b : {&b_ih, &b_hh}) {
    if (!b->defined()) continue;
    check_rnn_tensor(*b, op, "a bias", dt);
    EMBER_CHECK(b->dim() == 1 && b->size(0) == G * H, "[", op, "] expected biases of shape [",
                G * H, "], got ", shape_str(b->sizes()));
  }
  if (w_hr.defined()) {
    check_rnn_tensor(w_hr, op, "w_hr", dt);
    EMBER_CHECK(w_hr.dim() == 2 && w_hr.size(0) == P && w_hr.size(1) == H, "[", op,
                "] expected w_hr of shape [", P, ", ", H, "], got ", shape_str(w_hr.sizes()));
  }
}

/// Validates a cell's input [B, I] or [I] against its hidden state [B, H] or [H].
void check_cell_input(const char* op, const Tensor& input, const Tensor& hx, const char* hname) {
  check_rnn_dtype(input, op);
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, "[", op,
              "] expected input to be 1-D or 2-D, got ", input.dim(), "-D");
  check_rnn_tensor(hx, op, hname, input.dtype());
  EMBER_CHECK(hx.dim() == input.dim(), "[", op, "] expected ", hname, " to be ", input.dim(),
              "-D for a ", input.dim(), "-D input, got ", hx.dim(), "-D");
  if (input.dim() == 2)
    EMBER_CHECK(input.size(0) == hx.size(0), "[", op, "] Input batch size ", input.size(0),
                " doesn't match ", hname, " batch size ", hx.size(0));
}

Tensor rnn_cell(Mode m, const Tensor& input, const Tensor& hx, const Tensor& w_ih,
                const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const char* op = m == Mode::GRU        ? "gru_cell"
                   : m == Mode::RNN_TANH ? "rnn_tanh_cell"
                                         : "rnn_relu_cell";
  check_cell_input(op, input, hx, "hx");
  const int64_t H = hx.size(-1);
  check_weights(op, gate_count(m), H, H, input.size(-1), w_ih, w_hh, b_ih, b_hh, {}, input.dtype());
  const bool unbatched = input.dim() == 1;
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  const Tensor h = unbatched ? hx.unsqueeze(0) : hx;
  Tensor hy;
  if (m == Mode::GRU) {
    hy = gru_fused_gates(linear_rows(x, w_ih, b_ih), linear_rows(h, w_hh, b_hh), h);
  } else {
    const Tensor pre = linear_rows(x, w_ih, b_ih) + linear_rows(h, w_hh, b_hh);
    hy = m == Mode::RNN_TANH ? tanh(pre) : relu(pre);
  }
  return unbatched ? hy.squeeze(0) : hy;
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, ArrayRef<Tensor> hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_OP_CAST(lstm_cell, lstm_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  const char* op = "lstm_cell";
  EMBER_CHECK(hx.size() == 2, "[", op, "] expected two hidden state tensors (h, c), got ",
              hx.size());
  check_cell_input(op, input, hx[0], "hx[0]");
  check_rnn_tensor(hx[1], op, "hx[1]", input.dtype());
  EMBER_CHECK(hx[1].sizes() == hx[0].sizes(), "[", op, "] expected hx[1] of shape ",
              shape_str(hx[0].sizes()), ", got ", shape_str(hx[1].sizes()));
  const int64_t H = hx[1].size(-1);
  check_weights(op, 4, H, H, input.size(-1), w_ih, w_hh, b_ih, b_hh, {}, input.dtype());
  const bool unbatched = input.dim() == 1;
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  const Tensor h = unbatched ? hx[0].unsqueeze(0) : hx[0];
  const Tensor c = unbatched ? hx[1].unsqueeze(0) : hx[1];
  auto [hy, cy] = lstm_fused_gates(linear_rows(x, w_ih, b_ih), linear_rows(h, w_hh, b_hh), c);
  if (unbatched) return {hy.squeeze(0), cy.squeeze(0)};
  return {hy, cy};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_OP_CAST(gru_cell, gru_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  return rnn_cell(Mode::GRU, input, hx, w_ih, w_hh, b_ih, b_hh);
}
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_OP_CAST(rnn_tanh_cell, rnn_tanh_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  return rnn_cell(Mode::RNN_TANH, input, hx, w_ih, w_hh, b_ih, b_hh);
}
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_OP_CAST(rnn_relu_cell, rnn_relu_cell, input, hx, w_ih, w_hh, b_ih, b_hh);
  return rnn_cell(Mode::RNN_RELU, input, hx, w_ih, w_hh, b_ih, b_hh);
}

// ---- layers ----

namespace {

struct DirParams {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

/// One direction of one layer over x [T, B, in] (time-major). h [B, P], c [B, H] (LSTM only)
/// are the initial state and receive the final one. Returns the outputs [T, B, P].
Tensor run_direction(Mode m, const Tensor& x, Tensor& h, Tensor& c, const DirParams& p,
                     bool reverse) {
  const int64_t T = x.size(0), B = x.size(1), in = x.size(2);
  const int64_t GH = p.w_ih.size(0);
  // The input projection of every step in one GEMM. LSTM and Elman fold both biases into it;
  // GRU keeps b_hh with the hidden projection (it sits inside r·(W_hn h + b_hn)).
  Tensor bias = p.b_ih;
  if (m != Mode::GRU && p.b_hh.defined()) bias = bias.defined() ? bias + p.b_hh : p.b_hh;
  const Tensor ig = linear_rows(x.reshape({T * B, in}), p.w_ih, bias).view({T, B, GH});
  const std::vector<Tensor> steps = unbind_steps(ig);
  const Tensor w_hh_t = p.w_hh.t();
  const Tensor w_hr_t = p.w_hr.defined() ? p.w_hr.t() : Tensor();
  std::vector<Tensor> outs(static_cast<size_t>(T));
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    const Tensor& gi = steps[size_t(t)];
    switch (m) {
      case Mode::LSTM: {
        auto [hy, cy] = lstm_fused_gates(gi, mm(h, w_hh_t), c);
        h = w_hr_t.defined() ? mm(hy, w_hr_t) : hy;
        c = cy;
        break;
      }
      case Mode::GRU: {
        const Tensor hg = p.b_hh.defined() ? addmm(p.b_hh, h, w_hh_t) : mm(h, w_hh_t);
        h = gru_fused_gates(gi, hg, h);
        break;
      }
      case Mode::RNN_TANH:
        h = tanh(addmm(gi, h, w_hh_t));
        break;
      case Mode::RNN_RELU:
        h = relu(addmm(gi, h, w_hh_t));
        break;
    }
    outs[size_t(t)] = h;
  }
  return stack(outs, 0);
}

/// Dropout with probability p on the outputs of a layer (training only).
Tensor layer_dropout(const Tensor& x, double p) {
  if (p >= 1) return x * 0;
  const Tensor mask = bernoulli(x.detach(), 1 - p);
  return x * mask * (1 / (1 - p));
}

/// The shared driver of lstm / gru / rnn_*: validation, unbatched and batch_first layouts,
/// layers and directions. `cx` is undefined except for LSTM. Returns (output, h_n, c_n).
std::tuple<Tensor, Tensor, Tensor> run_rnn(Mode m, const Tensor& input, const Tensor& hx,
                                           const Tensor& cx, ArrayRef<Tensor> params,
                                           bool has_biases, int64_t num_layers, double dropout,
                                           bool train, bool bidirectional, bool batch_first) {
  const char* op = mode_name(m);
  check_rnn_dtype(input, op);
  const ScalarType dt = input.dtype();
  check_rnn_tensor(input, op, "input", dt);
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "[", op,
              "] expected input to be 2-D (unbatched) or 3-D, got ", input.dim(), "-D with shape ",
              shape_str(input.sizes()));
  EMBER_CHECK(num_layers >= 1, "[", op, "] num_layers must be at least 1, got ", num_layers);
  EMBER_CHECK(dropout >= 0 && dropout <= 1, "[", op,
              "] dropout probability has to be between 0 and 1, but got ", dropout);
  const bool unbatched = input.dim() == 2;
  const int64_t D = bidirectional ? 2 : 1;
  check_rnn_tensor(hx, op, "hx", dt);
  if (m == Mode::LSTM) check_rnn_tensor(cx, op, "hx[1]", dt);
  const int64_t sdim = unbatched ? 2 : 3;
  EMBER_CHECK(hx.dim() == sdim && (!cx.defined() || cx.dim() == sdim), "[", op, "] expected ", sdim,
              "-D hidden state for a ", input.dim(), "-D input, got shape ", shape_str(hx.sizes()));
  // Time-major, with a batch dim.
  Tensor x = unbatched ? input.unsqueeze(1) : batch_first ? input.transpose(0, 1) : input;
  const Tensor h0 = unbatched ? hx.unsqueeze(1) : hx;
  const Tensor c0 = cx.defined() ? (unbatched ? cx.unsqueeze(1) : cx) : Tensor();
  const int64_t T = x.size(0), B = x.size(1);
  EMBER_CHECK(T > 0, "[", op, "] Expected sequence length to be larger than 0 in RNN");
  const int64_t P = h0.size(2), H = c0.defined() ? c0.size(2) : P;
  const bool proj = m == Mode::LSTM && P != H;
  EMBER_CHECK(h0.size(0) == num_layers * D && h0.size(1) == B, "[", op, "] Expected hidden size ",
              shape_str({num_layers * D, B, P}), ", got ", shape_str(h0.sizes()));
  if (c0.defined())
    EMBER_CHECK(c0.size(0) == num_layers * D && c0.size(1) == B, "[", op,
                "] Expected hidden[1] size ", shape_str({num_layers * D, B, H}), ", got ",
                shape_str(c0.sizes()));
  EMBER_CHECK(!proj || P < H, "[", op, "] proj_size ", P, " has to be smaller than hidden_size ",
              H);
  const int64_t per = (has_biases ? 4 : 2) + (proj ? 1 : 0);
  EMBER_CHECK(int64_t(params.size()) == num_layers * D * per, "[", op, "] expected ",
              num_layers * D * per, " parameter tensors (", num_layers, " layers x ", D,
              " directions x ", per, "), got ", params.size());

  std::vector<Tensor> hn, cn;
  for (int64_t l = 0; l < num_layers; ++l) {
    const int64_t in = x.size(2);
    std::vector<Tensor> dir_out;
    for (int64_t d = 0; d < D; ++d) {
      const size_t base = size_t((l * D + d) * per);
      DirParams p;
      p.w_ih = params[base];
      p.w_hh = params[base + 1];
      if (has_biases) {
        p.b_ih = params[base + 2];
        p.b_hh = params[base + 3];
      }
      if (proj) p.w_hr = params[base + (has_biases ? 4 : 2)];
      check_weights(op, gate_count(m), H, P, in, p.w_ih, p.w_hh, p.b_ih, p.b_hh, p.w_hr, dt);
      Tensor h = h0.select(0, l * D + d);
      Tensor c = c0.defined() ? c0.select(0, l * D + d) : Tensor();
      dir_out.push_back(run_direction(m, x, h, c, p, d == 1));
      hn.push_back(h);
      if (c.defined()) cn.push_back(c);
    }
    x = D == 1 ? dir_out[0] : cat(dir_out, 2);
    if (train && dropout > 0 && l + 1 < num_layers) x = layer_dropout(x, dropout);
  }
  Tensor out = unbatched ? x.squeeze(1) : batch_first ? x.transpose(0, 1) : x;
  Tensor h_n = stack(hn, 0), c_n = cn.empty() ? Tensor() : stack(cn, 0);
  if (unbatched) {
    h_n = h_n.squeeze(1);
    if (c_n.defined()) c_n = c_n.squeeze(1);
  }
  return {out, h_n, c_n};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, ArrayRef<Tensor> hx,
                                        ArrayRef<Tensor> params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train,
                                        bool bidirectional, bool batch_first) {
  EMBER_OP(lstm, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
           batch_first);
  EMBER_CHECK(hx.size() == 2, "[lstm] expected two hidden state tensors (h0, c0), got ", hx.size());
  return run_rnn(Mode::LSTM, input, hx[0], hx[1], params, has_biases, num_layers, dropout, train,
                 bidirectional, batch_first);
}

std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, ArrayRef<Tensor> params,
                               bool has_biases, int64_t num_layers, double dropout, bool train,
                               bool bidirectional, bool batch_first) {
  EMBER_OP(gru, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
           batch_first);
  auto [out, h, c] = run_rnn(Mode::GRU, input, hx, {}, params, has_biases, num_layers, dropout,
                             train, bidirectional, batch_first);
  return {out, h};
}

std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, ArrayRef<Tensor> params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  EMBER_OP(rnn_tanh, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
           batch_first);
  auto [out, h, c] = run_rnn(Mode::RNN_TANH, input, hx, {}, params, has_biases, num_layers, dropout,
                             train, bidirectional, batch_first);
  return {out, h};
}

std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, ArrayRef<Tensor> params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  EMBER_OP(rnn_relu, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
           batch_first);
  auto [out, h, c] = run_rnn(Mode::RNN_RELU, input, hx, {}, params, has_biases, num_layers, dropout,
                             train, bidirectional, batch_first);
  return {out, h};
}

}  // namespace ember
