"""ember.nn's recurrent layers and nn.utils (rnn packing, clip_grad, convert_parameters) against
torch 1.13: parameter names and order, init bounds, outputs, hidden states and every gradient
(float64 tight, float32 loose), batch_first/unbatched/bidirectional/proj_size, packed sequences
through RNN/LSTM/GRU, and argument errors."""

import math
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.utils.rnn as trnn

import ember
import ember.nn as enn
import ember.nn.utils.rnn as ernn
from _oracle import to_ember, to_torch

TOL = {torch.float64: dict(rtol=1e-9, atol=1e-10), torch.float32: dict(rtol=2e-4, atol=2e-5)}
EDT = {torch.float64: ember.float64, torch.float32: ember.float32}


def close(e, t, dtype=torch.float64, what=""):
    assert tuple(e.shape) == tuple(t.shape), (what, tuple(e.shape), tuple(t.shape))
    np.testing.assert_allclose(to_torch(e.detach()).numpy(), t.detach().numpy(), err_msg=what,
                               **TOL[dtype])


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def pair(tcls, ecls, *args, dtype=torch.float64, **kwargs):
    torch.manual_seed(0)
    tm = tcls(*args, **kwargs).to(dtype)
    em = ecls(*args, **kwargs).to(EDT[dtype])
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in em.named_parameters()]
    em.load_state_dict(OrderedDict((k, to_ember(v)) for k, v in tm.state_dict().items()))
    assert repr(em) == repr(tm)
    return tm, em


def leaf(x, dtype):
    t = torch.tensor(x, dtype=dtype, requires_grad=True)
    e = to_ember(t.detach()).requires_grad_(True)
    return t, e


def flat(out):
    """All tensors of a (nested) tuple result, in order."""
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in flat(x)]
    return [out]


def backward_all(touts, eouts, seed=3):
    tl, el = 0, 0
    for i, (t, e) in enumerate(zip(touts, eouts)):
        g = torch.from_numpy(randn(*t.shape, seed=seed + i)).to(t.dtype)
        tl = tl + (t * g).sum()
        el = el + (e * to_ember(g)).sum()
    tl.backward()
    el.backward()


def compare_grads(tm, em, dtype, tin=(), ein=()):
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        close(ep.grad, tp.grad, dtype, f"grad {n}")
    for i, (t, e) in enumerate(zip(tin, ein)):
        close(e.grad, t.grad, dtype, f"grad input {i}")


RNNS = [
    ("LSTM", dict()), ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=2, batch_first=True)), ("LSTM", dict(bias=False, num_layers=2)),
    ("GRU", dict()), ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("RNN", dict()), ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bidirectional=True, bias=False)),
]


