"""ember.distributed against torch.distributed (Gloo, torch 1.13), side by side in one run, on
world size 2 over loopback:

(a) all_reduce bus bandwidth, float32, 4 KB ... 64 MB: busbw = 2(n-1)/n x bytes / time;
(b) one DDP training step of the Fashion-MNIST CNN (examples/fashion_mnist.py's model, Adam,
    --batch images per rank): ember DDP vs torch DDP;
(c) overlap: the share of the gradient all-reduce hidden behind backward,
    hidden = 1 - (t_ddp_step - t_local_step) / t_allreduce, clipped to [0, 1], where
    t_local_step is the same step without DDP (both ranks busy, no communication; the
    difference is the median over iterations that run one step of each back to back) and
    t_allreduce the all-reduces of the step's gradient buckets (each library's own layout)
    run on their own; with the default 25 MB buckets and with 0.25 MB ones (the first-bucket
    cap lowered to match). It also prints the bucket layouts, and for ember how many bucket
    all-reduces started before backward ended.

Two pairs of rank processes (one pair ember, one pair torch) start once; the parent sends each
measurement to one pair at a time, alternating between them, so both see the same machine.
Every rank runs 1 thread (OMP_NUM_THREADS=EMBER_NUM_THREADS=1). Times are medians over the
iterations (each the slower rank's time of that iteration, after a barrier).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/distributed_side_by_side.py \\
        [--rounds 3] [--batch 32] [--quick]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [4 << 10 << (2 * i) for i in range(8)]  # 4 KB, 16 KB, ..., 64 MB


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------
# Rank processes: read one command per line from stdin, answer one JSON line on stdout.


def build_cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))


# DDP variants measured in (b)/(c): the default buckets, and small ones (so that the all-reduce
# of the big fc1 bucket can run while backward computes the convolutions' gradients).
CAPS_MB = {"default": 25.0, "small": 0.25}


def child(lib, batch):
    if lib == "torch":
        import torch
    else:
        import ember as torch
    torch.set_num_threads(1)
    dist = torch.distributed
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    local_model = build_cnn(torch.nn)
    local_opt = torch.optim.Adam(local_model.parameters(), lr=1e-3)
    layouts = {}
    ddps, opts, grads = {}, {}, {}
    params = list(local_model.parameters())
    default_first = getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", 1 << 20)
    for name, cap in CAPS_MB.items():
        # Both libraries cap one bucket at dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB) whatever
        # bucket_cap_mb says, which puts the whole CNN in one bucket: lower it to the cap.
        first = min(default_first, int(cap * (1 << 20)))
        dist._DEFAULT_FIRST_BUCKET_BYTES = first
        ddps[name] = torch.nn.parallel.DistributedDataParallel(build_cnn(torch.nn),
                                                               bucket_cap_mb=cap)
        dist._DEFAULT_FIRST_BUCKET_BYTES = default_first
        opts[name] = torch.optim.Adam(ddps[name].parameters(), lr=1e-3)
        if lib == "ember":
            buckets = ddps[name].reducer.bucket_indices
        else:
            rev = params[::-1]
            buckets = [[len(params) - 1 - i for i in b] for b in
                       dist._compute_bucket_assignment_by_size(
                           rev, [first, int(cap * (1 << 20))])[0]]
        # The all-reduces of the step's buckets, in launch order, measured on their own.
        grads[name] = [torch.zeros(sum(params[i].numel() for i in b)) for b in buckets]
        layouts[name] = [sorted(b) for b in buckets]
    g = torch.Generator()
    g.manual_seed(rank)
    x = torch.randn(batch, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (batch,), generator=g)
    F = torch.nn.functional

    def timed(fn, iters, warmup=2):
        for _ in range(warmup):
            fn()
        out = []
        for _ in range(iters):
            dist.barrier()
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    def ddp_step(name):
        opts[name].zero_grad()
        F.cross_entropy(ddps[name](x), y).backward()
        opts[name].step()

    def local_step():
        local_opt.zero_grad()
        F.cross_entropy(local_model(x), y).backward()
        local_opt.step()

    def grad_allreduce(name):
        for t in grads[name]:
            dist.all_reduce(t)

    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "quit":
            break
        if cmd[0] == "allreduce":
            t = torch.ones(int(cmd[1]) // 4)
            res = timed(lambda: dist.all_reduce(t), int(cmd[2]))
        elif cmd[0] == "ddp":
            res = timed(lambda: ddp_step(cmd[2]), int(cmd[1]))
        elif cmd[0] == "local":
            res = timed(local_step, int(cmd[1]))
        elif cmd[0] == "overhead":
            # DDP step minus local step, back to back in each iteration (drift cancels).
            iters, name = int(cmd[1]), cmd[2]
            res = []
            for _ in range(iters):
                t_ddp = timed(lambda: ddp_step(name), 1, warmup=0)[0]
                t_local = timed(local_step, 1, warmup=0)[0]
                res.append(t_ddp - t_local)
        elif cmd[0] == "grad_allreduce":
            res = timed(lambda: grad_allreduce(cmd[2]), int(cmd[1]))
        elif cmd[0] == "info":
            ddp = ddps[cmd[1]]
            res = {"buckets": layouts[cmd[1]]}
            if lib == "ember":
                res.update(ddp._get_ddp_logging_data())
        else:
            res = {"error": f"unknown command {cmd}"}
        print(json.dumps(res), flush=True)
    dist.barrier()
    dist.destroy_process_group()


# ---------------------------------------------------------------------------------------------
# The parent


class Pair:
    """Two rank processes of one library."""

    def __init__(self, lib, batch, env):
        port = free_port()
        self.lib = lib
        self.procs = []
        for rank in range(2):
            e = dict(env, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                     MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
            self.procs.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--child", lib, "--batch",
                 str(batch)], env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                start_new_session=True))

    def info(self, command):
        """rank 0's answer to `command` (a dict)."""
        for p in self.procs:
            p.stdin.write(command + "\n")
            p.stdin.flush()
        answers = [json.loads(p.stdout.readline()) for p in self.procs]
        return answers[0]

    def run(self, command):
        for p in self.procs:
            p.stdin.write(command + "\n")
            p.stdin.flush()
        answers = []
        for p in self.procs:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.lib} rank exited during '{command}'")
            answers.append(json.loads(line))
        # Per iteration, the slower rank.
        return [max(ts) for ts in zip(*answers)]

    def close(self):
        for p in self.procs:
            try:
                p.stdin.write("quit\n")
                p.stdin.flush()
            except OSError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def alternate(pairs, command, rounds):
    """Runs `command` on each pair in turn, `rounds` times; returns lib -> all samples."""
    samples = {pair.lib: [] for pair in pairs}
    for r in range(rounds):
        order = pairs if r % 2 == 0 else list(reversed(pairs))
        for pair in order:
            samples[pair.lib] += pair.run(command)
    return samples


