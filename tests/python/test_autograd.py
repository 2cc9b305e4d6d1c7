"""Reverse-mode autograd from Python against torch 1.13: the same program runs on both
libraries (`lib` is ember or torch) and the gradients, flags and exception types must agree."""

import numpy as np
import pytest
import torch

import ember

LIBS = [ember, torch]


def np_of(t):
    return np.array(t.detach().numpy())


def check_close(a, b, rtol=1e-6, atol=1e-6):
    """Same values (ember tensor vs torch tensor, or lists/tuples of them, None matching None)."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for x, y in zip(a, b):
            check_close(x, y, rtol, atol)
        return
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    if isinstance(a, (bool, int, float, str)):
        assert a == b
        return
    na, nb = np_of(a), np_of(b)
    assert na.shape == nb.shape, (na.shape, nb.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(na, nb, rtol=rtol, atol=atol)


def node_name(node):
    """Node names without torch's C++ namespace ("torch::autograd::AccumulateGrad")."""
    return node.name().replace("torch::autograd::", "")


def same(f, **kw):
    """Runs f(ember) and f(torch) and compares the results."""
    check_close(f(ember), f(torch), **kw)


def leaf(lib, arr, dtype="float64", layout="contiguous", requires_grad=True):
    """A leaf tensor from a NumPy array, in the given layout (the layout op is not recorded)."""
    dt = getattr(lib, dtype)
    if layout == "transposed":
        t = lib.tensor(np.ascontiguousarray(arr.T), dtype=dt).t()
    elif layout == "strided":
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), dtype=arr.dtype)
        big[..., ::2] = arr
        t = lib.tensor(big, dtype=dt)[..., ::2]
    else:
        t = lib.tensor(arr, dtype=dt)
    return t.requires_grad_(requires_grad)


RNG = np.random.default_rng(0)
A34 = RNG.standard_normal((3, 4))
B34 = RNG.standard_normal((3, 4))


# ---- basics: leaves, grad_fn, accumulation ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_accumulates_across_two_backwards(dtype, layout):
    arr = A34.T.copy() if layout == "transposed" else A34

    def f(lib):
        x = leaf(lib, arr, dtype, layout)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        y.backward()
        return g1, x.grad

    same(f, rtol=1e-5)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
def test_zero_size_and_0dim(shape):
    arr = np.full(shape, 1.5)

    def f(lib):
        x = leaf(lib, arr)
        (x.exp() * 2).sum().backward()
        return x.grad

    same(f)


def test_broadcast_gradients_are_reduced():
    def f(lib):
        x = leaf(lib, A34[:, :1].copy())
        y = leaf(lib, A34[:1, :].copy())
        (x * y + x).sum().backward()
        return x.grad, y.grad

    same(f)


def test_complex_gradient_conjugate_wirtinger():
    z0 = RNG.standard_normal((3,)) + 1j * RNG.standard_normal((3,))
    w0 = RNG.standard_normal((3,)) + 1j * RNG.standard_normal((3,))

    def f(lib):
        z = leaf(lib, z0, "complex128")
        w = leaf(lib, w0, "complex128")
        (z * w).abs().sum().backward()
        return z.grad, w.grad

    same(f)


def test_leaf_flags_and_grad_fn_names():
    def f(lib):
        x = leaf(lib, A34)
        y = leaf(lib, B34, requires_grad=False)
        z = x * y
        s = z.sum()
        nf = z.grad_fn.next_functions
        return [x.is_leaf, y.is_leaf, z.is_leaf, z.requires_grad, x.grad_fn is None,
                z.grad_fn.name(), s.grad_fn.name(), len(nf), node_name(nf[0][0]), nf[0][1],
                nf[1][0] is None, s.grad_fn.next_functions[0][0].name()]

    same(f)


def test_accumulate_grad_variable_is_the_leaf():
    x = leaf(ember, A34)
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert acc.name() == "AccumulateGrad"
    v = acc.variable
    v.data[0, 0] = 7.0
    assert float(x[0, 0]) == 7.0


def test_backward_non_scalar_needs_gradient():
    for lib in LIBS:
        x = leaf(lib, A34)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            (x * 2).backward()


def test_backward_with_gradient_and_inputs():
    g = RNG.standard_normal((3, 4))

    def f(lib):
        x = leaf(lib, A34)
        y = leaf(lib, B34)
        (x * y).backward(lib.tensor(g, dtype=lib.float64), inputs=[x])
        return x.grad, y.grad

    same(f)


