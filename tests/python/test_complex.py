"""Complex views and constructors (view_as_real, view_as_complex, complex, polar, angle) and
complex32 (torch.chalf) against torch 1.13: values, strides and storage sharing, errors by
exception type, first and second derivatives, forward AD."""

import math

import numpy as np
import pytest
import torch

import ember
import ember.autograd.forward_ad as efwAD

pytestmark = [
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),  # NumPy comparing inf/NaN
    pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental"),
    pytest.mark.filterwarnings("ignore:Casting complex values to real"),
]

RNG = np.random.default_rng(7)
LIBS = (ember, torch)


def name(dtype):
    return str(dtype).split(".")[-1]


def np_of(t):
    """NumPy copy of an ember or torch tensor; complex32 and float16/bfloat16 go through wider
    types (every value is exact there)."""
    t = t.detach()
    if name(t.dtype) == "complex32":
        t = t.cfloat()
    elif name(t.dtype) == "bfloat16":
        t = t.float()
    return np.array(t.resolve_conj().numpy())


def both(arr, dtype=None):
    """The same values as an ember and a torch tensor."""
    e, t = ember.from_numpy(np.array(arr)), torch.from_numpy(np.array(arr))
    if dtype is not None:
        e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
    return e, t


def check(e, t, rtol=1e-6, atol=1e-6):
    assert name(e.dtype) == name(t.dtype), (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(np_of(e), np_of(t), rtol=rtol, atol=atol, equal_nan=True)


def raises_like(fn_e, fn_t):
    """Both libraries raise, with the same exception type; returns ember's message."""
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(Exception) as ee:
        fn_e()
    assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    return str(ee.value)


def cplx(shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


# Layouts built the same way in both libraries from one contiguous base.
LAYOUTS = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.transpose(0, 1),
    "strided": lambda x: x[:, ::2],
    "offset": lambda x: x[1:, 1:],
    "expanded": lambda x: x[:1].expand(3, 4),
}


# ---- view_as_real ----

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_view_as_real_matches_torch(dtype, layout):
    e, t = both(cplx((3, 4), dtype))
    ve, vt = ember.view_as_real(LAYOUTS[layout](e)), torch.view_as_real(LAYOUTS[layout](t))
    check(ve, vt, 0, 0)
    assert ve.stride() == vt.stride()
    assert ve.storage_offset() == vt.storage_offset()


def test_view_as_real_shares_storage():
    e = ember.from_numpy(cplx((2, 3)))
    v = ember.view_as_real(e)
    v[0, 1, 1] = 5.0  # imaginary part of e[0, 1]
    assert e[0, 1].item().imag == 5.0
    e[1, 2] = 7 - 2j
    assert v[1, 2].tolist() == [7.0, -2.0]
    assert v._version == e._version


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (1,)])
def test_view_as_real_shapes(shape):
    e, t = both(cplx(shape))
    ve, vt = ember.view_as_real(e), torch.view_as_real(t)
    check(ve, vt, 0, 0)
    assert ve.stride() == vt.stride()


def test_view_as_real_errors():
    e, t = both(np.ones(3, np.float32))
    raises_like(lambda: ember.view_as_real(e), lambda: torch.view_as_real(t))
    e, t = both(cplx(3))
    msg = raises_like(lambda: ember.view_as_real(e.conj()), lambda: torch.view_as_real(t.conj()))
    assert "conj" in msg
    for bad in (1.0, None):
        with pytest.raises(TypeError):
            ember.view_as_real(bad)


# ---- view_as_complex ----

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_view_as_complex_matches_torch(dtype):
    e, t = both(RNG.standard_normal((4, 3, 2)), dtype)
    for f in (lambda x: x, lambda x: x[::2], lambda x: x[:, 1:], lambda x: x[1:3, ::2],
              lambda x: x[0], lambda x: x[0, 0]):
        ve, vt = ember.view_as_complex(f(e)), torch.view_as_complex(f(t))
        check(ve, vt, 0, 0)
        assert ve.stride() == vt.stride()
        assert ve.storage_offset() == vt.storage_offset()


