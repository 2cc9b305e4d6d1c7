"""Reductions against torch 1.13: sum/nansum/mean/nanmean/prod, max/min/amax/amin/argmax/argmin/
aminmax, var/std/var_mean/std_mean, logsumexp, norm/linalg.vector_norm, all/any/count_nonzero.
Every dtype, every layout (contiguous, transposed, strided, broadcast, zero-size, 0-dim), dim
lists, negative dims, keepdim, dtype=, out=, NaN propagation, first-occurrence indices, the
empty-tensor rules and the error types."""

import math

import numpy as np
import pytest
import torch

import ember
import ember.linalg  # noqa: F401
from _oracle import (COMPLEX, DTYPES, FLOATS, LAYOUTS, LOWP, check, check_lowp, make,
                     raises_like, to_numpy)

DIMS = [None, 0, 1, -1, (0, 1), (-1, 0)]


def tol(dtype):
    return dict(rtol=2e-2, atol=2e-2) if dtype in LOWP else {}


def lcheck(fn, a, dtype, **kw):
    """check(), with the upcast oracle where torch 1.13 has no float16/bfloat16 kernel."""
    if dtype in LOWP:
        kw.update(tol(dtype))
        return check_lowp(fn, a, dtype=dtype, **kw)
    return check(fn, a, **kw)


def tup(r):
    """Named result tuples as plain tuples (ember's and torch's return_types differ in type)."""
    return tuple(r) if isinstance(r, tuple) else r


def aminmax(L, x, dtype, **kw):
    """aminmax as a plain tuple; torch 1.13 has no float16/bfloat16 aminmax kernel, so there the
    oracle is (amin, amax)."""
    if L is torch and dtype in LOWP:
        if "dim" not in kw:
            return (x.amin(), x.amax()) if x.numel() else tuple(L.aminmax(x))
        if x.dim() == 0 and kw["keepdim"]:
            return (x.reshape(1), x.reshape(1))
        return (x.amin(kw["dim"], kw["keepdim"]), x.amax(kw["dim"], kw["keepdim"]))
    return tuple(L.aminmax(x, **kw))


def _sum_call(L, x, fn, d, keepdim):
    f = getattr(L, fn)
    return f(x) if d is None else f(x, d, keepdim)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("fn", ["sum", "mean", "nansum", "nanmean"])
def test_sum_family(fn, dtype, layout):
    a = make(dtype, layout, seed=3)
    for d in DIMS:
        if layout == "scalar" and d not in (None, 0, -1):
            continue
        for keepdim in (False, True):
            check(lambda L, x: _sum_call(L, x, fn, d, keepdim), a, what=f"{fn} {d} {keepdim}",
                  key=(fn, dtype, layout, d, keepdim), **tol(dtype))
            check(lambda L, x: getattr(x, fn)() if d is None else getattr(x, fn)(d, keepdim=keepdim),
                  a, what=f"method {fn} {d}", key=("m", fn, dtype, layout, d, keepdim), **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_prod(dtype, layout):
    a = make(dtype, layout, seed=4, kind="small")
    lcheck(lambda L, x: L.prod(x), a, dtype, key=("prod", dtype, layout))
    for d in (0, -1):
        for keepdim in (False, True):
            lcheck(lambda L, x: L.prod(x, d, keepdim), a, dtype,
                   key=("prod", dtype, layout, d, keepdim))
            lcheck(lambda L, x: x.prod(d, keepdim=keepdim), a, dtype)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex64", "int64"])
def test_sum_dtype_and_out(dtype):
    a = make("int32", seed=5)
    check(lambda L, x: L.sum(x, dtype=getattr(L, dtype)), a)
    check(lambda L, x: L.sum(x, 1, dtype=getattr(L, dtype)), a)
    check(lambda L, x: L.prod(x, 0, dtype=getattr(L, dtype)), a)
    f = make("float32", seed=5)
    if dtype in ("float64", "complex64", "float32"):
        check(lambda L, x: L.mean(x, (0, 1), dtype=getattr(L, dtype)), f)
        check(lambda L, x: L.mean(x, dtype=getattr(L, dtype)), a)
        check(lambda L, x: L.sum(x, 0, out=L.empty(0, dtype=getattr(L, dtype))).clone(), f)
        check(lambda L, x: L.mean(x, 1, out=L.empty(0, dtype=getattr(L, dtype))).clone(), f)
    out = ember.empty(0)
    assert ember.sum(ember.ones(2, 3), 1, out=out) is out
    assert out.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d not in COMPLEX])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_extrema(dtype, layout):
    a = make(dtype, layout, seed=6)
    for fn in ("max", "min", "amax", "amin", "argmax", "argmin"):
        check(lambda L, x: getattr(L, fn)(x), a, key=(fn, dtype, layout))
        check(lambda L, x: getattr(x, fn)(), a, key=("m", fn, dtype, layout))
    dims = [0, -1] if layout != "scalar" else [0]
    for d in dims:
        for keepdim in (False, True):
            for fn in ("max", "min", "argmax", "argmin"):
                check(lambda L, x: tup(getattr(L, fn)(x, d, keepdim)), a,
                      key=(fn, dtype, layout, d, keepdim))
                check(lambda L, x: tup(getattr(x, fn)(d, keepdim=keepdim)), a,
                      key=("m", fn, dtype, layout, d, keepdim))
            for fn in ("amax", "amin"):
                check(lambda L, x: getattr(L, fn)(x, d, keepdim), a, key=(fn, dtype, layout, d, keepdim))
            check(lambda L, x: aminmax(L, x, dtype, dim=d, keepdim=keepdim), a,
                  key=("aminmax", dtype, layout, d, keepdim))
    if layout not in ("scalar",):
        for fn in ("amax", "amin"):
            check(lambda L, x: getattr(L, fn)(x, (0, 1)), a, key=(fn, dtype, layout, "01"))
            check(lambda L, x: getattr(L, fn)(x, (-1, 0), True), a, key=(fn, dtype, layout, "10"))
    check(lambda L, x: aminmax(L, x, dtype), a, key=("aminmax", dtype, layout))


