"""Random-argument fuzzing of ember's public Python API.

Every public function (top level, Tensor methods, nn.functional, linalg, special) is called with
random arguments: tensors of every dtype with 0-d, zero-size and size-1 shapes, strided and
expanded views, NaN and inf, negative and huge integers, None and wrong types (str, list of str,
dict), on 1 and 2 threads. Each batch runs in a subprocess under an address-space limit, so a
crash, a hang (per-call watchdog) or a runaway allocation is caught and reported with the call
that caused it; the batch then resumes after that call.

A call may fail only with one of PyTorch's exception types (RuntimeError, ValueError, TypeError,
IndexError, NotImplementedError; MemoryError for an allocation that the limit refuses), with an
ember message: pybind11's internal wording or a leaked std::exception is a failure.

The seed is fixed, so the run is deterministic. EMBER_FUZZ_CALLS (calls per function and thread
count, default 12) and EMBER_FUZZ_SEEDS (comma-separated, default "0") make longer runs:
    EMBER_FUZZ_CALLS=40 EMBER_FUZZ_SEEDS=1,2,3 pytest tests/python/test_fuzz_api.py
Run one call by hand with
    python tests/python/test_fuzz_api.py --show SEED THREADS INDEX
"""

import json
import math
import os
import random
import subprocess
import sys
import tempfile

import pytest

CALLS = int(os.environ.get("EMBER_FUZZ_CALLS", "12"))
SEEDS = [int(s) for s in os.environ.get("EMBER_FUZZ_SEEDS", "0").split(",") if s.strip()]
MEMORY_LIMIT = 4 << 30  # bytes of address space for a batch
CALL_TIMEOUT = 20  # seconds for one call before it counts as a hang
BATCH_TIMEOUT = 600

ALLOWED = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError, MemoryError)
# Wording that means an error escaped ember's checks (pybind11 internals, raw C++ exceptions,
# internal asserts).
BAD_WORDING = ("Unable to cast", "incompatible function arguments",
               "incompatible constructor arguments", "this is a bug in ember",
               "unknown C++ exception", "std::", "basic_string", "vector::", "_M_range",
               "stoll", "stoi")

# Errors of other types that torch 1.13 raises in the same case with its message (which ember's
# message contains): F.embedding's assert, and int() of an infinite 1-element tensor (Python's
# own int(float('inf'))).
TORCH_PARITY = {("AssertionError", "Padding_idx must be within num_embeddings"),
                ("OverflowError", "cannot convert float infinity to integer"),
                # torch.svd_lowrank / pca_lowrank check q with a Python assert
                ("AssertionError", "must be non-negative and not greater than min(m, n)")}

# Functions that change global state or touch files: not fuzzed.
SKIP = {
    "save", "load", "set_num_threads", "set_num_interop_threads", "set_default_dtype",
    "set_default_tensor_type", "set_printoptions", "set_grad_enabled", "manual_seed", "seed",
    "set_rng_state", "use_deterministic_algorithms", "set_flush_denormal",
    "set_deterministic_debug_mode", "set_anomaly_enabled", "set_warn_always", "from_file",
    "compile", "get_rng_state", "initial_seed", "set_detect_anomaly",
}
SKIP_METHODS = {
    "__class__", "__del__", "__delattr__", "__dir__", "__getattribute__", "__init_subclass__",
    "__new__", "__reduce__", "__reduce_ex__", "__setattr__", "__sizeof__", "__subclasshook__",
    "__init__", "__format__", "__getstate__", "__weakref__", "__dict__", "__doc__",
    "__module__", "__hash__", "__iter__", "__bool__",
}


# ---- the targets ----

