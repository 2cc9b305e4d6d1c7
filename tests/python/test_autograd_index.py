"""Gradients (vjp), double backward and forward-mode tangents of the indexing ops against torch.

Every case runs one function on torch and on ember with the same float64 (or complex128)
leaves, compares the outputs, then the gradients for a random grad_output, and, where torch
1.13 has forward AD for the op, the tangents for random input tangents. Layouts (transposed,
sliced, broadcast) are made inside the function from the leaves, so the views are part of it.
"""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember

try:
    import ember.autograd.forward_ad as efw
except ImportError:  # pragma: no cover - older builds
    efw = None

RTOL, ATOL = 1e-7, 1e-9


def _tup(x):
    if isinstance(x, (tuple, list)):
        return list(x)
    if hasattr(x, "_fields"):  # named tuples of torch.return_types
        return list(x)
    return [x]


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy().copy()
    return t.detach().resolve_conj().numpy().copy()


def _rand_like(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a, dtype=dtype)


def _same(e, t, what, rtol=RTOL, atol=ATOL):
    if t is None:
        assert e is None, f"{what}: ember gave a gradient where torch gives None"
        return
    assert e is not None, f"{what}: ember gave None where torch gives a gradient"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != {tuple(t.shape)}"
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: dtype"
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol, err_msg=what)


def _leaves(arrays):
    tin = [torch.from_numpy(np.array(a)).requires_grad_(True) for a in arrays]
    ein = [ember.from_numpy(np.array(a)).requires_grad_(True) for a in arrays]
    return tin, ein


def _conv(others, lib):
    out = []
    for o in others:
        if isinstance(o, np.ndarray):
            out.append(torch.from_numpy(o.copy()) if lib is torch else ember.from_numpy(o.copy()))
        else:
            out.append(o)
    return out


def ad_check(fn, arrays, others=(), *, seed=0, rtol=RTOL, atol=ATOL, double=False,
             forward=True, out_rtol=None):
    """fn(lib, *leaves, *others) on torch and ember: outputs, vjp, (double vjp), jvp."""
    rng = np.random.default_rng(seed)
    tin, ein = _leaves(arrays)
    tout = _tup(fn(torch, *tin, *_conv(others, torch)))
    eout = _tup(fn(ember, *ein, *_conv(others, ember)))
    assert len(tout) == len(eout)
    for k, (e, t) in enumerate(zip(eout, tout)):
        _same(e, t, f"output {k}", rtol=out_rtol or rtol, atol=atol)
    keep = [k for k, t in enumerate(tout) if isinstance(t, torch.Tensor) and t.requires_grad]
    for k in keep:
        assert eout[k].requires_grad, f"output {k} does not require grad in ember"
    if not keep:
        return
    gos = [_rand_like(rng, tuple(tout[k].shape), _np(tout[k]).dtype) for k in keep]
    tg = torch.autograd.grad([tout[k] for k in keep], tin, [torch.from_numpy(g) for g in gos],
                             allow_unused=True, create_graph=double)
    eg = ember.autograd.grad([eout[k] for k in keep], ein, [ember.from_numpy(g) for g in gos],
                             allow_unused=True, create_graph=double)
    for i, (e, t) in enumerate(zip(eg, tg)):
        _same(e, t, f"grad of input {i}", rtol=rtol, atol=atol)
    if double:
        idx = [i for i, t in enumerate(tg) if t is not None and t.requires_grad]
        vs = [_rand_like(rng, tuple(tg[i].shape), _np(tg[i]).dtype) for i in idx]
        if idx:
            tg2 = torch.autograd.grad([tg[i] for i in idx], tin,
                                      [torch.from_numpy(v) for v in vs], allow_unused=True)
            eg2 = ember.autograd.grad([eg[i] for i in idx], ein,
                                      [ember.from_numpy(v) for v in vs], allow_unused=True)
            for i, (e, t) in enumerate(zip(eg2, tg2)):
                _same(e, t, f"second-order grad of input {i}", rtol=rtol, atol=atol)
    if forward and efw is not None:
        tangents = [_rand_like(rng, np.shape(a), np.asarray(a).dtype) for a in arrays]
        try:
            with tfw.dual_level():
                duals = [tfw.make_dual(torch.from_numpy(np.array(a)), torch.from_numpy(t))
                         for a, t in zip(arrays, tangents)]
                tt = [tfw.unpack_dual(o).tangent if isinstance(o, torch.Tensor) else None
                      for o in _tup(fn(torch, *duals, *_conv(others, torch)))]
        except (NotImplementedError, RuntimeError):
            return  # torch 1.13 has no forward AD for this op
        with efw.dual_level():
            duals = [efw.make_dual(ember.from_numpy(np.array(a)), ember.from_numpy(t))
                     for a, t in zip(arrays, tangents)]
            et = [efw.unpack_dual(o).tangent if isinstance(o, ember.Tensor) else None
                  for o in _tup(fn(ember, *duals, *_conv(others, ember)))]
        for k in keep:
            if tt[k] is not None:  # None: torch 1.13 has no forward formula for it
                _same(et[k], tt[k], f"tangent of output {k}", rtol=rtol, atol=atol)


