"""The rest of torch.linalg (vander, vecdot, tensorinv, tensorsolve, ldl_factor(_ex), ldl_solve)
and the LAPACK-style legacy functions (geqrf, ormqr, lu, lu_solve, symeig, svd_lowrank,
pca_lowrank) against torch 1.13. Unique results are compared value for value; LDL, geqrf and
ormqr run the same LAPACK routines as torch, so their factors match too. The randomized low-rank
factorizations are checked by their singular values and reconstructions."""

import warnings

import numpy as np
import pytest
import torch

import ember
import ember.linalg  # noqa: F401
from _oracle import assert_same, check as _check, raises_like, tensors_from
from test_autograd_index import ad_check

LA_DTYPES = ["float32", "float64", "complex64", "complex128"]


def _plain(r):
    return tuple(r) if isinstance(r, tuple) else r


def check(fn, *args, **kwargs):
    return _check(lambda L, *a: _plain(fn(L, *a)), *args, **kwargs)


def tol(dtype):
    if dtype in ("float32", "complex64"):
        return {"rtol": 2e-4, "atol": 2e-4}
    return {"rtol": 1e-9, "atol": 1e-9}


def rnd(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a


def pair(arr, dtype):
    return tensors_from(np.ascontiguousarray(np.asarray(arr).astype(dtype)), dtype)


def sym(n, dtype, batch=(), hermitian=False, seed=0):
    a = rnd(batch + (n, n), dtype, seed)
    at = np.swapaxes(a, -1, -2)
    return a + (np.conj(at) if hermitian else at)


# ---- vander / vecdot ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (0,), (2, 0, 3)])
@pytest.mark.parametrize("N", [None, 2, 5])
def test_vander(dtype, shape, N):
    x = pair(np.round(rnd(shape, dtype) * 3) if dtype == "int64" else rnd(shape, dtype), dtype)
    check(lambda L, a: L.linalg.vander(a, N=N), x, **tol(dtype))


def test_vander_errors_and_strided():
    x = pair(rnd((3, 8), "float64"), "float64")
    check(lambda L, a: L.linalg.vander(a[:, ::2]), x)
    check(lambda L, a: L.linalg.vander(a.t()), x)
    raises_like(lambda L, a: L.linalg.vander(a, N=1), x)
    raises_like(lambda L, a: L.linalg.vander(a > 0), x)
    raises_like(lambda L, a: L.linalg.vander(a[0, 0]), x)
    check(lambda L, a: L.linalg.vander(a[0, 0], N=3), x)


@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_vecdot(dtype):
    a = pair(rnd((2, 3, 4), dtype, 1), dtype)
    b = pair(rnd((3, 4), dtype, 2), dtype)
    # Computed as sum(conj(x) * y) on both sides: Debian's torch complex dot is unreliable.
    ref = lambda L, x, y, d: (x.conj() * y).sum(d) if L is torch else L.linalg.vecdot(x, y, dim=d)
    for d in (-1, 1, 0, -2):
        if d in (0, -2):
            check(lambda L, x, y: ref(L, x, y.unsqueeze(0), d), a, b, **tol(dtype))
        else:
            check(lambda L, x, y: ref(L, x, y, d), a, b, **tol(dtype))
    check(lambda L, x, y: ref(L, x[..., ::2], y[:, 1::2], -1), a, b, **tol(dtype))
    check(lambda L, x, y: ref(L, x[:, :0], y[:0], -1), a, b)


def test_vecdot_matches_torch_real_and_errors():
    a = pair(rnd((3, 5), "float64", 1), "float64")
    b = pair(rnd((5,), "float64", 2), "float64")
    check(lambda L, x, y: L.linalg.vecdot(x, y), a, b)
    raises_like(lambda L, x, y: L.linalg.vecdot(x, y.float()), a, b)
    raises_like(lambda L, x, y: L.linalg.vecdot(x.long(), y.long()), a, b)
    raises_like(lambda L, x, y: L.linalg.vecdot(x, y[:4]), a, b)


# ---- tensorinv / tensorsolve ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_tensorinv(dtype):
    a = (rnd((24, 24), dtype) + 8 * np.eye(24)).reshape(4, 6, 2, 2, 6)
    x = pair(a, dtype)
    check(lambda L, m: L.linalg.tensorinv(m, ind=2), x, **tol(dtype))
    y = pair((rnd((6, 6), dtype) + 6 * np.eye(6)).reshape(2, 3, 6), dtype)
    check(lambda L, m: L.linalg.tensorinv(m, ind=2), y, **tol(dtype))
    check(lambda L, m: L.linalg.tensorinv(m.transpose(0, 1), ind=2), y, **tol(dtype))


def test_tensorinv_errors():
    x = pair(rnd((4, 6), "float64"), "float64")
    raises_like(lambda L, m: L.linalg.tensorinv(m, ind=1), x)
    raises_like(lambda L, m: L.linalg.tensorinv(m, ind=0), x)
    raises_like(lambda L, m: L.linalg.tensorinv(m.int(), ind=1), x)


@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_tensorsolve(dtype):
    A = pair((rnd((6, 6), dtype) + 6 * np.eye(6)).reshape(2, 3, 6), dtype)
    B = pair(rnd((2, 3), dtype, 3), dtype)
    check(lambda L, a, b: L.linalg.tensorsolve(a, b), A, B, **tol(dtype))
    A2 = pair((rnd((6, 6), dtype) + 6 * np.eye(6)).reshape(6, 2, 3), dtype)
    B2 = pair(rnd((6,), dtype, 3), dtype)
    check(lambda L, a, b: L.linalg.tensorsolve(a, b, dims=(0,)), A2, B2, **tol(dtype))
    check(lambda L, a, b: L.linalg.tensorsolve(a.permute(1, 2, 0), b), A2, B2, **tol(dtype))


def test_tensorsolve_errors():
    A = pair(rnd((6, 2, 3), "float64"), "float64")
    B = pair(rnd((5,), "float64", 3), "float64")
    raises_like(lambda L, a, b: L.linalg.tensorsolve(a, b), A, B)
    raises_like(lambda L, a, b: L.linalg.tensorsolve(a, b.float()), A, B)


# ---- LDL ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("batch", [(), (3,), (2, 0)])
def test_ldl_factor_and_solve(dtype, hermitian, batch):
    A = pair(sym(5, dtype, batch, hermitian), dtype)
    B = pair(rnd(batch + (5, 2), dtype, 7), dtype)
    check(lambda L, a: L.linalg.ldl_factor(a, hermitian=hermitian), A, **tol(dtype))
    check(lambda L, a: L.linalg.ldl_factor_ex(a, hermitian=hermitian), A, **tol(dtype))
    check(lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a, hermitian=hermitian), b,
                                             hermitian=hermitian), A, B, **tol(dtype))
    # The solution solves the system (independent of the factor's layout).
    ea, eb = A[0], B[0]
    LD, piv = ember.linalg.ldl_factor(ea, hermitian=hermitian)
    X = ember.linalg.ldl_solve(LD, piv, eb, hermitian=hermitian)
    assert_same(ember.matmul(ea, X), torch.from_numpy(np.ascontiguousarray(B[1].numpy())),
                what="A @ X", **tol(dtype))


