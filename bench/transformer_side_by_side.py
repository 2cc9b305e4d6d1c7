"""TransformerEncoderLayer(256, 4, 1024) on a (32, 128, 256) float32 batch (batch_first):
ember against torch 1.13 in one run, on 1 and 2 threads.

- inference: eval mode under no_grad (both libraries take their fused fast path),
- training: forward + backward in train mode (dropout 0.1),
- ragged: inference of a TransformerEncoder of that layer with a src_key_padding_mask whose
  sequence lengths are spread over 16..128 (both libraries skip the padding).

Median of `reps` timed runs after a warm-up; ratio = ember / torch (below 1: ember is faster).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/transformer_side_by_side.py [reps]
"""

import sys
import time
from collections import OrderedDict

import numpy as np
import torch

import ember

B, L, E, H, FF = 32, 128, 256, 4, 1024


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2] * 1e3


def build(lib, seed_state=None):
    layer = lib.nn.TransformerEncoderLayer(E, H, FF, batch_first=True)
    if seed_state is not None:
        layer.load_state_dict(seed_state)
    return layer


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    torch.manual_seed(0)
    tl = build(torch)
    state = OrderedDict((k, ember.from_numpy(v.detach().numpy().copy()))
                        for k, v in tl.state_dict().items())
    el = build(ember, state)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, L, E)).astype(np.float32)
    tx, ex = torch.from_numpy(x), ember.from_numpy(x)
    lengths = rng.integers(16, L + 1, size=B)
    pad = np.arange(L)[None, :] >= lengths[:, None]
    tpad, epad = torch.from_numpy(pad), ember.from_numpy(pad)
    tenc = torch.nn.TransformerEncoder(tl, 1).eval()
    eenc = ember.nn.TransformerEncoder(el, 1).eval()
    eenc.load_state_dict(OrderedDict((k, ember.from_numpy(v.detach().numpy().copy()))
                                     for k, v in tenc.state_dict().items()))

    def infer(lib, layer, xx):
        layer.eval()

        def f():
            with lib.no_grad():
                layer(xx)
        return f

    def ragged(lib, enc, xx, mask):
        def f():
            with lib.no_grad():
                enc(xx, src_key_padding_mask=mask)
        return f

    def train(lib, layer, xx):
        layer.train()

        def f():
            layer.zero_grad()
            layer(xx).sum().backward()
        return f

    print(f"TransformerEncoderLayer({E}, {H}, {FF}), input ({B}, {L}, {E}) float32, "
          f"batch_first; ragged: {int((~pad).sum())} of {B * L} tokens real")
    print(f"{'case':22s} {'threads':>7s} {'ember ms':>10s} {'torch ms':>10s} {'ratio':>6s}")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        ember.set_num_threads(threads)
        cases = [("inference (fast path)", infer(ember, el, ex), infer(torch, tl, tx)),
                 ("training fwd+bwd", train(ember, el, ex), train(torch, tl, tx)),
                 ("ragged inference", ragged(ember, eenc, ex, epad),
                  ragged(torch, tenc, tx, tpad))]
        for name, fe, ft in cases:
            te, tt = median_ms(fe, reps), median_ms(ft, reps)
            print(f"{name:22s} {threads:7d} {te:10.1f} {tt:10.1f} {te / tt:6.2f}")


if __name__ == "__main__":
    main()
