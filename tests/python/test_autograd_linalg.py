"""Gradients (vjp), double backward and forward-mode tangents of the products (matmul family,
einsum) and of torch.linalg against torch 1.13, in float64 and complex128.

Decompositions whose factors are unique only up to signs / phases (svd, eigh, eig) are checked
through functions invariant to them (the values, |U|, V diag(w) V^H, ...), as PyTorch does.
"""

import numpy as np
import pytest
import torch

import ember
from test_autograd_index import L, R, _rand_like, ad_check, efw

C = "complex128"


def M(*shape, seed=1, dtype="float64", kind="general"):
    """Well-conditioned matrices (general / spd / hermitian / triangular)."""
    a = R(*shape, seed=seed, dtype=dtype)
    n = shape[-1]
    if len(shape) >= 2 and shape[-2] == n and n > 0:
        eye = np.eye(n)
        ah = np.conj(np.swapaxes(a, -1, -2))
        if kind == "general":
            a = a + 2 * n ** 0.5 * eye
        elif kind == "spd":
            a = a @ ah + n * eye
        elif kind == "hermitian":
            a = a + ah
        elif kind == "triangular":
            a = np.triu(a) + 2 * n ** 0.5 * eye
    return np.asarray(a, dtype=dtype)


# Debian's torch 1.13 returns 0 for complex dot / vdot / 1-D @ 1-D (its BLAS zdotu binding):
# the oracle spells those as sums of products.
def _dot(lib, a, b):
    if lib is torch and a.is_complex():
        return (a * b).sum()
    return lib.dot(a, b)


def _vdot(lib, a, b):
    if lib is torch and a.is_complex():
        return (a.conj() * b).sum()
    return lib.vdot(a, b)


def _matmul(lib, a, b):
    if lib is torch and a.is_complex() and a.dim() == 1 and b.dim() == 1:
        return (a * b).sum()
    return lib.matmul(a, b)


# ---- products ----


@pytest.mark.parametrize("dtype", ["float64", C])
def test_dot_vdot_mv_mm_bmm(dtype):
    ad_check(_dot, [R(5, dtype=dtype), R(5, seed=2, dtype=dtype)], double=True)
    ad_check(_vdot, [R(5, dtype=dtype), R(5, seed=2, dtype=dtype)])
    ad_check(lambda lib, a, b: lib.mv(a, b), [R(3, 5, dtype=dtype), R(5, seed=2, dtype=dtype)])
    ad_check(lambda lib, a, b: lib.mm(a, b), [R(3, 5, dtype=dtype), R(5, 2, seed=2, dtype=dtype)],
             double=True)
    ad_check(lambda lib, a, b: lib.mm(a.t(), b[:, ::2]),
             [R(5, 3, dtype=dtype), R(5, 4, seed=2, dtype=dtype)])
    ad_check(lambda lib, a, b: lib.bmm(a, b),
             [R(2, 3, 4, dtype=dtype), R(2, 4, 2, seed=2, dtype=dtype)], double=True)


@pytest.mark.parametrize("sa,sb", [
    ((4,), (4,)), ((4,), (4, 3)), ((3, 4), (4,)), ((3, 4), (4, 2)),
    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)),
    ((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (2, 4, 1)), ((0, 3, 4), (4, 2)), ((3, 0), (0, 2)),
])
@pytest.mark.parametrize("dtype", ["float64", C])
def test_matmul_shapes(sa, sb, dtype):
    ad_check(_matmul, [R(*sa, dtype=dtype), R(*sb, seed=2, dtype=dtype)],
             double=len(sa) + len(sb) >= 5)


@pytest.mark.parametrize("sa,sb", [
    ((5, 5, 0), (0, 5)), ((2, 3, 0), (0,)), ((2, 3, 4), (4, 0)), ((2, 0, 4), (4, 3)),
    ((0, 3, 4), (4, 2)), ((0,), (2, 0, 3)), ((3, 0), (2, 0, 4)), ((0, 0), (5, 0, 0)),
    ((2, 1, 3, 0), (4, 0, 2)), ((2, 3, 4), (2, 4, 0)),
])
def test_matmul_zero_size_backward(sa, sb):
    # zero inner or outer dims on the batched path (one matrix against a batch)
    ad_check(_matmul, [R(*sa), R(*sb, seed=2)], double=True)
    ad_check(lambda lib, a, b: b.__rmatmul__(a), [R(*sa), R(*sb, seed=2)])


