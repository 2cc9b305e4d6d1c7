"""Autograd of the element-moving ops against torch 1.13: flip/roll/rot90, repeat/tile/
repeat_interleave, the diagonal and *_scatter ops, tril/triu (and in place), pad in every mode,
cat/stack and the h/v/d/column stacks, diff, block_diag, cartesian_prod, combinations and
tensor_split. vjp, second derivatives and forward-mode tangents, on strided, broadcast, zero-size
and 0-dim inputs."""

import numpy as np
import pytest
import torch

import ember
from test_autograd_reduce import LAYOUTS, E, check_grad, rnd


# ---- flip, roll, rot90 ----

@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_flip_roll_rot90(layout):
    tr, shape = LAYOUTS[layout]
    a = rnd(*shape, seed=1)
    for dims in ([0], [1], [0, 1], [-1]):
        check_grad(lambda L, x: L.flip(tr(x), dims), a)
    check_grad(lambda L, x: L.fliplr(tr(x)), a)
    check_grad(lambda L, x: L.flipud(tr(x)), a)
    check_grad(lambda L, x: L.roll(tr(x), 1, 0), a)
    check_grad(lambda L, x: L.roll(tr(x), (2, -1), (1, 0)), a)
    check_grad(lambda L, x: L.roll(tr(x), 5), a)
    for k in range(-1, 5):
        check_grad(lambda L, x: L.rot90(tr(x), k, (0, 1)), a)


def test_flip_roll_edge_cases():
    check_grad(lambda L, x: L.flip(x, [0]), np.array(1.5))
    check_grad(lambda L, x: L.flip(x, [1]), np.zeros((2, 0)))
    check_grad(lambda L, x: L.roll(x, 1, 1), np.zeros((2, 0)))
    check_grad(lambda L, x: L.flip(x, [0, 2]), rnd(2, 3, 4, dtype=np.complex128))


# ---- repeat, tile, repeat_interleave ----

@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_repeat_tile(layout):
    tr, shape = LAYOUTS[layout]
    a = rnd(*shape, seed=2)
    for reps in [(1, 1), (2, 3), (2, 1, 2), (1, 0), (3, 2, 1, 1)]:
        check_grad(lambda L, x: tr(x).repeat(*reps), a)
    for reps in [(2,), (2, 2), (2, 1, 3)]:
        check_grad(lambda L, x: L.tile(tr(x), reps), a)
    check_grad(lambda L, x: x.repeat(2, 3), np.array(1.0))
    check_grad(lambda L, x: x.repeat(2, 3), np.zeros((0, 2)))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_repeat_interleave(layout):
    tr, shape = LAYOUTS[layout]
    a = rnd(*shape, seed=3)
    check_grad(lambda L, x: L.repeat_interleave(tr(x), 2), a)
    check_grad(lambda L, x: L.repeat_interleave(tr(x), 3, dim=1), a)
    check_grad(lambda L, x: L.repeat_interleave(tr(x), 0, dim=0), a)
    n = tr(torch.zeros(shape)).shape[0]
    reps = np.arange(n) % 3

    def f(L, x):
        r = L.from_numpy(reps) if L is ember else torch.from_numpy(reps)
        return L.repeat_interleave(tr(x), r, dim=0)
    check_grad(f, a)
    check_grad(lambda L, x: L.repeat_interleave(x, 2), np.array(1.0))


# ---- diagonals and *_scatter ----

@pytest.mark.parametrize("offset", [0, 1, -2])
def test_diag_family(offset):
    check_grad(lambda L, x: L.diag(x, offset), rnd(4, seed=1))
    check_grad(lambda L, x: L.diag(x, offset), rnd(4, 5, seed=2))
    check_grad(lambda L, x: L.diag(x.t(), offset), rnd(5, 4, seed=3))
    check_grad(lambda L, x: L.diag_embed(x, offset), rnd(2, 3, seed=4))
    check_grad(lambda L, x: L.diag_embed(x, offset, 0, 2), rnd(2, 3, seed=5))
    check_grad(lambda L, x: L.diag_embed(x.t(), offset, -1, 0), rnd(3, 2, seed=6))
    check_grad(lambda L, x: L.diagflat(x, offset), rnd(2, 3, seed=7))
    check_grad(lambda L, x: L.diagflat(x[:, ::2], offset), rnd(2, 6, seed=8))
    check_grad(lambda L, x: L.diagflat(x, offset), np.array(2.0))


