"""float32 direct convolutions on channels-last copies (Note [Direct convolutions]) against
torch 1.13 computed in float64 from the same float32 values: outputs and input/weight/bias
gradients over the tails of every tile (pixel counts that are not multiples of the 6- or 8-pixel
tiles, output channels that are not multiples of 16, runs of kw * C that are not multiples of
16), stride, padding (symmetric, asymmetric, beyond dilation * (kernel - 1)), dilation in either
dim, 1-d problems, images larger than one channels-last group, transposed convolutions (strides,
output_padding, dilation), bfloat16 (float32 kernels on widened copies), and the thread-count
independence of the weight gradient. Each kernel set runs in a fresh process with
EMBER_DIRECT_CONV=1 (the kernels are used wherever they apply, not only where they pay); the
default policy is checked in-process on the Fashion-MNIST model's second layer."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np, torch, torch.nn.functional as TF
    import ember, ember.nn.functional as EF
    import ember.backends.cpu
    print(ember.backends.cpu.get_cpu_capability())
    CASES = [
        # (nd, x shape, w shape, kwargs)
        (2, (64, 32, 13, 13), (64, 32, 3, 3), {}),  # Fashion-MNIST's second layer
        (2, (3, 8, 7, 5), (20, 8, 3, 3), {"padding": 1}),  # 35 pixels, 20 = 16 + 4 filters
        (2, (2, 9, 6, 11), (5, 9, 2, 3), {}),  # runs of 27, 5 filters
        (2, (2, 12, 9, 9), (17, 12, 3, 3), {"stride": 2, "padding": 1}),
        (2, (2, 16, 12, 10), (16, 16, 3, 3), {"dilation": (2, 1), "padding": (2, 1)}),
        (2, (2, 16, 10, 12), (8, 16, 3, 3), {"dilation": (1, 2), "padding": "same"}),
        (2, (1, 24, 8, 8), (32, 24, 4, 4), {"padding": "same"}),  # pads 1 before, 2 after
        (2, (2, 32, 9, 9), (16, 32, 3, 3), {"padding": 3}),  # padding beyond the kernel
        (2, (2, 16, 11, 7), (16, 16, 1, 1), {}),
        (2, (1, 48, 5, 6), (64, 48, 3, 3), {"stride": (1, 2), "padding": (1, 0)}),
        (1, (4, 16, 37), (24, 16, 5), {"padding": 2}),
        (1, (3, 10, 50), (7, 10, 3), {"stride": 3, "dilation": 2}),
        (2, (3, 32, 260, 256), (8, 32, 3, 3), {"padding": 1}),  # one image per 16 MiB group
    ]
    FN = {1: ("conv1d", TF.conv1d), 2: ("conv2d", TF.conv2d)}

    def close(e, t, what):
        a, b = e.detach().double().numpy(), t.detach().numpy()
        assert a.shape == b.shape, what
        scale = float(np.abs(b).max(initial=1.0))
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5 * scale, err_msg=what)

    # ember's float32 output and x/w/b gradients against torch's float64 ones.
    def check(names, nd, xs, ws, kw, bias_dim, seed, tag):
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        b = rng.standard_normal(ws[bias_dim]).astype(np.float32)
        res = {}
        for m, f, dt in ((ember, getattr(EF, names[nd][0]), ember.float32),
                         (torch, names[nd][1], torch.float64)):
            leaves = [m.from_numpy(v.copy()).to(dt).requires_grad_() for v in (x, w, b)]
            y = f(*leaves, **kw)
            g = np.random.default_rng(seed).standard_normal(tuple(y.shape)).astype(np.float32)
            res[m] = [y] + list(m.autograd.grad([y], leaves, [m.from_numpy(g).to(dt)]))
        for i, name in enumerate(("output", "grad x", "grad w", "grad b")):
            close(res[ember][i], res[torch][i], f"{tag}{name} {xs} {ws} {kw}")

    rng = np.random.default_rng(0)
    for case in CASES:
        check(FN, *case, bias_dim=0, seed=1, tag="")
    # Transposed convolutions run the backward-data map as their forward (and the forward map
    # as their input gradient): output_padding leaves rows and columns that no tap reaches.
    TCASES = [
        (2, (2, 32, 7, 6), (32, 16, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
        (2, (3, 40, 5, 5), (40, 32, 3, 2), {"stride": (2, 3), "output_padding": (1, 2)}),
        (2, (1, 33, 6, 7), (33, 16, 3, 3), {"padding": 1, "dilation": 2}),
        (1, (2, 48, 9), (48, 32, 3), {"stride": 2, "padding": 2, "output_padding": 1}),
    ]
    TFN = {1: ("conv_transpose1d", TF.conv_transpose1d),
           2: ("conv_transpose2d", TF.conv_transpose2d)}
    for case in TCASES:
        check(TFN, *case, bias_dim=1, seed=2, tag="transposed ")
    # bfloat16 runs the float32 kernels on widened copies and rounds once.
    x = rng.standard_normal((4, 32, 9, 9)).astype(np.float32)
    w = rng.standard_normal((48, 32, 3, 3)).astype(np.float32)
    res = {}
    for m, dt in ((ember, ember.bfloat16), (torch, torch.float64)):
        # torch: float64 from the bfloat16-rounded values
        leaves = [torch.from_numpy(v.copy()).bfloat16().float().numpy() for v in (x, w)]
        leaves = [m.from_numpy(v).to(dt).requires_grad_() for v in leaves]
        y = (EF if m is ember else TF).conv2d(*leaves, padding=1)
        g = m.ones(tuple(y.shape), dtype=dt)
        res[m] = [y] + list(m.autograd.grad([y], leaves, [g]))
    for i, (e, t) in enumerate(zip(res[ember], res[torch])):
        assert "bfloat16" in str(e.dtype), i
        a, b = e.detach().float().double().numpy(), t.detach().numpy()
        scale = float(np.abs(b).max())
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2 * scale, err_msg=f"bfloat16 {i}")
    # The weight gradient is one ordered sum per entry, whatever the thread count.
    x = ember.randn(13, 16, 9, 9)
    w = ember.randn(24, 16, 3, 3).requires_grad_()
    g = ember.randn(13, 24, 9, 9)
    ref = None
    for t in (1, 2, 3):
        ember.set_num_threads(t)
        (gw,) = ember.autograd.grad([EF.conv2d(x, w, padding=1)], [w], [g])
        if ref is None:
            ref = gw
        assert ember.equal(gw, ref), t
    print("ok")
""")


