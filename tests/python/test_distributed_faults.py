"""Faults are errors, never hangs: a dead rank, a rank that stops calling, a desynchronised
call (EMBER_DISTRIBUTED_DEBUG=DETAIL). Each scenario runs in one set of rank processes; the
process groups' timeouts are small, and run_ranks bounds the whole run."""

import os
import signal
import time
from datetime import timedelta

import pytest

from _dist_util import RankDied, run_ranks

PG_TIMEOUT = timedelta(seconds=4)


def _report(e):
    import ember.distributed as dist
    return (type(e).__name__, str(e), isinstance(e, dist.DistBackendError),
            isinstance(e, RuntimeError))


def _killed_during_all_reduce(rank, ws):
    import ember
    import ember.distributed as dist
    for _ in range(3):  # collectives #0, #1, #2 succeed
        x = ember.ones(8)
        dist.all_reduce(x)
        assert x[0].item() == ws
    if rank == ws - 1:
        # Die while the others are inside collective #3 (after publishing #2).
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    t0 = time.monotonic()
    got = {}
    x = ember.ones(1 << 16)
    try:
        if rank == 0:
            dist.all_reduce(x)
        else:
            w = dist.all_reduce(x, async_op=True)
            fut = w.get_future()
            try:
                w.wait()
            finally:
                got["completed"] = w.is_completed()
                got["success"] = w.is_success()
                exc = w.exception()
                got["exception"] = None if exc is None else _report(exc)
                try:
                    fut.wait()
                    got["future"] = None
                except Exception as e:
                    got["future"] = _report(e)
        got["error"] = None
    except Exception as e:
        got["error"] = _report(e)
    got["elapsed"] = time.monotonic() - t0
    return got


def test_rank_killed_during_all_reduce():
    ws = 3
    res = run_ranks(_killed_during_all_reduce, ws, pg_timeout=PG_TIMEOUT, timeout=60,
                    return_exceptions=True)
    assert isinstance(res[ws - 1], RankDied) and res[ws - 1].returncode == -signal.SIGKILL
    for r in range(ws - 1):
        got = res[r]
        assert not isinstance(got, BaseException), getattr(got, "child_traceback", got)
        assert got["error"] is not None, "the collective did not fail"
        name, msg, is_backend, is_runtime = got["error"]
        assert name == "DistBackendError" and is_backend and is_runtime
        assert "[all_reduce]" in msg and "#3" in msg, msg
        assert "rank [2] never arrived" in msg and "last seen at #2" in msg, msg
        # Raised within the group's timeout (with room for a loaded machine).
        assert got["elapsed"] < PG_TIMEOUT.total_seconds() + 10, got["elapsed"]
    h = res[1]
    assert h["completed"] is True and h["success"] is False
    assert h["exception"] is not None and h["exception"][0] == "DistBackendError"
    assert "#3" in h["exception"][1]
    assert h["future"] is not None and h["future"][0] == "DistBackendError"


def _stops_calling(rank, ws):
    import ember
    import ember.distributed as dist
    from _dist_util import connect_store
    store = connect_store()
    got = {}
    # Work.wait with a timeout: rank 1 joins only after rank 0's wait gave up.
    x = ember.full((4,), float(rank + 1))
    if rank == 0:
        w = dist.all_reduce(x, async_op=True)
        try:
            w.wait(timedelta(milliseconds=300))
            got["short_wait"] = None
        except Exception as e:
            got["short_wait"] = _report(e)
        store.set("go", "1")
        got["late_wait"] = w.wait()
    else:
        store.wait(["go"], timedelta(seconds=30))
        dist.all_reduce(x)
    got["x"] = x.tolist()
    dist.all_reduce(ember.ones(1))  # collective #1
    if rank == 1:
        # Stop calling: wait until rank 0 has seen its collective #2 fail.
        store.wait(["reported"], timedelta(seconds=60))
        return got
    t0 = time.monotonic()
    try:
        dist.all_reduce(ember.ones(4))
        got["error"] = None
    except Exception as e:
        got["error"] = _report(e)
    got["elapsed"] = time.monotonic() - t0
    store.set("reported", "1")
    return got