def test_view_as_complex_shares_storage_and_roundtrips():
    e = ember.from_numpy(RNG.standard_normal((3, 2)).astype(np.float32))
    z = ember.view_as_complex(e)
    z[1] = 3 + 4j
    assert e[1].tolist() == [3.0, 4.0]
    e[2, 1] = -1.5
    assert z[2].item().imag == -1.5
    back = ember.view_as_real(z)
    assert back.shape == e.shape and back.stride() == e.stride()
    assert back.data_ptr() == e.data_ptr()


def test_view_as_complex_edge_shapes():
    cases = [
        lambda L: L.ones(0, 2),                       # zero-size
        lambda L: L.ones(2),                          # 1-dim -> 0-dim
        lambda L: L.ones(2).expand(3, 2),             # stride 0 on the leading dim
        lambda L: L.arange(10.)[2:].view(4, 2),       # even storage offset
        lambda L: L.zeros(2, 0, 2),
    ]
    for make in cases:
        ve, vt = ember.view_as_complex(make(ember)), torch.view_as_complex(make(torch))
        check(ve, vt, 0, 0)
        assert ve.stride() == vt.stride()


@pytest.mark.parametrize("make, fragment", [
    (lambda L: L.ones(3, 2, dtype=L.int64), "half, float and double"),
    (lambda L: L.ones(3, 2, dtype=L.bfloat16), "half, float and double"),
    (lambda L: L.ones(3, 2, dtype=L.complex64), "half, float and double"),
    (lambda L: L.tensor(1.0), "one or more dimensions"),
    (lambda L: L.ones(3, 3), "last dimension of size 2"),
    (lambda L: L.ones(2, 4)[:, ::2], "last dimension with stride 1"),
    (lambda L: L.ones(2, 2).t(), "last dimension with stride 1"),
    (lambda L: L.ones(2, 3)[:, :2], "divisible by 2"),
    (lambda L: L.ones(0, 3)[:, :2], "divisible by 2"),
    (lambda L: L.ones(1, 3)[:, :2], "divisible by 2"),
    (lambda L: L.ones(9)[1:].view(4, 2), "storage_offset divisible by 2"),
])
def test_view_as_complex_errors(make, fragment):
    msg = raises_like(lambda: ember.view_as_complex(make(ember)),
                      lambda: torch.view_as_complex(make(torch)))
    assert fragment in msg


# ---- complex ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_values_and_broadcast(dtype):
    inf, nan = float("inf"), float("nan")
    re = np.array([[1.0, -0.0, inf], [nan, 2.5, -inf]])
    im = np.array([inf, -2.0, nan])
    (ere, tre), (eim, tim) = both(re, dtype), both(im, dtype)
    check(ember.complex(ere, eim), torch.complex(tre, tim), 0, 0)
    check(ember.complex(ere.t(), eim[:, None]), torch.complex(tre.t(), tim[:, None]), 0, 0)
    # 0-dim and zero-size
    e0, t0 = both(np.array(1.5), dtype)
    check(ember.complex(e0, eim), torch.complex(t0, tim), 0, 0)
    check(ember.complex(e0, e0), torch.complex(t0, t0), 0, 0)
    ez, tz = both(np.zeros((0, 3)), dtype)
    check(ember.complex(ez, eim), torch.complex(tz, tim), 0, 0)


def test_complex_half_gives_complex32():
    (ere, tre), (eim, tim) = both([1.5, -2.0], "float16"), both([0.25, 3.0], "float16")
    r = ember.complex(ere, eim)
    check(r, torch.complex(tre, tim), 0, 0)
    assert r.dtype == ember.complex32


