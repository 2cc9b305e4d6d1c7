"""nn.MultiheadAttention and the Transformer layers against torch 1.13: weights copied
torch -> ember through state_dict, forward outputs and gradients compared in train (dropout 0)
and eval, the fused inference path against ember's own slow path and torch's fast path, key
padding (including the packed path of TransformerEncoder), dropout statistics, state_dict keys
and weights moving both ways through safetensors files, and _add_layer_norm."""

import json
import struct
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
import ember.nn as enn
from _oracle import to_ember, to_torch

TOL = {torch.float64: dict(rtol=1e-9, atol=1e-9), torch.float32: dict(rtol=1e-4, atol=2e-5)}
EDT = {torch.float64: ember.float64, torch.float32: ember.float32}


def copy_state(tm, em):
    em.load_state_dict(OrderedDict((k, to_ember(v)) for k, v in tm.state_dict().items()))


def same_state_keys(tm, em):
    ts, es = tm.state_dict(), em.state_dict()
    assert list(ts.keys()) == list(es.keys())
    for k in ts:
        assert tuple(ts[k].shape) == tuple(es[k].shape), k


def close(e, t, dtype=torch.float64, what="", **tol):
    assert isinstance(e, ember.Tensor), what
    assert tuple(e.shape) == tuple(t.shape), (what, tuple(e.shape), tuple(t.shape))
    kw = dict(TOL[dtype])
    kw.update(tol)
    np.testing.assert_allclose(to_torch(e.detach()).to(torch.float64).numpy(),
                               t.detach().to(torch.float64).numpy(), err_msg=what, **kw)


