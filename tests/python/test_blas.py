"""Matrix products against torch 1.13: matmul (every 1-D / batched / broadcast rule), mm, bmm,
addmm, addmv, addr, addbmm, baddbmm, mv, dot, vdot, outer/ger, inner, tensordot, kron, cross,
linalg.cross, trace, chain_matmul, linalg.multi_dot, the @ operators; every dtype (float16 and
bfloat16 against torch in float32 where torch 1.13 has no kernel), transposed / strided /
broadcast / conjugated / zero-size operands, out= and in-place forms, and the errors."""

import math

import numpy as np
import pytest
import torch

import ember
import ember.linalg  # noqa: F401
import _oracle
from _oracle import COMPLEX, DTYPES, INTS, LOWP, check, make, raises_like

MM_DTYPES = [d for d in DTYPES if d != "bool"]
MAT_LAYOUTS = ["contiguous", "transposed", "strided", "broadcast"]


def check_lowp(fn, *args, dtype, what="", key=None):
    """check(); float16/bfloat16 against torch on float32 copies rounded once at the end:
    ember accumulates low-precision products in float32, while torch 1.13's bfloat16 kernel
    rounds partial sums."""
    if dtype in LOWP:
        re_, ee = _oracle.run(ember, fn, *args)
        if ee is not None:
            raise AssertionError(f"{what}: ember raised {type(ee).__name__}: {ee}") from ee
        _oracle.assert_same(re_, _oracle.upcast_oracle(fn, args, dtype), what=what + " (upcast)")
        return re_
    return check(fn, *args, what=what, key=key)


def pair(dtype, layout, shape, seed):
    return make(dtype, layout, seed=seed, shape=shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("la", MAT_LAYOUTS)
@pytest.mark.parametrize("lb", MAT_LAYOUTS)
def test_mm_layouts(dtype, la, lb):
    a = pair(dtype, la, (3, 4), 1)
    b = pair(dtype, lb, (4, 5), 2)
    key = ("mm", dtype)
    check_lowp(lambda L, x, y: L.mm(x, y), a, b, dtype=dtype, key=key)
    check_lowp(lambda L, x, y: x @ y, a, b, dtype=dtype, key=key)
    check_lowp(lambda L, x, y: L.matmul(x, y), a, b, dtype=dtype, key=key)
    check_lowp(lambda L, x, y: x.mm(y), a, b, dtype=dtype, key=key)
    check_lowp(lambda L, x, y: x.matmul(y), a, b, dtype=dtype, key=key)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_conj_operands(dtype):
    a = pair(dtype, "contiguous", (3, 4), 3)
    at = pair(dtype, "transposed", (3, 4), 4)
    b = pair(dtype, "contiguous", (4, 5), 5)
    bs = pair(dtype, "strided", (4, 5), 6)
    for x in (a, at):
        for y in (b, bs):
            check(lambda L, p, q: L.mm(p.conj(), q), x, y)
            check(lambda L, p, q: L.mm(p, q.conj()), x, y)
            check(lambda L, p, q: L.mm(p.conj(), q.conj()), x, y)
            check(lambda L, p, q: L.mm(p.conj().t().conj().t(), q), x, y)
    v = pair(dtype, "contiguous", (1, 4), 7)
    # torch 1.13 on this OpenBLAS returns 0 for complex dot/vdot: NumPy is the oracle there.
    ve, vt = v[0][0], v[1][0].numpy()
    np.testing.assert_allclose(ember.vdot(ve, ve).item(), np.vdot(vt, vt), rtol=1e-5)
    np.testing.assert_allclose(ember.vdot(ve.conj(), ve[::1]).item(), np.dot(vt, vt), rtol=1e-5)
    np.testing.assert_allclose(ember.dot(ve.conj(), ve.conj()).item(),
                               np.dot(vt.conj(), vt.conj()), rtol=1e-5)
    np.testing.assert_allclose(ember.dot(ve, ve).item(), np.dot(vt, vt), rtol=1e-5)
    np.testing.assert_allclose((ve @ ve.conj()).item(), np.vdot(vt, vt), rtol=1e-5)
    check(lambda L, p, q: L.mv(p, q[0].conj()), a, v)


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)), ((4, 1, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (1, 3, 3, 4)),
    ((0, 2, 3), (3, 4)), ((5, 0, 3), (5, 3, 4)), ((5, 2, 0), (5, 0, 4)), ((2, 0), (0, 4)),
    ((0,), (0,)), ((3, 2, 3), (1, 3, 1)), ((2, 3, 2, 3), (3,)),
]


