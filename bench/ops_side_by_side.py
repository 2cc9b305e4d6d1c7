#!/usr/bin/env python3
"""Side-by-side op benchmark from Python: ember vs PyTorch in the same process.

Workloads: float32 GEMM (square n = 64 ... 2048, 4096 with --full; skinny 64x4096x4096,
4096x64x4096, 4096x4096x64; nn.Linear's x @ W^T as gemm/linear/MxNxK), bmm 64x128x128, sum over
all / dim 0 / dim 1, max along dim 1 with indices, softmax and log_softmax along the last dim
(4096x4096 float32, fresh output and out=), sort and topk (k=10) along the last dim,
index_select (int64 and int32 indices), gather and x[idx] on 1M elements, integer GEMM (int8, int32,
int64 at n = 256 and 512) and bmm (64x128x128 int8 and int32), max_pool2d(2) of the
Fashion-MNIST CNN's activations (64x32x26x26 and 64x64x11x11 float32; forward without grad, and
forward + backward by autograd.grad), and the CNN's two 3x3 convolutions (64x1x28x28 to 32
channels, 64x32x13x13 to 64; forward without grad, and forward + backward). Both libraries get
the same thread count (`set_num_threads(n)` for n in --threads); each workload is timed with
timeit over --repeat rounds that alternate the two libraries (to cancel drift and noise), and
the table quotes medians per call, the derived throughput (GFLOP/s for float products, GOP/s =
2 m n k operations per second for integer ones, GB/s = bytes read + written for the rest) and
the ratio torch_time / ember_time (> 1 means ember is faster). An op ember does not have yet
shows "n/a". GFLOP/s rows also print each library's share of the machine's
float32 FMA peak at that thread count, measured by bench/fma_peak (built with the package; the
best ISA's best repetition), as "ember% / torch% of peak". The max_pool2d rows print each
library's share of the STREAM triad's median at that thread count (bench/stream_triad), their
limit: bytes = input read + output written + one byte of taps per output (the compact indices
autograd keeps), and for the backward the gradient and taps read + the input gradient written.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/ops_side_by_side.py [--full]
        [--threads 1,2] [--repeat 5] [--only gemm,bmm] [--json out.json] [--fma-peak PATH]
        [--cpu-clock]
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
import timeit

import numpy as np

N = 4096


def gemm_sizes(full):
    return (64, 128, 256, 512, 1024, 2048) + ((4096,) if full else ())


def workloads(full):
    """[(name, unit, amount per call, setup)]; setup(lib, data) returns the callable to time.
    unit is "GFLOP/s" (amount = flops) or "GB/s" (amount = bytes read + written)."""
    w = []
    for n in gemm_sizes(full):
        w.append((f"gemm/{n}", "GFLOP/s", 2.0 * n ** 3,
                  lambda L, d, n=n: (lambda a, b: lambda: L.mm(a, b))(
                      d(L, ("mat", n, 0)), d(L, ("mat", n, 1)))))
    # Skinny products (m x n x k) and nn.Linear's x @ W^T (W stored out x in, read transposed).
    for m, n, k in ((64, 4096, 4096), (4096, 64, 4096), (4096, 4096, 64)):
        w.append((f"gemm/{m}x{n}x{k}", "GFLOP/s", 2.0 * m * n * k,
                  lambda L, d, m=m, n=n, k=k: (lambda a, b: lambda: L.mm(a, b))(
                      d(L, ("rect", m, k, 0)), d(L, ("rect", k, n, 1)))))
    for m, n, k in ((256, 1024, 1024), (512, 4096, 1024)):
        w.append((f"gemm/linear/{m}x{n}x{k}", "GFLOP/s", 2.0 * m * n * k,
                  lambda L, d, m=m, n=n, k=k: (lambda x, wt: lambda: L.mm(x, wt.t()))(
                      d(L, ("rect", m, k, 2)), d(L, ("rect", n, k, 3)))))
    w.append(("bmm/64x128x128", "GFLOP/s", 2.0 * 64 * 128 ** 3,
              lambda L, d: (lambda a, b: lambda: L.bmm(a, b))(
                  d(L, ("batch", 0)), d(L, ("batch", 1)))))
    for dt in ("int8", "int32", "int64"):
        for n in (256, 512):
            w.append((f"igemm/{dt}/{n}", "GOP/s", 2.0 * n ** 3,
                      lambda L, d, n=n, dt=dt: (lambda a, b: lambda: L.mm(a, b))(
                          d(L, ("imat", dt, n, 0)), d(L, ("imat", dt, n, 1)))))
    for dt in ("int8", "int32"):
        w.append((f"ibmm/{dt}/64x128x128", "GOP/s", 2.0 * 64 * 128 ** 3,
                  lambda L, d, dt=dt: (lambda a, b: lambda: L.bmm(a, b))(
                      d(L, ("ibatch", dt, 0)), d(L, ("ibatch", dt, 1)))))
    big = 4.0 * N * N
    w.append(("sum/all", "GB/s", big, lambda L, d: (lambda x: lambda: L.sum(x))(d(L, "big"))))
    w.append(("sum/dim0", "GB/s", big + 4 * N,
              lambda L, d: (lambda x: lambda: L.sum(x, 0))(d(L, "big"))))
    w.append(("sum/dim1", "GB/s", big + 4 * N,
              lambda L, d: (lambda x: lambda: L.sum(x, 1))(d(L, "big"))))
    w.append(("max/dim1+indices", "GB/s", big + 12 * N,
              lambda L, d: (lambda x: lambda: L.max(x, 1))(d(L, "big"))))
    w.append(("softmax/last", "GB/s", 2 * big,
              lambda L, d: (lambda x: lambda: L.softmax(x, -1))(d(L, "big"))))
    w.append(("log_softmax/last", "GB/s", 2 * big,
              lambda L, d: (lambda x: lambda: L.log_softmax(x, -1))(d(L, "big"))))
    for fn in ("softmax", "log_softmax"):
        w.append((f"{fn}/last,out=", "GB/s", 2 * big,
                  lambda L, d, fn=fn: (lambda f, x, y: lambda: f(x, -1, out=y))(
                      getattr(L, fn), d(L, "big"), L.empty_like(d(L, "big")))))
    rows = N if full else 1024
    sort_bytes = 4.0 * rows * N * (1 + 1 + 2)  # read values; write values + int64 indices
    w.append((f"sort/{rows}x{N}", "GB/s", sort_bytes,
              lambda L, d: (lambda x: lambda: L.sort(x, -1))(d(L, ("rows", rows)))))
    w.append(("topk10/last", "GB/s", big + 12.0 * N * 10,
              lambda L, d: (lambda x: lambda: L.topk(x, 10, -1))(d(L, "big"))))
    m = 1 << 20
    w.append(("index_select/1M", "GB/s", 4.0 * m + 8.0 * m + 4.0 * m,
              lambda L, d: (lambda x, i: lambda: L.index_select(x, 0, i))(
                  d(L, "vec"), d(L, "idx"))))
    w.append(("index_select/1M,int32", "GB/s", 4.0 * m + 4.0 * m + 4.0 * m,
              lambda L, d: (lambda x, i: lambda: L.index_select(x, 0, i))(
                  d(L, "vec"), d(L, "idx32"))))
    w.append(("gather/1M", "GB/s", 4.0 * m + 8.0 * m + 4.0 * m,
              lambda L, d: (lambda x, i: lambda: L.gather(x, 0, i))(d(L, "vec"), d(L, "idx"))))
    w.append(("x[idx]/1M", "GB/s", 4.0 * m + 8.0 * m + 4.0 * m,
              lambda L, d: (lambda x, i: lambda: x[i])(d(L, "vec"), d(L, "idx"))))
    for shape in ((64, 32, 26, 26), (64, 64, 11, 11)):
        n = float(np.prod(shape))
        o = n / shape[2] / shape[3] * (shape[2] // 2) * (shape[3] // 2)
        tag = "x".join(map(str, shape))
        w.append((f"max_pool2d/{tag}", "GB/s", 4 * n + 5 * o,
                  lambda L, d, shape=shape: pool_fwd(L, d(L, ("act", shape)))))
        w.append((f"max_pool2d+bwd/{tag}", "GB/s", (4 * n + 5 * o) + (5 * o + 4 * n),
                  lambda L, d, shape=shape: pool_fwd_bwd(L, d(L, ("act", shape)))))
    # The Fashion-MNIST CNN's two convolutions (3x3, no padding): forward without grad, and
    # forward + the gradients of the input (not for the first layer, as in training), weight
    # and bias.
    for shape, k in (((64, 1, 28, 28), 32), ((64, 32, 13, 13), 64)):
        n, c, h, _ = shape
        fwd = 2.0 * n * k * (h - 2) ** 2 * c * 9
        tag = "x".join(map(str, shape)) + f",k{k}"
        passes = 2 if c == 1 else 3
        w.append((f"conv2d/{tag}", "GFLOP/s", fwd,
                  lambda L, d, shape=shape, k=k: conv_fwd(L, d(L, ("act", shape)),
                                                          d(L, ("convw", k, shape[1])))))
        w.append((f"conv2d+bwd/{tag}", "GFLOP/s", passes * fwd,
                  lambda L, d, shape=shape, k=k: conv_fwd_bwd(L, d(L, ("act", shape)),
                                                              d(L, ("convw", k, shape[1])))))
    return w


def conv_fwd(L, x, w):
    F = L.nn.functional
    b = L.zeros(w.shape[0])

    def run():
        with L.no_grad():
            F.conv2d(x, w, b)
    return run


def conv_fwd_bwd(L, x, w):
    F = L.nn.functional
    w = w.detach().requires_grad_()
    b = L.zeros(w.shape[0]).requires_grad_()
    x = x.detach().requires_grad_(x.shape[1] > 1)
    leaves = [t for t in (x, w, b) if t.requires_grad]
    g = L.ones_like(F.conv2d(x.detach(), w.detach(), b.detach()))
    return lambda: L.autograd.grad([F.conv2d(x, w, b)], leaves, [g])


def pool_fwd(L, x):
    F = L.nn.functional

    def run():
        with L.no_grad():
            F.max_pool2d(x, 2)
    return run


def pool_fwd_bwd(L, x):
    F = L.nn.functional
    x = x.detach().requires_grad_()
    g = L.ones_like(F.max_pool2d(x.detach(), 2))
    return lambda: L.autograd.grad([F.max_pool2d(x, 2)], [x], [g])


class Data:
    """Inputs built once in NumPy and copied into each library (same values)."""

    def __init__(self, torch, ember):
        self.torch, self.ember = torch, ember
        self.np = {}
        self.cache = {}

    def array(self, key):
        if key not in self.np:
            rng = np.random.default_rng(abs(hash(str(key))) % (1 << 32))
            if key == "big":
                a = rng.standard_normal((N, N), dtype=np.float32)
            elif key == "vec":
                a = rng.standard_normal(1 << 20, dtype=np.float32)
            elif key == "idx":
                a = rng.integers(0, 1 << 20, 1 << 20).astype(np.int64)
            elif key == "idx32":
                a = self.array("idx").astype(np.int32)
            elif key[0] == "imat":  # values of both signs; products wrap in int8
                a = rng.integers(-100, 100, (key[2], key[2])).astype(key[1])
            elif key[0] == "ibatch":
                a = rng.integers(-100, 100, (64, 128, 128)).astype(key[1])
            elif key[0] == "rect":
                a = rng.standard_normal((key[1], key[2]), dtype=np.float32)
            elif key[0] == "mat":
                a = rng.standard_normal((key[1], key[1]), dtype=np.float32)
            elif key[0] == "batch":
                a = rng.standard_normal((64, 128, 128), dtype=np.float32)
            elif key[0] == "act":  # a relu's output: half zeros
                a = np.maximum(rng.standard_normal(key[1], dtype=np.float32), 0)
            elif key[0] == "convw":  # (out, in, 3, 3)
                a = rng.standard_normal((key[1], key[2], 3, 3), dtype=np.float32)
            elif key[0] == "rows":
                a = rng.standard_normal((key[1], N), dtype=np.float32)
            else:
                raise KeyError(key)
            self.np[key] = a
        return self.np[key]

    def __call__(self, lib, key):
        k = (lib.__name__, str(key))
        if k not in self.cache:
            a = self.array(key)
            # Each library's own memory (clone), as for tensors its ops produce: NumPy's
            # buffers are only 16-byte aligned, the libraries' allocators align to 64.
            self.cache[k] = (self.torch.from_numpy(a).clone() if lib is self.torch
                             else self.ember.from_numpy(a).clone())
        return self.cache[k]


UNAVAILABLE = (AttributeError, NotImplementedError)


def fma_peaks(path, ember, threads):
    """{threads: GFLOP/s}: the float32 FMA peak from bench/fma_peak (the best ISA's best
    repetition), {} when the binary is missing (cmake --build <dir> --target fma_peak)."""
    if not path:
        pkg = os.path.dirname(os.path.abspath(ember.__file__))
        path = os.path.join(pkg, os.pardir, os.pardir, "bench", "fma_peak")
    if not os.access(path, os.X_OK):
        print(f"ops_side_by_side: no fma_peak at {path}; % of peak not shown", file=sys.stderr)
        return {}
    import subprocess
    out = subprocess.run([path, ",".join(map(str, threads))], capture_output=True, text=True,
                         check=True).stdout
    peaks = {}
    for line in out.splitlines():
        r = json.loads(line)
        peaks[r["threads"]] = max(peaks.get(r["threads"], 0.0), r["best_gflops"])
    return peaks


def triad_gbs(ember, threads):
    """{threads: GB/s}: the STREAM triad's median from bench/stream_triad next to fma_peak, {}
    when it is not built (cmake --build <dir> --target stream_triad)."""
    pkg = os.path.dirname(os.path.abspath(ember.__file__))
    path = os.path.join(pkg, os.pardir, os.pardir, "bench", "stream_triad")
    if not os.access(path, os.X_OK):
        print(f"ops_side_by_side: no stream_triad at {path}; % of triad not shown",
              file=sys.stderr)
        return {}
    import subprocess
    out = {}
    for t in threads:
        r = subprocess.run([path, str(t)], capture_output=True, text=True, check=True).stdout
        out[t] = json.loads(r)["median_gbs"]
    return out


def time_pair(fns, repeat, target=0.05, timer=timeit.default_timer):
    """Median seconds per call of each callable in `fns` (dict lib -> callable), alternating
    the libraries round by round; the call count per round is set from a warm-up call. `timer`
    is the wall clock, or the calling thread's CPU clock (--cpu-clock, 1-thread rows)."""
    for f in fns.values():
        f()
    probe = min(timeit.timeit(f, number=1, timer=timer) for f in fns.values())
    number = max(1, int(target / max(probe, 1e-7)))
    times = {k: [] for k in fns}
    order = list(fns)
    for r in range(repeat):
        for k in (order if r % 2 == 0 else order[::-1]):
            times[k].append(timeit.timeit(fns[k], number=number, timer=timer) / number)
    return {k: statistics.median(v) for k, v in times.items()}