def test_matmul_strided_and_broadcast_views():
    ad_check(lambda lib, a, b: lib.matmul(a.transpose(1, 2), b.expand(3, 4, 2)),
             [R(3, 4, 4), R(1, 4, 2, seed=2)])
    ad_check(lambda lib, a, b: a[:, ::2] @ b, [R(2, 6, 3), R(3, 2, seed=2)])


@pytest.mark.parametrize("dtype", ["float64", C])
def test_addmm_addmv_addr_baddbmm_addbmm(dtype):
    r = lambda *s, seed=1: R(*s, seed=seed, dtype=dtype)  # noqa: E731
    ad_check(lambda lib, s, a, b: lib.addmm(s, a, b, beta=0.5, alpha=2), [r(3, 2), r(3, 4, seed=2),
                                                                         r(4, 2, seed=3)])
    ad_check(lambda lib, s, a, b: lib.addmm(s, a, b), [r(2), r(3, 4, seed=2), r(4, 2, seed=3)],
             double=True)
    ad_check(lambda lib, s, a, b: lib.addmv(s, a, b, beta=2, alpha=-1),
             [r(3), r(3, 4, seed=2), r(4, seed=3)])
    ad_check(lambda lib, s, a, b: lib.addr(s, a, b, beta=2, alpha=0.5),
             [r(3, 4), r(3, seed=2), r(4, seed=3)])
    ad_check(lambda lib, s, a, b: lib.baddbmm(s, a, b, beta=0.5, alpha=3),
             [r(3, 2), r(2, 3, 4, seed=2), r(2, 4, 2, seed=3)])
    ad_check(lambda lib, s, a, b: lib.addbmm(s, a, b, beta=0.5, alpha=3),
             [r(3, 2), r(2, 3, 4, seed=2), r(2, 4, 2, seed=3)])


def test_addmm_beta_zero_and_inplace():
    ad_check(lambda lib, s, a, b: lib.addmm(s, a, b, beta=0), [R(3, 2), R(3, 4, seed=2),
                                                               R(4, 2, seed=3)])
    ad_check(lambda lib, s, a, b: (s * 1).addmm_(a, b, alpha=2), [R(3, 2), R(3, 4, seed=2),
                                                                  R(4, 2, seed=3)])
    ad_check(lambda lib, s, a, b: (s * 1).baddbmm_(a, b), [R(2, 3, 2), R(2, 3, 4, seed=2),
                                                          R(2, 4, 2, seed=3)])


@pytest.mark.parametrize("dtype", ["float64", C])
def test_outer_inner_tensordot_kron_cross_trace(dtype):
    r = lambda *s, seed=1: R(*s, seed=seed, dtype=dtype)  # noqa: E731
    ad_check(lambda lib, a, b: lib.outer(a, b), [r(3), r(4, seed=2)])
    ad_check(lambda lib, a, b: lib.inner(a, b), [r(2, 3, 4), r(5, 4, seed=2)])
    ad_check(lambda lib, a, b: lib.inner(a, b), [r(), r(5, 4, seed=2)])
    ad_check(lambda lib, a, b: lib.tensordot(a, b, dims=([1, 0], [0, 2])),
             [r(3, 4, 5), r(4, 2, 3, seed=2)])
    ad_check(lambda lib, a, b: lib.tensordot(a, b, dims=2), [r(3, 4, 5), r(4, 5, 2, seed=2)])
    ad_check(lambda lib, a, b: lib.kron(a, b), [r(2, 3), r(3, 2, seed=2)])
    ad_check(lambda lib, a, b: lib.linalg.cross(a, b), [r(4, 3), r(1, 3, seed=2)])
    ad_check(lambda lib, a: lib.trace(a), [r(3, 4)], double=True)
    ad_check(lambda lib, a: lib.trace(a.t()), [r(4, 2)])


