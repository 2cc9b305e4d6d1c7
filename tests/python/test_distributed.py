"""ember.distributed: collectives, groups, objects, work handles and stores.

Each world size runs one battery of checks in one set of rank processes (spawning is the slow
part); the tests below compare its results with a reference computed here from the same
inputs, and with torch 1.13's torch.distributed (Gloo) run the same way where Gloo has the
feature. Inputs are small integers (halves for sums), so every reduction is exact in every
dtype whatever the order of the additions.
"""

import pickle
import time
import warnings
import zlib
from datetime import timedelta

import numpy as np
import pytest

from _dist_util import RanksFailed, run_ranks

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32",
          "int64", "bool", "complex64", "complex128"]
# What torch 1.13's Gloo process group takes.
TORCH_DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int32", "int64"]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
FLOATING = {"float32", "float64", "float16", "bfloat16"}
COMPLEX = {"complex64", "complex128"}


def _valid(op, dt):
    """The (op, dtype) pairs ember defines (torch's rules, plus AVG and complex PRODUCT)."""
    if dt in COMPLEX:
        return op in ("SUM", "AVG", "PRODUCT")
    if dt in FLOATING:
        return op not in ("BAND", "BOR", "BXOR")
    return op != "AVG"


def _torch_valid(op, dt):
    return dt in TORCH_DTYPES and op != "AVG" and _valid(op, dt)


def _inp(tag, rank, dt, shape=(2, 3)):
    """Rank `rank`'s input for check `tag` as a NumPy array (bfloat16 as float32)."""
    rs = np.random.RandomState(zlib.crc32(f"{tag}/{rank}/{dt}".encode()))
    if dt == "bool":
        return rs.rand(*shape) < 0.5
    if dt == "uint8":
        return rs.randint(0, 4, shape).astype(np.uint8)
    if dt.startswith("int"):
        return rs.randint(-3, 4, shape).astype(dt)
    if dt in COMPLEX:
        return (rs.randint(-3, 4, shape) + 1j * rs.randint(-3, 4, shape)).astype(dt)
    # Products of three or four of these stay exact in bfloat16's 8 significant bits.
    v = rs.randint(-3, 4, shape) if "PRODUCT" in tag else rs.randint(-6, 7, shape) / 2.0
    return v.astype(np.float32 if dt == "bfloat16" else dt)


# ---- what runs on the ranks ----------------------------------------------------------------

def _lib(lib):
    if lib == "torch":
        import torch
        import torch.distributed as dist
        return torch, dist
    import ember
    import ember.distributed as dist
    return ember, dist


def _tensor(T, arr, dt):
    if dt == "bfloat16":
        return T.from_numpy(np.ascontiguousarray(arr, dtype=np.float32)).to(T.bfloat16)
    return T.from_numpy(np.ascontiguousarray(arr))


def _np(T, t):
    if t.dtype == T.bfloat16:
        return t.float().numpy().copy()
    return t.numpy().copy()


def _err(e):
    return ("error", type(e).__name__, str(e))


def _battery(rank, ws, lib):
    """Every collective on every dtype (torch: the ones its Gloo has); returns {key: result}."""
    T, dist = _lib(lib)
    torch_mode = lib == "torch"
    R = {}

    def t(tag, dt, shape=(2, 3), r=rank):
        return _tensor(T, _inp(tag, r, dt, shape), dt)

    def zeros(shape, dt):
        return T.zeros(shape, dtype=getattr(T, dt))

    def attempt(key, f):
        try:
            R[key] = f()
        except Exception as e:  # recorded; the test of that key reports it
            R[key] = _err(e)

    dtypes = TORCH_DTYPES if torch_mode else DTYPES
    for dt in dtypes:
        for op in OPS:
            if (_torch_valid if torch_mode else _valid)(op, dt):
                def ar(dt=dt, op=op):
                    x = t(f"ar/{op}", dt)
                    dist.all_reduce(x, getattr(dist.ReduceOp, op))
                    return _np(T, x)
                attempt(("all_reduce", dt, op), ar)

        def bc(dt=dt):
            x = t("bc", dt)
            dist.broadcast(x, ws - 1)
            return _np(T, x)
        attempt(("broadcast", dt), bc)

        for op in ("SUM", "MIN") if dt not in COMPLEX else ("SUM",):
            def rd(dt=dt, op=op):
                x = t(f"rd/{op}", dt)
                dist.reduce(x, 1, getattr(dist.ReduceOp, op))
                return _np(T, x) if rank == 1 else None
            attempt(("reduce", dt, op), rd)

        def ag(dt=dt):
            out = [zeros((2, 3), dt) for _ in range(ws)]
            dist.all_gather(out, t("ag", dt))
            return [_np(T, o) for o in out]
        attempt(("all_gather", dt), ag)

        def ga(dt=dt):
            out = [zeros((2, 3), dt) for _ in range(ws)] if rank == 0 else None
            dist.gather(t("ga", dt), out, dst=0)
            return [_np(T, o) for o in out] if rank == 0 else None
        attempt(("gather", dt), ga)

        def sc(dt=dt):
            src = ws - 1
            lst = [t("sc", dt, r=r) for r in range(ws)] if rank == src else None
            out = zeros((2, 3), dt)
            dist.scatter(out, lst, src=src)
            return _np(T, out)
        attempt(("scatter", dt), sc)

        def a2as(dt=dt):
            out = zeros((2 * ws, 3), dt)
            dist.all_to_all_single(out, t("a2as", dt, (2 * ws, 3)))
            return _np(T, out)
        attempt(("all_to_all_single", dt), a2as)

        if torch_mode:
            continue
        # Gloo in torch 1.13 has none of these: checked against the reference only.
        def agt(dt=dt):
            out = zeros((2 * ws, 3), dt)
            dist.all_gather_into_tensor(out, t("agt", dt))
            stacked = zeros((ws, 2, 3), dt)
            dist._all_gather_base(stacked, t("agt", dt))
            return _np(T, out), _np(T, stacked)
        attempt(("all_gather_into_tensor", dt), agt)

        for op in OPS:
            if not _valid(op, dt):
                continue

            def rs(dt=dt, op=op):
                out = zeros((2, 3), dt)
                dist.reduce_scatter(out, [t(f"rs/{op}/{j}", dt) for j in range(ws)],
                                    getattr(dist.ReduceOp, op))
                return _np(T, out)
            attempt(("reduce_scatter", dt, op), rs)

            def rst(dt=dt, op=op):
                out = zeros((2, 3), dt)
                dist.reduce_scatter_tensor(out, t(f"rst/{op}", dt, (2 * ws, 3)),
                                           getattr(dist.ReduceOp, op))
                return _np(T, out)
            attempt(("reduce_scatter_tensor", dt, op), rst)

        def a2a(dt=dt):
            out = [zeros((2, 3), dt) for _ in range(ws)]
            dist.all_to_all(out, [t(f"a2a/{j}", dt) for j in range(ws)])
            return [_np(T, o) for o in out]
        attempt(("all_to_all", dt), a2a)

    _more(R, rank, ws, T, dist, attempt, torch_mode)
    return R