def values(L, dtype, shape, seed):
    g = np.random.default_rng(seed)
    arr = g.integers(-4, 5, shape)
    if dtype in COMPLEX:
        arr = arr + 1j * g.integers(-4, 5, shape)
    t = torch.from_numpy(np.asarray(arr)).to(getattr(torch, dtype))
    if L is not ember:
        # torch, or the float32 upcast oracle for float16/bfloat16
        return t if L is torch or dtype not in LOWP else t.float()
    return ember.from_numpy(t.float().numpy() if dtype == "bfloat16" else t.numpy()).to(
        getattr(ember, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64", "int32",
                                   "uint8", "float16", "bfloat16"])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_shapes(dtype, sa, sb):
    if dtype in COMPLEX and len(sa) == 1 and len(sb) == 1:
        pytest.skip("torch 1.13's complex dot is broken here; covered in test_conj_operands")
    check_lowp(lambda L: L.matmul(values(L, dtype, sa, 1), values(L, dtype, sb, 2)),
               dtype=dtype, what=f"{sa} @ {sb}")
    # Non-contiguous batch operands (no fold possible).
    if len(sa) >= 3:
        check_lowp(lambda L: values(L, dtype, sa[:-2] + sa[-1:] + sa[-2:-1], 3).transpose(-1, -2)
                   @ values(L, dtype, sb, 4), dtype=dtype, what=f"T{sa} @ {sb}")
        check_lowp(lambda L: values(L, dtype, (sa[0] * 2,) + sa[1:], 5)[::2]
                   @ values(L, dtype, sb, 6), dtype=dtype, what=f"step{sa} @ {sb}")


def test_matmul_errors_and_operators():
    raises_like(lambda L: L.matmul(L.tensor(1.0), L.ones(2, 2)))
    raises_like(lambda L: L.matmul(L.ones(2, 3), L.ones(2, 3)))
    raises_like(lambda L: L.matmul(L.ones(2, 3), L.ones(3, 2, dtype=L.float64)))
    raises_like(lambda L: L.matmul(L.ones(2, 2, 3), L.ones(3, 3, 2)))
    raises_like(lambda L: L.matmul(L.ones(3), L.ones(4)))
    raises_like(lambda L: L.matmul(L.ones(2, 3, dtype=L.bool), L.ones(3, 2, dtype=L.bool)))
    raises_like(lambda L: L.ones(2, 2) @ 2)
    check(lambda L: L.ones(2, 3).__rmatmul__(L.ones(4, 2)))
    check(lambda L: L.arange(6.).view(2, 3).__matmul__(L.arange(3.)))
    x = ember.ones(2, 3)
    y = x
    x @= ember.ones(3, 4)
    assert tuple(x.shape) == (2, 4) and tuple(y.shape) == (2, 3)
    check(lambda L: L.matmul(L.ones(2, 3), L.ones(3, 4), out=L.empty(0)))
    check(lambda L: L.linalg.matmul(L.arange(6.).view(2, 3), L.arange(3.)))
    raises_like(lambda L: L.matmul(L.ones(2, 3), L.ones(3, 4), out=L.empty(2, 4, dtype=L.float64)))


