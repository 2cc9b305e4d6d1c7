#!/usr/bin/env python3
"""OpInfo conformance: PyTorch 1.13's op_db samples run through ember, compared with torch.

Every op_db entry is called through the mapping table (ember_ops.py) on each of its CPU
samples, and the results are compared with torch's: same dtypes, shapes and values within the
OpInfo's tolerances (torch's defaults where it has none); where torch raises, ember must raise
an exception of the same kind. See README.md.
"""

import argparse
import pathlib
import faulthandler
import functools
import os
import sys
import textwrap
import time
import types
import unittest
import warnings
import zlib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember_ops  # noqa: E402
from backends import default_call, make_backend, torch_name  # noqa: E402

DTYPES = {"float32": torch.float32, "float64": torch.float64}

SUMMARY_HELP = """\
summary lines:
  DTYPE: N/OPS ops, M/K samples pass
    OPS  the op_db entries selected (all 621 without --ops)
    N    those that are mapped, support DTYPE on CPU and pass every sample
    K    the samples of the mapped ops (the backend has a callable for them) that support
         DTYPE; an op whose sample generation fails adds none
    M    the samples among K that pass
"""


VMAP_PASSING = pathlib.Path(__file__).with_name("vmap_passing.txt")


def load_op_db():
    """torch's op_db, importable without expecttest (a test-only package Debian lacks)."""
    stub = types.ModuleType("expecttest")
    stub.TestCase, stub.ACCEPT = unittest.TestCase, False
    sys.modules.setdefault("expecttest", stub)
    # common_utils parses sys.argv for its own flags at import.
    argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        from torch.testing._internal.common_device_type import onlyCUDA
        from torch.testing._internal.common_methods_invocations import op_db
    finally:
        sys.argv = argv
    return op_db, onlyCUDA


def op_key(op):
    return f"{op.name}[{op.variant_test_name}]" if op.variant_test_name else op.name


def cpu_dtypes(op, only_cuda):
    if only_cuda in op.decorators:
        return set()
    return set(op.supported_dtypes("cpu"))


def tolerances(op, dtype):
    """(rtol, atol) loosened by the OpInfo's CPU tolerance overrides for dtype, or (None, None)
    for torch's defaults. The overrides of all its tests are merged: they describe how far
    correct implementations of this op may differ."""
    rtol, atol = torch.testing._comparison.default_tolerances(dtype)
    found = False
    for info in op.decorators:
        if getattr(info, "device_type", None) not in (None, "cpu"):
            continue
        if getattr(info, "dtypes", None) is not None and dtype not in info.dtypes:
            continue
        for dec in getattr(info, "decorators", ()):
            overrides = getattr(dec, "d", None)
            if not isinstance(overrides, dict) or dtype not in overrides:
                continue
            prec = overrides[dtype]
            if hasattr(prec, "atol"):  # toleranceOverride
                atol, rtol = max(atol, prec.atol), max(rtol, prec.rtol)
            else:  # precisionOverride: an atol
                atol = max(atol, prec)
            found = True
    return (rtol, atol) if found else (None, None)


class Mismatch(Exception):
    pass


def compare(backend, actual, expected, tol, meta, where="output"):
    """Raises Mismatch (or assert_close's AssertionError) when actual differs from expected."""
    if isinstance(expected, torch.Tensor):
        if not backend.is_tensor(actual):
            raise Mismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        got, want = backend.dtype_name(actual), torch_name(expected.dtype)
        if got != want:
            raise Mismatch(f"{where}: dtype {got}, expected {want}")
        if tuple(actual.shape) != tuple(expected.shape):
            raise Mismatch(f"{where}: shape {tuple(actual.shape)}, expected "
                           f"{tuple(expected.shape)}")
        if meta:
            return
        rtol, atol = tol
        torch.testing.assert_close(backend.to_torch(actual), expected, rtol=rtol, atol=atol,
                                   equal_nan=True, check_device=False, check_stride=False,
                                   msg=lambda m: f"{where}: {m}")
    elif isinstance(expected, (tuple, list)):
        if isinstance(actual, (str, bytes)) or not hasattr(actual, "__len__"):
            raise Mismatch(f"{where}: expected a sequence, got {type(actual).__name__}")
        if len(actual) != len(expected):
            raise Mismatch(f"{where}: {len(actual)} elements, expected {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(backend, a, e, tol, meta, f"{where}[{i}]")
    elif isinstance(expected, torch.dtype):
        if torch_name(actual) != torch_name(expected):
            raise Mismatch(f"{where}: {actual}, expected {expected}")
    elif isinstance(expected, (bool, int, float, complex)):
        if isinstance(expected, bool) != isinstance(actual, bool) or backend.is_tensor(actual):
            raise Mismatch(f"{where}: {type(actual).__name__} {actual!r}, expected "
                           f"{type(expected).__name__} {expected!r}")
        if not meta:
            torch.testing.assert_close(actual, expected, equal_nan=True,
                                       msg=lambda m: f"{where}: {m}")
    elif expected is None:
        if actual is not None:
            raise Mismatch(f"{where}: {type(actual).__name__}, expected None")
    elif actual != expected:
        raise Mismatch(f"{where}: {actual!r}, expected {expected!r}")


def error_kind(exc):
    """The builtin exception class exc belongs to (torch's LinAlgError is a RuntimeError)."""
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")


def describe(exc):
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, Mismatch) else text


