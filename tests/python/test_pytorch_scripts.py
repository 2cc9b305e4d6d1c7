"""Ordinary PyTorch scripts run with `import ember as torch`: examples/vae.py (distributions,
save_image, saving whole models and checkpoints) and examples/hogwild.py (shared-memory
training across processes). What they write is checked with torch 1.13 and PIL."""

import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def run(script, *args):
    env = dict(os.environ, OMP_NUM_THREADS="1", EMBER_NUM_THREADS="1")
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", script), *args],
                          capture_output=True, text=True, timeout=300, env=env, check=True).stdout


@pytest.mark.skipif(not os.path.exists(DATA), reason="Fashion-MNIST is not installed")
def test_vae_script_trains_and_its_files_load_in_torch(tmp_path):
    out = run("vae.py", "--batches", "60", "--batch-size", "64", "--out", str(tmp_path))
    lines = out.splitlines()
    assert "reloaded model matches: True" in lines
    final = float(lines[-1].split("=")[1])
    assert final < 330, out  # the untrained model scores about 545 nats
    ckpt = torch.load(tmp_path / "checkpoint.pt")  # ember.save -> torch.load
    assert ckpt["step"] == 60
    assert ckpt["model"]["mu.weight"].shape == (16, 400)
    assert ckpt["optimizer"]["param_groups"][0]["lr"] == 1e-3
    assert len(ckpt["optimizer"]["state"]) == len(ckpt["model"])
    from PIL import Image
    with Image.open(tmp_path / "samples.png") as im:
        assert im.size == (8 * 28 + 9 * 2, 8 * 28 + 9 * 2)  # make_grid's default padding 2


def test_hogwild_script_trains_one_shared_model():
    out = run("hogwild.py", "--processes", "2", "--epochs", "4", "--start-method", "fork")
    last = out.strip().splitlines()[-1]
    assert last.startswith("accuracy after 2 processes:"), out
    assert float(last.split(":")[1]) > 0.9, out  # 0.5 when the processes train private copies
