"""ember.linalg decompositions checked by their defining identities (A = Q R, A = U S Vᴴ,
A V = V diag(w), A = L Lᴴ, A = P L U, Moore-Penrose) rather than factor by factor, since signs and
phases of QR/SVD/eigen factors are not unique. Values that are unique (singular values,
eigenvalues, Cholesky and LU factors, least-squares solutions) are compared with NumPy or torch
1.13. Inputs: the four LAPACK dtypes, batch shapes (), (3,), (2, 3), zero-size batches and
matrices, contiguous, transposed and sliced layouts. Value-dependent failures raise
ember.linalg.LinAlgError (a RuntimeError, as torch.linalg.LinAlgError); the _ex variants report
them in `info` instead."""

import numpy as np
import pytest
import torch

import ember
import ember.linalg  # noqa: F401
from _oracle import check as _check, rand_matrix as rand, raises_like, tensors_from, to_numpy

DTYPES = ["float32", "float64", "complex64", "complex128"]
# (layout, batch shape) pairs: every layout and every batch rank, without the full product.
CASES = [("contiguous", ()), ("contiguous", (2, 3)), ("transposed", (3,)), ("sliced", (2, 3)),
         ("sliced", ())]
LAYOUTS = ["contiguous", "transposed", "sliced"]
SHAPES = [(4, 4), (5, 3), (3, 5)]
LA = ember.linalg


def _plain(r):
    """Named result tuples of both libraries as plain tuples (their classes differ)."""
    return tuple(r) if isinstance(r, tuple) else r


def check(fn, *args, **kwargs):
    return _check(lambda L, *a: _plain(fn(L, *a)), *args, **kwargs)


def real_of(dtype):
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


def eps(dtype):
    return float(np.finfo(real_of(dtype)).eps)


def adj(x):
    return np.conj(np.swapaxes(x, -1, -2))


def make(arr, layout):
    """An ember tensor holding `arr` (NumPy) with the given memory layout."""
    dtype = str(arr.dtype)
    if layout == "contiguous" or arr.size == 0:
        return tensors_from(np.ascontiguousarray(arr), dtype)[0]
    if layout == "transposed":
        return ember.from_numpy(np.ascontiguousarray(np.swapaxes(arr, -1, -2))).mT
    if layout == "sliced":
        big = np.zeros(arr.shape[:-2] + (2 * arr.shape[-2], 2 * arr.shape[-1] + 1), dtype=dtype)
        big[..., ::2, 1::2] = arr
        return ember.from_numpy(big)[..., ::2, 1::2]
    raise ValueError(layout)


