"""ember.linalg against torch 1.13: inverses, solvers, determinants, least squares, norms, matrix
functions and the legacy top-level spellings. Unique results are compared value for value;
decompositions whose factors are unique only up to signs/phases (qr, svd, eigh, eig) are checked
by reconstruction and orthogonality, and their invariant values against torch (see
test_linalg_decomp.py for those). Inputs come in every layout (contiguous, transposed, strided,
broadcast batch, zero-size batch, 0x0) and the four LAPACK dtypes; other dtypes must raise as
torch does."""

import numpy as np
import pytest
import torch

import ember
import ember.linalg  # noqa: F401
from _oracle import check as _check, rand_matrix as rand, raises_like, tensors_from


def _plain(r):
    """Named result tuples of both libraries as plain tuples (their classes differ)."""
    return tuple(r) if isinstance(r, tuple) else r


def check(fn, *args, **kwargs):
    return _check(lambda L, *a: _plain(fn(L, *a)), *args, **kwargs)

LA_DTYPES = ["float32", "float64", "complex64", "complex128"]
BAD_DTYPES = ["int64", "int32", "bool", "float16", "bfloat16"]
LAYOUTS = ["contiguous", "transposed", "strided", "batched", "broadcast", "empty_batch", "0x0"]


def tol(dtype):
    """Tolerances for LAPACK results: the two libraries may block and pivot differently."""
    if dtype in ("float32", "complex64"):
        return {"rtol": 2e-4, "atol": 2e-4}
    return {"rtol": 1e-9, "atol": 1e-9}


def pair(arr, dtype):
    """(ember, torch) contiguous tensors of arr."""
    return tensors_from(np.ascontiguousarray(arr), dtype)


def matrices(dtype, layout, n=4, m=None, seed=0, kind="general"):
    """An (ember, torch) pair of (batches of) n x m matrices in `layout`."""
    m = n if m is None else m
    if layout == "contiguous":
        return pair(rand((n, m), dtype, seed, kind), dtype)
    if layout == "transposed":
        e, t = pair(np.swapaxes(rand((n, m), dtype, seed, kind), -1, -2).copy(), dtype)
        return e.mT, t.mT
    if layout == "strided":
        big = np.zeros((2 * n, 2 * m), dtype=dtype)
        big[::2, ::2] = rand((n, m), dtype, seed, kind)
        e, t = pair(big, dtype)
        return e[::2, ::2], t[::2, ::2]
    if layout == "batched":
        return pair(rand((2, 3, n, m), dtype, seed, kind), dtype)
    if layout == "broadcast":
        e, t = pair(rand((1, n, m), dtype, seed, kind), dtype)
        return e.expand(3, n, m), t.expand(3, n, m)
    if layout == "empty_batch":
        return pair(np.zeros((0, n, m), dtype=dtype), dtype)
    if layout == "0x0":
        return pair(np.zeros((2, 0, 0), dtype=dtype), dtype)
    raise ValueError(layout)


# ---- inverses, determinants ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_inv_det_slogdet(dtype, layout):
    a = matrices(dtype, layout, seed=1)
    k = tol(dtype)
    check(lambda L, x: L.linalg.inv(x), a, **k)
    check(lambda L, x: L.linalg.inv_ex(x), a, **k)
    check(lambda L, x: L.inverse(x), a, **k)
    check(lambda L, x: x.inverse(), a, **k)
    check(lambda L, x: L.linalg.det(x), a, **k)
    check(lambda L, x: L.det(x), a, **k)
    check(lambda L, x: x.det(), a, **k)
    check(lambda L, x: L.linalg.slogdet(x), a, **k)
    check(lambda L, x: L.slogdet(x), a, **k)
    check(lambda L, x: L.logdet(x), a, **k)
    check(lambda L, x: L.linalg.matrix_exp(x / 4), a, **k)
    check(lambda L, x: L.matrix_exp(x), a, **k)


def test_det_values():
    check(lambda L: L.linalg.det(L.tensor([[1.0, 2.0], [3.0, 4.0]])))
    check(lambda L: L.linalg.det(L.zeros(3, 3)))
    check(lambda L: L.linalg.det(L.tensor([[0.0, 1.0], [1.0, 0.0]])))
    check(lambda L: L.linalg.slogdet(L.tensor([[0.0, 1.0], [1.0, 0.0]])))
    check(lambda L: L.linalg.slogdet(L.zeros(2, 2, dtype=L.complex128)))
    check(lambda L: L.logdet(L.tensor([[0.0, 1.0], [1.0, 0.0]])))
    check(lambda L: L.logdet(L.zeros(2, 2)))
    check(lambda L: L.logdet(L.tensor([[2.0, 1.0j], [0.0, 1.0 + 1.0j]])), rtol=1e-6, atol=1e-6)
    check(lambda L: L.linalg.det(L.ones(0, 0)))
    check(lambda L: L.linalg.slogdet(L.ones(0, 0, dtype=L.complex64)))
    check(lambda L: L.linalg.det(L.tensor([[float("nan"), 1.0], [1.0, 1.0]])))
    check(lambda L: L.linalg.inv_ex(L.zeros(2, 3, 3)).info)


