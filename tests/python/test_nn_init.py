"""ember.nn.init against torch.nn.init: gains and fans exactly, deterministic initialisers
exactly (constant_, ones_, zeros_, eye_, dirac_), random ones by their bounds and moments, the
orthogonality of orthogonal_, sparse_'s zero count, no-grad operation and error types."""

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
import ember.nn as enn
from ember.nn import init
from _oracle import to_torch


def arr(t):
    return to_torch(t.detach()).numpy()


@pytest.mark.parametrize("nl,param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None),
])
def test_calculate_gain(nl, param):
    assert init.calculate_gain(nl, param) == tnn.init.calculate_gain(nl, param)


def test_calculate_gain_errors():
    for args in [("softmax",), ("leaky_relu", True), ("leaky_relu", "0.1")]:
        with pytest.raises(ValueError):
            tnn.init.calculate_gain(*args)
        with pytest.raises(ValueError):
            init.calculate_gain(*args)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 4, 3, 2), (2, 3, 1, 2, 2), (0, 3)])
def test_fans(shape):
    e, t = ember.empty(*shape), torch.empty(*shape)
    assert init._calculate_fan_in_and_fan_out(e) == tnn.init._calculate_fan_in_and_fan_out(t)
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert init._calculate_correct_fan(e, mode) == tnn.init._calculate_correct_fan(t, mode)
    with pytest.raises(ValueError):
        init._calculate_correct_fan(e, "fan_avg")


def test_fans_need_two_dims():
    with pytest.raises(ValueError):
        init._calculate_fan_in_and_fan_out(ember.empty(3))
    with pytest.raises(ValueError):
        init.xavier_uniform_(ember.empty(3))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_deterministic(dtype):
    w = ember.empty(3, 5, dtype=dtype)
    assert init.constant_(w, 0.25) is w
    np.testing.assert_array_equal(arr(w), np.full((3, 5), 0.25))
    init.ones_(w)
    np.testing.assert_array_equal(arr(w), np.ones((3, 5)))
    init.zeros_(w)
    np.testing.assert_array_equal(arr(w), np.zeros((3, 5)))
    for shape in [(3, 5), (5, 3), (4, 4)]:
        w = ember.empty(*shape, dtype=dtype)
        assert init.eye_(w) is w
        np.testing.assert_array_equal(arr(w), np.eye(*shape))
        assert w.dtype == dtype
    with pytest.raises(ValueError):
        init.eye_(ember.empty(2, 2, 2))


@pytest.mark.parametrize("shape,groups", [((4, 3, 3), 1), ((6, 4, 3, 3), 2), ((3, 5, 3, 2, 3), 1),
                                          ((8, 2, 5, 5), 4), ((2, 4, 3), 1)])
def test_dirac(shape, groups):
    e, t = ember.empty(*shape), torch.empty(*shape)
    init.dirac_(e, groups)
    tnn.init.dirac_(t, groups)
    np.testing.assert_array_equal(arr(e), t.numpy())
    # A dirac kernel makes the convolution the identity on the channels it covers.
    if len(shape) == 4 and groups == 1 and shape[0] == shape[1]:
        x = ember.randn(1, shape[1], 6, 6)
        y = ember.nn.functional.conv2d(x, e, padding=(shape[2] // 2, shape[3] // 2))
        np.testing.assert_allclose(arr(y), arr(x), atol=1e-6)


def test_dirac_errors():
    with pytest.raises(ValueError):
        init.dirac_(ember.empty(3, 3))
    with pytest.raises(ValueError):
        init.dirac_(ember.empty(5, 3, 3), groups=2)


def _big(*shape, dtype=ember.float64):
    return ember.empty(*shape, dtype=dtype)


def test_uniform_normal_statistics():
    w = init.uniform_(_big(200, 300), -2.0, 3.0)
    a = arr(w)
    assert a.min() >= -2.0 and a.max() < 3.0 and a.min() < -1.95 and a.max() > 2.95
    assert abs(a.mean() - 0.5) < 0.05 and abs(a.std() - 5 / math.sqrt(12)) < 0.03
    a = arr(init.normal_(_big(200, 300), 1.5, 0.5))
    assert abs(a.mean() - 1.5) < 0.01 and abs(a.std() - 0.5) < 0.01


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (1.0, 0.5, 0.5, 3.0),
                                          (0.0, 0.02, -0.04, 0.04)])
def test_trunc_normal(mean, std, a, b):
    x = arr(init.trunc_normal_(_big(300, 300), mean, std, a, b))
    assert x.min() >= a and x.max() <= b
    t = tnn.init.trunc_normal_(torch.empty(300, 300, dtype=torch.float64), mean, std, a, b)
    # Same distribution as torch's: compare moments.
    assert abs(x.mean() - t.mean().item()) < 0.02 * (b - a)
    assert abs(x.std() - t.std().item()) < 0.02 * (b - a)


