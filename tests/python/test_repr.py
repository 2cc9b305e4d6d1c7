"""Tensor printing: ``repr`` matches PyTorch 1.13 character for character.

Each case is plain data (values, dtype name, options). It is built as a torch tensor and printed
by ember's printer, and, once the compiled package is importable, built as an ember tensor and
printed by ``repr``; both must equal torch's own ``repr``.
"""

import contextlib
import importlib.util
import math
import pathlib
import random
import sys
import time

import pytest

torch = pytest.importorskip("torch")

PYTHON_DIR = pathlib.Path(__file__).resolve().parents[2] / "python"
# Loaded as a file so the torch-side checks need no compiled module.
_spec = importlib.util.spec_from_file_location(
    "_ember_tensor_str_under_test", PYTHON_DIR / "ember" / "_tensor_str.py"
)
ts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ts)

nan, inf = math.nan, math.inf


class Case:
    def __init__(self, id, data, dtype="float32", shape=None, grad=False, opts=None,
                 default=None):
        self.id = id
        self.data = data
        self.dtype = dtype
        self.shape = shape
        self.grad = grad
        self.opts = opts or {}
        self.default = default


def _nest(flat, shape):
    if len(shape) <= 1:
        return list(flat)
    step = len(flat) // shape[0]
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def make(lib, data, dtype_name, shape=None, requires_grad=False):
    """A tensor of ``lib`` (torch or ember) from a (flat, when shape is given) Python list."""
    dtype = getattr(lib, dtype_name)
    kwargs = {"requires_grad": True} if requires_grad else {}
    if shape is not None and 0 in shape:
        return lib.zeros(shape, dtype=dtype, **kwargs)
    if shape is not None:
        data = _nest(data, shape)
    return lib.tensor(data, dtype=dtype, **kwargs)


def _make_case(lib, case):
    return make(lib, case.data, case.dtype, case.shape, case.grad)


def _seq(n, scale=1.0, offset=0.0):
    return [offset + scale * i for i in range(n)]


def _rand(n, seed, lo=-3.0, hi=3.0, digits=None):
    rng = random.Random(seed)
    vals = [rng.uniform(lo, hi) for _ in range(n)]
    return [round(v, digits) for v in vals] if digits is not None else vals


FLOAT_TYPES = ["float32", "float64", "float16", "bfloat16"]
INT_TYPES = ["int8", "uint8", "int16", "int32", "int64"]
COMPLEX_TYPES = ["complex64", "complex128"]

CASES = []
for dt in FLOAT_TYPES:
    CASES += [
        Case(f"{dt}-1d", [0.5, -1.25, 3.0], dt),
        Case(f"{dt}-int-mode", [1.0, -2.0, 30.0], dt),
        Case(f"{dt}-0d", 3.0, dt),
        Case(f"{dt}-0d-frac", -0.1, dt),
        Case(f"{dt}-empty", [], dt),
        Case(f"{dt}-2d", _rand(6, 1), dt, shape=(2, 3)),
        Case(f"{dt}-nan-inf", [nan, 1.5, inf, -inf], dt),
        Case(f"{dt}-sci", [1e-5, 2.0, 300.0], dt),
        Case(f"{dt}-wrapped", _rand(40, 2), dt),
        Case(f"{dt}-grad", [1.0, 2.5], dt, grad=True),
    ]
for dt in INT_TYPES:
    CASES += [
        Case(f"{dt}-1d", [0, 1, 100, 7], dt),
        Case(f"{dt}-0d", 5, dt),
        Case(f"{dt}-empty", [], dt),
        Case(f"{dt}-2d", list(range(12)), dt, shape=(3, 4)),
        Case(f"{dt}-wrapped", [i * 3 % 101 for i in range(60)], dt),
    ]
