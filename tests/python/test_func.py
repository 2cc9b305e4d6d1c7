"""ember.func against functorch 1.13 (Debian's python3-torch ships it) and finite differences.

Each case runs the same function, written once against a `lib` argument (torch or ember), under
functorch's transforms and under ember.func, with the same float64 inputs, and compares the
results. Compositions: vmap(grad), grad(grad), jacfwd(jacrev), vmap(vmap), vmap(jvp),
jvp(grad), hessian through ops that save their output, captured tensors that require grad,
in_dims=(None, 0, 0), chunked vmap, functional_call and model ensembles.
"""

import functools
import threading

import numpy as np
import pytest
import torch

import ember
import ember.func as ef

functorch = pytest.importorskip("functorch")

RTOL, ATOL = 1e-7, 1e-9


def _np(t):
    return t.detach().numpy().copy()


def _to_ember(x):
    if isinstance(x, torch.Tensor):
        return ember.from_numpy(_np(x).copy())
    if isinstance(x, (tuple, list)):
        return type(x)(_to_ember(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_ember(v) for k, v in x.items()}
    return x


def _close(e, t, rtol=RTOL, atol=ATOL):
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), (type(e), type(t))
        for a, b in zip(e, t):
            _close(a, b, rtol, atol)
        return
    if isinstance(t, dict):
        assert set(e.keys()) == set(t.keys())
        for k in t:
            _close(e[k], t[k], rtol, atol)
        return
    assert isinstance(e, ember.Tensor), type(e)
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _rand(*shape, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape))


# Functions written against either library.
def mlp_loss(lib, w1, b1, w2, x, y):
    h = lib.tanh(x @ w1.T + b1)
    out = h @ w2.T
    return ((out - y) ** 2).sum()


def softmax_ce(lib, w, x, t):
    logits = x @ w
    return lib.nn.functional.cross_entropy(logits.unsqueeze(0), t.unsqueeze(0))


