"""ember: tensors with PyTorch's Python API on a C++ core.

`import ember as torch` runs ordinary PyTorch code in the supported subset.
"""

from ember import _C
from ember._C import *  # noqa: F401,F403  (functions, Tensor, dtypes, device, Size, Generator)
from ember._C import Tensor, Size, dtype, device, Generator, finfo, iinfo  # noqa: F401
from ember._C import _unique2  # noqa: F401  (torch._unique2; `import *` skips it)
from ember._C import _standard_gamma, _standard_gamma_grad  # noqa: F401
from ember._C import _sample_dirichlet, _dirichlet_grad  # noqa: F401  (`import *` skips them)
from ember._C import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: F401

__version__ = _C.__version__


class layout:
    """Memory layout of a tensor; ember tensors are strided."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ember." + self._name


class memory_format:
    """Memory layout of a dense tensor: contiguous (row-major), channels-last, or preserved."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ember." + self._name


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Sets how tensors print (as torch.set_printoptions)."""
    from ember import _tensor_str
    _tensor_str.set_printoptions(precision, threshold, edgeitems, linewidth, profile, sci_mode)


# ---- PyTorch's alias names ----

_ALIASES = {
    "multiply": "mul", "divide": "div", "subtract": "sub", "negative": "neg",
    "absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
    "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2",
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "not_equal": "ne", "fix": "trunc",
}
for _alias, _name in _ALIASES.items():
    globals()[_alias] = getattr(_C, _name)
    setattr(Tensor, _alias, getattr(Tensor, _name))
    if hasattr(Tensor, _name + "_"):
        setattr(Tensor, _alias + "_", getattr(Tensor, _name + "_"))
Tensor.clip_ = Tensor.clamp_
del _alias, _name


# ---- functions that are Tensor methods in the core ----

def _function_of(name):
    method = getattr(Tensor, name)

    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor) and hasattr(type(input), name):
            return getattr(input, name)(*args, **kwargs)  # a nested tensor's own method
        return method(input, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"ember.{name}(input, ...) is input.{name}(...)"
    return fn


for _name in ("reshape", "permute", "transpose", "swapaxes", "swapdims", "t", "squeeze",
              "unsqueeze", "flatten", "unflatten", "narrow", "select", "as_strided", "diagonal",
              "movedim", "moveaxis", "split", "chunk", "unbind", "conj", "resolve_conj",
              "resolve_neg", "conj_physical", "clone", "is_conj", "ravel", "split_with_sizes"):
    globals()[_name] = _function_of(_name)
del _name


def real(input):
    """The real part (a view for complex input)."""
    return input.real


def imag(input):
    """The imaginary part of a complex tensor (a view)."""
    return input.imag


def positive(input):
    """Returns input (error for bool, as PyTorch)."""
    return +input


def adjoint(input):
    """The conjugate transpose of the last two dims (a view)."""
    return input.mH


# ---- Tensor methods written in Python ----

Tensor.positive = positive
Tensor.adjoint = adjoint


def _multinomial(self, num_samples, replacement=False, *, generator=None):
    return multinomial(self, num_samples, replacement, generator=generator)  # noqa: F405


Tensor.multinomial = _multinomial

def _new_factory(factory):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        return factory(*size, dtype=self.dtype if dtype is None else dtype,
                       device=self.device if device is None else device,
                       requires_grad=requires_grad, **kwargs)
    return method


Tensor.new_zeros = _new_factory(zeros)  # noqa: F405
Tensor.new_ones = _new_factory(ones)  # noqa: F405
Tensor.new_empty = _new_factory(empty)  # noqa: F405


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,  # noqa: F405
                device=self.device if device is None else device, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=self.dtype if dtype is None else dtype,  # noqa: F405
                  device=self.device if device is None else device, requires_grad=requires_grad)


Tensor.new_full = _new_full
Tensor.new_tensor = _new_tensor

from ember import _legacy  # noqa: E402
from ember import cuda  # noqa: E402

_LEGACY_NAMES = _legacy.install(globals(), cuda)
_legacy.install_predicates(Tensor)


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """With no dtype, the legacy type name ('ember.FloatTensor'); else a converted tensor."""
    if dtype is None:
        prefix = "ember.cuda." if self.device.type == "cuda" else "ember."
        return prefix + _LEGACY_NAMES[self.dtype]
    legacy = _legacy.legacy_type_of(dtype)
    if legacy is not None:
        dt, device_type = legacy
        if device_type != self.device.type:
            return self.to(device=device_type, dtype=dt, non_blocking=non_blocking)
        return self.to(dt, non_blocking=non_blocking)
    return self.to(dtype, non_blocking=non_blocking)


Tensor.type = _type


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing memory with an object of the buffer protocol (torch.frombuffer)."""
    import numpy as np
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    nbytes = view.nbytes
    elem = dtype.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset >= nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % elem:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({elem})")
        count = (nbytes - offset) // elem
    elif count * elem > nbytes - offset:
        raise ValueError(f"requested buffer length ({count} * {elem} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    raw = np.frombuffer(buffer, dtype=np.uint8, count=count * elem, offset=offset)
    if not raw.flags.writeable:
        # ember tensors are writable: a read-only buffer (bytes) is copied, not shared.
        raw = raw.copy()
    t = from_numpy(raw)  # noqa: F405
    out = t.view(dtype) if dtype != uint8 else t  # noqa: F405
    if requires_grad:
        out.requires_grad_(True)
    return out


def set_default_tensor_type(t):
    """Sets the default floating dtype from a legacy type (`ember.DoubleTensor`) or its name."""
    legacy = _legacy.legacy_type_of(t)
    if legacy is None:
        raise TypeError(f"invalid type: {t!r} (expected a legacy tensor type such as "
                        "ember.DoubleTensor or 'torch.DoubleTensor')")
    dt, device_type = legacy
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if device_type != "cpu":
        raise RuntimeError("set_default_tensor_type: ember's default device is the CPU; "
                           f"{device_type} default tensors are not supported")
    set_default_dtype(dt)  # noqa: F405


def _array_wrap(self, array, context=None, return_scalar=False):
    # NumPy ufuncs applied to a tensor give a tensor back, as PyTorch.
    return from_numpy(array) if array.ndim else tensor(array)  # noqa: F405


Tensor.__array_wrap__ = _array_wrap

from ember import autograd  # noqa: E402
from ember.autograd.grad_mode import (  # noqa: E402,F401
    no_grad, enable_grad, inference_mode, set_grad_enabled, is_grad_enabled,
    is_inference_mode_enabled)
from ember.autograd.anomaly_mode import is_anomaly_enabled  # noqa: E402,F401
from ember import cuda, linalg, nn, optim, profiler, special, utils, vision  # noqa: E402,F401
from ember import backends, distributed, multiprocessing, onnx  # noqa: E402,F401
from ember import fft, masked  # noqa: E402,F401
from ember import amp, cpu, nested  # noqa: E402,F401
from ember.amp import autocast  # noqa: E402,F401

# Loaded on first use (`ember.distributions.Normal`, `import ember.distributions`): its 46
# modules would add about 90 ms to every `import ember`.
_LAZY_MODULES = ("distributions",)


def __getattr__(name):
    if name in _LAZY_MODULES:
        import importlib
        return importlib.import_module("ember." + name)
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
from ember import func  # noqa: E402,F401
from ember.func import vmap  # noqa: E402,F401  (torch.vmap)
from ember.serialization import load, save  # noqa: E402,F401

# ---- nn ops that torch also exposes at the top level (torch.conv2d, torch.layer_norm, ...) ----
from ember.nn import functional as _F  # noqa: E402

conv1d, conv2d, conv3d = _F.conv1d, _F.conv2d, _F.conv3d
conv_transpose1d, conv_transpose2d = _F.conv_transpose1d, _F.conv_transpose2d
conv_transpose3d = _F.conv_transpose3d
max_pool1d, max_pool2d, max_pool3d = _F.max_pool1d, _F.max_pool2d, _F.max_pool3d
avg_pool1d, adaptive_avg_pool1d = _F.avg_pool1d, _F.adaptive_avg_pool1d
pixel_shuffle, pixel_unshuffle = _F.pixel_shuffle, _F.pixel_unshuffle
dropout, alpha_dropout, feature_alpha_dropout = _F.dropout, _F.alpha_dropout, \
    _F.feature_alpha_dropout
embedding, bilinear, cosine_similarity = _F.embedding, _F.bilinear, _F.cosine_similarity
pairwise_distance, ctc_loss, kl_div = _F.pairwise_distance, _F.ctc_loss, _F.kl_div


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=True):
    return _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    return _F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                            momentum, eps)


# A str or dict where a Tensor belongs raises TypeError, not AttributeError (ember/_arg_types.py).
from ember._arg_types import check_public_functions as _check_public_functions  # noqa: E402
from ember._arg_types import typed_errors as _typed_errors  # noqa: E402

_check_public_functions(globals(), "ember")
for _name, _obj in list(vars(Tensor).items()):
    if isinstance(_obj, type(_typed_errors)) and not hasattr(_obj, "__wrapped__"):
        setattr(Tensor, _name, _typed_errors(_obj))
del _check_public_functions, _typed_errors, _name, _obj