CASES += [
    Case("int-negative", [-5, 12, -123456789], "int64"),
    Case("int32-extremes", [-(2**31), 2**31 - 1], "int32"),
    Case("int64-extremes", [-(2**63), 2**63 - 1], "int64"),
    Case("int-summarized", list(range(1001)), "int64"),
    Case("int-summarized-2d", list(range(4000)), "int16", shape=(40, 100)),
]
for dt in COMPLEX_TYPES:
    CASES += [
        Case(f"{dt}-1d", [1 + 2j, 3 - 1j], dt),
        Case(f"{dt}-frac", [1.5 - 2.25j, -0.125 + 4j], dt),
        Case(f"{dt}-0d", 1 - 2j, dt),
        Case(f"{dt}-empty", [], dt),
        Case(f"{dt}-nan", [complex(nan, 1.0), complex(1.0, nan), complex(inf, -inf)], dt),
        Case(f"{dt}-neg-zero-imag", [complex(1.0, -0.0), complex(-0.0, 0.0)], dt),
        Case(f"{dt}-sci", [1e-5 + 1j, 2 + 3e6j], dt),
        Case(f"{dt}-2d", [complex(a, b) for a, b in zip(_rand(6, 3), _rand(6, 4))], dt,
             shape=(3, 2)),
        Case(f"{dt}-wrapped", [complex(a, b) for a, b in zip(_rand(20, 5), _rand(20, 6))], dt),
        Case(f"{dt}-summarized", [complex(i, -i) for i in range(1200)], dt),
    ]
