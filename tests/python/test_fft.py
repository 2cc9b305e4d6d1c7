"""ember.fft against torch 1.13 (and NumPy's numpy.fft): every function, norm mode, n / s, dims
(negative, repeated), layouts (transposed, strided, broadcast), zero-size and 0-dim inputs,
dtypes (real, complex, integer promoted; half precision rejected), out=, bad input by exception
type, and first and second derivatives (reverse and forward mode) by finite differences."""

import numpy as np
import pytest
import torch

import ember
import ember.fft  # noqa: F401
from _oracle import check, make, raises_like, tensors_from

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
NORMS = [None, "backward", "ortho", "forward"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def tol(dtype):
    if dtype in ("float32", "complex64", "int64"):
        return {"rtol": 1e-4, "atol": 1e-4}
    return {"rtol": 1e-10, "atol": 1e-10}


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "int64":
        return rng.integers(-5, 6, shape).astype(np.int64)
    v = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def pair(shape, dtype, seed=0):
    return tensors_from(rand(shape, dtype, seed), dtype)


# ---- values against torch ----

@pytest.mark.parametrize("fn", ONE_D)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
def test_one_dim(fn, dtype):
    x = pair((3, 8), dtype)
    for norm in NORMS:
        for n in [None, 1, 5, 8, 11]:
            for dim in [-1, 0, 1]:
                check(lambda L, x: getattr(L.fft, fn)(x, n=n, dim=dim, norm=norm), x,
                      what=f"{fn} n={n} dim={dim} norm={norm}", key=(fn, dtype, n, dim),
                      **tol(dtype))


@pytest.mark.parametrize("fn", ONE_D)
@pytest.mark.parametrize("layout", ["transposed", "strided", "broadcast"])
def test_one_dim_layouts(fn, layout):
    for dtype in ["float64", "complex128"]:
        x = make(dtype, layout, shape=(4, 6))
        for dim in [0, 1]:
            check(lambda L, x: getattr(L.fft, fn)(x, dim=dim), x, what=f"{fn} {layout} {dtype}",
                  key=(fn, dtype), **tol(dtype))


@pytest.mark.parametrize("fn", TWO_D + N_D)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_multi_dim(fn, dtype):
    x = pair((4, 5, 6), dtype, seed=1)
    nd = fn.endswith("n")
    cases = [({}, "default"), ({"s": (3, 8)}, "s"), ({"s": (-1, 4)}, "s=-1"),
             ({"dim": (0, 2)}, "dim"), ({"dim": (-1, 0)}, "dim reversed"),
             ({"s": (2, 7), "dim": (2, 0)}, "s and dim"), ({"dim": (-2,), "s": (9,)}, "one dim")]
    if nd:
        cases += [({"dim": (0, 1, 2)}, "all"), ({"s": (3, 3, 3)}, "s all"), ({"dim": 1}, "int")]
    for kw, what in cases:
        for norm in NORMS:
            check(lambda L, x: getattr(L.fft, fn)(x, norm=norm, **kw), x,
                  what=f"{fn} {what} norm={norm}", key=(fn, dtype, what), **tol(dtype))


@pytest.mark.parametrize("fn", TWO_D + N_D)
def test_multi_dim_layouts(fn):
    for dtype in ["float64", "complex128"]:
        for layout in ["transposed", "strided", "broadcast"]:
            x = make(dtype, layout, shape=(4, 6))
            check(lambda L, x: getattr(L.fft, fn)(x), x, what=f"{fn} {layout}",
                  key=(fn, dtype), **tol(dtype))


def test_integer_and_bool_inputs_promote():
    for dtype in ["int64", "int32", "uint8", "bool"]:
        x = make(dtype, shape=(3, 4))
        for fn in ["fft", "rfft", "ihfft", "fftn", "rfftn", "ihfft2", "irfft", "hfft"]:
            check(lambda L, x: getattr(L.fft, fn)(x), x, what=f"{fn} {dtype}",
                  key=(fn, dtype), **tol("float32"))


def test_default_dtype_float64():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.fft.fft(ember.arange(4)).dtype == ember.complex128
        assert ember.fft.rfft(ember.arange(4)).dtype == ember.complex128
        assert ember.fft.irfft(ember.arange(4)).dtype == ember.float64
        assert ember.fft.fftfreq(4).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


# ---- against NumPy ----

@pytest.mark.parametrize("fn", ONE_D + ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
                                        "rfftn", "irfftn"])