def test_ldl_layouts_named_tuples_and_errors():
    A = pair(sym(4, "float64", (2,)), "float64")
    B = pair(rnd((2, 4, 3), "float64", 7), "float64")
    check(lambda L, a: L.linalg.ldl_factor(a.transpose(-1, -2)), A)
    check(lambda L, a: L.linalg.ldl_factor(a[:, ::2, ::2]), A)
    r = ember.linalg.ldl_factor_ex(A[0])
    assert len(r) == 3
    if hasattr(ember.return_types, "linalg_ldl_factor_ex"):
        assert r.LD is r[0] and r.pivots is r[1] and r.info is r[2]
    check(lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a), b[..., ::2]), A, B)
    check(lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a[0]), b), A, B)
    # A singular D: info > 0 from the _ex form.
    Z = pair(np.zeros((3, 3)), "float64")
    check(lambda L, a: L.linalg.ldl_factor_ex(a), Z)
    raises_like(lambda L, a: L.linalg.ldl_factor(a[..., :3]), A)
    raises_like(lambda L, a: L.linalg.ldl_factor(a.long()), A)
    raises_like(lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a), b.float()), A, B)
    raises_like(lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a), b[:, :3]), A, B)
    x = ember.linalg.ldl_factor(A[0].requires_grad_())[0]
    with pytest.raises(RuntimeError):
        x.sum().backward()


