"""The launcher: build/release/ember-run and its twin ``python -m ember.distributed.run``.

Workers are small Python scripts that print what they see; every launcher runs in its own
session and is killed in a ``finally`` (its workers die with it: they are started with a parent
death signal). Ports are chosen free at run time; every run is bounded by a timeout.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import ember

TIMEOUT = 60


def _find_ember_run():
    # build/release/python/ember/__init__.py -> build/release/ember-run
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
    candidates = [os.path.join(pkg_parent, "..", "ember-run")]
    candidates += [os.path.join(p, "..", "ember-run")
                   for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.normpath(c)
    return None


EMBER_RUN = _find_ember_run()
HAS_RUN_MAIN = hasattr(ember._C, "_distributed") and hasattr(ember._C._distributed, "_run_main")

NEEDS_BIN = pytest.mark.skipif(
    EMBER_RUN is None, reason="build/release/ember-run is not built (ember-build --target "
                              "ember-run); looked next to the ember package's directory")
NEEDS_PY = pytest.mark.skipif(not HAS_RUN_MAIN,
                              reason="this ember build has no _C._distributed._run_main")
LAUNCHERS = [pytest.param("bin", marks=NEEDS_BIN), pytest.param("py", marks=NEEDS_PY)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(extra=None):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    for k in list(env):
        if k.startswith("TORCHELASTIC_") or k in ("RANK", "LOCAL_RANK", "WORLD_SIZE",
                                                 "MASTER_ADDR", "MASTER_PORT"):
            del env[k]
    env["EMBER_PYTHON"] = sys.executable
    env.update(extra or {})
    return env


def _cmd(launcher, args):
    if launcher == "bin":
        return [EMBER_RUN] + list(args)
    return [sys.executable, "-m", "ember.distributed.run"] + list(args)


def _kill(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def start(launcher, args, env=None):
    return subprocess.Popen(_cmd(launcher, args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(env), start_new_session=True)


def launch(launcher, args, env=None, timeout=TIMEOUT):
    """Runs the launcher to the end; returns (exit code, stdout, stderr)."""
    p = start(launcher, args, env)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    finally:
        _kill(p)


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def rank_lines(text):
    """{rank: [lines]} from '[rank N]: line' lines."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\[rank (\d+)\]: (.*)$", line)
        if m:
            out.setdefault(int(m.group(1)), []).append(m.group(2))
    return out


ENV_SCRIPT = """
import json, os, sys
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
        "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT", "EMBER_RESTART_COUNT",
        "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS"]
print("ENV " + json.dumps({k: os.environ.get(k) for k in keys}))
print("ARGS " + json.dumps(sys.argv[1:]))
print("to stderr", file=sys.stderr)
sys.stdout.write("no newline at the end")
"""


