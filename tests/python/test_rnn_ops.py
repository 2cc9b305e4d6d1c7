"""Recurrent layers and cells (ember._C._nn.lstm / gru / rnn_tanh / rnn_relu and the *_cell ops)
against torch 1.13's torch._VF ops and torch.*_cell, on the weights of torch's modules copied
into ember: outputs, final states and the gradients of every input, weight and initial state;
gradcheck / gradgradcheck in float64; bad shapes raise RuntimeError as torch does.
"""

import numpy as np
import pytest
import torch

import ember
from ember import _C

NN = _C._nn
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}


def E(t, requires_grad=False):
    """torch -> ember (a copy), optionally a leaf that requires grad."""
    r = ember.from_numpy(t.detach().numpy().copy())
    return r.requires_grad_() if requires_grad else r


def close(got, want, dtype, scale=1.0):
    rtol, atol = TOL[dtype]
    g = got.detach().numpy() if not isinstance(got, np.ndarray) else got
    w = want.detach().numpy() if not isinstance(want, np.ndarray) else want
    assert g.shape == w.shape, (g.shape, w.shape)
    np.testing.assert_allclose(g, w, rtol=rtol * scale, atol=atol * scale)


def tdt(dtype):
    return getattr(torch, dtype)


MODULES = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn_tanh": torch.nn.RNN,
           "rnn_relu": torch.nn.RNN}


def make_module(mode, I, H, L, bidir, bias, proj, dtype, batch_first=False):
    kw = dict(num_layers=L, bidirectional=bidir, bias=bias, batch_first=batch_first)
    if mode == "lstm" and proj:
        kw["proj_size"] = proj
    if mode.startswith("rnn"):
        kw["nonlinearity"] = mode[4:]
    return MODULES[mode](I, H, **kw).to(tdt(dtype))


def run_pair(mode, m, x, hx, train=False, dropout=0.0):
    """Runs torch._VF.<mode> and ember's op on the same data; returns (torch outs, ember outs,
    ember leaves, torch leaves) with every leaf requiring grad."""
    tw = [w.detach().clone().requires_grad_() for w in m._flat_weights]
    ew = [E(w, True) for w in tw]
    tx = x.clone().requires_grad_()
    ex = E(x, True)
    th = [h.clone().requires_grad_() for h in hx]
    eh = [E(h, True) for h in th]
    args = (m.bias, m.num_layers, dropout, train, m.bidirectional, m.batch_first)
    if mode == "lstm":
        tout = getattr(torch._VF, mode)(tx, tuple(th), tw, *args)
        eout = NN.lstm(ex, eh, ew, *args)
    else:
        tout = getattr(torch._VF, mode)(tx, th[0], tw, *args)
        eout = getattr(NN, mode)(ex, eh[0], ew, *args)
    return list(tout), list(eout), [ex] + eh + ew, [tx] + th + tw


def check_layer(mode, m, x, hx, dtype):
    tout, eout, eleaves, tleaves = run_pair(mode, m, x, hx)
    assert len(tout) == len(eout)
    for a, b in zip(eout, tout):
        close(a, b, dtype)
    # Gradients for random output gradients.
    rng = np.random.default_rng(1)
    gs = [rng.standard_normal(tuple(t.shape)) for t in tout]
    tloss = sum((t * torch.from_numpy(g).to(t.dtype)).sum() for t, g in zip(tout, gs))
    eloss = None
    for t, g in zip(eout, gs):
        term = (t * ember.from_numpy(g.astype(np.dtype(dtype)))).sum()
        eloss = term if eloss is None else eloss + term
    tloss.backward()
    eloss.backward()
    for a, b in zip(eleaves, tleaves):
        close(a.grad, b.grad, dtype, scale=10.0)


def hidden(mode, L, D, B, H, proj, dtype, unbatched=False):
    shape = (L * D, H) if unbatched else (L * D, B, H)
    P = proj or H
    hshape = (L * D, P) if unbatched else (L * D, B, P)
    h = torch.randn(*hshape, dtype=tdt(dtype))
    if mode == "lstm":
        return [h, torch.randn(*shape, dtype=tdt(dtype))]
    return [h]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("L,bidir,bias", [(1, False, True), (2, True, True), (2, False, False)])
