#!/usr/bin/env python3
"""Function transforms side by side: ember.func against functorch 1.13 (Debian's python3-torch).

Workloads (float32, the threads given by --threads, 2 by default):
  - per-sample gradients of an MLP in-64-64-10 at batch 64 (in = 64 and 784):
    vmap(grad(loss), in_dims=(None, 0, 0)) and the Python loop of grad calls;
  - the Hessian of a 32-dimensional tanh function, jacfwd(jacrev(f));
  - the forward of an ensemble of 8 MLPs, vmap over stacked parameters and a loop.
Peak memory is each workload's high-water resident set in a fresh process (three calls), above
the resident set just before them (both libraries' allocators cache, so this is what the OS saw).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/per_sample_grads.py [--reps 7]

Ratios are ember / functorch (< 1: ember is faster).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def setup(lib, F, width, batch=64, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)

    def t(*shape):
        return lib.from_numpy(rng.standard_normal(shape).astype("float32") * 0.1)

    params = (t(64, width), t(64), t(64, 64), t(64), t(10, 64), t(10))
    x = t(batch, width)
    y = lib.from_numpy(rng.integers(0, 10, batch))
    nnf = lib.nn.functional

    def loss(p, xs, ys):
        h = nnf.relu(nnf.linear(xs, p[0], p[1]))
        h = nnf.relu(nnf.linear(h, p[2], p[3]))
        out = nnf.linear(h, p[4], p[5])
        return nnf.cross_entropy(out.unsqueeze(0), ys.unsqueeze(0))

    def vmap_grad():
        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    def loop():
        return [F.grad(loss)(params, x[i], y[i]) for i in range(batch)]

    return {"vmap_grad": vmap_grad, "loop": loop}


def hessian_setup(lib, F):
    import numpy as np
    rng = np.random.default_rng(1)
    a = lib.from_numpy(rng.standard_normal((32, 32)).astype("float32") * 0.2)
    x = lib.from_numpy(rng.standard_normal(32).astype("float32"))

    def f(v):
        return lib.tanh(a @ v).sum()

    return {"hessian": lambda: F.jacfwd(F.jacrev(f))(x)}


def ensemble_setup(lib, F, stack, fcall):
    models = [lib.nn.Sequential(lib.nn.Linear(64, 64), lib.nn.ReLU(), lib.nn.Linear(64, 10))
              for _ in range(8)]
    x = lib.randn(64, 64)
    params, buffers = stack(models)
    base = models[0]

    def one(p, b, xx):
        return fcall(base, {**p, **b}, (xx,))

    def vm():
        with lib.no_grad():
            return F.vmap(one, in_dims=(0, 0, None))(params, buffers, x)

    def loop():
        with lib.no_grad():
            return [m(x) for m in models]

    return {"ensemble_vmap": vm, "ensemble_loop": loop}


def workloads(name):
    if name == "ember":
        import ember as lib
        import ember.func as F
        stack = F.stack_module_state
        fcall = F.functional_call
    else:
        from torch.nn.utils.stateless import functional_call as fcall
        import torch as lib
        import functorch as F
        from functorch import combine_state_for_ensemble

        def stack(models):
            _, p, b = combine_state_for_ensemble(models)
            names = [n for n, _ in models[0].named_parameters()]
            bnames = [n for n, _ in models[0].named_buffers()]
            return dict(zip(names, p)), dict(zip(bnames, b))
    lib.manual_seed(0)
    w = {}
    for width in (64, 784):
        for k, f in setup(lib, F, width).items():
            w[f"{k}/{width}"] = f
    w.update(hessian_setup(lib, F))
    w.update(ensemble_setup(lib, F, stack, fcall))
    return w


def time_fn(fn, reps, min_time=0.2):
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time or number >= 1 << 16:
            break
        number *= 2
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
    return statistics.median(out)


def child(lib, workload, threads):
    """Runs one workload in this (fresh) process: prints its peak RSS growth in MiB."""
    if lib == "torch":
        import torch
        torch.set_num_threads(threads)
    else:
        import ember
        ember.set_num_threads(threads)
    fn = workloads(lib)[workload]
    # The high-water mark is reset after the setup (Linux: "5" > clear_refs), so the peak is the
    # workload's own.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_mib("VmRSS")
    for _ in range(3):
        fn()
    print(json.dumps({"peak_mib": max(0.0, _status_mib("VmHWM") - before)}))


def _status_mib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--child", nargs=2, metavar=("LIB", "WORKLOAD"), help=argparse.SUPPRESS)
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.threads)
        return
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    import ember
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    ew, tw = workloads("ember"), workloads("torch")
    names = [n for n in ew if not args.only or n in args.only.split(",")]
    print(f"{'workload':<22}{'ember':>12}{'functorch':>12}{'ratio':>8}"
          + ("" if args.no_memory else f"{'ember MiB':>11}{'torch MiB':>11}"))
    for n in names:
        te, tt = time_fn(ew[n], args.reps), time_fn(tw[n], args.reps)
        line = f"{n:<22}{te * 1e3:>10.3f}ms{tt * 1e3:>10.3f}ms{te / tt:>8.2f}"
        if not args.no_memory:
            mem = []
            for lib in ("ember", "torch"):
                p = subprocess.run([sys.executable, __file__, "--child", lib, n, "--threads",
                                    str(args.threads)], capture_output=True, text=True,
                                   env=os.environ)
                try:
                    mem.append(json.loads(p.stdout.strip().splitlines()[-1])["peak_mib"])
                except (IndexError, ValueError):
                    mem.append(float("nan"))
            line += f"{mem[0]:>11.1f}{mem[1]:>11.1f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