# ---- geqrf / ormqr ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3, 2), (3, 0)])
def test_geqrf(dtype, shape):
    A = pair(rnd(shape, dtype), dtype)
    check(lambda L, a: L.geqrf(a), A, **tol(dtype))
    check(lambda L, a: a.geqrf(), A, **tol(dtype))
    check(lambda L, a: L.geqrf(a.transpose(-1, -2)), A, **tol(dtype))


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr(dtype, left, transpose):
    A = pair(rnd((2, 5, 3), dtype), dtype)
    C = pair(rnd((2, 5, 4) if left else (2, 4, 5), dtype, 9), dtype)
    check(lambda L, a, c: L.ormqr(*L.geqrf(a), c, left=left, transpose=transpose), A, C,
          **tol(dtype))
    check(lambda L, a, c: L.geqrf(a)[0].ormqr(L.geqrf(a)[1], c.transpose(-1, -2).contiguous()
                                                .transpose(-1, -2), left, transpose), A, C,
          **tol(dtype))
    # The full Q (ormqr of the identity) extends householder_product's reduced Q and is applied
    # as a matrix.
    a, tau = ember.geqrf(A[0])
    eye = ember.eye(5, dtype=a.dtype).expand(2, 5, 5)
    Q = ember.ormqr(a, tau, eye)
    assert_same(Q[..., :3], torch.from_numpy(ember.linalg.householder_product(a, tau).numpy()),
                what="Q[:, :k]", **tol(dtype))
    assert_same(ember.matmul(Q.mH, Q), torch.eye(5, dtype=getattr(torch, dtype)).expand(2, 5, 5),
                what="QᴴQ", **tol(dtype))
    op = Q.mH if transpose else Q
    want = ember.matmul(op, C[0]) if left else ember.matmul(C[0], op)
    assert_same(ember.ormqr(a, tau, C[0], left, transpose), torch.from_numpy(want.numpy()),
                what="ormqr vs Q", **tol(dtype))


def test_ormqr_errors_and_no_grad():
    A = pair(rnd((3, 2), "float64"), "float64")
    raises_like(lambda L, a: L.ormqr(a, a[0], a.new_zeros(4, 2)), A)
    raises_like(lambda L, a: L.ormqr(a, a[:, 0], a.new_zeros(3, 2)), A)
    raises_like(lambda L, a: L.ormqr(a, a[0], a.new_zeros(3, 2).float()), A)
    raises_like(lambda L, a: L.ormqr(a.unsqueeze(0), a[0].unsqueeze(0), a.new_zeros(3, 2)), A)
    raises_like(lambda L, a: L.geqrf(a[0]), A)
    raises_like(lambda L, a: L.geqrf(a.long()), A)
    check(lambda L, a: L.ormqr(a, a[0], a.new_zeros(3, 0)), A)
    x = A[0].clone().requires_grad_()
    with pytest.raises((RuntimeError, NotImplementedError)):
        ember.geqrf(x)[0].sum().backward()


# ---- lu / lu_solve / symeig ----

@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_lu_and_lu_solve(dtype):
    A = pair(rnd((2, 4, 4), dtype) + 4 * np.eye(4), dtype)
    B = pair(rnd((2, 4, 3), dtype, 5), dtype)
    check(lambda L, a: L.lu(a), A, **tol(dtype))
    check(lambda L, a: tuple(L.lu(a, get_infos=True)), A, **tol(dtype))
    check(lambda L, a: a.lu(), A, **tol(dtype))
    check(lambda L, a, b: L.lu_solve(b, *L.lu(a)), A, B, **tol(dtype))
    check(lambda L, a, b: b.lu_solve(*L.lu(a)), A, B, **tol(dtype))
    check(lambda L, a, b: L.lu_solve(b[:, :, ::2], *L.lu(a.transpose(-1, -2))), A, B,
          **tol(dtype))
    check(lambda L, a, b: L.lu_solve(b[:0], *L.lu(a[:0])), A, B)


def test_lu_singular_and_errors():
    Z = pair(np.zeros((3, 3)), "float64")
    check(lambda L, a: L.lu(a), Z)
    check(lambda L, a: tuple(L.lu(a, get_infos=True)), Z)
    raises_like(lambda L, a: L.lu(a, pivot=False), Z)
    raises_like(lambda L, a: L.lu(a.long()), Z)


@pytest.mark.parametrize("dtype", LA_DTYPES)
@pytest.mark.parametrize("upper", [True, False])
def test_symeig(dtype, upper):
    A = pair(sym(4, dtype, (2,), hermitian=True), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda L, a: L.symeig(a, upper=upper), A, **tol(dtype))
        check(lambda L, a: L.symeig(a, upper=upper)[0], A, **tol(dtype))
        # Eigenvectors up to phase: |V| and V diag(w) V^H.
        ev, eV = ember.symeig(A[0], eigenvectors=True, upper=upper)
        tv, tV = torch.symeig(A[1], eigenvectors=True, upper=upper)
        assert_same(ev, tv, **tol(dtype))
        rec = ember.matmul(eV * ev.unsqueeze(-2).to(eV.dtype), eV.mH)
        assert_same(rec, torch.matmul(tV * tv.unsqueeze(-2).to(tV.dtype), tV.mH), **tol(dtype))
        assert_same(A[0].symeig()[0], tv, **tol(dtype))
        raises_like(lambda L, a: L.symeig(a[..., :3]), A)


