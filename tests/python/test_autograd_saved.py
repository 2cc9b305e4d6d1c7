"""Saved tensors against torch 1.13: a tensor that a backward rule reads and that is modified in
place between forward and backward (an optimizer step, `w.mul_(2)` under no_grad) makes
backward raise RuntimeError ("... modified by an inplace operation"), exactly when torch raises;
a tensor that torch does not save may change freely and the gradients then match torch's."""

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(7)


def arr(*shape, lo=0.5, hi=1.5):
    return RNG.uniform(lo, hi, size=shape)


def leaf(lib, a, requires_grad=True):
    return lib.tensor(a, dtype=lib.float64).requires_grad_(requires_grad)


def outcome(lib, program):
    """('raise', message) or ('ok', gradients as numpy arrays)."""
    try:
        grads = program(lib)
    except RuntimeError as e:
        return "raise", str(e)
    return "ok", [None if g is None else np.array(g.detach().numpy()) for g in grads]


def check_same(program, expect):
    """Runs `program` with torch and ember: both raise the saved-tensor error or neither does
    (and then their gradients agree); `expect` is what torch does (checked as well)."""
    t_kind, t_val = outcome(torch, program)
    e_kind, e_val = outcome(ember, program)
    assert t_kind == expect, (t_kind, t_val)
    assert e_kind == t_kind, (e_kind, e_val)
    if t_kind == "raise":
        assert "modified by an inplace operation" in t_val
        assert "modified by an inplace operation" in e_val, e_val
    else:
        assert len(t_val) == len(e_val)
        for a, b in zip(t_val, e_val):
            if a is None or b is None:
                assert a is None and b is None
            else:
                np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)


def modify(lib, t):
    """An in-place update between forward and backward, as an optimizer step does."""
    with lib.no_grad():
        t.mul_(2)


X46 = arr(4, 6)
X436 = arr(4, 3, 6)
W6 = arr(6)
B6 = arr(6)
W3 = arr(3)
B3 = arr(3)
RM3 = arr(3)
RV3 = arr(3)
X5 = arr(5)
V2 = arr(2)
P5 = arr(5, lo=0.1, hi=0.9)
T5 = arr(5, lo=0.1, hi=0.9)
W5 = arr(5)
X1255 = arr(1, 2, 5, 5)
W2333 = arr(3, 2, 3, 3)


# ---- the norms: the reproducer of the issue ----


@pytest.mark.parametrize("which,expect", [("x", "raise"), ("w", "raise"), ("b", "raise")])
def test_layer_norm(which, expect):
    def program(lib):
        x0 = leaf(lib, X46)
        w, b = leaf(lib, W6), leaf(lib, B6)
        x = x0 * 1
        y = lib.nn.functional.layer_norm(x, (6,), w, b)
        modify(lib, dict(x=x, w=w, b=b)[which])
        y.sum().backward()
        return [x0.grad, w.grad, b.grad]

    check_same(program, expect)


@pytest.mark.parametrize("which,expect", [("x", "raise"), ("w", "raise"), ("b", "ok")])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(which, expect, training):
    def program(lib):
        x0 = leaf(lib, X436)
        w, b = leaf(lib, W3), leaf(lib, B3)
        rm = lib.tensor(RM3, dtype=lib.float64)
        rv = lib.tensor(RV3, dtype=lib.float64)
        x = x0 * 1
        y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
        modify(lib, dict(x=x, w=w, b=b)[which])
        (y * lib.tensor(X436, dtype=lib.float64)).sum().backward()
        return [x0.grad, w.grad, b.grad]

    check_same(program, expect)


@pytest.mark.parametrize("which,expect", [("x", "raise"), ("w", "raise"), ("b", "ok")])
def test_group_norm(which, expect):
    def program(lib):
        x0 = leaf(lib, X436.reshape(4, 6, 3))
        w, b = leaf(lib, W6), leaf(lib, B6)
        x = x0 * 1
        y = lib.nn.functional.group_norm(x, 3, w, b)
        modify(lib, dict(x=x, w=w, b=b)[which])
        (y * lib.tensor(X436.reshape(4, 6, 3), dtype=lib.float64)).sum().backward()
        return [x0.grad, w.grad, b.grad]

    check_same(program, expect)


