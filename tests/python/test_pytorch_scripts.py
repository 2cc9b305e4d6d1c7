"""Ordinary PyTorch scripts run with `import ember as torch`: examples/vae.py (distributions,
save_image, saving whole models and checkpoints), examples/hogwild.py (shared-memory
training across processes) and examples/ddp_toy.py (the DistributedDataParallel tutorial:
mp.spawn, a Gloo group, DistributedSampler). What they write is checked with torch 1.13 and PIL."""

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


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_tutorial_script_matches_torch(tmp_path):
    # Same initial weights and data for both backends, saved by torch.
    torch.manual_seed(0)
    init = {"net1.weight": torch.randn(10, 10) * 0.3, "net1.bias": torch.randn(10) * 0.1,
            "net2.weight": torch.randn(5, 10) * 0.3, "net2.bias": torch.randn(5) * 0.1}
    torch.save(init, tmp_path / "init.pt")
    torch.save({"x": torch.randn(64, 10), "y": torch.randn(64, 5)}, tmp_path / "data.pt")
    common = ["--init", str(tmp_path / "init.pt"), "--data", str(tmp_path / "data.pt"),
              "--no-shuffle", "--epochs", "2"]
    out_e = run("ddp_toy.py", "--port", str(_free_port()), "--out", str(tmp_path / "e.pt"),
                *common)
    out_t = run("ddp_toy.py", "--backend", "torch", "--port", str(_free_port()),
                "--out", str(tmp_path / "t.pt"), *common)
    loss_e = [float(l.split()[-1]) for l in out_e.splitlines() if l.startswith("epoch")]
    loss_t = [float(l.split()[-1]) for l in out_t.splitlines() if l.startswith("epoch")]
    assert len(loss_e) == len(loss_t) == 2
    assert loss_e == pytest.approx(loss_t, rel=1e-5)
    import ember
    got = ember.load(str(tmp_path / "e.pt"))
    want = torch.load(tmp_path / "t.pt")
    assert sorted(got) == sorted(want)  # "module." keys, as torch's DDP state_dict
    for k, v in want.items():
        torch.testing.assert_close(torch.from_numpy(got[k].numpy()), v, rtol=1e-5, atol=1e-6)
    # Trained: the weights moved away from the initial ones.
    assert (want["module.net1.weight"] - init["net1.weight"]).abs().max() > 1e-3
