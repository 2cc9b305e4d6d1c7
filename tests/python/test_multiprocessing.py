"""ember.multiprocessing and shared-memory tensors: share_memory_/is_shared in place (views,
aliases, Parameters, every dtype, zero-size), tensors through queues under the fork, spawn and
forkserver start methods (writes seen both ways, one storage per block), spawn() reporting a
failing rank, the sharing-strategy API, forking after the OpenMP pool ran, and hogwild training
whose result the parent sees. Expected values are derived by hand or with NumPy."""

import faulthandler
import multiprocessing as std_mp
import os
import signal

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp
from ember import nn

START_METHODS = ["fork", "spawn", "forkserver"]
TIMEOUT = 60  # seconds; a hang fails the test instead of blocking the suite

DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
          ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.complex64,
          ember.complex128]


def _values(dtype):
    return ember.tensor([0, 1, 0, 3, 1, 5]).to(dtype)


# ---- in-process ----

def test_share_memory_in_place_keeps_values_views_and_aliases():
    base = ember.arange(12.0).reshape(3, 4)
    view = base.t()
    alias = base.detach()
    row = base[1]
    before = base.data_ptr()
    assert not base.is_shared() and not view.is_shared()
    assert view.share_memory_() is view
    assert base.is_shared() and view.is_shared() and alias.is_shared() and row.is_shared()
    assert base.data_ptr() != before  # moved, in place
    assert row.data_ptr() == base.data_ptr() + 4 * 4
    np.testing.assert_array_equal(base.numpy(), np.arange(12.0).reshape(3, 4))
    alias.mul_(2)
    assert view[3, 2].item() == 22.0 and row.tolist() == [8.0, 10.0, 12.0, 14.0]
    ptr = base.data_ptr()
    base.share_memory_()  # already shared: no-op
    assert base.data_ptr() == ptr


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_share_memory_every_dtype(dtype):
    t = _values(dtype)
    expect = t.clone()
    t.share_memory_()
    assert t.is_shared() and not expect.is_shared()
    assert t.dtype == dtype and ember.equal(t, expect)


def test_share_memory_zero_size_and_0dim():
    z = ember.empty(0, 3)
    assert z.share_memory_().is_shared() and z.shape == (0, 3)
    s = ember.tensor(2.5)
    s.share_memory_()
    assert s.is_shared() and s.item() == 2.5


def test_module_share_memory_parameters_buffers_and_optimizer():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    params = list(m.parameters())
    assert m.share_memory() is m
    assert all(p.is_shared() for p in m.parameters())
    assert all(b.is_shared() for b in m.buffers())
    assert all(a is b for a, b in zip(params, m.parameters()))  # same Parameter objects
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    w = m[0].weight
    ptr, old = w.data_ptr(), w.detach().clone()
    (m(ember.randn(5, 3)) * ember.randn(5, 4)).sum().backward()
    opt.step()
    assert w.is_shared() and w.data_ptr() == ptr  # updated in shared memory
    assert not ember.equal(w.detach(), old)


def test_reducer_errors_and_parameter_round_trip():
    from multiprocessing.reduction import ForkingPickler
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        ForkingPickler.dumps(x * 2)
    p = nn.Parameter(ember.arange(4.0))
    q = ForkingPickler.loads(ForkingPickler.dumps(p))
    assert type(q) is nn.Parameter and q.requires_grad and p.is_shared()
    assert q.data_ptr() == p.data_ptr()  # the same storage comes back in this process
    t = ember.arange(10).reshape(2, 5)[:, 1::2]  # strided view at an offset
    u = ForkingPickler.loads(ForkingPickler.dumps(t))
    assert u.shape == t.shape and u.stride() == t.stride() and u.data_ptr() == t.data_ptr()
    # Handles that do not fit.
    shm = ember._C._shm
    with pytest.raises(RuntimeError, match="not an open file descriptor"):
        shm.rebuild(-1, 8, ember.float32, [2], [1], 0)
    fd, nbytes, _, _ = shm.handle(t)
    assert nbytes == 10 * 8
    with pytest.raises(ValueError, match="reach byte 88"):
        shm.rebuild(fd, nbytes, ember.int64, [2], [1], 9)
    with pytest.raises(RuntimeError, match="not in shared memory"):
        shm.handle(ember.zeros(2))


def test_sharing_strategy_api():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert "file_descriptor" in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="unknown strategy"):
        mp.set_sharing_strategy("carrier_pigeon")
    assert mp.get_sharing_strategy() == "file_descriptor"
    # The standard module's API is re-exported.
    for name in ("Process", "Queue", "SimpleQueue", "Pool", "get_context", "set_start_method",
                 "get_start_method", "get_all_start_methods", "cpu_count", "Manager", "Pipe"):
        assert hasattr(mp, name), name


# ---- across processes ----

def _echo_child(inq, outq, ready):
    # Receives (t, t[2:]); checks one storage; writes; sends a view back; then checks the
    # parent's write.
    t, tail = inq.get(timeout=TIMEOUT)
    ok = t.is_shared() and tail.data_ptr() == t.data_ptr() + 2 * t.element_size()
    t.add_(1)
    outq.put((ok, t[1:]))
    ready.wait(TIMEOUT)
    outq.put(t.tolist())