def _capabilities():
    caps = ["default", "avx2"]
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return caps
    if not all(f in flags for f in ("avx2", "fma")):
        caps.remove("avx2")
    if all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq")):
        caps.append("avx512")
    return caps


@pytest.mark.parametrize("cap", _capabilities())
def test_direct_kernels_every_kernel_set(cap):
    """Every case through each kernel set's direct kernels (a fresh process each: the kernel set
    and EMBER_DIRECT_CONV are read once)."""
    env = dict(os.environ, EMBER_CPU_CAPABILITY=cap, EMBER_DIRECT_CONV="1", OMP_NUM_THREADS="2")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.split()
    assert lines[-1] == "ok"
    assert lines[0].lower() == cap


@pytest.mark.parametrize("threads", [1, 2])
def test_fashion_mnist_layer_default_policy(threads):
    """The model's second layer through the public API under the default policy (the direct
    kernels on avx2, oneDNN elsewhere), against torch in float64."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 32, 13, 13)).astype(np.float32)
    w = rng.standard_normal((64, 32, 3, 3)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    g = rng.standard_normal((64, 64, 11, 11)).astype(np.float32)
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        le = [ember.from_numpy(v.copy()).requires_grad_() for v in (x, w, b)]
        ye = EF.conv2d(*le)
        ge = ember.autograd.grad([ye], le, [ember.from_numpy(g)])
    finally:
        ember.set_num_threads(old)
    lt = [torch.from_numpy(v.copy()).double().requires_grad_() for v in (x, w, b)]
    yt = TF.conv2d(*lt)
    gt = torch.autograd.grad([yt], lt, [torch.from_numpy(g).double()])
    for e, t in zip([ye] + list(ge), [yt] + list(gt)):
        a, c = e.detach().double().numpy(), t.detach().numpy()
        scale = float(np.abs(c).max())
        np.testing.assert_allclose(a, c, rtol=2e-5, atol=2e-5 * scale)