@pytest.mark.parametrize("fn", ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "svd",
                                "svdvals", "qr", "eig", "eigvals", "matrix_exp", "lu_factor",
                                "lu", "pinv", "matrix_rank", "cond"])
@pytest.mark.parametrize("dtype", BAD_DTYPES)
def test_bad_dtypes(fn, dtype):
    if fn == "matrix_exp" and dtype == "bfloat16":
        pytest.skip("bfloat16 matrix_exp is supported (test_linalg_decomp.py)")
    x = (ember.ones(3, 3, dtype=getattr(ember, dtype)),
         torch.ones(3, 3, dtype=getattr(torch, dtype)))
    raises_like(lambda L, a: getattr(L.linalg, fn)(a), x)


def test_bad_shapes():
    for fn in ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "eig", "matrix_exp"]:
        raises_like(lambda L: getattr(L.linalg, fn)(L.ones(3, 4)))
        raises_like(lambda L: getattr(L.linalg, fn)(L.ones(3)))
    for fn in ["svd", "svdvals", "qr", "lu_factor", "lu", "pinv"]:
        raises_like(lambda L: getattr(L.linalg, fn)(L.ones(3)))
    raises_like(lambda L: L.linalg.qr(L.ones(3, 3), mode="foo"))
    raises_like(lambda L: L.linalg.eigh(L.eye(3), UPLO="X"))
    raises_like(lambda L: L.linalg.lu_factor(L.eye(3), pivot=False))
    raises_like(lambda L: L.linalg.matrix_power(L.ones(3, 4), 2))
    raises_like(lambda L: L.linalg.matrix_norm(L.ones(3, 3), ord=3))
    raises_like(lambda L: L.linalg.matrix_norm(L.ones(3, 3), ord="foo"))
    raises_like(lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.int64)))
    raises_like(lambda L: L.linalg.norm(L.ones(2, 3, 4), "fro"))
    raises_like(lambda L: L.linalg.norm(L.ones(2, 3, 4), 2))
    raises_like(lambda L: L.linalg.cond(L.ones(3, 4), 1))
    raises_like(lambda L: L.linalg.cond(L.ones(3, 3), 3))
    raises_like(lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(3)))


# ---- value-dependent errors (LinAlgError is a RuntimeError, as torch's) ----

def test_singular_errors():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError, match=r"\(Batch element 0\): The diagonal "
                       r"element 2 is zero, the inversion could not be completed because the "
                       r"input matrix is singular"):
        ember.linalg.inv(ember.ones(2, 3, 3))
    with pytest.raises(RuntimeError, match=r"The diagonal element 2 is zero"):
        ember.linalg.inv(ember.ones(3, 3))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The factorization could not be "
                       r"completed because the input is not positive-definite \(the leading "
                       r"minor of order 1 is not positive-definite\)"):
        ember.linalg.cholesky(ember.stack([ember.eye(3), -ember.eye(3)]))
    with pytest.raises(RuntimeError, match="singular"):
        ember.linalg.solve(ember.zeros(3, 3), ember.ones(3))
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        ember.linalg.lu_factor(ember.zeros(3, 3))
    for fn in (lambda L: L.linalg.inv(L.zeros(2, 2)), lambda L: L.linalg.cholesky(-L.eye(2)),
               lambda L: L.linalg.solve(L.zeros(2, 2), L.ones(2)),
               lambda L: L.inverse(L.zeros(2, 2))):
        with pytest.raises(RuntimeError):
            fn(torch)
        with pytest.raises(RuntimeError):
            fn(ember)
    # The _ex variants report instead of raising.
    check(lambda L: L.linalg.cholesky_ex(L.stack([L.eye(3), -L.eye(3)])).info)
    check(lambda L: L.linalg.solve_ex(L.zeros(2, 3, 3), L.ones(3)).info)
    check(lambda L: L.linalg.lu_factor_ex(L.zeros(3, 3)).info)
    with pytest.raises(RuntimeError):
        ember.linalg.inv_ex(ember.zeros(2, 2), check_errors=True)


