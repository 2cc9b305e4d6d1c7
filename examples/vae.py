"""A variational autoencoder on Fashion-MNIST, written against PyTorch's API.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/vae.py [--batches 200]
        [--batch-size 128] [--latent 16] [--seed 0] [--out DIR] [--backend ember|torch]

It uses what such scripts reach for beyond ops: `torch.distributions` (a Normal posterior with
rsample and kl_divergence against the prior, a Bernoulli likelihood), `torchvision.utils.save_image`
for a grid of samples, and `torch.save(model)` / `torch.load` of the whole model and of a
checkpoint dict with the optimizer state. `--backend torch` runs the same code on PyTorch.
Prints one line per 50 batches and, at the end, `final_loss=<nats per image>`.
"""

import argparse
import gzip
import os
import struct
import sys

DATA = "/usr/share/datasets/fashion-mnist"

# The backend is chosen before the model class is defined: torch.save(model) pickles the class
# by reference, so it must live at module level.
def _backend_from_argv(argv):
    for i, a in enumerate(argv):
        if a.startswith("--backend="):
            return a.split("=", 1)[1]
        if a == "--backend" and i + 1 < len(argv):
            return argv[i + 1]
    return "ember"


if _backend_from_argv(sys.argv) == "torch":
    import torch
    import torchvision
else:
    import ember as torch
    import ember.vision as torchvision
# Attribute access, not `from torch import ...`, which would import the module named torch.
nn = torch.nn
Bernoulli, Normal = torch.distributions.Bernoulli, torch.distributions.Normal
kl_divergence = torch.distributions.kl_divergence

H = W = 28


class VAE(nn.Module):
    def __init__(self, latent):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(H * W, 400), nn.ReLU())
        self.mu = nn.Linear(400, latent)
        self.log_std = nn.Linear(400, latent)
        self.dec = nn.Sequential(nn.Linear(latent, 400), nn.ReLU(), nn.Linear(400, H * W))

    def forward(self, x):
        e = self.enc(x)
        q = Normal(self.mu(e), self.log_std(e).exp())
        z = q.rsample()
        return q, Bernoulli(logits=self.dec(z))


def read_images(path, limit):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    _, _, ndim = struct.unpack(">HBB", raw[:4])
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    n = min(dims[0], limit)
    return raw[4 + 4 * ndim:4 + 4 * ndim + n * dims[1] * dims[2]], n, dims[1], dims[2]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--latent", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="build/vae")
    p.add_argument("--backend", choices=["ember", "torch"], default="ember")
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    raw, n, h, w = read_images(os.path.join(DATA, "train-images-idx3-ubyte.gz"),
                               args.batches * args.batch_size)
    images = torch.frombuffer(bytearray(raw), dtype=torch.uint8).reshape(n, h * w)
    images = (images.float() / 255 > 0.5).float()  # binarised, for the Bernoulli likelihood

    model = VAE(args.latent)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    prior = Normal(torch.zeros(args.latent), torch.ones(args.latent))
    loss_sum, count = 0.0, 0
    for step in range(args.batches):
        x = images[(step * args.batch_size) % n:][:args.batch_size]
        q, likelihood = model(x)
        loss = (kl_divergence(q, prior).sum(-1) - likelihood.log_prob(x).sum(-1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss_sum, count = loss_sum + loss.item(), count + 1
        if (step + 1) % 50 == 0:
            print(f"batch {step + 1}: loss {loss_sum / count:.2f}")
            final, loss_sum, count = loss_sum / count, 0.0, 0
    if count:
        final = loss_sum / count

    os.makedirs(args.out, exist_ok=True)
    with torch.no_grad():
        samples = torch.sigmoid(model.dec(prior.sample((64,)))).reshape(64, 1, h, w)
    torchvision.utils.save_image(samples, os.path.join(args.out, "samples.png"), nrow=8)
    torch.save(model, os.path.join(args.out, "model.pt"))
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": args.batches},
               os.path.join(args.out, "checkpoint.pt"))
    again = torch.load(os.path.join(args.out, "model.pt"))
    with torch.no_grad():
        x = images[:8]
        same = torch.equal(again.mu(again.enc(x)), model.mu(model.enc(x)))
    print(f"reloaded model matches: {same}")
    print(f"final_loss={final:.3f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