def _more(R, rank, ws, T, dist, attempt, torch_mode):
    """Layouts, uneven splits, point to point, async work, objects, stores, groups."""
    f32 = "float32"

    def zero_dim():
        x = T.tensor(float(rank + 1))
        dist.all_reduce(x)
        return x.item(), tuple(x.shape)
    attempt("zero_dim", zero_dim)

    def zero_size():
        x = T.zeros((0, 3))
        dist.all_reduce(x)
        y = T.zeros((2, 0))
        dist.broadcast(y, 0)
        return tuple(x.shape), tuple(y.shape)
    attempt("zero_size", zero_size)

    def strided():
        base = T.full((4, 6), -1.0)
        view = base[:, ::2]
        view.copy_(_tensor(T, _inp("strided", rank, f32, (4, 3)), f32))
        dist.all_reduce(view)
        tr = _tensor(T, _inp("strided_t", rank, f32, (3, 4)), f32).t()
        dist.broadcast(tr, 0)
        return _np(T, base), _np(T, tr)
    attempt("strided", strided)

    def uneven_a2a():
        # rank r sends r + j + 1 rows to rank j.
        in_splits = [rank + j + 1 for j in range(ws)]
        out_splits = [j + rank + 1 for j in range(ws)]
        x = T.arange(sum(in_splits) * 2, dtype=T.float32).reshape(-1, 2) + 100 * rank
        out = T.zeros((sum(out_splits), 2))
        dist.all_to_all_single(out, x, out_splits, in_splits)
        return _np(T, out)
    attempt("uneven_all_to_all_single", uneven_a2a)

    def p2p():
        nxt, prv = (rank + 1) % ws, (rank - 1) % ws
        got = {}
        x = T.full((3,), float(rank))
        y = T.zeros(3)
        if rank % 2 == 0:
            dist.send(x, nxt)
            dist.recv(y, prv)
        else:
            dist.recv(y, prv)
            dist.send(x, nxt)
        got["ring"] = _np(T, y)
        a = T.zeros(3)
        reqs = [dist.isend(T.full((3,), 10.0 + rank), nxt, tag=7), dist.irecv(a, prv, tag=7)]
        for r in reqs:
            r.wait()
        got["isend"] = _np(T, a)
        # Receive from any source on rank 0; the return value names the sender.
        if rank == 0:
            senders = set()
            for _ in range(ws - 1):
                b = T.zeros(1)
                s = dist.recv(b)
                senders.add((s, b.item()))
            got["any"] = sorted(senders)
            b = T.zeros(1)
            w = dist.irecv(b, tag=5)
            w.wait()
            got["irecv_any"] = (w.source_rank(), b.item())
        else:
            dist.send(T.full((1,), float(rank * 10)), 0)
            if rank == ws - 1:
                dist.send(T.full((1,), 7.0), 0, tag=5)
        c = T.zeros(2)
        ops = [dist.P2POp(dist.isend, T.full((2,), float(rank)), nxt),
               dist.P2POp(dist.irecv, c, prv)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        got["batch"] = _np(T, c)
        return got
    attempt("p2p", p2p)

    def barriers():
        dist.barrier()
        w = dist.barrier(async_op=True)
        w.wait()
        dist.monitored_barrier(timeout=timedelta(seconds=30))
        return True
    attempt("barrier", barriers)

    def objects():
        got = {}
        obj = {"rank": rank, "s": "x" * rank, "l": list(range(rank))}
        lst = [None] * ws
        dist.all_gather_object(lst, obj)
        got["all_gather"] = lst
        blist = [f"from{rank}", rank, {"k": rank}] if rank == 1 else [None, None, None]
        same = blist
        dist.broadcast_object_list(blist, src=1)
        got["broadcast"] = blist
        got["broadcast_in_place"] = same is blist
        out = [None]
        inp = [("item", r) for r in range(ws)] if rank == 0 else None
        dist.scatter_object_list(out, inp, src=0)
        got["scatter"] = out[0]
        gl = [None] * ws if rank == ws - 1 else None
        dist.gather_object(("g", rank), gl, dst=ws - 1)
        got["gather"] = gl
        return got
    attempt("objects", objects)

    if torch_mode:
        return

    def work():
        got = {}
        x = T.full((4,), float(rank + 1))
        w = dist.all_reduce(x, async_op=True)
        got["wait"] = w.wait()
        got["completed"] = w.is_completed()
        got["success"] = w.is_success()
        got["exception"] = w.exception()
        got["result"] = [_np(T, r) for r in w.result()]
        got["x"] = _np(T, x)
        y = T.full((2,), float(rank + 1))
        w = dist.all_reduce(y, async_op=True)
        fut = w.get_future()
        chained = fut.then(lambda f: f.value()[0] * 2)
        got["then"] = _np(T, chained.wait())
        got["future_done"] = fut.done()
        # timeout given to wait(): the work is done long before.
        z = T.ones(2)
        got["timed_wait"] = dist.broadcast(z, 0, async_op=True).wait(timedelta(seconds=30))
        return got
    attempt("work", work)

    def groups():
        got = {}
        members = [0, ws - 1]
        g = dist.new_group(members)
        got["member"] = rank in members
        got["rank"] = dist.get_rank(g)
        got["size"] = dist.get_world_size(g)
        x = T.full((2,), float(rank + 1))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ret = dist.all_reduce(x, group=g)
            dist.broadcast(x, ws - 1, group=g)  # src is a global rank
        got["ret"] = ret
        got["warned"] = [str(c.message) for c in caught]
        got["x"] = _np(T, x)
        if rank in members:
            got["ranks"] = dist.get_process_group_ranks(g)
            got["group_rank"] = dist.get_group_rank(g, ws - 1)
            got["global_rank"] = dist.get_global_rank(g, 1)
            got["backend"] = dist.get_backend(g)
            objs = [None] * 2
            dist.all_gather_object(objs, rank, group=g)
            got["objs"] = objs
        else:
            got["is_non_member"] = g is dist.GroupMember.NON_GROUP_MEMBER
        # A group of every rank, and the world: both see every rank.
        g_all = dist.new_group()
        y = T.ones(1)
        dist.all_reduce(y, group=g_all)
        got["all"] = y.item()
        got["world_ranks"] = dist.get_process_group_ranks(dist.group.WORLD)
        got["world_is_default"] = dist.group.WORLD is dist.GroupMember.WORLD
        dist.destroy_process_group(g_all)
        dist.barrier()
        return got
    attempt("groups", groups)

    def bad_input():
        got = {}

        def raises(name, f):
            try:
                f()
                got[name] = None
            except Exception as e:
                got[name] = (type(e).__name__, str(e),
                             isinstance(e, RuntimeError), isinstance(e, ValueError))

        x = T.ones(2, 3)
        raises("not_tensor", lambda: dist.all_reduce([1.0, 2.0]))
        raises("list_not_tensors", lambda: dist.all_gather([1, 2], x))
        raises("op_not_reduceop", lambda: dist.all_reduce(x, "sum"))
        raises("band_float", lambda: dist.all_reduce(T.ones(2), dist.ReduceOp.BAND))
        raises("avg_int", lambda: dist.all_reduce(T.ones(2, dtype=T.int64), dist.ReduceOp.AVG))
        raises("max_complex", lambda: dist.all_reduce(T.ones(2, dtype=T.complex64),
                                                      dist.ReduceOp.MAX))
        raises("all_gather_len", lambda: dist.all_gather([T.zeros(2, 3)], x))
        raises("all_gather_shape", lambda: dist.all_gather(
            [T.zeros(3, 3) for _ in range(ws)], x))
        raises("all_gather_into_tensor_size", lambda: dist.all_gather_into_tensor(
            T.zeros(2 * ws + 1, 3), x))
        raises("reduce_scatter_tensor_size", lambda: dist.reduce_scatter_tensor(
            T.zeros(2, 3), T.zeros(2 * ws + 1, 3)))
        # The root without its list and the others with one: each rank rejects its own call.
        raises("gather_list", lambda: dist.gather(
            x, [T.zeros(2, 3) for _ in range(ws)] if rank != 0 else None, dst=0))
        raises("scatter_list", lambda: dist.scatter(
            x, [T.zeros(2, 3) for _ in range(ws)] if rank != 0 else None, src=0))
        raises("src_out_of_range", lambda: dist.broadcast(x, ws + 3))
        raises("group_not_pg", lambda: dist.all_reduce(x, group="world"))
        raises("init_twice", lambda: dist.init_process_group("gloo"))
        raises("p2p_op", lambda: dist.P2POp(dist.send, x, 0))
        raises("backend", lambda: dist.new_group([0], backend="nccl")
               if not dist.is_nccl_available() else None)
        raises("new_group_rank", lambda: dist.new_group([0, ws + 1]))
        raises("new_group_twice", lambda: dist.new_group([0, 0]))
        raises("new_group_timeout", lambda: dist.new_group([0], timeout=5))
        # The group still works after the rejected calls.
        y = T.full((2,), float(rank))
        dist.all_reduce(y)
        got["after"] = _np(T, y)
        return got
    attempt("bad_input", bad_input)

    def store():
        from _dist_util import connect_store
        s = connect_store()
        n = s.add("counter", 1)
        s.set(f"rank{rank}", f"hello {rank}")
        s.wait([f"rank{r}" for r in range(ws)])
        got = {"add": n, "values": [s.get(f"rank{r}") for r in range(ws)]}
        dist.barrier()
        got["counter"] = s.add("counter", 0)
        return got
    attempt("store", store)

    def gil():
        # A receive blocked in one thread must not stop this thread from running Python:
        # rank 1 sends only once rank 0's main thread has written "ready" to the store.
        import threading
        from _dist_util import connect_store
        s = connect_store()
        buf = T.zeros(3)
        if rank == 0:
            th = threading.Thread(target=lambda: dist.recv(buf, 1, tag=3))
            th.start()
            time.sleep(0.05)
            s.set("ready", "1")
            th.join(30)
            return _np(T, buf), th.is_alive()
        if rank == 1:
            s.wait(["ready"], timedelta(seconds=30))
            dist.send(T.full((3,), 5.0), 0, tag=3)
        return None
    attempt("gil", gil)

    def process_group_object():
        pg = dist.group.WORLD
        x = T.full((2,), float(rank + 1))
        pg.allreduce([x]).wait()
        y = T.full((2,), float(rank))
        pg.broadcast([y], ws - 1).wait()
        pg.barrier().wait()
        assert repr(pg) == f"<ember.distributed.ProcessGroup gloo, rank {rank} of {ws}>"
        w = pg.barrier()
        w.wait()
        assert repr(w).startswith("<ember.distributed.Work barrier #") and "completed" in repr(w)
        return pg.rank(), pg.size(), pg.name(), _np(T, x), _np(T, y)
    attempt("process_group_object", process_group_object)

    R["info"] = (dist.get_rank(), dist.get_world_size(), dist.get_backend(),
                 dist.is_initialized(), str(dist.get_backend()))

    def sampler():
        from ember.utils.data import DistributedSampler
        return list(DistributedSampler(list(range(10)), shuffle=False))
    attempt("sampler", sampler)

    def init_methods():
        import os
        from _dist_util import connect_store, free_port
        s = connect_store()
        if rank == 0:
            s.set("tcp_port", str(free_port()))
        tcp_port = int(s.get("tcp_port"))
        file_path = os.path.join(os.environ["EMBER_TEST_RDZV_DIR"], "init_file")
        dist.barrier()
        dist.destroy_process_group()
        got = []
        for method in ("env://", f"tcp://127.0.0.1:{tcp_port}", f"file://{file_path}"):
            if method.startswith("env"):
                dist.init_process_group("gloo", timeout=timedelta(seconds=30))
            else:
                dist.init_process_group(backend=None, init_method=method, rank=rank,
                                        world_size=ws, timeout=timedelta(seconds=30))
            x = T.full((2,), float(rank + 1))
            dist.all_reduce(x)
            got.append((method.split(":")[0], dist.get_rank(), dist.get_world_size(),
                        x.tolist(), dist.is_initialized()))
            dist.destroy_process_group()
            got.append(dist.is_initialized())
        return got
    # Last: it ends with no default group.
    attempt("init_methods", init_methods)


def _small(rank, ws):
    """World size 4: all_reduce over every dtype and op, broadcast and all_gather."""
    T, dist = _lib("ember")
    R = {}
    for dt in DTYPES:
        for op in OPS:
            if _valid(op, dt):
                x = _tensor(T, _inp(f"ar/{op}", rank, dt), dt)
                dist.all_reduce(x, getattr(dist.ReduceOp, op))
                R["all_reduce", dt, op] = _np(T, x)
        x = _tensor(T, _inp("bc", rank, dt), dt)
        dist.broadcast(x, ws - 1)
        R["broadcast", dt] = _np(T, x)
        out = [T.zeros((2, 3), dtype=getattr(T, dt)) for _ in range(ws)]
        dist.all_gather(out, _tensor(T, _inp("ag", rank, dt), dt))
        R["all_gather", dt] = [_np(T, o) for o in out]
    return R


# ---- references computed here ---------------------------------------------------------------

def _reduce_ref(arrays, op, dt):
    a = np.stack(arrays)
    if dt == "bool":
        if op in ("SUM", "MAX", "BOR"):
            return a.any(0)
        if op in ("PRODUCT", "MIN", "BAND"):
            return a.all(0)
        return np.logical_xor.reduce(a, 0)
    if op == "SUM":
        return a.sum(0, dtype=a.dtype)
    if op == "AVG":
        return a.astype(np.complex128 if dt in COMPLEX else np.float64).sum(0) / len(arrays)
    if op == "PRODUCT":
        return np.prod(a, 0, dtype=a.dtype)
    if op == "MIN":
        return a.min(0)
    if op == "MAX":
        return a.max(0)
    if op == "BAND":
        return np.bitwise_and.reduce(a, 0)
    if op == "BOR":
        return np.bitwise_or.reduce(a, 0)
    return np.bitwise_xor.reduce(a, 0)


def _check(got, want, dt, op=None):
    if _is_err(got):
        pytest.fail(f"the rank raised {got[1]}: {got[2]}")
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    if op == "AVG":
        tol = {"float16": 1e-3, "bfloat16": 1e-2}.get(dt, 1e-6)
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


# ---- the runs ---------------------------------------------------------------------------------

_runs = {}


def _run(key):
    if key not in _runs:
        lib, ws = key
        try:
            if lib == "small":
                _runs[key] = run_ranks(_small, ws, timeout=120)
            else:
                _runs[key] = run_ranks(_battery, ws, lib, init=lib, timeout=120)
        except (RanksFailed, TimeoutError) as e:
            _runs[key] = e
    res = _runs[key]
    if isinstance(res, Exception):
        pytest.fail(f"the {key} run failed: {res}")
    return res


WS = [2, 3]


@pytest.mark.parametrize("ws", WS)
@pytest.mark.parametrize("dt,op", [(dt, op) for dt in DTYPES for op in OPS if _valid(op, dt)])
def test_all_reduce(ws, dt, op):
    # The (op, dtype) pairs that are not defined raise: see test_bad_input.
    res = _run(("ember", ws))
    want = _reduce_ref([_inp(f"ar/{op}", r, dt) for r in range(ws)], op, dt)
    for r in range(ws):
        _check(res[r]["all_reduce", dt, op], want, dt, op)


def test_all_reduce_world_size_4():
    res = _run(("small", 4))
    for dt in DTYPES:
        for op in OPS:
            if _valid(op, dt):
                want = _reduce_ref([_inp(f"ar/{op}", r, dt) for r in range(4)], op, dt)
                for r in range(4):
                    _check(res[r]["all_reduce", dt, op], want, dt, op)
        for r in range(4):
            _check(res[r]["broadcast", dt], _inp("bc", 3, dt), dt)
            for j in range(4):
                _check(res[r]["all_gather", dt][j], _inp("ag", j, dt), dt)


@pytest.mark.parametrize("ws", WS)
@pytest.mark.parametrize("dt", DTYPES)
def test_broadcast_gather_scatter(ws, dt):
    res = _run(("ember", ws))
    for r in range(ws):
        _check(res[r]["broadcast", dt], _inp("bc", ws - 1, dt), dt)
        _check(res[r]["scatter", dt], _inp("sc", r, dt), dt)
        for j in range(ws):
            _check(res[r]["all_gather", dt][j], _inp("ag", j, dt), dt)
    gathered = res[0]["gather", dt]
    for j in range(ws):
        _check(gathered[j], _inp("ga", j, dt), dt)
    for r in range(1, ws):
        assert res[r]["gather", dt] is None


@pytest.mark.parametrize("ws", WS)
@pytest.mark.parametrize("dt", DTYPES)
def test_reduce(ws, dt):
    res = _run(("ember", ws))
    for op in ("SUM", "MIN") if dt not in COMPLEX else ("SUM",):
        want = _reduce_ref([_inp(f"rd/{op}", r, dt) for r in range(ws)], op, dt)
        _check(res[1]["reduce", dt, op], want, dt, op)


@pytest.mark.parametrize("ws", WS)
@pytest.mark.parametrize("dt", DTYPES)
def test_all_gather_into_tensor(ws, dt):
    res = _run(("ember", ws))
    want = np.concatenate([_inp("agt", j, dt) for j in range(ws)])
    for r in range(ws):
        got = res[r]["all_gather_into_tensor", dt]
        if _is_err(got):
            pytest.fail(f"rank {r} raised {got[1]}: {got[2]}")
        flat, stacked = got
        _check(flat, want, dt)
        _check(stacked, want.reshape(ws, 2, 3), dt)


@pytest.mark.parametrize("ws", WS)
@pytest.mark.parametrize("dt", DTYPES)
def test_reduce_scatter(ws, dt):
    res = _run(("ember", ws))
    for op in OPS:
        if not _valid(op, dt):
            continue
        for r in range(ws):
            want = _reduce_ref([_inp(f"rs/{op}/{r}", j, dt) for j in range(ws)], op, dt)
            _check(res[r]["reduce_scatter", dt, op], want, dt, op)
            want = _reduce_ref([_inp(f"rst/{op}", j, dt, (2 * ws, 3))[2 * r:2 * r + 2]
                                for j in range(ws)], op, dt)
            _check(res[r]["reduce_scatter_tensor", dt, op], want, dt, op)


@pytest.mark.parametrize("ws", WS)
@pytest.mark.parametrize("dt", DTYPES)
def test_all_to_all(ws, dt):
    res = _run(("ember", ws))
    for r in range(ws):
        for j in range(ws):
            _check(res[r]["all_to_all", dt][j], _inp(f"a2a/{r}", j, dt), dt)
        want = np.concatenate([_inp("a2as", j, dt, (2 * ws, 3))[2 * r:2 * r + 2]
                               for j in range(ws)])
        _check(res[r]["all_to_all_single", dt], want, dt)


@pytest.mark.parametrize("ws", WS)
def test_layouts_and_uneven_splits(ws):
    res = _run(("ember", ws))
    total = float(sum(range(1, ws + 1)))
    for r in range(ws):
        assert res[r]["zero_dim"] == (total, ())
        assert res[r]["zero_size"] == ((0, 3), (2, 0))
        base, tr = res[r]["strided"]
        want = _reduce_ref([_inp("strided", j, "float32", (4, 3)) for j in range(ws)], "SUM",
                           "float32")
        np.testing.assert_array_equal(base[:, ::2], want)
        np.testing.assert_array_equal(base[:, 1::2], -1.0)  # untouched between the columns
        np.testing.assert_array_equal(tr, _inp("strided_t", 0, "float32", (3, 4)).T)
        # uneven all_to_all_single: rank j sent rows of its arange (offset 100 j).
        pieces = []
        for j in range(ws):
            splits = [j + k + 1 for k in range(ws)]
            x = np.arange(sum(splits) * 2, dtype=np.float32).reshape(-1, 2) + 100 * j
            start = sum(splits[:r])
            pieces.append(x[start:start + splits[r]])
        np.testing.assert_array_equal(res[r]["uneven_all_to_all_single"], np.concatenate(pieces))


@pytest.mark.parametrize("ws", WS)
def test_point_to_point(ws):
    res = _run(("ember", ws))
    for r in range(ws):
        p = res[r]["p2p"]
        assert not _is_err(p), p
        prv = (r - 1) % ws
        np.testing.assert_array_equal(p["ring"], np.full(3, float(prv), np.float32))
        np.testing.assert_array_equal(p["isend"], np.full(3, 10.0 + prv, np.float32))
        np.testing.assert_array_equal(p["batch"], np.full(2, float(prv), np.float32))
    assert res[0]["p2p"]["any"] == [(j, j * 10.0) for j in range(1, ws)]
    assert res[0]["p2p"]["irecv_any"] == (ws - 1, 7.0)
    for r in range(ws):
        assert res[r]["barrier"] is True


@pytest.mark.parametrize("ws", WS)
def test_object_collectives(ws):
    res = _run(("ember", ws))
    objs = [{"rank": j, "s": "x" * j, "l": list(range(j))} for j in range(ws)]
    for r in range(ws):
        o = res[r]["objects"]
        assert not _is_err(o), o
        assert o["all_gather"] == objs
        assert o["broadcast"] == ["from1", 1, {"k": 1}]
        assert o["broadcast_in_place"] is True
        assert o["scatter"] == ("item", r)
        assert o["gather"] == ([("g", j) for j in range(ws)] if r == ws - 1 else None)


@pytest.mark.parametrize("ws", WS)
def test_work_handles_and_futures(ws):
    res = _run(("ember", ws))
    total = float(sum(range(1, ws + 1)))
    for r in range(ws):
        w = res[r]["work"]
        assert not _is_err(w), w
        assert w["wait"] is True
        assert w["completed"] is True and w["success"] is True
        assert w["exception"] is None
        np.testing.assert_array_equal(w["x"], np.full(4, total, np.float32))
        assert len(w["result"]) == 1
        np.testing.assert_array_equal(w["result"][0], np.full(4, total, np.float32))
        np.testing.assert_array_equal(w["then"], np.full(2, 2 * total, np.float32))
        assert w["future_done"] is True
        assert w["timed_wait"] is True


@pytest.mark.parametrize("ws", WS)
def test_new_group(ws):
    res = _run(("ember", ws))
    members = [0, ws - 1]
    for r in range(ws):
        g = res[r]["groups"]
        assert not _is_err(g), g
        assert g["ret"] is None
        assert g["all"] == float(ws)
        assert g["world_ranks"] == list(range(ws))
        assert g["world_is_default"] is True
        if r in members:
            assert g["member"] and g["rank"] == members.index(r) and g["size"] == 2
            assert g["warned"] == []
            # all_reduce over the members, then broadcast from global rank ws - 1.
            np.testing.assert_array_equal(g["x"], np.full(2, 1.0 + ws, np.float32))
            assert g["ranks"] == members
            assert g["group_rank"] == 1 and g["global_rank"] == ws - 1
            assert g["backend"] == "gloo"
            assert g["objs"] == members
        else:
            # Not a member: rank and size -1, collectives warn and return None untouched.
            assert g["rank"] == -1 and g["size"] == -1 and g["is_non_member"]
            np.testing.assert_array_equal(g["x"], np.full(2, r + 1.0, np.float32))
            assert len(g["warned"]) == 2 and "does not belong to the given group" in g["warned"][0]


@pytest.mark.parametrize("ws", WS)
def test_bad_input(ws):
    res = _run(("ember", ws))
    for r in range(ws):
        b = res[r]["bad_input"]
        assert not _is_err(b), b

        def kind(name):
            assert b[name] is not None, f"{name} did not raise"
            return b[name][0]
        assert kind("not_tensor") == "TypeError"
        assert "tensor" in b["not_tensor"][1]
        assert kind("list_not_tensors") == "TypeError"
        assert kind("op_not_reduceop") == "TypeError"
        assert kind("band_float") == "TypeError" and "BAND" in b["band_float"][1]
        assert kind("avg_int") == "TypeError" and "AVG" in b["avg_int"][1]
        assert kind("max_complex") == "TypeError"
        # Sizes: RuntimeErrors naming the sizes, as torch's.
        for name in ("all_gather_len", "all_gather_shape", "all_gather_into_tensor_size",
                     "reduce_scatter_tensor_size", "src_out_of_range"):
            assert b[name] is not None, f"{name} did not raise"
            assert b[name][2] and not b[name][3], b[name]  # RuntimeError, not ValueError
        msg = b["all_gather_shape"][1]
        assert "[all_gather]" in msg and ("9" in msg and "6" in msg or "3, 3" in msg)
        assert str((2 * ws + 1) * 3) in b["all_gather_into_tensor_size"][1]
        assert kind("gather_list") == "ValueError" and "gather_list" in b["gather_list"][1]
        assert kind("scatter_list") == "ValueError" and "scatter_list" in b["scatter_list"][1]
        assert ("must NOT" in b["gather_list"][1]) == (r != 0)
        assert kind("group_not_pg") == "TypeError"
        assert kind("init_twice") == "RuntimeError"
        assert kind("p2p_op") == "ValueError"
        assert kind("new_group_rank") == "ValueError" and str(ws + 1) in b["new_group_rank"][1]
        assert kind("new_group_twice") == "ValueError"
        assert kind("new_group_timeout") == "RuntimeError"
        assert kind("backend") == "RuntimeError" and "NCCL" in b["backend"][1]
        np.testing.assert_array_equal(b["after"],
                                      np.full(2, float(sum(range(ws))), np.float32))


@pytest.mark.parametrize("ws", WS)
def test_store_across_ranks(ws):
    res = _run(("ember", ws))
    adds = sorted(res[r]["store"]["add"] for r in range(ws))
    assert adds == list(range(1, ws + 1))
    for r in range(ws):
        s = res[r]["store"]
        assert s["values"] == [f"hello {j}".encode() for j in range(ws)]
        assert s["counter"] == ws
        assert res[r]["info"] == (r, ws, "gloo", True, "gloo")


@pytest.mark.parametrize("ws", WS)
def test_blocking_calls_release_the_gil(ws):
    res = _run(("ember", ws))
    got = res[0]["gil"]
    assert not _is_err(got), got
    buf, still_blocked = got
    assert not still_blocked
    np.testing.assert_array_equal(buf, np.full(3, 5.0, np.float32))


@pytest.mark.parametrize("ws", WS)
def test_process_group_object(ws):
    res = _run(("ember", ws))
    total = float(sum(range(1, ws + 1)))
    for r in range(ws):
        got = res[r]["process_group_object"]
        assert not _is_err(got), got
        rank, size, name, x, y = got
        assert (rank, size, name) == (r, ws, "gloo")
        np.testing.assert_array_equal(x, np.full(2, total, np.float32))
        np.testing.assert_array_equal(y, np.full(2, ws - 1.0, np.float32))


@pytest.mark.parametrize("ws", WS)
def test_distributed_sampler_reads_the_group(ws):
    """DistributedSampler with num_replicas/rank None asks the default group."""
    res = _run(("ember", ws))
    padded = list(range(10)) + list(range(10))[:-10 % ws]  # torch pads to a multiple of ws
    for r in range(ws):
        assert res[r]["sampler"] == padded[r::ws]


@pytest.mark.parametrize("ws", WS)
def test_init_methods(ws):
    """After the battery: destroy, then env://, tcp:// and file:// in the same processes."""
    res = _run(("ember", ws))
    total = float(sum(range(1, ws + 1)))
    for r in range(ws):
        got = res[r]["init_methods"]
        assert not _is_err(got), got
        assert got == [("env", r, ws, [total] * 2, True), False,
                       ("tcp", r, ws, [total] * 2, True), False,
                       ("file", r, ws, [total] * 2, True), False]


def test_blocking_store_get_releases_the_gil():
    import threading
    import ember.distributed as dist
    s = dist.HashStore()
    s.set_timeout(timedelta(seconds=30))
    got = []
    th = threading.Thread(target=lambda: got.append(s.get("late")))
    th.start()
    time.sleep(0.05)
    s.set("late", "here")  # runs only if the blocked get let go of the GIL
    th.join(30)
    assert got == [b"here"]


# ---- against torch 1.13's Gloo ----------------------------------------------------------------

def _is_err(x):
    return isinstance(x, tuple) and len(x) == 3 and isinstance(x[0], str) and x[0] == "error"


def _same(got, want, where):
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) >= set(want), where
        for k in want:
            _same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (list, tuple)) and not _is_err(want):
        assert isinstance(got, type(want)) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {got!r}"
        assert got.dtype == want.dtype and got.shape == want.shape, where
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        assert got == want, where


