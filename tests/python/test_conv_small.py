"""float32 convolutions with few input channels (Note [Small-channel convolutions]: per-image
im2col with AVX2 small-k kernels) against torch 1.13 computed in float64 from the same float32
values: outputs, input/weight/bias gradients, tails of every tile (output widths that are not
multiples of 8 or 24, filter counts that are not multiples of 4, batches that are not multiples
of the 8-image reduction blocks), stride, padding, dilation, 1-d/3-d, strided inputs, unbatched and
zero-size batches, bfloat16, thread-count independence of the weight gradient, and the shapes
just outside the path (8 channels, groups) that keep oneDNN."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

if not hasattr(EF, "conv2d"):
    from ember.nn import _functional_conv as EF

FN = {1: ("conv1d", TF.conv1d), 2: ("conv2d", TF.conv2d), 3: ("conv3d", TF.conv3d)}


def run(nd, x, w, b, kw, wrt=("x", "w", "b"), layout="contiguous", seed=1):
    """ember's float32 (output, grads) and torch's float64 ones for the same float32 values."""
    name, tfn = FN[nd]
    efn = getattr(EF, name)
    out = {}
    for lib in ("ember", "torch"):
        m = ember if lib == "ember" else torch
        dt = m.float32 if lib == "ember" else torch.float64
        xs = m.from_numpy(x.astype(np.float32).copy()).to(dt)
        if layout == "strided":  # the kernel sees a copy of a strided view
            xs = m.from_numpy(np.repeat(x.astype(np.float32), 2, axis=-1).copy()).to(dt)
        leaves = {"x": xs, "w": m.from_numpy(w.astype(np.float32).copy()).to(dt),
                  "b": None if b is None else m.from_numpy(b.astype(np.float32).copy()).to(dt)}
        for k in wrt:
            if leaves[k] is not None:
                leaves[k].requires_grad_(True)
        xin = leaves["x"][..., ::2] if layout == "strided" else leaves["x"]
        y = (efn if lib == "ember" else tfn)(xin, leaves["w"], leaves["b"], **kw)
        rng = np.random.default_rng(seed)
        g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
        inputs = [leaves[k] for k in wrt if leaves[k] is not None]
        grads = m.autograd.grad([y], inputs, [m.from_numpy(g).to(dt)]) if inputs else []
        out[lib] = [y.detach()] + [t.detach() for t in grads]
    return out["ember"], out["torch"]


def assert_close(e, t, what, rtol=2e-5):
    a, b = e.double().numpy(), t.numpy()
    assert tuple(a.shape) == tuple(b.shape), what
    assert str(e.dtype).split(".")[-1] == "float32", what
    scale = float(np.abs(b).max(initial=1.0))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=what)


def check(nd, xshape, wshape, bias=True, layout="contiguous", seed=0, **kw):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(xshape), rng.standard_normal(wshape)
    b = rng.standard_normal(wshape[0]) if bias else None
    e, t = run(nd, x, w, b, kw, layout=layout)
    for i, (a, c) in enumerate(zip(e, t)):
        assert_close(a, c, f"{'output' if i == 0 else 'grad %d' % i} {xshape} {wshape} {kw}")


CASES2D = [
    # (x shape, w shape, kwargs)
    ((64, 1, 28, 28), (32, 1, 3, 3), {}),  # Fashion-MNIST's first layer
    ((5, 1, 28, 28), (32, 1, 3, 3), {}),  # batch below one block
    ((9, 3, 17, 13), (7, 3, 3, 3), {}),  # 3 channels, 7 filters (4 + 3 rows), tails
    ((17, 2, 11, 30), (5, 2, 3, 5), {"padding": (1, 2)}),  # 17 images: blocks 8 + 8 + 1
    ((3, 1, 32, 32), (16, 1, 5, 5), {"stride": 2, "padding": 2}),
    ((2, 3, 20, 19), (6, 3, 3, 3), {"dilation": 2, "padding": 1}),
    ((4, 7, 9, 9), (8, 7, 3, 3), {"padding": "same"}),  # 7 channels: 63 im2col rows
    ((2, 1, 40, 40), (4, 1, 8, 8), {"stride": 3}),  # 64 im2col rows, the largest taken
    ((1, 1, 5, 12), (3, 1, 1, 1), {}),  # 1x1 with 12-wide rows
    ((3, 4, 6, 37), (9, 4, 2, 3), {"stride": (1, 2), "padding": (0, 1)}),
]


@pytest.mark.parametrize("case", CASES2D)
def test_conv2d_small_channels(case, threads):
    xs, ws, kw = case
    check(2, xs, ws, **kw)


@pytest.mark.parametrize("bias", [True, False])
def test_no_bias_and_strided_input(bias):
    check(2, (6, 2, 12, 10), (5, 2, 3, 3), bias=bias, layout="strided", padding=1)


def test_conv1d_conv3d_small_channels():
    check(1, (10, 2, 50), (6, 2, 5), padding=2, stride=1)
    check(1, (3, 1, 33), (4, 1, 3), dilation=3)
    check(3, (2, 1, 6, 7, 8), (4, 1, 2, 3, 3), padding=1)
    check(3, (9, 2, 5, 5, 5), (3, 2, 3, 3, 3))


def test_outside_the_path_still_correct():
    check(2, (3, 8, 10, 10), (6, 8, 3, 3))  # 8 channels: oneDNN
    check(2, (3, 2, 20, 20), (4, 2, 6, 6))  # 72 im2col rows: oneDNN
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 4, 9, 9)), rng.standard_normal((4, 2, 3, 3))
    e, t = run(2, x, w, None, {"groups": 2}, wrt=("x", "w"))
    for a, c in zip(e, t):
        assert_close(a, c, "groups=2")


def test_unbatched_and_zero_batch():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((8, 1, 3, 3))
    x = rng.standard_normal((1, 12, 12))
    e, t = run(2, x, w, None, {}, wrt=("x", "w"))
    for a, c in zip(e, t):
        assert_close(a, c, "unbatched")
    xe = ember.zeros(0, 1, 12, 12, requires_grad=True)
    we = ember.from_numpy(w.astype(np.float32)).requires_grad_(True)
    y = EF.conv2d(xe, we)
    assert tuple(y.shape) == (0, 8, 10, 10)
    gx, gw = ember.autograd.grad([y], [xe, we], [ember.zeros(0, 8, 10, 10)])
    assert tuple(gx.shape) == (0, 1, 12, 12)
    assert float(gw.abs().max()) == 0.0


@pytest.mark.skipif(ember.backends.cpu.get_cpu_capability() == "DEFAULT",
                    reason="the default kernel set keeps oneDNN, whose sums follow the threads")
def test_weight_grad_independent_of_thread_count():
    rng = np.random.default_rng(4)
    x = ember.from_numpy(rng.standard_normal((37, 1, 28, 28)).astype(np.float32))
    w = ember.from_numpy(rng.standard_normal((32, 1, 3, 3)).astype(np.float32))
    b = ember.from_numpy(rng.standard_normal(32).astype(np.float32))
    g = ember.from_numpy(rng.standard_normal((37, 32, 26, 26)).astype(np.float32))
    before = ember.get_num_threads()
    got = []
    try:
        for n in (1, 2, 3):
            ember.set_num_threads(n)
            wl, bl = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
            got.append([t.numpy() for t in ember.autograd.grad([EF.conv2d(x, wl, bl)], [wl, bl],
                                                               [g])])
    finally:
        ember.set_num_threads(before)
    for other in got[1:]:
        for a, c in zip(got[0], other):
            np.testing.assert_array_equal(a, c)


def test_bfloat16_small_channels():
    rng = np.random.default_rng(6)
    x, w, b = (rng.standard_normal(s) for s in ((4, 1, 14, 14), (8, 1, 3, 3), (8,)))
    xe, we, be = (ember.from_numpy(a.astype(np.float32)).to(ember.bfloat16).requires_grad_(True)
                  for a in (x, w, b))
    xt, wt, bt = (torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16).requires_grad_(True)
                  for a in (x, w, b))
    ye, yt = EF.conv2d(xe, we, be), TF.conv2d(xt, wt, bt)
    assert ye.dtype == ember.bfloat16
    np.testing.assert_allclose(ye.float().detach().numpy(), yt.float().detach().numpy(),
                               rtol=2e-2, atol=5e-2)
    g = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    de = ember.autograd.grad([ye], [xe, we, be], [ember.from_numpy(g).to(ember.bfloat16)])
    dt = torch.autograd.grad([yt], [xt, wt, bt], [torch.from_numpy(g).to(torch.bfloat16)])
    for a, c in zip(de, dt):
        assert a.dtype == ember.bfloat16
        scale = float(c.float().abs().max())
        np.testing.assert_allclose(a.float().numpy(), c.float().numpy(), rtol=3e-2,
                                   atol=3e-2 * scale)


def test_bad_input_raises_like_torch():
    x = np.zeros((2, 1, 5, 5), np.float32)
    for w in (np.zeros((4, 2, 3, 3), np.float32), np.zeros((4, 1, 7, 7), np.float32)):
        with pytest.raises(RuntimeError):
            TF.conv2d(torch.from_numpy(x), torch.from_numpy(w))
        with pytest.raises(RuntimeError):
            EF.conv2d(ember.from_numpy(x), ember.from_numpy(w))
