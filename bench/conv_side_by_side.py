"""conv2d / max_pool2d side by side: ember against torch in one process, same inputs.

Cases (the main job's network and a larger layer):
  (a) N=64, 1->32, 28x28, k3    (b) N=64, 32->64, 14x14, k3    (c) N=8, 64->64, 56x56, k3, pad 1
For each case and thread count (1, 2): conv2d forward, forward+backward (input, weight and bias
gradients), and max_pool2d(2) forward / forward+backward on (c)'s output. Prints the median time
over repeats, GFLOP/s (convolutions: 2*N*K*C*kh*kw*OH*OW per pass; fwd+bwd counts 3 passes, or
2 when the input needs no gradient) and the ratio ember/torch (< 1: ember is faster).

Run: PYTHONPATH=build/release/python OMP_NUM_THREADS=2 python3 bench/conv_side_by_side.py
"""

import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as TF

import ember

try:
    import ember.nn.functional as EF
    EF.conv2d  # noqa: B018
except AttributeError:
    from ember.nn import _functional_conv as EF

STAT = "median"

CASES = {
    "a": dict(n=64, c=1, k=32, hw=28, pad=0, input_grad=False),
    "b": dict(n=64, c=32, k=64, hw=14, pad=0, input_grad=True),
    "c": dict(n=8, c=64, k=64, hw=56, pad=1, input_grad=True),
}


def median_ms(fn, repeats, warmup=3):
    """Median wall time and median process CPU time (ms). On a shared, loaded machine the CPU
    time is the steadier measure of the work done; both are printed."""
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    pick = min if STAT == "min" else statistics.median
    return 1e3 * pick(wall), 1e3 * pick(cpu)


def make(lib, arr, grad):
    t = lib.from_numpy(arr.copy())
    return t.requires_grad_() if grad else t


def conv_case(name, p, threads, repeats):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((p["n"], p["c"], p["hw"], p["hw"])).astype(np.float32)
    w = (rng.standard_normal((p["k"], p["c"], 3, 3)) * 0.1).astype(np.float32)
    b = rng.standard_normal(p["k"]).astype(np.float32)
    oh = p["hw"] + 2 * p["pad"] - 2
    flop = 2.0 * p["n"] * p["k"] * p["c"] * 9 * oh * oh
    rows = []
    for what in ("fwd", "fwd+bwd"):
        res = {}
        for lib, F in ((torch, TF), (ember, EF)):
            grad = what != "fwd"
            xi = make(lib, x, grad and p["input_grad"])
            wi, bi = make(lib, w, grad), make(lib, b, grad)
            if what == "fwd":
                def run():
                    with lib.no_grad():
                        F.conv2d(xi, wi, bi, padding=p["pad"])
            else:
                def run():
                    y = F.conv2d(xi, wi, bi, padding=p["pad"])
                    y.sum().backward()
            res[lib.__name__] = median_ms(run, repeats)
        passes = 1 if what == "fwd" else (3 if p["input_grad"] else 2)
        rows.append((f"conv2d ({name}) {what}", threads, res, flop * passes))
    return rows


def pool_case(threads, repeats):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 64, 56, 56)).astype(np.float32)
    rows = []
    for what in ("fwd", "fwd+bwd"):
        res = {}
        for lib, F in ((torch, TF), (ember, EF)):
            xi = make(lib, x, what != "fwd")
            if what == "fwd":
                def run():
                    with lib.no_grad():
                        F.max_pool2d(xi, 2)
            else:
                def run():
                    F.max_pool2d(xi, 2).sum().backward()
            res[lib.__name__] = median_ms(run, repeats)
        rows.append((f"max_pool2d (c) {what}", threads, res, None))
    return rows


def batch_norm_case(threads, repeats):
    """F.batch_norm in training mode (running stats updated) on shape (c): N=8 C=64 56x56."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 64, 56, 56)).astype(np.float32)
    rows = []
    for what in ("fwd", "fwd+bwd"):
        res = {}
        for lib, F in ((torch, TF), (ember, EF)):
            xi = make(lib, x, what != "fwd")
            w, b = make(lib, np.ones(64, np.float32), True), make(lib, np.zeros(64, np.float32),
                                                                   True)
            rm, rv = lib.zeros(64), lib.ones(64)
            if what == "fwd":
                def run():
                    with lib.no_grad():
                        F.batch_norm(xi, rm, rv, w, b, training=True)
            else:
                def run():
                    F.batch_norm(xi, rm, rv, w, b, training=True).sum().backward()
            res[lib.__name__] = median_ms(run, repeats)
        rows.append((f"batch_norm (c) {what}", threads, res, None))
    return rows


def net_case(threads, repeats):
    """The main job's first two blocks: conv(1->32,k3)-relu-maxpool2-conv(32->64,k3)-relu-
    maxpool2 on a batch of 64 28x28 images, forward + backward."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    w1 = (rng.standard_normal((32, 1, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((64, 32, 3, 3)) * 0.06).astype(np.float32)
    b1, b2 = np.zeros(32, np.float32), np.zeros(64, np.float32)
    res = {}
    for lib, F in ((torch, TF), (ember, EF)):
        xi = make(lib, x, False)
        p = [make(lib, a, True) for a in (w1, b1, w2, b2)]

        def run():
            h = F.max_pool2d(F.conv2d(xi, p[0], p[1]).relu(), 2)
            h = F.max_pool2d(F.conv2d(h, p[2], p[3]).relu(), 2)
            h.sum().backward()
        res[lib.__name__] = median_ms(run, repeats)
    flop = 2.0 * 64 * (32 * 1 * 9 * 26 * 26 * 2 + 64 * 32 * 9 * 11 * 11 * 3)
    return [("net 2 blocks fwd+bwd", threads, res, flop)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cases", default="abc")
    ap.add_argument("--stat", default="median", choices=["median", "min"],
                    help="min is steadier on a loaded machine")
    args = ap.parse_args()
    global STAT
    STAT = args.stat
    print(f"torch {torch.__version__}, ember {ember.__version__}; {STAT} of {args.repeats}")
    print(f"{'workload':24s} {'thr':>3s} {'torch ms':>9s} {'ember ms':>9s} {'torch GF/s':>10s} "
          f"{'ember GF/s':>10s} {'ember/torch':>11s} {'cpu-time ratio':>14s}")
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        ember.set_num_threads(threads)
        rows = []
        for c in args.cases:
            rows += conv_case(c, CASES[c], threads, args.repeats)
        rows += pool_case(threads, args.repeats)
        rows += batch_norm_case(threads, args.repeats)
        rows += net_case(threads, args.repeats)
        for label, thr, res, flop in rows:
            (t, tc), (e, ec) = res["torch"], res["ember"]
            gt = f"{flop / t / 1e6:10.1f}" if flop else f"{'-':>10s}"
            ge = f"{flop / e / 1e6:10.1f}" if flop else f"{'-':>10s}"
            print(f"{label:24s} {thr:3d} {t:9.2f} {e:9.2f} {gt} {ge} {e / t:11.2f} "
                  f"{ec / tc:14.2f}", flush=True)


if __name__ == "__main__":
    main()