# ---- solvers ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_solve(dtype, layout):
    a = matrices(dtype, layout, seed=2)
    n = a[0].shape[-1]
    b = matrices(dtype, "contiguous", n=n, m=2, seed=3)
    k = tol(dtype)
    check(lambda L, x, y: L.linalg.solve(x, y), a, b, **k)
    check(lambda L, x, y: L.linalg.solve(x, y.mT, left=False), a, b, **k)
    check(lambda L, x, y: L.linalg.solve_ex(x, y), a, b, **k)
    vec = pair(rand((n,), dtype, 4), dtype)
    check(lambda L, x, v: L.linalg.solve(x, v), a, vec, **k)
    if a[0].dim() == 3:  # a batch of vectors: B.shape == A.shape[:-1]
        bv = pair(rand(tuple(a[0].shape[:-1]), dtype, 5), dtype)
        check(lambda L, x, v: L.linalg.solve(x, v), a, bv, **k)
    # Batch broadcasting of B against A.
    bb = pair(rand((5, 1, n, 2), dtype, 6), dtype)
    check(lambda L, x, y: L.linalg.solve(x, y), a, bb, **k)
    tri = matrices(dtype, layout, seed=7, kind="triangular")
    for upper in (True, False):
        for left in (True, False):
            for unit in (True, False):
                check(lambda L, x, y: L.linalg.solve_triangular(
                    x if upper else x.mT, y if left else y.mT, upper=upper, left=left,
                    unitriangular=unit), tri, b, **k)
        check(lambda L, x, y: L.triangular_solve(y, x if upper else x.mT, upper), tri, b, **k)
        check(lambda L, x, y: L.triangular_solve(y, x, True, transpose=True), tri, b, **k)
    spd = matrices(dtype, layout, seed=8, kind="spd")
    check(lambda L, x, y: L.cholesky_solve(y, L.linalg.cholesky(x)), spd, b, **k)
    check(lambda L, x, y: L.cholesky_solve(y, L.linalg.cholesky(x, upper=True), upper=True),
          spd, b, **k)
    check(lambda L, x: L.cholesky_inverse(L.linalg.cholesky(x)), spd, **k)
    check(lambda L, x: L.cholesky_inverse(L.linalg.cholesky(x, upper=True), True), spd, **k)


def test_solve_errors():
    raises_like(lambda L: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.float64)))
    raises_like(lambda L: L.linalg.solve(L.eye(3), L.ones(4)))
    raises_like(lambda L: L.linalg.solve(L.eye(3), L.ones(3), left=False))
    raises_like(lambda L: L.linalg.solve(L.ones(3, 4), L.ones(3)))
    raises_like(lambda L: L.linalg.solve(L.ones(2, 3, 3), L.ones(4, 3, 1)))
    raises_like(lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(3), upper=True))
    raises_like(lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(4, 1), upper=True))
    raises_like(lambda L: L.linalg.lu_solve(L.eye(3), L.zeros(3, dtype=L.int32), L.ones(4, 1)))


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "batched",
                                    "broadcast", "empty_batch"])
def test_lu_family(dtype, layout):
    k = tol(dtype)
    for (n, m) in [(4, 4), (5, 3), (3, 5)]:
        a = matrices(dtype, layout, n=n, m=m, seed=9)
        check(lambda L, x: L.linalg.lu_factor(x), a, **k)
        check(lambda L, x: L.linalg.lu_factor_ex(x), a, **k)
        check(lambda L, x: L.linalg.lu(x), a, **k)
        check(lambda L, x: L.lu_unpack(*L.linalg.lu_factor(x)), a, **k)
        check(lambda L, x: L.lu_unpack(*L.linalg.lu_factor(x), unpack_data=False), a, **k)
        check(lambda L, x: L.lu_unpack(*L.linalg.lu_factor(x), unpack_pivots=False), a, **k)
    a = matrices(dtype, layout, seed=10)
    b = matrices(dtype, "contiguous", n=4, m=3, seed=11)
    for left in (True, False):
        for adjoint in (True, False):
            check(lambda L, x, y: L.linalg.lu_solve(*L.linalg.lu_factor(x), y if left else y.mT,
                                                    left=left, adjoint=adjoint), a, b, **k)


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq(dtype, driver):
    k = tol(dtype)
    for (m, n, shape_b) in [(6, 4, (6, 2)), (6, 4, (6,)), (4, 4, (4, 3)), (3, 5, (3, 2)),
                            (6, 4, (2, 6, 2))]:
        if driver == "gels" and m < n:
            continue  # torch's gels on wide matrices returns LAPACK's minimum-norm solution too
        a = pair(rand((m, n), dtype, 12), dtype)
        b = pair(rand(shape_b, dtype, 13), dtype)
        check(lambda L, x, y: L.linalg.lstsq(x, y, driver=driver), a, b, **k)
        check(lambda L, x, y: L.linalg.lstsq(x.mT.conj().mT.conj(), y, driver=driver), a, b, **k)
    # Batched A and B, a rank-deficient A (rank and solution of the rank-revealing drivers).
    a = pair(rand((2, 6, 4), dtype, 14), dtype)
    b = pair(rand((2, 6, 3), dtype, 15), dtype)
    check(lambda L, x, y: L.linalg.lstsq(x, y, driver=driver), a, b, **k)
    if driver not in (None, "gels", "gelsy"):
        low = pair(rand((6, 2), dtype, 16) @ rand((2, 4), dtype, 17), dtype)
        check(lambda L, x, y: L.linalg.lstsq(x, y[0], driver=driver).rank, low, b, **k)
        check(lambda L, x, y: L.linalg.lstsq(x, y[0], driver=driver), low, b, **k)
    check(lambda L: L.linalg.lstsq(L.zeros(0, 3, dtype=getattr(L, dtype)),
                                   L.zeros(0, 2, dtype=getattr(L, dtype)), driver=driver))


