"""batch_norm / layer_norm / group_norm / instance_norm / local_response_norm against torch 1.13:
values and gradients (float64 tight, float32 and bfloat16 with tolerance), running statistics
after several steps, eval mode, strided and zero-size inputs, double backward (create_graph),
gradcheck, and bad input with torch's exception types."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF


def _np(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, ember.bfloat16):
        t = t.float()
    return t.numpy().copy()


def _leaf(lib, a, grad):
    t = (torch.from_numpy if lib is torch else ember.from_numpy)(np.array(a, order="C"))
    if grad and t.is_floating_point():
        t.requires_grad_(True)
    return t


def run_both(fn, arrays, grad=True, rtol=1e-7, atol=1e-9, seed=0, nograd=()):
    """fn(lib, F, *leaves) on torch and ember; compares outputs and the gradients of the leaves
    (those not listed in `nograd`) for one random grad output."""
    outs, grads = [], []
    for lib, F in ((torch, TF), (ember, EF)):
        leaves = [_leaf(lib, a, grad and i not in nograd) for i, a in enumerate(arrays)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, F, *leaves)
        outs.append(_np(out))
        if grad:
            g = np.random.default_rng(seed).standard_normal(tuple(out.shape))
            gt = (torch.from_numpy if lib is torch else ember.from_numpy)(g.astype(outs[-1].dtype))
            diff = [x for x in leaves if x.requires_grad]
            grads.append([_np(v) for v in lib.autograd.grad([out], diff, [gt])])
    np.testing.assert_allclose(outs[1], outs[0], rtol=rtol, atol=atol)
    if grad:
        for gt_, ge in zip(*grads):
            np.testing.assert_allclose(ge, gt_, rtol=rtol, atol=atol)


def rnd(*shape, seed=0, dtype=np.float64, loc=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) + loc).astype(dtype)


# ---- batch norm ----

@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_train(shape, affine):
    C = shape[1]
    arrays = [rnd(*shape, loc=3.0), rnd(C, seed=1), rnd(C, seed=2)]

    def f(L, F, x, w, b):
        return F.batch_norm(x, None, None, w if affine else None, b if affine else None,
                            training=True)
    run_both(f, arrays, nograd=() if affine else (1, 2))


def test_batch_norm_running_stats_and_eval():
    C = 3
    rms, rvs, evals = [], [], []
    for L, F in ((torch, TF), (ember, EF)):
        rm, rv = L.zeros(C, dtype=L.float64), L.ones(C, dtype=L.float64)
        w = L.from_numpy(rnd(C, seed=1))
        b = L.from_numpy(rnd(C, seed=2))
        for step in range(4):
            x = L.from_numpy(rnd(5, C, 4, seed=10 + step, loc=step))
            F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
        rms.append(_np(rm))
        rvs.append(_np(rv))
        x = L.from_numpy(rnd(2, C, 4, seed=99)).requires_grad_(True)
        y = F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-3)
        (gx,) = L.autograd.grad([y], [x], [L.ones_like(y)])
        evals.append((_np(y), _np(gx)))
    np.testing.assert_allclose(rms[1], rms[0], rtol=1e-12)
    np.testing.assert_allclose(rvs[1], rvs[0], rtol=1e-12)
    np.testing.assert_allclose(evals[1][0], evals[0][0], rtol=1e-10)
    np.testing.assert_allclose(evals[1][1], evals[0][1], rtol=1e-10)


def test_batch_norm_eval_grads():
    arrays = [rnd(4, 3, 5), rnd(3, seed=1), rnd(3, seed=2), rnd(3, seed=3),
              np.abs(rnd(3, seed=4)) + 0.5]
    run_both(lambda L, F, x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=False),
             arrays, nograd=(3, 4))


def test_batch_norm_float32_strided_channels_last():
    x = rnd(4, 6, 5, 5, dtype=np.float32, loc=1.0)
    run_both(lambda L, F, x, w, b: F.batch_norm(x.permute(0, 2, 3, 1).permute(0, 3, 1, 2)[:, ::2],
                                                None, None, w, b, training=True),
             [x, rnd(3, seed=1, dtype=np.float32), rnd(3, seed=2, dtype=np.float32)],
             rtol=2e-4, atol=2e-5)


def test_batch_norm_bfloat16():
    x = ember.from_numpy(rnd(4, 3, 8, dtype=np.float32)).to(ember.bfloat16)
    xt = torch.from_numpy(_np(x)).to(torch.bfloat16)
    y = EF.batch_norm(x, None, None, training=True)
    yt = TF.batch_norm(xt, None, None, training=True)
    assert y.dtype == ember.bfloat16
    np.testing.assert_allclose(_np(y), _np(yt), rtol=2e-2, atol=2e-2)


def test_batch_norm_double_backward():
    arrays = [rnd(4, 3, 2), rnd(3, seed=1), rnd(3, seed=2)]
    outs = []
    for L, F in ((torch, TF), (ember, EF)):
        x, w, b = [_leaf(L, a, True) for a in arrays]
        y = F.batch_norm(x, None, None, w, b, training=True)
        (gx,) = L.autograd.grad([(y * y * y).sum()], [x], create_graph=True)
        gg = L.autograd.grad([(gx * gx).sum()], [x, w])
        outs.append([_np(v) for v in gg])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)


def test_batch_norm_gradcheck():
    x = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(2, dtype=ember.float64, requires_grad=True)
    b = ember.randn(2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True), (x, w, b))


def test_batch_norm_zero_size_and_errors():
    y = EF.batch_norm(ember.zeros(0, 3, 4), None, None, ember.ones(3), ember.zeros(3),
                      training=True)
    assert tuple(y.shape) == (0, 3, 4)
    for L, F in ((torch, TF), (ember, EF)):
        with pytest.raises(ValueError):
            F.batch_norm(L.zeros(1, 3), None, None, training=True)
        with pytest.raises(RuntimeError):
            F.batch_norm(L.zeros(2, 3), L.zeros(4), L.ones(4), training=True)
        with pytest.raises(RuntimeError):
            F.batch_norm(L.zeros(2, 3), None, None, L.ones(2), training=True)


# ---- layer norm ----

@pytest.mark.parametrize("shape,norm", [((4, 5), (5,)), ((2, 3, 4), (3, 4)), ((6,), (6,)),
                                        ((2, 3, 4), (4,))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(shape, norm, affine):
    arrays = [rnd(*shape, loc=2.0), rnd(*norm, seed=1), rnd(*norm, seed=2)]
    run_both(lambda L, F, x, w, b: F.layer_norm(x, norm, w if affine else None,
                                                b if affine else None, eps=1e-4), arrays,
             nograd=() if affine else (1, 2))


def test_layer_norm_strided_float32_and_double_backward():
    x = rnd(5, 8, dtype=np.float32)
    run_both(lambda L, F, x, w: F.layer_norm(x.t(), (5,), w), [x, rnd(5, seed=1, dtype=np.float32)],
             rtol=1e-4, atol=1e-5)
    outs = []
    for L, F in ((torch, TF), (ember, EF)):
        x, w = _leaf(L, rnd(3, 4), True), _leaf(L, rnd(4, seed=1), True)
        y = F.layer_norm(x, (4,), w)
        (gx,) = L.autograd.grad([(y ** 3).sum()], [x], create_graph=True)
        outs.append([_np(v) for v in L.autograd.grad([(gx * gx).sum()], [x, w])])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)


def test_layer_norm_gradcheck_and_errors():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, w: EF.layer_norm(x, (4,), w), (x, w))
    for L, F in ((torch, TF), (ember, EF)):
        with pytest.raises(RuntimeError):
            F.layer_norm(L.zeros(2, 3), (4,))
        with pytest.raises(RuntimeError):
            F.layer_norm(L.zeros(2, 3), (3,), L.ones(2))
    assert tuple(EF.layer_norm(ember.zeros(0, 3), (3,)).shape) == (0, 3)


# ---- group / instance / local response norm ----

@pytest.mark.parametrize("shape,G", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((2, 4), 4), ((2, 4, 3), 1)])
def test_group_norm(shape, G):
    C = shape[1]
    arrays = [rnd(*shape, loc=1.0), rnd(C, seed=1), rnd(C, seed=2)]
    run_both(lambda L, F, x, w, b: F.group_norm(x, G, w, b, eps=1e-4), arrays)
    run_both(lambda L, F, x: F.group_norm(x, G), arrays[:1])


def test_group_norm_double_backward_and_errors():
    outs = []
    for L, F in ((torch, TF), (ember, EF)):
        x, w = _leaf(L, rnd(2, 4, 3), True), _leaf(L, rnd(4, seed=1), True)
        y = F.group_norm(x, 2, w)
        (gx,) = L.autograd.grad([(y ** 3).sum()], [x], create_graph=True)
        outs.append([_np(v) for v in L.autograd.grad([(gx * gx).sum()], [x, w])])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)
    for L, F in ((torch, TF), (ember, EF)):
        with pytest.raises(RuntimeError):
            F.group_norm(L.zeros(2, 6, 3), 4)
        with pytest.raises(ValueError):
            F.group_norm(L.zeros(1, 4, 1), 4)


def test_instance_norm():
    arrays = [rnd(3, 4, 5), rnd(4, seed=1), rnd(4, seed=2)]
    run_both(lambda L, F, x, w, b: F.instance_norm(x, weight=w, bias=b), arrays)
    rms = []
    for L, F in ((torch, TF), (ember, EF)):
        rm, rv = L.zeros(4, dtype=L.float64), L.ones(4, dtype=L.float64)
        F.instance_norm(L.from_numpy(arrays[0]), rm, rv, momentum=0.2)
        y = F.instance_norm(L.from_numpy(arrays[0]), rm, rv, use_input_stats=False)
        rms.append((_np(rm), _np(rv), _np(y)))
    for a, b in zip(*rms):
        np.testing.assert_allclose(b, a, rtol=1e-10)


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 2)])
def test_local_response_norm(shape):
    run_both(lambda L, F, x: F.local_response_norm(x, 3, alpha=0.1, beta=0.7, k=2.0),
             [rnd(*shape)])
    run_both(lambda L, F, x: F.local_response_norm(x, 2), [rnd(*shape)])
    for L, F in ((torch, TF), (ember, EF)):
        with pytest.raises(ValueError):
            F.local_response_norm(L.zeros(2, 3), 2)


@pytest.mark.parametrize("name", ["batch_norm", "layer_norm", "group_norm"])
def test_norm_forward_ad(name):
    import torch.autograd.forward_ad as tfw
    import ember.autograd.forward_ad as efw
    fns = {"batch_norm": lambda F, x: F.batch_norm(x, None, None, training=True),
           "layer_norm": lambda F, x: F.layer_norm(x, (5,)),
           "group_norm": lambda F, x: F.group_norm(x, 2)}
    x, v = rnd(3, 4, 5), rnd(3, 4, 5, seed=1)
    outs = []
    for L, F, fw in ((torch, TF, tfw), (ember, EF, efw)):
        with fw.dual_level():
            d = fw.make_dual(L.from_numpy(x.copy()), L.from_numpy(v.copy()))
            outs.append(_np(fw.unpack_dual(fns[name](F, d)).tangent))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-9, atol=1e-12)