def test_numpy(fn):
    rng = np.random.default_rng(3)
    for dtype in ["float64", "complex128"]:
        if fn in REAL_INPUT and dtype == "complex128":
            continue
        a = rng.standard_normal((4, 6)) + (1j * rng.standard_normal((4, 6))
                                           if dtype == "complex128" else 0)
        for norm in NORMS:
            r = getattr(ember.fft, fn)(ember.from_numpy(a.copy()), norm=norm)
            e = getattr(np.fft, fn)(a, norm=norm)
            np.testing.assert_allclose(r.resolve_conj().numpy(), e, rtol=1e-10, atol=1e-10,
                                       err_msg=f"{fn} {dtype} {norm}")


def test_round_trips():
    x = ember.from_numpy(rand((5, 7), "complex128"))
    r = ember.from_numpy(rand((5, 7), "float64"))
    for norm in NORMS:
        assert ember.allclose(ember.fft.ifft(ember.fft.fft(x, norm=norm), norm=norm), x)
        assert ember.allclose(ember.fft.ifftn(ember.fft.fftn(x, norm=norm), norm=norm), x)
        assert ember.allclose(ember.fft.irfft(ember.fft.rfft(r, norm=norm), n=7, norm=norm), r)
        assert ember.allclose(ember.fft.irfftn(ember.fft.rfftn(r, norm=norm), s=(5, 7),
                                               norm=norm), r)
        assert ember.allclose(ember.fft.hfft(ember.fft.ihfft(r, norm=norm), n=7, norm=norm), r)
        assert ember.allclose(ember.fft.hfftn(ember.fft.ihfftn(r, norm=norm), s=(5, 7),
                                              norm=norm), r)


def test_ihfft_is_lazy_conjugate():
    x = ember.from_numpy(rand((6,), "float64"))
    assert ember.fft.ihfft(x).is_conj() == torch.fft.ihfft(torch.from_numpy(x.numpy())).is_conj()


# ---- zero-size and 0-dim ----

def test_zero_size():
    cases = [
        (lambda L, x: L.fft.fft(x, dim=0), (3, 0), "complex64"),
        (lambda L, x: L.fft.fft(x, dim=1), (0, 4), "float32"),
        (lambda L, x: L.fft.fft(x, n=4), (0,), "float32"),
        (lambda L, x: L.fft.fft(x), (0,), "float32"),
        (lambda L, x: L.fft.rfft(x), (0,), "float32"),
        (lambda L, x: L.fft.rfft(x, dim=1), (0, 4), "float64"),
        (lambda L, x: L.fft.irfft(x, dim=1), (0, 4), "complex64"),
        (lambda L, x: L.fft.irfft(x), (0,), "complex64"),
        (lambda L, x: L.fft.fftn(x), (2, 0), "complex128"),
        (lambda L, x: L.fft.rfftn(x, dim=(1,)), (0, 4), "float64"),
        (lambda L, x: L.fft.hfftn(x, dim=(1,)), (0, 4), "complex128"),
        (lambda L, x: L.fft.ihfftn(x, dim=(1,)), (0, 4), "float64"),
        (lambda L, x: L.fft.fftshift(x), (0, 3), "float32"),
    ]
    for i, (f, shape, dtype) in enumerate(cases):
        check(f, pair(shape, dtype), what=f"case {i} {shape} {dtype}", key=i)


def test_no_dims_transforms_nothing():
    # torch 1.13 returns uninitialised memory here; NumPy returns the (complex) input.
    a = rand((3, 4), "float64")
    for kw in [{"dim": ()}, {"s": ()}]:
        r = ember.fft.fftn(ember.from_numpy(a.copy()), **kw)
        assert r.dtype == ember.complex128
        np.testing.assert_array_equal(r.numpy(), np.fft.fftn(a, axes=()))


def test_zero_dim_raises():
    x = make("float32", "scalar")
    for fn in ONE_D + TWO_D + ["fftn", "rfftn", "irfftn", "hfftn", "ihfftn"]:
        raises_like(lambda L, x: getattr(L.fft, fn)(x), x, key=fn)
    raises_like(lambda L, x: L.fft.fftshift(x), x, key="shift")


# ---- bad input ----