def test_lstsq_errors():
    raises_like(lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(4)))
    raises_like(lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5), driver="foo"))
    raises_like(lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5, dtype=L.float64)))
    raises_like(lambda L: L.linalg.lstsq(L.ones(5, 3, dtype=L.int64), L.ones(5, dtype=L.int64)))


# ---- pinv, rank, powers, norms, cond ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_pinv_rank_power(dtype, layout):
    k = tol(dtype)
    a = matrices(dtype, layout, seed=18)
    h = matrices(dtype, layout, seed=19, kind="hermitian")
    check(lambda L, x: L.linalg.pinv(x), a, **k)
    check(lambda L, x: L.linalg.pinv(x, hermitian=True), h, **k)
    check(lambda L, x: L.pinverse(x), a, **k)
    check(lambda L, x: L.linalg.matrix_rank(x), a)
    check(lambda L, x: L.linalg.matrix_rank(x, hermitian=True), h)
    for n in (0, 1, 2, 3, 5, -1, -2):
        check(lambda L, x: L.linalg.matrix_power(x, n), a, **k)
    check(lambda L, x: x.matrix_power(3), a, **k)
    for (n, m) in [(5, 3), (3, 5)]:
        r = matrices(dtype, layout if layout != "0x0" else "contiguous", n=n, m=m, seed=20)
        check(lambda L, x: L.linalg.pinv(x), r, **k)
        check(lambda L, x: L.linalg.matrix_rank(x), r)


def test_pinv_rank_tolerances():
    low = pair(rand((6, 2), "float64", 21) @ rand((2, 5), "float64", 22), "float64")
    for kw in [{}, {"atol": 0.5}, {"rtol": 0.3}, {"atol": 1.0, "rtol": 0.1}, {"hermitian": False}]:
        check(lambda L, x: L.linalg.matrix_rank(x, **kw), low)
        check(lambda L, x: L.linalg.pinv(x, **kw), low, rtol=1e-9, atol=1e-9)
    check(lambda L, x: L.linalg.matrix_rank(x, 2.0), low)
    check(lambda L, x: L.linalg.pinv(x, 0.5), low, rtol=1e-9, atol=1e-9)
    check(lambda L, x: L.pinverse(x, rcond=0.5), low, rtol=1e-9, atol=1e-9)
    # tolerance tensors broadcast against the batch (and widen it)
    b = pair(rand((3, 4, 2), "float64", 23) @ rand((3, 2, 4), "float64", 24), "float64")
    for dtype in ("float32", "float64"):
        for kw in [lambda L: {"atol": L.tensor([0.1, 1e3, 0.0])},
                   lambda L: {"rtol": L.tensor([[0.5], [1e-9]])},
                   lambda L: {"atol": L.tensor([0.0, 5.0, 1e3]), "rtol": L.tensor(0.1)},
                   lambda L: {"atol": L.tensor([])[:, None]}]:
            check(lambda L, x: L.linalg.matrix_rank(x.to(getattr(L, dtype)), **kw(L)), b)
            check(lambda L, x: L.linalg.matrix_rank(x.to(getattr(L, dtype)), hermitian=True,
                                                    **kw(L)), b)
            check(lambda L, x: L.linalg.pinv(x.to(getattr(L, dtype)), **kw(L)), b,
                  rtol=1e-4, atol=1e-4)
    check(lambda L: L.linalg.matrix_power(L.arange(9).view(3, 3), 3))
    check(lambda L: L.linalg.matrix_power(L.arange(9).view(3, 3), 0))
    raises_like(lambda L: L.linalg.matrix_power(L.arange(9).view(3, 3), -1))


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "batched",
                                    "broadcast", "empty_batch"])
