"""Activation layers (torch.nn.modules.activation): thin modules over ember.nn.functional."""

import warnings

import ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign",
           "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax", "MultiheadAttention"]


def _inplace_repr(inplace, sep=""):
    return sep + "inplace=True" if inplace else ""


class Threshold(Module):
    """y = x if x > threshold else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + \
            _inplace_repr(self.inplace, ", ")


class _InplaceActivation(Module):
    """An activation whose only option is `inplace` (repr shows it when set)."""

    __constants__ = ["inplace"]
    _show_inplace = True

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace_repr(self.inplace) if self._show_inplace else ""


class ReLU(_InplaceActivation):
    """max(0, x)."""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class RReLU(Module):
    """Leaky ReLU with a slope drawn from U(lower, upper) in training, their mean in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + _inplace_repr(self.inplace, ", ")


class Hardtanh(Module):
    """clamp(x, min_val, max_val)."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument min_value is deprecated and rename to min_val")
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument max_value is deprecated and rename to max_val")
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            _inplace_repr(self.inplace, ", ")


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input):
        return ember.sigmoid(input)


class Hardsigmoid(_InplaceActivation):
    """clamp(x / 6 + 1/2, 0, 1)."""

    _show_inplace = False

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input):
        return ember.tanh(input)


class SiLU(_InplaceActivation):
    """x * sigmoid(x)."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(_InplaceActivation):
    """x * hardsigmoid(x)."""

    _show_inplace = False

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class SELU(_InplaceActivation):
    """scale * elu(x, alpha) with the self-normalising constants."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    """a * sigmoid(b) where (a, b) are the halves of the input along `dim`."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x) (approximate='tanh' uses the tanh approximation)."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """x if |x| > lambd else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    """x if x >= 0 else negative_slope * x."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + _inplace_repr(self.inplace, ", ")


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above `threshold`."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    """Leaky ReLU with a learned slope (one, or one per channel)."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(ember.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        self.__dict__.update(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    """softmax(-x) along `dim`."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxBase):
    """exp(x) / sum(exp(x)) along `dim`."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels at each spatial location of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        assert input.dim() == 4 or input.dim() == 3, \
            "Softmax2d requires a 3D or 4D tensor as input"
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along `dim`."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's output projection (a Linear; the name is torch's, for its repr)."""


class MultiheadAttention(Module):
    """Scaled dot-product attention over `num_heads` heads with input and output projections."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim, \
            "embed_dim must be divisible by num_heads"
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(ember.empty((embed_dim, embed_dim), **factory_kwargs))
            self.k_proj_weight = Parameter(ember.empty((embed_dim, self.kdim), **factory_kwargs))
            self.v_proj_weight = Parameter(ember.empty((embed_dim, self.vdim), **factory_kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(
                ember.empty((3 * embed_dim, embed_dim), **factory_kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ember.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(ember.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(ember.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        state.setdefault("_qkv_same_embed_dim", True)
        self.__dict__.update(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True):
        return F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            batch_first=self.batch_first)
