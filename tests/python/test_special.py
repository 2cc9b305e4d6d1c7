"""torch.special's remaining functions and the new plain elementwise ops (sinc, deg2rad,
rad2deg, logaddexp(2), heaviside, gcd, lcm, igamma(c), entr, xlog1py, zeta, the orthogonal
polynomials, frexp, ldexp) against SciPy / NumPy and torch 1.13: values over each domain with
its tails, poles, NaN and ±inf, every dtype torch supports (and its errors elsewhere), layouts,
integer inputs, out=, in-place forms, derivatives by finite differences and bad input.

Run with -s to see the worst error in ulps per function and dtype (ULP_REPORT)."""

import math

import mpmath
import numpy as np
import pytest
import scipy.special as sp
import torch

import ember
from _oracle import DTYPES, FLOATS, INTS, LAYOUTS, assert_same, check, make, raises_like, \
    to_ember, to_numpy, to_torch

INF, NAN = float("inf"), float("nan")

# ------------------------------------------------------------------------------------------------
# helpers


def lib_fn(lib, name):
    """torch.special.x / torch.x (ember the same) for a dotted name "special.x" or "x"."""
    obj = lib
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def pair(values, dtype):
    arr = np.asarray(values, dtype=np.float64)
    t = torch.from_numpy(arr.copy()).to(getattr(torch, dtype))
    return to_ember(t), t


def ulp_of(ref, dtype):
    """The spacing of `dtype` at |ref| (its smallest normal spacing below the normal range)."""
    fi = np.finfo({"float32": np.float32, "float64": np.float64, "float16": np.float16}[dtype])
    a = np.maximum(np.abs(ref), float(fi.tiny))
    return np.spacing(a.astype(fi.dtype)).astype(np.float64)


ULP_REPORT = {}