# ---- low rank ----

def test_svd_lowrank_and_pca_lowrank():
    ember.manual_seed(0)
    rng = np.random.default_rng(0)
    # Exactly rank 3, so the sketch recovers it: singular values and reconstruction match.
    for shape in [(2, 9, 7), (7, 9), (9, 7)]:
        a = rng.standard_normal(shape[:-1] + (3,)) @ rng.standard_normal((3, shape[-1]))
        e = ember.from_numpy(a)
        U, S, V = ember.svd_lowrank(e, q=4, niter=2)
        k = min(4, shape[-2], shape[-1])
        assert tuple(U.shape) == shape[:-1] + (k,) and tuple(V.shape) == shape[:-2] + (
            shape[-1], k) and tuple(S.shape) == shape[:-2] + (k,)
        ts = torch.linalg.svdvals(torch.from_numpy(a))[..., :3]
        assert_same(S[..., :3], ts, rtol=1e-8, atol=1e-8)
        rec = ember.matmul(U * S.unsqueeze(-2), V.mH)
        np.testing.assert_allclose(rec.numpy(), a, atol=1e-8)
        # M: the factorization of a - M.
        m = rng.standard_normal(shape[-1:])
        U, S, V = ember.svd_lowrank(ember.from_numpy(a + m), q=4, M=ember.from_numpy(m))
        np.testing.assert_allclose(ember.matmul(U * S.unsqueeze(-2), V.mH).numpy(), a, atol=1e-8)
        # pca_lowrank centers the columns.
        c = a + rng.standard_normal(shape[:-2] + (1, shape[-1]))
        U, S, V = ember.pca_lowrank(ember.from_numpy(c), q=3)
        cc = c - c.mean(-2, keepdims=True)
        assert_same(S, torch.linalg.svdvals(torch.from_numpy(cc))[..., :3], rtol=1e-6, atol=1e-6)
        U, S, V = ember.pca_lowrank(ember.from_numpy(a), q=3, center=False)
        np.testing.assert_allclose(ember.matmul(U * S.unsqueeze(-2), V.mH).numpy(), a, atol=1e-8)


def test_lowrank_errors():
    A = pair(rnd((5, 4), "float64"), "float64")
    raises_like(lambda L, a: L.pca_lowrank(a, q=5), A)
    raises_like(lambda L, a: L.pca_lowrank(a, niter=-1), A)
    raises_like(lambda L, a: L.svd_lowrank(a, q=5), A)


# ---- gradients of the composites (float64) ----

def _sym64(n, batch=(), seed=1):
    return sym(n, "float64", batch, seed=seed)


def test_composite_gradients():
    ad_check(lambda L, x: L.linalg.vander(x, N=4), [rnd((2, 3), "float64")], double=True)
    ad_check(lambda L, x, y: L.linalg.vecdot(x, y), [rnd((2, 3), "float64"),
                                                     rnd((3,), "float64", 2)], double=True)
    ad_check(lambda L, x: L.linalg.tensorinv(x, ind=1),
             [(rnd((6, 6), "float64") + 6 * np.eye(6)).reshape(6, 2, 3)])
    ad_check(lambda L, a, b: L.linalg.tensorsolve(a, b),
             [(rnd((6, 6), "float64") + 6 * np.eye(6)).reshape(2, 3, 6), rnd((2, 3), "float64")])
    ad_check(lambda L, a, b: L.lu_solve(b, *L.lu(a)),
             [rnd((4, 4), "float64") + 4 * np.eye(4), rnd((4, 2), "float64", 3)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = _sym64(4)
        ea = ember.from_numpy(a).requires_grad_()
        ta = torch.from_numpy(a).requires_grad_()
        ember.symeig(ea, eigenvectors=True)[0].sum().backward()
        torch.symeig(ta, eigenvectors=True)[0].sum().backward()
        assert_same(ea.grad, ta.grad)


def test_composite_gradcheck():
    gradcheck = ember.autograd.gradcheck
    x = ember.from_numpy(rnd((3,), "float64")).requires_grad_()
    assert gradcheck(lambda t: ember.linalg.vander(t), (x,))
    a = ember.from_numpy(rnd((5, 4), "float64")).requires_grad_()
    ember.manual_seed(1)
    # A fixed seed per call: the sketch is the same in every evaluation.

    def lowrank(t):
        ember.manual_seed(1)
        U, S, V = ember.svd_lowrank(t, q=4)
        return ember.matmul(U * S.unsqueeze(-2), V.mH)
    assert gradcheck(lowrank, (a,))
