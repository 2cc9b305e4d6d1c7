"""softmax / log_softmax (and nn.functional softmax/log_softmax/softmin, ember.special) and
sort / argsort / msort / topk against torch 1.13: every dtype, every layout, negative dims,
dtype=, out= (including the resize-with-warning of sort/topk outs), NaN/inf, ties, -0.0, stable
order, rows long enough for the radix and vector paths, and the error types. float16 softmax and
topk have no torch 1.13 CPU kernel (ember has them): there the oracle is torch in float32."""

import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF
import ember.special  # noqa: F401
import torch.nn.functional as TF
from _oracle import (COMPLEX, DTYPES, LAYOUTS, LOWP, check, check_half_upcast, compare, make,
                     raises_like, to_numpy)

NAN, INF = float("nan"), float("inf")
BAD_TOPK = ["bool"] + COMPLEX


def dims_of(layout):
    return [0, -1] if layout == "scalar" else [0, 1, -1, -2]


def tol(dtype):
    return dict(rtol=2e-2, atol=2e-2) if dtype in LOWP else {}


def lcheck(fn, a, dtype, **kw):
    """check() with this file's tolerances; float16 against torch in float32 (no 1.13 kernel)."""
    return check_half_upcast(fn, a, dtype, **{**kw, **tol(dtype)})


# ---- softmax ----

@pytest.mark.filterwarnings("ignore:Casting complex values")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_softmax(dtype, layout):
    a = make(dtype, layout, seed=1)
    for d in dims_of(layout):
        for fn in ("softmax", "log_softmax"):
            # torch's errors here depend on the dtype and on zero-size (no error) only
            key = (fn, dtype, layout == "zero")
            lcheck(lambda L, x: getattr(L, fn)(x, d), a, dtype, key=key)
            lcheck(lambda L, x: getattr(x, fn)(d), a, dtype, key=key)
            check(lambda L, x: getattr(L, fn)(x, d, dtype=L.float64), a, key=key + ("f64",))
            check(lambda L, x: getattr(x, fn)(d, L.float32), a, key=key + ("f32",))


def test_softmax_dtype_arg():
    a = make("float32", "transposed", seed=2)
    for fn in ("softmax", "log_softmax"):
        # dtype= casts first: a float32 input asked for bfloat16 is rounded before the math
        # bfloat16 runs in float32 and rounds once (torch 1.13 rounds every step: less exact)
        e = getattr(ember, fn)(a[0] * 1.01, 1, dtype=ember.bfloat16)
        t = getattr(torch, fn)((a[1] * 1.01).bfloat16().float(), 1).bfloat16()
        compare(t, None, e, None, 0, 0)
        check(lambda L, x: getattr(L, fn)(x.bfloat16(), 0, dtype=L.float64), a)
        check(lambda L, x: getattr(L, fn)(x.int(), 0, dtype=L.float32), a)
        check(lambda L, x: getattr(L, fn)(x, 0, dtype=L.int64), a, key=(fn, "int64"))
        check(lambda L, x: getattr(L, fn)(x, 0, dtype=L.complex64), a, key=(fn, "c64"))
        e = getattr(ember, fn)(a[0], 1, dtype=ember.float16)
        t = getattr(torch, fn)(a[1], 1).half()
        compare(t, None, e, None, 1e-3, 1e-3)


def test_softmax_values():
    rows = [[INF, 1.0, 2.0], [-INF, -INF, -INF], [NAN, 1.0, 2.0], [1e30, -1e30, 0.0],
            [-INF, 0.0, -INF], [1000.0, 1000.0, 999.0]]
    for fn in ("softmax", "log_softmax"):
        check(lambda L: getattr(L, fn)(L.tensor(rows), 1))
        check(lambda L: getattr(L, fn)(L.tensor(rows).t(), 0))
        check(lambda L: getattr(L, fn)(L.tensor(rows, dtype=L.float64), -1))
        check(lambda L: getattr(L, fn)(L.tensor(2.5), 0))
        check(lambda L: getattr(L, fn)(L.tensor(2.5), -1))
        for shape in [(0,), (0, 3), (3, 0)]:
            for d in range(len(shape)):
                check(lambda L: getattr(L, fn)(L.zeros(shape), d))


