"""unique / unique_consecutive against torch 1.13: the tensor-or-tuple result of every
return_inverse/return_counts combination, sorted and unsorted order, dim=, every dtype
(float16 and complex raise as in torch), every layout, NaN and -0.0, zero-size and 0-dim inputs
and the error types."""

import itertools

import numpy as np
import pytest

import ember
from _oracle import DTYPES, LAYOUTS, check, make, raises_like, tensors_from

FLAGS = list(itertools.product([False, True], [False, True]))


def key_for(fn, dtype):
    return (fn, dtype) if dtype == "float16" or "complex" in dtype else None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unique(dtype, layout):
    a = make(dtype, layout, seed=6)
    key = key_for("unique", dtype)
    for sorted_ in (True, False):
        for inv, cnt in FLAGS:
            check(lambda L, x: L.unique(x, sorted=sorted_, return_inverse=inv,
                                        return_counts=cnt), a, key=key,
                  what=f"sorted={sorted_} inv={inv} cnt={cnt}")
            check(lambda L, x: x.unique(sorted_, inv, cnt), a, key=key)
    check(lambda L, x: L.unique(x), a, key=key)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unique_dim(dtype, layout):
    a = make(dtype, layout, seed=8, kind="small" if dtype != "bool" else "any")
    key = key_for("unique_dim", dtype)
    for d in (0, 1, -1, -2):
        for inv, cnt in FLAGS:
            check(lambda L, x: L.unique(x, return_inverse=inv, return_counts=cnt, dim=d), a,
                  key=None if layout in ("zero", "scalar") else key, what=f"d={d} {inv} {cnt}")
        check(lambda L, x: x.unique(False, True, True, d), a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unique_consecutive(dtype, layout):
    a = make(dtype, layout, seed=9, kind="small" if dtype != "bool" else "any")
    for d in (None, 0, 1, -1):
        for inv, cnt in FLAGS:
            check(lambda L, x: L.unique_consecutive(x, return_inverse=inv, return_counts=cnt,
                                                    dim=d), a, what=f"d={d} {inv} {cnt}")
        check(lambda L, x: x.unique_consecutive(True, True, d), a)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 7, 30, 500])
def test_unique_unsorted_order(dtype, n):
    """The unsorted order is torch's hash-set order, also after the set rehashes."""
    rng = np.random.default_rng(n)
    hi = 2 if dtype == "bool" else 100
    v = rng.integers(0 if dtype in ("bool", "uint8") else -hi, hi, n)
    if dtype not in ("bool", "uint8", "int8", "int16", "int32", "int64"):
        v = v / 4.0
    x = tensors_from(v.astype(np.float32 if dtype == "bfloat16" else dtype), dtype)
    for inv, cnt in FLAGS:
        check(lambda L, x: L.unique(x, sorted=False, return_inverse=inv, return_counts=cnt), x)
        check(lambda L, x: L.unique(x.reshape(1, -1), return_inverse=inv, return_counts=cnt), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_unique_nan_and_signed_zero(dtype):
    v = np.array([3.0, np.nan, 1.0, -0.0, np.nan, 0.0, 3.0, np.nan, 1.0, 2.5])
    x = tensors_from(v.astype(np.float32 if dtype == "bfloat16" else dtype), dtype)
    for sorted_ in (True, False):
        check(lambda L, x: L.unique(x, sorted=sorted_, return_inverse=True, return_counts=True), x)
    check(lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True), x)
    for v in ([0.0, -0.0, 1.0, -0.0], [-0.0, 2.0, 0.0, -1.0]):  # no NaN
        x = tensors_from(np.array(v, dtype=np.float32 if dtype == "bfloat16" else dtype), dtype)
        for sorted_ in (True, False):
            r = check(lambda L, x: L.unique(x, sorted=sorted_, return_inverse=True,
                                            return_counts=True), x)
            if dtype != "bfloat16":  # bfloat16 hashes -0.0 and 0.0 apart: torch keeps both
                zero = [u for u in r[0].tolist() if u == 0]
                assert len(zero) == 1 and np.signbit(zero[0]) == np.signbit(v[0])
    m = tensors_from(np.array([[np.nan, 1.0, np.nan, 1.0, 0.0, -0.0], [2.0] * 6]).astype(
        np.float32 if dtype == "bfloat16" else dtype), dtype)
    for d in (0, 1):
        check(lambda L, x: L.unique(x, return_inverse=True, return_counts=True, dim=d), m)
        check(lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True,
                                                dim=d), m)


def test_unique_dim_3d():
    rng = np.random.default_rng(2)
    v = rng.integers(0, 2, (3, 4, 5, 2))
    x = tensors_from(v, "int64")
    for d in range(-4, 4):
        check(lambda L, x: L.unique(x, return_inverse=True, return_counts=True, dim=d), x)
        check(lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True,
                                                dim=d), x)
        check(lambda L, x: L.unique(x.transpose(0, 2), return_inverse=True, dim=d), x)


def test_unique_zero_size_and_errors():
    def z(shape):
        return tensors_from(np.zeros(shape, np.float32), "float32")

    for shape in [(0,), (0, 3), (2, 0), (2, 0, 3), (0, 0, 3)]:
        x = z(shape)
        for d in [None] + list(range(len(shape))):
            for inv, cnt in FLAGS:
                check(lambda L, x: L.unique(x, return_inverse=inv, return_counts=cnt, dim=d), x,
                      what=f"{shape} d={d}")
                check(lambda L, x: L.unique_consecutive(x, return_inverse=inv,
                                                        return_counts=cnt, dim=d), x,
                      what=f"{shape} d={d}")
    s = make("int64", "scalar")
    raises_like(lambda L, x: L.unique(x, dim=0), s)
    raises_like(lambda L, x: L.unique_consecutive(x, dim=0), s)
    a = make("int64", "contiguous")
    raises_like(lambda L, x: L.unique(x, dim=2), a)
    raises_like(lambda L, x: L.unique(x, dim=-3), a)
    raises_like(lambda L, x: L.unique_consecutive(x, dim=2), a)
    for dt in ("float16", "complex64"):
        h = make(dt, "contiguous")
        raises_like(lambda L, x: L.unique(x), h)
        raises_like(lambda L, x: L.unique(x, dim=0), h)
        raises_like(lambda L, x: L.unique_consecutive(x), h)
        raises_like(lambda L, x: L.unique_consecutive(x, dim=1), h)
    raises_like(lambda L: L.unique([1, 2]))


def test_unique_result_types():
    x = ember.tensor([3, 1, 3])
    assert isinstance(ember.unique(x), ember.Tensor)
    r = ember.unique(x, return_counts=True)
    assert type(r) is tuple and len(r) == 2 and r[1].tolist() == [1, 2]
    r = ember.unique(x, return_inverse=True)
    assert type(r) is tuple and len(r) == 2 and r[1].tolist() == [1, 0, 1]
    assert len(ember.unique(x, True, True, True)) == 3
    assert len(ember.unique_consecutive(x, True, True)) == 3
    u, i, c = ember._C._unique2(x)
    assert u.tolist() == [1, 3] and i.shape == (0,) and c.shape == (0,)
