"""Layout property test of the nn functional ops against torch 1.13, in float64.

Every op runs on shapes with a size-1 dim in each position (N, C and every spatial dim) and odd
sizes, each given as a contiguous tensor, a channels-last one, a transposed view and a sliced
view (steps and an offset). Outputs (and pooling indices) and the gradients of every input and
parameter must match torch's; where torch raises, ember must raise the same exception type.

Layout-ambiguous shapes are the point: a one-channel batch (N, 1, H, W) is contiguous and also
channels-last by its strides, and a size-1 dim may carry any stride, so code that picks a layout
from strides alone gets these wrong while ordinary shapes pass.
"""

import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

LAYOUTS = ["contiguous", "channels_last", "transposed", "sliced"]
SPATIAL = {1: (5,), 2: (5, 7), 3: (3, 5, 4)}


def ones_everywhere(full):
    """`full` and, for each position, `full` with a size 1 there."""
    out = [tuple(full)]
    for i in range(len(full)):
        s = list(full)
        s[i] = 1
        out.append(tuple(s))
    return out


def default_shapes(nd):
    return ones_everywhere((2, 3) + SPATIAL[nd])


def storage_of(shape, layout):
    """(storage shape, view) such that view(storage tensor) has `shape` in `layout`."""
    nd = len(shape)
    if layout == "contiguous":
        return shape, lambda x: x
    if layout == "channels_last":
        perm = (0,) + tuple(range(2, nd)) + (1,)
        inv = tuple(int(i) for i in np.argsort(perm))
        return tuple(shape[p] for p in perm), lambda x: x.permute(*inv)
    if layout == "transposed":
        a, b = (0, 1) if nd == 3 else (nd - 2, nd - 1)
        s = list(shape)
        s[a], s[b] = s[b], s[a]
        return tuple(s), lambda x: x.transpose(a, b)
    # sliced: a step on the batch dim, an offset and a step on the last dim
    s = list(shape)
    s[0] = 2 * s[0]
    s[-1] = 2 * s[-1] + 1
    return tuple(s), lambda x: x[::2, ..., 1::2]


class Op:
    """One op: fn(lib, F, x, *params) -> tensor or tuple; params(shape, rng) -> float arrays
    (differentiated like the input) and consts(shape, rng) -> arrays passed as they are."""

    def __init__(self, name, fn, nd, params=None, consts=None, shapes=None, values=None):
        self.name, self.fn, self.nd = name, fn, nd
        self.params = params or (lambda shape, rng: [])
        self.consts = consts or (lambda shape, rng: [])
        self.shapes = shapes or default_shapes(nd)
        self.values = values or (lambda rng, shape: rng.standard_normal(shape))


def k_at_most(shape, k):
    return tuple(min(k, s) for s in shape[2:])


OPS = []


def add(*args, **kw):
    OPS.append(Op(*args, **kw))


