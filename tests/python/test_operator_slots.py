"""The Tensor type's direct operator slots and its fast result objects (python/src/elementwise.cpp
Note [Operator slots], python/src/convert.cpp Note [Fast Tensor objects]).

`a + b` reaches the C++ operator through the type's nb_add slot instead of CPython's generic
slot that looks __add__ up by name; results are built and freed without pybind11's type lookups.
These tests hold the slots to the generic slot's semantics: the same results and exception types
as torch 1.13 and as the explicit __add__ / __radd__ / __iadd__ calls, reflected operands,
NotImplemented for foreign types, subclasses that override an operator, and objects whose
__dict__, weak references and lifetime behave as before.
"""

import gc
import operator
import subprocess
import sys
import weakref

import numpy as np
import pytest
import torch

import ember
from _oracle import DTYPES, INTS, LOWP, check, make, raises_like

# Python operator -> (function of the operator module, in-place form, ember op name).
SLOTTED = {
    "+": (operator.add, operator.iadd, "add"),
    "-": (operator.sub, operator.isub, "sub"),
    "*": (operator.mul, operator.imul, "mul"),
    "/": (operator.truediv, operator.itruediv, "div"),
    "//": (operator.floordiv, operator.ifloordiv, "floor_divide"),
    "%": (operator.mod, operator.imod, "remainder"),
    "&": (operator.and_, operator.iand, "bitwise_and"),
    "|": (operator.or_, operator.ior, "bitwise_or"),
    "^": (operator.xor, operator.ixor, "bitwise_xor"),
    "<<": (operator.lshift, operator.ilshift, "bitwise_left_shift"),
    ">>": (operator.rshift, operator.irshift, "bitwise_right_shift"),
}
COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}
DUNDER = {"add": "add", "sub": "sub", "mul": "mul", "div": "truediv",
          "floor_divide": "floordiv", "remainder": "mod", "bitwise_and": "and",
          "bitwise_or": "or", "bitwise_xor": "xor", "bitwise_left_shift": "lshift",
          "bitwise_right_shift": "rshift"}


def kind_for(op, dtype):
    if op in ("div", "floor_divide", "remainder"):
        return "nonzero"
    if op.startswith("bitwise_") and "shift" in op:
        return "small"
    return "any"


def test_slots_installed():
    """Every slotted operator (and the comparisons) calls the C++ operator directly."""
    slots = set(ember._C._operator_slots())
    for _, _, op in SLOTTED.values():
        assert op in slots and op + "_" in slots, op
    assert "compare" in slots


@pytest.mark.parametrize("sym", list(SLOTTED))
def test_slot_matches_torch_and_methods(sym):
    """Each dtype and layout: the operator (slot), torch 1.13, and the explicit dunder methods
    agree (values, dtypes and exception types), tensor-tensor and both scalar positions."""
    f, _, op = SLOTTED[sym]
    d = DUNDER[op]
    for dtype in DTYPES:
        for la, lb in [("contiguous", "contiguous"), ("transposed", "broadcast"),
                       ("strided", "scalar"), ("zero", "broadcast"), ("scalar", "scalar")]:
            a = make(dtype, la, seed=41, kind=kind_for(op, dtype))
            b = make(dtype, lb, seed=42, kind=kind_for(op, dtype))
            if la == "zero":
                b = make(dtype, "scalar", seed=42, kind=kind_for(op, dtype))
            r = check(lambda L, x, y: f(x, y), a, b, what=f"{dtype} {la} {sym} {lb}",
                      key=(sym, dtype))
            ea, eb = a[0], b[0]
            try:
                m = getattr(ea, f"__{d}__")(eb)
            except Exception as ex:  # noqa: BLE001 -- compared by type
                assert r is None, f"{dtype}: method raised {type(ex).__name__}, slot did not"
                continue
            assert r is not None
            assert r.dtype == m.dtype and r.shape == m.shape
            assert np.array_equal(r.float().numpy() if r.dtype == ember.bfloat16 else r.numpy(),
                                  m.float().numpy() if m.dtype == ember.bfloat16 else m.numpy(),
                                  equal_nan=True)
        for s in [3, 1.5, True, 2 + 1j]:
            if dtype in INTS + ["bool"] and op in ("floor_divide", "remainder") and s is True:
                continue
            if dtype in LOWP and isinstance(s, complex):
                continue  # complex32 results: ember lacks some of torch's ops (before the slots)
            a = make(dtype, "strided", seed=43, kind=kind_for(op, dtype))
            check(lambda L, x: f(x, s), a, what=f"{dtype} {sym} {s!r}", key=(sym, dtype, "r", s))
            check(lambda L, x: f(s, x), a, what=f"{s!r} {sym} {dtype}", key=(sym, dtype, "l", s))


