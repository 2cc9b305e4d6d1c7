"""Helpers shared by the distributions (as torch.distributions.utils)."""

from functools import update_wrapper
from numbers import Number

import ember
import ember.nn.functional as F

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]


def _is_tensor_like(v):
    return isinstance(v, ember.Tensor) or hasattr(v, "__torch_function__")


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape.

    Numbers become tensors with the dtype and device of the first tensor argument, or of the
    default dtype when there is none.
    """
    if not all(_is_tensor_like(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(_is_tensor_like(v) for v in values):
        options = dict(dtype=ember.get_default_dtype())
        for value in values:
            if isinstance(value, ember.Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if _is_tensor_like(v) else ember.tensor(v, **options) for v in values]
    return ember.broadcast_tensors(*values)


def _private_op(name):
    """``ember.<name>`` for an op whose name starts with an underscore; ``from ember._C
    import *`` skips such names, so fall back to the extension module.
    """
    fn = getattr(ember, name, None)
    return fn if fn is not None else getattr(ember._C, name)


def _standard_normal(shape, dtype, device):
    return ember.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sums out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    shape = tuple(value.shape)
    cut = len(shape) - dim
    numel = 1
    for s in shape[cut:]:
        numel *= s
    return value.reshape(shape[:cut] + (numel,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: a sigmoid when binary, else a softmax over the last dim."""
    if is_binary:
        return ember.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into [eps, 1 - eps] for the dtype."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log-odds when binary, else log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(ps_clamped) - ember.log1p(-ps_clamped)
    return ember.log(ps_clamped)


class lazy_property:
    """A property computed once per instance, on first access, then stored on the instance.

    The value is computed with grad enabled so it can take part in later backward passes.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: a property (for introspection)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (up to diagonal ``diag``) of ``mat``, row by row."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = ember.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of :func:`tril_matrix_to_vec`: the square matrix with zeros elsewhere."""
    m = vec.shape[-1]
    # n(n+1)/2 + diag*n ... solve for n: the matrix size that holds m entries below ``diag``.
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = ember.finfo(vec.dtype).eps
    if not round(n) - n < eps:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = int(round(n))
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    rows, cols = ember.tril_indices(n, n, offset=diag, device=vec.device)
    mat[..., rows, cols] = vec
    return mat