CASES_VMAP = [
    ("elementwise", lambda lib, x: lib.sin(x) * 2 + x.exp(), (0,), [(5, 3)]),
    ("reduce_dim1", lambda lib, x: x.sum(1), (0,), [(4, 3, 2)]),
    ("mean_keepdim", lambda lib, x: x.mean(-1, keepdim=True), (1,), [(3, 4, 2)]),
    ("softmax", lambda lib, x: lib.softmax(x, dim=0), (0,), [(4, 5)]),
    ("log_softmax_bdim1", lambda lib, x: lib.log_softmax(x, dim=-1), (1,), [(3, 4, 5)]),
    ("matmul_unbatched_w", lambda lib, x, w: x @ w, (0, None), [(6, 4), (4, 3)]),
    ("matmul_both", lambda lib, x, w: lib.matmul(x, w), (0, 0), [(6, 2, 4), (6, 4, 3)]),
    ("bmm", lambda lib, x, w: lib.bmm(x, w), (0, 1), [(5, 2, 3, 4), (2, 5, 4, 3)]),
    ("views", lambda lib, x: x.t().reshape(-1).unsqueeze(0).expand(2, 6), (0,), [(3, 2, 3)]),
    ("transpose_select", lambda lib, x: x.transpose(0, 1)[1], (2,), [(3, 4, 5)]),
    ("cat_stack", lambda lib, x, y: lib.cat([x, y, x], dim=-1), (0, None), [(3, 2), (2,)]),
    ("stack", lambda lib, x, y: lib.stack([x, y]), (1, 0), [(2, 3), (3, 2)]),
    ("where", lambda lib, x, y: lib.where(x > 0, x, y), (0, None), [(4, 3), (3,)]),
    ("max_dim", lambda lib, x: x.max(dim=0)[0] + x.argmax(dim=0), (0,), [(4, 3, 2)]),
    ("sort", lambda lib, x: lib.sort(x, dim=-1)[0], (0,), [(3, 5)]),
    ("cumsum", lambda lib, x: lib.cumsum(x, dim=0), (1,), [(4, 5)]),
    ("index_select", lambda lib, x: x.index_select(0, lib.tensor([2, 0])), (0,), [(3, 4, 2)]),
    ("getitem", lambda lib, x: x[1:, lib.tensor([0, 2])], (0,), [(2, 3, 4)]),
    ("var_std", lambda lib, x: x.var(0) + x.std(), (0,), [(3, 4, 5)]),
    ("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), (0, None, None),
     [(5, 4), (3, 4), (3,)]),
    ("layer_norm", lambda lib, x: lib.nn.functional.layer_norm(x, (4,)), (0,), [(3, 2, 4)]),
    ("conv2d", lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), (0, None),
     [(2, 1, 3, 5, 5), (4, 3, 3, 3)]),
    ("max_pool2d", lambda lib, x: lib.nn.functional.max_pool2d(x, 2), (0,), [(2, 3, 4, 4)]),
    ("logsumexp_norm", lambda lib, x: lib.logsumexp(x, 1) + x.norm(dim=0), (0,), [(2, 3, 3)]),
    ("scalar_out", lambda lib, x: x.sum(), (0,), [(5, 3)]),
    ("gather", lambda lib, x, i: x.gather(0, i), (0, 0), [(3, 4, 5), None]),
    ("vector_norm", lambda lib, x: lib.linalg.vector_norm(x, 3, dim=-1), (1,), [(3, 4, 5)]),
    ("inv_det", lambda lib, a: lib.linalg.inv(a + 4 * lib.eye(3, dtype=a.dtype)).sum(0)
     + lib.linalg.det(a), (0,), [(4, 3, 3)]),
    ("solve_vec", lambda lib, a, b: lib.linalg.solve(a + 4 * lib.eye(3, dtype=a.dtype), b),
     (0, None), [(4, 3, 3), (3,)]),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a + a.mT), (2,), [(3, 3, 5)]),
    ("setitem_index_put", lambda lib, x: x.clone().index_put_((lib.tensor([0, 2]),),
                                                              lib.tensor(1.0, dtype=x.dtype)),
     (0,), [(4, 3, 2)]),
    ("index_add", lambda lib, x, s: x.index_add(0, lib.tensor([0, 2, 0]), s), (0, 0),
     [(5, 3, 2), (5, 3, 2)]),
    ("scatter_add", lambda lib, x: lib.zeros(4, dtype=x.dtype).scatter_add(
        0, lib.tensor([0, 1, 1, 3, 0]), x), (0,), [(3, 5)]),
    ("tril_inplace", lambda lib, x: x.clone().tril_(), (0,), [(2, 4, 4)]),
    ("embedding", lambda lib, i, w: lib.nn.functional.embedding(i, w), (0, None), [None, (6, 3)]),
]


@pytest.mark.parametrize("name,fn,in_dims,shapes", CASES_VMAP, ids=[c[0] for c in CASES_VMAP])
def test_vmap_matches_functorch(name, fn, in_dims, shapes):
    args = []
    for k, s in enumerate(shapes):
        if s is None and name == "embedding":
            args.append(torch.from_numpy(np.random.default_rng(k).integers(0, 6, (3, 4))))
        elif s is None:  # gather's index
            args.append(torch.from_numpy(np.random.default_rng(k).integers(0, 4, (3, 2, 5))))
        else:
            args.append(_rand(*s, seed=k))
    expect = functorch.vmap(functools.partial(fn, torch), in_dims=in_dims)(*args)
    got = ef.vmap(functools.partial(fn, ember), in_dims=in_dims)(*_to_ember(args))
    if isinstance(expect, torch.Tensor) and expect.dtype == torch.int64:
        np.testing.assert_array_equal(_np(got), _np(expect))
    else:
        _close(got, expect)


