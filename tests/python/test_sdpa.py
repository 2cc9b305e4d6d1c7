"""F.scaled_dot_product_attention (torch 2.1 semantics) and torch 1.13's
F._scaled_dot_product_attention against the explicit float64 softmax(Q Kᵀ · scale + mask) V and
against torch 1.13: heads, broadcast batch dims, causal with L != S, bool and additive masks,
scale, strided inputs, zero-size L or S, float32 / bfloat16 / float64, gradients (gradcheck on
the fused path, fused against the decomposition), forward AD, double backward, vmap, dropout
statistics and bad input by exception type."""

import math

import numpy as np
import pytest
import torch

import ember
import ember.func
import ember.nn.functional as F

TOL = {"float64": 1e-10, "float32": 2e-5, "bfloat16": 3e-2}


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def et(a, dtype="float64", grad=False):
    t = ember.from_numpy(np.ascontiguousarray(a, dtype=np.float64)).to(getattr(ember, dtype))
    return t.requires_grad_(True) if grad else t


def npy(t):
    return t.detach().to(ember.float64).numpy()


def reference(q, k, v, mask=None, causal=False, scale=None):
    """float64 softmax(q kᵀ · scale + mask) v; a bool mask keeps the True entries."""
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    L, S = q.shape[-2], k.shape[-2]
    if causal:
        s = s + np.where(np.tril(np.ones((L, S), bool)), 0.0, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    if S == 0:
        return np.zeros(s.shape[:-1] + (v.shape[-1],))
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(-1, keepdims=True)
    return p @ v


def check(q, k, v, dtype="float64", mask=None, **kw):
    m = None
    if mask is not None:
        m = ember.from_numpy(mask) if mask.dtype == bool else et(mask, dtype)
    out = F.scaled_dot_product_attention(et(q, dtype), et(k, dtype), et(v, dtype), attn_mask=m,
                                         **kw)
    assert out.dtype == getattr(ember, dtype)
    exp = reference(q, k, v, mask, kw.get("is_causal", False), kw.get("scale"))
    assert tuple(out.shape) == exp.shape
    np.testing.assert_allclose(npy(out), exp, rtol=TOL[dtype], atol=TOL[dtype])


# ---- forward values ----

SHAPES = [
    ((5, 8), (7, 8), (7, 8)),                      # no batch
    ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6)),    # heads, Ev != E
    ((2, 3, 70, 16), (2, 3, 600, 16), (2, 3, 600, 16)),  # several key tiles, partial last
    ((1, 2, 2, 130, 4), (1, 2, 2, 129, 4), (1, 2, 2, 129, 3)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("shapes", SHAPES)
def test_values(shapes, dtype):
    q, k, v = (rand(s, i) for i, s in enumerate(shapes))
    check(q, k, v, dtype)
    check(q, k, v, dtype, is_causal=True)


def test_broadcast_batch_dims():
    q, k, v = rand((2, 4, 9, 8)), rand((4, 11, 8), 1), rand((2, 1, 11, 5), 2)
    check(q, k, v)
    check(q, k, v, is_causal=True)
    q1 = rand((1, 9, 8))
    check(q1, rand((3, 11, 8), 3), rand((3, 11, 5), 4))


@pytest.mark.parametrize("L,S", [(5, 12), (12, 5), (1, 1), (300, 70), (70, 300)])
def test_causal_l_ne_s(L, S):
    check(rand((2, 2, L, 8)), rand((2, 2, S, 8), 1), rand((2, 2, S, 8), 2), is_causal=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_masks(dtype):
    q, k, v = rand((2, 3, 6, 8)), rand((2, 3, 9, 8), 1), rand((2, 3, 9, 4), 2)
    rng = np.random.default_rng(7)
    bool_ls = rng.random((6, 9)) < 0.7
    bool_ls[:, 0] = True  # every row keeps a key
    check(q, k, v, dtype, mask=bool_ls)
    bool_b = rng.random((2, 1, 6, 9)) < 0.6
    bool_b[..., 3] = True
    check(q, k, v, dtype, mask=bool_b)
    check(q, k, v, dtype, mask=rand((6, 9), 3))
    check(q, k, v, dtype, mask=rand((2, 3, 6, 9), 4))
    check(q, k, v, dtype, mask=rand((3, 1, 9), 5))  # broadcast over queries
    check(q, k, v, dtype, mask=rand((6, 9), 3), scale=0.3)


def test_scale():
    q, k, v = rand((2, 5, 8)), rand((2, 7, 8), 1), rand((2, 7, 8), 2)
    for s in [0.01, 1.0, 2.5, -0.7]:
        check(q, k, v, scale=s)
        check(q, k, v, scale=s, is_causal=True)


def test_strided_inputs():
    # (B, L, H, E) transposed to (B, H, L, E), as a projection followed by a head split leaves it
    qb, kb, vb = rand((2, 6, 3, 8)), rand((2, 9, 3, 8), 1), rand((2, 9, 3, 8), 2)
    exp = reference(qb.transpose(0, 2, 1, 3), kb.transpose(0, 2, 1, 3), vb.transpose(0, 2, 1, 3))
    for dtype in ["float64", "float32"]:
        q, k, v = (et(a, dtype).transpose(1, 2) for a in (qb, kb, vb))
        assert not q.is_contiguous()
        out = F.scaled_dot_product_attention(q, k, v)
        np.testing.assert_allclose(npy(out), exp, rtol=TOL[dtype], atol=TOL[dtype])
    # key given as the transpose of a (E, S) tensor; value sliced with a step
    kt = rand((2, 8, 9), 3)
    vs = rand((2, 18, 5), 4)
    q = rand((2, 6, 8))
    out = F.scaled_dot_product_attention(et(q), et(kt).mT, et(vs)[:, ::2])
    np.testing.assert_allclose(npy(out), reference(q, kt.swapaxes(1, 2), vs[:, ::2]), rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_zero_size(dtype):
    z = F.scaled_dot_product_attention(et(rand((2, 0, 4)), dtype), et(rand((2, 3, 4)), dtype),
                                       et(rand((2, 3, 5)), dtype))
    assert tuple(z.shape) == (2, 0, 5)
    z = F.scaled_dot_product_attention(et(rand((2, 4, 4)), dtype), et(rand((2, 0, 4)), dtype),
                                       et(rand((2, 0, 5)), dtype))
    assert tuple(z.shape) == (2, 4, 5)
    assert (npy(z) == 0).all()  # torch: softmax over no keys, times an empty V
    z = F.scaled_dot_product_attention(et(rand((0, 4, 4)), dtype), et(rand((0, 3, 4)), dtype),
                                       et(rand((0, 3, 5)), dtype), is_causal=True)
    assert tuple(z.shape) == (0, 4, 5)


def test_thread_counts_agree():
    q, k, v = et(rand((3, 200, 16)), "float32"), et(rand((3, 300, 16), 1), "float32"), \
        et(rand((3, 300, 16), 2), "float32")
    n = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = npy(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        ember.set_num_threads(2)
        two = npy(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    finally:
        ember.set_num_threads(n)
    np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-6)


def test_float16_runs_the_decomposition():
    q, k, v = rand((2, 5, 8)), rand((2, 7, 8), 1), rand((2, 7, 8), 2)
    out = F.scaled_dot_product_attention(et(q, "float16"), et(k, "float16"), et(v, "float16"))
    assert out.dtype == ember.float16
    np.testing.assert_allclose(npy(out), reference(q, k, v), rtol=1e-2, atol=1e-2)


# ---- torch 1.13's _scaled_dot_product_attention ----

@pytest.mark.parametrize("case", ["plain", "causal", "bool", "additive", "causal_ls"])
def test_torch113_private_api(case):
    L, S = (7, 4) if case == "causal_ls" else (5, 6)
    q, k, v = rand((2, 3, L, 8)), rand((2, 3, S, 8), 1), rand((2, 3, S, 8), 2)
    kw = {}
    mask = None
    if case.startswith("causal"):
        kw["is_causal"] = True
    elif case == "bool":
        mask = np.random.default_rng(3).random((L, S)) < 0.7
        mask[:, 0] = True
    elif case == "additive":
        mask = rand((2, 3, L, S), 4)
    for need in [False, True]:
        eq, ek, ev = (et(a, grad=True) for a in (q, k, v))
        tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in (q, k, v))
        em = None if mask is None else ember.from_numpy(mask)
        tm = None if mask is None else torch.from_numpy(mask)
        eo, ew = F._scaled_dot_product_attention(eq, ek, ev, em, 0.0, need, **kw)
        to, tw = torch.nn.functional._scaled_dot_product_attention(tq, tk, tv, tm, 0.0, need,
                                                                   **kw)
        np.testing.assert_allclose(npy(eo), to.detach().numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(npy(ew), tw.detach().numpy(), rtol=1e-10, atol=1e-10)
        g = rand(tuple(to.shape), 9)
        eo.backward(et(g))
        to.backward(torch.from_numpy(g))
        for a, b in [(eq, tq), (ek, tk), (ev, tv)]:
            np.testing.assert_allclose(npy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-10)


def test_torch113_errors_match():
    q, k, v = rand((2, 5, 8)), rand((2, 6, 8), 1), rand((2, 6, 8), 2)
    cases = [
        ((q, k, v), {"attn_mask": np.ones((5, 6), bool), "is_causal": True}),
        ((q[0, 0], k[0, 0], v[0, 0]), {}),
        ((q, k, v), {"attn_mask": np.ones((3, 2, 5, 6), bool)}),
    ]
    for (a, b, c), kw in cases:
        tkw = dict(kw)
        ekw = dict(kw)
        if "attn_mask" in kw:
            tkw["attn_mask"] = torch.from_numpy(kw["attn_mask"])
            ekw["attn_mask"] = ember.from_numpy(kw["attn_mask"])
        with pytest.raises(Exception) as te:
            torch.nn.functional._scaled_dot_product_attention(
                torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c), **tkw)
        with pytest.raises(type(te.value)):
            F._scaled_dot_product_attention(et(a), et(b), et(c), **ekw)


# ---- gradients ----

@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.7}, {"mask": "bool"},
                                {"mask": "float"}])