def test_scatter_family():
    check_grad(lambda L, x, s: L.diagonal_scatter(x, s, 1), rnd(3, 4), rnd(3, seed=1))
    check_grad(lambda L, x, s: L.diagonal_scatter(x, s, -1, 0, 2), rnd(3, 2, 4), rnd(2, 2))
    check_grad(lambda L, x, s: L.select_scatter(x, s, 0, 1), rnd(3, 4), rnd(4, seed=2))
    check_grad(lambda L, x, s: L.select_scatter(x.t(), s, 1, -1), rnd(4, 3), rnd(3, seed=3))
    # (torch 1.13 mishandles positional and default start/end: spelled out as keywords)
    def sl(start, end, step, dim=0):
        return lambda L, x, s: L.slice_scatter(x, s, dim=dim, start=start, end=end, step=step)
    check_grad(sl(1, 4, 2, dim=1), rnd(3, 5), rnd(3, 2, seed=4))
    check_grad(sl(0, 3, 1), rnd(3, 5), rnd(3, 5, seed=5))
    check_grad(sl(0, 0, 1), rnd(3, 5), np.zeros((0, 5)))
    # only one side differentiable
    ex, es = E(rnd(3, 4)).requires_grad_(), E(rnd(4))
    g = ember.autograd.grad(ember.select_scatter(ex, es, 0, 0).sum(), [ex])[0]
    expect = np.ones((3, 4))
    expect[0] = 0
    np.testing.assert_array_equal(g.numpy(), expect)


# ---- tril, triu ----

@pytest.mark.parametrize("fn", ["tril", "triu"])
@pytest.mark.parametrize("k", [0, 1, -1, 5])
def test_tril_triu(fn, k):
    check_grad(lambda L, x: getattr(L, fn)(x, k), rnd(3, 4))
    check_grad(lambda L, x: getattr(L, fn)(x.transpose(0, 2), k), rnd(4, 2, 3))
    check_grad(lambda L, x: getattr(L, fn)(x.expand(2, 3, 3), k), rnd(1, 3, 3))
    check_grad(lambda L, x: getattr(L, fn)(x, k), np.zeros((0, 3)))

    def inplace(L, x):
        y = x * 2.0
        getattr(y, fn + "_")(k)
        return y
    check_grad(inplace, rnd(3, 4, seed=9))


# ---- pad ----

@pytest.mark.parametrize("pad", [(1, 2), (0, 0), (-1, 2), (2, -1, 1, 0), (1, 1, -1, -1)])
@pytest.mark.parametrize("value", [0.0, 1.5])
def test_pad_constant(pad, value):
    F = lambda L: L.nn.functional  # noqa: E731
    check_grad(lambda L, x: F(L).pad(x, pad, value=value), rnd(3, 4))
    check_grad(lambda L, x: F(L).pad(x.t(), pad, value=value), rnd(4, 3))
    check_grad(lambda L, x: F(L).pad(x, pad, value=value), rnd(2, 3, 4, dtype=np.complex128))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("case", [((1, 3, 5), (2, 1)), ((2, 2, 4, 5), (1, 2, 2, 0)),
                                  ((1, 1, 3, 3, 4), (1, 1, 0, 2, 1, 1)),
                                  ((2, 4, 5), (2, 2))])
def test_pad_modes(mode, case):
    shape, pad = case
    F = lambda L: L.nn.functional  # noqa: E731
    check_grad(lambda L, x: F(L).pad(x, pad, mode=mode), rnd(*shape, seed=len(pad)))
    t = list(shape)
    t[-1], t[-2] = t[-2], t[-1]
    check_grad(lambda L, x: F(L).pad(x.transpose(-1, -2), pad, mode=mode), rnd(*t, seed=3))


def test_pad_circular_crop():
    F = lambda L: L.nn.functional  # noqa: E731
    check_grad(lambda L, x: F(L).pad(x, (-1, 2), mode="circular"), rnd(2, 3, 5))


# ---- joins ----

@pytest.mark.parametrize("fn", ["cat", "stack"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_stack(fn, dim):
    shapes = [(2, 3), (2, 3), (2, 3)] if fn == "stack" else \
        [(2, 3), (2, 1), (2, 4)] if dim != 0 else [(2, 3), (1, 3), (3, 3)]
    arrs = [rnd(*s, seed=i) for i, s in enumerate(shapes)]
    check_grad(lambda L, *xs: getattr(L, fn)(list(xs), dim), *arrs)
    check_grad(lambda L, a, b: getattr(L, fn)([a.t().t(), b[:, :]], dim), arrs[0], arrs[1])


def test_cat_edge_cases():
    check_grad(lambda L, a, b: L.cat([a, b], 0), rnd(2, 3), np.zeros((0, 3)))
    check_grad(lambda L, a, b: L.cat([a, b], 1), rnd(2, 3), np.zeros((0,)))  # legacy empty
    check_grad(lambda L, a, b: L.cat([a, b.expand(2, 3)]), rnd(2, 3), rnd(1, 3))
    check_grad(lambda L, a, b: L.cat([a, b]), rnd(2, 3, dtype=np.complex128),
               rnd(1, 3, dtype=np.complex128))
    check_grad(lambda L, a: L.stack([a, a * 2.0]), np.array(1.0))
    # one input without requires_grad
    ea, eb = E(rnd(2, 2)).requires_grad_(), E(rnd(1, 2))
    g = ember.autograd.grad(ember.cat([ea, eb]).sum(), [ea])[0]
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 2)))