def test_bad_arguments():
    x = pair((3, 4), "float32")
    z = pair((3, 4), "complex64")
    cases = [
        (lambda L, x: L.fft.fft(x, norm="bad"), x),
        (lambda L, x: L.fft.fft(x, norm="Ortho"), x),
        (lambda L, x: L.fft.fftn(x, norm="bad"), x),
        (lambda L, x: L.fft.fft(x, n=0), x),
        (lambda L, x: L.fft.fft(x, n=-1), x),
        (lambda L, x: L.fft.irfft(x, n=0), x),
        (lambda L, x: L.fft.irfft(x[:, :1]), x),
        (lambda L, x: L.fft.fft(x, dim=2), x),
        (lambda L, x: L.fft.fft(x, dim=-3), x),
        (lambda L, x: L.fft.fftn(x, dim=(0, 0)), x),
        (lambda L, x: L.fft.fftn(x, dim=(1, -1)), x),
        (lambda L, x: L.fft.fftshift(x, dim=5), x),
        (lambda L, x: L.fft.fftn(x, s=(2,), dim=(0, 1)), x),
        (lambda L, x: L.fft.fftn(x, s=(2, 3, 4)), x),
        (lambda L, x: L.fft.fftn(x, s=(0, 3)), x),
        (lambda L, x: L.fft.fft2(x[0]), x),
        (lambda L, x: L.fft.rfftn(x, dim=()), x),
        (lambda L, x: L.fft.irfftn(x, dim=()), x),
        (lambda L, x: L.fft.hfftn(x, dim=()), x),
        (lambda L, x: L.fft.ihfftn(x, dim=()), x),
        (lambda L, x: L.fft.rfft(x), z),
        (lambda L, x: L.fft.ihfft(x), z),
        (lambda L, x: L.fft.rfftn(x), z),
        (lambda L, x: L.fft.rfft2(x), z),
        (lambda L, x: L.fft.fft(x.half()), x),
        (lambda L, x: L.fft.fft(x.bfloat16()), x),
        (lambda L, x: L.fft.rfft(x.half()), x),
        (lambda L, x: L.fft.irfft(x.half()), x),
        (lambda L, x: L.fft.fftn(x.half()), x),
        (lambda L, x: L.fft.fft([1.0, 2.0]), x),
    ]
    for i, (f, a) in enumerate(cases):
        raises_like(f, a, key=i)


# ---- out= ----

def test_out():
    x = pair((3, 4), "float32")
    z = pair((3, 4), "complex128")
    cases = [
        (lambda L, x: L.fft.fft(x, out=L.empty(0, dtype=L.complex64)), x),
        (lambda L, x: L.fft.fft(x, out=L.empty(3, 4, dtype=L.complex128)), x),
        (lambda L, x: L.fft.rfft(x, out=L.empty(0, dtype=L.complex64)), x),
        (lambda L, x: L.fft.irfft(x, out=L.empty(0, dtype=L.float32)), z),
        (lambda L, x: L.fft.irfftn(x, out=L.empty(0, dtype=L.float64)), z),
        (lambda L, x: L.fft.fftn(x, s=(2, 2), out=L.empty(2, 2, dtype=L.complex128)), z),
        (lambda L, x: L.fft.hfft2(x, out=L.empty(0, dtype=L.float64)), z),
        (lambda L, x: L.fft.ihfftn(x, out=L.empty(0, dtype=L.complex64)), x),
        (lambda L, x: L.fft.fftfreq(5, out=L.empty(0)), x),
        (lambda L, x: L.fft.rfftfreq(5, 0.5, out=L.empty(0, dtype=L.float64)), x),
    ]
    for i, (f, a) in enumerate(cases):
        check(f, a, what=f"out case {i}", **tol("complex64"))
    # The out tensor itself is returned, resized from empty.
    o = ember.empty(0, dtype=ember.complex64)
    r = ember.fft.fft(x[0], out=o)
    assert r is o and tuple(o.shape) == (3, 4)
    for i, (f, a) in enumerate([
        (lambda L, x: L.fft.fft(x, out=L.empty(3, 4)), x),
        (lambda L, x: L.fft.rfft(x, out=L.empty(3, 3)), x),
        (lambda L, x: L.fft.fft(x, out=L.empty(3, 4, dtype=L.int64)), x),
        (lambda L, x: L.fft.irfft(x, out=L.empty(3, 6, dtype=L.complex64)), z),
        (lambda L, x: L.fft.fftfreq(4, out=L.empty(4, dtype=L.int64)), x),
    ]):
        raises_like(f, a, key=("out", i))


