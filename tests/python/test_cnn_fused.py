"""The CNN's fused backward paths against oracles: relu's one-pass backward (numpy's
where(out > 0, grad, 0) and torch 1.13's threshold_backward) for every floating dtype, tails,
strided / zero-size / 0-dim inputs and special values; max pools that keep compact indices for
autograd (torch 1.13's gradients, double backward and forward AD, ceil_mode, padding, dilation,
windows of padding only, bfloat16), and their public int64 indices unchanged."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from test_conv import _base_shape, _layout, check, np_of

FLOAT_DTYPES = ["float32", "float64", "bfloat16"]  # ember has no float16 relu on the CPU


def _ember_from(a, dtype):
    return ember.from_numpy(a.astype(np.float64)).to(getattr(ember, dtype))


def _np(x):
    x = x.detach()
    if x.dtype == ember.bfloat16:
        x = x.float()
    return x.numpy()


# ---- relu backward ----

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [1, 7, 8, 33, 4099, 100003])
def test_relu_backward_values(dtype, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    x[::5] = 0.0
    if n > 3:
        x[1], x[2], x[3] = -0.0, np.inf, -np.inf
    g = rng.standard_normal(n)
    xe = _ember_from(x, dtype).requires_grad_()
    ge = _ember_from(g, dtype)
    y = ember.relu(xe)
    (gx,) = ember.autograd.grad([y], [xe], [ge])
    assert gx.dtype == xe.dtype and tuple(gx.shape) == (n,)
    # the oracle: the gradient passes exactly where the output is positive
    want = np.where(_np(y) > 0, _np(ge), 0.0)
    np.testing.assert_array_equal(_np(gx), want)
    xt = torch.from_numpy(x).to(getattr(torch, dtype)).requires_grad_()
    (gt,) = torch.autograd.grad([torch.relu(xt)], [xt], [torch.from_numpy(g).to(xt.dtype)])
    np.testing.assert_array_equal(_np(gx), np_of(gt))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_relu_backward_nan_output_gets_no_gradient(dtype):
    x = np.array([np.nan, 1.0, -1.0, np.nan, 2.0])
    xe = _ember_from(x, dtype).requires_grad_()
    (gx,) = ember.autograd.grad([ember.relu(xe)], [xe], [_ember_from(np.full(5, 3.0), dtype)])
    np.testing.assert_array_equal(_np(gx), [0.0, 3.0, 0.0, 0.0, 3.0])


@pytest.mark.parametrize("layout", ["strided", "transposed", "expanded"])
def test_relu_backward_non_contiguous(layout):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 10))
    xe = ember.from_numpy(x.copy()).requires_grad_()
    xt = torch.from_numpy(x.copy()).requires_grad_()
    out = {}
    for lib, xl in ((ember, xe), (torch, xt)):
        v = xl[:, ::2] if layout == "strided" else xl.t() if layout == "transposed" else xl
        y = lib.relu(v)
        if layout == "expanded":  # the incoming gradient is an expanded scalar
            y.sum().backward()
        else:
            (y * lib.from_numpy(np.arange(y.numel(), dtype=np.float64).reshape(
                tuple(y.shape)))).sum().backward()
        out[lib.__name__] = np_of(xl.grad)
    np.testing.assert_array_equal(out["ember"], out["torch"])


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2)])
def test_relu_backward_zero_size_and_0dim(shape):
    for v in (1.5, -1.5):
        x = np.full(shape, v)
        xe = ember.from_numpy(x.copy()).requires_grad_()
        (gx,) = ember.autograd.grad([ember.relu(xe)], [xe], [ember.ones(shape, dtype=ember.float64)])
        assert tuple(gx.shape) == shape
        np.testing.assert_array_equal(_np(gx), np.full(shape, 1.0 if v > 0 else 0.0))


def test_relu_backward_double_backward_and_forward_ad():
    """create_graph and forward AD keep the composite rule (differentiable in the output)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 5))
    check(lambda x: ember.relu(x * x - 0.5) * x, lambda x: torch.relu(x * x - 0.5) * x, [x],
          gradgrad=True)
    import ember.autograd.forward_ad as efw
    import torch.autograd.forward_ad as tfw
    t = rng.standard_normal((4, 5))
    out = {}
    for lib, fw in ((torch, tfw), (ember, efw)):
        with fw.dual_level():
            d = fw.make_dual(lib.from_numpy(x.copy()), lib.from_numpy(t.copy()))
            out[lib.__name__] = np_of(fw.unpack_dual(lib.relu(d)).tangent)
    np.testing.assert_array_equal(out["ember"], out["torch"])