def test_vmap_out_dims_nested_and_pytrees():
    x, y = _rand(3, 4, 5), _rand(5)

    def f(lib, d):
        return d["x"] * d["y"], d["x"].sum(-1)

    e = ef.vmap(functools.partial(f, ember), in_dims=({"x": 1, "y": None},),
                out_dims=(0, 1))({"x": _to_ember(x), "y": _to_ember(y)})
    t = functorch.vmap(functools.partial(f, torch), in_dims=({"x": 1, "y": None},),
                       out_dims=(0, 1))({"x": x, "y": y})
    _close(e, t)
    # out_dims=None for an output that does not depend on the batch: returned as it is.
    e = ef.vmap(lambda a, b: (a * b, b), in_dims=(0, None), out_dims=(0, None))(
        _to_ember(x), _to_ember(y))
    _close(e[1], y)
    # A dict output with dict out_dims (ember follows torch.func 2.x here).
    g = lambda lib, a: {"s": a.sum(0), "m": a * 2}  # noqa: E731
    e = ef.vmap(functools.partial(g, ember), out_dims={"s": 0, "m": 1})(_to_ember(x))
    _close(e["s"], x.sum(1))
    _close(e["m"], (x * 2).movedim(0, 1))
    # vmap of vmap, different in_dims per level.
    g = lambda lib, a, b: (a * b).sum()  # noqa: E731
    e2 = ef.vmap(ef.vmap(functools.partial(g, ember), in_dims=(0, None)), in_dims=(2, 0))
    t2 = functorch.vmap(functorch.vmap(functools.partial(g, torch), in_dims=(0, None)),
                        in_dims=(2, 0))
    a, b = _rand(3, 5, 4), _rand(4, 5)
    _close(e2(*_to_ember((a, b))), t2(a, b))
    # chunk_size, checked against functorch.experimental.chunk_vmap.
    from functorch.experimental import chunk_vmap
    h = lambda lib, a: lib.tanh(a).cumsum(0)  # noqa: E731
    _close(ef.vmap(functools.partial(h, ember), chunk_size=2)(_to_ember(a)),
           chunk_vmap(functools.partial(h, torch), chunks=2)(a))


def test_per_sample_grads_vmap_grad():
    w1, b1, w2 = _rand(8, 5, seed=1), _rand(8, seed=2), _rand(3, 8, seed=3)
    x, y = _rand(6, 5, seed=4), _rand(6, 3, seed=5)

    def per(lib, vm, gr):
        f = functools.partial(mlp_loss, lib)
        return vm(gr(f, argnums=(0, 1, 2)), in_dims=(None, None, None, 0, 0))

    expect = per(torch, functorch.vmap, functorch.grad)(w1, b1, w2, x, y)
    got = per(ember, ef.vmap, ef.grad)(*_to_ember((w1, b1, w2, x, y)))
    _close(got, expect)
    # in_dims=(None, 0, 0) over a loss with a cross entropy.
    w, xs = _rand(5, 4, seed=6), _rand(7, 5, seed=7)
    t = torch.from_numpy(np.random.default_rng(8).integers(0, 4, 7))
    expect = functorch.vmap(functorch.grad(functools.partial(softmax_ce, torch)),
                            in_dims=(None, 0, 0))(w, xs, t)
    got = ef.vmap(ef.grad(functools.partial(softmax_ce, ember)),
                  in_dims=(None, 0, 0))(*_to_ember((w, xs, t)))
    _close(got, expect)


def test_grad_of_grad_jvp_of_grad_and_has_aux():
    x = _rand(5, seed=9)
    f = lambda lib, a: (lib.sin(a) * a.exp()).sum()  # noqa: E731
    def third(G, lib):
        g1 = G(functools.partial(f, lib))
        g2 = G(lambda b: g1(b).sum())
        return G(lambda a: g2(a).sum())
    _close(third(ef.grad, ember)(_to_ember(x)), third(functorch.grad, torch)(x))
    v = _rand(5, seed=10)
    e = ef.jvp(ef.grad(functools.partial(f, ember)), (_to_ember(x),), (_to_ember(v),))
    t = functorch.jvp(functorch.grad(functools.partial(f, torch)), (x,), (v,))
    _close(e, t)
    g = lambda lib, a: ((a ** 2).sum(), {"m": a.mean()})  # noqa: E731
    e = ef.grad_and_value(functools.partial(g, ember), has_aux=True)(_to_ember(x))
    t = functorch.grad_and_value(functools.partial(g, torch), has_aux=True)(x)
    _close(e, t)


