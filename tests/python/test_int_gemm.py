"""Integer matrix products (the packed micro-kernels of src/kernels/cpu/linalg/int_gemm.cpp)
against torch 1.13 and a NumPy uint64 oracle: every integer dtype, full-range values whose
products and sums wrap, shapes that leave tails in every blocking dimension (m, n not multiples
of the 6x16 / 6x32 / 6x4 tiles, k odd for the int16 pairs and deeper than one k slice), k = 0,
transposed and strided operands, alpha / beta of addmm and baddbmm, bmm with broadcast batches,
one and two threads."""

import numpy as np
import pytest
import torch

import ember
from _oracle import INTS, check, raises_like

# (m, n, k): single elements, exact tiles, tails in m / n / k, k past one slice (256 / 512)
SHAPES = [(1, 1, 1), (6, 16, 2), (5, 7, 3), (7, 17, 33), (13, 33, 513), (130, 47, 260),
          (25, 70, 1030)]
LAYOUTS = ["contiguous", "transposed", "strided"]

_INFO = {d: np.iinfo(getattr(np, d)) for d in INTS}


def full_range(dtype, shape, seed):
    """Values over the dtype's whole range (products and sums wrap)."""
    g = np.random.default_rng(seed)
    info = _INFO[dtype]
    return g.integers(int(info.min), int(info.max), shape, endpoint=True).astype(dtype)


def laid_out(arr, layout):
    """(ember, torch) tensors holding `arr` with the given layout."""
    if layout == "contiguous":
        base = arr
    elif layout == "transposed":
        base = np.ascontiguousarray(arr.T)
    else:
        base = np.zeros((2 * arr.shape[0] + 1, 3 * arr.shape[1]), arr.dtype)
        base[1::2, ::3] = arr
    e, t = ember.from_numpy(base.copy()), torch.from_numpy(base.copy())
    if layout == "transposed":
        return e.t(), t.t()
    if layout == "strided":
        return e[1::2, ::3], t[1::2, ::3]
    return e, t


def wrap_oracle(a, b, dtype, alpha=1, beta=0, c=None):
    """alpha * a @ b + beta * c modulo 2^bits, through uint64 (NumPy's integer matmul wraps)."""
    u = lambda x: x.astype(np.int64).astype(np.uint64)  # noqa: E731
    r = np.matmul(u(a), u(b)) * np.uint64(alpha % 2**64)
    if c is not None:
        r = r + u(c) * np.uint64(beta % 2**64)
    return r.astype(getattr(np, dtype))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mm_wraps_like_torch(dtype, shape, threads):
    m, n, k = shape
    a, b = full_range(dtype, (m, k), 1), full_range(dtype, (k, n), 2)
    want = wrap_oracle(a, b, dtype)
    layouts = LAYOUTS if m * n * k < 200_000 else ["contiguous", "transposed"]
    for la in layouts:
        for lb in layouts:
            (ea, ta), (eb, tb) = laid_out(a, la), laid_out(b, lb)
            r = ember.mm(ea, eb)
            assert r.dtype == getattr(ember, dtype)
            np.testing.assert_array_equal(r.numpy(), want, err_msg=f"{la} x {lb}")
            np.testing.assert_array_equal(torch.mm(ta, tb).numpy(), want)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("alpha,beta", [(1, 0), (1, 1), (-3, 2), (0, 5), (7, 0),
                                        (2**31 + 5, -(2**33) - 1)])
def test_addmm_alpha_beta(dtype, alpha, beta, threads):
    if dtype != "int64" and (abs(alpha) >= 2**31 or abs(beta) >= 2**31):
        pytest.skip("torch 1.13 rejects alpha/beta that overflow the dtype")
    m, n, k = 19, 37, 41
    a, b, c = full_range(dtype, (m, k), 3), full_range(dtype, (k, n), 4), full_range(
        dtype, (m, n), 5)
    want = wrap_oracle(a, b, dtype, alpha, beta, c)
    ea, ta = laid_out(a, "transposed")
    eb, tb = laid_out(b, "strided")
    ec, tc = laid_out(c, "strided")
    got = ember.addmm(ec, ea, eb, beta=beta, alpha=alpha)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(torch.addmm(tc, ta, tb, beta=beta, alpha=alpha).numpy(), want)
    # in place into a strided C
    ec2 = ember.from_numpy(np.zeros((m, 2 * n), getattr(np, dtype)))[:, ::2]
    ec2.copy_(ember.from_numpy(c))
    ec2.addmm_(ea, eb, beta=beta, alpha=alpha)
    np.testing.assert_array_equal(ec2.numpy(), want)


