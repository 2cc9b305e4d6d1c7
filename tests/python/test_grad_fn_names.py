"""grad_fn names follow PyTorch 1.13's (type(y.grad_fn).__name__ and y.grad_fn.name()), for the
ops whose node PyTorch records directly (composites differ in graph shape, not checked here)."""

import pytest
import torch

import ember


def mk(lib, *s):
    lib.manual_seed(0)
    return lib.rand(*s, dtype=lib.float64).add(0.5).requires_grad_()


CASES = {
    "add": lambda lib: mk(lib, 3) + mk(lib, 3),
    "add_scalar": lambda lib: mk(lib, 3) + 2,
    "sub": lambda lib: mk(lib, 3) - mk(lib, 3),
    "mul": lambda lib: mk(lib, 3) * mk(lib, 3),
    "mul_scalar": lambda lib: mk(lib, 3) * 2,
    "div": lambda lib: mk(lib, 3) / mk(lib, 3),
    "div_scalar": lambda lib: mk(lib, 3) / 2,
    "neg": lambda lib: -mk(lib, 3),
    "pow_scalar": lambda lib: mk(lib, 3) ** 2,
    "pow_tensor": lambda lib: mk(lib, 3) ** mk(lib, 3),
    "rpow": lambda lib: 2 ** mk(lib, 3),
    "exp": lambda lib: mk(lib, 3).exp(),
    "log": lambda lib: mk(lib, 3).log(),
    "tanh": lambda lib: mk(lib, 3).tanh(),
    "sigmoid": lambda lib: mk(lib, 3).sigmoid(),
    "relu": lambda lib: mk(lib, 3).relu(),
    "sqrt": lambda lib: mk(lib, 3).sqrt(),
    "rsqrt": lambda lib: mk(lib, 3).rsqrt(),
    "reciprocal": lambda lib: mk(lib, 3).reciprocal(),
    "abs": lambda lib: mk(lib, 3).abs(),
    "sin": lambda lib: mk(lib, 3).sin(),
    "cos": lambda lib: mk(lib, 3).cos(),
    "clamp": lambda lib: mk(lib, 3).clamp(0.6, 1.0),
    "clamp_min": lambda lib: mk(lib, 3).clamp(min=0.6),
    "maximum": lambda lib: lib.maximum(mk(lib, 3), mk(lib, 3)),
    "where": lambda lib: lib.where(mk(lib, 3) > 1, mk(lib, 3), mk(lib, 3)),
    "sum": lambda lib: mk(lib, 3).sum(),
    "sum_dim": lambda lib: mk(lib, 2, 3).sum(1),
    "mean": lambda lib: mk(lib, 3).mean(),
    "mean_dim": lambda lib: mk(lib, 2, 3).mean(1),
    "prod": lambda lib: mk(lib, 3).prod(),
    "prod_dim": lambda lib: mk(lib, 2, 3).prod(1),
    "max": lambda lib: mk(lib, 3).max(),
    "max_dim": lambda lib: mk(lib, 2, 3).max(1)[0],
    "amax": lambda lib: mk(lib, 2, 3).amax(1),
    "var": lambda lib: mk(lib, 2, 3).var(),
    "std": lambda lib: mk(lib, 2, 3).std(),
    "var_dim": lambda lib: mk(lib, 2, 3).var(1),
    "norm": lambda lib: mk(lib, 3).norm(),
    "logsumexp": lambda lib: mk(lib, 2, 3).logsumexp(1),
    "cumsum": lambda lib: mk(lib, 3).cumsum(0),
    "cumprod": lambda lib: mk(lib, 3).cumprod(0),
    "mm": lambda lib: mk(lib, 2, 3).mm(mk(lib, 3, 4)),
    "matmul2d": lambda lib: mk(lib, 2, 3) @ mk(lib, 3, 4),
    "matmul3d": lambda lib: mk(lib, 2, 2, 3) @ mk(lib, 2, 3, 4),
    "bmm": lambda lib: mk(lib, 2, 2, 3).bmm(mk(lib, 2, 3, 4)),
    "mv": lambda lib: mk(lib, 2, 3).mv(mk(lib, 3)),
    "dot": lambda lib: mk(lib, 3).dot(mk(lib, 3)),
    "addmm": lambda lib: lib.addmm(mk(lib, 2, 4), mk(lib, 2, 3), mk(lib, 3, 4)),
    "linear": lambda lib: lib.nn.functional.linear(mk(lib, 2, 3), mk(lib, 4, 3), mk(lib, 4)),
    "linear_nobias": lambda lib: lib.nn.functional.linear(mk(lib, 2, 3), mk(lib, 4, 3)),
    "view": lambda lib: mk(lib, 2, 3).view(6),
    "reshape": lambda lib: mk(lib, 2, 3).reshape(6),
    "flatten": lambda lib: mk(lib, 2, 3).flatten(),
    "t": lambda lib: mk(lib, 2, 3).t(),
    "transpose": lambda lib: mk(lib, 2, 3).transpose(0, 1),
    "permute": lambda lib: mk(lib, 2, 3).permute(1, 0),
    "expand": lambda lib: mk(lib, 1, 3).expand(2, 3),
    "unsqueeze": lambda lib: mk(lib, 3).unsqueeze(0),
    "squeeze": lambda lib: mk(lib, 1, 3).squeeze(),
    "squeeze_dim": lambda lib: mk(lib, 1, 3).squeeze(0),
    "select": lambda lib: mk(lib, 2, 3)[0],
    "narrow": lambda lib: mk(lib, 4).narrow(0, 1, 2),
    "index": lambda lib: mk(lib, 4)[lib.tensor([0, 2])],
    "index_select": lambda lib: mk(lib, 4).index_select(0, lib.tensor([0, 2])),
    "gather": lambda lib: mk(lib, 4).gather(0, lib.tensor([0, 2])),
    "cat": lambda lib: lib.cat([mk(lib, 2), mk(lib, 3)]),
    "clone": lambda lib: mk(lib, 3).clone(),
    "to_float": lambda lib: mk(lib, 3).float(),
    "diagonal": lambda lib: mk(lib, 3, 3).diagonal(),
    "unfold": lambda lib: mk(lib, 6).unfold(0, 2, 2),
    "flip": lambda lib: mk(lib, 3).flip(0),
    "roll": lambda lib: mk(lib, 3).roll(1),
    "repeat": lambda lib: mk(lib, 3).repeat(2),
    "tril": lambda lib: mk(lib, 3, 3).tril(),
    "softmax": lambda lib: mk(lib, 2, 3).softmax(1),
    "log_softmax": lambda lib: mk(lib, 2, 3).log_softmax(1),
    "layer_norm": lambda lib: lib.nn.functional.layer_norm(mk(lib, 2, 3), (3,), mk(lib, 3), mk(lib, 3)),
    "batch_norm": lambda lib: lib.nn.functional.batch_norm(mk(lib, 2, 3), None, None, mk(lib, 3), mk(lib, 3), training=True),
    "group_norm": lambda lib: lib.nn.functional.group_norm(mk(lib, 2, 4, 3), 2, mk(lib, 4), mk(lib, 4)),
    "conv2d": lambda lib: lib.nn.functional.conv2d(mk(lib, 1, 1, 4, 4), mk(lib, 1, 1, 2, 2)),
    "max_pool2d": lambda lib: lib.nn.functional.max_pool2d(mk(lib, 1, 1, 4, 4), 2),
    "bce": lambda lib: lib.nn.functional.binary_cross_entropy(mk(lib, 3).sigmoid(), mk(lib, 3).sigmoid()),
    "embedding": lambda lib: lib.nn.functional.embedding(lib.tensor([0, 2]), mk(lib, 3, 2)),
    "gelu": lambda lib: lib.nn.functional.gelu(mk(lib, 3)),
    "silu": lambda lib: lib.nn.functional.silu(mk(lib, 3)),
    "leaky_relu": lambda lib: lib.nn.functional.leaky_relu(mk(lib, 3)),
    "elu": lambda lib: lib.nn.functional.elu(mk(lib, 3)),
    "softplus": lambda lib: lib.nn.functional.softplus(mk(lib, 3)),
    "hardtanh": lambda lib: lib.nn.functional.hardtanh(mk(lib, 3)),
    "sort": lambda lib: mk(lib, 3).sort()[0],
    "topk": lambda lib: mk(lib, 3).topk(2)[0],
    "det": lambda lib: lib.linalg.det(mk(lib, 3, 3)),
    "inv": lambda lib: lib.linalg.inv(mk(lib, 3, 3) + lib.eye(3, dtype=lib.float64)),
    "pad": lambda lib: lib.nn.functional.pad(mk(lib, 3), (1, 1)),
    "where_scalar": lambda lib: lib.where(mk(lib, 3) > 1, mk(lib, 3), 0.0),
    "mul_inplace": lambda lib: (mk(lib, 3) * 1).mul_(2),
    "add_inplace": lambda lib: (mk(lib, 3) * 1).add_(mk(lib, 3)),
    "lerp": lambda lib: lib.lerp(mk(lib, 3), mk(lib, 3), 0.5),
    "addcmul": lambda lib: lib.addcmul(mk(lib, 3), mk(lib, 3), mk(lib, 3)),
    "atan2": lambda lib: lib.atan2(mk(lib, 3), mk(lib, 3)),
    "minimum": lambda lib: lib.minimum(mk(lib, 3), mk(lib, 3)),
    "square": lambda lib: mk(lib, 3).square(),
    "erf": lambda lib: mk(lib, 3).erf(),
    "log1p": lambda lib: mk(lib, 3).log1p(),
    "expm1": lambda lib: mk(lib, 3).expm1(),
    "sign": lambda lib: mk(lib, 3).sign(),
    "floor": lambda lib: mk(lib, 3).floor(),
    "trace": lambda lib: mk(lib, 3, 3).trace(),
    "diag": lambda lib: mk(lib, 3).diag(),
    "outer": lambda lib: lib.outer(mk(lib, 2), mk(lib, 3)),
    "expand_as": lambda lib: mk(lib, 1, 3).expand_as(lib.zeros(2, 3)),
    "view_as": lambda lib: mk(lib, 2, 3).view_as(lib.zeros(6)),
    "detach_add": lambda lib: mk(lib, 3).detach().requires_grad_() + 1,
}