def targets(ember):
    """(label, callable) for every public function, in a fixed order."""
    out = []
    import ember.nn.functional as F

    def public(ns, prefix, skip=()):
        for name in sorted(dir(ns)):
            if name.startswith("_") or name in SKIP or name in skip:
                continue
            obj = getattr(ns, name)
            if not callable(obj) or isinstance(obj, type) and name[0].isupper() and \
                    ns is not ember:
                continue
            if type(obj).__name__ == "module":
                continue
            out.append((prefix + name, obj))

    public(ember, "ember.")
    public(F, "F.")
    public(ember.linalg, "ember.linalg.")
    public(ember.special, "ember.special.")
    for name in sorted(dir(ember.Tensor)):
        if name in SKIP_METHODS or name in SKIP:
            continue
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        obj = getattr(ember.Tensor, name, None)
        if obj is None or not callable(obj) or isinstance(obj, type):
            continue
        out.append(("Tensor." + name, obj))
    return out


# ---- argument generation ----

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64", "complex128"]
STRINGS = ["mean", "sum", "none", "reflect", "constant", "replicate", "circular", "fro", "nuc",
           "L", "U", "reduced", "complete", "linear", "nearest", "bilinear", "bicubic", "floor",
           "trunc", "ij", "xy", "ortho", "forward", "backward", "cpu", "same", "valid", "tanh",
           "higher", "lower", "midpoint", "left", "right", "gelu", "relu", "", "ii->i", "ij,jk",
           "...", "xyz", "cuda", "meta"]
INTS = [0, 1, -1, 2, 3, -2, 5, 7, 2 ** 31, 2 ** 40, -2 ** 62, 2 ** 63 - 1, -2 ** 63, 2 ** 70]
FLOATS = [0.0, 0.5, -1.5, 1e-12, 2.0, 1e308, -1e308, math.nan, math.inf, -math.inf, 3.0]


