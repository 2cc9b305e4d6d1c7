"""ember.masked against torch.masked (PyTorch 1.13): every reduction and normalization with
masks (full, broadcast, non-bool, fully masked-out slices), dims, keepdim and dtype, the dtypes
torch supports for each, strided / zero-size / 0-dim inputs, gradients and bad input."""

import math
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.masked
from _oracle import COMPLEX, FLOATS, INTS, LOWP, check, make, raises_like

warnings.filterwarnings("ignore", category=UserWarning)


def M(lib):
    return lib.masked


def mask_pair(shape, seed, dtype="bool", full_row=None):
    """A random (ember, torch) mask; `full_row` masks out that whole row of a 2-D mask."""
    m = np.random.default_rng(seed).random(shape) < 0.6
    if full_row is not None:
        m[full_row] = False
    if dtype != "bool":
        m = m.astype(np.int64)
    e = ember.from_numpy(m.copy())
    t = torch.from_numpy(m.copy())
    return e, t


MASKS = {
    "full": lambda: mask_pair((3, 4), 1, full_row=1),
    "broadcast": lambda: mask_pair((4,), 2),
    "broadcast_col": lambda: mask_pair((3, 1), 3),
    "int": lambda: mask_pair((3, 4), 4, "int64"),
    "none": lambda: None,
}

# torch 1.13 OpInfo dtypes per op (CPU)
ALL = ["bool"] + INTS + FLOATS + COMPLEX
REDUCTIONS = {
    "sum": ALL,
    "prod": ["bool"] + INTS + ["float32", "float64"] + COMPLEX,
    "amax": INTS + FLOATS,
    "amin": INTS + FLOATS,
    "argmax": INTS + FLOATS,
    "argmin": INTS + FLOATS,
    "mean": ALL,
    "logsumexp": INTS + ["bfloat16", "float32", "float64"],
    "norm": FLOATS,
    "var": INTS + FLOATS + COMPLEX,
    "std": INTS + ["bfloat16", "float32", "float64"] + COMPLEX,
}


def tol(dtype):
    return {"rtol": 3e-2, "atol": 3e-2} if dtype in LOWP else {}


def call(lib, name, x, m, *args, **kw):
    if m is not None:
        kw["mask"] = m
    return getattr(M(lib), name)(x, *args, **kw)


def reduction_cases(name):
    """(args, kwargs) pairs for a reduction."""
    dims = [None, 0, 1, -1, (0, 1)] if name not in ("argmax", "argmin") else [None, 0, 1]
    out = []
    for dim in dims:
        for keepdim in (False, True):
            args = (2.0,) if name == "norm" else ()
            out.append((args, {"dim": dim, "keepdim": keepdim}))
    if name in ("var", "std"):
        out += [((), {"dim": 1, "unbiased": True}), ((), {"dim": None, "unbiased": True})]
    if name == "norm":
        out += [((1.0,), {"dim": 1}), ((math.inf,), {"dim": 0}), ((-math.inf,), {"dim": 1}),
                ((0.0,), {"dim": 1}), ((3.0,), {})]
    return out


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    for dtype in REDUCTIONS[name]:
        for layout in ["contiguous", "transposed", "strided"]:
            x = make(dtype, layout, kind="nonzero" if name == "prod" else "any")
            for mkey, mk in MASKS.items():
                m = mk()
                for args, kw in reduction_cases(name):
                    check(lambda L, a, mm: call(L, name, a, mm, *args, **kw), x, m,
                          key=(name, dtype, mkey, str(args), str(kw)), **tol(dtype))


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "mean", "var", "norm", "logsumexp"])
def test_reduction_dtype_argument(name):
    x = make("float32")
    m = MASKS["full"]()
    args = (2.0,) if name == "norm" else ()
    check(lambda L, a, mm: call(L, name, a, mm, *args, dim=1, dtype=L.float64), x, m)
    if name in ("sum", "prod"):
        check(lambda L, a, mm: call(L, name, a.to(L.int32), mm, dim=1, dtype=L.int32), x, m)


