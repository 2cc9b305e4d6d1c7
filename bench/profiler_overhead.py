#!/usr/bin/env python3
"""What the profiler adds to each op: small ops in a loop with no profiler and under
ember.profiler / torch.profiler (PyTorch 1.13), side by side.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/profiler_overhead.py [--iters N]

Times are microseconds per op (a loop iteration's time over the ops it calls), the best of
--reps sessions (the least disturbed by other load on the machine); only the loop is timed, not
starting or stopping the session. "x off" is the time over the same library's time with no
profiler; "ember/torch" compares the libraries.
"""

import argparse
import random
import time

import ember
import ember.profiler
import torch
import torch.profiler


def workloads(lib):
    """{name: (callable, ops per call)} on small float32 tensors of `lib`."""
    a, b = lib.tensor([1.0]), lib.tensor([2.0])
    x, w, c = lib.ones(16), lib.ones(16), lib.ones(16)
    return {
        "a + b (1 elem)": (lambda: a + b, 1),
        "(x*w+b).sum() (16 elem)": (lambda: (x * w + c).sum(), 3),
    }


MODES = {
    "off": None,
    "profile()": dict(),
    "record_shapes": dict(record_shapes=True),
    "profile_memory": dict(profile_memory=True),
    "with_stack": dict(with_stack=True),
}


def loop_seconds(fn, iters, prof_mod, kwargs):
    """Seconds for `iters` calls of fn, inside a session when kwargs is not None."""
    if kwargs is None:
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        return time.perf_counter() - t0
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU], **kwargs):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        dt = time.perf_counter() - t0
    return dt


def measure(libs, iters, reps):
    """{(workload, mode, lib): us per op}. Each rep runs every case once, in a new random
    order, so neither a change in the machine's load nor the memory a previous session left
    (warm or returned to the system) favours one case."""
    cases = [(name, mode, lib) for name in workloads(ember) for mode in MODES for lib in libs]
    fns = {lib: workloads(mod) for lib, (mod, _) in libs.items()}
    times = {c: [] for c in cases}
    rng = random.Random(0)
    for rep in range(reps + 1):
        rng.shuffle(cases)
        for name, mode, lib in cases:
            fn, ops = fns[lib][name]
            n = iters // 10 if rep == 0 else iters  # rep 0 warms up
            dt = loop_seconds(fn, n, libs[lib][1], MODES[mode])
            if rep:
                times[(name, mode, lib)].append(dt / (n * ops) * 1e6)
    return {c: min(v) for c, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    ember.set_num_threads(1)
    torch.set_num_threads(1)
    libs = {"ember": (ember, ember.profiler), "torch": (torch, torch.profiler)}

    print(f"profiler overhead: us per op, best of {args.reps} x {args.iters} iterations "
          f"(ember {ember.__version__}, torch {torch.__version__})")
    head = (f"{'workload':<26}{'mode':<16}{'ember us':>10}{'x off':>8}{'torch us':>10}"
            f"{'x off':>8}{'ember/torch':>13}")
    print(head)
    print("-" * len(head))
    t = measure(libs, args.iters, args.reps)
    for name in workloads(ember):
        off = {lib: t[(name, "off", lib)] for lib in libs}
        for mode in MODES:
            e, o = t[(name, mode, "ember")], t[(name, mode, "torch")]
            print(f"{name:<26}{mode:<16}{e:>10.3f}{e / off['ember']:>8.2f}"
                  f"{o:>10.3f}{o / off['torch']:>8.2f}{e / o:>13.2f}")


if __name__ == "__main__":
    main()
