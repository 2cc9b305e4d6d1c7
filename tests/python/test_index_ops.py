"""index_select, gather, scatter*, index_add/copy/fill, masked_*, nonzero/argwhere, take,
take_along_dim and put against torch 1.13: every dtype, strided / transposed / broadcast /
zero-size / 0-dim inputs, function, method, in-place and out= forms, and bad input."""

import numpy as np
import pytest
import torch

import ember
from _oracle import DTYPES, check, make, raises_like

LAYOUTS = ["contiguous", "transposed", "strided", "broadcast"]


def idx(*v):
    return (ember.tensor(list(v), dtype=ember.int64), torch.tensor(list(v), dtype=torch.int64))


def pair(np_arr):
    a = np.ascontiguousarray(np_arr)
    return ember.from_numpy(a), torch.from_numpy(a.copy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select(dtype):
    for layout in LAYOUTS + ["zero"]:
        x = make(dtype, layout, shape=(3, 4))
        for dim in (0, 1, -1):
            check(lambda L, a, i: L.index_select(a, dim, i), x, idx(0, 2, 2, 0))
            check(lambda L, a, i: a.index_select(dim, i), x, idx(2))
            check(lambda L, a, i: a.index_select(dim, i.to(L.int32)), x, idx(1, 0))
            check(lambda L, a, i: a.index_select(dim, i), x, idx())
    s = make(dtype, "scalar")
    check(lambda L, a: a.index_select(0, L.tensor([0])), s)
    check(lambda L, a: a.index_select(0, L.tensor(0)), s)


def test_index_select_out_and_errors():
    x = make("float32", shape=(3, 4))
    check(lambda L, a: L.index_select(a, 1, L.tensor([3, 1]), out=L.empty(0)), x)
    check(lambda L, a: L.index_select(a, 0, L.tensor([2]), out=L.empty(1, 4)), x)
    raises_like(lambda L, a: a.index_select(0, L.tensor([3])), x)
    raises_like(lambda L, a: a.index_select(0, L.tensor([-1])), x)
    raises_like(lambda L, a: a.index_select(0, L.tensor([[0]])), x)
    raises_like(lambda L, a: a.index_select(2, L.tensor([0])), x)
    raises_like(lambda L, a: a.index_select(0, L.tensor([0.0])), x)
    raises_like(lambda L, a: L.index_select(a, 0, L.tensor([0]), out=L.empty(0, dtype=L.int64)), x)


def test_index_select_large_rows():
    a = np.random.default_rng(0).standard_normal((300, 257)).astype(np.float32)
    i = np.random.default_rng(1).integers(0, 300, 700)
    check(lambda L, x, j: x.index_select(0, j), pair(a), pair(i))
    check(lambda L, x, j: x.index_select(1, j[:100] % 257), pair(a), pair(i))
    check(lambda L, x, j: x.t().index_select(0, j[:100] % 257), pair(a), pair(i))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather(dtype):
    for layout in LAYOUTS:
        x = make(dtype, layout, shape=(3, 4))
        gi = (ember.tensor([[0, 2, 1], [2, 2, 0]]), torch.tensor([[0, 2, 1], [2, 2, 0]]))
        check(lambda L, a, i: L.gather(a, 0, i), x, gi)
        check(lambda L, a, i: a.gather(1, i + 1), x, gi)
        check(lambda L, a, i: a.gather(-1, i.t()[:, :2]), x, gi)
        check(lambda L, a, i: a.gather(0, i[:, :0]), x, gi)
    s = make(dtype, "scalar")
    check(lambda L, a: a.gather(0, L.tensor(0)), s)
    check(lambda L, a: a.gather(0, L.tensor([0, 0])), s)


def test_gather_large_and_errors():
    a = np.random.default_rng(0).standard_normal((200, 300)).astype(np.float32)
    i = np.random.default_rng(1).integers(0, 200, (150, 300))
    check(lambda L, x, j: x.gather(0, j), pair(a), pair(i))
    check(lambda L, x, j: x.gather(1, j), pair(a), pair(i))
    check(lambda L, x, j: x.t().gather(0, j.t()[:, :150] % 200), pair(a), pair(i))
    check(lambda L, x, j: L.gather(x, 1, j, sparse_grad=False, out=L.empty(0)), pair(a), pair(i))
    x = make("float32", shape=(3, 4))
    for bad in [lambda L: L.tensor([[3]]), lambda L: L.tensor([[-1]]), lambda L: L.tensor([0]),
                lambda L: L.tensor([[0]], dtype=L.int32), lambda L: L.zeros(4, 5, dtype=L.int64)]:
        raises_like(lambda L, a: a.gather(0, bad(L)), x)
    raises_like(lambda L, a: a.gather(0, L.tensor([[0]]), out=L.empty(0, dtype=L.int64)), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter(dtype):
    si = (ember.tensor([[0, 2, 1], [2, 2, 0]]), torch.tensor([[0, 1, 2], [2, 0, 1]]))
    si = (ember.tensor([[0, 1, 2], [2, 0, 1]]), si[1])
    for layout in ["contiguous", "transposed", "strided"]:
        x = make(dtype, layout, shape=(3, 4))
        src = make(dtype, "contiguous", seed=5, shape=(2, 4))
        check(lambda L, a, i, s: L.scatter(a, 0, i, s), x, si, src)
        check(lambda L, a, i, s: a.scatter(1, i, s), x, si, src)
        check(lambda L, a, i, s: a.clone().scatter_(1, i, s), x, si, src)
        check(lambda L, a, i, s: a.scatter(0, i, 1), x, si, src)
        check(lambda L, a, i, s: L.scatter(a, 1, i, value=0), x, si, src)
        check(lambda L, a, i, s: a.scatter(0, i[:, :0], s), x, si, src)
        if dtype != "bool":
            dup = (ember.tensor([[0, 0, 0], [0, 0, 0]]), torch.tensor([[0, 0, 0], [0, 0, 0]]))
            check(lambda L, a, i, s: L.scatter_add(a, 0, i, s), x, dup, src)
            check(lambda L, a, i, s: a.scatter_add(1, i, s), x, dup, src)
            check(lambda L, a, i, s: a.clone().scatter_add_(0, i, s), x, si, src)
            check(lambda L, a, i, s: a.clone().scatter_(0, i, s, reduce="add"), x, dup, src)
            check(lambda L, a, i, s: a.clone().scatter_(0, i, s, reduce="multiply"), x, dup, src)
            check(lambda L, a, i, s: a.clone().scatter_(0, i, 2, reduce="add"), x, dup, src)


REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float16", "bfloat16", "float32",
                                   "float64"])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce(dtype, reduce):
    x = make(dtype, "transposed", shape=(3, 4))
    src = make(dtype, "contiguous", seed=5, shape=(3, 4))
    i = (ember.tensor([[0, 0, 2, 1], [0, 2, 2, 0]]), torch.tensor([[0, 0, 2, 1], [0, 2, 2, 0]]))
    tol = dict(rtol=1e-2, atol=1e-2) if dtype in ("float16", "bfloat16") else {}
    for include_self in (True, False):
        check(lambda L, a, j, s: L.scatter_reduce(a, 0, j, s, reduce, include_self=include_self),
              x, i, src, **tol)
        check(lambda L, a, j, s: a.scatter_reduce(1, j, s[:2], reduce, include_self=include_self),
              x, i, src, **tol)
        check(lambda L, a, j, s: a.clone().scatter_reduce_(1, j % 3, s, reduce,
                                                            include_self=include_self),
              x, i, src, **tol)