def _retype(x, dtype):
    """x with its floating tensors (also inside lists and tuples) converted to dtype."""
    if isinstance(x, torch.Tensor):
        return x.to(dtype) if x.is_floating_point() else x
    if isinstance(x, (list, tuple)):
        return type(x)(_retype(v, dtype) for v in x)
    if isinstance(x, dict):
        return {k: _retype(v, dtype) for k, v in x.items()}
    return x


def run_sample(backend, op, fn, sample, tol, meta, ref64=False):
    """None when the sample passes, else the failure message. With ref64, the expected float32
    result is torch's float64 result rounded to float32."""
    try:
        b_input = backend.convert(sample.input)
        b_args = backend.convert(sample.args)
        b_kwargs = backend.convert(sample.kwargs)
    except Exception as e:
        return f"converting the inputs: {describe(e)}"
    try:
        if ref64:
            expected = _retype(op(_retype(sample.input, torch.float64),
                                  *_retype(sample.args, torch.float64),
                                  **_retype(sample.kwargs, torch.float64)), torch.float32)
        else:
            expected = op(sample.input, *sample.args, **sample.kwargs)
        t_error = None
    except Exception as e:
        t_error = e
    try:
        actual, b_error = fn(b_input, *b_args, **b_kwargs), None
    except Exception as e:
        b_error = e
    if t_error is not None:
        kind = error_kind(t_error)
        if isinstance(b_error, kind):
            return None
        got = describe(b_error) if b_error is not None else "no error"
        return f"torch raises {kind.__name__} ({describe(t_error)}), got {got}"
    if b_error is not None:
        return describe(b_error)
    try:
        compare(backend, actual, expected, tol, meta)
    except Exception as e:
        return describe(e)
    return None


def _map_tensors(obj, fn):
    """obj with each floating or complex torch tensor t replaced by fn(t) (lists, tuples, dicts)."""
    if isinstance(obj, torch.Tensor):
        return fn(obj) if (obj.is_floating_point() or obj.is_complex()) else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_tensors(v, fn) for v in obj)
    if isinstance(obj, dict):
        return {k: _map_tensors(v, fn) for k, v in obj.items()}
    return obj


def _flat_like(t_obj, b_obj):
    """The objects of b_obj at the positions of t_obj's floating or complex tensors."""
    if isinstance(t_obj, torch.Tensor):
        return [b_obj] if (t_obj.is_floating_point() or t_obj.is_complex()) else []
    if isinstance(t_obj, (list, tuple)):
        return [b for t, bb in zip(t_obj, b_obj) for b in _flat_like(t, bb)]
    if isinstance(t_obj, dict):
        return [b for k in t_obj for b in _flat_like(t_obj[k], b_obj[k])]
    return []


def _swap(obj, repl):
    """obj with the objects whose id() is a key of repl replaced by repl's value."""
    if id(obj) in repl:
        return repl[id(obj)]
    if isinstance(obj, (list, tuple)):
        return type(obj)(_swap(v, repl) for v in obj)
    if isinstance(obj, dict):
        return {k: _swap(v, repl) for k, v in obj.items()}
    return obj


def _flat(obj, is_tensor):
    """The tensors of a result, in order (a tensor, or nested lists/tuples of them)."""
    if is_tensor(obj):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _flat(v, is_tensor)]
    return []