def test_multi_dot_chain_matmul_einsum():
    ad_check(lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
             [R(3), R(3, 5, seed=2), R(5, 2, seed=3)])
    ad_check(lambda lib, a, b, c, d: lib.linalg.multi_dot([a, b, c, d]),
             [R(2, 3), R(3, 5, seed=2), R(5, 2, seed=3), R(2, seed=4)])
    ad_check(lambda lib, a, b, c: lib.chain_matmul(a, b, c),
             [R(2, 3), R(3, 5, seed=2), R(5, 2, seed=3)])
    ad_check(lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), [R(2, 3, 4), R(2, 4, 2, seed=2)],
             double=True)
    ad_check(lambda lib, a, b: lib.einsum("ii,ij->j", a, b), [R(3, 3), R(3, 2, seed=2)])
    ad_check(lambda lib, a: lib.einsum("i...->...", a), [R(3, 2, 2)])
    ad_check(lambda lib, a, b: lib.einsum("ij,kj->ik", a, b),
             [R(2, 3, dtype=C), R(4, 3, seed=2, dtype=C)])
    ad_check(lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [R(2, 0), R(0, 3, seed=2)])
    ad_check(lambda lib, a, b: lib.einsum("i,j->ij", a, b), [R(3), R(2, seed=2)], double=True)


@pytest.mark.parametrize("name,f,arrays", [
    ("inv", lambda lib, a: lib.linalg.inv(a), [np.zeros((2, 0, 0))]),
    ("solve", lambda lib, a, b: lib.linalg.solve(a, b), [np.zeros((0, 0)), np.zeros((0, 2))]),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(a), [np.zeros((0, 0))]),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), [np.zeros((0, 3))]),
    ("qr", lambda lib, a: lib.linalg.qr(a), [np.zeros((3, 0))]),
    ("eigh", lambda lib, a: lib.linalg.eigh(a), [np.zeros((0, 0))]),
    ("matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), [np.zeros((0, 0))]),
    ("slogdet", lambda lib, a: lib.linalg.slogdet(a), [np.zeros((2, 0, 0))]),
    ("trace", lambda lib, a: lib.trace(a), [np.zeros((0, 3))]),
])
def test_zero_size_linalg(name, f, arrays):
    ad_check(f, arrays)


# ---- inverses and solvers ----


@pytest.mark.parametrize("dtype", ["float64", C])
def test_inv_solve(dtype):
    ad_check(lambda lib, a: lib.linalg.inv(a), [M(3, 3, dtype=dtype)], double=True)
    ad_check(lambda lib, a: lib.linalg.inv_ex(a)[0], [M(2, 3, 3, dtype=dtype)])
    ad_check(lambda lib, a: lib.inverse(a.mT), [M(3, 3, dtype=dtype)])
    ad_check(lambda lib, a, b: lib.linalg.solve(a, b), [M(3, 3, dtype=dtype),
                                                        R(3, 2, seed=2, dtype=dtype)],
             double=True)
    ad_check(lambda lib, a, b: lib.linalg.solve(a, b), [M(2, 3, 3, dtype=dtype),
                                                        R(3, seed=2, dtype=dtype)])
    ad_check(lambda lib, a, b: lib.linalg.solve(a, b, left=False),
             [M(3, 3, dtype=dtype), R(2, 3, seed=2, dtype=dtype)])
    ad_check(lambda lib, a, b: lib.linalg.solve(a, b), [M(3, 3, dtype=dtype),
                                                        R(2, 3, 2, seed=2, dtype=dtype)])


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(upper, left, unit):
    a = M(3, 3, kind="triangular")
    if not upper:
        a = a.T.copy()
    b = R(3, 2, seed=2) if left else R(2, 3, seed=2)
    ad_check(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                           unitriangular=unit), [a, b])


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_triangular_solve(upper, transpose):
    a = M(3, 3, kind="triangular")
    if not upper:
        a = a.T.copy()
    ad_check(lambda lib, b, a: lib.triangular_solve(b, a, upper=upper, transpose=transpose),
             [R(3, 2, seed=2), a], forward=False)


