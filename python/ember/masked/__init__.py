"""ember.masked: reductions and normalizations that ignore masked-out elements (torch.masked).

Every function takes `mask=`, a boolean tensor (any dtype converts to bool) that broadcasts to
the input; masked-out elements are replaced by the identity of the operation (0 for sums, 1
for products, the lowest value for maxima, ...) before an ordinary ember op runs, so gradients
flow through the masked-in elements. Slices with no masked-in element give the operation's
value on an empty set (NaN for mean, var and std; the identity otherwise). Only strided
(dense) tensors are supported: sparse layouts and MaskedTensor are not.
"""

import math

import ember

__all__ = [
    "sum",
    "prod",
    "cumsum",
    "cumprod",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "mean",
    "median",
    "logsumexp",
    "logaddexp",
    "norm",
    "var",
    "std",
    "softmax",
    "log_softmax",
    "softmin",
    "normalize",
]

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")
_SIGNED_INTS = ("uint8", "int8", "int16", "int32", "int64")


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def _check_input(t, fn, what="input"):
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"masked.{fn}(): argument '{what}' must be Tensor, not {type(t).__name__}")
    layout = getattr(t, "layout", None)
    if layout is not None and layout != getattr(ember, "strided", layout):
        raise ValueError(f"masked.{fn}() supports strided tensors only (got {layout} {what})")


def _canonical_dims(dim, ndim):
    """`dim` as a sorted tuple of non-negative dims; None and () mean every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    bound = max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d < -bound or d >= bound:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], "
                f"but got {d})"
            )
        if d % bound in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        dims.append(d % bound)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """`mask` as a bool tensor of input's shape (broadcast when smaller)."""
    if not isinstance(mask, ember.Tensor):
        raise TypeError(f"mask must be a Tensor, not {type(mask).__name__}")
    layout = getattr(mask, "layout", None)
    if layout is not None and layout != getattr(ember, "strided", layout):
        raise ValueError(f"masked operations support strided masks only (got {layout} mask)")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality higher than "
                "of the input)"
            )
        mask = ember.broadcast_to(mask, input.shape)
    return mask.to(dtype=ember.bool)


def _identity(op, input, ord=None):
    """The value a masked-out element of `input` takes under reduction `op`."""
    dt = input.dtype
    name = _dtype_name(dt)
    if op in ("sum", "cumsum"):
        return 0
    if op in ("prod", "cumprod"):
        return 1
    if op in ("amax", "argmax", "logsumexp", "amin", "argmin"):
        lowest = op in ("amax", "argmax", "logsumexp")
        if dt.is_floating_point:
            return -math.inf if lowest else math.inf
        if name in _SIGNED_INTS:
            info = ember.iinfo(dt)
            return info.min if lowest else info.max
        if dt.is_complex:
            # Complex numbers have no order (torch raises TypeError here too).
            raise TypeError(f"masked {op} has no identity for {dt} input: complex numbers are "
                            "not ordered")
    if op == "norm":
        if ord == -math.inf:
            if not dt.is_floating_point:
                raise RuntimeError(f"masked norm with ord=-inf expects a floating input, got {dt}")
            return math.inf
        return 0
    if op == "median":
        return math.nan
    raise NotImplementedError(f"identity of masked {op} on {dt} input")


def _apply_mask(op, input, mask, ord=None):
    """input with its masked-out elements replaced by op's identity."""
    if mask is None:
        return input
    m = _input_mask(input, mask)
    fill = ember.full((), _identity(op, input, ord), dtype=input.dtype, device=input.device)
    return ember.where(m, input, fill)


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return ember.int64 if _dtype_name(input.dtype) in _SMALL_INTS else input.dtype