@pytest.mark.parametrize("fn", ["hstack", "vstack", "dstack", "column_stack"])
def test_stacks(fn):
    check_grad(lambda L, a, b: getattr(L, fn)([a, b]), rnd(3), rnd(3, seed=1))
    check_grad(lambda L, a, b: getattr(L, fn)([a, b]), rnd(3, 2), rnd(3, 2, seed=1))
    check_grad(lambda L, a, b: getattr(L, fn)([a, b]), np.array(1.0), np.array(2.0))


def test_diff_block_diag_products():
    check_grad(lambda L, x: L.diff(x), rnd(5))
    check_grad(lambda L, x: L.diff(x, 2, 0), rnd(4, 3))
    check_grad(lambda L, x, p, a: L.diff(x, 1, 1, p, a), rnd(3, 4), rnd(3, 1), rnd(3, 2))
    check_grad(lambda L, a, b, c: L.block_diag(a, b, c), rnd(2, 3), rnd(2, seed=1),
               np.array(4.0))
    check_grad(lambda L, a, b: L.block_diag(a.t(), b), rnd(3, 2), np.zeros((0, 2)))
    check_grad(lambda L, a, b: L.cartesian_prod(a, b), rnd(3), rnd(2, seed=1))
    check_grad(lambda L, a: L.cartesian_prod(a), rnd(3))
    for r in (1, 2, 3):
        check_grad(lambda L, a: L.combinations(a, r), rnd(4))
        check_grad(lambda L, a: L.combinations(a, r, with_replacement=True), rnd(3))
    check_grad(lambda L, a: L.combinations(a, 4), rnd(3))


def test_tensor_split():
    def f(L, x):
        return tuple(L.tensor_split(x, 3, 1))
    check_grad(f, rnd(2, 7))
    check_grad(lambda L, x: tuple(L.tensor_split(x, [1, 4], 0)), rnd(6, 2))


GRADCHECK = {
    "flip": lambda x: ember.flip(x, [0, 1]),
    "roll": lambda x: ember.roll(x, (1, -2), (0, 1)),
    "repeat": lambda x: x.repeat(2, 1, 3),
    "repeat_interleave": lambda x: ember.repeat_interleave(x, 2, dim=1),
    "diag": lambda x: ember.diag(x, 1),
    "diag_embed": lambda x: ember.diag_embed(x),
    "tril": lambda x: ember.tril(x, -1),
    "pad_reflect": lambda x: ember.nn.functional.pad(x.unsqueeze(0), (2, 1), mode="reflect"),
    "pad_constant": lambda x: ember.nn.functional.pad(x, (1, -1, 2, 0), value=3.0),
    "cat": lambda x: ember.cat([x, x * 2.0], 1),
    "block_diag": lambda x: ember.block_diag(x, x.t()),
    "combinations": lambda x: ember.combinations(x.reshape(-1)[:4], 2),
    "select_scatter": lambda x: ember.select_scatter(x, x[0] * 3.0, 0, 2),
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_gradcheck(name):
    x = E(rnd(3, 4, seed=6)).requires_grad_()
    f = GRADCHECK[name]
    assert ember.autograd.gradcheck(f, (x,), check_forward_ad=True)
    assert ember.autograd.gradgradcheck(f, (x,))


def test_complex():
    a = rnd(3, 4, seed=13, dtype=np.complex128)
    check_grad(lambda L, x: L.roll(x, 1, 0), a)
    check_grad(lambda L, x: x.repeat(2, 1), a)
    check_grad(lambda L, x: L.repeat_interleave(x, 2, dim=0), a)
    check_grad(lambda L, x: L.diag(x, 1), a)
    check_grad(lambda L, x: L.diag_embed(x), a)
    check_grad(lambda L, x: L.tril(x), a)
    check_grad(lambda L, x: L.block_diag(x, x), a)
    check_grad(lambda L, x: L.nn.functional.pad(x.unsqueeze(0), (1, 2), mode="replicate"), a)
