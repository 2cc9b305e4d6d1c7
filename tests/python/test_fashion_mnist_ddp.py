"""The main job on two processes: examples/fashion_mnist (C++) and its Python twin with --ddp
under ember-run, against the same job on one process, and the restart test: a worker killed
mid-epoch under `ember-run --max-restarts 1` resumes from the latest checkpoint and ends with
exactly the parameters of an uninterrupted run.

Runs are short (a few hundred images, 1 thread per rank, a small test subset) so the file stays
well under a minute on two busy cores.
"""

import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build", "release")
BINARY = os.path.join(BUILD, "fashion_mnist")
LAUNCHER = os.path.join(BUILD, "ember-run")
SCRIPT = os.path.join(ROOT, "examples", "fashion_mnist.py")
DATA = "/usr/share/datasets/fashion-mnist"
COMMON = ["--limit", "320", "--batch-size", "64", "--test-limit", "500", "--threads", "1",
          "--seed", "3"]

pytestmark = [
    pytest.mark.skipif(not os.path.exists(os.path.join(DATA, "train-images-idx3-ubyte.gz")),
                       reason="needs Debian's Fashion-MNIST"),
    pytest.mark.skipif(not (os.path.exists(BINARY) and os.path.exists(LAUNCHER)),
                       reason="needs build/release/fashion_mnist and ember-run"),
]


def run(cmd, env=None, timeout=60):
    """Runs `cmd` in its own session (killed whole on timeout); returns (code, output)."""
    full_env = dict(os.environ, OMP_NUM_THREADS="1", EMBER_NUM_THREADS="1")
    full_env.pop("EMBER_FAULT_AT_STEP", None)
    full_env.update(env or {})
    p = subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, text=True, start_new_session=True, cwd=ROOT)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise AssertionError(f"timed out: {' '.join(cmd)}\n{out[-3000:]}")
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return p.returncode, out


def launch(nproc, program, args, max_restarts=0, env=None):
    cmd = [LAUNCHER, "--nproc-per-node", str(nproc), "--max-restarts", str(max_restarts)]
    cmd += ["--no-python"] + ([sys.executable, program] if program.endswith(".py") else [program])
    return run(cmd + args, env=env)


def epoch_lines(out):
    """(train loss, test loss, test accuracy %) per epoch line."""
    pat = r"epoch (\d+): train loss ([\d.]+) \| test loss ([\d.]+) \| test accuracy ([\d.]+)%"
    return [tuple(float(v) for v in m.groups()[1:]) for m in re.finditer(pat, out)]


def params(path):
    d = ember.load(path)
    return {k: v.numpy() for k, v in d.items()}


def assert_same_params(a, b, **tol):
    assert sorted(a) == sorted(b)
    for k in a:
        if tol:
            np.testing.assert_allclose(a[k], b[k], err_msg=k, **tol)
        else:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def safetensors_metadata(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))["__metadata__"]


def model_params(ckpt):
    """The model.* tensors of a fashion_mnist checkpoint."""
    return {k: v for k, v in params(ckpt).items() if k.startswith("model.")}


def test_ddp_two_ranks_match_one_process(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    # The plain single-process job (its DataLoader draws the order the DDP job reproduces).
    code, out1 = run([BINARY, *COMMON, "--epochs", "1", "--out", str(one)])
    assert code == 0, out1
    code, out2 = launch(2, BINARY, [*COMMON, "--epochs", "1", "--ddp", "--out", str(two)])
    assert code == 0, out2
    assert "DDP on 2 ranks" in out2
    # Only rank 0 reports.
    assert len(epoch_lines(out2)) == 1, out2
    (l1, t1, a1), = epoch_lines(out1)
    (l2, t2, a2), = epoch_lines(out2)
    # The same global batches in the same order: only the summation order differs.
    assert abs(l1 - l2) < 2e-3 and abs(t1 - t2) < 2e-3 and abs(a1 - a2) <= 0.4
    assert_same_params(model_params(one / "checkpoint.safetensors"),
                       model_params(two / "checkpoint.safetensors"), rtol=1e-3, atol=1e-4)


def test_killed_worker_resumes_to_the_uninterrupted_result(tmp_path):
    args = [*COMMON, "--epochs", "2", "--ddp", "--checkpoint-every", "2"]
    clean, faulty = tmp_path / "clean", tmp_path / "faulty"
    code, out = launch(2, BINARY, args + ["--checkpoint-dir", str(clean / "ck"), "--out",
                                          str(clean)])
    assert code == 0, out
    # Rank 1 exits at global step 7 (epoch 2, batch 2 of 5; last checkpoint after step 6).
    code, out_f = launch(2, BINARY, args + ["--checkpoint-dir", str(faulty / "ck"), "--out",
                                            str(faulty)],
                         max_restarts=1, env={"EMBER_FAULT_AT_STEP": "7"})
    assert code == 0, out_f
    assert "exits at step 7" in out_f, out_f
    assert "resumed from" in out_f and "epoch 2, batch 1 (step 6)" in out_f, out_f
    assert_same_params(model_params(clean / "checkpoint.safetensors"),
                       model_params(faulty / "checkpoint.safetensors"))
    assert epoch_lines(out_f)[-1] == epoch_lines(out)[-1]


def test_killed_worker_without_restarts_fails(tmp_path):
    code, out = launch(2, BINARY, [*COMMON, "--epochs", "1", "--ddp", "--checkpoint-dir",
                                   str(tmp_path / "ck"), "--checkpoint-every", "2"],
                       env={"EMBER_FAULT_AT_STEP": "3"})
    assert code != 0, out
    # The checkpoint after step 2 is complete: its header says so and its tensors load.
    path = tmp_path / "ck" / "latest.safetensors"
    assert safetensors_metadata(path)["global_step"] == "2"
    assert len(model_params(path)) == 8


def test_python_twin_ddp_and_resume(tmp_path):
    args = ["--limit", "256", "--batch-size", "64", "--test-limit", "300", "--threads", "1",
            "--epochs", "1", "--checkpoint-every", "2"]
    clean, faulty = tmp_path / "clean", tmp_path / "faulty"
    code, out = run([sys.executable, SCRIPT, *args, "--checkpoint-dir", str(clean / "ck"),
                     "--out", str(clean)])
    assert code == 0, out
    code, out_f = launch(2, SCRIPT, args + ["--ddp", "--checkpoint-dir", str(faulty / "ck"),
                                            "--out", str(faulty)],
                         max_restarts=1, env={"EMBER_FAULT_AT_STEP": "3"})
    assert code == 0, out_f
    assert "exits at step 3" in out_f and "resumed from" in out_f, out_f
    (l1, t1, a1), = epoch_lines(out)
    (l2, t2, a2), = epoch_lines(out_f)
    assert abs(l1 - l2) < 2e-3 and abs(t1 - t2) < 2e-3 and abs(a1 - a2) <= 0.4
    assert_same_params(params(clean / "checkpoint_py.safetensors"),
                       params(faulty / "checkpoint_py.safetensors"), rtol=1e-3, atol=1e-4)