CASES += [
    Case("bool-1d", [True, False, True], "bool"),
    Case("bool-0d", False, "bool"),
    Case("bool-empty", [], "bool"),
    Case("bool-2d", [i % 3 == 0 for i in range(6)], "bool", shape=(2, 3)),
    Case("bool-summarized", [i % 2 == 0 for i in range(2000)], "bool"),
    # Empty tensors of several shapes: the size is printed unless the shape is (0,).
    Case("empty-0x3", None, shape=(0, 3)),
    Case("empty-3x0", None, shape=(3, 0)),
    Case("empty-2x0x4", None, shape=(2, 0, 4)),
    Case("empty-0x3-int64", None, "int64", shape=(0, 3)),
    Case("empty-0x3-float64", None, "float64", shape=(0, 3)),
    Case("empty-0-bool", None, "bool", shape=(0,)),
    Case("empty-grad", None, shape=(0, 2), grad=True),
    # Shapes.
    Case("1x1x1", [2.5], shape=(1, 1, 1)),
    Case("3x1", [1.0, 2.0, 3.0], shape=(3, 1)),
    Case("3d", _rand(24, 7), shape=(2, 3, 4)),
    Case("4d", _rand(24, 8), shape=(2, 2, 2, 3)),
    Case("4d-int", list(range(48)), "int32", shape=(2, 3, 2, 4)),
    Case("2d-wrapped-rows", _rand(90, 9), shape=(3, 30)),
    Case("3d-wrapped-rows", _rand(80, 10), shape=(2, 2, 20)),
    # Summarization.
    Case("1d-summarized", _seq(2000, 0.5)),
    Case("1d-summarized-float64", _rand(5000, 11), "float64"),
    Case("2d-summarized", _rand(2500, 12), shape=(50, 50)),
    Case("2d-summarized-tall", _rand(2000, 13), shape=(1000, 2)),
    Case("2d-summarized-wide", _rand(2000, 14), shape=(2, 1000)),
    Case("3d-summarized", _rand(1728, 15), shape=(12, 12, 12)),
    Case("4d-summarized-edges-only", _rand(1296, 16), shape=(6, 6, 6, 6)),
    Case("4d-summarized", _rand(2401, 17), shape=(7, 7, 7, 7)),
    Case("summarized-width-from-edges", [1e6] + [0.5] * 2000 + [2.0]),
    # Float layout choice.
    Case("int-mode-zero", [0.0, 1.0, -7.0]),
    Case("int-mode-sci-ratio", [1.0, 2000.0]),
    Case("int-mode-sci-big", [1e9, 3e9]),
    Case("int-mode-big-not-sci", [1e8, 5e7]),
    Case("fixed", [0.1, 1.2345678, -3.5]),
    Case("fixed-rounding", [0.00015, 0.99995, 2.5]),
    Case("sci-tiny", [1.2345e-8]),
    Case("sci-ratio", [0.5, 1000.5]),
    Case("sci-big", [1.5e10, 1.0]),
    Case("sci-negative", [-1.5e-7, 2.0, -3e5]),
    Case("all-zero", [0.0, 0.0]),
    Case("zero-and-nan", [0.0, nan]),
    Case("only-nan", [nan]),
    Case("only-inf", [inf, -inf]),
    Case("nan-int-mode", [nan, 1.0, -inf]),
    Case("nan-sci", [nan, 1e-5, inf]),
    Case("nan-fixed-2d", [nan, 0.25, -inf, 1.5], shape=(2, 2)),
    Case("nan-0d", nan),
    Case("inf-0d", -inf),
    Case("neg-zero", [-0.0]),
    Case("neg-zero-int-mode", [-0.0, 1.0]),
    Case("neg-zero-fixed", [-0.0, 1.5]),
    Case("neg-zero-0d", -0.0),
    Case("neg-zero-sci", [-0.0, 1e-6]),
    Case("huge-float32", [3.0e38, -1.0e38]),
    Case("tiny-float32", [1e-38, 1.4e-45]),
    Case("huge-tiny-float64", [1e300, 1e-300], "float64"),
    Case("float16-max", [65504.0, -65504.0], "float16"),
    Case("float16-tiny", [6e-8, 1.0], "float16"),
    Case("bfloat16-big", [1e30, 3.0], "bfloat16"),
    Case("float64-precise", [1.0 / 3.0, 2.0 / 3.0], "float64"),
    # Print options.
    Case("precision-2", [1.0 / 3.0, 2.5], opts=dict(precision=2)),
    Case("precision-0", [1.0 / 3.0, 2.5, 3.5], opts=dict(precision=0)),
    Case("precision-10", [1.0 / 3.0, 2.5], "float64", opts=dict(precision=10)),
    Case("precision-sci", [1e-6, 2.5], opts=dict(precision=1)),
    Case("precision-complex", [1 / 3 + 2j], "complex64", opts=dict(precision=6)),
    Case("sci-mode-on", [0.5, 1.5], opts=dict(sci_mode=True)),
    Case("sci-mode-on-int", [1.0, 2.0], opts=dict(sci_mode=True)),
    Case("sci-mode-on-zeros", [0.0, 0.0], opts=dict(sci_mode=True)),
    Case("sci-mode-off", [1e-6, 2.0], opts=dict(sci_mode=False)),
    Case("sci-mode-off-big", [1e10, 1.0], opts=dict(sci_mode=False)),
    Case("sci-mode-int-tensor", [1, 2], "int64", opts=dict(sci_mode=True)),
    Case("threshold-5", list(range(10)), "int64", opts=dict(threshold=5)),
    Case("threshold-0-0d", 2.5, opts=dict(threshold=0)),
    Case("threshold-2d", list(range(40)), "int64", shape=(8, 5), opts=dict(threshold=10)),
    Case("edgeitems-1", _seq(2000), opts=dict(edgeitems=1)),
    Case("edgeitems-5-3d", list(range(1331)), "int32", shape=(11, 11, 11),
         opts=dict(edgeitems=5)),
    Case("linewidth-40", _rand(30, 18), opts=dict(linewidth=40)),
    Case("linewidth-200", _rand(60, 19), opts=dict(linewidth=200)),
    Case("linewidth-tiny", _rand(5, 20), opts=dict(linewidth=5)),
    Case("linewidth-2d-grad", _rand(40, 21), shape=(2, 20), grad=True, opts=dict(linewidth=50)),
    Case("profile-short", _rand(20, 22), opts=dict(profile="short")),
    Case("profile-short-summarized", _seq(2000), opts=dict(profile="short")),
    Case("profile-full", _seq(1500), opts=dict(profile="full")),
    Case("profile-and-override", _rand(5, 23), opts=dict(profile="short", precision=6)),
    # Suffixes and where they wrap.
    Case("grad-0d", 1.5, grad=True),
    Case("grad-2d", _rand(6, 24), shape=(3, 2), grad=True),
    Case("grad-float64", [1.0, 2.0], "float64", grad=True),
    Case("grad-wraps-suffix", _seq(12, 1.0, 100.0), "float64", grad=True),
    Case("grad-complex", [1 + 1j], "complex64", grad=True),
    Case("suffix-exactly-fits", _seq(10, 1.0, 10.0), "float64"),
    Case("suffix-just-wraps", _seq(11, 1.0, 10.0), "float64"),
    Case("dtype-suffix-after-wrapped", _rand(30, 25), "float64"),
    # Another default dtype changes which dtypes print a suffix.
    Case("default64-float32", [1.5, 2.0], default="float64"),
    Case("default64-float64", [1.5, 2.0], "float64", default="float64"),
    Case("default64-complex128", [1 + 2j], "complex128", default="float64"),
    Case("default64-complex64", [1 + 2j], "complex64", default="float64"),
    Case("default64-empty-float64", [], "float64", default="float64"),
    Case("default64-empty-float32", [], default="float64"),
    Case("default64-int64", [1, 2], "int64", default="float64"),
]


