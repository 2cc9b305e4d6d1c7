"""Text form of tensors: ``repr(t)`` laid out exactly as PyTorch lays it out.

Works on the few tensor members shared with PyTorch (``dim``, ``shape``, ``numel``, ``dtype``,
``device``, ``requires_grad``, ``tolist``, ``item``, slicing, ``len``), so the same code prints
ember tensors and, for cross-checking, torch tensors. Numbers are formatted in plain Python.
"""

import math
import sys
from contextlib import contextmanager

__all__ = [
    "get_printoptions",
    "printoptions",
    "set_printoptions",
    "tensor_repr",
    "tensor_str",
]


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Set how tensors print.

    precision: digits after the point (4); threshold: element count above which a tensor is
    summarized with ``...`` (1000); edgeitems: items kept at each end of a summarized dimension
    (3); linewidth: characters per line before wrapping (80); profile: ``'default'``,
    ``'short'`` or ``'full'``, applied first; sci_mode: force scientific notation on (True) or
    off (False), or choose it per tensor (None). Like PyTorch, every call resets sci_mode.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}; expected one of "
                             f"{', '.join(map(repr, _PROFILES))}")
        for key, value in _PROFILES[profile].items():
            setattr(_OPTS, key, value)
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict (the keyword names of ``set_printoptions``)."""
    return {key: getattr(_OPTS, key) for key in _PrintOptions.__slots__}


@contextmanager
def printoptions(**kwargs):
    """Use ``set_printoptions(**kwargs)`` inside a ``with`` block, then restore the old ones."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# Marks the place of the rows or items that summarization leaves out.
_SKIP = object()


class _Formatter:
    """Chooses one layout (int, fixed or scientific) and one width for a set of values."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        self.precision = _OPTS.precision
        if not floating:
            self.width = max([1] + [len(str(v)) for v in values])
            return
        vals = [v for v in values if v != 0 and math.isfinite(v)]
        if not vals:
            # Nothing to measure; PyTorch also skips the sci_mode override here.
            return
        mags = [abs(v) for v in vals]
        hi, lo = max(mags), min(mags)
        self.int_mode = all(v == math.ceil(v) for v in vals)
        p = self.precision
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                self.width = max(len(f"{v:.{p}e}") for v in vals)
            else:
                # One more for the trailing point that marks a floating dtype.
                self.width = max(len(f"{v:.0f}") for v in vals) + 1
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            self.width = max(len(f"{v:.{p}e}") for v in vals)
        else:
            self.width = max(len(f"{v:.{p}f}") for v in vals)
        if _OPTS.sci_mode is not None:
            self.sci_mode = _OPTS.sci_mode

    def format(self, v):
        if not self.floating:
            s = str(v)
        elif self.sci_mode:
            s = f"{v:{self.width}.{self.precision}e}"
        elif self.int_mode:
            s = f"{v:.0f}"
            if math.isfinite(v):
                s += "."
        else:
            s = f"{v:.{self.precision}f}"
        return s.rjust(self.width)


def _format_value(v, fmt, imag_fmt):
    if imag_fmt is None:
        return fmt.format(v)
    real = fmt.format(v.real)
    imag = (imag_fmt.format(v.imag) + "j").lstrip()
    # A negative (or -0.) imaginary part brings its own sign; any other gets a '+'.
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _gather(t, edge):
    """Nested lists of the values a summarized tensor shows, with _SKIP where ``...`` goes.

    Only the edge items are fetched, so the cost does not grow with the tensor's size.
    """
    if t.dim() == 0:
        return t.item()
    n = len(t)
    if t.dim() == 1:
        if n > 2 * edge:
            return t[:edge].tolist() + [_SKIP] + t[n - edge : n].tolist()
        return t.tolist()
    rows = range(n)
    if n > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    return [_SKIP if i is None else _gather(t[i], edge) for i in rows]


def _flatten(data, dim, out):
    if dim == 0:
        out.append(data)
    elif dim == 1:
        out.extend(v for v in data if v is not _SKIP)
    else:
        for row in data:
            if row is not _SKIP:
                _flatten(row, dim - 1, out)
    return out


def _vector_str(row, indent, fmt, imag_fmt):
    # Per-line capacity counts ", " and, for complex, the imaginary part and its "j".
    item_len = fmt.width + 2
    if imag_fmt is not None:
        item_len += imag_fmt.width + 1
    per_line = max(1, int(math.floor((_OPTS.linewidth - indent) / item_len)))
    items = [" ..." if v is _SKIP else _format_value(v, fmt, imag_fmt) for v in row]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(data, dim, indent, fmt, imag_fmt):
    if dim == 0:
        return _format_value(data, fmt, imag_fmt)
    if dim == 1:
        return _vector_str(data, indent, fmt, imag_fmt)
    parts = [
        "..." if row is _SKIP else _nested_str(row, dim - 1, indent + 1, fmt, imag_fmt)
        for row in data
    ]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(parts) + "]"


def _body_str(t, indent):
    """The bracketed values of a non-empty tensor."""
    dim = t.dim()
    if _dtype_name(t.dtype) == "complex32":
        t = t.cfloat()  # every complex32 value is exact in complex64; formatted as PyTorch does
    if t.numel() > _OPTS.threshold:
        data = _gather(t, _OPTS.edgeitems)
    else:
        data = t.item() if dim == 0 else t.tolist()
    values = _flatten(data, dim, [])
    dtype = t.dtype
    if dtype.is_complex:
        fmt = _Formatter([v.real for v in values], True)
        imag_fmt = _Formatter([v.imag for v in values], True)
    else:
        fmt = _Formatter(values, dtype.is_floating_point)
        imag_fmt = None
    return _nested_str(data, dim, indent, fmt, imag_fmt)


def _add_suffixes(text, suffixes, indent):
    # Measured as PyTorch measures it (two more than the last line's length), to wrap alike.
    line_len = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > _OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _dtype_name(dtype):
    """``'float32'`` for ``ember.float32`` (or ``torch.float32``)."""
    return repr(dtype).rpartition(".")[2]


def _default_dtype(t):
    # The tensor's own package decides, so torch tensors print against torch's default.
    lib = sys.modules.get(type(t).__module__.partition(".")[0])
    if lib is None or not hasattr(lib, "get_default_dtype"):
        import ember as lib
    return lib.get_default_dtype()


def _grad_fn_name(grad_fn):
    name = grad_fn.name() if callable(getattr(grad_fn, "name", None)) else type(grad_fn).__name__
    return name.rsplit("::", 1)[-1]


def tensor_repr(t, default_dtype=None):
    """``repr`` of a tensor, e.g. ``tensor([1., 2.], dtype=ember.float64)``.

    default_dtype: the floating dtype printed without a suffix; defaults to the tensor's
    package's ``get_default_dtype()``.
    """
    prefix = "tensor("
    indent = len(prefix)
    if default_dtype is None:
        default_dtype = _default_dtype(t)
    default = _dtype_name(default_dtype)
    dtype = t.dtype
    name = _dtype_name(dtype)

    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.numel() == 0:
        # The shape and dtype cannot be told from an empty "[]", so both are spelled out.
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if name != default:
            suffixes.append("dtype=" + repr(dtype))
        body = "[]"
    else:
        implied = (default, "complex128" if default == "float64" else "complex64", "int64", "bool")
        if name not in implied:
            suffixes.append("dtype=" + repr(dtype))
        body = _body_str(t, indent)

    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


def tensor_str(t, default_dtype=None):
    """``str`` of a tensor; the same text as ``repr``."""
    return tensor_repr(t, default_dtype)
