"""index_select and gather with the bounds check inside the copy (Note [Fused index checks]):
the 1-D, row (memcpy) and general paths of index_select with int64 and int32 indices, gather's
row loops along the last and other dims, against torch 1.13; sizes that are not multiples of
the check block (512) or the thread split, strided inputs and outputs, out=, zero-size and
0-dim; and bad indices anywhere (first block, a later block, the second thread's half, several
bad ones), which must raise the same exception type as torch and name the first bad index."""

import numpy as np
import pytest
import torch

import ember
from _oracle import DTYPES, check, pair, raises_like


def data(shape, dtype, seed=0):
    v = np.random.default_rng(seed).integers(-50, 50, shape)
    if dtype == "bool":
        return pair(v > 0)
    return pair(v.astype(np.float64), dtype)


def indices(n, size, seed=1, dtype=np.int64):
    return pair(np.random.default_rng(seed).integers(0, size, n).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", [np.int64, np.int32], ids=["int64", "int32"])
def test_index_select_paths(dtype, itype, threads):
    x1 = data((1037,), dtype)
    # 1-D: tails of the 512 block, one entry, and enough entries for both threads
    for n in (1, 511, 513, 1037, 70001):
        check(lambda L, a, i: a.index_select(0, i), x1, indices(n, 1037, n, itype))
    # strided 1-D source and output
    check(lambda L, a, i: a[::3].index_select(0, i), x1, indices(600, 346, 2, itype))
    check(lambda L, a, i: L.index_select(a, 0, i, out=L.empty(1200, dtype=a.dtype)[::2]),
          x1, indices(600, 1037, 3, itype))
    # rows (memcpy per entry), a 3-D tensor along dim 0, and the general paths
    x2 = data((67, 45), dtype)
    check(lambda L, a, i: a.index_select(0, i), x2, indices(2000, 67, 4, itype))
    check(lambda L, a, i: a.index_select(1, i), x2, indices(90, 45, 5, itype))
    check(lambda L, a, i: a.t().index_select(0, i), x2, indices(90, 45, 6, itype))
    check(lambda L, a, i: a[:, 1::2].index_select(0, i), x2, indices(33, 67, 7, itype))
    x3 = data((9, 5, 7), dtype)
    for dim in (0, 1, 2, -1):
        check(lambda L, a, i: a.index_select(dim, i), x3, indices(11, 5, 8, itype))
    # size-1 rest dims coalesce away (the 1-D path with a strided source)
    check(lambda L, a, i: a[:, :1].index_select(0, i), x2, indices(100, 67, 9, itype))


@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_index_select_edges(itype):
    x = data((6, 4), "float32")
    it = lambda L, v: L.tensor(v, dtype=getattr(L, itype))  # noqa: E731
    check(lambda L, a: a.index_select(0, it(L, [])), x)
    check(lambda L, a: a[:, :0].index_select(0, it(L, [5, 0])), x)
    check(lambda L, a: a[:, :0].index_select(0, it(L, [])), x)
    check(lambda L, a: L.tensor(3.5).index_select(0, it(L, [0])), x)
    check(lambda L, a: L.tensor(3.5).index_select(0, it(L, 0)), x)
    check(lambda L, a: a.index_select(1, it(L, 3)), x)
    check(lambda L, a: L.index_select(a, 0, it(L, [5, 1]), out=L.empty(0)), x)


def bad_positions(n):
    """Positions of a bad index: first, inside the first block, a later block, the last entry
    (the second thread's half with 2 threads)."""
    return [0, 100, 3 * 512 + 7, n - 1]


@pytest.mark.parametrize("itype", [np.int64, np.int32], ids=["int64", "int32"])
@pytest.mark.parametrize("layout", ["1d", "rows", "general"])
def test_index_select_bad_index(itype, layout, threads):
    n, size = 70001, 300
    base = np.random.default_rng(3).integers(0, size, n).astype(itype)
    x = data((size,) if layout == "1d" else (size, 8), "float32")
    pick = (lambda L, a, i: a.index_select(0, i)) if layout != "general" else (
        lambda L, a, i: a.t().index_select(1, i))
    for pos in bad_positions(n):
        for bad in (size, -1, 10**6):
            v = base.copy()
            v[pos] = bad
            if pos + 40000 < n:
                v[pos + 40000] = size + 1  # a later bad index must not be the one reported
            if layout == "general":
                # torch 1.13 raises RuntimeError from its strided path and IndexError from the
                # others; ember raises IndexError from every path
                with pytest.raises(IndexError) as info:
                    pick(ember, x[0], ember.from_numpy(v))
                ex = info.value
            else:
                ex = raises_like(pick, x, pair(v))
            assert f"index {bad} is out of bounds for dimension" in str(ex), str(ex)
            assert f"with size {size}" in str(ex)
    # out= with a bad index raises the same error
    v = base.copy()
    v[-1] = size
    raises_like(lambda L, a, i: L.index_select(a, 0, i, out=L.empty(0)), x, pair(v))


@pytest.mark.parametrize("itype", [np.int64, np.int32], ids=["int64", "int32"])
def test_select_check_ahead_and_prefetch(itype, threads):
    # The 1-D loops check one 512-block ahead of the copy and prefetch 64 entries ahead within
    # the checked range: lengths around those edges, strided sources and outputs, gather's
    # 1-D loop (contiguous and strided source), and a bad index on either side of a block
    # edge, which must still raise for the first bad index.
    x = data((3001,), "float32")
    for n in (1, 63, 64, 65, 511, 512, 513, 575, 576, 577, 1023, 1024, 1025, 1087, 1600):
        i = indices(n, 3001, n, itype)
        check(lambda L, a, i: a.index_select(0, i), x, i)
        check(lambda L, a, i: a[::2].index_select(0, i % 1501), x, i)
        check(lambda L, a, i: L.index_select(a, 0, i, out=L.empty(2 * n)[::2]), x, i)
        if itype == np.int64:
            check(lambda L, a, i: a.gather(0, i), x, i)
            check(lambda L, a, i: a[::3].gather(0, i % 1001), x, i)
    for n in (600, 1024, 1025, 1600):
        base = np.random.default_rng(n).integers(0, 3001, n).astype(itype)
        for pos in (0, 447, 448, 511, 512, 575, 1023, 1024, n - 1):
            if pos >= n:
                continue
            for bad in (3001, -1, -3002):
                v = base.copy()
                v[pos] = bad
                ex = raises_like(lambda L, a, i: a.index_select(0, i), x, pair(v))
                assert f"index {bad} is out of bounds for dimension 0 with size 3001" in str(ex)
                if itype == np.int64:
                    ex = raises_like(lambda L, a, i: a.gather(0, i), x, pair(v))
                    assert f"index {bad} is out of bounds for dimension 0" in str(ex)


@pytest.mark.parametrize("itype", [np.int64, np.int32], ids=["int64", "int32"])
def test_select_index_extremes(itype):
    # indices at the ends of their type's range: the sign-bit check must not wrap
    x = data((50,), "float32")
    info = np.iinfo(itype)
    for bad in (int(info.max), int(info.min), int(info.min) + 49, 50):
        v = np.zeros(700, itype)
        v[600] = bad
        ex = raises_like(lambda L, a, i: a.index_select(0, i), x, pair(v))
        assert f"index {bad} is out of bounds" in str(ex)
        if itype == np.int64:
            raises_like(lambda L, a, i: a.gather(0, i), x, pair(v))
    v = np.full(700, 49, itype)
    check(lambda L, a, i: a.index_select(0, i), x, pair(v))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_paths(dtype, threads):
    x1 = data((1037,), dtype)
    for n in (1, 513, 1037, 70001):
        check(lambda L, a, i: a.gather(0, i), x1, indices(n, 1037, n))
    check(lambda L, a, i: a[::2].gather(0, i), x1, indices(700, 519, 2))
    x2 = data((130, 517), dtype)
    # along the last dim (contiguous and strided source), along dim 0, index smaller than self
    check(lambda L, a, i: a.gather(1, i.reshape(130, 40)), x2, indices(5200, 517, 3))
    check(lambda L, a, i: a.gather(-1, i.reshape(65, 80)), x2, indices(5200, 517, 4))
    check(lambda L, a, i: a.t().gather(1, i.reshape(40, 130)), x2, indices(5200, 130, 5))
    check(lambda L, a, i: a.gather(0, i.reshape(10, 520)[:, :517]), x2, indices(5200, 130, 6))
    check(lambda L, a, i: a[:, ::3].gather(0, i.reshape(52, 100)), x2, indices(5200, 130, 7))
    x3 = data((4, 9, 70), dtype)
    for dim in (0, 1, 2):
        check(lambda L, a, i: a.gather(dim, i.reshape(4, 3, 50) % a.shape[dim]), x3,
              indices(600, 4, 8))
    check(lambda L, a, i: L.gather(a, 1, i.reshape(130, 40), out=L.empty(0, dtype=a.dtype)),
          x2, indices(5200, 517, 9))
    check(lambda L, a: L.tensor(2.5).gather(0, L.tensor(0)), x1)
    check(lambda L, a: a.gather(0, L.tensor([], dtype=L.int64)), x1)


@pytest.mark.parametrize("shape,dim", [((70001,), 0), ((100, 700), 1), ((700, 100), 0)])
def test_gather_bad_index(shape, dim, threads):
    size = shape[dim]
    x = data(shape, "float32")
    base = np.random.default_rng(4).integers(0, size, shape)
    n = base.size
    for pos in bad_positions(n):
        for bad in (size, -1, 10**7):
            v = base.copy().reshape(-1)
            v[pos] = bad
            if pos + 40000 < n:
                v[pos + 40000] = size + 3
            ex = raises_like(lambda L, a, i: a.gather(dim, i), x, pair(v.reshape(shape)))
            assert f"index {bad} is out of bounds for dimension {dim} with size {size}" in str(ex)


def test_gather_index_dtype_and_grad():
    x = data((5, 6), "float32")
    raises_like(lambda L, a: a.gather(1, L.tensor([[0, 1]], dtype=L.int32)), x)
    a = ember.arange(12.0).reshape(3, 4).requires_grad_()
    i = ember.tensor([[0, 3], [2, 2], [1, 0]])
    a.gather(1, i).sum().backward()
    ta = torch.arange(12.0).reshape(3, 4).requires_grad_()
    ta.gather(1, torch.tensor([[0, 3], [2, 2], [1, 0]])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    b = ember.arange(12.0).reshape(3, 4).requires_grad_()
    b.index_select(1, ember.tensor([3, 3, 0], dtype=ember.int32)).sum().backward()
    tb = torch.arange(12.0).reshape(3, 4).requires_grad_()
    tb.index_select(1, torch.tensor([3, 3, 0], dtype=torch.int32)).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_single_tensor_index_runs_as_index_select(dtype, threads):
    """x[i] with one int64 index tensor takes index_select's fused loop; negative indices (which
    index_select refuses) fall back to the general path, and bad ones raise as torch does. (An
    int32 index raises IndexError in both, as torch 1.13 takes only long, byte or bool.)"""
    itype = np.int64
    raises_like(lambda L, a, i: a[i], data((5,), dtype), pair(np.array([1, 2], np.int32)))
    x = data((23, 9, 5), dtype)
    for dim in range(3):
        size = x[0].shape[dim]
        key = (slice(None),) * dim
        # 1-D, 2-D and 0-dim index tensors; all entries in range
        check(lambda L, a, i: a[key + (i,)], x, indices(40, size, dim, itype))
        check(lambda L, a, i: a[key + (i,)], x,
              pair(np.random.default_rng(dim).integers(0, size, (3, 4)).astype(itype)))
        check(lambda L, a, i: a[key + (i,)], x, pair(np.array(size - 1, dtype=itype)))
        # negative entries, past the first check block, and a non-contiguous source
        neg = np.random.default_rng(7).integers(-size, size, 1300).astype(itype)
        check(lambda L, a, i: a[key + (i,)], x, pair(neg))
        check(lambda L, a, i: a.transpose(0, 2)[key + (i,)], x,
              pair(np.random.default_rng(8).integers(-5, 5, 30).astype(itype)))
        # out of range, above and below, after good entries: the same exception type as torch
        for bad in (size, -size - 1):
            v = np.concatenate([np.zeros(700, itype), np.array([bad], itype)])
            e = raises_like(lambda L, a, i: a[key + (i,)], x, pair(v))
            assert f"index {bad} is out of bounds for dimension {dim} with size {size}" in str(e)
