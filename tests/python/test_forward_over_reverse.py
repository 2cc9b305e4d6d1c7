"""Forward-over-reverse (Hessian-vector products): the gradient computed under a forward-AD
level carries the tangent H v, also through the rules that read the op's own saved output
(tanh, exp, sigmoid, softmax, ...). Checked against torch 1.13 (its forward-over-reverse where it
has one, its reverse-over-reverse H v everywhere) and central finite differences."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwAD

import ember
import ember.autograd.forward_ad as efwAD

FW = {ember: efwAD, torch: tfwAD}
RNG = np.random.default_rng(3)
X = RNG.uniform(0.3, 1.7, size=(3, 4))  # positive: sqrt, rsqrt, log are defined
V = RNG.standard_normal((3, 4))
G = RNG.standard_normal((3, 4))  # a non-uniform weighting so the Hessians have structure

FUNCS = {
    "tanh": lambda lib, x: x.tanh(),
    "exp": lambda lib, x: x.exp(),
    "sigmoid": lambda lib, x: x.sigmoid(),
    "softmax": lambda lib, x: x.softmax(1),
    "log_softmax": lambda lib, x: x.log_softmax(1),
    "softmax_dim0": lambda lib, x: lib.nn.functional.softmax(x, dim=0),
    "relu": lambda lib, x: (x - 1).relu() * x,
    "relu_plain": lambda lib, x: (x - 1).relu(),  # H v is zero, but defined as torch's
    "sqrt": lambda lib, x: x.sqrt(),
    "reciprocal": lambda lib, x: x.reciprocal(),
    "rsqrt": lambda lib, x: x.rsqrt(),
    "exp2": lambda lib, x: x.exp2(),
    "expm1": lambda lib, x: x.expm1(),
    "tan": lambda lib, x: (x * 0.5).tan(),
    "logsumexp": lambda lib, x: x.logsumexp(1, keepdim=True),
    "norm": lambda lib, x: x.norm() * x,
    "prod": lambda lib, x: x.prod(1, keepdim=True),
    "std": lambda lib, x: x.std(1, keepdim=True),
    "div": lambda lib, x: x / (x + 1),
    "pow": lambda lib, x: x ** x,
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, (4,)),
    "chain": lambda lib, x: (x.exp().tanh() * x.sigmoid()).softmax(0),
}


def hvp(lib, f, x, v, create_graph=True):
    """The tangent of grad(sum(f(x) * G)) along v, by forward-over-reverse."""
    fw = FW[lib]
    g_w = lib.tensor(G, dtype=lib.float64)
    with fw.dual_level():
        x0 = lib.tensor(x, dtype=lib.float64).requires_grad_()
        xd = fw.make_dual(x0, lib.tensor(v, dtype=lib.float64))
        out = f(lib, xd)
        if out.dim() != g_w.dim() or out.shape != g_w.shape:
            out = out * lib.ones_like(xd)  # broadcast reductions back to X's shape
        (gx,) = lib.autograd.grad((out * g_w).sum(), xd, create_graph=create_graph)
        tangent = fw.unpack_dual(gx).tangent
        return None if tangent is None else np.array(tangent.detach().numpy())


def hvp_double_backward(f, x, v):
    """torch's H v by reverse-over-reverse (torch 1.13 lacks forward-over-reverse for the
    softmax and layer_norm backward ops)."""
    x0 = torch.tensor(x, dtype=torch.float64).requires_grad_()
    out = f(torch, x0)
    if out.shape != x0.shape:
        out = out * torch.ones_like(x0)
    (gx,) = torch.autograd.grad((out * torch.tensor(G, dtype=torch.float64)).sum(), x0,
                                create_graph=True)
    (h,) = torch.autograd.grad((gx * torch.tensor(v, dtype=torch.float64)).sum(), x0)
    return h.numpy()


# torch 1.13 raises NotImplementedError for forward AD through these backward ops.
NO_TORCH_FWD_OVER_REV = {"softmax", "log_softmax", "softmax_dim0", "layer_norm", "chain"}


def grad_np(f, x):
    x0 = ember.tensor(x, dtype=ember.float64).requires_grad_()
    out = f(ember, x0)
    if out.shape != x0.shape:
        out = out * ember.ones_like(x0)
    (gx,) = ember.autograd.grad((out * ember.tensor(G, dtype=ember.float64)).sum(), x0)
    return np.array(gx.numpy())


@pytest.mark.parametrize("name", list(FUNCS))
def test_hvp_matches_torch_and_finite_differences(name):
    f = FUNCS[name]
    ours = hvp(ember, f, X, V)
    assert ours is not None, "the gradient lost its tangent"
    np.testing.assert_allclose(ours, hvp_double_backward(f, X, V), rtol=1e-8, atol=1e-10)
    if name not in NO_TORCH_FWD_OVER_REV:
        np.testing.assert_allclose(ours, hvp(torch, f, X, V), rtol=1e-8, atol=1e-10)
    eps = 1e-6
    fd = (grad_np(f, X + eps * V) - grad_np(f, X - eps * V)) / (2 * eps)
    np.testing.assert_allclose(ours, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["tanh", "exp", "sigmoid", "softmax", "sqrt", "reciprocal"])
def test_hvp_without_create_graph(name):
    # torch propagates the tangent through the backward even without create_graph.
    f = FUNCS[name]
    ours = hvp(ember, f, X, V, create_graph=False)
    assert ours is not None
    np.testing.assert_allclose(ours, hvp_double_backward(f, X, V), rtol=1e-8, atol=1e-10)
    if name not in NO_TORCH_FWD_OVER_REV:
        np.testing.assert_allclose(ours, hvp(torch, f, X, V, create_graph=False), rtol=1e-8,
                                   atol=1e-10)


def test_issue_reproducer_tanh():
    with efwAD.dual_level():
        x0 = ember.tensor(X, dtype=ember.float64).requires_grad_()
        x = efwAD.make_dual(x0, ember.tensor(V, dtype=ember.float64))
        (g,) = ember.autograd.grad(x.tanh().sum(), x, create_graph=True)
        tangent = efwAD.unpack_dual(g).tangent
        assert tangent is not None
        t = np.tanh(X)
        np.testing.assert_allclose(tangent.detach().numpy(), -2 * t * (1 - t * t) * V, rtol=1e-10)


def test_tangent_dropped_after_level_exit():
    # A saved output's tangent belongs to its level: a backward after the level exited sees none.
    with efwAD.dual_level():
        x0 = ember.tensor(X, dtype=ember.float64).requires_grad_()
        x = efwAD.make_dual(x0, ember.tensor(V, dtype=ember.float64))
        y = x.tanh().sum()
    (g,) = ember.autograd.grad(y, x0, create_graph=True)
    t = np.tanh(X)
    np.testing.assert_allclose(g.detach().numpy(), 1 - t * t, rtol=1e-12)
    with efwAD.dual_level():
        assert efwAD.unpack_dual(g).tangent is None


def test_double_backward_of_saved_output_unchanged():
    # Reverse-over-reverse still reconnects the saved output to its node.
    x = ember.tensor(X, dtype=ember.float64).requires_grad_()
    (g,) = ember.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (h,) = ember.autograd.grad((g * ember.tensor(V, dtype=ember.float64)).sum(), x)
    t = np.tanh(X)
    np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t * t) * V, rtol=1e-10)
