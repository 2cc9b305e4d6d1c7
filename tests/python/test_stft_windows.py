"""ember.stft / ember.istft and the window functions against torch 1.13: every argument (center,
pad_mode, normalized, onesided, return_complex, hop/win lengths, windows), batched and strided
signals, warnings, bad input by exception type, round trips and derivatives."""

import warnings

import numpy as np
import pytest
import torch

import ember
from _oracle import check, raises_like, tensors_from

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def pair(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        v = v + 1j * rng.standard_normal(shape)
    return tensors_from(v.astype(dtype), dtype)


def tol(dtype):
    return {"rtol": 1e-4, "atol": 1e-4} if dtype in ("float32", "complex64") else \
        {"rtol": 1e-9, "atol": 1e-9}


# ---- windows ----

@pytest.mark.parametrize("fn", WINDOWS)
def test_windows(fn):
    for n in [0, 1, 2, 5, 8, 33]:
        for periodic in [True, False]:
            for dtype in [None, "float32", "float64", "bfloat16"]:
                t = 1e-2 if dtype == "bfloat16" else 1e-5

                def f(L):
                    kw = {} if dtype is None else {"dtype": getattr(L, dtype)}
                    return getattr(L, fn)(n, periodic, **kw)
                check(f, what=f"{fn} {n} {periodic} {dtype}", rtol=t, atol=t)
    check(lambda L: getattr(L, fn)(7), what="defaults")
    check(lambda L: getattr(L, fn)(7, periodic=False), what="periodic keyword")


def test_window_parameters():
    check(lambda L: L.hamming_window(9, False, 0.3, 0.2), what="alpha beta")
    check(lambda L: L.hamming_window(9, periodic=True, alpha=0.6), what="alpha")
    for beta in [0.0, 3.0, 12.0]:
        check(lambda L: L.kaiser_window(10, False, beta, dtype=L.float64), what=f"beta {beta}")
        check(lambda L: L.kaiser_window(10, True, beta=beta), what=f"beta kw {beta}", rtol=1e-5,
              atol=1e-6)
    w = ember.hann_window(5, requires_grad=True)
    assert w.requires_grad and w.is_leaf


@pytest.mark.parametrize("fn", WINDOWS)
def test_window_errors(fn):
    raises_like(lambda L: getattr(L, fn)(-1), key=(fn, -1))
    raises_like(lambda L: getattr(L, fn)(5, dtype=L.int64), key=(fn, "int"))
    raises_like(lambda L: getattr(L, fn)(5, dtype=L.complex64), key=(fn, "complex"))
    if fn != "bartlett_window":
        raises_like(lambda L: getattr(L, fn)(5, dtype=L.float16), key=(fn, "half"))


# ---- stft ----

def stft_cases():
    yield {}, "defaults"
    yield {"hop_length": 3}, "hop"
    yield {"win_length": 10}, "win_length"
    yield {"win_length": 11, "hop_length": 5}, "odd win"
    yield {"center": False}, "no center"
    yield {"pad_mode": "constant"}, "constant"
    yield {"pad_mode": "replicate"}, "replicate"
    yield {"pad_mode": "circular"}, "circular"
    yield {"normalized": True}, "normalized"
    yield {"onesided": False}, "twosided"
    yield {"window": "hann"}, "window"
    yield {"window": "hann10", "win_length": 10}, "short window"


def resolve(lib, kw, dtype):
    kw = dict(kw)
    if kw.get("window") == "hann":
        kw["window"] = lib.hann_window(16, dtype=getattr(lib, dtype))
    elif kw.get("window") == "hann10":
        kw["window"] = lib.hann_window(10, dtype=getattr(lib, dtype))
    return kw


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stft(dtype):
    x = pair((2, 50), dtype)
    for kw, what in stft_cases():
        for rc in [True, False]:
            for sig in ["batched", "single", "strided"]:
                def f(L, x):
                    s = {"batched": x, "single": x[1], "strided": x[:, ::2]}[sig]
                    return L.stft(s, 16, return_complex=rc, **resolve(L, kw, dtype))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    check(f, x, what=f"{what} rc={rc} {sig}", **tol(dtype))


def test_stft_complex():
    for dtype in ["complex64", "complex128"]:
        x = pair((2, 40), dtype)
        check(lambda L, x: L.stft(x, 8, return_complex=True), x, **tol(dtype))
        check(lambda L, x: L.stft(x, 8, hop_length=3, window=L.hann_window(8)), x, **tol(dtype))
        check(lambda L, x: x.stft(8, center=False, normalized=True, return_complex=True), x,
              **tol(dtype))
    # A complex window makes a real signal's transform complex and two-sided.
    x = pair((30,), "float64")
    check(lambda L, x: L.stft(x, 8, window=L.ones(8, dtype=L.complex128)), x, **tol("float64"))


def test_stft_warns_without_return_complex():
    x = ember.randn(40)
    with pytest.warns(UserWarning, match="return_complex"):
        r = ember.stft(x, 8)
    assert r.dtype == ember.float32 and tuple(r.shape) == (5, 21, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.stft(x, 8, return_complex=True)


def test_stft_errors():
    x = pair((64,), "float32")
    cases = [
        lambda L, x: L.stft(x.reshape(2, 2, 16), 4, return_complex=True),
        lambda L, x: L.stft(x, 100, center=False, return_complex=True),
        lambda L, x: L.stft(x, 0, return_complex=True),
        lambda L, x: L.stft(x, 16, hop_length=0, return_complex=True),
        lambda L, x: L.stft(x, 16, win_length=17, return_complex=True),
        lambda L, x: L.stft(x, 16, window=L.ones(8), return_complex=True),
        lambda L, x: L.stft(x, 16, pad_mode="bogus", return_complex=True),
        lambda L, x: L.stft(x[:10], 32, return_complex=True),
        lambda L, x: L.stft(x[0], 16, return_complex=True),
        lambda L, x: L.stft(x.half(), 16, return_complex=True),
        lambda L, x: L.stft(x.to(L.int64), 16, center=False, return_complex=True),
        lambda L, x: L.stft(x.to(L.complex64), 16, onesided=True, return_complex=True),
    ]
    for i, f in enumerate(cases):
        raises_like(f, x, key=i)


# ---- istft ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_istft(dtype):
    x = pair((2, 60), dtype, seed=2)
    cdt = "complex64" if dtype == "float32" else "complex128"
    for kw, what in [({}, "defaults"), ({"hop_length": 3}, "hop"), ({"center": False}, "nc"),
                     ({"normalized": True}, "norm"), ({"window": "hann"}, "window"),
                     ({"win_length": 10, "window": "hann10", "hop_length": 2}, "short window")]:
        for length in [None, 50, 60]:
            def f(L, x):
                k = resolve(L, kw, dtype)
                S = L.stft(x, 16, return_complex=True, **k)
                k.pop("pad_mode", None)
                return L.istft(S, 16, length=length, **k)
            check(f, x, what=f"{what} length={length}", **tol(dtype))
    # Two-sided spectra, complex output, a single channel, real (re, im) pairs.
    for sig in ["single", "batched"]:
        def g(L, x):
            s = x[0] if sig == "single" else x
            S = L.stft(s.to(getattr(L, cdt)), 16, return_complex=True)
            return L.istft(S, 16, return_complex=True)
        check(g, x, what=f"complex {sig}", **tol(dtype))
        check(lambda L, x: L.istft(L.stft(x, 16, return_complex=True, onesided=False), 16,
                                   onesided=False), x, what="twosided", **tol(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda L, x: L.istft(L.stft(x, 16, return_complex=False), 16), x, what="pairs",
              **tol(dtype))


def test_istft_round_trip_and_warnings():
    x = ember.randn(3, 100, dtype=ember.float64)
    S = ember.stft(x, 32, hop_length=8, window=ember.hann_window(32, dtype=ember.float64),
                   return_complex=True)
    y = S.istft(32, hop_length=8, window=ember.hann_window(32, dtype=ember.float64), length=100)
    assert ember.allclose(y, x, atol=1e-10)
    with pytest.warns(UserWarning, match="shorter than the length"):
        r = ember.istft(S, 32, hop_length=8, length=200)
    assert tuple(r.shape) == (3, 200)
    with pytest.warns(UserWarning, match="complex-valued input"):
        ember.istft(ember.stft(x, 32, return_complex=False), 32)


def test_istft_errors():
    x = pair((64,), "float32")

    def spec(L, x):
        return L.stft(x, 16, return_complex=True)
    cases = [
        lambda L, x: L.istft(spec(L, x), 16, return_complex=True),
        lambda L, x: L.istft(spec(L, x), 16, hop_length=20),
        lambda L, x: L.istft(spec(L, x), 16, window=L.zeros(16)),
        lambda L, x: L.istft(spec(L, x)[:, :0], 16),
        lambda L, x: L.istft(spec(L, x)[0], 16),
        lambda L, x: L.istft(spec(L, x), 20),
        lambda L, x: L.istft(spec(L, x), 16, window=L.ones(16, dtype=L.complex64)),
        lambda L, x: L.istft(spec(L, x), 16, window=L.ones(8)),
        lambda L, x: L.istft(spec(L, x), 16, win_length=17),
        lambda L, x: L.istft(spec(L, x)[None, None], 16),
    ]
    for i, f in enumerate(cases):
        raises_like(f, x, key=i)


# ---- derivatives ----

def test_stft_gradients():
    x = ember.randn(30, dtype=ember.float64, requires_grad=True)
    w = ember.hann_window(8, dtype=ember.float64).requires_grad_(True)
    assert ember.autograd.gradcheck(
        lambda x, w: ember.stft(x, 8, hop_length=3, window=w, return_complex=True), (x, w),
        check_forward_ad=True)
    assert ember.autograd.gradgradcheck(
        lambda x: ember.stft(x, 8, hop_length=3, return_complex=True, normalized=True), (x,))
    z = ember.randn(20, dtype=ember.complex128, requires_grad=True)
    assert ember.autograd.gradcheck(lambda z: ember.stft(z, 6, return_complex=True), (z,),
                                    check_forward_ad=True)


def test_istft_gradients():
    S = ember.stft(ember.randn(40, dtype=ember.float64), 8, hop_length=2,
                   return_complex=True).detach().requires_grad_(True)
    w = (ember.hann_window(8, dtype=ember.float64) + 0.1).requires_grad_(True)
    assert ember.autograd.gradcheck(
        lambda S, w: ember.istft(S, 8, hop_length=2, window=w), (S, w), check_forward_ad=True)
    assert ember.autograd.gradgradcheck(lambda S: ember.istft(S, 8, hop_length=2), (S,))