@pytest.mark.parametrize("dtype", MM_DTYPES + ["bool"])
def test_bmm_baddbmm_addbmm(dtype):
    a = lambda L: values(L, dtype, (4, 2, 3), 7)  # noqa: E731
    b = lambda L: values(L, dtype, (4, 3, 5), 8)  # noqa: E731
    c = lambda L: values(L, dtype, (2, 5), 9)  # noqa: E731
    check_lowp(lambda L: L.bmm(a(L), b(L)), dtype=dtype)
    check_lowp(lambda L: a(L).bmm(b(L).transpose(1, 2).contiguous().transpose(1, 2)), dtype=dtype)
    check_lowp(lambda L: L.bmm(a(L), b(L)[:1].expand(4, 3, 5)), dtype=dtype)
    beta, alpha = (2, 3) if dtype in INTS else (0.5, -1.5)
    check_lowp(lambda L: L.baddbmm(c(L), a(L), b(L)), dtype=dtype)
    check_lowp(lambda L: L.baddbmm(c(L), a(L), b(L), beta=beta, alpha=alpha), dtype=dtype)
    check_lowp(lambda L: L.addbmm(c(L), a(L), b(L), beta=beta, alpha=alpha), dtype=dtype)
    check_lowp(lambda L: c(L).addbmm(a(L), b(L)), dtype=dtype)
    check_lowp(lambda L: L.empty(4, 2, 5, dtype=getattr(L, dtype)).fill_(1)
               .baddbmm_(a(L), b(L), alpha=alpha), dtype=dtype)
    check_lowp(lambda L: c(L).addbmm_(a(L), b(L), beta=beta), dtype=dtype)


def test_batched_threading_paths():
    # Many small products (split across the batch) and few large ones (threads inside BLAS):
    # both must match torch, at 1 and 2 threads.
    old = ember.get_num_threads()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            check(lambda L: L.bmm(values(L, "float32", (64, 16, 24), 1),
                                  values(L, "float32", (64, 24, 8), 2)))
            check(lambda L: L.bmm(values(L, "float64", (3, 300, 40), 3),
                                  values(L, "float64", (3, 40, 290), 4)))
            check(lambda L: L.matmul(values(L, "int64", (9, 7, 5), 3),
                                     values(L, "int64", (9, 5, 6), 4)))
            check(lambda L: L.mm(values(L, "int32", (300, 270), 5),
                                 values(L, "int32", (270, 1030), 6)))
            check(lambda L: L.mm(values(L, "int8", (133, 517), 5),
                                 values(L, "int8", (517, 19), 6).t().contiguous().t()))
    finally:
        ember.set_num_threads(old)


@pytest.mark.parametrize("dtype", MM_DTYPES + ["bool"])
def test_addmm_addmv_addr(dtype):
    m1 = lambda L: values(L, dtype, (3, 4), 1)  # noqa: E731
    m2 = lambda L: values(L, dtype, (4, 2), 2)  # noqa: E731
    s = lambda L: values(L, dtype, (3, 2), 3)  # noqa: E731
    v = lambda L: values(L, dtype, (4,), 4)  # noqa: E731
    w = lambda L: values(L, dtype, (3,), 5)  # noqa: E731
    beta, alpha = (2, -3) if dtype in INTS + ["bool"] else (0.5, 2.0)
    if dtype == "bool":
        beta, alpha = True, False
    check_lowp(lambda L: L.addmm(s(L), m1(L), m2(L)), dtype=dtype)
    check_lowp(lambda L: L.addmm(s(L)[0], m1(L), m2(L), beta=beta, alpha=alpha), dtype=dtype)
    check_lowp(lambda L: s(L).addmm(m1(L).t().contiguous().t(), m2(L), alpha=alpha), dtype=dtype)
    check_lowp(lambda L: s(L).addmm_(m1(L), m2(L), beta=beta), dtype=dtype)
    check_lowp(lambda L: s(L).t().contiguous().t().addmm_(m1(L), m2(L), beta=beta), dtype=dtype)
    check_lowp(lambda L: L.addmm(s(L), m1(L), m2(L), out=L.empty(0, dtype=getattr(L, dtype))),
               dtype=dtype)
    check_lowp(lambda L: L.addmv(w(L), m1(L), v(L)), dtype=dtype)
    check_lowp(lambda L: L.addmv(w(L)[:1], m1(L), v(L), beta=beta, alpha=alpha), dtype=dtype)
    check_lowp(lambda L: w(L).addmv_(m1(L).t().contiguous().t(), v(L), alpha=alpha), dtype=dtype)
    check_lowp(lambda L: L.mv(m1(L), v(L)), dtype=dtype)
    check_lowp(lambda L: m1(L).mv(v(L)[::1]), dtype=dtype)
    check_lowp(lambda L: L.addr(s(L), w(L), v(L)[:2]), dtype=dtype)
    check_lowp(lambda L: L.addr(s(L), w(L), v(L)[:2], beta=beta, alpha=alpha), dtype=dtype)
    check_lowp(lambda L: s(L).addr_(w(L), v(L)[:2], alpha=alpha), dtype=dtype)


