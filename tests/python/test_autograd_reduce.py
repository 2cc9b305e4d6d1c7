"""Autograd of the reductions, scans, softmax, sorting and order statistics against torch 1.13:
vjp (ember.autograd.grad with a random grad_output) on float64, second derivatives through
create_graph, forward-mode tangents (forward_ad), strided / broadcast / zero-size / 0-dim inputs,
ties (max/amax/median share or select like PyTorch), zeros in prod/cumprod, and the ops that have
no derivative (indices, unique, bincount weights)."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwad

import ember
import ember.autograd.forward_ad as efwad
import ember.linalg  # noqa: F401
from _oracle import to_numpy as _to_numpy

RTOL, ATOL = 1e-7, 1e-9


# ---- harness (shared with test_autograd_shape.py) ----

def E(a):
    return ember.from_numpy(np.array(a, order="C"))


def T(a):
    return torch.from_numpy(np.array(a, order="C"))


def to_numpy(x):
    # torch returns "efficient zero tensors" from some backward formulas: their memory is junk
    if isinstance(x, torch.Tensor) and x._is_zerotensor():
        return np.zeros(tuple(x.shape), dtype=_to_numpy(torch.zeros((), dtype=x.dtype)).dtype)
    return _to_numpy(x.detach())


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _rand(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _close(e, t, what, rtol=RTOL, atol=ATOL):
    if t is None:
        assert e is None or np.all(to_numpy(e) == 0), f"{what}: torch has no gradient"
        return
    tn = to_numpy(t)
    en = np.zeros_like(tn) if e is None else to_numpy(e)
    assert en.shape == tn.shape, f"{what}: shape {en.shape} != {tn.shape}"
    np.testing.assert_allclose(en, tn, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _fd_tangent(fn, arrays, tangents, eps=1e-6):
    """Central finite difference of fn along the tangents (the oracle where torch 1.13 has no
    forward-mode rule)."""
    plus = _tuple(fn(torch, *[T(a + eps * t) for a, t in zip(arrays, tangents)]))
    minus = _tuple(fn(torch, *[T(a - eps * t) for a, t in zip(arrays, tangents)]))
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def check_grad(fn, *arrays, second=True, forward=True, seed=0, rtol=RTOL, atol=ATOL):
    """fn(L, *tensors) with L = torch or ember returns a tensor or a tuple of differentiable
    tensors. Compares values, the vjp, the vjp of the vjp and the jvp with torch's."""
    rng = np.random.default_rng(seed)
    arrays = [np.asarray(a) for a in arrays]
    tx = [T(a).requires_grad_() for a in arrays]
    ex = [E(a).requires_grad_() for a in arrays]
    to, eo = _tuple(fn(torch, *tx)), _tuple(fn(ember, *ex))
    assert len(to) == len(eo)
    for i, (a, b) in enumerate(zip(eo, to)):
        _close(a, b, f"value {i}", rtol, atol)
        assert a.requires_grad == b.requires_grad, f"output {i}: requires_grad"
    gos = [_rand(rng, tuple(o.shape), to_numpy(o).dtype) for o in to]
    tg = torch.autograd.grad(to, tx, [T(g) for g in gos], create_graph=second, allow_unused=True)
    eg = ember.autograd.grad(eo, ex, [E(g) for g in gos], create_graph=second, allow_unused=True)
    for i, (a, b) in enumerate(zip(eg, tg)):
        _close(a, b, f"grad {i}", rtol, atol)
    if second:
        vs = [_rand(rng, a.shape, a.dtype) for a in arrays]
        tsum = [(g * T(v)).sum() for g, v in zip(tg, vs) if g is not None and g.requires_grad]
        esum = [(g * E(v)).sum() for g, v in zip(eg, vs) if g is not None and g.requires_grad]
        if tsum:
            tgg = torch.autograd.grad(sum(tsum), tx, allow_unused=True)
            egg = ember.autograd.grad(esum[0] if len(esum) == 1 else ember.stack(esum).sum(), ex,
                                      allow_unused=True) if esum else [None] * len(ex)
            for i, (a, b) in enumerate(zip(egg, tgg)):
                _close(a, b, f"grad-grad {i}", rtol, atol)
    if forward:
        tans = [_rand(rng, a.shape, a.dtype) for a in arrays]
        with efwad.dual_level():
            outs = _tuple(fn(ember, *[efwad.make_dual(E(a), E(t)) for a, t in zip(arrays, tans)]))
            et = [efwad.unpack_dual(o).tangent for o in outs]
        try:
            with tfwad.dual_level():
                outs = _tuple(fn(torch, *[tfwad.make_dual(T(a), T(t))
                                          for a, t in zip(arrays, tans)]))
                tt = [tfwad.unpack_dual(o).tangent for o in outs]
            ftol = (rtol, atol)
        except (NotImplementedError, RuntimeError):
            tt = _fd_tangent(fn, arrays, tans)
            ftol = (1e-5, 1e-6)
        for i, (a, b) in enumerate(zip(et, tt)):
            if b is None:
                b = torch.zeros(tuple(to[i].shape), dtype=to[i].dtype)
            _close(a, b, f"tangent {i}", *ftol)


