"""The GIL is released around long kernels: another Python thread runs while ember computes, and
two threads' big ops overlap in time."""

import sys
import threading
import time

import pytest

import ember

N = 1 << 22  # 4M elements: milliseconds of work per op


class Ticker:
    """A Python thread that counts while it can take the GIL. The switch interval is made long,
    so it only runs when the main thread gives the GIL up voluntarily (a released kernel); it
    sleeps between ticks, giving the GIL back at once."""

    def __enter__(self):
        self.interval = sys.getswitchinterval()
        sys.setswitchinterval(1.0)
        self.ticks = 0
        self.done = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        while self.ticks == 0:
            time.sleep(0.001)
        return self

    def _run(self):
        while not self.done:
            self.ticks += 1
            time.sleep(1e-5)

    def during(self, fn):
        """Ticks counted while fn() ran (0 when fn held the GIL throughout)."""
        before = self.ticks
        fn()
        return self.ticks - before

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()
        sys.setswitchinterval(self.interval)


@pytest.fixture(scope="module")
def data():
    g = ember.Generator().manual_seed(0)
    return ember.rand(N, generator=g, dtype=ember.float64), ember.rand(N, generator=g,
                                                                       dtype=ember.float64)


RELEASING = {
    "a + b": lambda x, y: x + y,
    "ember.mul(out=)": lambda x, y: ember.mul(x, y, out=ember.empty(0, dtype=ember.float64)),
    "x.add_(y)": lambda x, y: x.clone().add_(y),
    "x += 1": lambda x, y: x.clone().__iadd__(1),
    "sin": lambda x, y: ember.sin(x),
    "x.exp()": lambda x, y: x.exp(),
    "x.sqrt_()": lambda x, y: x.clone().sqrt_(),
    "pow": lambda x, y: ember.pow(x, 2.5),
    "eq": lambda x, y: x == y,
    "to(float32)": lambda x, y: x.to(ember.float32),
    "x.float()": lambda x, y: x.float(),
    "clone": lambda x, y: x.clone(),
    "contiguous": lambda x, y: x.view(2048, -1).t().contiguous(),
    "copy_": lambda x, y: x.clone().copy_(y),
    "setitem": lambda x, y: x.clone().__setitem__(slice(None, None, 2), y[::2]),
    "rand": lambda x, y: ember.rand(N),
    "randn": lambda x, y: ember.randn(N),
    "zeros": lambda x, y: ember.zeros(N),
    "full": lambda x, y: ember.full((N,), 2.0),
    "zeros_like": lambda x, y: ember.zeros_like(x),
    "clamp": lambda x, y: ember.clamp(x, 0.2, 0.8),
    "x.clamp_()": lambda x, y: x.clone().clamp_(max=0.5),
    "where": lambda x, y: ember.where(x > y, x, 0.0),
    "x.where()": lambda x, y: x.where(x > y, y),
    "lerp": lambda x, y: ember.lerp(x, y, 0.3),
    "addcmul": lambda x, y: ember.addcmul(x, x, y, value=2),
    "round(decimals=)": lambda x, y: ember.round(x, decimals=2),
    "nan_to_num": lambda x, y: x.nan_to_num(),
    "logit(out=)": lambda x, y: ember.logit(x, out=ember.empty(0, dtype=ember.float64)),
}


@pytest.mark.parametrize("op", list(RELEASING))
def test_big_ops_let_other_threads_run(op, data, restore_globals):
    ember.set_num_threads(1)
    x, y = data
    f = RELEASING[op]
    with Ticker() as t:
        # Repeat: a fast op (a fill takes about a millisecond) may end before the ticker wakes
        # up, on a busy machine especially. An op that holds the GIL never lets it tick.
        ticks = 0
        for _ in range(50):
            ticks += t.during(lambda: f(x, y))
            if ticks:
                break
    assert ticks > 0, f"{op} held the GIL throughout"


def test_the_ticker_sees_a_held_gil(data):
    """The control: tolist() needs the GIL all along, so nothing else runs meanwhile (and a tiny
    op, under the release threshold, holds it too)."""
    x, _ = data
    small = ember.ones(8)
    with Ticker() as t:
        assert t.during(lambda: x[: 1 << 19].tolist()) == 0
        assert t.during(lambda: [small + small for _ in range(20000)]) == 0


def test_two_threads_compute_concurrently(data, restore_globals):
    """Two Python threads running big ops: their op intervals overlap (with the GIL held they
    could only alternate)."""
    ember.set_num_threads(1)
    x, y = data
    intervals = [[], []]
    barrier = threading.Barrier(2)

    def work(i):
        barrier.wait()
        for _ in range(4):
            t0 = time.perf_counter()
            ember.sin(x) if i else ember.exp(y)
            intervals[i].append((t0, time.perf_counter()))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # no forced switches: overlap needs released kernels
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    overlap = sum(max(0.0, min(a1, b1) - max(a0, b0)) for a0, a1 in intervals[0]
                  for b0, b1 in intervals[1])
    assert overlap > 0, intervals


def test_results_correct_under_threads(data):
    """Ops from several threads at once give the same results as alone."""
    x, y = data
    want = (x * y + 1).numpy()[::4099].tolist()
    got = [None] * 4

    def work(i):
        got[i] = (x * y + 1).numpy()[::4099].tolist()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(g == want for g in got)