class Gen:
    """Random argument values for one call."""

    def __init__(self, ember, rng):
        self.ember = ember
        self.rng = rng
        import numpy as np
        self.np = np
        self.nprng = np.random.default_rng(rng.randrange(2 ** 32))

    def dtype(self):
        return getattr(self.ember, self.rng.choice(DTYPE_NAMES))

    def shape(self):
        r = self.rng.random()
        if r < 0.15:
            return ()
        rank = self.rng.choice([1, 1, 2, 2, 3, 4])
        return tuple(self.rng.choice([0, 1, 1, 2, 3, 4, 5]) if self.rng.random() < 0.9 else
                     self.rng.choice([0, 1]) for _ in range(rank))

    def tensor(self, shape=None, dtype=None):
        ember, np, rng = self.ember, self.np, self.rng
        shape = self.shape() if shape is None else shape
        dtype = self.dtype() if dtype is None else dtype
        view = rng.random()
        base_shape = list(shape)
        if view < 0.15 and len(shape) >= 1:
            base_shape[-1] = base_shape[-1] * 2  # a step-2 slice of a larger tensor
        elif view < 0.3 and len(shape) >= 2:
            base_shape[-1], base_shape[-2] = base_shape[-2], base_shape[-1]
        elif view < 0.38 and len(shape) >= 1:
            base_shape[0] = 1  # expanded: a zero stride
        data = self.nprng.standard_normal(base_shape) * rng.choice([1, 3, 100])
        if data.size and rng.random() < 0.3:
            flat = data.reshape(-1)
            for _ in range(rng.randint(1, 3)):
                flat[rng.randrange(flat.size)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, 1e30])
        name = str(dtype).split(".")[-1]
        if name == "bool":
            data = data > 0
        elif name in ("uint8", "int8", "int16", "int32", "int64"):
            data = np.nan_to_num(data, nan=0, posinf=7, neginf=-7).clip(-1e6, 1e6).round()
            if name == "uint8":
                data = np.abs(data) % 256
        t = ember.from_numpy(np.ascontiguousarray(data)).to(dtype)
        if view < 0.15 and len(shape) >= 1:
            t = t[..., ::2]
        elif view < 0.3 and len(shape) >= 2:
            t = t.transpose(-1, -2)
        elif view < 0.38 and len(shape) >= 1:
            t = t.expand(*shape)
        if t.is_floating_point() and rng.random() < 0.15:
            t.requires_grad_(True)
        return t

    def junk(self):
        """Any value at all, wrong types included."""
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            return self.tensor()
        if r < 0.45:
            return rng.choice(INTS)
        if r < 0.55:
            return rng.choice(FLOATS)
        if r < 0.6:
            return rng.choice([True, False])
        if r < 0.66:
            return None
        if r < 0.72:
            return rng.choice(STRINGS)
        if r < 0.76:
            return ["a", "b"]
        if r < 0.79:
            return {"a": 1}
        if r < 0.86:
            return tuple(rng.choice(INTS[:7]) for _ in range(rng.randint(0, 4)))
        if r < 0.89:
            return [rng.choice(INTS) for _ in range(rng.randint(1, 3))]
        if r < 0.93:
            return [self.tensor() for _ in range(rng.randint(0, 3))]
        if r < 0.97:
            return self.dtype()
        return complex(rng.choice(FLOATS), 1.0)

    def for_param(self, name, annot):
        """A value for a parameter, usually of the type its name or annotation suggests."""
        rng = self.rng
        if rng.random() < 0.12:
            return self.junk()
        a = (annot or "").lower()
        n = name.lower()
        if "tensor" in a and "list" not in a and "sequence" not in a or n in (
                "input", "other", "self", "weight", "bias", "target", "mat1", "mat2", "vec",
                "tensor", "end", "index", "src", "mask", "source", "values", "x", "y", "a", "b"):
            if n in ("index", "indices") and rng.random() < 0.6:
                return self.tensor(dtype=self.ember.int64)
            return self.tensor()
        if n in ("dtype",) or a.endswith("dtype"):
            return self.dtype() if rng.random() < 0.8 else None
        if n in ("out",):
            return self.tensor() if rng.random() < 0.5 else None
        if n in ("generator", "device", "layout", "memory_format"):
            return None
        if n in ("dim", "dims", "axis", "dim0", "dim1", "k", "diagonal", "offset", "groups",
                 "start_dim", "end_dim", "source", "destination", "split_size_or_sections",
                 "sections", "chunks", "repeats", "shifts", "n", "num_samples", "kernel_size",
                 "stride", "padding", "dilation", "output_size", "size", "shape", "pad",
                 "output_padding", "upscale_factor", "downscale_factor", "bins", "minlength",
                 "num_classes", "normalized_shape", "sizes", "p", "ord"):
            r = rng.random()
            if r < 0.5:
                return rng.randint(-3, 3)
            if r < 0.8:
                return tuple(rng.randint(-1, 4) for _ in range(rng.randint(0, 4)))
            return rng.choice(INTS)
        if "list" in a or "sequence" in a or "tuple" in a:
            if "tensor" in a:
                return [self.tensor() for _ in range(rng.randint(0, 3))]
            return tuple(rng.randint(-2, 4) for _ in range(rng.randint(0, 4)))
        if a in ("int",) or n.startswith("num_") or n.endswith("_size"):
            return rng.choice(INTS[:7]) if rng.random() < 0.8 else rng.choice(INTS)
        if a in ("float", "number", "scalar") or n in ("alpha", "beta", "eps", "value",
                                                        "min", "max", "momentum", "lambd"):
            return rng.choice(FLOATS + INTS[:5])
        if a == "bool" or n.startswith("is_") or n in ("keepdim", "training", "inplace",
                                                       "largest", "sorted", "descending",
                                                       "unbiased", "return_indices",
                                                       "ceil_mode", "align_corners"):
            return rng.random() < 0.5
        if a == "str" or n in ("reduction", "mode", "norm", "indexing", "rounding_mode",
                               "interpolation", "side", "approximate", "uplo", "driver"):
            return rng.choice(STRINGS)
        return self.junk()


