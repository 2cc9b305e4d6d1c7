"""Order statistics against torch 1.13: kthvalue, median/nanmedian, mode, quantile/nanquantile.
Every dtype (unsupported ones raise what torch raises), every layout, negative dims, keepdim,
out=, NaN handling, tie-heavy inputs (the reported index must be torch's), empty inputs and the
error types."""

import numpy as np
import pytest
import torch

import ember
from _oracle import DTYPES, LAYOUTS, check, make, raises_like, tensors_from

NAN = float("nan")


def tup(r):
    """Named result tuples as plain tuples (ember's and torch's return_types differ in type)."""
    return tuple(r) if isinstance(r, tuple) else r


def dims_of(a):
    return [0, -1] if a.dim() == 0 else [0, 1, -1, -2]


def pair(arr, dtype="float32"):
    return tensors_from(np.asarray(arr), dtype)


def ties(n, seed, dtype="int64", hi=5, nan_frac=0.0):
    """A tie-heavy 2-row input, optionally with NaNs."""
    rng = np.random.default_rng(seed)
    v = rng.integers(0, hi, (2, n)).astype(np.float64)
    if nan_frac:
        v[rng.random((2, n)) < nan_frac] = np.nan
    np_dtype = {"bfloat16": np.float32, "bool": np.bool_}.get(dtype) or getattr(np, dtype)
    return tensors_from(v.astype(np_dtype), dtype)