@pytest.mark.parametrize("name,kwargs", RNNS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("with_hx", [False, True])
def test_rnn_layers(name, kwargs, dtype, with_hx):
    tm, em = pair(getattr(tnn, name), getattr(enn, name), 3, 4, dtype=dtype, **kwargs)
    batch_first = kwargs.get("batch_first", False)
    shape = (2, 5, 3) if batch_first else (5, 2, 3)
    tx, ex = leaf(randn(*shape), dtype)
    tin, ein = [tx], [ex]
    if with_hx:
        d = 2 if kwargs.get("bidirectional") else 1
        L = kwargs.get("num_layers", 1)
        hsz = kwargs.get("proj_size", 0) or 4
        th, eh = leaf(randn(L * d, 2, hsz, seed=1) * 0.5, dtype)
        tin.append(th)
        ein.append(eh)
        if name == "LSTM":
            tc, ec = leaf(randn(L * d, 2, 4, seed=2) * 0.5, dtype)
            tin.append(tc)
            ein.append(ec)
            tout, eout = tm(tx, (th, tc)), em(ex, (eh, ec))
        else:
            tout, eout = tm(tx, th), em(ex, eh)
    else:
        tout, eout = tm(tx), em(ex)
    tf, ef = flat(tout), flat(eout)
    assert len(tf) == len(ef)
    for i, (t, e) in enumerate(zip(tf, ef)):
        close(e, t, dtype, f"output {i}")
    backward_all(tf, ef)
    compare_grads(tm, em, dtype, tin, ein)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_rnn_unbatched(name):
    tm, em = pair(getattr(tnn, name), getattr(enn, name), 3, 4, num_layers=2)
    tx, ex = leaf(randn(5, 3), torch.float64)
    tout, eout = tm(tx), em(ex)
    tf, ef = flat(tout), flat(eout)
    for t, e in zip(tf, ef):
        close(e, t)
    if name == "LSTM":
        h = (torch.from_numpy(randn(2, 4)), torch.from_numpy(randn(2, 4, seed=1)))
        close(em(ex, tuple(to_ember(v) for v in h))[0], tm(tx, h)[0])
        with pytest.raises(RuntimeError):
            em(ex, (ember.zeros(2, 1, 4), ember.zeros(2, 1, 4)))
    else:
        h = torch.from_numpy(randn(2, 4))
        close(em(ex, to_ember(h))[1], tm(tx, h)[1])
        with pytest.raises(RuntimeError):
            em(ex, ember.zeros(2, 1, 4))
    backward_all(tf, ef)
    compare_grads(tm, em, torch.float64, [tx], [ex])


def test_rnn_parameter_layout_and_init():
    m = enn.LSTM(6, 10, num_layers=2, bidirectional=True, proj_size=3)
    t = tnn.LSTM(6, 10, num_layers=2, bidirectional=True, proj_size=3)
    assert m._flat_weights_names == t._flat_weights_names
    assert [list(map(str, w)) for w in m._all_weights] == t._all_weights
    for (n, p), (_, q) in zip(m.named_parameters(), t.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape), n
        a = to_torch(p.detach()).numpy()
        assert np.abs(a).max() <= 1 / math.sqrt(10) + 1e-7
    assert all(a is b for a, b in zip(m._flat_weights, m.parameters()))
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 5
    # Re-assigning a parameter or converting the module keeps _flat_weights in step.
    new = enn.Parameter(ember.zeros(40, 6))
    m.weight_ih_l0 = new
    assert m._flat_weights[0] is new
    m.double()
    assert m._flat_weights[0] is m.weight_ih_l0 and m._flat_weights[0].dtype == ember.float64


@pytest.mark.parametrize("ctor", [
    lambda nn: nn.LSTM(3, 4, proj_size=4), lambda nn: nn.LSTM(3, 4, proj_size=-1),
    lambda nn: nn.GRU(3, 4, proj_size=2), lambda nn: nn.RNN(3, 4, nonlinearity="gelu"),
    lambda nn: nn.LSTM(3, 4, dropout=1.5), lambda nn: nn.LSTM(3, 4, dropout=True),
    lambda nn: nn.RNN(3, 4, proj_size=1),
])
def test_rnn_bad_args(ctor):
    with pytest.raises(ValueError):
        ctor(tnn)
    with pytest.raises(ValueError):
        ctor(enn)


def test_rnn_dropout_warning_and_bad_input():
    with pytest.warns(UserWarning):
        enn.GRU(3, 4, dropout=0.5)
    m = enn.LSTM(3, 4)
    with pytest.raises(RuntimeError):
        m(ember.randn(5, 2, 2))  # wrong input size
    with pytest.raises(RuntimeError):
        m(ember.randn(5, 2, 3, 1))
    with pytest.raises(RuntimeError):
        m(ember.randn(5, 2, 3), (ember.zeros(1, 3, 4), ember.zeros(1, 3, 4)))
    with pytest.raises(RuntimeError):
        enn.GRU(3, 4)(ember.randn(5, 2, 3), ember.zeros(2, 4))


def test_rnn_dropout_between_layers_train_eval():
    m = enn.GRU(3, 8, num_layers=2, dropout=0.5).double()
    x = ember.randn(4, 2, 3, dtype=ember.float64)
    m.eval()
    a, b = m(x)[0].detach(), m(x)[0].detach()
    np.testing.assert_array_equal(to_torch(a).numpy(), to_torch(b).numpy())
    m.train()
    outs = [to_torch(m(x)[0].detach()).numpy() for _ in range(3)]
    assert not (np.allclose(outs[0], outs[1]) and np.allclose(outs[1], outs[2]))


@pytest.mark.parametrize("name,cls_kw", [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}),
                                         ("RNNCell", dict(nonlinearity="relu")),
                                         ("LSTMCell", dict(bias=False))])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_cells(name, cls_kw, dtype):
    tm, em = pair(getattr(tnn, name), getattr(enn, name), 3, 4, dtype=dtype, **cls_kw)
    tx, ex = leaf(randn(2, 3), dtype)
    th, eh = leaf(randn(2, 4, seed=1), dtype)
    if name == "LSTMCell":
        tc, ec = leaf(randn(2, 4, seed=2), dtype)
        tout, eout = tm(tx, (th, tc)), em(ex, (eh, ec))
        tin, ein = [tx, th, tc], [ex, eh, ec]
    else:
        tout, eout = tm(tx, th), em(ex, eh)
        tin, ein = [tx, th], [ex, eh]
    tf, ef = flat(tout), flat(eout)
    for t, e in zip(tf, ef):
        close(e, t, dtype)
    backward_all(tf, ef)
    compare_grads(tm, em, dtype, tin, ein)
    # No hx and unbatched inputs.
    for t, e in zip(flat(tm(tx.detach())), flat(em(ex.detach()))):
        close(e, t, dtype)
    for t, e in zip(flat(tm(tx.detach()[0])), flat(em(ex.detach()[0]))):
        close(e, t, dtype)
    with pytest.raises(AssertionError):
        em(ember.randn(1, 2, 3))


