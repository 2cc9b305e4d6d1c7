#!/usr/bin/env python3
"""Side-by-side elementwise benchmark: ember vs PyTorch (C++ and Python), in one run.

Runs build/<dir>/bench/ember_bench and torch_bench (Google Benchmark, JSON output, fixed
intra-op thread counts, several repetitions), times the same workloads from Python with
`import torch` and `import ember` + timeit, measures the STREAM triad bandwidth with
bench/stream_triad, and prints one table of medians; then the Python per-call overhead table
(bench/py_overhead.py). Missing pieces (no torch_bench, no Python torch) are reported and skipped.

    /usr/bin/python3 bench/side_by_side.py --build build/release [--quick] [--json out.json]

Ratios are speed ratios: PyTorch time / ember time (> 1 means ember is faster). Bandwidth is
bytes read + bytes written per second, in GB/s (1e9). On a 2-core machine the numbers are
noisy: the runner alternates libraries over --rounds rounds, quotes medians and records the load.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import timeit

THREADS = (1, 2)
SIZES = (("1M", 1 << 20), ("16M", 1 << 24))
M = 4096


# ---------------------------------------------------------------------------------------------
# Workloads, mirrored from bench/elementwise_workloads.h (same names, same byte counts).
# ---------------------------------------------------------------------------------------------
def workload_bytes():
    """{name: bytes read + written per call}, in the order the table prints them."""
    w = {}
    for op, arity in (("add", 2), ("mul", 2), ("exp", 1), ("tanh", 1), ("sigmoid", 1),
                      ("gelu", 1)):
        for label, n in SIZES:
            w[f"{op}/{label}/fresh"] = (arity + 1) * n * 4
            if op != "gelu":  # gelu has no out= form
                w[f"{op}/{label}/out"] = (arity + 1) * n * 4
    n16 = SIZES[1][1]
    for op in ("sum", "mean", "amax"):  # full reductions: read once
        w[f"{op}/16M/fresh"] = n16 * 4
    for d in (0, 1):
        w[f"sum_dim{d}/{M}x{M}/fresh"] = (M * M + M) * 4
    w[f"add_bcast/{M}x{M}+{M}/fresh"] = (2 * M * M + M) * 4
    w[f"add_bcast/{M}x{M}+{M}/out"] = (2 * M * M + M) * 4
    w[f"add_transposed/{M}x{M}/fresh"] = 3 * M * M * 4
    w["add_1elem/1/fresh"] = 12
    w["add_scalar_1elem/1/fresh"] = 8
    w["add_1elem/1/out"] = 12
    # Autograd (bench/autograd_workloads.h): time per step, no byte count.
    w["autograd_xwb_1elem/1/fresh"] = 0
    for batch in (1, 32):
        w[f"mlp_step/{batch}/fresh"] = 0
    return w


WORKLOAD_BYTES = workload_bytes()


def workload_names():
    return list(WORKLOAD_BYTES)


def python_workloads(torch):
    """{name: setup}, where setup() builds the inputs and returns the callable to time."""
    F = torch.nn.functional

    def rn(*s):
        return torch.randn(*s, dtype=torch.float32)

    w = {}
    binary = {"add": torch.add, "mul": torch.mul}
    unary = {"exp": torch.exp, "tanh": torch.tanh, "sigmoid": torch.sigmoid}
    for label, n in SIZES:
        for op, fn in binary.items():
            w[f"{op}/{label}/fresh"] = lambda n=n, fn=fn: (
                lambda a, b: lambda: fn(a, b))(rn(n), rn(n))
            w[f"{op}/{label}/out"] = lambda n=n, fn=fn: (
                lambda a, b, c: lambda: fn(a, b, out=c))(rn(n), rn(n), rn(n))
        for op, fn in unary.items():
            w[f"{op}/{label}/fresh"] = lambda n=n, fn=fn: (lambda a: lambda: fn(a))(rn(n))
            w[f"{op}/{label}/out"] = lambda n=n, fn=fn: (
                lambda a, c: lambda: fn(a, out=c))(rn(n), rn(n))
        w[f"gelu/{label}/fresh"] = lambda n=n: (lambda a: lambda: F.gelu(a))(rn(n))
    n16 = SIZES[1][1]
    for op in ("sum", "mean", "amax"):
        w[f"{op}/16M/fresh"] = lambda op=op: (lambda a, fn: lambda: fn(a))(rn(n16), getattr(torch, op))
    for d in (0, 1):
        w[f"sum_dim{d}/{M}x{M}/fresh"] = lambda d=d: (lambda a: lambda: a.sum(d))(rn(M, M))
    w[f"add_bcast/{M}x{M}+{M}/fresh"] = lambda: (
        lambda a, b: lambda: torch.add(a, b))(rn(M, M), rn(M))
    w[f"add_bcast/{M}x{M}+{M}/out"] = lambda: (
        lambda a, b, c: lambda: torch.add(a, b, out=c))(rn(M, M), rn(M), rn(M, M))
    w[f"add_transposed/{M}x{M}/fresh"] = lambda: (
        lambda a, b: lambda: a.t() + b.t())(rn(M, M), rn(M, M))
    w["add_1elem/1/fresh"] = lambda: (lambda a, b: lambda: torch.add(a, b))(rn(1), rn(1))
    w["add_scalar_1elem/1/fresh"] = lambda: (lambda a: lambda: a + 1)(rn(1))
    w["add_1elem/1/out"] = lambda: (
        lambda a, b, c: lambda: torch.add(a, b, out=c))(rn(1), rn(1), rn(1))
    w.update(python_autograd_workloads(torch))
    assert set(w) == set(WORKLOAD_BYTES), set(w) ^ set(WORKLOAD_BYTES)
    return w


def python_autograd_workloads(torch):
    """The workloads of bench/autograd_workloads.h, from Python."""
    def rn(*s):
        return torch.randn(*s, dtype=torch.float32)

    def xwb():
        x, w, b = (rn(1).requires_grad_() for _ in range(3))

        def step():
            (x * w + b).sum().backward()
        return step

    def mlp(batch):
        dims = (64, 64, 64, 10)
        params = []
        for i in range(3):
            params.append((rn(dims[i + 1], dims[i]) * 0.1).requires_grad_())
            params.append((rn(dims[i + 1]) * 0.1).requires_grad_())
        x, target = rn(batch, 64), rn(batch, 10)

        def step():
            h = (x.matmul(params[0].t()) + params[1]).relu()
            h = (h.matmul(params[2].t()) + params[3]).relu()
            out = h.matmul(params[4].t()) + params[5]
            loss = (out - target).pow(2).mean()
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p.sub_(p.grad, alpha=0.01)
                    p.grad.zero_()
        return step

    w = {"autograd_xwb_1elem/1/fresh": xwb}
    for batch in (1, 32):
        w[f"mlp_step/{batch}/fresh"] = lambda batch=batch: mlp(batch)
    return w


# ---------------------------------------------------------------------------------------------
# Running things.
# ---------------------------------------------------------------------------------------------
def find_binary(build, name):
    for p in (os.path.join(build, "bench", name), os.path.join(build, name)):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def build_targets(build, log):
    """Builds the benchmark targets (torch_bench is not in `all`). A target the build does not
    define (no libtorch) is skipped; a failure is reported and the run goes on."""
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        log(f"note: {build} is not a CMake build directory; not building")
        return
    for target in ("ember_bench", "stream_triad", "torch_bench", "_C"):
        p = subprocess.run(["cmake", "--build", build, "--target", target, "-j",
                            os.environ.get("JOBS", "2")], capture_output=True, text=True)
        if p.returncode != 0:
            out = (p.stdout + p.stderr).strip().splitlines()
            if any("unknown target" in l for l in out):
                continue  # not configured: reported as missing below
            log(f"note: building {target} failed; its column will be empty. Tail:")
            for line in out[-6:]:
                log(f"    {line}")


def salvage_benchmarks(text):
    """The 'benchmarks' entries of a Google Benchmark JSON document, even a truncated one (a
    crash mid-run leaves the entries written so far)."""
    try:
        return json.loads(text).get("benchmarks", []), json.loads(text).get("context", {})
    except json.JSONDecodeError:
        pass
    out = []
    i = text.find('"benchmarks"')
    if i < 0:
        return out, {}
    i = text.find("[", i) + 1
    dec = json.JSONDecoder()
    while True:
        m = re.compile(r"\s*,?\s*").match(text, i)
        i = m.end()
        if i >= len(text) or text[i] != "{":
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            break
        out.append(obj)
    return out, {}


def run_gbench(binary, args, label, log):
    """Runs a Google Benchmark binary; returns ({name: [seconds per iteration]}, context)."""
    cmd = [binary, "--benchmark_format=json", f"--benchmark_repetitions={args.reps}",
           f"--benchmark_min_time={args.min_time}"]
    if args.filter:
        cmd.append(f"--benchmark_filter={args.filter}")
    log(f"  $ {' '.join(cmd)}")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        stdout, stderr, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr, rc = f"timed out after {args.timeout}s", -1
    entries, context = salvage_benchmarks(stdout)
    if rc != 0:
        log(f"  ! {label} exited with status {rc}; kept {len(entries)} results. stderr tail:")
        for line in (stderr or "").strip().splitlines()[-8:]:
            log(f"    {line}")
    times, errors = {}, {}
    for e in entries:
        name = e.get("run_name", e.get("name", "")).replace("/real_time", "")
        if e.get("error_occurred"):
            errors[name] = e.get("error_message", "error")
            continue
        if e.get("run_type", "iteration") != "iteration":
            continue
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[e.get("time_unit", "ns")]
        times.setdefault(name, []).append(e["real_time"] * unit)
    for name, msg in sorted(errors.items()):
        log(f"  ! {label} {name}: {msg}")
    return times, context


def run_python(torch, args, log):
    """Times the workloads with timeit from Python; {name/nt:N: [seconds per call]}."""
    if torch is None:
        return {}
    work = python_workloads(torch)
    pat = re.compile(args.filter) if args.filter else None
    times = {}
    for name in workload_names():
        setup = work[name]
        for nt in THREADS:
            key = f"{name}/nt:{nt}"
            if pat and not pat.search(key):
                continue
            try:
                torch.set_num_threads(nt)
                fn = setup()
                fn()  # warm-up
                t = timeit.Timer(fn)
                number = 1
                while True:  # grow the batch until it lasts min_time, as Google Benchmark does
                    dt = t.timeit(number)
                    if dt >= args.min_time or number >= 1 << 24:
                        break
                    number *= max(2, min(10, int(args.min_time / max(dt, 1e-9) * 1.4)))
                times[key] = [x / number for x in t.repeat(args.reps, number)]
            except Exception as e:  # noqa: BLE001 -- report, keep the other workloads
                log(f"  ! python {key}: {type(e).__name__}: {e}")
            fn = None
    return times


def run_triad(binary, log):
    res = {}
    for nt in THREADS:
        try:
            p = subprocess.run([binary, str(nt)], capture_output=True, text=True, timeout=120)
            res[nt] = json.loads(p.stdout)
        except (subprocess.SubprocessError, json.JSONDecodeError, OSError) as e:
            log(f"  ! stream_triad {nt} thread(s) failed: {e}")
    return res


# ---------------------------------------------------------------------------------------------
# Report.
# ---------------------------------------------------------------------------------------------
def median(xs):
    return statistics.median(xs) if xs else None


def fmt_cell(name, t):
    if t is None:
        return "-"
    if name.startswith(("add_1elem", "add_scalar_1elem", "autograd_", "mlp_step")):
        return f"{t * 1e6:.3f} us"
    return f"{bytes_of(name) / t / 1e9:.1f}"


def memory_bound(key):
    """Rows whose footprint is larger than a last-level cache: the triad is their limit."""
    return bytes_of(key) > 0 and ("/16M/" in key or "4096x4096" in key)


def triad_pct(key, t, tri):
    if t is None or not tri or not memory_bound(key):
        return None
    return 100 * bytes_of(key) / t / 1e9 / tri["median_gbs"]


def fmt_triad(key, t, tri):
    p = triad_pct(key, t, tri)
    return "-" if p is None else f"{p:.0f}%"


def bytes_of(key):
    return WORKLOAD_BYTES[key.rsplit("/nt:", 1)[0]]


def fmt_ratio(t_ref, t_ember):
    if t_ref is None or t_ember is None:
        return "-"
    return f"{t_ref / t_ember:.2f}x"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build/release", help="CMake build directory")
    ap.add_argument("--rounds", type=int, default=2,
                    help="alternate ember / libtorch / Python this many times (default 2)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per round (default 3)")
    ap.add_argument("--min-time", type=float, default=0.1,
                    help="seconds per repetition (default 0.1)")
    ap.add_argument("--filter", default="", help="regex on workload names, e.g. 'add/16M'")
    ap.add_argument("--quick", action="store_true", help="1 round, 1 repetition, 0.05 s")
    ap.add_argument("--no-python", action="store_true",
                    help="skip the from-Python columns and the per-call overhead table")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per benchmark binary")
    ap.add_argument("--json", default="", help="also write all results to this file")
    ap.add_argument("--no-build", action="store_true",
                    help="do not run `cmake --build` for the benchmark targets first")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.reps, args.min_time = 1, 1, 0.05

    log = lambda s: print(s, file=sys.stderr, flush=True)
    load_start = os.getloadavg()
    t_start = time.time()

    if not args.no_build:
        build_targets(args.build, log)
    ember_bin = find_binary(args.build, "ember_bench")
    torch_bin = find_binary(args.build, "torch_bench")
    triad_bin = find_binary(args.build, "stream_triad")
    notes = []
    if not ember_bin:
        notes.append(f"ember_bench not found under {args.build}: build it first (make bench)")
    if not torch_bin:
        notes.append("torch_bench not built (needs libtorch-dev: scripts/install-deps bench); "
                     "the PyTorch C++ column is empty")
    torch = None
    if not args.no_python:
        try:
            import torch as _torch
            torch = _torch
        except Exception as e:  # noqa: BLE001 -- any import failure means "no column"
            notes.append(f"PyTorch for Python not importable ({e}); that column is empty")
    ember_py = None
    if not args.no_python:
        sys.path.insert(0, os.path.join(args.build, "python"))
        try:
            import ember as _ember
            ember_py = _ember
        except Exception as e:  # noqa: BLE001 -- no binding built: no column
            notes.append(f"ember for Python not importable ({e}); that column is empty")
    for n in notes:
        log(f"note: {n}")

    ember_t, torch_t, py_t, epy_t = {}, {}, {}, {}
    ctx_ember, ctx_torch = {}, {}
    for r in range(args.rounds):
        log(f"round {r + 1}/{args.rounds}")
        if ember_bin:
            t, ctx_ember = run_gbench(ember_bin, args, "ember_bench", log)
            for k, v in t.items():
                ember_t.setdefault(k, []).extend(v)
        if torch_bin:
            t, ctx_torch = run_gbench(torch_bin, args, "torch_bench", log)
            for k, v in t.items():
                torch_t.setdefault(k, []).extend(v)
        if torch is not None:
            log("  python: torch + timeit")
            for k, v in run_python(torch, args, log).items():
                py_t.setdefault(k, []).extend(v)
        if ember_py is not None:
            log("  python: ember + timeit")
            for k, v in run_python(ember_py, args, log).items():
                epy_t.setdefault(k, []).extend(v)
    triad = run_triad(triad_bin, log) if triad_bin else {}
    if not triad_bin:
        notes.append("stream_triad not built; no triad reference")
    load_end = os.getloadavg()

    # ---- the table ----
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print("ember vs PyTorch: elementwise float32, medians of "
          f"{args.rounds} round(s) x {args.reps} repetition(s), {args.min_time} s each")
    print(f"machine: {cpu}, {os.cpu_count()} CPUs; ember cpu_capability: "
          f"{ctx_ember.get('cpu_capability', '?')}; {ctx_torch.get('library', 'libtorch: -')}; "
          f"python torch {getattr(torch, '__version__', '-')}")
    print(f"load average (1/5/15 min): start {load_start[0]:.2f} {load_start[1]:.2f} "
          f"{load_start[2]:.2f}, end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    print("GB/s = (bytes read + written) / time / 1e9; add_1elem rows are time per op. "
          "Ratios are PyTorch time / ember time (> 1: ember faster); Py/Py compares both "
          "libraries called from Python.")
    print("%triad: the row's GB/s as a share of the STREAM triad's median at the same thread "
          "count (the limit of memory-bound rows: 16M elements and 4096x4096, whose footprint "
          "is larger than the last-level cache). The triad counts no write-allocate traffic: an "
          "op with streaming stores can pass 100%.")
    header = ("workload", "nt", "ember", "torch C++", "torch Py", "ember Py", "ember/C++",
              "ember/Py", "Py/Py", "ember %triad", "C++ %triad")
    widths = (32, 3, 11, 11, 11, 11, 10, 9, 7, 12, 10)
    line = "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in
                     enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    rows = []
    pat = re.compile(args.filter) if args.filter else None
    for name in workload_names():
        for nt in THREADS:
            key = f"{name}/nt:{nt}"
            if pat and not pat.search(key):
                continue
            te, tc, tp = median(ember_t.get(key)), median(torch_t.get(key)), median(py_t.get(key))
            tep = median(epy_t.get(key))
            rows.append({"workload": name, "threads": nt, "bytes": bytes_of(key),
                         "ember_s": te, "torch_cpp_s": tc, "torch_py_s": tp, "ember_py_s": tep})
            share = [fmt_triad(key, t, triad.get(nt)) for t in (te, tc)]
            rows[-1]["ember_triad_pct"], rows[-1]["torch_cpp_triad_pct"] = (
                triad_pct(key, t, triad.get(nt)) for t in (te, tc))
            cells = (name, str(nt), fmt_cell(key, te), fmt_cell(key, tc), fmt_cell(key, tp),
                     fmt_cell(key, tep), fmt_ratio(tc, te), fmt_ratio(tp, te), fmt_ratio(tp, tep),
                     *share)
            print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                            enumerate(zip(cells, widths))))

    # ---- triad ----
    if triad:
        print()
        print("STREAM triad a[i] = b[i] + s*c[i], float32, 16M elements (3 x 64 MiB), "
              "GB/s median (best):")
        for nt, t in sorted(triad.items()):
            ft = ""
            if "first_touch_us_per_page" in t:
                ft = (f"; first touch of fresh pages {t['first_touch_us_per_page']:.2f} us per "
                      f"4 KiB page ({t['first_touch_gbs']:.1f} GB/s)")
            print(f"  {nt} thread(s): {t['median_gbs']:.1f} ({t['best_gbs']:.1f}){ft}")
        print("  (an op whose output is freshly mapped memory pays the first touch: that bounds "
              "'fresh' rows without a caching allocator)")
        lines = []
        for name in ("add/16M/fresh", "add/16M/out", "mul/16M/fresh", "mul/16M/out"):
            for nt in THREADS:
                key = f"{name}/nt:{nt}"
                if nt not in triad or (pat and not pat.search(key)):
                    continue
                ref = triad[nt]["median_gbs"]
                parts = []
                for lib, d in (("ember", ember_t), ("torch C++", torch_t), ("torch Py", py_t)):
                    t = median(d.get(key))
                    if t is not None:
                        parts.append(f"{lib} {100 * bytes_of(key) / t / 1e9 / ref:5.0f}%")
                lines.append(f"  {name:16s} nt:{nt}  " + ("  ".join(parts) if parts else "-"))
        if lines:
            print("add/mul at 16M as % of the triad median, same thread count:")
            print("\n".join(lines))
    # The end load includes this run's own threads; only the start load says "someone else".
    if load_start[0] > 0.5 * (os.cpu_count() or 1):
        notes.append(f"the machine was busy at the start (1-min load {load_start[0]:.2f} on "
                     f"{os.cpu_count()} CPUs): these numbers are noisy; rerun on an idle machine")
    for n in notes:
        print(f"note: {n}")
    overhead = []
    if ember_py is not None and not args.filter:
        import py_overhead
        print()
        overhead = py_overhead.run(args.reps, args.min_time)
        py_overhead.print_table(overhead)
    print(f"total time {time.time() - t_start:.0f} s")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_start": load_start, "load_end": load_end, "cpu": cpu,
                       "ember_context": ctx_ember, "torch_context": ctx_torch,
                       "rounds": args.rounds, "reps": args.reps, "min_time": args.min_time,
                       "rows": rows, "triad": triad, "notes": notes, "py_overhead": overhead,
                       "raw": {"ember": ember_t, "torch_cpp": torch_t, "torch_py": py_t,
                               "ember_py": epy_t}},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