@pytest.mark.parametrize("a, b", [
    ("int64", "int64"), ("float32", "float64"), ("bfloat16", "bfloat16"),
    ("complex64", "complex64"), ("float64", "float32"), ("bool", "bool"),
])
def test_complex_dtype_errors(a, b):
    (ea, ta), (eb, tb) = both([1, 2], a), both([1, 2], b)
    raises_like(lambda: ember.complex(ea, eb), lambda: torch.complex(ta, tb))


def test_complex_argument_errors():
    e, t = both([1.0, 2.0], "float32")
    raises_like(lambda: ember.complex(e, 1.0), lambda: torch.complex(t, 1.0))
    e3, t3 = both([1.0, 2.0, 3.0], "float32")
    raises_like(lambda: ember.complex(e, e3), lambda: torch.complex(t, t3))


def test_complex_out():
    e, t = both([1.0, 2.0], "float32")
    oe, ot = ember.empty(0, dtype=ember.complex64), torch.empty(0, dtype=torch.complex64)
    re_, rt_ = ember.complex(e, e, out=oe), torch.complex(t, t, out=ot)
    assert re_ is oe
    check(oe, ot, 0, 0)
    for dt in ("complex128", "float32"):
        raises_like(lambda: ember.complex(e, e, out=ember.empty(2, dtype=getattr(ember, dt))),
                    lambda: torch.complex(t, t, out=torch.empty(2, dtype=getattr(torch, dt))))


# ---- polar ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polar_values(dtype):
    r = np.array([[0.0, 1.0, 2.5], [3.0, 0.5, float("inf")]])
    th = np.array([0.0, math.pi / 2, -2.0])
    (er, tr), (eth, tth) = both(r, dtype), both(th, dtype)
    check(ember.polar(er, eth), torch.polar(tr, tth), 1e-6, 1e-6)
    check(ember.polar(er.t(), eth[:, None]), torch.polar(tr.t(), tth[:, None]), 1e-6, 1e-6)
    ez, tz = both(np.zeros((0,)), dtype)
    check(ember.polar(ez, ez), torch.polar(tz, tz))


def test_polar_errors_and_out():
    for a, b in (("int64", "int64"), ("float32", "float64"), ("float16", "float16")):
        (ea, ta), (eb, tb) = both([1, 2], a), both([1, 2], b)
        raises_like(lambda: ember.polar(ea, eb), lambda: torch.polar(ta, tb))
    e, t = both([1.0, 2.0], "float64")
    oe = ember.empty(2, dtype=ember.complex128)
    assert ember.polar(e, e, out=oe) is oe
    check(oe, torch.polar(t, t))
    raises_like(lambda: ember.polar(e, e, out=ember.empty(2, dtype=ember.complex64)),
                lambda: torch.polar(t, t, out=torch.empty(2, dtype=torch.complex64)))


# ---- angle ----

SPECIAL = [1.0, -1.0, 0.0, -0.0, float("nan"), float("inf"), -float("inf"), 2.5, -3.25]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_angle_real(dtype):
    e, t = both(np.array(SPECIAL), dtype)
    check(ember.angle(e), torch.angle(t), 0, 1e-3)
    check(e.angle(), t.angle(), 0, 1e-3)
    check(ember.angle(e[::2]), torch.angle(t[::2]), 0, 1e-3)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64"])
def test_angle_integers_give_default_float(dtype):
    e, t = both(np.array([1, 0, 1, 1]) if dtype == "bool" else np.array([3, 0, -2, 1]), dtype)
    if dtype == "uint8":
        e, t = both(np.array([3, 0, 2, 1]), dtype)
    check(ember.angle(e), torch.angle(t))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_angle_complex(dtype):
    z = np.array([1 + 1j, -1 + 0j, 0j, complex(-0.0, 0.0), complex(0.0, -0.0),
                  complex(-0.0, -0.0), complex(float("nan"), 0), complex(float("inf"), 1),
                  -2 - 3j], dtype=dtype)
    e, t = both(z)
    check(ember.angle(e), torch.angle(t), 1e-6, 1e-6)
    check(ember.angle(e.conj()), torch.angle(t.conj()), 1e-6, 1e-6)
    e2, t2 = both(cplx((3, 4), dtype))
    check(ember.angle(e2.t()), torch.angle(t2.t()), 1e-6, 1e-6)
    e0, t0 = both(np.array(1 - 1j, dtype=dtype))
    check(ember.angle(e0), torch.angle(t0), 1e-6, 1e-6)


