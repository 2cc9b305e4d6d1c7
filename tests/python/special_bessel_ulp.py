#!/usr/bin/env python3
"""Worst error in ulps of ember's Bessel-family functions against mpmath (30 digits).

Samples each function's domain (tails, small and large magnitudes, both signs), evaluates
ember in float64 and float32, and prints per function and dtype the largest error in units in
the last place of the exact result rounded to the dtype, where the point is, and the 99th
percentile. For the oscillating functions, whose relative error grows without bound near their
zeros, it also prints the largest absolute error divided by the envelope (1 / sqrt|x| for the
Bessel functions, |x|^(-1/4) / sqrt(pi) for Ai on the left, or |f| where that is larger), in
units of the dtype's epsilon.

    PYTHONPATH=build/release/python /usr/bin/python3 tests/python/special_bessel_ulp.py [names]
"""

import sys

import mpmath as mp
import numpy as np

import ember

mp.mp.dps = 30
SP = ember._C._special


def ndtri_ref(p):
    p = mp.mpf(p)
    if 0.01 < p < 0.99:
        return mp.sqrt(2) * mp.erfinv(2 * p - 1)
    q = min(p, 1 - p)
    z = mp.findroot(lambda z: mp.log(mp.ncdf(-z)) - mp.log(q), mp.sqrt(-2 * mp.log(q)))
    return -z if p < 0.5 else z


REF = {
    "i0": lambda x: mp.besseli(0, x),
    "i0e": lambda x: mp.exp(-abs(x)) * mp.besseli(0, x),
    "i1": lambda x: mp.besseli(1, x),
    "i1e": lambda x: mp.exp(-abs(x)) * mp.besseli(1, x),
    "ndtr": mp.ncdf,
    "ndtri": ndtri_ref,
    "log_ndtr": lambda x: mp.log(mp.ncdf(x)) if x < 0 else mp.log1p(-mp.ncdf(-x)),
    "erfcx": lambda x: mp.exp(x * x) * mp.erfc(x),
    "bessel_j0": lambda x: mp.besselj(0, x),
    "bessel_j1": lambda x: mp.besselj(1, x),
    "bessel_y0": lambda x: mp.bessely(0, x),
    "bessel_y1": lambda x: mp.bessely(1, x),
    "modified_bessel_i0": lambda x: mp.besseli(0, x),
    "modified_bessel_i1": lambda x: mp.besseli(1, x),
    "modified_bessel_k0": lambda x: mp.besselk(0, x),
    "modified_bessel_k1": lambda x: mp.besselk(1, x),
    "scaled_modified_bessel_k0": lambda x: mp.exp(x) * mp.besselk(0, x),
    "scaled_modified_bessel_k1": lambda x: mp.exp(x) * mp.besselk(1, x),
    "spherical_bessel_j0": lambda x: mp.sin(x) / x,
    "airy_ai": mp.airyai,
}
OSC = {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0", "airy_ai"}


def grid(name, rng):
    if name == "ndtri":
        return np.concatenate([rng.uniform(0, 1, 700), 10 ** rng.uniform(-300, -1, 300),
                               1 - 10 ** rng.uniform(-16, -1, 100)])
    if name in ("bessel_y0", "bessel_y1") or "bessel_k" in name:
        return np.concatenate([10 ** rng.uniform(-6, np.log10(700), 900),
                               rng.uniform(0, 30, 300)])
    if name == "airy_ai":
        return np.concatenate([rng.uniform(-30, 10, 700), -10 ** rng.uniform(1, 6, 200),
                               rng.uniform(1, 100, 200)])
    if name in ("ndtr", "log_ndtr"):
        lo = -10 ** rng.uniform(1, 5, 100) if name == "log_ndtr" else rng.uniform(-37, -20, 100)
        return np.concatenate([rng.uniform(-40, 10, 800), rng.uniform(-5, 5, 200), lo])
    if name == "erfcx":
        return np.concatenate([rng.uniform(-26, 30, 800), 10 ** rng.uniform(-5, 8, 300)])
    if name in ("i0", "i1", "modified_bessel_i0", "modified_bessel_i1"):
        return np.concatenate([rng.uniform(-700, 700, 400), rng.uniform(-20, 20, 600),
                               10 ** rng.uniform(-6, 0, 100)])
    return np.concatenate([rng.uniform(-50, 50, 600),
                           10 ** rng.uniform(-5, 5, 400) * rng.choice([-1, 1], 400)])


def envelope(name, x):
    if name == "airy_ai":
        return (-x) ** -0.25 / np.sqrt(np.pi) if x < -1 else 1.0
    return 1 / np.sqrt(abs(x)) if abs(x) > 1 else 1.0


def ulps(name, dtype, x):
    f = ember.i0 if name == "i0" else getattr(SP, name)
    got = f(ember.from_numpy(x.astype(dtype))).numpy().astype(np.float64)
    xs = x.astype(dtype).astype(np.float64)
    exact = np.array([float(REF[name](mp.mpf(float(v)))) for v in xs])
    fi = np.finfo(dtype)
    ok = np.isfinite(exact) & (np.abs(exact) > fi.tiny) & (np.abs(exact) < fi.max)
    sp = np.spacing(np.minimum(np.abs(exact), fi.max).astype(dtype)).astype(np.float64)
    u = np.where(ok, np.abs(got - exact) / sp, 0.0)
    env_err = np.zeros_like(u)
    if name in OSC:
        env = np.array([envelope(name, v) for v in xs])
        env = np.maximum(env, np.abs(exact))  # y0, y1 grow without bound at 0
        env_err = np.where(np.isfinite(exact), np.abs(got - exact) / env / fi.eps, 0.0)
    return u, env_err, xs


def main():
    names = sys.argv[1:] or list(REF)
    rng = np.random.default_rng(0)
    print(f"{'function':<27}{'dtype':<9}{'max ulp':>10}  {'at x':<24}{'p99':>8}"
          f"{'max |err| / envelope':>22}")
    for name in names:
        x = grid(name, rng)
        for dtype in (np.float64, np.float32):
            u, env_err, xs = ulps(name, dtype, x)
            k = int(np.argmax(u))
            extra = f"{env_err.max():>20.3g} eps" if name in OSC else ""
            print(f"{name:<27}{np.dtype(dtype).name:<9}{u[k]:>10.3g}  {xs[k]!r:<24}"
                  f"{np.percentile(u, 99):>8.3g}{extra}", flush=True)


if __name__ == "__main__":
    main()
