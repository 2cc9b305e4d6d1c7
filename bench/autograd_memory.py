#!/usr/bin/env python3
"""Peak memory of backward through a long elementwise chain, ember against PyTorch.

Each library runs in its own process: x (1M float32, requires grad) goes through N sin() ops
(each saves its input for backward, as in PyTorch), then sum().backward(). The peak resident
set size above the process's baseline is reported for the forward and for forward+backward.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/autograd_memory.py [--n 64]
"""

import argparse
import json
import resource
import subprocess
import sys

CHILD = r"""
import json, resource, sys
lib = __import__(sys.argv[1])
n, size = int(sys.argv[2]), int(sys.argv[3])
lib.set_num_threads(1)
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
x = lib.randn(size, dtype=lib.float32).requires_grad_()
base = peak_mb()
y = x
for _ in range(n):
    y = y.sin()
fwd = peak_mb()
y.sum().backward()
total = peak_mb()
ok = bool(abs(float(x.grad.sum())) >= 0)
print(json.dumps({"base": base, "forward": fwd - base, "total": total - base, "ok": ok}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64, help="chain length (default 64)")
    ap.add_argument("--size", type=int, default=1 << 20, help="elements (default 1M)")
    args = ap.parse_args()
    res = {}
    for lib in ("ember", "torch"):
        out = subprocess.run([sys.executable, "-c", CHILD, lib, str(args.n), str(args.size)],
                             capture_output=True, text=True, check=True)
        res[lib] = json.loads(out.stdout.strip().splitlines()[-1])
    mb = args.size * 4 / 2**20
    print(f"chain of {args.n} sin() on {args.size} float32 ({mb:.0f} MiB per tensor); "
          "peak RSS above baseline, MiB")
    print(f"{'':8}{'forward':>10}{'fwd+bwd':>10}")
    for lib, r in res.items():
        print(f"{lib:8}{r['forward']:10.0f}{r['total']:10.0f}")
    e, t = res["ember"]["total"], res["torch"]["total"]
    print(f"ember / torch peak (fwd+bwd): {e / t:.2f}")


if __name__ == "__main__":
    main()
