"""cdist of two 4096 x 64 float32 point sets (a 4096 x 4096 result): ember against torch 1.13
for p = 2 (default compute mode: the matrix-product path), p = 2 without the matrix product,
p = 1 and p = 3, on 1 and 2 threads; median of 5 runs after a warm-up, and the ratio
ember / torch (below 1: ember is faster).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/cdist_side_by_side.py [N M]
"""

import sys
import time

import numpy as np
import torch

import ember

CASES = [("p=2 (mm)", 2.0, "use_mm_for_euclid_dist_if_necessary"),
         ("p=2 (direct)", 2.0, "donot_use_mm_for_euclid_dist"),
         ("p=1", 1.0, "use_mm_for_euclid_dist_if_necessary"),
         ("p=3", 3.0, "use_mm_for_euclid_dist_if_necessary")]


def median_s(lib, a, b, p, mode, reps=5):
    lib.cdist(a, b, p=p, compute_mode=mode)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        lib.cdist(a, b, p=p, compute_mode=mode)
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal((n, m)).astype(np.float32)
    x2 = rng.standard_normal((n, m)).astype(np.float32)
    ea, eb = ember.from_numpy(x1), ember.from_numpy(x2)
    ta, tb = torch.from_numpy(x1), torch.from_numpy(x2)
    print(f"cdist {n}x{m} against {n}x{m}, float32")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        ember.set_num_threads(threads)
        for label, p, mode in CASES:
            te = median_s(ember, ea, eb, p, mode)
            tt = median_s(torch, ta, tb, p, mode)
            print(f"{threads} thread(s) {label:13s} ember {te * 1e3:8.1f} ms  "
                  f"torch {tt * 1e3:8.1f} ms  ratio {te / tt:5.2f}")


if __name__ == "__main__":
    main()
