"""ember.nn.functional: activations with torch.nn.functional's signatures."""

from ember import _C

_nn = _C._nn


def _unary(name):
    fn = getattr(_C, name)
    method = getattr(_C.Tensor, name + "_", None)

    def activation(input, inplace=False):
        if inplace:
            return method(input)
        return fn(input)

    activation.__name__ = activation.__qualname__ = name
    return activation


relu = _unary("relu")
relu6 = _unary("relu6")
selu = _unary("selu")
silu = _unary("silu")
mish = _unary("mish")
hardsigmoid = _unary("hardsigmoid")
hardswish = _unary("hardswish")


def softsign(input):
    return _C.softsign(input)


def tanhshrink(input):
    return _C.tanhshrink(input)


def logsigmoid(input):
    return _C.logsigmoid(input)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        _nn.leaky_relu_(input, negative_slope)
        return input
    return _nn.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    if inplace:
        _nn.elu_(input, alpha, 1.0, 1.0)
        return input
    return _nn.elu(input, alpha, 1.0, 1.0)


def celu(input, alpha=1.0, inplace=False):
    if inplace:
        _nn.celu_(input, alpha)
        return input
    return _nn.celu(input, alpha)


def gelu(input, approximate="none"):
    return _nn.gelu(input, approximate)


def softplus(input, beta=1, threshold=20):
    return _nn.softplus(input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if inplace:
        _nn.hardtanh_(input, min_val, max_val)
        return input
    return _nn.hardtanh(input, min_val, max_val)


def hardshrink(input, lambd=0.5):
    return _nn.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    return _nn.softshrink(input, lambd)


def threshold(input, threshold, value, inplace=False):
    if inplace:
        _nn.threshold_(input, threshold, value)
        return input
    return _nn.threshold(input, threshold, value)


# ---- softmax family (python/src/sort.cpp) ----
def _softmax_dim(name, ndim, stacklevel):
    import warnings
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _C.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return _C.softmax(-input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _C.log_softmax(input, dim, dtype)

# end softmax family

# ---- pad, one_hot (python/src/shape.cpp) ----
def pad(input, pad, mode="constant", value=None):
    return _nn.pad(input, pad, mode, value)


def one_hot(tensor, num_classes=-1):
    return _nn.one_hot(tensor, num_classes)
# end pad, one_hot


# ---- composites without their own kernel ----
def prelu(input, weight):
    if weight.numel() != 1:
        if input.dim() < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {weight.numel()} and channel size = {input.shape[1] if input.dim() > 1 else 1}.")
        w = weight.reshape([1, -1] + [1] * (input.dim() - 2))
    else:
        w = weight.reshape([])
    return _C.where(input >= 0, input, w * input)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2 != 0:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * _C.sigmoid(b)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    import ember
    if training:
        slope = ember.empty_like(input).uniform_(lower, upper)
    else:
        slope = (lower + upper) / 2
    out = ember.where(input >= 0, input, input * slope)
    if inplace:
        return input.copy_(out)
    return out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


# ---- convolution, pooling, resampling; losses, normalization, dropout, embedding ----
from ember.nn._functional_conv import *  # noqa: E402,F401,F403
from ember.nn._functional_nn import *  # noqa: E402,F401,F403

# A str or dict where a Tensor belongs raises TypeError, not AttributeError.
from ember._arg_types import check_public_functions as _check_public_functions  # noqa: E402

_check_public_functions(globals(), "ember.nn")
del _check_public_functions