def test_relu_backward_module_and_inplace():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4, 5))
    for inplace in (False, True):
        xe = ember.from_numpy(x.copy()).requires_grad_()
        xt = torch.from_numpy(x.copy()).requires_grad_()
        (ember.nn.ReLU(inplace)(xe * 2) * 3).sum().backward()
        (torch.nn.ReLU(inplace)(xt * 2) * 3).sum().backward()
        np.testing.assert_array_equal(np_of(xe.grad), np_of(xt.grad))


# ---- max pooling with compact indices ----

MAXPOOL = [
    # (nd, input shape, kernel, stride, padding, dilation, ceil_mode)
    (2, (2, 3, 8, 8), 2, None, 0, 1, False),
    (2, (2, 3, 9, 7), 3, 2, 1, 1, True),
    (2, (1, 2, 10, 9), (3, 2), (2, 1), (1, 1), (2, 1), False),
    (2, (3, 7, 6), 2, 2, 1, 1, True),  # unbatched
    (2, (2, 2, 7, 7), 3, 1, 1, 1, False),  # overlapping windows
    (2, (2, 3, 13, 11), 2, 2, 0, 1, True),  # odd sizes, ceil_mode
    (1, (2, 3, 11), 3, 2, 1, 2, True),
    (1, (2, 3, 9), 2, 1, 1, 3, False),  # dilation past the input: windows of padding only
    (3, (1, 2, 5, 6, 7), (2, 3, 2), (2, 2, 1), (1, 1, 0), 1, True),
    (2, (1, 1, 20, 20), 16, 4, 0, 1, False),  # 256 taps: the largest compact kernel
    (2, (1, 1, 20, 20), 17, 3, 0, 1, False),  # 289 taps: flat indices
]


def _distinct(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64) / 7.0


@pytest.mark.parametrize("case", MAXPOOL)
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_max_pool_compact_grads(case, layout):
    nd, shape, k, s, p, d, ceil = case
    x = _distinct(_base_shape(shape, layout))
    name = f"max_pool{nd}d"

    def f(lib, F):
        return lambda x: getattr(F, name)(_layout(lib, x, layout), k, s, p, d, ceil)

    check(f(ember, EF), f(torch, TF), [x], gradgrad=True)
    check(f(ember, EF), f(torch, TF), [x], dtype="float32")


@pytest.mark.parametrize("case", [c for c in MAXPOOL if c[0] < 3])
def test_max_pool_compact_bfloat16(case):
    """bfloat16 gradients against ember's flat-index path and torch in float32 on the same
    (distinct, exactly representable) values."""
    nd, shape, k, s, p, d, ceil = case
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 97 - 48.0
    x = np.random.default_rng(1).permutation(x.ravel()).reshape(shape)
    g_shape = tuple(getattr(TF, f"max_pool{nd}d")(torch.from_numpy(x), k, s, p, d, ceil).shape)
    g = np.random.default_rng(2).integers(-4, 5, g_shape).astype(np.float64)
    name = f"max_pool{nd}d"
    grads = []
    for indices in (False, True):
        xe = _ember_from(x, "bfloat16").requires_grad_()
        y = getattr(EF, name)(xe, k, s, p, d, ceil, return_indices=indices)
        y = y[0] if indices else y
        (gx,) = ember.autograd.grad([y], [xe], [_ember_from(g, "bfloat16")])
        grads.append(_np(gx))
    np.testing.assert_array_equal(grads[0], grads[1])
    xt = torch.from_numpy(x).float().requires_grad_()
    getattr(TF, name)(xt, k, s, p, d, ceil).backward(torch.from_numpy(g).float())
    np.testing.assert_array_equal(grads[0], xt.grad.numpy())