def rnd(*shape, seed=0, dtype=np.float64):
    return _rand(np.random.default_rng(seed), shape, dtype)


def distinct(*shape, seed=0):
    """Values without ties (for sort / order statistics)."""
    n = int(np.prod(shape)) if shape else 1
    return np.random.default_rng(seed).permutation(n).astype(np.float64).reshape(shape) * 0.37 + 0.1


# Layout transforms applied inside fn to the leaf: the op then sees a strided or broadcast view.
LAYOUTS = {
    "contiguous": (lambda x: x, (3, 4)),
    "transposed": (lambda x: x.t(), (4, 3)),
    "strided": (lambda x: x[:, ::2], (3, 8)),
    "broadcast": (lambda x: x.expand(3, 4), (1, 4)),
}


# ---- sums and means ----

@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("fn", ["sum", "mean", "nansum", "prod"])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_sum_family(fn, dim, layout):
    tr, shape = LAYOUTS[layout]
    if fn == "prod" and isinstance(dim, tuple):
        pytest.skip("prod takes one dim")

    def f(L, x):
        x = tr(x)
        op = getattr(L, fn)
        return op(x) if dim is None else op(x, dim, keepdim=False)
    check_grad(f, rnd(*shape, seed=1))

    def g(L, x):
        x = tr(x)
        op = getattr(L, fn)
        return op(x) if dim is None else op(x, dim, keepdim=True)
    check_grad(g, rnd(*shape, seed=2))


@pytest.mark.parametrize("fn", ["sum", "mean", "nansum", "prod", "amax", "amin", "logsumexp"])
def test_reduce_zero_size_and_scalar(fn):
    def f(L, x):
        return getattr(L, fn)(x, 1)
    check_grad(f, np.zeros((0, 3)))
    if fn in ("amax", "amin"):
        check_grad(lambda L, x: getattr(L, fn)(x, 0), np.zeros((3, 0)))
    check_grad(lambda L, x: getattr(L, fn)(x, 0), np.array(1.5))
    check_grad(lambda L, x: getattr(L, fn)(x, 0, True), np.array(-0.5))
    if fn not in ("logsumexp", "amax", "amin"):
        check_grad(lambda L, x: getattr(L, fn)(x), np.array(2.5))


def test_sum_dtype_and_complex():
    check_grad(lambda L, x: L.sum(x, 1, dtype=L.float32).double(), rnd(3, 4))
    check_grad(lambda L, x: L.sum(x, (0,), keepdim=True), rnd(3, 4, dtype=np.complex128))
    check_grad(lambda L, x: L.mean(x, 0), rnd(3, 4, dtype=np.complex128))
    check_grad(lambda L, x: L.prod(x, 1), rnd(3, 4, dtype=np.complex128))


