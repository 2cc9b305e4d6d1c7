"""Tensor.__getitem__ / __setitem__ against torch 1.13: basic indexing (ints, slices, None,
Ellipsis, bools) gives views with torch's strides; tensor, list and ndarray indices give
copies (advanced indexing)."""

import numpy as np
import pytest
import torch

import ember
from _oracle import DTYPES, check, make, raises_like

S = slice
INDICES = [
    0, -1, 2, S(None), S(1, None), S(None, 2), S(0, 3, 2), S(-2, None), S(1, 100), S(-100, 1),
    S(2, 1), S(None, None, 3), None, Ellipsis, True, False, (), (0, 1), (-1, -2), (S(None), 1),
    (Ellipsis, 1), (1, Ellipsis), (None, 0, None), (S(None, None, 2), S(1, None, 2)),
    (Ellipsis, None), (0, S(1, 3), None), (None, Ellipsis, None), (True, 0), (S(None), False),
    (1, 2, Ellipsis), (Ellipsis, 0, 3), (S(0, 0), 1), (np.int64(1), np.int32(-1)),
    (Ellipsis, S(None, None, 2)),
]


def tensor_index(i):
    """The index with 0-d integer tensors for ints, made per library."""
    def build(L):
        def conv(x):
            return L.tensor(x) if isinstance(x, int) and not isinstance(x, bool) else x
        return tuple(conv(x) for x in i) if isinstance(i, tuple) else conv(i)
    return build


def has_bool(index):
    return any(isinstance(i, bool) for i in (index if isinstance(index, tuple) else (index,)))


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem(index):
    for dtype in ["float32", "int8", "bool", "complex128", "bfloat16"]:
        for layout in ["contiguous", "transposed", "strided", "scalar"]:
            x = make(dtype, layout, seed=1, shape=(3, 4))
            r = check(lambda L, a: a[index], x, what=f"{dtype} {layout}[{index!r}]")
            if r is not None and not has_bool(index):  # a bool index copies (see below)
                check(lambda L, a: a[index].stride(), x)
                check(lambda L, a: a[index].storage_offset() - a.storage_offset(), x)
                check(lambda L, a: a[tensor_index(index)(L)], x, what="0-d tensor ints")


def test_getitem_results_are_views():
    """Basic indexing gives views; a bool index is a mask (advanced indexing): a copy."""
    for index in INDICES:
        e = ember.arange(12.0).reshape(3, 4)
        t = torch.arange(12.0).reshape(3, 4)
        try:
            t_view = t[index]
        except IndexError:
            continue
        e_view = e[index]
        if t_view.numel() == 0:
            continue
        t_view.fill_(-1)
        e_view.fill_(-1)
        assert e.tolist() == t.tolist(), repr(index)


def test_getitem_3d_and_0d():
    x = (ember.arange(24).reshape(2, 3, 4), torch.arange(24).reshape(2, 3, 4))
    for index in [(1, Ellipsis, 2), (Ellipsis, 1, S(None)), (None, 1, None, S(1, None), None),
                  (S(None), S(None, None, 2), -1), (0, 0, 0), 1, (None,) * 3]:
        check(lambda L, a: a[index], x, what=repr(index))
        check(lambda L, a: a[index].stride(), x)
    s = (ember.tensor(5.0), torch.tensor(5.0))
    for index in [None, Ellipsis, (), True, False, (None, None), (Ellipsis, None)]:
        check(lambda L, a: a[index], s, what=repr(index))
    for index in [0, S(None), (0,), -1]:
        raises_like(lambda L, a: a[index], s)


def test_getitem_errors():
    x = make("float32", "transposed", shape=(3, 4))
    for index in [3, -4, (0, 4), (0, 0, 0), (S(None),) * 3, 1.5, (0, 1.5), "a", (0, "a"),
                  S(None, None, -1), S(None, None, 0), (Ellipsis, Ellipsis), object(), 1j,
                  np.float32(1), {}, S("a", None)]:
        raises_like(lambda L, a: a[index], x, what=repr(index))
    raises_like(lambda L, a: a[L.tensor(1.0)], x)
    raises_like(lambda L, a: a[L.tensor([1.0])], x)
    raises_like(lambda L, a: a[L.tensor([0], dtype=L.int32)], x)
    raises_like(lambda L, a: a[L.tensor([0j])], x)


ADVANCED = [
    lambda L: L.tensor([0, 2]), lambda L: L.tensor([True, False, True]), lambda L: [0, 1],
    lambda L: [[0], [1]], lambda L: np.array([0, 1]), lambda L: np.array([True, False, True]),
    lambda L: (0, L.tensor([1, 2])), lambda L: (Ellipsis, [0, 1]), lambda L: L.tensor([[0]]),
    lambda L: (L.tensor([0, 1]), L.tensor([1, 2])), lambda L: L.ones(3, 4, dtype=L.bool),
    lambda L: [True, False, True], lambda L: np.array([[0, 1]]),
]


@pytest.mark.parametrize("index", ADVANCED)
def test_advanced_indexing(index):
    """Tensor, list and ndarray indices are advanced indexing: a copy, as torch
    (test_advanced_indexing.py covers it in depth)."""
    x = make("float32", "transposed", shape=(3, 4))
    check(lambda L, a: a[index(L)], x)

    def put(L, a):
        b = a.clone()
        b[index(L)] = -1.0
        return b
    check(put, x)


