#!/usr/bin/env python3
"""Side-by-side attention benchmark: ember's F.scaled_dot_product_attention (the fused CPU
kernel: tiled over keys, online softmax, O(L) memory) vs torch 1.13's
F._scaled_dot_product_attention (which builds the L×S weights).

Rows: L = S = 1024, 4096 (batch 1, 4 heads) and 16384 (batch 1, 1 head, so that torch's full
matrix stays feasible), d = 64, no mask, forward and forward+backward, float32 and bfloat16, at
each thread count of --threads. Each (library, row, dtype, pass) runs in a fresh subprocess, so
that its peak memory is the growth of the process's peak RSS over the inputs (ru_maxrss); a
torch case whose full matrices would need more than --torch-limit GiB is skipped and marked so.
The table quotes the best wall-clock milliseconds per call and the best process CPU
milliseconds per call (all threads; the fairer figure on a loaded machine), each with
ember / torch (< 1 means ember is faster).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/sdpa_side_by_side.py
        [--threads 1,2] [--lengths 1024,4096,16384] [--dtypes float32,bfloat16]
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROWS = {1024: (1, 4), 4096: (1, 4), 16384: (1, 1)}  # L -> (batch, heads)
D = 64


def torch_bytes(L, b, h, dtype, mode):
    """The L×S matrices torch 1.13's decomposition keeps alive at its peak (scores, softmax;
    backward adds the weights' and scores' gradients)."""
    item = 2 if dtype == "bfloat16" else 4
    return (2 if mode == "fwd" else 4) * b * h * L * L * item


def worker(lib, L, dtype, mode, threads, budget):
    import resource

    import numpy as np
    b, h = ROWS[L]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((b, h, L, D)).astype(np.float32) for _ in range(3)]
    grad = rng.standard_normal((b, h, L, D)).astype(np.float32)
    if lib == "ember":
        import ember as M
        import ember.nn.functional as F

        def attend(q, k, v):
            return F.scaled_dot_product_attention(q, k, v)
    else:
        import torch as M
        F = M.nn.functional

        def attend(q, k, v):
            return F._scaled_dot_product_attention(q, k, v, None, 0.0, False, False)[0]
    dt = getattr(M, dtype)
    qkv = [M.from_numpy(a).to(dt) for a in arrays]
    g = M.from_numpy(grad).to(dt)
    if mode == "fwdbwd":
        for t in qkv:
            t.requires_grad_(True)

    def run():
        if mode == "fwd":
            with M.no_grad():
                attend(*qkv)
        else:
            attend(*qkv).backward(g)
            for t in qkv:
                t.grad = None

    # Warm up the libraries on a small case, then the peak of one full call.
    small = [M.from_numpy(a[..., :64, :].copy()).to(dt) for a in arrays]
    with M.no_grad():
        attend(*small)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    M.set_num_threads(threads[0])
    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) * 1024
    times, cpu = {}, {}
    for n in threads:
        M.set_num_threads(n)
        ts, cs = [], []
        start = time.perf_counter()
        reps = 1 if first * 3 > budget else 5
        while len(ts) < reps and (not ts or time.perf_counter() - start < budget):
            t0, c0 = time.perf_counter(), time.process_time()
            run()
            ts.append((time.perf_counter() - t0) * 1e3)
            cs.append((time.process_time() - c0) * 1e3)
        times[n], cpu[n] = min(ts), min(cs)
    print(json.dumps({"peak": peak, "times": times, "cpu": cpu}))


def measure(lib, L, dtype, mode, threads, budget):
    cmd = [sys.executable, __file__, "--worker", lib, str(L), dtype, mode,
           ",".join(map(str, threads)), str(budget)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr else "failed"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--lengths", default="1024,4096,16384")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--modes", default="fwd,fwdbwd")
    ap.add_argument("--budget", type=float, default=10.0, help="seconds per timing")
    ap.add_argument("--torch-limit", type=float, default=8.0, help="GiB")
    ap.add_argument("--torch-bf16-max-length", type=int, default=4096,
                    help="longer bfloat16 rows skip torch (its bfloat16 CPU matmul is slow: "
                         "about 17 s per forward at L=4096 on a 2-core AMD EPYC)")
    ap.add_argument("--worker", nargs=6)
    a = ap.parse_args()
    if a.worker:
        lib, L, dtype, mode, threads, budget = a.worker
        worker(lib, int(L), dtype, mode, [int(x) for x in threads.split(",")], float(budget))
        return
    threads = [int(x) for x in a.threads.split(",")]
    print(f"d={D}, no mask; ember fused vs torch 1.13 _scaled_dot_product_attention; "
          f"peak = growth of peak RSS in a fresh process")
    hdr = f"{'case':<34}{'thr':>4}{'ember ms':>10}{'torch ms':>10}{'ratio':>7}" \
          f"{'ember cpu':>10}{'torch cpu':>10}{'ratio':>7}{'ember MiB':>10}{'torch MiB':>10}"
    print(hdr)
    print("-" * len(hdr))
    for L in [int(x) for x in a.lengths.split(",")]:
        b, h = ROWS[L]
        for dtype in a.dtypes.split(","):
            for mode in a.modes.split(","):
                name = f"L=S={L} b={b} h={h} {dtype} {mode}"
                e = measure("ember", L, dtype, mode, threads, a.budget)
                need = torch_bytes(L, b, h, dtype, mode)
                if need > a.torch_limit * 2**30:
                    t = {"skip": f"needs ~{need / 2**30:.0f} GiB"}
                elif dtype == "bfloat16" and L > a.torch_bf16_max_length:
                    t = {"skip": f"bfloat16 above L={a.torch_bf16_max_length} (too slow)"}
                else:
                    t = measure("torch", L, dtype, mode, threads, a.budget)
                miss = "skip" if "skip" in t else "err"
                for n in threads:
                    cells = []
                    for key in ("times", "cpu"):
                        em = e.get(key, {}).get(str(n))
                        tm = t.get(key, {}).get(str(n))
                        cells.append(f"{em:10.1f}" if em else f"{'err':>10}")
                        cells.append(f"{tm:10.1f}" if tm else f"{miss:>10}")
                        cells.append(f"{em / tm:7.2f}" if em and tm else f"{'-':>7}")
                    for r in (e, t):
                        cells.append(f"{r['peak'] / 2**20:10.1f}" if "peak" in r else f"{'-':>10}")
                    print(f"{name:<34}{n:>4}" + "".join(cells), flush=True)
                for r, lib in [(e, "ember"), (t, "torch")]:
                    if "error" in r or "skip" in r:
                        print(f"    {lib}: {r.get('error') or r.get('skip')}")


if __name__ == "__main__":
    main()