for nd in (1, 2, 3):
    conv = f"conv{nd}d"
    add(conv, lambda lib, F, x, w, b, conv=conv: getattr(F, conv)(x, w, b, 2, 1), nd,
        params=lambda shape, rng, nd=nd: [rng.standard_normal((4, shape[1]) + (3,) * nd),
                                          rng.standard_normal(4)])
    convt = f"conv_transpose{nd}d"
    add(convt, lambda lib, F, x, w, b, convt=convt: getattr(F, convt)(x, w, b, 2, 1, 1), nd,
        params=lambda shape, rng, nd=nd: [rng.standard_normal((shape[1], 2) + (3,) * nd),
                                          rng.standard_normal(2)])
    mp = f"max_pool{nd}d"
    add(mp, lambda lib, F, x, mp=mp: getattr(F, mp)(x, 3, 2, 1, return_indices=True), nd)
    add(mp + "_ceil_dilated",
        lambda lib, F, x, mp=mp: getattr(F, mp)(x, k_at_most(x.shape, 2), 2, 0, 2, True,
                                                return_indices=True), nd)
    ap = f"avg_pool{nd}d"
    add(ap, lambda lib, F, x, ap=ap: getattr(F, ap)(x, 3, 2, 1, True, True), nd)
    add(ap + "_exclude_pad", lambda lib, F, x, ap=ap: getattr(F, ap)(x, 3, 2, 1, False, False),
        nd)
    add(ap + "_plain", lambda lib, F, x, ap=ap: getattr(F, ap)(x, k_at_most(x.shape, 2)), nd)
    aap = f"adaptive_avg_pool{nd}d"
    add(aap, lambda lib, F, x, aap=aap: getattr(F, aap)(x, 3), nd)
    add(aap + "_global", lambda lib, F, x, aap=aap: getattr(F, aap)(x, 1), nd)
    amp = f"adaptive_max_pool{nd}d"
    add(amp, lambda lib, F, x, amp=amp: getattr(F, amp)(x, 2, return_indices=True), nd)
    up = f"max_unpool{nd}d"

    def unpool(lib, F, x, nd=nd, mp=mp, up=up):
        k = k_at_most(x.shape, 2)
        y, i = getattr(F, mp)(x, k, return_indices=True)
        return getattr(F, up)(y, i, k, output_size=x.shape[2:])

    add(up, unpool, nd)
    for mode in ["constant", "reflect", "replicate", "circular"]:
        add(f"pad_{mode}_{nd}d",
            lambda lib, F, x, mode=mode, nd=nd: F.pad(x, (1, 0, 0, 1, 1, 1)[:2 * nd], mode=mode,
                                                      **({"value": 0.5} if mode == "constant"
                                                         else {})), nd)
    add(f"interpolate_nearest_{nd}d",
        lambda lib, F, x: F.interpolate(x, size=tuple(s + 2 for s in x.shape[2:])), nd)
    add(f"interpolate_nearest_down_{nd}d",
        lambda lib, F, x: F.interpolate(x, size=tuple(s // 2 + 1 for s in x.shape[2:])), nd)
    add(f"interpolate_area_{nd}d",
        lambda lib, F, x: F.interpolate(x, size=tuple(s // 2 + 1 for s in x.shape[2:]),
                                        mode="area"), nd)
    lin = {1: "linear", 2: "bilinear", 3: "trilinear"}[nd]
    for ac in (False, True):
        add(f"interpolate_{lin}_ac{int(ac)}",
            lambda lib, F, x, lin=lin, ac=ac: F.interpolate(
                x, size=tuple(2 * s + 1 for s in x.shape[2:]), mode=lin, align_corners=ac), nd)
    add(f"batch_norm_train_{nd}d",
        lambda lib, F, x, w, b: F.batch_norm(x, None, None, w, b, True), nd,
        params=lambda shape, rng: [rng.standard_normal(shape[1]), rng.standard_normal(shape[1])])

    def bn_eval(lib, F, x, w, b, rm, rv):
        return F.batch_norm(x, rm, rv, w, b, False)

    add(f"batch_norm_eval_{nd}d", bn_eval, nd,
        params=lambda shape, rng: [rng.standard_normal(shape[1]), rng.standard_normal(shape[1])],
        consts=lambda shape, rng: [rng.standard_normal(shape[1]),
                                   rng.uniform(0.5, 2.0, shape[1])])
    add(f"instance_norm_{nd}d",
        lambda lib, F, x, w, b: F.instance_norm(x, weight=w, bias=b), nd,
        params=lambda shape, rng: [rng.standard_normal(shape[1]), rng.standard_normal(shape[1])])
    add(f"group_norm_{nd}d",
        lambda lib, F, x, w, b: F.group_norm(x, 1, w, b), nd,
        params=lambda shape, rng: [rng.standard_normal(shape[1]), rng.standard_normal(shape[1])])
    add(f"group_norm_per_channel_{nd}d",
        lambda lib, F, x, w, b: F.group_norm(x, x.shape[1], w, b), nd,
        params=lambda shape, rng: [rng.standard_normal(shape[1]), rng.standard_normal(shape[1])])
    add(f"layer_norm_{nd}d",
        lambda lib, F, x, w, b: F.layer_norm(x, x.shape[2:], w, b), nd,
        params=lambda shape, rng: [rng.standard_normal(shape[2:]), rng.standard_normal(shape[2:])])
    # torch 1.13's 5-D local_response_norm calls .view, which fails on a transposed input.
    add(f"local_response_norm_{nd}d",
        lambda lib, F, x: F.local_response_norm(x.contiguous() if lib is torch else x, 2), nd)
    add(f"softmax_channels_{nd}d", lambda lib, F, x: F.softmax(x, 1), nd)
    add(f"log_softmax_channels_{nd}d", lambda lib, F, x: F.log_softmax(x, 1), nd)
    add(f"normalize_channels_{nd}d", lambda lib, F, x: F.normalize(x, dim=1), nd)
    add(f"prelu_{nd}d", lambda lib, F, x, w: F.prelu(x, w), nd,
        params=lambda shape, rng: [rng.uniform(0.1, 0.5, shape[1])])
    add(f"linear_last_dim_{nd}d", lambda lib, F, x, w, b: F.linear(x, w, b), nd,
        params=lambda shape, rng: [rng.standard_normal((4, shape[-1])), rng.standard_normal(4)])
    for red in ("mean", "none"):
        add(f"cross_entropy_{red}_{nd}d",
            lambda lib, F, x, w, t, red=red: F.cross_entropy(x, t, w, reduction=red), nd,
            consts=lambda shape, rng: [rng.uniform(0.5, 2.0, shape[1]),  # class weights
                                       rng.integers(0, shape[1], (shape[0],) + shape[2:])])
    add(f"nll_loss_{nd}d",
        lambda lib, F, x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction="sum"), nd,
        consts=lambda shape, rng: [rng.integers(0, shape[1], (shape[0],) + shape[2:])])
    add(f"cross_entropy_smoothing_{nd}d",
        lambda lib, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1), nd,
        consts=lambda shape, rng: [rng.integers(0, shape[1], (shape[0],) + shape[2:])])
    add(f"dropout_eval_{nd}d",
        lambda lib, F, x: F.dropout(x, 0.5, training=False) * 1.0, nd)
    add(f"mse_loss_{nd}d", lambda lib, F, x, t: F.mse_loss(x, t), nd,
        consts=lambda shape, rng: [rng.standard_normal(shape)])

add("lp_pool1d", lambda lib, F, x: F.lp_pool1d(x, 2, min(2, x.shape[-1])), 1)
add("lp_pool2d", lambda lib, F, x: F.lp_pool2d(x, 2, k_at_most(x.shape, 2)), 2)
add("lp_pool2d_p3", lambda lib, F, x: F.lp_pool2d(x, 3, k_at_most(x.shape, 2), 1), 2,
    values=lambda rng, shape: rng.uniform(0.5, 2.0, shape))
add("conv2d_depthwise",
    lambda lib, F, x, w: F.conv2d(x, w, None, 1, 1, 1, x.shape[1]), 2,
    params=lambda shape, rng: [rng.standard_normal((shape[1], 1, 3, 3))])
add("conv2d_grouped_transpose",
    lambda lib, F, x, w: F.conv_transpose2d(x, w, None, 2, 1, 0, 3), 2,
    params=lambda shape, rng: [rng.standard_normal((shape[1], 1, 3, 2))],
    shapes=ones_everywhere((2, 3, 5, 7))[:2] + ones_everywhere((2, 3, 5, 7))[3:])
add("interpolate_bicubic_ac0",
    lambda lib, F, x: F.interpolate(x, size=(7, 3), mode="bicubic", align_corners=False), 2)
add("interpolate_bicubic_ac1",
    lambda lib, F, x: F.interpolate(x, size=(7, 3), mode="bicubic", align_corners=True), 2)
add("interpolate_bilinear_scale",
    lambda lib, F, x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), 2)
add("pixel_shuffle", lambda lib, F, x: F.pixel_shuffle(x, 2), 2,
    shapes=ones_everywhere((2, 4, 3, 5))[:2] + ones_everywhere((2, 4, 3, 5))[3:])
add("pixel_unshuffle", lambda lib, F, x: F.pixel_unshuffle(x, 2), 2,
    shapes=[(2, 3, 4, 6), (1, 3, 4, 6), (2, 1, 4, 6), (1, 1, 2, 2)])
add("unfold", lambda lib, F, x: F.unfold(x, k_at_most(x.shape, 2), padding=1), 2)
add("dropout2d_eval", lambda lib, F, x: F.dropout2d(x, 0.5, training=False) * 1.0, 2)
add("alpha_dropout_eval", lambda lib, F, x: F.alpha_dropout(x, 0.5, training=False) * 1.0, 2)
add("bce_with_logits", lambda lib, F, x, t: F.binary_cross_entropy_with_logits(x, t), 2,
    consts=lambda shape, rng: [rng.uniform(0, 1, shape)])
add("glu_channels", lambda lib, F, x: F.glu(x, 1), 2,
    shapes=ones_everywhere((2, 4, 5, 7))[:2] + ones_everywhere((2, 4, 5, 7))[3:])
add("channel_matmul", lambda lib, F, x, w: x.transpose(1, -1) @ w, 2,
    params=lambda shape, rng: [rng.standard_normal((shape[1], 3))])
add("spatial_matmul", lambda lib, F, x, w: x @ w, 2,
    params=lambda shape, rng: [rng.standard_normal((shape[-1], 3))])

OP_BY_NAME = {op.name: op for op in OPS}
assert len(OP_BY_NAME) == len(OPS)


def _np(t):
    return t.detach().numpy()


def _as_tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def _run(op, lib, F, arrays, consts, layout, shape):
    """Leaves from `arrays` (the first one laid out as `layout`), the op's outputs and the input
    and parameter gradients for fixed output weights; or the exception raised."""
    mk = (lambda a: ember.from_numpy(a.copy())) if lib is ember else \
        (lambda a: torch.from_numpy(a.copy()))
    leaves = [mk(a).requires_grad_(True) for a in arrays]
    cs = [mk(c) for c in consts]
    _, view = storage_of(shape, layout)
    try:
        outs = _as_tuple(op.fn(lib, F, view(leaves[0]), *leaves[1:], *cs))
        floats = [o for o in outs if o.dtype == lib.float64]
        rng = np.random.default_rng(7)
        total = sum((o * mk(rng.standard_normal(tuple(o.shape)))).sum() for o in floats)
        grads = lib.autograd.grad([total], leaves, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - the type is compared with torch's
        return e
    return [_np(o) for o in outs], [None if g is None else _np(g) for g in grads]


def _check(op, shape, layout):
    rng = np.random.default_rng(zlib.crc32(repr((op.name, shape, layout)).encode()))
    storage, _ = storage_of(shape, layout)
    arrays = [op.values(rng, storage)] + op.params(shape, rng)
    consts = op.consts(shape, rng)
    rt = _run(op, torch, TF, arrays, consts, layout, shape)
    re = _run(op, ember, EF, arrays, consts, layout, shape)
    where = f"{op.name} shape={shape} layout={layout}"
    if isinstance(rt, Exception):
        if type(re).__name__ != type(rt).__name__:
            return f"{where}: torch raised {type(rt).__name__}({rt}), ember gave " + (
                f"{type(re).__name__}({re})" if isinstance(re, Exception) else "a result")
        return None
    if isinstance(re, Exception):
        return f"{where}: ember raised {type(re).__name__}: {re}"
    (ot, gt), (oe, ge) = rt, re
    for i, (a, b) in enumerate(zip(oe, ot)):
        if a.shape != b.shape:
            return f"{where}: output {i} shape {a.shape} != torch {b.shape}"
        if b.dtype.kind in "iub":
            if not np.array_equal(a, b):
                return f"{where}: output {i} (indices) differ"
        elif not np.allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True):
            return f"{where}: output {i} max error {np.nanmax(np.abs(a - b)):.3g}"
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            if a is not None and np.abs(a).max(initial=0) != 0:
                return f"{where}: grad {i} nonzero where torch has none"
            continue
        if a is None:
            a = np.zeros_like(b)
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-7, atol=1e-9):
            return f"{where}: grad {i} max error {np.abs(a - b).max(initial=0):.3g}"
    return None


