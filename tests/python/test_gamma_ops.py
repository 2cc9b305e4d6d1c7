"""The gamma family (lgamma, digamma, polygamma, mvlgamma and ember.special's names for them)
against torch 1.13 and SciPy: values on every float dtype, poles and negative non-integers,
layouts, out=, in-place forms, first and second derivatives, forward AD and bad input."""

import math

import numpy as np
import pytest
import scipy.special as sp
import torch

import ember
import ember.autograd.forward_ad as efwAD
from _oracle import assert_same, make, to_ember, to_torch

INF, NAN = float("inf"), float("nan")
# Ordinary points, poles (0, negative integers), negative non-integers, large and tiny values.
VALUES = [-10.3, -3.5, -2.5, -2.0, -1.5, -1.0, -0.5, -0.0, 0.0, 1e-3, 0.1, 0.5, 1.0,
          1.4616321449683623, 2.0, 2.5, 5.0, 9.5, 10.5, 30.0, 100.0, 1e3, 1e6]
SPECIAL = [INF, -INF, NAN]
POLES = [0.0, -1.0, -2.0, -7.0]


def pair(values, dtype):
    arr = np.array(values, dtype=np.float64)
    t = torch.from_numpy(arr).to(getattr(torch, dtype))
    return to_ember(t), t


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("op", ["lgamma", "digamma"])
def test_unary_matches_torch(op, dtype):
    e, t = pair(VALUES + SPECIAL, dtype)
    rtol = {"float32": 2e-6, "float64": 1e-12, "bfloat16": 1.6e-2}[dtype]
    atol = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 1e-5}[dtype]
    assert_same(getattr(ember, op)(e), getattr(torch, op)(t), rtol=rtol, atol=atol, what=op)
    assert_same(getattr(e, op)(), getattr(t, op)(), rtol=rtol, atol=atol, what=op)


