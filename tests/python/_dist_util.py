"""Run a Python function on N ranks, each in its own process, for the distributed tests.

    from _dist_util import run_ranks

    def body(rank, world_size, scale):          # module top level: children import it
        import ember, ember.distributed as dist
        t = ember.full((2,), float(rank))
        dist.all_reduce(t)
        return (t * scale).tolist()

    results = run_ranks(body, 2, 10.0)          # [rank 0's return value, rank 1's]

Each rank is a fresh `python` process (no fork: libraries with threads, such as Gloo and torch,
stay sound) in its own session; every child's process group is killed when `run_ranks` returns
or raises, so nothing outlives a test. Free ports are chosen at run time: rank 0 opens a
TCPStore on port 0 and the others read the port from a file.

Options:
- `init="ember"` (default): the child calls ember.distributed.init_process_group("gloo") on
  that store before `fn` and destroys the group after; `init="torch"` does the same with
  torch.distributed (the oracle); `init=None` leaves setup to `fn` (RANK, WORLD_SIZE,
  LOCAL_RANK, MASTER_ADDR and a free MASTER_PORT are set for env://, and `connect_store()`
  returns a TCPStore shared by the ranks).
- `pg_timeout`: the process group's timeout (a timedelta; default 60 s).
- `timeout`: seconds for the whole run; then every child is killed and TimeoutError is raised
  with the tail of each child's output.
- `return_exceptions=True`: a rank that raised contributes its exception (re-created in the
  parent, with the child's traceback text in `.child_traceback`) and a rank that died
  contributes a `RankDied`, instead of `run_ranks` raising `RanksFailed`.
- `env`: extra environment variables for the children (values None remove a variable).

Children run with OMP_NUM_THREADS=1 and EMBER_NUM_THREADS=1. Keep imports of the test module
light (import torch inside functions): every child imports it to find `fn`.
"""

import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import timedelta

__all__ = ["run_ranks", "RankDied", "RanksFailed", "connect_store", "free_port"]

_RDZV_ENV = "EMBER_TEST_RDZV_DIR"


class RankDied(Exception):
    """A rank's process ended without returning (killed, os._exit, crash)."""

    def __init__(self, rank, returncode, output=""):
        super().__init__(f"rank {rank} died with exit code {returncode}")
        self.rank = rank
        self.returncode = returncode
        self.output = output


class RanksFailed(AssertionError):
    """One or more ranks raised or died; the message holds each one's traceback."""

    def __init__(self, message, results):
        super().__init__(message)
        self.results = results