def test_batch_norm_running_stats():
    # Evaluation reads the running statistics: changing them before backward raises.
    def program_eval(lib):
        x = leaf(lib, X436)
        rm = lib.tensor(RM3, dtype=lib.float64)
        rv = lib.tensor(RV3, dtype=lib.float64)
        y = lib.nn.functional.batch_norm(x, rm, rv, training=False)
        with lib.no_grad():
            rm.add_(1)
        y.sum().backward()
        return [x.grad]

    check_same(program_eval, "raise")

    # Training updates them itself: two forwards before one backward are fine.
    def program_train(lib):
        x = leaf(lib, X436)
        rm = lib.tensor(RM3, dtype=lib.float64)
        rv = lib.tensor(RV3, dtype=lib.float64)
        y1 = lib.nn.functional.batch_norm(x, rm, rv, training=True)
        y2 = lib.nn.functional.batch_norm(x * 2, rm, rv, training=True)
        (y1 * lib.tensor(X436, dtype=lib.float64) + y2).sum().backward()
        return [x.grad]

    check_same(program_train, "ok")


@pytest.mark.parametrize("module", ["LayerNorm", "BatchNorm1d", "GroupNorm"])
def test_optimizer_step_between_forward_and_backward(module):
    # The silent wrong gradient of the issue: an SGD step on the weight before backward.
    def program(lib):
        if module == "LayerNorm":
            m = lib.nn.LayerNorm(6)
        elif module == "BatchNorm1d":
            m = lib.nn.BatchNorm1d(6)
        else:
            m = lib.nn.GroupNorm(2, 6)
        m = m.double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(W6, dtype=lib.float64))
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        x = lib.tensor(X46, dtype=lib.float64)
        loss = (m(x) * lib.tensor(X46, dtype=lib.float64)).sum()
        m.weight.grad = lib.ones(6, dtype=lib.float64)
        opt.step()
        loss.backward()
        return [m.weight.grad]

    check_same(program, "raise")


def test_norms_without_modification_match_torch():
    def program(lib):
        x = leaf(lib, X436.reshape(4, 6, 3))
        w, b = leaf(lib, W6), leaf(lib, B6)
        F = lib.nn.functional
        g = lib.tensor(X436.reshape(4, 6, 3), dtype=lib.float64)
        y = (F.layer_norm(x, (3,)) + F.group_norm(x, 2, w, b) +
             F.batch_norm(x, None, None, w, b, training=True))
        (y * g).sum().backward()
        return [x.grad, w.grad, b.grad]

    check_same(program, "ok")


# ---- a representative set of other rules ----

A34 = arr(3, 4)


def binary_program(op, which, rg_a=True, rg_b=True, sa=(3, 4), sb=(3, 4)):
    def program(lib):
        a0 = leaf(lib, arr_of(sa, 1), rg_a)
        b0 = leaf(lib, arr_of(sb, 2), rg_b)
        a = a0 * 1 if rg_a else a0.clone()
        b = b0 * 1 if rg_b else b0.clone()
        y = op(lib, a, b)
        modify(lib, a if which == "a" else b)
        y.sum().backward()
        return [a0.grad, b0.grad]

    return program


def arr_of(shape, seed):
    return np.random.default_rng(seed).uniform(0.5, 1.5, size=shape)


BINARY = {
    "mul": (lambda lib, a, b: a * b, (3, 4), (3, 4)),
    "div": (lambda lib, a, b: a / b, (3, 4), (3, 4)),
    "mm": (lambda lib, a, b: a.mm(b), (3, 4), (4, 5)),
    "matmul3d": (lambda lib, a, b: a @ b, (2, 3, 4), (2, 4, 5)),
    "matmul_batch_by_matrix": (lambda lib, a, b: a @ b, (2, 3, 4), (4, 5)),
    "bmm": (lambda lib, a, b: a.bmm(b), (2, 3, 4), (2, 4, 5)),
    "mv": (lambda lib, a, b: a.mv(b), (3, 4), (4,)),
    "dot": (lambda lib, a, b: a.dot(b), (4,), (4,)),
    "linear": (lambda lib, a, b: lib.nn.functional.linear(a, b), (3, 4), (5, 4)),
    "pow": (lambda lib, a, b: a ** b, (3, 4), (3, 4)),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), (3, 4), (3, 4)),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), (3, 4), (3, 4)),
}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("which", ["a", "b"])
@pytest.mark.parametrize("rg", [(True, True), (True, False), (False, True)])
def test_binary_ops_save_what_torch_saves(name, which, rg):
    op, sa, sb = BINARY[name]
    program = binary_program(op, which, rg[0], rg[1], sa, sb)
    expect = outcome(torch, program)[0]
    check_same(program, expect)


