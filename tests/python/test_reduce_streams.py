"""The summation orders of the CPU reduction kernels, bit for bit (Note [Interleaved pairwise
leaves], Note [Reductions]): the kernels read several streams at a time, but every float sum
must still be the documented pairwise tree (full sums, rows) or the row cascade (sums over an
outer dim), emulated here in NumPy in the tensor's own dtype for the lane count of the kernel
set in use. Also the multi-segment argmax/amax scan (first occurrence, NaN, +-0 and ties across
segments), the rows path of sum/mean over the last dim (odd row counts, strided rows, rows
longer than one interleaved span), and the results on 1 and 2 threads."""

import numpy as np
import pytest
import torch

import ember
from _oracle import check

FLOAT_TYPES = [np.float32, np.float64]


def lanes(np_dtype):
    """Vector lanes of `np_dtype` in the kernel set in use (vec.h: 16, 32 or 64 bytes)."""
    cap = ember.backends.cpu.get_cpu_capability().lower()
    width = {"default": 16, "avx2": 32, "avx512": 64}[cap]
    return width // np.dtype(np_dtype).itemsize


def pairwise_vec(x, L):
    """reduce_kernels.cpp's sum_vec: leaves of 64 * L elements with 8 vector accumulators,
    halves rounded up to whole vectors above that; returns the L lane partials."""
    n = x.size
    if n > 64 * L:
        half = (n // 2 + L - 1) // L * L
        return pairwise_vec(x[:half], L) + pairwise_vec(x[half:], L)
    a = np.zeros((8, L), x.dtype)
    i = 0
    while i + 8 * L <= n:
        a += x[i:i + 8 * L].reshape(8, L)
        i += 8 * L
    while i + L <= n:
        a[0] += x[i:i + L]
        i += L
    r = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
    if i < n:
        tail = np.zeros(L, x.dtype)
        tail[:n - i] = x[i:]
        r = r + tail
    return r


def pairwise_sum(x):
    """The float sum of a contiguous run, lanes added in order at the end."""
    r = pairwise_vec(x, lanes(x.dtype))
    s = x.dtype.type(0)
    for v in r:
        s = x.dtype.type(s + v)
    return s


def full_sum(x):
    """sum() of a whole contiguous tensor: one run, or pieces of 2^15 added in order when the
    run is longer than two pieces (kReduceChunk in reduce.h)."""
    chunk = 1 << 15
    if x.size <= 2 * chunk:
        return pairwise_sum(x)
    acc = pairwise_sum(x[:chunk])
    for s in range(chunk, x.size, chunk):
        acc = x.dtype.type(acc + pairwise_sum(x[s:s + chunk]))
    return acc


def cascade_sum0(x):
    """sum(0) of a row-major matrix (the vertical path): 32 rows into l1, row by row; l1 into
    l2; every 32 blocks l2 into l3 and l2 cleared; finally l2 into l3."""
    rows, w = x.shape
    l2 = np.zeros(w, x.dtype)
    l3 = np.zeros(w, x.dtype)
    blocks = 0
    for r0 in range(0, rows, 32):
        l1 = np.zeros(w, x.dtype)
        for r in range(r0, min(rows, r0 + 32)):
            l1 += x[r]
        l2 += l1
        blocks += 1
        if blocks == 32:
            l3 += l2
            l2[:] = 0
            blocks = 0
    return l3 + l2


def values(shape, np_dtype, seed):
    # Values of mixed magnitude, so that a change in the order of the additions shows.
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) * np.exp(rng.uniform(-6, 6, shape))
    return v.astype(np_dtype)