def test_nansum_nanmean_nan():
    a = rnd(3, 4)
    a[0, 1] = a[2, 3] = np.nan
    check_grad(lambda L, x: L.nansum(x, 1), a)
    check_grad(lambda L, x: L.nanmean(x, 0), a)
    check_grad(lambda L, x: L.nanmean(x), a)


@pytest.mark.parametrize("zeros", [[], [(0, 1)], [(0, 1), (0, 3)], [(0, 1), (1, 2)]])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_with_zeros(zeros, dim):
    a = rnd(3, 4, seed=5)
    for z in zeros:
        a[z] = 0.0
    # torch 1.13 prod() over everything with several zeros returns a constant zero gradient
    second = not (dim is None and len(zeros) > 1)
    check_grad(lambda L, x: L.prod(x) if dim is None else L.prod(x, dim), a, second=second)


# ---- extrema ----

TIES = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 2.0, -4.0, 2.0]])


@pytest.mark.parametrize("fn", ["max", "min"])
def test_max_min_all_ties(fn):
    check_grad(lambda L, x: getattr(L, fn)(x), TIES)
    check_grad(lambda L, x: getattr(L, fn)(x), rnd(3, 4))
    check_grad(lambda L, x: getattr(L, fn)(x.t()), rnd(4, 3))
    check_grad(lambda L, x: getattr(L, fn)(x), np.array(0.25))
    # a NaN result: the gradient goes to the NaNs, the tangent is NaN (as PyTorch)
    check_grad(lambda L, x: getattr(L, fn)(x), np.array([[np.nan, 1.0], [np.nan, 2.0]]))


@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_max_min_dim(fn, keepdim, layout):
    tr, shape = LAYOUTS[layout]
    for dim in (0, 1, -1):
        check_grad(lambda L, x: getattr(L, fn)(tr(x), dim, keepdim)[0], rnd(*shape, seed=dim + 3))
    check_grad(lambda L, x: getattr(L, fn)(x, 1, keepdim)[0], TIES)
    check_grad(lambda L, x: getattr(L, fn)(x, 0, keepdim)[0], np.array(0.25))