def _random_cases(count):
    """Shapes, dtypes and magnitudes drawn at random (from a fixed seed)."""
    rng = random.Random(1234)
    dtypes = FLOAT_TYPES + INT_TYPES + COMPLEX_TYPES + ["bool"]
    cases = []
    for k in range(count):
        dt = rng.choice(dtypes)
        dims = rng.randint(0, 4)
        shape = tuple(rng.choice([1, 2, 3, 5, 8]) for _ in range(dims))
        if rng.random() < 0.15:
            shape = (rng.choice([1001, 2000, 3001]),)
        n = math.prod(shape)
        if dt == "bool":
            flat = [rng.random() < 0.5 for _ in range(n)]
        elif dt in INT_TYPES:
            hi = {"int8": 127, "uint8": 255, "int16": 30000}.get(dt, 10 ** rng.randint(1, 9))
            lo = 0 if dt == "uint8" else -hi
            flat = [rng.randint(lo, hi) for _ in range(n)]
        else:
            scale = 10.0 ** rng.randint(-8, 8)
            limit = 6.0e4 if dt == "float16" else 1e30
            pick = rng.random()

            def draw():
                if pick < 0.3:  # integral values
                    return float(round(rng.uniform(-100, 100)))
                v = min(rng.gauss(0, 1) * scale, limit)
                r = rng.random()
                return nan if r < 0.03 else inf if r < 0.05 else 0.0 if r < 0.1 else v

            if dt in COMPLEX_TYPES:
                flat = [complex(draw(), draw()) for _ in range(n)]
            else:
                flat = [draw() for _ in range(n)]
        opts = {}
        if rng.random() < 0.3:
            opts = dict(precision=rng.randint(0, 8), linewidth=rng.choice([40, 80, 120]))
        data = flat if shape else flat[0]
        cases.append(Case(f"random-{k}-{dt}-{'x'.join(map(str, shape))}", data, dt,
                          shape=shape or None, grad=rng.random() < 0.1 and dt in FLOAT_TYPES,
                          opts=opts))
    return cases


CASES += _random_cases(150)


@contextlib.contextmanager
def configured(case, printers, set_default_dtypes):
    """Apply a case's print options and default dtype to every printer, then restore both."""
    try:
        for set_options in printers:
            set_options(**case.opts)
        if case.default is not None:
            for set_default in set_default_dtypes:
                set_default(case.default)
        yield
    finally:
        for set_options in printers:
            set_options(profile="default")
        for set_default in set_default_dtypes:
            set_default("float32")


def _torch_set_default(name):
    torch.set_default_dtype(getattr(torch, name))