@pytest.mark.parametrize("name", sorted(OP_BY_NAME))
def test_layout_property(name):
    op = OP_BY_NAME[name]
    failures = [f for shape in op.shapes for layout in LAYOUTS
                if (f := _check(op, shape, layout)) is not None]
    assert not failures, "\n".join(failures)


def test_one_channel_batch_pools_regression():
    # The reported case: the second image of a one-channel batch was pooled wrongly.
    x = np.random.default_rng(0).standard_normal((2, 1, 8, 8))
    e, t = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
    np.testing.assert_allclose(_np(EF.avg_pool2d(e, 2)), _np(TF.avg_pool2d(t, 2)), rtol=1e-12)
    np.testing.assert_allclose(_np(EF.adaptive_avg_pool2d(e, 3)),
                               _np(TF.adaptive_avg_pool2d(t, 3)), rtol=1e-12)
    np.testing.assert_allclose(_np(EF.lp_pool2d(e, 2, 2)), _np(TF.lp_pool2d(t, 2, 2)),
                               rtol=1e-12)
    x3 = np.random.default_rng(1).standard_normal((2, 1, 4, 6, 6))
    e3, t3 = ember.from_numpy(x3.copy()), torch.from_numpy(x3.copy())
    np.testing.assert_allclose(_np(EF.adaptive_avg_pool3d(e3, (2, 3, 3))),
                               _np(TF.adaptive_avg_pool3d(t3, (2, 3, 3))), rtol=1e-12)