def test_retain_graph_error_message():
    for lib in LIBS:
        x = leaf(lib, A34)
        y = x.exp().sum()
        y.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
            y.backward()


def test_grad_set_get_del():
    def f(lib):
        x = leaf(lib, A34)
        assert x.grad is None
        x.grad = lib.ones(3, 4, dtype=lib.float64)
        (x * 3).sum().backward()
        g = x.grad.clone()
        del x.grad
        gone = x.grad is None
        x.grad = None
        return g, gone

    same(f)
    x = leaf(ember, A34)
    with pytest.raises(RuntimeError):
        x.grad = ember.ones(2, dtype=ember.float64)
    with pytest.raises(TypeError):
        x.grad = 3


def test_requires_grad_rules():
    for lib in LIBS:
        x = leaf(lib, A34)
        y = x * 2
        with pytest.raises(RuntimeError):
            y.requires_grad = False
        i = lib.tensor([1, 2])
        with pytest.raises(RuntimeError):
            i.requires_grad_()
        assert x.requires_grad_(False) is x and not x.requires_grad


def test_retain_grad_and_nonleaf_warning():
    def f(lib):
        x = leaf(lib, A34)
        y = x * 2
        y.retain_grad()
        z = x * 3
        (y * z).sum().backward()
        with pytest.warns(UserWarning, match="not a leaf Tensor"):
            assert z.grad is None
        return y.retains_grad, z.retains_grad, y.grad, x.grad

    same(f)


def test_detach_shares_storage():
    def f(lib):
        x = leaf(lib, A34)
        d = x.detach()
        v0 = x._version
        d[0, 0] = 5.0
        e = (x * 2).detach_()
        return [d.requires_grad, d.is_leaf, float(x[0, 0]), x._version > v0, e.requires_grad,
                e.grad_fn is None]

    same(f)


def test_data_get_set():
    def f(lib):
        x = leaf(lib, A34)
        d = x.data
        d.mul_(2)  # not recorded, not a leaf-in-place error
        x.data = lib.zeros(3, 4, dtype=lib.float64)
        return [d.requires_grad, x.requires_grad, x.detach().sum().item()]

    same(f)


def test_view_base_and_version():
    def f(lib):
        x = leaf(lib, A34)
        y = x * 1
        v = y[1:]
        v0 = y._version
        v.mul_(2)
        y.sum().backward()
        return [v._base is not None, v._is_view(), y._base is None, y._version - v0,
                v._base.detach() * 1, x.grad]

    same(f)


# ---- in-place checks ----

def test_inplace_on_leaf_requiring_grad_raises():
    for lib in LIBS:
        x = leaf(lib, A34)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.add_(1)
        with lib.no_grad():
            x.add_(1)  # allowed without recording


def test_version_counter_error_names_ops():
    for lib in LIBS:
        x = leaf(lib, A34)
        y = (x * 2).exp()  # ExpBackward0 saves its output
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            y.sum().backward()
        assert "ExpBackward0" in str(e.value)
    x = leaf(ember, A34)
    y = (x * 2).exp()
    y.add_(1)
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert "add" in str(e.value)


def test_inplace_on_nonleaf_is_recorded():
    def f(lib):
        x = leaf(lib, A34)
        y = x * 2
        y.add_(1)
        y[0].mul_(3)
        y.t()[1:].sub_(x.t()[1:])
        (y * y).sum().backward()
        return x.grad

    same(f)


# ---- hooks ----

def test_tensor_hooks_replace_and_order():
    def f(lib):
        calls = []
        x = leaf(lib, A34)
        y = x * 2
        y.register_hook(lambda g: calls.append("a") or g * 10)
        h = y.register_hook(lambda g: calls.append("b"))
        y.register_hook(lambda g: calls.append("c") or g + 1)
        x.register_hook(lambda g: calls.append("x") or g * 0.5)
        y.sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        h.remove()
        x.grad = None
        y.sum().backward()
        return calls, g1, x.grad

    same(f)


def test_hook_on_tensor_without_grad_raises():
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.ones(2).register_hook(lambda g: g)


def test_hook_bad_return_type():
    x = leaf(ember, A34)
    x.register_hook(lambda g: 3)
    with pytest.raises(TypeError):
        (x * 2).sum().backward()


