"""Convolutions (cuDNN), max pooling and FFTs (cuFFT) on CUDA tensors through the Python API,
against torch 1.13 on the CPU: values, pooling indices, gradients and errors. Skipped without a
GPU."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device")

TOL = {"float32": 1e-4, "float64": 1e-10}


def rand(shape, seed, dtype="float64"):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def on_cuda(a, grad=False):
    t = ember.tensor(a).cuda()
    return t.requires_grad_() if grad else t


def host(t):
    return t.detach().cpu().numpy()


CONV = [
    # (fn, x shape, w shape, kwargs)
    ("conv1d", (2, 4, 11), (6, 2, 3), dict(stride=2, padding=1, dilation=2, groups=2)),
    ("conv2d", (2, 3, 9, 8), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0))),
    ("conv2d", (1, 4, 7, 7), (4, 1, 3, 3), dict(padding=2, dilation=(2, 1), groups=4)),
    ("conv2d", (2, 3, 9, 10), (5, 3, 4, 2), dict(padding="same")),
    ("conv3d", (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=(1, 1, 0))),
    ("conv_transpose2d", (2, 4, 5, 5), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
]


@pytest.mark.parametrize("case", CONV)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_forward_and_gradients(case, dtype):
    fn, xs, ws, kw = case
    x, w = rand(xs, 1, dtype), rand(ws, 2, dtype)
    nb = ws[1] if fn.startswith("conv_transpose") else ws[0]
    b = rand((nb,), 3, dtype)
    ex, ew, eb = on_cuda(x, True), on_cuda(w, True), on_cuda(b, True)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ey = getattr(EF, fn)(ex, ew, eb, **kw)
    ty = getattr(TF, fn)(tx, tw, tb, **kw)
    assert ey.is_cuda
    np.testing.assert_allclose(host(ey), ty.detach().numpy(), rtol=TOL[dtype], atol=TOL[dtype])
    g = rand(tuple(ty.shape), 4, dtype)
    ey.backward(on_cuda(g))
    ty.backward(torch.tensor(g))
    tol = TOL[dtype] * 10
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        np.testing.assert_allclose(host(e.grad), t.grad.numpy(), rtol=tol, atol=tol)


def test_conv_half():
    x, w = rand((2, 3, 8, 8), 5, "float16"), rand((4, 3, 3, 3), 6, "float16")
    y = EF.conv2d(on_cuda(x), on_cuda(w), padding=1)
    assert y.dtype == ember.float16
    want = TF.conv2d(torch.tensor(x).float(), torch.tensor(w).float(), padding=1).numpy()
    np.testing.assert_allclose(host(y).astype(np.float32), want, rtol=4e-3, atol=4e-3)


def test_conv_errors():
    x, w = on_cuda(rand((1, 2, 5, 5), 7)), rand((3, 2, 3, 3), 8)
    with pytest.raises(RuntimeError):
        EF.conv2d(x, ember.tensor(w))  # weight on the CPU
    with pytest.raises(RuntimeError):
        EF.conv2d(x, on_cuda(w), groups=3)
    with pytest.raises(NotImplementedError):
        EF.conv2d(x.long(), on_cuda(w).long())


POOL = [
    # (nd, shape, kernel, stride, padding, dilation, ceil_mode)
    (1, (2, 3, 11), 3, 2, 1, 2, True),
    (2, (2, 3, 9, 7), 3, 2, 1, 1, True),
    (2, (1, 2, 10, 9), (3, 2), (2, 1), (1, 1), (2, 1), False),
    (3, (1, 2, 5, 6, 7), (2, 3, 2), (2, 2, 1), (1, 1, 0), 1, True),
]


@pytest.mark.parametrize("case", POOL)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_indices_and_gradient(case, dtype):
    nd, shape, k, s, p, d, ceil = case
    # values from a small set: ties, where the first maximum wins
    x = (np.random.default_rng(9).integers(-3, 4, shape) * 0.5).astype(dtype)
    name = f"max_pool{nd}d"
    ex, tx = on_cuda(x, True), torch.tensor(x, requires_grad=True)
    ey, ei = getattr(EF, name)(ex, k, s, p, d, ceil, return_indices=True)
    ty, ti = getattr(TF, name)(tx, k, s, p, d, ceil, return_indices=True)
    np.testing.assert_array_equal(host(ey), ty.detach().numpy())
    np.testing.assert_array_equal(host(ei), ti.numpy())
    g = rand(tuple(ty.shape), 10, dtype)
    ey.backward(on_cuda(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(host(ex.grad), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_adaptive_and_average_pools():
    x = rand((2, 3, 9, 10), 11)
    e, t = on_cuda(x), torch.tensor(x)
    ey, ei = EF.adaptive_max_pool2d(e, (4, 3), return_indices=True)
    ty, ti = TF.adaptive_max_pool2d(t, (4, 3), return_indices=True)
    np.testing.assert_array_equal(host(ey), ty.numpy())
    np.testing.assert_array_equal(host(ei), ti.numpy())
    np.testing.assert_allclose(host(EF.avg_pool2d(e, 3, 2, 1, True, False)),
                               TF.avg_pool2d(t, 3, 2, 1, True, False).numpy(), rtol=1e-12)
    np.testing.assert_allclose(host(EF.adaptive_avg_pool2d(e, (4, 3))),
                               TF.adaptive_avg_pool2d(t, (4, 3)).numpy(), rtol=1e-12)


def crand(shape, seed, dtype="complex128"):
    r = np.random.default_rng(seed)
    return (r.uniform(-1, 1, shape) + 1j * r.uniform(-1, 1, shape)).astype(dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_ffts(dtype):
    tol = 1e-4 if dtype == "complex64" else 1e-12
    c = crand((4, 6, 5), 12, dtype)
    e = on_cuda(c)
    checks = [
        (ember.fft.fft(e), np.fft.fft(c)),
        (ember.fft.ifft(e, dim=1, norm="ortho"), np.fft.ifft(c, axis=1, norm="ortho")),
        (ember.fft.fft(e.transpose(0, 2)), np.fft.fft(c.transpose(2, 1, 0))),
        (ember.fft.fft2(e), np.fft.fft2(c)),
        (ember.fft.fftn(e), np.fft.fftn(c)),
    ]
    c4 = crand((2, 3, 4, 5), 13, dtype)
    checks.append((ember.fft.ifftn(on_cuda(c4)), np.fft.ifftn(c4)))
    for got, want in checks:
        np.testing.assert_allclose(host(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_ffts(dtype):
    tol = 1e-4 if dtype == "float32" else 1e-12
    r = rand((5, 16), 14, dtype)
    c = crand((5, 9), 15, "complex64" if dtype == "float32" else "complex128")
    # irfft of a spectrum that is not Hermitian: the imaginary parts of the zero and Nyquist bins
    # are ignored, as numpy and the CPU do.
    checks = [
        (ember.fft.rfft(on_cuda(r)), np.fft.rfft(r)),
        (ember.fft.rfft(on_cuda(r), dim=0), np.fft.rfft(r, axis=0)),
        (ember.fft.rfftn(on_cuda(r)), np.fft.rfftn(r)),
        (ember.fft.irfft(on_cuda(c)), np.fft.irfft(c)),
        (ember.fft.irfft(on_cuda(c), n=17), np.fft.irfft(c, n=17)),
    ]
    for got, want in checks:
        np.testing.assert_allclose(host(got), want, rtol=tol, atol=tol)