@pytest.mark.parametrize("fn", ["amax", "amin"])
@pytest.mark.parametrize("dim", [(), 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin_ties(fn, dim, keepdim):
    check_grad(lambda L, x: getattr(L, fn)(x, dim, keepdim), TIES)
    check_grad(lambda L, x: getattr(L, fn)(x.t(), dim, keepdim), rnd(4, 3))


def test_aminmax():
    # torch 1.13 has no aminmax derivative: the oracle is (amin, amax), which newer PyTorch uses.
    ex = E(TIES).requires_grad_()
    lo, hi = ember.aminmax(ex, dim=1)
    g = ember.autograd.grad([lo, hi], [ex], [E(np.ones(3)), E(np.full(3, 2.0))])[0]
    tx = T(TIES).requires_grad_()
    tg = torch.autograd.grad([tx.amin(1), tx.amax(1)], [tx],
                             [torch.ones(3, dtype=torch.float64), torch.full((3,), 2.0,
                                                                            dtype=torch.float64)])
    _close(g, tg[0], "aminmax")


def test_index_outputs_have_no_grad():
    x = E(rnd(3, 4)).requires_grad_()
    for r in [ember.max(x, 1)[1], ember.min(x, 0)[1], ember.argmax(x), ember.argmin(x, 1),
              ember.sort(x, 1)[1], ember.argsort(x), ember.topk(x, 2)[1], ember.cummax(x, 0)[1],
              ember.kthvalue(x, 2, 1)[1], ember.median(x, 1)[1], ember.mode(x, 1)[1],
              ember.count_nonzero(x), ember.all(x), ember.any(x, 1),
              ember.histc(x, 4), ember.searchsorted(E(np.arange(5.0)), x),
              ember.bucketize(x, E(np.arange(5.0)))]:
        assert not r.requires_grad and r.grad_fn is None


def test_no_derivative_ops():
    x = E(rnd(6)).requires_grad_()
    for out, name in [(ember.unique(x), "_unique2"), (ember.unique_consecutive(x),
                                                      "unique_consecutive")]:
        assert out.requires_grad
        with pytest.raises((NotImplementedError, RuntimeError)):
            out.sum().backward()
    w = E(rnd(5)).requires_grad_()
    b = ember.bincount(E(np.array([0, 1, 1, 3, 2])), weights=w)
    assert b.requires_grad
    with pytest.raises((NotImplementedError, RuntimeError)):
        b.sum().backward()


# ---- statistics ----

@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std(fn, dim, correction, keepdim):
    def f(L, x):
        return getattr(L, fn)(x, dim, correction=correction, keepdim=keepdim)
    check_grad(f, rnd(3, 5, seed=correction))
    check_grad(lambda L, x: getattr(L, fn)(x.t()[::2], dim, correction=correction,
                                          keepdim=keepdim), rnd(5, 3, seed=9))


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_complex_and_constant(fn):
    check_grad(lambda L, x: getattr(L, fn)(x, 1), rnd(3, 4, dtype=np.complex128))
    # a zero std has the zero subgradient
    check_grad(lambda L, x: getattr(L, fn)(x, 1), np.ones((2, 3)), second=False)
    check_grad(lambda L, x: getattr(L, fn)(x), rnd(3, 4), second=True)


@pytest.mark.parametrize("dim", [0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(dim, keepdim):
    check_grad(lambda L, x: L.logsumexp(x, dim, keepdim), rnd(3, 4) * 30)
    check_grad(lambda L, x: L.logsumexp(x.t(), dim, keepdim), rnd(4, 3))


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 1.5, 0.5, -1, float("inf"), float("-inf")])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
def test_vector_norm(ord, dim):
    a = rnd(3, 4, seed=11)
    kw = {} if dim is None else {"dim": dim}
    check_grad(lambda L, x: L.linalg.vector_norm(x, ord, **kw), a)
    check_grad(lambda L, x: L.linalg.vector_norm(x, ord, keepdim=True, **kw), a)
    # ties of |x| share the inf-norm gradient
    check_grad(lambda L, x: L.linalg.vector_norm(x, ord, **kw), TIES, second=ord != 0)


@pytest.mark.parametrize("ord", [2, 1, 3, 1.5, float("inf")])
def test_norm_zero_vector_subgradient(ord):
    a = np.zeros((2, 3))
    a[1] = [1.0, -2.0, 0.5]
    check_grad(lambda L, x: L.linalg.vector_norm(x, ord, dim=1), a, second=False)


def test_norm_variants():
    check_grad(lambda L, x: L.norm(x), rnd(3, 4))
    check_grad(lambda L, x: L.norm(x, 3, dim=1), rnd(3, 4))
    check_grad(lambda L, x: L.norm(x, "fro", dim=(0, 1)), rnd(3, 4))
    check_grad(lambda L, x: L.linalg.vector_norm(x, 2, dim=1), rnd(3, 4, dtype=np.complex128))
    check_grad(lambda L, x, y: L.dist(x, y), rnd(3, 4), rnd(4, seed=3))
    check_grad(lambda L, x, y: L.dist(x, y, 1.5), rnd(3, 4), rnd(4, seed=3))
    check_grad(lambda L, x: L.linalg.vector_norm(x, 2, dtype=L.float64), rnd(2, 3))


# ---- scans ----

@pytest.mark.parametrize("fn", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_scans(fn, layout):
    tr, shape = LAYOUTS[layout]
    for dim in (0, 1, -1):
        check_grad(lambda L, x: getattr(L, fn)(tr(x), dim), rnd(*shape, seed=dim + 2))
    check_grad(lambda L, x: getattr(L, fn)(x, 0), np.array(0.7))
    check_grad(lambda L, x: getattr(L, fn)(x, 1), np.zeros((2, 0)))


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (0, 3)], [(1, 0), (2, 2), (2, 3)]])
def test_cumprod_zeros(zeros):
    a = rnd(3, 4, seed=4)
    for z in zeros:
        a[z] = 0.0
    check_grad(lambda L, x: L.cumprod(x, 1), a)
    check_grad(lambda L, x: L.cumprod(x, 0), a)


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cummax_cummin(fn):
    check_grad(lambda L, x: getattr(L, fn)(x, 1)[0], rnd(3, 5))
    check_grad(lambda L, x: getattr(L, fn)(x.t(), 0)[0], rnd(4, 3))
    check_grad(lambda L, x: getattr(L, fn)(x, 1)[0], TIES)
    check_grad(lambda L, x: getattr(L, fn)(x, 0)[0], np.array(1.0))