def test_node_hooks():
    def f(lib):
        seen = []
        x = leaf(lib, A34)
        y = leaf(lib, B34)
        z = x * y
        node = z.grad_fn

        def post(grad_inputs, grad_outputs):
            seen.append(("post", len(grad_inputs), len(grad_outputs)))
            return (grad_inputs[0] * 2, grad_inputs[1])

        node.register_hook(post)
        z.sum().backward()
        return seen, x.grad, y.grad

    same(f)


def test_node_prehook():
    x = leaf(ember, A34)
    z = x * 3
    seen = []
    h = z.grad_fn.register_prehook(lambda go: seen.append(len(go)) or (go[0] * 2,))
    z.sum().backward(retain_graph=True)
    np.testing.assert_allclose(np_of(x.grad), np.full((3, 4), 6.0))
    assert seen == [1]
    h.remove()
    x.grad = None
    z.sum().backward()
    np.testing.assert_allclose(np_of(x.grad), np.full((3, 4), 3.0))
    if hasattr(torch.ones(1, requires_grad=True).mul(1).grad_fn, "register_prehook"):
        xt = leaf(torch, A34)
        zt = xt * 3
        zt.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        zt.sum().backward()
        np.testing.assert_allclose(np_of(xt.grad), np.full((3, 4), 6.0))


def test_post_accumulate_grad_hook():
    x = leaf(ember, A34)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(np_of(t.grad).copy()))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert len(seen) == 2
    np.testing.assert_allclose(seen[0], np.full((3, 4), 2.0))
    np.testing.assert_allclose(seen[1], np.full((3, 4), 4.0))
    h.remove()
    (x * 2).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


# ---- grad modes ----

def test_grad_modes():
    def f(lib):
        x = leaf(lib, A34)
        out = []
        with lib.no_grad():
            out.append((x * 2).requires_grad)
            out.append(lib.is_grad_enabled())
            with lib.enable_grad():
                out.append((x * 2).requires_grad)
        out.append((x * 2).requires_grad)
        lib.set_grad_enabled(False)
        out.append((x * 2).requires_grad)
        lib.set_grad_enabled(True)
        with lib.set_grad_enabled(False):
            out.append((x * 2).requires_grad)
        out.append(lib.is_grad_enabled())

        @lib.no_grad()
        def g(t):
            return t * 2

        @lib.enable_grad()
        def h(t):
            return t * 2

        out.append(g(x).requires_grad)
        with lib.no_grad():
            out.append(h(x).requires_grad)

        @lib.inference_mode()
        def k(t):
            return t * 2

        r = k(x)
        out += [r.requires_grad, r.is_inference(), x.is_inference(), lib.is_grad_enabled()]
        with lib.inference_mode():
            out.append(lib.is_inference_mode_enabled())
            with lib.inference_mode(False):
                out.append(lib.is_inference_mode_enabled())
        out.append(lib.is_inference_mode_enabled())
        return out

    same(f)


def test_no_grad_generator_decorator():
    @ember.no_grad()
    def gen(x):
        yield (x * 2).requires_grad
        yield ember.is_grad_enabled()

    x = leaf(ember, A34)
    assert list(gen(x)) == [False, False]
    assert ember.is_grad_enabled()


def test_inference_tensor_in_autograd_raises():
    for lib in LIBS:
        with lib.inference_mode():
            t = lib.ones(3, 4, dtype=lib.float64)
        assert t.is_inference()
        x = leaf(lib, A34)
        with pytest.raises(RuntimeError):
            (t * x).sum().backward()
        with pytest.raises(RuntimeError):
            t.add_(1)  # in-place on an inference tensor outside inference mode


# ---- anomaly mode ----

def test_detect_anomaly_names_forward_op():
    for lib in LIBS:
        x = lib.tensor([-1.0, 4.0], dtype=lib.float64, requires_grad=True)
        with pytest.warns(UserWarning):
            with lib.autograd.detect_anomaly():
                y = x.sqrt()
                with pytest.raises(RuntimeError, match="SqrtBackward0") as e:
                    y.sum().backward()
        assert "nan" in str(e.value).lower()
        assert not lib.is_anomaly_enabled()
    # ember's message carries the Python stack of the forward call
    x = ember.tensor([-1.0, 4.0], dtype=ember.float64, requires_grad=True)
    with pytest.warns(UserWarning), ember.autograd.detect_anomaly():
        y = x.sqrt()  # the forward line
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
    assert "y = x.sqrt()  # the forward line" in str(e.value)
    assert "test_autograd.py" in str(e.value)