def bits_equal(a, b):
    a, b = (np.ascontiguousarray(np.atleast_1d(np.asarray(v))) for v in (a, b))
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("np_dtype", FLOAT_TYPES, ids=["float32", "float64"])
def test_full_sum_is_the_pairwise_tree(np_dtype, threads):
    L = lanes(np_dtype)
    sizes = [1, 3, L - 1, L, 8 * L + 1, 64 * L - 1, 64 * L, 64 * L + 1, 128 * L + 3, 1000,
             4096, 4096 * L + 17, 64 * 64 * L, 64 * 64 * L + 1, 65536, 65537, 200003]
    for n in sizes:
        x = values(n, np_dtype, n)
        e = ember.from_numpy(x)
        assert bits_equal(e.sum().numpy(), full_sum(x)), n
        # mean divides the sum rounded to the dtype (as PyTorch)
        assert bits_equal(e.mean().numpy(), np_dtype(full_sum(x) / np_dtype(n))), n
        np.testing.assert_allclose(e.sum().numpy(), x.astype(np.float64).sum(),
                                   rtol=1e-5 if np_dtype == np.float32 else 1e-12,
                                   atol=1e-3 * np.abs(x).max())


@pytest.mark.parametrize("np_dtype", FLOAT_TYPES, ids=["float32", "float64"])
def test_row_sums_are_the_pairwise_tree(np_dtype, threads):
    L = lanes(np_dtype)
    # row counts: one, two, odd (a middle row summed alone); lengths: one partial leaf up to
    # longer than one interleaved span (64 leaves)
    for rows in (1, 2, 3, 7, 40):
        for n in (1, 7, L, 64 * L - 1, 64 * L + 5, 4096, 64 * 64 * L + 9):
            if rows * n > 3_000_000:
                continue
            x = values((rows, n), np_dtype, rows * 1000 + n)
            e = ember.from_numpy(x)
            want = np.array([pairwise_sum(x[r]) for r in range(rows)], np_dtype)
            assert bits_equal(e.sum(1).numpy(), want), (rows, n)
            assert bits_equal(e.sum(-1, keepdim=True).numpy(), want[:, None]), (rows, n)
            assert bits_equal(e.mean(1).numpy(), (want / np_dtype(n)).astype(np_dtype))
    # rows that are not adjacent (every other row, every third): the rows path with a stride;
    # a 3-D tensor summed over its last dim (several kept dims: one row at a time)
    x = values((30, 700), np_dtype, 5)
    e = ember.from_numpy(x)
    for step in (2, 3):
        want = np.array([pairwise_sum(np.ascontiguousarray(r)) for r in x[::step]], np_dtype)
        assert bits_equal(e[::step].sum(1).numpy(), want)
    x3 = values((4, 5, 300), np_dtype, 6)
    want = np.array([[pairwise_sum(x3[i, j]) for j in range(5)] for i in range(4)], np_dtype)
    assert bits_equal(ember.from_numpy(x3).sum(2).numpy(), want)
    assert bits_equal(ember.from_numpy(x3)[:, ::2].sum(2).numpy(), want[:, ::2])


@pytest.mark.parametrize("np_dtype", FLOAT_TYPES, ids=["float32", "float64"])
def test_outer_dim_sums_are_the_row_cascade(np_dtype, threads):
    # rows: fewer than one group of 4, not multiples of 4 or 8, more than one 32-row block and
    # more than 32 blocks; widths: tails of the 2-vector step and more than one 2048 tile
    for rows, w in ((2, 8), (3, 9), (5, 33), (12, 17), (13, 64), (31, 100), (37, 2049),
                    (1100, 24), (100, 4100)):
        x = values((rows, w), np_dtype, rows * 7 + w)
        e = ember.from_numpy(x)
        assert bits_equal(e.sum(0).numpy(), cascade_sum0(x)), (rows, w)
        assert bits_equal(e.mean(0).numpy(), (cascade_sum0(x) / np_dtype(rows)).astype(np_dtype))
        np.testing.assert_allclose(e.sum(0).numpy(), x.astype(np.float64).sum(0),
                                   rtol=1e-4 if np_dtype == np.float32 else 1e-12,
                                   atol=1e-4 * np.abs(x).max())
    # a strided view is copied to dense first; a transposed one reduces its contiguous dim
    x = values((70, 90), np_dtype, 9)
    e = ember.from_numpy(x)
    assert bits_equal(e[:, ::2].sum(0).numpy(), cascade_sum0(np.ascontiguousarray(x[:, ::2])))
    assert bits_equal(e.t().sum(1).numpy(), cascade_sum0(x))


