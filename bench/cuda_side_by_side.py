#!/usr/bin/env python3
"""ember's CUDA workloads (bench/cuda_bench) next to the same workloads on PyTorch, one run.

Usage: cuda_side_by_side.py PATH/TO/cuda_bench   (needs a GPU and a CUDA build of PyTorch)
Prints `workload  ember_us  torch_us  ember/torch`.
"""
import statistics
import subprocess
import sys
import time

import torch


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


def torch_rows():
    d = "cuda"
    n = 1 << 24
    a = torch.full((n,), 1.5, device=d)
    b = torch.full((n,), 2.0, device=d)
    out = torch.empty(n, device=d)
    m = torch.ones(4096, 4096, device=d)
    row = torch.full((4096,), 3.0, device=d)
    host = torch.ones(n)
    small = torch.ones(16, device=d)
    return {
        "fill_16M": median_us(lambda: out.fill_(0.5), 50),
        "add_16M": median_us(lambda: torch.add(a, b), 50),
        "add_out_16M": median_us(lambda: torch.add(a, b, out=out), 50),
        "add_bcast_4096x4096": median_us(lambda: m + row, 50),
        "copy_transpose_4096x4096": median_us(lambda: m.t().contiguous(), 20),
        "h2d_64MB": median_us(lambda: host.to(d), 5),
        "d2h_64MB": median_us(lambda: a.cpu(), 5),
        "add_small_launch": median_us(lambda: torch.add(small, small), 1000),
    }


def main():
    out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
    ours = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            ours[parts[0]] = float(parts[1])
    theirs = torch_rows()
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    print(f"{'workload':28s} {'ember us':>10s} {'torch us':>10s} {'ratio':>7s}")
    for k, t in theirs.items():
        e = ours.get(k, float("nan"))
        print(f"{k:28s} {e:10.2f} {t:10.2f} {e / t:7.2f}")


if __name__ == "__main__":
    main()