def randn(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def pair(tcls, ecls, *args, dtype=torch.float64, **kwargs):
    torch.manual_seed(0)
    tm = tcls(*args, **kwargs).to(dtype)
    em = ecls(*args, **kwargs).to(EDT[dtype])
    same_state_keys(tm, em)
    copy_state(tm, em)
    return tm, em


# ---------------------------------------------------------------------------------------------
# MultiheadAttention: the options not covered by test_nn_layers.py

MHA_KW = [dict(), dict(bias=False), dict(add_bias_kv=True), dict(add_zero_attn=True),
          dict(kdim=5, vdim=3), dict(batch_first=True),
          dict(add_bias_kv=True, add_zero_attn=True, batch_first=True)]
MASKS = ["none", "kpm_bool", "kpm_float", "attn2d_bool", "attn2d_float", "attn3d", "kpm+attn"]


def _mha_masks(mask, N, L, S, heads, unbatched=False):
    rng = np.random.default_rng(7)
    kw = {}
    if mask in ("kpm_bool", "kpm+attn"):
        kpm = torch.zeros(N, S, dtype=torch.bool)
        kpm[:, -1] = True
        kpm[0, 1] = True
        kw["key_padding_mask"] = kpm[0] if unbatched else kpm
    if mask == "kpm_float":
        kpm = torch.from_numpy(rng.standard_normal((N, S)))
        kpm[N - 1, 2] = float("-inf")
        kw["key_padding_mask"] = kpm[0] if unbatched else kpm
    if mask in ("attn2d_bool", "kpm+attn"):
        am = torch.from_numpy(rng.random((L, S)) < 0.3)
        am[:, 0] = False
        kw["attn_mask"] = am
    if mask == "attn2d_float":
        kw["attn_mask"] = torch.from_numpy(rng.standard_normal((L, S)))
    if mask == "attn3d":
        kw["attn_mask"] = torch.from_numpy(rng.standard_normal(((1 if unbatched else N) * heads,
                                                                 L, S)))
    return kw


@pytest.mark.parametrize("kwargs", MHA_KW, ids=str)
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_options_masks(kwargs, mask, need_weights):
    E, H, L, S, N = 8, 2, 4, 6, 3
    tm, em = pair(tnn.MultiheadAttention, enn.MultiheadAttention, E, H, **kwargs)
    bf = kwargs.get("batch_first", False)
    shp = (lambda T, D: (N, T, D)) if bf else (lambda T, D: (T, N, D))
    q = randn(*shp(L, E), seed=1).requires_grad_()
    k = randn(*shp(S, kwargs.get("kdim", E)), seed=2).requires_grad_()
    v = randn(*shp(S, kwargs.get("vdim", E)), seed=3).requires_grad_()
    eq, ek, ev = (to_ember(t.detach()).requires_grad_() for t in (q, k, v))
    tkw = _mha_masks(mask, N, L, S, H)
    ekw = {n: to_ember(t) for n, t in tkw.items()}
    for average in ([True, False] if need_weights else [True]):
        to, tw = tm(q, k, v, need_weights=need_weights, average_attn_weights=average, **tkw)
        eo, ew = em(eq, ek, ev, need_weights=need_weights, average_attn_weights=average, **ekw)
        close(eo, to, what="output")
        if need_weights:
            close(ew, tw, what="weights")
        else:
            assert ew is None and tw is None
    g = randn(*to.shape, seed=9)
    (to * g).sum().backward()
    (eo * to_ember(g)).sum().backward()
    for t, e in ((q, eq), (k, ek), (v, ev)):
        close(e.grad, t.grad, what="input grad")
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        close(ep.grad, tp.grad, what=n)


@pytest.mark.parametrize("mask", ["none", "kpm_bool", "kpm_float", "attn2d_bool", "attn3d"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_unbatched_eval(mask, need_weights):
    E, H, L = 8, 2, 5
    tm, em = pair(tnn.MultiheadAttention, enn.MultiheadAttention, E, H, dropout=0.3)
    tm.eval(), em.eval()
    x = randn(L, E, seed=4)
    tkw = _mha_masks(mask, 1, L, L, H, unbatched=True)
    ekw = {n: to_ember(t) for n, t in tkw.items()}
    to, tw = tm(x, x, x, need_weights=need_weights, **tkw)
    eo, ew = em(to_ember(x), to_ember(x), to_ember(x), need_weights=need_weights, **ekw)
    close(eo, to)
    if need_weights:
        close(ew, tw)


def test_mha_float32_self_attention_eval_matches_torch_fast_path():
    tm, em = pair(tnn.MultiheadAttention, enn.MultiheadAttention, 16, 4, batch_first=True,
                  dtype=torch.float32)
    tm.eval(), em.eval()
    x = randn(3, 7, 16, seed=5, dtype=torch.float32)
    kpm = torch.zeros(3, 7, dtype=torch.bool)
    kpm[1, 5:] = True
    with torch.no_grad(), ember.no_grad():
        to, _ = tm(x, x, x, key_padding_mask=kpm, need_weights=False)
        eo, _ = em(*(to_ember(x),) * 3, key_padding_mask=to_ember(kpm), need_weights=False)
    close(eo, to, torch.float32)


def test_mha_dropout_statistics():
    # Training-mode attention weights: each entry is dropped with probability p and the kept
    # ones are scaled by 1 / (1 - p).
    p, N, L = 0.3, 64, 32
    em = enn.MultiheadAttention(8, 2, dropout=p).double()
    ember.manual_seed(123)
    x = to_ember(randn(L, N, 8, seed=1))
    with ember.no_grad():
        _, w = em(x, x, x, average_attn_weights=False)
        em.eval()
        _, w0 = em(x, x, x, average_attn_weights=False)
    w, w0 = to_torch(w).numpy(), to_torch(w0).numpy()
    n = w.size
    dropped = (w == 0).mean()
    assert abs(dropped - p) < 5 * np.sqrt(p * (1 - p) / n)
    kept = w != 0
    np.testing.assert_allclose(w[kept], w0[kept] / (1 - p), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Transformer layers against torch

ACTS = ["relu", "gelu", "callable"]


def _act(name, lib):
    if name == "callable":
        return lib.tanh
    return name


def layer_pair(kind, act="relu", dtype=torch.float64, **kwargs):
    torch.manual_seed(0)
    tcls, ecls = getattr(tnn, kind), getattr(enn, kind)
    tm = tcls(8, 2, 16, activation=_act(act, torch), **kwargs).to(dtype)
    em = ecls(8, 2, 16, activation=_act(act, ember), **kwargs).to(EDT[dtype])
    same_state_keys(tm, em)
    copy_state(tm, em)
    return tm, em


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "src_mask", "kpm", "both"])
def test_encoder_layer_train_and_grads(act, norm_first, batch_first, masks):
    tm, em = layer_pair("TransformerEncoderLayer", act, dropout=0.0, norm_first=norm_first,
                        batch_first=batch_first)
    S, N = 5, 3
    x = randn(*((N, S, 8) if batch_first else (S, N, 8)), seed=1).requires_grad_()
    ex = to_ember(x.detach()).requires_grad_()
    tkw = {}
    if masks in ("src_mask", "both"):
        tkw["src_mask"] = tnn.Transformer.generate_square_subsequent_mask(S).double()
    if masks in ("kpm", "both"):
        kpm = torch.zeros(N, S, dtype=torch.bool)
        kpm[0, 3:] = True
        tkw["src_key_padding_mask"] = kpm
    ekw = {n: to_ember(t) for n, t in tkw.items()}
    to, eo = tm(x, **tkw), em(ex, **ekw)
    close(eo, to)
    g = randn(*to.shape, seed=2)
    (to * g).sum().backward()
    (eo * to_ember(g)).sum().backward()
    close(ex.grad, x.grad, what="input grad")
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        close(ep.grad, tp.grad, what=n)


def test_encoder_layer_dropout_seeded():
    em = enn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = ember.randn(5, 3, 8)
    ember.manual_seed(11)
    a = em(x)
    ember.manual_seed(11)
    b = em(x)
    ember.manual_seed(12)
    c = em(x)
    np.testing.assert_array_equal(to_torch(a.detach()).numpy(), to_torch(b.detach()).numpy())
    assert not np.allclose(to_torch(a.detach()).numpy(), to_torch(c.detach()).numpy())
    em.eval()
    np.testing.assert_array_equal(to_torch(em(x).detach()).numpy(),
                                  to_torch(em(x).detach()).numpy())


def test_encoder_layer_unbatched():
    tm, em = layer_pair("TransformerEncoderLayer", dropout=0.0)
    tm.eval(), em.eval()
    x = randn(5, 8, seed=3)
    kpm = torch.tensor([False, False, False, True, True])
    with torch.no_grad(), ember.no_grad():
        close(em(to_ember(x), src_key_padding_mask=to_ember(kpm)),
              tm(x, src_key_padding_mask=kpm))


@pytest.mark.parametrize("act", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("kpm", [None, "bool", "float"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_encoder_layer_fast_path(monkeypatch, act, norm_first, kpm, dtype):
    tm, em = layer_pair("TransformerEncoderLayer", act, dtype=dtype, norm_first=norm_first,
                        batch_first=True, dropout=0.0)
    tm.eval(), em.eval()
    x = randn(3, 6, 8, seed=4, dtype=dtype)
    tkw = {}
    if kpm is not None:
        m = torch.zeros(3, 6, dtype=torch.bool)
        m[1, 4:] = True
        m[2, 2:] = True
        tkw["src_key_padding_mask"] = m if kpm == "bool" else \
            torch.zeros(3, 6, dtype=dtype).masked_fill(m, float("-inf"))
    ekw = {n: to_ember(t) for n, t in tkw.items()}
    calls = []
    real = ember._C._transformer_encoder_layer_fwd

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(ember._C, "_transformer_encoder_layer_fwd", spy)
    with torch.no_grad(), ember.no_grad():
        to = tm(x, **tkw)  # torch's fast path
        eo = em(to_ember(x), **ekw)
    assert calls == [1]
    close(eo, to, dtype, what="fast vs torch fast")
    # The slow path (train mode with dropout 0) gives the same values.
    em.train()
    with ember.no_grad():
        slow = em(to_ember(x), **ekw)
    assert calls == [1]
    close(eo, to_torch(slow), dtype, what="fast vs slow")


def test_encoder_layer_fast_path_conditions(monkeypatch):
    calls = []
    real = ember._C._transformer_encoder_layer_fwd

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(ember._C, "_transformer_encoder_layer_fwd", spy)
    em = enn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()
    x = ember.randn(2, 3, 8)
    em(x)  # grad enabled and parameters require grad: slow path
    assert calls == []
    with ember.no_grad():
        em(x)
        assert calls == [1]
        em(x, src_mask=ember.zeros(3, 3))  # src_mask: slow path
        em(x[0])  # unbatched
        enn.TransformerEncoderLayer(8, 2, 16, batch_first=False).eval()(x)
        enn.TransformerEncoderLayer(8, 1, 16, batch_first=True).eval()(x)  # odd heads
        enn.TransformerEncoderLayer(8, 2, 16, batch_first=True, activation=ember.tanh).eval()(x)
        seen = []
        h = em.self_attn.register_forward_hook(lambda *a: seen.append(1))
        em(x)  # a hook: the slow path runs it
        assert seen == [1]
        h.remove()
        em.train()
        em(x)
    assert calls == [1]


@pytest.mark.parametrize("left_aligned", [True, False])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_encoder_packed_path_matches_torch(monkeypatch, left_aligned, num_layers):
    torch.manual_seed(0)
    tl = tnn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    tm = tnn.TransformerEncoder(tl, num_layers, norm=tnn.LayerNorm(8)).eval()
    el = enn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    em = enn.TransformerEncoder(el, num_layers, norm=enn.LayerNorm(8)).eval()
    same_state_keys(tm, em)
    copy_state(tm, em)
    x = randn(4, 7, 8, seed=6, dtype=torch.float32)
    kpm = torch.zeros(4, 7, dtype=torch.bool)
    kpm[0, 5:] = True
    kpm[1, 1:] = True
    kpm[3, 3:] = True
    if not left_aligned:
        kpm[2, 0] = True
    packs = []
    real = ember._C._transformer_pack_padded

    def spy(*a):
        packs.append(1)
        return real(*a)
    monkeypatch.setattr(ember._C, "_transformer_pack_padded", spy)
    with torch.no_grad(), ember.no_grad():
        to = tm(x, src_key_padding_mask=kpm)
        eo = em(to_ember(x), src_key_padding_mask=to_ember(kpm))
    assert packs == ([1] if left_aligned else [])
    close(eo, to, torch.float32)
    if left_aligned:
        # Padded positions come back as zeros before the final norm.
        em.norm = None
        with ember.no_grad():
            raw = to_torch(em(to_ember(x), src_key_padding_mask=to_ember(kpm)))
        assert (raw[kpm] == 0).all()


def test_pack_unpack_padded():
    x = randn(3, 4, 2, seed=1)
    kpm = torch.tensor([[False, True, False, True], [True] * 4, [False] * 4])
    packed, lengths = ember._C._transformer_pack_padded(to_ember(x), to_ember(kpm))
    np.testing.assert_array_equal(to_torch(packed).numpy(), x[~kpm].numpy())
    assert to_torch(lengths).tolist() == [2, 0, 4]
    back = to_torch(ember._C._transformer_unpack_padded(packed, to_ember(kpm)))
    np.testing.assert_array_equal(back.numpy(), x.masked_fill(kpm.unsqueeze(-1), 0).numpy())
    with pytest.raises(RuntimeError):
        ember._C._transformer_unpack_padded(packed[:3], to_ember(kpm))


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer(act, norm_first, batch_first):
    tm, em = layer_pair("TransformerDecoderLayer", act, dropout=0.0, norm_first=norm_first,
                        batch_first=batch_first)
    T, S, N = 4, 6, 2
    tgt = randn(*((N, T, 8) if batch_first else (T, N, 8)), seed=1).requires_grad_()
    mem = randn(*((N, S, 8) if batch_first else (S, N, 8)), seed=2).requires_grad_()
    et, emem = (to_ember(t.detach()).requires_grad_() for t in (tgt, mem))
    tkp = torch.tensor([[False] * T, [False, False, True, True]])
    mkp = torch.tensor([[False] * S, [False] * 4 + [True] * 2])
    tkw = dict(tgt_mask=tnn.Transformer.generate_square_subsequent_mask(T).double(),
               memory_mask=torch.zeros(T, S, dtype=torch.bool), tgt_key_padding_mask=tkp,
               memory_key_padding_mask=mkp)
    ekw = {n: to_ember(t) for n, t in tkw.items()}
    to, eo = tm(tgt, mem, **tkw), em(et, emem, **ekw)
    close(eo, to)
    g = randn(*to.shape, seed=3)
    (to * g).sum().backward()
    (eo * to_ember(g)).sum().backward()
    close(et.grad, tgt.grad)
    close(emem.grad, mem.grad)
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        close(ep.grad, tp.grad, what=n)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_transformer_full(batch_first, train):
    torch.manual_seed(0)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=16, dropout=0.0, batch_first=batch_first)
    tm, em = tnn.Transformer(**kw).double(), enn.Transformer(**kw).double()
    same_state_keys(tm, em)
    copy_state(tm, em)
    tm.train(train), em.train(train)
    S, T, N = 5, 4, 2
    src = randn(*((N, S, 8) if batch_first else (S, N, 8)), seed=1)
    tgt = randn(*((N, T, 8) if batch_first else (T, N, 8)), seed=2)
    skp = torch.tensor([[False] * S, [False] * 3 + [True] * 2])
    tkw = dict(tgt_mask=tnn.Transformer.generate_square_subsequent_mask(T).double(),
               src_key_padding_mask=skp, memory_key_padding_mask=skp)
    ekw = {n: to_ember(t) for n, t in tkw.items()}
    with torch.no_grad(), ember.no_grad():
        close(em(to_ember(src), to_ember(tgt), **ekw), tm(src, tgt, **tkw))
    with pytest.raises(RuntimeError, match="batch number"):
        em(to_ember(src), to_ember(tgt)[:1] if batch_first else to_ember(tgt)[:, :1])
    with pytest.raises(RuntimeError, match="feature number"):
        em(to_ember(src)[..., :4], to_ember(tgt)[..., :4])


def test_generate_square_subsequent_mask_and_errors():
    for sz in (0, 1, 5):
        np.testing.assert_array_equal(
            to_torch(enn.Transformer.generate_square_subsequent_mask(sz)).numpy(),
            tnn.Transformer.generate_square_subsequent_mask(sz).numpy())
    with pytest.raises(RuntimeError, match="relu/gelu"):
        enn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError, match="only bool and floating"):
        enn.TransformerEncoderLayer(8, 2)(ember.randn(3, 2, 8),
                                          src_key_padding_mask=ember.zeros(2, 3, dtype=ember.int64))
    with pytest.raises(AssertionError):
        enn.TransformerEncoderLayer(8, 3)


def test_is_causal_hint():
    # PyTorch 2.x's is_causal: without a mask the causal one is applied; with one, it is used.
    torch.manual_seed(0)
    tm, em = layer_pair("TransformerEncoderLayer", dropout=0.0, batch_first=True)
    x = randn(2, 5, 8, seed=1)
    causal = tnn.Transformer.generate_square_subsequent_mask(5).double()
    want = tm(x, src_mask=causal)
    close(em(to_ember(x), is_causal=True), want)
    close(em(to_ember(x), src_mask=to_ember(causal), is_causal=True), want)
    td, ed = layer_pair("TransformerDecoderLayer", dropout=0.0)
    t, m = randn(4, 2, 8, seed=2), randn(6, 2, 8, seed=3)
    close(ed(to_ember(t), to_ember(m), tgt_is_causal=True),
          td(t, m, tgt_mask=tnn.Transformer.generate_square_subsequent_mask(4).double()))


def test_encoder_decoder_stacks_and_custom():
    torch.manual_seed(0)
    tl = tnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    el = enn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    te, ee = tnn.TransformerEncoder(tl, 3), enn.TransformerEncoder(el, 3)
    same_state_keys(te, ee)
    copy_state(te, ee)
    ps = list(ee.parameters())
    assert len({id(p) for p in ps}) == len(ps)  # clones, not shared
    x = randn(5, 2, 8, seed=1, dtype=torch.float32)
    close(ee(to_ember(x)), te(x), torch.float32)
    tt = tnn.Transformer(8, 2, 1, 1, 16, custom_encoder=te)
    et = enn.Transformer(8, 2, 1, 1, 16, custom_encoder=ee)
    same_state_keys(tt, et)
    assert sum(k.startswith("encoder.layers.2.") for k in et.state_dict()) > 0


# ---------------------------------------------------------------------------------------------
# Gradients by finite differences

def test_gradcheck_encoder_and_decoder_layers():
    ember.manual_seed(0)
    enc = enn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu").double()
    x = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: enc(a), (x,))
    dec = enn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double()
    m = ember.randn(2, 2, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: dec(a, b), (x, m))


# ---------------------------------------------------------------------------------------------
# state_dict through safetensors files, both ways

ST_NAME = {torch.float32: "F32", torch.float64: "F64"}


def st_write(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": ST_NAME[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    js = json.dumps(header).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)) + js + b"".join(blobs))


def st_read(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    dts = {"F32": torch.float32, "F64": torch.float64}
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        buf = bytearray(raw[8 + n + b:8 + n + e])
        out[name] = torch.frombuffer(buf, dtype=dts[info["dtype"]]).reshape(info["shape"])
    return out


def test_state_dict_through_safetensors(tmp_path):
    torch.manual_seed(0)
    tm = tnn.Transformer(8, 2, 1, 1, 16, dropout=0.0).eval()
    ember.manual_seed(1)
    em = enn.Transformer(8, 2, 1, 1, 16, dropout=0.0).eval()
    same_state_keys(tm, em)
    # torch -> file (independent writer) -> ember.load -> load_state_dict
    p = tmp_path / "torch.safetensors"
    st_write(p, tm.state_dict())
    em.load_state_dict(ember.load(str(p)))
    src, tgt = randn(5, 2, 8, seed=1, dtype=torch.float32), randn(3, 2, 8, seed=2,
                                                                  dtype=torch.float32)
    with torch.no_grad(), ember.no_grad():
        close(em(to_ember(src), to_ember(tgt)), tm(src, tgt), torch.float32)
    # ember -> ember.save -> file (independent reader) -> torch load_state_dict
    ember.manual_seed(2)
    em2 = enn.Transformer(8, 2, 1, 1, 16, dropout=0.0).eval()
    q = tmp_path / "ember.safetensors"
    ember.save(em2.state_dict(), str(q))
    tm.load_state_dict(st_read(q))
    with torch.no_grad(), ember.no_grad():
        close(em2(to_ember(src), to_ember(tgt)), tm(src, tgt), torch.float32)


# ---------------------------------------------------------------------------------------------
# _add_layer_norm

@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-6), (torch.float64, 1e-12),
                                       (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("shape", [(5, 16), (2, 3, 7), (0, 4), (1, 1000)])
@pytest.mark.parametrize("affine", [True, False])
def test_add_layer_norm(dtype, tol, shape, affine):
    x = (randn(*shape, seed=1) * 3 + 10).to(dtype)
    r = randn(*shape, seed=2).to(dtype)
    w = randn(shape[-1], seed=3).to(dtype) if affine else None
    b = randn(shape[-1], seed=4).to(dtype) if affine else None
    ref = tnn.functional.layer_norm((x + r).double(), (shape[-1],),
                                    None if w is None else w.double(),
                                    None if b is None else b.double(), 1e-5)
    ew = None if w is None else to_ember(w)
    eb = None if b is None else to_ember(b)
    with ember.no_grad():
        y = ember._C._add_layer_norm(to_ember(x), to_ember(r), [shape[-1]], ew, eb, 1e-5)
    assert y.dtype == to_ember(x).dtype
    # Strided inputs give the same result.
    xt = to_ember(x.t().contiguous()).t() if x.dim() == 2 else to_ember(x)
    with ember.no_grad():
        y2 = ember._C._add_layer_norm(xt, to_ember(r), [shape[-1]], ew, eb, 1e-5)
    close(y, ref, torch.float64, rtol=tol, atol=tol)
    close(y2, ref, torch.float64, rtol=tol, atol=tol)


def test_add_layer_norm_errors():
    x = ember.randn(3, 4)
    with pytest.raises(TypeError):
        ember._C._add_layer_norm(x, x.double(), [4], None, None, 1e-5)
    with pytest.raises(TypeError):
        ember._C._add_layer_norm(x.long(), x.long(), [4], None, None, 1e-5)
    with pytest.raises(RuntimeError, match="shape"):
        ember._C._add_layer_norm(x, x[:2], [4], None, None, 1e-5)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        ember._C._add_layer_norm(x, x, [3], None, None, 1e-5)
    w = ember.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="no vjp"):
        ember._C._add_layer_norm(x, x, [4], w, None, 1e-5)