@pytest.mark.parametrize("dtype", ["float64", C])
def test_cholesky_family(dtype):
    spd = M(3, 3, dtype=dtype, kind="spd")
    ad_check(lambda lib, a: lib.linalg.cholesky(a), [spd], double=True)
    ad_check(lambda lib, a: lib.linalg.cholesky(a, upper=True), [spd])
    ad_check(lambda lib, a: lib.linalg.cholesky_ex(a)[0], [M(2, 3, 3, dtype=dtype, kind="spd")])
    low = np.linalg.cholesky(spd)
    ad_check(lambda lib, b, l: lib.cholesky_solve(b, l), [R(3, 2, seed=2, dtype=dtype), low],
             forward=False)
    ad_check(lambda lib, b, u: lib.cholesky_solve(b, u, upper=True),
             [R(3, 2, seed=2, dtype=dtype), np.conj(low.T).copy()], forward=False)
    ad_check(lambda lib, l: lib.cholesky_inverse(l), [low], forward=False)


@pytest.mark.parametrize("dtype", ["float64", C])
def test_det_slogdet_logdet(dtype):
    ad_check(lambda lib, a: lib.linalg.det(a), [M(3, 3, dtype=dtype)], double=True)
    ad_check(lambda lib, a: lib.linalg.det(a), [M(2, 3, 3, dtype=dtype)])
    ad_check(lambda lib, a: lib.linalg.det(a), [M(1, 1, dtype=dtype)])
    ad_check(lambda lib, a: lib.linalg.slogdet(a), [M(2, 3, 3, dtype=dtype)])
    ad_check(lambda lib, a: lib.logdet(a), [M(3, 3, dtype=dtype, kind="spd")])


def test_det_singular():
    a = R(3, 3)
    a[2] = a[0] + a[1]  # rank 2
    ad_check(lambda lib, a: lib.linalg.det(a), [a], forward=False, atol=1e-7)
    b = np.stack([a, M(3, 3)])
    ad_check(lambda lib, a: lib.linalg.det(a), [b], forward=False, atol=1e-7)


# ---- decompositions ----


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 4)])
@pytest.mark.parametrize("dtype", ["float64", C])
def test_qr(shape, dtype):
    ad_check(lambda lib, a: lib.linalg.qr(a), [R(*shape, dtype=dtype)])
    if shape[0] <= shape[1]:
        ad_check(lambda lib, a: lib.linalg.qr(a, mode="complete"), [R(*shape, dtype=dtype)])


def test_qr_r_mode_backward_raises():
    for lib in (torch, ember):
        a = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        q, r = lib.linalg.qr(a + lib.eye(3, dtype=lib.float64), mode="r")
        with pytest.raises(RuntimeError):
            r.sum().backward()


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["float64", C])
def test_svd(shape, dtype):
    def f(lib, a):
        u, s, vh = lib.linalg.svd(a, full_matrices=False)
        return s, u.abs(), vh.abs(), u @ vh

    ad_check(f, [R(*shape, dtype=dtype)], rtol=1e-6, atol=1e-8)
    ad_check(lambda lib, a: lib.linalg.svdvals(a), [R(*shape, dtype=dtype)], rtol=1e-6)
    if shape == (3, 3):
        ad_check(lambda lib, a: lib.linalg.svdvals(a), [R(*shape, dtype=dtype)], double=True,
                 rtol=1e-6, atol=1e-8)


def test_svd_full_matrices():
    def f(lib, a):
        u, s, vh = lib.linalg.svd(a, full_matrices=True)
        return s, u[:, :3].abs()

    ad_check(f, [R(5, 3)], rtol=1e-6, atol=1e-8, forward=False)