def free_port():
    """A port that was free a moment ago (prefer TCPStore port 0 where the code allows)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect_store(lib="ember", timeout=timedelta(seconds=60)):
    """In a child of run_ranks: the run's TCPStore (rank 0 serves it on a port chosen by the
    OS). `lib` is "ember" or "torch". One store per process and lib."""
    key = (lib, "store")
    if key in _cache:
        return _cache[key]
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    rdzv = os.environ[_RDZV_ENV]
    port_file = os.path.join(rdzv, f"{lib}.port")
    if lib == "ember":
        import ember.distributed as dist
    else:
        import torch.distributed as dist
    if rank == 0:
        store = dist.TCPStore("127.0.0.1", 0, world_size, True, timeout,
                              wait_for_workers=False)
        tmp = port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(store.port))
        os.replace(tmp, port_file)
    else:
        deadline = time.monotonic() + timeout.total_seconds()
        while not os.path.exists(port_file):
            if time.monotonic() > deadline:
                raise TimeoutError(f"rank {rank}: rank 0 never published the store's port")
            time.sleep(0.01)
        with open(port_file) as f:
            port = int(f.read())
        store = dist.TCPStore("127.0.0.1", port, world_size, False, timeout)
    _cache[key] = store
    return store


_cache = {}


def _init(lib, rank, world_size, pg_timeout):
    store = connect_store(lib)
    if lib == "ember":
        import ember.distributed as dist
    else:
        import torch.distributed as dist
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size,
                            timeout=pg_timeout)
    return dist


def _child_main(payload_path, rank):
    rank = int(rank)
    with open(payload_path, "rb") as f:
        sys_path, main_file, blob = pickle.load(f)
    for p in reversed(sys_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    if main_file:
        # fn lives in the parent's script: load it as multiprocessing's spawn does.
        import importlib.util
        spec = importlib.util.spec_from_file_location("__mp_main__", main_file)
        module = importlib.util.module_from_spec(spec)
        sys.modules["__mp_main__"] = sys.modules["__main__"] = module
        spec.loader.exec_module(module)
    out_path = os.path.join(os.path.dirname(payload_path), f"result{rank}.pkl")
    try:
        fn, args, world_size, init, pg_timeout = pickle.loads(blob)
        dist = _init(init, rank, world_size, pg_timeout) if init else None
        value = fn(rank, world_size, *args)
        if dist is not None and dist.is_initialized():
            dist.destroy_process_group()
        result = ("ok", value)
    except BaseException as e:  # noqa: B902 - every failure goes back to the parent
        tb = traceback.format_exc()
        try:
            pickle.dumps(e)
            result = ("err", e, tb)
        except Exception:
            result = ("err", RuntimeError(f"{type(e).__name__}: {e}"), tb)
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(result, f)
    os.replace(tmp, out_path)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: threads of the communication libraries may still be blocked.
    os._exit(0)


def _tail(path, n=3000):
    try:
        with open(path, "rb") as f:
            data = f.read()
        return data[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


def run_ranks(fn, world_size, *args, timeout=60, env=None, init="ember", pg_timeout=None,
              return_exceptions=False):
    """Runs fn(rank, world_size, *args) on `world_size` processes; returns the list of their
    return values (rank order). See the module docstring for the options."""
    if init not in ("ember", "torch", None):
        raise ValueError(f"init must be 'ember', 'torch' or None, got {init!r}")
    pg_timeout = pg_timeout or timedelta(seconds=60)
    tmpdir = tempfile.mkdtemp(prefix="ember_dist_")
    payload = os.path.join(tmpdir, "payload.pkl")
    with open(payload, "wb") as f:
        main_file = None
        if getattr(fn, "__module__", None) == "__main__":
            main_file = os.path.abspath(sys.modules["__main__"].__file__)
        blob = pickle.dumps((fn, args, world_size, init, pg_timeout))
        pickle.dump((list(sys.path), main_file, blob), f)
    base_env = dict(os.environ)
    base_env.update(OMP_NUM_THREADS="1", EMBER_NUM_THREADS="1", MASTER_ADDR="127.0.0.1",
                    MASTER_PORT=str(free_port()), WORLD_SIZE=str(world_size),
                    PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
                    PYTHONFAULTHANDLER="1")
    base_env[_RDZV_ENV] = tmpdir
    for k, v in (env or {}).items():
        if v is None:
            base_env.pop(k, None)
        else:
            base_env[k] = str(v)
    procs, logs = [], []
    try:
        for rank in range(world_size):
            child_env = dict(base_env, RANK=str(rank), LOCAL_RANK=str(rank))
            log = os.path.join(tmpdir, f"out{rank}.txt")
            logs.append(log)
            with open(log, "wb") as out:
                procs.append(subprocess.Popen(
                    [sys.executable, "-c",
                     "import sys, _dist_util; _dist_util._child_main(sys.argv[1], sys.argv[2])",
                     payload, str(rank)],
                    env=child_env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    start_new_session=True, cwd=os.path.dirname(os.path.abspath(__file__))))
        deadline = time.monotonic() + timeout
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline:
                tails = "\n".join(f"--- rank {r} (exit {p.poll()}) ---\n{_tail(logs[r])}"
                                  for r, p in enumerate(procs))
                raise TimeoutError(f"run_ranks: {world_size} ranks of {fn.__name__} did not "
                                   f"finish in {timeout} s\n{tails}")
            time.sleep(0.02)
        results, failures = [], []
        for rank, p in enumerate(procs):
            path = os.path.join(tmpdir, f"result{rank}.pkl")
            if not os.path.exists(path):
                err = RankDied(rank, p.returncode, _tail(logs[rank]))
                results.append(err)
                failures.append(f"--- rank {rank}: died (exit {p.returncode}) ---\n"
                                f"{_tail(logs[rank])}")
                continue
            with open(path, "rb") as f:
                res = pickle.load(f)
            if res[0] == "ok":
                results.append(res[1])
            else:
                err = res[1]
                err.child_traceback = res[2]
                results.append(err)
                failures.append(f"--- rank {rank}: raised ---\n{res[2]}")
        if failures and not return_exceptions:
            raise RanksFailed(f"run_ranks({fn.__name__}, {world_size}):\n" + "\n".join(failures),
                              results)
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        # Grandchildren in a child's session die with it; sweep sessions of exited children too.
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for name in os.listdir(tmpdir):
            try:
                os.unlink(os.path.join(tmpdir, name))
            except OSError:
                pass
        try:
            os.rmdir(tmpdir)
        except OSError:
            pass