def test_beta_zero_ignores_nan_and_k_zero():
    nan = lambda L: L.full((2, 2), float("nan"))  # noqa: E731
    check(lambda L: L.addmm(nan(L), L.ones(2, 3), L.ones(3, 2), beta=0))
    check(lambda L: L.baddbmm(nan(L), L.ones(2, 2, 3), L.ones(2, 3, 2), beta=0))
    check(lambda L: L.addmv(nan(L)[0], L.ones(2, 3), L.ones(3), beta=0))
    check(lambda L: L.addr(nan(L), L.ones(2), L.ones(2), beta=0))
    check(lambda L: L.addbmm(nan(L), L.ones(2, 2, 3), L.ones(2, 3, 2), beta=0))
    check(lambda L: L.addmm(L.ones(2, 2), L.ones(2, 0), L.ones(0, 2), beta=3))
    check(lambda L: L.addmm(nan(L), L.ones(2, 0), L.ones(0, 2), beta=0))
    check(lambda L: L.mm(L.ones(2, 0), L.ones(0, 3)))
    check(lambda L: L.mm(L.ones(0, 2), L.ones(2, 3)))
    check(lambda L: L.bmm(L.ones(0, 2, 3), L.ones(0, 3, 2)))
    check(lambda L: L.mm(L.ones(2, 0, dtype=L.int64), L.ones(0, 3, dtype=L.int64)))
    check(lambda L: L.dot(L.ones(0), L.ones(0)))


