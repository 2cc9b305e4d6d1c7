#!/usr/bin/env python3
"""Side-by-side LSTM benchmark: ember vs PyTorch in the same process.

One LSTM layer, sequence 64, batch 32, input 256, hidden 256, float32: the forward
(`torch._VF.lstm` / `ember._C._nn.lstm` on the same weights, no grad) and the forward plus
backward (inputs and weights require grad, backward of output.sum()). Both libraries get the
same thread count (`set_num_threads(n)` for n in --threads); the rounds alternate the two
libraries and the table quotes median milliseconds per call and the ratio torch / ember
(> 1 means ember is faster).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/rnn_side_by_side.py
        [--threads 1,2] [--repeat 7] [--seq 64] [--batch 32] [--input 256] [--hidden 256]
"""

import argparse
import statistics
import time

import numpy as np
import torch

import ember
from ember import _C


def make_case(args):
    torch.manual_seed(0)
    m = torch.nn.LSTM(args.input, args.hidden)
    x = torch.randn(args.seq, args.batch, args.input)
    h0 = torch.zeros(1, args.batch, args.hidden)
    c0 = torch.zeros(1, args.batch, args.hidden)
    tw = [w.detach().clone() for w in m._flat_weights]

    def em(t):
        return ember.from_numpy(t.numpy().copy())

    ew = [em(w) for w in tw]
    return (x, h0, c0, tw), (em(x), em(h0), em(c0), ew)


def torch_fns(case):
    x, h0, c0, ws = case

    def fwd():
        with torch.no_grad():
            torch._VF.lstm(x, (h0, c0), ws, True, 1, 0.0, False, False, False)

    gx = x.clone().requires_grad_()
    gws = [w.clone().requires_grad_() for w in ws]

    def fwd_bwd():
        out = torch._VF.lstm(gx, (h0, c0), gws, True, 1, 0.0, True, False, False)[0]
        out.sum().backward()

    return fwd, fwd_bwd


def ember_fns(case):
    x, h0, c0, ws = case
    lstm = _C._nn.lstm

    def fwd():
        with ember.no_grad():
            lstm(x, [h0, c0], ws, True, 1, 0.0, False, False, False)

    gx = x.clone().requires_grad_()
    gws = [w.clone().requires_grad_() for w in ws]

    def fwd_bwd():
        out = lstm(gx, [h0, c0], gws, True, 1, 0.0, True, False, False)[0]
        out.sum().backward()

    return fwd, fwd_bwd


def median_ms(fn, repeat, inner):
    fn()  # warm-up (allocator, BLAS buffers)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--inner", type=int, default=3)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--input", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=256)
    args = ap.parse_args()
    tcase, ecase = make_case(args)
    # Same numbers from both (a benchmark of a wrong answer is worthless).
    with torch.no_grad():
        ref = torch._VF.lstm(tcase[0], (tcase[1], tcase[2]), tcase[3], True, 1, 0.0, False,
                             False, False)[0].numpy()
    got = _C._nn.lstm(ecase[0], [ecase[1], ecase[2]], ecase[3], True, 1, 0.0, False, False,
                      False)[0].detach().numpy()
    err = float(np.abs(ref - got).max())
    assert err < 1e-4, f"ember and torch disagree: max abs diff {err}"
    print(f"LSTM seq {args.seq} batch {args.batch} input {args.input} hidden {args.hidden}, "
          f"float32, torch {torch.__version__}, max |diff| {err:.1e}")
    print(f"{'workload':<14}{'threads':>8}{'torch ms':>11}{'ember ms':>11}{'ratio':>8}")
    for n in [int(s) for s in args.threads.split(",")]:
        torch.set_num_threads(n)
        ember.set_num_threads(n)
        tf, ef = torch_fns(tcase), ember_fns(ecase)
        for i, name in enumerate(("forward", "fwd+bwd")):
            # Alternate the libraries round by round to cancel drift.
            tt, et = [], []
            for _ in range(args.repeat):
                tt.append(median_ms(tf[i], 1, args.inner))
                et.append(median_ms(ef[i], 1, args.inner))
            t, e = statistics.median(tt), statistics.median(et)
            print(f"{name:<14}{n:>8}{t:>11.2f}{e:>11.2f}{t / e:>8.2f}")


if __name__ == "__main__":
    main()