# ---------------------------------------------------------------------------------------------
# nn.utils.rnn

def _seqs(lengths, feat=3, seed=0):
    return [randn(n, feat, seed=seed + i) for i, n in enumerate(lengths)]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("value", [0.0, -1.5])
def test_pad_sequence(batch_first, value):
    seqs = _seqs([4, 2, 5, 1])
    ts = [torch.tensor(s, requires_grad=True) for s in seqs]
    es = [to_ember(t.detach()).requires_grad_(True) for t in ts]
    tout = trnn.pad_sequence(ts, batch_first, value)
    eout = ernn.pad_sequence(es, batch_first, value)
    close(eout, tout)
    g = torch.from_numpy(randn(*tout.shape, seed=9))
    tout.backward(g)
    eout.backward(to_ember(g))
    for t, e in zip(ts, es):
        close(e.grad, t.grad)
    # Integer sequences, trailing dims, a tensor input.
    ti = [torch.arange(n * 2).reshape(n, 2) for n in (3, 1)]
    close_int = trnn.pad_sequence(ti).tolist()
    assert to_torch(ernn.pad_sequence([to_ember(t) for t in ti])).tolist() == close_int
    assert ernn.pad_sequence([to_ember(t) for t in ti]).dtype == ember.int64
    stacked = torch.from_numpy(randn(3, 2, 4))
    close(ernn.pad_sequence(to_ember(stacked)), trnn.pad_sequence(stacked))


def test_pad_sequence_errors():
    with pytest.raises(RuntimeError):
        ernn.pad_sequence([])
    with pytest.raises(RuntimeError):
        ernn.pad_sequence([ember.zeros(2, 3), ember.zeros(2, 4)])
    with pytest.raises(RuntimeError):
        trnn.pad_sequence([torch.zeros(2, 3), torch.zeros(2, 4)])


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_roundtrip(enforce_sorted, batch_first):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    seqs = _seqs(lengths)
    tp = trnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first)
    tp.requires_grad_(True)
    ep = to_ember(tp.detach()).requires_grad_(True)
    tpk = trnn.pack_padded_sequence(tp, torch.tensor(lengths), batch_first, enforce_sorted)
    epk = ernn.pack_padded_sequence(ep, ember.tensor(lengths), batch_first, enforce_sorted)
    close(epk.data, tpk.data)
    assert to_torch(epk.batch_sizes).tolist() == tpk.batch_sizes.tolist()
    assert epk.batch_sizes.dtype == ember.int64
    for a, b in [(epk.sorted_indices, tpk.sorted_indices),
                 (epk.unsorted_indices, tpk.unsorted_indices)]:
        assert (a is None) == (b is None)
        if a is not None:
            assert to_torch(a).tolist() == b.tolist()
    tun, tl = trnn.pad_packed_sequence(tpk, batch_first, padding_value=-7.0, total_length=6)
    eun, el = ernn.pad_packed_sequence(epk, batch_first, padding_value=-7.0, total_length=6)
    close(eun, tun)
    assert to_torch(el).tolist() == tl.tolist()
    g = torch.from_numpy(randn(*tun.shape, seed=4))
    tun.backward(g)
    eun.backward(to_ember(g))
    close(ep.grad, tp.grad)
    with pytest.raises(ValueError):
        ernn.pad_packed_sequence(epk, total_length=2)