def _reduce_all_or(fn, x, dims, keepdim, **kw):
    # A 0-dim input has no dims to name: reduce it whole.
    if not dims:
        return fn(x, **kw)
    return fn(x, dims, keepdim, **kw)


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum over `dim` of the masked-in elements (integers and bool sum in int64)."""
    _check_input(input, "sum")
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dims(dim, input.ndim)
    x = _apply_mask("sum", input, mask)
    return _reduce_all_or(ember.sum, x, dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product over `dim` of the masked-in elements (integers and bool multiply in int64)."""
    _check_input(input, "prod")
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dims(dim, input.ndim)
    r = _apply_mask("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along `dim`; masked-out elements add nothing."""
    _check_input(input, "cumsum")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dims(dim, input.ndim)[0]
    return ember.cumsum(_apply_mask("cumsum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along `dim`; masked-out elements multiply by one."""
    _check_input(input, "cumprod")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dims(dim, input.ndim)[0]
    return ember.cumprod(_apply_mask("cumprod", input, mask), d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Maximum over `dim` of the masked-in elements."""
    _check_input(input, "amax")
    dtype = input.dtype if dtype is None else dtype
    x = _apply_mask("amax", input, mask)
    dims = _canonical_dims(dim, x.ndim)
    return ember.amax(x, dims, bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Minimum over `dim` of the masked-in elements."""
    _check_input(input, "amin")
    dtype = input.dtype if dtype is None else dtype
    x = _apply_mask("amin", input, mask)
    dims = _canonical_dims(dim, x.ndim)
    return ember.amin(x, dims, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the maximum of the masked-in elements (in input's dtype unless `dtype`)."""
    _check_input(input, "argmax")
    dtype = input.dtype if dtype is None else dtype
    x = _apply_mask("argmax", input, mask)
    return ember.argmax(x, dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the minimum of the masked-in elements (in input's dtype unless `dtype`)."""
    _check_input(input, "argmin")
    dtype = input.dtype if dtype is None else dtype
    x = _apply_mask("argmin", input, mask)
    return ember.argmin(x, dim, bool(keepdim)).to(dtype=dtype)


def _count(input, dim, keepdim, mask):
    """The number of masked-in elements over `dim` (int64)."""
    ones = ember.ones(input.shape, dtype=ember.int64, device=input.device)
    return sum(ones, dim, keepdim=keepdim, mask=mask)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean over `dim` of the masked-in elements; NaN where there are none."""
    _check_input(input, "mean")
    dtype = input.dtype if dtype is None else dtype
    if mask is not None:
        mask = _input_mask(input, mask)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, dim, keepdim, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median along `dim` of the masked-in elements; NaN where there are none (floating
    input; an integer input with such a slice raises ValueError)."""
    _check_input(input, "median")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dims(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=ember.float32)
    out = ember.nanmedian(_apply_mask("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if bool(ember.isnan(out).any()):
        raise ValueError(
            "masked median expects no fully masked out rows if dtype is not floating point"
        )
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp(x))) over `dim` of the masked-in elements; -inf where there are none."""
    _check_input(input, "logsumexp")
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dims(dim, input.ndim)
    x = _apply_mask("logsumexp", input, mask)
    return ember.logsumexp(x, dims, keepdim=bool(keepdim)).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """log(exp(input) + exp(other)), each side's masked-out elements taken as -inf."""
    _check_input(input, "logaddexp")
    _check_input(other, "logaddexp", "other")
    dtype = input.dtype if dtype is None else dtype
    a = _apply_mask("logsumexp", input, input_mask)
    b = _apply_mask("logsumexp", other, other_mask)
    return ember.logaddexp(a, b).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector norm of order `ord` over `dim` of the masked-in elements."""
    _check_input(input, "norm")
    dtype = input.dtype if dtype is None else dtype
    x = _apply_mask("norm", input, mask, ord)
    dims = _canonical_dims(dim, input.ndim)
    return ember.linalg.vector_norm(x, ord, dims, bool(keepdim), dtype=dtype)


def _var(input, dim, unbiased, keepdim, dtype, mask, take_sqrt, fn):
    _check_input(input, fn)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = ember.float32
    compute_dtype = dtype
    if not (compute_dtype.is_floating_point or compute_dtype.is_complex):
        compute_dtype = ember.float32
    if mask is not None:
        mask = _input_mask(input, mask)
    count = _count(input, dim, True, mask)
    mean_ = ember.divide(sum(input, dim, keepdim=True, dtype=dtype, mask=mask), count)
    x = ember.subtract(input, mean_)
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=mask)
    if not keepdim:
        count = count.reshape(total.shape)
    if unbiased:
        count = ember.maximum(ember.subtract(count, 1), count.new_zeros([]))
    out = ember.divide(total, count).to(dtype=dtype)
    return ember.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    """Variance over `dim` of the masked-in elements (`unbiased`: Bessel's correction); NaN
    where there are none (or only one, unbiased)."""
    return _var(input, dim, unbiased, keepdim, dtype, mask, False, "var")


def std(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    """Standard deviation over `dim` of the masked-in elements (see var)."""
    return _var(input, dim, unbiased, keepdim, dtype, mask, True, "std")


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax along `dim`, masked-out elements taken as -inf (they get 0)."""
    _check_input(input, "softmax")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dims(dim, input.ndim)[0]
    return ember.nn.functional.softmax(_apply_mask("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax along `dim`, masked-out elements taken as -inf."""
    _check_input(input, "log_softmax")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dims(dim, input.ndim)[0]
    return ember.nn.functional.log_softmax(_apply_mask("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmin along `dim`, masked-out elements taken as +inf (they get 0)."""
    _check_input(input, "softmin")
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dims(dim, input.ndim)[0]
    return ember.nn.functional.softmin(_apply_mask("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input divided by its masked norm of order `ord` along `dim` (at least `eps`);
    masked-out elements become 0."""
    _check_input(input, "normalize")
    dtype = input.dtype if dtype is None else dtype
    _canonical_dims(dim, input.ndim)
    x = _apply_mask("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = ember.maximum(nrm, nrm.new_full([], eps))
    return ember.divide(x, denom)
