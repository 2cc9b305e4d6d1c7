"""Statistics, distances, histograms, set membership and calculus against torch 1.13 / NumPy:
cov, corrcoef, cdist (every p, batched, each compute mode), pdist, histogram, histogramdd, isin,
trapezoid, trapz, cumulative_trapezoid and gradient. Values on strided, broadcast, zero-size and
0-dim inputs, the error types, and gradients by finite differences and against torch."""

import math

import numpy as np
import pytest
import torch

import ember
from _oracle import check, make, raises_like, tensors_from, to_numpy, to_torch

pytestmark = pytest.mark.filterwarnings(r"ignore:cov\(\)")

INF = float("inf")
NAN = float("nan")


def pair(arr, dtype="float64"):
    np_dtype = {"bool": np.bool_, "bfloat16": np.float32}.get(dtype) or getattr(np, dtype)
    return tensors_from(np.asarray(arr).astype(np_dtype), dtype)


def rand(shape, seed, dtype="float64", lo=-2.0, hi=2.0):
    rng = np.random.default_rng(seed)
    return pair(rng.uniform(lo, hi, shape), dtype)


def tup(r):
    return tuple(tup(x) for x in r) if isinstance(r, (tuple, list)) else r


def grads_match(fn, *arrays, rtol=1e-7, atol=1e-9, seed=0):
    """ember's and torch's gradients of sum(fn(...) * w) agree (float64)."""
    outs = {}
    for lib in (ember, torch):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        y = fn(lib, *xs)
        ys = y if isinstance(y, (tuple, list)) else (y,)
        rng = np.random.default_rng(seed)
        total = 0
        for t in ys:
            w = lib.tensor(rng.standard_normal(tuple(t.shape)), dtype=lib.float64)
            total = total + (t * w).sum()
        gs = (ember if lib is ember else torch).autograd.grad(total, xs, allow_unused=True)
        outs[lib] = [to_numpy(g) if g is not None else np.zeros(a.shape)
                     for g, a in zip(gs, arrays)]
    for a, b in zip(outs[ember], outs[torch]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def gradcheck(fn, *arrays, fwd=True):
    xs = [ember.tensor(a, dtype=ember.float64, requires_grad=True) for a in arrays]
    assert ember.autograd.gradcheck(fn, tuple(xs), check_forward_ad=fwd)


# ---- cov / corrcoef ----

LAYOUTS2 = ["contiguous", "transposed", "strided", "broadcast", "zero", "scalar"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "complex128"])
@pytest.mark.parametrize("layout", LAYOUTS2)
def test_cov_corrcoef_layouts(dtype, layout):
    a = make(dtype, layout, seed=3)
    check(lambda L, x: L.cov(x), a, what="cov")
    check(lambda L, x: L.cov(x, correction=0), a, what="cov c=0")
    check(lambda L, x: x.cov(correction=2), a, what="Tensor.cov")
    check(lambda L, x: L.corrcoef(x), a, what="corrcoef")
    check(lambda L, x: L.cov(x[0] if x.dim() else x), a, what="cov 1-d")
    check(lambda L, x: L.corrcoef(x[0] if x.dim() else x), a, what="corrcoef 1-d")


def test_cov_weights():
    x = rand((3, 6), 1)
    fw = pair([1, 2, 0, 3, 1, 1], "int64")
    aw = pair([0.5, 1.0, 2.0, 0.1, 0.0, 3.0], "float64")
    for corr in (0, 1, 3):
        check(lambda L, x, f: L.cov(x, correction=corr, fweights=f), x, fw)
        check(lambda L, x, a: L.cov(x, correction=corr, aweights=a), x, aw)
        check(lambda L, x, f, a: L.cov(x, correction=corr, fweights=f, aweights=a), x, fw, aw)
    # No degrees of freedom left: inf / NaN as torch.
    check(lambda L, x: L.cov(x, correction=10), x)
    check(lambda L, x: L.cov(x), pair(np.zeros((2, 0))))


