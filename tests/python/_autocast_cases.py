"""The ops of torch 1.13's CPU autocast lists, each as one call that runs on torch and ember alike.

A case is (name, policy, make, fn): `make(rng)` gives the NumPy arrays of the floating tensor
arguments (values exact in bfloat16), `fn(T, F, *xs)` calls the op with them (T is `torch` or
`ember`, F its `nn.functional`); other arguments (indices, targets, lengths) are built inside fn.
`name` is the overload name in ATen's AutocastCPU registrations (`aten::<name>`), `policy` is
"lower", "fp32" or "promote". `values` says whether the results of the two libraries are compared
(False for decompositions whose signs or order are not unique).
"""

import numpy as np


def _v(rng, *shape, lo=-24, hi=25, scale=8.0):
    # Multiples of 1/8 in [-3, 3]: exact in bfloat16 and float16.
    return (rng.integers(lo, hi, shape) / scale).astype(np.float32)


def _pos(rng, *shape):
    return (rng.integers(1, 16, shape) / 16.0).astype(np.float32)  # in (0, 1)


def _spd(rng, n):
    # A well-conditioned symmetric positive definite matrix with bfloat16-exact entries.
    a = rng.integers(-2, 3, (n, n)).astype(np.float32)
    m = a @ a.T + n * 2 * np.eye(n, dtype=np.float32)
    return m.astype(np.float32)


def _wellcond(rng, n):
    a = rng.integers(-2, 3, (n, n)).astype(np.float32)
    return (a + 8 * np.eye(n, dtype=np.float32)).astype(np.float32)


def _lower_tri(rng, n):
    a = np.tril(rng.integers(-2, 3, (n, n))).astype(np.float32)
    np.fill_diagonal(a, rng.integers(2, 5, n))
    return a


def _long(T, a):
    return T.tensor(np.asarray(a, dtype=np.int64))


class Case:
    def __init__(self, name, policy, make, fn, values=True, rtol=None, atol=None, ember=None):
        self.name, self.policy, self.make, self.fn = name, policy, make, fn
        self.values, self.rtol, self.atol = values, rtol, atol
        # ember's own call where the two libraries spell the op differently.
        self.ember_fn = ember or fn

    def __repr__(self):
        return self.name


def _geqrf_parts(rng):
    import torch
    a = torch.from_numpy(_wellcond(rng, 4))
    qr, tau = torch.geqrf(a)
    return [qr.numpy(), tau.numpy()]


def _lu_parts(T, a, b):
    # LU in float32 (float64 for float64 inputs): lu_factor itself is on no list.
    return T.linalg.lu_factor(a.double() if b.dtype == T.float64 else a.float())


def _ctc(T, F, lp, tensors):
    targets = _long(T, [[1, 2, 1], [3, 1, 2]])
    il, tl = (6, 5), (3, 2)
    if tensors:
        il, tl = _long(T, il), _long(T, tl)
    return F.ctc_loss(lp, targets, il, tl)


def _log_probs(rng):
    x = rng.random((6, 2, 4))
    lp = np.log(x / x.sum(2, keepdims=True))
    return (np.round(lp * 8) / 8).astype(np.float32)


def _unpool_idx(T, F, shape3d):
    # Indices of a max pool computed outside the region, in float32 (exact input values).
    rng = np.random.default_rng(7)
    if shape3d:
        x = T.tensor(_v(rng, 1, 2, 4, 4, 4))
        _, idx = F.max_pool3d(x, 2, return_indices=True)
    else:
        x = T.tensor(_v(rng, 1, 2, 4, 4))
        _, idx = F.max_pool2d(x, 2, return_indices=True)
    return idx