def test_max_pool_window_of_padding_only():
    # Dilation can leave a window with no tap inside the input. torch 1.13 gives -inf and an
    # index past the plane, and its backward then writes out of bounds (heap corruption); ember
    # gives the same forward and adds nothing to the input gradient for such windows.
    x = np.random.default_rng(2).standard_normal((2, 3, 1, 7))
    yt, it = TF.max_pool2d(torch.from_numpy(x), 2, 1, 1, 2, True, return_indices=True)
    e = ember.from_numpy(x.copy()).requires_grad_(True)
    ye, ie = EF.max_pool2d(e, 2, 1, 1, 2, True, return_indices=True)
    np.testing.assert_array_equal(_np(ye), _np(yt))
    np.testing.assert_array_equal(_np(ie), _np(it))
    (g,) = ember.autograd.grad([ye.sum()], [e])
    assert np.all(_np(g) == 0)


@pytest.mark.parametrize("case", [
    ("avg_pool1d", (2, 2, 3001), lambda F, x: F.avg_pool1d(x, 3, 1, 1, False, False)),
    ("avg_pool1d_ceil", (1, 1, 4099), lambda F, x: F.avg_pool1d(x, 4, 2, 2, True, True)),
    ("adaptive_avg_pool1d", (1, 2, 3001), lambda F, x: F.adaptive_avg_pool1d(x, 1499)),
    ("avg_pool2d_tall", (1, 1, 2049, 3), lambda F, x: F.avg_pool2d(x, 2)),
    ("adaptive_avg_pool2d_tall", (1, 1, 2049, 3),
     lambda F, x: F.adaptive_avg_pool2d(x, (1000, 2))),
], ids=lambda c: c[0])
def test_avg_pool_of_long_dims(case):
    # Long dims: a dense (out x in) pooling map would need gigabytes here.
    _, shape, f = case
    x = np.random.default_rng(3).standard_normal(shape)
    x.flat[5] = np.inf  # a non-finite input stays local to its windows
    e = ember.from_numpy(x.copy()).requires_grad_(True)
    t = torch.from_numpy(x.copy()).requires_grad_(True)
    ye, yt = f(EF, e), f(TF, t)
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-10, atol=1e-12)
    g = np.random.default_rng(4).standard_normal(tuple(yt.shape))
    (ge,) = ember.autograd.grad([ye], [e], [ember.from_numpy(g.copy())])
    (gt,) = torch.autograd.grad([yt], [t], [torch.from_numpy(g.copy())])
    np.testing.assert_allclose(_np(ge), _np(gt), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["avg_pool1d", "adaptive_avg_pool1d", "lp_pool1d"])
def test_avg_pools_keep_inf_and_nan_in_their_windows(name):
    # A dense pooling matrix multiplied inf by the zero weights of the other windows (NaN there).
    x = np.array([[[1.0, np.inf, 2.0, 3.0, np.nan, 4.0, 5.0, 6.0]]])
    args = {"avg_pool1d": (2,), "adaptive_avg_pool1d": (4,), "lp_pool1d": (1, 2)}[name]
    ye = getattr(EF, name)(ember.from_numpy(x.copy()), *args)
    yt = getattr(TF, name)(torch.from_numpy(x.copy()), *args)
    np.testing.assert_array_equal(_np(ye), _np(yt))