@pytest.mark.parametrize("sym", list(SLOTTED))
def test_inplace_slot(sym):
    """`x op= y` writes x itself (the same object), with torch's results and errors (a result
    type that cannot be cast back, a shape that cannot broadcast into x)."""
    _, fi, op = SLOTTED[sym]
    for dtype in ["bool", "uint8", "int32", "int64", "float32", "float64", "complex64"]:
        for other in ["tensor", 2, 1.5]:
            a = make(dtype, "transposed", seed=44, kind=kind_for(op, dtype))
            b = make(dtype, "broadcast", seed=45, kind=kind_for(op, dtype))

            def fn(L, x, y):
                base = x.clone()
                keep = base
                base = fi(base, y if other == "tensor" else other)
                assert base is keep
                return base
            check(fn, a, b, what=f"{dtype} {sym}= {other}", key=(sym, dtype, other))
    # A broadcast that would grow the written tensor.
    small = make("float32", "broadcast", seed=46)
    full = make("float32", "contiguous", seed=47)
    if op not in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                  "bitwise_right_shift"):
        raises_like(lambda L, x, y: fi(x[:1].clone(), y), small, full)


@pytest.mark.parametrize("sym", list(COMPARE))
def test_compare_slot(sym):
    f = COMPARE[sym]
    for dtype in ["bool", "int64", "float32", "float64"]:
        a = make(dtype, "transposed", seed=48)
        b = make(dtype, "broadcast", seed=49)
        check(lambda L, x, y: f(x, y), a, b, what=f"{dtype} {sym}")
        check(lambda L, x: f(x, 1), a, what=f"{dtype} {sym} 1")
        check(lambda L, x: f(1.5, x), a, what=f"1.5 {sym} {dtype}")
    x = make("float32")
    if sym in ("==", "!="):
        check(lambda L, a: f(a, None), x)
        check(lambda L, a: f(None, a), x)
        check(lambda L, a: f(a, "s"), x)
    else:
        raises_like(lambda L, a: f(a, None), x)
        raises_like(lambda L, a: f("s", a), x)


def test_broadcast_error_and_grad():
    """Errors keep their exception type; autograd records through the slot."""
    a = make("float32", "contiguous", seed=50, shape=(3, 4))
    b = make("float32", "contiguous", seed=51, shape=(2, 4))
    raises_like(lambda L, x, y: x + y, a, b)
    raises_like(lambda L, x, y: x * y, a, b)
    ex = ember.ones(2, requires_grad=True)
    tx = torch.ones(2, requires_grad=True)
    re_ = (ex * 3 + ex / 2 - 1) * ex
    rt = (tx * 3 + tx / 2 - 1) * tx
    assert type(re_.grad_fn).__name__ == type(rt.grad_fn).__name__
    re_.sum().backward()
    rt.sum().backward()
    assert ex.grad.tolist() == tx.grad.tolist()
    with pytest.raises(RuntimeError):  # a leaf that requires grad, written in place
        ex += 1
    with pytest.raises(RuntimeError):
        torch.ones(2, requires_grad=True).__iadd__(1)


class Foreign:
    """Knows how to combine with tensors from either side."""

    def __add__(self, other):
        return ("Foreign.__add__", type(other).__name__)

    def __radd__(self, other):
        return ("Foreign.__radd__", type(other).__name__)

    def __rmul__(self, other):
        return "Foreign.__rmul__"

    def __eq__(self, other):
        return "Foreign.__eq__"

    def __lt__(self, other):
        return "Foreign.__lt__"

    __hash__ = object.__hash__


def test_foreign_operands():
    """Unknown types: the tensor's operator returns NotImplemented and Python asks the other
    operand, in both positions, as for torch."""
    for lib in (ember, torch):
        t = lib.ones(2)
        f = Foreign()
        name = type(t).__name__
        assert t + f == ("Foreign.__radd__", name)
        assert f + t == ("Foreign.__add__", name)
        assert t * f == "Foreign.__rmul__"
        assert (t == f) == "Foreign.__eq__"
        assert (t > f) == "Foreign.__lt__"  # reflected comparison
        with pytest.raises(TypeError):
            t - f
        with pytest.raises(TypeError):
            t += object()
        assert t.__add__(object()) is NotImplemented
        assert t.__radd__(object()) is NotImplemented
        assert t.__iadd__(object()) is NotImplemented
        assert (t == object()) is False and (t != object()) is True


def test_explicit_dunder_calls():
    t = ember.tensor([1.0, 2.0])
    assert t.__add__(1).tolist() == [2.0, 3.0]
    assert t.__rsub__(1).tolist() == [0.0, -1.0]
    assert t.__rtruediv__(2).tolist() == [2.0, 1.0]
    with pytest.raises(TypeError):
        t.__add__(1, 2)
    with pytest.raises(TypeError):
        t.__add__(other=1)
    with pytest.raises(TypeError):  # the method still checks its receiver
        ember.Tensor.__add__(1.0, t)
    r = t.__iadd__(1)
    assert r is t and t.tolist() == [2.0, 3.0]