def test_logcumsumexp_large_and_dtype():
    check_grad(lambda L, x: L.logcumsumexp(x, 1), rnd(3, 4) * 100)
    check_grad(lambda L, x: L.cumsum(x, 1, dtype=L.float64), rnd(3, 4))


def test_inplace_scans():
    for fn in ["cumsum_", "cumprod_"]:
        def f(L, x):
            y = x * 1.0
            getattr(y, fn)(1)
            return y
        check_grad(f, rnd(3, 4, seed=7))
    a = rnd(3, 4)
    a[1, 1] = 0
    check_grad(lambda L, x: (x * 1.0).cumprod_(1), a, forward=False)


# ---- softmax ----

@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_softmax(fn, layout):
    tr, shape = LAYOUTS[layout]
    for dim in (0, 1, -1):
        check_grad(lambda L, x: getattr(L.nn.functional, fn)(tr(x), dim), rnd(*shape, seed=dim + 2))
    check_grad(lambda L, x: getattr(L.nn.functional, fn)(x, 0), np.array(0.3))
    check_grad(lambda L, x: getattr(L.nn.functional, fn)(x, 1), np.zeros((0, 3)))


def test_softmax_dtype():
    check_grad(lambda L, x: L.softmax(x.float(), 1, dtype=L.float64), rnd(3, 4), rtol=1e-5)
    check_grad(lambda L, x: L.log_softmax(x, 0, dtype=L.float64), rnd(3, 4))


# ---- sorting and order statistics ----

@pytest.mark.parametrize("layout", list(LAYOUTS)[:3])
def test_sort_topk_msort(layout):
    tr, shape = LAYOUTS[layout]
    a = distinct(*shape, seed=3)
    for dim in (0, 1):
        for desc in (False, True):
            check_grad(lambda L, x: L.sort(tr(x), dim, descending=desc)[0], a)
        for k in (0, 1, 2):
            check_grad(lambda L, x: L.topk(tr(x), k, dim)[0], a)
            check_grad(lambda L, x: L.topk(tr(x), k, dim, largest=False)[0], a)
    check_grad(lambda L, x: L.msort(tr(x)), a)
    check_grad(lambda L, x: L.sort(x, 0)[0], np.array(2.0))
    check_grad(lambda L, x: L.topk(x, 1)[0], np.array(2.0))


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue_median_mode(keepdim):
    a = distinct(3, 5, seed=8)
    for dim in (0, 1):
        check_grad(lambda L, x: L.kthvalue(x, 2, dim, keepdim)[0], a)
        check_grad(lambda L, x: L.median(x, dim, keepdim)[0], a)
        check_grad(lambda L, x: L.nanmedian(x, dim, keepdim)[0], a)
    m = np.array([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0]])
    check_grad(lambda L, x: L.mode(x, 1, keepdim)[0], m)
    check_grad(lambda L, x: L.median(x, 0, keepdim)[0], np.array(1.0))