def test_gradcheck_fused(kw):
    kw = dict(kw)
    q, k, v = et(rand((2, 4, 3)), grad=True), et(rand((2, 5, 3), 1), grad=True), \
        et(rand((2, 5, 2), 2), grad=True)
    mask = kw.pop("mask", None)
    if mask == "bool":
        m = np.random.default_rng(5).random((4, 5)) < 0.6
        m[:, 0] = True
        kw["attn_mask"] = ember.from_numpy(m)
    elif mask == "float":
        kw["attn_mask"] = et(rand((2, 4, 5), 6))

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kw)

    assert ember.autograd.gradcheck(f, (q, k, v), check_forward_ad=True)
    assert ember.autograd.gradgradcheck(f, (q, k, v))


def test_gradcheck_mask_requiring_grad():
    q, k, v = et(rand((2, 4, 3)), grad=True), et(rand((2, 5, 3), 1), grad=True), \
        et(rand((2, 5, 2), 2), grad=True)
    m = et(rand((4, 5), 3), grad=True)
    assert ember.autograd.gradcheck(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), (q, k, v, m))


def test_gradcheck_fused_primitive():
    q, k, v = et(rand((3, 4, 3)), grad=True), et(rand((3, 6, 3), 1), grad=True), \
        et(rand((3, 6, 2), 2), grad=True)

    def f(q, k, v):
        return ember._C._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=True)[0]

    assert ember.autograd.gradcheck(f, (q, k, v), check_forward_ad=True)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask", [None, "bool", "float"])