def test_set_detect_anomaly():
    for lib in LIBS:
        lib.autograd.set_detect_anomaly(True)
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled()


# ---- custom functions ----

def make_scaled_mul(lib):
    class ScaledMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            ctx.save_for_backward(a, b)
            ctx.k = k
            ctx.seen = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ga = g * b * ctx.k if ctx.needs_input_grad[0] else None
            gb = g * a * ctx.k if ctx.needs_input_grad[1] else None
            return ga, gb, None

    return ScaledMul


def test_custom_function_saved_tensors_needs_input_grad():
    def f(lib):
        Fn = make_scaled_mul(lib)
        a = leaf(lib, A34)
        b = leaf(lib, B34, requires_grad=False)
        y = Fn.apply(a, b, 3.0)
        y.sum().backward()
        return [y.grad_fn.name(), y.requires_grad, a.grad, b.grad,
                node_name(y.grad_fn.next_functions[0][0])]

    same(f)


def test_custom_function_needs_input_grad_values():
    for lib in LIBS:
        Fn = make_scaled_mul(lib)
        seen = []

        class Spy(Fn):
            @staticmethod
            def forward(ctx, a, b, k):
                seen.append(ctx.needs_input_grad)
                return Fn.forward(ctx, a, b, k)

        Spy.apply(leaf(lib, A34, requires_grad=False), leaf(lib, B34), 2.0)
        assert seen[-1] == (False, True, False)


def test_custom_function_saved_tensors_freed():
    for lib in LIBS:
        Fn = make_scaled_mul(lib)
        a = leaf(lib, A34)
        y = Fn.apply(a, a, 1.0)
        y.sum().backward()
        with pytest.raises(RuntimeError):
            y.sum().backward()


def test_custom_function_wrong_number_of_grads():
    for lib in LIBS:
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a + b

            @staticmethod
            def backward(ctx, g):
                return g

        y = Bad.apply(leaf(lib, A34), leaf(lib, B34))
        with pytest.raises(RuntimeError, match="incorrect number of gradients"):
            y.sum().backward()


def test_custom_function_mark_dirty():
    def f(lib):
        class Double_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        a = leaf(lib, A34)
        x = a * 1
        y = Double_.apply(x)
        (y * y).sum().backward()
        return [y is x, x.grad_fn.name(), a.grad]

    same(f)


def test_custom_function_non_differentiable_output():
    def f(lib):
        class MaxIdx(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                v, i = x.max(dim=1)
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                ctx.shape = x.shape
                return v, i

            @staticmethod
            def backward(ctx, gv, gi):
                (i,) = ctx.saved_tensors
                out = lib.zeros(ctx.shape, dtype=gv.dtype)
                return out.scatter(1, i.unsqueeze(1), gv.unsqueeze(1))

        x = leaf(lib, A34)
        v, i = MaxIdx.apply(x)
        v.sum().backward()
        return [v.requires_grad, i.requires_grad, x.grad]

    same(f)


def test_custom_function_materialize_grads():
    def f(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None))
                return g1 * 2

        x = leaf(lib, A34)
        a, b = Two.apply(x)
        a.sum().backward()
        return seen, x.grad

    same(f)


def test_custom_function_setup_context_style():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = leaf(ember, A34)
    Cube.apply(x).sum().backward()
    np.testing.assert_allclose(np_of(x.grad), 3 * A34 ** 2)