def npy(t):
    """NumPy copy of an ember tensor, upcast to float64/complex128 for the identity checks."""
    x = to_numpy(t)
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def assert_close(actual, expected, dtype, n, what=""):
    """|actual - expected| <= 60 n eps max(1, |expected|), elementwise max."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.size == 0:
        return
    scale = max(1.0, float(np.abs(expected).max()))
    err = float(np.abs(actual - expected).max())
    assert err <= 60 * max(n, 1) * eps(dtype) * scale, f"{what}: error {err:.3g} (scale {scale})"


def eye_like(x, n):
    return np.broadcast_to(np.eye(n), x.shape[:-2] + (n, n))


def is_dtype(t, dtype):
    assert str(t.dtype).split(".")[-1] == dtype, f"{t.dtype} != {dtype}"


# ---- QR ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_qr(dtype, batch, layout):
    for seed, (m, n) in enumerate(SHAPES):
        a = rand(batch + (m, n), dtype, seed)
        A = make(a, layout)
        k = min(m, n)
        r_reduced = None
        for mode in ("reduced", "complete", "r"):
            Q, R = LA.qr(A, mode=mode)
            tq, tr = torch.linalg.qr(torch.from_numpy(a), mode=mode)
            assert tuple(Q.shape) == tuple(tq.shape) and tuple(R.shape) == tuple(tr.shape), mode
            is_dtype(Q, dtype)
            is_dtype(R, dtype)
            r = npy(R)
            assert np.all(np.tril(r, -1) == 0), f"{mode}: R is not upper triangular"
            # |R[i, i]| is unique (LAPACK fixes signs differently than torch may).
            assert_close(np.abs(np.diagonal(r[..., :k, :], 0, -2, -1)),
                         np.abs(np.diagonal(tr.numpy()[..., :k, :], 0, -2, -1)), dtype, m,
                         f"{mode} |diag R|")
            if mode == "reduced":
                r_reduced = r
            if mode == "r":
                np.testing.assert_array_equal(r, r_reduced)
                continue
            q = npy(Q)
            assert_close(q @ r, a, dtype, m, f"{mode} QR")
            assert_close(adj(q) @ q, eye_like(q, q.shape[-1]), dtype, m, f"{mode} QᴴQ")
        # The legacy spelling: reduced when some=True.
        Q, R = ember.qr(A)
        assert_close(npy(Q) @ npy(R), a, dtype, m, "ember.qr")
        Q, R = ember.qr(A, some=False)
        assert tuple(Q.shape) == batch + (m, m)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(0, 4, 4), (2, 0, 3), (2, 3, 0), (0, 0), (3, 0, 0)])
def test_qr_zero_size(mode, shape):
    x = tensors_from(np.zeros(shape, dtype="float64"), "float64")
    check(lambda L, a: L.linalg.qr(a, mode=mode), x)


# ---- SVD ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_svd(dtype, batch, layout):
    for seed, (m, n) in enumerate(SHAPES):
        a = rand(batch + (m, n), dtype, seed + 10)
        A = make(a, layout)
        k = min(m, n)
        s_ref = np.linalg.svd(a.astype(np.complex128 if "complex" in dtype else np.float64),
                              compute_uv=False)
        for full in (True, False):
            U, S, Vh = LA.svd(A, full_matrices=full)
            assert tuple(U.shape) == batch + ((m, m) if full else (m, k))
            assert tuple(Vh.shape) == batch + ((n, n) if full else (k, n))
            assert tuple(S.shape) == batch + (k,)
            is_dtype(U, dtype)
            is_dtype(Vh, dtype)
            is_dtype(S, real_of(dtype))
            u, s, vh = npy(U), npy(S), npy(Vh)
            assert np.all(s >= 0) and np.all(np.diff(s, axis=-1) <= 0), "S not descending"
            assert_close(s, s_ref, dtype, max(m, n), "S")
            recon = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
            assert_close(recon, a, dtype, max(m, n), f"full={full} U S Vh")
            assert_close(adj(u) @ u, eye_like(u, u.shape[-1]), dtype, m, "UᴴU")
            assert_close(vh @ adj(vh), eye_like(vh, vh.shape[-2]), dtype, n, "Vh Vhᴴ")
        assert_close(npy(LA.svdvals(A)), s, dtype, max(m, n), "svdvals")
        # torch.svd spelling: V (not Vᴴ), reduced when some=True.
        U, S, V = ember.svd(A)
        assert_close((npy(U) * npy(S)[..., None, :]) @ adj(npy(V)), a, dtype, max(m, n),
                     "ember.svd")


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("shape", [(0, 4, 4), (2, 0, 3), (2, 3, 0), (0, 0)])
def test_svd_zero_size(full, shape):
    x = tensors_from(np.zeros(shape, dtype="complex64"), "complex64")
    check(lambda L, a: L.linalg.svd(a, full_matrices=full), x)
    check(lambda L, a: L.linalg.svdvals(a), x)


# ---- eigh / eigvalsh ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_eigh(dtype, batch, layout):
    n = 5
    h = rand(batch + (n, n), dtype, 20, kind="hermitian")
    junk = rand(batch + (n, n), dtype, 21) * 100
    for uplo in ("L", "U", "l"):
        # The other triangle holds junk: only the `uplo` triangle may be read.
        lower = uplo in "Ll"
        g = (np.tril(h) + np.triu(junk, 1)) if lower else (np.triu(h) + np.tril(junk, -1))
        g = g.astype(dtype)
        w, V = LA.eigh(make(g, layout), UPLO=uplo)
        is_dtype(w, real_of(dtype))
        is_dtype(V, dtype)
        ww, v = npy(w), npy(V)
        assert np.all(np.diff(ww, axis=-1) >= 0), "eigenvalues not ascending"
        assert_close(h @ v, v * ww[..., None, :], dtype, n, f"{uplo}: A V = V diag(w)")
        assert_close(adj(v) @ v, eye_like(v, n), dtype, n, f"{uplo}: VᴴV")
        wref = np.linalg.eigvalsh(g.astype(np.complex128 if "complex" in dtype else np.float64),
                                  UPLO=uplo.upper())
        assert_close(ww, wref, dtype, n, "eigh w")
        assert_close(npy(LA.eigvalsh(make(g, layout), UPLO=uplo)), wref, dtype, n, "eigvalsh")


@pytest.mark.parametrize("shape", [(0, 3, 3), (0, 0), (2, 0, 0)])
def test_eigh_zero_size(shape):
    x = tensors_from(np.zeros(shape, dtype="float32"), "float32")
    check(lambda L, a: L.linalg.eigh(a), x)
    check(lambda L, a: L.linalg.eigvalsh(a, "U"), x)


# ---- eig / eigvals ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_eig(dtype, batch, layout):
    n = 5
    a = rand(batch + (n, n), dtype, 30)
    A = make(a, layout)
    cdt = "complex128" if dtype in ("float64", "complex128") else "complex64"
    w, V = LA.eig(A)
    is_dtype(w, cdt)
    is_dtype(V, cdt)
    ww, v = npy(w), npy(V)
    assert_close(a @ v, v * ww[..., None, :], dtype, n, "A V = V diag(w)")
    assert_close(np.linalg.norm(v, axis=-2), np.ones(batch + (n,)), dtype, n, "|v| = 1")
    # The same spectrum as NumPy (matched as multisets: LAPACK's order is not sorted).
    ref = np.linalg.eigvals(a.astype(np.complex128))
    wv = npy(LA.eigvals(A))
    for got in (ww, wv):
        dist = np.abs(got[..., :, None] - ref[..., None, :])
        assert_close(dist.min(-1), np.zeros(batch + (n,)), dtype, 4 * n, "eigvals vs numpy")
        assert_close(dist.min(-2), np.zeros(batch + (n,)), dtype, 4 * n, "numpy vs eigvals")
    if dtype in ("float32", "float64"):
        # Real input: the spectrum is closed under conjugation.
        assert_close(np.sort_complex(np.conj(wv).reshape(-1, n)),
                     np.sort_complex(wv.reshape(-1, n)), dtype, 4 * n, "conjugate pairs")


def test_eig_values():
    # A rotation: eigenvalues ±i with conjugate eigenvectors.
    check(lambda L: L.linalg.eigvals(L.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=L.float64)))
    check(lambda L: L.linalg.eig(L.tensor([[2.0, 0.0], [0.0, 3.0]], dtype=L.float64)))
    check(lambda L: L.linalg.eig(L.zeros(0, 3, 3)))
    check(lambda L: L.linalg.eigvals(L.zeros(2, 0, 0, dtype=L.complex128)))


# ---- Cholesky ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_cholesky(dtype, batch, layout):
    n = 4
    a = rand(batch + (n, n), dtype, 40, kind="spd")
    A = make(a, layout)
    L = npy(LA.cholesky(A))
    assert np.all(np.triu(L, 1) == 0), "L is not lower triangular"
    d = np.diagonal(L, 0, -2, -1)
    assert np.all(d.real > 0) and np.all(d.imag == 0), "diag(L) is not real positive"
    assert_close(L @ adj(L), a, dtype, n, "L Lᴴ")
    U = npy(LA.cholesky(A, upper=True))
    assert np.all(np.tril(U, -1) == 0), "U is not upper triangular"
    assert_close(adj(U) @ U, a, dtype, n, "Uᴴ U")
    assert_close(U, adj(L), dtype, n, "U = Lᴴ")
    assert_close(npy(ember.cholesky(A)), L, dtype, n, "ember.cholesky")
    assert_close(npy(A.cholesky(upper=True)), U, dtype, n, "Tensor.cholesky")
    Lx, info = LA.cholesky_ex(A)
    assert_close(npy(Lx), L, dtype, n, "cholesky_ex")
    assert tuple(info.shape) == batch and not info.any().item()
    is_dtype(info, "int32")
    # The factor is unique: equal to torch's. Only the `upper`/lower triangle is read.
    junk = np.triu(rand(batch + (n, n), dtype, 41), 1)
    for upper in (False, True):
        g = (a + junk) if not upper else (a + adj(junk).astype(dtype))
        check(lambda Lb, x: Lb.linalg.cholesky(x, upper=upper), tensors_from(g, dtype),
              rtol=100 * eps(dtype), atol=100 * eps(dtype))


# ---- LU ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_lu(dtype, batch, layout):
    for seed, (m, n) in enumerate(SHAPES):
        a = rand(batch + (m, n), dtype, 50 + seed)
        A = make(a, layout)
        k = min(m, n)
        P, L, U = LA.lu(A)
        assert tuple(P.shape) == batch + (m, m)
        assert tuple(L.shape) == batch + (m, k) and tuple(U.shape) == batch + (k, n)
        p, lo, up = npy(P), npy(L), npy(U)
        assert np.all(np.isin(p, (0, 1))) and np.all(p.sum(-1) == 1) and np.all(p.sum(-2) == 1)
        assert np.all(np.triu(lo, 1) == 0) and np.all(np.diagonal(lo, 0, -2, -1) == 1)
        assert np.all(np.tril(up, -1) == 0)
        assert_close(p @ lo @ up, a, dtype, m, "P L U")
        # Partial pivoting keeps |L| <= 1 (LAPACK pivots complex rows on |re| + |im|: <= √2).
        assert np.abs(lo).max() <= (2 ** 0.5 if "complex" in dtype else 1) + 1e-6
        LU, piv = LA.lu_factor(A)
        is_dtype(piv, "int32")
        pv = to_numpy(piv)
        assert pv.shape == batch + (k,) and pv.min() >= 1 and pv.max() <= m
        P2, L2, U2 = ember.lu_unpack(LU, piv)
        np.testing.assert_array_equal(npy(P2), p)
        np.testing.assert_array_equal(npy(L2), lo)
        np.testing.assert_array_equal(npy(U2), up)
        LUx, pivx, info = LA.lu_factor_ex(A)
        np.testing.assert_array_equal(npy(LUx), npy(LU))
        assert tuple(info.shape) == batch and not info.any().item()
        if m != n:
            continue
        b = rand(batch + (n, 2), dtype, 60)
        B = make(b, layout)
        x = npy(LA.lu_solve(LU, piv, B))
        assert_close(a @ x, b, dtype, n, "lu_solve")
        x = npy(LA.lu_solve(LU, piv, B, adjoint=True))
        assert_close(adj(a) @ x, b, dtype, n, "lu_solve adjoint")
        bt = np.swapaxes(b, -1, -2).copy()
        x = npy(LA.lu_solve(LU, piv, make(bt, layout), left=False))
        assert_close(x @ a, bt, dtype, n, "lu_solve left=False")
        x = npy(LA.lu_solve(LU, piv, make(bt, layout), left=False, adjoint=True))
        assert_close(x @ adj(a), bt, dtype, n, "lu_solve left=False adjoint")
        # lu_solve agrees with solve.
        assert_close(npy(LA.solve(A, B)), npy(LA.lu_solve(LU, piv, B)), dtype, n, "solve")


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 3), (2, 3, 0), (0, 0)])
def test_lu_zero_size(shape):
    x = tensors_from(np.zeros(shape, dtype="float64"), "float64")
    check(lambda L, a: L.linalg.lu(a), x)
    check(lambda L, a: L.linalg.lu_factor(a), x)
    check(lambda L, a: L.linalg.lu_factor_ex(a), x)


@pytest.mark.parametrize("shape", [(0, 3, 3), (0, 0), (2, 0, 0)])
def test_zero_size_others(shape):
    x = tensors_from(np.zeros(shape, dtype="complex128"), "complex128")
    check(lambda L, a: L.linalg.cholesky(a), x)
    check(lambda L, a: L.linalg.cholesky_ex(a, upper=True), x)
    check(lambda L, a: L.linalg.matrix_exp(a), x)
    check(lambda L, a: L.linalg.inv_ex(a), x)
    check(lambda L, a: L.linalg.eigvals(a), x)
    check(lambda L, a: L.linalg.householder_product(a, a[..., 0]), x)
    check(lambda L, a: L.linalg.lstsq(a, a, driver="gelsd"), x)


# ---- householder_product ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_householder_product(dtype, batch, layout):
    for (m, n) in [(5, 3), (4, 4)]:
        a = rand(batch + (m, n), dtype, 70)
        # Reflectors from torch's geqrf: the product is Q of the QR decomposition.
        refl, tau = torch.geqrf(torch.from_numpy(a))
        Q = LA.householder_product(make(refl.numpy(), layout), make(tau.numpy(), "contiguous"))
        want = torch.linalg.householder_product(refl, tau)
        assert_close(npy(Q), want.numpy(), dtype, m, "vs torch")
        q = npy(Q)
        assert_close(adj(q) @ q, eye_like(q, n), dtype, m, "QᴴQ")
        r = np.triu(refl.numpy())[..., :n, :]
        assert_close(q @ r, a, dtype, m, "Q R")
        # Fewer reflectors than columns.
        check(lambda L, x, t: L.linalg.householder_product(x, t[..., :1]),
              tensors_from(refl.numpy(), dtype), tensors_from(tau.numpy(), dtype),
              rtol=100 * eps(dtype), atol=100 * eps(dtype))


# ---- lstsq ----

def np_lstsq(a, b, rcond):
    """NumPy's minimum-norm least-squares solution, one matrix at a time."""
    vec = b.ndim == a.ndim - 1
    a2 = a.reshape((-1,) + a.shape[-2:])
    b2 = (b[..., None] if vec else b).reshape((-1,) + b.shape[-2 + vec:] + ((1,) if vec else ()))
    xs, ranks = [], []
    for ai, bi in zip(a2, b2):
        x, _, r, _ = np.linalg.lstsq(ai.astype(np.complex128 if np.iscomplexobj(ai)
                                               else np.float64), bi, rcond=rcond)
        xs.append(x)
        ranks.append(r)
    x = np.stack(xs).reshape(a.shape[:-2] + (a.shape[-1],) + (() if vec else (b.shape[-1],)))
    return x, np.array(ranks).reshape(a.shape[:-2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_lstsq(dtype, driver, layout):
    cases = [((6, 4), (6, 2)), ((6, 4), (6,)), ((4, 4), (4, 3)), ((2, 6, 4), (2, 6, 2)),
             ((3, 5), (3, 2)), ((2, 3, 5), (2, 3))]
    for seed, (sa, sb) in enumerate(cases):
        if driver == "gels" and sa[-2] < sa[-1]:
            continue  # gels needs full rank; wide systems are checked with the other drivers
        a = rand(sa, dtype, 80 + seed)
        b = rand(sb, dtype, 90 + seed)
        r = LA.lstsq(make(a, layout), make(b, "contiguous" if b.ndim < 2 else layout),
                     driver=driver)
        want, rank = np_lstsq(a, b, None)
        is_dtype(r.solution, dtype)
        assert_close(npy(r.solution), want, dtype, 4 * max(sa[-2:]), f"{sa} {sb}")
        if driver != "gels":
            np.testing.assert_array_equal(to_numpy(r.rank), rank)
    # Rank 2 in a 6x4 system: the rank-revealing drivers give the minimum-norm solution.
    if driver != "gels":
        a = (rand((6, 2), dtype, 98) @ rand((2, 4), dtype, 99)).astype(dtype)
        b = rand((6, 3), dtype, 97)
        rcond = 1e-4 if real_of(dtype) == "float32" else 1e-10
        r = LA.lstsq(make(a, layout), make(b, layout), rcond=rcond, driver=driver)
        want, rank = np_lstsq(a, b, rcond)
        assert int(r.rank.item()) == 2 == int(rank)
        assert_close(npy(r.solution), want, dtype, 400, "rank-deficient")


def test_lstsq_rank_deficient_gels():
    # torch 1.13 does not raise for gels on a rank-deficient A: it returns LAPACK's output.
    check(lambda L: L.linalg.lstsq(L.zeros(5, 3), L.ones(5, 2), driver="gels"))
    check(lambda L: L.linalg.lstsq(L.zeros(2, 5, 3, dtype=L.float64),
                                   L.ones(2, 5, 1, dtype=L.float64), driver="gels"))
    # B with one dim less than A is a batch of vectors (unlike solve's rule).
    raises_like(lambda L: L.linalg.lstsq(L.zeros(2, 5, 3), L.ones(5, 1)))
    check(lambda L: L.linalg.lstsq(L.eye(3).expand(2, 3, 3), L.ones(2, 3)))


def test_lstsq_values_vs_torch():
    a = tensors_from(rand((2, 6, 4), "float64", 100), "float64")
    b = tensors_from(rand((2, 6, 3), "float64", 101), "float64")
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        check(lambda L, x, y: L.linalg.lstsq(x, y, driver=driver), a, b, rtol=1e-9, atol=1e-9)


# ---- pinv ----

def assert_penrose(a, x, dtype, n, what):
    """The four Moore-Penrose conditions for X = pinv(A)."""
    ax, xa = a @ x, x @ a
    assert_close(ax @ a, a, dtype, n, what + " AXA = A")
    assert_close(xa @ x, x, dtype, n, what + " XAX = X")
    assert_close(adj(ax), ax, dtype, n, what + " (AX)ᴴ = AX")
    assert_close(adj(xa), xa, dtype, n, what + " (XA)ᴴ = XA")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_pinv(dtype, batch, layout):
    for seed, (m, n) in enumerate(SHAPES):
        a = rand(batch + (m, n), dtype, 110 + seed)
        X = LA.pinv(make(a, layout))
        is_dtype(X, dtype)
        assert tuple(X.shape) == batch + (n, m)
        assert_penrose(a, npy(X), dtype, 4 * max(m, n), f"{m}x{n}")
    # Rank 2 of 5: the small singular values are cut off by rtol.
    low = (rand(batch + (5, 2), dtype, 120) @ rand(batch + (2, 4), dtype, 121)).astype(dtype)
    rtol = 1e-4 if real_of(dtype) == "float32" else 1e-10
    X = npy(LA.pinv(make(low, layout), rtol=rtol))
    assert_penrose(low, X, dtype, 200, "rank 2")
    h = rand(batch + (4, 4), dtype, 122, kind="hermitian")
    X = npy(LA.pinv(make(h, layout), hermitian=True))
    assert_penrose(h, X, dtype, 40, "hermitian")
    assert_close(X, npy(LA.pinv(make(h, layout))), dtype, 40, "hermitian = general")


def test_pinv_zero_size():
    for shape in [(0, 3, 2), (2, 0, 3), (3, 0), (0, 0)]:
        check(lambda L, x: L.linalg.pinv(x), tensors_from(np.zeros(shape), "float64"))


# ---- matrix_exp ----

def expm_ref(a):
    """exp(A) in float64/complex128 by scaling and squaring a 30-term Taylor series."""
    a = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    norm = np.abs(a).sum(-2).max() if a.size else 0.0
    s = int(max(0, np.ceil(np.log2(norm)))) + 1 if norm > 0 else 0
    x = a / 2.0 ** s
    term = eye_like(a, a.shape[-1]).copy()
    r = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        r = r + term
    for _ in range(s):
        r = r @ r
    return r


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout,batch", CASES)
def test_matrix_exp(dtype, batch, layout):
    n = 4
    for scale in (0.01, 0.5, 3.0):
        a = (rand(batch + (n, n), dtype, 130) * scale / n).astype(dtype)
        E = LA.matrix_exp(make(a, layout))
        is_dtype(E, dtype)
        e = npy(E)
        assert_close(e, expm_ref(a), dtype, 4 * n, f"scale {scale}")
        if scale >= 0.5:
            # torch 1.13 loses ~1e-12 for norms near 0.02 (its degree-2 Taylor branch): compared
            # only where it is accurate.
            wide = np.complex128 if "complex" in dtype else np.float64
            want = torch.linalg.matrix_exp(torch.from_numpy(a.astype(wide))).numpy()
            assert_close(e, want, dtype, 4 * n, f"scale {scale} vs torch")
        # exp(A) exp(-A) = I
        Em = npy(LA.matrix_exp(make((-a).astype(dtype), layout)))
        assert_close(e @ Em, eye_like(Em, n), dtype, 20 * n, "exp(A) exp(-A)")
    # Hermitian input: V diag(exp(w)) Vᴴ.
    h = (rand(batch + (n, n), dtype, 131, kind="hermitian") / 4).astype(dtype)
    w, v = np.linalg.eigh(h.astype(np.complex128 if "complex" in dtype else np.float64))
    want = (v * np.exp(w)[..., None, :]) @ adj(v)
    assert_close(npy(LA.matrix_exp(make(h, layout))), want, dtype, 4 * n, "hermitian")


def test_matrix_exp_low_precision():
    # bfloat16 computes in float32 and rounds (torch 1.13's own bfloat16 kernel is inaccurate
    # for n > 1, so the oracle is torch on the float32 values rounded to bfloat16).
    a = (rand((2, 4, 4), "float32", 140) / 8).astype("float32")
    e = ember.from_numpy(a).to(ember.bfloat16)
    t = torch.from_numpy(a).to(torch.bfloat16)
    r = LA.matrix_exp(e)
    assert r.dtype == ember.bfloat16
    want = torch.linalg.matrix_exp(t.float()).to(torch.bfloat16)
    torch.testing.assert_close(torch.from_numpy(to_numpy(r)), want.float(), rtol=1e-2, atol=1e-2)
    check(lambda L: L.linalg.matrix_exp(L.tensor([[2.0]], dtype=L.bfloat16)))
    check(lambda L: L.matrix_exp(L.zeros(3, 3, dtype=L.bfloat16)))
    check(lambda L: L.linalg.matrix_exp(L.zeros(2, 0, 0, dtype=L.bfloat16)))
    # float16 has no kernel in torch 1.13 (RuntimeError) except for empty inputs.
    raises_like(lambda L: L.linalg.matrix_exp(L.ones(3, 3, dtype=L.float16)))
    raises_like(lambda L: L.linalg.matrix_exp(L.ones(1, 1, dtype=L.float16)))
    check(lambda L: L.linalg.matrix_exp(L.zeros(2, 0, 0, dtype=L.float16)))
    for dt in ("int64", "int32", "bool"):
        raises_like(lambda L: L.linalg.matrix_exp(L.ones(3, 3, dtype=getattr(L, dt))))


# ---- errors ----

def test_linalg_error_class():
    assert issubclass(LA.LinAlgError, RuntimeError)
    assert LA.LinAlgError.__name__ == "LinAlgError"
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("fn", [
    lambda L: L.linalg.inv(L.zeros(3, 3)),
    lambda L: L.linalg.inv(L.ones(2, 3, 3, dtype=L.complex128)),
    lambda L: L.inverse(L.zeros(2, 2)),
    lambda L: L.linalg.solve(L.zeros(3, 3), L.ones(3)),
    lambda L: L.linalg.solve(L.stack([L.eye(3), L.zeros(3, 3)]), L.ones(2, 3, 2)),
    lambda L: L.linalg.cholesky(-L.eye(3)),
    lambda L: L.linalg.cholesky(L.stack([L.eye(2), L.zeros(2, 2)])),
    lambda L: L.linalg.inv_ex(L.zeros(2, 2), check_errors=True),
    lambda L: L.linalg.cholesky_ex(-L.eye(2), check_errors=True),
    lambda L: L.linalg.solve_ex(L.zeros(2, 2), L.ones(2), check_errors=True),
])
def test_value_errors(fn):
    with pytest.raises(torch.linalg.LinAlgError):
        fn(torch)
    with pytest.raises(LA.LinAlgError):
        fn(ember)


def test_error_messages():
    with pytest.raises(LA.LinAlgError, match=r"\[linalg.cholesky\] \(Batch element 2\): The "
                       r"factorization could not be completed because the input is not "
                       r"positive-definite \(the leading minor of order 2 is not "
                       r"positive-definite\)"):
        a = ember.eye(3).expand(4, 3, 3).clone()
        a[2, 1, 1] = -1.0
        a[3, 0, 0] = -1.0
        LA.cholesky(a)
    with pytest.raises(LA.LinAlgError, match=r"\[linalg.cholesky\] The factorization"):
        LA.cholesky(-ember.eye(2))
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The solver failed because "
                       r"the input matrix is singular"):
        LA.solve(ember.stack([ember.eye(2), ember.zeros(2, 2)]), ember.ones(2))
    # lu_factor raises a plain RuntimeError (not LinAlgError), as torch 1.13.
    for fn in (lambda L: L.linalg.lu_factor(L.tensor([[1.0, 2.0], [2.0, 4.0]])),
               lambda L: L.linalg.lu_factor_ex(L.zeros(2, 3, 3), check_errors=True)):
        ex = raises_like(fn)
        assert not isinstance(ex, LA.LinAlgError)
    with pytest.raises(RuntimeError, match=r"\[linalg.lu_factor\] U\[2,2\] is zero"):
        LA.lu_factor(ember.tensor([[1.0, 2.0], [2.0, 4.0]]))


def test_ex_variants_report():
    stack = lambda L: L.stack([L.eye(3), L.zeros(3, 3), -L.eye(3)])  # noqa: E731
    check(lambda L: L.linalg.inv_ex(stack(L)).info)
    check(lambda L: L.linalg.solve_ex(stack(L), L.ones(3, 1)).info)
    check(lambda L: L.linalg.cholesky_ex(stack(L)).info)
    check(lambda L: L.linalg.lu_factor_ex(stack(L)).info)
    # The non-failing batch elements are still computed.
    x, info = LA.solve_ex(stack(ember), ember.ones(3, 1))
    np.testing.assert_array_equal(to_numpy(info), [0, 1, 0])
    np.testing.assert_allclose(to_numpy(x)[0], np.ones((3, 1)))
    np.testing.assert_allclose(to_numpy(x)[2], -np.ones((3, 1)))
    L, info = LA.cholesky_ex(stack(ember))
    np.testing.assert_array_equal(to_numpy(info), [0, 1, 1])
    np.testing.assert_array_equal(to_numpy(L)[0], np.eye(3))


@pytest.mark.parametrize("name,args", [
    ("qr", [(3,)]), ("svd", [(3,)]), ("svdvals", [(4,)]), ("eigh", [(3, 4)]),
    ("eigvalsh", [(2, 3)]), ("eig", [(3, 4)]), ("eigvals", [(5,)]), ("cholesky", [(2, 3)]),
    ("lu", [(3,)]), ("lu_factor", [(2,)]), ("pinv", [(3,)]), ("matrix_exp", [(3, 4)]),
    ("inv", [(2, 3)]), ("solve", [(3, 3), (4,)]), ("solve", [(3, 4), (3,)]),
    ("lstsq", [(5, 3), (4,)]), ("householder_product", [(3, 4), (3,)]),
    ("householder_product", [(4, 3), (2, 3)]), ("lu_solve", [(3, 3), None, (4, 1)]),
])
def test_bad_shapes(name, args):
    def fn(L):
        xs = []
        for s in args:
            xs.append(L.zeros(3, dtype=L.int32) if s is None else L.ones(*s))
        return getattr(L.linalg, name)(*xs)
    ex = raises_like(fn)
    assert isinstance(ex, RuntimeError) and not isinstance(ex, LA.LinAlgError)


@pytest.mark.parametrize("name", ["qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals",
                                  "cholesky", "cholesky_ex", "lu", "lu_factor", "lu_factor_ex",
                                  "pinv", "inv", "inv_ex", "matrix_exp"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_dtypes(name, dtype):
    raises_like(lambda L: getattr(L.linalg, name)(L.ones(3, 3, dtype=getattr(L, dtype))),
                key=(name, dtype))


def test_bad_arguments():
    raises_like(lambda L: L.linalg.qr(L.ones(3, 3), mode="full"))
    raises_like(lambda L: L.linalg.eigh(L.eye(3), UPLO="X"))
    raises_like(lambda L: L.linalg.eigvalsh(L.eye(3), UPLO="LU"))
    raises_like(lambda L: L.linalg.lstsq(L.ones(5, 3), L.ones(5, 2), driver="gesv"))
    raises_like(lambda L: L.linalg.householder_product(L.ones(4, 3), L.ones(3, dtype=L.float64)))
    raises_like(lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(3)), L.ones(3, 1,
                                                                                  dtype=L.float64)))
    raises_like(lambda L: L.linalg.solve(L.eye(3, dtype=L.complex64), L.ones(3)))


# ---- values PyTorch 1.13 fixes for singular and non-finite input ----

@pytest.mark.parametrize("p", [1, -1, float("inf"), float("-inf"), "fro", "nuc", 2, -2, None])
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_cond_singular(p, dtype):
    # inf for a singular matrix (nan for the nuclear norm of a zero matrix, as torch 1.13).
    dt = lambda L: getattr(L, dtype)  # noqa: E731
    check(lambda L: L.linalg.cond(L.zeros(2, 3, 3, dtype=dt(L)), p))
    # ones(3, 3) is singular, but whether LU/SVD meet an exact zero (inf, or 0 for p=-2) or a
    # rounding-sized pivot (a huge finite value) depends on the BLAS kernels of the CPU: assert
    # the class of the answer, never the rounding noise.
    for L in (torch, ember):
        c = float(L.linalg.cond(L.ones(3, 3, dtype=dt(L)), p).abs())
        if p == -2:
            assert c <= 1e-6, (L.__name__, c)
        else:
            assert c == float("inf") or c >= 1e6, (L.__name__, c)
    check(lambda L: L.linalg.cond(L.stack([L.eye(3), L.zeros(3, 3), 2 * L.eye(3)]).to(dt(L)),
                                  p), rtol=1e-5, atol=0)
    if p not in ("nuc", 2, -2, None):
        check(lambda L: L.linalg.cond(L.tensor([[float("nan"), 1.0], [1.0, 1.0]]).to(dt(L)), p))


def test_non_finite_inputs():
    nan = float("nan")
    a = lambda L: L.tensor([[nan, 1.0], [1.0, 1.0]])  # noqa: E731
    for fn in (lambda L: L.linalg.svd(a(L)), lambda L: L.linalg.svdvals(a(L)),
               lambda L: L.linalg.pinv(a(L)), lambda L: L.linalg.matrix_rank(a(L)),
               lambda L: L.linalg.cond(a(L)), lambda L: L.linalg.matrix_norm(a(L), 2)):
        with pytest.raises(torch.linalg.LinAlgError):
            fn(torch)
        with pytest.raises(LA.LinAlgError, match="non-finite"):
            fn(ember)
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\)"):
        LA.svdvals(ember.stack([ember.eye(2), a(ember)]))
    # eig rejects non-finite input with a plain RuntimeError.
    for fn in (lambda L: L.linalg.eig(a(L)), lambda L: L.linalg.eigvals(a(L).to(L.complex64))):
        ex = raises_like(fn)
        assert not isinstance(ex, LA.LinAlgError)
    # Routines that propagate NaN.
    check(lambda L: L.linalg.eigvalsh(a(L)))
    check(lambda L: L.linalg.det(a(L)))
    check(lambda L: L.linalg.qr(a(L)))
    check(lambda L: L.linalg.lu(a(L)))


def test_singular_ex_results():
    # The _ex variants return LAPACK's result for singular input, as torch does.
    check(lambda L: L.linalg.inv_ex(L.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=L.float64)))
    check(lambda L: L.linalg.solve_ex(L.tensor([[1.0, 2.0], [2.0, 4.0]]), L.ones(2)))
    check(lambda L: L.linalg.lu(L.zeros(2, 2)))
