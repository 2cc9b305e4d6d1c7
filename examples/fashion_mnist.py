"""The main job in Python: the Fashion-MNIST CNN of examples/fashion_mnist.cpp, same recipe.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/fashion_mnist.py [--epochs 3]
        [--batch-size 64] [--lr 1e-3] [--threads N] [--seed 0] [--limit N] [--out DIR]
        [--backend ember|torch] [--test-limit N] [--amp none|bf16]
        [--ddp] [--checkpoint-dir DIR] [--checkpoint-every N] [--device cpu|cuda|cuda:N]

The script is written against PyTorch's API: `--backend torch` runs the very same code on
PyTorch (for the side-by-side benchmark), `--backend ember` runs it with `import ember as torch`.

--ddp trains data-parallel under a launcher (`ember-run --nproc-per-node 2
examples/fashion_mnist.py --ddp`, or torchrun with --backend torch): every rank draws the same
global batches as the single-process run and takes its share of each; DistributedDataParallel
averages the gradients. --checkpoint-dir checkpoints at each epoch's end and every
--checkpoint-every steps, and a (re)start resumes after the latest checkpoint (the model, the
optimizer, the epoch, the batch within it and the sampler's generator state), so a restarted job
ends with the parameters of an uninterrupted one.

--amp bf16 runs the forward passes and the loss under CPU autocast with bfloat16
(`torch.autocast("cpu", dtype=torch.bfloat16)`): convolutions and linear layers compute in
bfloat16, the parameters and the optimizer stay float32 (on the GPU: autocast("cuda")).

--device cuda trains on the GPU: the model and the Adam state live there, the DataLoader pins
each batch (pin_memory=True) and the batches go to the device with non_blocking copies. Without
a GPU the script stops with an error.
"""

import argparse
import gzip
import os
import struct
import sys
import time

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx_numpy(path):
    import numpy as np
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    zero, kind, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or kind != 0x08:
        raise RuntimeError(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST's training-set pixel mean and std, in [0, 1]


def load(torch, backend, root, train):
    """Images as float32 N×1×28×28, scaled to [0, 1] and standardised, and int64 labels."""
    prefix = "train" if train else "t10k"
    if backend == "ember":
        from ember.vision.datasets import FashionMNIST
        ds = FashionMNIST(root, train=train)
        images, labels = ds.data, ds.targets
    else:
        images = torch.from_numpy(read_idx_numpy(f"{root}/{prefix}-images-idx3-ubyte.gz").copy())
        labels = torch.from_numpy(read_idx_numpy(f"{root}/{prefix}-labels-idx1-ubyte.gz").copy())
    return images.unsqueeze(1).float().div(255).sub(MEAN).div(STD), labels.long()


def build(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))


def autocast(torch, args):
    """The --amp region: autocast with bfloat16 on the training device, or a disabled one."""
    return torch.autocast(torch.device(args.device).type, dtype=torch.bfloat16,
                          enabled=args.amp == "bf16")


def on_device(x, args):
    """A CPU tensor on the training device (non_blocking: the source is pinned on the GPU)."""
    return x if args.device == "cpu" else x.to(args.device, non_blocking=True)


def evaluate(torch, model, images, labels, args):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(images), 1000):
            xb, yb = on_device(images[i:i + 1000], args), on_device(labels[i:i + 1000], args)
            with autocast(torch, args):
                logits = model(xb).float()
            loss += float(torch.nn.functional.cross_entropy(logits, yb, reduction="sum"))
            correct += int((logits.argmax(1) == yb).sum())
    model.train()
    return loss / len(images), correct / len(images)


def share(batch_size, world, rank):
    """The [begin, end) of rank `rank`'s contiguous piece of a global batch of `batch_size`."""
    piece, extra = divmod(batch_size, world)
    begin = rank * piece + min(rank, extra)
    return begin, begin + piece + (1 if rank < extra else 0)