@pytest.mark.parametrize("dtype", ["float64", C])
def test_eigh_eigvalsh(dtype):
    # Hermitian inputs and tangents (the function symmetrises its leaf): eigh reads one
    # triangle, and the two libraries' jvps differ off the Hermitian subspace.
    def f(lib, a):
        w, v = lib.linalg.eigh((a + a.mH) / 2)
        return w, v.abs(), (v * w.unsqueeze(-2)) @ v.mH

    ad_check(f, [M(3, 3, dtype=dtype, kind="hermitian")], rtol=1e-6, atol=1e-8)
    ad_check(lambda lib, a: lib.linalg.eigvalsh((a + a.mH) / 2),
             [M(2, 3, 3, dtype=dtype, kind="hermitian")], rtol=1e-6, atol=1e-8, double=True)
    # The lower triangle only (uplo="L"): the gradient is still Hermitian, as PyTorch's.
    ad_check(lambda lib, a: lib.linalg.eigvalsh(a), [M(3, 3, dtype=dtype, kind="hermitian")],
             rtol=1e-6, atol=1e-8, forward=False)


def test_eig_eigvals():
    a = M(3, 3, kind="general")

    def f(lib, a):
        w, v = lib.linalg.eig(a)
        return (v * w.unsqueeze(-2)) @ lib.linalg.inv(v)

    ad_check(f, [a], rtol=1e-6, atol=1e-8, forward=False)
    ad_check(lambda lib, a: lib.linalg.eigvals(a).abs(), [a], rtol=1e-6, atol=1e-8,
             forward=False)
    ad_check(lambda lib, a: lib.linalg.eigvals(a), [M(3, 3, dtype=C)], rtol=1e-6, atol=1e-8,
             forward=False)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)])
def test_lu_factor_lu_lu_solve(shape):
    def f(lib, a):
        p, l, u = lib.linalg.lu(a)
        return l, u

    ad_check(f, [R(*shape)], forward=False)
    ad_check(lambda lib, a: lib.linalg.lu_factor(a)[0], [R(*shape)], forward=False)
    if shape[0] == shape[1]:
        for left in (True, False):
            for adjoint in (True, False):
                def g(lib, a, b):
                    lu, piv = lib.linalg.lu_factor(a)
                    return lib.linalg.lu_solve(lu, piv, b, left=left, adjoint=adjoint)

                ad_check(g, [M(3, 3), R(3, 3, seed=2)], forward=False)


def _fd_jvp(f, arrays, tangents, eps=1e-6):
    """Central difference of the torch function f along the tangents."""
    plus = f(*[torch.from_numpy(a + eps * t) for a, t in zip(arrays, tangents)])
    minus = f(*[torch.from_numpy(a - eps * t) for a, t in zip(arrays, tangents)])
    return ((plus - minus) / (2 * eps)).numpy()


def _ember_jvp(f, arrays, tangents):
    with efw.dual_level():
        out = f(*[efw.make_dual(ember.from_numpy(np.array(a)), ember.from_numpy(np.array(t)))
                  for a, t in zip(arrays, tangents)])
        return efw.unpack_dual(out).tangent.numpy()


# torch 1.13's forward-mode rules for these two disagree with their own backward (and with
# finite differences): triangular_solve's uses all of dA though only one triangle is read,
# cholesky_inverse's multiplies its factors in the wrong order. The oracle is the finite
# difference, and the tangent must be the adjoint of the (torch-matching) gradient.
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unit", [True, False])
@pytest.mark.parametrize("dtype", ["float64", C])
def test_triangular_solve_tangent(upper, transpose, unit, dtype):
    rng = np.random.default_rng(3)
    a = M(2, 4, 4, dtype=dtype)  # full matrices: the solve reads one triangle only
    b = R(4, 3, seed=2, dtype=dtype)  # broadcast against a's batch
    ta, tb = R(2, 4, 4, seed=4, dtype=dtype), R(4, 3, seed=5, dtype=dtype)
    kw = dict(upper=upper, transpose=transpose, unitriangular=unit)
    et = _ember_jvp(lambda b, a: ember.triangular_solve(b, a, **kw)[0], [b, a], [tb, ta])
    fd = _fd_jvp(lambda b, a: torch.triangular_solve(b, a, **kw)[0], [b, a], [tb, ta])
    np.testing.assert_allclose(et, fd, rtol=1e-6, atol=1e-6)
    # <g, J t> == <J^H g, t> with torch's gradient
    g = _rand_like(rng, et.shape, et.dtype)
    tin = [torch.from_numpy(x).requires_grad_(True) for x in (b, a)]
    gb, ga = torch.autograd.grad(torch.triangular_solve(*tin, **kw)[0], tin, torch.from_numpy(g))
    lhs = np.vdot(g, et).real
    rhs = np.vdot(gb.numpy(), tb).real + np.vdot(ga.numpy(), ta).real
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9)
    # the copy of A carries A's tangent
    with efw.dual_level():
        out = ember.triangular_solve(ember.from_numpy(b), efw.make_dual(ember.from_numpy(a),
                                                                        ember.from_numpy(ta)),
                                     **kw)[1]
        np.testing.assert_allclose(efw.unpack_dual(out).tangent.numpy(), ta)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("dtype", ["float64", C])
