"""cat / stack / hstack / vstack / dstack / column_stack / atleast_Nd against torch 1.13: every
dtype, strided and broadcast inputs, mixed dtypes (promotion), zero-size and legacy (0,) empty
tensors, out=, negative dims and the errors."""

import pytest

import ember
from _oracle import DTYPES, LAYOUTS, check, make, raises_like

JOIN_LAYOUTS = [la for la in LAYOUTS if la != "scalar"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", JOIN_LAYOUTS)
def test_cat_stack_layouts(dtype, layout):
    a = make(dtype, layout, seed=1)
    b = make(dtype, "contiguous", seed=2) if layout != "zero" else make(dtype, "zero", seed=2)
    for dim in (0, 1, -1, -2):
        check(lambda L, x, y: L.cat([x, y], dim), a, b, what=f"cat dim {dim}")
        check(lambda L, x, y: L.cat((x, y, x), dim=dim), a, b, what=f"cat3 dim {dim}")
        check(lambda L, x, y: L.stack([x, y], dim), a, b, what=f"stack dim {dim}")
    check(lambda L, x, y: L.stack((x, y), 2), a, b)
    for fn in ("hstack", "vstack", "dstack", "column_stack"):
        check(lambda L, x, y: getattr(L, fn)([x, y]), a, b, what=fn)


@pytest.mark.parametrize("d1,d2", [("int64", "float32"), ("bool", "uint8"), ("int8", "uint8"),
                                   ("float16", "bfloat16"), ("float32", "complex64"),
                                   ("int32", "float64")])
def test_cat_promotes(d1, d2):
    check(lambda L, x, y: L.cat([x, y]), make(d1, seed=3), make(d2, seed=4))
    check(lambda L, x, y: L.stack([x, y], 1), make(d1, seed=3), make(d2, seed=4))


def test_legacy_empty_and_zero_size():
    check(lambda L, x: L.cat([L.zeros(0), x, L.zeros(0, dtype=L.int64)], 1),
          make("float32", seed=5))
    check(lambda L: L.cat([L.zeros(0), L.zeros(0)]))
    check(lambda L: L.cat([L.zeros(0, 3), L.ones(2, 3)]))
    check(lambda L: L.cat([L.zeros(2, 0), L.ones(2, 3)], 1))
    check(lambda L: L.stack([L.zeros(0, 3), L.zeros(0, 3)]))


def test_one_and_low_dim_inputs():
    check(lambda L: L.cat([L.arange(3)]))
    check(lambda L: L.stack([L.tensor(1.0), L.tensor(2.0)]))
    check(lambda L: L.hstack([L.tensor(1), L.arange(3)]))
    check(lambda L: L.vstack([L.arange(3), L.arange(3, 6)]))
    check(lambda L: L.dstack([L.tensor(1), L.tensor(2)]))
    check(lambda L: L.column_stack([L.arange(3), L.arange(6).view(3, 2), L.ones(3, 1)]))
    for n in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for x in (lambda L: L.tensor(1.0), lambda L: L.arange(3), lambda L: L.ones(2, 3),
                  lambda L: L.ones(2, 3, 4)):
            check(lambda L: getattr(L, n)(x(L)), what=n)
        check(lambda L: getattr(L, n)(L.tensor(1), L.arange(2)), what=n)
        check(lambda L: getattr(L, n)([L.tensor(1), L.arange(2)]), what=n)


def test_out():
    check(lambda L, x: L.cat([x, x], out=L.empty(0)).clone(), make("float32", seed=6))
    check(lambda L, x: L.cat([x, x], out=L.empty(6, 4, dtype=L.float64)).clone(),
          make("float32", seed=6))
    # A non-empty out= of another shape: torch 1.13 resizes it with a deprecation warning;
    # ember raises, as its elementwise ops do.
    with pytest.raises(RuntimeError):
        ember.cat([ember.ones(2)], out=ember.empty(4, 4))
    check(lambda L, x: L.stack([x, x], 1, out=L.empty(0, dtype=L.float64)).clone(),
          make("float32", seed=6))
    check(lambda L, x: L.vstack([x, x], out=L.empty(0)).clone(), make("float32", seed=6))
    out = ember.empty(0)
    assert ember.cat([ember.ones(2), ember.zeros(1)], out=out) is out
    assert out.tolist() == [1.0, 1.0, 0.0]


def test_errors():
    raises_like(lambda L: L.cat([]))
    raises_like(lambda L: L.stack([]))
    raises_like(lambda L: L.cat([L.ones(2, 3), L.ones(2)]))
    raises_like(lambda L: L.cat([L.ones(2, 3), L.ones(3, 4)]))
    raises_like(lambda L: L.cat([L.ones(2, 3)], 2))
    raises_like(lambda L: L.stack([L.ones(2, 3)], 3))
    raises_like(lambda L: L.stack([L.ones(2, 3), L.ones(1, 3)]))
    raises_like(lambda L: L.cat([L.tensor(1.0)]))
    raises_like(lambda L: L.cat(L.ones(2)))
    raises_like(lambda L: L.cat([L.ones(2), 1]))
    raises_like(lambda L: L.cat([L.ones(2, dtype=L.float64)], out=L.empty(2, dtype=L.int64)))
    raises_like(lambda L: L.hstack([]))
    x = ember.ones(4)
    with pytest.raises(RuntimeError):
        ember.cat([x[:2], x[2:]], out=x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", JOIN_LAYOUTS)
def test_tril_triu(dtype, layout):
    """Every diagonal offset from below the matrix to beyond it, functions, methods, in-place."""
    x = make(dtype, layout, seed=7)
    for k in (-5, -1, 0, 1, 2, 6):
        for fn in ("tril", "triu"):
            check(lambda L, a: getattr(L, fn)(a, k), x, what=f"{fn} {k}")
            check(lambda L, a: getattr(a, fn)(diagonal=k), x, what=f"{fn} method {k}")
            check(lambda L, a: getattr(a.clone(), fn + "_")(k), x, what=f"{fn}_ {k}")


def test_tril_triu_batched_out_and_errors():
    for fn in ("tril", "triu"):
        check(lambda L: getattr(L, fn)(L.arange(24).view(2, 3, 4), -1))
        check(lambda L: getattr(L, fn)(L.arange(24.0).view(2, 3, 4).transpose(0, 2), 1))
        check(lambda L: getattr(L, fn)(L.ones(2, 0, 3)))
        check(lambda L: getattr(L, fn)(L.arange(9.0).view(3, 3), out=L.empty(0)).clone())
        check(lambda L: getattr(L, fn)(L.tensor([[1 + 1j, 2], [3, 4j]]).conj()).resolve_conj())
        raises_like(lambda L: getattr(L, fn)(L.ones(3)))
        raises_like(lambda L: getattr(L, fn)(L.tensor(1.0)))
        raises_like(lambda L: getattr(L, fn)(L.ones(2, 2), out=L.empty(0, dtype=L.int64)))