LOWER = [
    Case("conv1d", "lower", lambda r: [_v(r, 2, 3, 8), _v(r, 4, 3, 3), _v(r, 4)],
         lambda T, F, x, w, b: F.conv1d(x, w, b)),
    Case("conv1d.padding", "lower", lambda r: [_v(r, 2, 3, 8), _v(r, 4, 3, 3), _v(r, 4)],
         lambda T, F, x, w, b: F.conv1d(x, w, b, padding="same")),
    Case("conv2d", "lower", lambda r: [_v(r, 1, 2, 5, 5), _v(r, 3, 2, 3, 3), _v(r, 3)],
         lambda T, F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1)),
    Case("conv2d.padding", "lower", lambda r: [_v(r, 1, 2, 5, 5), _v(r, 3, 2, 3, 3), _v(r, 3)],
         lambda T, F, x, w, b: F.conv2d(x, w, b, padding="same")),
    Case("conv3d", "lower", lambda r: [_v(r, 1, 2, 4, 4, 4), _v(r, 2, 2, 2, 2, 2), _v(r, 2)],
         lambda T, F, x, w, b: F.conv3d(x, w, b)),
    Case("conv3d.padding", "lower",
         lambda r: [_v(r, 1, 2, 4, 4, 4), _v(r, 2, 2, 3, 3, 3), _v(r, 2)],
         lambda T, F, x, w, b: F.conv3d(x, w, b, padding="same")),
    Case("bmm", "lower", lambda r: [_v(r, 2, 3, 4), _v(r, 2, 4, 5)],
         lambda T, F, a, b: T.bmm(a, b)),
    Case("mm", "lower", lambda r: [_v(r, 3, 4), _v(r, 4, 5)],
         lambda T, F, a, b: T.mm(a, b)),
    Case("mm (Tensor.mm, transposed)", "lower", lambda r: [_v(r, 4, 3), _v(r, 5, 4)],
         lambda T, F, a, b: a.t().mm(b.t())),
    Case("baddbmm", "lower", lambda r: [_v(r, 2, 3, 5), _v(r, 2, 3, 4), _v(r, 2, 4, 5)],
         lambda T, F, c, a, b: T.baddbmm(c, a, b, beta=0.5, alpha=2)),
    Case("addmm", "lower", lambda r: [_v(r, 3, 5), _v(r, 3, 4), _v(r, 4, 5)],
         lambda T, F, c, a, b: T.addmm(c, a, b)),
    Case("addmm (broadcast bias)", "lower", lambda r: [_v(r, 5), _v(r, 3, 4), _v(r, 4, 5)],
         lambda T, F, c, a, b: T.addmm(c, a, b, beta=2)),
    Case("addbmm", "lower", lambda r: [_v(r, 3, 5), _v(r, 2, 3, 4), _v(r, 2, 4, 5)],
         lambda T, F, c, a, b: T.addbmm(c, a, b)),
    Case("linear", "lower", lambda r: [_v(r, 2, 4), _v(r, 3, 4), _v(r, 3)],
         lambda T, F, x, w, b: F.linear(x, w, b)),
    Case("linear (no bias, 3-d)", "lower", lambda r: [_v(r, 2, 3, 4), _v(r, 3, 4)],
         lambda T, F, x, w: F.linear(x, w)),
    Case("matmul", "lower", lambda r: [_v(r, 2, 3, 4), _v(r, 4, 5)],
         lambda T, F, a, b: T.matmul(a, b)),
    Case("matmul (vector)", "lower", lambda r: [_v(r, 4), _v(r, 4, 5)],
         lambda T, F, a, b: a @ b),
]

