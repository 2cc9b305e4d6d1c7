"""grid_sample, affine_grid and fractional max pooling against torch 1.13: every interpolation
and padding mode with and without align_corners, 4-D and 5-D, strided and zero-size inputs,
gradients of input and grid (vs torch and by finite differences in float64), and errors."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F
import ember.nn.modules.fractional_pool  # noqa: F401
from _oracle import assert_same, check, raises_like, tensors_from
from test_autograd_index import ad_check

MODES2 = ["bilinear", "nearest", "bicubic"]
PADS = ["zeros", "border", "reflection"]


def rnd(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def pair(arr, dtype="float64"):
    return tensors_from(np.ascontiguousarray(np.asarray(arr).astype(dtype)), dtype)


def gs(L, x, g, **kw):
    nnf = TF if L is torch else F
    return nnf.grid_sample(x, g, **kw)


def tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-10}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", MODES2)
@pytest.mark.parametrize("padding_mode", PADS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(dtype, mode, padding_mode, align_corners):
    x = pair(rnd((2, 3, 5, 6), 1), dtype)
    # Points inside and well outside [-1, 1], away from pixel boundaries where nearest ties.
    g = pair(rnd((2, 4, 7, 2), 2, -1.7, 1.7), dtype)
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check(lambda L, a, b: gs(L, a, b, **kw), x, g, **tol(dtype))
    check(lambda L, a, b: gs(L, a[:, :, ::2, 1:], b.transpose(1, 2), **kw), x, g, **tol(dtype))
    check(lambda L, a, b: gs(L, a[:, :0], b, **kw), x, g)
    check(lambda L, a, b: gs(L, a, b[:, :0], **kw), x, g)
    check(lambda L, a, b: gs(L, a[:0], b[:0], **kw), x, g)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", PADS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d(dtype, mode, padding_mode, align_corners):
    x = pair(rnd((2, 2, 3, 4, 5), 1), dtype)
    g = pair(rnd((2, 3, 2, 4, 3), 2, -1.6, 1.6), dtype)
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check(lambda L, a, b: gs(L, a, b, **kw), x, g, **tol(dtype))
    check(lambda L, a, b: gs(L, a.transpose(2, 4), b[:, ::2], **kw), x, g, **tol(dtype))


def test_grid_sample_special_values():
    x = pair(rnd((1, 1, 3, 4), 1))
    # Far outside the image (beyond int64 once unnormalized) and exactly on pixel edges; NaN and
    # inf grids give implementation-defined values in torch and are not compared.
    g = np.array([[[[0.0, 0.0], [1e20, -1e20], [-1e10, 0.5], [3.5, -7.25], [0.75, 1.0]]]])
    for pad in PADS:
        for mode in MODES2:
            check(lambda L, a, b: gs(L, a, b, mode=mode, padding_mode=pad, align_corners=False),
                  x, pair(g))


def test_grid_sample_default_align_corners_warns():
    x, g = pair(rnd((1, 1, 3, 4))), pair(rnd((1, 2, 2, 2)))
    with pytest.warns(UserWarning):
        out = F.grid_sample(x[0], g[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(out, TF.grid_sample(x[1], g[1], align_corners=False))


def test_grid_sample_errors():
    x, g = pair(rnd((2, 3, 4, 5))), pair(rnd((2, 6, 7, 2)))
    raises_like(lambda L, a, b: gs(L, a, b, mode="foo", align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a, b, padding_mode="foo", align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a, b.float(), align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a, b[:1], align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a, b[..., :1], align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a[0], b[0], align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a.unsqueeze(2), b.unsqueeze(1)[..., [0, 1, 1]],
                                   mode="bicubic", align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a.int(), b.int(), align_corners=False), x, g)
    raises_like(lambda L, a, b: gs(L, a[:, :, :0], b, align_corners=False), x, g)


@pytest.mark.parametrize("mode", MODES2)
@pytest.mark.parametrize("padding_mode", PADS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_gradients(mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    arrays = [rnd((2, 2, 4, 5), 3), rnd((2, 3, 3, 2), 4, -1.3, 1.3)]
    ad_check(lambda L, a, b: gs(L, a, b, **kw), arrays, forward=False)
    x = ember.from_numpy(arrays[0]).requires_grad_()
    g = ember.from_numpy(arrays[1]).requires_grad_()
    if mode == "nearest":
        g.requires_grad_(False)
    assert ember.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, **kw), (x, g))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", PADS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d_gradients(mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    arrays = [rnd((1, 2, 3, 3, 4), 3), rnd((1, 2, 2, 3, 3), 4, -1.3, 1.3)]
    ad_check(lambda L, a, b: gs(L, a, b, **kw), arrays, forward=False)
    x = ember.from_numpy(arrays[0]).requires_grad_()
    g = ember.from_numpy(arrays[1]).requires_grad_(mode != "nearest")
    assert ember.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, **kw), (x, g))


def test_grid_sampler_raw_op():
    x, g = pair(rnd((2, 3, 4, 5))), pair(rnd((2, 6, 7, 2)))
    for i in range(3):
        for p in range(3):
            check(lambda L, a, b: L.grid_sampler(a, b, i, p, True), x, g)


# ---- affine_grid ----

def ag(L, theta, size, **kw):
    return (TF if L is torch else F).affine_grid(theta, size, **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(dtype, align_corners):
    t2 = pair(rnd((2, 2, 3), 5), dtype)
    t3 = pair(rnd((2, 3, 4), 6), dtype)
    for size in [(2, 3, 4, 5), (2, 1, 1, 5), (2, 3, 1, 1)]:
        check(lambda L, t: ag(L, t, size, align_corners=align_corners), t2, **tol(dtype))
    check(lambda L, t: ag(L, t.transpose(1, 2).contiguous().transpose(1, 2), (2, 3, 4, 5),
                          align_corners=align_corners), t2, **tol(dtype))
    for size in [(2, 3, 4, 5, 6), (2, 1, 1, 2, 3)]:
        check(lambda L, t: ag(L, t, size, align_corners=align_corners), t3, **tol(dtype))
    # affine_grid + grid_sample round trip.
    x = pair(rnd((2, 3, 4, 5), 7), dtype)
    check(lambda L, t, a: gs(L, a, ag(L, t, (2, 3, 6, 7), align_corners=align_corners),
                             align_corners=align_corners), t2, x, **tol(dtype))


def test_affine_grid_errors_and_gradients():
    t2, t3 = pair(rnd((2, 2, 3), 5)), pair(rnd((2, 3, 4), 6))
    raises_like(lambda L, t: ag(L, t, (2, 3, 4, 5, 6), align_corners=False), t2)
    raises_like(lambda L, t: ag(L, t, (2, 3, 4, 5), align_corners=False), t3)
    raises_like(lambda L, t: ag(L, t, (2, 3, 4), align_corners=False), t2)
    raises_like(lambda L, t: ag(L, t, (2, 3, 0, 5), align_corners=False), t2)
    raises_like(lambda L, t: ag(L, t.int(), (2, 3, 4, 5), align_corners=False), t2)
    raises_like(lambda L, t: ag(L, t, (3, 3, 4, 5), align_corners=False), t2)
    for ac in (False, True):
        ad_check(lambda L, t: ag(L, t, (2, 3, 4, 5), align_corners=ac), [rnd((2, 2, 3), 5)])
        ad_check(lambda L, t: ag(L, t, (2, 1, 2, 3, 4), align_corners=ac), [rnd((2, 3, 4), 6)])
        t = ember.from_numpy(rnd((2, 2, 3), 5)).requires_grad_()
        assert ember.autograd.gradcheck(lambda a: F.affine_grid(a, (2, 1, 3, 4),
                                                                align_corners=ac), (t,))


# ---- fractional max pooling ----

def fmp(L, nd, x, *a, **kw):
    nnf = TF if L is torch else F
    return getattr(nnf, f"fractional_max_pool{nd}d")(x, *a, **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool2d(dtype):
    x = pair(rnd((2, 3, 9, 11), 1), dtype)
    s = pair(rnd((2, 3, 2), 2, 0.0, 1.0), dtype)
    for k, out in [(2, (4, 5)), ((3, 2), (5, 7)), (1, (9, 11)), (2, (1, 1)), (3, (7, 9))]:
        check(lambda L, a, u: fmp(L, 2, a, k, output_size=out, return_indices=True,
                                  _random_samples=u), x, s)
    check(lambda L, a, u: fmp(L, 2, a, 2, output_ratio=0.5, _random_samples=u), x, s)
    check(lambda L, a, u: fmp(L, 2, a, 2, output_ratio=(0.5, 0.7), _random_samples=u), x, s)
    check(lambda L, a, u: fmp(L, 2, a.transpose(2, 3), 2, output_size=4, _random_samples=u),
          x, s)
    check(lambda L, a, u: fmp(L, 2, a[0], 2, output_size=(3, 4), return_indices=True,
                              _random_samples=u[:1]), x, s)
    check(lambda L, a, u: fmp(L, 2, a[:0], 2, output_size=(3, 4), _random_samples=u[:0]), x, s)
    check(lambda L, a, u: L.nn.functional.fractional_max_pool2d_with_indices(
        a, 2, output_size=(3, 4), _random_samples=u), x, s)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool3d(dtype):
    x = pair(rnd((2, 2, 7, 8, 9), 1), dtype)
    s = pair(rnd((2, 2, 3), 2, 0.0, 1.0), dtype)
    for k, out in [(2, (3, 4, 5)), ((3, 2, 1), (4, 5, 6)), (2, (1, 1, 1))]:
        check(lambda L, a, u: fmp(L, 3, a, k, output_size=out, return_indices=True,
                                  _random_samples=u), x, s)
    check(lambda L, a, u: fmp(L, 3, a, 2, output_ratio=0.5, _random_samples=u), x, s)
    check(lambda L, a, u: fmp(L, 3, a[1], 2, output_size=(3, 3, 3), _random_samples=u[:1]), x, s)


def test_fractional_max_pool_random_and_modules():
    ember.manual_seed(0)
    x = ember.from_numpy(rnd((2, 3, 9, 11), 1))
    y, idx = F.fractional_max_pool2d(x, 2, output_size=(4, 5), return_indices=True)
    assert tuple(y.shape) == (2, 3, 4, 5) and idx.dtype == ember.int64
    # Every output is the input value its index names.
    flat = x.flatten(2)
    assert_same(flat.gather(2, idx.flatten(2)).view(2, 3, 4, 5), torch.from_numpy(y.numpy()))
    m = ember.nn.modules.fractional_pool.FractionalMaxPool2d(2, output_ratio=0.5)
    assert tuple(m(x).shape) == (2, 3, 4, 5)
    m3 = ember.nn.modules.fractional_pool.FractionalMaxPool3d(2, output_size=2)
    assert tuple(m3(ember.from_numpy(rnd((1, 2, 5, 5, 5)))).shape) == (1, 2, 2, 2, 2)
    with pytest.raises(ValueError):
        ember.nn.modules.fractional_pool.FractionalMaxPool2d(2)
    with pytest.raises(ValueError):
        ember.nn.modules.fractional_pool.FractionalMaxPool2d(2, output_ratio=1.5)


def test_fractional_max_pool_errors():
    x = pair(rnd((2, 3, 4, 5), 1))
    s = pair(rnd((2, 3, 2), 2, 0.0, 1.0))
    raises_like(lambda L, a: fmp(L, 2, a, 2), x)
    raises_like(lambda L, a, u: fmp(L, 2, a, 2, output_size=4, _random_samples=u), x, s)
    raises_like(lambda L, a, u: fmp(L, 2, a, 2, output_size=3, _random_samples=u.float()), x, s)
    raises_like(lambda L, a, u: fmp(L, 2, a[:, :, :0], 2, output_size=3, _random_samples=u), x, s)
    raises_like(lambda L, a: fmp(L, 2, a[0, 0], 2, output_size=3), x)
    raises_like(lambda L, a: fmp(L, 3, a[0], 2, output_size=3), x)


def test_fractional_max_pool_gradients():
    s2 = rnd((2, 2, 2), 2, 0.0, 1.0)
    s3 = rnd((1, 2, 3), 3, 0.0, 1.0)
    ad_check(lambda L, a, u: fmp(L, 2, a, 2, output_size=(3, 4), _random_samples=u),
             [rnd((2, 2, 6, 7), 1)], [s2])
    ad_check(lambda L, a, u: fmp(L, 3, a, 2, output_size=(2, 3, 3), _random_samples=u),
             [rnd((1, 2, 4, 5, 6), 1)], [s3])
    x = ember.from_numpy(rnd((2, 2, 6, 7), 1)).requires_grad_()
    u = ember.from_numpy(s2)
    assert ember.autograd.gradcheck(
        lambda a: F.fractional_max_pool2d(a, 2, output_size=(3, 4), _random_samples=u), (x,))
    x3 = ember.from_numpy(rnd((1, 2, 4, 5, 6), 1)).requires_grad_()
    u3 = ember.from_numpy(s3)
    assert ember.autograd.gradcheck(
        lambda a: F.fractional_max_pool3d(a, 2, output_size=(2, 3, 3), _random_samples=u3), (x3,))


# ---- native ops ----

def test_native_ops():
    x = pair(rnd((4, 3, 5), 1))
    w, b = pair(rnd((3,), 2)), pair(rnd((3,), 3))
    check(lambda L, a, ww, bb: L.native_batch_norm(a, ww, bb, None, None, True, 0.1, 1e-5),
          x, w, b)
    check(lambda L, a: L.native_batch_norm(a, None, None, None, None, True, 0.1, 1e-5), x)
    rm, rv = pair(rnd((3,), 4)), pair(rnd((3,), 5, 0.5, 1.5))
    check(lambda L, a, m, v: L.native_batch_norm(a, None, None, m.clone(), v.clone(), False, 0.1,
                                                 1e-5)[0], x, rm, rv)
    lw, lb = pair(rnd((5,), 2)), pair(rnd((5,), 3))
    check(lambda L, a, ww, bb: L.native_layer_norm(a, [5], ww, bb, 1e-5), x, lw, lb)
    check(lambda L, a: L.native_layer_norm(a, (3, 5), None, None, 1e-5), x)
    check(lambda L, a: L.constant_pad_nd(a, [1, 2], 2.5), x)
    check(lambda L, a: L.constant_pad_nd(a, [1, -1, 0, 2]), x)
    raises_like(lambda L, a: L.constant_pad_nd(a, [1, 2, 3]), x)