def fmt_bytes(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", choices=["ember", "torch"])
    ap.add_argument("--batch", type=int, default=32, help="images per rank per DDP step")
    ap.add_argument("--rounds", type=int, default=3, help="alternations per measurement")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.batch)

    env = dict(os.environ, OMP_NUM_THREADS="1", EMBER_NUM_THREADS="1")
    build_python = os.path.join(HERE, "..", "build", "release", "python")
    if os.path.isdir(build_python):
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.abspath(build_python)] + [p for p in [env.get("PYTHONPATH")] if p])
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} "
          f"({os.cpu_count()} CPUs); 2 ranks per library, 1 thread each")
    pairs = [Pair("ember", args.batch, env), Pair("torch", args.batch, env)]
    try:
        rounds = 1 if args.quick else args.rounds
        print("\n(a) all_reduce bus bandwidth, float32, world size 2 (median)")
        print(f"{'size':>7} | {'ember GB/s':>10} | {'torch GB/s':>10} | {'ember/torch':>11} | "
              f"{'ember us':>9} | {'torch us':>9}")
        for nbytes in SIZES:
            iters = max(3, min(200, (64 << 20) // nbytes // 4))
            if args.quick:
                iters = max(2, iters // 10)
            s = alternate(pairs, f"allreduce {nbytes} {iters}", rounds)
            t = {k: statistics.median(v) for k, v in s.items()}
            bw = {k: 2 * (2 - 1) / 2 * nbytes / v / 1e9 for k, v in t.items()}
            print(f"{fmt_bytes(nbytes):>7} | {bw['ember']:10.3f} | {bw['torch']:10.3f} | "
                  f"{bw['ember'] / bw['torch']:10.2f}x | {t['ember'] * 1e6:9.0f} | "
                  f"{t['torch'] * 1e6:9.0f}", flush=True)

        steps = 5 if args.quick else 20

        def med(command):
            return {k: statistics.median(v) for k, v in alternate(pairs, command,
                                                                  rounds).items()}

        local = med(f"local {steps}")
        ddp = {v: med(f"ddp {steps} {v}") for v in CAPS_MB}
        ar = {v: med(f"grad_allreduce {steps} {v}") for v in CAPS_MB}
        overhead = {v: med(f"overhead {steps} {v}") for v in CAPS_MB}
        print(f"\n(b) DDP step of the Fashion-MNIST CNN, {args.batch} images per rank, Adam "
              "(median ms)")
        print(f"{'':>34} | {'ember':>8} | {'torch':>8} | ember/torch")
        rows = [("DDP step (bucket_cap_mb 25)", ddp["default"]),
                ("DDP step (bucket_cap_mb 0.25)", ddp["small"]),
                ("local step (no DDP)", local),
                ("gradient all-reduce (1 bucket)", ar["default"]),
                ("gradient all-reduce (0.25 MB caps)", ar["small"])]
        for name, d in rows:
            print(f"{name:>34} | {d['ember'] * 1e3:8.2f} | {d['torch'] * 1e3:8.2f} | "
                  f"{d['ember'] / d['torch']:.2f}x")

        print("\n(c) all-reduce hidden behind backward: 1 - (t_ddp - t_local) / t_allreduce")
        for v, cap in CAPS_MB.items():
            info = {pair.lib: pair.info(f"info {v}") for pair in pairs}
            line = (f"bucket_cap_mb {cap:>5}: buckets (parameter indices, launch order) ember "
                    f"{info['ember']['buckets']}, torch {info['torch']['buckets']}")
            if "buckets_launched_during_backward" in info["ember"]:
                line += (f"; ember launched {info['ember']['buckets_launched_during_backward']} "
                         f"of {info['ember']['num_buckets']} during backward")
            print(line)
        for v, cap in CAPS_MB.items():
            for lib in ("ember", "torch"):
                hidden = 1 - overhead[v][lib] / ar[v][lib]
                print(f"bucket_cap_mb {cap:>5} {lib:>6}: "
                      f"{min(1.0, max(0.0, hidden)) * 100:5.1f}% (unclipped {hidden * 100:.1f}%;"
                      f" DDP step - local step {overhead[v][lib] * 1e3:.2f} ms (paired median),"
                      f" all-reduce {ar[v][lib] * 1e3:.2f} ms)")
    finally:
        for pair in pairs:
            pair.close()
    print(f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