def test_scatter_errors_and_nan():
    x = make("float32", shape=(3, 4))
    s = make("float32", seed=2, shape=(3, 4))
    for bad in [lambda L: L.tensor([[3]]), lambda L: L.tensor([[-1]]),
                lambda L: L.tensor([[0]], dtype=L.int32), lambda L: L.zeros(4, 5, dtype=L.int64)]:
        raises_like(lambda L, a, b: a.scatter(0, bad(L), b), x, s)
        raises_like(lambda L, a, b: a.scatter_add(0, bad(L), b), x, s)
    raises_like(lambda L, a, b: a.scatter(0, L.tensor([[0]]), b.double()), x, s)
    raises_like(lambda L, a, b: a.scatter(0, L.tensor([[0]]), b, reduce="max"), x, s)
    raises_like(lambda L, a, b: a.scatter_reduce(0, L.tensor([[0]]), b, "max"), x, s)
    n = (ember.tensor([1.0, float("nan"), 3.0]), torch.tensor([1.0, float("nan"), 3.0]))
    check(lambda L, a: L.zeros(2).scatter_reduce(0, L.tensor([0, 0, 1]), a, "amax"), n)
    check(lambda L, a: L.zeros(2).scatter_reduce(0, L.tensor([1, 0, 0]), a, "amin",
                                                 include_self=False), n)