def test_cholesky_inverse_tangent(upper, dtype):
    low = np.linalg.cholesky(M(2, 4, 4, dtype=dtype, kind="spd"))
    f = np.conj(np.swapaxes(low, -1, -2)).copy() if upper else low
    t = R(2, 4, 4, seed=4, dtype=dtype)
    t = np.triu(t) if upper else np.tril(t)  # the factor's own triangle: the kernel reads it only
    t = t - 1j * np.imag(t) * np.eye(4) if dtype == C else t  # and a real diagonal (LAPACK's)
    et = _ember_jvp(lambda x: ember.cholesky_inverse(x, upper), [f], [t])
    fd = _fd_jvp(lambda x: torch.cholesky_inverse(x, upper), [f], [t])
    np.testing.assert_allclose(et, fd, rtol=1e-6, atol=1e-7)
    ad_check(lambda lib, x: lib.cholesky_inverse(x, upper), [f], forward=False, double=True)
    ad_check(lambda lib, x: lib.cholesky_inverse(x, upper), [np.zeros((0, 2, 2), dtype=dtype)],
             forward=False)


# ---- functions of matrices ----


@pytest.mark.parametrize("dtype", ["float64", C])
def test_matrix_exp_power(dtype):
    ad_check(lambda lib, a: lib.linalg.matrix_exp(a), [R(3, 3, dtype=dtype) * 0.5])
    ad_check(lambda lib, a: lib.linalg.matrix_exp(a), [R(2, 3, 3, dtype=dtype) * 0.5])
    ad_check(lambda lib, a: lib.linalg.matrix_power(a, 3), [R(3, 3, dtype=dtype)])
    ad_check(lambda lib, a: lib.linalg.matrix_power(a, -2), [M(3, 3, dtype=dtype)])


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")])
def test_matrix_norm_and_cond(ord):
    ad_check(lambda lib, a: lib.linalg.matrix_norm(a, ord), [R(2, 3, 4)], rtol=1e-6,
             forward=ord not in ("nuc", 2, -2))
    ad_check(lambda lib, a: lib.linalg.matrix_norm(a, ord, dim=(0, 2), keepdim=True),
             [R(3, 2, 4)], rtol=1e-6, forward=False)
    ad_check(lambda lib, a: lib.linalg.norm(a, ord), [R(3, 4)], rtol=1e-6, forward=False)
    ad_check(lambda lib, a: _cond(lib, a, ord), [M(3, 3)], rtol=1e-6, forward=False)


def _cond(lib, a, ord):
    # torch 1.13's cond for ord other than +-2 cannot backward (it writes into inv_ex's output
    # in place); its definition, norm(A) * norm(inv(A)), is the oracle there.
    if lib is torch and ord not in (2, -2):
        return torch.linalg.matrix_norm(a, ord) * torch.linalg.matrix_norm(torch.linalg.inv(a),
                                                                           ord)
    return lib.linalg.cond(a, ord)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5, 5), (2, 0, 0), (3, 0), (0, 3, 2), (1, 1, 0, 0)])