def test_numpy_operands():
    """ndarrays and NumPy scalars on either side (the ndarray defers through
    __array_priority__, as it does for torch)."""
    arr = np.array([1.0, 2.0], dtype=np.float32)
    for lib in (ember, torch):
        t = lib.tensor([3.0, 4.0])
        r = t + arr
        assert isinstance(r, lib.Tensor) and r.tolist() == [4.0, 6.0]
        assert (t * np.float64(2.0)).tolist() == [6.0, 8.0]
        assert (np.float32(2.0) * t).tolist() == [6.0, 8.0]


class Plain(ember.Tensor):
    """A subclass without operators of its own: it inherits the slots."""


class Overriding(ember.Tensor):
    """A subclass that overrides both the operator and its reflection."""

    def __add__(self, other):
        return "Overriding.__add__"

    def __radd__(self, other):
        return "Overriding.__radd__"

    def __eq__(self, other):
        return "Overriding.__eq__"

    __hash__ = ember.Tensor.__hash__


class ReflectOnly(ember.Tensor):
    def __rmul__(self, other):
        return "ReflectOnly.__rmul__"


def _sub(cls):
    x = cls()
    ember._C._nn._set_tensor(x, ember.tensor([1.0, 2.0]))
    return x


def test_subclasses():
    t = ember.tensor([10.0, 20.0])
    p = _sub(Plain)
    r = p + t
    assert type(r) is ember.Tensor and r.tolist() == [11.0, 22.0]
    assert (t - p).tolist() == [9.0, 18.0]
    assert (p == t).tolist() == [False, False]
    q = p
    q += 1
    assert q is p and p.tolist() == [2.0, 3.0]

    o = _sub(Overriding)
    assert o + t == "Overriding.__add__"
    # A subclass's reflected operator wins over the base class's forward one, as in Python.
    assert t + o == "Overriding.__radd__"
    assert 1 + o == "Overriding.__radd__"
    assert (t == o) == "Overriding.__eq__"
    assert (o * t).tolist() == [10.0, 40.0]  # not overridden: the inherited operator

    m = _sub(ReflectOnly)
    assert t * m == "ReflectOnly.__rmul__"
    assert (m * t).tolist() == [10.0, 40.0]
    assert (m + t).tolist() == [11.0, 22.0]

    w = ember.nn.Parameter(ember.ones(2))
    assert (w + t).tolist() == [11.0, 21.0] and type(w + t) is ember.Tensor
    assert (t + w).requires_grad


def test_assigning_an_operator_takes_effect():
    """Setting Tensor.__add__ puts CPython's generic slot back (in a fresh interpreter: the
    change is for the life of the process)."""
    code = """
import ember
t = ember.ones(2)
assert "add" in ember._C._operator_slots()
orig = ember.Tensor.__add__
ember.Tensor.__add__ = lambda self, other: "patched"
assert t + 1 == "patched", t + 1
assert "add" not in ember._C._operator_slots()
assert (t - 1).tolist() == [0.0, 0.0]
assert (1 + t).tolist() == [2.0, 2.0]
ember.Tensor.__add__ = orig
assert (t + 1).tolist() == [2.0, 2.0]
print("ok")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env())
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def _env():
    import os
    env = dict(os.environ)
    path = [os.path.dirname(os.path.dirname(ember.__file__))]
    if env.get("PYTHONPATH"):
        path.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    return env


def test_result_objects():
    """Results built by the fast path behave as any Tensor object: attributes, weak references,
    reference cycles through __dict__, and deallocation with a Python error in flight."""
    a = ember.ones(3)
    r = a + 1
    r.note = "kept"
    assert r.__dict__ == {"note": "kept"}
    ref = weakref.ref(r)
    del r
    assert ref() is None

    r = a * 2
    r.me = r  # a cycle: only the collector frees it
    ref = weakref.ref(r)
    del r
    gc.collect()
    assert ref() is None

    called = []
    r = a - 1
    weakref.finalize(r, called.append, 1)
    del r
    assert called == [1]

    # The C++ result stays alive while a view of it exists.
    v = (a + 1)[1:]
    gc.collect()
    assert v.tolist() == [2.0, 2.0]

    def raising():
        tmp = a + 1  # noqa: F841 -- freed while the exception propagates
        raise KeyError("x")
    with pytest.raises(KeyError):
        raising()

    # In-place methods bound through pybind11 still return the very object.
    x = a + 0
    assert x.requires_grad_() is x and x.detach_() is x


def test_many_results_freed():
    """No Tensor object outlives its last reference (a leak would grow the instance registry)."""
    a = ember.ones(1)
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(20000):
        a + a
        a - 1.0
        a == a
    gc.collect()
    assert len(gc.get_objects()) - before < 100