def test_addmm_family_errors():
    raises_like(lambda L: L.mm(L.ones(3), L.ones(3, 2)))
    raises_like(lambda L: L.mm(L.ones(2, 3), L.ones(2, 3)))
    raises_like(lambda L: L.mm(L.ones(2, 3), L.ones(3, 2, dtype=L.float64)))
    raises_like(lambda L: L.bmm(L.ones(2, 3), L.ones(3, 2)))
    raises_like(lambda L: L.bmm(L.ones(2, 2, 3), L.ones(3, 3, 2)))
    raises_like(lambda L: L.addmm(L.ones(3, 3), L.ones(2, 3), L.ones(3, 2)))
    raises_like(lambda L: L.addmm(L.ones(2, 2, dtype=L.float64), L.ones(2, 3), L.ones(3, 2)))
    raises_like(lambda L: L.addmm(L.ones(2, 2), L.ones(2, 3), L.ones(3, 2), beta=1j))
    raises_like(lambda L: L.addr(L.ones(2, 3, dtype=L.int64), L.ones(2, dtype=L.int64),
                                 L.ones(3, dtype=L.int64), beta=0.5))
    raises_like(lambda L: L.addr(L.ones(2, 3), L.ones(2, 1), L.ones(3)))
    raises_like(lambda L: L.baddbmm(L.ones(3, 2, 2), L.ones(2, 2, 3), L.ones(2, 3, 2)))
    raises_like(lambda L: L.addbmm(L.ones(2, 2), L.ones(2, 2, 3), L.ones(3, 3, 2)))
    raises_like(lambda L: L.mv(L.ones(2, 3), L.ones(2)))
    raises_like(lambda L: L.mv(L.ones(2, 3), L.ones(3, dtype=L.float64)))
    raises_like(lambda L: L.dot(L.ones(3), L.ones(2)))
    raises_like(lambda L: L.dot(L.ones(3), L.ones(3, dtype=L.float64)))
    raises_like(lambda L: L.dot(L.ones(3, 3), L.ones(3, 3)))
    raises_like(lambda L: L.mm(L.ones(2, 3), L.ones(3, 2), out=L.empty(2, 2, dtype=L.float64)))
    raises_like(lambda L: L.ones(3, 3).addmm_(L.ones(2, 3), L.ones(3, 2)))
    raises_like(lambda L: L.outer(L.ones(2, 2), L.ones(2)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_products(dtype):
    a = lambda L: values(L, dtype, (5,), 1)  # noqa: E731
    b = lambda L: values(L, dtype, (10,), 2)[::2]  # noqa: E731
    c = lambda L: values(L, dtype, (3,), 3)  # noqa: E731
    if dtype in COMPLEX:  # torch 1.13's complex dot is broken here: NumPy oracle
        an, bn = a(torch).numpy(), b(torch).numpy()
        np.testing.assert_allclose(ember.dot(a(ember), b(ember)).item(), np.dot(an, bn))
        np.testing.assert_allclose(a(ember).vdot(b(ember)).item(), np.vdot(an, bn))
        np.testing.assert_allclose(ember.dot(a(ember), b(ember), out=ember.empty(
            0, dtype=getattr(ember, dtype))).item(), np.dot(an, bn))
    else:
        check_lowp(lambda L: L.dot(a(L), b(L)), dtype=dtype)
        check_lowp(lambda L: a(L).dot(b(L)), dtype=dtype)
        check_lowp(lambda L: L.vdot(a(L), b(L)), dtype=dtype)
        check_lowp(lambda L: L.dot(a(L), b(L), out=L.empty(0, dtype=getattr(L, dtype))),
                   dtype=dtype)
    check_lowp(lambda L: L.outer(a(L), c(L)), dtype=dtype)
    check_lowp(lambda L: L.ger(b(L), c(L)), dtype=dtype)
    check_lowp(lambda L: a(L).outer(c(L)), dtype=dtype)
    check_lowp(lambda L: L.outer(a(L), c(L), out=L.empty(0, dtype=getattr(L, dtype))),
               dtype=dtype)


def test_outer_promotes_and_expanded():
    check(lambda L: L.outer(L.arange(3), L.ones(2)))
    check(lambda L: L.outer(L.ones(1).expand(4), L.arange(3.)))
    check(lambda L: L.dot(L.ones(1).expand(4), L.arange(4.)))
    check(lambda L: L.mv(L.ones(1, 4).expand(3, 4), L.ones(1).expand(4)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int64", "float16"])
def test_inner_tensordot(dtype):
    a = lambda L: values(L, dtype, (2, 3, 4), 1)  # noqa: E731
    b = lambda L: values(L, dtype, (4, 3, 5), 2)  # noqa: E731
    check_lowp(lambda L: L.inner(a(L), values(L, dtype, (5, 4), 3)), dtype=dtype)
    check_lowp(lambda L: L.inner(a(L), values(L, dtype, (), 3)), dtype=dtype)
    check_lowp(lambda L: a(L).inner(values(L, dtype, (4,), 3)), dtype=dtype)
    check_lowp(lambda L: L.tensordot(a(L), b(L), dims=([1, 2], [1, 0])), dtype=dtype)
    check_lowp(lambda L: L.tensordot(a(L), b(L), dims=1), dtype=dtype)
    check_lowp(lambda L: L.tensordot(a(L), a(L), dims=0), dtype=dtype)
    check_lowp(lambda L: L.tensordot(a(L), a(L), dims=3), dtype=dtype)
    check_lowp(lambda L: L.tensordot(a(L), b(L).permute(1, 0, 2), dims=([-1, 1], [1, 0])),
               dtype=dtype)
    check_lowp(lambda L: L.tensordot(a(L), b(L), dims=[[2], [0]]), dtype=dtype)


def test_inner_tensordot_errors():
    raises_like(lambda L: L.inner(L.ones(2, 3), L.ones(2, 2)))
    raises_like(lambda L: L.inner(L.ones(2, 3), L.ones(3, dtype=L.float64)))
    raises_like(lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=-1))
    raises_like(lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=([0], [1])))
    raises_like(lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=[1, 0]))
    raises_like(lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2, dtype=L.float64), dims=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_kron_cross_trace(dtype):
    a = lambda L: values(L, dtype, (2, 3), 1)  # noqa: E731
    b = lambda L: values(L, dtype, (3, 2, 2), 2)  # noqa: E731
    check_lowp(lambda L: L.kron(a(L), b(L)), dtype=dtype)
    # torch 1.13's kron fails on transposed inputs ("view size is not compatible"): NumPy.
    if dtype not in LOWP:
        r = a(ember).t().kron(values(ember, dtype, (2,), 3))
        ref = np.kron(a(torch).t().numpy(), values(torch, dtype, (2,), 3).numpy())
        np.testing.assert_array_equal(r.numpy(), ref)
    check_lowp(lambda L: L.kron(a(L), b(L), out=L.empty(0, dtype=getattr(L, dtype))),
               dtype=dtype)
    check_lowp(lambda L: L.linalg.cross(a(L), values(L, dtype, (1, 3), 4)), dtype=dtype)
    # (torch 1.13's cross fails on some transposed inputs: "view size is not compatible")
    check_lowp(lambda L: L.cross(b(L).transpose(0, 2).contiguous(), values(L, dtype, (2, 2, 3), 5),
                                 dim=2), dtype=dtype)
    check_lowp(lambda L: L.cross(b(L), values(L, dtype, (3, 2, 2), 6)), dtype=dtype)
    check_lowp(lambda L: b(L).cross(values(L, dtype, (3, 2, 2), 6), dim=-3), dtype=dtype)
    check_lowp(lambda L: L.trace(a(L)), dtype=dtype)
    check_lowp(lambda L: values(L, dtype, (4, 4), 7).t().trace(), dtype=dtype)
    check_lowp(lambda L: L.trace(values(L, dtype, (0, 3), 7)), dtype=dtype)


def test_cross_trace_errors():
    raises_like(lambda L: L.cross(L.ones(2, 4), L.ones(2, 4)))
    raises_like(lambda L: L.linalg.cross(L.ones(3), L.ones(3, dtype=L.float64)))
    raises_like(lambda L: L.linalg.cross(L.ones(2, 3), L.ones(3)))
    raises_like(lambda L: L.linalg.cross(L.ones(2, 4), L.ones(2, 4)))
    raises_like(lambda L: L.linalg.cross(L.ones(2, 3), L.ones(2, 3), dim=2))
    raises_like(lambda L: L.trace(L.ones(3)))
    check(lambda L: L.linalg.cross(L.ones(2, 3), L.arange(3.).view(1, 3), out=L.empty(0)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64"])
def test_multi_dot_chain_matmul(dtype):
    shapes = [(3, 10), (10, 2), (2, 8), (8, 5)]
    ms = lambda L: [values(L, dtype, s, i) for i, s in enumerate(shapes)]  # noqa: E731
    check(lambda L: L.linalg.multi_dot(ms(L)))
    check(lambda L: L.linalg.multi_dot(ms(L)[:2]))
    check(lambda L: L.chain_matmul(*ms(L)))
    check(lambda L: L.chain_matmul(ms(L)[0]))
    check(lambda L: L.linalg.multi_dot([values(L, dtype, (3,), 9)] + ms(L)[1:]
                                       if False else [values(L, dtype, (3,), 9), *ms(L)]))
    check(lambda L: L.linalg.multi_dot([*ms(L), values(L, dtype, (5,), 9)]))
    check(lambda L: L.linalg.multi_dot([values(L, dtype, (3,), 8), values(L, dtype, (3,), 9)]))
    check(lambda L: L.linalg.multi_dot([values(L, dtype, (3,), 8), *ms(L),
                                        values(L, dtype, (5,), 9)]))
    check(lambda L: L.linalg.multi_dot(ms(L), out=L.empty(0, dtype=getattr(L, dtype))))


def test_multi_dot_errors():
    raises_like(lambda L: L.linalg.multi_dot([L.ones(2, 3)]))
    raises_like(lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 2, dtype=L.float64)]))
    raises_like(lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 2, 2)]))
    raises_like(lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 3)]))
    raises_like(lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 3, 3), L.ones(3)]))
    raises_like(lambda L: L.chain_matmul(L.ones(3), L.ones(3, 2)))


