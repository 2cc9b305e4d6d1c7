"""Hogwild training: several processes update one model in shared memory without locks.

    PYTHONPATH=build/release/python python3 examples/hogwild.py --processes 2

Each process trains the shared model on its own share of a synthetic two-class problem (a
noisy linear rule in 20 dimensions); the parent then evaluates the model it never trained."""

import argparse

import ember
import ember.multiprocessing as mp
from ember import nn


def make_data(n, d, seed):
    g = ember.Generator().manual_seed(seed)
    x = ember.randn(n, d, generator=g)
    w = ember.randn(d, generator=g)
    y = ((x @ w + 0.1 * ember.randn(n, generator=g)) > 0).long()
    return x, y


def train(rank, model, x, y, epochs, lr, processes):
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    mine = ember.arange(rank, x.shape[0], processes)
    for _ in range(epochs):
        for idx in mine[ember.randperm(mine.numel())].split(64):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--start-method", default="spawn", choices=mp.get_all_start_methods())
    args = ap.parse_args()

    ember.manual_seed(0)
    x, y = make_data(8192, 20, seed=1)
    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2))
    model.share_memory()

    def accuracy():
        with ember.no_grad():
            return (model(x).argmax(1) == y).double().mean().item()

    print(f"accuracy before: {accuracy():.3f}")
    mp.spawn(train, args=(model, x, y, args.epochs, args.lr, args.processes),
             nprocs=args.processes, start_method=args.start_method)
    print(f"accuracy after {args.processes} processes: {accuracy():.3f}")


if __name__ == "__main__":
    main()