def test_angle_out():
    ez, tz = both(np.array([1 + 1j, -1j], np.complex64))
    er, tr = both(np.array([1.0, -1.0], np.float32))
    for (x, y) in ((ez, tz), (er, tr)):
        for dt in ("float32", "float64", "complex64"):
            oe = ember.empty(2, dtype=getattr(ember, dt))
            ot = torch.empty(2, dtype=getattr(torch, dt))
            assert ember.angle(x, out=oe) is oe
            torch.angle(y, out=ot)
            check(oe, ot)
        raises_like(lambda: ember.angle(x, out=ember.empty(2, dtype=ember.int64)),
                    lambda: torch.angle(y, out=torch.empty(2, dtype=torch.int64)))


def test_angle_complex32_unsupported():
    e = ember.ones(2, dtype=ember.complex32)
    t = torch.ones(2, dtype=torch.complex32)
    raises_like(lambda: ember.angle(e), lambda: torch.angle(t))


# ---- derivatives ----

def leaf(arr):
    return ember.from_numpy(np.array(arr)).requires_grad_()


def grad_pair(fe, ft, arr_list, grad_out):
    xe = [leaf(a) for a in arr_list]
    xt = [torch.from_numpy(np.array(a)).requires_grad_() for a in arr_list]
    ge = ember.autograd.grad(fe(*xe), xe, ember.from_numpy(np.array(grad_out)))
    gt = torch.autograd.grad(ft(*xt), xt, torch.from_numpy(np.array(grad_out)))
    for a, b in zip(ge, gt):
        check(a, b, 1e-10, 1e-12)


def test_grads_match_torch():
    z = cplx((3, 2), np.complex128)
    r = RNG.standard_normal((3, 2, 2))
    grad_pair(ember.view_as_real, torch.view_as_real, [z], RNG.standard_normal((3, 2, 2)))
    grad_pair(ember.view_as_complex, torch.view_as_complex, [r], cplx((3, 2), np.complex128))
    a, b = RNG.standard_normal((3, 1)), RNG.standard_normal(4)
    grad_pair(ember.complex, torch.complex, [a, b], cplx((3, 4), np.complex128))
    grad_pair(ember.polar, torch.polar, [np.abs(a) + 0.1, b], cplx((3, 4), np.complex128))
    # angle: 0 at 0 (complex), 0 everywhere for real inputs, NaN included
    zz = np.array([0j, 1 + 1j, -2 + 0j, 0.5 - 3j])
    grad_pair(ember.angle, torch.angle, [zz], RNG.standard_normal(4))
    xr = np.array([0.0, -1.0, float("nan"), 2.0, -float("inf")])
    grad_pair(ember.angle, torch.angle, [xr], RNG.standard_normal(5))


def test_angle_real_is_differentiable_with_zero_grad():
    x = leaf([1.0, -2.0])
    y = ember.angle(x)
    assert y.requires_grad
    (g,) = ember.autograd.grad(y.sum(), x)
    assert g.tolist() == [0.0, 0.0]