@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_empty_stays_in_graph(shape, hermitian):
    if hermitian and shape[-1] != shape[-2]:
        return
    ad_check(lambda lib, a: lib.linalg.pinv(a, hermitian=hermitian), [R(*shape)])
    ad_check(lambda lib, a: lib.linalg.pinv(a, rtol=1.0, hermitian=hermitian), [R(*shape)])
    ad_check(lambda lib, a: lib.linalg.pinv(a, atol=lib.tensor(0.5, dtype=lib.float64)),
             [R(*shape)])
    if not hermitian:
        ad_check(lambda lib, a: lib.pinverse(a), [R(*shape)])


@pytest.mark.parametrize("n", [0, 1, -1, 2, 3])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (0, 2, 2), (2, 0, 0), (2, 3, 3)])
@pytest.mark.parametrize("dtype", ["float64", C])
def test_matrix_power_small_exponents(n, shape, dtype):
    a = M(*shape, dtype=dtype)
    ad_check(lambda lib, a: lib.linalg.matrix_power(a, n), [a], double=True)
    ad_check(lambda lib, a: lib.matrix_power(a.mT, n), [a])


def test_pinv_lstsq():
    ad_check(lambda lib, a: lib.linalg.pinv(a), [R(4, 3)], rtol=1e-6, atol=1e-8, forward=False)
    ad_check(lambda lib, a: lib.linalg.pinv(a), [R(3, 4)], rtol=1e-6, atol=1e-8, forward=False)
    ad_check(lambda lib, a: lib.linalg.pinv(a, hermitian=True), [M(3, 3, kind="spd")], rtol=1e-6,
             atol=1e-8, forward=False)
    ad_check(lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [R(5, 3), R(5, 2, seed=2)],
             rtol=1e-6, atol=1e-8, forward=False)
    ad_check(lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [R(2, 5, 3), R(2, 5, 2, seed=2)],
             rtol=1e-6, atol=1e-8, forward=False)
    # torch 1.13's backward fails for vector right-hand sides: the oracle is pinv(A) @ b, the
    # function whose derivative PyTorch's lstsq rule is.
    def vec(lib, a, b):
        if lib is torch:
            return (torch.linalg.pinv(a) @ b.unsqueeze(-1)).squeeze(-1)
        return lib.linalg.lstsq(a, b).solution

    ad_check(vec, [R(5, 3), R(5, seed=2)], rtol=1e-6, atol=1e-8, forward=False)
    ad_check(vec, [R(2, 5, 3), R(2, 5, seed=2)], rtol=1e-6, atol=1e-8, forward=False)


@pytest.mark.parametrize("sa,st", [
    ((4, 3), (3,)), ((4, 3), (2,)), ((3, 3), (3,)), ((2, 5, 3), (2, 3)), ((4, 2), (0,)),
    ((0, 4, 3), (0, 3)), ((1, 1), (1,)),
])
@pytest.mark.parametrize("dtype", ["float64", C])
def test_householder_product(sa, st, dtype):
    ad_check(lambda lib, a, tau: lib.linalg.householder_product(a, tau),
             [R(*sa, dtype=dtype), R(*st, seed=2, dtype=dtype)], double=len(sa) == 2)


def test_householder_product_strided_and_orgqr():
    # A transposed view and a sliced tau; orgqr is the same function.
    ad_check(lambda lib, a, tau: lib.linalg.householder_product(a.mT, tau[::2]),
             [R(3, 5), R(6, seed=2)])
    ad_check(lambda lib, a, tau: lib.orgqr(a, tau), [R(4, 3, dtype=C), R(3, seed=2, dtype=C)])


def test_householder_product_gradcheck():
    gradcheck = pytest.importorskip("ember.autograd").gradcheck
    gradgradcheck = pytest.importorskip("ember.autograd").gradgradcheck
    a, tau = _leaf(R(4, 3)), _leaf(R(3, seed=2))
    f = lambda a, tau: ember.linalg.householder_product(a, tau)  # noqa: E731
    assert gradcheck(f, [a, tau], check_forward_ad=True)
    assert gradgradcheck(f, [a, tau])


def test_out_forms_reject_grad():
    for lib in (torch, ember):
        a = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        out = lib.empty(0, dtype=lib.float64)
        with pytest.raises(RuntimeError):
            lib.mm(a, a, out=out)


