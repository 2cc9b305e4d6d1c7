#!/usr/bin/env python3
"""ember's CUDA workloads (bench/cuda_bench, a C++ program) next to the same workloads on
PyTorch (in this process), one table.

Usage: cuda_side_by_side.py [--bench PATH/TO/cuda_bench] [--data DIR] [--only PREFIX]
Needs a GPU and a CUDA build of PyTorch. Prints `workload  ember  torch  unit  ember/torch`;
for TFLOP/s and GB/s higher is better, for us and s lower is better. The elementwise rows are
also given as a percentage of each library's own device-to-device copy bandwidth, and the
CUDA Graph row as the speedup of a replayed training step over the eager one.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import torch

DEV = "cuda"


def median_us(f, reps):
    f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(7):
        s = time.perf_counter()
        for _ in range(reps):
            f()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - s) * 1e6 / reps)
    return statistics.median(ts)


def gemm_rows(rows, want):
    for mode, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                              ("bf16", torch.bfloat16, False)):
        for n in (4096, 8192):
            name = f"gemm_{mode}_{n}"
            if not want(name):
                continue
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(n, n, device=DEV).to(dtype)
            b = torch.randn(n, n, device=DEV).to(dtype)
            us = median_us(lambda: torch.matmul(a, b), 5 if n >= 8192 else 20)
            rows[name] = (2.0 * n ** 3 / (us * 1e-6) / 1e12, "TFLOP/s")
            del a, b
    torch.backends.cuda.matmul.allow_tf32 = False


def bandwidth_rows(rows, want):
    n = 64 << 20
    nbytes = n * 4
    a = torch.full((n,), 1.5, device=DEV)
    b = torch.full((n,), -0.5, device=DEV)
    out = torch.empty(n, device=DEV)
    gelu = torch.nn.functional.gelu
    if want("copy_d2d_64M"):
        rows["copy_d2d_64M"] = (2 * nbytes / median_us(lambda: out.copy_(a), 10) / 1e3, "GB/s")
    if want("add_64M"):
        rows["add_64M"] = (3 * nbytes / median_us(lambda: torch.add(a, b), 10) / 1e3, "GB/s")
    if want("mul_64M"):
        rows["mul_64M"] = (3 * nbytes / median_us(lambda: torch.mul(a, b), 10) / 1e3, "GB/s")
    if want("gelu_64M"):
        rows["gelu_64M"] = (2 * nbytes / median_us(lambda: gelu(a), 10) / 1e3, "GB/s")


def row_ops(rows, want):
    x = torch.randn(4096, 4096, device=DEV)
    w, bias = torch.ones(4096, device=DEV), torch.zeros(4096, device=DEV)
    if want("softmax_4096x4096"):
        rows["softmax_4096x4096"] = (median_us(lambda: torch.softmax(x, -1), 20), "us")
    if want("layer_norm_4096x4096"):
        ln = torch.nn.functional.layer_norm
        rows["layer_norm_4096x4096"] = (median_us(lambda: ln(x, (4096,), w, bias), 20), "us")
    one = torch.ones(1, device=DEV)
    if want("launch_add_1elem"):
        rows["launch_add_1elem"] = (median_us(lambda: torch.add(one, one), 2000), "us")
    n = 16 << 20
    pinned = torch.ones(n).pin_memory()
    dev = torch.ones(n, device=DEV)
    if want("h2d_pinned_64MB"):
        rows["h2d_pinned_64MB"] = (
            n * 4 / median_us(lambda: pinned.to(DEV, non_blocking=True), 5) / 1e3, "GB/s")
    if want("d2h_64MB"):
        rows["d2h_64MB"] = (n * 4 / median_us(lambda: dev.cpu(), 5) / 1e3, "GB/s")


def read_idx(path):
    import gzip
    import struct

    import numpy as np
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def build_net():
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10)).to(DEV)


def epoch_rows(rows, want, root, notes):
    if not want("fmnist"):
        return
    path = os.path.join(root, "train-images-idx3-ubyte.gz")
    if os.path.exists(path):
        images = torch.from_numpy(read_idx(path).copy()).unsqueeze(1).float().div(255)
        labels = torch.from_numpy(
            read_idx(os.path.join(root, "train-labels-idx1-ubyte.gz")).copy()).long()
        notes.append("torch fmnist data: real")
    else:
        torch.manual_seed(0)
        images = torch.rand(60000, 1, 28, 28)
        labels = torch.randint(0, 10, (60000,))
        notes.append("torch fmnist data: synthetic (dataset not found at " + root + ")")
    images = (images - 0.2860) / 0.3530
    torch.manual_seed(0)
    model = build_net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ce = torch.nn.functional.cross_entropy
    n, bs = len(images), 64

    def run_epoch():
        perm = torch.randperm(n)
        loss_sum = torch.zeros((), device=DEV)
        for i in range(0, n, bs):
            idx = perm[i:i + bs]
            xb = images.index_select(0, idx).pin_memory().to(DEV, non_blocking=True)
            yb = labels.index_select(0, idx).pin_memory().to(DEV, non_blocking=True)
            opt.zero_grad()
            loss = ce(model(xb), yb)
            loss.backward()
            opt.step()
            loss_sum.add_(loss.detach())
        return float(loss_sum) / math.ceil(n / bs)

    run_epoch()
    torch.cuda.synchronize()
    s = time.perf_counter()
    mean_loss = run_epoch()
    torch.cuda.synchronize()
    rows["fmnist_epoch"] = (time.perf_counter() - s, "s")
    rows["fmnist_epoch_loss"] = (mean_loss, "mean")

    x, y = images[:bs].to(DEV), labels[:bs].to(DEV)
    gmodel = build_net()
    sgd = torch.optim.SGD(gmodel.parameters(), lr=0.01, momentum=0.9)

    def step():
        loss = ce(gmodel(x), y)
        loss.backward()
        sgd.step()

    def eager():
        sgd.zero_grad(set_to_none=True)
        step()

    rows["fmnist_step_eager"] = (median_us(eager, 50), "us")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            eager()
    torch.cuda.current_stream().wait_stream(side)
    sgd.zero_grad(set_to_none=True)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=side):
        step()
    rows["fmnist_step_graph"] = (median_us(g.replay, 50), "us")


def run_ember(bench, data, only):
    cmd = [bench, "--data", data] + (["--only", only] if only else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    rows, notes = {}, []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            try:
                rows[parts[0]] = (float(parts[1]), parts[2])
                continue
            except ValueError:
                pass
        notes.append("ember " + line)
    if proc.returncode != 0:
        notes.append(f"cuda_bench exited with {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return rows, notes


def derived(rows):
    """Elementwise GB/s as % of the copy bandwidth; the graph speedup."""
    out = {}
    copy = rows.get("copy_d2d_64M", (math.nan,))[0]
    for k in ("add_64M", "mul_64M", "gelu_64M"):
        if k in rows:
            out[k + "_pct_copy"] = (100 * rows[k][0] / copy, "%")
    if "fmnist_step_eager" in rows and "fmnist_step_graph" in rows:
        out["fmnist_graph_speedup"] = (rows["fmnist_step_eager"][0] / rows["fmnist_step_graph"][0],
                                       "x")
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench", default=os.path.join(here, "..", "build", "release", "bench",
                                                   "cuda_bench"))
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--only", default="", help="only the workloads whose name starts so")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("cuda_side_by_side.py: PyTorch sees no CUDA device")
    want = (lambda name: name.startswith(args.only)) if args.only else (lambda name: True)

    ours, notes = run_ember(args.bench, args.data, args.only)
    theirs = {}
    for f in (gemm_rows, bandwidth_rows, row_ops):
        f(theirs, want)
        torch.cuda.empty_cache()
    epoch_rows(theirs, want, args.data, notes)
    ours.update(derived(ours))
    theirs.update(derived(theirs))

    print(f"device: {torch.cuda.get_device_name()} | torch {torch.__version__} | "
          f"CUDA {torch.version.cuda}")
    for n in notes:
        print(n)
    print(f"{'workload':26s} {'ember':>11s} {'torch':>11s} {'unit':>8s} {'ember/torch':>12s}")
    for name in list(theirs) + [k for k in ours if k not in theirs]:
        e = ours.get(name, (math.nan, ""))[0]
        t, unit = theirs.get(name, (math.nan, ours.get(name, ("", "?"))[1]))
        ratio = e / t if t else math.nan
        better = "higher" if unit in ("TFLOP/s", "GB/s", "%", "x") else "lower"
        if unit == "mean":
            better = "-"
        print(f"{name:26s} {e:11.3f} {t:11.3f} {unit:>8s} {ratio:12.3f}  ({better} is better)")


if __name__ == "__main__":
    main()