def run_grad_sample(backend, op, fn, sample, tol, forward):
    """None when ember's vjp (forward=False) or jvp (forward=True) of the sample matches torch's,
    else the failure message. Samples torch cannot differentiate are skipped (None)."""
    E = backend.module
    leaves_t = []

    def leaf(t):
        x = t.detach().clone().requires_grad_(not forward)
        leaves_t.append(x)
        return x

    t_in, t_args, t_kwargs = (_map_tensors(x, leaf) for x in
                              (sample.input, sample.args, sample.kwargs))
    if not leaves_t:
        return None
    try:
        b_in, b_args, b_kwargs = (backend.convert(_map_tensors(x, lambda t: t.detach()))
                                  for x in (t_in, t_args, t_kwargs))
        # The ember tensors at the leaves' positions, in the same order.
        b_all = [b for b in _flat_like((sample.input, sample.args, sample.kwargs),
                                       (b_in, b_args, b_kwargs))]
        if not forward:
            for b in b_all:
                b.requires_grad_()
    except Exception as e:
        return f"converting the inputs: {describe(e)}"
    gen = torch.Generator().manual_seed(0)
    if forward:
        tangents = [torch.randn(t.shape, generator=gen, dtype=t.dtype) for t in leaves_t]
        try:
            with torch.autograd.forward_ad.dual_level():
                duals = iter([torch.autograd.forward_ad.make_dual(t, v)
                              for t, v in zip(leaves_t, tangents)])
                ti, ta, tk = (_map_tensors(x, lambda t: next(duals)) for x in
                              (sample.input, sample.args, sample.kwargs))
                outs = _flat(op(ti, *ta, **tk), lambda x: isinstance(x, torch.Tensor))
                expected = [torch.autograd.forward_ad.unpack_dual(o).tangent for o in outs]
        except Exception:
            return None
        try:
            with E.autograd.forward_ad.dual_level():
                duals_b = {id(b): E.autograd.forward_ad.make_dual(b, backend.convert(v))
                           for b, v in zip(b_all, tangents)}
                bi, ba, bk = (_swap(x, duals_b) for x in (b_in, b_args, b_kwargs))
                bouts = _flat(fn(bi, *ba, **bk), backend.is_tensor)
                actual = [E.autograd.forward_ad.unpack_dual(o).tangent for o in bouts]
        except Exception as e:
            return f"forward AD: {describe(e)}"
        if len(actual) != len(expected):
            return f"forward AD: {len(actual)} outputs, expected {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            if e is None:
                continue
            if a is None:
                return f"forward AD: output {i} has no tangent"
            try:
                compare(backend, a, e, tol, False, f"tangent[{i}]")
            except Exception as ex:
                return describe(ex)
        return None
    try:
        outs = _flat(op(t_in, *t_args, **t_kwargs), lambda x: isinstance(x, torch.Tensor))
        diff = [i for i, o in enumerate(outs) if o.requires_grad]
        if not diff:
            return None
        gouts = [torch.randn(outs[i].shape, generator=gen, dtype=outs[i].dtype) for i in diff]
        expected = torch.autograd.grad([outs[i] for i in diff], leaves_t, gouts,
                                       allow_unused=True)
    except Exception:
        return None
    try:
        bouts = _flat(fn(b_in, *b_args, **b_kwargs), backend.is_tensor)
        for i in diff:
            if not bouts[i].requires_grad:
                return f"output {i} does not require grad"
        actual = E.autograd.grad([bouts[i] for i in diff], b_all,
                                 [backend.convert(g) for g in gouts], allow_unused=True)
    except Exception as e:
        return f"backward: {describe(e)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        e = torch.zeros_like(leaves_t[i]) if e is None else e
        if a is None:
            a = backend.convert(torch.zeros_like(leaves_t[i]))
        try:
            compare(backend, a, e, tol, False, f"grad[{i}]")
        except Exception as ex:
            return describe(ex)
    return None


def _batched_copies(t, k):
    """Batch element k of a batch made from sample tensor t: floating tensors are scaled a little
    per element (values stay in the op's domain), other tensors repeat."""
    if t.is_floating_point() or t.is_complex():
        return t * (1.0 + 0.03 * k)
    return t.clone()