def test_poles_by_hand():
    x = ember.tensor([0.0, -0.0, -1.0, -4.0], dtype=ember.float64)
    assert ember.lgamma(x).tolist() == [INF] * 4
    d = ember.digamma(x).tolist()
    assert d[0] == -INF and d[1] == INF and math.isnan(d[2]) and math.isnan(d[3])
    # ψ^(n) has a pole of order n + 1 at each non-positive integer: +inf for odd n, and the
    # one-sided sign for even n is that of torch (ζ(n + 1, q) = +inf there).
    for n in (1, 3):
        assert ember.polygamma(n, x).tolist() == [INF] * 4
    for n in (2, 4):
        assert ember.polygamma(n, x).tolist() == [-INF] * 4
    # At +inf every ψ^(n), n >= 1, tends to 0; at -inf it has no limit.
    y = ember.tensor([INF, -INF], dtype=ember.float64)
    for n in range(1, 5):
        r = ember.polygamma(n, y).tolist()
        assert r[0] == 0 and math.isnan(r[1])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_polygamma_float64_vs_scipy(n):
    vals = [v for v in VALUES if v not in POLES and v != -0.0]
    x = np.array(vals)
    e = ember.polygamma(n, ember.from_numpy(x.copy())).numpy()
    np.testing.assert_allclose(e, sp.polygamma(n, x), rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_polygamma_matches_torch(n, dtype):
    # torch's n = 1 kernel is a truncated series (relative error ~1e-9) and gives huge finite
    # values at poles, so poles and infinities are checked by hand above.
    vals = [v for v in VALUES if v not in POLES and v != -0.0]
    e, t = pair(vals + [NAN], dtype)
    rtol = {"float32": 1e-5, "float64": 1e-8, "bfloat16": 1.6e-2}[dtype]
    assert_same(ember.polygamma(n, e), torch.polygamma(n, t), rtol=rtol, atol=1e-6,
                what=f"polygamma({n})")
    assert_same(e.polygamma(n), t.polygamma(n), rtol=rtol, atol=1e-6)
    assert_same(ember.special.polygamma(n, e), torch.special.polygamma(n, t), rtol=rtol,
                atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_mvlgamma_matches_torch(p, dtype):
    vals = [v + (p - 1) / 2 for v in (0.01, 0.5, 1.0, 2.5, 7.0, 40.0, 300.0)]
    e, t = pair(vals, dtype)
    rtol = {"float32": 2e-6, "float64": 1e-12, "bfloat16": 1.6e-2}[dtype]
    assert_same(ember.mvlgamma(e, p), torch.mvlgamma(t, p), rtol=rtol, atol=1e-5)
    assert_same(e.mvlgamma(p), t.mvlgamma(p), rtol=rtol, atol=1e-5)
    assert_same(ember.special.multigammaln(e, p), torch.special.multigammaln(t, p), rtol=rtol,
                atol=1e-5)
    # log Γ_p(x) = p(p-1)/4 log π + Σ_i log Γ(x - i/2), by hand in float64.
    if dtype == "float64":
        ref = [p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(v - i / 2) for i in range(p))
               for v in vals]
        np.testing.assert_allclose(ember.mvlgamma(e, p).tolist(), ref, rtol=1e-13)


def test_mvlgamma_below_its_domain_follows_torch():
    # torch 1.13 checks only p >= 1; smaller elements give lgamma's values (poles are inf).
    vals = [0.4, 2.0, -0.3, 0.0]
    e, t = pair(vals, "float64")
    assert_same(ember.mvlgamma(e, 3), torch.mvlgamma(t, 3), rtol=1e-12, atol=1e-12)
    # A huge p is refused up front rather than summing billions of terms per element.
    with pytest.raises(RuntimeError, match="too large"):
        ember.mvlgamma(e, 2**31)


def test_integer_and_bool_inputs_compute_in_float():
    for dtype in ("int64", "int32", "uint8", "bool"):
        e, t = make(dtype, kind="small")
        for op in ("lgamma", "digamma"):
            assert_same(getattr(ember, op)(e), getattr(torch, op)(t), what=f"{op} {dtype}")
        assert_same(ember.polygamma(2, e), torch.polygamma(2, t), rtol=1e-5, atol=1e-5)
    e, t = make("int64", kind="small")
    assert_same(ember.mvlgamma(e + 3, 2), torch.mvlgamma(t + 3, 2))


@pytest.mark.parametrize("layout", ["transposed", "strided", "broadcast", "zero", "scalar"])
def test_layouts(layout):
    e, t = make("float64", layout, kind="any")
    for op in ("lgamma", "digamma"):
        assert_same(getattr(ember, op)(e), getattr(torch, op)(t), what=f"{op} {layout}")
    assert_same(ember.polygamma(3, e), torch.polygamma(3, t), rtol=1e-10, atol=0)
    e2, t2 = e.abs() + 1.5, t.abs() + 1.5
    assert_same(ember.mvlgamma(e2, 3), torch.mvlgamma(t2, 3))


def test_out_and_inplace():
    e, t = make("float64", "strided", kind="any")
    for op in ("lgamma", "digamma"):
        eo, to = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
        r = getattr(ember, op)(e, out=eo)
        assert r is eo
        getattr(torch, op)(t, out=to)
        assert_same(eo, to)
        ec, tc = e.clone(), t.clone()
        assert getattr(ec, op + "_")() is ec
        getattr(tc, op + "_")()
        assert_same(ec, tc)
    eo, to = ember.empty(3, 4, dtype=ember.float64), torch.empty(3, 4, dtype=torch.float64)
    assert ember.polygamma(2, e, out=eo) is eo
    torch.polygamma(2, t, out=to)
    assert_same(eo, to, rtol=1e-10, atol=0)
    # Away from the poles, where torch's trigamma gives huge finite values.
    ec, tc = e.abs() + 0.5, t.abs() + 0.5
    assert ec.polygamma_(1) is ec
    tc.polygamma_(1)
    assert_same(ec, tc, rtol=1e-8, atol=0)
    e2, t2 = e.abs() + 2, t.abs() + 2
    eo, to = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
    assert ember.mvlgamma(e2, 4, out=eo) is eo
    torch.mvlgamma(t2, 4, out=to)
    assert_same(eo, to)
    assert ember.special.multigammaln(e2, 4, out=eo) is eo
    assert_same(eo, to)
    ec, tc = e2.clone(), t2.clone()
    assert ec.mvlgamma_(4) is ec
    tc.mvlgamma_(4)
    assert_same(ec, tc)
    # An integer out= cannot hold the float result.
    with pytest.raises(RuntimeError):
        ember.lgamma(e, out=ember.empty(3, 4, dtype=ember.int64))
    with pytest.raises(RuntimeError):
        torch.lgamma(t, out=torch.empty(3, 4, dtype=torch.int64))


def test_special_aliases():
    e, t = make("float32", kind="any")
    assert_same(ember.special.gammaln(e), torch.special.gammaln(t))
    assert_same(ember.special.digamma(e), torch.special.digamma(t))
    assert_same(ember.special.psi(e), torch.special.psi(t))
    assert_same(ember.special.logsumexp(e, 1), torch.special.logsumexp(t, 1))
    assert_same(ember.special.logsumexp(e, (0, 1), keepdim=True),
                torch.special.logsumexp(t, (0, 1), keepdim=True))


def _gradcheck_inputs(lo=0.3, hi=4.0, shape=(5,), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, size=shape)
    return ember.tensor(x.tolist(), dtype=ember.float64, requires_grad=True)


@pytest.mark.parametrize("name,fn", [
    ("lgamma", lambda x: ember.lgamma(x)),
    ("digamma", lambda x: ember.digamma(x)),
    ("polygamma0", lambda x: ember.polygamma(0, x)),
    ("polygamma1", lambda x: ember.polygamma(1, x)),
    ("polygamma2", lambda x: ember.polygamma(2, x)),
    ("polygamma3", lambda x: ember.polygamma(3, x)),
    ("polygamma4", lambda x: ember.polygamma(4, x)),
    ("mvlgamma3", lambda x: ember.mvlgamma(x + 1, 3)),
])
def test_gradcheck_and_forward_ad(name, fn):
    x = _gradcheck_inputs()
    assert ember.autograd.gradcheck(fn, (x,), check_forward_ad=True)
    assert ember.autograd.gradgradcheck(fn, (x,))
    # Negative non-integers too (away from the poles).
    y = ember.tensor([-0.5, -1.3, -2.7], dtype=ember.float64, requires_grad=True)
    if not name.startswith("mvlgamma"):
        assert ember.autograd.gradcheck(fn, (y,), check_forward_ad=True)


def test_grad_values_vs_torch():
    x = np.array([0.2, 1.0, 2.5, 7.0, -1.5])
    for op, args in (("lgamma", ()), ("digamma", ()), ("polygamma", (2,)), ("mvlgamma", (2,))):
        xe = ember.tensor((x + 3 if op == "mvlgamma" else x).tolist(), dtype=ember.float64,
                          requires_grad=True)
        xt = torch.tensor((x + 3 if op == "mvlgamma" else x).tolist(), dtype=torch.float64,
                          requires_grad=True)
        if op == "polygamma":
            ye, yt = ember.polygamma(2, xe), torch.polygamma(2, xt)
        elif op == "mvlgamma":
            ye, yt = ember.mvlgamma(xe, *args), torch.mvlgamma(xt, *args)
        else:
            ye, yt = getattr(ember, op)(xe), getattr(torch, op)(xt)
        ye.sum().backward()
        yt.sum().backward()
        # torch's trigamma (digamma's derivative) is a truncated series: ~1e-9 relative.
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-8)
        assert ye.grad_fn is not None