def signature_of(obj):
    """[(name, annotation, required)] from a Python signature or pybind11's docstring, or None."""
    import inspect
    try:
        sig = inspect.signature(obj)
        params = []
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            ann = "" if p.annotation is p.empty else str(p.annotation)
            params.append((p.name, ann, p.default is p.empty, p.kind == p.KEYWORD_ONLY))
        return params
    except (TypeError, ValueError):
        pass
    doc = getattr(obj, "__doc__", None) or ""
    line = next((ln for ln in doc.splitlines() if "(" in ln and ")" in ln), None)
    if line is None:
        return None
    body = line[line.index("(") + 1:line.rindex(")")]
    params, depth, cur, kw_only = [], 0, "", False
    for ch in body + ",":
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            part = cur.strip()
            cur = ""
            if part == "*":
                kw_only = True
            if not part or part.startswith("*"):
                continue
            name, _, rest = part.partition(":")
            ann, _, default = rest.partition("=")
            params.append((name.strip(), ann.strip(), not default, kw_only))
        else:
            cur += ch
    return params


def make_call(ember, label, fn, seed, threads, index):
    """The (args, kwargs) of call `index` of `label`, from its own deterministic stream."""
    rng = random.Random(f"{seed}:{threads}:{label}:{index}")
    gen = Gen(ember, rng)
    params = signature_of(fn)
    is_method = label.startswith("Tensor.")
    args, kwargs = [], {}
    if params is None or rng.random() < 0.1:
        n = rng.randint(0, 4)
        args = [gen.tensor() if i == 0 and rng.random() < 0.8 else gen.junk() for i in range(n)]
        return args, kwargs
    if is_method and params and params[0][0] == "self":
        params = params[1:]
    if is_method:
        args.append(gen.tensor())
    required = sum(1 for p in params if p[2])
    count = rng.randint(required, len(params)) if rng.random() < 0.85 else \
        rng.randint(0, len(params) + 1)
    for i in range(count):
        if i < len(params):
            name, ann, _, kw_only = params[i]
            value = gen.for_param(name, ann)
            if kw_only or i >= required and rng.random() < 0.4:
                kwargs[name] = value
            else:
                args.append(value)
        else:
            args.append(gen.junk())
    return args, kwargs