def test_norms_cond(dtype, layout):
    k = tol(dtype)
    a = matrices(dtype, layout, n=4, m=3, seed=23)
    sq = matrices(dtype, layout, seed=24)
    for ord in ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")]:
        check(lambda L, x: L.linalg.matrix_norm(x, ord), a, **k)
        check(lambda L, x: L.linalg.matrix_norm(x, ord, keepdim=True), a, **k)
        if a[0].dim() == 3:
            check(lambda L, x: L.linalg.matrix_norm(x, ord, dim=(0, 2)), a, **k)
            check(lambda L, x: L.linalg.matrix_norm(x, ord, dim=(2, -3), keepdim=True), a, **k)
            check(lambda L, x: L.linalg.norm(x, ord, dim=(-1, 0)), a, **k)
        else:
            check(lambda L, x: L.linalg.norm(x, ord), a, **k)
        check(lambda L, x: L.linalg.cond(x, ord), sq, **k)
    check(lambda L, x: L.linalg.cond(x), sq, **k)
    check(lambda L, x: L.linalg.matrix_norm(x, dtype=L.complex128 if x.is_complex()
                                            else L.float64), a)


def test_norm_values():
    check(lambda L: L.linalg.cond(L.zeros(3, 3)))
    check(lambda L: L.linalg.cond(L.zeros(2, 0, 0)))
    check(lambda L: L.linalg.cond(L.ones(3, 4)))
    check(lambda L: L.linalg.matrix_norm(L.zeros(2, 0, 3)))
    check(lambda L: L.linalg.matrix_norm(L.zeros(2, 0, 3), "nuc"))
    check(lambda L: L.linalg.matrix_norm(L.tensor([[float("nan"), 1.0]]), 1))
    check(lambda L: L.linalg.matrix_norm(L.tensor([[float("inf"), 1.0]])))


# ---- matrix_exp ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_matrix_exp_scales(dtype):
    # Norms that pick every Padé degree and the scaling-and-squaring branch.
    k = tol(dtype)
    for scale in (1e-3, 0.05, 0.3, 1.0, 2.0, 4.0, 30.0):
        a = pair(rand((3, 5, 5), dtype, 25) * scale / 5, dtype)
        check(lambda L, x: L.linalg.matrix_exp(x), a, **k)
    check(lambda L: L.linalg.matrix_exp(L.zeros(4, 4, dtype=getattr(L, dtype))))
    check(lambda L: L.linalg.matrix_exp(L.tensor([[2.0]]).to(getattr(L, dtype))), **k)


# ---- householder_product ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_householder_product(dtype):
    k = tol(dtype)
    for (m, n, kk) in [(5, 3, 3), (5, 3, 2), (4, 4, 4), (4, 4, 0)]:
        a = pair(rand((m, n), dtype, 26), dtype)
        t = pair(rand((kk,), dtype, 27) / 4, dtype)
        check(lambda L, x, y: L.linalg.householder_product(x, y), a, t, **k)
        check(lambda L, x, y: L.orgqr(x, y), a, t, **k)
    a = pair(rand((2, 5, 3), dtype, 28), dtype)
    t = pair(rand((2, 3), dtype, 29) / 4, dtype)
    check(lambda L, x, y: L.linalg.householder_product(x, y), a, t, **k)


# ---- out= ----

def test_out():
    a = pair(rand((3, 3), "float64", 30), "float64")
    check(lambda L, x: L.linalg.inv(x, out=L.empty(0, dtype=L.float64)), a)
    check(lambda L, x: L.linalg.det(x, out=L.empty(0, dtype=L.float64)), a)
    out = ember.empty(0, dtype=ember.float64)
    assert ember.linalg.inv(a[0], out=out) is out
    outs = (ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.float64))
    r = ember.linalg.slogdet(a[0], out=outs)
    assert r.sign is outs[0] and r.logabsdet is outs[1]
    assert type(r).__name__ == "linalg_slogdet"


def test_cpp_named_fields():
    r = ember.linalg.lstsq(ember.eye(3), ember.ones(3))
    assert type(r).__name__ == "linalg_lstsq" and r.rank.item() == 3
    assert type(ember.linalg.lu(ember.eye(3))).__name__ == "linalg_lu"
    assert type(ember.linalg.lu_factor(ember.eye(3))).__name__ == "linalg_lu_factor"
