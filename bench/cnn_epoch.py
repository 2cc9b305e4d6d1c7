"""One training epoch of the Fashion-MNIST CNN (examples/fashion_mnist.*), ember against
PyTorch 1.13 with the same model, batch, optimizer and in-memory data, each in its own process
on a fixed thread count. Prints seconds per epoch, images/s, peak RSS and the ratios.

    /usr/bin/python3 bench/cnn_epoch.py --build build/release [--threads 2] [--limit N]
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env):
    """(epoch seconds, peak RSS MiB, accuracy) of one child process (its own rusage)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"cnn_epoch: {' '.join(cmd)} failed:\n{out}\n{err}")
    m = re.search(r"epoch 1: .*test accuracy ([\d.]+)% \| ([\d.]+) s", out)
    if not m:
        sys.exit(f"cnn_epoch: no epoch line in the output of {' '.join(cmd)}:\n{out}")
    return float(m.group(2)), usage.ru_maxrss / 1024, float(m.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--limit", type=int, default=0)
    args = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               EMBER_NUM_THREADS=str(args.threads),
               PYTHONPATH=os.path.join(args.build, "python"))
    common = ["--epochs", "1", "--threads", str(args.threads)]
    if args.limit:
        common += ["--limit", str(args.limit)]
    py = [sys.executable, os.path.join(ROOT, "examples", "fashion_mnist.py")] + common
    n = args.limit or 60000
    rows = [("PyTorch 1.13 (Python)", run(py + ["--backend", "torch"], env)),
            ("ember (Python)", run(py + ["--backend", "ember"], env))]
    exe = os.path.join(args.build, "fashion_mnist")
    if os.path.exists(exe):
        rows.append(("ember (C++)", run([exe] + common + ["--out", os.path.join(
            args.build, "bench_fashion_mnist")], env)))
    print(f"Fashion-MNIST CNN, one epoch of {n} images, batch 64, Adam, {args.threads} threads, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'':24} {'epoch s':>8} {'img/s':>8} {'vs torch':>9} {'acc %':>7} {'peak MiB':>9}")
    base = rows[0][1][0]
    for name, (secs, peak, acc) in rows:
        print(f"{name:24} {secs:8.2f} {n / secs:8.0f} {secs / base:8.2f}x {acc:7.2f} "
              f"{peak:9.0f}")


if __name__ == "__main__":
    main()
