#!/usr/bin/python3
"""Elementwise-op oracle: writes <out>/elementwise/<op>.txt from Debian's PyTorch 1.13 + NumPy.

One declarative table (OPS, below) lists every elementwise op of include/ember/op_list.h plus the
parameterised ones of ops.h. For each op it generates cases over the 12 dtypes and the layouts
(contiguous, transposed, stepped slice, broadcast, expanded, zero-size, 0-dim), Python-scalar
operands, mixed-dtype pairs, out= and in-place forms; torch computes the expected value or the
exception. tests/cpp/test_ops_oracle.cpp replays every case against ember.

Run with /usr/bin/python3 (the interpreter that has torch): gen_elementwise.py --out DIR

Fixture format (text, one record per line, fields separated by one space)
-------------------------------------------------------------------------
<out>/elementwise.txt is the index, written last: "V 1", then "O <op> <number of cases>" per op.
<out>/elementwise/<op>.txt holds that op's cases:

  V 1                               format version
  C <op> <variant> <label>          begins a case (label: form:dtype:layout, for messages);
                                    variant is one of
                                    fn         ember::op(args...)
                                    method     args[0].op(args[1:]...)
                                    inplace    args[0].op_(args[1:]...)
                                    inplace_fn ember::op_(args...)  (activations)
                                    out        ember::op_out(args...) with args[0] the out tensor
                                    operator   a OP b (+ - * / % & | ^ << >> == != < <= > >=),
                                               -x, ~x
                                    ioperator  a OP= b
  T <dtype> <base> <views> <hex>    a tensor argument: the contiguous base tensor (sizes <base>,
                                    row-major, raw little-endian element bytes hex-encoded),
                                    then the view recipe <views> applied in order: "-" (none), or
                                    steps joined by "/": "t" (.t()), "s<d>:<k>" (.slice(d, 0, end,
                                    k)), "e<sizes>" (.expand(sizes)). Sizes are comma-separated;
                                    "-" is the empty list (0-dim), and "-" is also empty bytes.
  S b <0|1> | S i <int> | S f <hexfloat> | S c <hexfloat> <hexfloat>
                                    an ember::Scalar argument (bool, int64, double, complex)
  N                                 std::nullopt
  D <hexfloat>                      a double parameter (logit eps, isclose rtol, nan_to_num ...)
  I <int>                           an int64 parameter (round decimals)
  B <0|1>                           a bool parameter (isclose equal_nan)
  Z <str>                           a string parameter (div rounding_mode, gelu approximate)
  R <dtype> <sizes> <hex>           expected result, row-major (for inplace/out: the written
                                    argument, which must also be the tensor returned)
  W <dtype> <sizes> <hex>           expected contents of args[0]'s base tensor after the op
                                    (inplace/out on a view: elements outside the view unchanged)
  X <ExceptionClass> <message...>   expected exception (torch's message follows, for reports):
                                    RuntimeError -> ember::Error of kind Runtime (or
                                    NotImplemented: Python's NotImplementedError is a
                                    RuntimeError); ValueError, TypeError, IndexError,
                                    NotImplementedError -> the ember class of that name
  K <rtol> <atol> <flags>           tolerance: |got - exp| <= atol + rtol * |exp| (complex: the
                                    modulus of the difference); NaN must match NaN, inf must match
                                    inf of the same sign. rtol = atol = 0 means exact. flags: "-" or
                                    "z" (the sign of zero must match too).
  E                                 ends the case

Expected values
---------------
* Everything comes from torch on CPU, dtype support included: where torch 1.13's CPU kernels
  raise (e.g. "exp_vml_cpu" not implemented for 'Half'), ember must raise too.
* ember's op forms that torch's Python API lacks (e.g. atan2(tensor, 2.5), minimum_) follow
  PyTorch's own rules: a Python scalar is a wrapped number, and an in-place op computes the
  out-of-place result, requires self to have the broadcast shape, no internal overlap and a
  dtype the result can be cast to (RuntimeError otherwise); out= requires a castable dtype.
* Cases where torch 1.13 itself is wrong are not written; torch_bug() lists them (in-place
  comparisons into a complex self write 1+1j for True). Nor are cases torch has no answer for:
  out= of another castable dtype for ops without a torch out= form (torch's ops disagree on
  whether that is allowed).
* A Python scalar operand is ember::Scalar; libtorch's Scalar + Tensor is t.add(s), which is
  what ember's operator+ does, so that form's reference is torch.add(t, s).
* out= with a wrong non-empty shape: torch 1.13 only warns and resizes; ember raises (ops.h:
  "out must have the broadcast shape, or be empty"), so those cases expect RuntimeError (label
  "out_badshape").
* Integer division by zero (torch raises ZeroDivisionError, C++ would be UB) and integer
  overflow of int32/int64 arithmetic are never generated: integer divisors are non-zero, and
  integer operands are small except for ops flagged int_extremes (comparisons, bitwise, min/max).

Tolerances (per-op contract)
----------------------------
  exact      integer/bool results always; float ops that are exact by nature (neg, abs, floor,
             ceil, trunc, round(decimals=0), frac, fmod, copysign, nextafter, minimum, maximum,
             fmin, fmax, clamp, relu, relu6, hardtanh, threshold, hardshrink, softshrink, where,
             nan_to_num, add/sub/mul with power-of-two alpha, div with rounding_mode)
  default    torch.testing's defaults for the dtype the op computes in (the result dtype, or
             for out=/in-place the lower precision of result and destination): float16
             1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 and complex64 1.3e-6/1e-5, float64 and
             complex128 1e-7/1e-7.
  bf16_slack gelu, logit, tanhshrink on bfloat16: see "Per-op contract (bf16_slack)" below.
  Any other looser contract is written next to the op in the table with its reason.
"""

import argparse
import math
import os
import sys
import warnings
import zlib

import numpy as np
import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore")
torch.set_num_threads(1)

# ------------------------------------------------------------------------------------------------
# dtypes

DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
    torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128
]
BY_NAME = {str(d).replace("torch.", ""): d for d in DTYPES}
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def dname(dt):
    return str(dt).replace("torch.", "")


def is_float(dt):
    return dt.is_floating_point


def is_complex(dt):
    return dt.is_complex


def is_intlike(dt):
    return not dt.is_floating_point and not dt.is_complex