def test_cov_errors():
    x = rand((3, 4), 1)
    raises_like(lambda L, x: L.cov(x), rand((2, 3, 4), 0))
    raises_like(lambda L, x: L.cov(x), pair([True, False], "bool"))
    raises_like(lambda L, x, f: L.cov(x, fweights=f), x, pair([1.0, 2, 3, 4]))
    raises_like(lambda L, x, f: L.cov(x, fweights=f), x, pair([1, 2, 3], "int64"))
    raises_like(lambda L, x, f: L.cov(x, fweights=f), x, pair([1, -2, 3, 1], "int64"))
    raises_like(lambda L, x, f: L.cov(x, fweights=f), x, pair([[1, 2, 3, 1]], "int64"))
    raises_like(lambda L, x, a: L.cov(x, aweights=a), x, pair([1, 2, 3, 1], "int64"))
    raises_like(lambda L, x, a: L.cov(x, aweights=a), x, pair([1.0, -2, 3, 1]))
    raises_like(lambda L, x, a: L.cov(x, aweights=a), x, pair([0.0, 0, 0, 0]))
    raises_like(lambda L, x: L.corrcoef(x), rand((2, 3, 4), 0))


def test_cov_corrcoef_grad():
    x = np.random.default_rng(0).standard_normal((3, 5))
    aw = ember.tensor([0.5, 1.0, 2.0, 0.3, 1.5], dtype=ember.float64)
    fw = ember.tensor([1, 2, 1, 3, 1])
    gradcheck(lambda t: ember.cov(t), x)
    gradcheck(lambda t: ember.cov(t, correction=0, fweights=fw, aweights=aw), x)
    gradcheck(lambda t: ember.corrcoef(t), x)
    grads_match(lambda L, t: L.corrcoef(t), x)
    grads_match(lambda L, t: L.cov(t, correction=2), x)


# ---- cdist / pdist ----

PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.5, INF]


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cdist_values(p, dtype):
    rtol, atol = (2e-5, 1e-5) if dtype == "float32" else (1e-10, 1e-10)
    for (s1, s2) in [((5, 3), (7, 3)), ((37, 4), (30, 4)), ((2, 1, 33, 5), (3, 29, 5)),
                     ((1, 1), (1, 1)), ((4, 9, 70), (4, 3, 70))]:
        a, b = rand(s1, 1, dtype), rand(s2, 2, dtype)
        for mode in (None, "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist",
                     "use_mm_for_euclid_dist_if_necessary"):
            kw = {} if mode is None else {"compute_mode": mode}
            tol = (rtol, atol) if (p != 2 or mode == "donot_use_mm_for_euclid_dist") else (
                (1e-4, 1e-4) if dtype == "float32" else (1e-9, 1e-9))
            check(lambda L, x, y: L.cdist(x, y, p=p, **kw), a, b, rtol=tol[0], atol=tol[1],
                  what=f"{s1} {s2} p={p} {mode}")


def test_cdist_layouts_and_edges():
    base = rand((9, 8), 4)
    x = (base[0][::2, 1::2], base[1][::2, 1::2])  # strided
    y = (base[0].t()[:5], base[1].t()[:5])         # transposed view
    for p in (0.0, 1.0, 2.0, 3.0, INF):
        check(lambda L, a, b: L.cdist(a, b, p), x, x)
        check(lambda L, a, b: L.cdist(a.t(), b.t(), p), y, y)
        check(lambda L, a, b: L.cdist(a.expand(3, 4), b, p), rand((1, 4), 5), rand((6, 4), 6))
    # Identical rows (distance 0), integers-valued data, zero-size and zero columns.
    z = pair(np.array([[1.0, 2, 3], [1, 2, 3], [0, 0, 0]]))
    for p in PS:
        check(lambda L, a: L.cdist(a, a, p), z)
        check(lambda L, a: L.cdist(a, a, p, compute_mode="donot_use_mm_for_euclid_dist"), z)
        check(lambda L, a, b: L.cdist(a, b, p), pair(np.zeros((0, 3))), rand((4, 3), 1))
        check(lambda L, a, b: L.cdist(a, b, p), rand((2, 0, 3), 1), rand((2, 4, 3), 1))
        check(lambda L, a, b: L.cdist(a, b, p), pair(np.zeros((3, 0))), pair(np.zeros((5, 0))))
    # NaN propagates.
    n = pair(np.array([[1.0, NAN], [0, 1]]))
    for p in PS:
        check(lambda L, a: L.cdist(a, a, p, compute_mode="donot_use_mm_for_euclid_dist"), n)


