"""mm / addmm / bmm / baddbmm / matmul / linalg.matmul (2-D and batched 3-D) with out=: a contiguous out of the right shape, dtype and device
that aliases no input is written in place (same storage, version bumped), everything else goes
through a fresh result copied in. Values against torch 1.13 for float32, float64 and complex64,
with out aliasing an input (against NumPy), transposed (non-contiguous) out, empty out resized,
broadcast self, zero-size products, and the errors (wrong dtype, inputs that require grad)."""

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64", "complex64"]


def arr(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def both(a):
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def close(e, t):
    tol = 1e-5 if e.dtype in (ember.float32, ember.complex64) else 1e-12
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=tol, atol=tol * 10)


CASES = {
    "mm": ((5, 7), (7, 3), None, (5, 3)),
    "addmm": ((5, 7), (7, 3), (3,), (5, 3)),
    "bmm": ((4, 5, 7), (4, 7, 3), None, (4, 5, 3)),
    "baddbmm": ((4, 5, 7), (4, 7, 3), (5, 3), (4, 5, 3)),
    "matmul": ((5, 7), (7, 3), None, (5, 3)),
    "matmul_3d": ((4, 5, 7), (4, 7, 3), None, (4, 5, 3)),
    "linalg_matmul": ((4, 5, 7), (4, 7, 3), None, (4, 5, 3)),
}


def fn_of(L, op):
    if op == "linalg_matmul":
        return L.linalg.matmul
    return getattr(L, op.replace("_3d", ""))


def call(L, op, a, b, s, out, **kw):
    if s is None:
        return fn_of(L, op)(a, b, out=out)
    return fn_of(L, op)(s, a, b, out=out, **kw)


@pytest.mark.parametrize("op", list(CASES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_out_written_in_place(op, dtype):
    sa, sb, ss, so = CASES[op]
    a, b = arr(sa, dtype, 1), arr(sb, dtype, 2)
    s = arr(ss, dtype, 3) if ss else None
    kw = {"beta": 0.5, "alpha": 2.0} if s is not None else {}
    res = {}
    for L in (ember, torch):
        ta, tb = (L.from_numpy(v.copy()) for v in (a, b))
        ts = L.from_numpy(s.copy()) if s is not None else None
        out = L.full(so, 7.0, dtype=ta.dtype)
        ptr, ver = out.data_ptr(), out._version
        r = call(L, op, ta, tb, ts, out, **kw)
        assert r is out or r.data_ptr() == ptr
        assert out.data_ptr() == ptr
        assert out._version > ver
        res[L] = out
    close(res[ember], res[torch])


@pytest.mark.parametrize("op", list(CASES))
def test_out_aliasing_an_input(op):
    """out is the first operand itself: the product reads it whole before writing."""
    sa, sb, ss, so = CASES[op]
    # square operands so that the first one can take the result
    sa = sa[:-2] + (5, 5)
    sb = sb[:-2] + (5, 5)
    so = sa
    ss = (5,) if ss else None
    a, b = arr(sa, "float64", 4), arr(sb, "float64", 5)
    s = arr(ss, "float64", 6) if ss else None
    ta, tb = (ember.from_numpy(v.copy()) for v in (a, b))
    ts = ember.from_numpy(s.copy()) if s is not None else None
    call(ember, op, ta, tb, ts, ta)
    # NumPy is the oracle: torch 1.13's CPU kernels zero or overwrite the aliased operand first.
    expect = a @ b + (s if s is not None else 0)
    np.testing.assert_allclose(ta.numpy(), expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", list(CASES))
def test_out_transposed_and_empty(op):
    sa, sb, ss, so = CASES[op]
    a, b = arr(sa, "float32", 7), arr(sb, "float32", 8)
    s = arr(ss, "float32", 9) if ss else None
    for make in ("transposed", "empty"):
        res = {}
        for L in (ember, torch):
            ta, tb = (L.from_numpy(v.copy()) for v in (a, b))
            ts = L.from_numpy(s.copy()) if s is not None else None
            if make == "transposed":
                out = L.zeros(so[:-2] + (so[-1], so[-2])).transpose(-1, -2)
            else:
                out = L.empty(0)
            call(L, op, ta, tb, ts, out)
            res[L] = out
        assert tuple(res[ember].shape) == tuple(res[torch].shape) == so
        assert tuple(res[ember].stride()) == tuple(res[torch].stride()), make
        close(res[ember], res[torch])


@pytest.mark.parametrize("op", list(CASES))
def test_zero_size_products(op):
    sa, sb, ss, so = CASES[op]
    sa = sa[:-1] + (0,)
    sb = sb[:-2] + (0, sb[-1])
    a, b = np.zeros(sa, np.float32), np.zeros(sb, np.float32)
    s = arr(ss, "float32", 10) if ss else None
    res = {}
    for L in (ember, torch):
        ta, tb = (L.from_numpy(v.copy()) for v in (a, b))
        ts = L.from_numpy(s.copy()) if s is not None else None
        out = L.full(so, 3.0)
        call(L, op, ta, tb, ts, out)
        res[L] = out
    close(res[ember], res[torch])


@pytest.mark.parametrize("op", list(CASES))
def test_errors_unchanged(op):
    sa, sb, ss, so = CASES[op]
    for case in ("dtype", "grad"):
        kinds = {}
        for L in (ember, torch):
            ta = L.from_numpy(arr(sa, "float32", 11))
            tb = L.from_numpy(arr(sb, "float32", 12))
            ts = L.from_numpy(arr(ss, "float32", 13)) if ss else None
            out = L.empty(so)
            if case == "dtype":
                out = L.empty(so, dtype=L.float64)
            else:
                ta.requires_grad_()
            try:
                call(L, op, ta, tb, ts, out)
                kinds[L] = None
            except Exception as e:  # noqa: BLE001 - the type is compared
                kinds[L] = type(e).__name__
        assert kinds[torch] is not None, (op, case)
        assert kinds[ember] == kinds[torch], (op, case, kinds)