def test_gemm_large_matches_torch():
    # Sizes past the integer kernel's blocks and BLAS's small-matrix paths.
    for n in (1, 2):
        old = ember.get_num_threads()
        ember.set_num_threads(n)
        try:
            a = np.random.default_rng(0).standard_normal((257, 300)).astype(np.float32)
            b = np.random.default_rng(1).standard_normal((300, 129)).astype(np.float32)
            r = ember.from_numpy(a) @ ember.from_numpy(b)
            np.testing.assert_allclose(r.numpy(), a.astype(np.float64) @ b, rtol=1e-4,
                                       atol=1e-4)
            r = ember.from_numpy(a).to(ember.bfloat16) @ ember.from_numpy(b).to(ember.bfloat16)
            ref = (torch.from_numpy(a).bfloat16().float() @ torch.from_numpy(b).bfloat16().float())
            torch.testing.assert_close(torch.from_numpy(r.float().numpy()), ref.bfloat16().float())
        finally:
            ember.set_num_threads(old)
    assert math.isfinite(float(ember.ones(3) @ ember.ones(3)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("op", ["mm", "addmm", "linear"])
@pytest.mark.parametrize("layouts", [(False, True), (True, False), (True, True), (False, False)])
def test_product_gradients_keep_column_major_layout(dtype, op, layouts):
    # Note [Column-major product gradients]: an operand stored column-major (x.t() of a
    # contiguous x) gets a gradient of the same layout, as in torch; values as torch's.
    rng = np.random.default_rng(11)
    a_cm, b_cm = layouts
    a = rng.standard_normal((6, 4)) + (1j * rng.standard_normal((6, 4)) if "complex" in dtype else 0)
    b = rng.standard_normal((3, 6)) + (1j * rng.standard_normal((3, 6)) if "complex" in dtype else 0)
    c = rng.standard_normal((4, 3))
    got = {}
    for lib in (ember, torch):
        dt = getattr(lib, dtype)
        # (4, 6) and (6, 3) leaves, each row-major or column-major (the .t() of a contiguous one)
        la = lib.from_numpy(a.copy()).to(dt).t() if a_cm else lib.from_numpy(a.T.copy()).to(dt)
        lb = lib.from_numpy(b.copy()).to(dt).t() if b_cm else lib.from_numpy(b.T.copy()).to(dt)
        la, lb = la.detach().requires_grad_(True), lb.detach().requires_grad_(True)
        assert la.stride() == ((1, 4) if a_cm else (6, 1))
        bias = lib.from_numpy(c.copy()).to(dt)
        if op == "mm":
            y = lib.mm(la, lb)
        elif op == "addmm":
            y = lib.addmm(bias, la, lb, beta=0.5, alpha=2.0)
        else:  # linear(x, W) = x @ W.t(): the weight's transpose is the column-major operand
            y = lib.nn.functional.linear(la, lb.t())
        ga, gb = lib.autograd.grad([y], [la, lb], [lib.ones_like(y)])
        got[lib.__name__] = [(g.stride(), g.resolve_conj().detach().numpy()) for g in (ga, gb)]
    for (se, ve), (st, vt) in zip(got["ember"], got["torch"]):
        assert se == st
        np.testing.assert_allclose(ve, vt, rtol=1e-5, atol=1e-5)