GRAD_CASES = {
    "view_as_real": (ember.view_as_real, lambda: [cplx((2, 3), np.complex128)]),
    "view_as_real_strided": (lambda z: ember.view_as_real(z[:, ::2]),
                             lambda: [cplx((2, 4), np.complex128)]),
    "view_as_complex": (ember.view_as_complex, lambda: [RNG.standard_normal((3, 2))]),
    "view_as_complex_sliced": (lambda x: ember.view_as_complex(x[::2]),
                               lambda: [RNG.standard_normal((4, 3, 2))]),
    "complex": (ember.complex, lambda: [RNG.standard_normal((2, 1)), RNG.standard_normal(3)]),
    "polar": (ember.polar, lambda: [np.abs(RNG.standard_normal(4)) + 0.2,
                                    RNG.standard_normal(4)]),
    "angle_complex": (ember.angle, lambda: [cplx((2, 3), np.complex128)]),
    "angle_real": (ember.angle, lambda: [RNG.standard_normal(5) + 0.3]),
    "roundtrip": (lambda z: ember.view_as_complex(ember.view_as_real(z) * 2.0),
                  lambda: [cplx(4, np.complex128)]),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradcheck(case):
    fn, make = GRAD_CASES[case]
    xs = tuple(leaf(a) for a in make())
    assert ember.autograd.gradcheck(fn, xs, check_forward_ad=True)
    assert ember.autograd.gradgradcheck(fn, xs)


def test_forward_ad_matches_torch():
    import torch.autograd.forward_ad as tfwAD
    z, dz = cplx((2, 3), np.complex128), cplx((2, 3), np.complex128)
    r, dr = RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 2))
    cases = [
        (ember.view_as_real, torch.view_as_real, z, dz),
        (ember.view_as_complex, torch.view_as_complex, r, dr),
        (ember.angle, torch.angle, z, dz),
        (ember.angle, torch.angle, np.array([0.0, -1.0, 2.0]), np.ones(3)),
    ]
    for fe, ft, p, d in cases:
        with efwAD.dual_level():
            ye = fe(efwAD.make_dual(ember.from_numpy(p), ember.from_numpy(d)))
            pe, te = efwAD.unpack_dual(ye)
        with tfwAD.dual_level():
            yt = ft(tfwAD.make_dual(torch.from_numpy(p), torch.from_numpy(d)))
            pt, tt = tfwAD.unpack_dual(yt)
        check(pe, pt, 1e-12, 1e-12)
        check(te, tt, 1e-10, 1e-12)


def test_vmap_matches_torch():
    import ember.func as ef
    z, x = cplx((4, 3), np.complex128), RNG.standard_normal((4, 3, 2))
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    (ez, tz), (ex, tx), (ea, ta), (eb, tb) = both(z), both(x), both(a), both(b)
    check(ef.vmap(ember.view_as_real)(ez), torch.view_as_real(tz), 0, 0)
    check(ef.vmap(ember.view_as_real, in_dims=1)(ez), torch.view_as_real(tz.t()), 0, 0)
    check(ef.vmap(ember.view_as_complex)(ex), torch.view_as_complex(tx), 0, 0)
    check(ef.vmap(ember.complex)(ea, eb), torch.complex(ta, tb), 0, 0)
    check(ef.vmap(ember.complex, in_dims=(0, None))(ea, eb[0]), torch.complex(ta, tb[0]), 0, 0)
    check(ef.vmap(ember.polar)(ea, eb), torch.polar(ta, tb), 1e-12, 1e-12)
    check(ef.vmap(ember.angle)(ez), torch.angle(tz), 1e-12, 1e-12)
    check(ef.vmap(ember.angle)(ea), torch.angle(ta), 0, 0)


# ---- complex32 ----

def test_complex32_dtype_object():
    assert ember.chalf is ember.complex32
    assert ember.complex32.is_complex and not ember.complex32.is_floating_point
    assert ember.zeros(2, dtype=ember.chalf).element_size() == 4