def envs_of(out):
    return {r: json.loads(next(l[4:] for l in lines if l.startswith("ENV ")))
            for r, lines in rank_lines(out).items()}


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_env_vars_prefixes_and_args(launcher, tmp_path):
    s = script(tmp_path, "env.py", ENV_SCRIPT)
    rc, out, err = launch(launcher, ["--nproc-per-node", "3", "--max-restarts", "2",
                                     "--rdzv-id", "job7", s, "--lr", "0.5", "x y"])
    assert rc == 0, err
    lines = rank_lines(out)
    assert sorted(lines) == [0, 1, 2]
    envs = envs_of(out)
    ports = {e["MASTER_PORT"] for e in envs.values()}
    assert len(ports) == 1 and 0 < int(ports.pop()) < 65536
    for r, e in envs.items():
        assert e["RANK"] == str(r) and e["LOCAL_RANK"] == str(r) and e["ROLE_RANK"] == str(r)
        assert e["WORLD_SIZE"] == "3" and e["LOCAL_WORLD_SIZE"] == "3"
        assert e["GROUP_RANK"] == "0"
        assert e["MASTER_ADDR"] == "127.0.0.1"
        assert e["TORCHELASTIC_RESTART_COUNT"] == "0" and e["EMBER_RESTART_COUNT"] == "0"
        assert e["TORCHELASTIC_MAX_RESTARTS"] == "2"
        assert e["TORCHELASTIC_RUN_ID"] == "job7"
        assert e["OMP_NUM_THREADS"] == "1"
        assert "ARGS " + json.dumps(["--lr", "0.5", "x y"]) in lines[r]
        # A last line without a newline is flushed, prefixed, when the worker ends.
        assert lines[r][-1] == "no newline at the end"
    assert sorted(rank_lines(err)) == [0, 1, 2]
    assert all(v == ["to stderr"] for v in rank_lines(err).values())
    assert "Setting OMP_NUM_THREADS environment variable for each process to be 1" in err


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_omp_num_threads_kept_when_set(launcher, tmp_path):
    s = script(tmp_path, "env.py", ENV_SCRIPT)
    rc, out, err = launch(launcher, ["--nproc_per_node=2", s], env={"OMP_NUM_THREADS": "3"})
    assert rc == 0, err
    assert {e["OMP_NUM_THREADS"] for e in envs_of(out).values()} == {"3"}
    assert "Setting OMP_NUM_THREADS" not in err


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_failure_exit_code_and_message(launcher, tmp_path):
    s = script(tmp_path, "fail.py", """
        import os, signal, sys, time
        def stop(sig, frame):
            print("stopped by signal", sig, flush=True)
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        print("ready", flush=True)
        if os.environ["RANK"] == "1":
            sys.exit(3)
        time.sleep(60)  # stopped by the launcher when rank 1 fails
    """)
    rc, out, err = launch(launcher, ["--nproc-per-node", "2", s])
    assert rc == 3, err
    assert re.search(r"worker 1 \(pid \d+\) exited with code 3", err), err
    assert "the job failed" in err
    # Rank 0 was stopped by the launcher (or never got going), not waited for.
    assert rank_lines(out).get(0, []) in ([], ["ready"],
                                          ["ready", "stopped by signal %d" % signal.SIGTERM]), out


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_worker_killed_by_signal(launcher, tmp_path):
    s = script(tmp_path, "die.py", """
        import os, signal, time
        if os.environ["RANK"] == "0":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(30)
    """)
    rc, out, err = launch(launcher, ["--nproc-per-node", "2", s])
    assert rc == 128 + signal.SIGKILL, err
    assert re.search(r"worker 0 \(pid \d+\) was killed by signal 9", err), err