def R(*shape, seed=1, dtype="float64"):
    return _rand_like(np.random.default_rng(seed), shape, dtype)


def L(*vals):
    return np.array(vals, dtype=np.int64)


# ---- index_select / gather / take ----


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dim):
    ad_check(lambda lib, x, i: lib.index_select(x, dim, i), [R(4, 5)], [L(3, 0, 3, 1)], double=True)


def test_index_select_strided_zero_and_scalar():
    ad_check(lambda lib, x, i: lib.index_select(x.t(), 1, i), [R(4, 5)], [L(2, 2, 0)])
    ad_check(lambda lib, x, i: lib.index_select(x[:, ::2], 0, i), [R(4, 5)], [L(1)])
    ad_check(lambda lib, x, i: lib.index_select(x, 0, i), [R(4, 5)], [np.zeros(0, np.int64)])
    ad_check(lambda lib, x, i: lib.index_select(x, 0, i), [R()], [np.array(0)])


def test_index_select_complex():
    ad_check(lambda lib, x, i: lib.index_select(x, 1, i), [R(3, 4, dtype="complex128")],
             [L(3, 3, 1)])


def test_gather():
    idx = L(0, 2, 2, 1, 3, 0).reshape(3, 2)
    ad_check(lambda lib, x, i: lib.gather(x, 1, i), [R(3, 4)], [idx], double=True)
    ad_check(lambda lib, x, i: lib.gather(x.t(), 0, i), [R(3, 4)], [L(0, 1, 2, 2).reshape(2, 2)])
    ad_check(lambda lib, x, i: x.gather(0, i), [R()], [np.array(0)])


def test_take_and_take_along_dim():
    ad_check(lambda lib, x, i: lib.take(x, i), [R(3, 4)], [L(0, 11, -1, 5, 5).reshape(5, 1)])
    ad_check(lambda lib, x, i: lib.take(x.t(), i), [R(3, 4)], [L(1, 2, 2)], double=True)
    idx = L(0, 2, 1, 1, 3, 0).reshape(3, 2)
    ad_check(lambda lib, x, i: lib.take_along_dim(x, i, dim=1), [R(3, 4)], [idx])
    ad_check(lambda lib, x, i: lib.take_along_dim(x, i, dim=1), [R(3, 4)], [L(2, 0).reshape(1, 2)])
    ad_check(lambda lib, x, i: lib.take_along_dim(x, i), [R(3, 4)], [L(0, 7, 7)])


@pytest.mark.parametrize("accumulate", [False, True])
def test_put(accumulate):
    ad_check(lambda lib, x, s, i: x.put(i, s, accumulate=accumulate), [R(3, 4), R(3)],
             [L(1, 11, 4)])
    if accumulate:
        ad_check(lambda lib, x, s, i: x.put(i, s, accumulate=True), [R(3, 4), R(3)], [L(1, 1, 4)])