def test_vmap_of_jvp_and_vjp():
    x, t = _rand(4, 3, seed=11), _rand(4, 3, seed=12)
    f = lambda lib, a: lib.tanh(a) * a  # noqa: E731
    e = ef.vmap(lambda a, b: ef.jvp(functools.partial(f, ember), (a,), (b,)))(*_to_ember((x, t)))
    tt = functorch.vmap(lambda a, b: functorch.jvp(functools.partial(f, torch), (a,), (b,)))(x, t)
    _close(e, tt)
    out_e, fn_e = ef.vjp(functools.partial(f, ember), _to_ember(x))
    out_t, fn_t = functorch.vjp(functools.partial(f, torch), x)
    _close(out_e, out_t)
    _close(fn_e(_to_ember(t)), fn_t(t))


@pytest.mark.parametrize("op", ["tanh", "exp", "sigmoid", "softmax"])
def test_hessian_through_saved_outputs(op):
    x = _rand(6, seed=13) * 0.5

    def f(lib, a):
        y = lib.softmax(a, 0) if op == "softmax" else getattr(lib, op)(a)
        return (y * lib.arange(6, dtype=a.dtype)).sum()

    # functorch 1.13 has no forward AD for softmax's backward: its jacrev(jacrev) is the oracle.
    outer = functorch.jacrev if op == "softmax" else functorch.jacfwd
    expect = outer(functorch.jacrev(functools.partial(f, torch)))(x)
    _close(ef.hessian(functools.partial(f, ember))(_to_ember(x)), expect)
    _close(ef.jacfwd(ef.jacrev(functools.partial(f, ember)))(_to_ember(x)), expect)
    _close(ef.jacrev(ef.jacrev(functools.partial(f, ember)))(_to_ember(x)), expect)
    # Finite differences of the gradient.
    g = ef.grad(functools.partial(f, ember))
    h = ef.hessian(functools.partial(f, ember))(_to_ember(x))
    eps = 1e-6
    for i in range(3):
        d = np.zeros(6)
        d[i] = eps
        fd = (_np(g(_to_ember(x + torch.from_numpy(d)))) -
              _np(g(_to_ember(x - torch.from_numpy(d))))) / (2 * eps)
        np.testing.assert_allclose(_np(h)[:, i], fd, rtol=1e-5, atol=1e-7)


def test_jacrev_jacfwd_multiple_args_and_outputs():
    a, b = _rand(3, seed=14), _rand(2, 3, seed=15)
    f = lambda lib, x, y: (y @ x, (x * x).sum())  # noqa: E731
    for ej, tj in [(ef.jacrev, functorch.jacrev), (ef.jacfwd, functorch.jacfwd)]:
        _close(ej(functools.partial(f, ember), argnums=(0, 1))(*_to_ember((a, b))),
               tj(functools.partial(f, torch), argnums=(0, 1))(a, b))


def test_captured_tensor_that_requires_grad():
    w = _rand(4, seed=16)
    x = _rand(4, seed=17)
    tw = w.clone().requires_grad_()
    ew = _to_ember(w).requires_grad_()
    gt = functorch.grad(lambda a: (tw * a.sin()).sum())(x)
    ge = ef.grad(lambda a: (ew * a.sin()).sum())(_to_ember(x))
    _close(ge, gt)
    gt.sum().backward()
    ge.sum().backward()
    _close(ew.grad, tw.grad)
    # A tensor created inside a transform gets ordinary autograd.
    def inner(a):
        z = ember.ones(4, dtype=ember.float64, requires_grad=True)
        (gz,) = ember.autograd.grad((z * a).sum(), z)
        return (gz * a).sum()
    _close(ef.grad(inner)(_to_ember(x)), 2 * x)


