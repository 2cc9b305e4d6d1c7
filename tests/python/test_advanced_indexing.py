"""Advanced indexing against torch 1.13: `x[idx]`, `x[mask]`, lists, mixed with slices, ints,
None and Ellipsis (placement of the broadcast index dims), `x[idx] = v`, index_put / index_put_
with accumulate (duplicates summed deterministically), errors, empty and zero-size cases."""

import numpy as np
import pytest
import torch

import ember
from _oracle import DTYPES, check, make, raises_like

S = slice
E = Ellipsis


def T(*v, dtype="int64"):
    """An index tensor, built per library."""
    return lambda L: L.tensor(list(v) if len(v) != 1 or not isinstance(v[0], list) else v[0],
                              dtype=getattr(L, dtype))


def build(index, L):
    if callable(index):
        return index(L)
    if isinstance(index, tuple):
        return tuple(build(i, L) for i in index)
    return index


# Indices into a (3, 4, 5) tensor.
INDICES_3D = [
    T(0, 2), T(-1, 0, -3), T([[0, 1], [2, 2]]), T([], dtype="int64"), [0, 2, 1], [[0], [1]],
    (T(0, 1), T(1, 2)), (T(0, 1), T(1, 2), T(4, 0)), (S(None), T(0, 3)), (E, T(4, 0)),
    (T(0, 2), S(None), T(1, 3)), (T(1), 0, T(2, 3)), (0, T(1, 2), T(3, 4)),
    (S(1, None), T([[0], [1]]), T(0, 1, 2)), (None, T(0, 1), None, S(None), T(2)),
    (T(0, 1), E, T(0, 4)), (S(None, None, 2), T(-1), S(1, 3)),
    T(True, False, True, dtype="bool"), T([[True, False, True, False]] * 3, dtype="bool"),
    (S(None), S(None), T(False, True, True, False, True, dtype="bool")),
    T(1, 0, 1, dtype="uint8"), (T(1, 0, 1, dtype="bool"), T(2, 3)),
    (T(0), True), (True, T(0, 1)), (False, T(0, 1)), [True, False, True],
    (T(1, 2), S(None), None), np.array([0, 2]), np.array([True, False, True]),
    (T(0, 2), [1, 3], S(None)), T(0, dtype="int64"),
]


@pytest.mark.parametrize("index", INDICES_3D, ids=lambda i: repr(i)[:40])
def test_getitem(index):
    for dtype in ["float32", "int64", "bool", "complex128", "bfloat16", "uint8", "float16"]:
        for layout in ["contiguous", "transposed"]:
            rng = np.random.default_rng(0)
            arr = rng.integers(-5, 6, (3, 4, 5))
            e, t = ember.tensor(arr.tolist()), torch.tensor(arr.tolist())
            if layout == "transposed":
                e, t = e.permute(2, 1, 0).contiguous().permute(2, 1, 0), \
                    t.permute(2, 1, 0).contiguous().permute(2, 1, 0)
            e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
            check(lambda L, a: a[build(index, L)], (e, t), what=f"{dtype} {layout}")


@pytest.mark.parametrize("index", INDICES_3D, ids=lambda i: repr(i)[:40])
def test_setitem(index):
    for dtype in ["float32", "int32", "bool", "complex64", "float16"]:
        base = make(dtype, "contiguous", shape=(3, 20))

        def put_scalar(L, a):
            b = a.reshape(3, 4, 5).clone()
            b[build(index, L)] = 1
            return b

        def put_tensor(L, a):
            b = a.reshape(3, 4, 5).clone()
            shape = b[build(index, L)].shape
            b[build(index, L)] = L.arange(int(np.prod(shape))).reshape(shape).to(b.dtype)
            return b

        def put_broadcast(L, a):
            b = a.reshape(3, 4, 5).clone()
            shape = b[build(index, L)].shape
            if len(shape) == 0:
                return b
            b[build(index, L)] = L.ones(1, 1, shape[-1], dtype=b.dtype)
            return b
        for f in (put_scalar, put_tensor, put_broadcast):
            check(f, base, what=f"{dtype} {f.__name__}")


def test_placement():
    """Adjacent advanced indices keep their place; separated ones go first."""
    x = (ember.zeros(2, 3, 4, 5, 6), torch.zeros(2, 3, 4, 5, 6))
    i = T([[0, 1, 1]])
    for index in [(S(None), i, i), (S(None), i, S(None), i), (i, S(None), S(None), S(None), i),
                  (0, i, i), (S(None), S(None), i, 0, i), (E, i, i), (i, E, i), (None, i, None, i),
                  (S(None), 1, i), (S(None), i, 1, i), (i, i, i, i, i)]:
        check(lambda L, a: a[build(index, L)].shape, x, what=repr(index))


def test_strided_and_views():
    base = make("float64", "strided", shape=(5, 6))
    for index in [T(0, 4, 2), (T(1, 3), T(5, 0)), (S(None), T(-1, 0)), T([True] * 5, dtype="bool")]:
        check(lambda L, a: a[build(index, L)], base)
        check(lambda L, a: a.t()[build(index, L)] if a.t().shape[0] >= 5 else None, base)

    def write_through_view(L, a):
        b = a.clone()
        v = b[1:, ::2]
        v[build(T(0, 2), L)] = -7
        return b
    check(write_through_view, base)


