"""float32/float64 matrix products on both sides of blas_gemm's switch between ember's packed
kernel and OpenBLAS (Note [GEMM choice] in src/kernels/cpu/linalg/gemm.cpp), against NumPy in
float64: every size class (below, around and above the register tile, the k block and the switch),
tails, transposed and strided operands, mm / addmm / bmm / baddbmm with beta 0 (NaN input
ignored), 1 and other values, k = 0, NaN/inf propagation, 1 and 2 threads, and the scalar
(default) kernel set in a subprocess. The bound is (k + 2) eps of the dtype relative to
|alpha| |A| |B| + |beta| |C|, which holds for any summation order."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ember

DTYPES = {"float32": (np.float32, ember.float32), "float64": (np.float64, ember.float64)}

# (m, n, k): tiles of 6/8 rows and 16/32 columns with tails, a k block of 256, the bench sizes,
# the packed kernel's blocked nest (from 160^3: k, row and column blocks, n past its 2048-column
# block of B), float32 past the old 400^3 switch with m >= 128 (still packed), and the skinny
# products with m < 128 past 400^3 that go to OpenBLAS.
SIZES = [(1, 1, 1), (5, 7, 3), (6, 16, 8), (7, 17, 9), (13, 33, 1), (64, 64, 64),
         (65, 63, 67), (96, 100, 300), (128, 128, 128), (130, 200, 257), (300, 257, 255),
         (420, 410, 400), (200, 170, 300), (150, 2100, 20), (450, 130, 1200),
         (100, 2000, 400)]


def rand(shape, np_dtype, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np_dtype)


def operand(arr, layout):
    """The ember tensor holding `arr` contiguous, as the transpose of a contiguous matrix, or
    as a view with a column step of 2."""
    if layout == "contiguous":
        return ember.from_numpy(arr.copy())
    if layout == "transposed":
        return ember.from_numpy(np.ascontiguousarray(arr.swapaxes(-1, -2))).transpose(-1, -2)
    wide = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), arr.dtype)
    wide[..., ::2] = arr
    return ember.from_numpy(wide)[..., ::2]


def assert_close(got, a, b, alpha=1.0, beta=0.0, c=None, dtype="float32"):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf * 0 in the NaN/inf cases
        ref = alpha * (a64 @ b64)
        bound = abs(alpha) * (np.abs(a64) @ np.abs(b64))
    if beta != 0:
        ref = ref + beta * c.astype(np.float64)
        bound = bound + abs(beta) * np.abs(c.astype(np.float64))
    k = a.shape[-1]
    bound = bound * (k + 2) * np.finfo(DTYPES[dtype][0]).eps
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == ref.shape
    assert np.array_equal(np.isnan(got), np.isnan(ref)), "NaN positions differ"
    fin = np.isfinite(ref)
    assert np.array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)]), "inf differ"
    err = np.abs(got[fin] - ref[fin])
    assert np.all(err <= bound[fin]), f"max error {err.max()} over bound {bound[fin].max()}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mnk", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("la", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("lb", ["contiguous", "transposed"])
def test_mm_sizes(dtype, mnk, la, lb, threads):
    m, n, k = mnk
    npt = DTYPES[dtype][0]
    a, b = rand((m, k), npt, m * 7 + k), rand((k, n), npt, n * 11 + k)
    out = ember.mm(operand(a, la), operand(b, lb))
    assert out.dtype == DTYPES[dtype][1]
    assert_close(out.numpy(), a, b, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mnk", [(7, 17, 9), (64, 64, 64), (130, 200, 257), (300, 257, 255),
                                 (200, 170, 300)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (1.0, 1.0), (-2.0, 0.5), (0.5, -3.0)])
def test_addmm_alpha_beta(dtype, mnk, alpha, beta, threads):
    m, n, k = mnk
    npt = DTYPES[dtype][0]
    a, b = rand((m, k), npt, 1), rand((k, n), npt, 2)
    c = rand((m, n), npt, 3)
    if beta == 0:
        c[:] = np.nan  # beta == 0 ignores the input, NaN included
    out = ember.addmm(ember.from_numpy(c.copy()), ember.from_numpy(a), ember.from_numpy(b),
                      beta=beta, alpha=alpha)
    assert_close(out.numpy(), a, b, alpha, beta, c, dtype=dtype)
    # In place on a transposed output (C written through its own strides).
    ct = ember.from_numpy(np.ascontiguousarray(c.T)).t()
    ct.addmm_(ember.from_numpy(a), operand(b, "transposed"), beta=beta, alpha=alpha)
    assert_close(ct.numpy(), a, b, alpha, beta, c, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bmnk", [(3, 5, 7, 9), (64, 128, 128, 128), (9, 65, 33, 130),
                                  (2, 200, 180, 300), (3, 150, 140, 270)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("lb", ["contiguous", "transposed"])
def test_bmm_and_baddbmm(dtype, bmnk, lb, threads):
    bs, m, n, k = bmnk
    npt = DTYPES[dtype][0]
    a, b = rand((bs, m, k), npt, 4), rand((bs, k, n), npt, 5)
    out = ember.bmm(ember.from_numpy(a), operand(b, lb))
    assert_close(out.numpy(), a, b, dtype=dtype)
    c = rand((bs, m, n), npt, 6)
    out = ember.baddbmm(ember.from_numpy(c), ember.from_numpy(a), operand(b, lb), beta=0.25,
                        alpha=-1.5)
    assert_close(out.numpy(), a, b, -1.5, 0.25, c, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mn", [(5, 7), (64, 64), (300, 260)])
def test_k_zero(dtype, mn, threads):
    m, n = mn
    npt = DTYPES[dtype][0]
    a, b = np.zeros((m, 0), npt), np.zeros((0, n), npt)
    out = ember.mm(ember.from_numpy(a), ember.from_numpy(b))
    np.testing.assert_array_equal(out.numpy(), np.zeros((m, n), npt))
    c = rand((m, n), npt, 7)
    out = ember.addmm(ember.from_numpy(c), ember.from_numpy(a), ember.from_numpy(b), beta=2.0)
    np.testing.assert_array_equal(out.numpy(), (2.0 * c.astype(np.float64)).astype(npt))
    c[:] = np.nan
    out = ember.addmm(ember.from_numpy(c), ember.from_numpy(a), ember.from_numpy(b), beta=0.0)
    np.testing.assert_array_equal(out.numpy(), np.zeros((m, n), npt))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mnk", [(7, 17, 9), (64, 64, 64), (300, 257, 255), (200, 170, 300)],
                         ids=lambda s: "x".join(map(str, s)))
def test_nan_and_inf_propagate(dtype, mnk, threads):
    m, n, k = mnk
    npt = DTYPES[dtype][0]
    a, b = rand((m, k), npt, 8), rand((k, n), npt, 9)
    a[m // 2, k // 3] = np.nan
    b[k - 1, n - 1] = np.inf
    b[0, 0] = -np.inf
    a[m - 1, 0] = 0.0  # 0 * -inf = NaN in column 0 of the last row
    for la in ("contiguous", "transposed"):
        out = ember.mm(operand(a, la), ember.from_numpy(b))
        assert_close(out.numpy(), a, b, dtype=dtype)


def test_shape_mismatch_raises():
    a = ember.from_numpy(np.ones((3, 4), np.float32))
    with pytest.raises(RuntimeError):
        ember.mm(a, a)


def test_default_kernel_set_in_subprocess():
    # The scalar-ISA variant of the packed kernel end to end: EMBER_CPU_CAPABILITY is read once
    # at start-up, hence the subprocess.
    code = (
        "import numpy as np, ember, ember.backends.cpu\n"
        "cap = ember.backends.cpu.get_cpu_capability()\n"
        "assert cap == 'DEFAULT', cap\n"
        "ember.set_num_threads(2)\n"
        "rng = np.random.default_rng(0)\n"
        "for m, n, k in [(7, 17, 9), (64, 64, 64), (130, 70, 300)]:\n"
        "    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)\n"
        "    b = rng.uniform(-1, 1, (n, k)).astype(np.float32)\n"
        "    got = ember.mm(ember.from_numpy(a), ember.from_numpy(b).t()).numpy()\n"
        "    ref = a.astype(np.float64) @ b.astype(np.float64).T\n"
        "    bound = (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64).T)\n"
        "    assert np.all(np.abs(got - ref) <= bound * (k + 2) * np.finfo(np.float32).eps)\n"
        "print('ok')\n")
    env = dict(os.environ, EMBER_CPU_CAPABILITY="default")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
