"""One training epoch of the Fashion-MNIST CNN (examples/fashion_mnist.*), ember against
PyTorch 1.13 with the same model, batch, optimizer and in-memory data, each in its own process
on a fixed thread count. Prints seconds per epoch, images/s, peak RSS and the ratios, and the
limit: the epoch's FLOP count (convolutions and linear layers, forward and backward) over the
machine's float32 FMA peak at that thread count, measured by bench/fma_peak (the best ISA's
best repetition, on each thread's own clock), and each row's time as a share of that bound.

    /usr/bin/python3 bench/cnn_epoch.py --build build/release [--threads 2] [--limit N]
        [--repeat R] [--fma-peak PATH]
"""

import argparse
import json
import os
import statistics
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


def model_flop_per_image():
    """FLOPs (2 per multiply-add) of one image through the model of examples/fashion_mnist.*:
    forward, then backward: the weight gradients of every layer and the data gradients of all
    but the first convolution (the images need no gradient)."""
    conv1 = 2 * 32 * 1 * 9 * 26 * 26
    conv2 = 2 * 64 * 32 * 9 * 11 * 11
    fc1, fc2 = 2 * 1600 * 128, 2 * 128 * 10
    return (conv1 + conv2 + fc1 + fc2) + (conv1 + 2 * conv2 + 2 * fc1 + 2 * fc2)


def fma_peak(build, threads, path=""):
    """GFLOP/s of bench/fma_peak at `threads` (the best ISA's best repetition), or None."""
    path = path or os.path.join(build, "bench", "fma_peak")
    if not os.access(path, os.X_OK):
        print(f"cnn_epoch: no fma_peak at {path} (ember-build --target fma_peak); the FLOP "
              "bound is not shown", file=sys.stderr)
        return None
    out = subprocess.run([path, str(threads)], capture_output=True, text=True, check=True).stdout
    rates = [json.loads(line)["best_gflops"] for line in out.splitlines() if line.strip()]
    return max(rates) if rates else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1,
                   help="runs per backend, interleaved; the median is shown")
    p.add_argument("--fma-peak", default="", help="path of bench/fma_peak (default: in --build)")
    p.add_argument("--no-cpp", action="store_true", help="skip the C++ example")
    args = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               EMBER_NUM_THREADS=str(args.threads),
               PYTHONPATH=os.path.join(args.build, "python"))
    common = ["--epochs", "1", "--threads", str(args.threads)]
    if args.limit:
        common += ["--limit", str(args.limit)]
    py = [sys.executable, os.path.join(ROOT, "examples", "fashion_mnist.py")] + common
    n = args.limit or 60000
    cmds = [("PyTorch 1.13 (Python)", py + ["--backend", "torch"]),
            ("ember (Python)", py + ["--backend", "ember"])]
    exe = os.path.join(args.build, "fashion_mnist")
    if os.path.exists(exe) and not args.no_cpp:
        cmds.append(("ember (C++)", [exe] + common + ["--out", os.path.join(
            args.build, "bench_fashion_mnist")]))
    runs = {name: [] for name, _ in cmds}
    loads = []
    for _ in range(args.repeat):  # interleaved: a load change hits every backend alike
        for name, cmd in cmds:
            loads.append(os.getloadavg()[0])
            runs[name].append(run(cmd, env))
    rows = [(name, tuple(statistics.median(r[i] for r in runs[name]) for i in range(3)))
            for name, _ in cmds]
    peak = fma_peak(args.build, args.threads, args.fma_peak)
    flop = model_flop_per_image() * n
    probe = "import ember; print(ember.backends.cpu.get_cpu_capability())"
    cap = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True).stdout.strip() or "?"
    print(f"Fashion-MNIST CNN, one epoch of {n} images, batch 64, Adam, {args.threads} threads, "
          f"ember kernel set {cap}, median of {args.repeat}, load {statistics.median(loads):.1f}")
    if peak:
        bound = flop / (peak * 1e9)
        print(f"limit: {flop / 1e12:.3f} TFLOP per epoch / FMA peak {peak:.1f} GFLOP/s "
              f"({args.threads} threads, bench/fma_peak) = {bound:.2f} s")
    print(f"{'':24} {'epoch s':>8} {'img/s':>8} {'vs torch':>9} {'acc %':>7} {'peak MiB':>9}"
          + (f" {'bound/time':>10}" if peak else ""))
    base = rows[0][1][0]
    for name, (secs, mib, acc) in rows:
        print(f"{name:24} {secs:8.2f} {n / secs:8.0f} {secs / base:8.2f}x {acc:7.2f} "
              f"{mib:9.0f}" + (f" {100 * bound / secs:9.0f}%" if peak else ""))


if __name__ == "__main__":
    main()
