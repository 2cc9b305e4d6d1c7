"""Scans against torch 1.13: cumsum/cumprod (int64 promotion, dtype=, out=, in-place),
cummax/cummin (NaN propagation, index of the latest tie), logcumsumexp. Every dtype, every layout
(contiguous, transposed, strided, broadcast, zero-size, 0-dim), negative dims, dims along and
across the contiguous one, long lines, thread-count independence and the error types. float16
has no scan kernels in torch 1.13 (ember has them); there the oracle is torch in float32."""

import warnings

import numpy as np
import pytest
import torch

import ember
from _oracle import (COMPLEX, DTYPES, FLOATS, LAYOUTS, check, check_half_upcast, compare, make,
                     raises_like, to_numpy)


def dims_of(layout):
    return [0, -1] if layout == "scalar" else [0, 1, -1, -2]


def tol(dtype):
    # bfloat16 matches torch exactly (same accumulation); float16 is against a float32 oracle
    return dict(rtol=2e-3, atol=2e-3) if dtype == "float16" else {}


def lcheck(fn, a, dtype, **kw):
    """check() with this file's tolerances; float16 against torch in float32 (no 1.13 kernel)."""
    return check_half_upcast(fn, a, dtype, **{**kw, **tol(dtype)})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cumsum_cumprod(dtype, layout):
    a = make(dtype, layout, seed=1)
    p = make(dtype, layout, seed=2, kind="small")
    for d in dims_of(layout):
        lcheck(lambda L, x: L.cumsum(x, d), a, dtype, key=("cumsum", dtype, layout, d))
        lcheck(lambda L, x: x.cumsum(d), a, dtype, key=("mcumsum", dtype, layout, d))
        lcheck(lambda L, x: L.cumprod(x, d), p, dtype, key=("cumprod", dtype, layout, d))
        lcheck(lambda L, x: x.cumprod(dim=d), p, dtype, key=("mcumprod", dtype, layout, d))


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d not in COMPLEX])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cummax_cummin(dtype, layout):
    a = make(dtype, layout, seed=3, kind="small")  # many ties
    for d in dims_of(layout):
        for fn in ("cummax", "cummin"):
            lcheck(lambda L, x: tuple(getattr(L, fn)(x, d)), a, dtype, key=(fn, dtype, layout, d))
            lcheck(lambda L, x: tuple(getattr(x, fn)(d)), a, dtype, key=(fn, dtype, layout, d))


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "bool", "complex64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_logcumsumexp(dtype, layout):
    a = make(dtype, layout, seed=4)
    for d in dims_of(layout):
        lcheck(lambda L, x: L.logcumsumexp(x, d), a, dtype, key=("lcse", dtype, layout, d))
        lcheck(lambda L, x: x.logcumsumexp(d), a, dtype, key=("lcse", dtype, layout, d))


def test_nan_inf_and_ties():
    nan, inf = float("nan"), float("inf")
    rows = [[1.0, 3, 3, nan, 2, nan, 5, 5], [nan, 1, nan, 2, 2, -inf, inf, inf],
            [2.0, 2, 2, 1, 1, 3, 3, 0], [-0.0, 0.0, -0.0, 0.0, 1, -1, -1, 1]]
    for dt in ("float32", "float64", "bfloat16"):
        for fn in ("cummax", "cummin"):
            check(lambda L: tuple(getattr(L, fn)(L.tensor(rows, dtype=getattr(L, dt)), 1)))
            check(lambda L: tuple(getattr(L, fn)(L.tensor(rows, dtype=getattr(L, dt)).t(), 0)))
        for fn in ("cumsum", "cumprod", "logcumsumexp"):
            check(lambda L: getattr(L, fn)(L.tensor(rows, dtype=getattr(L, dt)), 1))
            check(lambda L: getattr(L, fn)(L.tensor(rows, dtype=getattr(L, dt)).t(), 0))
    check(lambda L: L.logcumsumexp(L.tensor([-inf, -inf, 1.0, inf, inf, nan, 1.0]), 0))
    check(lambda L: L.logcumsumexp(L.tensor([inf, -inf, 0.0, 1e30, -1e30]), 0))
    ints = [[2, 1, 1, 3, 3, 0], [0, 0, 0, 0, 0, 0]]
    for fn in ("cummax", "cummin"):
        check(lambda L: tuple(getattr(L, fn)(L.tensor(ints), 1)))
        check(lambda L: tuple(getattr(L, fn)(L.tensor(ints, dtype=L.uint8), 0)))
        check(lambda L: tuple(getattr(L, fn)(L.tensor(ints, dtype=L.bool), 1)))