def train_resumable(torch, args, train_x, train_y, test_x, test_y):
    """The --ddp / --checkpoint-dir loop (see the module docstring); returns the history."""
    dist = torch.distributed
    rank, world = 0, 1
    if args.ddp:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    lead = rank == 0
    model = build(torch.nn)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    g = torch.Generator()
    g.manual_seed(args.seed)
    sampler = torch.utils.data.BatchSampler(
        torch.utils.data.RandomSampler(range(len(train_x)), generator=g), args.batch_size,
        drop_last=False)
    state = {"epoch": 1, "batch": 0, "loss_sum": 0.0, "seen": 0, "history": [],
             "epoch_rng": g.get_state()}
    path = os.path.join(args.checkpoint_dir, "latest_py.pt") if args.checkpoint_dir else ""
    if path and os.path.exists(path):
        ckpt = torch.load(path)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optim"])
        state = ckpt["state"]
        if lead:
            print(f"resumed from {path} at epoch {state['epoch']}, batch {state['batch']}")
    if args.ddp:
        # Broadcasts rank 0's parameters, then averages gradients during backward.
        net = torch.nn.parallel.DistributedDataParallel(model)
    else:
        net = model
    if lead:
        print(f"{args.backend} | Fashion-MNIST CNN | {len(train_x)} training, "
              f"{args.test_limit or len(test_x)} test images | threads {torch.get_num_threads()}"
              + (f" | DDP on {world} ranks (gloo)" if args.ddp else ""))
        print(model)

    def checkpoint(st):
        if path and lead:
            os.makedirs(args.checkpoint_dir, exist_ok=True)
            tmp = path + ".tmp"
            torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "state": st}, tmp)
            os.replace(tmp, path)  # a crash never leaves a torn checkpoint
        if path and args.ddp:
            dist.barrier()

    fault_step = int(os.environ.get("EMBER_FAULT_AT_STEP", "-1"))
    restarts = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    n_batches = (len(train_x) + args.batch_size - 1) // args.batch_size
    global_step = (state["epoch"] - 1) * n_batches + state["batch"]
    local_loss, local_seen = 0.0, 0

    def fold():
        nonlocal local_loss, local_seen
        t = torch.tensor([local_loss, float(local_seen)], dtype=torch.float64)
        if args.ddp:
            dist.all_reduce(t)
        state["loss_sum"] += float(t[0])
        state["seen"] += int(t[1])
        local_loss, local_seen = 0.0, 0

    while state["epoch"] <= args.epochs:
        g.set_state(state["epoch_rng"])
        start = time.perf_counter()
        for b, idx in enumerate(sampler):
            if b < state["batch"]:
                continue
            if global_step == fault_step and restarts == 0 and world > 1 and rank == world - 1:
                print(f"rank {rank} exits at step {global_step} (EMBER_FAULT_AT_STEP)",
                      file=sys.stderr, flush=True)
                os._exit(1)
            lo, hi = share(len(idx), world, rank)
            mine = torch.tensor(idx[lo:hi], dtype=torch.long)
            xb, yb = train_x[mine], train_y[mine]
            opt.zero_grad()
            with autocast(torch, args):
                loss_sum = torch.nn.functional.cross_entropy(net(xb), yb, reduction="sum")
            (loss_sum * (world / len(idx))).backward()
            opt.step()
            local_loss += float(loss_sum)
            local_seen += hi - lo
            global_step += 1
            state["batch"] = b + 1
            if (args.checkpoint_every and global_step % args.checkpoint_every == 0
                    and b + 1 < n_batches):
                fold()
                checkpoint(state)
        fold()
        secs = time.perf_counter() - start
        result = torch.zeros(2, dtype=torch.float64)
        if lead:
            n_test = args.test_limit or len(test_x)
            result = torch.tensor(evaluate(torch, model, test_x[:n_test], test_y[:n_test], args),
                                  dtype=torch.float64)
        if args.ddp:
            dist.broadcast(result, 0)
        test_loss, acc = float(result[0]), float(result[1])
        train_loss = state["loss_sum"] / max(state["seen"], 1)
        state["history"].append((train_loss, test_loss, acc, secs))
        if lead:
            print(f"epoch {state['epoch']}: train loss {train_loss:.4f} | test loss "
                  f"{test_loss:.4f} | test accuracy {100 * acc:.2f}% | {secs:.1f} s, "
                  f"{state['seen'] / secs:.0f} images/s", flush=True)
        state.update(epoch=state["epoch"] + 1, batch=0, loss_sum=0.0, seen=0,
                     epoch_rng=g.get_state())
        checkpoint(state)
    if args.out and lead:
        os.makedirs(args.out, exist_ok=True)
        out = os.path.join(args.out, "checkpoint_py.safetensors")
        if args.backend == "ember":
            torch.save(model.state_dict(), out)
            print(f"wrote {out}")
    if args.ddp:
        dist.barrier()
        dist.destroy_process_group()
    return state["history"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="train on the first N images only")
    p.add_argument("--data", default=DATA)
    p.add_argument("--out", default="")
    p.add_argument("--backend", choices=["ember", "torch"], default="ember")
    p.add_argument("--test-limit", type=int, default=0, help="evaluate on the first N only")
    p.add_argument("--ddp", action="store_true", help="data-parallel under ember-run/torchrun")
    p.add_argument("--checkpoint-dir", default="", help="checkpoint here and resume from it")
    p.add_argument("--checkpoint-every", type=int, default=0, help="also every N steps")
    p.add_argument("--amp", choices=["none", "bf16"], default="none",
                   help="bf16: forward and loss under autocast with bfloat16")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    args = p.parse_args(argv)
    if args.checkpoint_every and not args.checkpoint_dir:
        p.error("--checkpoint-every needs --checkpoint-dir")
    if args.device != "cpu" and not args.device.startswith("cuda"):
        p.error("--device takes cpu, cuda or cuda:N")
    if args.device != "cpu" and (args.ddp or args.checkpoint_dir):
        p.error("--device cuda trains in the single-process loop (without --ddp or "
                "--checkpoint-dir)")

    if args.backend == "torch":
        import torch
    else:
        import ember as torch
    if args.device != "cpu" and not torch.cuda.is_available():
        sys.exit(f"fashion_mnist.py: --device {args.device}: no CUDA GPU is available "
                 "(run with --device cpu)")
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data = torch.utils.data
    DataLoader, TensorDataset = data.DataLoader, data.TensorDataset
    BatchSampler, RandomSampler = data.BatchSampler, data.RandomSampler

    train_x, train_y = load(torch, args.backend, args.data, True)
    test_x, test_y = load(torch, args.backend, args.data, False)
    if args.limit:
        train_x, train_y = train_x[:args.limit], train_y[:args.limit]
    if args.ddp or args.checkpoint_dir:
        return train_resumable(torch, args, train_x, train_y, test_x, test_y)
    if args.test_limit:
        test_x, test_y = test_x[:args.test_limit], test_y[:args.test_limit]
    model = build(torch.nn)
    if args.device != "cpu":
        # The parameters move before the optimizer sees them: Adam's state is made there.
        model.to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    # Whole batches by index: the sampler yields a list of indices, the dataset slices it.
    ds = TensorDataset(train_x, train_y)
    g = torch.Generator()
    g.manual_seed(args.seed)
    loader = DataLoader(ds, batch_size=None,
                        sampler=BatchSampler(RandomSampler(ds, generator=g), args.batch_size,
                                             drop_last=False),
                        pin_memory=args.device != "cpu")
    print(f"{args.backend} | Fashion-MNIST CNN | {len(train_x)} training, {len(test_x)} test "
          f"images | amp {args.amp} | threads {torch.get_num_threads()}"
          + (f" | {args.device} ({torch.cuda.get_device_name(args.device)})"
             if args.device != "cpu" else ""))
    print(model)
    tty = sys.stderr.isatty()
    history = []
    for epoch in range(1, args.epochs + 1):
        start, seen, loss_sum = time.perf_counter(), 0, 0.0
        for xb, yb in loader:
            xb, yb = on_device(xb, args), on_device(yb, args)
            opt.zero_grad()
            with autocast(torch, args):
                loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            seen += len(xb)
            loss_sum += float(loss) * len(xb)
            if tty and (seen // len(xb)) % 20 == 0:
                rate = seen / (time.perf_counter() - start)
                print(f"\repoch {epoch}/{args.epochs} {seen}/{len(train_x)} loss "
                      f"{loss_sum / seen:.4f} {rate:.0f} img/s", end="", file=sys.stderr)
        secs = time.perf_counter() - start
        if tty:
            print(file=sys.stderr)
        test_loss, acc = evaluate(torch, model, test_x, test_y, args)
        history.append((loss_sum / seen, test_loss, acc, secs))
        print(f"epoch {epoch}: train loss {loss_sum / seen:.4f} | test loss {test_loss:.4f} | "
              f"test accuracy {100 * acc:.2f}% | {secs:.1f} s, {seen / secs:.0f} images/s",
              flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, "checkpoint_py.safetensors")
        if args.backend == "ember":
            torch.save(model.state_dict(), path)
            print(f"wrote {path}")
    return history


if __name__ == "__main__":
    main()