def test_zero_size_and_scalar():
    z = make("float32", "zero")
    mz = (ember.zeros(0, 4, dtype=ember.bool), torch.zeros(0, 4, dtype=torch.bool))
    for name in ["sum", "prod", "amax", "mean", "var", "logsumexp"]:
        check(lambda L, a, mm: call(L, name, a, mm, dim=1), z, mz, key=(name, "z1"))
        check(lambda L, a, mm: call(L, name, a, mm, dim=0), z, mz, key=(name, "z0"))
    s = make("float32", "scalar")
    for mv in (True, False):
        ms = (ember.tensor(mv), torch.tensor(mv))
        for name in ["sum", "prod", "amax", "amin", "mean", "var", "std", "logsumexp"]:
            check(lambda L, a, mm: call(L, name, a, mm), s, ms, key=(name, "s", mv))
        check(lambda L, a, mm: call(L, "norm", a, mm, 2.0), s, ms)
        check(lambda L, a, mm: call(L, "softmax", a, mm, 0), s, ms)
        check(lambda L, a, mm: call(L, "cumsum", a, mm, 0), s, ms)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans(name):
    dtypes = ["bfloat16", "float32", "float64"] + INTS + COMPLEX
    for dtype in dtypes:
        for layout in ["contiguous", "transposed", "broadcast"]:
            x = make(dtype, layout, kind="nonzero")
            for mkey, mk in MASKS.items():
                for dim in (0, 1, -1):
                    check(lambda L, a, mm: call(L, name, a, mm, dim), x, mk(),
                          key=(name, dtype, mkey, dim), **tol(dtype))
            check(lambda L, a, mm: call(L, name, a, mm, 1, dtype=L.float64), x, MASKS["full"](),
                  key=(name, dtype, "dt"), **tol(dtype))


def test_median():
    for dtype in ["float32", "float64", "bfloat16"]:
        for layout in ["contiguous", "transposed"]:
            x = make(dtype, layout)
            for mkey, mk in MASKS.items():
                for dim in (0, 1, -1):
                    for keepdim in (False, True):
                        check(lambda L, a, mm: call(L, "median", a, mm, dim, keepdim=keepdim),
                              x, mk(), key=("median", dtype, mkey, dim, keepdim), **tol(dtype))
    # integers: fine without fully masked-out rows, ValueError with one
    xi = make("int64")
    check(lambda L, a, mm: call(L, "median", a, mm, 1), xi, MASKS["broadcast_col"]())
    check(lambda L, a, mm: call(L, "median", a, mm, 0), xi, (ember.ones(4, dtype=ember.bool),
                                                             torch.ones(4, dtype=torch.bool)))
    raises_like(lambda L, a, mm: call(L, "median", a, mm, 1), xi, MASKS["full"]())


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmaxes(name):
    for dtype in ["bfloat16", "float32", "float64"]:
        for layout in ["contiguous", "transposed", "strided", "zero"]:
            x = make(dtype, layout)
            for mkey, mk in MASKS.items():
                for dim in (0, 1, -1):
                    check(lambda L, a, mm: call(L, name, a, mm, dim), x, mk(),
                          key=(name, dtype, layout, mkey, dim), **tol(dtype))
        check(lambda L, a, mm: call(L, name, a, mm, 1, dtype=L.float64), make(dtype),
              MASKS["full"](), **tol(dtype))


def test_normalize():
    for dtype in FLOATS + COMPLEX:
        for layout in ["contiguous", "transposed"]:
            x = make(dtype, layout)
            for mkey, mk in MASKS.items():
                for ord_, dim in [(2.0, 1), (1.0, 0), (math.inf, -1), (3.0, 1)]:
                    check(lambda L, a, mm: call(L, "normalize", a, mm, ord_, dim), x, mk(),
                          key=(dtype, mkey, ord_, dim), **tol(dtype))
        check(lambda L, a, mm: call(L, "normalize", a, mm, 2.0, 1, eps=10.0), make(dtype),
              MASKS["full"](), **tol(dtype))