@pytest.mark.parametrize("dtype", INTS)
def test_k_zero_and_empty(dtype):
    z = lambda L, *s: L.zeros(*s, dtype=getattr(L, dtype))  # noqa: E731
    check(lambda L: L.mm(z(L, 3, 0), z(L, 0, 5)))
    check(lambda L: L.mm(z(L, 0, 4), z(L, 4, 5)))
    check(lambda L: L.mm(z(L, 3, 4), z(L, 4, 0)))
    check(lambda L: L.addmm(L.ones(3, 5, dtype=getattr(L, dtype)), z(L, 3, 0), z(L, 0, 5),
                            beta=3, alpha=2))
    check(lambda L: L.baddbmm(L.ones(2, 3, 5, dtype=getattr(L, dtype)), z(L, 2, 3, 0),
                              z(L, 2, 0, 5), beta=-1))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("bshape", [(4, 13, 17, 9), (3, 70, 600, 33), (64, 16, 16, 16)],
                         ids=lambda s: "x".join(map(str, s)))
def test_bmm_baddbmm(dtype, bshape, threads):
    nb, m, k, n = bshape
    a, b = full_range(dtype, (nb, m, k), 6), full_range(dtype, (nb, k, n), 7)
    c = full_range(dtype, (nb, m, n), 8)
    want = np.stack([wrap_oracle(a[i], b[i], dtype) for i in range(nb)])
    ea, eb = ember.from_numpy(a), ember.from_numpy(b)
    np.testing.assert_array_equal(ember.bmm(ea, eb).numpy(), want)
    # transposed batch operands
    ebt = ember.from_numpy(np.ascontiguousarray(b.transpose(0, 2, 1))).transpose(1, 2)
    np.testing.assert_array_equal(ember.bmm(ea, ebt).numpy(), want)
    want2 = np.stack([wrap_oracle(a[i], b[i], dtype, -2, 3, c[i]) for i in range(nb)])
    got = ember.baddbmm(ember.from_numpy(c), ea, eb, beta=3, alpha=-2)
    np.testing.assert_array_equal(got.numpy(), want2)
    # a broadcast (stride-0) batch operand, against torch
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    check(lambda L, x, y: L.bmm(x, y[:1].expand(nb, k, n)), (ea, ta), (eb, tb))
    check(lambda L, x, y: L.matmul(x, y[0]), (ea, ta), (eb, tb))


@pytest.mark.parametrize("dtype", INTS)
def test_mv_and_matmul_vectors(dtype):
    a, v = full_range(dtype, (37, 29), 9), full_range(dtype, (29,), 10)
    want = wrap_oracle(a, v[:, None], dtype)[:, 0]
    np.testing.assert_array_equal(ember.mv(ember.from_numpy(a), ember.from_numpy(v)).numpy(),
                                  want)
    np.testing.assert_array_equal(
        ember.matmul(ember.from_numpy(v), ember.from_numpy(a.T.copy())).numpy(), want)


def test_errors():
    i8 = lambda L, *s: L.ones(*s, dtype=L.int8)  # noqa: E731
    raises_like(lambda L: L.mm(i8(L, 2, 3), L.ones(3, 2, dtype=L.int16)))
    raises_like(lambda L: L.mm(i8(L, 2, 3), i8(L, 2, 3)))
    raises_like(lambda L: L.mm(i8(L, 2, 3), L.ones(3, 2)))
    raises_like(lambda L: L.bmm(i8(L, 2, 2, 3), i8(L, 3, 3, 2)))