# ---- frequencies and shifts ----

def test_fftfreq():
    for n in [0, 1, 2, 5, 8]:
        for d in [1.0, 0.25, 3]:
            for fn in ["fftfreq", "rfftfreq"]:
                for dtype in [None, "float64"]:
                    def f(L):
                        kw = {} if dtype is None else {"dtype": getattr(L, dtype)}
                        return getattr(L.fft, fn)(n, d, **kw)
                    check(f, what=f"{fn} {n} {d} {dtype}")
    r = ember.fft.fftfreq(4, dtype=ember.float64, requires_grad=True)
    assert r.requires_grad and r.is_leaf
    for i, f in enumerate([lambda L: L.fft.fftfreq(-1), lambda L: L.fft.fftfreq(3, dtype=L.int64),
                           lambda L: L.fft.rfftfreq(3, dtype=L.int32)]):
        raises_like(f, key=("freq", i))


def test_shifts():
    x = pair((4, 5, 3), "float32")
    for dim in [None, 0, 1, -1, (0, 2), (-1, 1), (0, 0), [1]]:
        for fn in ["fftshift", "ifftshift"]:
            check(lambda L, x: getattr(L.fft, fn)(x, dim=dim), x, what=f"{fn} {dim}")
    t = make("complex64", "strided", shape=(3, 4))
    check(lambda L, x: L.fft.ifftshift(L.fft.fftshift(x)), t, what="strided")
    raises_like(lambda L, x: L.fft.fftshift(x, dim=()), x, key="empty dims")


# ---- derivatives ----

GRAD_CASES = [
    ("fft", {}), ("fft", {"n": 5, "norm": "ortho"}), ("ifft", {"n": 9, "dim": 0}),
    ("rfft", {}), ("rfft", {"n": 5, "norm": "forward"}), ("irfft", {}),
    ("irfft", {"n": 7, "dim": 0}), ("hfft", {"n": 6}), ("ihfft", {"norm": "ortho"}),
    ("fft2", {}), ("ifft2", {"s": (3, 5)}), ("rfft2", {"dim": (1, 0)}), ("irfft2", {}),
    ("irfft2", {"dim": (1, 0), "s": (4, 5)}), ("hfft2", {}), ("ihfft2", {"dim": (1, 0)}),
    ("fftn", {"dim": (0,)}), ("ifftn", {"norm": "forward"}), ("rfftn", {"s": (4, 4)}),
    ("irfftn", {"s": (3, 5)}), ("hfftn", {"norm": "ortho"}), ("ihfftn", {}),
]


@pytest.mark.parametrize("fn,kw", GRAD_CASES, ids=[f"{f}-{i}" for i, (f, _) in
                                                   enumerate(GRAD_CASES)])
def test_gradients(fn, kw):
    f = getattr(ember.fft, fn)
    dtypes = ["float64"] if fn in REAL_INPUT else ["float64", "complex128"]
    for dtype in dtypes:
        x = ember.from_numpy(rand((4, 3), dtype, seed=5)).requires_grad_(True)
        assert ember.autograd.gradcheck(lambda x: f(x, **kw), (x,), check_forward_ad=True)
        assert ember.autograd.gradgradcheck(lambda x: f(x, **kw), (x,))


def test_gradients_match_torch():
    # The vjp for one fixed output gradient, against torch's.
    for fn, kw in GRAD_CASES:
        dtype = "float64" if fn in REAL_INPUT else "complex128"
        a = rand((4, 3), dtype, seed=7)
        te = torch.from_numpy(a.copy()).requires_grad_(True)
        ee = ember.from_numpy(a.copy()).requires_grad_(True)
        tout = getattr(torch.fft, fn)(te, **kw)
        g = rand(tuple(tout.shape), "complex128" if tout.is_complex() else "float64", seed=8)
        tout.backward(torch.from_numpy(g.copy()))
        getattr(ember.fft, fn)(ee, **kw).backward(ember.from_numpy(g.copy()))
        np.testing.assert_allclose(ee.grad.numpy(), te.grad.numpy(), rtol=1e-10, atol=1e-10,
                                   err_msg=f"{fn} {kw}")

