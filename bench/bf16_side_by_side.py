#!/usr/bin/env python3
"""Side-by-side bfloat16 / float16 CPU benchmark: ember vs PyTorch in the same process.

Workloads: dtype conversion float32 <-> bfloat16 / float16 of 16M elements; square matmul
512 and 1024 in float32, bfloat16 and float32 under set_float32_matmul_precision("medium");
conv2d forward on a Fashion-MNIST-like layer (64x32x14x14, 3x3, 64 out) and a ResNet-like
layer (8x64x56x56, 3x3, 64 out); layer_norm and softmax on (32*128, 256). Each runs at the
thread counts of --threads (both libraries get the same count); the table quotes the median
time per call over --repeat rounds that alternate the libraries, and the ratio
torch_time / ember_time (> 1: ember is faster). The CPU kernel set ember selected is printed
first (EMBER_CPU_CAPABILITY overrides it).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/bf16_side_by_side.py
        [--threads 1,2] [--repeat 5] [--only convert,matmul,conv,norm]
"""

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np


def timed(fn, budget=0.25):
    """Seconds per call of fn, from as many calls as fit in `budget` (at least one)."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    reps = max(1, min(50, int(budget / max(one, 1e-6))))
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def try_timed(fn):
    """timed(fn), or None where the library does not run the workload (an error)."""
    try:
        return timed(fn)
    except RuntimeError:
        return None


def median_or_none(ts):
    return None if None in ts else statistics.median(ts)


def fmt_ms(t):
    return f"{'n/a':>12}" if t is None else f"{t * 1e3:>12.3f}"


def workloads(L, only):
    """[(group, name, setup)]; setup() returns the callable to time (None: not available)."""
    rng = np.random.default_rng(0)
    w = []
    f32, bf16, f16 = L.float32, L.bfloat16, L.float16

    def t(a):
        return L.from_numpy(np.ascontiguousarray(a, dtype=np.float32))

    if "convert" in only:
        big = rng.standard_normal(1 << 24).astype(np.float32)
        x = t(big)
        for name, dt in (("bf16", bf16), ("f16", f16)):
            y = x.to(dt)
            w.append(("convert", f"f32->{name} 16M", lambda x=x, dt=dt: lambda: x.to(dt)))
            w.append(("convert", f"{name}->f32 16M", lambda y=y: lambda: y.to(f32)))
    if "matmul" in only:
        for n in (512, 1024):
            a = t(rng.standard_normal((n, n)))
            b = t(rng.standard_normal((n, n)))
            w.append(("matmul", f"mm {n} fp32", lambda a=a, b=b: lambda: L.mm(a, b)))
            ab, bb = a.to(bf16), b.to(bf16)
            w.append(("matmul", f"mm {n} bf16", lambda a=ab, b=bb: lambda: L.mm(a, b)))
            if hasattr(L, "set_float32_matmul_precision"):
                def medium(a=a, b=b):
                    def run():
                        L.set_float32_matmul_precision("medium")
                        try:
                            return L.mm(a, b)
                        finally:
                            L.set_float32_matmul_precision("highest")
                    return run
                w.append(("matmul", f"mm {n} fp32 medium", medium))
    if "conv" in only:
        F = L.nn.functional
        layers = (("fmnist 64x32x14x14", (64, 32, 14, 14), (64, 32, 3, 3)),
                  ("resnet 8x64x56x56", (8, 64, 56, 56), (64, 64, 3, 3)))
        for name, xs, ws in layers:
            x = t(rng.standard_normal(xs))
            wt = t(rng.standard_normal(ws) * 0.1)
            bias = t(rng.standard_normal(ws[0]))
            for dn, dt in (("fp32", f32), ("bf16", bf16)):
                w.append(("conv", f"conv2d {name} {dn}",
                          lambda x=x.to(dt), wt=wt.to(dt), b=bias.to(dt):
                          lambda: F.conv2d(x, wt, b, padding=1)))
    if "norm" in only:
        F = L.nn.functional
        x = t(rng.standard_normal((32 * 128, 256)))
        g = t(rng.standard_normal(256))
        b = t(rng.standard_normal(256))
        for dn, dt in (("fp32", f32), ("bf16", bf16), ("f16", f16)):
            w.append(("norm", f"layer_norm 4096x256 {dn}",
                      lambda x=x.to(dt), g=g.to(dt), b=b.to(dt):
                      lambda: F.layer_norm(x, (256,), g, b)))
            w.append(("norm", f"softmax 4096x256 {dn}",
                      lambda x=x.to(dt): lambda: L.softmax(x, -1)))
            w.append(("norm", f"log_softmax 4096x256 {dn}",
                      lambda x=x.to(dt): lambda: L.log_softmax(x, -1)))
    return w


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", default="convert,matmul,conv,norm")
    args = p.parse_args()
    only = set(args.only.split(","))

    import ember
    import torch

    cap = getattr(ember._C, "_cpu_capability", "?")
    print(f"# {platform.processor() or platform.machine()}, ember kernel set: {cap}, "
          f"torch {torch.__version__} (cpu capability: "
          f"{torch.backends.cpu.get_cpu_capability() if hasattr(torch.backends, 'cpu') else '?'})")
    print(f"# EMBER_CPU_CAPABILITY={os.environ.get('EMBER_CPU_CAPABILITY', '(unset)')}, "
          f"repeat={args.repeat}; ratio = torch / ember (> 1: ember faster)")
    em = workloads(ember, only)
    th = {name: setup for _, name, setup in workloads(torch, only)}
    for nt in [int(s) for s in args.threads.split(",")]:
        ember.set_num_threads(nt)
        torch.set_num_threads(nt)
        print(f"\n## threads = {nt}")
        print(f"{'workload':<34}{'ember ms':>12}{'torch ms':>12}{'ratio':>9}")
        for group, name, setup in em:
            fe, ft = setup(), th[name]()
            te, tt = [], []
            for _ in range(args.repeat):
                te.append(try_timed(fe))
                tt.append(try_timed(ft))
            me, mt = median_or_none(te), median_or_none(tt)
            ratio = f"{mt / me:>9.2f}" if me and mt else f"{'n/a':>9}"
            print(f"{name:<34}{fmt_ms(me)}{fmt_ms(mt)}{ratio}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
