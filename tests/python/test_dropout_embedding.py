"""Dropout variants (statistics of the masks, scaling, gradients, train/eval, in-place, bad p)
and embedding / embedding_bag against torch 1.13 (values, gradients with padding_idx,
scale_grad_by_freq, per_sample_weights, every mode, max_norm renormalisation, errors)."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF


def _np(t):
    return t.detach().numpy().copy()


# ---- dropout ----

@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics_and_grad(p):
    ember.manual_seed(0)
    x = ember.ones(200, 100, dtype=ember.float64, requires_grad=True)
    y = EF.dropout(x, p)
    v = _np(y)
    kept = v != 0
    assert abs(1 - kept.mean() - p) < 0.02
    np.testing.assert_allclose(v[kept], 1 / (1 - p))
    (g,) = ember.autograd.grad([y.sum()], [x])
    np.testing.assert_allclose(_np(g), v)  # the gradient is the same scaled mask


def test_dropout_eval_edges_and_inplace():
    x = ember.randn(10, 10)
    assert np.array_equal(_np(EF.dropout(x, 0.5, training=False)), _np(x))
    assert np.array_equal(_np(EF.dropout(x, 0.0)), _np(x))
    assert np.all(_np(EF.dropout(x, 1.0)) == 0)
    z = x.clone()
    r = EF.dropout(z, 0.5, inplace=True)
    assert r is z or np.array_equal(_np(r), _np(z))
    vz = _np(z)
    assert np.all((vz == 0) | np.isclose(vz, 2 * _np(x)))
    assert tuple(EF.dropout(ember.zeros(0, 3), 0.5).shape) == (0, 3)
    for L, F in ((torch, TF), (ember, EF)):
        for bad in (-0.1, 1.5):
            with pytest.raises(ValueError):
                F.dropout(L.zeros(3), bad)
            with pytest.raises(ValueError):
                F.alpha_dropout(L.zeros(3), bad, True)


def test_dropout_strided_input():
    ember.manual_seed(1)
    x = ember.ones(50, 40).t()[::2]
    v = _np(EF.dropout(x, 0.5))
    assert v.shape == (20, 50)
    assert set(np.unique(v)) <= {0.0, 2.0}


@pytest.mark.parametrize("fn,shape", [("dropout1d", (8, 16, 30)), ("dropout1d", (16, 30)),
                                      ("dropout2d", (8, 16, 5, 6)), ("dropout3d", (4, 16, 2, 3, 4)),
                                      ("dropout3d", (16, 2, 3, 4))])
def test_feature_dropout_drops_whole_channels(fn, shape):
    ember.manual_seed(2)
    y = _np(getattr(EF, fn)(ember.ones(*shape), 0.5))
    assert y.shape == shape
    batched = len(shape) == {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}[fn]
    flat = y.reshape((shape[0] * shape[1] if batched else shape[0], -1))
    assert np.all((flat == 0).all(1) | (flat == 2).all(1))
    assert 0.2 < (flat[:, 0] == 0).mean() < 0.8


def test_feature_dropout_errors():
    for L, F in ((torch, TF), (ember, EF)):
        with pytest.raises(RuntimeError):
            F.dropout1d(L.zeros(2, 3, 4, 5), 0.5)


def test_alpha_dropout_keeps_mean_and_variance():
    ember.manual_seed(3)
    x = ember.randn(400, 500, dtype=ember.float64)
    for fn in (EF.alpha_dropout, EF.feature_alpha_dropout):
        y = _np(fn(x, 0.3, True))
        assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    assert np.array_equal(_np(EF.alpha_dropout(x, 0.3)), _np(x))  # training=False default
    xg = ember.randn(20, 10, dtype=ember.float64, requires_grad=True)
    y = EF.alpha_dropout(xg, 0.4, True)
    (g,) = ember.autograd.grad([y.sum()], [xg])
    gv = _np(g)
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.4 + 1) * 0.6)
    assert np.all(np.isclose(gv, 0) | np.isclose(gv, a))


# ---- embedding ----

def _pair(a):
    return torch.from_numpy(np.array(a, order="C")), ember.from_numpy(np.array(a, order="C"))


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding(padding_idx, scale):
    W = np.random.default_rng(0).standard_normal((6, 4))
    idx = np.array([[0, 2, 5, 2], [1, 2, 0, 5]])
    g = np.random.default_rng(1).standard_normal((2, 4, 4))
    res = []
    for lib, F, k in ((torch, TF, 0), (ember, EF, 1)):
        w = _pair(W)[k].requires_grad_(True)
        i = _pair(idx)[k]
        y = F.embedding(i, w, padding_idx=padding_idx, scale_grad_by_freq=scale)
        (gw,) = lib.autograd.grad([y], [w], [_pair(g)[k]])
        res.append((_np(y), _np(gw)))
    np.testing.assert_allclose(res[1][0], res[0][0])
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12)


def test_embedding_max_norm_and_errors():
    W = np.random.default_rng(0).standard_normal((6, 4)) * 3
    out = []
    for lib, F, k in ((torch, TF, 0), (ember, EF, 1)):
        w = _pair(W)[k]
        y = F.embedding(_pair(np.array([1, 3, 3]))[k], w, max_norm=1.5, norm_type=1.0)
        out.append((_np(y), _np(w)))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12)  # rows 1, 3 renormed in place
    for L, F in ((torch, TF), (ember, EF)):
        with pytest.raises(IndexError):
            F.embedding(L.tensor([0, 6]), L.zeros(6, 2))
        with pytest.raises(RuntimeError):
            F.embedding(L.tensor([0.0, 1.0]), L.zeros(6, 2))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_bag(mode, padding_idx):
    W = np.random.default_rng(0).standard_normal((7, 3))
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9 % 7, 1, 0])
    offs = np.array([0, 2, 2, 6])  # an empty bag
    res = []
    for lib, F, k in ((torch, TF, 0), (ember, EF, 1)):
        w = _pair(W)[k].requires_grad_(True)
        y = F.embedding_bag(_pair(idx)[k], w, _pair(offs)[k], mode=mode, padding_idx=padding_idx)
        g = _pair(np.random.default_rng(1).standard_normal(tuple(y.shape)))[k]
        (gw,) = lib.autograd.grad([y], [w], [g])
        y2 = F.embedding_bag(_pair(idx.reshape(2, 5))[k], w, mode=mode)
        res.append((_np(y), _np(gw), _np(y2)))
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


def test_embedding_bag_per_sample_weights_and_last_offset():
    W = np.random.default_rng(0).standard_normal((5, 3))
    idx = np.array([0, 1, 4, 3, 2])
    psw = np.random.default_rng(2).standard_normal(5)
    res = []
    for lib, F, k in ((torch, TF, 0), (ember, EF, 1)):
        w = _pair(W)[k].requires_grad_(True)
        s = _pair(psw)[k].requires_grad_(True)
        y = F.embedding_bag(_pair(idx)[k], w, _pair(np.array([0, 2, 5]))[k], mode="sum",
                            per_sample_weights=s, include_last_offset=True)
        gw, gs = lib.autograd.grad([y.sum()], [w, s])
        res.append((_np(y), _np(gw), _np(gs)))
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    for L, F in ((torch, TF), (ember, EF)):
        with pytest.raises(ValueError):
            F.embedding_bag(L.tensor([0, 1]), L.zeros(3, 2))
        with pytest.raises(NotImplementedError):
            F.embedding_bag(L.tensor([0, 1]), L.zeros(3, 2), L.tensor([0]), mode="max",
                            per_sample_weights=L.ones(2))