@pytest.mark.parametrize("name", list(CASES))
def test_grad_fn_name_matches_torch(name):
    expected = type(CASES[name](torch).grad_fn).__name__
    y = CASES[name](ember)
    assert type(y.grad_fn).__name__ == expected
    assert y.grad_fn.name() == expected
    assert isinstance(y.grad_fn, ember.autograd.Node)


def test_accumulate_grad_and_next_functions():
    x = mk(ember, 3)
    y = (x * 2).exp()
    assert type(y.grad_fn).__name__ == "ExpBackward0"
    (mul, _), = y.grad_fn.next_functions
    assert type(mul).__name__ == "MulBackward0"
    acc = mul.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad"
    assert acc.variable.data_ptr() == x.data_ptr()
    # The same node keeps its class and identity across accesses.
    assert y.grad_fn is y.grad_fn
    assert repr(y.grad_fn).startswith("<ExpBackward0 object at ")


def test_overloads():
    x = mk(ember, 2, 3)
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.sum(1).grad_fn.name() == "SumBackward1"
    assert x.mean().grad_fn.name() == "MeanBackward0"
    assert x.mean(1).grad_fn.name() == "MeanBackward1"
    assert x.max().grad_fn.name() == "MaxBackward1"
    assert x.max(1)[0].grad_fn.name() == "MaxBackward0"
    assert (x ** 2).grad_fn.name() == "PowBackward0"
    assert (x ** x).grad_fn.name() == "PowBackward1"
    assert x.unsqueeze(0).squeeze(0).grad_fn.name() == "SqueezeBackward1"