# ---- scatter family ----


def test_scatter_src_and_value():
    idx = L(1, 0, 2, 0, 3, 1).reshape(2, 3)
    ad_check(lambda lib, x, s, i: lib.scatter(x, 1, i, s), [R(2, 4), R(2, 3)], [idx], double=True)
    ad_check(lambda lib, x, i: lib.scatter(x, 1, i, 2.5), [R(2, 4)], [idx])
    ad_check(lambda lib, x, s, i: lib.scatter(x.t(), 1, i, s), [R(4, 2), R(2, 2)],
             [L(0, 1, 3, 2).reshape(2, 2)])


def test_scatter_add():
    idx = L(1, 1, 2, 0, 3, 3).reshape(2, 3)
    ad_check(lambda lib, x, s, i: lib.scatter_add(x, 1, i, s), [R(2, 4), R(2, 3)], [idx],
             double=True)
    ad_check(lambda lib, x, s, i: lib.scatter_add(x, 0, i, s), [R(), R()], [np.array(0)])


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    idx = L(1, 1, 2, 0, 3, 3, 0).reshape(1, 7).repeat(2, 0)
    ad_check(lambda lib, x, s, i: lib.scatter_reduce(x, 1, i, s, reduce,
                                                    include_self=include_self),
             [R(2, 4), R(2, 7, seed=2)], [idx])


def test_scatter_reduce_prod_with_zeros():
    src = R(1, 6, seed=3)
    src[0, 1] = 0.0  # a lone zero in its group
    src[0, 4] = src[0, 5] = 0.0  # two zeros in a group
    x = R(1, 4)
    idx = L(0, 0, 1, 2, 3, 3).reshape(1, 6)
    ad_check(lambda lib, x, s, i: lib.scatter_reduce(x, 1, i, s, "prod"), [x, src], [idx],
             forward=False)


def test_scatter_inplace_forms_on_non_leaf():
    idx = L(1, 0, 2).reshape(1, 3)
    ad_check(lambda lib, x, s, i: (x * 2).scatter_(1, i, s), [R(1, 4), R(1, 3)], [idx])
    ad_check(lambda lib, x, s, i: (x * 2).scatter_add_(1, i, s), [R(1, 4), R(1, 3)], [idx])
    ad_check(lambda lib, x, s, i: (x * 1).scatter_reduce_(1, i, s, "amax"),
             [R(1, 4), R(1, 3)], [idx], forward=False)


# ---- index_add / index_copy / index_fill / index_put ----


@pytest.mark.parametrize("alpha", [1, 2.5])
def test_index_add(alpha):
    ad_check(lambda lib, x, s, i: lib.index_add(x, 0, i, s, alpha=alpha), [R(4, 3), R(3, 3)],
             [L(0, 3, 0)], double=True)
    ad_check(lambda lib, x, s, i: x.t().index_add(1, i, s, alpha=alpha), [R(4, 3), R(3, 2)],
             [L(1, 1)])


def test_index_add_complex_alpha():
    # torch 1.13 multiplies source's gradient by alpha, not conj(alpha) (the conjugate-Wirtinger
    # rule): the oracle is the same function written with a multiply.
    def f(lib, x, s, i):
        if lib is torch:
            return torch.index_add(x, 0, i, s * (1 - 2j))
        return ember.index_add(x, 0, i, s, alpha=1 - 2j)

    ad_check(f,
             [R(4, 3, dtype="complex128"), R(2, 3, dtype="complex128")], [L(2, 0)])


def test_index_copy_and_fill():
    ad_check(lambda lib, x, s, i: lib.index_copy(x, 1, i, s), [R(3, 4), R(3, 2)], [L(3, 0)],
             double=True)
    ad_check(lambda lib, x, i: lib.index_fill(x, 1, i, -1.5), [R(3, 4)], [L(3, 0, 3)])