def test_broadcast_source():
    x = make("float32", "broadcast", shape=(3, 4))
    check(lambda L, a: a[L.tensor([2, 0, 1])], x)
    check(lambda L, a: a[:, L.tensor([3, 3])], x)


def test_zero_size():
    x = (ember.zeros(0, 3), torch.zeros(0, 3))
    check(lambda L, a: a[L.tensor([], dtype=L.int64)], x)
    check(lambda L, a: a[:, L.tensor([0, 2])], x)
    check(lambda L, a: a[L.zeros(0, 3, dtype=L.bool)], x)
    raises_like(lambda L, a: a[L.tensor([0])], x)
    y = (ember.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3))
    check(lambda L, a: a[L.tensor([[]], dtype=L.int64)], y)
    check(lambda L, a: a[L.tensor([], dtype=L.int64), L.tensor([], dtype=L.int64)], y)
    s = (ember.tensor(3.0), torch.tensor(3.0))
    check(lambda L, a: a[L.tensor(True)], s)
    check(lambda L, a: a[L.tensor([True])], s)
    check(lambda L, a: a[L.tensor([False])], s)

    def put(L, a):
        b = a.clone()
        b[L.tensor([], dtype=L.int64)] = 5.0
        return b
    check(put, y)


def test_errors():
    x = make("float32", shape=(3, 4))
    for index in [T(3), T(-4), (S(None), T(4)), (T(0, 1), T(0, 1, 2)),
                  T([True, False], dtype="bool"), T([[True] * 4] * 2, dtype="bool"),
                  T(0, dtype="int32"), T(0, dtype="int16"), (T(0), T(0), T(0)),
                  lambda L: L.tensor([0.0]), [0, 5], [[0, 1], [0]]]:
        raises_like(lambda L, a: a[build(index, L)], x, what=repr(index))

        def put(L, a):
            b = a.clone()
            try:
                b[build(index, L)] = 1.0
            finally:
                assert b.tolist() == a.tolist()  # nothing was written
        raises_like(put, x, what=repr(index))
    for values in [lambda L: L.ones(3), lambda L: L.ones(2, 2),
                   lambda L: L.ones(2, dtype=L.float64)]:
        def put(L, a):
            b = a.clone()
            b[L.tensor([0, 1])] = values(L)
        raises_like(put, x)


def test_error_messages():
    e = ember.arange(3.0)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        e[ember.tensor([0, 5])]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        e[ember.tensor([0, 5])] = 1.0
    assert e.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_put_accumulate(dtype):
    if dtype == "bool":
        pytest.skip("torch 1.13 index_put_ accumulate on bool is checked in test_index_put_bool")
    x = make(dtype, "contiguous", shape=(4, 3))
    v = make(dtype, "contiguous", seed=3, shape=(6, 3))
    idx = (ember.tensor([0, 2, 0, 3, 0, 2]), torch.tensor([0, 2, 0, 3, 0, 2]))
    check(lambda L, a, i, b: L.index_put(a, (i,), b, accumulate=True), x, idx, v)
    check(lambda L, a, i, b: a.index_put((i,), b, True), x, idx, v)
    check(lambda L, a, i, b: a.clone().index_put_((i,), b, accumulate=True), x, idx, v)
    check(lambda L, a, i, b: a.clone().index_put_((i,), b[0], accumulate=False), x, idx, v)
    raises_like(lambda L, a, i, b: a.clone().index_put_((None, i[:3]), b[:3, 0]), x, idx, v)


def test_index_put_bool():
    x = (ember.zeros(4, dtype=ember.bool), torch.zeros(4, dtype=torch.bool))
    check(lambda L, a: a.index_put((L.tensor([1, 1, 3]),), L.tensor([True, False, True]),
                                   accumulate=True), x)


def test_index_put_accumulate_deterministic():
    """Many duplicates over a large trailing block: same sums for 1 and 2 threads, and equal
    to a serial float64 reference rounded the same way (summation in index order)."""
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 7, 5000)
    val = rng.standard_normal((5000, 64)).astype(np.float32)
    results = []
    for threads in (1, 2):
        ember.set_num_threads(threads)
        x = ember.zeros(7, 64)
        x.index_put_((ember.from_numpy(idx),), ember.from_numpy(val), accumulate=True)
        results.append(x.numpy())
    ember.set_num_threads(2)
    ref = np.zeros((7, 64), np.float32)
    for i, j in enumerate(idx):
        ref[j] += val[i]
    assert np.array_equal(results[0], results[1])
    assert np.array_equal(results[0], ref)


def test_index_function_forms():
    x = make("float32", shape=(3, 4))
    i = (ember.tensor([2, 0]), torch.tensor([2, 0]))
    check(lambda L, a, j: L.index_put(a, (j, j), L.tensor(9.0)), x, i)
    check(lambda L, a, j: L.index_put(a, [j[:1], j], L.tensor([9.0, 8.0])), x, i)
    raises_like(lambda L, a, j: L.index_put(a, (j,), L.tensor([1.0], dtype=L.float64)), x, i)
    raises_like(lambda L, a, j: L.index_put(a, j, L.tensor(1.0)), x, i)