# ---- kthvalue ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_kthvalue(dtype, layout):
    a = make(dtype, layout, seed=1)
    for d in dims_of(a[1]):
        n = 1 if a[1].dim() == 0 else a[1].shape[d]
        for k in sorted({1, max(n // 2, 1), max(n, 1)}):
            for keepdim in (False, True):
                check(lambda L, x: tup(L.kthvalue(x, k, d, keepdim)), a,
                      what=f"{dtype} {layout} d={d} k={k} keepdim={keepdim}",
                      key=("kthvalue", dtype) if layout != "zero" and (
                          dtype in ("bool", "float16") or "complex" in dtype) else None)


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [2, 3, 17, 100, 301])
def test_kthvalue_ties(dtype, n):
    a = ties(n, seed=n, dtype=dtype)
    for k in sorted({1, 2, n // 3 + 1, n // 2 + 1, n - 1, n}):
        check(lambda L, x: tup(L.kthvalue(x, k)), a, what=f"k={k}")
        check(lambda L, x: tup(x.t().kthvalue(k, 0, True)), a, what=f"t k={k}")


@pytest.mark.parametrize("n", [5, 40, 200])
def test_kthvalue_nan(n):
    a = ties(n, seed=7, dtype="float64", nan_frac=0.3)
    for k in range(1, n + 1, max(1, n // 12)):
        check(lambda L, x: tup(L.kthvalue(x, k, 1)), a, what=f"k={k}")
    check(lambda L, x: tup(L.kthvalue(x, n, 1)), a)


def test_kthvalue_errors_and_out():
    a = make("float32", "contiguous")
    for k in (0, 5, -1):
        raises_like(lambda L, x: L.kthvalue(x, k), a)
    raises_like(lambda L, x: L.kthvalue(x, 1, 2), a)
    raises_like(lambda L, x: L.kthvalue(x, 1, -3), a)
    z = make("float32", "zero")  # (0, 4)
    raises_like(lambda L, x: L.kthvalue(x, 1, 0), z)
    check(lambda L, x: tup(L.kthvalue(x, 4, 1)), z)
    raises_like(lambda L, x: L.kthvalue(x, 5, 1), z)
    s = make("float32", "scalar")
    raises_like(lambda L, x: L.kthvalue(x, 2), s)
    raises_like(lambda L, x: L.kthvalue(x, 1, 1), s)

    def out_form(L, x):
        v, i = L.empty(0), L.empty(0, dtype=L.int64)
        r = L.kthvalue(x, 2, 1, out=(v, i))
        assert r[0] is v and r[1] is i
        return (v, i)
    check(out_form, a)
    raises_like(lambda L, x: L.kthvalue(x, 2, 1, out=(L.empty(0, dtype=L.float64),
                                                       L.empty(0, dtype=L.int64))), a)
    r = ember.kthvalue(a[0], 2)
    assert type(r).__name__ == "kthvalue" and r.values is r[0] and r.indices is r[1]
    assert type(a[0].kthvalue(1)).__name__ == "kthvalue"


# ---- median / nanmedian ----

@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_median(fn, dtype, layout):
    a = make(dtype, layout, seed=2)
    key = (fn, dtype) if layout != "zero" and (
        dtype in ("bool", "float16") or "complex" in dtype) else None
    if layout != "zero":  # empty input: torch returns NaN converted to the dtype (below)
        check(lambda L, x: getattr(L, fn)(x), a, what="all", key=key)
    check(lambda L, x: getattr(x, fn)(), a, what="method", key=key)
    # torch 1.13's median(dim) reads stride-0 inputs wrongly: its oracle gets a dense copy
    dense = (lambda L, x: x.contiguous() if L is torch else x) if layout == "broadcast" else (
        lambda L, x: x)
    for d in dims_of(a[1]):
        for keepdim in (False, True):
            check(lambda L, x: tup(getattr(L, fn)(dense(L, x), d, keepdim)), a, what=f"d={d}",
                  key=key)
            check(lambda L, x: tup(getattr(dense(L, x), fn)(dim=d, keepdim=keepdim)), a, key=key)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8", "int16", "bfloat16",
                                   "float32", "float64"])
def test_median_empty(fn, dtype):
    a = make(dtype, "zero")
    check(lambda L, x: getattr(L, fn)(x), a)
    check(lambda L, x: getattr(L, fn)(x.t().reshape(4, 0)), a)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["int64", "int8", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 9, 64, 257])
def test_median_ties(fn, dtype, n):
    a = ties(n, seed=n + 1, dtype=dtype)
    check(lambda L, x: tup(getattr(L, fn)(x, 1)), a)
    check(lambda L, x: tup(getattr(L, fn)(x.t(), 0, True)), a)
    check(lambda L, x: getattr(L, fn)(x), a)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("n", [1, 3, 8, 50, 129])
@pytest.mark.parametrize("frac", [0.2, 0.7, 1.0])
def test_median_nan(fn, n, frac):
    for dtype in ("float32", "bfloat16"):
        a = ties(n, seed=n, dtype=dtype, nan_frac=frac)
        check(lambda L, x: tup(getattr(L, fn)(x, 1)), a, what=dtype)
        check(lambda L, x: tup(getattr(L, fn)(x, 0)), a, what=dtype)
        check(lambda L, x: getattr(L, fn)(x), a, what=dtype)
        check(lambda L, x: getattr(L, fn)(x[0]), a, what=dtype)


def test_median_errors_and_out():
    a = make("float32", "contiguous")
    z = make("float32", "zero")
    for fn in ("median", "nanmedian"):
        raises_like(lambda L, x: getattr(L, fn)(x, 0), z)
        check(lambda L, x: tup(getattr(L, fn)(x, 1)), z)
        raises_like(lambda L, x: getattr(L, fn)(x, 2), a)
        raises_like(lambda L, x: getattr(L, fn)(x, keepdim=True), a)

        def out_form(L, x):
            v, i = L.empty(0), L.empty(0, dtype=L.int64)
            r = getattr(L, fn)(x, -1, True, out=(v, i))
            assert r[0] is v and r[1] is i
            return (v, i)
        check(out_form, a)
        raises_like(lambda L, x: getattr(L, fn)(x, 0, out=(L.empty(0), L.empty(0))), a)
        r = getattr(ember, fn)(a[0], 0)
        assert type(r).__name__ == fn and r.values is r[0] and r.indices is r[1]


# ---- mode ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_mode(dtype, layout):
    a = make(dtype, layout, seed=4)
    key = ("mode", dtype) if "complex" in dtype and layout != "zero" else None
    for d in dims_of(a[1]):
        for keepdim in (False, True):
            check(lambda L, x: tup(L.mode(x, d, keepdim)), a, what=f"d={d}", key=key)
    check(lambda L, x: tup(x.mode()), a, key=key)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 5, 16, 17, 40, 333])
def test_mode_ties(dtype, n):
    a = ties(n, seed=3 * n, dtype=dtype, hi=2 if dtype == "bool" else 6)
    check(lambda L, x: tup(L.mode(x, 1)), a)
    check(lambda L, x: tup(L.mode(x.t(), 0, True)), a)


@pytest.mark.parametrize("n", [3, 16, 30, 100])
def test_mode_nan(n):
    a = ties(n, seed=n, dtype="float32", nan_frac=0.4)
    check(lambda L, x: tup(L.mode(x, 1)), a)


def test_mode_errors_and_out():
    a = make("int64", "contiguous")
    z = make("int64", "zero")
    raises_like(lambda L, x: L.mode(x, 0), z)
    check(lambda L, x: tup(L.mode(x, 1)), z)
    raises_like(lambda L, x: L.mode(x, 2), a)

    def out_form(L, x):
        v, i = L.empty(0, dtype=L.int64), L.empty(0, dtype=L.int64)
        r = L.mode(x, 0, out=(v, i))
        assert r[0] is v and r[1] is i
        return (v, i)
    check(out_form, a)
    raises_like(lambda L, x: L.mode(x, out=(L.empty(0), L.empty(0, dtype=L.int64))), a)
    assert type(ember.mode(a[0])).__name__ == "mode"


# ---- quantile / nanquantile ----

INTERP = ["linear", "lower", "higher", "midpoint", "nearest"]
QS = [0.0, 0.25, 0.5, 1 / 3, 0.9, 1.0]


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_quantile(fn, dtype, layout):
    a = make(dtype, layout, seed=5)
    if layout == "zero":  # torch 1.13 rejects empty input whatever the other arguments
        raises_like(lambda L, x: getattr(L, fn)(x, 0.5), a)
        raises_like(lambda L, x: getattr(L, fn)(x, 0.5, 1, True, interpolation="lower"), a)
        return
    qv = np.array([0.0, 0.2, 0.5, 1 / 3, 0.75, 1.0])
    q = tensors_from(qv.astype(dtype), dtype)
    q0 = tensors_from(np.array(0.3, dtype=dtype), dtype)
    for d in [None] + dims_of(a[1]):
        for keepdim in (False, True):
            for qq in (0.3, q, q0):
                check(lambda L, x, qq: getattr(L, fn)(x, qq, d, keepdim), a, qq,
                      what=f"d={d} keepdim={keepdim}")
        for interp in INTERP:
            check(lambda L, x, q: getattr(L, fn)(x, q, d, interpolation=interp), a, q,
                  what=f"d={d} {interp}")
    check(lambda L, x: getattr(x, fn)(0.4, dim=None if x.dim() == 0 else 1,
                                      interpolation="nearest"), a)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("frac", [0.0, 0.3, 1.0])
def test_quantile_nan_and_rounding(fn, frac):
    rng = np.random.default_rng(11)
    v = rng.integers(-20, 20, (3, 4, 37)).astype(np.float32) / 3
    v[rng.random(v.shape) < frac] = np.nan
    a = tensors_from(v, "float32")
    qs = np.linspace(0, 1, 29)
    for dtype in ("float32", "float64"):
        x = (a[0].to(getattr(ember, dtype)), a[1].to(getattr(torch, dtype)))
        q = tensors_from(qs.astype(dtype), dtype)
        for interp in INTERP:
            for d in (None, 2, 0, -2):
                check(lambda L, x, q: getattr(L, fn)(x, q, d, interpolation=interp), x, q,
                      what=f"{dtype} {interp} d={d}")
            for qq in QS:
                check(lambda L, x: getattr(L, fn)(x, qq, -1, True, interpolation=interp), x)
    # half-way ranks: nearest rounds half to even
    b = pair([1.0, 2.0, 3.0, 4.0, 5.0])
    q = pair([0.125, 0.375, 0.625, 0.875])
    check(lambda L, x, q: getattr(L, fn)(x, q, interpolation="nearest"), b, q)
    c = pair([1.0, float("inf"), -float("inf"), 2.0])
    for interp in INTERP:
        for qq in QS:
            check(lambda L, x: getattr(L, fn)(x, qq, interpolation=interp), c)


def test_quantile_errors_and_out():
    a = make("float32", "contiguous")
    ai = make("int64", "contiguous")
    a16 = make("float16", "contiguous")
    z = make("float32", "zero")
    s = make("float32", "scalar")
    q2 = pair([[0.5]])
    qd = pair([0.5], "float64")
    qbad = pair([0.5, 1.5])
    for fn in ("quantile", "nanquantile"):
        f = lambda L, *args, **kw: getattr(L, fn)(*args, **kw)  # noqa: E731
        for q in (1.5, -0.1, NAN):
            raises_like(lambda L, x: f(L, x, q), a)
        raises_like(lambda L, x: f(L, x, 0.5, interpolation="cubic"), a)
        raises_like(lambda L, x: f(L, x, 1.5, interpolation="cubic"), a)
        raises_like(lambda L, x: f(L, x, 0.5), z)
        raises_like(lambda L, x: f(L, x, 0.5), ai)
        raises_like(lambda L, x: f(L, x, 0.5), a16)
        raises_like(lambda L, x, q: f(L, x, q), a, q2)
        raises_like(lambda L, x, q: f(L, x, q), a, qd)
        raises_like(lambda L, x, q: f(L, x, q), a, qbad)
        raises_like(lambda L, x: f(L, x, 0.5, 2), a)
        raises_like(lambda L, x: f(L, x, 0.5, 1), s)
        check(lambda L, x: f(L, x, 0.5, 0, True), s)
        check(lambda L, x: f(L, x, L.tensor([]), 1), a)

        def out_form(L, x):
            o = L.empty(0)
            r = f(L, x, 0.25, 1, out=o)
            assert r is o
            return o
        check(out_form, a)
        raises_like(lambda L, x: f(L, x, 0.5, out=L.empty(0, dtype=L.float64)), a)


# ---- threads ----

def test_thread_count_independent():
    rng = np.random.default_rng(0)
    v = rng.integers(0, 7, (64, 300)).astype(np.float32)
    x = ember.from_numpy(v)
    old = ember.get_num_threads()
    res = []
    for nt in (1, 2):
        ember.set_num_threads(nt)
        res.append([t.numpy() for t in (*x.kthvalue(100, 1), *x.median(1), *x.mode(1),
                                        ember.quantile(x, 0.3, 1))])
    ember.set_num_threads(old)
    for p, q in zip(*res):
        np.testing.assert_array_equal(p, q)