def test_complex32_creation():
    vals = [1 + 2j, 3 - 1j, 0.1 + 1e-3j, 1e5 + 1j, complex(float("nan"), float("inf"))]
    check(ember.tensor(vals, dtype=ember.chalf), torch.tensor(vals, dtype=torch.chalf), 0, 0)
    check(ember.tensor(1 + 2j, dtype=ember.chalf), torch.tensor(1 + 2j, dtype=torch.chalf), 0, 0)
    for f in ("zeros", "ones"):
        check(getattr(ember, f)(2, 3, dtype=ember.chalf),
              getattr(torch, f)(2, 3, dtype=torch.chalf), 0, 0)
    for v in (1 + 1j, 2.0, 7, 1e6):
        check(ember.full((2,), v, dtype=ember.chalf), torch.full((2,), v, dtype=torch.chalf), 0, 0)
    e = ember.empty(3, dtype=ember.chalf)
    assert e.dtype == ember.complex32 and tuple(e.shape) == (3,)
    base_e, base_t = ember.tensor(vals[:3], dtype=ember.chalf), torch.tensor(vals[:3],
                                                                             dtype=torch.chalf)
    for f in ("zeros_like", "ones_like"):
        check(getattr(ember, f)(base_e), getattr(torch, f)(base_t), 0, 0)
    check(ember.full_like(base_e, 2 - 1j), torch.full_like(base_t, 2 - 1j), 0, 0)
    check(base_e.clone().fill_(0.5 + 0.5j), base_t.clone().fill_(0.5 + 0.5j), 0, 0)
    check(base_e.clone().zero_(), base_t.clone().zero_(), 0, 0)


def test_complex32_random():
    ember.manual_seed(0)
    r = ember.randn(2000, dtype=ember.chalf)
    assert r.dtype == ember.complex32
    v = np_of(r)
    # Real and imaginary parts are N(0, 1/2): the mean of |z|^2 is 1 (5 sigma: 0.11).
    assert abs(np.mean(np.abs(v) ** 2) - 1.0) < 0.11
    assert abs(v.real.mean()) < 5 * math.sqrt(0.5 / 2000)
    u = np_of(ember.rand(1000, dtype=ember.chalf))
    assert (u.real >= 0).all() and (u.real <= 1).all() and (u.imag >= 0).all()


ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", ALL)
def test_complex32_conversions(dtype):
    z = np.array([1.5 + 2j, -3 - 1j, 0j, 7.25 + 0.5j, 70000 + 1j], np.complex64)
    if dtype in ALL[:6]:
        z[4] = 100 - 1j  # inf (70000 in complex32) has no integer value
    ce, ct = both(z, "complex32")
    check(ce.to(getattr(ember, dtype)), ct.to(getattr(torch, dtype)), 0, 0)
    src = np.array([1, 0, 2, 3, 1]) if dtype in ("bool", "uint8") else np.array([1, 0, -2, 3, 5])
    if dtype.startswith("complex"):
        src = z
    elif dtype.startswith("float") or dtype == "bfloat16":
        src = np.array([1.5, -0.1, 1e5, float("inf"), float("nan")])
    se, st = both(src, dtype)
    check(se.to(ember.chalf), st.to(torch.chalf), 0, 0)
    check(se.chalf(), st.chalf(), 0, 0)
    # copy_ into a strided complex32 destination and from a strided complex32 source
    de, dt_ = ember.zeros(5, 2, dtype=ember.chalf), torch.zeros(5, 2, dtype=torch.chalf)
    de[:, 1].copy_(se)
    dt_[:, 1].copy_(st)
    check(de, dt_, 0, 0)
    check(de.t()[1].to(getattr(ember, dtype)), dt_.t()[1].to(getattr(torch, dtype)), 0, 0)


def test_complex32_views_and_item():
    e, t = both(np.array([[1 + 2j, 3 - 4j], [0.5j, -1]], np.complex64), "complex32")
    check(e.real, t.real, 0, 0)
    check(e.imag, t.imag, 0, 0)
    check(ember.view_as_real(e), torch.view_as_real(t), 0, 0)
    check(e.t().contiguous(), t.t().contiguous(), 0, 0)
    assert e[0, 1].item() == t[0, 1].item() == 3 - 4j
    assert e.conj()[0, 0].item() == 1 - 2j
    with pytest.raises(TypeError):
        e.numpy()
    with pytest.raises(TypeError):
        t.numpy()


