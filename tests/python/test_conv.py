"""Convolutions against torch 1.13: values, gradients (float64, and double backward), float32
with tolerance (the oneDNN path), bfloat16, strided / unbatched / zero-batch inputs, groups,
dilation, 'same' padding, transposed convolutions and argument errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

if not hasattr(EF, "conv2d"):  # functional.py star-imports it once wired
    from ember.nn import _functional_conv as EF


def _layout(lib, x, layout):
    """Applies `layout` inside the function so the views are part of what is differentiated."""
    if layout == "strided":
        return x[..., ::2]
    if layout == "transposed":
        return x.transpose(-1, -2)
    return x


def _base_shape(shape, layout):
    shape = list(shape)
    if layout == "strided":
        shape[-1] = 2 * shape[-1]
    elif layout == "transposed":
        shape[-1], shape[-2] = shape[-2], shape[-1]
    return tuple(shape)


def leaves(arrays, dtype, requires_grad):
    te = []
    tt = []
    for a in arrays:
        if a is None:
            te.append(None)
            tt.append(None)
            continue
        t = torch.from_numpy(a.copy()).to(getattr(torch, dtype))
        e = ember.from_numpy(a.astype(np.float64 if dtype == "float64" else np.float32).copy())
        if dtype != "float64" and dtype != "float32":
            e = e.to(getattr(ember, dtype))
        elif dtype == "float32":
            e = e.to(ember.float32)
        if requires_grad:
            t.requires_grad_(True)
            e.requires_grad_(True)
        tt.append(t)
        te.append(e)
    return te, tt


def np_of(x):
    if isinstance(x, torch.Tensor):
        x = x.detach()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    x = x.detach()
    return (x.float() if x.dtype == ember.bfloat16 else x).numpy()


def close(e, t, rtol, atol, what):
    if e is None:  # no gradient: torch may give explicit zeros (a linear op's 2nd derivative)
        assert float(np.abs(np_of(t)).max(initial=0)) == 0, f"{what}: ember gave None"
        return
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != {tuple(t.shape)}"
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    np.testing.assert_allclose(np_of(e), np_of(t), rtol=rtol, atol=atol, err_msg=what)


def check(fn_e, fn_t, arrays, dtype="float64", grad=True, gradgrad=False, rtol=1e-7, atol=1e-9,
          seed=0, n_out=None):
    """Runs fn on both libraries with leaves from `arrays`; compares outputs, gradients for a
    random grad_output and (gradgrad) second derivatives."""
    rng = np.random.default_rng(seed)
    le, lt = leaves(arrays, dtype, grad)
    oe, ot = fn_e(*le), fn_t(*lt)
    if not isinstance(ot, (tuple, list)):
        oe, ot = (oe,), (ot,)
    for i, (a, b) in enumerate(zip(oe, ot)):
        close(a, b, rtol, atol, f"output {i}")
    if not grad:
        return
    ge_in = [x for x in le if x is not None]
    gt_in = [x for x in lt if x is not None]
    go = rng.standard_normal(tuple(ot[0].shape))
    goe, got = leaves([go], dtype, gradgrad)
    de = ember.autograd.grad([oe[0]], ge_in, [goe[0]], create_graph=gradgrad, allow_unused=True)
    dt = torch.autograd.grad([ot[0]], gt_in, [got[0]], create_graph=gradgrad, allow_unused=True)
    for i, (a, b) in enumerate(zip(de, dt)):
        if b is None:
            assert a is None or float(np.abs(np_of(a)).max(initial=0)) == 0, f"grad {i}"
            continue
        close(a, b, rtol, atol, f"grad {i}")
    if not gradgrad:
        return
    pairs = [(a, b) for a, b in zip(de, dt) if b is not None and b.requires_grad]
    ggs = [rng.standard_normal(tuple(b.shape)) for _, b in pairs]
    gge, ggt = leaves(ggs, dtype, False)
    d2e = ember.autograd.grad([a for a, _ in pairs], ge_in + goe, gge, allow_unused=True)
    d2t = torch.autograd.grad([b for _, b in pairs], gt_in + got, ggt, allow_unused=True)
    for i, (a, b) in enumerate(zip(d2e, d2t)):
        if b is None:
            assert a is None or float(np.abs(np_of(a)).max(initial=0)) == 0, f"grad2 {i}"
            continue
        close(a, b, rtol, atol, f"second derivative {i}")


def randn(rng, *shape):
    return rng.standard_normal(shape)


# ---- conv2d ----

CONV2D = [
    # (N, C, H, W, K, kh, kw, stride, padding, dilation, groups, bias)
    (2, 3, 8, 7, 4, 3, 3, 1, 0, 1, 1, True),
    (2, 4, 9, 9, 6, 3, 2, 2, 1, 1, 2, True),
    (1, 2, 10, 8, 3, 3, 3, (2, 1), (1, 2), (2, 1), 1, False),
    (3, 6, 7, 7, 6, 3, 3, 1, 1, 2, 6, True),  # depthwise, dilated
    (2, 1, 6, 6, 5, 1, 1, 1, 0, 1, 1, True),  # 1x1
]


@pytest.mark.parametrize("case", CONV2D)
@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
def test_conv2d_float64_values_and_grads(case, layout):
    n, c, h, w, k, kh, kw, s, p, d, g, bias = case
    rng = np.random.default_rng(1)
    x = randn(rng, *_base_shape((n, c, h, w), layout))
    wt = randn(rng, k, c // g, kh, kw)
    b = randn(rng, k) if bias else None

    def f(lib, F):
        return lambda x, w, b=None: F.conv2d(_layout(lib, x, layout), w, b, s, p, d, g)

    check(f(ember, EF), f(torch, TF), [x, wt, b], gradgrad=layout == "contiguous")


def test_conv2d_unbatched_and_zero_batch():
    rng = np.random.default_rng(2)
    check(lambda x, w, b: EF.conv2d(x, w, b, padding=1),
          lambda x, w, b: TF.conv2d(x, w, b, padding=1),
          [randn(rng, 3, 6, 5), randn(rng, 4, 3, 3, 3), randn(rng, 4)])
    check(lambda x, w, b: EF.conv2d(x, w, b, padding=1),
          lambda x, w, b: TF.conv2d(x, w, b, padding=1),
          [np.zeros((0, 3, 6, 5)), randn(rng, 4, 3, 3, 3), randn(rng, 4)])


@pytest.mark.parametrize("shape", [(8, 1, 28, 28, 32, 0), (4, 32, 14, 14, 64, 0),
                                   (2, 64, 20, 20, 64, 1)])
def test_conv2d_float32_fast_path(shape):
    # the shapes of the main job's network and of the benchmark, smaller batches
    n, c, hw, k, p = shape[0], shape[1], shape[2], shape[4], shape[5]
    rng = np.random.default_rng(3)
    check(lambda x, w, b: EF.conv2d(x, w, b, padding=p),
          lambda x, w, b: TF.conv2d(x, w, b, padding=p),
          [randn(rng, n, c, hw, hw), randn(rng, k, c, 3, 3) * 0.1, randn(rng, k)],
          dtype="float32", rtol=1e-4, atol=1e-4)


def test_conv2d_bfloat16():
    rng = np.random.default_rng(4)
    # bfloat16-exact inputs: the products are exact, only the sums round
    x = np.round(randn(rng, 2, 16, 9, 9) * 8) / 8
    w = np.round(randn(rng, 8, 16, 3, 3) * 8) / 8
    b = np.round(randn(rng, 8) * 8) / 8
    # The oracle is torch in float64 rounded once to bfloat16: torch 1.13's own bfloat16 conv
    # rounds partial sums on CPUs without AVX-512 (errors near 0.9 here), so it is no oracle.
    check(lambda x, w, b: EF.conv2d(x, w, b, padding=1),
          lambda x, w, b: TF.conv2d(x.double(), w.double(), b.double(), padding=1).bfloat16(),
          [x, w, b], dtype="bfloat16", grad=True, rtol=2e-2, atol=2e-1)


@pytest.mark.parametrize("padding,kernel,dilation", [("same", (3, 3), 1), ("same", (4, 2), 1),
                                                     ("same", (3, 2), 2), ("valid", (3, 3), 1)])
def test_conv2d_padding_strings(padding, kernel, dilation):
    rng = np.random.default_rng(5)
    check(lambda x, w, b: EF.conv2d(x, w, b, padding=padding, dilation=dilation),
          lambda x, w, b: TF.conv2d(x, w, b, padding=padding, dilation=dilation),
          [randn(rng, 2, 3, 9, 8), randn(rng, 4, 3, *kernel), randn(rng, 4)])


def test_conv1d_conv3d():
    rng = np.random.default_rng(6)
    check(lambda x, w, b: EF.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
          lambda x, w, b: TF.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
          [randn(rng, 3, 4, 17), randn(rng, 6, 2, 3), randn(rng, 6)], gradgrad=True)
    check(lambda x, w, b: EF.conv1d(x, w, b, padding="same"),
          lambda x, w, b: TF.conv1d(x, w, b, padding="same"),
          [randn(rng, 4, 10), randn(rng, 5, 4, 4), randn(rng, 5)])
    check(lambda x, w, b: EF.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
          lambda x, w, b: TF.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
          [randn(rng, 2, 3, 5, 6, 4), randn(rng, 4, 3, 3, 2, 3), randn(rng, 4)], gradgrad=True)
    check(lambda x, w: EF.conv3d(x, w, groups=3), lambda x, w: TF.conv3d(x, w, groups=3),
          [randn(rng, 1, 3, 4, 4, 4), randn(rng, 6, 1, 2, 2, 2)], dtype="float32", rtol=1e-5,
          atol=1e-5)


TRANSPOSED = [
    # (nd, N, Cin, spatial, Cout, k, stride, padding, output_padding, groups, dilation)
    (2, 2, 4, (5, 6), 3, 3, 2, 1, 1, 1, 1),
    (2, 1, 4, (4, 4), 6, 2, (2, 3), 0, (1, 2), 2, 1),
    (2, 2, 3, (5, 5), 2, 3, 1, 2, 1, 1, 2),  # output_padding < dilation
    (1, 2, 4, (7,), 2, 3, 3, 1, 2, 2, 1),
    (3, 1, 2, (3, 4, 3), 3, 2, 2, 0, 1, 1, 1),
]


@pytest.mark.parametrize("case", TRANSPOSED)
def test_conv_transpose(case):
    nd, n, cin, sp, cout, k, s, p, op, g, d = case
    rng = np.random.default_rng(7)
    name = f"conv_transpose{nd}d"
    x = randn(rng, n, cin, *sp)
    w = randn(rng, cin, cout // g, *([k] * nd))
    b = randn(rng, cout)

    def f(F):
        return lambda x, w, b: getattr(F, name)(x, w, b, s, p, op, g, d)

    check(f(EF), f(TF), [x, w, b], gradgrad=nd == 2)
    check(f(EF), f(TF), [x, w, b], dtype="float32", rtol=1e-4, atol=1e-5)


def test_conv_gradcheck():
    rng = np.random.default_rng(8)
    x = ember.from_numpy(randn(rng, 1, 2, 5, 4)).requires_grad_()
    w = ember.from_numpy(randn(rng, 4, 1, 2, 3)).requires_grad_()
    b = ember.from_numpy(randn(rng, 4)).requires_grad_()
    fn = lambda x, w, b: EF.conv2d(x, w, b, stride=(2, 1), padding=1, groups=2)  # noqa: E731
    assert ember.autograd.gradcheck(fn, (x, w, b))
    assert ember.autograd.gradgradcheck(fn, (x, w, b))


def _raises_like_torch(fn_e, fn_t, args_np, exc=RuntimeError, dtype="float32"):
    le, lt = leaves(args_np, dtype, False)
    with pytest.raises(exc):
        fn_t(*lt)
    with pytest.raises(exc):
        fn_e(*le)


@pytest.mark.parametrize("xs,ws,kw", [
    ((3, 8), (4, 3, 3, 3), {}),                         # wrong rank
    ((1, 2, 8, 8), (4, 3, 3, 3), {}),                   # channel mismatch
    ((1, 3, 2, 2), (4, 3, 3, 3), {}),                   # kernel larger than input
    ((1, 4, 8, 8), (4, 3, 3, 3), {"groups": 2}),        # groups do not divide
    ((1, 3, 8, 8), (4, 3, 3, 3), {"stride": 0}),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"padding": -1}),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"dilation": 0}),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"padding": "same", "stride": 2}),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"padding": "full"}),
    ((1, 3, 8, 8), (4, 3, 3, 3), {"stride": (1, 1, 1)}),
])
def test_conv2d_errors(xs, ws, kw):
    rng = np.random.default_rng(9)
    exc = ValueError if kw.get("padding") == "full" else RuntimeError
    if kw.get("padding") == "full":
        # torch raises ValueError from the Python layer? (1.13: RuntimeError from ATen)
        exc = (RuntimeError, ValueError)
    _raises_like_torch(lambda x, w: EF.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw),
                       [randn(rng, *xs), randn(rng, *ws)], exc)


def test_conv_errors_dtype_and_bias():
    rng = np.random.default_rng(10)
    x, w = randn(rng, 1, 3, 8, 8), randn(rng, 4, 3, 3, 3)
    with pytest.raises(RuntimeError):
        EF.conv2d(ember.from_numpy(x), ember.from_numpy(w).float())
    with pytest.raises(RuntimeError):
        TF.conv2d(torch.from_numpy(x), torch.from_numpy(w).float())
    _raises_like_torch(lambda x, w, b: EF.conv2d(x, w, b), lambda x, w, b: TF.conv2d(x, w, b),
                       [x, w, randn(rng, 5)])
    _raises_like_torch(lambda x, w: EF.conv_transpose2d(x, w, output_padding=1),
                       lambda x, w: TF.conv_transpose2d(x, w, output_padding=1),
                       [randn(rng, 1, 4, 5, 5), randn(rng, 4, 2, 3, 3)])
    with pytest.raises(RuntimeError):
        EF.conv2d(ember.ones(1, 3, 8, 8, dtype=ember.int64), ember.ones(4, 3, 3, 3,
                                                                        dtype=ember.int64))


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
                                "interpolate"])
def test_forward_ad_tangents(op):
    import ember.autograd.forward_ad as efw
    import torch.autograd.forward_ad as tfw
    rng = np.random.default_rng(11)
    x, tx = randn(rng, 2, 4, 7, 6), randn(rng, 2, 4, 7, 6)
    w, tw = randn(rng, 4, 2, 3, 3), randn(rng, 4, 2, 3, 3)
    b, tb = randn(rng, 4), randn(rng, 4)
    calls = {
        "conv2d": lambda F, x, w, b: F.conv2d(x, w, b, 2, 1, 1, 2),
        "conv_transpose2d": lambda F, x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 2),
        "max_pool2d": lambda F, x, w, b: F.max_pool2d(x, 3, 2, 1),
        "avg_pool2d": lambda F, x, w, b: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
        "interpolate": lambda F, x, w, b: F.interpolate(x, (9, 4), mode="bilinear"),
    }
    out = {}
    for lib, F, fw in ((torch, TF, tfw), (ember, EF, efw)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.from_numpy(p.copy()), lib.from_numpy(t.copy()))
                     for p, t in ((x, tx), (w, tw), (b, tb))]
            y = calls[op](F, *duals)
            out[lib.__name__] = np_of(fw.unpack_dual(y).tangent)
    np.testing.assert_allclose(out["ember"], out["torch"], rtol=1e-7, atol=1e-9)


def test_conv_concurrent_python_threads():
    # the binding releases the GIL: calls on one cached oneDNN primitive run at the same time
    import threading
    rng = np.random.default_rng(12)
    x = ember.from_numpy(randn(rng, 8, 16, 20, 20).astype(np.float32))
    w = ember.from_numpy(randn(rng, 16, 16, 3, 3).astype(np.float32))
    expect = np_of(EF.conv2d(x, w, padding=1))
    errors = []

    def work():
        for _ in range(10):
            got = np_of(EF.conv2d(x, w, padding=1))
            if not np.array_equal(got, expect):
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