# torch.testing defaults, by the real type.
DEFAULT_TOL = {
    torch.complex32: (1e-3, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}
PRECISION_RANK = {
    torch.complex32: 0, torch.float16: 0, torch.bfloat16: 0, torch.float32: 1, torch.complex64: 1,
    torch.float64: 2, torch.complex128: 2
}

# ------------------------------------------------------------------------------------------------
# argument kinds


class Sc:
    """An ember::Scalar argument (a Python number for torch)."""

    def __init__(self, v):
        self.v = v


class Dbl:
    def __init__(self, v):
        self.v = float(v)


class Int:
    def __init__(self, v):
        self.v = int(v)


class Bool:
    def __init__(self, v):
        self.v = bool(v)


class Str:
    def __init__(self, v):
        self.v = str(v)


def unwrap(a):
    if isinstance(a, (Sc, Dbl, Int, Bool, Str)):
        return a.v
    return a


def hexfloat(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v.hex()


def encode_param(a):
    if a is None:
        return "N"
    if isinstance(a, Sc):
        v = a.v
        if isinstance(v, bool):
            return f"S b {int(v)}"
        if isinstance(v, int):
            return f"S i {v}"
        if isinstance(v, float):
            return f"S f {hexfloat(v)}"
        if isinstance(v, complex):
            return f"S c {hexfloat(v.real)} {hexfloat(v.imag)}"
        raise TypeError(v)
    if isinstance(a, Dbl):
        return f"D {hexfloat(a.v)}"
    if isinstance(a, Int):
        return f"I {a.v}"
    if isinstance(a, Bool):
        return f"B {int(a.v)}"
    if isinstance(a, Str):
        return f"Z {a.v}"
    raise TypeError(a)


# ------------------------------------------------------------------------------------------------
# input values


def float_specials(dt):
    tiny = {torch.float16: 3 * 2.0**-24, torch.bfloat16: 2.0**-130, torch.float32: 2.0**-130,
            torch.float64: 2.0**-1060}[dt]
    big = {torch.float16: 3.0e4, torch.bfloat16: 1e30, torch.float32: 1e30,
           torch.float64: 1e200}[dt]
    return [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -2.5, tiny, -tiny, big, -big]


def is_subnormal_special(x, dt):
    return x != 0 and abs(x) < torch.finfo(dt).tiny


# torch 1.13's vectorised fmod / remainder / floor division return NaN when x / y overflows
# (fmod(1, 2**-130) is nan for 32 elements, 0 for one; floor_divide(3, 2**-130) nan vs inf): the
# "divisor" domain of those ops leaves out subnormal divisors, where torch disagrees with itself.
SUBNORMAL_DIVISOR_OPS = {"fmod", "remainder", "floor_divide", "div"}

COMPLEX_SPECIALS = [0j, complex(-0.0, 0.0), complex(math.inf, 1.0), complex(1.0, -math.inf),
                    complex(math.nan, 0.0), complex(0.0, math.nan), complex(1.0, 1.0),
                    complex(-2.5, 0.5)]

DOMAIN_EXTRAS = {
    "round": [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 1e7 + 0.5],
    "prob": [0.0, 1.0, 1e-7, 1.0 - 1e-7, -0.25, 1.25],
}


def sample_float(rng, domain, n):
    if domain in ("real", "lo_hi"):
        return rng.uniform(-5, 5, n)
    if domain == "trig":
        return rng.uniform(-8, 8, n)
    if domain == "pos":
        return rng.uniform(0.05, 8, n)
    if domain == "log1p":
        return rng.uniform(-0.9, 6, n)
    if domain == "ge1":
        return 1.0 + rng.exponential(2.0, n)
    if domain == "unit_open":
        return rng.uniform(-0.95, 0.95, n)
    if domain == "unit_closed":
        return rng.uniform(-1.0, 1.0, n)
    if domain == "exp":
        return rng.uniform(-12, 12, n)
    if domain in ("nonzero", "divisor"):
        return rng.uniform(0.25, 6, n) * rng.choice([-1.0, 1.0], n)
    if domain == "shift":
        return rng.randint(0, 8, n).astype(np.float64)
    if domain == "pow_exp":
        v = rng.choice([-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0], n)
        mask = rng.rand(n) < 0.4
        v[mask] = rng.uniform(-3, 3, int(mask.sum()))
        return v
    if domain == "pow_base":
        return rng.uniform(-4, 4, n)
    if domain == "round":
        v = rng.randint(-40, 41, n) / 4.0
        mask = rng.rand(n) < 0.5
        v[mask] = rng.uniform(-50, 50, int(mask.sum()))
        return v
    if domain == "prob":
        return rng.uniform(0.001, 0.999, n)
    if domain == "few":
        return rng.choice([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0], n)
    if domain == "lo":
        return rng.uniform(-4, 0, n)
    if domain == "hi":
        return rng.uniform(0, 4, n)
    raise ValueError(domain)


INT_RANGES = {
    "real": (-9, 9), "trig": (-9, 9), "pos": (1, 20), "log1p": (0, 20), "ge1": (1, 20),
    "unit_open": (-1, 1), "unit_closed": (-1, 1), "exp": (-9, 9), "nonzero": (-9, 9),
    "divisor": (-9, 9),
    "shift": (0, 7), "pow_exp": (0, 4), "pow_base": (-5, 5), "round": (-50, 50), "prob": (0, 1),
    "few": (-2, 2), "lo": (-5, 0), "hi": (0, 5), "lo_hi": (-9, 9), "cond": (0, 1),
}


def int_info(dt):
    if dt == torch.bool:
        return 0, 1
    i = torch.iinfo(dt)
    return i.min, i.max


def gen_values(rng, dt, n, domain, specials, int_extremes, complex_specials):
    """n values of dtype dt from `domain`, as a 1-D torch tensor."""
    if n == 0:
        return torch.empty(0, dtype=dt)
    if dt == torch.bool:
        if domain in ("nonzero", "divisor"):
            return torch.ones(n, dtype=dt)
        return torch.from_numpy(rng.randint(0, 2, n).astype(np.bool_))
    if is_intlike(dt):
        lo, hi = INT_RANGES[domain]
        tmin, tmax = int_info(dt)
        lo, hi = max(lo, tmin), min(hi, tmax)
        v = rng.randint(lo, hi + 1, n).astype(np.int64)
        if domain in ("nonzero", "divisor"):
            v[v == 0] = hi if hi != 0 else 1
        if specials and int_extremes and domain in ("real", "few"):
            sp = [0, 1, tmin, tmax] + ([-1] if tmin < 0 else [])
            pos = rng.permutation(n)[:len(sp)]
            for p, s in zip(pos, sp):
                v[p] = s
        return torch.from_numpy(v).to(dt)
    if is_complex(dt):
        re_ = sample_float(rng, domain if domain in ("unit_open", "unit_closed") else "real", n)
        im = sample_float(rng, domain if domain in ("unit_open", "unit_closed") else "real", n)
        v = re_ + 1j * im
        if specials and complex_specials:
            pos = rng.permutation(n)[:len(COMPLEX_SPECIALS)]
            for p, s in zip(pos, COMPLEX_SPECIALS):
                v[p] = s
        return torch.from_numpy(v).to(dt)
    v = sample_float(rng, domain, n)
    if specials:
        sp = float_specials(dt) + DOMAIN_EXTRAS.get(domain, [])
        if domain == "divisor":
            sp = [x for x in sp if not is_subnormal_special(x, dt)]
        pos = rng.permutation(n)[:len(sp)]
        for p, s in zip(pos, sp):
            v[p] = s
    return torch.from_numpy(v).to(dt)


# ------------------------------------------------------------------------------------------------
# tensor arguments


def parse_views(views):
    return [] if views == "-" else views.split("/")


def apply_views(t, views):
    for v in parse_views(views):
        if v == "t":
            t = t.t()
        elif v[0] == "s":
            d, k = (int(x) for x in v[1:].split(":"))
            idx = [slice(None)] * t.dim()
            idx[d] = slice(None, None, k)
            t = t[tuple(idx)]
        elif v[0] == "e":
            t = t.expand(*[int(x) for x in v[1:].split(",")])
        else:
            raise ValueError(v)
    return t


def sizes_str(s):
    return "-" if len(s) == 0 else ",".join(str(int(x)) for x in s)


def tensor_hex(t):
    t = t.contiguous().reshape(-1)
    if t.numel() == 0:
        return "-"
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes().hex()
    if t.dtype == torch.complex32:  # results only (float16 with a complex scalar)
        return torch.view_as_real(t).numpy().tobytes().hex()
    return t.numpy().tobytes().hex()


class TArg:
    """A tensor argument: a contiguous base of values, then a view recipe."""

    def __init__(self, dt, base, views="-", domain="real", specials=False, values=None):
        self.dt, self.base, self.views, self.domain = dt, tuple(base), views, domain
        self.specials, self.values = specials, values
        self.data = None  # the base tensor, made by make()

    def make(self, rng, op):
        n = int(np.prod(self.base)) if self.base else 1
        if self.values is not None:
            npdt = np.float64 if is_float(self.dt) else np.int64
            vals = torch.from_numpy(np.array(self.values, dtype=npdt)).to(self.dt)
        else:
            vals = gen_values(rng, self.dt, n, self.domain, self.specials, op.int_extremes,
                              op.complex_specials)
        self.data = vals.reshape(self.base)

    def torch_view(self):
        """A fresh copy of the base, and the view of it."""
        base = self.data.clone()
        return base, apply_views(base, self.views)

    def record(self):
        return f"T {dname(self.dt)} {sizes_str(self.base)} {self.views} {tensor_hex(self.data)}"


# ------------------------------------------------------------------------------------------------
# calling torch


class PolicyError(Exception):
    """An error ember raises where torch 1.13 only warns (recorded as RuntimeError)."""


class Undefined(Exception):
    """torch defines no answer for this case (the case is not written)."""


BINDING_MESSAGES = ("invalid combination of arguments", "must be Tensor", "unexpected keyword",
                    "positional argument", "object has no attribute")


def is_binding_error(e):
    return isinstance(e, (TypeError, AttributeError)) and any(
        m in str(e) for m in BINDING_MESSAGES)


def is_number(a):
    return isinstance(a, (bool, int, float, complex))


def wrapped(fn, skip=0):
    """Calls fn; where torch's Python API refuses a Python number for a tensor operand
    (args[skip], args[skip + 1]), retries with the number as a wrapped scalar: a 0-dim tensor of
    torch.result_type(operands), which is how PyTorch computes with a wrapped number."""

    def call(*args):
        try:
            return fn(*args)
        except (TypeError, AttributeError) as e:
            if not is_binding_error(e):
                raise
            a, b = args[skip], args[skip + 1]
            if not (is_number(a) or is_number(b)):
                raise
            rt = torch.result_type(a, b)
            conv = lambda x: torch.tensor(x).to(rt) if is_number(x) else x
            args = list(args)
            args[skip], args[skip + 1] = conv(a), conv(b)
            return fn(*args)

    return call


def call_fn(op, args, ref=None):
    """The out-of-place result: op.ref(*args), or the form's own reference."""
    return (ref or op.ref)(*args)


def has_internal_overlap(t):
    return any(st == 0 and sz > 1 for st, sz in zip(t.stride(), t.shape))


def emulate_write(dst, r, what):
    if has_internal_overlap(dst):
        raise RuntimeError(f"{what}: more than one element of the written-to tensor refers to a "
                           "single memory location")
    if tuple(dst.shape) != tuple(r.shape):
        raise RuntimeError(f"{what}: output with shape {list(dst.shape)} doesn't match the "
                           f"broadcast shape {list(r.shape)}")
    if not torch.can_cast(r.dtype, dst.dtype):
        raise RuntimeError(f"{what}: result type {r.dtype} can't be cast to {dst.dtype}")
    dst.copy_(r)


def run_inplace(op, args):
    self = args[0]
    if op.inplace is not None:
        try:
            op.inplace(*args)
            return self
        except (TypeError, AttributeError) as e:
            if not is_binding_error(e):
                raise
    # torch's Python API has no such in-place form: PyTorch's in-place rule
    r = call_fn(op, args)
    emulate_write(self, r, op.name + "_")
    return self


def run_out(op, args):
    out, rest = args[0], args[1:]
    r = call_fn(op, [a.clone() if torch.is_tensor(a) else a for a in rest])
    if out.numel() != 0 and tuple(out.shape) != tuple(r.shape):
        raise PolicyError("out has the wrong non-empty shape")
    if op.out is not None:
        try:
            op.out(*args)
            return out
        except (TypeError, AttributeError) as e:
            if not is_binding_error(e):
                raise
    if not torch.can_cast(r.dtype, out.dtype):
        raise RuntimeError(f"{op.name}_out: result type {r.dtype} can't be cast to {out.dtype}")
    if out.dtype != r.dtype:
        # torch has no out= form here; its ops differ on whether a castable out dtype is
        # accepted (add: yes; abs, clamp, isposinf: exact dtype only), so neither is expected
        raise Undefined("out= with another castable dtype for an op torch has no out= form of")
    out.resize_(r.shape)
    out.copy_(r)
    return out


# ------------------------------------------------------------------------------------------------
# the op table


class Form:
    """One calling form of an op: an argument template and the cases to generate.

    template items: "T" (a tensor operand; domains[i] gives its value domain, dtypes its dtype
    rule), or a parameter (Sc, Dbl, Int, Bool, Str, None)."""

    def __init__(self, name, template, domains=None, variants=("fn", ), layouts=None,
                 dtypes=None, operand_dtypes=None, tol=None, full=True, ref=None):
        self.name, self.template = name, template
        n = template.count("T")
        self.n = n
        self.domains = domains or ["real"] * n
        self.variants = variants
        self.layouts = layouts
        self.dtypes = dtypes if dtypes is not None else DTYPES
        self.operand_dtypes = operand_dtypes or (lambda dt: [dt] * n)
        self.tol = tol
        self.full = full  # also in-place/out on strided layouts and the out= dtype checks
        self.ref = ref  # the form's own torch reference, when it is not op.ref


class Op:

    def __init__(self, name, ref, *, inplace=None, out=None, tol="default", bf16_slack=False,
                 int_extremes=False, complex_specials=False, signed_zero=False, forms=(),
                 grid=False, mixed=False):
        self.name, self.ref, self.inplace, self.out = name, ref, inplace, out
        self.tol = tol
        self.bf16_slack = bf16_slack  # see "Per-op contract (bf16_slack)"
        self.int_extremes, self.complex_specials = int_extremes, complex_specials
        self.signed_zero = signed_zero
        self.forms = list(forms)
        self.grid, self.mixed = grid, mixed


ALL_V = ("fn", "method", "inplace", "out")
UNARY_LAYOUTS = ["C", "L", "T", "S", "E", "Z", "D"]
NARY_LAYOUTS = ["C", "L", "T", "S", "B", "E", "Z", "Z1", "D", "DC", "bad"]

OPS = []


def add_op(op):
    OPS.append(op)
    return op


def method_inplace(name):
    return lambda self, *a: getattr(self, name + "_")(*a)


def torch_out(fn):
    return lambda out, *a: fn(*a, out=out)


# ---- unary ops (EMBER_UNARY_OPS) ----
F_INPLACE = {"relu6", "selu", "silu", "mish", "hardsigmoid", "hardswish"}
F_ONLY = {"relu6", "silu", "mish", "softsign", "hardsigmoid", "hardswish", "tanhshrink",
          "logsigmoid"}
EXACT_UNARY = {"neg", "abs", "sign", "sgn", "floor", "ceil", "trunc", "frac", "bitwise_not",
               "logical_not", "relu", "relu6"}
SIGNED_ZERO = {"neg", "abs", "floor", "ceil", "trunc"}
UNARY_DOMAIN = {
    "reciprocal": "real", "sqrt": "pos", "rsqrt": "pos", "log": "pos", "log2": "pos",
    "log10": "pos", "log1p": "log1p", "exp": "exp", "exp2": "exp", "expm1": "exp",
    "sinh": "exp", "cosh": "exp", "sin": "trig", "cos": "trig", "tan": "trig",
    "asin": "unit_closed", "acos": "unit_closed", "atanh": "unit_open", "erfinv": "unit_open",
    "acosh": "ge1", "floor": "round", "ceil": "round", "trunc": "round", "frac": "round",
}
# Per-op contract (bf16_slack): torch 1.13's bfloat16 CPU kernels of gelu, logit, tanhshrink and
# sinc round their intermediates to bfloat16 (gelu(-4.03) = -0.0 where the true value is -1.1e-4;
# logit(0.484) = -0.0645 for -0.0625; sinc rounds pi * x, 5e-3 off near x = 9). For those, a bfloat16 case's atol is widened to torch's
# own largest distance from the float32 result rounded to bfloat16, so an answer as accurate as
# that passes as well as torch's; NaN/inf placement (e.g. logit's eps clamping) must still
# match. The widening is capped at BF16_SLACK_CAP, so a wild torch answer still fails.
BF16_SLACK_CAP = 1e-2

UNARY_OPS = ("neg abs sign sgn reciprocal sqrt rsqrt square exp exp2 expm1 log log2 log10 log1p "
             "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh sigmoid erf erfc erfinv "
             "floor ceil trunc frac bitwise_not logical_not relu relu6 selu silu mish softsign "
             "hardsigmoid hardswish tanhshrink logsigmoid lgamma digamma i0 sinc deg2rad "
             "rad2deg").split()

for _name in UNARY_OPS:
    if _name in F_ONLY:
        _fn = getattr(F, _name)
        _inp = (lambda f: (lambda x: f(x, inplace=True)))(_fn) if _name in F_INPLACE else None
    else:
        _fn = getattr(torch, _name)
        _inp = method_inplace(_name)
    add_op(
        Op(_name, _fn, inplace=_inp, out=torch_out(_fn),
           tol="exact_real" if _name in EXACT_UNARY else "default",
           bf16_slack=_name in ("tanhshrink", "sinc"),
           signed_zero=_name in SIGNED_ZERO, int_extremes=_name in ("bitwise_not", "logical_not"),
           complex_specials=_name in ("neg", "logical_not"),
           forms=[
               Form("x", ["T"], [UNARY_DOMAIN.get(_name, "real")],
                    variants=ALL_V + (("inplace_fn", ) if _name not in F_ONLY else ()) +
                    (("operator", ) if _name in ("neg", "bitwise_not") else ()),
                    layouts=UNARY_LAYOUTS)
           ]))

# ---- unary predicates (EMBER_UNARY_PREDICATE_OPS) ----
for _name in "isnan isinf isfinite isposinf isneginf isreal signbit".split():
    _fn = getattr(torch, _name)
    add_op(
        Op(_name, _fn, out=torch_out(_fn), tol="exact", complex_specials=True, forms=[
            Form("x", ["T"], ["real"], variants=("fn", "method", "out"), layouts=UNARY_LAYOUTS)
        ]))

# ---- binary ops (EMBER_BINARY_OPS) and comparisons (EMBER_COMPARISON_OPS) ----
SCALARS = {"b": True, "i": 3, "f": 2.5, "c": 1.5 - 0.5j}
SCALARS_BY_DOMAIN = {
    "nonzero": {"b": True, "i": -3, "f": -2.5, "c": 1.5 - 0.5j},
    "divisor": {"b": True, "i": -3, "f": -2.5, "c": 1.5 - 0.5j},
    "pos": {"b": True, "i": 3, "f": 2.5, "c": 1.5 - 0.5j},
    "shift": {"b": True, "i": 2, "f": 2.0, "c": 2 + 0j},
    "pow_exp": {"b": True, "i": 2, "f": 0.5, "c": 0.5 + 0.5j},
    "pow_base": {"b": True, "i": 2, "f": 1.5, "c": 0.5 + 0.5j},
    "few": {"b": True, "i": 1, "f": 0.5, "c": 1 + 0j},
}
OPERATORS = {"mul", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
             "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "div"}
IOPERATORS = {"mul", "bitwise_and", "bitwise_or", "bitwise_xor", "add", "sub", "div"}

BINARY_DOMAINS = {
    "true_divide": ("real", "nonzero"), "floor_divide": ("real", "divisor"),
    "remainder": ("real", "divisor"), "fmod": ("real", "divisor"),
    "pow": ("pow_base", "pow_exp"), "float_power": ("pow_base", "pow_exp"),
    "xlogy": ("few", "pos"), "bitwise_left_shift": ("real", "shift"),
    "bitwise_right_shift": ("real", "shift"), "minimum": ("few", "few"), "maximum": ("few", "few"),
    "fmin": ("few", "few"), "fmax": ("few", "few"), "logical_and": ("few", "few"),
    "logical_or": ("few", "few"), "logical_xor": ("few", "few"), "copysign": ("real", "few"),
    "nextafter": ("real", "few"), "igamma": ("pos", "pos"), "igammac": ("pos", "pos"),
}
EXACT_BINARY = {"floor_divide", "fmod", "minimum", "maximum", "fmin", "fmax", "copysign",
                "nextafter", "logical_and", "logical_or", "logical_xor", "bitwise_and",
                "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"}
INT_EXTREME_BINARY = {"minimum", "maximum", "fmin", "fmax", "logical_and", "logical_or",
                      "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
                      "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge"}


def binary_forms(name, domains, extra_params=(), variants=ALL_V, with_st=True, tol=None,
                 ts_out=True):
    """The forms of a binary op: tensor-tensor over all layouts and dtypes, tensor-scalar and
    scalar-tensor for each Python scalar kind."""
    p = list(extra_params)
    op_v = ("operator", ) if name in OPERATORS else ()
    iop_v = ("ioperator", ) if name in IOPERATORS else ()
    forms = [Form("tt", ["T", "T"] + p, list(domains), variants=variants + op_v + iop_v,
                  layouts=NARY_LAYOUTS, tol=tol)]
    # tensor op scalar: every kind in-place (int_tensor.add_(2.5) must raise); the other call
    # forms once each
    ts_variants = {"b": ("fn", "inplace"), "i": ("fn", "method", "inplace", "ioperator", "out"),
                   "f": ("fn", "operator", "inplace", "out"), "c": ("fn", "inplace")}
    sc = SCALARS_BY_DOMAIN.get(domains[1], SCALARS)
    for k, v in sc.items():
        vs = tuple(x for x in ts_variants[k] if x in variants + op_v + iop_v and
                   (ts_out or x != "out"))
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):  # &= |= ^= take tensors only
            vs = tuple(x for x in vs if x != "ioperator")
        forms.append(Form(f"ts_{k}", ["T", Sc(v)] + p, [domains[0]], variants=vs,
                          layouts=["C", "D"], tol=tol, full=False))
    if with_st:
        sc0 = SCALARS_BY_DOMAIN.get(domains[0], SCALARS)
        for k, v in sc0.items():
            vs = ("fn", ) + (op_v if k in ("i", "f") else ())
            forms.append(Form(f"st_{k}", [Sc(v), "T"] + p, [domains[1]], variants=vs,
                              layouts=["C", "D"], tol=tol, full=False))
    return forms


BINARY_OPS = ("mul true_divide floor_divide remainder fmod pow float_power atan2 minimum maximum "
              "fmin fmax hypot copysign nextafter xlogy logical_and logical_or logical_xor "
              "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift "
              "logaddexp logaddexp2 gcd lcm igamma igammac").split()
for _name in BINARY_OPS + "eq ne lt le gt ge".split():
    _fn = getattr(torch, _name)
    _doms = BINARY_DOMAINS.get(_name, ("few", "few") if _name in ("eq ne lt le gt ge".split())
                               else ("real", "real"))
    _tol = ("exact" if _name in EXACT_BINARY or _name in ("eq", "ne", "lt", "le", "gt", "ge") else
            "exact_real" if _name == "mul" else "default")
    add_op(
        Op(_name, wrapped(_fn), inplace=wrapped(method_inplace(_name)),
           out=wrapped(torch_out(_fn), skip=1), tol=_tol,
           int_extremes=_name in INT_EXTREME_BINARY, complex_specials=_name in ("eq", "ne"),
           signed_zero=_name in ("copysign", "nextafter"), grid=True, mixed=True,
           forms=binary_forms(_name, _doms)))

# heaviside: torch 1.13 refuses operands of different dtypes, so only the same-dtype forms are
# generated: a number counts as torch.tensor(number), so it meets tensors of its kind's default
# dtype (int64, float32, bool)
_heaviside_forms = [
    f for f in binary_forms("heaviside", ("real", "real"))
    if f.name in ("tt", "ts_i", "st_i", "ts_f", "st_f", "ts_b", "st_b")
]
for _f in _heaviside_forms:
    if _f.name != "tt":
        _k = _f.name[-1]
        _f.dtypes = {"b": [torch.bool], "i": [torch.int64], "f": [torch.float32]}[_k]
add_op(
    Op("heaviside", wrapped(torch.heaviside), inplace=wrapped(method_inplace("heaviside")),
       out=wrapped(torch_out(torch.heaviside), skip=1), tol="exact", grid=True, mixed=False,
       forms=_heaviside_forms))

# pow: integers to negative integer powers raise
[o for o in OPS if o.name == "pow"][0].forms.append(
    Form("ts_negint", ["T", Sc(-2)], ["pow_base"], layouts=["C"], full=False))

# ---- add / sub (alpha) ----
for _name in ("add", "sub"):
    _fn = getattr(torch, _name)

    def _ref(a, b, alpha=1, _fn=_fn):
        return _fn(a, b, alpha=alpha)

    def _inp(a, b, alpha=1, _name=_name):
        return getattr(a, _name + "_")(b, alpha=alpha)

    def _out(o, a, b, alpha=1, _fn=_fn):
        return _fn(a, b, alpha=alpha, out=o)

    _forms = binary_forms(_name, ("real", "real"), [Sc(1)], with_st=False, tol="exact",
                          ts_out=False)  # add_out/sub_out take a tensor other
    for _k, _v in SCALARS.items():
        # libtorch's (and ember's) Scalar + Tensor is t.add(s); Scalar - Tensor is sub(s, t)
        _forms.append(Form(f"st_{_k}", [Sc(_v), "T"], ["real"], variants=("operator", ),
                           layouts=["C", "D"], tol="exact", full=False,
                           ref=(lambda s, t: torch.add(t, s)) if _name == "add" else None))
    _forms += [
        Form("alpha2", ["T", "T", Sc(2)], variants=ALL_V, layouts=["C", "T", "B"], tol="exact"),
        Form("alpha_half", ["T", "T", Sc(0.5)], variants=("fn", "inplace"), layouts=["C"],
             tol="exact", full=False),
        Form("alpha_neg", ["T", Sc(3), Sc(-1)], variants=("fn", "method", "inplace"),
             layouts=["C"], tol="exact", full=False),
        Form("alpha_c", ["T", "T", Sc(1j)], variants=("fn", ), layouts=["C"], full=False),
        Form("alpha_b", ["T", "T", Sc(True)], variants=("fn", ), layouts=["C"], full=False),
    ]
    add_op(Op(_name, wrapped(_ref), inplace=wrapped(_inp), out=wrapped(_out, skip=1),
              tol="exact", grid=True, mixed=True, complex_specials=True, forms=_forms))

# ---- div (rounding_mode) ----


def _div(a, b, mode=None):
    return torch.div(a, b, rounding_mode=mode)


def _div_(a, b, mode=None):
    return a.div_(b, rounding_mode=mode)


def _div_out(o, a, b, mode=None):
    return torch.div(a, b, rounding_mode=mode, out=o)


_forms = binary_forms("div", ("real", "divisor"), [None], with_st=False, ts_out=False)
for _k, _v in SCALARS_BY_DOMAIN["nonzero"].items():
    _forms.append(Form(f"st_{_k}", [Sc(_v), "T"], ["divisor"], variants=("operator", ),
                       layouts=["C", "D"], full=False))
for _mode in ("trunc", "floor"):
    _forms.append(Form(_mode, ["T", "T", Str(_mode)], ["real", "divisor"], variants=ALL_V,
                       layouts=["C", "L", "T", "B", "Z", "D"], tol="exact"))
    for _k, _v in SCALARS_BY_DOMAIN["nonzero"].items():
        _forms.append(Form(f"{_mode}_ts_{_k}", ["T", Sc(_v), Str(_mode)], ["real"],
                           variants=("fn", "method", "inplace"), layouts=["C"], tol="exact",
                           full=False))
_forms.append(Form("badmode", ["T", "T", Str("bad")], ["real", "divisor"], layouts=["C"],
                   dtypes=[torch.float32, torch.int64], full=False))
add_op(Op("div", _div, inplace=_div_, out=_div_out, grid=True, mixed=True, forms=_forms))

# ---- round (decimals) ----
add_op(
    # ember's round(x, decimals = 0) is torch.round(x) for decimals == 0 (torch's decimals
    # overload has no integer kernels)
    Op("round", lambda x, d=0: torch.round(x, decimals=d) if d else torch.round(x),
       inplace=lambda x, d=0: x.round_(decimals=d) if d else x.round_(),
       out=lambda o, x, d=0: torch.round(x, decimals=d, out=o) if d else torch.round(x, out=o),
       signed_zero=True, forms=[
           Form("d0", ["T", Int(0)], ["round"], variants=ALL_V, layouts=UNARY_LAYOUTS,
                tol="exact"),
           Form("d2", ["T", Int(2)], ["round"], variants=ALL_V, layouts=["C", "L"], full=False),
           Form("dm1", ["T", Int(-1)], ["round"], variants=("fn", ), layouts=["C"], full=False),
       ]))

# ---- clamp (scalar or tensor bounds) ----
add_op(
    Op("clamp", lambda x, lo=None, hi=None: torch.clamp(x, lo, hi),
       inplace=lambda x, lo=None, hi=None: x.clamp_(lo, hi),
       out=lambda o, x, lo=None, hi=None: torch.clamp(x, lo, hi, out=o), tol="exact",
       int_extremes=True, forms=[
           Form("ss", ["T", Sc(-1.5), Sc(2.5)], variants=ALL_V, layouts=UNARY_LAYOUTS),
           Form("ss_int", ["T", Sc(-2), Sc(3)], variants=ALL_V, layouts=["C", "T"]),
           Form("min", ["T", Sc(0.5), None], variants=ALL_V, layouts=["C"], full=False),
           Form("max", ["T", None, Sc(0.5)], variants=ALL_V, layouts=["C"], full=False),
           Form("none", ["T", None, None], layouts=["C"], dtypes=[torch.float32], full=False),
           Form("reversed", ["T", Sc(2.0), Sc(-1.0)], layouts=["C"], full=False),
           Form("nan_min", ["T", Sc(math.nan), None], layouts=["C"], dtypes=FLOATS, full=False),
           Form("tt", ["T", "T", "T"], ["real", "lo", "hi"], variants=ALL_V,
                layouts=NARY_LAYOUTS),
           Form("tmin", ["T", "T", None], ["real", "lo"], variants=("fn", "out"),
                layouts=["C", "B"], full=False),
           Form("tmax", ["T", None, "T"], ["real", "hi"], variants=("fn", "inplace"),
                layouts=["C", "B"], full=False),
       ]))

# ---- logit (eps) ----
add_op(
    Op("logit", lambda x, eps=None: torch.logit(x, eps), inplace=lambda x, eps=None: x.logit_(eps),
       bf16_slack=True,
       forms=[
           Form("none", ["T", None], ["prob"], variants=("fn", "method", "inplace"),
                layouts=UNARY_LAYOUTS),
           Form("eps", ["T", Dbl(1e-6)], ["prob"], variants=("fn", "method", "inplace"),
                layouts=["C", "L"], full=False),
           Form("eps_big", ["T", Dbl(0.25)], ["prob"], variants=("fn", ), layouts=["C"],
                full=False),
       ]))

# ---- nan_to_num ----
add_op(
    Op("nan_to_num", lambda x, n=None, p=None, m=None: torch.nan_to_num(x, n, p, m),
       inplace=lambda x, n=None, p=None, m=None: x.nan_to_num_(n, p, m), tol="exact",
       complex_specials=True, forms=[
           Form("default", ["T", None, None, None], variants=("fn", "method", "inplace"),
                layouts=UNARY_LAYOUTS),
           Form("explicit", ["T", Dbl(0.5), Dbl(100.0), Dbl(-100.0)],
                variants=("fn", "method", "inplace"), layouts=["C", "L"], full=False),
           Form("partial", ["T", Dbl(0.0), None, Dbl(-1.0)], variants=("fn", ), layouts=["C"],
                full=False),
       ]))

# ---- lerp (scalar or tensor weight) ----
add_op(
    Op("lerp", torch.lerp, inplace=method_inplace("lerp"), forms=[
        Form("ws", ["T", "T", Sc(0.25)], variants=("fn", "method", "inplace"),
             layouts=NARY_LAYOUTS),
        Form("ws_hi", ["T", "T", Sc(0.75)], variants=("fn", "inplace"), layouts=["C", "L"],
             full=False),
        Form("ws_out", ["T", "T", Sc(2.0)], variants=("fn", ), layouts=["C"], full=False),
        Form("wt", ["T", "T", "T"], ["real", "real", "prob"], variants=("fn", "method", "inplace"),
             layouts=NARY_LAYOUTS),
    ]))

# ---- addcmul / addcdiv (value) ----
for _name in ("addcmul", "addcdiv"):
    _fn = getattr(torch, _name)
    _d = ["real", "real", "nonzero" if _name == "addcdiv" else "real"]
    add_op(
        Op(_name, (lambda f: lambda s, a, b, v=1: f(s, a, b, value=v))(_fn),
           inplace=(lambda n: lambda s, a, b, v=1: getattr(s, n + "_")(a, b, value=v))(_name),
           forms=[
               Form("v1", ["T", "T", "T", Sc(1)], _d, variants=("fn", "method", "inplace"),
                    layouts=NARY_LAYOUTS),
               Form("vhalf", ["T", "T", "T", Sc(0.5)], _d, variants=("fn", "inplace"),
                    layouts=["C", "B"], full=False),
               Form("vint", ["T", "T", "T", Sc(2)], _d, variants=("fn", ), layouts=["C"],
                    full=False),
           ]))

# ---- where ----
_cond = lambda dt: [torch.bool, dt, dt]
_cond1 = lambda dt: [torch.bool, dt]
_where_forms = [
    Form("ttt", ["T", "T", "T"], ["cond", "real", "real"], variants=("fn", "method"),
         layouts=NARY_LAYOUTS, operand_dtypes=_cond),
    Form("cond_u8", ["T", "T", "T"], ["cond", "real", "real"], layouts=["C"],
         dtypes=[torch.float32], operand_dtypes=lambda dt: [torch.uint8, dt, dt], full=False),
]
for _k, _v in SCALARS.items():
    _where_forms += [
        Form(f"tst_{_k}", ["T", Sc(_v), "T"], ["cond", "real"], layouts=["C", "D"],
             operand_dtypes=_cond1, full=False),
        Form(f"tts_{_k}", ["T", "T", Sc(_v)], ["cond", "real"], layouts=["C"],
             operand_dtypes=_cond1, full=False),
    ]
_where_forms.append(Form("tss", ["T", Sc(2.5), Sc(-1)], ["cond"], layouts=["C", "D"],
                         dtypes=[torch.bool], operand_dtypes=lambda dt: [torch.bool],
                         full=False))
for _a, _b in ((torch.int32, torch.float64), (torch.float16, torch.bfloat16),
               (torch.uint8, torch.int8), (torch.bool, torch.int64),
               (torch.float32, torch.complex64)):
    _where_forms.append(
        Form(f"mix_{dname(_a)}_{dname(_b)}", ["T", "T", "T"], ["cond", "real", "real"],
             layouts=["C"], dtypes=[_a], full=False,
             operand_dtypes=(lambda a, b: lambda dt: [torch.bool, a, b])(_a, _b)))
add_op(Op("where", torch.where, tol="exact", forms=_where_forms))

# ---- isclose ----
add_op(
    Op("isclose", torch.isclose, tol="exact", complex_specials=True, forms=[
        Form("default", ["T", "T", Dbl(1e-5), Dbl(1e-8), Bool(False)], ["few", "few"],
             variants=("fn", "method"), layouts=NARY_LAYOUTS),
        Form("loose", ["T", "T", Dbl(0.1), Dbl(0.5), Bool(False)], ["real", "real"],
             layouts=["C", "L"], full=False),
        Form("equal_nan", ["T", "T", Dbl(1e-5), Dbl(1e-8), Bool(True)], ["few", "few"],
             variants=("fn", "method"), layouts=["C", "L"], full=False),
    ]))

# ---- activations with parameters ----


def act(name, ref, inplace, forms, tol="default", bf16_slack=False):
    add_op(Op(name, ref, inplace=inplace, tol=tol, forms=forms, bf16_slack=bf16_slack))


_AV = ("fn", "inplace_fn")
act("leaky_relu", F.leaky_relu, F.leaky_relu_, [
    Form("default", ["T", Sc(0.01)], variants=_AV, layouts=UNARY_LAYOUTS),
    Form("slope", ["T", Sc(0.2)], variants=_AV, layouts=["C", "L"], full=False),
])
act("elu", torch._C._nn.elu, torch._C._nn.elu_, [
    Form("default", ["T", Sc(1), Sc(1), Sc(1)], variants=_AV, layouts=UNARY_LAYOUTS),
    Form("scaled", ["T", Sc(0.5), Sc(2), Sc(1.5)], variants=_AV, layouts=["C", "L"], full=False),
])
act("celu", torch.celu, torch.celu_, [
    Form("default", ["T", Sc(1)], variants=_AV, layouts=UNARY_LAYOUTS),
    Form("alpha2", ["T", Sc(2.0)], variants=_AV, layouts=["C", "L"], full=False),
    Form("alpha0", ["T", Sc(0.0)], layouts=["C"], dtypes=[torch.float32], full=False),
])
act("gelu", lambda x, a="none": F.gelu(x, approximate=a), None, [
    Form("none", ["T", Str("none")], variants=_AV, layouts=UNARY_LAYOUTS),
    Form("tanh", ["T", Str("tanh")], variants=_AV, layouts=["C", "L", "T"], full=False),
    Form("bad", ["T", Str("bad")], layouts=["C"], dtypes=[torch.float32], full=False),
], bf16_slack=True)
act("softplus", F.softplus, None, [
    Form("default", ["T", Sc(1), Sc(20)], layouts=UNARY_LAYOUTS),
    Form("beta2_th5", ["T", Sc(2), Sc(5)], layouts=["C", "L"], full=False),
])
act("hardtanh", F.hardtanh, F.hardtanh_, [
    Form("default", ["T", Sc(-1), Sc(1)], variants=_AV, layouts=UNARY_LAYOUTS),
    Form("custom", ["T", Sc(-0.5), Sc(2.0)], variants=_AV, layouts=["C", "L"], full=False),
], tol="exact")
act("hardshrink", F.hardshrink, None, [
    Form("default", ["T", Sc(0.5)], layouts=UNARY_LAYOUTS),
    Form("l1", ["T", Sc(1.0)], layouts=["C", "L"], full=False),
], tol="exact")
act("softshrink", F.softshrink, None, [
    Form("default", ["T", Sc(0.5)], layouts=UNARY_LAYOUTS),
    Form("l1", ["T", Sc(1.0)], layouts=["C", "L"], full=False),
    Form("negative", ["T", Sc(-1.0)], layouts=["C"], dtypes=[torch.float32], full=False),
], tol="exact")
act("threshold", F.threshold, F.threshold_, [
    Form("default", ["T", Sc(0.5), Sc(-1.0)], variants=_AV, layouts=UNARY_LAYOUTS),
    Form("int", ["T", Sc(1), Sc(5)], variants=_AV, layouts=["C", "L"], full=False),
], tol="exact")

# Mixed-dtype pairs for binary ops (":0" = a 0-dim operand).
MIXED = [("int32", "float16"), ("uint8", "int8"), ("bool", "int64"), ("float16", "bfloat16"),
         ("int64", "float32"), ("bool", "float64"), ("complex64", "float64"),
         ("int16", "complex128"), ("uint8", "bool"), ("bfloat16", "int32"),
         ("float32", "float64:0"), ("int32", "float32:0"), ("float16", "float64:0"),
         ("uint8", "int64:0"), ("int8:0", "int16:0"), ("int64:0", "float16"),
         ("complex64", "float64:0"), ("bool", "int32:0")]

# ------------------------------------------------------------------------------------------------
# cases

# "C" carries the special values; "c" is a small plain case for the other call forms.
LAYOUT_SHAPES = {"C": (4, 5), "L": (67, ), "c": (2, 3)}


def layout_args(layout, form, dts):
    """TArgs for the tensor operands of `form` in `layout`:
      C   all (4, 5) contiguous, with the special values     c   all (2, 3), plain values
      L   all (67,): vector loops and their tails            T   operand 0 is (5, 4).t()
      S   the last operand is (4, 10)[:, ::2]                S0  operand 0 is (4, 10)[:, ::2]
      E   the last operand is (1, 5).expand(4, 5)            E0  operand 0 is expanded
      B   (3, 1), (1, 4), (4,) broadcast together            Z   all (0, 3)
      Z1  (0, 3) with (1, 3)                                 D   all 0-dim
      DC  a 0-dim operand 0 with (4, 5)                      bad (2, 3) with (4, 3): no broadcast
    """
    n = form.n
    out = []
    for i in range(n):
        dom, dt = form.domains[i], dts[i]
        sp = True
        if layout in ("C", "L"):
            a = TArg(dt, LAYOUT_SHAPES[layout], domain=dom, specials=sp)
        elif layout == "c":
            a = TArg(dt, LAYOUT_SHAPES[layout], domain=dom)
        elif layout == "T":
            a = TArg(dt, (5, 4), "t", dom, sp) if i == 0 else TArg(dt, (4, 5), domain=dom)
        elif layout in ("S", "S0"):
            strided = i == (0 if layout == "S0" else n - 1)
            a = TArg(dt, (4, 10), "s1:2", dom, sp) if strided else TArg(dt, (4, 5), domain=dom)
        elif layout == "B":
            a = TArg(dt, [(3, 1), (1, 4), (4, )][i], domain=dom)
        elif layout in ("E", "E0"):
            expanded = i == (0 if layout == "E0" else n - 1)
            a = TArg(dt, (1, 5), "e4,5", dom) if expanded else TArg(dt, (4, 5), domain=dom)
        elif layout == "Z":
            a = TArg(dt, (0, 3), domain=dom)
        elif layout == "Z1":
            a = TArg(dt, (0, 3) if i == 0 else (1, 3), domain=dom)
        elif layout == "D":
            a = TArg(dt, (), domain=dom)
        elif layout == "DC":
            a = TArg(dt, () if i == 0 else (4, 5), domain=dom)
        elif layout == "bad":
            a = TArg(dt, (2, 3) if i == 0 else (4, 3), domain=dom)
        else:
            raise ValueError(layout)
        out.append(a)
    return out


def fill_template(template, targs):
    it = iter(targs)
    return [next(it) if x == "T" else x for x in template]


class Case:

    def __init__(self, op, variant, label, args, tol=None, ref=None):
        self.op, self.variant, self.label, self.args, self.tol = op, variant, label, args, tol
        self.ref = ref
        self.result = self.base_after = self.exc = None
        self.fn_dtype = None
        self.msg = ""
        self.undefined = None  # why torch gives no answer: the case is not written
        self.extra_atol = 0.0  # bf16_slack


def seed_for(*parts):
    return zlib.crc32("|".join(str(p) for p in parts).encode())


def evaluate(op, case):
    """Runs the case in torch; fills case.result / case.base_after or case.exc."""
    rng = np.random.RandomState(seed_for(op.name, case.variant, case.label))
    for a in case.args:
        if isinstance(a, TArg) and a.data is None:
            a.make(rng, op)
    made = [a.torch_view() if isinstance(a, TArg) else (None, unwrap(a)) for a in case.args]
    args = [v for _, v in made]
    try:
        if case.variant in ("fn", "method", "operator"):
            r = call_fn(op, args, case.ref)
        elif case.variant in ("inplace", "inplace_fn", "ioperator"):
            r = run_inplace(op, args)
        elif case.variant == "out":
            r = run_out(op, args)
        else:
            raise ValueError(case.variant)
        # the dtype the op computes in, for the tolerance
        fn_args = case.args[1:] if case.variant == "out" else case.args
        fn_args = [a.torch_view()[1] if isinstance(a, TArg) else unwrap(a) for a in fn_args]
        if case.fn_dtype is None:
            case.fn_dtype = call_fn(op, fn_args, case.ref).dtype
        if op.bf16_slack and case.fn_dtype == torch.bfloat16 and r.numel():
            up = [a.float() if torch.is_tensor(a) and a.dtype == torch.bfloat16 else a
                  for a in fn_args]
            r32 = call_fn(op, up, case.ref).to(torch.bfloat16).double()
            # torch's own largest distance from the accurate answer
            dev = (r.double() - r32).abs()
            dev = dev[torch.isfinite(dev)]
            case.extra_atol = min(float(dev.max()) if dev.numel() else 0.0, BF16_SLACK_CAP)
        case.result = r.detach().clone()
        if case.variant in ("fn", "method", "operator"):
            case.fn_dtype = r.dtype
        if case.variant not in ("fn", "method", "operator") and case.args[0].views != "-":
            case.base_after = made[0][0].clone()
    except Undefined as e:
        case.undefined = str(e)
    except PolicyError as e:
        case.exc = "RuntimeError"
        case.msg = f"(ember policy; torch 1.13 only warns) {e}"
    except Exception as e:
        if is_binding_error(e):
            raise AssertionError(f"generator bug: torch binding error for {op.name} "
                                 f"{case.variant} {case.label}: {e}")
        name = type(e).__name__
        if name not in ("RuntimeError", "TypeError", "ValueError", "IndexError",
                        "NotImplementedError"):
            raise AssertionError(f"unexpected {name} for {op.name} {case.label}: {e}")
        case.exc = name
        case.msg = " ".join(str(e).split())[:100]


def tolerance(op, case):
    tol = case.tol or op.tol
    r = case.result
    flags = "z" if op.signed_zero and tol in ("exact", "exact_real") else "-"
    if case.fn_dtype is None or is_intlike(case.fn_dtype) or is_intlike(r.dtype):
        return 0.0, 0.0, flags
    any_complex = any(isinstance(a, TArg) and is_complex(a.dt) for a in case.args) or any(
        isinstance(a, Sc) and isinstance(a.v, complex) for a in case.args)
    if tol == "exact" or (tol == "exact_real" and not any_complex):
        return 0.0, 0.0, flags
    # the lower precision of computation and destination
    d = min((case.fn_dtype, r.dtype), key=lambda t: PRECISION_RANK[t])
    rtol, atol = DEFAULT_TOL[d]
    atol = max(atol, case.extra_atol)
    if isinstance(tol, (int, float)):
        rtol, atol = rtol * tol, atol * tol
    return rtol, atol, "-"


def out_dtypes(rdt):
    """(castable other dtype or None, dtype torch rejects or None) for out= tests."""
    if rdt == torch.bool:
        return torch.int32, None
    if is_intlike(rdt):
        return (torch.int64 if rdt != torch.int64 else torch.float32), torch.bool
    if is_float(rdt):
        return (torch.float64 if rdt != torch.float64 else torch.complex128), torch.int64
    return (torch.complex128 if rdt != torch.complex128 else None), torch.float32


def gen_cases(op):
    """Yields evaluated cases for one op."""
    for form in op.forms:
        for dt in form.dtypes:
            dts = form.operand_dtypes(dt)
            pre = f"{form.name}:{dname(dt)}"

            def mk(variant, layout):
                targs = layout_args(layout, form, dts)
                c = Case(op, variant, f"{pre}:{layout}",
                         fill_template(form.template, targs), tol=form.tol, ref=form.ref)
                evaluate(op, c)
                return c

            # the layouts go through the function form (or the only form there is, e.g. the
            # scalar-first operator of add)
            primary = "fn" if "fn" in form.variants else form.variants[0]
            first = mk(primary, "C")
            yield first
            ok = first.exc is None
            layouts = [l for l in form.layouts if l != "C"]
            if not ok:
                layouts = [l for l in layouts if l == "D"]
            for lay in layouts:
                if lay == "bad" and dt != torch.float32:
                    continue
                yield mk(primary, lay)
            for v in ("method", "operator"):
                if v in form.variants and v != primary:
                    yield mk(v, "c")
            if "inplace" in form.variants or "inplace_fn" in form.variants or \
                    "ioperator" in form.variants:
                if "inplace" in form.variants:
                    lays = ["C"] + ([{"S": "S0", "E": "E0"}.get(l, l) for l in ("T", "S", "E", "B")
                                     if l in form.layouts] if form.full and ok else [])
                    for lay in lays:
                        yield mk("inplace", lay)
                for v in ("inplace_fn", "ioperator"):
                    if v in form.variants:
                        yield mk(v, "c")
                        if v == "inplace_fn" and form.full and ok and "T" in form.layouts:
                            yield mk(v, "T")
            if "out" in form.variants:
                yield from out_cases(op, form, dts, pre, first, ok)


def out_cases(op, form, dts, pre, first, ok):
    rdt = first.result.dtype if ok else dts[0]
    shape = tuple(first.result.shape) if ok else (4, 5)
    small = tuple(layout_args("c", form, dts)[0].base) if shape == (4, 5) else shape
    specs = [("out", rdt, shape, "-")]
    if form.full and ok:
        shape = small
        castable, rejected = out_dtypes(rdt)
        if castable is not None:
            specs.append(("out_cast", castable, shape, "-"))
        if rejected is not None:
            specs.append(("out_baddtype", rejected, shape, "-"))
        specs.append(("out_badshape", rdt, (3, 3), "-"))
        specs.append(("out_resize", rdt, (0, ), "-"))
        if len(shape) == 2:
            specs.append(("out_T", rdt, shape[::-1], "t"))
    for name, odt, osz, views in specs:
        out = TArg(odt, osz, views, "real")
        targs = layout_args("C" if name == "out" else "c", form, dts)
        args = [out] + fill_template(form.template, targs)
        c = Case(op, "out", f"{pre}:{name}", args, tol=form.tol)
        evaluate(op, c)
        yield c


def grid_cases(op):
    """Every pair of special values, for the float dtypes, and of extremes for integer dtypes."""
    if not op.grid or op.name in ("bitwise_left_shift", "bitwise_right_shift"):
        return
    tt = [f for f in op.forms if f.name == "tt"][0]
    grids = [(dt, [x for x in float_specials(dt)
                   if op.name not in SUBNORMAL_DIVISOR_OPS or not is_subnormal_special(x, dt)])
             for dt in FLOATS]
    if op.int_extremes:
        for dt in (torch.uint8, torch.int8, torch.int32, torch.int64):
            lo, hi = int_info(dt)
            grids.append((dt, sorted({lo, hi, 0, 1, lo + 1, hi - 1} | ({-1} if lo < 0 else set()))))
    for dt, sp in grids:
        n = len(sp)
        a = [[sp[i]] * n for i in range(n)]
        b = [sp[:] for _ in range(n)]
        args = fill_template(tt.template, [TArg(dt, (n, n), values=a), TArg(dt, (n, n), values=b)])
        c = Case(op, "fn", f"grid:{dname(dt)}:G", args, tol=tt.tol)
        evaluate(op, c)
        yield c


def mixed_cases(op):
    """Operands of different dtypes (a representative set), both orders, with in-place and out=
    for the first order."""
    if not op.mixed:
        return
    tt = [f for f in op.forms if f.name == "tt"][0]
    for a, b in MIXED:
        for x, y in ((a, b), (b, a)):
            specs = []
            for s in (x, y):
                name, _, zero = s.partition(":")
                specs.append((BY_NAME[name], () if zero else (3, 4)))
            label = "mix:" + "+".join(s.replace(":0", "@0") for s in (x, y))

            def mk():
                return fill_template(tt.template, [
                    TArg(specs[i][0], specs[i][1], domain=tt.domains[i], specials=True)
                    for i in range(2)
                ])

            c = Case(op, "fn", label + ":C", mk(), tol=tt.tol)
            evaluate(op, c)
            yield c
            if (x, y) != (a, b):
                continue
            if "inplace" in tt.variants:
                ci = Case(op, "inplace", label + ":C", mk(), tol=tt.tol)
                evaluate(op, ci)
                yield ci
            if "out" in tt.variants and c.exc is None:
                out = TArg(c.result.dtype, tuple(c.result.shape), "-", "real")
                co = Case(op, "out", label + ":out", [out] + mk(), tol=tt.tol)
                evaluate(op, co)
                yield co


def extra_cases(op):
    """Cases that need a hand-made layout."""
    # in-place with self smaller than the broadcast shape
    forms = [f for f in op.forms if f.n >= 2 and "inplace" in f.variants]
    if forms:
        f = forms[0]
        dt = torch.float32
        dts = f.operand_dtypes(dt)
        targs = [TArg(dts[0], (1, 4), domain=f.domains[0])] + [
            TArg(dts[i], (3, 4), domain=f.domains[i]) for i in range(1, f.n)
        ]
        c = Case(op, "inplace", f"{f.name}:float32:self_bcast", fill_template(f.template, targs),
                 tol=f.tol)
        evaluate(op, c)
        yield c


COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def torch_bug(op, c):
    """Why torch 1.13's answer for this case is not PyTorch's semantics (the case is then not
    written), or None."""
    if (op.name in COMPARISONS and c.variant in ("inplace", "ioperator") and
            isinstance(c.args[0], TArg) and is_complex(c.args[0].dt)):
        return "vectorised in-place comparisons into a complex self write 1+1j for True"
    if op.name in ("igamma", "igammac"):
        a = c.args[1 if c.variant == "out" else 0]
        if isinstance(a, TArg) and a.data is not None and is_float(a.dt):
            t = a.data.double()
            tiny = torch.finfo(torch.float64 if a.dt == torch.float64 else torch.float32).tiny
            if bool(((t != 0) & (t.abs() < tiny)).any()):
                return ("x^a e^-x / Gamma(a) underflows to 0 for a subnormal a (P(a, x) is 0 "
                        "there instead of about 1)")
    return None


def all_cases(op):
    for gen in (gen_cases, grid_cases, mixed_cases, extra_cases):
        for c in gen(op):
            if torch_bug(op, c) is None and c.undefined is None:
                yield c


# ------------------------------------------------------------------------------------------------
# output


def result_record(tag, t):
    return f"{tag} {dname(t.dtype)} {sizes_str(t.shape)} {tensor_hex(t)}"


def case_records(op, c):
    lines = [f"C {op.name} {c.variant} {c.label}"]
    for a in c.args:
        lines.append(a.record() if isinstance(a, TArg) else encode_param(a))
    if c.exc is not None:
        lines.append(f"X {c.exc} {c.msg}")
    else:
        lines.append(result_record("R", c.result))
        if c.base_after is not None:
            lines.append(result_record("W", c.base_after))
        rtol, atol, flags = tolerance(op, c)
        lines.append(f"K {rtol!r} {atol!r} {flags}")
    lines.append("E")
    return lines


def op_records(name):
    """All records of one op (run in a worker process)."""
    op = [o for o in OPS if o.name == name][0]
    lines, n, nexc = [], 0, 0
    for c in all_cases(op):
        lines += case_records(op, c)
        n += 1
        nexc += c.exc is not None
    return name, lines, n, nexc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--only", default="", help="comma-separated op names (debugging)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    assert torch.get_default_dtype() == torch.float32
    os.makedirs(args.out, exist_ok=True)
    names = [op.name for op in OPS]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate ops in the table: {dup}"
    if args.only:
        names = [n for n in names if n in set(args.only.split(","))]

    # One file per op (each test instance reads only its own), then the index, written last:
    # it is the build's output, and lists the ops the C++ side must know.
    folder = os.path.join(args.out, "elementwise")
    os.makedirs(folder, exist_ok=True)
    total = size = 0
    index = ["V 1"]
    if args.jobs > 1:
        import multiprocessing
        pool = multiprocessing.get_context("fork").Pool(args.jobs)
        results = pool.imap(op_records, names)  # in table order
    else:
        pool, results = None, map(op_records, names)
    for name, lines, n, nexc in results:
        path = os.path.join(folder, name + ".txt")
        with open(path + ".tmp", "w") as f:
            f.write("V 1\n" + "\n".join(lines) + "\n")
        os.replace(path + ".tmp", path)
        size += os.path.getsize(path)
        total += n
        index.append(f"O {name} {n}")
        if args.verbose:
            print(f"  {name}: {n} cases ({nexc} expect an exception)", file=sys.stderr)
    if pool is not None:
        pool.close()
        pool.join()
    path = os.path.join(args.out, "elementwise.txt")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(index) + "\n")
    os.replace(path + ".tmp", path)
    print(f"gen_elementwise: {len(names)} ops, {total} cases -> {folder}/ ({size / 1e6:.1f} MB)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