def test_complex32_tolist():
    e, t = both(np.array([[1 + 2j, 3 - 4j], [0.5j, -1]], np.complex64), "complex32")
    assert e.tolist() == t.tolist()
    assert e.t()[1].tolist() == t.t()[1].tolist()


def test_complex32_autograd_cast():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    y = x.chalf()
    assert y.dtype == ember.complex32 and y.requires_grad
    (g,) = ember.autograd.grad(y.cfloat().real.sum(), x)
    assert g.tolist() == [1.0, 1.0]


PROMOTE = ["bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64", "complex32",
           "complex64", "complex128"]


@pytest.mark.parametrize("other", PROMOTE)
def test_complex32_promotion(other):
    assert name(ember.promote_types(ember.chalf, getattr(ember, other))) == name(
        torch.promote_types(torch.chalf, getattr(torch, other)))
    ze, zt = ember.ones(2, dtype=ember.chalf), torch.ones(2, dtype=torch.chalf)
    oe, ot = ember.ones(2, dtype=getattr(ember, other)), torch.ones(2, dtype=getattr(torch, other))
    assert name(ember.result_type(ze, oe)) == name(torch.result_type(zt, ot))
    assert name(ember.result_type(ze, oe[0])) == name(torch.result_type(zt, ot[0]))
    assert name(ember.result_type(ze[0], oe)) == name(torch.result_type(zt[0], ot))
    check(ze + oe, zt + ot, 0, 0)


def test_complex32_scalar_promotion():
    e, t = both(np.array([1 + 1j, 2 - 1j], np.complex64), "complex32")
    for s in (1.5, 2, True, 1j):
        check(e + s, t + s, 0, 0)
        check(e * s, t * s, 0, 0)
    h, th = both([1.0, 2.0], "float16")
    check(h * 1j, th * 1j, 0, 0)
    check(h * ember.tensor(1j), th * torch.tensor(1j), 0, 0)


def test_int_times_1j_under_float16_default():
    old = ember.get_default_dtype()
    oldt = torch.get_default_dtype()
    ember.set_default_dtype(ember.float16)
    torch.set_default_dtype(torch.float16)
    try:
        for s in (1j, 1 + 1j):
            check(ember.tensor([1, 2]) * s, torch.tensor([1, 2]) * s, 0, 0)
            check(ember.tensor([1, 2]) + s, torch.tensor([1, 2]) + s, 0, 0)
        check(ember.tensor([True, False]) * 1j, torch.tensor([True, False]) * 1j, 0, 0)
        r = ember.tensor([1, 2]) * 1j
        assert r.dtype == ember.complex32
        assert repr(r) == repr(torch.tensor([1, 2]) * 1j).replace("torch.", "ember.")
        check(ember.angle(ember.tensor([-1, 2])), torch.angle(torch.tensor([-1, 2])), 0, 1e-3)
        with pytest.raises(RuntimeError):
            ember.tensor([1 + 1j])
    finally:
        ember.set_default_dtype(old)
        torch.set_default_dtype(oldt)