def test_matches_torch_gloo():
    """The same battery under torch.distributed (Gloo): every result torch produces, ember
    produces identically (values, dtypes and shapes)."""
    pytest.importorskip("torch")
    ours = _run(("ember", 2))
    theirs = _run(("torch", 2))
    compared = 0
    for r in range(2):
        for key, want in theirs[r].items():
            if _is_err(want):
                continue  # Gloo in torch 1.13 lacks it
            if key in ("strided", "gil", "process_group_object"):
                # torch 1.13's Gloo reduces the first numel() elements of a strided tensor's
                # storage rather than the view; the reference test covers ours.
                continue
            _same(ours[r][key], want, f"rank {r} {key}")
            compared += 1
    assert compared > 100


# ---- in this process: module surface, futures, stores ------------------------------------------

def test_module_surface():
    import ember
    import ember.distributed as dist
    assert dist.is_available()
    assert not dist.is_initialized()
    assert dist.group.WORLD is None and dist.GroupMember.WORLD is None
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.all_reduce(ember.ones(2))
    assert dist.get_rank(dist.GroupMember.NON_GROUP_MEMBER) == -1
    assert dist.is_gloo_available() and not dist.is_mpi_available()
    assert dist.Backend("GLOO") == "gloo" == dist.Backend.GLOO
    with pytest.raises(ValueError):
        dist.Backend("carrier-pigeon")
    assert dist.ReduceOp.SUM == dist.ReduceOp.RedOpType.SUM
    assert {op: getattr(dist.ReduceOp, op).name for op in OPS} == {op: op for op in OPS}
    for cls in (dist.DistBackendError, dist.DistStoreError, dist.DistNetworkError):
        assert issubclass(cls, dist.DistError) and issubclass(cls, RuntimeError)
    e = dist.DistBackendError("boom")
    assert pickle.loads(pickle.dumps(e)).args == ("boom",)
    assert dist.get_debug_level() in (dist.DebugLevel.OFF, dist.DebugLevel.INFO,
                                      dist.DebugLevel.DETAIL)
    with pytest.raises(RuntimeError, match="timedelta"):
        dist.init_process_group("gloo", timeout=30)
    with pytest.raises(ValueError, match="both"):
        dist.init_process_group("gloo", init_method="env://", store=dist.HashStore())


