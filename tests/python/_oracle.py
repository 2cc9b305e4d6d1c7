"""Oracle helpers: the same tensor in ember and torch, one call run on both, results compared.

Values, dtypes (by name), shapes and exception types must agree. Inputs are built from one NumPy
array and then given the same layout in both libraries (transposed, sliced with steps, broadcast
with stride 0, zero-size, 0-dim), so strided kernels and views are exercised alike.
"""

import pathlib
import re

import numpy as np
import torch

import ember

ROOT = pathlib.Path(__file__).resolve().parents[2]

BOOL = ["bool"]
UINT = ["uint8"]
SINT = ["int8", "int16", "int32", "int64"]
INTS = UINT + SINT
LOWP = ["float16", "bfloat16"]
FLOATS = LOWP + ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
DTYPES = BOOL + INTS + FLOATS + COMPLEX

LAYOUTS = ["contiguous", "transposed", "strided", "broadcast", "zero", "scalar"]

# NumPy storage type per dtype name; bfloat16 travels as float32.
_NP = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "bfloat16": np.float32, "float32": np.float32,
    "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128,
}


def op_list(macro):
    """Op names of an X-macro list in include/ember/op_list.h (the binding's own table)."""
    text = (ROOT / "include" / "ember" / "op_list.h").read_text()
    m = re.search(r"#define %s\(_\)((?:.*\\\n)*.*)" % macro, text)
    assert m, macro
    return re.findall(r"_\((\w+)\)", m.group(1))


def name(dtype):
    """'float32' for ember.float32 and torch.float32 alike."""
    return str(dtype).split(".")[-1]


def values(dtype, shape, rng, kind="any"):
    """A NumPy array of test values for `dtype` (exact in every dtype, bfloat16 included).

    kind: "any" (small values of both signs), "nonzero" (divisors), "small" (0..4: shift
    amounts, integer exponents), "unit" (inside (-1, 1)).
    """
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        v = rng.random(n) < 0.5
        if kind == "nonzero":
            v[:] = True
    elif dtype in INTS or kind == "small":
        lo = 0 if dtype == "uint8" or kind == "small" else -5
        hi = 5 if kind == "small" else 10 if dtype == "uint8" else 6
        v = rng.integers(lo, hi, n)
        if kind == "nonzero":
            v[v == 0] = 1
    else:
        # Multiples of 1/8 in [-3, 3]: exact in float16 and bfloat16.
        v = rng.integers(-24, 25, n) / 8.0
        if kind == "unit":
            v = v / 3.25
        if kind == "nonzero":
            v[v == 0] = 0.5
        if dtype in COMPLEX:
            im = rng.integers(-24, 25, n) / 8.0
            if kind == "unit":
                im = im / 3.25
            v = v + 1j * im
    return np.asarray(v).astype(_NP[dtype]).reshape(shape)


def pair(arr, dtype=None):
    """The same NumPy values as an (ember, torch) pair of tensors, cast to `dtype` if given."""
    a = np.ascontiguousarray(arr)
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if dtype is not None:
        e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
    return e, t


def tensors_from(arr, dtype):
    """(ember, torch) tensors holding `arr` as `dtype`, each with its own memory."""
    if arr.size == 0:  # torch.from_numpy gives zero-size arrays all-zero strides
        e = ember.empty(arr.shape, dtype=getattr(ember, dtype))
        t = torch.empty(arr.shape, dtype=getattr(torch, dtype))
        return e, t
    e = ember.from_numpy(arr.copy(order="C"))
    t = torch.from_numpy(arr.copy(order="C"))
    if dtype == "bfloat16":
        e, t = e.to(ember.bfloat16), t.to(torch.bfloat16)
    return e, t


_made = {}


def make(dtype, layout="contiguous", seed=0, kind="any", shape=(3, 4)):
    """An (ember, torch) pair of equal values and equal strides. `shape` is that of the result
    for the contiguous, transposed, strided and broadcast layouts (2-d). Pairs are shared between
    calls: write only to clones."""
    key = (dtype, layout, seed, kind, shape)
    if key not in _made:
        _made[key] = _make(dtype, layout, seed, kind, shape)
    # New tensor objects on the shared storage: a test's in-place metadata change (t_(),
    # resize_(), squeeze_()) cannot reach the next caller.
    return tuple(x.as_strided(x.size(), x.stride(), x.storage_offset()) for x in _made[key])


def _make(dtype, layout, seed, kind, shape):
    rng = np.random.default_rng(seed)
    if layout == "contiguous":
        return tensors_from(values(dtype, shape, rng, kind), dtype)
    if layout == "transposed":
        e, t = tensors_from(values(dtype, shape[::-1], rng, kind), dtype)
        return e.t(), t.t()
    if layout == "strided":
        base = (2 * shape[0] + 1, 2 * shape[1])
        e, t = tensors_from(values(dtype, base, rng, kind), dtype)
        return e[1::2, ::2], t[1::2, ::2]
    if layout == "broadcast":
        e, t = tensors_from(values(dtype, (1, shape[1]), rng, kind), dtype)
        return e.expand(*shape), t.expand(*shape)
    if layout == "zero":
        return tensors_from(values(dtype, (0, shape[1]), rng, kind), dtype)
    if layout == "scalar":
        return tensors_from(values(dtype, (), rng, kind), dtype)
    raise ValueError(layout)