RESTART_SCRIPT = """
import os, sys
count = os.environ["TORCHELASTIC_RESTART_COUNT"]
print("attempt", count, "port", os.environ["MASTER_PORT"])
if os.environ["RANK"] == "1" and count == "0":
    sys.exit(1)
"""


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_restart_after_a_failure(launcher, tmp_path):
    s = script(tmp_path, "restart.py", RESTART_SCRIPT)
    rc, out, err = launch(launcher, ["--nproc-per-node", "2", "--max-restarts", "1", s])
    assert rc == 0, err
    lines = rank_lines(out)
    for r in (0, 1):
        assert any(l.startswith("attempt 1 ") for l in lines[r]), out
    assert re.search(r"restarting the workers \(restart 1 of 1\) after: worker 1 \(pid \d+\) "
                     r"exited with code 1", err), err
    # No restarts allowed: the failure ends the job.
    rc, out, err = launch(launcher, ["--nproc-per-node", "2", "--max-restarts", "0", s])
    assert rc == 1, err
    assert "restarting" not in err
    assert not any(l.startswith("attempt 1") for ls in rank_lines(out).values() for l in ls)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_sigterm_is_forwarded_and_no_worker_survives(launcher, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    s = script(tmp_path, "sleep.py", """
        import os, signal, sys, time
        def stop(sig, frame):
            print("worker got signal", sig, flush=True)
            sys.exit(0)
        signal.signal(signal.SIGTERM, stop)
        tmp = os.path.join(sys.argv[1], "." + os.environ["RANK"])
        with open(tmp, "w") as f:
            f.write(str(os.getpid()))
        os.rename(tmp, os.path.join(sys.argv[1], os.environ["RANK"]))  # appears whole
        print("ready", flush=True)
        time.sleep(60)
    """)
    p = start(launcher, ["--nproc-per-node", "2", s, str(pids)])
    try:
        deadline = time.monotonic() + 30
        while not all((pids / r).exists() for r in ("0", "1")) and time.monotonic() < deadline:
            time.sleep(0.05)
        # Each worker's handler is installed by now.
        assert all((pids / r).exists() for r in ("0", "1"))
        worker_pids = [int((pids / r).read_text()) for r in ("0", "1")]
        os.kill(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        _kill(p)
    assert p.returncode == 128 + signal.SIGTERM, err
    lines = rank_lines(out)
    for r in (0, 1):
        assert "worker got signal %d" % signal.SIGTERM in lines[r], out
    assert "received SIGTERM" in err
    for pid in worker_pids:
        assert not _alive(pid)


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_two_agents_rendezvous(launcher, tmp_path):
    s = script(tmp_path, "env.py", ENV_SCRIPT)
    port = free_port()
    common = ["--nnodes", "2", "--rdzv-endpoint", "127.0.0.1:%d" % port, "--rdzv-id", "two",
              "--rdzv-conf", "join_timeout=40"]
    a = start(launcher, common + ["--nproc-per-node", "2", s])
    b = start(launcher, common + ["--nproc-per-node", "1", s])
    try:
        out_a, err_a = a.communicate(timeout=TIMEOUT)
        out_b, err_b = b.communicate(timeout=TIMEOUT)
    finally:
        _kill(a)
        _kill(b)
    assert a.returncode == 0, err_a
    assert b.returncode == 0, err_b
    env_a, env_b = envs_of(out_a), envs_of(out_b)
    assert len(env_a) == 2 and len(env_b) == 1
    everyone = list(env_a.values()) + list(env_b.values())
    assert sorted(int(e["RANK"]) for e in everyone) == [0, 1, 2]
    assert {e["WORLD_SIZE"] for e in everyone} == {"3"}
    assert len({e["MASTER_PORT"] for e in everyone}) == 1
    assert {e["GROUP_RANK"] for e in env_a.values()} != {e["GROUP_RANK"] for e in env_b.values()}
    assert {e["LOCAL_WORLD_SIZE"] for e in env_a.values()} == {"2"}
    # The prefix is the global rank.
    for r, e in list(env_a.items()) + list(env_b.items()):
        assert e["RANK"] == str(r)
    # Global ranks follow the group ranks: the group rank 0 node holds rank 0.
    first = env_a if env_a[min(env_a)]["GROUP_RANK"] == "0" else env_b
    assert min(first) == 0


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_failure_on_one_node_stops_the_other(launcher, tmp_path):
    s = script(tmp_path, "fail2.py", """
        import os, sys, time
        if os.environ["GROUP_RANK"] == "1":
            sys.exit(4)
        time.sleep(30)
    """)
    port = free_port()
    common = ["--nnodes", "2", "--nproc-per-node", "1", "--rdzv-endpoint",
              "127.0.0.1:%d" % port, "--rdzv-conf", "join_timeout=40", "--node-rank"]
    a = start(launcher, common + ["0", s])
    b = start(launcher, common + ["1", s])
    try:
        out_a, err_a = a.communicate(timeout=TIMEOUT)
        out_b, err_b = b.communicate(timeout=TIMEOUT)
    finally:
        _kill(a)
        _kill(b)
    assert a.returncode == 4 and b.returncode == 4, (err_a, err_b)
    assert re.search(r"worker 1 \(pid \d+\) exited with code 4", err_b), err_b
    assert re.search(r"the job failed: worker 1 \(pid \d+\) exited with code 4", err_a), err_a


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_no_python_and_module(launcher, tmp_path):
    rc, out, err = launch(launcher, ["--nproc-per-node", "2", "--no-python", "/bin/sh", "-c",
                                     "echo rank=$RANK of $WORLD_SIZE"])
    assert rc == 0, err
    assert rank_lines(out) == {0: ["rank=0 of 2"], 1: ["rank=1 of 2"]}
    (tmp_path / "mymod.py").write_text("import os\nprint('module rank', os.environ['RANK'])\n")
    rc, out, err = launch(launcher, ["--nproc-per-node", "1", "-m", "mymod"],
                          env={"PYTHONPATH": str(tmp_path) + os.pathsep +
                               os.environ.get("PYTHONPATH", "")})
    assert rc == 0, err
    assert rank_lines(out) == {0: ["module rank 0"]}
    # A program that does not exist fails like a worker exiting with 127.
    rc, out, err = launch(launcher, ["--no-python", str(tmp_path / "missing")])
    assert rc == 127
    assert "cannot run" in err


# The parser is shared: every case through ember-run, two through the Python twin.
BAD_USAGE = [
    ([], "the following arguments are required"),
    (["--nnodes", "0", "x.py"], "--nnodes"),
    (["--nnodes", "3:2", "x.py"], "--nnodes"),
    (["--nproc-per-node", "two", "x.py"], "invalid int value: 'two'"),
    (["--nproc-per-node", "0", "x.py"], "must be >= 1"),
    (["--max-restarts", "-1", "x.py"], "--max-restarts"),
    (["--bogus", "x.py"], "unrecognized arguments: --bogus"),
    (["--no-python", "-m", "x"], "'--no-python' flag and the '--module' flag"),
    (["--standalone", "--nnodes", "2", "x.py"], "--standalone"),
    (["--node-rank", "2", "--nnodes", "2", "x.py"], "--node-rank"),
    (["--nproc-per-node"], "expected one argument"),
]


@pytest.mark.parametrize("launcher,args,message",
                         [pytest.param("bin", *case, marks=NEEDS_BIN) for case in BAD_USAGE] +
                         [pytest.param("py", *case, marks=NEEDS_PY) for case in BAD_USAGE[:2]])
def test_bad_usage(launcher, args, message):
    rc, out, err = launch(launcher, args)
    assert rc == 2
    assert err.startswith("usage: ember-run")
    assert "ember-run: error: " in err and message in err, err


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_help(launcher):
    rc, out, err = launch(launcher, ["--help"])
    assert rc == 0
    assert out.startswith("usage: ember-run") and "--nproc-per-node" in out


@pytest.mark.skipif(not HAS_RUN_MAIN, reason="this ember build has no _run_main")
def test_run_module_functions_reject_bad_args():
    from ember.distributed import run
    with pytest.raises(TypeError):
        run.run("--nproc-per-node 2 x.py")
    assert callable(run.main)


@pytest.mark.skipif(not (HAS_RUN_MAIN and hasattr(ember._C._distributed, "init_process_group")),
                    reason="this ember build has no process groups")
def test_workers_form_a_process_group(tmp_path):
    s = script(tmp_path, "allreduce.py", """
        import ember as torch
        import ember.distributed as dist
        dist.init_process_group("gloo")
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        print("sum", t.item(), "rank", dist.get_rank(), "of", dist.get_world_size())
        dist.destroy_process_group()
    """)
    rc, out, err = launch("py", ["--nproc-per-node", "2", "--standalone", s])
    assert rc == 0, err
    assert rank_lines(out) == {0: ["sum 3.0 rank 0 of 2"], 1: ["sum 3.0 rank 1 of 2"]}


@NEEDS_BIN
def test_elastic_range(tmp_path):
    s = script(tmp_path, "env.py", ENV_SCRIPT)
    # Alone in --nnodes 1:2: the last call ends, the round closes with one node.
    port = free_port()
    rc, out, err = launch("bin", ["--nnodes", "1:2", "--nproc-per-node", "2", "--rdzv-endpoint",
                                  "127.0.0.1:%d" % port, "--rdzv-conf", "last_call_timeout=0.3",
                                  s])
    assert rc == 0, err
    assert {e["WORLD_SIZE"] for e in envs_of(out).values()} == {"2"}
    # Two agents in --nnodes 1:2: the second one completes MAX and closes the round at once.
    port = free_port()
    common = ["--nnodes", "1:2", "--nproc-per-node", "1", "--rdzv-endpoint",
              "127.0.0.1:%d" % port, "--rdzv-conf", "join_timeout=40,last_call_timeout=30"]
    a = start("bin", common + [s])
    b = start("bin", common + [s])
    try:
        out_a, err_a = a.communicate(timeout=TIMEOUT)
        out_b, err_b = b.communicate(timeout=TIMEOUT)
    finally:
        _kill(a)
        _kill(b)
    assert a.returncode == 0 and b.returncode == 0, (err_a, err_b)
    everyone = list(envs_of(out_a).values()) + list(envs_of(out_b).values())
    assert sorted(int(e["RANK"]) for e in everyone) == [0, 1]
    assert {e["WORLD_SIZE"] for e in everyone} == {"2"}


@NEEDS_BIN
def test_rendezvous_times_out_when_a_node_never_comes(tmp_path):
    s = script(tmp_path, "env.py", ENV_SCRIPT)
    port = free_port()
    rc, out, err = launch("bin", ["--nnodes", "2", "--rdzv-endpoint", "127.0.0.1:%d" % port,
                                  "--rdzv-id", "lonely", "--rdzv-conf", "join_timeout=0.5", s])
    assert rc == 1
    assert ("ember-run: rendezvous timed out after 500 ms: 1 of 2 nodes joined round 0 at "
            "127.0.0.1 (run id 'lonely')") in err, err
    assert out == ""
    # A node that is not the host finds no store at the endpoint.
    rc, out, err = launch("bin", ["--nnodes", "2", "--node-rank", "1", "--rdzv-endpoint",
                                  "127.0.0.1:%d" % port, "--rdzv-conf", "join_timeout=0.3", s])
    assert rc == 1
    assert "cannot connect to 127.0.0.1:%d within 300 ms" % port in err, err


@NEEDS_BIN
def test_sigterm_to_one_agent_stops_every_node(tmp_path):
    s = script(tmp_path, "sleep2.py", """
        import os, sys, time
        open(os.path.join(sys.argv[1], os.environ["RANK"]), "w").close()
        time.sleep(60)
    """)
    port = free_port()
    common = ["--nnodes", "2", "--nproc-per-node", "1", "--max-restarts", "3",
              "--rdzv-endpoint", "127.0.0.1:%d" % port, "--rdzv-conf", "join_timeout=40",
              "--node-rank"]
    a = start("bin", common + ["0", s, str(tmp_path)])
    b = start("bin", common + ["1", s, str(tmp_path)])
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / r).exists() for r in ("0", "1")):
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.05)
        os.kill(a.pid, signal.SIGTERM)
        out_a, err_a = a.communicate(timeout=TIMEOUT)
        out_b, err_b = b.communicate(timeout=TIMEOUT)
    finally:
        _kill(a)
        _kill(b)
    # Not restarted: an interrupt ends the job on every node.
    assert a.returncode == 128 + signal.SIGTERM, err_a
    assert b.returncode == 128 + signal.SIGTERM, err_b
    assert "stopped: the agent of node 0 received SIGTERM" in err_b, err_b
    assert "restarting" not in err_a + err_b
