#!/usr/bin/env python3
"""Side-by-side benchmark of torch.special functions: ember vs PyTorch, in one run.

Times lgamma, digamma, i0e, erfcx and ndtri (and ndtr, log_ndtr) on 1M float32 elements with
1 and 2 intra-op threads, both libraries in the same process, alternating over --rounds rounds
(the machine is shared and noisy), and prints medians and the ratio torch / ember (> 1 means
ember is faster).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/special_side_by_side.py [--rounds 7]
"""

import argparse
import os
import statistics
import time

import numpy as np


def workloads(lib):
    """{name: (function, input)} on the same data for both libraries."""
    rng = np.random.default_rng(0)
    n = 1 << 20
    pos = rng.uniform(0.1, 20, n).astype(np.float32)
    real = rng.uniform(-10, 10, n).astype(np.float32)
    prob = rng.uniform(0, 1, n).astype(np.float32)
    sp = lib.special
    t = lib.from_numpy
    return {
        "lgamma": (lib.lgamma, t(pos)),
        "digamma": (lib.digamma, t(pos)),
        "i0e": (sp.i0e, t(real)),
        "erfcx": (sp.erfcx, t(real)),
        "ndtri": (sp.ndtri, t(prob)),
        "ndtr": (sp.ndtr, t(real)),
        "log_ndtr": (sp.log_ndtr, t(real)),
    }


def best_of(fn, x, repeat=5):
    fn(x)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(x)
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()

    import torch
    import ember

    libs = {"torch": torch, "ember": ember}
    loads = {k: workloads(v) for k, v in libs.items()}
    print(f"1M float32, medians of {args.rounds} rounds (best of 5 calls each), "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'op':<10}{'thr':>4}{'torch ms':>11}{'ember ms':>11}{'torch/ember':>13}")
    for nt in [int(v) for v in args.threads.split(",")]:
        torch.set_num_threads(nt)
        ember.set_num_threads(nt)
        for name in loads["torch"]:
            times = {k: [] for k in libs}
            for _ in range(args.rounds):
                for k in libs:
                    fn, x = loads[k][name]
                    times[k].append(best_of(fn, x))
            t_t = statistics.median(times["torch"]) * 1e3
            t_e = statistics.median(times["ember"]) * 1e3
            print(f"{name:<10}{nt:>4}{t_t:>11.2f}{t_e:>11.2f}{t_t / t_e:>13.2f}")


if __name__ == "__main__":
    main()