UNARY_SAVING_OUTPUT = {
    "exp": lambda lib, x: x.exp(),
    "tanh": lambda lib, x: x.tanh(),
    "sigmoid": lambda lib, x: x.sigmoid(),
    "sqrt": lambda lib, x: x.sqrt(),
    "rsqrt": lambda lib, x: x.rsqrt(),
    "reciprocal": lambda lib, x: x.reciprocal(),
    "relu": lambda lib, x: x.relu(),
    "softmax": lambda lib, x: x.softmax(1),
    "log_softmax": lambda lib, x: x.log_softmax(1),
    "logsumexp": lambda lib, x: x.logsumexp(1),
    "norm": lambda lib, x: x.norm(),
    "prod": lambda lib, x: x.prod(),
}


@pytest.mark.parametrize("name", list(UNARY_SAVING_OUTPUT))
@pytest.mark.parametrize("which", ["input", "output"])
def test_unary_ops_input_and_output(name, which):
    f = UNARY_SAVING_OUTPUT[name]

    def program(lib):
        x0 = leaf(lib, A34)
        x = x0 * 1
        y = f(lib, x)
        modify(lib, x if which == "input" else y)
        y.sum().backward()
        return [x0.grad]

    expect = outcome(torch, program)[0]
    check_same(program, expect)


def test_sum_and_add_save_nothing():
    def program(lib):
        x0 = leaf(lib, A34)
        x = x0 * 1
        y = (x + 1).sum() + x.mean()
        modify(lib, x)
        y.backward()
        return [x0.grad]

    check_same(program, "ok")


def test_index_tensor_modified():
    def program(lib):
        x = leaf(lib, X5)
        i = lib.tensor([0, 2, 2])
        y = x[i]
        with lib.no_grad():
            i.add_(1)
        y.sum().backward()
        return [x.grad]

    check_same(program, "raise")


@pytest.mark.parametrize("value", ["tensor", "scalar"])
def test_index_put_index_modified(value):
    def program(lib):
        x = leaf(lib, X5)
        v = leaf(lib, V2)
        i = lib.tensor([0, 2])
        z = x * 1
        z[i] = v if value == "tensor" else 3.0
        with lib.no_grad():
            i.add_(1)
        (z * lib.tensor(arr_of((5,), 3), dtype=lib.float64)).sum().backward()
        return [x.grad, v.grad]

    check_same(program, "raise")


def test_index_unmodified_matches():
    def program(lib):
        x = leaf(lib, X5)
        v = leaf(lib, V2)
        i = lib.tensor([0, 2])
        z = x * 1
        z[i] = v
        y = z[lib.tensor([1, 2, 2])]
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return [x.grad, v.grad]

    check_same(program, "ok")


def test_binary_cross_entropy_weight():
    def program(lib):
        x = leaf(lib, P5)
        t = lib.tensor(T5, dtype=lib.float64)
        w = lib.tensor(W5, dtype=lib.float64)
        y = lib.nn.functional.binary_cross_entropy(x, t, w)
        modify(lib, w)
        y.backward()
        return [x.grad]

    check_same(program, "raise")


@pytest.mark.parametrize("which,expect", [("w", "raise"), ("x", "raise")])
def test_conv_weight_and_input(which, expect):
    def program(lib):
        x0 = leaf(lib, X1255)
        w = leaf(lib, W2333)
        x = x0 * 1
        y = lib.nn.functional.conv2d(x, w)
        modify(lib, x if which == "x" else w)
        y.sum().backward()
        return [x0.grad, w.grad]

    check_same(program, expect)


def test_error_type_and_message_from_ember():
    x = ember.tensor(W6, dtype=ember.float64).requires_grad_()
    w = ember.tensor(W6, dtype=ember.float64).requires_grad_()
    y = ember.nn.functional.layer_norm(x, (6,), w)
    with ember.no_grad():
        w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