def test_logaddexp():
    for dtype in ["bfloat16", "float32", "float64"]:
        x = make(dtype)
        y = make(dtype, "transposed", seed=5)
        m1, m2 = MASKS["full"](), MASKS["broadcast"]()
        for kw in [{}, {"input_mask": m1}, {"other_mask": m2}, {"input_mask": m1, "other_mask": m2},
                   {"input_mask": m1, "dtype": torch.float64}]:
            check(lambda L, a, b, **k: L.masked.logaddexp(a, b, **k), x, y, **kw, **tol(dtype))


def test_grad():
    rng = np.random.default_rng(6)
    a = rng.permutation(np.arange(1, 13)).reshape(3, 4) / 5.0  # distinct values
    me = ember.tensor([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1]], dtype=ember.bool)
    mt = torch.tensor(me.numpy())

    def fns(lib):
        m = me if lib is ember else mt
        ms = lib.masked
        return [
            lambda x: ms.sum(x, 1, mask=m), lambda x: ms.prod(x, 1, mask=m),
            lambda x: ms.amax(x, 1, mask=m), lambda x: ms.amin(x, 0, mask=m),
            lambda x: ms.mean(x, 0, mask=m), lambda x: ms.norm(x, 2.0, 1, mask=m),
            lambda x: ms.var(x, 0, mask=m), lambda x: ms.std(x, 0, mask=m, unbiased=True),
            lambda x: ms.softmax(x, 1, mask=m), lambda x: ms.log_softmax(x, 0, mask=m),
            lambda x: ms.softmin(x, 1, mask=m), lambda x: ms.normalize(x, 2.0, 1, mask=m),
            lambda x: ms.cumsum(x, 1, mask=m), lambda x: ms.cumprod(x, 1, mask=m),
            lambda x: ms.logsumexp(x, 0, mask=m), lambda x: ms.median(x, 0, mask=m),
        ]

    g = rng.standard_normal((3, 4))
    for k, (fe, ft) in enumerate(zip(fns(ember), fns(torch))):
        xe = ember.tensor(a, requires_grad=True)
        xt = torch.tensor(a, requires_grad=True)
        re_, rt = fe(xe), ft(xt)
        gt = torch.tensor(g.reshape(-1)[: rt.numel()].reshape(rt.shape))
        (dt,) = torch.autograd.grad(rt, xt, gt)
        (de,) = ember.autograd.grad(re_, xe, ember.tensor(gt.numpy()))
        # where torch's gradient is finite (fully masked-out slices may give NaN)
        ok = np.isfinite(dt.numpy())
        np.testing.assert_allclose(de.numpy()[ok], dt.numpy()[ok], rtol=1e-7, atol=1e-9,
                                   err_msg=f"case {k}")
    # finite differences where every slice has a masked-in element
    m2 = ember.tensor([[1, 0, 1, 1], [0, 1, 0, 0], [1, 1, 0, 1]], dtype=ember.bool)
    x = ember.tensor(a, requires_grad=True)
    ms = ember.masked
    for f in [lambda t: ms.mean(t, 1, mask=m2), lambda t: ms.var(t, 1, mask=m2),
              lambda t: ms.softmax(t, 1, mask=m2), lambda t: ms.normalize(t, 3.0, 1, mask=m2),
              lambda t: ms.prod(t, 0, mask=m2), lambda t: ms.logsumexp(t, 1, mask=m2)]:
        assert ember.autograd.gradcheck(f, (x,))


def test_errors():
    x = make("float32")
    raises_like(lambda L, a: L.masked.sum(a, 2), x)
    raises_like(lambda L, a: L.masked.sum(a, (0, 0)), x)
    raises_like(lambda L, a: L.masked.sum(a, 1, mask=L.ones(2, 3, 4, dtype=L.bool)), x)
    raises_like(lambda L, a: L.masked.sum(a, 1, mask=L.ones(2, dtype=L.bool)), x)
    raises_like(lambda L, a: L.masked.softmax(a, 3), x)
    raises_like(lambda L, a: L.masked.amax(a.bool(), 1, mask=L.ones(4, dtype=L.bool)), x)
    raises_like(lambda L, a: L.masked.amax(a.to(L.complex64), 1, mask=L.ones(4, dtype=L.bool)), x)
    with pytest.raises(TypeError):
        ember.masked.sum([1.0, 2.0])