def test_functional_call_and_ensembles():
    torch.manual_seed(0)
    tm = [torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
          .double() for _ in range(8)]
    em = []
    for m in tm:
        e = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 2))
        e = e.double()
        e.load_state_dict({k: _to_ember(v) for k, v in m.state_dict().items()})
        em.append(e)
    x = _rand(5, 4, seed=18)
    # functional_call with a partial dict leaves the rest, and the module untouched.
    new_w = _rand(8, 4, seed=19)
    t = torch.nn.utils.stateless.functional_call(tm[0], {"0.weight": new_w}, (x,))
    before = _np(em[0][0].weight)
    e = ef.functional_call(em[0], {"0.weight": _to_ember(new_w)}, (_to_ember(x),))
    _close(e, t)
    np.testing.assert_array_equal(_np(em[0][0].weight), before)
    # stack_module_state + vmap over the models equals separate runs.
    params, buffers = ef.stack_module_state(em)
    base = em[0]
    out = ef.vmap(lambda p, b, xx: ef.functional_call(base, (p, b), (xx,)),
                  in_dims=(0, 0, None))(params, buffers, _to_ember(x))
    for k in range(8):
        _close(out[k], tm[k](x))
    tp, tb = functorch.combine_state_for_ensemble(tm)[1:]
    for (name, v), tv in zip(sorted(params.items()), [None] * len(params)):
        assert v.shape[0] == 8
    assert len(tp) == len(params)


