"""Forward-mode AD from Python (ember.autograd.forward_ad) against torch 1.13's forward_ad, and
its compositions with reverse mode."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwAD

import ember
import ember.autograd.forward_ad as efwAD

FW = {ember: efwAD, torch: tfwAD}
RNG = np.random.default_rng(1)
A34 = RNG.standard_normal((3, 4))
T34 = RNG.standard_normal((3, 4))
B45 = RNG.standard_normal((4, 5))
U45 = RNG.standard_normal((4, 5))


def np_of(t):
    return None if t is None else np.array(t.detach().numpy())


def check_close(a, b, rtol=1e-6, atol=1e-6):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            check_close(x, y, rtol, atol)
        return
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    if isinstance(a, (bool, int, float)):
        assert a == b
        return
    na, nb = np_of(a), np_of(b)
    assert na.shape == nb.shape
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(na, nb, rtol=rtol, atol=atol)


def same(f, **kw):
    check_close(f(ember), f(torch), **kw)


def t(lib, arr, dtype="float64", layout="contiguous"):
    dt = getattr(lib, dtype)
    if layout == "transposed":
        return lib.tensor(np.ascontiguousarray(arr.T), dtype=dt).t()
    if layout == "strided":
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), dtype=arr.dtype)
        big[..., ::2] = arr
        return lib.tensor(big, dtype=dt)[..., ::2]
    return lib.tensor(arr, dtype=dt)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_elementwise_tangents(dtype, layout):
    a = A34.T.copy() if layout == "transposed" else A34
    ta = T34.T.copy() if layout == "transposed" else T34

    def f(lib):
        fw = FW[lib]
        with fw.dual_level():
            x = fw.make_dual(t(lib, a, dtype, layout), t(lib, ta, dtype, layout))
            outs = [x.sin(), x.exp() * x, x * 2 + 1, (x * x).sum(), x / (x * x + 1)]
            return [fw.unpack_dual(o).tangent for o in outs]

    same(f, rtol=1e-4, atol=1e-5)


def test_broadcast_and_0dim():
    def f(lib):
        fw = FW[lib]
        with fw.dual_level():
            x = fw.make_dual(t(lib, A34[:, :1].copy()), t(lib, T34[:, :1].copy()))
            s = fw.make_dual(lib.tensor(2.0, dtype=lib.float64),
                             lib.tensor(0.5, dtype=lib.float64))
            y = x * t(lib, A34) + s
            return fw.unpack_dual(y).tangent, fw.unpack_dual(s * s).tangent

    same(f)


def test_matmul_tangent():
    def f(lib):
        fw = FW[lib]
        with fw.dual_level():
            a = fw.make_dual(t(lib, A34), t(lib, T34))
            b = fw.make_dual(t(lib, B45), t(lib, U45))
            y = a @ b
            p, tg = fw.unpack_dual(y)
            return p, tg, fw.unpack_dual(a @ t(lib, B45)).tangent

    same(f)


def test_unpack_dual_namedtuple_and_plain():
    with efwAD.dual_level():
        x = efwAD.make_dual(t(ember, A34), t(ember, T34))
        u = efwAD.unpack_dual(x)
        assert u._fields == ("primal", "tangent")
        assert u.primal is not None and u.tangent is not None
        np.testing.assert_allclose(np_of(u.primal), A34)
        np.testing.assert_allclose(np_of(u.tangent), T34)
        assert efwAD.unpack_dual(u.primal).tangent is None
        assert efwAD.unpack_dual(t(ember, A34)).tangent is None
    # the tangent is gone after the level exits
    assert efwAD.unpack_dual(x).tangent is None


def test_errors():
    for lib in (ember, torch):
        fw = FW[lib]
        with pytest.raises(RuntimeError):
            fw.make_dual(t(lib, A34), t(lib, T34))  # no level
        with fw.dual_level():
            with pytest.raises(RuntimeError):
                fw.make_dual(t(lib, A34), t(lib, B45))  # shape mismatch


def test_enter_exit_dual_level():
    level = efwAD.enter_dual_level()
    try:
        x = efwAD.make_dual(t(ember, A34), t(ember, T34))
        np.testing.assert_allclose(np_of(efwAD.unpack_dual(x * 3).tangent), 3 * T34)
    finally:
        efwAD.exit_dual_level(level=level)
    with efwAD.dual_level() as lvl:
        assert isinstance(lvl, int)


def test_nested_dual_levels_second_derivative():
    x0 = A34
    with efwAD.dual_level() as l1:
        with efwAD.dual_level() as l2:
            assert l2 != l1
            x = efwAD.make_dual(t(ember, x0), t(ember, T34), level=l1)
            x = efwAD.make_dual(x, t(ember, np.ones((3, 4))), level=l2)
            y = x * x * x
            d2 = efwAD.unpack_dual(y, level=l2).tangent  # 3 x^2, still dual at l1
            np.testing.assert_allclose(np_of(d2), 3 * x0 ** 2, rtol=1e-10)
            dd = efwAD.unpack_dual(d2, level=l1).tangent  # 6 x * t
            np.testing.assert_allclose(np_of(dd), 6 * x0 * T34, rtol=1e-10)
            np.testing.assert_allclose(np_of(efwAD.unpack_dual(y, level=l1).tangent),
                                       3 * x0 ** 2 * T34, rtol=1e-10)


CUBES = {"mul": lambda x: x * x * x, "pow": lambda x: x ** 3}


@pytest.mark.parametrize("cube", list(CUBES))
def test_forward_over_reverse_hvp(cube):
    def f(lib):
        fw = FW[lib]
        x = t(lib, A34).requires_grad_()
        with fw.dual_level():
            xd = fw.make_dual(x, t(lib, T34))
            y = CUBES[cube](xd).sum()
            (g,) = lib.autograd.grad(y, xd, create_graph=True)
            return fw.unpack_dual(g).tangent

    same(f)
    np.testing.assert_allclose(np_of(f(ember)), 6 * A34 * T34, rtol=1e-10)


def test_reverse_through_dual():
    def f(lib):
        fw = FW[lib]
        x = t(lib, A34).requires_grad_()
        with fw.dual_level():
            xd = fw.make_dual(x, t(lib, T34))
            y = xd.sin()
            tg = fw.unpack_dual(y).tangent  # cos(x) * t, differentiable w.r.t. x
            (g,) = lib.autograd.grad(tg.sum(), x)
            return g

    same(f)


def test_custom_function_jvp():
    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.x = x
                return x * x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g

            @staticmethod
            def jvp(ctx, tx):
                return 3 * ctx.x * ctx.x * tx
        return Cube

    def f(lib):
        fw = FW[lib]
        with fw.dual_level():
            x = fw.make_dual(t(lib, A34), t(lib, T34))
            return fw.unpack_dual(make(lib).apply(x)).tangent

    same(f)


def test_gradcheck_forward_ad():
    x = t(ember, A34[:2, :2]).requires_grad_()
    y = t(ember, B45[:2, :2]).requires_grad_()
    assert ember.autograd.gradcheck(lambda a, b: (a @ b).exp(), (x, y), check_forward_ad=True)
    z = t(ember, np.array([1.0 + 2.0j, -0.5 + 0.3j]), "complex128").requires_grad_()
    assert ember.autograd.gradcheck(lambda a: a * a.exp(), (z,), check_forward_ad=True)


def test_custom_function_forward_sees_no_tangents():
    def f(lib):
        fw = FW[lib]
        inside = []

        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                y = x * x
                inside.append(fw.unpack_dual(y).tangent is None)
                ctx.save_for_backward(x)
                return y, k

            @staticmethod
            def backward(ctx, g, gk):
                return g * 2 * ctx.saved_tensors[0], None

            @staticmethod
            def jvp(ctx, tx, tk):
                return tx * 100, None

        with fw.dual_level():
            x = fw.make_dual(t(lib, A34), t(lib, T34))
            y, k = Sq.apply(x, 7)
            return inside, k, fw.unpack_dual(y).tangent

    same(f)


def test_custom_function_without_jvp_raises():
    for lib in (ember, torch):
        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        with FW[lib].dual_level():
            x = FW[lib].make_dual(t(lib, A34), t(lib, T34))
            with pytest.raises(NotImplementedError):
                NoJvp.apply(x)
