"""The DistributedDataParallel tutorial, as an ordinary PyTorch script: spawns one process per
rank with multiprocessing, joins a Gloo process group, trains a small model with DDP on the
ranks' shares of a dataset (DistributedSampler), and saves rank 0's state_dict.

    python3 examples/ddp_toy.py [--backend ember|torch] [--world-size 2] [--port 29500]
        [--epochs 2] [--init FILE] [--data FILE] [--out FILE] [--no-shuffle]

`--init` and `--data` are torch.save'd dicts (weights; x and y) so that both backends can start
from the same numbers; without them the script draws its own.
"""

import argparse
import os
import sys


def _backend_from_argv(argv):
    for i, a in enumerate(argv):
        if a.startswith("--backend="):
            return a.split("=", 1)[1]
        if a == "--backend" and i + 1 < len(argv):
            return argv[i + 1]
    return "ember"


if _backend_from_argv(sys.argv) == "torch":
    import torch
else:
    import ember as torch
dist = torch.distributed
mp = torch.multiprocessing
nn = torch.nn
DDP = torch.nn.parallel.DistributedDataParallel
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def train(rank, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("gloo", rank=rank, world_size=args.world_size)
    torch.manual_seed(0)
    model = ToyModel()
    if args.init:
        model.load_state_dict(torch.load(args.init))
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01, momentum=0.9)
    if args.data:
        d = torch.load(args.data)
        x, y = d["x"], d["y"]
    else:
        g = torch.Generator().manual_seed(1)
        x, y = torch.randn(64, 10, generator=g), torch.randn(64, 5, generator=g)
    dataset = TensorDataset(x, y)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, shuffle=args.shuffle, seed=3)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    loss_fn = nn.MSELoss()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros(())
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        dist.all_reduce(total)
        if rank == 0:
            print(f"epoch {epoch}: mean loss {total.item() / (len(loader) * args.world_size):.6f}")
    if rank == 0 and args.out:
        torch.save({k: v.detach().clone() for k, v in ddp_model.state_dict().items()}, args.out)
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="ember", choices=["ember", "torch"])
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--port", type=int, default=29500)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--init", default="")
    p.add_argument("--data", default="")
    p.add_argument("--out", default="")
    p.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                   help="keep the dataset order (the backends' random streams differ)")
    args = p.parse_args()
    mp.spawn(train, args=(args,), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
