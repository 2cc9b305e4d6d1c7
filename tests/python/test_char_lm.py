"""The second main job: examples/char_lm.py (the character-level Transformer on the fortune
files) on a tiny model, against PyTorch 1.13 from the same weights, and its C++ twin
(build/release/char_lm) from the Python run's checkpoint.

The runs are a few dozen steps of a 2-layer, d=32 model on 16-character windows, so the file
stays around ten seconds on two busy cores.
"""

import importlib.util
import os
import re
import subprocess

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "char_lm.py")
BINARY = os.path.join(ROOT, "build", "release", "char_lm")
FORTUNES = "/usr/share/games/fortunes"
TINY = ["--layers", "2", "--d-model", "32", "--heads", "2", "--context", "16", "--batch-size",
        "8", "--eval-batches", "4", "--lr", "1e-2", "--warmup", "5", "--threads", "1",
        "--sample-chars", "40"]

pytestmark = pytest.mark.skipif(not os.path.isdir(FORTUNES),
                                reason="needs Debian's fortunes package")


def load_script():
    spec = importlib.util.spec_from_file_location("char_lm_example", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


char_lm = load_script()


@pytest.fixture(scope="module")
def corpus():
    train, val = char_lm.read_corpus(FORTUNES)
    return char_lm.Vocab(train + val), train, val


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("char_lm")
    result = char_lm.main(TINY + ["--steps", "40", "--eval-every", "20", "--seed", "1",
                                  "--out", str(out)])
    return result, out


def test_corpus_split(corpus):
    vocab, train, val = corpus
    # Every plain file contributes its last tenth to validation: about 10% of all characters.
    assert 0.09 < len(val) / (len(train) + len(val)) < 0.11
    assert "\n" in vocab.chars and "%" in vocab.chars
    assert vocab.chars == sorted(vocab.chars)
    text = train[:1000]
    assert vocab.decode(vocab.encode(text)) == text


def test_loss_decreases(tiny_run):
    (result, _) = tiny_run
    history = result["history"]
    assert [h[0] for h in history] == [0, 20, 40]
    # Untrained: about log(vocab) nats; 40 steps of a tiny model take it well below.
    assert history[0][2] > 4.0
    assert history[-1][2] < history[0][2] - 1.0
    assert history[-1][1] < history[1][1]


def test_checkpoint_round_trip(tiny_run, corpus):
    (result, out) = tiny_run
    vocab, _, val = corpus
    model, loaded_vocab = char_lm.load_checkpoint(ember, str(out / "char_lm_py.safetensors"))
    assert loaded_vocab.chars == vocab.chars
    x, _ = char_lm.batch(ember, vocab.encode(val[:200]), np.array([0, 50, 100]), 16)
    model.eval()
    result["model"].eval()
    with ember.no_grad():
        np.testing.assert_array_equal(model(x).numpy(), result["model"](x).numpy())


def test_sampling(tiny_run):
    (result, _) = tiny_run
    text, vocab = result["sample"], result["vocab"]
    assert text.startswith("The ") and len(text) == 4 + 40
    assert set(text) <= set(vocab.chars)
    # The same seed draws the same characters.
    args = char_lm.parse(TINY + ["--seed", "1"])
    assert char_lm.sample(ember, result["model"], vocab, args) == text
    # top-k 1 is greedy: the argmax at every step.
    greedy = char_lm.parse(TINY + ["--seed", "1", "--top-k", "1", "--sample-chars", "5"])
    model = result["model"]
    ids = list(vocab.encode("The "))
    model.eval()
    with ember.no_grad():
        for _ in range(5):
            logits = model(ember.tensor([ids], dtype=ember.long))
            ids.append(int(logits[0, -1].argmax()))
    assert char_lm.sample(ember, model, vocab, greedy) == vocab.decode(ids)


def test_same_initial_loss_as_torch(corpus):
    torch = pytest.importorskip("torch")
    vocab, train, _ = corpus
    data = vocab.encode(train[:5000])
    losses, logits, grads = [], [], []
    for backend in (ember, torch):
        model = char_lm.make_model(backend, len(vocab), 16, 32, 2, 2, tie=False)
        char_lm.init_weights(backend, model, 7, 2)
        x, y = char_lm.batch(backend, data, np.array([0, 100, 1000, 4000]), 16)
        out = model(x)
        loss = backend.nn.functional.cross_entropy(out.reshape(-1, len(vocab)), y.reshape(-1))
        loss.backward()
        losses.append(float(loss))
        logits.append(out.detach().numpy())
        grads.append({n: p.grad.numpy() for n, p in model.named_parameters()})
    np.testing.assert_allclose(logits[0], logits[1], rtol=1e-4, atol=1e-5)
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    assert set(grads[0]) == set(grads[1])
    for name, g in grads[1].items():
        np.testing.assert_allclose(grads[0][name], g, rtol=1e-3, atol=1e-5, err_msg=name)


def test_tied_head_shares_the_embedding(corpus):
    vocab, train, _ = corpus
    model = char_lm.make_model(ember, len(vocab), 16, 32, 2, 2, tie=True)
    names = [n for n, _ in model.named_parameters()]
    assert "head.weight" not in names and "tok_emb.weight" in names


def test_bad_sizes_are_refused():
    with pytest.raises(SystemExit):
        char_lm.parse(["--d-model", "30", "--heads", "4"])
    with pytest.raises(SystemExit):
        char_lm.parse(["--steps", "-1"])


@pytest.mark.skipif(not os.path.exists(BINARY), reason="needs build/release/char_lm")
def test_cpp_twin_from_python_checkpoint(tiny_run, tmp_path):
    """The C++ program starts from the Python run's checkpoint: the same windows give the same
    validation loss, and its own short run trains, round-trips and samples."""
    (result, out) = tiny_run
    env = dict(os.environ, OMP_NUM_THREADS="1", EMBER_NUM_THREADS="1")
    ckpt = str(out / "char_lm_py.safetensors")
    p = subprocess.run([BINARY] + TINY + ["--steps", "20", "--eval-every", "20", "--init", ckpt,
                                          "--out", str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    val0 = float(re.search(r"step 0: val loss ([0-9.]+)", p.stdout).group(1))
    _, val = char_lm.read_corpus(FORTUNES)
    expected = char_lm.evaluate(ember, result["model"], result["vocab"].encode(val),
                                char_lm.parse(TINY))
    assert val0 == pytest.approx(expected, abs=2e-4)
    assert "(identical)" in p.stdout
    val20 = float(re.search(r"step 20: train loss [0-9.]+ \| val loss ([0-9.]+)",
                            p.stdout).group(1))
    assert val20 < val0
    sample = p.stdout.split("top-k 40):\n", 1)[1]
    assert sample.startswith("The ")