def to_numpy(x):
    """A NumPy copy of an ember or torch tensor (bfloat16 as float32, complex32 as complex64,
    conj resolved)."""
    if isinstance(x, torch.Tensor):
        x = x.detach().resolve_conj()
        if x.dtype == torch.complex32:
            x = x.cfloat()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy().copy()
    x = x.resolve_conj()
    if x.dtype == ember.complex32:
        x = x.cfloat()
    return (x.float() if x.dtype == ember.bfloat16 else x).numpy().copy()


def to_torch(e):
    """ember.Tensor -> torch.Tensor of the same dtype, shape and values."""
    t = torch.from_numpy(to_numpy(e))
    if e.dtype == ember.complex32:
        return t.to(torch.complex32)
    return t.to(torch.bfloat16) if e.dtype == ember.bfloat16 else t


def to_ember(t):
    """torch.Tensor -> ember.Tensor of the same dtype, shape and values."""
    e = ember.from_numpy(to_numpy(t))
    return e.to(ember.bfloat16) if t.dtype == torch.bfloat16 else e


def assert_same(e, t, rtol=None, atol=None, what=""):
    """ember result `e` equals torch result `t`: type, dtype name, shape and values (NaNs equal).

    Tolerances are torch.testing's per-dtype defaults unless given."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{what}: expected a Tensor, got {type(e).__name__}"
        assert name(e.dtype) == name(t.dtype), f"{what}: dtype {name(e.dtype)} != {name(t.dtype)}"
        assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {e.shape} != {t.shape}"
        kw = {} if rtol is None else {"rtol": rtol, "atol": atol}
        torch.testing.assert_close(to_torch(e), t.detach().resolve_conj(), equal_nan=True,
                                   msg=lambda m: f"{what}: {m}", **kw)
    elif isinstance(t, (tuple, list)):
        assert type(e) is type(t) or (isinstance(t, torch.Size) and isinstance(e, ember.Size)), (
            f"{what}: {type(e).__name__} != {type(t).__name__}")
        assert len(e) == len(t), what
        for i, (a, b) in enumerate(zip(e, t)):
            assert_same(a, b, rtol, atol, f"{what}[{i}]")
    elif isinstance(t, (bool, int, float, complex)):
        assert type(e) is type(t), f"{what}: {type(e).__name__} != {type(t).__name__} ({e!r})"
        if isinstance(t, (float, complex)):
            np.testing.assert_allclose(e, t, rtol=rtol or 1e-7, atol=atol or 0, equal_nan=True,
                                       err_msg=what)
        else:
            assert e == t, f"{what}: {e!r} != {t!r}"
    elif isinstance(t, torch.dtype):
        assert name(e) == name(t), f"{what}: {e} != {t}"
    elif isinstance(t, torch.device):
        assert isinstance(e, ember.device) and repr(e) == repr(t), f"{what}: {e!r} != {t!r}"
    else:
        assert e == t, f"{what}: {e!r} != {t!r}"


def _convert(lib, a):
    if isinstance(a, tuple):
        if len(a) == 2 and isinstance(a[0], ember.Tensor):
            return a[0] if lib is ember else a[1]
        return tuple(_convert(lib, x) for x in a)
    if isinstance(a, (int, float, complex, str)) or a is None:
        return a
    if isinstance(a, list):
        return type(a)(_convert(lib, x) for x in a)
    if isinstance(a, dict):
        return {k: _convert(lib, v) for k, v in a.items()}
    if isinstance(a, (torch.dtype, ember.dtype)):
        return getattr(lib, name(a))
    return a


def run(lib, fn, *args, **kwargs):
    """(result, exception) of fn(lib, *args) with (ember, torch) pairs and dtypes resolved."""
    try:
        return fn(lib, *_convert(lib, args), **_convert(lib, kwargs)), None
    except Exception as ex:  # noqa: BLE001 - compared by type below
        return None, ex


# torch 1.13 takes milliseconds to raise (it records a C++ backtrace per error); errors that
# depend only on what a key names (op, dtypes) are looked up here instead of raised again.
_torch_errors = {}


def torch_run(fn, *args, key=None, **kwargs):
    """run(torch, ...), with the exception remembered under `key` (scoped to the place `fn` is
    written, so that keys of different tests and files never collide)."""
    if key is not None:
        code = getattr(fn, "__code__", None)
        key = (code.co_filename, code.co_firstlineno, key) if code else (id(fn), key)
        if key in _torch_errors:
            return None, _torch_errors[key]
    rt, et = run(torch, fn, *args, **kwargs)
    if key is not None and et is not None:
        _torch_errors[key] = et
    return rt, et


def compare(rt, et, re_, ee, rtol=None, atol=None, what=""):
    """Asserts that ember's (result, exception) matches torch's; returns ember's result."""
    if et is not None:
        assert ee is not None, (
            f"{what}: torch raised {type(et).__name__}({et}) but ember returned {re_!r}")
        assert type(ee) is type(et), (
            f"{what}: torch raised {type(et).__name__}({et}), ember {type(ee).__name__}({ee})")
        return None
    if ee is not None:
        raise AssertionError(f"{what}: ember raised {type(ee).__name__}: {ee}") from ee
    assert_same(re_, rt, rtol, atol, what)
    return re_