def test_scatter_add_deterministic():
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 5, (4000, 50))
    src = rng.standard_normal((4000, 50)).astype(np.float32)
    out = []
    for threads in (1, 2):
        ember.set_num_threads(threads)
        out.append(ember.zeros(5, 50).scatter_add(0, ember.from_numpy(idx),
                                                  ember.from_numpy(src)).numpy())
    ember.set_num_threads(2)
    ref = np.zeros((5, 50), np.float32)
    for r in range(4000):
        ref[idx[r], np.arange(50)] += src[r]
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add_copy_fill(dtype):
    for layout in ["contiguous", "transposed", "strided"]:
        x = make(dtype, layout, shape=(3, 4))
        src = make(dtype, "contiguous", seed=7, shape=(3, 4))
        i = idx(2, 0, 2)
        if dtype != "bool":
            check(lambda L, a, j, s: L.index_add(a, 0, j, s), x, i, src)
            check(lambda L, a, j, s: a.index_add(1, j, s[:, :3].t().contiguous().t()), x, i, src)
            check(lambda L, a, j, s: a.clone().index_add_(0, j.int(), s, alpha=2), x, i, src)
        check(lambda L, a, j, s: L.index_copy(a, 0, j[:2], s[:2]), x, i, src)
        check(lambda L, a, j, s: a.clone().index_copy_(1, j[:2] + 1, s[:, :2]), x, i, src)
        check(lambda L, a, j, s: a.index_fill(1, j, 1), x, i, src)
        check(lambda L, a, j, s: L.index_fill(a, 0, j - 3, 0), x, i, src)
        check(lambda L, a, j, s: a.clone().index_fill_(0, j, L.tensor(1).to(a.dtype)), x, i, src)
    s = make(dtype, "scalar")
    check(lambda L, a: a.index_fill(0, L.tensor([0]), 1), s)
    check(lambda L, a: a.index_copy(0, L.tensor([0]), a.clone()), s)


def test_index_add_copy_fill_errors():
    x = make("float32", shape=(3, 4))
    s = make("float32", seed=2, shape=(3, 4))
    raises_like(lambda L, a, b: a.index_add(0, L.tensor([3, 0, 1]), b), x, s)
    raises_like(lambda L, a, b: a.index_add(0, L.tensor([-1, 0, 1]), b), x, s)
    raises_like(lambda L, a, b: a.index_add(0, L.tensor([0, 1]), b), x, s)
    raises_like(lambda L, a, b: a.index_add(0, L.tensor([0, 1, 2]), b.double()), x, s)
    raises_like(lambda L, a, b: a.index_copy(0, L.tensor([3, 0, 1]), b), x, s)
    raises_like(lambda L, a, b: a.index_copy(0, L.tensor([0, 1, 2], dtype=L.int32), b), x, s)
    raises_like(lambda L, a, b: a.index_fill(0, L.tensor([3]), 1), x, s)
    raises_like(lambda L, a, b: a.index_fill(0, L.tensor([0], dtype=L.int32), 1), x, s)
    raises_like(lambda L, a, b: a.index_fill(0, L.tensor([0]), L.ones(2)), x, s)


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked(dtype):
    m = make("bool", "contiguous", seed=3, shape=(3, 4))
    for layout in LAYOUTS + ["zero", "scalar"]:
        x = make(dtype, layout, shape=(3, 4))
        check(lambda L, a, k: L.masked_fill(a, k, 1), x, m)
        check(lambda L, a, k: a.masked_fill(k[0], L.tensor(0)), x, m)
        check(lambda L, a, k: L.masked_select(a, k), x, m)
        check(lambda L, a, k: a.masked_select(k[:, :1]), x, m)
        check(lambda L, a, k: a.contiguous().masked_scatter(
            k, L.arange(12).reshape(3, 4).to(a.dtype)), x, m)
        if layout != "broadcast":
            check(lambda L, a, k: a.clone().masked_fill_(k[1], 0), x, m)
            # torch 1.13 fills non-contiguous selves in memory order; ember in row-major
            # order (the documented one), so compare on contiguous copies.
            check(lambda L, a, k: a.contiguous().masked_scatter_(k[2], L.arange(12).to(a.dtype)),
                  x, m)