def test_extrema_ties_nan_and_sizes():
    rng = np.random.default_rng(0)
    for shape in [(7,), (5, 33), (33, 5), (3, 257), (300, 40), (2, 70000)]:
        v = rng.integers(-3, 4, shape).astype(np.float32)
        for nan_at in (None, 0, -1):
            w = v.copy()
            if nan_at is not None:
                w.reshape(-1)[nan_at] = np.nan
                w.reshape(-1)[w.size // 2] = np.nan
            e, t = ember.from_numpy(w.copy()), torch.from_numpy(w.copy())
            for d in range(len(shape)):
                for fn in ("max", "min"):
                    check(lambda L, x: tuple(getattr(L, fn)(x, d)), (e, t), what=f"{fn} {shape} {d}")
                for fn in ("argmax", "argmin", "amax", "amin"):
                    check(lambda L, x: getattr(L, fn)(x, d), (e, t), what=f"{fn} {shape} {d}")
            for fn in ("argmax", "argmin", "max", "min"):
                check(lambda L, x: getattr(L, fn)(x), (e, t), what=f"{fn} {shape}")
            ed, td = e.double(), t.double()
            check(lambda L, x: tuple(L.max(x, -1)), (ed, td))
            check(lambda L, x: L.argmin(x), (ed, td))


def test_extrema_blocks_infinities_and_signed_zeros():
    # Rows long enough for the blocked argmax (Note [Blocked argmax]): the extreme in the tail,
    # in the first block, repeated in several lanes and blocks, +-inf (also both in one row),
    # -0.0 next to 0.0, and sums that overflow.
    rng = np.random.default_rng(5)
    rows = []
    for n in (128, 129, 1000, 4099):
        base = rng.integers(-3, 4, n).astype(np.float32)
        for case in range(7):
            r = base.copy()
            if case == 1:
                r[-1] = 9
            elif case == 2:
                r[0] = -9
            elif case == 3:
                r[[5, 77, n // 2, n - 2]] = 7
            elif case == 4:
                r[[3, n // 3]] = [np.inf, -np.inf]
            elif case == 5:
                r[:] = 0.0
                r[rng.integers(0, n, n // 3)] = -0.0
            elif case == 6:
                r[:] = 3e38
                r[n // 2] = -3e38
            rows.append(np.pad(r, (0, 4099 - n), constant_values=-5))
    a = np.stack(rows)
    e, t = ember.from_numpy(a), torch.from_numpy(a)
    for fn in ("argmax", "argmin"):
        check(lambda L, x: getattr(L, fn)(x, 1), (e, t), what=fn)
        check(lambda L, x: getattr(L, fn)(x.double(), 1), (e, t), what=fn + " double")
    for fn in ("max", "min"):
        check(lambda L, x: tuple(getattr(L, fn)(x, 1)), (e, t), what=fn)


def test_max_out_and_binary():
    a = make("float32", seed=7)
    b = make("float32", seed=8)
    check(lambda L, x, y: L.max(x, y), a, b)
    check(lambda L, x, y: L.min(x, y), a, b)
    check(lambda L, x, y: x.max(y), a, b)
    check(lambda L, x: tuple(L.max(x, 1, out=(L.empty(0), L.empty(0, dtype=L.int64)))), a)
    check(lambda L, x: L.amax(x, 0, out=L.empty(0)).clone(), a)
    check(lambda L, x: L.argmax(x, 1, keepdim=True, out=L.empty(0, dtype=L.int64)).clone(), a)
    r = ember.max(ember.tensor([[1.0, 3.0], [2.0, 0.0]]), 1)
    assert type(r).__name__ == "max" and r.indices.tolist() == [1, 0]
    assert type(ember.aminmax(ember.ones(3))).__name__ == "aminmax"


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_var_std(dtype, layout):
    a = make(dtype, layout, seed=9)
    for fn in ("var", "std", "var_mean", "std_mean"):
        check(lambda L, x: getattr(L, fn)(x), a, key=(fn, dtype, layout), **tol(dtype))
        check(lambda L, x: getattr(L, fn)(x, False), a, key=(fn, dtype, layout, "u"), **tol(dtype))
        dims = [0, -1, (0, 1)] if layout != "scalar" else [0]
        for d in dims:
            for keepdim in (False, True):
                check(lambda L, x: getattr(L, fn)(x, d, True, keepdim), a, **tol(dtype),
                      key=(fn, dtype, layout, d, keepdim))
                for c in (0, 2):
                    check(lambda L, x: getattr(L, fn)(x, d, correction=c, keepdim=keepdim), a,
                          key=(fn, dtype, layout, d, keepdim, c), **tol(dtype))
    check(lambda L, x: x.var(0), a, key=("mvar", dtype, layout), **tol(dtype))
    check(lambda L, x: x.std(unbiased=False), a, key=("mstd", dtype, layout), **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "bool"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_logsumexp(dtype, layout):
    a = make(dtype, layout, seed=10)
    for d in ([0, -1, (0, 1)] if layout != "scalar" else [0]):
        for keepdim in (False, True):
            check(lambda L, x: L.logsumexp(x, d, keepdim), a, key=("lse", dtype, layout, d, keepdim),
                  **tol(dtype))
    check(lambda L: L.logsumexp(L.tensor([[float("inf"), 1.0], [-float("inf"), -float("inf")]]), 1))


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_norms(dtype, layout):
    a = make(dtype, layout, seed=11)
    for p in (2, 1, 0, 3, 0.5, math.inf, -math.inf, -1):
        for d in ([None, 0, (0, 1)] if layout != "scalar" else [None]):
            lcheck(lambda L, x: L.linalg.vector_norm(x, p, d), a, dtype,
                  key=("vn", dtype, layout, p, d))
            lcheck(lambda L, x: L.linalg.vector_norm(x, p, d, True), a, dtype,
                  key=("vnk", dtype, layout, p, d))
            if p not in (0,):
                lcheck(lambda L, x: L.norm(x, p, d), a, dtype, key=("n", dtype, layout, p, d))
    lcheck(lambda L, x: L.norm(x), a, dtype, key=("nfro", dtype, layout))
    lcheck(lambda L, x: x.norm(), a, dtype, key=("mnfro", dtype, layout))
    if layout != "scalar":
        lcheck(lambda L, x: L.norm(x, "fro", (0, 1)), a, dtype, key=("nfro2", dtype, layout))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_logical(dtype, layout):
    a = make(dtype, layout, seed=12)
    for fn in ("all", "any"):
        check(lambda L, x: getattr(L, fn)(x), a, key=(fn, dtype, layout))
        check(lambda L, x: getattr(x, fn)(), a, key=("m", fn, dtype, layout))
        for d in ([0, -1] if layout != "scalar" else [0]):
            for keepdim in (False, True):
                check(lambda L, x: getattr(L, fn)(x, d, keepdim), a, key=(fn, dtype, layout, d, keepdim))
    for d in ([None, 0, -1, (0, 1)] if layout != "scalar" else [None, 0]):
        check(lambda L, x: L.count_nonzero(x, d), a, key=("cnz", dtype, layout, d))


def test_large_and_thread_independent():
    rng = np.random.default_rng(1)
    v = rng.standard_normal((3, 200003)).astype(np.float32)
    e, t = ember.from_numpy(v.copy()), torch.from_numpy(v.copy())
    ref = v.astype(np.float64)
    for d in (None, 0, 1):
        r = to_numpy(e.sum() if d is None else e.sum(d))
        np.testing.assert_allclose(r, ref.sum() if d is None else ref.sum(d), rtol=1e-5, atol=1e-3)
    check(lambda L, x: tuple(L.max(x, 1)), (e, t))
    check(lambda L, x: L.var(x, 1), (e, t), rtol=1e-5, atol=1e-5)
    big = ember.from_numpy(rng.standard_normal((1000, 600)).astype(np.float32))
    outs = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        outs.append([to_numpy(f) for f in (big.sum(), big.sum(0), big.sum(1), big.var(0),
                                           big.t().sum(1), big.reshape(-1).sum())])
    ember.set_num_threads(2)
    for o in outs[1:]:
        for x, y in zip(o, outs[0]):
            assert np.array_equal(x, y)
    # vertical cascade: sum over a long dim 0 stays accurate in float32
    ones = ember.full((100000, 16), 0.1)
    np.testing.assert_allclose(to_numpy(ones.sum(0)), np.full(16, 10000.0), rtol=1e-5)


def test_three_dims_mixed():
    a = make("float32", seed=13, shape=(6, 10))
    check(lambda L, x: x.reshape(2, 3, 10).sum((0, 2)), a)
    check(lambda L, x: x.reshape(2, 3, 10).permute(2, 0, 1).sum((1,), keepdim=True), a)
    check(lambda L, x: x.reshape(2, 3, 10).permute(1, 2, 0).amax((0, 2)), a)
    check(lambda L, x: x.reshape(2, 3, 10).permute(2, 0, 1).sum(2), a)
    check(lambda L, x: tuple(L.max(x.reshape(2, 3, 10).permute(2, 0, 1), 1)), a)
    check(lambda L, x: x.reshape(2, 3, 10).var((0, 2)), a)


def test_empty():
    for shape in [(0,), (0, 3), (3, 0), (2, 0, 4)]:
        check(lambda L: L.zeros(shape).sum())
        check(lambda L: L.zeros(shape).sum(-1))
        check(lambda L: L.zeros(shape).prod(0))
        check(lambda L: L.zeros(shape).mean(0))
        check(lambda L: L.zeros(shape).all())
        check(lambda L: L.zeros(shape).any(0))
        check(lambda L: L.count_nonzero(L.zeros(shape), 0))
        check(lambda L: L.zeros(shape).var(0))
        check(lambda L: L.zeros(shape).amax(-1))
        check(lambda L: tup(L.max(L.zeros(shape), -1)))
        check(lambda L: L.argmax(L.zeros(shape), -1))
        check(lambda L: L.logsumexp(L.zeros(shape), 0))


def test_errors():
    raises_like(lambda L: L.mean(L.arange(3)))
    raises_like(lambda L: L.sum(L.ones(2, 3), (0, 0)))
    raises_like(lambda L: L.sum(L.ones(2, 3), 2))
    raises_like(lambda L: L.amax(L.ones(2, 3), (1, -1)))
    raises_like(lambda L: L.max(L.zeros(0)))
    raises_like(lambda L: L.max(L.zeros(0, 3), 0))
    raises_like(lambda L: L.amax(L.zeros(0, 3), 0))
    raises_like(lambda L: L.amax(L.zeros(0, 3)))
    raises_like(lambda L: L.argmax(L.zeros(0)))
    raises_like(lambda L: L.argmax(L.zeros(0, 3), 0))
    raises_like(lambda L: L.max(L.ones(2, 3), 5))
    raises_like(lambda L: L.var(L.arange(3)))
    raises_like(lambda L: L.max(L.ones(2, dtype=L.complex64)))
    raises_like(lambda L: L.linalg.vector_norm(L.arange(3)))
    raises_like(lambda L: L.linalg.vector_norm(L.zeros(0), float("inf")))
    raises_like(lambda L: L.nansum(L.ones(2, dtype=L.complex64)))
    raises_like(lambda L: L.aminmax(L.zeros(0)))
    raises_like(lambda L: L.count_nonzero(L.ones(2, 3), (0, 0)))
    raises_like(lambda L: L.norm(L.ones(2, 2, 2), "nuc"))


def test_nuclear_norm():
    a = make("float64", seed=14, shape=(4, 3))
    check(lambda L, x: L.norm(x, "nuc"), a)
    check(lambda L, x: L.norm(x.reshape(2, 2, 3), "nuc", (0, 2), keepdim=True), a)
    check(lambda L, x: L.norm(x.reshape(2, 2, 3), "nuc", (2, 1)), a)


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
def test_dist(dtype):
    a = make(dtype, "transposed", seed=31)
    b = make(dtype, "broadcast", seed=32)
    tol = 2e-2 if dtype in LOWP else 1e-4
    for p in (2, 1, 0, 3.5, float("inf"), float("-inf")):
        check(lambda L, x, y: L.dist(x, y, p), a, b, rtol=tol, atol=tol, what=f"p={p}")
        check(lambda L, x, y: x.dist(y[0], p=p), a, b, rtol=tol, atol=tol)
    check(lambda L, x, y: L.dist(x[:0], y[:0]), a, b)
    raises_like(lambda L, x: L.dist(x.long(), x.long()), a)
    raises_like(lambda L, x, y: L.dist(x, y[:, :2]), a, b)