FP32 = [
    # torch 1.13 runs the transposed convolutions in float32 on CPU (later releases: lower).
    Case("conv_transpose1d", "fp32", lambda r: [_v(r, 2, 3, 5), _v(r, 3, 2, 3), _v(r, 2)],
         lambda T, F, x, w, b: F.conv_transpose1d(x, w, b, stride=2)),
    Case("conv_transpose2d.input", "fp32",
         lambda r: [_v(r, 1, 3, 4, 4), _v(r, 3, 2, 3, 3), _v(r, 2)],
         lambda T, F, x, w, b: F.conv_transpose2d(x, w, b, padding=1)),
    Case("conv_transpose3d.input", "fp32",
         lambda r: [_v(r, 1, 2, 3, 3, 3), _v(r, 2, 2, 2, 2, 2), _v(r, 2)],
         lambda T, F, x, w, b: F.conv_transpose3d(x, w, b)),
    Case("avg_pool3d", "fp32", lambda r: [_v(r, 1, 2, 4, 4, 4)],
         lambda T, F, x: F.avg_pool3d(x, 2)),
    Case("binary_cross_entropy", "fp32", lambda r: [_pos(r, 3, 4), _pos(r, 3, 4)],
         lambda T, F, p, t: F.binary_cross_entropy(p, t)),
    Case("grid_sampler", "fp32", lambda r: [_v(r, 1, 2, 4, 4), _v(r, 1, 3, 3, 2) / 3],
         lambda T, F, x, g: T.grid_sampler(x, g, 0, 0, False)),
    Case("grid_sampler (F.grid_sample)", "fp32",
         lambda r: [_v(r, 1, 2, 4, 4), _v(r, 1, 3, 3, 2) / 3],
         lambda T, F, x, g: F.grid_sample(x, g, align_corners=True)),
    Case("polar", "fp32", lambda r: [_pos(r, 5), _v(r, 5)],
         lambda T, F, a, b: T.polar(a, b)),
    Case("prod", "fp32", lambda r: [_v(r, 2, 3) / 2],
         lambda T, F, x: T.prod(x)),
    Case("prod.dim_int", "fp32", lambda r: [_v(r, 2, 3)],
         lambda T, F, x: x.prod(1, keepdim=True)),
    Case("quantile", "fp32", lambda r: [_v(r, 3, 5), np.array([0.25, 0.5], np.float32)],
         lambda T, F, x, q: T.quantile(x, q, dim=1)),
    Case("quantile.scalar", "fp32", lambda r: [_v(r, 3, 5)],
         lambda T, F, x: T.quantile(x, 0.375, dim=1)),
    Case("nanquantile", "fp32", lambda r: [_v(r, 3, 5), np.array([0.25, 0.75], np.float32)],
         lambda T, F, x, q: T.nanquantile(x, q)),
    Case("nanquantile.scalar", "fp32", lambda r: [_v(r, 3, 5)],
         lambda T, F, x: T.nanquantile(x, 0.5, dim=0)),
    Case("stft", "fp32", lambda r: [_v(r, 32), _pos(r, 8)],
         lambda T, F, x, w: T.stft(x, 8, hop_length=4, window=w, center=False,
                                   return_complex=True)),
    Case("stft.center", "fp32", lambda r: [_v(r, 32)],
         lambda T, F, x: T.stft(x, 8, hop_length=4, return_complex=True)),
    Case("cdist", "fp32", lambda r: [_v(r, 3, 4), _v(r, 5, 4)],
         lambda T, F, a, b: T.cdist(a, b)),
    Case("trace", "fp32", lambda r: [_v(r, 4, 4)], lambda T, F, x: T.trace(x)),
    Case("view_as_complex", "fp32", lambda r: [_v(r, 3, 2)],
         lambda T, F, x: T.view_as_complex(x)),
    Case("cholesky", "fp32", lambda r: [_spd(r, 4)], lambda T, F, a: T.cholesky(a)),
    Case("cholesky_inverse", "fp32", lambda r: [_lower_tri(r, 4)],
         lambda T, F, l: T.cholesky_inverse(l)),
    Case("cholesky_solve", "fp32", lambda r: [_v(r, 4, 2), _lower_tri(r, 4)],
         lambda T, F, b, l: T.cholesky_solve(b, l)),
    Case("inverse", "fp32", lambda r: [_wellcond(r, 4)], lambda T, F, a: T.inverse(a)),
    Case("lu_solve", "fp32", lambda r: [_v(r, 4, 2), _wellcond(r, 4)],
         lambda T, F, b, a: T.lu_solve(b, *_lu_parts(T, a, b))),
    Case("orgqr", "fp32", _geqrf_parts, lambda T, F, a, tau: T.orgqr(a, tau)),
    Case("ormqr", "fp32", lambda r: _geqrf_parts(r) + [_v(r, 4, 3)],
         lambda T, F, a, tau, c: T.ormqr(a, tau, c)),
    Case("pinverse", "fp32", lambda r: [_wellcond(r, 3)], lambda T, F, a: T.pinverse(a)),
    Case("max_pool3d", "fp32", lambda r: [_v(r, 1, 2, 4, 4, 4)],
         lambda T, F, x: F.max_pool3d(x, 2)),
    Case("max_unpool2d", "fp32", lambda r: [_v(r, 1, 2, 2, 2)],
         lambda T, F, x: F.max_unpool2d(x, _unpool_idx(T, F, False), 2)),
    Case("max_unpool3d", "fp32", lambda r: [_v(r, 1, 2, 2, 2, 2)],
         lambda T, F, x: F.max_unpool3d(x, _unpool_idx(T, F, True), 2)),
    Case("adaptive_avg_pool3d", "fp32", lambda r: [_v(r, 1, 2, 4, 4, 4)],
         lambda T, F, x: F.adaptive_avg_pool3d(x, (2, 2, 2))),
    Case("adaptive_max_pool3d", "fp32", lambda r: [_v(r, 1, 2, 4, 4, 4)],
         lambda T, F, x: F.adaptive_max_pool3d(x, (2, 1, 2), return_indices=True)),
    Case("reflection_pad1d", "fp32", lambda r: [_v(r, 1, 2, 5)],
         lambda T, F, x: F.pad(x, (2, 1), mode="reflect")),
    Case("reflection_pad2d", "fp32", lambda r: [_v(r, 1, 2, 4, 4)],
         lambda T, F, x: F.pad(x, (1, 2, 2, 1), mode="reflect")),
    Case("replication_pad1d", "fp32", lambda r: [_v(r, 1, 2, 5)],
         lambda T, F, x: F.pad(x, (2, 1), mode="replicate")),
    Case("replication_pad2d", "fp32", lambda r: [_v(r, 1, 2, 4, 4)],
         lambda T, F, x: F.pad(x, (1, 2, 2, 1), mode="replicate")),
    Case("replication_pad3d", "fp32", lambda r: [_v(r, 1, 2, 3, 3, 3)],
         lambda T, F, x: F.pad(x, (1, 1, 0, 1, 1, 0), mode="replicate")),
    Case("mse_loss", "fp32", lambda r: [_v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, b: F.mse_loss(a, b)),
    Case("cosine_embedding_loss", "fp32", lambda r: [_v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, b: F.cosine_embedding_loss(a, b, _long(T, [1, -1, 1]))),
    Case("nll_loss", "fp32", lambda r: [_v(r, 3, 4)],
         lambda T, F, x: F.nll_loss(x, _long(T, [0, 3, 1]))),
    Case("nll_loss2d", "fp32", lambda r: [_v(r, 2, 3, 2, 2)],
         lambda T, F, x: F.nll_loss(x, _long(T, [[[0, 1], [2, 0]], [[1, 1], [0, 2]]]))),
    Case("hinge_embedding_loss", "fp32", lambda r: [_v(r, 3, 4)],
         lambda T, F, x: F.hinge_embedding_loss(x, T.tensor([[1., -1, 1, 1]] * 3))),
    Case("poisson_nll_loss", "fp32", lambda r: [_v(r, 3, 4), _pos(r, 3, 4)],
         lambda T, F, x, t: F.poisson_nll_loss(x, t)),
    Case("smooth_l1_loss", "fp32", lambda r: [_v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, b: F.smooth_l1_loss(a, b, beta=0.5)),
    Case("cross_entropy_loss", "fp32", lambda r: [_v(r, 3, 4)],
         lambda T, F, x: F.cross_entropy(x, _long(T, [0, 3, 1]))),
    Case("cross_entropy_loss (probabilities)", "fp32", lambda r: [_v(r, 3, 4), _pos(r, 3, 4)],
         lambda T, F, x, p: F.cross_entropy(x, p, label_smoothing=0.125)),
    Case("l1_loss", "fp32", lambda r: [_v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, b: F.l1_loss(a, b, reduction="sum")),
    Case("huber_loss", "fp32", lambda r: [_v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, b: F.huber_loss(a, b, delta=0.5)),
    Case("margin_ranking_loss", "fp32", lambda r: [_v(r, 4), _v(r, 4)],
         lambda T, F, a, b: F.margin_ranking_loss(a, b, T.tensor([1., -1, 1, -1]))),
    Case("soft_margin_loss", "fp32", lambda r: [_v(r, 3, 4)],
         lambda T, F, x: F.soft_margin_loss(x, T.tensor([[1., -1, 1, -1]] * 3))),
    Case("triplet_margin_loss", "fp32", lambda r: [_v(r, 3, 4), _v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, p, n: F.triplet_margin_loss(a, p, n)),
    Case("multi_margin_loss", "fp32", lambda r: [_v(r, 3, 4)],
         lambda T, F, x: F.multi_margin_loss(x, _long(T, [1, 0, 3]))),
    Case("ctc_loss.IntList", "fp32", lambda r: [_log_probs(r)],
         lambda T, F, lp: _ctc(T, F, lp, False)),
    Case("ctc_loss.Tensor", "fp32", lambda r: [_log_probs(r)],
         lambda T, F, lp: _ctc(T, F, lp, True)),
    Case("kl_div", "fp32", lambda r: [_v(r, 3, 4) - 3, _pos(r, 3, 4)],
         lambda T, F, a, b: F.kl_div(a, b, reduction="batchmean")),
    Case("multilabel_margin_loss", "fp32", lambda r: [_v(r, 2, 4)],
         lambda T, F, x: F.multilabel_margin_loss(x, _long(T, [[3, 0, -1, 1], [1, 2, 0, -1]]))),
    Case("binary_cross_entropy_with_logits", "fp32", lambda r: [_v(r, 3, 4), _pos(r, 3, 4)],
         lambda T, F, x, t: F.binary_cross_entropy_with_logits(x, t)),
    Case("fft_fft", "fp32", lambda r: [_v(r, 8)], lambda T, F, x: T.fft.fft(x)),
    Case("fft_ifft", "fp32", lambda r: [_v(r, 8)], lambda T, F, x: T.fft.ifft(x)),
    Case("fft_fft2", "fp32", lambda r: [_v(r, 4, 4)], lambda T, F, x: T.fft.fft2(x)),
    Case("fft_ifft2", "fp32", lambda r: [_v(r, 4, 4)], lambda T, F, x: T.fft.ifft2(x)),
    Case("fft_fftn", "fp32", lambda r: [_v(r, 2, 4, 4)], lambda T, F, x: T.fft.fftn(x)),
    Case("fft_ifftn", "fp32", lambda r: [_v(r, 2, 4, 4)], lambda T, F, x: T.fft.ifftn(x)),
    Case("fft_rfft", "fp32", lambda r: [_v(r, 8)], lambda T, F, x: T.fft.rfft(x)),
    Case("fft_irfft", "fp32", lambda r: [_v(r, 5)], lambda T, F, x: T.fft.irfft(x)),
    Case("fft_rfft2", "fp32", lambda r: [_v(r, 4, 4)], lambda T, F, x: T.fft.rfft2(x)),
    Case("fft_irfft2", "fp32", lambda r: [_v(r, 4, 3)], lambda T, F, x: T.fft.irfft2(x)),
    Case("fft_rfftn", "fp32", lambda r: [_v(r, 2, 4, 4)], lambda T, F, x: T.fft.rfftn(x)),
    Case("fft_irfftn", "fp32", lambda r: [_v(r, 2, 4, 3)], lambda T, F, x: T.fft.irfftn(x)),
    Case("fft_hfft", "fp32", lambda r: [_v(r, 5)], lambda T, F, x: T.fft.hfft(x)),
    Case("fft_ihfft", "fp32", lambda r: [_v(r, 8)], lambda T, F, x: T.fft.ihfft(x)),
    Case("linalg_cond", "fp32", lambda r: [_wellcond(r, 4)],
         lambda T, F, a: T.linalg.cond(a)),
    Case("linalg_cond.p_str", "fp32", lambda r: [_wellcond(r, 4)],
         lambda T, F, a: T.linalg.cond(a, "fro")),
    Case("linalg_matrix_norm", "fp32", lambda r: [_v(r, 3, 4)],
         lambda T, F, a: T.linalg.matrix_norm(a, ord=2)),
    Case("linalg_matrix_norm.str_ord", "fp32", lambda r: [_v(r, 3, 4)],
         lambda T, F, a: T.linalg.matrix_norm(a, ord="fro")),
    Case("linalg_matrix_rank", "fp32", lambda r: [_v(r, 4, 4)],
         lambda T, F, a: T.linalg.matrix_rank(a, tol=0.5)),
    Case("linalg_matrix_rank.atol_rtol_float", "fp32", lambda r: [_v(r, 4, 4)],
         lambda T, F, a: T.linalg.matrix_rank(a, atol=0.5, rtol=0.0)),
    Case("linalg_matrix_rank.atol_rtol_tensor", "fp32",
         lambda r: [_v(r, 4, 4), np.array(0.5, np.float32)],
         lambda T, F, a, t: T.linalg.matrix_rank(a, atol=t)),
    Case("linalg_matrix_rank.tol_tensor", "fp32",
         lambda r: [_v(r, 4, 4), np.array(0.5, np.float32)],
         lambda T, F, a, t: T.linalg.matrix_rank(a, tol=t)),
    Case("linalg_solve", "fp32", lambda r: [_wellcond(r, 4), _v(r, 4, 2)],
         lambda T, F, a, b: T.linalg.solve(a, b)),
    Case("linalg_cholesky", "fp32", lambda r: [_spd(r, 4)],
         lambda T, F, a: T.linalg.cholesky(a)),
    Case("linalg_cholesky_ex", "fp32", lambda r: [_spd(r, 4)],
         lambda T, F, a: T.linalg.cholesky_ex(a)),
    Case("linalg_svdvals", "fp32", lambda r: [_v(r, 4, 3)], lambda T, F, a: T.linalg.svdvals(a)),
    Case("linalg_eigvals", "fp32", lambda r: [_spd(r, 3)],
         lambda T, F, a: T.linalg.eigvals(a).real.sort().values,
         ember=lambda T, F, a: T.sort(T.real(T.linalg.eigvals(a))).values),
    Case("linalg_eigvalsh", "fp32", lambda r: [_spd(r, 4)],
         lambda T, F, a: T.linalg.eigvalsh(a)),
    Case("linalg_inv", "fp32", lambda r: [_wellcond(r, 4)], lambda T, F, a: T.linalg.inv(a)),
    Case("linalg_householder_product", "fp32", _geqrf_parts,
         lambda T, F, a, tau: T.linalg.householder_product(a, tau)),
    Case("linalg_tensorinv", "fp32", lambda r: [_wellcond(r, 4).reshape(4, 2, 2)],
         lambda T, F, a: T.linalg.tensorinv(a, ind=1)),
    Case("linalg_tensorsolve", "fp32", lambda r: [_wellcond(r, 6).reshape(2, 3, 6), _v(r, 2, 3)],
         lambda T, F, a, b: T.linalg.tensorsolve(a, b)),
    Case("geqrf", "fp32", lambda r: [_wellcond(r, 4)], lambda T, F, a: T.geqrf(a),
         values=False),
    Case("_lu_with_info", "fp32", lambda r: [_wellcond(r, 4)], lambda T, F, a: T.lu(a)[0]),
    Case("qr", "fp32", lambda r: [_wellcond(r, 4)], lambda T, F, a: T.qr(a), values=False),
    Case("svd", "fp32", lambda r: [_v(r, 4, 3)], lambda T, F, a: T.svd(a)[1]),
    Case("symeig", "fp32", lambda r: [_spd(r, 3)], lambda T, F, a: T.symeig(a)[0]),
    Case("triangular_solve", "fp32", lambda r: [_v(r, 4, 2), _lower_tri(r, 4)],
         lambda T, F, b, a: T.triangular_solve(b, a, upper=False)),
    Case("fractional_max_pool2d", "fp32",
         lambda r: [_v(r, 1, 2, 6, 6), np.array([[[0.25, 0.5], [0.75, 0.125]]], np.float32)],
         lambda T, F, x, s: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s)),
    Case("fractional_max_pool3d", "fp32",
         lambda r: [_v(r, 1, 2, 5, 5, 5),
                    np.array([[[0.25, 0.5, 0.125], [0.75, 0.125, 0.5]]], np.float32)],
         lambda T, F, x, s: F.fractional_max_pool3d(x, 2, output_size=3, _random_samples=s)),
    Case("linalg_qr", "fp32", lambda r: [_wellcond(r, 4)], lambda T, F, a: T.linalg.qr(a),
         values=False),
    Case("linalg_svd", "fp32", lambda r: [_v(r, 4, 3)], lambda T, F, a: T.linalg.svd(a)[1]),
    Case("linalg_eig", "fp32", lambda r: [_spd(r, 3)], lambda T, F, a: T.linalg.eig(a),
         values=False),
    Case("linalg_eigh", "fp32", lambda r: [_spd(r, 4)], lambda T, F, a: T.linalg.eigh(a)[0]),
    Case("linalg_lstsq", "fp32", lambda r: [_v(r, 5, 3) + np.eye(5, 3, dtype=np.float32) * 4,
                                          _v(r, 5, 2)],
         lambda T, F, a, b: T.linalg.lstsq(a, b).solution),
    Case("linalg_inv_ex", "fp32", lambda r: [_wellcond(r, 4)],
         lambda T, F, a: T.linalg.inv_ex(a)),
]

PROMOTE = [
    Case("stack", "promote", lambda r: [_v(r, 2, 3), _v(r, 2, 3)],
         lambda T, F, a, b: T.stack([a, b], 1)),
    Case("cat", "promote", lambda r: [_v(r, 2, 3), _v(r, 1, 3), _v(r, 2, 3)],
         lambda T, F, a, b, c: T.cat([a, b, c])),
    Case("index_copy", "promote", lambda r: [_v(r, 4, 3), _v(r, 2, 3)],
         lambda T, F, x, s: T.index_copy(x, 0, _long(T, [2, 0]), s)),
]

# Entries of torch 1.13's AutocastCPU registrations with no case above, and why.
NOT_TESTED = {
    "_convolution.deprecated": "internal overload, not reachable from Python",
    "_grid_sampler_2d_cpu_fallback": "internal; reached through grid_sampler",
    "grid_sampler_2d": "internal; reached through grid_sampler (F.grid_sample)",
    "grid_sampler_3d": "internal; reached through grid_sampler (F.grid_sample)",
    "multilabel_margin_loss_forward": "internal; reached through multilabel_margin_loss",
    "prod.dim_Dimname": "named tensors",
    "index_copy.dimname": "named tensors",
    "conv_tbc": "no such op in ember",
    "fake_quantize_per_tensor_affine": "no quantization in ember",
}

# Ops on no list: autocast leaves them alone, in torch and in ember. Composite ops of torch that
# call a listed op through the dispatcher (einsum -> bmm, tensordot -> mm) come out as that op.
UNLISTED = [
    Case("relu", None, lambda r: [_v(r, 3, 4)], lambda T, F, x: F.relu(x)),
    Case("add", None, lambda r: [_v(r, 3, 4), _v(r, 3, 4)], lambda T, F, a, b: a + b),
    Case("mul (broadcast)", None, lambda r: [_v(r, 3, 4), _v(r, 4)], lambda T, F, a, b: a * b),
    Case("exp", None, lambda r: [_v(r, 3, 4) / 2], lambda T, F, x: T.exp(x)),
    Case("sum", None, lambda r: [_v(r, 3, 4)], lambda T, F, x: x.sum(1)),
    Case("mean", None, lambda r: [_v(r, 3, 4)], lambda T, F, x: x.mean()),
    Case("softmax", None, lambda r: [_v(r, 3, 4)], lambda T, F, x: F.softmax(x, 1)),
    Case("log_softmax", None, lambda r: [_v(r, 3, 4)], lambda T, F, x: F.log_softmax(x, -1)),
    Case("gelu", None, lambda r: [_v(r, 3, 4)], lambda T, F, x: F.gelu(x)),
    Case("layer_norm", None, lambda r: [_v(r, 3, 4), _v(r, 4), _v(r, 4)],
         lambda T, F, x, w, b: F.layer_norm(x, (4,), w, b)),
    Case("group_norm", None, lambda r: [_v(r, 2, 4, 3), _v(r, 4), _v(r, 4)],
         lambda T, F, x, w, b: F.group_norm(x, 2, w, b)),
    Case("batch_norm", None, lambda r: [_v(r, 4, 3), _v(r, 3), _v(r, 3)],
         lambda T, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    Case("addmv", None, lambda r: [_v(r, 3), _v(r, 3, 4), _v(r, 4)],
         lambda T, F, c, a, b: T.addmv(c, a, b)),
    Case("mv", None, lambda r: [_v(r, 3, 4), _v(r, 4)], lambda T, F, a, b: T.mv(a, b)),
    Case("dot", None, lambda r: [_v(r, 4), _v(r, 4)], lambda T, F, a, b: T.dot(a, b)),
    Case("prelu", None, lambda r: [_v(r, 2, 3), np.array([0.25], np.float32)],
         lambda T, F, x, w: F.prelu(x, w)),
    Case("max_pool2d", None, lambda r: [_v(r, 1, 2, 4, 4)], lambda T, F, x: F.max_pool2d(x, 2)),
    Case("avg_pool2d", None, lambda r: [_v(r, 1, 2, 4, 4)], lambda T, F, x: F.avg_pool2d(x, 2)),
    Case("pad constant", None, lambda r: [_v(r, 1, 2, 4)], lambda T, F, x: F.pad(x, (1, 1))),
    Case("cumsum", None, lambda r: [_v(r, 3, 4)], lambda T, F, x: x.cumsum(1)),
    Case("where", None, lambda r: [_v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, b: T.where(a > 0, a, b)),
    Case("einsum (bmm inside)", None, lambda r: [_v(r, 2, 3, 4), _v(r, 2, 4, 5)],
         lambda T, F, a, b: T.einsum("bij,bjk->bik", a, b)),
    Case("tensordot (mm inside)", None, lambda r: [_v(r, 3, 4), _v(r, 4, 5)],
         lambda T, F, a, b: T.tensordot(a, b, dims=1)),
    Case("cosine_similarity", None, lambda r: [_v(r, 3, 4), _v(r, 3, 4)],
         lambda T, F, a, b: F.cosine_similarity(a, b)),
    Case("embedding", None, lambda r: [_v(r, 5, 3)],
         lambda T, F, w: F.embedding(_long(T, [0, 4, 2]), w)),
]

ALL = LOWER + FP32 + PROMOTE