def test_softmax_long_rows_and_blocks():
    rng = np.random.default_rng(3)
    for shape in [(3, 1000), (1000, 3), (2, 37, 300), (5, 513), (2, 3, 17)]:
        v = (rng.standard_normal(shape) * 5).astype(np.float32)
        e, t = ember.from_numpy(v.copy()), torch.from_numpy(v.copy())
        for d in range(-len(shape), len(shape)):
            for fn in ("softmax", "log_softmax"):
                check(lambda L, x: getattr(L, fn)(x, d), (e, t), rtol=1e-5, atol=1e-6)
                check(lambda L, x: getattr(L, fn)(x.double(), d), (e, t))
                r = getattr(ember, fn)(e.bfloat16(), d)
                compare(getattr(torch, fn)(t.bfloat16().float(), d).bfloat16(), None, r, None,
                        0, 0)
    v = rng.standard_normal((4, 300)).astype(np.float32)
    v[1, 7] = np.nan
    v[2, 299] = np.inf
    e, t = ember.from_numpy(v.copy()), torch.from_numpy(v.copy())
    for fn in ("softmax", "log_softmax"):
        check(lambda L, x: getattr(L, fn)(x, 1), (e, t))
        check(lambda L, x: getattr(L, fn)(x.t().contiguous(), 0), (e, t))


def test_softmax_out():
    a = make("float32", "contiguous", seed=4)
    for fn in ("softmax", "log_softmax"):
        check(lambda L, x: getattr(L, fn)(x, 1, out=L.empty(0)).clone(), a)
        check(lambda L, x: getattr(L, fn)(x, 1, out=L.empty(3, 4)).clone(), a)
        check(lambda L, x: (lambda o: (getattr(L, fn)(x, 0, out=o.t()), o)[1])(L.empty(4, 3)), a)
        check(lambda L, x: getattr(L, fn)(x, 0, dtype=L.float64, out=L.empty(0, dtype=L.float64)),
              a)
        check(lambda L, x: getattr(L, fn)(x, 0, out=L.empty(0, dtype=L.float64)), a)
        check(lambda L, x: getattr(L, fn)(x.bfloat16(), 0, out=L.empty(0, dtype=L.bfloat16)), a)
        o = ember.empty(0)
        assert getattr(ember, fn)(a[0], 1, out=o) is o
        # a non-empty out of another shape is an error in ember (torch resizes with a warning)
        with pytest.raises(RuntimeError):
            getattr(ember, fn)(a[0], 1, out=ember.empty(5))
        # out aliasing the input
        x = a[0].clone()
        getattr(ember, fn)(x, 1, out=x)
        compare(getattr(torch, fn)(a[1], 1), None, x, None)


def test_functional_and_special():
    a = make("float32", "strided", seed=5)
    b3 = make("float64", "contiguous", seed=5, shape=(2, 6))
    for FN in ("softmax", "log_softmax", "softmin"):
        check(lambda L, x: getattr(EF if L is ember else TF, FN)(x, 1), a)
        check(lambda L, x: getattr(EF if L is ember else TF, FN)(x, dim=0, dtype=L.float64), a)
        check(lambda L, x: getattr(EF if L is ember else TF, FN)(x.int(), -1, dtype=L.float32), a)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for shape in [(12,), (2, 6), (2, 3, 2), (1, 2, 3, 2)]:
                check(lambda L, x: getattr(EF if L is ember else TF, FN)(x.reshape(shape)), b3)
        assert len(w) == 8 and "Implicit dimension" in str(w[0].message)
    for fn in ("softmax", "log_softmax"):
        check(lambda L, x: getattr(L.special, fn)(x, 0), a)
        check(lambda L, x: getattr(L.special, fn)(x, 1, dtype=L.float64), a)
        check(lambda L, x: getattr(L.special, fn)(x.long(), 1), a, key=("special", fn))
        check(lambda L, x: getattr(L.special, fn)(x, 1, L.float64), a)
        raises_like(lambda L, x: getattr(L.special, fn)(x, 1, out=L.empty(0)), a)


def test_softmax_extreme_gaps():
    # Gaps beyond float32's normal exp range (about -87.3) underflow to (almost) 0, -inf to 0;
    # long rows take the vector path, on the last dim and on an inner dim.
    row = np.array([0.0, -1.0, -20.0, -87.0, -87.2, -87.4, -88.0, -100.0, -1e4, -np.inf] * 7,
                   dtype=np.float32)
    a = np.stack([row, row * 0.5, row[::-1].copy(), np.full_like(row, -3.0)])
    for arr in (a, np.ascontiguousarray(a.T)):
        for d in (0, 1):
            for fn in ("softmax", "log_softmax"):
                e = getattr(ember, fn)(ember.from_numpy(arr), d).numpy()
                t = getattr(torch, fn)(torch.from_numpy(arr), d).numpy()
                np.testing.assert_allclose(e, t, rtol=2e-6, atol=1e-37, err_msg=f"{fn} {d}")