def test_debug_level_round_trip(monkeypatch):
    import ember.distributed as dist
    old = dist.get_debug_level()
    try:
        dist.set_debug_level(dist.DebugLevel.DETAIL)
        assert dist.get_debug_level() == dist.DebugLevel.DETAIL
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "info")
        monkeypatch.delenv("EMBER_DISTRIBUTED_DEBUG", raising=False)
        dist.set_debug_level_from_env()
        assert dist.get_debug_level() == dist.DebugLevel.INFO
        monkeypatch.setenv("EMBER_DISTRIBUTED_DEBUG", "LOUD")
        with pytest.raises(ValueError, match="OFF, INFO or DETAIL"):
            dist.set_debug_level_from_env()
    finally:
        dist.set_debug_level(old)


def test_torchelastic_launched(monkeypatch):
    import ember.distributed as dist
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert not dist.is_torchelastic_launched()
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "job")
    assert dist.is_torchelastic_launched()


def test_future():
    from ember.futures import Future, collect_all, wait_all
    f = Future()
    assert not f.done()
    with pytest.raises(RuntimeError):
        f.value()
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    g = f.then(lambda fut: fut.value() + 1)
    f.set_result(41)
    assert f.done() and f.wait() == 41 and seen == [41] and g.wait() == 42
    with pytest.raises(RuntimeError):
        f.set_result(1)
    h = Future()
    k = h.then(lambda fut: fut.value())
    h.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        h.wait()
    with pytest.raises(ValueError, match="bad"):
        k.wait()
    a, b = Future(), Future()
    both = collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_result(2)
    assert [x.value() for x in both.wait()] == [1, 2]
    assert wait_all([a, b]) == [1, 2]