def test_layer_matches_torch(mode, dtype, L, bidir, bias):
    torch.manual_seed(0)
    T, B, I, H = 5, 3, 4, 6
    m = make_module(mode, I, H, L, bidir, bias, 0, dtype)
    x = torch.randn(T, B, I, dtype=tdt(dtype))
    check_layer(mode, m, x, hidden(mode, L, 2 if bidir else 1, B, H, 0, dtype), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("L,bidir,bias", [(1, False, True), (2, True, True), (2, True, False)])
def test_lstm_proj_size(dtype, L, bidir, bias):
    torch.manual_seed(1)
    T, B, I, H, P = 4, 2, 3, 5, 2
    m = make_module("lstm", I, H, L, bidir, bias, P, dtype)
    x = torch.randn(T, B, I, dtype=tdt(dtype))
    check_layer("lstm", m, x, hidden("lstm", L, 2 if bidir else 1, B, H, P, dtype), dtype)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_batch_first_and_strided_input(mode):
    torch.manual_seed(2)
    T, B, I, H = 4, 3, 5, 4
    m = make_module(mode, I, H, 2, True, True, 0, "float64", batch_first=True)
    # A non-contiguous input: every other column of a wider tensor.
    x = torch.randn(B, T, 2 * I, dtype=torch.float64)[:, :, ::2]
    assert not x.is_contiguous()
    check_layer(mode, m, x, hidden(mode, 2, 2, B, H, 0, "float64"), "float64")


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_relu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_matches_module(mode, batch_first):
    # torch._VF has no unbatched form; nn modules add the batch dim, as ember's ops do.
    torch.manual_seed(3)
    T, I, H = 6, 3, 4
    m = make_module(mode, I, H, 2, True, True, 0, "float64", batch_first=batch_first)
    x = torch.randn(T, I, dtype=torch.float64)
    hx = hidden(mode, 2, 2, 1, H, 0, "float64", unbatched=True)
    tout = m(x, tuple(hx) if mode == "lstm" else hx[0])
    tflat = [tout[0]] + (list(tout[1]) if mode == "lstm" else [tout[1]])
    ew = [E(w) for w in m._flat_weights]
    args = (True, 2, 0.0, False, True, batch_first)
    if mode == "lstm":
        eflat = NN.lstm(E(x), [E(h) for h in hx], ew, *args)
    else:
        eflat = getattr(NN, mode)(E(x), E(hx[0]), ew, *args)
    assert len(eflat) == len(tflat)
    for a, b in zip(eflat, tflat):
        close(a, b, "float64")


def test_lstm_proj_unbatched():
    torch.manual_seed(4)
    m = torch.nn.LSTM(3, 5, proj_size=2, num_layers=2).double()
    x = torch.randn(4, 3, dtype=torch.float64)
    h0, c0 = torch.randn(2, 2, dtype=torch.float64), torch.randn(2, 5, dtype=torch.float64)
    out, (h, c) = m(x, (h0, c0))
    eo, eh, ec = NN.lstm(E(x), [E(h0), E(c0)], [E(w) for w in m._flat_weights], True, 2, 0.0,
                         False, False, False)
    for a, b in zip((eo, eh, ec), (out, h, c)):
        close(a, b, "float64")


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_zero_batch(mode):
    torch.manual_seed(5)
    m = make_module(mode, 3, 4, 2, True, True, 0, "float32")
    x = torch.randn(5, 0, 3)
    tout, eout, eleaves, tleaves = run_pair(mode, m, x, hidden(mode, 2, 2, 0, 4, 0, "float32"))
    for a, b in zip(eout, tout):
        assert tuple(a.shape) == tuple(b.shape)
    sum(t.sum() for t in tout).backward()
    sum(t.sum() for t in eout).backward()
    for a, b in zip(eleaves, tleaves):  # empty, or zeros for the weights
        close(a.grad, b.grad, "float32")


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_zero_length_sequence_raises(mode):
    m = make_module(mode, 3, 4, 1, False, True, 0, "float32")
    x = torch.randn(0, 2, 3)
    hx = hidden(mode, 1, 1, 2, 4, 0, "float32")
    with pytest.raises(RuntimeError, match="sequence length"):
        run_pair(mode, m, x, hx)
    with pytest.raises(RuntimeError, match="sequence length"):
        getattr(torch._VF, mode)(x, tuple(hx) if mode == "lstm" else hx[0], m._flat_weights,
                                 True, 1, 0.0, False, False, False)


def test_bad_shapes_raise():
    m = torch.nn.LSTM(3, 4, 2)
    ew = [E(w) for w in m._flat_weights]
    h = [ember.zeros(2, 2, 4), ember.zeros(2, 2, 4)]
    good = ember.zeros(5, 2, 3)
    NN.lstm(good, h, ew, True, 2, 0.0, False, False, False)
    cases = [
        lambda: NN.lstm(ember.zeros(5, 2, 7), h, ew, True, 2, 0.0, False, False, False),
        lambda: NN.lstm(good, [ember.zeros(2, 3, 4), h[1]], ew, True, 2, 0.0, False, False,
                        False),
        lambda: NN.lstm(good, [h[0], ember.zeros(1, 2, 4)], ew, True, 2, 0.0, False, False,
                        False),
        lambda: NN.lstm(good, h, ew[:-1], True, 2, 0.0, False, False, False),
        lambda: NN.lstm(good, h, ew, True, 3, 0.0, False, False, False),
        lambda: NN.lstm(good, h, ew, True, 2, 0.0, False, True, False),
        lambda: NN.lstm(ember.zeros(5, 2, 3, 1), h, ew, True, 2, 0.0, False, False, False),
        lambda: NN.lstm(good.double(), h, ew, True, 2, 0.0, False, False, False),
        lambda: NN.lstm(good, h, ew, True, 2, 1.5, True, False, False),
        lambda: NN.gru(good, h[0], ew, True, 2, 0.0, False, False, False),
        lambda: NN.lstm_cell(ember.zeros(2, 5), (ember.zeros(2, 4), ember.zeros(2, 4)), ew[0],
                             ew[1], ew[2], ew[3]),
        lambda: NN.lstm_cell(ember.zeros(3, 3), (ember.zeros(2, 4), ember.zeros(2, 4)), ew[0],
                             ew[1], ew[2], ew[3]),
        lambda: NN.rnn_tanh_cell(ember.zeros(2, 3), ember.zeros(2, 4), ew[0], ew[1]),
        lambda: NN.lstm_fused_gates(ember.zeros(2, 16), ember.zeros(2, 12), ember.zeros(2, 4)),
        lambda: NN.lstm(ember.zeros(5, 2, 3, dtype=ember.int64), h, ew, True, 2, 0.0, False,
                        False, False),
    ]
    for i, f in enumerate(cases):
        with pytest.raises(RuntimeError):
            f()
            pytest.fail(f"case {i} did not raise")
    with pytest.raises(TypeError):
        NN.lstm(good, h[0], ew, True, 2, 0.0, False, False, False)
    # The same mistakes in torch raise RuntimeError too (the oracle for the exception type).
    with pytest.raises(RuntimeError):
        torch._VF.lstm(torch.zeros(5, 2, 7), (torch.zeros(2, 2, 4),) * 2, m._flat_weights, True,
                       2, 0.0, False, False, False)
    with pytest.raises(RuntimeError):
        torch.lstm_cell(torch.zeros(2, 5), (torch.zeros(2, 4),) * 2, *m._flat_weights[:4])


# ---- cells ----

CELLS = {"lstm_cell": (torch.nn.LSTMCell, {}), "gru_cell": (torch.nn.GRUCell, {}),
         "rnn_tanh_cell": (torch.nn.RNNCell, {"nonlinearity": "tanh"}),
         "rnn_relu_cell": (torch.nn.RNNCell, {"nonlinearity": "relu"})}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cell", list(CELLS))
@pytest.mark.parametrize("bias", [True, False])
def test_cell_matches_torch(cell, dtype, bias):
    torch.manual_seed(6)
    cls, kw = CELLS[cell]
    B, I, H = 4, 5, 7
    m = cls(I, H, bias=bias, **kw).to(tdt(dtype))
    x = torch.randn(B, I, dtype=tdt(dtype)).requires_grad_()
    hs = [torch.randn(B, H, dtype=tdt(dtype)).requires_grad_()
          for _ in range(2 if cell == "lstm_cell" else 1)]
    tw = [p.detach().clone().requires_grad_() for p in (m.weight_ih, m.weight_hh)]
    tb = [p.detach().clone().requires_grad_() for p in (m.bias_ih, m.bias_hh)] if bias else []
    ex, ehs = E(x, True), [E(h, True) for h in hs]
    ew, eb = [E(w, True) for w in tw], [E(b, True) for b in tb]
    tf, ef = getattr(torch, cell), getattr(NN, cell)
    targs = [None, None] if not bias else tb
    eargs = [None, None] if not bias else eb
    if cell == "lstm_cell":
        tout = list(tf(x, tuple(hs), *tw, *targs))
        eout = list(ef(ex, ehs, *ew, *eargs))
    else:
        tout = [tf(x, hs[0], *tw, *targs)]
        eout = [ef(ex, ehs[0], *ew, *eargs)]
    for a, b in zip(eout, tout):
        close(a, b, dtype)
    rng = np.random.default_rng(2)
    gs = [rng.standard_normal(tuple(t.shape)) for t in tout]
    sum((t * torch.from_numpy(g).to(t.dtype)).sum() for t, g in zip(tout, gs)).backward()
    eloss = None
    for t, g in zip(eout, gs):
        term = (t * ember.from_numpy(g.astype(np.dtype(dtype)))).sum()
        eloss = term if eloss is None else eloss + term
    eloss.backward()
    for a, b in zip([ex] + ehs + ew + eb, [x] + hs + tw + tb):
        close(a.grad, b.grad, dtype, scale=10.0)


@pytest.mark.parametrize("cell", list(CELLS))
def test_cell_unbatched(cell):
    torch.manual_seed(7)
    cls, kw = CELLS[cell]
    m = cls(3, 4, **kw).double()
    x = torch.randn(3, dtype=torch.float64)
    hs = [torch.randn(4, dtype=torch.float64) for _ in range(2 if cell == "lstm_cell" else 1)]
    tout = m(x, tuple(hs) if cell == "lstm_cell" else hs[0])
    tout = list(tout) if cell == "lstm_cell" else [tout]
    ws = [E(p) for p in (m.weight_ih, m.weight_hh, m.bias_ih, m.bias_hh)]
    ef = getattr(NN, cell)
    eout = ef(E(x), [E(h) for h in hs], *ws) if cell == "lstm_cell" else [ef(E(x), E(hs[0]), *ws)]
    for a, b in zip(eout, tout):
        close(a, b, "float64")


# ---- fused gates: gradcheck, double backward, forward mode ----

def _gates_inputs(G, B=3, H=4, seed=0):
    rng = np.random.default_rng(seed)
    ig = rng.standard_normal((B, G * H))
    hg = rng.standard_normal((B, G * H))
    st = rng.standard_normal((B, H))
    return [ember.from_numpy(a).requires_grad_() for a in (ig, hg, st)]


def test_fused_gates_gradcheck_and_gradgradcheck():
    lstm = lambda ig, hg, c: NN.lstm_fused_gates(ig, hg, c)  # noqa: E731
    gru = lambda ig, hg, h: NN.gru_fused_gates(ig, hg, h)  # noqa: E731
    assert ember.autograd.gradcheck(lstm, _gates_inputs(4))
    assert ember.autograd.gradgradcheck(lstm, _gates_inputs(4, seed=1))
    assert ember.autograd.gradcheck(gru, _gates_inputs(3))
    assert ember.autograd.gradgradcheck(gru, _gates_inputs(3, seed=1))


def test_fused_gates_strided_inputs():
    # Transposed / sliced gate inputs give the composite formula's values and gradients.
    torch.manual_seed(8)
    ig_s, hg_s, c_s = (torch.randn(*s, dtype=torch.float64) for s in ((16, 3), (3, 32), (3, 8)))
    eleaves = [t.requires_grad_() for t in (E(ig_s).t(), E(hg_s)[:, ::2], E(c_s)[:, 1::2])]
    assert not any(t.is_contiguous() for t in eleaves)
    ig, hg, c = (t.requires_grad_() for t in (ig_s.t(), hg_s[:, ::2], c_s[:, 1::2]))
    i, f, g, o = (ig + hg).chunk(4, 1)
    cy = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    hy = torch.sigmoid(o) * torch.tanh(cy)
    ehy, ecy = NN.lstm_fused_gates(*eleaves)
    close(ehy, hy, "float64")
    close(ecy, cy, "float64")
    (hy * 2 + cy * 3).sum().backward()
    (ehy * 2 + ecy * 3).sum().backward()
    for a, b in zip(eleaves, (ig, hg, c)):
        close(a.grad, b.grad, "float64")


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_layer_double_backward(mode):
    # d/dx of (d loss / d w_hh) · v matches torch's (create_graph through the fused gate ops).
    torch.manual_seed(9)
    m = make_module(mode, 2, 3, 1, False, True, 0, "float64")
    x = torch.randn(3, 2, 2, dtype=torch.float64)
    hx = hidden(mode, 1, 1, 2, 3, 0, "float64")
    tout, eout, eleaves, tleaves = run_pair(mode, m, x, hx)
    tg = torch.autograd.grad(tout[0].pow(2).sum(), tleaves[-3], create_graph=True)[0]
    eg = ember.autograd.grad(eout[0].pow(2).sum(), eleaves[-3], create_graph=True)[0]
    close(eg, tg, "float64")
    v = np.random.default_rng(3).standard_normal(tuple(tg.shape))
    tgx = torch.autograd.grad((tg * torch.from_numpy(v)).sum(), tleaves[0])[0]
    egx = ember.autograd.grad((eg * ember.from_numpy(v)).sum(), eleaves[0])[0]
    close(egx, tgx, "float64")


def test_lstm_gradcheck_layer():
    torch.manual_seed(10)
    m = torch.nn.LSTM(2, 3, proj_size=2, bidirectional=True).double()
    ws = [E(w, True) for w in m._flat_weights]
    x = E(torch.randn(2, 3, 2, dtype=torch.float64), True)  # batch_first: B=2, T=3
    h0 = E(torch.randn(2, 2, 2, dtype=torch.float64), True)
    c0 = E(torch.randn(2, 2, 3, dtype=torch.float64), True)

    def f(x, h0, c0, *ws):
        return tuple(NN.lstm(x, [h0, c0], list(ws), True, 1, 0.0, False, True, True))

    assert ember.autograd.gradcheck(f, [x, h0, c0] + ws)


def _lstm_composite(ig, hg, c):
    i, f, g, o = (ig + hg).chunk(4, 1)
    cy = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cy), cy


