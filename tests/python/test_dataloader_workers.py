"""DataLoader worker processes: batches in sampler order under every start method, worker_init_fn,
get_worker_info, per-worker seeds, persistent workers, IterableDataset sharding, batches in
shared memory, a crashing or raising worker named in the main process's error, timeouts, clean
shutdown, and the argument errors torch 1.13 raises (checked against it)."""

import faulthandler
import functools
import multiprocessing as std_mp
import os
import signal
import time

import pytest

import ember
import ember.utils.data as eud

START_METHODS = ["fork", "spawn", "forkserver"]
WAIT = 60  # seconds: a loader that stops delivering fails the test instead of hanging it


def loader(*args, **kwargs):
    return eud.DataLoader(*args, timeout=WAIT, **kwargs)


class Squares(eud.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return ember.tensor([i, i * i]), i


class WhoAmI(eud.Dataset):
    """Each sample says which worker made it: (index, id, num_workers, seed, initial_seed,
    a draw from ember's generator, pid)."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = eud.get_worker_info()
        return (i, info.id, info.num_workers, info.seed, ember.initial_seed(),
                ember.rand(1).item(), os.getpid())


class Failing(eud.Dataset):
    def __init__(self, mode, at):
        self.mode, self.at = mode, at

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == self.at:
            if self.mode == "exit":
                os._exit(7)
            if self.mode == "segv":
                faulthandler.disable()  # no traceback dump: the crash is the point
                os.kill(os.getpid(), signal.SIGSEGV)
            if self.mode == "raise":
                raise ValueError(f"sample {i} is broken")
            if self.mode == "key":
                raise KeyError(f"no sample {i}")
            if self.mode == "odd":
                raise OddError(1, 2)
            if self.mode == "sleep":
                time.sleep(3)
        return i


class OddError(Exception):
    def __init__(self, a, b):  # cannot be rebuilt from one message string
        super().__init__(a, b)


class Shards(eud.IterableDataset):
    """range(n), split between the workers by get_worker_info()."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = eud.get_worker_info()
        if info is None:
            return iter(range(self.n))
        per = -(-self.n // info.num_workers)
        return iter(range(info.id * per, min(self.n, (info.id + 1) * per)))


def _mark_init(flags, worker_id):
    flags[worker_id] += worker_id + 1


def _no_children():
    deadline = time.monotonic() + 10
    while std_mp.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return std_mp.active_children() == []


def _flatten(batches):
    return [(x.tolist(), y.tolist()) for x, y in batches]


@pytest.mark.parametrize("method", START_METHODS)
def test_batches_in_order_under_every_start_method(method):
    ds = Squares(23)
    expect = _flatten(loader(ds, batch_size=4))
    dl = loader(ds, batch_size=4, num_workers=3, multiprocessing_context=method)
    got = list(dl)
    assert _flatten(got) == expect and len(got) == 6
    assert all(x.is_shared() for x, _ in got)  # collated into shared memory by the workers
    assert _no_children()


def test_worker_init_fn_and_worker_info():
    flags = ember.zeros(3, dtype=ember.int64).share_memory_()
    dl = loader(WhoAmI(), batch_size=None, num_workers=3,
                        worker_init_fn=functools.partial(_mark_init, flags))
    rows = list(dl)
    assert flags.tolist() == [1, 2, 3]  # each worker ran it once, with its id
    assert [r[0] for r in rows] == list(range(8))
    assert [r[1] for r in rows] == [i % 3 for i in range(8)]  # round-robin
    assert all(r[2] == 3 for r in rows)
    base = {r[3] - r[1] for r in rows}
    assert len(base) == 1  # seed = base_seed + worker id
    assert all(r[4] == r[3] for r in rows)  # ember's generator seeded with it
    assert len({r[6] for r in rows}) == 3 and os.getpid() not in {r[6] for r in rows}
    assert eud.get_worker_info() is None
    with pytest.raises(RuntimeError, match="Cannot assign"):
        eud._utils.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None).id = 1


def test_seeds_differ_between_workers_and_follow_the_generator():
    def draws(seed):
        g = ember.Generator().manual_seed(seed)
        return [r[5] for r in loader(WhoAmI(), batch_size=None, num_workers=2,
                                             generator=g)]

    a = draws(0)
    assert a[0] != a[1]  # first draw of worker 0 vs worker 1
    assert a == draws(0) and a != draws(1)


def test_persistent_workers_keep_their_processes():
    ds = WhoAmI()
    dl = loader(ds, batch_size=2, num_workers=2, persistent_workers=True)
    pids = []
    for epoch in range(3):
        it = iter(dl)
        if epoch == 1:  # an abandoned epoch: the next one must start clean
            next(it)
            continue
        batches = list(it)
        assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
        pids.append({p for b in batches for p in b[6].tolist()})
    assert pids[0] == pids[1] and len(pids[0]) == 2
    fresh = loader(ds, batch_size=2, num_workers=2)
    assert {p for b in fresh for p in b[6].tolist()}.isdisjoint(pids[0])
    del dl, it
    assert _no_children()


@pytest.mark.parametrize("mode,pattern", [
    ("exit", r"DataLoader worker 1 \(pid \d+\) exited unexpectedly with exit code 7"),
    ("segv", r"DataLoader worker 1 \(pid \d+\) was killed by signal SIGSEGV"),
])
def test_crashing_worker_is_named(mode, pattern):
    dl = eud.DataLoader(Failing(mode, at=1), batch_size=None, num_workers=2)
    got = []
    with pytest.raises(RuntimeError, match=pattern):
        for x in dl:
            got.append(x)
    # Worker 0's batch arrives first unless the crash is seen while waiting for it (a loaded
    # machine): both orders are correct, and nothing after the crash may be delivered.
    assert got in ([], [0])
    assert _no_children()


def test_worker_exception_keeps_type_and_traceback():
    with pytest.raises(ValueError, match="sample 4 is broken") as e:
        list(loader(Failing("raise", at=4), batch_size=2, num_workers=2))
    msg = str(e.value)
    assert "Caught ValueError in DataLoader worker process 0" in msg
    assert "Original Traceback" in msg and "__getitem__" in msg
    with pytest.raises(KeyError) as e:
        list(loader(Failing("key", at=3), batch_size=None, num_workers=2))
    assert "DataLoader worker process 1" in str(e.value) and "\n" in str(e.value)
    with pytest.raises(RuntimeError, match="Caught OddError"):
        list(loader(Failing("odd", at=0), batch_size=None, num_workers=2))
    assert _no_children()


def test_timeout_raises_and_cleans_up():
    with pytest.raises(RuntimeError, match="timed out after 0.2 seconds"):
        list(eud.DataLoader(Failing("sleep", at=0), batch_size=None, num_workers=1,
                            timeout=0.2))
    assert _no_children()


@pytest.mark.parametrize("workers,batch,expect", [
    (2, 2, [[0, 1], [5, 6], [2, 3], [7, 8], [4], [9]]),
    (3, 3, [[0, 1, 2], [4, 5, 6], [8, 9], [3], [7]]),
    (2, None, [0, 5, 1, 6, 2, 7, 3, 8, 4, 9]),
])
def test_iterable_dataset_sharded_by_worker_info(workers, batch, expect):
    # Worker k yields its shard; batches alternate between the workers while they last.
    dl = loader(Shards(10), batch_size=batch, num_workers=workers)
    got = [b.tolist() if batch else b for b in dl]
    assert got == expect
    assert sorted(sum(got, []) if batch else got) == list(range(10))


def test_iterable_drop_last_and_persistent():
    dl = loader(Shards(10), batch_size=2, num_workers=2, drop_last=True,
                        persistent_workers=True)
    for _ in range(2):
        assert [b.tolist() for b in dl] == [[0, 1], [5, 6], [2, 3], [7, 8]]


def test_fork_after_openmp_in_workers():
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        a = ember.randn(256, 256)
        (a @ a).sum().item()  # the OpenMP pool has run
        ds = eud.TensorDataset(ember.randn(4, 256, 256))
        out = [(b[0] @ b[0]).shape for b in eud.DataLoader(ds, batch_size=1, num_workers=2,
                                                             timeout=30)]
        assert out == [(1, 256, 256)] * 4
    finally:
        ember.set_num_threads(threads)


def test_thread_workers_opt_in():
    ids = []
    dl = eud.DataLoader(Squares(7), batch_size=2, num_workers=2, worker_init_fn=ids.append,
                        multiprocessing_context="thread")
    assert _flatten(dl) == _flatten(eud.DataLoader(Squares(7), batch_size=2))
    assert sorted(ids) == [0, 1]  # ran in this process


def test_argument_errors_match_torch():
    import torch.utils.data as tud  # here: spawned workers import this module, not torch
    e, t = Squares(4), list(range(4))
    bad = [(ValueError, dict(num_workers=0, multiprocessing_context="spawn")),
           (ValueError, dict(num_workers=1, multiprocessing_context="bogus")),
           (TypeError, dict(num_workers=1, multiprocessing_context=object()))]
    for exc, kw in bad:
        with pytest.raises(exc):
            tud.DataLoader(t, **kw)
        with pytest.raises(exc):
            eud.DataLoader(e, **kw)
    ctx = std_mp.get_context("fork")
    assert eud.DataLoader(e, num_workers=1, multiprocessing_context=ctx) \
        .multiprocessing_context is ctx