def _store_script(s, lib):
    """The same operations on an ember or a torch store; returns what each gives."""
    out = []
    s.set("a", "one")
    s.set("b", b"\x00\xff")
    out.append(s.get("a"))
    out.append(s.get("b"))
    out.append(s.add("n", 5))
    out.append(s.add("n", -2))
    out.append(s.get("n"))
    out.append(s.compare_set("a", "one", "uno"))
    out.append(s.compare_set("a", "one", "eins"))
    out.append(s.compare_set("fresh", "", "new"))
    out.append(s.delete_key("b"))
    out.append(s.delete_key("b"))
    if lib == "ember":  # torch 1.13's Python stores have no check()
        assert s.check(["a", "n"]) and not s.check(["a", "b"])
    s.wait(["a", "n"])
    s.wait(["a"], timedelta(seconds=5))
    return out


@pytest.fixture
def torch_dist():
    torch = pytest.importorskip("torch")
    return torch.distributed


def test_hash_and_prefix_store_match_torch(torch_dist):
    import ember.distributed as dist
    assert _store_script(dist.HashStore(), "ember") == _store_script(torch_dist.HashStore(),
                                                                       "torch")
    base, tbase = dist.HashStore(), torch_dist.HashStore()
    p = dist.PrefixStore("job", base)
    tp = torch_dist.PrefixStore("job", tbase)
    assert _store_script(p, "ember") == _store_script(tp, "torch")
    assert base.get("job/a") == tbase.get("job/a") == b"uno"
    assert not base.check(["a"])
    assert p.num_keys() == tp.num_keys()
    assert p.underlying_store is base


