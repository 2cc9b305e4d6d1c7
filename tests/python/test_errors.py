"""C++ errors reach Python as the exception PyTorch raises for the same mistake, with the C++
message, from the fast-call functions and the ordinary bindings alike."""

import gc
import threading

import numpy as np
import pytest
import torch

import ember
from _oracle import make, raises_like

# (description, call, exception type): one row per ErrorKind and per binding path.
CASES = [
    # RuntimeError: ember::Error
    ("broadcast mismatch (fast call)", lambda L: L.ones(2, 3) + L.ones(3, 2), RuntimeError),
    ("broadcast mismatch (function)", lambda L: L.add(L.ones(2), L.ones(3)), RuntimeError),
    ("in-place cast", lambda L: L.ones(2, dtype=L.int32).add_(1.5), RuntimeError),
    ("view of a transposed", lambda L: L.ones(2, 3).t().view(6), RuntimeError),
    ("narrow past the end (pybind)", lambda L: L.ones(3).narrow(0, 2, 5), RuntimeError),
    ("bool negation", lambda L: -L.ones(2, dtype=L.bool), RuntimeError),
    ("negative size", lambda L: L.zeros(-1), RuntimeError),
    ("int overflow", lambda L: L.tensor(2 ** 63), RuntimeError),
    ("ambiguous bool", lambda L: bool(L.ones(2)), RuntimeError),
    ("out of memory", lambda L: L.empty(2 ** 45), RuntimeError),
    ("clamp without bounds", lambda L: L.clamp(L.ones(2)), RuntimeError),
    ("bad device string", lambda L: L.device("bogus"), RuntimeError),
    # ValueError
    ("multi-element float()", lambda L: float(L.ones(2)), ValueError),
    ("ragged data", lambda L: L.tensor([[1, 2], [3]]), ValueError),
    ("negative NumPy strides", lambda L: L.from_numpy(np.arange(3.0)[::-1]), ValueError),
    ("negative slice step", lambda L: L.ones(3)[::-1], ValueError),
    # IndexError
    ("index out of range", lambda L: L.ones(3)[3], IndexError),
    ("dim out of range (fast call)", lambda L: L.ones(3).size(1), IndexError),
    ("dim out of range (pybind)", lambda L: L.ones(3).transpose(0, 1), IndexError),
    ("too many indices", lambda L: L.ones(3)[0, 0], IndexError),
    ("index a 0-d tensor", lambda L: L.tensor(1.0)[0], IndexError),
    ("float index", lambda L: L.ones(3)[1.0], IndexError),
    ("float index tensor", lambda L: L.ones(3)[L.tensor([1.0])], IndexError),
    # TypeError
    ("wrong argument type (fast call)", lambda L: L.exp(1.0), TypeError),
    ("wrong argument type (pybind)", lambda L: L.ones(3).narrow("a", 0, 1), TypeError),
    ("unexpected keyword", lambda L: L.ones(2, bogus=1), TypeError),
    ("len of 0-d", lambda L: len(L.tensor(1.0)), TypeError),
    ("float __index__", lambda L: [1, 2][L.tensor(1.0)], TypeError),
    ("unsupported NumPy dtype", lambda L: L.from_numpy(np.zeros(2, np.uint16)), TypeError),
    ("bfloat16 to NumPy", lambda L: L.ones(2, dtype=L.bfloat16).numpy(), TypeError),
    ("operator with a str", lambda L: L.ones(2) + "a", TypeError),
    ("~ of a float tensor", lambda L: ~L.ones(2), TypeError),
    ("invalid data", lambda L: L.tensor("abc"), TypeError),
    ("non-float default dtype", lambda L: L.set_default_dtype(L.int64), TypeError),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_exception_types(case):
    _, f, exc = case
    with pytest.raises(exc):
        f(torch)
    ex = raises_like(f)
    assert type(ex) is exc and str(ex)


def test_messages_come_from_cpp():
    with pytest.raises(RuntimeError, match=r"^\[add\].*\[2, 3\].*\[3, 2\]"):
        ember.ones(2, 3) + ember.ones(3, 2)
    with pytest.raises(IndexError, match=r"\[transpose\] dimension out of range"):
        ember.ones(3).transpose(0, 1)
    with pytest.raises(RuntimeError, match=r"\[add_\] result type Float can't be cast"):
        ember.ones(2, dtype=ember.int32).add_(1.5)
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' must be Tensor, not float"):
        ember.exp(1.0)


def test_advanced_index_out_of_range_is_an_index_error():
    assert ember.arange(3)[ember.tensor([0, 2])].tolist() == [0, 2]
    with pytest.raises(IndexError, match=r"5.*3|3.*5"):
        ember.arange(3)[ember.tensor([0, 5])]


def test_errors_with_the_gil_released():
    """Ops on large tensors run without the GIL; their errors still arrive as exceptions."""
    big = ember.ones(1 << 16)
    with pytest.raises(RuntimeError):
        big + ember.ones(3)
    with pytest.raises(RuntimeError):
        big.int().add_(0.5)
    with pytest.raises(RuntimeError):
        ember.add(big, big, out=ember.empty(3))
    with pytest.raises(RuntimeError):
        big.clone().expand(2, -1).mul_(2)


def test_errors_leave_no_state_behind():
    """After many failing calls (each path), ordinary calls work and nothing leaks."""
    x = ember.ones(3)
    for _ in range(200):
        for f in [lambda: x + ember.ones(2), lambda: x[5], lambda: ember.exp(1), lambda: x.view(2),
                  lambda: ember.tensor([[1], 2]), lambda: x.narrow(0, 0, 9)]:
            with pytest.raises(Exception):
                f()
    gc.collect()
    assert (x + 1).tolist() == [2.0, 2.0, 2.0]
    assert not hasattr(threading.current_thread(), "_ember_error")


def test_python_exceptions_propagate():
    class Boom:
        def __len__(self):
            raise KeyError("boom")

        def __getitem__(self, i):
            raise KeyError("boom")

    with pytest.raises(KeyError):
        ember.tensor([Boom()])

    class BadFloat(float):
        pass

    assert ember.ones(2).add(BadFloat(1.5)).tolist() == [2.5, 2.5]




@pytest.mark.parametrize("sizes", [(2 ** 62, 4), (2 ** 31, 2 ** 31)], ids=str)
def test_storage_size_overflow(sizes):
    with pytest.raises(RuntimeError):
        torch.empty(*sizes)
    with pytest.raises(RuntimeError):
        ember.empty(*sizes)  # never kept or printed: it would read past its storage


def test_make_pairs_cannot_hide_differences():
    """The oracle itself fails on a wrong value, dtype, shape or exception type."""
    from _oracle import check
    x = make("float32")
    for wrong in [lambda L, a: a + (1 if L is ember else 0), lambda L, a: a.double() if L is
                  ember else a, lambda L, a: a.t() if L is ember else a,
                  lambda L, a: float(a) if L is ember else a[5],
                  lambda L, a: a[5] if L is ember else a]:
        with pytest.raises(AssertionError):
            check(wrong, x)
