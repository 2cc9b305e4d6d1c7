"""One Adam step over the Fashion-MNIST CNN's parameters (225,034 float32 in 8 tensors):
ember.optim.Adam (a fused multi-tensor kernel) against torch.optim.Adam with and without
foreach, on 1 and 2 threads; median of 15 batches of 20 steps.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/adam_side_by_side.py
"""

import time

import ember
import torch

SHAPES = [(32, 1, 3, 3), (32,), (64, 32, 3, 3), (64,), (128, 1600), (128,), (10, 128), (10,)]


def step_us(lib, **kwargs):
    params = [lib.randn(*s, requires_grad=True) for s in SHAPES]
    for p in params:
        p.grad = lib.randn(*p.shape)
    opt = lib.optim.Adam(params, lr=1e-3, **kwargs)
    for _ in range(20):
        opt.step()
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        for _ in range(20):
            opt.step()
        times.append((time.perf_counter() - t0) / 20)
    return sorted(times)[len(times) // 2] * 1e6


def main():
    for threads in (1, 2):
        torch.set_num_threads(threads)
        ember.set_num_threads(threads)
        rows = [("ember fused", step_us(ember)),
                ("torch foreach", step_us(torch, foreach=True)),
                ("torch for-loop", step_us(torch, foreach=False))]
        print(f"{threads} thread(s): " + ", ".join(f"{k} {v:.0f} us" for k, v in rows))


if __name__ == "__main__":
    main()
