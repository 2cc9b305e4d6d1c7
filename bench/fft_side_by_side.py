#!/usr/bin/env python3
"""Side-by-side FFT benchmark: ember.fft vs torch.fft (1.13, pocketfft) vs numpy.fft.

Rows: fft 2^20 complex64, rfft 2^20 float32, irfft 2^20, fft2 1024x1024 complex64, a batch of
4096 ffts of length 1024 complex64, fft of the prime length 1048583 complex64, fft 2^20
complex128. ember and torch get the same thread count (set_num_threads(n) for n in --threads;
numpy's pocketfft is single-threaded and computes in float64). Rounds alternate the libraries;
the table quotes the best median milliseconds per call over the rounds and ember / torch
(< 1 means ember is faster). Set EMBER_CPU_CAPABILITY=avx2 to time the AVX2 kernels on an
AVX-512 machine.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/fft_side_by_side.py
        [--threads 1,2] [--rounds 3] [--rows fft_1m,rfft_1m,...]
"""

import argparse
import time

import numpy as np
import torch

import ember


def median_ms(fn, budget):
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (len(times) < 50 and time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def rows():
    rng = np.random.default_rng(0)

    def cplx(*shape, dtype=np.complex64):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    def real(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def both(a):
        return torch.from_numpy(a), ember.from_numpy(a.copy())

    out = []
    a = cplx(1 << 20)
    t, e = both(a)
    out.append(("fft_1m", "fft 2^20 c64", lambda: ember.fft.fft(e), lambda: torch.fft.fft(t),
                lambda: np.fft.fft(a)))
    a = real(1 << 20)
    tr, er = both(a)
    out.append(("rfft_1m", "rfft 2^20 f32", lambda: ember.fft.rfft(er),
                lambda: torch.fft.rfft(tr), lambda: np.fft.rfft(a)))
    h = cplx((1 << 19) + 1)
    th, eh = both(h)
    out.append(("irfft_1m", "irfft 2^20 f32", lambda: ember.fft.irfft(eh),
                lambda: torch.fft.irfft(th), lambda: np.fft.irfft(h)))
    a2 = cplx(1024, 1024)
    t2, e2 = both(a2)
    out.append(("fft2_1k", "fft2 1024^2 c64", lambda: ember.fft.fft2(e2),
                lambda: torch.fft.fft2(t2), lambda: np.fft.fft2(a2)))
    ab = cplx(4096, 1024)
    tb, eb = both(ab)
    out.append(("batch", "4096 x fft 1024 c64", lambda: ember.fft.fft(eb),
                lambda: torch.fft.fft(tb), lambda: np.fft.fft(ab)))
    ap = cplx(1048583)
    tp, ep = both(ap)
    out.append(("prime", "fft 1048583 c64", lambda: ember.fft.fft(ep),
                lambda: torch.fft.fft(tp), lambda: np.fft.fft(ap)))
    ad = cplx(1 << 20, dtype=np.complex128)
    td, ed = both(ad)
    out.append(("fft_1m_c128", "fft 2^20 c128", lambda: ember.fft.fft(ed),
                lambda: torch.fft.fft(td), lambda: np.fft.fft(ad)))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--budget", type=float, default=0.5, help="seconds per timing")
    p.add_argument("--rows", default="", help="comma-separated row keys (default: all)")
    p.add_argument("--no-numpy", action="store_true")
    args = p.parse_args()
    want = set(filter(None, args.rows.split(",")))
    print(f"ember capability {ember._C._cpu_capability}, torch {torch.__version__}, "
          f"numpy {np.__version__}")
    print(f"{'thr':>3} {'row':22s} {'ember ms':>9} {'torch ms':>9} {'numpy ms':>9} "
          f"{'ember/torch':>11}")
    table = rows()
    for n in [int(s) for s in args.threads.split(",")]:
        ember.set_num_threads(n)
        torch.set_num_threads(n)
        for key, name, fe, ft, fn in table:
            if want and key not in want:
                continue
            te, tt = [], []
            for _ in range(args.rounds):
                te.append(median_ms(fe, args.budget))
                tt.append(median_ms(ft, args.budget))
            tn = float("nan") if args.no_numpy else median_ms(fn, args.budget)
            e, t = min(te), min(tt)
            print(f"{n:>3} {name:22s} {e:9.2f} {t:9.2f} {tn:9.2f} {e / t:11.2f}", flush=True)


if __name__ == "__main__":
    main()