def test_index_fill_tensor_value():
    ad_check(lambda lib, x, v, i: lib.index_fill(x, 1, i, v), [R(3, 4), R()], [L(3, 0, 3)])


def test_index_fill_inplace_tensor_value():
    ad_check(lambda lib, x, v, i: (x * 1).index_fill_(0, i, v), [R(3, 4), R()], [L(2)])


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    ad_check(lambda lib, x, v, i: lib.index_put(x, (i,), v, accumulate=accumulate),
             [R(5, 3), R(2, 3)], [L(4, 1)], double=True)
    ad_check(lambda lib, x, v, i, j: x.index_put((i, j), v, accumulate=accumulate),
             [R(5, 3), R(2)], [L(4, 1), L(0, 2)])
    # Broadcast values.
    ad_check(lambda lib, x, v, i: lib.index_put(x, (i,), v, accumulate=accumulate),
             [R(5, 3), R(3)], [L(4, 1)])
    if accumulate:
        ad_check(lambda lib, x, v, i: lib.index_put(x, (i,), v, accumulate=True),
                 [R(5, 3), R(3, 3)], [L(4, 4, 1)])


# ---- advanced indexing ----


def _adv(expr):
    return lambda lib, x, *idx: eval(expr, {"x": x, "idx": idx})  # noqa: S307 - test code


@pytest.mark.parametrize("expr", [
    "x[idx[0]]",
    "x[:, idx[0]]",
    "x[idx[0], idx[1]]",
    "x[idx[0], :, idx[1]]",
    "x[..., idx[1]]",
    "x[1:, None, idx[0]]",
    "x.transpose(0, 2)[idx[0]]",
])
def test_advanced_index(expr):
    ad_check(_adv(expr), [R(3, 4, 5)], [L(2, 0, 2), L(1, 3, 1)], double=True)


def test_mask_and_basic_index():
    mask = np.array([[True, False, True, True], [False, False, True, False], [True] * 4])
    ad_check(lambda lib, x, m: x[m], [R(3, 4)], [mask])
    ad_check(lambda lib, x, m: x[:, m[0]], [R(3, 4)], [mask])
    ad_check(lambda lib, x: x[1:, ::2], [R(3, 4)])
    ad_check(lambda lib, x: x[1, None, ..., 2], [R(3, 4)])
    ad_check(lambda lib, x: x[..., 0], [R()[None]])
    ad_check(lambda lib, x: x[None, ...], [R()])


def test_setitem():
    def f(lib, x, v, i):
        y = x * 1
        y[i] = v
        return y

    ad_check(f, [R(4, 3), R(2, 3)], [L(3, 0)])

    def g(lib, x, v):
        y = x * 1
        y[1:3, 0] = v
        return y

    ad_check(g, [R(4, 3), R(2)])

    def h(lib, x, v, m):
        y = x * 1
        y[m] = v
        return y

    ad_check(h, [R(2, 3), R()], [np.array([[True, False, True], [False, True, False]])])


# The index list of a setitem (ints, bools, slices with missing bounds, None, Ellipsis and
# tensors) is stored with the node; backward and forward AD rebuild it from there.
@pytest.mark.parametrize("key", [
    "(Ellipsis, None, slice(1, None), idx)",
    "(0, slice(None, None, 2))",
    "(slice(None, 2), Ellipsis, 1)",
    "(True, 1, idx)",
    "(idx, None, slice(None, -1))",
    "(-1,)",
])
def test_setitem_mixed_keys(key):
    def key_of(i):
        return eval(key, {"idx": i, "Ellipsis": Ellipsis})

    def f(lib, x, v, i):
        y = x * 1
        y[key_of(i)] = v
        return y

    vshape = torch.zeros(3, 4, 5)[key_of(torch.tensor([0, 2]))].shape
    ad_check(f, [R(3, 4, 5), R(*vshape)], [L(0, 2)], double=True)


# ---- masked_* ----