def test_rank_stops_calling():
    res = run_ranks(_stops_calling, 2, pg_timeout=timedelta(seconds=2), timeout=60)
    got = res[0]
    assert got["short_wait"] is not None and got["short_wait"][2], got["short_wait"]
    assert got["late_wait"] is True
    assert got["x"] == [3.0] * 4 and res[1]["x"] == [3.0] * 4
    name, msg, is_backend, is_runtime = got["error"]
    assert name == "DistBackendError" and is_runtime
    assert "[all_reduce]" in msg and "#2" in msg, msg
    assert "rank [1] never arrived" in msg and "last seen at #1" in msg, msg
    assert got["elapsed"] < 2 + 10, got["elapsed"]


def _desync(rank, ws):
    import ember
    import ember.distributed as dist
    got = {"level": str(dist.get_debug_level())}
    x = ember.ones(4)
    dist.all_reduce(x)  # #0: every rank agrees
    got["first"] = x.tolist()
    # #1: ranks 1 and 2 pass other shapes; the report names rank 1, the first that differs.
    try:
        dist.all_reduce(ember.ones(4 + rank))
        got["shape"] = None
    except Exception as e:
        got["shape"] = _report(e)
    # The group still works, and a dtype mismatch is caught too.
    y = ember.ones(3)
    dist.all_reduce(y)
    got["after"] = y.tolist()
    try:
        dist.all_reduce(ember.ones(2, dtype=ember.float64 if rank == 2 else ember.float32))
        got["dtype"] = None
    except Exception as e:
        got["dtype"] = _report(e)
    return got


def test_desync_reported_in_detail_mode():
    ws = 3
    res = run_ranks(_desync, ws, timeout=60, pg_timeout=timedelta(seconds=20),
                    env={"EMBER_DISTRIBUTED_DEBUG": "DETAIL", "TORCH_DISTRIBUTED_DEBUG": None})
    for r in range(ws):
        got = res[r]
        assert got["level"] == "DebugLevel.DETAIL"
        assert got["first"] == [3.0] * 4 and got["after"] == [3.0] * 3
        assert got["shape"] is not None, "the shape desync was not reported"
        name, msg, is_backend, _ = got["shape"]
        assert is_backend and "desync" in msg and "[all_reduce]" in msg, msg
        assert "rank 1 called" in msg and "[5]" in msg and "[4]" in msg, msg
        assert got["dtype"] is not None, "the dtype desync was not reported"
        name, msg, is_backend, _ = got["dtype"]
        assert is_backend and "rank 2 called" in msg and "float64" in msg, msg


def test_debug_level_off_by_default():
    env = {"EMBER_DISTRIBUTED_DEBUG": None, "TORCH_DISTRIBUTED_DEBUG": None}
    res = run_ranks(_agreeing, 2, timeout=60, env=env)
    assert res == [("DebugLevel.OFF", [2.0] * 4)] * 2


def _agreeing(rank, ws):
    import ember
    import ember.distributed as dist
    x = ember.ones(4)
    dist.all_reduce(x)
    return str(dist.get_debug_level()), x.tolist()


def _monitored(rank, ws):
    import ember.distributed as dist
    from _dist_util import connect_store
    store = connect_store()
    dist.monitored_barrier(timeout=timedelta(seconds=20))  # everyone arrives
    if rank == ws - 1:
        store.wait(["reported"], timedelta(seconds=60))  # never arrives at the second one
        return None
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=1), wait_all_ranks=True)
        got = None
    except Exception as e:
        got = _report(e)
    store.add("failures", 1)
    if store.add("failures", 0) == ws - 1:
        store.set("reported", "1")
    return got


def test_monitored_barrier_names_the_missing_rank():
    ws = 3
    res = run_ranks(_monitored, ws, timeout=60, pg_timeout=timedelta(seconds=20))
    assert res[ws - 1] is None
    name, msg, is_backend, is_runtime = res[0]
    assert is_backend and "[monitored_barrier]" in msg and "Rank 2" in msg, msg
    # Rank 1 is not released by rank 0: it raises too, within its own timeout.
    assert res[1] is not None and res[1][2], res[1]


def _hang(rank, ws, pid_dir):
    import subprocess
    import sys
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(os.path.join(pid_dir, f"{rank}.pids"), "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    time.sleep(600)


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_run_ranks_kills_hung_ranks_and_their_children(tmp_path):
    with pytest.raises(TimeoutError, match="did not finish"):
        run_ranks(_hang, 2, str(tmp_path), init=None, timeout=6)
    pids = []
    for r in range(2):
        with open(tmp_path / f"{r}.pids") as f:
            pids += [int(p) for p in f.read().split()]
    assert len(pids) == 4
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