def run_vmap_sample(backend, op, fn, sample, tol, B=3):
    """None when ember.func.vmap of the op, batching each tensor argument in turn (batch dim
    first, then last), equals torch's loop over the batch; else the failure message. Samples
    torch cannot loop over, or whose results are not tensors, are skipped (None)."""
    E = backend.module
    positional = [sample.input] + list(sample.args)
    slots = [i for i, a in enumerate(positional) if isinstance(a, torch.Tensor) and a.dim() >= 0]
    for slot in slots:
        base = positional[slot]
        elems = [_batched_copies(base, k) for k in range(B)]
        try:
            outs = []
            for k in range(B):
                args = list(positional)
                args[slot] = elems[k]
                outs.append(op(*args, **sample.kwargs))
            flat = [_flat(o, lambda x: isinstance(x, torch.Tensor)) for o in outs]
            if not flat[0] or any(len(f) != len(flat[0]) for f in flat):
                return None
            if any(not isinstance(o, (torch.Tensor, tuple, list)) for o in outs):
                return None
            expected = [torch.stack([f[j] for f in flat]) for j in range(len(flat[0]))]
        except Exception:
            return None
        for bdim in (0, -1):
            batched = torch.stack(elems, dim=bdim if bdim == 0 else base.dim())
            try:
                b_args = [backend.convert(a) for a in positional]
                b_args[slot] = backend.convert(batched)
                b_kwargs = backend.convert(sample.kwargs)
                in_dims = tuple((bdim if i == slot else None) for i in range(len(b_args)))

                def call(*a):
                    return tuple(_flat(fn(*a, **b_kwargs), backend.is_tensor))

                actual = E.func.vmap(call, in_dims=in_dims)(*b_args)
            except Exception as e:
                return f"vmap of argument {slot} (batch dim {bdim}): {describe(e)}"
            if len(actual) != len(expected):
                return f"vmap: {len(actual)} outputs, expected {len(expected)}"
            for j, (a, e) in enumerate(zip(actual, expected)):
                try:
                    compare(backend, a, e, tol, False, f"vmap output {j}")
                except Exception as ex:
                    return f"argument {slot}, batch dim {bdim}: {describe(ex)}"
    return None


class Result:
    """One op at one dtype: status, samples passed/total, first failure message."""

    def __init__(self, status, passed=0, total=0, message=""):
        self.status, self.passed, self.total, self.message = status, passed, total, message


def run_op(backend, op, entry, dtype, only_cuda, inputs, max_samples, log=None, grads=None,
           vmaps=None):
    if dtype not in cpu_dtypes(op, only_cuda):
        return Result("unsupported")
    if entry.unmapped:
        return Result("unmapped", message=entry.unmapped)
    spec = entry.call if entry.call is not None else default_call(op)
    if spec is None:
        return Result("unmapped", message="no default spelling: add a call to the table")
    fn = backend.resolve(spec)
    if fn is None:
        return Result("unmapped", message=f"{backend.name} has no {spec}")
    if entry.adapt is not None:
        fn = functools.partial(entry.adapt, fn)
    try:
        # Seeded per op and dtype: a run's samples do not depend on which ops ran before.
        torch.manual_seed(zlib.crc32(f"{op.name}[{op.variant_test_name}] {dtype}".encode()))
        make = op.reference_inputs if inputs == "reference" else op.sample_inputs
        samples = list(make("cpu", dtype, requires_grad=False))
    except Exception as e:
        return Result("error", message=f"sample generation: {describe(e)}")
    if max_samples:
        samples = samples[:max_samples]
    tol = tolerances(op, dtype)

    def check_all(check, label):
        """Runs check(sample) -> None or a message over the samples; a Result."""
        res = Result("pass", total=len(samples))
        for i, sample in enumerate(samples):
            msg = check(sample)
            if msg is None:
                res.passed += 1
                continue
            if not res.message:
                res.message = f"sample {i}: {msg}"
            if log:
                log(f"  {torch_name(dtype)}{label} sample {i}: {msg}\n    {sample.summary()}")
        if res.passed < res.total:
            res.status = "fail"
        return res

    ref64 = entry.reference == "float64" and dtype == torch.float32
    res = check_all(lambda s: run_sample(backend, op, fn, s, tol, entry.compare == "meta", ref64),
                    "")
    # vmap against a loop over the batch (the vmap column), for ops whose forward passes and
    # whose OpInfo checks batched gradients (functorch's flags).
    if vmaps is not None and res.status == "pass" and entry.compare == "values" and (
            getattr(op, "check_batched_forward_grad", False)
            or getattr(op, "check_batched_grad", False)):
        vmaps["vmap"] = check_all(lambda s: run_vmap_sample(backend, op, fn, s, tol), " vmap")
    # Gradients and tangents, for ops whose forward passes and whose OpInfo differentiates.
    if grads is not None and res.status == "pass" and entry.compare == "values":
        for kind, flag in (("grad", "supports_autograd"), ("fwd_ad", "supports_forward_ad")):
            if getattr(op, flag, False):
                grads[kind] = check_all(
                    lambda s, fwd=kind == "fwd_ad": run_grad_sample(backend, op, fn, s, tol, fwd),
                    f" {kind}")
    return res