def test_fused_grads_match_math_float32(causal, mask):
    shapes = ((2, 2, 150, 16), (2, 2, 300, 16), (2, 2, 300, 8))
    arrays = [rand(s, i) for i, s in enumerate(shapes)]
    m = None
    if mask == "bool" and not causal:
        mm = np.random.default_rng(8).random((150, 300)) < 0.5
        mm[:, 0] = True
        m = ember.from_numpy(mm)
    elif mask == "float" and not causal:
        m = et(rand((2, 1, 150, 300), 8), "float32")
    g = et(rand((2, 2, 150, 8), 9), "float32")
    grads = []
    for fused in [True, False]:
        q, k, v = (et(a, "float32", grad=True) for a in arrays)
        if fused:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal)
        else:
            out = ember._C._scaled_dot_product_attention_math(q, k, v, m, 0.0, causal)[0]
        out.backward(g)
        grads.append([npy(out), npy(q.grad), npy(k.grad), npy(v.grad)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_bfloat16_grads():
    arrays = [rand((2, 40, 16)), rand((2, 70, 16), 1), rand((2, 70, 16), 2)]
    g = rand((2, 40, 16), 3)
    q, k, v = (et(a, "bfloat16", grad=True) for a in arrays)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.backward(et(g, "bfloat16"))
    tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in arrays)
    # the reference on the bfloat16-rounded inputs, in float64
    with torch.no_grad():
        for t, e in [(tq, q), (tk, k), (tv, v)]:
            t.copy_(torch.from_numpy(npy(e)))
    s = tq @ tk.mT / 4.0 + torch.full((40, 70), -math.inf, dtype=torch.float64).triu(1)
    ref = torch.softmax(s, -1) @ tv
    ref.backward(torch.from_numpy(npy(et(g, "bfloat16"))))
    for e, t in [(q, tq), (k, tk), (v, tv)]:
        assert e.grad.dtype == ember.bfloat16
        np.testing.assert_allclose(npy(e.grad), t.grad.numpy(), rtol=5e-2, atol=5e-2)


def test_vmap_matches_loop():
    q, k, v = et(rand((3, 2, 5, 4))), et(rand((3, 2, 6, 4), 1)), et(rand((2, 6, 4), 2))
    m = et(rand((3, 5, 6), 3))
    out = ember.func.vmap(lambda q, k, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                          in_dims=(0, 0, 0))(q, k, m)
    for i in range(3):
        exp = F.scaled_dot_product_attention(q[i], k[i], v, attn_mask=m[i])
        np.testing.assert_allclose(npy(out[i]), npy(exp), rtol=1e-12, atol=1e-12)
    out = ember.func.vmap(
        lambda q: F.scaled_dot_product_attention(q, k[0, 0], v[0], is_causal=True), in_dims=1)(q)
    for i in range(2):
        exp = F.scaled_dot_product_attention(q[:, i], k[0, 0], v[0], is_causal=True)
        np.testing.assert_allclose(npy(out[i]), npy(exp), rtol=1e-12, atol=1e-12)


# ---- dropout ----

def test_dropout_statistics():
    # uniform weights 1/S (q = 0) and v = 1: each output is (kept count)/(S (1-p)), mean 1 and
    # variance p / ((1-p) S) per row.
    p, S, rows = 0.3, 64, 4096
    ember.manual_seed(1234)
    q = ember.zeros(rows, 1, 8)
    k = ember.zeros(rows, S, 8)
    v = ember.ones(rows, S, 1)
    out = npy(F.scaled_dot_product_attention(q, k, v, dropout_p=p)).ravel()
    sd = math.sqrt(p / ((1 - p) * S))
    assert abs(out.mean() - 1) < 5 * sd / math.sqrt(rows)
    assert abs(out.std() - sd) < 5 * sd / math.sqrt(2 * rows)
    # the decomposition's weights: a fraction p of them is dropped
    w = npy(ember._C._scaled_dot_product_attention_math(q, k, v, None, p)[1])
    frac = (w == 0).mean()
    assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / w.size)
    # p = 0 in training is deterministic and equals the fused path
    a = F.scaled_dot_product_attention(et(rand((2, 3, 4))), et(rand((2, 5, 4), 1)),
                                       et(rand((2, 5, 4), 2)), dropout_p=0.0)
    np.testing.assert_allclose(npy(a), reference(rand((2, 3, 4)), rand((2, 5, 4), 1),
                                                 rand((2, 5, 4), 2)), atol=1e-12)