# ---- finite differences (ember's own gradcheck / gradgradcheck) ----


def _leaf(a):
    return ember.from_numpy(np.array(a)).requires_grad_(True)


GRADCHECK_CASES = [
    ("index_select", lambda x: ember.index_select(x, 1, ember.tensor([2, 0, 2])), [R(3, 4)]),
    ("gather", lambda x: x.gather(0, ember.tensor([[1, 0], [2, 2]])), [R(3, 2)]),
    ("index_put_acc", lambda x, v: ember.index_put(x, (ember.tensor([1, 1]),), v, accumulate=True),
     [R(3, 2), R(2, 2, seed=2)]),
    ("advanced_index", lambda x: x[ember.tensor([0, 2, 2]), 1:], [R(3, 4)]),
    ("scatter_reduce_mean", lambda x, s: ember.scatter_reduce(x, 0, ember.tensor([0, 0, 2]), s,
                                                              "mean", include_self=False),
     [R(3), R(3, seed=2)]),
    ("masked_scatter", lambda x, s: ember.masked_scatter(x, ember.tensor([True, False, True]), s),
     [R(3), R(4, seed=2)]),
    ("matmul_batched", lambda a, b: ember.matmul(a, b), [R(2, 3, 4, dtype=C), R(4, 2, seed=2,
                                                                              dtype=C)]),
    ("addmm", lambda s, a, b: ember.addmm(s, a, b, beta=0.5, alpha=2),
     [R(2), R(3, 4, seed=2), R(4, 2, seed=3)]),
    ("inv", lambda a: ember.linalg.inv(a), [M(3, 3, dtype=C)]),
    ("solve", lambda a, b: ember.linalg.solve(a, b), [M(3, 3), R(3, seed=2)]),
    ("det", lambda a: ember.linalg.det(a), [M(3, 3)]),
    ("slogdet", lambda a: ember.linalg.slogdet(a), [M(3, 3, dtype=C)]),
    ("cholesky", lambda a: ember.linalg.cholesky((a + a.mH) / 2), [M(3, 3, kind="spd")]),
    ("qr", lambda a: ember.linalg.qr(a), [R(4, 3)]),
    ("svdvals", lambda a: ember.linalg.svdvals(a), [R(3, 4)]),
    ("eigvalsh", lambda a: ember.linalg.eigvalsh((a + a.mH) / 2), [M(3, 3, kind="hermitian")]),
    ("matrix_exp", lambda a: ember.linalg.matrix_exp(a), [R(3, 3) * 0.5]),
    ("lu_factor", lambda a: ember.linalg.lu_factor(a)[0], [R(3, 3)]),
    ("solve_triangular", lambda a, b: ember.linalg.solve_triangular(a, b, upper=True),
     [M(3, 3, kind="triangular"), R(3, 2, seed=2)]),
]


@pytest.mark.parametrize("name,fn,arrays", GRADCHECK_CASES, ids=[c[0] for c in GRADCHECK_CASES])
def test_gradcheck(name, fn, arrays):
    gradcheck = pytest.importorskip("ember.autograd").gradcheck
    inputs = [_leaf(a) for a in arrays]
    assert gradcheck(fn, inputs, check_forward_ad=True)


@pytest.mark.parametrize("name,fn,arrays",
                         [c for c in GRADCHECK_CASES if c[0] in
                          ("index_select", "advanced_index", "matmul_batched", "inv", "det",
                           "cholesky", "svdvals", "matrix_exp")],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_gradgradcheck(name, fn, arrays):
    gradgradcheck = pytest.importorskip("ember.autograd").gradgradcheck
    inputs = [_leaf(a) for a in arrays]
    assert gradgradcheck(fn, inputs)


def test_inplace_products_bump_version():
    # y needs no gradient (the BLAS fast path writes into it) but mul saved it for a's gradient.
    for lib in (torch, ember):
        a = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        y = lib.ones(2, 2, dtype=lib.float64)
        z = a * y
        v0 = y._version
        y.addmm_(lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 2, dtype=lib.float64))
        assert y._version > v0
        with pytest.raises(RuntimeError):
            z.sum().backward()