def record_ulps(fn, dtype, got, ref):
    """Largest |got - ref| in ulps of dtype at ref (finite refs), kept for the report."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    with np.errstate(over="ignore"):
        ref = np.where(np.isfinite(ref), ref.astype(dtype).astype(np.float64), ref)
    m = np.isfinite(ref)
    assert np.array_equal(np.isnan(got), np.isnan(ref)), f"{fn} {dtype}: NaN placement"
    assert np.array_equal(got[~m & ~np.isnan(ref)], ref[~m & ~np.isnan(ref)]), f"{fn}: inf"
    if not m.any():
        return 0.0
    u = float(np.max(np.abs(got[m] - ref[m]) / ulp_of(ref[m], dtype)))
    key = (fn, dtype)
    ULP_REPORT[key] = max(ULP_REPORT.get(key, 0.0), u)
    return u


@pytest.fixture(scope="module", autouse=True)
def _print_ulp_report():
    yield
    if ULP_REPORT:
        print("\nworst error in ulps (vs SciPy / NumPy in float64, rounded reference):")
        for (fn, dt), u in sorted(ULP_REPORT.items()):
            print(f"  {fn:36s} {dt:8s} {u:10.2f}")


# ------------------------------------------------------------------------------------------------
# accuracy against SciPy / NumPy (the reference in float64; float32 results are measured against
# it in float32 ulps)

rng = np.random.default_rng(1234)
WIDE = np.concatenate([rng.uniform(-30, 30, 400), rng.uniform(-1, 1, 100),
                       [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 1e-30, -1e-300, 1e30, 1e-8]])
POS = np.concatenate([rng.uniform(0, 5, 300), 10**rng.uniform(-8, 3, 300), [0.0, 1.0, 1e-300]])


def sinc_ref(x):
    return np.sinc(x)


UNARY_REF = {
    "sinc": (sinc_ref, WIDE),
    "deg2rad": (np.deg2rad, WIDE),
    "rad2deg": (np.rad2deg, WIDE),
    "special.entr": (sp.entr, np.concatenate([POS, [-1.0, -1e-3]])),
}

# Contracts in ulps of the result dtype. sinc loses relative accuracy only near its zeros
# (x near a nonzero integer, where sin(πx) cancels); deg2rad / rad2deg round the constant to
# the dtype (as PyTorch) and so carry its rounding: at most one extra ulp.
UNARY_ULPS = {"sinc": (2, 2), "deg2rad": (2, 2), "rad2deg": (2, 2), "special.entr": (2, 2)}


@pytest.mark.parametrize("fn", sorted(UNARY_REF))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_accuracy_vs_reference(fn, dtype):
    ref_fn, x = UNARY_REF[fn]
    x = x.astype(dtype).astype(np.float64)  # inputs exact in the dtype
    if fn == "sinc":
        # Away from its zeros (relative accuracy there is a property of sin(πx) in any form).
        x = x[(np.abs(x - np.round(x)) > 1e-3 * np.maximum(1, np.abs(x))) | (np.abs(x) < 0.5)]
    e = lib_fn(ember, fn)(ember.from_numpy(x.astype(dtype)))
    got = e.numpy().astype(np.float64)
    ref = ref_fn(x)
    if fn in ("deg2rad", "rad2deg"):
        # PyTorch's formula: x times the constant rounded to the dtype.
        c = np.float64(np.dtype(dtype).type(math.pi / 180 if fn == "deg2rad" else 180 / math.pi))
        ref = x * c
    u = record_ulps(fn, dtype, got, ref)
    assert u <= UNARY_ULPS[fn][dtype == "float64"], f"{fn} {dtype}: {u} ulps"


def _grid(a, b):
    a, b = np.meshgrid(a, b)
    return a.ravel(), b.ravel()


def igamma_points():
    a = np.concatenate([[1e-3, 0.1, 0.5, 1, 2.5, 7, 19.5, 21, 45, 150, 199, 250, 1e3, 1e4, 1e6],
                        10**rng.uniform(-3, 4, 30)])
    a_, x_ = _grid(a, [0.0])
    pts = [(a_, x_)]
    for s in (1e-4, 0.01, 0.1, 0.25, 0.29, 0.31, 0.5, 0.9, 1.0, 1.1, 1.5, 3.0, 10.0):
        pts.append((a, a * s))
    pts.append(_grid([0.3, 1.7, 6.2, 33.0], [1e-6, 0.2, 0.5, 0.7, 1.05, 1.2, 2, 10, 40, 80]))
    pts.append((10**rng.uniform(-2, 3, 300), 10**rng.uniform(-2, 3, 300)))
    return np.concatenate([p[0] for p in pts]), np.concatenate([p[1] for p in pts])


def poly_points(lo, hi, nmax=30):
    x = np.concatenate([rng.uniform(lo, hi, 60), [lo, hi, (lo + hi) / 2, 0.0, 0.3, -0.3]])
    return _grid(x, np.arange(0, nmax + 1, dtype=np.float64))


def scipy_poly(f):
    return lambda x, n: f(n.astype(np.int64), x)


def mp_gammainc(lower):
    """The regularized incomplete gamma ratios in 40-digit arithmetic (SciPy's own are off by up
    to 1e-11 relative in the far tails)."""

    def f(a, x):
        out = np.empty_like(a)
        with mpmath.workdps(40):
            for i, (ai, xi) in enumerate(zip(a, x)):
                if ai == 0 or not (np.isfinite(ai) and np.isfinite(xi)):
                    out[i] = sp.gammainc(ai, xi) if lower else sp.gammaincc(ai, xi)
                    continue
                lo, hi = (0, xi) if lower else (xi, mpmath.inf)
                try:
                    out[i] = float(mpmath.gammainc(mpmath.mpf(ai), lo, hi, regularized=True))
                except mpmath.libmp.NoConvergence:  # huge a: SciPy's answer
                    out[i] = sp.gammainc(ai, xi) if lower else sp.gammaincc(ai, xi)
        return out

    return f


BINARY_REF = {
    "logaddexp": (np.logaddexp, _grid(WIDE[::7], WIDE[::9])),
    "logaddexp2": (np.logaddexp2, _grid(WIDE[::7], WIDE[::9])),
    "igamma": (mp_gammainc(True), igamma_points()),
    "igammac": (mp_gammainc(False), igamma_points()),
    "special.xlog1py": (sp.xlog1py, _grid(WIDE[::11], np.concatenate([POS[::9], -POS[::50]]))),
    "special.zeta": (sp.zeta, _grid([1.5, 2, 3.3, 7, 20, 60], np.concatenate(
        [POS[::6], [1e3, 1e8, 1e16, 1e20]]))),
    "special.chebyshev_polynomial_t": (scipy_poly(sp.eval_chebyt), poly_points(-1, 1)),
    "special.chebyshev_polynomial_u": (scipy_poly(sp.eval_chebyu), poly_points(-1, 1)),
    "special.chebyshev_polynomial_v": (None, poly_points(-1, 1)),
    "special.chebyshev_polynomial_w": (None, poly_points(-1, 1)),
    "special.shifted_chebyshev_polynomial_t": (scipy_poly(sp.eval_sh_chebyt), poly_points(0, 1)),
    "special.shifted_chebyshev_polynomial_u": (scipy_poly(sp.eval_sh_chebyu), poly_points(0, 1)),
    "special.shifted_chebyshev_polynomial_v": (None, poly_points(0, 1)),
    "special.shifted_chebyshev_polynomial_w": (None, poly_points(0, 1)),
    "special.hermite_polynomial_h": (scipy_poly(sp.eval_hermite), poly_points(-3, 3, 20)),
    "special.hermite_polynomial_he": (scipy_poly(sp.eval_hermitenorm), poly_points(-3, 3, 20)),
    "special.laguerre_polynomial_l": (scipy_poly(sp.eval_laguerre), poly_points(0, 10)),
    "special.legendre_polynomial_p": (scipy_poly(sp.eval_legendre), poly_points(-1, 1)),
}


def cheb_vw(kind, x, n, shifted):
    """V_n and W_n (SciPy has neither) by their trigonometric forms in float64."""
    y = 2 * x - 1 if shifted else x
    t = np.arccos(np.clip(y, -1, 1))
    with np.errstate(all="ignore"):
        if kind == "v":
            r = np.cos((n + 0.5) * t) / np.cos(t / 2)
        else:
            r = np.sin((n + 0.5) * t) / np.sin(t / 2)
    return r


# float64 contracts in ulps (the polynomials are held to an absolute bound below instead: their
# recurrences and closed forms are not relatively accurate near their zeros). logaddexp2 pays
# for its 1 / ln 2 scaling and for max + log2(1 + 2^-d) cancelling near 0.
BINARY_F64 = {
    "logaddexp": 2, "logaddexp2": 8, "igamma": 1e3, "igammac": 1e3, "special.xlog1py": 2,
    "special.zeta": 16,
}


@pytest.mark.parametrize("fn", sorted(BINARY_REF))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_accuracy_vs_reference(fn, dtype):
    ref_fn, (a, b) = BINARY_REF[fn]
    a = a.astype(dtype).astype(np.float64)
    b = b.astype(dtype).astype(np.float64)
    got = lib_fn(ember, fn)(ember.from_numpy(a.astype(dtype)),
                            ember.from_numpy(b.astype(dtype))).numpy().astype(np.float64)
    if ref_fn is None:
        # V and W by their trigonometric forms (not at y = -1, where those divide by zero)
        y = 2 * a - 1 if "shifted" in fn else a
        keep = (y > -1) & (y < 1)
        a, b, got = a[keep], b[keep], got[keep]
        ref = cheb_vw(fn[-1], a, b, "shifted" in fn)
    else:
        ref = ref_fn(a, b)
    if "polynomial" in fn:
        # Absolute accuracy on the scale of the polynomial on its interval: 2n + 1 bounds every
        # Chebyshev kind and Legendre on [-1, 1]; e^(x/2) Laguerre on x >= 0; Cramér's
        # inequality the Hermite kinds.
        n = b
        if "hermite_polynomial_he" in fn:
            scale = 1.09 * np.sqrt(sp.factorial(n)) * np.exp(a * a / 4)
        elif "hermite" in fn:
            scale = 1.09 * np.sqrt(2.0**n * sp.factorial(n)) * np.exp(a * a / 2)
        elif "laguerre" in fn:
            scale = np.exp(a / 2)
        else:
            scale = 2 * n + 1
        scale = np.maximum(scale, np.abs(ref))  # points outside the interval
        err = np.abs(got - ref) / scale
        eps = np.finfo(dtype).eps
        worst = float(np.max(err) / eps)
        key = (fn + " (abs, in eps of the scale)", dtype)
        ULP_REPORT[key] = max(ULP_REPORT.get(key, 0.0), worst)
        # The recurrences lose about n eps of the scale; the closed forms n eps through
        # acos / cos (and float32 evaluates in float, as PyTorch). Laguerre's forward
        # recurrence cancels more for x near 10: up to about 60 n eps of e^(x/2).
        per_n = 100 if "laguerre" in fn else 4
        assert worst <= per_n * (b.max() + 1), f"{fn} {dtype}: {worst} eps"
        return
    u = record_ulps(fn, dtype, got, ref)
    bound = 2 if dtype == "float32" else BINARY_F64[fn]
    if fn in ("igamma", "igammac"):
        # float64: the far tails (results down to 1e-280) are conditioned like a |log(x / a)|:
        # a few thousand ulps there, a few ulps where the result is not tiny.
        bound = 4 if dtype == "float32" else 1e4
    assert u <= bound, f"{fn} {dtype}: {u} ulps"


def test_igamma_relative_accuracy_float64():
    # The incomplete gamma ratios to 1e-12 relative wherever the result exceeds 1e-280, Temme's
    # regime (large a, x near a) and the far tails included (the condition number there is
    # about a |log(x / a)|).
    a, x = igamma_points()
    for fn, lower in ((ember.igamma, True), (ember.igammac, False)):
        got = fn(ember.from_numpy(a), ember.from_numpy(x)).numpy()
        ref = mp_gammainc(lower)(a, x)
        m = ref > 1e-280
        rel = np.abs(got[m] - ref[m]) / ref[m]
        assert rel.max() < 1e-12, (fn, a[m][rel.argmax()], x[m][rel.argmax()], rel.max())


def test_gcd_lcm_vs_numpy():
    r = np.random.default_rng(5)
    for dt in ("int8", "int16", "int32", "int64", "uint8"):
        info = np.iinfo(dt)
        lo, hi = max(info.min + 1, -1000), min(info.max, 1000)
        a = r.integers(lo, hi, 500).astype(dt)
        b = r.integers(lo, hi, 500).astype(dt)
        a[:5], b[:5] = [0, 0, 7, 0, 12], [0, 5, 0, -0, 18]
        ea, eb = ember.from_numpy(a), ember.from_numpy(b)
        np.testing.assert_array_equal(ember.gcd(ea, eb).numpy(), np.gcd(a, b))
        small = (np.abs(a.astype(np.int64)) < 100) & (np.abs(b.astype(np.int64)) < 100)
        np.testing.assert_array_equal(ember.lcm(ea, eb).numpy()[small], np.lcm(a, b)[small])


def test_heaviside_by_hand():
    x = ember.tensor([-2.0, -0.0, 0.0, 3.0, NAN, INF, -INF])
    v = ember.tensor([0.5] * 7)
    r = ember.heaviside(x, v).tolist()
    assert r[:4] == [0.0, 0.5, 0.5, 1.0] and r[4] == 0.0 and r[5:] == [1.0, 0.0]
    assert ember.heaviside(ember.tensor([-3, 0, 2]), ember.tensor([7])).tolist() == [0, 7, 1]


# ------------------------------------------------------------------------------------------------
# against torch 1.13: every dtype, layouts, specials

UNARY = ["sinc", "deg2rad", "rad2deg", "special.entr"]
BINARY = ["logaddexp", "logaddexp2", "heaviside", "gcd", "lcm", "igamma", "igammac",
          "special.xlog1py", "special.zeta"]
POLYS = ["special." + n for n in (
    "chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
    "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u "
    "shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w hermite_polynomial_h "
    "hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p").split()]

# bfloat16: torch rounds intermediates to bfloat16 (sinc's πx, logaddexp's max + log1p(...)).
BF16_TOL = {"sinc": 1e-2, "logaddexp": 2e-2, "logaddexp2": 2e-2}


def tol_for(fn, dtype):
    if dtype == "bfloat16":
        a = BF16_TOL.get(fn, 1e-5)
        return 1.6e-2, a
    return None, None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", UNARY)
def test_unary_dtypes_vs_torch(fn, dtype):
    e, t = make(dtype, kind="any")
    rtol, atol = tol_for(fn, dtype)
    check(lambda lib, x: lib_fn(lib, fn)(x), (e, t), rtol=rtol, atol=atol, what=f"{fn} {dtype}",
          key=(fn, dtype))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("fn", UNARY + ["i0"])
def test_unary_layouts_vs_torch(fn, layout):
    e, t = make("float64", layout, kind="any")
    check(lambda lib, x: lib_fn(lib, fn)(x), (e, t), what=f"{fn} {layout}")


SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 1e-30, 1e30, 40.0, -40.0, INF, -INF, NAN]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", UNARY)
def test_unary_specials_vs_torch(fn, dtype):
    e, t = pair(SPECIALS, dtype)
    check(lambda lib, x: lib_fn(lib, fn)(x), (e, t), what=f"{fn} specials")


def binary_operands(fn, dtype, layout="contiguous", seed=0):
    kind = "nonzero" if fn in ("gcd", "lcm") else "any"
    a = make(dtype, layout, seed=seed, kind=kind)
    b = make(dtype, "contiguous" if layout != "broadcast" else "broadcast", seed=seed + 1,
             kind=kind)
    if fn in ("igamma", "igammac", "special.zeta") and dtype in FLOATS:
        a = (a[0].abs() + 1, a[1].abs() + 1)
        b = (b[0].abs(), b[1].abs())
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", BINARY + POLYS)
def test_binary_dtypes_vs_torch(fn, dtype):
    a, b = binary_operands(fn, dtype)
    if fn in POLYS and dtype in ("float32", "float64"):
        b = (b[0].abs().floor(), b[1].abs().floor())
    rtol, atol = tol_for(fn.split(".")[-1], dtype)
    check(lambda lib, x, y: lib_fn(lib, fn)(x, y), a, b, rtol=rtol, atol=atol,
          what=f"{fn} {dtype}", key=(fn, dtype))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("fn", BINARY + POLYS[:3])
def test_binary_layouts_vs_torch(fn, layout):
    dtype = "int64" if fn in ("gcd", "lcm") else "float64"
    a, b = binary_operands(fn, dtype, layout)
    if fn in POLYS:
        b = (b[0].abs().floor(), b[1].abs().floor())
    check(lambda lib, x, y: lib_fn(lib, fn)(x, y), a, b, what=f"{fn} {layout}")
    # broadcasting between a row and a column
    x, y = make(dtype, shape=(3, 1), seed=4, kind="nonzero"), make(dtype, shape=(1, 4), seed=5,
                                                                     kind="nonzero")
    if fn in ("igamma", "igammac", "special.zeta"):
        x, y = (x[0].abs() + 1, x[1].abs() + 1), (y[0].abs(), y[1].abs())
    check(lambda lib, p, q: lib_fn(lib, fn)(p, q), x, y, what=f"{fn} broadcast")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", [f for f in BINARY if f not in ("gcd", "lcm")] + POLYS)
def test_binary_special_values_vs_torch(fn, dtype):
    v = [0.0, -0.0, 0.5, 1.0, -1.0, 2.5, 7.0, 25.0, 250.0, 1e-5, -3.0, INF, -INF, NAN]
    if fn in POLYS:
        n = [0.0, 1.0, 2.0, 3.0, 2.5, 5.0, 7.0, 9.0, 12.0, 40.0, -1.0, INF, -INF, NAN]
        a, b = _grid(v + [0.3, -0.7, 0.99], n)
    else:
        a, b = _grid(v, v)
    if fn == "special.zeta":
        # torch's zeta(s, inf) is NaN (its Euler-Maclaurin tail multiplies 0 by inf); the limit
        # 0 (SciPy's answer) is checked below.
        keep = b != INF
        a, b = a[keep], b[keep]
        assert ember.special.zeta(ember.tensor([2.0, 7.5]), INF).tolist() == [0.0, 0.0]
        assert sp.zeta(2.0, np.inf) == 0.0
    ea, ta = pair(a, dtype)
    eb, tb = pair(b, dtype)
    # torch evaluates float32 in float arithmetic: a few ulps apart from ember's double path.
    rtol = 1e-5 if dtype == "float32" else 1e-10
    if fn in POLYS and dtype == "float64":
        rtol = 1e-9
    check(lambda lib, x, y: lib_fn(lib, fn)(x, y), (ea, ta), (eb, tb), rtol=rtol, atol=1e-6,
          what=f"{fn} specials")


def test_polynomial_large_degree_vs_torch():
    x = [-1.0, -0.999, -0.5, 0.0, 0.3, 0.999, 1.0, 1.001, -1.5]
    n = [100.0, 1000.0, 5000.0]
    a, b = _grid(x, n)
    ea, ta = pair(a, "float64")
    eb, tb = pair(b, "float64")
    for fn in POLYS:
        if "hermite" in fn:
            continue
        check(lambda lib, p, q: lib_fn(lib, fn)(p, q), (ea, ta), (eb, tb), rtol=1e-7, atol=1e-9,
              what=fn)


def test_polynomial_huge_degree_returns():
    # Beyond 2^24 steps the bounded recurrences switch to their asymptotic forms instead of
    # looping; Hilb's formula for Legendre, by hand at n = 1e9.
    n = ember.tensor([1e9, 1e12, 1e18], dtype=ember.float64)
    x = ember.tensor([0.3], dtype=ember.float64)
    for fn in POLYS:
        r = lib_fn(ember, fn)(x, n)
        assert r.shape == (3,)
    th = math.acos(0.3)
    nu = 1e9 + 0.5
    ref = math.sqrt(th / math.sin(th)) * sp.j0(nu * th)
    got = ember.special.legendre_polynomial_p(x, n[:1]).item()
    assert abs(got - ref) < 1e-9
    assert abs(ember.special.chebyshev_polynomial_t(ember.tensor([2.0], dtype=ember.float64),
                                                    n[:1]).item()) == INF


@pytest.mark.parametrize("fn", ["igamma", "igammac", "special.xlog1py", "special.zeta",
                                "logaddexp", "special.chebyshev_polynomial_t"])
def test_integer_and_mixed_inputs_vs_torch(fn):
    for da, db in (("int64", "int64"), ("int32", "float32"), ("float64", "int8"),
                   ("bool", "float32"), ("float32", "float64")):
        kind = "small" if fn in ("igamma", "igammac", "special.zeta") else "nonzero"
        a, b = make(da, kind=kind, seed=2), make(db, kind=kind, seed=3)
        if kind == "small":
            a = (a[0] + 1, a[1] + 1)
        check(lambda lib, x, y: lib_fn(lib, fn)(x, y), a, b, what=f"{fn} {da}+{db}",
              key=(fn, da, db))


@pytest.mark.parametrize("fn", ["special.xlog1py", "special.zeta", "logaddexp", "gcd",
                                "special.hermite_polynomial_he"])
def test_python_scalars_vs_torch(fn):
    dtype = "int64" if fn == "gcd" else "float64"
    e, t = make(dtype, kind="nonzero")
    e, t = e.abs() + 1, t.abs() + 1
    s = 3 if fn == "gcd" else 2.0
    if fn.startswith("special."):
        check(lambda lib, x: lib_fn(lib, fn)(x, s), (e, t), what=f"{fn}(t, s)")
        check(lambda lib, x: lib_fn(lib, fn)(s, x), (e, t), what=f"{fn}(s, t)")
    # torch.gcd/logaddexp take tensors only; ember also takes a number: PyTorch's wrapped rule.
    r = lib_fn(ember, fn)(e, s)
    ref = lib_fn(torch, fn)(t, torch.tensor(s, dtype=t.dtype))
    assert_same(r, ref)


def test_zero_size_and_0dim():
    for fn in BINARY + POLYS:
        dtype = "int64" if fn in ("gcd", "lcm") else "float32"
        a, b = make(dtype, "zero"), make(dtype, "scalar", seed=3, kind="nonzero")
        check(lambda lib, x, y: lib_fn(lib, fn)(x, y), a, b, what=f"{fn} zero-size")
        check(lambda lib, x, y: lib_fn(lib, fn)(y, y), a, b, what=f"{fn} 0-dim")
    for fn in UNARY:
        check(lambda lib, x: lib_fn(lib, fn)(x), make("float32", "zero"), what=fn)
        check(lambda lib, x: lib_fn(lib, fn)(x), make("float32", "scalar"), what=fn)


# ------------------------------------------------------------------------------------------------
# out=, in-place, aliases


@pytest.mark.parametrize("fn", UNARY)
def test_unary_out(fn):
    e, t = make("float32", "strided")
    eo, to = ember.empty(0), torch.empty(0)
    assert lib_fn(ember, fn)(e, out=eo) is eo
    lib_fn(torch, fn)(t, out=to)
    assert_same(eo, to)
    # a float64 out= takes the float32 result; an int one cannot
    eo, to = ember.empty(3, 4, dtype=ember.float64), torch.empty(3, 4, dtype=torch.float64)
    lib_fn(ember, fn)(e, out=eo)
    lib_fn(torch, fn)(t, out=to)
    assert_same(eo, to)
    raises_like(lambda lib, x: lib_fn(lib, fn)(x, out=lib.empty(3, 4, dtype=lib.int64)), (e, t))


@pytest.mark.parametrize("fn", BINARY + POLYS[:2])
def test_binary_out(fn):
    dtype = "int64" if fn in ("gcd", "lcm") else "float64"
    a, b = binary_operands(fn, dtype)
    eo, to = ember.empty(0, dtype=getattr(ember, dtype)), torch.empty(0, dtype=getattr(torch,
                                                                                        dtype))
    assert lib_fn(ember, fn)(a[0], b[0], out=eo) is eo
    lib_fn(torch, fn)(a[1], b[1], out=to)
    assert_same(eo, to)
    bad = "bool" if fn in ("gcd", "lcm") else "int64"
    raises_like(lambda lib, x, y: lib_fn(lib, fn)(x, y, out=lib.empty(3, 4, dtype=getattr(lib,
                                                                                           bad))),
                a, b)


@pytest.mark.parametrize("fn", ["sinc", "deg2rad", "rad2deg"])
def test_unary_inplace(fn):
    e, t = make("float64", "transposed")
    ec, tc = e.clone(), t.clone()
    assert getattr(ec, fn + "_")() is ec
    getattr(tc, fn + "_")()
    assert_same(ec, tc)
    # an integer tensor cannot hold the float result
    raises_like(lambda lib, x: getattr(x.clone(), fn + "_")(), make("int64"))


@pytest.mark.parametrize("fn", ["logaddexp", "logaddexp2", "heaviside", "gcd", "lcm", "igamma",
                                "igammac"])
def test_binary_inplace_and_methods(fn):
    dtype = "int64" if fn in ("gcd", "lcm") else "float64"
    a, b = binary_operands(fn, dtype)
    assert_same(getattr(a[0], fn)(b[0]), getattr(a[1], fn)(b[1]))
    ec, tc = a[0].clone(), a[1].clone()
    assert getattr(ec, fn + "_")(b[0]) is ec
    if hasattr(tc, fn + "_"):
        getattr(tc, fn + "_")(b[1])
    else:  # torch has no logaddexp_: PyTorch's in-place rule on the out-of-place result
        tc = getattr(tc, fn)(b[1])
    assert_same(ec, tc)


def test_special_aliases_vs_torch():
    e, t = make("float64", kind="any")
    p = (e.abs() + 0.5, t.abs() + 0.5)
    for name in ("expit", "erf", "erfc", "exp2", "expm1", "i0", "sinc", "gammaln", "digamma",
                 "psi", "entr", "round"):
        check(lambda lib, x: getattr(lib.special, name)(x), (e, t), what=name)
    check(lambda lib, x: lib.special.log1p(x), p, what="log1p")
    check(lambda lib, x: lib.special.erfinv(x * 0.1), (e, t), what="erfinv")
    check(lambda lib, x: lib.special.logit(x * 0.1 + 0.5, eps=1e-6), (e, t), what="logit")
    check(lambda lib, x: lib.special.xlogy(x, x + 7), p, what="xlogy")
    check(lambda lib, x: lib.special.gammainc(x, x * 2), p, what="gammainc")
    check(lambda lib, x: lib.special.gammaincc(x, x * 2), p, what="gammaincc")
    check(lambda lib, x: lib.special.polygamma(2, x), p, what="polygamma")
    check(lambda lib, x: lib.special.multigammaln(x + 2, 3), p, what="multigammaln")
    check(lambda lib, x: lib.special.softmax(x, 1), (e, t), what="softmax")
    check(lambda lib, x: lib.special.log_softmax(x, 0), (e, t), what="log_softmax")
    check(lambda lib, x: lib.special.logsumexp(x, 1), (e, t), what="logsumexp")
    check(lambda lib, x: lib.special.round(x * 7.3, decimals=1), (e, t), what="round")
    eo, to = ember.empty(0, dtype=ember.float64), torch.empty(0, dtype=torch.float64)
    ember.special.gammainc(p[0], p[0], out=eo)
    torch.special.gammainc(p[1], p[1], out=to)
    assert_same(eo, to)


def test_special_module_is_complete():
    # Every public function of torch 1.13's torch.special, the Bessel family included where
    # its binding has landed.
    bessel = {"i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfcx", "bessel_j0", "bessel_j1",
              "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
              "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
              "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"}
    names = {n for n in dir(torch.special) if not n.startswith("_") and callable(
        getattr(torch.special, n)) and n not in ("Tensor", )}
    missing = sorted(n for n in names if not hasattr(ember.special, n) and not (
        n in bessel and not hasattr(ember._C._special, n)))
    assert not missing, missing


# ------------------------------------------------------------------------------------------------
# frexp / ldexp


@pytest.mark.parametrize("dtype", DTYPES)
def test_frexp_dtypes_vs_torch(dtype):
    e, t = make(dtype, kind="any")
    check(lambda lib, x: tuple(lib.frexp(x)), (e, t), what=f"frexp {dtype}", key=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp_specials_and_subnormals(dtype):
    fi = torch.finfo(getattr(torch, dtype))
    vals = [0.0, -0.0, 1.0, -1.0, 0.75, 6.5, -3.0, fi.max, -fi.max, fi.tiny, fi.tiny / 4,
            -fi.tiny / 8, INF, -INF, NAN]
    e, t = pair(vals, dtype)
    check(lambda lib, x: tuple(lib.frexp(x)), (e, t), rtol=0, atol=0, what=f"frexp {dtype}")
    m, ex = ember.frexp(e)
    assert ex.dtype == ember.int32
    check(lambda lib, x: tuple(x.frexp()), (e, t), rtol=0, atol=0, what="Tensor.frexp")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_frexp_layouts_and_out(layout):
    e, t = make("float32", layout, kind="any")
    check(lambda lib, x: tuple(lib.frexp(x)), (e, t), rtol=0, atol=0, what=layout)
    em, ee = ember.empty(0), ember.empty(0, dtype=ember.int32)
    r = ember.frexp(e, out=(em, ee))
    assert r.mantissa is em and r.exponent is ee
    tm, te = torch.frexp(t)
    assert_same(em, tm, rtol=0, atol=0)
    assert_same(ee, te)
    raises_like(lambda lib, x: lib.frexp(x, out=(lib.empty(0, dtype=lib.float64),
                                                 lib.empty(0, dtype=lib.int32))), (e, t))
    raises_like(lambda lib, x: lib.frexp(x, out=(lib.empty(0), lib.empty(0, dtype=lib.int64))),
                (e, t))


def test_frexp_gradients():
    x = ember.tensor([3.0, 0.7, -5.5, 1e-310, 1024.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v: ember.frexp(v)[0], (x[:3].detach().requires_grad_(),
                                                              ), check_forward_ad=True)
    m, e = ember.frexp(x)
    m.sum().backward()
    xt = torch.tensor([3.0, 0.7, -5.5, 1e-310, 1024.0], dtype=torch.float64, requires_grad=True)
    torch.frexp(xt)[0].sum().backward()
    assert_same(x.grad, xt.grad, rtol=0, atol=0)
    assert_same(m.detach(), torch.frexp(xt)[0].detach(), rtol=0, atol=0)


LDEXP_PAIRS = [("float32", "int64"), ("float16", "int32"), ("bfloat16", "int64"),
               ("int32", "int32"), ("float64", "int8"), ("float32", "float64"),
               ("complex64", "int64"), ("bool", "bool"), ("int64", "complex64")]


@pytest.mark.parametrize("da,db", LDEXP_PAIRS)
def test_ldexp_dtypes_vs_torch(da, db):
    a = make(da, kind="any", seed=6)
    b = make(db, kind="small", seed=7)
    check(lambda lib, x, y: lib.ldexp(x, y), a, b, what=f"ldexp {da} {db}", key=(da, db))
    check(lambda lib, x, y: x.ldexp(y), a, b, what=f"Tensor.ldexp {da} {db}", key=(da, db, 1))
    check(lambda lib, x, y: x.clone().ldexp_(y), a, b, what=f"ldexp_ {da} {db}",
          key=(da, db, 2))


def test_ldexp_range_layouts_out_grad():
    x, t = pair([1.0, 2.0, -3.0, 0.5], "float64")
    ex, et = to_ember(torch.tensor([1025, -1080, 3, -2])), torch.tensor([1025, -1080, 3, -2])
    check(lambda lib, p, q: lib.ldexp(p, q), (x, t), (ex, et), rtol=0, atol=0, what="range")
    for layout in ("transposed", "strided", "broadcast", "zero", "scalar"):
        a = make("float32", layout)
        b = make("int64", layout if layout != "zero" else "zero", seed=9, kind="small")
        check(lambda lib, p, q: lib.ldexp(p, q), a, b, what=layout)
    a, b = make("float32"), make("int64", seed=3, kind="small")
    eo, to = ember.empty(0), torch.empty(0)
    assert ember.ldexp(a[0], b[0], out=eo) is eo
    torch.ldexp(a[1], b[1], out=to)
    assert_same(eo, to)
    xe = ember.tensor([0.3, -1.2], dtype=ember.float64, requires_grad=True)
    ye = ember.tensor([1.5, -0.5], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda p, q: ember.ldexp(p, q), (xe, ye),
                                    check_forward_ad=True)


# ------------------------------------------------------------------------------------------------
# derivatives


def grad_inputs(values):
    return ember.tensor(values, dtype=ember.float64, requires_grad=True)


@pytest.mark.parametrize("fn,args", [
    ("sinc", ([0.3, -1.7, 0.0, 2.5, 1e-3],)),
    ("deg2rad", ([0.3, -170.0, 33.0],)),
    ("rad2deg", ([0.3, -2.0, 6.0],)),
    ("special.entr", ([0.3, 1.7, 4.0],)),
    ("logaddexp", ([0.3, -2.0, 5.0], [1.1, -2.5, -3.0])),
    ("logaddexp2", ([0.3, -2.0, 5.0], [1.1, -2.5, -3.0])),
    ("special.xlog1py", ([0.3, -2.0, 0.5], [1.1, 0.5, 3.0])),
])
def test_gradcheck(fn, args):
    ins = tuple(grad_inputs(a) for a in args)
    f = lambda *xs: lib_fn(ember, fn)(*xs)  # noqa: E731
    assert ember.autograd.gradcheck(f, ins, check_forward_ad=True)
    # sinc's first derivative is PyTorch's formula masked to 0 at x = 0, which is not
    # differentiable there: second derivatives away from 0
    ins = tuple(grad_inputs([v for v in a if v != 0.0]) for a in args)
    assert ember.autograd.gradgradcheck(f, ins)


@pytest.mark.parametrize("fn", ["igamma", "igammac", "special.zeta"])
def test_gradient_second_argument_only(fn):
    a = ember.tensor([1.5, 2.5, 4.0], dtype=ember.float64)
    x = grad_inputs([0.7, 3.0, 2.0])
    assert ember.autograd.gradcheck(lambda v: lib_fn(ember, fn)(a, v), (x,),
                                    check_forward_ad=True)
    # torch: NotImplementedError at backward for the first argument
    at = torch.tensor([1.5, 2.5, 4.0], dtype=torch.float64, requires_grad=True)
    ae = ember.tensor([1.5, 2.5, 4.0], dtype=ember.float64, requires_grad=True)
    xt = torch.tensor([0.7, 3.0, 2.0], dtype=torch.float64)
    xe = ember.tensor([0.7, 3.0, 2.0], dtype=ember.float64)
    with pytest.raises(NotImplementedError):
        lib_fn(torch, fn)(at, xt).sum().backward()
    with pytest.raises(NotImplementedError):
        lib_fn(ember, fn)(ae, xe).sum().backward()
    # the gradient matches torch's
    xt2 = xt.clone().requires_grad_()
    xe2 = xe.clone().requires_grad_()
    lib_fn(torch, fn)(at.detach(), xt2).sum().backward()
    lib_fn(ember, fn)(ae.detach(), xe2).sum().backward()
    assert_same(xe2.grad, xt2.grad, rtol=1e-10, atol=1e-12)


def test_nondifferentiable_ops_match_torch():
    a = ember.tensor([0.3, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([0.5, 0.5, 0.5], dtype=ember.float64, requires_grad=True)
    # heaviside records a node whose backward raises (RuntimeError, as torch)
    y = ember.heaviside(a, b)
    assert y.requires_grad
    with pytest.raises(RuntimeError):
        y.sum().backward()
    # the polynomials record nothing
    for fn in POLYS:
        assert not lib_fn(ember, fn)(a, b.detach().floor()).requires_grad


# ------------------------------------------------------------------------------------------------
# bad input


def test_bad_input_types():
    e, t = make("float32")
    raises_like(lambda lib, x: lib.special.zeta("a", x), (e, t))
    raises_like(lambda lib, x: lib.frexp(x), make("int64"))
    raises_like(lambda lib, x, y: lib.special.xlog1py(x, y), (e, t), make("float32", shape=(5,)))
    raises_like(lambda lib, x: lib.special.entr(x.to(lib.complex64)), (e, t))
    raises_like(lambda lib, x: lib.gcd(x, x), (e, t))
    raises_like(lambda lib, x: lib.logaddexp(x.to(lib.int64), x.to(lib.int64)), (e, t))
    raises_like(lambda lib, x: lib.heaviside(x.to(lib.complex64), x.to(lib.complex64)), (e, t))
    raises_like(lambda lib, x: lib.special.zeta(x.half(), x.half()), (e, t))
    raises_like(lambda lib, x: lib.special.chebyshev_polynomial_t(x.half(), x.half()), (e, t))
    with pytest.raises(TypeError):
        ember.special.xlog1py(2.0, 3.0)


def test_heaviside_mixed_dtypes_raise_as_torch():
    e, t = make("float32")
    raises_like(lambda lib, x: lib.heaviside(x, x.double()), (e, t))
    raises_like(lambda lib, x: lib.heaviside(x.long(), x), (e, t))
