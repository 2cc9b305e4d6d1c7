"""ember.nested against torch 1.13's torch.nested prototype and against the same computation
done component by component on dense tensors: construction (ragged lists, no components,
zero-size and 0-dim components, dtype/device/requires_grad), metadata and its errors,
to_padded_tensor (padding value, output_size), elementwise and structured ops, gradients to the
buffer and to as_nested_tensor's inputs, and bad input by exception type."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F

warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")

SHAPES = [(2, 3), (4, 3), (0, 3), (1, 3)]


def arrays(shapes=SHAPES, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def both(arrs, requires_grad=False):
    """(ember nested, torch nested) of the same components."""
    e = ember.nested.nested_tensor([ember.tensor(a) for a in arrs], requires_grad=requires_grad)
    t = torch.nested.nested_tensor([torch.tensor(a) for a in arrs], requires_grad=requires_grad)
    return e, t


def np_of(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else x.detach().cpu().numpy()


def assert_same(e, t, tol=1e-5):
    """An ember nested tensor equals a torch nested tensor (or list of tensors)."""
    ec = e.unbind()
    tc = t.unbind() if isinstance(t, torch.Tensor) else t
    assert len(ec) == len(tc)
    for a, b in zip(ec, tc):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(np_of(a), np_of(b), rtol=tol, atol=tol)


# ---- construction and metadata ----

def test_construction_ragged_matches_torch():
    e, t = both(arrays())
    assert e.is_nested and t.is_nested
    assert not ember.zeros(2).is_nested
    assert e.dim() == t.dim() == 3
    assert e.ndim == 3
    assert e.numel() == t.numel()
    assert e.size(0) == t.size(0) == 4
    assert e.size(2) == t.size(2) == 3
    assert e.size(-1) == 3
    assert e.dtype == ember.float32
    assert str(e.device) == "cpu"
    assert not e.requires_grad and e.is_leaf
    assert_same(e, t)
    assert [tuple(c.shape) for c in e] == SHAPES
    np.testing.assert_array_equal(e[1].numpy(), arrays()[1])
    np.testing.assert_array_equal(e[-1].numpy(), arrays()[-1])
    np.testing.assert_array_equal(e._nested_tensor_size().numpy(), np.array(SHAPES))


def test_construction_copies_and_detaches():
    src = [ember.ones(2, 3, requires_grad=True), ember.zeros(1, 3)]
    nt = ember.nested.nested_tensor(src)
    assert not nt.requires_grad and nt.is_leaf
    with ember.no_grad():
        src[1].fill_(5.0)
    assert float(nt[1].sum()) == 0.0


def test_construction_edge_cases_match_torch():
    for comps in ([], [np.float32(1.5), np.float32(2.5)], [np.zeros((0, 3), np.float32)],
                  [np.zeros((0,), np.float32), np.ones((3,), np.float32)]):
        e, t = both([np.asarray(c) for c in comps])
        assert e.dim() == t.dim()
        assert e.size(0) == t.size(0)
        assert_same(e, t)
    e, t = both([])
    assert tuple(e.to_padded_tensor(0.0).shape) == tuple(torch.nested.to_padded_tensor(t, 0.).shape)
    e0 = ember.nested.nested_tensor([ember.tensor(1.5), ember.tensor(2.5)])
    np.testing.assert_array_equal(e0.to_padded_tensor(0).numpy(), [1.5, 2.5])


def test_dtype_device_requires_grad_options():
    a = [np.arange(3), np.arange(2)]
    e = ember.nested.nested_tensor([ember.tensor(x) for x in a])
    t = torch.nested.nested_tensor([torch.tensor(x) for x in a])
    assert_same(e, t)
    e = ember.nested.nested_tensor([ember.tensor(x) for x in a], dtype=ember.float64,
                                   device="cpu")
    assert e.dtype == ember.float64
    # Mixed dtypes: the first component's dtype, as torch 1.13.
    mixed_e = ember.nested.nested_tensor([ember.ones(2), ember.ones(2, dtype=ember.float64)])
    mixed_t = torch.nested.nested_tensor([torch.ones(2), torch.ones(2, dtype=torch.float64)])
    assert_same(mixed_e, mixed_t)
    r = ember.nested.nested_tensor([ember.ones(2, 3)], requires_grad=True)
    assert r.requires_grad and r.is_leaf
    assert "requires_grad=True" in repr(r)


def test_bad_construction_types():
    with pytest.raises(RuntimeError):
        torch.nested.nested_tensor([torch.zeros(2), torch.zeros(2, 3)])
    with pytest.raises(RuntimeError, match="same dimension"):
        ember.nested.nested_tensor([ember.zeros(2), ember.zeros(2, 3)])
    with pytest.raises(RuntimeError):
        ember.nested.as_nested_tensor([ember.zeros(2), ember.zeros(2, 3)])
    for bad in (ember.zeros(2, 3), [[1.0, 2.0]], [ember.zeros(2), 3], (ember.zeros(2),)):
        with pytest.raises(TypeError):
            ember.nested.nested_tensor(bad)
    with pytest.raises(TypeError):
        torch.nested.nested_tensor((torch.zeros(2),))
    with pytest.raises(RuntimeError):
        ember.nested.nested_tensor([ember.arange(3)], requires_grad=True)


def test_size_and_unbind_errors_match_torch():
    e, t = both(arrays())
    for call in (lambda x: x.size(1), lambda x: x.size(), lambda x: x.unbind(1)):
        with pytest.raises(RuntimeError):
            call(t)
        with pytest.raises(RuntimeError):
            call(e)
    for call in (lambda x: x.size(3), lambda x: x[4], lambda x: x[-5]):
        with pytest.raises(IndexError):
            call(t)
        with pytest.raises(IndexError):
            call(e)


def test_repr_lists_components():
    e = ember.nested.nested_tensor([ember.ones(1, 2), ember.zeros(1)[None]])
    r = repr(e)
    assert r.startswith("nested_tensor([\n  tensor(") and r.endswith("\n])")
    assert r.count("  tensor(") == 2
    # Same text as torch for the same values.
    e, t = both([np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((1, 3), np.float32)])
    assert repr(e) == repr(t)
    assert repr(ember.nested.nested_tensor([])) == "nested_tensor([\n\n])"
    g = ember.nested.as_nested_tensor([ember.ones(2, requires_grad=True)])
    assert "grad_fn=<" in repr(g)


# ---- to_padded_tensor ----

@pytest.mark.parametrize("padding", [0.0, -1.5])
def test_to_padded_matches_torch(padding):
    shapes_sets = [SHAPES, [(2, 3), (1, 4)], [(2, 1, 3), (1, 2, 2)], [(3,), (1,), (0,)]]
    for shapes in shapes_sets:
        e, t = both(arrays(shapes))
        want = torch.nested.to_padded_tensor(t, padding)
        got = ember.nested.to_padded_tensor(e, padding)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(e.to_padded_tensor(padding).numpy(), want.numpy())
        big = tuple(s + k for k, s in enumerate(want.shape))
        want_big = torch.nested.to_padded_tensor(t, padding, big)
        np.testing.assert_array_equal(ember.nested.to_padded_tensor(e, padding, big).numpy(),
                                      want_big.numpy())
        np.testing.assert_array_equal(e.to_padded_tensor(padding, list(big)).numpy(),
                                      want_big.numpy())


def test_to_padded_integer_and_errors():
    e = ember.nested.nested_tensor([ember.arange(3), ember.arange(1)])
    t = torch.nested.nested_tensor([torch.arange(3), torch.arange(1)])
    np.testing.assert_array_equal(e.to_padded_tensor(7).numpy(),
                                  torch.nested.to_padded_tensor(t, 7).numpy())
    e, t = both(arrays())
    for size in [(4, 3, 3), (4, 4)]:
        with pytest.raises(RuntimeError):
            torch.nested.to_padded_tensor(t, 0.0, size)
        with pytest.raises(RuntimeError):
            ember.nested.to_padded_tensor(e, 0.0, size)
    with pytest.raises(NotImplementedError):
        torch.nested.to_padded_tensor(torch.zeros(2), 0.0)
    with pytest.raises(NotImplementedError):
        ember.nested.to_padded_tensor(ember.zeros(2), 0.0)


# ---- ops supported by torch 1.13: compare with torch ----

def test_ops_match_torch():
    e, t = both(arrays())
    e2, t2 = both(arrays(seed=1))
    cases = [
        (lambda x, y: x.relu(), lambda x, y: x.relu()),
        (lambda x, y: F.relu(x), lambda x, y: TF.relu(x)),
        (lambda x, y: F.gelu(x), lambda x, y: TF.gelu(x)),
        (lambda x, y: F.gelu(x, approximate="tanh"), lambda x, y: TF.gelu(x, approximate="tanh")),
        (lambda x, y: x + y, lambda x, y: x + y),
        (lambda x, y: x * y, lambda x, y: x * y),
        (lambda x, y: ember.add(x, y, alpha=2), lambda x, y: torch.add(x, y, alpha=2)),
        (lambda x, y: ember.mul(x, y), lambda x, y: torch.mul(x, y)),
        (lambda x, y: x + 1.5, lambda x, y: x + 1.5),
        (lambda x, y: 2 + x, lambda x, y: 2 + x),
        (lambda x, y: x * 3, lambda x, y: x * 3),
        (lambda x, y: -2 * x, lambda x, y: -2 * x),
        (lambda x, y: x * ember.tensor(2.0), lambda x, y: x * torch.tensor(2.0)),
        (lambda x, y: x.softmax(-1), lambda x, y: x.softmax(-1)),
        (lambda x, y: x.softmax(1), lambda x, y: x.softmax(1)),
        (lambda x, y: F.softmax(x, 2), lambda x, y: TF.softmax(x, 2)),
        (lambda x, y: ember.softmax(x, -1), lambda x, y: torch.softmax(x, -1)),
        (lambda x, y: x.transpose(1, 2), lambda x, y: x.transpose(1, 2)),
        (lambda x, y: x.transpose(-1, -2), lambda x, y: x.transpose(-1, -2)),
        (lambda x, y: F.dropout(x, 0.3, training=False), lambda x, y: TF.dropout(x, 0.3, False)),
        (lambda x, y: x.clone(), lambda x, y: x.clone()),
        (lambda x, y: x.detach(), lambda x, y: x.detach()),
    ]
    for fe, ft in cases:
        assert_same(fe(e, e2), ft(t, t2))
    # Results stay nested.
    assert (e + e2).is_nested and F.gelu(e).is_nested


def test_linear_matmul_bmm_match_torch():
    rng = np.random.default_rng(3)
    e, t = both(arrays())
    w = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    assert_same(F.linear(e, ember.tensor(w), ember.tensor(b)),
                TF.linear(t, torch.tensor(w), torch.tensor(b)), 1e-5)
    assert_same(F.linear(e, ember.tensor(w)), TF.linear(t, torch.tensor(w)), 1e-5)
    other = arrays([(3, 2), (3, 5), (3, 1), (3, 4)], seed=4)
    oe, ot = both(other)
    assert_same(ember.matmul(e, oe), torch.matmul(t, ot), 1e-5)
    assert_same(e @ oe, t @ ot, 1e-5)
    assert_same(ember.bmm(e, oe), torch.bmm(t, ot), 1e-5)
    assert_same(e.bmm(oe), t.bmm(ot), 1e-5)
    # 4-D nested tensors: matmul per component, batch dims equal.
    e4, t4 = both(arrays([(2, 3, 4), (2, 1, 4)], seed=5))
    o4, p4 = both(arrays([(2, 4, 2), (2, 4, 3)], seed=6))
    assert_same(ember.matmul(e4, o4), torch.matmul(t4, p4), 1e-5)


def test_errors_match_torch():
    e, t = both(arrays())
    oe, ot = both(arrays([(2, 3), (4, 4), (0, 3), (1, 3)]))
    se, st = both(arrays([(2, 3)]))
    ie, it = both(arrays([(2, 3), (2, 4)]))
    ew, tw = ember.ones(5, 4), torch.ones(5, 4)
    cases = [
        (RuntimeError, lambda: e + oe, lambda: t + ot),
        (RuntimeError, lambda: e * se, lambda: t * st),
        (RuntimeError, lambda: e + ew[0, :3], lambda: t + tw[0, :3]),
        (RuntimeError, lambda: e.softmax(0), lambda: t.softmax(0)),
        (RuntimeError, lambda: F.softmax(e, 0), lambda: TF.softmax(t, 0)),
        (IndexError, lambda: e.softmax(3), lambda: t.softmax(3)),
        (RuntimeError, lambda: e.transpose(0, 1), lambda: t.transpose(0, 1)),
        (IndexError, lambda: e.transpose(1, 3), lambda: t.transpose(1, 3)),
        (RuntimeError, lambda: F.linear(e, ew), lambda: TF.linear(t, tw)),
        (RuntimeError, lambda: F.linear(ie, ember.ones(5, 3)),
         lambda: TF.linear(it, torch.ones(5, 3))),
        (RuntimeError, lambda: F.linear(e, ember.ones(3)), lambda: TF.linear(t, torch.ones(3))),
        (RuntimeError, lambda: e @ se, lambda: t @ st),
        (RuntimeError, lambda: e @ oe, lambda: t @ ot),
        (RuntimeError, lambda: ember.bmm(e, oe), lambda: torch.bmm(t, ot)),
        (RuntimeError, lambda: ew[:, :2] @ e, lambda: tw[:, :2] @ t),
        (RuntimeError, lambda: ember.matmul(ew[:, :2], e), lambda: torch.matmul(tw[:, :2], t)),
        (RuntimeError, lambda: e @ ew, lambda: t @ tw),
        (RuntimeError, lambda: ember.bmm(ember.nested.nested_tensor([ember.ones(1, 2, 3)]),
                                         ember.nested.nested_tensor([ember.ones(1, 3, 2)])),
         lambda: torch.bmm(torch.nested.nested_tensor([torch.ones(1, 2, 3)]),
                           torch.nested.nested_tensor([torch.ones(1, 3, 2)]))),
        (ValueError, lambda: F.dropout(e, 1.5), lambda: TF.dropout(t, 1.5)),
        (RuntimeError, lambda: ie.to_padded_tensor(0, (2, 1, 4)),
         lambda: torch.nested.to_padded_tensor(it, 0, (2, 1, 4))),
    ]
    for exc, fe, ft in cases:
        with pytest.raises(exc):
            ft()
        with pytest.raises(exc):
            fe()
    # ember also takes a dense (n, K, N) batch; its first dim must be the number of components.
    with pytest.raises(RuntimeError):
        ember.bmm(e, ember.ones(3, 3, 2))


def test_unsupported_ops_raise_not_implemented():
    e, t = both(arrays())
    for name, args in (("sum", ()), ("mean", ()), ("cumsum", (1,)), ("unsqueeze", (0,)),
                       ("exp_", ())):
        with pytest.raises(NotImplementedError):
            getattr(t, name)(*args)
        with pytest.raises(NotImplementedError, match=f"{name} is not supported for nested"):
            getattr(e, name)(*args)
    with pytest.raises(RuntimeError):
        t.shape
    with pytest.raises(RuntimeError):
        e.shape
    with pytest.raises(AttributeError):
        e.no_such_method


# ---- ops beyond torch 1.13: compare with the dense computation per component ----

def per_component(e, fn):
    return [fn(c) for c in e.unbind()]


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "neg", "abs", "exp", "sin", "silu",
                                  "square", "floor"])
def test_unary_methods_and_functions_vs_dense(name):
    e, _ = both(arrays())
    want = per_component(e, getattr(ember, name))
    assert_same(getattr(e, name)(), want)
    if name in ("tanh", "sigmoid", "neg", "abs", "exp"):
        assert_same(getattr(ember, name)(e), want)


def test_binary_and_reflected_vs_dense():
    e, _ = both(arrays())
    e2, _ = both(arrays(seed=1))
    pairs = list(zip(e.unbind(), e2.unbind()))
    assert_same(e - e2, [a - b for a, b in pairs])
    assert_same(e / (e2.abs() + 1), [a / (b.abs() + 1) for a, b in pairs])
    assert_same(ember.sub(e, e2, alpha=3), [a - 3 * b for a, b in pairs])
    assert_same(ember.div(e, 4), [a / 4 for a, _ in pairs])
    assert_same(1 - e, [1 - a for a, _ in pairs])
    assert_same(2 / (e.abs() + 1), [2 / (a.abs() + 1) for a, _ in pairs])
    assert_same(e - 0.5, [a - 0.5 for a, _ in pairs])
    assert_same(-e, [-a for a, _ in pairs])
    # Mixed dtypes promote as dense tensors do.
    d = ember.nested.nested_tensor([c.double() for c in e2.unbind()])
    r = e + d
    assert r.dtype == ember.float64
    # In-place forms write the buffer.
    c = e.clone()
    c.add_(e2)
    c.mul_(2)
    assert_same(c, [(a + b) * 2 for a, b in pairs])


def test_structured_ops_vs_dense():
    rng = np.random.default_rng(7)
    e, _ = both(arrays())
    w = ember.tensor(rng.standard_normal((3, 6)).astype(np.float32))
    assert_same(ember.matmul(e, w), per_component(e, lambda c: ember.matmul(c, w)), 1e-5)
    assert_same(e @ w, per_component(e, lambda c: c @ w), 1e-5)
    ln_w = ember.tensor(rng.standard_normal(3).astype(np.float32))
    ln_b = ember.tensor(rng.standard_normal(3).astype(np.float32))
    assert_same(F.layer_norm(e, (3,), ln_w, ln_b, 1e-3),
                per_component(e, lambda c: F.layer_norm(c, (3,), ln_w, ln_b, 1e-3)), 1e-5)
    assert_same(ember.layer_norm(e, [3]), per_component(e, lambda c: F.layer_norm(c, [3])), 1e-5)
    assert_same(F.log_softmax(e, -1), per_component(e, lambda c: F.log_softmax(c, -1)), 1e-5)
    assert_same(e.log_softmax(1), per_component(e, lambda c: c.log_softmax(0)), 1e-5)
    assert_same(F.softmax(e, -1, dtype=ember.float64),
                per_component(e, lambda c: F.softmax(c, -1, dtype=ember.float64)), 1e-6)
    # Ragged last dims: softmax and transpose go component by component.
    r, _ = both(arrays([(2, 3), (2, 5)]))
    assert_same(F.softmax(r, -1), per_component(r, lambda c: F.softmax(c, -1)), 1e-6)
    assert_same(r.transpose(1, 2), per_component(r, lambda c: c.t()))
    # 4-D: layer_norm over two dims, transpose of the outer ones.
    e4, _ = both(arrays([(2, 3, 4), (5, 3, 4)]))
    assert_same(F.layer_norm(e4, (3, 4)), per_component(e4, lambda c: F.layer_norm(c, (3, 4))),
                1e-5)
    assert_same(e4.transpose(1, 3), per_component(e4, lambda c: c.transpose(0, 2)))
    with pytest.raises(RuntimeError):
        F.layer_norm(e, (4,))
    # Dense (n, K, N) batch.
    b = ember.tensor(rng.standard_normal((4, 3, 2)).astype(np.float32))
    assert_same(ember.bmm(e, b), [c @ b[i] for i, c in enumerate(e.unbind())], 1e-5)


def test_dropout_training_statistics():
    ember.manual_seed(0)
    e = ember.nested.nested_tensor([ember.ones(300, 10), ember.ones(100, 10)])
    d = F.dropout(e, 0.25)
    v = d._buffer().numpy()
    assert np.all((v == 0) | np.isclose(v, 1.0 / 0.75))
    kept = (v != 0).mean()
    # 4000 Bernoulli(0.75) draws: sd of the mean is 0.0068; 6 sigma.
    assert abs(kept - 0.75) < 0.041
    assert [tuple(c.shape) for c in d] == [(300, 10), (100, 10)]
    assert F.dropout(e, 0.25, training=False)._buffer().numpy().min() == 1.0


# ---- autograd ----

def test_gradients_to_as_nested_inputs_match_torch():
    arrs = arrays([(2, 3), (4, 3), (1, 3)])
    rng = np.random.default_rng(9)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    g = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ein = [ember.tensor(a, requires_grad=True) for a in arrs]
    tin = [torch.tensor(a, requires_grad=True) for a in arrs]
    ew, tw = ember.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    en = ember.nested.as_nested_tensor(ein)
    tn = torch.nested.as_nested_tensor(tin)
    assert en.requires_grad and not en.is_leaf and en.grad_fn is not None
    # torch 1.13 differentiates linear, add and to_padded_tensor of nested tensors.
    eo = F.linear(en, ew) + en.bmm(ember.nested.nested_tensor([ember.ones(3, 5)] * 3))
    to = TF.linear(tn, tw) + tn.bmm(torch.nested.nested_tensor([torch.ones(3, 5)] * 3))
    ember.nested.to_padded_tensor(eo, 0.0).mul(ember.tensor(g)).sum().backward()
    torch.nested.to_padded_tensor(to, 0.0).mul(torch.tensor(g)).sum().backward()
    for a, b in zip(ein, tin):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-5)
    # relu and a scalar product, against the dense computation per component.
    ein2 = [ember.tensor(a, requires_grad=True) for a in arrs]
    ref = [ember.tensor(a, requires_grad=True) for a in arrs]
    out = F.relu(F.linear(ember.nested.as_nested_tensor(ein2), ember.tensor(w))) * 2
    ember.nested.to_padded_tensor(out, 0.0).mul(ember.tensor(g)).sum().backward()
    sum((F.relu(F.linear(c, ember.tensor(w))) * 2 * ember.tensor(g[i, :c.shape[0]])).sum()
        for i, c in enumerate(ref)).backward()
    for a, b in zip(ein2, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_gradients_to_buffer_match_torch():
    e, t = both(arrays([(2, 3), (1, 3)]), requires_grad=True)
    (ember.nested.to_padded_tensor(e.softmax(-1) * 3, 0.0) ** 2).sum().backward()
    (torch.nested.to_padded_tensor(t.softmax(-1) * 3, 0.0) ** 2).sum().backward()
    assert e.grad.is_nested
    assert_same(e.grad, t.grad, 1e-5)
    # backward from a nested result with a nested gradient, as torch.
    e2, t2 = both(arrays([(2, 3), (1, 3)]), requires_grad=True)
    ge, gt = both(arrays([(2, 3), (1, 3)], seed=11))
    (e2 * 2).backward(ge)
    (t2 * 2).backward(gt)
    assert_same(e2.grad, t2.grad)


def test_gradients_through_ops_beyond_torch():
    arrs = arrays([(2, 3), (3, 3)])
    ein = [ember.tensor(a.astype(np.float64), requires_grad=True) for a in arrs]
    ref = [ember.tensor(a.astype(np.float64), requires_grad=True) for a in arrs]
    w = ember.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=ember.float64)
    out = F.layer_norm(ember.matmul(ember.nested.as_nested_tensor(ein), w).tanh(), (4,))
    ember.nested.to_padded_tensor(out.transpose(1, 2), 0.0).pow(2).sum().backward()
    sum(F.layer_norm(ember.matmul(c, w).tanh(), (4,)).pow(2).sum() for c in ref).backward()
    for a, b in zip(ein, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_from_padded_round_trip():
    rng = np.random.default_rng(12)
    padded = ember.tensor(rng.standard_normal((3, 4, 2)).astype(np.float32))
    mask = ember.tensor(np.array([[0, 0, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]], dtype=bool))
    nt = ember._C._nested.from_padded(padded, mask)
    assert [tuple(c.shape) for c in nt] == [(3, 2), (1, 2), (0, 2)]
    back = nt.to_padded_tensor(0.0, (3, 4, 2))
    want = padded.numpy() * (~mask.numpy())[..., None]
    np.testing.assert_array_equal(back.numpy(), want)


def test_dense_calls_unchanged():
    x = ember.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    w = ember.ones(4, 3)
    np.testing.assert_allclose(F.linear(x, w).numpy(), x.numpy() @ np.ones((3, 4)))
    np.testing.assert_allclose(ember.matmul(x, x.t()).numpy(), x.numpy() @ x.numpy().T)
    np.testing.assert_allclose(ember.add(x, 1, alpha=2).numpy(), x.numpy() + 2)
    np.testing.assert_allclose(F.softmax(x, -1).sum(-1).numpy(), [1, 1], rtol=1e-6)
    np.testing.assert_allclose(ember.relu(x - 2).numpy(), np.maximum(x.numpy() - 2, 0))
    # Dense errors keep their types.
    with pytest.raises(RuntimeError):
        ember.matmul(x, x)
    with pytest.raises(TypeError):
        F.linear("x", w)
    assert not x.is_nested
