"""nn.functional losses against torch 1.13: values, gradients (float64, with a random grad
output), every reduction, class weights, ignore_index, label smoothing, strided and zero-size
inputs, float32 tolerance, gradcheck, and bad input with torch's exception types."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

RED = ["none", "mean", "sum"]


def _np(t):
    return t.detach().numpy().copy()


def _leaf(lib, a, grad):
    t = (torch.from_numpy if lib is torch else ember.from_numpy)(np.array(a, order="C"))
    if grad and t.is_floating_point():
        t.requires_grad_(True)
    return t


def run_both(fn, arrays, grad=True, rtol=1e-7, atol=1e-9, seed=0):
    """Runs fn(lib, F, *leaves) for torch and ember on the same arrays; compares the output and,
    when `grad`, the gradients of every floating leaf for one random grad output."""
    outs, grads = [], []
    for lib, F in ((torch, TF), (ember, EF)):
        leaves = [_leaf(lib, a, grad) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, F, *leaves)
        outs.append(_np(out))
        if grad:
            rng = np.random.default_rng(seed)
            g = rng.standard_normal(tuple(out.shape)).astype(_np(out).dtype)
            gt = (torch.from_numpy if lib is torch else ember.from_numpy)(g)
            diff = [x for x in leaves if x.requires_grad]
            gs = lib.autograd.grad([out], diff, [gt], allow_unused=True)
            grads.append([None if v is None else _np(v) for v in gs])
    assert outs[0].shape == outs[1].shape, (outs[0].shape, outs[1].shape)
    np.testing.assert_allclose(outs[1], outs[0], rtol=rtol, atol=atol)
    if grad:
        for gt_, ge in zip(*grads):
            if gt_ is None:
                assert ge is None or np.all(ge == 0)
                continue
            np.testing.assert_allclose(ge, gt_, rtol=rtol, atol=atol)


def rnd(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def targets(shape, C, seed=1):
    return np.random.default_rng(seed).integers(0, C, size=shape).astype(np.int64)


# ---- cross entropy / nll ----

@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("shape", [(5,), (4, 5), (3, 5, 4), (2, 5, 3, 2)])
def test_cross_entropy_indices(shape, reduction):
    C = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    run_both(lambda L, F, x, t: F.cross_entropy(x, t, reduction=reduction),
             [rnd(*shape), targets(tshape, C)])


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_weight_ignore_smoothing(reduction, ls):
    t = targets((6, 3), 4)
    t[0, 0] = t[2, 1] = -100
    t[3, 2] = 2
    run_both(lambda L, F, x, w, t: F.cross_entropy(x, t, weight=w.detach(), reduction=reduction,
                                                   label_smoothing=ls),
             [rnd(6, 4, 3), np.abs(rnd(4, seed=3)) + 0.1, t])
    t2 = targets((6,), 4)
    t2[1] = 3
    run_both(lambda L, F, x, t: F.cross_entropy(x, t, ignore_index=3, reduction=reduction,
                                                label_smoothing=ls),
             [rnd(6, 4), t2])


@pytest.mark.parametrize("reduction", RED)
@pytest.mark.parametrize("ls", [0.0, 0.1])
def test_cross_entropy_probabilities(reduction, ls):
    p = np.random.default_rng(5).random((4, 5, 3))
    p /= p.sum(1, keepdims=True)
    run_both(lambda L, F, x, t: F.cross_entropy(x, t, reduction=reduction, label_smoothing=ls),
             [rnd(4, 5, 3), p])
    run_both(lambda L, F, x, w, t: F.cross_entropy(x, t, weight=w.detach(), reduction=reduction),
             [rnd(4, 5), np.abs(rnd(5, seed=2)), p[:, :, 0]])


def test_cross_entropy_strided_and_float32():
    x = rnd(5, 8)
    run_both(lambda L, F, x, t: F.cross_entropy(x.t()[::2].t(), t), [x, targets((5,), 4)])
    run_both(lambda L, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
             [rnd(16, 10, dtype=np.float32), targets((16,), 10)], rtol=1e-5, atol=1e-6)


def test_cross_entropy_zero_size():
    for red in RED:
        run_both(lambda L, F, x, t: F.cross_entropy(x, t, reduction=red),
                 [rnd(0, 5), np.zeros((0,), np.int64)], grad=(red != "mean"))
    e = EF.cross_entropy(ember.zeros(0, 5), ember.zeros(0, dtype=ember.int64))
    assert np.isnan(e.item())


def test_cross_entropy_all_ignored_is_nan():
    e = EF.cross_entropy(ember.randn(3, 5), ember.tensor([-100, -100, -100]))
    assert np.isnan(e.item())


@pytest.mark.parametrize("reduction", RED)
def test_nll_loss(reduction):
    t = targets((7,), 5)
    t[2] = -100
    run_both(lambda L, F, x, t: F.nll_loss(x, t, reduction=reduction), [rnd(7, 5), t])
    run_both(lambda L, F, x, w, t: F.nll_loss(x, t, weight=w.detach(), reduction=reduction,
                                              ignore_index=1),
             [rnd(3, 5, 2, 2), np.abs(rnd(5)), targets((3, 2, 2), 5)])


def test_nll_legacy_reduction_args():
    x, t = rnd(4, 3), targets((4,), 3)
    run_both(lambda L, F, x, t: F.nll_loss(x, t, size_average=False), [x, t])
    run_both(lambda L, F, x, t: F.nll_loss(x, t, reduce=False), [x, t])
    run_both(lambda L, F, x, t: F.cross_entropy(x, t, size_average=True, reduce=True), [x, t])


def test_cross_entropy_double_backward_and_gradcheck():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 3, 1])
    assert ember.autograd.gradcheck(lambda x: EF.cross_entropy(x, t, label_smoothing=0.1), (x,))
    assert ember.autograd.gradgradcheck(lambda x: EF.cross_entropy(x, t), (x,))


def _raises(fn, exc):
    with pytest.raises(exc):
        fn(torch, TF)
    with pytest.raises(exc):
        fn(ember, EF)


def test_cross_entropy_errors():
    def mk(L, shape, dtype=None):
        return L.zeros(shape) if dtype is None else L.zeros(shape, dtype=dtype)
    _raises(lambda L, F: F.nll_loss(mk(L, (3, 5)), L.tensor([1, 2, 7])), IndexError)
    _raises(lambda L, F: F.cross_entropy(mk(L, (3, 5)), L.tensor([1, 2, -3])), IndexError)
    _raises(lambda L, F: F.nll_loss(mk(L, (3, 5)), L.tensor([1, 2])), ValueError)
    _raises(lambda L, F: F.nll_loss(mk(L, (3, 5)), L.tensor([1, 2, 3], dtype=L.int32)),
            RuntimeError)
    _raises(lambda L, F: F.nll_loss(mk(L, (3, 5)), L.tensor([1., 2, 3])), RuntimeError)
    _raises(lambda L, F: F.nll_loss(mk(L, (2, 5, 3)), L.tensor([[1, 2], [0, 0]])), RuntimeError)
    _raises(lambda L, F: F.nll_loss(mk(L, (3, 5)), L.tensor([1, 2, 3]), weight=L.ones(4)),
            RuntimeError)
    _raises(lambda L, F: F.nll_loss(mk(L, ()), L.tensor(2)), ValueError)
    _raises(lambda L, F: F.cross_entropy(mk(L, (3, 5)), mk(L, (3, 4))), RuntimeError)
    _raises(lambda L, F: F.cross_entropy(mk(L, (3, 5)), L.zeros(3, 5, dtype=L.int64)),
            RuntimeError)
    _raises(lambda L, F: F.cross_entropy(mk(L, (3, 5)), L.tensor([1, 2, 3]), reduction="foo"),
            ValueError)


# ---- regression and binary losses ----

@pytest.mark.parametrize("reduction", RED)
def test_regression_losses(reduction):
    a, b = rnd(4, 5), rnd(4, 5, seed=1)
    b[0, 0] = a[0, 0]  # a zero difference: the l1 subgradient
    run_both(lambda L, F, x, y: F.mse_loss(x, y, reduction=reduction), [a, b])
    run_both(lambda L, F, x, y: F.l1_loss(x, y, reduction=reduction), [a, b])
    run_both(lambda L, F, x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.7), [a, b])
    run_both(lambda L, F, x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=0.0), [a, b])
    run_both(lambda L, F, x, y: F.huber_loss(x, y, reduction=reduction, delta=0.5), [a, b])
    # broadcast target and a strided input
    run_both(lambda L, F, x, y: F.mse_loss(x.t(), y, reduction=reduction), [a, rnd(4, seed=2)])


@pytest.mark.parametrize("reduction", RED)
def test_binary_cross_entropy(reduction):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.05, 0.95, (4, 3))
    x[0, 0], x[1, 1] = 0.0, 1.0  # clamped logs, as torch
    t = rng.uniform(0, 1, (4, 3))
    run_both(lambda L, F, x, t: F.binary_cross_entropy(x, t, reduction=reduction), [x, t])
    run_both(lambda L, F, x, t, w: F.binary_cross_entropy(x, t, weight=w.detach(),
                                                          reduction=reduction),
             [x, t, np.abs(rnd(3))])
    z = rnd(4, 3) * 20  # large logits: stable
    run_both(lambda L, F, x, t, pw: F.binary_cross_entropy_with_logits(
        x, t, pos_weight=pw.detach(), reduction=reduction), [z, t, np.abs(rnd(3, seed=4))])
    run_both(lambda L, F, x, t, w: F.binary_cross_entropy_with_logits(
        x, t, weight=w.detach(), reduction=reduction), [z, t, np.abs(rnd(4, 1, seed=4))])


def test_binary_cross_entropy_errors():
    _raises(lambda L, F: F.binary_cross_entropy(L.full((3,), 1.5), L.zeros(3)), RuntimeError)
    _raises(lambda L, F: F.binary_cross_entropy(L.full((3,), 0.5), L.zeros(2)), ValueError)
    _raises(lambda L, F: F.binary_cross_entropy_with_logits(L.zeros(3), L.zeros(2)), ValueError)


@pytest.mark.parametrize("reduction", RED + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(5), 4))
    t = np.random.default_rng(1).dirichlet(np.ones(5), 4)
    t[0, 0] = 0.0
    if log_target:
        t = np.log(t + 0.1)
    run_both(lambda L, F, x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target),
             [x, t])


# ---- margin, ranking and likelihood losses ----

@pytest.mark.parametrize("reduction", RED)
def test_margin_and_embedding_losses(reduction):
    a, b = rnd(5, 4), rnd(5, 4, seed=1)
    y = np.where(np.random.default_rng(2).random(5) > 0.5, 1.0, -1.0)
    r = reduction
    run_both(lambda L, F, a, b, y: F.cosine_embedding_loss(a, b, y.detach(), margin=0.2,
                                                           reduction=r), [a, b, y])
    run_both(lambda L, F, a, b, y: F.margin_ranking_loss(a[:, 0], b[:, 0], y.detach(), margin=0.1,
                                                         reduction=r), [a, b, y])
    run_both(lambda L, F, a, y: F.hinge_embedding_loss(a, y.detach().unsqueeze(1).expand(5, 4),
                                                       margin=0.5, reduction=r), [a, y])
    run_both(lambda L, F, a, y: F.soft_margin_loss(a, y.detach().unsqueeze(1), reduction=r),
             [a, y])
    run_both(lambda L, F, a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5, reduction=r),
             [a, b, rnd(5, 4, seed=3)])
    run_both(lambda L, F, a, p, n: F.triplet_margin_loss(a, p, n, p=1, swap=True, reduction=r),
             [a, b, rnd(5, 4, seed=3)])


@pytest.mark.parametrize("reduction", RED)
def test_multi_margin_losses(reduction):
    x, t = rnd(6, 5), targets((6,), 5)
    r = reduction
    run_both(lambda L, F, x, t: F.multi_margin_loss(x, t, reduction=r), [x, t])
    run_both(lambda L, F, x, t, w: F.multi_margin_loss(x, t, p=2, margin=0.7, weight=w.detach(),
                                                       reduction=r), [x, t, np.abs(rnd(5))])
    run_both(lambda L, F, x, t: F.multi_margin_loss(x, t, reduction=r), [rnd(5), np.int64(2)])
    mt = np.full((6, 5), -1, np.int64)
    mt[0, :2] = [3, 0]
    mt[1, :3] = [1, 1, 4]
    mt[3, :1] = [2]
    run_both(lambda L, F, x, t: F.multilabel_margin_loss(x, t, reduction=r), [x, mt])
    tgt = (np.random.default_rng(4).random((6, 5)) > 0.5).astype(np.float64)
    run_both(lambda L, F, x, t, w: F.multilabel_soft_margin_loss(x, t, weight=w.detach(),
                                                                 reduction=r),
             [x, tgt, np.abs(rnd(5))])


@pytest.mark.parametrize("reduction", RED)
def test_poisson_gaussian_nll(reduction):
    x = rnd(4, 3)
    t = np.random.default_rng(1).poisson(2.0, (4, 3)).astype(np.float64)
    r = reduction
    run_both(lambda L, F, x, t: F.poisson_nll_loss(x, t, reduction=r), [x, t])
    run_both(lambda L, F, x, t: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction=r),
             [np.abs(x) + 0.1, t])
    v = np.abs(rnd(4, 3, seed=5))
    v[0, 0] = 1e-9  # clamped to eps, gradient passes through as torch
    run_both(lambda L, F, x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction=r),
             [x, t, v])
    run_both(lambda L, F, x, t, v: F.gaussian_nll_loss(x, t, v, reduction=r), [x, t, v[:, 0]])
    with pytest.raises(ValueError):
        EF.gaussian_nll_loss(ember.zeros(4, 3), ember.zeros(4, 3), ember.ones(2))
    with pytest.raises(ValueError):
        EF.gaussian_nll_loss(ember.zeros(4, 3), ember.zeros(4, 3), -ember.ones(4, 3))


@pytest.mark.parametrize("reduction", RED)
def test_ctc_loss(reduction):
    T, N, C, S = 12, 3, 5, 4
    rng = np.random.default_rng(0)
    lp = torch.from_numpy(rng.standard_normal((T, N, C))).log_softmax(2).numpy()
    tg = rng.integers(1, C, (N, S)).astype(np.int64)
    tg[1, 1] = tg[1, 0]  # a repeated label
    il, tl = [12, 10, 7], [4, 3, 2]
    run_both(lambda L, F, lp, tg: F.ctc_loss(lp, tg, L.tensor(il), L.tensor(tl),
                                             reduction=reduction), [lp, tg], rtol=1e-6)
    flat = np.concatenate([tg[0, :4], tg[1, :3], tg[2, :2]])
    run_both(lambda L, F, lp, tg: F.ctc_loss(lp, tg, il, tl, reduction=reduction),
             [lp, flat], rtol=1e-6)
    # an impossible alignment: infinite loss, or zero with zero_infinity
    run_both(lambda L, F, lp, tg: F.ctc_loss(lp, tg, [2, 2, 2], [3, 3, 3], reduction=reduction,
                                             zero_infinity=True), [lp, tg], rtol=1e-6)