def test_zero_dim_integer_tensor_indices():
    """0-d integer tensors index like ints; 0-d bool and uint8 tensors like bools (torch's legacy
    byte masks)."""
    x = (ember.arange(12).reshape(3, 4), torch.arange(12).reshape(3, 4))
    for d in ["int64", "int32", "int16", "int8", "uint8", "bool"]:
        for v in [0, 1, 2]:
            if d == "bool" and v > 1:
                continue
            check(lambda L, a: a[L.tensor(v, dtype=getattr(L, d))], x, what=f"{d} {v}")
            check(lambda L, a: a[1, L.tensor(v, dtype=getattr(L, d))], x)
            check(lambda L, a: a[np.array(v, dtype=d)], x)
    check(lambda L, a: a[np.int64(2)], x)
    check(lambda L, a: [10, 20, 30][L.tensor(2)], x)


# ---- __setitem__ ----

# torch 1.13 refuses np.bool_ values (TypeError); ember takes them as bools
# (test_setitem_numpy_values).
VALUES = [1, -2.5, True, np.float64(3), np.int32(2), 0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_scalars(dtype):
    for index in [0, -1, S(None), S(1, None, 2), (S(None), 1), (Ellipsis, S(0, 3, 2)), None,
                  (None, 1), (), True, False, (0, 0), (S(0, 0),)]:
        for v in VALUES:
            if dtype == "uint8" and isinstance(v, (int, float)) and v < 0:
                continue  # wraps in C++; torch rejects -2.5 into uint8 as UB
            def fn(L, a):
                b = a.clone()
                b[index] = v
                return b
            check(fn, make(dtype, "transposed", seed=2, shape=(3, 4)),
                  what=f"{dtype}[{index!r}] = {v!r}")
    for v in [1 + 2j, 2.5j] if dtype != "bool" else []:  # bool: test_fill_complex_into_bool
        def fn(L, a):
            b = a.clone()
            b[0] = v
            return b
        check(fn, make(dtype, "contiguous", seed=3), key=("setc", dtype), what=f"{dtype} = {v}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_tensors(dtype):
    cases = [
        (0, lambda L: L.arange(4)), ((S(None), 1), lambda L: L.tensor([1.5, -1, 2])),
        (S(None, None, 2), lambda L: L.ones(4, dtype=L.int8)), (Ellipsis, lambda L: L.tensor(3)),
        ((1, S(1, 3)), lambda L: L.tensor([True, False])), (None, lambda L: L.zeros(1, 3, 4)),
        ((S(None), S(None)), lambda L: L.arange(12.0).reshape(4, 3).t()),
        (S(0, 2), lambda L: L.tensor([[7], [8]], dtype=L.int16)),
        (0, lambda L: L.tensor([1 + 1j, 2, 3, 4])), ((), lambda L: L.ones(4, dtype=L.float64)),
        (S(1, 1), lambda L: L.ones(4)), (0, lambda L: L.arange(8)[::2]),
    ]
    for index, value in cases:
        def fn(L, a):
            b = a.clone()
            b[index] = value(L)
            return b
        check(fn, make(dtype, "strided", seed=4, shape=(3, 4)), what=f"{dtype}[{index!r}]",
              key=("set", dtype, repr(index), value(ember).dtype))


def test_setitem_writes_through_views():
    e, t = ember.zeros(3, 4), torch.zeros(3, 4)
    for L, x in [(ember, e), (torch, t)]:
        v = x.t()[1:]
        v[0] = 5
        v[:, 1] = L.tensor([1.0, 2.0, 3.0])
        x[..., -1] = 9
        x[None, 2, 0] = 4
    check(lambda L, a: a, (e, t))


def test_setitem_errors():
    x = make("float32", shape=(3, 4))
    for index, value in [(0, lambda L: L.ones(5)), (S(None), lambda L: L.ones(2, 4)),
                         (5, lambda L: 1), ((0, 0, 0), lambda L: 1), (1.5, lambda L: 1),
                         (0, lambda L: "a"), (0, lambda L: [1, 2, 3, 4]), (0, lambda L: None),
                         (S(None, None, -1), lambda L: 1), (0, lambda L: object()),
                         (0, lambda L: 1j), ("a", lambda L: 1)]:
        def fn(L, a):
            b = a.clone()
            b[index] = value(L)
        raises_like(fn, x, what=f"[{index!r}] = ...")
    with pytest.raises(TypeError):
        x[0][0] = {}
    raises_like(lambda L, a: a.__setitem__(0), x)
    raises_like(lambda L, a: a.__getitem__(), x)
    raises_like(lambda L: L.ones(3).expand(2, 3).__setitem__(0, L.ones(3)) or
                L.ones(3).expand(2, 3).add_(1))


def test_setitem_numpy_values():
    """ember takes ndarrays and np.bool_ as values (torch 1.13: TypeError)."""
    e = ember.zeros(2, 3)
    e[0] = np.array([1.0, 2.0, 3.0])
    e[1, 1:] = np.array([5, 6], dtype=np.int32)
    e[1, 0] = np.bool_(True)
    assert e.tolist() == [[1.0, 2.0, 3.0], [1.0, 5.0, 6.0]]




def test_setitem_integer_overflow():
    raises_like(lambda L: L.zeros(3, dtype=L.uint8).__setitem__(0, 300))


def test_fill_complex_into_bool():
    check(lambda L: L.zeros(2, dtype=L.bool).fill_(1 + 2j))


@pytest.mark.parametrize("index", [[S(0, 2), 1], [None, 0], [Ellipsis, S(None, None, 2)],
                                   [1, S(1, 3)]], ids=repr)
def test_list_with_slices_is_a_tuple(index):
    """A short list holding slices, None or Ellipsis indexes like the tuple of its items."""
    check(lambda L: L.arange(12).view(3, 4)[list(index)])