def missing_spellings(backend, op):
    """The op's other torch spellings (OpInfo aliases, Tensor methods) the backend lacks."""
    names = []
    if op.method_variant is not None and "." not in op.name:
        names.append("Tensor." + op.name)
    for alias in op.aliases:
        names.append(alias.name)
        if alias.method_variant is not None:
            names.append("Tensor." + alias.name)
    return [n for n in names if backend.resolve("." + n[7:] if n.startswith("Tensor.") else n)
            is None]


def shorten(text, width):
    return text if len(text) <= width else text[: width - 3] + "..."


def print_report(rows, dtypes):
    cols = list(dtypes) + [f"{k}:float64" for k in ("grad", "fwd_ad") if "float64" in dtypes]
    head = f"{'op':<46}" + "".join(f"{d:<22}" for d in cols) + "first failure"
    print(head)
    print("-" * len(head))
    for key, results in rows:
        cells = ""
        for d in cols:
            r = results.get(d)
            if r is None:
                cells += " " * 22
                continue
            counts = f"{r.passed}/{r.total}" if r.status in ("pass", "fail") else ""
            cells += f"{r.status:<12}{counts:<10}"
        msg = next((results[d].message for d in cols if d in results and results[d].message),
                   "")
        print(f"{key:<46}{cells}{shorten(msg, 110)}")
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=SUMMARY_HELP)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="summary, and exit 1 when an op marked supported fails (default)")
    mode.add_argument("--report", action="store_true",
                      help="the per-op table, then what --check prints")
    parser.add_argument("--ops", help="comma-separated op names or name[variant] keys")
    parser.add_argument("--dtypes", default="float32,float64",
                        help="comma-separated, from float32,float64 (default both)")
    parser.add_argument("--inputs", choices=("sample", "reference"), default="sample",
                        help="the OpInfo's sample_inputs (default), or its larger "
                        "reference_inputs (extremal values, noncontiguous and broadcast cases)")
    parser.add_argument("--max-samples", type=int, default=0, help="samples per op and dtype")
    parser.add_argument("--backend", choices=("ember", "torch"), default="ember",
                        help="torch stands in for ember to validate the harness itself")
    parser.add_argument("--no-grad", action="store_true",
                        help="skip the gradient and forward-AD comparisons (float64 only)")
    parser.add_argument("--vmap", action="store_true",
                        help="add the vmap column: ember.func.vmap against a loop (first dtype)")
    parser.add_argument("--verbose", action="store_true",
                        help="name each op as it starts, print every failing sample in full")
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore")  # op_db samples trigger torch's deprecation chatter
    faulthandler.enable()  # a crash in the binding still names the op being run
    torch.set_num_threads(1)
    dtypes = args.dtypes.split(",")
    for d in dtypes:
        if d not in DTYPES:
            parser.error(f"unknown dtype {d}")
    op_db, only_cuda = load_op_db()
    known = {op.name for op in op_db} | {op_key(op) for op in op_db}
    stale = [f"  {key}: no such op_db entry" for key in ember_ops.TABLE if key not in known]
    if args.ops:
        wanted = set(args.ops.split(","))
        op_db = [op for op in op_db if op.name in wanted or op_key(op) in wanted]
        if not op_db:
            parser.error("--ops matches no op_db entry")
    try:
        backend = make_backend(args.backend)
    except ImportError as e:
        print(f"cannot import {args.backend} ({e}); is PYTHONPATH=build/release/python set and "
              "the binding built?", file=sys.stderr)
        return 2

    log = (lambda text: print(text, file=sys.stderr, flush=True)) if args.verbose else None
    start = time.time()
    rows = []
    for op in op_db:
        key = op_key(op)
        entry = ember_ops.lookup(op.name, op.variant_test_name)
        if log:
            log(key)
        results = {}
        for d in dtypes:
            grads = {} if (d == "float64" and not args.no_grad) else None
            vmaps = {} if (args.vmap and d == dtypes[0]) else None
            results[d] = run_op(backend, op, entry, DTYPES[d], only_cuda, args.inputs,
                                args.max_samples, log, grads, vmaps)
            for kind, g in (grads or {}).items():
                results[f"{kind}:{d}"] = g
            for kind, g in (vmaps or {}).items():
                results[f"{kind}:{d}"] = g
        rows.append((key, results))
    elapsed = time.time() - start

    if args.report:
        print_report(rows, dtypes)
        missing = []
        for op, (key, results) in zip(op_db, rows):
            if any(r.status in ("pass", "fail") for r in results.values()):
                missing += [f"{n} ({key})" for n in missing_spellings(backend, op)]
        if missing:
            print(f"other spellings of run ops that {args.backend} lacks ({len(missing)}):")
            print(textwrap.fill(", ".join(missing), 100, initial_indent="  ",
                                subsequent_indent="  ", break_on_hyphens=False) + "\n")

    regressions, unmarked = [], []
    for op, (key, results) in zip(op_db, rows):
        entry = ember_ops.lookup(op.name, op.variant_test_name)
        passing = []
        for d in dtypes:
            r = results[d]
            # An OpInfo without CPU support for d (a variant under a bare name) has nothing to
            # hold ember to.
            if d in entry.supported and r.status not in ("pass", "unsupported"):
                regressions.append(f"  {key} ({d}): {r.status}: {shorten(r.message, 160)}")
            elif d not in entry.supported and r.status == "pass":
                passing.append(d)
        if passing and args.backend == "ember":
            unmarked.append(key if len(passing) == len(dtypes) else f"{key} ({passing[0]})")
        for d in entry.supported - set(DTYPES):
            stale.append(f"  {key}: unknown dtype {d}")

    for op, (key, results) in zip(op_db, rows):
        entry = ember_ops.lookup(op.name, op.variant_test_name)
        for kind in ("grad", "fwd_ad"):
            for d in getattr(entry, kind):
                r = results.get(f"{kind}:{d}")
                if r is not None and r.status != "pass":
                    regressions.append(f"  {key} ({kind} {d}): {shorten(r.message, 160)}")
            for d in dtypes:
                r = results.get(f"{kind}:{d}")
                if r is not None and r.status == "pass" and d not in getattr(entry, kind):
                    unmarked.append(f"{key} ({kind})")
    # The vmap column: ops listed in vmap_passing.txt must keep passing.
    if args.vmap:
        listed = set(VMAP_PASSING.read_text().split()) if VMAP_PASSING.exists() else set()
        d = dtypes[0]
        for op, (key, results) in zip(op_db, rows):
            r = results.get(f"vmap:{d}")
            if key in listed and (r is None or r.status != "pass"):
                why = r.message if r is not None else "not run (its forward fails)"
                regressions.append(f"  {key} (vmap {d}): {shorten(why, 160)}")
            elif r is not None and r.status == "pass" and key not in listed:
                unmarked.append(f"{key} (vmap)")
    if unmarked:
        print(f"passing but not marked supported in ember_ops.py ({len(unmarked)}):")
        print(textwrap.fill(", ".join(unmarked), 100, initial_indent="  ",
                            subsequent_indent="  ", break_on_hyphens=False))
    if regressions or stale:
        print(f"REGRESSIONS: ops marked supported that do not pass ({len(regressions)}), "
              f"table errors ({len(stale)}):")
        print("\n".join(regressions + stale))
    print(f"backend {args.backend}, {elapsed:.1f} s")
    for d in dtypes:
        rs = [results[d] for _, results in rows]
        n = sum(r.status == "pass" for r in rs)
        m = sum(r.passed for r in rs)
        k = sum(r.total for r in rs)
        print(f"{d}: {n}/{len(rows)} ops, {m}/{k} samples pass")
    for kind, label in (("grad", "gradients"), ("fwd_ad", "forward-AD tangents"),
                        ("vmap", "vmap against a loop")):
        for d in dtypes:
            rs = [results[f"{kind}:{d}"] for _, results in rows if f"{kind}:{d}" in results]
            if not rs:
                continue
            n = sum(r.status == "pass" for r in rs)
            m = sum(r.passed for r in rs)
            k = sum(r.total for r in rs)
            print(f"{d} {label}: {n}/{len(rs)} ops (whose forward passes and whose OpInfo "
                  f"supports it), {m}/{k} samples pass")
    return 1 if regressions or stale else 0


if __name__ == "__main__":
    sys.exit(main())