def test_median_all_ties_and_nan():
    check_grad(lambda L, x: L.median(x), distinct(3, 4))
    check_grad(lambda L, x: L.median(x), np.array([1.0, 2.0, 2.0, 3.0, 2.0]))
    check_grad(lambda L, x: L.nanmedian(x), np.array([1.0, np.nan, 2.0, 3.0]))
    check_grad(lambda L, x: L.median(x), np.array([1.0, np.nan, 2.0, np.nan]))
    check_grad(lambda L, x: L.median(x), np.zeros((0,)))
    a = distinct(3, 4)
    a[1, 2] = np.nan
    check_grad(lambda L, x: L.nanmedian(x, 1)[0], a)


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_quantile(interp, dim):
    a = distinct(4, 5, seed=2)
    for q in (0.3, 0.5, 1.0):
        check_grad(lambda L, x: L.quantile(x, q, dim, interpolation=interp), a)
    qs = np.array([0.1, 0.5, 0.9])
    check_grad(lambda L, x: L.quantile(x, L.from_numpy(qs) if L is ember else torch.from_numpy(qs),
                                       dim, keepdim=True, interpolation=interp), a)
    b = a.copy()
    b[1, 2] = np.nan
    check_grad(lambda L, x: L.nanquantile(x, 0.4, dim, interpolation=interp), b)


def _q(L, qs):
    return L.from_numpy(np.array(qs)) if L is ember else torch.from_numpy(np.array(qs))


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_q_differentiable(fn, interp):
    # q is an input of PyTorch's composite: the linear weight q * (n - 1) - floor depends on it
    a = distinct(3, 5, seed=3)
    for dim, keepdim in ((None, False), (1, False), (0, True), (-1, True)):
        check_grad(lambda L, x, q: getattr(L, fn)(x, q, dim, keepdim, interpolation=interp),
                   a, np.array([0.15, 0.5, 0.8]))
        check_grad(lambda L, x, q: getattr(L, fn)(x, q, dim, keepdim, interpolation=interp),
                   a, np.array(0.35))
    # q alone requires grad; a NaN row (its rank is pinned, so no q gradient there). Only the
    # linear weight depends on q: the other modes leave the result out of the graph.
    b = a.copy()
    b[1, 3] = np.nan
    f = lambda L, q: getattr(L, fn)(_q(L, b), q, 1, interpolation=interp)  # noqa: E731
    if interp == "linear":
        check_grad(f, np.array([0.2, 0.7]), second=False)
    else:
        for L in (torch, ember):
            assert not f(L, _q(L, [0.2, 0.7]).requires_grad_()).requires_grad
    c = a.copy()
    c[2, :] = np.nan  # all-NaN row for nanquantile
    check_grad(lambda L, x, q: getattr(L, fn)(x, q, 1, interpolation=interp), c,
               np.array([0.3, 0.6]), second=False, forward=False)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_0dim_and_scalar_q(fn):
    x0 = np.array(1.7)
    for dim, keepdim in ((None, False), (0, False), (0, True), (-1, True)):
        check_grad(lambda L, x: getattr(L, fn)(x, 0.3, dim, keepdim), x0)
        check_grad(lambda L, x, q: getattr(L, fn)(x, q, dim, keepdim), x0, np.array(0.4))
        check_grad(lambda L, x, q: getattr(L, fn)(x, q, dim, keepdim), x0, np.array([0.2, 0.9]))
    # 1-element and strided inputs, an empty q
    check_grad(lambda L, x: getattr(L, fn)(x[:, ::2], _q(L, [0.25, 0.75]), 1), distinct(3, 6))
    check_grad(lambda L, x, q: getattr(L, fn)(x, q, 0), distinct(1), np.array([0.5]))
    check_grad(lambda L, x: getattr(L, fn)(x, _q(L, np.zeros(0)), 1), distinct(3, 4),
               second=False)


# ---- finite differences (ember.autograd.gradcheck / gradgradcheck) ----