def test_masked_fill():
    m = np.array([[True, False, True, False]])
    ad_check(lambda lib, x, mask: lib.masked_fill(x, mask, 2.0), [R(3, 4)], [m], double=True)
    ad_check(lambda lib, x, mask: (x * 1).masked_fill_(mask, 2.0), [R(3, 4)], [m])
    ad_check(lambda lib, x, mask: x.t().masked_fill(mask[:, :3], -1.0), [R(3, 4)], [m])


def test_masked_fill_tensor_value():
    m = np.array([[True, False, True, False]])
    ad_check(lambda lib, x, v, mask: lib.masked_fill(x, mask, v), [R(3, 4), R()], [m])


def test_masked_fill_inplace_tensor_value():
    m = np.array([[True, False, True, False]])
    ad_check(lambda lib, x, v, mask: (x * 1).masked_fill_(mask, v), [R(3, 4), R()], [m])


def test_masked_select_and_scatter():
    m = np.array([[True, False, True, True], [False, True, False, False]])
    ad_check(lambda lib, x, mask: lib.masked_select(x, mask), [R(2, 4)], [m], double=True)
    ad_check(lambda lib, x, mask: lib.masked_select(x, mask), [R(4)], [m])  # broadcast self
    ad_check(lambda lib, x, s, mask: lib.masked_scatter(x, mask, s), [R(2, 4), R(7)], [m])
    ad_check(lambda lib, x, s, mask: lib.masked_scatter(x, mask, s), [R(2, 4), R(2, 4)], [m])
    ad_check(lambda lib, x, mask: lib.masked_select(x, mask), [R(0, 4)],
             [np.zeros((0, 4), bool)])


# ---- in-place ops and the version counter ----


@pytest.mark.parametrize("op", [
    lambda y, i, s: y.index_add_(0, i, s),
    lambda y, i, s: y.index_copy_(0, i, s),
    lambda y, i, s: y.index_fill_(0, i, 1.0),
    lambda y, i, s: y.masked_fill_(y > 0, 1.0),
    lambda y, i, s: y.scatter_add_(0, i[:, None].expand(2, 3), s),
    lambda y, i, s: y.index_put_((i,), s),
    lambda y, i, s: y.put_(i, s[0, :2]),
])
def test_inplace_after_save_is_detected(op):
    def run(lib):
        x = lib.ones(4, 3, dtype=lib.float64, requires_grad=True)
        y = x * 2
        z = y.sin()  # saves y
        i = lib.tensor([0, 2])
        s = lib.ones(2, 3, dtype=lib.float64)
        op(y, i, s)
        with pytest.raises(RuntimeError):
            z.sum().backward()
        return y._version

    assert run(ember) == run(torch)


def test_index_grad_of_undifferentiated_input_is_none():
    tin, ein = _leaves([R(3, 4)])
    for lib, (x,) in ((torch, tin), (ember, ein)):
        out = lib.index_select(x, 0, lib.tensor([1, 2]))
        assert out.grad_fn is not None
        assert "IndexSelectBackward" in out.grad_fn.name()


# Basic indexing of a tensor whose elements alias (expand) records an as_strided view; its
# gradient must count each aliased location once, as torch.
@pytest.mark.parametrize("case", [
    lambda e: e[..., 0],
    lambda e: e[..., :1],
    lambda e: e[:, 1],
    lambda e: e[1:, ::2],
    lambda e: e[None, :, 0],
])
def test_indexing_an_expanded_tensor_backward(case):
    w = [1.0, -2.0, 3.0]
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(w, requires_grad=True)
        e = x.unsqueeze(-1).expand(3, 4)
        out = case(e)
        (out * lib.arange(out.numel(), dtype=lib.float32).reshape(out.shape)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_as_strided_of_an_overlapping_view_backward():
    grads = []
    for lib in (torch, ember):
        x = lib.arange(4.0, requires_grad=True)
        v = x.as_strided((3, 2), (1, 1))  # overlapping windows
        w = v[:, 0]  # indexing the overlapping view
        (w * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