def _gru_composite(ig, hg, h):
    ir, iz, in_ = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
    n = torch.tanh(in_ + r * hn)
    return ((1 - z) * n + z * h,)


@pytest.mark.parametrize("G,op,ref", [(4, "lstm_fused_gates", _lstm_composite),
                                      (3, "gru_fused_gates", _gru_composite)])
def test_forward_mode_matches_torch(G, op, ref):
    import ember.autograd.forward_ad as efw
    import torch.autograd.forward_ad as tfw
    rng = np.random.default_rng(11)
    primal = [rng.standard_normal(s) for s in ((2, G * 3), (2, G * 3), (2, 3))]
    tangent = [rng.standard_normal(a.shape) for a in primal]
    with tfw.dual_level():
        duals = [tfw.make_dual(torch.from_numpy(a), torch.from_numpy(b))
                 for a, b in zip(primal, tangent)]
        want = [tfw.unpack_dual(o).tangent for o in ref(*duals)]
    with efw.dual_level():
        duals = [efw.make_dual(ember.from_numpy(a), ember.from_numpy(b))
                 for a, b in zip(primal, tangent)]
        out = getattr(NN, op)(*duals)
        out = out if isinstance(out, (tuple, list)) else (out,)
        got = [efw.unpack_dual(o).tangent for o in out]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        close(a, b, "float64")