def test_accumulation_precision():
    # float32 accumulates in float64 and bfloat16 in float32, rounding every output (as torch)
    check(lambda L: L.cumsum(L.tensor([1e8] + [1.0] * 10), 0))
    check(lambda L: L.cumprod(L.tensor([1e30, 1e30, 1e-30]), 0))
    check(lambda L: L.cumsum(L.full((300, 3), 0.1, dtype=L.bfloat16), 0))
    check(lambda L: L.cumsum(L.full((3, 300), 0.1, dtype=L.bfloat16), 1))
    check(lambda L: L.cumsum(L.full((3, 1000), 0.1), 1))
    check(lambda L: L.cumsum(L.tensor([100, 100, 100], dtype=L.int8), 0, dtype=L.int8))
    check(lambda L: L.cumprod(L.full((40,), 3, dtype=L.int64), 0))
    check(lambda L: L.cumprod(L.full((40,), 3, dtype=L.int32), 0, dtype=L.int32))
    check(lambda L: L.cumprod(L.tensor([1 + 2j, 3 - 1j, 0.5j]), 0))
    check(lambda L: L.cumsum(L.tensor([[1 + 2j, 3 - 1j], [2j, 1]]).conj(), 1))
    check(lambda L: L.cumprod(L.tensor([[1 + 2j, 3 - 1j], [2j, 1]]).conj().t(), 1))
    # logcumsumexp accumulates in float64 for float32 (float32 for bfloat16): bitwise equal
    v = np.random.default_rng(11).standard_normal((3, 500)).astype(np.float32) * 3
    e, t = ember.from_numpy(v.copy()), torch.from_numpy(v.copy())
    for d in (0, 1):
        check(lambda L, x: L.logcumsumexp(x, d), (e, t), rtol=0, atol=0)
        check(lambda L, x: L.logcumsumexp(x.bfloat16(), d), (e, t), rtol=0, atol=0)
        check(lambda L, x: L.cumsum(x.bfloat16(), d), (e, t), rtol=0, atol=0)
        check(lambda L, x: L.cumprod(x.bfloat16() / 4 + 1, d), (e, t), rtol=0, atol=0)
        check(lambda L, x: L.cumsum(x, d), (e, t), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "bfloat16", "complex64", "bool",
                                   "float16"])
def test_dtype_arg(dtype):
    for src in ("int32", "float32", "bool", "uint8"):
        a = make(src, "transposed", seed=5, kind="small")
        for fn in ("cumsum", "cumprod"):
            if dtype == "float16":  # no torch 1.13 kernel: float32 oracle rounded to float16
                e = getattr(a[0], fn)(0, dtype=ember.float16)
                t = getattr(a[1], fn)(0, dtype=torch.float32).half()
                compare(t, None, e, None)
                continue
            check(lambda L, x: getattr(L, fn)(x, 0, dtype=getattr(L, dtype)), a)
            check(lambda L, x: getattr(x, fn)(-1, dtype=getattr(L, dtype)), a)