GRADCHECK = {
    "sum": lambda x: x.sum(1),
    "mean": lambda x: ember.mean(x, (0, 1), keepdim=True),
    "prod": lambda x: ember.prod(x, 0),
    "amax": lambda x: ember.amax(x, 1),
    "max_dim": lambda x: ember.max(x, 0)[0],
    "var": lambda x: ember.var(x, 1, correction=0),
    "std_mean": lambda x: ember.std_mean(x, 0),
    "logsumexp": lambda x: ember.logsumexp(x, 1),
    "vector_norm": lambda x: ember.linalg.vector_norm(x, 1.5, dim=1),
    "cumsum": lambda x: ember.cumsum(x, 1),
    "cumprod": lambda x: ember.cumprod(x, 0),
    "cummax": lambda x: ember.cummax(x, 1)[0],
    "logcumsumexp": lambda x: ember.logcumsumexp(x, 0),
    "softmax": lambda x: ember.softmax(x, 1),
    "log_softmax": lambda x: ember.log_softmax(x, 0),
    "sort": lambda x: ember.sort(x, 1)[0],
    "topk": lambda x: ember.topk(x, 2, 0)[0],
    "kthvalue": lambda x: ember.kthvalue(x, 2, 1)[0],
    "median": lambda x: ember.median(x),
    "quantile": lambda x: ember.quantile(x, 0.3, 1),
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_gradcheck(name):
    x = E(distinct(3, 4, seed=4) - 1.5).requires_grad_()
    f = GRADCHECK[name]
    assert ember.autograd.gradcheck(f, (x,), check_forward_ad=True)
    if name not in ("max_dim", "amax", "cummax", "sort", "topk", "kthvalue", "median",
                    "quantile"):
        assert ember.autograd.gradgradcheck(f, (x,))


def test_out_forms_reject_differentiable_inputs():
    x = E(rnd(3, 4)).requires_grad_()

    def o():
        return ember.empty(0, dtype=ember.float64)

    def oi():
        return (ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int64))
    # (amax/var/std/max/sort/topk with out= are written by their Python bindings, which copy
    # the result into out themselves and are not covered here)
    calls = [lambda: ember.sum(x, 0, out=o()), lambda: ember.mean(x, 0, out=o()),
             lambda: ember.nansum(x, 0, out=o()), lambda: ember.cumsum(x, 0, out=o()),
             lambda: ember.cumprod(x, 1, out=o()), lambda: ember.logcumsumexp(x, 1, out=o()),
             lambda: ember.cat([x, x], out=o()), lambda: ember.stack([x, x], out=o()),
             lambda: ember.tril(x, out=o()), lambda: ember.triu(x, out=o()),
             lambda: ember.cummax(x, 0, out=oi())]
    for c in calls:
        with pytest.raises(RuntimeError, match="out="):
            c()
    # and without requires_grad they work
    y = ember.empty(0, dtype=ember.float64)
    ember.sum(x.detach(), 0, out=y)
    np.testing.assert_allclose(y.numpy(), x.detach().numpy().sum(0))


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_other_dtypes(dtype):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else {}
    a = rnd(3, 4, seed=12, dtype=dtype)
    check_grad(lambda L, x: L.sum(x, 1), a, **tol)
    check_grad(lambda L, x: L.mean(x), a, **tol)
    check_grad(lambda L, x: L.prod(x, 0), a, **tol)
    check_grad(lambda L, x: L.cumsum(x, 1), a, **tol)
    check_grad(lambda L, x: L.cumprod(x, 0), a, **tol)
    check_grad(lambda L, x: L.var(x, 1), a, **tol)
    check_grad(lambda L, x: L.linalg.vector_norm(x, 2, dim=0), a, **tol)
    check_grad(lambda L, x: L.linalg.vector_norm(x, 1), a, **tol)
    if dtype == np.float32:
        check_grad(lambda L, x: L.softmax(x, 1), a, **tol)
        check_grad(lambda L, x: L.logsumexp(x, 1), a, **tol)
        check_grad(lambda L, x: L.amax(x, 0), a, **tol)
        check_grad(lambda L, x: L.sort(x, 1)[0], a, **tol)