def test_pack_sequence_and_unpack():
    seqs = _seqs([2, 4, 3])
    tpk = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    epk = ernn.pack_sequence([to_ember(torch.tensor(s)) for s in seqs], enforce_sorted=False)
    close(epk.data, tpk.data)
    assert isinstance(epk, ernn.PackedSequence) and isinstance(epk, tuple)
    back = ernn.unpack_sequence(epk)
    for e, s in zip(back, seqs):
        close(e, torch.tensor(s))
    with pytest.raises(RuntimeError):
        ernn.pack_sequence([to_ember(torch.tensor(s)) for s in seqs])  # unsorted
    with pytest.raises(RuntimeError):
        ernn.pack_padded_sequence(ember.zeros(3, 2, 1), ember.tensor([2, 0]))
    assert epk.double().data.dtype == ember.float64
    assert epk.float().data.dtype == ember.float32


@pytest.mark.parametrize("name,kwargs", [("LSTM", dict(num_layers=2, bidirectional=True)),
                                         ("GRU", dict(bidirectional=True)),
                                         ("RNN", dict(num_layers=2)),
                                         ("LSTM", dict(proj_size=2, batch_first=True))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence_through_rnn(name, kwargs, enforce_sorted):
    tm, em = pair(getattr(tnn, name), getattr(enn, name), 3, 4, **kwargs)
    lengths = [5, 4, 4, 2] if enforce_sorted else [4, 5, 2, 4]
    seqs = [torch.tensor(s, requires_grad=True) for s in _seqs(lengths)]
    eseqs = [to_ember(s.detach()).requires_grad_(True) for s in seqs]
    tpk = trnn.pack_sequence(seqs, enforce_sorted=enforce_sorted)
    epk = ernn.pack_sequence(eseqs, enforce_sorted=enforce_sorted)
    tout, thid = tm(tpk)
    eout, ehid = em(epk)
    assert isinstance(eout, ernn.PackedSequence)
    close(eout.data, tout.data, what="packed output")
    assert to_torch(eout.batch_sizes).tolist() == tout.batch_sizes.tolist()
    for t, e in zip(flat(thid), flat(ehid)):
        close(e, t, what="hidden")
    tpad, _ = trnn.pad_packed_sequence(tout, batch_first=kwargs.get("batch_first", False))
    epad, _ = ernn.pad_packed_sequence(eout, batch_first=kwargs.get("batch_first", False))
    close(epad, tpad)
    backward_all([tpad] + flat(thid), [epad] + flat(ehid))
    compare_grads(tm, em, torch.float64, seqs, eseqs)


# ---------------------------------------------------------------------------------------------
# clip_grad, convert_parameters

def _params_with_grads(lib, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (5,), (2, 2, 2)]
    ps = []
    for s in shapes:
        if lib is torch:
            p = torch.nn.Parameter(torch.from_numpy(rng.standard_normal(s)))
            p.grad = torch.from_numpy(rng.standard_normal(s) * 3)
        else:
            p = enn.Parameter(ember.from_numpy(rng.standard_normal(s)))
            p.grad = ember.from_numpy(rng.standard_normal(s) * 3)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm(norm_type, max_norm):
    tp, ep = _params_with_grads(torch), _params_with_grads(ember)
    tn = tnn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    en = enn.utils.clip_grad_norm_(ep, max_norm, norm_type)
    assert isinstance(en, ember.Tensor) and en.dim() == 0
    close(en, tn)
    for t, e in zip(tp, ep):
        close(e.grad, t.grad)
    # foreach (torch 2.x's keyword) gives the same result.
    ep2 = _params_with_grads(ember)
    close(enn.utils.clip_grad_norm_(ep2, max_norm, norm_type, foreach=True), tn)


def test_clip_grad_norm_edge_cases():
    p = enn.Parameter(ember.ones(3))
    assert float(enn.utils.clip_grad_norm_(p, 1.0)) == 0.0  # no grads
    assert float(enn.utils.clip_grad_norm_([], 1.0)) == 0.0
    p.grad = ember.tensor([3.0, 4.0, 0.0])
    n = enn.utils.clip_grad_norm_(p, 1.0)  # a single tensor is accepted
    assert abs(float(n) - 5.0) < 1e-6
    np.testing.assert_allclose(to_torch(p.grad).numpy(), [0.6, 0.8, 0.0], rtol=1e-5)
    p.grad = ember.tensor([float("nan"), 1.0, 1.0])
    with pytest.raises(RuntimeError):
        enn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    p.grad = ember.tensor([float("inf"), 1.0, 1.0])
    with pytest.raises(RuntimeError):
        enn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(float(enn.utils.clip_grad_norm_([p], 1.0)))
    with pytest.warns(UserWarning):
        enn.utils.clip_grad_norm([p], 1.0)


def test_clip_grad_value():
    tp, ep = _params_with_grads(torch), _params_with_grads(ember)
    tnn.utils.clip_grad_value_(tp, 1.25)
    enn.utils.clip_grad_value_(ep, 1.25)
    for t, e in zip(tp, ep):
        close(e.grad, t.grad)
    q = enn.Parameter(ember.ones(2))
    enn.utils.clip_grad_value_(q, 1.0)  # no grad: nothing to do
    assert q.grad is None


def test_parameters_vector_roundtrip():
    m = enn.Sequential(enn.Linear(3, 2), enn.Linear(2, 1)).double()
    t = tnn.Sequential(tnn.Linear(3, 2), tnn.Linear(2, 1)).double()
    m.load_state_dict(OrderedDict((k, to_ember(v)) for k, v in t.state_dict().items()))
    ev = enn.utils.parameters_to_vector(m.parameters())
    tv = tnn.utils.parameters_to_vector(t.parameters())
    close(ev, tv)
    new = ember.arange(11, dtype=ember.float64)
    enn.utils.vector_to_parameters(new, m.parameters())
    assert to_torch(m[0].weight.detach()).numpy().ravel().tolist() == list(range(6))
    assert to_torch(m[1].bias.detach()).tolist() == [10.0]
    with pytest.raises(TypeError):
        enn.utils.vector_to_parameters([1.0], m.parameters())
    # Gradients flow from the vector back to every parameter.
    ev = enn.utils.parameters_to_vector(m.parameters())
    (ev * ev).sum().backward()
    np.testing.assert_allclose(to_torch(m[0].weight.grad).numpy().ravel(), 2 * np.arange(6))


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_packed_unsorted_with_initial_state(name):
    tm, em = pair(getattr(tnn, name), getattr(enn, name), 3, 4, num_layers=2)
    lengths = [2, 5, 3]
    seqs = [torch.tensor(s) for s in _seqs(lengths)]
    tpk = trnn.pack_sequence(seqs, enforce_sorted=False)
    epk = ernn.pack_sequence([to_ember(s) for s in seqs], enforce_sorted=False)
    h = torch.tensor(randn(2, 3, 4, seed=7), requires_grad=True)
    eh = to_ember(h.detach()).requires_grad_(True)
    if name == "LSTM":
        c = torch.tensor(randn(2, 3, 4, seed=8), requires_grad=True)
        ec = to_ember(c.detach()).requires_grad_(True)
        tout, thid = tm(tpk, (h, c))
        eout, ehid = em(epk, (eh, ec))
    else:
        tout, thid = tm(tpk, h)
        eout, ehid = em(epk, eh)
    close(eout.data, tout.data)
    for t, e in zip(flat(thid), flat(ehid)):
        close(e, t, what="hidden (original batch order)")
    backward_all([tout.data] + flat(thid), [eout.data] + flat(ehid))
    close(eh.grad, h.grad, what="grad h0")
    if name == "LSTM":
        close(ec.grad, c.grad, what="grad c0")