def test_dtype_cast_first():
    check(lambda L: L.cumsum(L.tensor([1.5, 2.7, -0.5]), 0, dtype=L.int32))
    check(lambda L: L.cumprod(L.tensor([1.5, 2.7, -0.5]), 0, dtype=L.int64))
    check(lambda L: L.cumsum(L.tensor([300.0, 1.0]), 0, dtype=L.uint8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda L: L.cumsum(L.tensor([1 + 1j, 2 - 1j]), 0, dtype=L.float32))


def test_cumsum_out():
    a = make("int32", "strided", seed=6)
    f = make("float32", "transposed", seed=6)
    # out's dtype is the result dtype when dtype= is not given; the input is cast to it
    for od in ("int32", "int64", "float64", "float32", "complex128"):
        check(lambda L, x: L.cumsum(x, 1, out=L.empty(0, dtype=getattr(L, od))).clone(), a)
        check(lambda L, x: L.cumprod(x, 0, out=L.empty(3, 4, dtype=getattr(L, od))).clone(), f)
    check(lambda L, x: L.cumsum(x, 1, dtype=L.float64, out=L.empty(0, dtype=L.float64)), a)
    check(lambda L, x: L.cumsum(x, 1, dtype=L.int64, out=L.empty(0, dtype=L.int32)), a)
    check(lambda L, x: L.cumsum(x, 1, out=L.empty(0, dtype=L.bool)), a)
    # out= into a non-contiguous view
    check(lambda L, x: (lambda o: (L.cumsum(x, 0, out=o.t()), o)[1])(L.zeros(4, 3)), f)
    out = ember.empty(0, dtype=ember.int64)
    r = ember.cumsum(ember.tensor([1, 2, 3]), 0, out=out)
    assert r is out and out.tolist() == [1, 3, 6]
    # a non-empty out of another shape is an error in ember (torch resizes it with a warning)
    with pytest.raises(RuntimeError):
        ember.cumsum(ember.ones(3), 0, out=ember.empty(5))


def test_other_outs():
    a = make("float32", "transposed", seed=7)
    for fn in ("cummax", "cummin"):
        check(lambda L, x: tuple(getattr(L, fn)(x, 1, out=(L.empty(0), L.empty(0, dtype=L.int64)))),
              a)
        check(lambda L, x: tuple(getattr(L, fn)(x, 0, out=(L.empty(4, 3).t(),
                                                           L.empty(4, 3, dtype=L.int64).t()))), a)
        check(lambda L, x: getattr(L, fn)(x, 1, out=(L.empty(0, dtype=L.float64),
                                                     L.empty(0, dtype=L.int64))), a)
        check(lambda L, x: getattr(L, fn)(x, 1, out=(L.empty(0), L.empty(0, dtype=L.int32))), a)
        check(lambda L, x: getattr(L, fn)(x, 1, out=(L.empty(0),)), a)
        check(lambda L, x: getattr(L, fn)(x, 1, out=L.empty(0)), a)
        v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
        r = getattr(ember, fn)(ember.tensor([1.0, 3.0, 2.0]), 0, out=(v, i))
        assert type(r).__name__ == fn and r.values is v and r.indices is i
        assert i.tolist() == ([0, 1, 1] if fn == "cummax" else [0, 0, 0])
    check(lambda L, x: L.logcumsumexp(x, 0, out=L.empty(0)).clone(), a)
    check(lambda L, x: L.logcumsumexp(x, 0, out=L.empty(0, dtype=L.float64)), a)
    check(lambda L, x: L.logcumsumexp(x, 0, out=L.empty(0, dtype=L.int64)), a)
    o = ember.empty(0)
    assert ember.logcumsumexp(ember.zeros(2), 0, out=o) is o


def test_inplace():
    for dtype, layout in [("int32", "contiguous"), ("float32", "transposed"),
                          ("float64", "strided"), ("int16", "scalar"), ("complex64", "contiguous"),
                          ("bfloat16", "contiguous"), ("uint8", "zero")]:
        a = make(dtype, layout, seed=8, kind="small")
        for fn in ("cumsum_", "cumprod_"):
            for d in dims_of(layout):
                check(lambda L, x: (lambda c: (getattr(c, fn)(d), c)[1])(x.clone()), a,
                      key=(fn, dtype, layout, d))
        check(lambda L, x: getattr(x.clone(), "cumsum_")(0, dtype=getattr(L, dtype)), a)
        check(lambda L, x: getattr(x.clone(), "cumsum_")(0, dtype=L.float64), a,
              key=("cumsum_dt", dtype))
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.cumsum_(1) is x and x.tolist() == [[1.0, 3.0], [3.0, 7.0]]
    # in-place into a view writes through to the base
    base = ember.ones(3, 4)
    base[:, 1:].cumsum_(1)
    assert base.tolist() == [[1.0, 1.0, 2.0, 3.0]] * 3
    y = ember.arange(1, 6)
    v = y._version
    y.cumprod_(0)
    assert y.tolist() == [1, 2, 6, 24, 120] and y._version > v


def test_shapes_and_long_lines():
    rng = np.random.default_rng(9)
    # lines along and across the contiguous dim, column blocks of 256 and their remainders
    for shape in [(1,), (7,), (3, 5, 7), (2, 300, 3), (3, 600), (600, 3), (2, 5000), (257, 2, 3)]:
        v = rng.integers(-4, 5, shape).astype(np.float64)
        e, t = ember.from_numpy(v.copy()), torch.from_numpy(v.copy())
        perm = tuple(reversed(range(len(shape))))
        for d in range(-len(shape), len(shape)):
            check(lambda L, x: L.logcumsumexp(x, d), (e, t), what=f"lcse {shape} {d}")
            check(lambda L, x: L.cumsum(x.permute(*perm), d), (e, t))
            check(lambda L, x: tuple(L.cummax(x, d)), (e, t), what=f"cummax {shape} {d}")
            check(lambda L, x: tuple(L.cummin(x.permute(*perm), d)), (e, t))
            check(lambda L, x: L.cumprod(x.long(), d), (e, t))
    for shape in [(0,), (0, 3), (3, 0), (2, 0, 4)]:
        for d in range(len(shape)):
            for fn in ("cumsum", "cumprod", "logcumsumexp"):
                check(lambda L: getattr(L, fn)(L.zeros(shape), d))
            check(lambda L: L.cumsum(L.zeros(shape, dtype=L.int32), d))
            check(lambda L: tuple(L.cummax(L.zeros(shape), d)))
            check(lambda L: tuple(L.cummin(L.zeros(shape, dtype=L.complex64), d)))
    # 0-dim: copied without a kernel (so even cumsum(dtype=bool) works, as in torch)
    check(lambda L: L.cumsum(L.tensor(True), 0, dtype=L.bool))
    check(lambda L: L.cumsum(L.tensor(3, dtype=L.int8), -1))
    check(lambda L: tuple(L.cummax(L.tensor(1j), 0)))
    check(lambda L: L.logcumsumexp(L.tensor(1), 0))


def test_thread_count_independent(restore_globals):
    rng = np.random.default_rng(10)
    v = rng.standard_normal((64, 3000)).astype(np.float32)
    e = ember.from_numpy(v)
    outs = []
    for n in (1, 2, 3):
        ember.set_num_threads(n)
        outs.append([to_numpy(r) for r in (e.cumsum(1), e.cumsum(0), e.t().cumprod(1),
                                          e.cummax(0)[1], e.logcumsumexp(1),
                                          e.bfloat16().cumsum(0))])
    for o in outs[1:]:
        for x, y in zip(o, outs[0]):
            assert np.array_equal(x, y)
    ref = np.cumsum(v.astype(np.float64), 1).astype(np.float32)
    assert np.array_equal(outs[0][0], ref)


def test_return_types():
    r = ember.cummax(ember.tensor([[1.0, 3.0], [2.0, 0.0]]), 1)
    assert type(r).__name__ == "cummax" and type(r).__module__ == "ember.return_types"
    assert r.values.tolist() == [[1.0, 3.0], [2.0, 2.0]] and r.indices.tolist() == [[0, 1], [0, 0]]
    v, i = ember.cummin(ember.tensor([2, 1, 1]), 0)
    assert v.tolist() == [2, 1, 1] and i.tolist() == [0, 1, 2]


def test_errors():
    raises_like(lambda L: L.cumsum(L.ones(2, 3), 2))
    raises_like(lambda L: L.cumsum(L.ones(2, 3), -3))
    # torch 1.13's cummax/cummin skip the dim check for 0-dim and zero-size inputs; ember checks
    for x in (ember.tensor(1.0), ember.zeros(0), ember.zeros(0, 2)):
        with pytest.raises(IndexError):
            ember.cummax(x, 2)
        with pytest.raises(IndexError):
            ember.cummin(x, -3)
    raises_like(lambda L: L.cumprod(L.tensor(1.0), 1))
    raises_like(lambda L: L.logcumsumexp(L.ones(2), 1))
    raises_like(lambda L: L.ones(2).cumsum_(3))
    raises_like(lambda L: L.cumsum(L.ones(2, dtype=L.bool), 0, dtype=L.bool))
    raises_like(lambda L: L.cumprod(L.ones(2), 0, dtype=L.bool))
    raises_like(lambda L: L.cummax(L.ones(2, dtype=L.complex64), 0))
    raises_like(lambda L: L.cummin(L.ones(2, dtype=L.complex128), 0))
    raises_like(lambda L: L.logcumsumexp(L.ones(2, dtype=L.int32), 0))
    raises_like(lambda L: L.logcumsumexp(L.ones(2, dtype=L.complex64), 0))
    raises_like(lambda L: L.ones(2).cumsum_(0, dtype=L.float64))
    raises_like(lambda L: L.ones(2, dtype=L.int32).cumprod_(0, dtype=L.int64))
    raises_like(lambda L: L.ones(2, dtype=L.bool).cumsum_(0))
    raises_like(lambda L: L.cumsum(L.ones(2)))
    raises_like(lambda L: L.cumsum(L.ones(2), 0.5))
    raises_like(lambda L: L.cumsum(L.ones(2), 0, L.float64))
    raises_like(lambda L: L.cummax(L.ones(2), 0, out=(L.empty(0), L.empty(0), L.empty(0))))
    raises_like(lambda L: L.cumsum(L.ones(2), 0, out=L.empty(0, dtype=L.int32),
                                   dtype=L.float64))
