"""ember.optim with parameters on cuda against torch 1.13's optimizers on the CPU (the oracle)
and against ember on the CPU: every optimizer, several option combinations, float32 and
float64, contiguous and transposed parameters (the fused CUDA kernels take contiguous Adam /
AdamW / SGD groups, the generic tensor-op step the rest), 5 steps each. The same harness runs
on the CPU here, so it is exercised without a GPU; the cuda cases skip without one."""

import numpy as np
import pytest
import torch

import ember
import ember.optim

HAS_GPU = ember.cuda.is_available()

CASES = {
    "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
            dict(lr=0.05, momentum=0.5, dampening=0.2, maximize=True)],
    "Adam": [dict(lr=0.1), dict(lr=0.1, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.95)),
             dict(lr=0.05, maximize=True, eps=1e-3)],
    "AdamW": [dict(lr=0.1), dict(lr=0.1, amsgrad=True, weight_decay=0.3, maximize=True)],
    "Adagrad": [dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3,
                     maximize=True)],
    "RMSprop": [dict(lr=0.01), dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)],
    "Adadelta": [dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)],
    "Adamax": [dict(lr=0.1, weight_decay=0.1, betas=(0.8, 0.9), maximize=True)],
    "NAdam": [dict(lr=0.1, weight_decay=0.1, momentum_decay=0.01)],
    "RAdam": [dict(lr=0.1, weight_decay=0.1, betas=(0.8, 0.9))],
}
PARAMS = [(name, i) for name, cs in CASES.items() for i in range(len(cs))]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not HAS_GPU,
                                                                  reason="no CUDA device"))]


def _np(t):
    return np.array(t.detach().cpu().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == "float32" else dict(rtol=1e-11, atol=1e-12)


def _params(dtype, device, transposed, seed=0):
    """(ember params on `device`, torch params on the CPU, numpy grads per step)."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (), (0, 2), (70001,)]
    pe, pt, grads = [], [], []
    for i, s in enumerate(shapes):
        v = rng.standard_normal(s)
        if transposed and i == 0:
            v = np.ascontiguousarray(v.T)
        e = ember.tensor(v.tolist(), dtype=getattr(ember, dtype)).reshape(v.shape).to(device)
        t = torch.tensor(v, dtype=getattr(torch, dtype))
        if transposed and i == 0:
            e, t = e.t(), t.t()
        pe.append(e.detach().requires_grad_())
        pt.append(t.detach().requires_grad_())
    for _ in range(5):
        grads.append([rng.standard_normal(tuple(p.shape)) for p in pt])
    return pe, pt, grads


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,case", PARAMS)
def test_matches_torch(name, case, dtype, transposed, device):
    kw = CASES[name][case]
    pe, pt, grads = _params(dtype, device, transposed)
    oe = getattr(ember.optim, name)(pe, **kw)
    ot = getattr(torch.optim, name)(pt, **kw)
    for step in grads:
        for e, t, g in zip(pe, pt, step):
            e.grad = ember.tensor(g.tolist(), dtype=e.dtype).reshape(g.shape).to(device)
            t.grad = torch.tensor(g, dtype=t.dtype)
        oe.step()
        ot.step()
        for e, t in zip(pe, pt):
            assert e.device.type == device
            assert tuple(e.shape) == tuple(t.shape)
            np.testing.assert_allclose(_np(e), _np(t), **_tol(dtype))
    for e, t in zip(pe, pt):
        se, st = oe.state[e], ot.state[t]
        assert sorted(se) == sorted(st)
        for k, v in st.items():
            if isinstance(v, torch.Tensor) and k not in ("step", "mu_product"):
                assert se[k].device.type == device, k
                np.testing.assert_allclose(_np(se[k]), v.detach().double().numpy(), **_tol(dtype))


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA device")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD"])
def test_fused_half_types_match_cpu(name, dtype):
    kw = dict(lr=0.01, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    pc, _, grads = _params(dtype, "cpu", False, seed=1)
    pg = [p.detach().to("cuda").requires_grad_() for p in pc]
    oc = getattr(ember.optim, name)(pc, **kw)
    og = getattr(ember.optim, name)(pg, **kw)
    for step in grads:
        for c, g, v in zip(pc, pg, step):
            c.grad = ember.tensor(v.tolist(), dtype=c.dtype).reshape(v.shape)
            g.grad = c.grad.to("cuda")
        oc.step()
        og.step()
    for c, g in zip(pc, pg):
        np.testing.assert_allclose(_np(g), _np(c), rtol=2e-2, atol=2e-2)


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA device")
def test_mixed_devices_raise():
    p = ember.zeros(3, device="cuda", requires_grad=True)
    q = ember.zeros(3, requires_grad=True)
    opt = ember.optim.SGD([p, q], lr=0.1)
    p.grad = ember.ones(3, device="cuda")
    q.grad = ember.ones(3)
    with pytest.raises(RuntimeError, match="one device"):
        opt.step()