def test_sums_do_not_depend_on_the_thread_count(restore_globals):
    x = values((257, 4099), np.float32, 11)
    e = ember.from_numpy(x)
    got = []
    for nt in (1, 2, 3):
        ember.set_num_threads(nt)
        got.append([r.numpy() for r in (e.sum(), e.sum(0), e.sum(1), e.mean(1),
                                        e.reshape(-1).sum(), e.amax(1), e.argmax(1))])
    for g in got[1:]:
        for a, b in zip(g, got[0]):
            assert bits_equal(a, b)


def test_other_sums_keep_their_paths():
    # float16/bfloat16 (float accumulators), integers (int64), nansum and complex take the
    # generic loops, not the float row and row-block kernels
    rng = np.random.default_rng(2)
    v = rng.integers(-20, 21, (37, 611))
    for dt in ("float16", "bfloat16", "int32", "int64", "uint8", "complex64"):
        a = v.astype(np.uint8) if dt == "uint8" else v
        e = ember.from_numpy(a.astype(np.float32)).to(getattr(ember, dt))
        t = torch.from_numpy(a.astype(np.float32)).to(getattr(torch, dt))
        tol = dict(rtol=1e-2, atol=1e-2) if dt in ("float16", "bfloat16") else {}
        for d in (0, 1):
            check(lambda L, x: x.sum(d), (e, t), what=f"{dt} sum({d})", **tol)
    w = values((9, 300), np.float32, 3)
    w[2, 5] = np.nan
    w[7, 200] = np.nan
    for d in (0, 1):
        check(lambda L, x: L.nansum(x, d), (ember.from_numpy(w), torch.from_numpy(w)),
              rtol=1e-5, atol=1e-3 * np.nanmax(np.abs(w)))


@pytest.mark.parametrize("np_dtype", FLOAT_TYPES, ids=["float32", "float64"])
def test_argmax_segments(np_dtype, threads):
    # Rows long enough for the four-segment scan (>= 32 vectors); the extreme in each segment,
    # equal extremes in several segments (the first wins), -0.0 and 0.0 as the extreme in
    # different segments, NaN in a late segment, +-inf, and the tail after the segments.
    rng = np.random.default_rng(8)
    rows = []
    n = 1021  # AVX2 float: four segments of 7 blocks of 32, then a tail of 125
    for case in range(10):
        r = rng.integers(-50, 50, n).astype(np_dtype)
        pos = [1, 300, 600, 1000, 1019][case % 5]
        if case < 5:
            r[pos] = 99
        elif case == 5:
            r[[900, 400, 150]] = 99
        elif case == 6:
            r[:] = -1
            r[[700, 200]] = [0.0, -0.0]
        elif case == 7:
            r[[800, 30]] = [np.nan, 99]
        elif case == 8:
            r[[10, 990]] = [np.inf, -np.inf]
        else:
            r[[1020, 500]] = [99, 99]
        rows.append(r)
    a = np.stack(rows)
    for fn in ("argmax", "argmin", "amax", "amin"):
        for x in (a, -a, a[:, :777], a[:, 3:]):
            check(lambda L, t: getattr(L, fn)(t, 1), (ember.from_numpy(x.copy()),
                                                      torch.from_numpy(x.copy())), what=fn)
    for fn in ("argmax", "argmin"):
        for r in a:
            check(lambda L, t: getattr(L, fn)(t), (ember.from_numpy(r.copy()),
                                                   torch.from_numpy(r.copy())), what=fn)
    # the full amax of a long vector: pieces of 2^15 scanned in four segments each
    big = rng.standard_normal(300001).astype(np_dtype)
    for at in (5, 40000, 150000, 299999):
        b = big.copy()
        b[at] = 50
        assert ember.from_numpy(b).amax().item() == 50
        assert ember.from_numpy(b).argmax().item() == at
        assert ember.from_numpy(-b).amin().item() == -50
    b = big.copy()
    b[[7, 200000]] = [np.nan, np.nan]
    assert np.isnan(ember.from_numpy(b).amax().item())
    assert ember.from_numpy(b).argmax().item() == 7