def test_custom_function_error_in_backward_propagates():
    class Boom(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        Boom.apply(leaf(ember, A34)).sum().backward()


def test_custom_function_double_backward():
    def f(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = leaf(lib, A34)
        (g,) = lib.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    same(f)


# ---- functional grad, higher order ----

CUBES = {"mul": lambda x: x * x * x, "pow": lambda x: x ** 3}


@pytest.mark.parametrize("cube", list(CUBES))
def test_double_backward_cube(cube):
    def f(lib):
        x = leaf(lib, A34)
        y = CUBES[cube](x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg

    same(f)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_backward_accumulates_graph():
    def f(lib):
        x = leaf(lib, A34)
        (x * x * x).sum().backward(create_graph=True)
        g = x.grad
        req = g.requires_grad
        x.grad = None
        g.sum().backward()
        return req, x.grad

    same(f)


def test_grad_allow_unused_and_materialize():
    def f(lib):
        x = leaf(lib, A34)
        z = leaf(lib, B34)
        y = (x * 2).sum()
        with pytest.raises(RuntimeError):
            lib.autograd.grad(y, [x, z], retain_graph=True)
        return lib.autograd.grad(y, [x, z], allow_unused=True)

    same(f)
    x = leaf(ember, A34)
    z = leaf(ember, B34)
    gx, gz = ember.autograd.grad((x * 2).sum(), (x, z), materialize_grads=True)
    np.testing.assert_allclose(np_of(gz), np.zeros((3, 4)))
    with pytest.raises(NotImplementedError):
        ember.autograd.grad((x * 2).sum(), x, is_grads_batched=True)


def test_grad_outputs_and_sequences():
    g1 = RNG.standard_normal((3, 4))

    def f(lib):
        x = leaf(lib, A34)
        a, b = x * 2, x.sin()
        return lib.autograd.grad([a, b.sum()], [x],
                                 grad_outputs=[lib.tensor(g1, dtype=lib.float64), None])

    same(f)


def test_autograd_backward_function():
    def f(lib):
        x = leaf(lib, A34)
        y = leaf(lib, B34)
        lib.autograd.backward([(x * y).sum(), (x * 2).sum()])
        return x.grad, y.grad

    same(f)


def test_grad_does_not_touch_dot_grad():
    x = leaf(ember, A34)
    ember.autograd.grad((x * 2).sum(), x)
    assert x.grad is None


def test_grad_type_errors():
    x = leaf(ember, A34)
    with pytest.raises(TypeError):
        ember.autograd.grad((x * 2).sum(), 3)


# ---- checkpoint ----

def test_checkpoint_same_gradients():
    from ember.utils.checkpoint import checkpoint

    w0 = RNG.standard_normal((4, 4))

    def block(x, w):
        return (x @ w).tanh() @ w

    def run(lib, ckpt, **kw):
        x = leaf(lib, A34)
        w = leaf(lib, w0)
        y = ckpt(block, x, w, **kw) if ckpt else block(x, w)
        (y * y).sum().backward()
        return y, x.grad, w.grad

    ref = run(ember, None)
    for reentrant in (True, False):
        check_close(run(ember, checkpoint, use_reentrant=reentrant), ref)
    import torch.utils.checkpoint as tc
    check_close(ref, run(torch, tc.checkpoint))


def test_checkpoint_preserves_rng_state():
    from ember.utils.checkpoint import checkpoint

    def block(x):
        return x * ember.rand(3, 4, dtype=ember.float64)

    x = leaf(ember, A34)
    ember.manual_seed(1)
    y = checkpoint(block, x)
    y.sum().backward()
    ember.manual_seed(1)
    mask = ember.rand(3, 4, dtype=ember.float64)
    np.testing.assert_allclose(np_of(x.grad), np_of(mask))


# ---- gradcheck ----

class GoodExp(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


    @staticmethod
    def jvp(ctx, t):
        return t * ctx.saved_tensors[0]


class WrongExp(GoodExp):
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 1.01


def test_gradcheck_passes_and_fails():
    from ember.autograd.gradcheck import GradcheckError

    x = leaf(ember, A34[:2, :3])
    assert ember.autograd.gradcheck(GoodExp.apply, (x,))
    assert ember.autograd.gradgradcheck(lambda t: (t * t).sin(), (x,))
    assert issubclass(GradcheckError, RuntimeError)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        ember.autograd.gradcheck(WrongExp.apply, (x,))
    assert ember.autograd.gradcheck(WrongExp.apply, (x,), raise_exception=False) is False
    assert ember.autograd.gradcheck(GoodExp.apply, (x,), check_forward_ad=True)


def test_gradcheck_complex_and_multi():
    z = leaf(ember, RNG.standard_normal((3,)) + 1j * RNG.standard_normal((3,)), "complex128")
    w = leaf(ember, RNG.standard_normal((3,)))
    assert ember.autograd.gradcheck(lambda a, b: (a * a * b, (a.abs() * b).sum()), (z, w))
    with pytest.raises(ValueError):
        ember.autograd.gradcheck(lambda a: a * 2, (leaf(ember, A34, requires_grad=False),))


def test_gradcheck_layouts_and_shapes():
    for layout in ("transposed", "strided"):
        arr = A34[:2, :3].T.copy() if layout == "transposed" else A34[:2, :3]
        x = leaf(ember, arr, layout=layout)
        assert ember.autograd.gradcheck(lambda t: (t * t).exp().sum(0), (x,),
                                        check_forward_ad=True)
    s = leaf(ember, np.array(0.3))
    assert ember.autograd.gradcheck(lambda t: t.sin() * 2, (s,))
    e = leaf(ember, np.zeros((0, 3)))
    assert ember.autograd.gradcheck(lambda t: t * 2, (e,))
    # non-tensor arguments pass through
    x = leaf(ember, A34[:1, :3])
    assert ember.autograd.gradcheck(lambda t, k: t * k, (x, 3.0))


def test_gradcheck_wrong_forward_jvp_and_gradgrad():
    from ember.autograd.gradcheck import GradcheckError

    class BadJvp(GoodExp):
        @staticmethod
        def jvp(ctx, t):
            return t * ctx.saved_tensors[0] * 2

    x = leaf(ember, A34[:1, :3])
    with pytest.raises(GradcheckError, match="forward mode"):
        ember.autograd.gradcheck(BadJvp.apply, (x,), check_forward_ad=True)

    class NotTwiceDifferentiable(ember.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * t.detach() * 2  # the dependence on t is lost

    assert ember.autograd.gradcheck(NotTwiceDifferentiable.apply, (x,))
    with pytest.raises(GradcheckError):
        ember.autograd.gradgradcheck(NotTwiceDifferentiable.apply, (x,))


def test_engine_bad_inputs():
    for lib in LIBS:
        x = leaf(lib, A34)
        c = lib.ones(3, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="does not require grad"):
            c.sum().backward()
        with pytest.raises(RuntimeError):
            (x * 2).backward(lib.ones(2, dtype=lib.float64))  # wrong gradient shape
        with pytest.raises(RuntimeError):
            lib.autograd.grad((x * 2).sum(), c)  # input does not require grad
        with pytest.raises(TypeError):
            lib.set_grad_enabled(1)


def test_hook_handle_context_manager():
    def f(lib):
        x = leaf(lib, A34)
        y = x * 2
        with y.register_hook(lambda g: g * 3):
            pass  # removed on exit
        y.sum().backward()
        return x.grad

    same(f)


def test_function_apply_under_no_grad_and_vjp_alias():
    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = leaf(ember, A34)
    with ember.no_grad():
        assert not Twice.apply(x).requires_grad
    y = Twice.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(np_of(x.grad), np.full((3, 4), 2.0))


def test_function_returning_input_and_non_tensor():
    def f(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t, k):
                return t, k * 2

            @staticmethod
            def backward(ctx, g, gk):
                return g * 3, None

        x = leaf(lib, A34)
        y, k = Ident.apply(x, 5)
        (y * 1).sum().backward()
        return [y is x, k, y.requires_grad, y.is_leaf, x.grad]

    same(f)


def test_function_complex_input():
    z0 = RNG.standard_normal((3,)) + 1j * RNG.standard_normal((3,))

    def f(lib):
        class Conj(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return (z * z.conj()).real

            @staticmethod
            def backward(ctx, g):
                (z,) = ctx.saved_tensors
                return 2 * g * z

        z = leaf(lib, z0, "complex128")
        Conj.apply(z).sum().backward()
        return z.grad

    same(f)
    z = leaf(ember, z0, "complex128")
    assert ember.autograd.gradcheck(lambda t: (t * t.conj()).real * t.abs(), (z,))


def test_checkpoint_with_non_tensor_args_and_kwargs():
    from ember.utils.checkpoint import checkpoint

    def block(x, k, *, scale=1.0):
        return (x * k).sin() * scale

    def run(ckpt):
        x = leaf(ember, A34)
        if ckpt:
            y = checkpoint(block, x, 3.0, use_reentrant=False, scale=2.0)
        else:
            y = block(x, 3.0, scale=2.0)
        y.sum().backward()
        return y, x.grad

    check_close(run(True), run(False))
    with pytest.raises(ValueError):
        checkpoint(block, leaf(ember, A34), 3.0, use_reentrant=True, scale=2.0)
