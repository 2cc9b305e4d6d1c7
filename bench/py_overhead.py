#!/usr/bin/env python3
"""Per-call overhead from Python: ember vs PyTorch on tiny tensors, and the import time.

Each workload runs on 1-element (or 10-element) float32 tensors, so the time is the cost of the
call itself: argument parsing, dispatch, allocation of the result and its Python object.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/py_overhead.py [--reps 5]
        [--imports 1] [--only "a + b" --only add_]

Ratios are ember time / PyTorch time (< 1: ember is faster; the target is <= 0.7).
Import times are measured in fresh interpreters (median of --imports runs).
"""

import argparse
import operator
import os
import statistics
import subprocess
import sys
import timeit


def workloads(lib):
    """{name: callable} on small tensors of `lib` (ember or torch)."""
    a = lib.tensor([1.0])
    b = lib.tensor([2.0])
    c = lib.tensor([0.0])
    d = lib.tensor([0.0])
    x = lib.zeros(10)
    return {
        "a + b (1 elem)": lambda: a + b,
        "a.add_(b)": lambda: a.add_(b),
        "torch.add(a, b, out=c)": lambda: lib.add(a, b, out=c),
        "a += b": lambda: operator.iadd(d, b),
        "a + 1": lambda: a + 1,
        "a < b": lambda: a < b,
        "a * 2.0": lambda: a * 2.0,
        "a[0]": lambda: x[0],
        "a[1:5]": lambda: x[1:5],
        "tensor([1.0, 2.0])": lambda: lib.tensor([1.0, 2.0]),
        "x.numpy()": lambda: x.numpy(),
        "x.shape": lambda: x.shape,
        "zeros(10)": lambda: lib.zeros(10),
        "x.view(2, 5)": lambda: x.view(2, 5),
    }


def time_call(fn, reps, min_time):
    """Median seconds per call: batches grown to min_time, `reps` repetitions."""
    t = timeit.Timer(fn)
    number = 1
    while True:
        dt = t.timeit(number)
        if dt >= min_time or number >= 1 << 22:
            break
        number *= max(2, min(10, int(min_time / max(dt, 1e-9) * 1.4)))
    return statistics.median(x / number for x in t.repeat(reps, number))


def import_time(module, runs):
    """Median seconds of `import module` in a fresh interpreter (run `runs` times)."""
    code = ("import time; t = time.perf_counter(); import " + module +
            "; print(time.perf_counter() - t)")
    out = []
    for _ in range(runs):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=os.environ)
        if p.returncode != 0:
            return None
        out.append(float(p.stdout.strip()))
    return statistics.median(out)


# The issue 22 limit for the one-element add rows (a + b, add_, out=): 0.4 us from Python.
ADD_LIMIT_S = 0.4e-6
ADD_ROWS = ("a + b (1 elem)", "a.add_(b)", "torch.add(a, b, out=c)", "a += b")


def run(reps=5, min_time=0.1, imports=5, log=None, only=None):
    """Returns rows {workload, ember_s, torch_s} and prints nothing. `only`: substrings of the
    workload names to run (all when None)."""
    import ember
    try:
        import torch
    except Exception:  # noqa: BLE001 -- no PyTorch: ember column only
        torch = None
    for lib in (ember, torch):
        if lib is not None:
            lib.set_num_threads(1)
    we = workloads(ember)
    wt = workloads(torch) if torch is not None else {}
    rows = []
    for name, fn in we.items():
        if only and not any(o in name for o in only):
            continue
        te = time_call(fn, reps, min_time)
        ft = wt.get(name)
        tt = time_call(ft, reps, min_time) if ft is not None else None
        rows.append({"workload": name, "ember_s": te, "torch_s": tt})
        if log:
            log(f"  {name}: ember {te}, torch {tt}")
    if imports > 0:
        rows.append({"workload": "import", "ember_s": import_time("ember", imports),
                     "torch_s": import_time("torch", imports) if torch is not None else None})
    return rows


def print_table(rows):
    print("Python per-call overhead, 1 thread: median time per call (ratio = ember / PyTorch, "
          "< 1 means ember is faster; target <= 0.70)")
    print(f"one-element add limit (issue 22): {ADD_LIMIT_S * 1e6:.2f} us from Python "
          f"(rows marked *)")
    print(f"{'workload':28s} {'ember':>11s} {'PyTorch':>11s} {'ratio':>7s}")
    print("-" * 60)
    for r in rows:
        te, tt = r["ember_s"], r["torch_s"]
        unit, scale = ("ms", 1e3) if r["workload"] == "import" else ("us", 1e6)
        fe = f"{te * scale:.3f} {unit}" if te is not None else "-"
        ft = f"{tt * scale:.3f} {unit}" if tt is not None else "-"
        ratio = f"{te / tt:.2f}" if te and tt else "-"
        mark = ""
        if r["workload"] in ADD_ROWS and te is not None:
            mark = " *" + (" over limit" if te > ADD_LIMIT_S else "")
        print(f"{r['workload']:28s} {fe:>11s} {ft:>11s} {ratio:>7s}{mark}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.1)
    ap.add_argument("--imports", type=int, default=5,
                    help="fresh interpreters per import time (0: skip the import row)")
    ap.add_argument("--only", action="append",
                    help="run only workloads whose name contains this (repeatable)")
    args = ap.parse_args()
    print_table(run(args.reps, args.min_time, args.imports, only=args.only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