def test_file_store(tmp_path, torch_dist):
    import ember.distributed as dist
    path = str(tmp_path / "store")
    s1, s2 = dist.FileStore(path, 2), dist.FileStore(path, 2)
    # torch's HashStore: its FileStore's delete_key answers True for a key already deleted.
    assert _store_script(s1, "ember") == _store_script(torch_dist.HashStore(), "torch")
    # Two handles on one file see each other's keys.
    s1.set("shared", "v")
    assert s2.get("shared") == b"v"
    assert s2.add("n", 1) == 4
    assert s1.path == path


def test_tcp_store(torch_dist):
    import ember.distributed as dist
    server = dist.TCPStore("127.0.0.1", 0, 2, True, timedelta(seconds=10),
                           wait_for_workers=False)
    assert 0 < server.port < 65536 and server.host == "127.0.0.1"
    client = dist.TCPStore("127.0.0.1", server.port, 2, False, timedelta(seconds=10))
    assert _store_script(client, "ember") == _store_script(torch_dist.HashStore(), "torch")
    assert server.get("a") == b"uno"
    assert server.num_keys() == client.num_keys() >= 3
    assert client.timeout == timedelta(seconds=10)
    with pytest.raises(TypeError):
        client.set("x", 3.5)
    with pytest.raises(TypeError):
        client.wait("a")


@pytest.mark.parametrize("kind", ["hash", "file", "tcp", "prefix"])
def test_store_timeouts(kind, tmp_path):
    import ember.distributed as dist
    if kind == "hash":
        s = dist.HashStore()
    elif kind == "file":
        s = dist.FileStore(str(tmp_path / "f"), 1)
    elif kind == "tcp":
        s = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=10))
    else:
        s = dist.PrefixStore("p", dist.HashStore())
    s.set_timeout(timedelta(milliseconds=100))
    assert s.timeout == timedelta(milliseconds=100)
    with pytest.raises(dist.DistStoreError) as e:
        s.get("missing")
    assert isinstance(e.value, RuntimeError) and "missing" in str(e.value)
    with pytest.raises(dist.DistStoreError):
        s.wait(["missing"], timedelta(milliseconds=50))
    with pytest.raises(dist.DistStoreError):
        s.wait(["missing"])


def test_tcp_store_connect_refused():
    import socket
    import ember.distributed as dist
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        with pytest.raises(dist.DistError):
            dist.TCPStore("127.0.0.1", port, 2, False, timedelta(milliseconds=300))
    with pytest.raises(ValueError):
        dist.TCPStore("127.0.0.1", 70000, 1, True)