class Restricted:
    """A torch tensor seen through only the members the printer may use.

    Counts the elements fetched from it, to show that summarized printing stays cheap.
    """

    def __init__(self, t, log, device=None):
        self._t, self._log, self._device = t, log, device

    def dim(self):
        return self._t.dim()

    def numel(self):
        return self._t.numel()

    @property
    def shape(self):
        return self._t.shape

    @property
    def dtype(self):
        return self._t.dtype

    @property
    def device(self):
        return self._device or self._t.device

    @property
    def requires_grad(self):
        return self._t.requires_grad

    def tolist(self):
        self._log.append(self._t.numel())
        return self._t.tolist()

    def item(self):
        self._log.append(1)
        return self._t.item()

    def __getitem__(self, index):
        return Restricted(self._t[index], self._log, self._device)

    def __len__(self):
        return len(self._t)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_matches_torch(case):
    with configured(case, [torch.set_printoptions, ts.set_printoptions], [_torch_set_default]):
        t = _make_case(torch, case)
        expected = repr(t)
        assert ts.tensor_repr(t) == expected
        assert ts.tensor_str(t) == str(t)
        log = []
        default = torch.get_default_dtype()
        assert ts.tensor_repr(Restricted(t, log), default_dtype=default) == expected


def test_grad_fn_suffix():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    for t in (a * 2, a.sum(), (a + 1).double()):
        assert ts.tensor_repr(t) == repr(t)


def test_device_suffix():
    t = torch.tensor([1.0, 2.0])

    class Cuda:
        type = "cuda"

        def __str__(self):
            return "cuda:0"

    printed = ts.tensor_repr(Restricted(t, [], Cuda()), default_dtype=torch.float32)
    assert printed == "tensor([1., 2.], device='cuda:0')"
    t64 = Restricted(torch.zeros(0, 2, dtype=torch.float64), [], Cuda())
    assert (ts.tensor_repr(t64, default_dtype=torch.float32)
            == "tensor([], device='cuda:0', size=(0, 2), dtype=torch.float64)")


def test_summarized_fetches_only_edges():
    # 10^8 elements that take no memory: a broadcast view.
    big = torch.arange(10**4, dtype=torch.float32)[:, None].expand(10**4, 10**4)
    for t in (big, big[0], big.t()):
        log = []
        start = time.perf_counter()
        printed = ts.tensor_repr(Restricted(t, log), default_dtype=torch.float32)
        assert time.perf_counter() - start < 1.0
        assert sum(log) <= 100
        assert printed == repr(t)


def test_printoptions_api():
    defaults = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)
    assert ts.get_printoptions() == defaults
    try:
        ts.set_printoptions(profile="full")
        assert ts.get_printoptions()["threshold"] == math.inf
        ts.set_printoptions(profile="short", edgeitems=4)
        assert ts.get_printoptions() == dict(defaults, precision=2, edgeitems=4)
        ts.set_printoptions(sci_mode=True)
        # Like PyTorch, options not named keep their values, except sci_mode.
        assert ts.get_printoptions() == dict(defaults, precision=2, edgeitems=4, sci_mode=True)
        ts.set_printoptions(precision=3)
        assert ts.get_printoptions()["sci_mode"] is None
        with ts.printoptions(precision=7, linewidth=20):
            assert ts.get_printoptions()["precision"] == 7
        assert ts.get_printoptions() == dict(defaults, precision=3, edgeitems=4)
        with pytest.raises(ValueError):
            ts.set_printoptions(profile="long")
    finally:
        ts.set_printoptions(profile="default")
    assert ts.get_printoptions() == defaults


# The same cases against the compiled package, once it builds tensors.


@pytest.fixture(scope="module")
def ember():
    if str(PYTHON_DIR) not in sys.path:
        sys.path.append(str(PYTHON_DIR))
    try:
        import ember
    except ImportError as e:
        pytest.skip(f"ember is not importable: {e}")
    if not hasattr(ember, "tensor"):
        pytest.skip("ember has no tensor() yet")
    return ember


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_ember_matches_torch(ember, case):
    from ember import _tensor_str as ember_ts

    if not hasattr(ember, case.dtype):
        pytest.skip(f"ember has no {case.dtype}")
    set_options = getattr(ember, "set_printoptions", ember_ts.set_printoptions)
    set_defaults = [_torch_set_default, lambda name: ember.set_default_dtype(getattr(ember, name))]
    with configured(case, [torch.set_printoptions, set_options], set_defaults):
        expected = repr(_make_case(torch, case)).replace("torch.", "ember.")
        t = _make_case(ember, case)
        assert repr(t) == expected
        assert str(t) == expected