def test_softmax_errors():
    raises_like(lambda L: L.softmax(L.ones(2, 3), 2))
    raises_like(lambda L: L.log_softmax(L.ones(2, 3), -3))
    raises_like(lambda L: L.softmax(L.tensor(1.0), 1))
    raises_like(lambda L: L.softmax(L.arange(3), 0))
    raises_like(lambda L: L.log_softmax(L.ones(2, dtype=L.bool), 0))
    raises_like(lambda L: L.softmax(L.ones(2, dtype=L.complex64), 0))
    raises_like(lambda L: L.softmax(L.ones(2), 0, out=L.empty(2, dtype=L.float64)))
    raises_like(lambda L: L.softmax(L.ones(2)))
    raises_like(lambda L: L.softmax(L.ones(2), 0, L.int32))


# ---- sort ----

def sort_data(dtype, n, seed, ties=True):
    """A (3, n) pair with ties (or distinct values), NaN/inf/-0.0 in the floating types."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        v = rng.random((3, n)) < 0.5
    elif dtype in ("uint8", "int8", "int16", "int32", "int64"):
        if ties:
            v = rng.integers(0 if dtype == "uint8" else -5, 6, (3, n))
        else:
            lo = 0 if dtype == "uint8" else -(n // 2)
            v = np.stack([rng.permutation(np.arange(lo, lo + n)) for _ in range(3)])
    else:
        if ties:
            v = rng.integers(-4, 5, (3, n)) / 2.0
            flat = v.reshape(-1)
            idx = rng.choice(flat.size, size=min(flat.size, 12), replace=False)
            for j, k in enumerate(idx):
                flat[k] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan][j % 6]
        else:
            v = np.stack([rng.permutation(n) for _ in range(3)]) / 4.0 - n / 8.0
    np_t = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
            "int32": np.int32, "int64": np.int64, "float16": np.float16,
            "bfloat16": np.float32, "float32": np.float32, "float64": np.float64}[dtype]
    v = v.astype(np_t)
    e, t = ember.from_numpy(v.copy()), torch.from_numpy(v.copy())
    if dtype == "bfloat16":
        e, t = e.bfloat16(), t.bfloat16()
    return e, t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_sort_layouts(dtype, layout):
    a = make(dtype, layout, seed=6, kind="small")  # ties: stable order decides the indices
    key = ("sort", dtype, layout == "scalar")  # complex raises unless 0-dim
    for d in dims_of(layout):
        for desc in (False, True):
            check(lambda L, x: tuple(L.sort(x, dim=d, descending=desc, stable=True)), a, key=key)
            check(lambda L, x: tuple(x.sort(d, descending=desc)), a, key=key)
            check(lambda L, x: L.argsort(x, d, desc), a, key=key)
            check(lambda L, x: x.argsort(dim=d, descending=desc, stable=True), a, key=key)
    check(lambda L, x: L.msort(x), a, key=key)
    check(lambda L, x: x.msort(), a, key=key)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d not in COMPLEX])
@pytest.mark.parametrize("n", [5, 16, 17, 64, 65, 300, 4100])
def test_sort_long_rows(dtype, n):
    # n >= 64 takes the radix path; stable=True pins down the order of ties, NaNs and +-0.0
    e, t = sort_data(dtype, n, seed=n)
    for desc in (False, True):
        for d in (1, 0):
            check(lambda L, x: tuple(L.sort(x, dim=d, descending=desc, stable=True)), (e, t))
            check(lambda L, x: tuple(L.sort(x.t(), dim=1 - d, descending=desc, stable=True)),
                  (e, t))
        # the default (unstable) sort: the values agree and the indices reproduce them
        rv, ri = ember.sort(e, 1, desc)
        tv = torch.sort(t, 1, desc).values
        compare(tv, None, rv, None)
        compare(tv, None, ember.gather(e, 1, ri), None)
        assert sorted(to_numpy(ri)[0].tolist()) == list(range(n))
    # distinct values (where the dtype has n of them): every sort is fully determined
    distinct = {"bool": 2, "uint8": 256, "int8": 256, "bfloat16": 300,
                "float16": 2048}.get(dtype, 1 << 20)
    e, t = sort_data(dtype, n, seed=n + 1, ties=False)
    if n <= distinct:
        for desc in (False, True):
            check(lambda L, x: tuple(L.sort(x, -1, desc)), (e, t))
            check(lambda L, x: L.argsort(x, 1, desc), (e, t))


def test_sort_special_values():
    v = [NAN, 1.0, -INF, NAN, INF, -0.0, 0.0, -0.0, 2.0, -1.0]
    for dt in ("float32", "float64", "float16", "bfloat16"):
        for desc in (False, True):
            for stable in (None, True, False):
                check(lambda L: tuple(L.sort(L.tensor(v, dtype=getattr(L, dt)), descending=desc,
                                             stable=stable if stable is not None else False)))
    # -0.0 and 0.0 compare equal: stable order keeps their positions, values keep their sign
    r = ember.sort(ember.tensor([0.0, -0.0, 0.0, -0.0]), stable=True)
    assert r.indices.tolist() == [0, 1, 2, 3]
    assert np.signbit(to_numpy(r.values)).tolist() == [False, True, False, True]
    check(lambda L: tuple(L.sort(L.tensor([True, False, True]))))
    check(lambda L: tuple(L.sort(L.tensor(1j))))
    check(lambda L: tuple(L.sort(L.tensor(3.0), -1)))
    for shape in [(0,), (0, 3), (3, 0)]:
        for d in range(len(shape)):
            check(lambda L: tuple(L.sort(L.zeros(shape), d)))
            check(lambda L: L.argsort(L.zeros(shape, dtype=L.int32), d, True))
    ints = [np.iinfo(np.int64).min, -1, 0, np.iinfo(np.int64).max, 5] * 20
    check(lambda L: tuple(L.sort(L.tensor(ints), stable=True)))
    check(lambda L: tuple(L.sort(L.tensor(ints, dtype=L.float64), descending=True, stable=True)))
    u = list(range(256)) * 2
    check(lambda L: tuple(L.sort(L.tensor(u, dtype=L.uint8), descending=True, stable=True)))
    check(lambda L: tuple(L.sort(L.tensor(u, dtype=L.uint8).to(L.int8), stable=True)))


def test_sort_out():
    a = make("float32", "transposed", seed=7)
    check(lambda L, x: tuple(L.sort(x, 0, out=(L.empty(0), L.empty(0, dtype=L.int64)))), a)
    check(lambda L, x: tuple(L.sort(x, 1, True, out=(L.empty(4, 3).t(),
                                                     L.empty(4, 3, dtype=L.int64).t()))), a)
    check(lambda L, x: L.sort(x, 0, out=(L.empty(0, dtype=L.float64),
                                         L.empty(0, dtype=L.int64))), a)
    check(lambda L, x: L.sort(x, 0, out=(L.empty(0), L.empty(0, dtype=L.int32))), a)
    check(lambda L, x: L.sort(x, 0, out=L.empty(0)), a)
    check(lambda L, x: L.msort(x, out=L.empty(0)).clone(), a)
    check(lambda L, x: L.msort(x, out=L.empty(0, dtype=L.float64)), a)
    v, i = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.sort(ember.tensor([3.0, 1.0, 2.0]), out=(v, i))
    assert type(r).__name__ == "sort" and r.values is v and r.indices is i
    assert v.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2, 0]


def test_resize_nonempty_outs_with_warning():
    # torch 1.13 resizes a non-empty out of another shape for these ops, with a UserWarning
    x = make("float32", "contiguous", seed=8)
    for L in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            v, i = L.empty(5), L.empty(2, dtype=L.int64)
            L.sort(x[0] if L is ember else x[1], 1, out=(v, i))
            assert tuple(v.shape) == (3, 4) and tuple(i.shape) == (3, 4)
            assert len(w) == 2 and issubclass(w[0].category, UserWarning)
            assert "resized" in str(w[0].message)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            v, i = L.empty(3, 2), L.empty(0, dtype=L.int64)
            L.topk(x[0] if L is ember else x[1], 2, out=(v, i))
            assert tuple(v.shape) == (3, 2) and tuple(i.shape) == (3, 2)
            assert len(w) == 0
            v = L.empty(7)
            L.topk(x[0] if L is ember else x[1], 3, 0, out=(v, i))
            assert tuple(v.shape) == (3, 4) and tuple(i.shape) == (3, 4) and len(w) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda L, x: tuple(L.sort(x, 1, out=(L.ones(5), L.ones(2, dtype=L.int64)))), x)
        check(lambda L, x: tuple(L.topk(x, 2, out=(L.ones(5), L.ones(2, dtype=L.int64)))), x)
        check(lambda L, x: L.msort(x, out=L.ones(7)).clone(), x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            ember.sort(x[0], out=(ember.ones(5), ember.ones(2, dtype=ember.int64)))


# ---- topk ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_topk_layouts(dtype, layout):
    a = make(dtype, layout, seed=9)
    for d in dims_of(layout):
        n = 1 if layout == "scalar" else a[1].shape[d]
        for k in sorted({0, 1, n}):
            for largest in (True, False):
                # bool/complex raise unless 0-dim; other errors (k out of range) depend on k
                key = ("topk", dtype, layout == "scalar") if dtype in BAD_TOPK else None
                lcheck(lambda L, x: tuple(L.topk(x, k, d, largest)), a, dtype, key=key)
                lcheck(lambda L, x: tuple(x.topk(k, dim=d, largest=largest, sorted=False)), a,
                       dtype, key=key)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "bfloat16"])
@pytest.mark.parametrize("n", [5, 64, 200, 3000])
def test_topk_values(dtype, n):
    # partial sort (k * 64 <= n) and selection (larger k) paths, with ties and NaNs
    e, t = sort_data(dtype, n, seed=n + 3)
    for k in sorted({1, 2, n // 64, n // 3, n - 1, n}):
        if k == 0:
            continue
        for largest in (True, False):
            for sorted_ in (True, False):
                check(lambda L, x: tuple(L.topk(x, k, 1, largest, sorted_)), (e, t),
                      what=f"k={k} {largest} {sorted_}")
            check(lambda L, x: tuple(L.topk(x.t(), k, 0, largest)), (e, t))


def test_topk_special_and_out():
    check(lambda L: tuple(L.topk(L.tensor([NAN, 1.0, 3.0, NAN]), 2)))
    check(lambda L: tuple(L.topk(L.tensor([NAN, 1.0, 3.0, NAN]), 2, largest=False)))
    check(lambda L: tuple(L.topk(L.tensor([-0.0, 0.0, -INF, INF]), 3)))
    check(lambda L: tuple(L.topk(L.tensor(5.0), 1)))
    check(lambda L: tuple(L.topk(L.tensor(5.0), 0)))
    check(lambda L: tuple(L.topk(L.tensor(True), 1)))
    check(lambda L: tuple(L.topk(L.zeros(0, 3), 0, dim=0)))
    check(lambda L: tuple(L.topk(L.zeros(2, 0), 0)))
    a = make("float32", "strided", seed=10)
    check(lambda L, x: tuple(L.topk(x, 2, out=(L.empty(0), L.empty(0, dtype=L.int64)))), a)
    check(lambda L, x: tuple(L.topk(x, 2, 0, False, out=(L.empty(4, 2).t(),
                                                         L.empty(4, 2, dtype=L.int64).t()))), a)
    check(lambda L, x: L.topk(x, 2, out=(L.empty(0, dtype=L.float64),
                                         L.empty(0, dtype=L.int64))), a)
    check(lambda L, x: L.topk(x, 2, out=(L.empty(0), L.empty(0, dtype=L.int32))), a)
    r = ember.topk(ember.tensor([1.0, 3.0, 2.0]), 2)
    assert type(r).__name__ == "topk" and r.values.tolist() == [3.0, 2.0]
    assert r.indices.tolist() == [1, 2]


def test_sort_topk_errors():
    raises_like(lambda L: L.sort(L.ones(3), 1))
    raises_like(lambda L: L.sort(L.ones(2, 3), -3))
    raises_like(lambda L: L.argsort(L.ones(2, 3), 2))
    raises_like(lambda L: L.sort(L.ones(3, dtype=L.complex64)))
    raises_like(lambda L: L.argsort(L.ones(3, dtype=L.complex128)))
    raises_like(lambda L: L.msort(L.ones(3, dtype=L.complex64)))
    raises_like(lambda L: L.topk(L.ones(3), 4))
    raises_like(lambda L: L.topk(L.ones(3), -1))
    raises_like(lambda L: L.topk(L.tensor(3.0), 2))
    raises_like(lambda L: L.topk(L.zeros(0, 3), 1, dim=0))
    raises_like(lambda L: L.topk(L.ones(3), 1, dim=1))
    raises_like(lambda L: L.topk(L.ones(3, dtype=L.bool), 1))
    raises_like(lambda L: L.topk(L.ones(3, dtype=L.complex64), 1))
    raises_like(lambda L: L.sort(L.ones(3), 0, True, True))
    raises_like(lambda L: L.topk(L.ones(3)))
    raises_like(lambda L: L.sort(L.ones(3), out=(L.empty(0),)))
    raises_like(lambda L: L.msort(L.ones(3), out=L.empty(0, dtype=L.float64)))