def check(fn, *args, rtol=None, atol=None, what="", key=None, **kwargs):
    """Runs fn(lib, ...) with lib = torch and lib = ember: both raise the same exception type,
    or both return equal results. Returns the ember result (None on an exception).

    `key`: a hashable naming everything torch's exception (if any) depends on."""
    rt, et = torch_run(fn, *args, key=key, **kwargs)
    re_, ee = run(ember, fn, *args, **kwargs)
    return compare(rt, et, re_, ee, rtol, atol, what)


def raises_like(fn, *args, key=None, **kwargs):
    """The exception type torch raises for fn(torch, ...); ember must raise exactly that type."""
    _, et = torch_run(fn, *args, key=key, **kwargs)
    assert et is not None, "torch did not raise"
    _, ee = run(ember, fn, *args, **kwargs)
    assert ee is not None, f"ember did not raise (torch: {type(et).__name__}: {et})"
    assert type(ee) is type(et), f"torch {type(et).__name__}({et}), ember {type(ee).__name__}({ee})"
    return ee


# ---- torch 1.13's missing low-precision kernels ----

def lacks_kernel(ex):
    """torch 1.13 has no CPU kernel for some (op, float16/bfloat16) pairs that ember has."""
    return isinstance(ex, RuntimeError) and "not implemented for" in str(ex)


def upcast_oracle(fn, args, dtype):
    """torch on float32 copies of the `dtype` inputs, rounded back to `dtype`."""
    low = getattr(torch, dtype)

    def cast(a):
        if isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], torch.Tensor):
            return (a[0], a[1].float() if a[1].dtype == low else a[1])
        return a

    real_float32 = torch.float32

    class Up:
        """torch with `dtype=low` requests turned into float32."""

        def __getattr__(self, attr):
            f = getattr(torch, attr)
            if not callable(f) or isinstance(f, type):
                return f

            def call(*a, **k):
                if k.get("dtype") is low:
                    k["dtype"] = real_float32
                return f(*a, **k)
            return call

    r, ex = run(torch, lambda L, *a: fn(Up(), *a), *[cast(a) for a in args])
    assert ex is None, ex
    return r.to(low) if r.dtype == torch.float32 else r


def _to_half(r):
    if isinstance(r, torch.Tensor):
        return r.half() if r.dtype == torch.float32 else r
    if isinstance(r, tuple):
        return tuple(_to_half(x) for x in r)
    return r


def check_half_upcast(fn, a, dtype, **kw):
    """check(); for float16 inputs the oracle is torch on a float32 copy of the (ember, torch)
    pair `a`, rounded back to float16 (tuple results too)."""
    if dtype != "float16":
        return check(fn, a, **kw)
    rt, et = run(torch, fn, a[1].float())
    re_, ee = run(ember, fn, a[0])
    return compare(_to_half(rt), et, re_, ee, kw.get("rtol"), kw.get("atol"))


def check_lowp(fn, *args, dtype, what="", rtol=None, atol=None, key=None):
    """check(), with the upcast oracle where torch 1.13 lacks a float16/bfloat16 kernel."""
    rt, et = torch_run(fn, *args, key=key)
    re_, ee = run(ember, fn, *args)
    if et is not None and ee is None and dtype in LOWP and lacks_kernel(et):
        assert_same(re_, upcast_oracle(fn, args, dtype), rtol, atol, what + " (upcast oracle)")
        return re_
    return compare(rt, et, re_, ee, rtol, atol, what)


# ---- matrices for linear algebra ----

def rand_matrix(shape, dtype, seed, kind="general"):
    """A NumPy array of matrices: 'general' (well conditioned), 'spd' (Hermitian positive
    definite), 'hermitian', 'triangular' (upper, well conditioned)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    n = shape[-1]
    if len(shape) >= 2 and shape[-1] == shape[-2] and n > 0:
        eye = np.eye(n)
        if kind == "general":
            a = a + 2 * n ** 0.5 * eye
        elif kind == "spd":
            a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * eye
        elif kind == "hermitian":
            a = a + np.conj(np.swapaxes(a, -1, -2))
        elif kind == "triangular":
            a = np.triu(a) + 2 * n ** 0.5 * eye
    return a.astype(dtype)