def test_dropout_mask_argument():
    q, k, v = et(rand((2, 3, 4))), et(rand((2, 5, 4), 1)), et(rand((2, 5, 4), 2))
    keep = np.random.default_rng(2).random((2, 3, 5)) < 0.5
    out, w = ember._C._scaled_dot_product_attention_math(q, k, v, None, 0.5, False,
                                                         ember.from_numpy(keep))
    s = rand((2, 3, 4)) @ rand((2, 5, 4), 1).swapaxes(1, 2) / 2.0
    pr = np.exp(s - s.max(-1, keepdims=True))
    pr /= pr.sum(-1, keepdims=True)
    exp = (pr * keep) @ rand((2, 5, 4), 2) * 2.0
    np.testing.assert_allclose(npy(out), exp, rtol=1e-10, atol=1e-10)


# ---- bad input ----

def test_bad_input():
    q, k, v = et(rand((2, 5, 8))), et(rand((2, 6, 8), 1)), et(rand((2, 6, 8), 2))
    sdpa = F.scaled_dot_product_attention
    with pytest.raises(IndexError, match=r"\[scaled_dot_product_attention\]"):
        sdpa(et(rand((8,))), et(rand((8,))), et(rand((8,))))
    with pytest.raises(RuntimeError, match=r"\[scaled_dot_product_attention\].*embedding dim"):
        sdpa(q, et(rand((2, 6, 7))), v)
    with pytest.raises(RuntimeError, match=r"\[scaled_dot_product_attention\].*same dtype"):
        sdpa(q, k.to(ember.float32), v)
    with pytest.raises(RuntimeError, match=r"\[scaled_dot_product_attention\].*attn_mask"):
        sdpa(q, k, v, attn_mask=ember.ones(3, 5, 6, dtype=ember.bool))
    with pytest.raises(RuntimeError, match=r"\[scaled_dot_product_attention\].*attn_mask dtype"):
        sdpa(q, k, v, attn_mask=ember.ones(5, 6, dtype=ember.int64))
    with pytest.raises(RuntimeError, match=r"\[scaled_dot_product_attention\].*is_causal"):
        sdpa(q, k, v, attn_mask=ember.ones(5, 6, dtype=ember.bool), is_causal=True)
    with pytest.raises(RuntimeError, match=r"\[scaled_dot_product_attention\].*broadcast"):
        sdpa(et(rand((3, 5, 8))), k, v)
    with pytest.raises(RuntimeError, match=r"\[scaled_dot_product_attention\].*sequence"):
        sdpa(q, k, et(rand((2, 7, 8))))
    with pytest.raises(TypeError):
        sdpa([1.0], k, v)
    with pytest.raises(TypeError):
        sdpa(q, k, v, 0.0, 0.0, False, 1.0)  # scale is keyword-only
    with pytest.raises(RuntimeError):
        sdpa(et(rand((2, 5, 8)), "float32").to(ember.int64), k.to(ember.int64), v.to(ember.int64))