@pytest.mark.parametrize("method", START_METHODS)
def test_queue_transfer_sees_writes_both_ways(method):
    ctx = mp.get_context(method)
    inq, outq = ctx.Queue(), ctx.Queue()
    ready = ctx.Event()
    p = ctx.Process(target=_echo_child, args=(inq, outq, ready))
    p.start()
    t = ember.arange(6.0)
    inq.put((t, t[2:]))
    ok, back = outq.get(timeout=TIMEOUT)
    assert ok
    assert t.is_shared() and t.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert back.data_ptr() == t.data_ptr() + 4  # our own storage came back
    t[0] = -5.0
    ready.set()
    assert outq.get(timeout=TIMEOUT) == [-5.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    p.join(TIMEOUT)
    assert p.exitcode == 0


def _dtype_child(q, out):
    for t in iter(lambda: q.get(timeout=TIMEOUT), None):
        out.put((str(t.dtype), tuple(t.shape), t.tolist(), t.is_shared()))
        t.zero_()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_every_dtype_and_zero_size_through_a_queue(method):
    ctx = mp.get_context(method)
    q, out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_dtype_child, args=(q, out))
    p.start()
    sent = [_values(d) for d in DTYPES] + [ember.empty(0, 2), ember.tensor(7)]
    expected = [(str(t.dtype), tuple(t.shape), t.tolist(), True) for t in sent]
    for t in sent:
        q.put(t)
    q.put(None)
    for exp in expected:
        assert out.get(timeout=TIMEOUT) == exp
    p.join(TIMEOUT)
    assert p.exitcode == 0
    for t in sent:  # the child's zero_() wrote into our memory
        assert t.to(ember.float64).abs().sum().item() == 0


def _write_rank(rank, t):
    t[rank] = rank + 1


def _fail_rank(rank, bad):
    if rank == bad:
        raise ValueError(f"rank {rank} failed on purpose")


def _exit_rank(rank, code):
    if rank == 1:
        os._exit(code)


def _segv_rank(rank):
    if rank == 0:
        faulthandler.disable()  # no traceback dump: the crash is the point
        os.kill(os.getpid(), signal.SIGSEGV)


@pytest.mark.parametrize("method", START_METHODS)
def test_spawn_writes_shared_argument(method):
    t = ember.zeros(3, dtype=ember.int64)
    if method == "fork":  # forked children inherit memory, they are not sent the argument
        t.share_memory_()
    assert mp.spawn(_write_rank, args=(t,), nprocs=3, start_method=method) is None
    assert t.tolist() == [1, 2, 3]


def test_spawn_reports_failing_rank():
    with pytest.raises(mp.ProcessRaisedException, match="rank 1 failed on purpose") as e:
        mp.spawn(_fail_rank, args=(1,), nprocs=2, start_method="spawn")
    assert e.value.error_index == 1 and "Process 1 terminated" in str(e.value)
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as e:
        mp.spawn(_exit_rank, args=(3,), nprocs=2, start_method="fork")
    assert e.value.error_index == 1 and e.value.exit_code == 3
    with pytest.raises(mp.ProcessExitedException, match="SIGSEGV") as e:
        mp.spawn(_segv_rank, nprocs=2, start_method="fork")
    assert e.value.error_index == 0 and e.value.signal_name == "SIGSEGV"
    ctx = mp.spawn(_write_rank, args=(ember.zeros(2).share_memory_(),), nprocs=2, join=False,
                   start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 2
    while not ctx.join(TIMEOUT):
        pass
    assert std_mp.active_children() == []


def _omp_child(q):
    a = ember.randn(300, 300)
    q.put(((a @ a).shape, ember.ones(1 << 20).sum().item(), ember.get_num_threads()))


def test_fork_after_openmp_pool_does_not_hang():
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        a = ember.randn(300, 300)
        (a @ a).sum().item()
        ember.ones(1 << 20).sum().item()  # parallel regions ran: the pool exists
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_omp_child, args=(q,))
        p.start()
        p.join(TIMEOUT)
        if p.is_alive():
            p.kill()
            pytest.fail("a child forked after the OpenMP pool ran hung")
        assert p.exitcode == 0
        shape, total, child_threads = q.get(timeout=TIMEOUT)
        assert shape == (300, 300) and total == float(1 << 20) and child_threads == 1
    finally:
        ember.set_num_threads(threads)


# ---- hogwild ----

def _separable_data(n=512, d=8, seed=0):
    g = np.random.default_rng(seed)
    x = g.standard_normal((n, d)).astype(np.float32)
    w = g.standard_normal(d).astype(np.float32)
    y = (x @ w > 0).astype(np.int64)
    return ember.from_numpy(x), ember.from_numpy(y)


def _hogwild_train(rank, model, x, y):
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=0.5)
    n = x.shape[0]
    part = ember.arange(rank, n, 2)  # each process trains on its half
    for _ in range(30):
        for idx in part[ember.randperm(part.numel())].split(32):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_hogwild_training_updates_the_parents_model(method):
    ember.manual_seed(0)
    model = nn.Linear(8, 2)
    x, y = _separable_data()

    def accuracy():
        with ember.no_grad():
            return (model(x).argmax(1) == y).double().mean().item()

    start = accuracy()
    model.share_memory()
    mp.spawn(_hogwild_train, args=(model, x, y), nprocs=2, start_method=method)
    # Only the children trained: without shared weights the parent's model is unchanged.
    assert start < 0.9 and accuracy() >= 0.97