def test_complex32_arithmetic():
    a = cplx((3, 4))
    b = cplx((4,))
    (ea, ta), (eb, tb) = both(a, "complex32"), both(b, "complex32")
    tol = dict(rtol=2e-3, atol=2e-3)
    check(ea + eb, ta + tb, **tol)
    check(ea - eb, ta - tb, **tol)
    check(ea * eb, ta * tb, **tol)
    check(ember.add(ea, eb, alpha=2), torch.add(ta, tb, alpha=2), **tol)
    check(ember.sub(ea.t(), eb[:3], alpha=2), torch.sub(ta.t(), tb[:3], alpha=2), **tol)
    check(-ea, -ta, 0, 0)
    check(ea.abs(), ta.abs(), **tol)
    check(ea.sgn(), ta.sgn(), **tol)
    check(ea.conj_physical(), ta.conj_physical(), 0, 0)
    check(ea.conj().resolve_conj(), ta.conj().resolve_conj(), 0, 0)
    for op in ("eq", "ne"):
        check(getattr(ea, op)(ea[0]), getattr(ta, op)(ta[0]), 0, 0)
    for op in ("isnan", "isinf", "isfinite", "isreal"):
        check(getattr(ea, op)(), getattr(ta, op)(), 0, 0)
    check(ember.isclose(ea, ea + 1e-4), torch.isclose(ta, ta + 1e-4), 0, 0)
    assert ember.allclose(ea, ea) and torch.allclose(ta, ta)
    cond_e, cond_t = both(RNG.random((3, 4)) < 0.5)
    check(ember.where(cond_e, ea, eb), torch.where(cond_t, ta, tb), 0, 0)
    # in place and out=
    xe, xt = ea.clone(), ta.clone()
    xe.add_(eb)
    xt.add_(tb)
    check(xe, xt, **tol)
    xe.mul_(eb)
    xt.mul_(tb)
    check(xe, xt, **tol)
    oe, ot = ember.empty(3, 4, dtype=ember.complex64), torch.empty(3, 4, dtype=torch.complex64)
    ember.add(ea, eb, out=oe)
    torch.add(ta, tb, out=ot)
    check(oe, ot, **tol)
    oe = ember.empty(3, 4, dtype=ember.chalf)
    ember.mul(ea.cfloat(), eb.cfloat(), out=oe)
    check(oe, torch.mul(ta.cfloat(), tb.cfloat(), out=torch.empty(3, 4, dtype=torch.chalf)), **tol)
    raises_like(lambda: ember.add(ea, eb, out=ember.empty(3, 4, dtype=ember.float16)),
                lambda: torch.add(ta, tb, out=torch.empty(3, 4, dtype=torch.float16)))
    # zero-size and 0-dim
    ze, zt = both(np.zeros((0, 4), np.complex64), "complex32")
    check(ze + eb, zt + tb, 0, 0)
    check(ea[1, 2] * ea[0, 0], ta[1, 2] * ta[0, 0], **tol)


@pytest.mark.parametrize("fn", [
    lambda x: x / x, lambda x: x.exp(), lambda x: x.sqrt(), lambda x: x.reciprocal(),
    lambda x: x ** 2, lambda x: x.tanh(), lambda x: x.log(), lambda x: x.sin(),
    lambda x: x.lt(x), lambda x: x.angle(), lambda x: x.sigmoid(),
])
def test_complex32_unsupported_ops_raise(fn):
    e, t = both(np.array([1 + 1j, 2 - 1j], np.complex64), "complex32")
    raises_like(lambda: fn(e), lambda: fn(t))


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([1 + 2j, 3.5 - 1j, 0.001 + 1e4j], dtype=L.chalf),
    lambda L: L.zeros(2, 3, dtype=L.chalf),
    lambda L: L.tensor(1 + 2j, dtype=L.chalf),
    lambda L: L.zeros(0, dtype=L.chalf),
    lambda L: L.tensor([complex(float("nan"), float("inf")), 1], dtype=L.chalf),
    lambda L: L.tensor([1 + 2j, 3.5 - 1j], dtype=L.chalf).real,
    lambda L: L.ones(2, requires_grad=True).chalf(),
])
def test_complex32_repr(make):
    assert repr(make(ember)) == repr(make(torch)).replace("torch.", "ember.")


def test_out_forms_run_inside_their_op():
    x = ember.tensor([1.0, -2.0])
    for f in (lambda: ember.angle(x, out=ember.empty(0)),
              lambda: ember.complex(x, x, out=ember.empty(0, dtype=ember.complex64)),
              lambda: ember.polar(x, x, out=ember.empty(0, dtype=ember.complex64))):
        names, uncovered, _, error = ember._C._call_path.trace(f)
        assert error is None and uncovered == 0, (names, uncovered, error)