def describe(label, args, kwargs):
    def short(v):
        if type(v).__name__ == "Tensor":
            s = f"tensor(shape={tuple(v.shape)}, dtype={v.dtype}, stride={v.stride()}"
            return s + (", requires_grad=True)" if v.requires_grad else ")")
        if isinstance(v, (list, tuple)):
            inner = ", ".join(short(x) for x in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
        return repr(v)
    parts = [short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()]
    return f"{label}({', '.join(parts)})"


def verdict(exc):
    """None when `exc` is an acceptable error, else why not."""
    if any(type(exc).__name__ == kind and msg in str(exc) for kind, msg in TORCH_PARITY):
        return None  # torch's type and message (ember may add context around it)
    if not isinstance(exc, ALLOWED):
        return f"untyped error {type(exc).__name__}: {exc}"
    msg = str(exc)
    for bad in BAD_WORDING:
        if bad in msg:
            return f"{type(exc).__name__} with internal wording: {msg[:300]}"
    return None


# ---- the child process ----

def child(seed, threads, start, progress_path, result_path):
    import faulthandler
    import resource
    import warnings
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    faulthandler.enable()
    warnings.simplefilter("ignore")
    import ember
    ember.set_num_threads(threads)
    tlist = targets(ember)
    total = len(tlist) * CALLS
    progress = os.open(progress_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    failures = []
    stats = {}
    for i in range(start, total):
        label, fn = tlist[i // CALLS]
        os.write(progress, f"{i}\t{label}: building its arguments\n".encode())
        try:
            args, kwargs = make_call(ember, label, fn, seed, threads, i % CALLS)
        except Exception as e:  # noqa: BLE001  (argument construction is not under test)
            args, kwargs = [], {}
            failures.append({"call": f"{label}: building arguments failed: {e!r}"})
            continue
        desc = describe(label, args, kwargs)
        os.write(progress, f"{i}\t{desc}\n".encode())
        faulthandler.dump_traceback_later(CALL_TIMEOUT, exit=True)
        try:
            fn(*args, **kwargs)
            stats["ok"] = stats.get("ok", 0) + 1
        except BaseException as e:  # noqa: BLE001
            stats[type(e).__name__] = stats.get(type(e).__name__, 0) + 1
            why = verdict(e)
            if why:
                failures.append({"call": desc, "why": why})
        finally:
            faulthandler.cancel_dump_traceback_later()
        if ember.get_num_threads() != threads:
            ember.set_num_threads(threads)
        if not ember.is_grad_enabled():
            ember.set_grad_enabled(True)
    os.close(progress)
    with open(result_path, "w") as f:
        json.dump({"total": total, "failures": failures, "stats": stats}, f)


STATS = {}  # outcome counts of the calls (ok / exception type), for longer runs' reports


def _package_root():
    import ember
    return os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))


def run_batches(seed, threads):
    """Runs all calls for (seed, threads), restarting after each crash; returns failures."""
    failures = []
    start = 0
    with tempfile.TemporaryDirectory() as tmp:
        while True:
            progress = os.path.join(tmp, f"progress{start}")
            result = os.path.join(tmp, f"result{start}")
            env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                       PYTHONPATH=os.pathsep.join(filter(None, [_package_root(),
                                                                 os.environ.get("PYTHONPATH")])))
            try:
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", str(seed), str(threads), str(start),
                     progress, result], cwd=tmp, env=env, capture_output=True, text=True,
                    timeout=BATCH_TIMEOUT)
                rc, err = proc.returncode, proc.stderr
            except subprocess.TimeoutExpired as e:
                rc, err = "timeout", (e.stderr or b"").decode(errors="replace") \
                    if isinstance(e.stderr, bytes) else (e.stderr or "")
            if rc == 0 and os.path.exists(result):
                with open(result) as f:
                    data = json.load(f)
                failures += data["failures"]
                for k, v in data["stats"].items():
                    STATS[k] = STATS.get(k, 0) + v
                return failures
            last = None
            if os.path.exists(progress):
                with open(progress) as f:
                    lines = f.read().splitlines()
                if lines:
                    last = lines[-1]
            if last is None:
                failures.append({"call": "<startup>", "why": f"child failed rc={rc}: {err[-2000:]}"})
                return failures
            index, desc = last.split("\t", 1)
            kind = "hang" if "Timeout" in err or rc == "timeout" else f"crash (rc={rc})"
            failures.append({"call": desc, "why": f"{kind}: {err[-1500:]}"})
            start = int(index) + 1


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_public_api(seed, threads):
    failures = run_batches(seed, threads)
    report = "\n".join(f"{f['call']}\n    {f.get('why', '')}" for f in failures[:40])
    assert not failures, f"{len(failures)} bad calls (seed {seed}, {threads} threads):\n{report}"


def test_fuzz_covers_the_api():
    import ember
    labels = [label for label, _ in targets(ember)]
    for expected in ("ember.add", "ember.where", "ember.einsum", "F.conv2d", "F.interpolate",
                     "ember.linalg.solve", "ember.special.erf", "Tensor.add_", "Tensor.__getitem__",
                     "Tensor.__setitem__"):
        assert expected in labels
    assert len(labels) > 600


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        seed, threads, start = (int(x) for x in sys.argv[2:5])
        child(seed, threads, start, sys.argv[5], sys.argv[6])
    elif sys.argv[1] == "--show":
        import ember
        seed, threads, index = (int(x) for x in sys.argv[2:5])
        tl = targets(ember)
        label, fn = tl[index // CALLS]
        a, kw = make_call(ember, label, fn, seed, threads, index % CALLS)
        print(describe(label, a, kw))
        ember.set_num_threads(threads)
        fn(*a, **kw)