def test_errors():
    x = ember.randn(3, 4)
    with pytest.raises(RuntimeError, match="random"):
        ef.vmap(lambda a: a + ember.randn(4))(x)
    with pytest.raises(RuntimeError):
        ef.vmap(lambda a: a.nonzero())(x)
    with pytest.raises(RuntimeError):
        ef.vmap(lambda a: a.sum().item())(x)
    with pytest.raises(RuntimeError):
        ef.vmap(lambda a: print(a))(x)
    with pytest.raises(RuntimeError):
        ef.vmap(lambda a: a.sum().backward())(x.requires_grad_())
    x = x.detach()
    with pytest.raises(RuntimeError, match="inplace"):
        ef.vmap(lambda a: ember.zeros(4).add_(a))(x)
    with pytest.raises(ValueError):
        ef.vmap(lambda a: a, in_dims=2)(ember.randn(3))
    with pytest.raises(ValueError):
        ef.vmap(lambda a, b: a + b)(ember.randn(3), ember.randn(4))
    with pytest.raises(RuntimeError, match="scalar"):
        ef.grad(lambda a: a * 2)(x)
    box = []
    ef.vmap(lambda a: box.append(a) or a)(x)
    with pytest.raises(RuntimeError, match="escaped|outside the vmap"):
        box[0] + 1

    class NoVmap(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    with pytest.raises(RuntimeError):
        ef.vmap(NoVmap.apply)(x)
    # Randomness modes.
    d = ef.vmap(lambda a: a + ember.rand_like(a), randomness="different")(ember.zeros(4, 3))
    assert not np.allclose(_np(d[0]), _np(d[1]))
    s = ef.vmap(lambda a: a + ember.rand_like(a), randomness="same")(ember.zeros(4, 3))
    np.testing.assert_array_equal(_np(s[0]), _np(s[1]))
    # Factories with no tensor input follow the mode too (functorch's rules).
    d = ef.vmap(lambda a: a + ember.randn(3), randomness="different")(ember.zeros(4, 3))
    assert not np.allclose(_np(d[0]), _np(d[1]))
    s = ef.vmap(lambda a: a + ember.randn(3), randomness="same")(ember.zeros(4, 3))
    np.testing.assert_array_equal(_np(s[0]), _np(s[1]))
    d = ef.vmap(lambda a: a + ember.randint(0, 1000, (3,)), randomness="different")(
        ember.zeros(4, 3, dtype=ember.int64))
    assert d.dtype == ember.int64 and not np.array_equal(_np(d[0]), _np(d[1]))
    # Depth limit and thread-local state.
    def nest(a, n):
        return a.sin().sum() if n == 0 else ef.grad(lambda b: nest(b, n - 1))(a).sum()
    with pytest.raises(RuntimeError, match="64"):
        nest(ember.randn(2), 65)
    seen = []
    def body(a):
        th = threading.Thread(target=lambda: seen.append(ember._C._func.transform_depth()))
        th.start()
        th.join()
        return a
    ef.vmap(body)(x)
    assert seen == [0]


def test_autograd_functional():
    from ember.autograd import functional as F
    x = _rand(3, seed=20)
    f = lambda lib, a: lib.tanh(a).pow(2).sum()  # noqa: E731
    g = lambda lib, a: lib.tanh(a) * 2  # noqa: E731
    v = _rand(3, seed=21)
    import torch.autograd.functional as TF
    _close(F.jacobian(functools.partial(g, ember), _to_ember(x)),
           TF.jacobian(functools.partial(g, torch), x))
    _close(F.hessian(functools.partial(f, ember), _to_ember(x)),
           TF.hessian(functools.partial(f, torch), x))
    _close(F.vjp(functools.partial(g, ember), _to_ember(x), _to_ember(v)),
           TF.vjp(functools.partial(g, torch), x, v))
    _close(F.jvp(functools.partial(g, ember), _to_ember(x), _to_ember(v)),
           TF.jvp(functools.partial(g, torch), x, v))
    _close(F.hvp(functools.partial(f, ember), _to_ember(x), _to_ember(v)),
           TF.hvp(functools.partial(f, torch), x, v))
    _close(F.vhp(functools.partial(f, ember), _to_ember(x), _to_ember(v)),
           TF.vhp(functools.partial(f, torch), x, v))


def test_batching_rule_coverage_is_listed():
    covered, loops, missing = ember._C._func.batching_coverage()
    assert len(covered) > 100
    # Every primitive without a rule is named here; a new primitive must get a rule or be added.
    import pathlib
    listed = set((pathlib.Path(__file__).parent / "vmap_missing_rules.txt").read_text().split())
    assert set(missing) == listed, (sorted(set(missing) - listed), sorted(listed - set(missing)))


def test_setitem_getitem_under_vmap():
    x = _rand(4, 3, 5, seed=30)
    idx = torch.tensor([2, 0])

    def f(lib, a, i):
        b = a.clone()
        b[1, i] = 7.0
        b[..., 0] = a[..., 1] * 2
        return b[:, i] + a[i].sum()

    for dims in [(0, None), (1, None), (0, 0)]:
        ii = torch.stack([idx, idx.flip(0), idx, idx]) if dims[1] == 0 else idx
        _close(ef.vmap(functools.partial(f, ember), in_dims=dims)(_to_ember(x), _to_ember(ii)),
               functorch.vmap(functools.partial(f, torch), in_dims=dims)(x, ii))


def test_batch_norm_rules():
    x = _rand(3, 4, 2, 5, seed=31)  # vmap over 3, N=4, C=2
    for training in (True, False):
        tm = torch.nn.BatchNorm1d(2, track_running_stats=False).double()
        em = ember.nn.BatchNorm1d(2, track_running_stats=False).double()
        tm.train(training)
        em.train(training)
        if training:
            _close(ef.vmap(em)(_to_ember(x)), functorch.vmap(tm)(x))
    # Training with running statistics: the unbatched buffers cannot take batched updates.
    em = ember.nn.BatchNorm1d(2).double()
    with pytest.raises(RuntimeError, match="running"):
        ef.vmap(em)(_to_ember(x))
    # Eval with running statistics is a plain per-sample map.
    tm = torch.nn.BatchNorm1d(2).double().eval()
    em = ember.nn.BatchNorm1d(2).double().eval()
    _close(ef.vmap(em)(_to_ember(x)), functorch.vmap(tm)(x))