def test_max_pool_compact_ties_nan_and_inf():
    x = np.array([[[[1.0, np.nan, 3.0, 3.0, 0.0], [0.0, 2.0, 3.0, 3.0, 1.0],
                    [-np.inf, -np.inf, 5.0, 5.0, 2.0], [-np.inf, -np.inf, 5.0, 4.0, 7.0],
                    [1.0, 1.0, 1.0, 1.0, 1.0]]]])
    for args in ((2,), (2, 1, 1), (3, 2, 1, 1, True)):
        xe = ember.from_numpy(x.copy()).requires_grad_()
        xt = torch.from_numpy(x.copy()).requires_grad_()
        ye, yt = EF.max_pool2d(xe, *args), TF.max_pool2d(xt, *args)
        np.testing.assert_array_equal(np_of(ye), np_of(yt))
        go = np.arange(int(np.prod(yt.shape)), dtype=np.float64).reshape(tuple(yt.shape)) + 1
        ye.backward(ember.from_numpy(go.copy()))
        yt.backward(torch.from_numpy(go.copy()))
        np.testing.assert_array_equal(np_of(xe.grad), np_of(xt.grad))


def test_max_pool_public_indices_stay_int64():
    x = _distinct((2, 3, 9, 7))
    ye, ie = EF.max_pool2d(ember.from_numpy(x.copy()), 3, 2, 1, 1, True, return_indices=True)
    yt, it = TF.max_pool2d(torch.from_numpy(x.copy()), 3, 2, 1, 1, True, return_indices=True)
    assert ie.dtype == ember.int64
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    m = ember.nn.MaxPool2d(3, 2, 1, return_indices=True, ceil_mode=True)
    np.testing.assert_array_equal(m(ember.from_numpy(x.copy()))[1].numpy(), it.numpy())


def test_max_pool_compact_forward_ad_and_zero_batch():
    import ember.autograd.forward_ad as efw
    import torch.autograd.forward_ad as tfw
    rng = np.random.default_rng(4)
    x, t = _distinct((2, 3, 7, 6)), rng.standard_normal((2, 3, 7, 6))
    out = {}
    for lib, F, fw in ((torch, TF, tfw), (ember, EF, efw)):
        with fw.dual_level():
            d = fw.make_dual(lib.from_numpy(x.copy()), lib.from_numpy(t.copy()))
            out[lib.__name__] = np_of(fw.unpack_dual(F.max_pool2d(d, 3, 2, 1)).tangent)
    np.testing.assert_array_equal(out["ember"], out["torch"])
    check(lambda x: EF.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [np.zeros((0, 3, 4, 4))])


def test_cnn_block_grads_float32():
    """conv -> relu -> max_pool twice, the main job's blocks: every gradient against torch."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 1, 28, 28))
    w1, b1 = rng.standard_normal((32, 1, 3, 3)) * 0.3, rng.standard_normal(32) * 0.1
    w2, b2 = rng.standard_normal((64, 32, 3, 3)) * 0.06, rng.standard_normal(64) * 0.1

    def net(F):
        def f(x, w1, b1, w2, b2):
            h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
            return F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
        return f

    check(net(EF), net(TF), [x, w1, b1, w2, b2], dtype="float32", rtol=2e-4, atol=2e-4)
    check(net(EF), net(TF), [x, w1, b1, w2, b2], rtol=1e-9, atol=1e-10)
