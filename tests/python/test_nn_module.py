"""ember.nn.Module and Parameter against torch.nn.Module (PyTorch 1.13): registration through
attribute assignment, traversal order, state_dict keys, load_state_dict errors, hooks, repr,
conversions and the exact exception types."""

from collections import OrderedDict

import pytest
import torch

import ember
import ember.nn as enn


def build(nn, lib):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.ones(3, 2))
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)
            self.plain = 5

        def forward(self, x):
            return x @ self.w

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.full((1,), 2.0))
            self.block = Block()
            self.empty = None
            self.register_parameter("missing", None)

        def forward(self, x):
            return self.block(x) * self.scale

    return Net()


def test_registration_and_order():
    e, t = build(enn, ember), build(torch.nn, torch)
    assert [k for k, _ in e.named_parameters()] == [k for k, _ in t.named_parameters()]
    assert [k for k, _ in e.named_buffers()] == [k for k, _ in t.named_buffers()]
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    assert [k for k, _ in e.named_modules()] == [k for k, _ in t.named_modules()]
    assert [k for k, _ in e.named_children()] == [k for k, _ in t.named_children()]
    assert e.block.plain == 5 and "plain" not in e._parameters
    assert e.missing is None and e.empty is None
    assert isinstance(e.scale, enn.Parameter) and isinstance(e.scale, ember.Tensor)
    assert e.scale.is_leaf and e.scale.requires_grad
    assert e.scale is e.scale  # the stored object comes back


def test_attribute_semantics_and_errors():
    for nn, lib in ((enn, ember), (torch.nn, torch)):
        m = build(nn, lib)
        # Reassigning a registered parameter with a plain tensor is a TypeError.
        with pytest.raises(TypeError):
            m.scale = lib.ones(1)
        m.scale = None
        assert m._parameters["scale"] is None
        # A buffer accepts tensors only.
        with pytest.raises(TypeError):
            m.block.steps = 3
        m.block.steps = lib.ones(1)
        with pytest.raises(KeyError):
            m.register_buffer("a.b", lib.ones(1))
        with pytest.raises(KeyError):
            m.register_parameter("block", nn.Parameter(lib.ones(1)))
        with pytest.raises(TypeError):
            m.register_parameter("p", lib.ones(1))
        with pytest.raises(AttributeError):
            m.nothing
        nonleaf = nn.Parameter(lib.ones(2)) * 2
        with pytest.raises(TypeError):
            m.register_parameter("q", nonleaf)  # not a Parameter
        # A submodule replaces an attribute of the same name.
        m.newmod = nn.Module()
        assert "newmod" in m._modules
        del m.newmod
        assert "newmod" not in m._modules

        class Early(nn.Module):
            def __init__(self):
                self.p = nn.Parameter(lib.ones(1))

        with pytest.raises(AttributeError):
            Early()


def test_forward_grad_and_hooks():
    e = build(enn, ember)
    calls = []
    h1 = e.register_forward_pre_hook(lambda mod, inp: calls.append("pre") or (inp[0] * 2,))
    e.register_forward_hook(lambda mod, inp, out: calls.append("post") or out + 1)
    x = ember.ones(4, 3)
    y = e(x)
    assert calls == ["pre", "post"]
    assert ember.equal(y, (x * 2) @ e.block.w.detach() * 2 + 1)
    h1.remove()
    y = e(x)
    assert calls == ["pre", "post", "post"]
    y.sum().backward()
    assert e.block.w.grad.shape == (3, 2)
    e.zero_grad()
    assert e.block.w.grad is None
    y = e(x)
    y.sum().backward()
    e.zero_grad(set_to_none=False)
    assert ember.equal(e.block.w.grad, ember.zeros(3, 2))

    class NoForward(enn.Module):
        pass

    with pytest.raises(NotImplementedError):
        NoForward()(x)


def test_state_dict_roundtrip_and_errors():
    e, t = build(enn, ember), build(torch.nn, torch)
    sd = e.state_dict()
    assert not sd["scale"].requires_grad  # detached
    sd = OrderedDict((k, v + 1) for k, v in sd.items())
    r = e.load_state_dict(sd)
    assert r.missing_keys == [] and r.unexpected_keys == []
    assert float(e.scale) == 3.0

    bad_e = dict(e.state_dict())
    bad_t = dict(t.state_dict())
    for bad, lib in ((bad_e, ember), (bad_t, torch)):
        del bad["scale"]
        bad["extra"] = lib.ones(1)
        bad["block.w"] = lib.ones(2, 2)
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict(bad_e)
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(bad_t)
    assert str(ee.value) == str(te.value).replace("torch.", "ember.")
    r_e = e.load_state_dict({"scale": ember.ones(1)}, strict=False)
    r_t = t.load_state_dict({"scale": torch.ones(1)}, strict=False)
    assert r_e.missing_keys == r_t.missing_keys and r_e.unexpected_keys == r_t.unexpected_keys
    with pytest.raises(TypeError):
        e.load_state_dict([("scale", ember.ones(1))])


def test_repr_matches_torch():
    e, t = build(enn, ember), build(torch.nn, torch)
    assert repr(e) == repr(t)

    class WithExtra(enn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    class WithExtraT(torch.nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(WithExtra()).replace("WithExtra", "X") == repr(WithExtraT()).replace(
        "WithExtraT", "X")


def test_train_eval_apply_and_conversions():
    e = build(enn, ember)
    e.eval()
    assert not e.training and not e.block.training
    e.train()
    assert e.block.training
    with pytest.raises(ValueError):
        e.train("yes")
    seen = []
    e.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Block", "Net"]
    e.double()
    assert e.block.w.dtype == ember.float64 and e.block.steps.dtype == ember.float64
    assert isinstance(e.block.w, enn.Parameter) and e.block.w.requires_grad
    e.to(ember.float32)
    assert e.scale.dtype == ember.float32
    with pytest.raises(TypeError):
        e.to(ember.int64)
    e.requires_grad_(False)
    assert not any(p.requires_grad for p in e.parameters())
    assert e.get_submodule("block") is e.block
    assert e.get_parameter("block.w") is e.block.w
    with pytest.raises(AttributeError):
        e.get_buffer("block.w")


def test_parameter_semantics():
    data = ember.arange(4.0)
    p = enn.Parameter(data)
    assert p.requires_grad and p.is_leaf
    # The parameter shares the data's storage, as torch's.
    with ember.no_grad():
        p.mul_(2)
    assert ember.equal(data, ember.arange(4.0) * 2)
    q = enn.Parameter(ember.ones(2), requires_grad=False)
    assert not q.requires_grad
    assert repr(enn.Parameter(ember.ones(1))).startswith("Parameter containing:\ntensor([1.]")
    assert enn.Parameter().shape == (0,)
    with pytest.raises(TypeError):
        enn.Parameter([1.0, 2.0])


def test_data_assignment_changes_dtype_and_shape_like_torch():
    for lib in (ember, torch):
        p = (enn if lib is ember else torch.nn).Parameter(lib.ones(2, 2))
        new = lib.arange(3, dtype=lib.float64)
        p.data = new
        assert p.dtype == lib.float64 and tuple(p.shape) == (3,)
        assert p.requires_grad and p.is_leaf
        new[0] = 7  # shares storage with the assigned tensor
        assert float(p[0]) == 7
        nonleaf = lib.ones(2, requires_grad=True) * 2
        nonleaf.data = lib.zeros(2)  # allowed, the graph is kept
        assert nonleaf.grad_fn is not None and float(nonleaf.sum()) == 0