def test_cdist_errors():
    a = rand((3, 2), 0)
    raises_like(lambda L, x, y: L.cdist(x, y), rand((3,), 0), a)
    raises_like(lambda L, x, y: L.cdist(x, y), a, rand((3,), 0))
    raises_like(lambda L, x, y: L.cdist(x, y), a, rand((3, 3), 0))
    raises_like(lambda L, x, y: L.cdist(x, y, p=-1.0), a, a)
    raises_like(lambda L, x, y: L.cdist(x, y), pair([[1, 2]], "int64"), pair([[1, 2]], "int64"))
    raises_like(lambda L, x, y: L.cdist(x, y), a, rand((3, 2), 1, "float32"))
    raises_like(lambda L, x, y: L.cdist(x, y, compute_mode="bad"), a, a)
    raises_like(lambda L, x, y: L.cdist(x, y), rand((2, 3, 2), 0), rand((3, 3, 2), 0))
    raises_like(lambda L, x: L.pdist(x), rand((2, 3, 2), 0))
    raises_like(lambda L, x: L.pdist(x, p=-1.0), a)
    raises_like(lambda L, x: L.pdist(x), pair([[1, 2]], "int64"))


@pytest.mark.parametrize("p", PS)
def test_cdist_grad(p):
    rng = np.random.default_rng(7)
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    gradcheck(lambda a, b: ember.cdist(a, b, p), x1, x2)
    gradcheck(lambda a, b: ember.cdist(a, b, p), rng.standard_normal((2, 1, 3, 2)),
              rng.standard_normal((3, 4, 2)))
    grads_match(lambda L, a, b: L.cdist(a, b, p), x1, x2)
    # Coincident rows and coordinates: torch's subgradients.
    z = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, 3.0], [1.0, 2.0, 3.0]])
    grads_match(lambda L, a: L.cdist(a, a * 1, p,
                                     compute_mode="donot_use_mm_for_euclid_dist"), z)
    if p in (1.5, INF):
        # Large enough that the rules take x1's rows in blocks.
        b1, b2 = rng.standard_normal((2, 150, 80)), rng.standard_normal((2, 200, 80))
        grads_match(lambda L, a, b: L.cdist(a, b, p), b1, b2, rtol=1e-6, atol=1e-8)
    if p == 1.5:
        # The jvp by blocks agrees with the vjp (checked against torch above): <J t, w> = <t, J^T w>.
        xs = [ember.tensor(a, dtype=ember.float64) for a in (b1, b2)]
        ts = [ember.tensor(rng.standard_normal(a.shape), dtype=ember.float64) for a in (b1, b2)]
        _, jv = ember.func.jvp(lambda a, b: ember.cdist(a, b, p), tuple(xs), tuple(ts))
        w = ember.tensor(rng.standard_normal(tuple(jv.shape)), dtype=ember.float64)
        _, pull = ember.func.vjp(lambda a, b: ember.cdist(a, b, p), *xs)
        g1, g2 = pull(w)
        lhs = float((jv * w).sum())
        rhs = float((ts[0] * g1).sum() + (ts[1] * g2).sum())
        assert math.isclose(lhs, rhs, rel_tol=1e-9, abs_tol=1e-9), (lhs, rhs)
    if p == 2:
        big1, big2 = rng.standard_normal((30, 3)), rng.standard_normal((27, 3))
        gradcheck(lambda a, b: ember.cdist(a, b), big1, big2)
        grads_match(lambda L, a, b: L.cdist(a, b), big1, big2, rtol=1e-6)
        zz = np.concatenate([z] * 10)
        grads_match(lambda L, a, b: L.cdist(a, b), zz, zz.copy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pdist(p, dtype):
    tol = (2e-5, 1e-5) if dtype == "float32" else (1e-10, 1e-10)
    for shape in [(6, 3), (1, 3), (0, 3), (5, 0), (40, 7)]:
        check(lambda L, x: L.pdist(x, p), rand(shape, 3, dtype), rtol=tol[0], atol=tol[1])
        check(lambda L, x: L.nn.functional.pdist(x, p), rand(shape, 3, dtype), rtol=tol[0],
              atol=tol[1]) if hasattr(ember.nn.functional, "pdist") else None
    base = rand((8, 6), 9, dtype)
    check(lambda L, x: L.pdist(x[::2, 1::2], p), base, rtol=tol[0], atol=tol[1])
    if dtype == "float64":
        x = np.random.default_rng(5).standard_normal((5, 3))
        gradcheck(lambda t: ember.pdist(t, p), x)
        grads_match(lambda L, t: L.pdist(t, p), x)


# ---- histogram / histogramdd ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_int_bins(dtype):
    # Densities divide by bin widths, which inherit the edges' last-bit rounding (linspace).
    dt = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {}
    rng = np.random.default_rng(2)
    data = [rng.standard_normal(1000), rng.integers(0, 5, 50).astype(float),
            np.array([1.0, 2, 1]), np.array([1.0, 1, 1]), np.zeros(0), np.array([3.0])]
    for v in data:
        x = pair(v, dtype)
        for bins in (1, 4, 7, 100):
            check(lambda L, t: tup(L.histogram(t, bins)), x)
            check(lambda L, t: tup(t.histogram(bins, density=True)), x, **dt)
            check(lambda L, t: tup(L.histogram(t, bins=bins, range=(-1.0, 2.0))), x)
            w = pair(rng.uniform(0, 2, v.shape), dtype)
            check(lambda L, t, w: tup(L.histogram(t, bins, weight=w)), x, w)
            check(lambda L, t, w: tup(L.histogram(t, bins, weight=w, density=True)), x, w, **dt)
    # Values on the edges: the last bin holds the right edge; outside values are dropped.
    x = pair([0.0, 0.25, 0.5, 0.75, 1.0, 1.5, -0.5], dtype)
    check(lambda L, t: tup(L.histogram(t, 4, range=(0.0, 1.0))), x)
    # NaN with an explicit range counts in the last bin, as torch's.
    x = pair([1.0, NAN, 0.5, 2.0], dtype)
    check(lambda L, t: tup(L.histogram(t, 2, range=(0.0, 2.0))), x)
    check(lambda L, t, e: tup(L.histogram(t, e)), x, pair([0.0, 1.5, 3.0], dtype))
    # Strided and 2-D inputs are flattened.
    base = rand((6, 8), 3, dtype)
    check(lambda L, t: tup(L.histogram(t[::2, 1::3], 5)), base)
    check(lambda L, t: tup(L.histogram(t.t(), 5)), base)
    check(lambda L, t: tup(L.histogram(t, 3)), pair(np.array(2.5), dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_tensor_bins(dtype):
    x = rand((200,), 4, dtype)
    for edges in ([-2.0, -1, 0, 0.5, 2], [0.0, 1.0], [-3.0, -1.0, 3.0], [3.0, 1, 2]):
        e = pair(edges, dtype)
        check(lambda L, t, e: tup(L.histogram(t, e)), x, e)
        check(lambda L, t, e: tup(t.histogram(e, density=True)), x, e)
        w = rand((200,), 5, dtype, 0, 1)
        check(lambda L, t, e, w: tup(L.histogram(t, bins=e, weight=w)), x, e, w)


def test_histogram_errors():
    x = pair([1.0, 2, 1])
    raises_like(lambda L, t: L.histogram(t, 4), pair([1.0, NAN, 1]))
    raises_like(lambda L, t: L.histogram(t, 4), pair([1, 2, 1], "int64"))
    raises_like(lambda L, t: L.histogram(t, 0), x)
    raises_like(lambda L, t: L.histogram(t, 4, range=(3.0, 0.0)), x)
    raises_like(lambda L, t: L.histogram(t, 4, range=(0.0, INF)), x)
    raises_like(lambda L, t, b: L.histogram(t, b), x, pair([1.0, 2, 3], "float32"))
    raises_like(lambda L, t, b: L.histogram(t, b), x, pair([[1.0, 2]]))
    raises_like(lambda L, t, b: L.histogram(t, b), x, pair([1.0]))
    raises_like(lambda L, t, w: L.histogram(t, 4, weight=w), x, pair([1.0, 2]))
    raises_like(lambda L, t, w: L.histogram(t, 4, weight=w), x, pair([1, 2, 1], "int64"))
    raises_like(lambda L, t, b: L.histogramdd(t, [b]), pair([[1.0, 2], [1, 2]]), pair([0.0, 1]))
    raises_like(lambda L, t: L.histogramdd(t, 2, range=[0.0, 1.0]), pair([[1.0, 2], [1, 2]]))
    raises_like(lambda L, t: L.histogramdd(t, 2), pair([1.0, 2]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogramdd(dtype):
    dt = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {}
    rng = np.random.default_rng(6)
    pts = pair(rng.standard_normal((300, 3)), dtype)
    w = pair(rng.uniform(0, 1, 300), dtype)
    for bins in ([2, 3, 4], 5, [1, 1, 1]):
        check(lambda L, t: tup(L.histogramdd(t, bins)), pts)
        check(lambda L, t, w: tup(L.histogramdd(t, bins, weight=w, density=True)), pts, w, **dt)
        check(lambda L, t: tup(L.histogramdd(t, bins, range=[-1.0, 1, -2, 2, 0, 1])), pts)
    edges = [pair(e, dtype) for e in ([-1.0, 0, 1], [-2.0, 2], [-3.0, 0, 0.5, 3])]
    check(lambda L, t, a, b, c: tup(L.histogramdd(t, [a, b, c])), pts, *edges)
    check(lambda L, t: tup(L.histogramdd(t, [2, 2])), pair(np.zeros((0, 2)), dtype))
    batched = pair(rng.standard_normal((4, 5, 2)), dtype)
    check(lambda L, t: tup(L.histogramdd(t, [3, 3])), batched)


# ---- isin ----

ISIN_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float32", "float64"]


@pytest.mark.parametrize("dtype", ISIN_DTYPES)
def test_isin(dtype):
    rng = np.random.default_rng(1)
    hi = 20
    e = pair(rng.integers(0, hi, (7, 9)), dtype)
    for m in (0, 1, 3, 5, 40, 1000):
        t = pair(rng.integers(0, hi, m), dtype)
        for inv in (False, True):
            check(lambda L, a, b: L.isin(a, b, invert=inv), e, t, what=f"m={m}")
            check(lambda L, a, b: L.isin(a[0, 0], b, invert=inv), e, t)
            # assume_unique: both sides free of repeats (torch's answer is undefined otherwise).
            ue = pair(rng.permutation(2 * hi)[:12].reshape(3, 4), dtype)
            ut = pair(np.unique(rng.integers(0, 2 * hi, m)), dtype)
            check(lambda L, a, b: L.isin(a.t(), b, assume_unique=True, invert=inv), ue, ut)
            check(lambda L, a, b: L.isin(a.t()[::2], b, invert=inv), e, t)
    check(lambda L, a: L.isin(a, 3), e)
    check(lambda L, a: L.isin(a, 3, invert=True), e)
    check(lambda L, b: L.isin(3, b), e)
    check(lambda L, a, b: L.isin(a, b), pair(np.zeros((0, 3)), dtype), e)


def test_isin_mixed_and_nan():
    check(lambda L, a, b: L.isin(a, b), pair([1, 2, 3], "int64"), pair([1.0, 2.5]))
    check(lambda L, a, b: L.isin(a, b), pair([1, 2], "int8"), pair([1000], "int64"))
    check(lambda L, b: L.isin(2.5, b), pair([1, 2], "int64"))
    check(lambda L, a, b: L.isin(a, b), pair([1.0, NAN, INF]), pair([NAN, INF, 4, 5, 6, 7]))
    big = np.random.default_rng(3).standard_normal(5000)
    check(lambda L, a, b: L.isin(a, b), pair(big[:3000]), pair(big[2000:]))
    raises_like(lambda L, a, b: L.isin(a, b), pair([True, False], "bool"), pair([True], "bool"))
    raises_like(lambda L, a, b: L.isin(a, b), pair([1 + 1j], "complex128"), pair([1.0]))


# ---- trapezoid / trapz / cumulative_trapezoid ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("layout", LAYOUTS2)
def test_trapezoid_layouts(dtype, layout):
    y = make(dtype, layout, seed=2)
    for d in ([0, 1, -1] if y[1].dim() == 2 else [0, -1]):
        check(lambda L, t: L.trapezoid(t, dim=d), y)
        check(lambda L, t: L.trapezoid(t, dx=0.5, dim=d), y)
        check(lambda L, t: L.trapz(t, dx=2, dim=d), y)
        check(lambda L, t: L.cumulative_trapezoid(t, dim=d), y)
        check(lambda L, t: L.cumulative_trapezoid(t, dx=1.5, dim=d), y)
        n = y[1].shape[d] if y[1].dim() else 1
        x = pair(np.cumsum(np.arange(1, n + 1) * 0.5))
        check(lambda L, t, x: L.trapezoid(t, x, dim=d), y, x)
        check(lambda L, t, x: L.trapz(t, x, dim=d), y, x)
        check(lambda L, t, x: L.cumulative_trapezoid(t, x, dim=d), y, x)


def test_trapezoid_x_shapes_and_errors():
    y = rand((3, 4), 1)
    check(lambda L, t, x: L.trapezoid(t, x), y, rand((3, 4), 2))
    check(lambda L, t, x: L.trapezoid(t, x, dim=0), y, rand((3, 1), 2))
    check(lambda L, t, x: L.cumulative_trapezoid(t, x, dim=0), y, rand((3, 4), 2))
    check(lambda L, t, x: L.trapezoid(t, x), y, rand((4,), 2))
    check(lambda L, t: L.trapezoid(t), pair(np.zeros(0)))
    check(lambda L, t: L.trapezoid(t, dim=0), pair(np.zeros((0, 3))))
    raises_like(lambda L, t, x: L.trapezoid(t, x), y, rand((3,), 2))
    raises_like(lambda L, t, x: L.cumulative_trapezoid(t, x), y, rand((3,), 2))
    raises_like(lambda L, t: L.trapezoid(t), pair(np.array(3.0)))
    raises_like(lambda L, t: L.trapezoid(t, dim=2), y)
    raises_like(lambda L, t: L.trapezoid(t), pair([True, False], "bool"))
    raises_like(lambda L, t, x: L.trapezoid(t, x, dx=2), y, rand((4,), 2))


def test_trapezoid_grad():
    rng = np.random.default_rng(3)
    y, x = rng.standard_normal((3, 5)), np.cumsum(rng.uniform(0.1, 1, 5))
    gradcheck(lambda t: ember.trapezoid(t, dx=0.3), y)
    gradcheck(lambda t, s: ember.trapezoid(t, s), y, x)
    gradcheck(lambda t, s: ember.cumulative_trapezoid(t, s), y, x)
    gradcheck(lambda t: ember.cumulative_trapezoid(t, dim=0), y)
    grads_match(lambda L, t, s: L.trapezoid(t, s), y, x)
    grads_match(lambda L, t, s: L.cumulative_trapezoid(t, s, dim=-1), y, x)


# ---- gradient ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16"])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(dtype, edge_order):
    y = make(dtype, "contiguous", seed=4, shape=(4, 5))
    ys = make(dtype, "strided", seed=4, shape=(4, 5))
    for a in (y, ys):
        check(lambda L, t: L.gradient(t, edge_order=edge_order), a)
        check(lambda L, t: L.gradient(t, spacing=2.0, edge_order=edge_order), a)
        check(lambda L, t: L.gradient(t, spacing=[2.0, 0.5], edge_order=edge_order), a)
        check(lambda L, t: L.gradient(t, dim=1, edge_order=edge_order), a)
        check(lambda L, t: L.gradient(t, spacing=[3], dim=[-1], edge_order=edge_order), a)
        c0, c1 = pair([0.0, 0.5, 2.0, 2.5]), pair([-1.0, 0.0, 0.5, 3.0, 4.0])
        check(lambda L, t, u, v: L.gradient(t, spacing=(u, v), edge_order=edge_order), a, c0, c1)
        check(lambda L, t, v: L.gradient(t, spacing=(v,), dim=1, edge_order=edge_order), a, c1)
    check(lambda L, t: L.gradient(t, edge_order=edge_order), make(dtype, "scalar", seed=1))


def test_gradient_errors():
    y = rand((3, 4), 1)
    raises_like(lambda L, t: L.gradient(t, edge_order=3), y)
    raises_like(lambda L, t: L.gradient(t, edge_order=2), rand((2,), 1))
    raises_like(lambda L, t: L.gradient(t), rand((1,), 1))
    raises_like(lambda L, t: L.gradient(t, dim=[0, 0]), y)
    raises_like(lambda L, t: L.gradient(t, dim=5), y)
    raises_like(lambda L, t: L.gradient(t, spacing=[1.0, 2, 3]), y)
    raises_like(lambda L, t: L.gradient(t, spacing=[1.0, 2], dim=0), y)
    raises_like(lambda L, t: L.gradient(t), pair([1, 2, 3], "uint8"))
    raises_like(lambda L, t: L.gradient(t), pair([True, False, True], "bool"))


def test_gradient_grad():
    rng = np.random.default_rng(8)
    y = rng.standard_normal((4, 5))
    c = np.array([-1.0, 0.0, 0.5, 3.0, 4.0])
    for eo in (1, 2):
        gradcheck(lambda t: ember.gradient(t, spacing=0.5, edge_order=eo), y)
        gradcheck(lambda t, s: ember.gradient(t, spacing=(s,), dim=1, edge_order=eo), y, c)
        grads_match(lambda L, t: L.gradient(t, edge_order=eo), y)
        grads_match(lambda L, t, s: L.gradient(t, spacing=(s,), dim=1, edge_order=eo), y, c)