def test_forward_ad_tangent():
    x = ember.tensor([0.5, 2.0, 3.5], dtype=ember.float64)
    v = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64)
    with efwAD.dual_level():
        d = efwAD.make_dual(x, v)
        t = efwAD.unpack_dual(ember.lgamma(d)).tangent
        t2 = efwAD.unpack_dual(ember.polygamma(1, d)).tangent
    np.testing.assert_allclose(t.numpy(), sp.digamma(x.numpy()) * v.numpy(), rtol=1e-12)
    np.testing.assert_allclose(t2.numpy(), sp.polygamma(2, x.numpy()) * v.numpy(), rtol=1e-11)


def test_bad_input():
    x = ember.tensor([1.0, 2.0])
    xt = torch.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError):
        ember.polygamma(-1, x)
    with pytest.raises(RuntimeError):
        torch.polygamma(-1, xt)
    # mvlgamma: p >= 1. (torch 1.13 does not check that elements exceed (p - 1) / 2.)
    with pytest.raises(RuntimeError):
        ember.mvlgamma(ember.tensor([1.0]), 0)
    with pytest.raises(RuntimeError):
        torch.mvlgamma(torch.tensor([1.0]), 0)
    with pytest.raises(TypeError):
        ember.lgamma([1.0, 2.0])
    with pytest.raises(TypeError):
        torch.lgamma([1.0, 2.0])
    with pytest.raises(TypeError):
        ember.polygamma(1.5, x)
    with pytest.raises(TypeError):
        torch.polygamma(1.5, xt)
    with pytest.raises(TypeError):
        ember.polygamma(x, 1)
    with pytest.raises(TypeError):
        torch.polygamma(xt, 1)
    with pytest.raises(TypeError):
        ember.mvlgamma(x, "2")
    with pytest.raises(TypeError):
        torch.mvlgamma(xt, "2")
    # Complex input is not supported by the gamma family in torch 1.13 either.
    c = torch.tensor([1 + 1j])
    with pytest.raises(RuntimeError):
        torch.lgamma(c)
    with pytest.raises(RuntimeError):
        ember.lgamma(to_ember(c))
    with pytest.raises(RuntimeError):
        ember.digamma(to_ember(c))


def test_results_round_trip_to_torch():
    e = ember.tensor([0.5, 1.5], dtype=ember.float64)
    np.testing.assert_allclose(to_torch(ember.digamma(e)).numpy(), sp.digamma([0.5, 1.5]),
                               rtol=1e-14)