def test_vmap_of_grad_matches_loop():
    q, k, v = et(rand((3, 5, 4))), et(rand((3, 6, 4), 1)), et(rand((3, 6, 4), 2))

    def f(q, k, v):
        return (F.scaled_dot_product_attention(q, k, v, is_causal=True) ** 2).sum()

    g = ember.func.grad(f, argnums=(0, 1, 2))
    batched = ember.func.vmap(g)(q, k, v)
    for i in range(3):
        for b, e in zip(batched, g(q[i], k[i], v[i])):
            np.testing.assert_allclose(npy(b[i]), npy(e), rtol=1e-10, atol=1e-12)


def test_vmap_of_fused_backward_matches_loop():
    q, k, v = et(rand((3, 2, 5, 4))), et(rand((3, 2, 6, 4), 1)), et(rand((3, 2, 6, 3), 2))
    g = et(rand((3, 2, 5, 3), 3))
    fwd = ember._C._scaled_dot_product_flash_attention_for_cpu
    bwd = ember._C._scaled_dot_product_flash_attention_for_cpu_backward

    def grads(g, q, k, v):
        out, lse = fwd(q, k, v, is_causal=True)
        return bwd(g, q, k, v, out, lse, 0.0, True)

    batched = ember.func.vmap(grads)(g, q, k, v)
    for i in range(3):
        for b, e in zip(batched, grads(g[i], q[i], k[i], v[i])):
            np.testing.assert_allclose(npy(b[i]), npy(e), rtol=1e-12, atol=1e-12)