# ---- dropout between layers ----

def test_dropout_between_layers():
    torch.manual_seed(12)
    m = torch.nn.LSTM(3, 4, num_layers=2)
    ew = [E(w) for w in m._flat_weights]
    x = E(torch.randn(5, 2, 3))
    h = [ember.zeros(2, 2, 4), ember.zeros(2, 2, 4)]
    base = NN.lstm(x, h, ew, True, 2, 0.0, True, False, False)[0].numpy()
    # dropout only in training; p = 0.5 changes the second layer's input, hence the output.
    same = NN.lstm(x, h, ew, True, 2, 0.5, False, False, False)[0].numpy()
    np.testing.assert_array_equal(same, base)
    diff = NN.lstm(x, h, ew, True, 2, 0.5, True, False, False)[0].numpy()
    assert np.abs(diff - base).max() > 1e-4
    # p = 1 drops everything: the second layer sees zeros, as torch.
    tout = torch._VF.lstm(torch.from_numpy(x.numpy()), (torch.zeros(2, 2, 4),) * 2,
                          m._flat_weights, True, 2, 1.0, True, False, False)[0]
    eout = NN.lstm(x, h, ew, True, 2, 1.0, True, False, False)[0]
    close(eout, tout, "float32")
    # One layer: dropout is never applied.
    m1 = torch.nn.LSTM(3, 4)
    ew1 = [E(w) for w in m1._flat_weights]
    h1 = [ember.zeros(1, 2, 4), ember.zeros(1, 2, 4)]
    a = NN.lstm(x, h1, ew1, True, 1, 0.9, True, False, False)[0].numpy()
    b = NN.lstm(x, h1, ew1, True, 1, 0.0, False, False, False)[0].numpy()
    np.testing.assert_array_equal(a, b)