def test_trunc_normal_warns_far_mean():
    with pytest.warns(UserWarning):
        init.trunc_normal_(ember.empty(10), mean=10.0, std=1.0, a=-2.0, b=2.0)


@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(gain):
    fan_in, fan_out = 300, 200
    w = init.xavier_uniform_(_big(fan_out, fan_in), gain)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    a = arr(w)
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.99 * bound
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    a = arr(init.xavier_normal_(_big(fan_out, fan_in), gain))
    assert abs(a.std() - std) < 0.02 * std and abs(a.mean()) < 0.02 * std


@pytest.mark.parametrize("a_,mode,nl", [(0, "fan_in", "leaky_relu"), (math.sqrt(5), "fan_in",
                                                                    "leaky_relu"),
                                        (0, "fan_out", "relu"), (0.1, "fan_in", "tanh")])
def test_kaiming(a_, mode, nl):
    shape = (64, 32, 3, 3)
    fan = tnn.init._calculate_correct_fan(torch.empty(*shape), mode)
    gain = tnn.init.calculate_gain(nl, a_)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    a = arr(init.kaiming_uniform_(_big(*shape), a=a_, mode=mode, nonlinearity=nl))
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.99 * bound
    std = gain / math.sqrt(fan)
    a = arr(init.kaiming_normal_(_big(*shape), a=a_, mode=mode, nonlinearity=nl))
    assert abs(a.std() - std) < 0.03 * std


def test_kaiming_zero_element_warns():
    with pytest.warns(UserWarning):
        w = init.kaiming_uniform_(ember.empty(0, 3))
    assert tuple(w.shape) == (0, 3)


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 2, 3), (6, 2, 2, 2)])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_orthogonal(shape, dtype):
    w = init.orthogonal_(ember.empty(*shape, dtype=dtype), gain=2.0)
    assert tuple(w.shape) == shape and w.dtype == dtype
    m = arr(w).reshape(shape[0], -1) / 2.0
    rows, cols = m.shape
    gram = m @ m.T if rows <= cols else m.T @ m
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)),
                               atol=1e-5 if dtype == ember.float32 else 1e-12)


def test_orthogonal_errors_and_empty():
    with pytest.raises(ValueError):
        init.orthogonal_(ember.empty(4))
    assert tuple(init.orthogonal_(ember.empty(0, 3)).shape) == (0, 3)


def test_sparse():
    w = init.sparse_(ember.empty(10, 6, dtype=ember.float64), sparsity=0.3, std=0.5)
    a = arr(w)
    assert ((a == 0).sum(0) == 3).all()  # ceil(0.3 * 10) zeros in every column
    with pytest.raises(ValueError):
        init.sparse_(ember.empty(3, 3, 3), 0.5)


def test_init_runs_without_grad_on_parameters():
    p = enn.Parameter(ember.empty(4, 5))
    for fn in [lambda: init.uniform_(p), lambda: init.normal_(p), lambda: init.constant_(p, 1.0),
               lambda: init.xavier_uniform_(p), lambda: init.kaiming_normal_(p),
               lambda: init.orthogonal_(p), lambda: init.eye_(p), lambda: init.zeros_(p),
               lambda: init.trunc_normal_(p), lambda: init.sparse_(p, 0.5)]:
        out = fn()
        assert out is p
        assert p.grad_fn is None and p.requires_grad and p.is_leaf


def test_deprecated_aliases_warn():
    with pytest.warns(UserWarning):
        init.uniform(ember.empty(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.uniform_(ember.empty(2, 2))


def test_default_layer_inits_follow_torch():
    # Same formulas as torch: compare the bounds of the distributions layers draw from.
    for em, tm in [(enn.Linear(50, 40), tnn.Linear(50, 40)),
                   (enn.Conv1d(6, 4, 5), tnn.Conv1d(6, 4, 5)),
                   (enn.ConvTranspose2d(6, 4, 3, groups=2), tnn.ConvTranspose2d(6, 4, 3,
                                                                                 groups=2)),
                   (enn.Bilinear(5, 7, 3), tnn.Bilinear(5, 7, 3))]:
        fan_in = tnn.init._calculate_fan_in_and_fan_out(tm.weight)[0]
        if isinstance(tm, tnn.Bilinear):
            fan_in = tm.weight.size(1)
        bound = 1 / math.sqrt(fan_in)
        assert np.abs(arr(em.weight)).max() <= bound + 1e-7
        assert np.abs(arr(em.bias)).max() <= bound + 1e-7
    ln = enn.LayerNorm(4)
    np.testing.assert_array_equal(arr(ln.weight), np.ones(4))
    np.testing.assert_array_equal(arr(ln.bias), np.zeros(4))
    pr = enn.PReLU(3, init=0.1)
    np.testing.assert_allclose(arr(pr.weight), np.full(3, 0.1), rtol=1e-7)