def test_masked_errors_and_out():
    x = make("float32", shape=(3, 4))
    m = make("bool", "contiguous", seed=3, shape=(3, 4))
    check(lambda L, a, k: L.masked_select(a, k, out=L.empty(0)), x, m)
    check(lambda L, a, k: a.masked_fill(k.to(L.uint8), 2.5), x, m)
    raises_like(lambda L, a, k: a.masked_fill(k, L.ones(2)), x, m)
    raises_like(lambda L, a, k: a.clone().masked_fill_(L.ones(2, 3, 4, dtype=L.bool), 1), x, m)
    raises_like(lambda L, a, k: a.masked_select(k[:2]), x, m)
    raises_like(lambda L, a, k: a.masked_scatter(L.ones(3, 4, dtype=L.bool), L.ones(5)), x, m)
    raises_like(lambda L, a, k: a.masked_scatter(k, L.ones(12, dtype=L.float64)), x, m)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero(dtype):
    for layout in LAYOUTS + ["zero", "scalar"]:
        x = make(dtype, layout, shape=(3, 4))
        check(lambda L, a: L.nonzero(a), x)
        check(lambda L, a: a.nonzero(as_tuple=True), x)
        check(lambda L, a: L.nonzero(a, as_tuple=True), x)
        check(lambda L, a: L.argwhere(a), x)
        check(lambda L, a: a.argwhere(), x)
        check(lambda L, a: L.nonzero(a, out=L.empty(0, dtype=L.int64)), x)
    check(lambda L: L.nonzero(L.zeros(2, 0, 3)))
    check(lambda L: L.nonzero(L.tensor(0.0), as_tuple=True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_put(dtype):
    for layout in LAYOUTS + ["scalar"]:
        x = make(dtype, layout, shape=(3, 4))
        n = 1 if layout == "scalar" else 12
        i = (ember.tensor([[0, n - 1], [-1, n // 2]]), torch.tensor([[0, n - 1], [-1, n // 2]]))
        check(lambda L, a, j: L.take(a, j), x, i)
        check(lambda L, a, j: a.take(j[0]), x, i)
        check(lambda L, a, j: L.take(a, j, out=L.empty(0, dtype=a.dtype)), x, i)
        if layout != "broadcast":
            src = lambda L, a: L.arange(4).reshape(2, 2).to(a.dtype)  # noqa: E731
            check(lambda L, a, j: a.put(j, src(L, a)), x, i)
            check(lambda L, a, j: a.clone().put_(j, src(L, a)), x, i)
            if dtype != "bool":
                check(lambda L, a, j: L.put(a, j, src(L, a), accumulate=True), x, i)


def test_take_put_errors():
    x = make("float32", shape=(3, 4))
    raises_like(lambda L, a: a.take(L.tensor([12])), x)
    raises_like(lambda L, a: a.take(L.tensor([-13])), x)
    raises_like(lambda L, a: a.take(L.tensor([0], dtype=L.int32)), x)
    raises_like(lambda L, a: a.put(L.tensor([12]), L.ones(1)), x)
    raises_like(lambda L, a: a.put(L.tensor([0, 1]), L.ones(1)), x)
    raises_like(lambda L, a: L.zeros(0).take(L.tensor([0])), x)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64", "bfloat16"])
def test_take_along_dim(dtype):
    for layout in LAYOUTS:
        x = make(dtype, layout, shape=(3, 4))
        i = (ember.tensor([[0, 2], [1, 1], [2, 0]]), torch.tensor([[0, 2], [1, 1], [2, 0]]))
        check(lambda L, a, j: L.take_along_dim(a, j, dim=1), x, i)
        check(lambda L, a, j: a.take_along_dim(j[:1], 1), x, i)
        check(lambda L, a, j: a.take_along_dim(j.t(), 0), x, i)
        check(lambda L, a, j: a.take_along_dim(j), x, i)
        check(lambda L, a, j: L.take_along_dim(a, j, 1, out=L.empty(0, dtype=a.dtype)), x, i)
    x = make("float32", shape=(3, 4))
    raises_like(lambda L, a: a.take_along_dim(L.tensor([0]), 1), x)
    raises_like(lambda L, a: a.take_along_dim(L.tensor([[0]], dtype=L.int32), 1), x)
    raises_like(lambda L, a: a.take_along_dim(L.tensor([[5]]), 1), x)