def fmt_time(s):
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.3f} s "


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--full", action="store_true", help="include 4096 GEMM and 4096-row sort")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--only", default="", help="comma-separated name prefixes")
    p.add_argument("--json", default="", help="write the results to this file")
    p.add_argument("--fma-peak", default="", help="path of bench/fma_peak (default: next to "
                   "the ember package's build tree)")
    p.add_argument("--cpu-clock", action="store_true",
                   help="time 1-thread rows on the calling thread's CPU clock, as fma_peak's "
                   "peak is, so that other processes on a busy machine do not lower the rates")
    args = p.parse_args()
    try:
        import torch
    except ImportError:
        print("ops_side_by_side: PyTorch is not installed; nothing to compare", file=sys.stderr)
        return 0
    import ember

    data = Data(torch, ember)
    only = [s for s in args.only.split(",") if s]
    results = []
    thread_counts = [int(x) for x in args.threads.split(",")]
    peaks = fma_peaks(args.fma_peak, ember, thread_counts)
    wanted = [w[0] for w in workloads(args.full) if not only or any(w[0].startswith(o)
                                                                      for o in only)]
    triads = (triad_gbs(ember, thread_counts)
              if any(n.startswith("max_pool2d") for n in wanted) else {})
    print(f"ops side by side: ember {getattr(ember, '__version__', '?')} vs torch "
          f"{torch.__version__} on {platform.machine()} ({os.cpu_count()} CPUs); "
          "ratio = torch time / ember time")
    import ember.backends.cpu
    cap = ember.backends.cpu.get_cpu_capability()
    print(f"ember kernel set: {cap}; float32 FMA peak: " +
          (", ".join(f"{peaks[t]:.1f} GFLOP/s on {t} thread(s)" for t in sorted(peaks))
           or "not measured"))
    print("load average (1/5/15 min): " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    if args.cpu_clock:
        print("1-thread rows timed on the thread's CPU clock (--cpu-clock)")
    head = (f"{'workload':28} {'thr':>3} {'torch':>11} {'ember':>11} {'torch rate':>16} "
            f"{'ember rate':>16} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for nt in thread_counts:
        torch.set_num_threads(nt)
        ember.set_num_threads(nt)
        for name, unit, amount, setup in workloads(args.full):
            if only and not any(name.startswith(o) for o in only):
                continue
            row = {"workload": name, "threads": nt, "unit": unit, "torch_s": None,
                   "ember_s": None, "note": ""}
            fns = {"torch": setup(torch, data)}
            try:
                fe = setup(ember, data)
                fe()
                fns["ember"] = fe
            except UNAVAILABLE as ex:
                row["note"] = f"n/a ({type(ex).__name__})"
            except Exception as ex:  # noqa: BLE001 - reported, the run goes on
                row["note"] = f"error: {type(ex).__name__}: {str(ex)[:60]}"
            timer = time.thread_time if args.cpu_clock and nt == 1 else timeit.default_timer
            t = time_pair(fns, args.repeat, timer=timer)
            row["torch_s"] = t["torch"]
            row["ember_s"] = t.get("ember")
            scale = 1e9
            rate = lambda s: "n/a" if s is None else f"{amount / s / scale:9.1f} {unit}"  # noqa
            ratio = "n/a" if row["ember_s"] is None else f"{row['torch_s'] / row['ember_s']:6.2f}"
            row["torch_rate"] = amount / row["torch_s"] / scale
            row["ember_rate"] = None if row["ember_s"] is None else amount / row["ember_s"] / scale
            triad = triads.get(nt) if name.startswith("max_pool2d") else None
            if triad:
                row["triad_gbs"] = triad
                pct = lambda r: "n/a" if r is None else f"{100 * r / triad:.0f}%"  # noqa
                row["note"] = (f"{pct(row['ember_rate'])} / {pct(row['torch_rate'])} of triad "
                               f"({triad:.1f} GB/s) " + row["note"]).rstrip()
            peak = peaks.get(nt) if unit == "GFLOP/s" else None
            if peak:
                row["peak_gflops"] = peak
                pct = lambda r: "n/a" if r is None else f"{100 * r / peak:.0f}%"  # noqa
                row["note"] = (f"{pct(row['ember_rate'])} / {pct(row['torch_rate'])} of peak "
                               + row["note"]).rstrip()
            print(f"{name:28} {nt:3d} {fmt_time(row['torch_s']):>11} "
                  f"{fmt_time(row['ember_s']):>11} {rate(row['torch_s']):>16} "
                  f"{rate(row['ember_s']):>16} {ratio:>6} {row['note']}", flush=True)
            results.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "machine": platform.machine(),
                       "ember_cpu_capability": cap,
                       "fma_peak_gflops": {str(t): g for t, g in peaks.items()},
                       "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
