"""The main job in Python: the Fashion-MNIST CNN of examples/fashion_mnist.cpp, same recipe.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/fashion_mnist.py [--epochs 3]
        [--batch-size 64] [--lr 1e-3] [--threads N] [--seed 0] [--limit N] [--out DIR]
        [--backend ember|torch]

The script is written against PyTorch's API: `--backend torch` runs the very same code on
PyTorch (for the side-by-side benchmark), `--backend ember` runs it with `import ember as torch`.
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


def evaluate(torch, model, images, labels):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(images), 1000):
            logits = model(images[i:i + 1000])
            loss += float(torch.nn.functional.cross_entropy(logits, labels[i:i + 1000],
                                                            reduction="sum"))
            correct += int((logits.argmax(1) == labels[i:i + 1000]).sum())
    model.train()
    return loss / len(images), correct / len(images)


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
    args = p.parse_args(argv)

    if args.backend == "torch":
        import torch
    else:
        import ember as torch
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
    model = build(torch.nn)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    # Whole batches by index: the sampler yields a list of indices, the dataset slices it.
    ds = TensorDataset(train_x, train_y)
    g = torch.Generator()
    g.manual_seed(args.seed)
    loader = DataLoader(ds, batch_size=None,
                        sampler=BatchSampler(RandomSampler(ds, generator=g), args.batch_size,
                                             drop_last=False))
    print(f"{args.backend} | Fashion-MNIST CNN | {len(train_x)} training, {len(test_x)} test "
          f"images | threads {torch.get_num_threads()}")
    print(model)
    tty = sys.stderr.isatty()
    history = []
    for epoch in range(1, args.epochs + 1):
        start, seen, loss_sum = time.perf_counter(), 0, 0.0
        for xb, yb in loader:
            opt.zero_grad()
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
        test_loss, acc = evaluate(torch, model, test_x, test_y)
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
