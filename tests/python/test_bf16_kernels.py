"""bfloat16 / float16 CPU kernels: conversions (exhaustive, bit for bit, under every CPU kernel
set), elementwise ops computed in float32, matrix products, convolution, layer_norm and softmax.
Oracles: torch 1.13 and NumPy (float32 references on the rounded inputs, with tolerances of a
few 16-bit ulps where the summation order may differ)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ember

F = ember.nn.functional
TF = torch.nn.functional

DTYPES = [(ember.bfloat16, torch.bfloat16), (ember.float16, torch.float16)]
# One ulp at 1.0 of each 16-bit type.
ULP = {ember.bfloat16: 2.0 ** -7, ember.float16: 2.0 ** -10}


def e2t(x):
    """An ember tensor as a torch tensor (same dtype and values)."""
    if x.dtype in (ember.bfloat16, ember.float16):
        bits = x.contiguous().view(ember.int16).numpy().copy()
        dt = torch.bfloat16 if x.dtype == ember.bfloat16 else torch.float16
        return torch.from_numpy(bits).view(dt)
    return torch.from_numpy(x.contiguous().numpy().copy())


def t2e(x):
    if x.dtype in (torch.bfloat16, torch.float16):
        bits = x.contiguous().view(torch.int16).numpy().copy()
        dt = ember.bfloat16 if x.dtype == torch.bfloat16 else ember.float16
        return ember.from_numpy(bits).view(dt)
    return ember.from_numpy(x.contiguous().numpy().copy())


def bits16(x):
    return x.contiguous().view(ember.int16).numpy().view(np.uint16)


# ---------------------------------------------------------------------------------------------
# Exhaustive conversion checks, run in a child process per CPU kernel set (the set is chosen
# once at start-up from EMBER_CPU_CAPABILITY).

CONVERSION_CHECK = textwrap.dedent(r"""
    import numpy as np, torch, ember

    def bits16(x):
        return x.contiguous().view(ember.int16).numpy().view(np.uint16)

    def check(name, got, want):
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, (name, ember._C._cpu_capability, bad.size,
                               [(hex(int(i)), hex(int(got[i])), hex(int(want[i])))
                                for i in bad[:5]])

    # Every 16-bit pattern, plus 5 so the vector loops have a tail.
    h = np.concatenate([np.arange(65536), np.arange(5)]).astype(np.uint16)
    sign = (h.astype(np.uint32) & 0x8000) << 16
    # bfloat16 -> float32: the top half of the float32 bits.
    want_bf = h.astype(np.uint32) << 16
    # float16 -> float32: exact (NumPy); a NaN keeps its payload unquieted.
    want_h = h.view(np.float16).astype(np.float32).view(np.uint32).copy()
    nan_h = ((h & 0x7c00) == 0x7c00) & ((h & 0x3ff) != 0)
    want_h[nan_h] = (sign | 0x7f800000 | ((h.astype(np.uint32) & 0x3ff) << 13))[nan_h]
    for dt, want in ((ember.bfloat16, want_bf), (ember.float16, want_h)):
        x = ember.from_numpy(h.view(np.int16).copy()).view(dt)
        check(f"{dt}->f32 dense", x.float().numpy().view(np.uint32), want)
        # A strided source runs the scalar loop: both paths give the same bits.
        x2 = ember.from_numpy(np.repeat(h.view(np.int16), 2)).view(dt)[::2]
        check(f"{dt}->f32 strided", x2.float().numpy().view(np.uint32), want)

    # float32 inputs: every top half with low halves at and around the bfloat16 and float16
    # rounding ties, a sweep over float16's subnormal and overflow ranges, random bit patterns.
    hi = np.arange(65536, dtype=np.uint32) << 16
    lows = np.array([0, 1, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001,
                     0xffff], dtype=np.uint32)
    rng = np.random.default_rng(0)
    u = np.concatenate([(hi[:, None] | lows[None, :]).ravel(),
                        np.arange(0x33000000, 0x38900000, 37, dtype=np.uint32),
                        np.arange(0xb3000000, 0xb8900000, 37, dtype=np.uint32),
                        np.arange(0x477f0000, 0x47810000, dtype=np.uint32),
                        rng.integers(0, 2 ** 32, 1 << 20, dtype=np.uint64).astype(np.uint32),
                        np.arange(3, dtype=np.uint32)])
    f = u.view(np.float32)

    def round_bf16(f):
        # round to nearest even; a NaN keeps its top bits with the quiet bit set
        u = f.view(np.uint32)
        wide = u.astype(np.uint64)
        r = ((wide + 0x7fff + ((wide >> 16) & 1)) >> 16).astype(np.uint16)
        nan = np.isnan(f)
        r[nan] = ((u >> 16) | 0x40).astype(np.uint16)[nan]
        return r

    def round_f16(f):
        # NumPy's round to nearest even; a NaN is sign | 0x7e00
        with np.errstate(over="ignore"):
            r = f.astype(np.float16).view(np.uint16).copy()
        nan = np.isnan(f)
        r[nan] = (((f.view(np.uint32) >> 16) & 0x8000) | 0x7e00).astype(np.uint16)[nan]
        return r

    want_bf, want_h = round_bf16(f), round_f16(f)
    # torch 1.13 agrees away from NaN (its bfloat16 NaN drops the payload).
    nan = np.isnan(f)
    tf = torch.from_numpy(f.copy())
    tb = tf.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    th = tf.to(torch.float16).view(torch.int16).numpy().view(np.uint16)
    assert (tb[~nan] == want_bf[~nan]).all() and (th[~nan] == want_h[~nan]).all()
    x = ember.from_numpy(f.copy())
    x2 = ember.from_numpy(np.repeat(f, 2))[::2]
    perm = rng.permutation(f.shape[0])
    for dt, want, rnd in ((ember.bfloat16, want_bf, round_bf16), (ember.float16, want_h, round_f16)):
        check(f"f32->{dt} dense", bits16(x.to(dt)), want)
        check(f"f32->{dt} strided", bits16(x2.to(dt)), want)
        out = ember.empty(f.shape[0], dtype=dt)
        out.copy_(x)
        check(f"copy_ f32->{dt}", bits16(out), want)
        # An op's float32 result rounded once: products of 16-bit floats are exact in float32.
        a = x.to(dt)
        b = a[ember.from_numpy(perm)]
        # (A NaN product's payload depends on the operand order the compiler picked: only
        # NaN-ness is checked there.)
        with np.errstate(all="ignore"):
            prod = a.float().numpy() * b.float().numpy()
        pnan = np.isnan(prod)
        a2 = ember.from_numpy(np.repeat(bits16(a).view(np.int16), 2)).view(dt)[::2]
        for how, got in (("dense", a * b), ("strided", a2 * b)):
            check(f"mul {dt} {how}", bits16(got)[~pnan], rnd(prod)[~pnan])
            assert np.isnan(got.float().numpy()[pnan]).all()
    print("OK", ember._C._cpu_capability)
""")


@pytest.mark.parametrize("cap", ["default", "avx2", "native"])
def test_conversions_exhaustive(cap):
    env = dict(os.environ)
    env.pop("EMBER_CPU_CAPABILITY", None)
    if cap != "native":
        env["EMBER_CPU_CAPABILITY"] = cap
    r = subprocess.run([sys.executable, "-c", CONVERSION_CHECK], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("OK")
    if cap != "native":
        # A request above the CPU's set is capped, never raised.
        assert r.stdout.split()[1] in (cap, "default")


# ---------------------------------------------------------------------------------------------
# Casts between every dtype and the 16-bit floats, against torch.

SOURCES = ["float64", "float32", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("edt,tdt", DTYPES)
@pytest.mark.parametrize("src", SOURCES)
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 17, 33, 255, 257, 1000])
def test_cast_to_16bit(edt, tdt, src, n):
    rng = np.random.default_rng(n)
    if src == "bool":
        a = rng.integers(0, 2, n).astype(bool)
    elif src.startswith("float"):
        a = (rng.standard_normal(n) * 1000).astype(src)
        if n > 3:
            a[:3] = [np.inf, -np.inf, 1e-6]
    else:
        a = rng.integers(-100 if src != "uint8" else 0, 100, n).astype(src)
    got = bits16(ember.from_numpy(a).to(edt))
    want = torch.from_numpy(a).to(tdt).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(got, want)
    # and back to the source dtype
    back = ember.from_numpy(a).to(edt).to(getattr(ember, src)).numpy()
    np.testing.assert_array_equal(back, torch.from_numpy(a).to(tdt).to(getattr(torch, src)).numpy())


@pytest.mark.parametrize("edt,tdt", DTYPES)
def test_cast_strided_and_0dim(edt, tdt):
    a = np.random.default_rng(1).standard_normal((7, 13)).astype(np.float32)
    x, tx = ember.from_numpy(a), torch.from_numpy(a)
    for e, t in ((x.t(), tx.t()), (x[:, ::3], tx[:, ::3]), (x[2, 5], tx[2, 5])):
        assert e.to(edt).shape == tuple(t.shape)
        np.testing.assert_array_equal(bits16(e.to(edt)),
                                      t.to(tdt).contiguous().view(torch.int16).numpy()
                                      .view(np.uint16))
        np.testing.assert_array_equal(e.to(edt).float().numpy(), t.to(tdt).float().numpy())


# ---------------------------------------------------------------------------------------------
# Elementwise ops on 16-bit floats compute in float32 and round once, as torch.

EXACT_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]
UNARY = ["neg", "abs", "exp", "tanh", "sigmoid", "sqrt", "relu"]


@pytest.mark.parametrize("edt,tdt", DTYPES)
@pytest.mark.parametrize("n", [1, 5, 8, 16, 31, 256, 1000, 4099])
def test_binary_ops_bitwise(edt, tdt, n):
    rng = np.random.default_rng(n)
    a = torch.from_numpy(rng.standard_normal(n).astype(np.float32)).to(tdt)
    b = torch.from_numpy(rng.standard_normal(n).astype(np.float32) + 3).to(tdt)
    for op in EXACT_BINARY:
        got = getattr(ember, op)(t2e(a), t2e(b))
        want = getattr(torch, op)(a, b)
        assert got.dtype == edt
        np.testing.assert_array_equal(bits16(got), want.view(torch.int16).numpy().view(np.uint16),
                                      err_msg=op)
    # a broadcast scalar operand and a strided one
    got = ember.add(t2e(a)[::2], t2e(b)[:1])
    want = a[::2] + b[:1]
    np.testing.assert_array_equal(bits16(got), want.view(torch.int16).numpy().view(np.uint16))
    # a float32 operand promotes to float32
    assert ember.add(t2e(a), t2e(b.float())).dtype == ember.float32


@pytest.mark.parametrize("edt,tdt", DTYPES)
@pytest.mark.parametrize("n", [3, 8, 17, 300, 1029])
def test_unary_ops_close(edt, tdt, n):
    rng = np.random.default_rng(7 + n)
    a = torch.from_numpy(np.abs(rng.standard_normal(n)).astype(np.float32) + 0.1).to(tdt)
    for op in UNARY:
        try:
            getattr(torch, op)(a)
        except RuntimeError:
            # torch 1.13 has no CPU kernel of this op for the dtype: neither has ember
            with pytest.raises(RuntimeError, match="not implemented"):
                getattr(ember, op)(t2e(a))
            continue
        got = e2t(getattr(ember, op)(t2e(a))).float()
        # reference: float32 math on the rounded input, rounded once
        want = getattr(torch, op)(a.float()).to(tdt).float()
        torch.testing.assert_close(got, want, rtol=ULP[edt], atol=0, msg=op)


@pytest.mark.parametrize("edt,tdt", DTYPES)
def test_elementwise_zero_size_and_0dim(edt, tdt):
    z = ember.zeros(0, 3, dtype=edt)
    assert (z + z).shape == (0, 3) and (z + z).dtype == edt
    assert z.float().shape == (0, 3)
    s = ember.tensor(1.5, dtype=edt)
    assert (s * 2).item() == 3.0 and (s * 2).dtype == edt


# ---------------------------------------------------------------------------------------------
# Matrix products: float32 accumulation of the 16-bit inputs, one rounding at the end.


def mm_reference(a, b, tdt):
    return (a.float() @ b.float()).to(tdt).float()


def assert_product_close(got, want, k, tdt, scale=1.0):
    # Summation order differs from torch's: allow a few ulps of the result plus k-dependent
    # float32 noise relative to the operands' scale.
    ulp = 2.0 ** -7 if tdt == torch.bfloat16 else 2.0 ** -10
    torch.testing.assert_close(got.float(), want.float(), rtol=2 * ulp,
                               atol=scale * (ulp + 1e-6 * k))


@pytest.mark.parametrize("edt,tdt", DTYPES)
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (17, 33, 9), (64, 64, 64),
                                   (100, 257, 31), (1, 300, 1)])
def test_mm_16bit(edt, tdt, m, k, n):
    g = torch.Generator().manual_seed(m * 1000 + k + n)
    a = torch.randn(m, k, generator=g).to(tdt)
    b = torch.randn(k, n, generator=g).to(tdt)
    want = mm_reference(a, b, tdt)
    s = float(np.sqrt(k))
    got = ember.mm(t2e(a), t2e(b))
    assert got.dtype == edt
    assert_product_close(e2t(got), want, k, tdt, s)
    # transposed operands (BLAS layouts) and a non-BLAS stride
    got_t = ember.mm(t2e(a.t().contiguous()).t(), t2e(b.t().contiguous()).t())
    assert_product_close(e2t(got_t), want, k, tdt, s)
    a2 = torch.randn(m, 2 * k, generator=g).to(tdt)[:, ::2]
    assert_product_close(e2t(ember.mm(t2e(a2.contiguous()), t2e(b))), mm_reference(a2, b, tdt),
                         k, tdt, s)
    ea2 = t2e(torch.cat([a2, a2], 1).contiguous())[:, :k]  # row stride 2k
    assert_product_close(e2t(ember.mm(ea2, t2e(b))), mm_reference(a2, b, tdt), k, tdt, s)


@pytest.mark.parametrize("edt,tdt", DTYPES)
def test_matmul_family_16bit(edt, tdt):
    g = torch.Generator().manual_seed(3)
    a = torch.randn(4, 9, 19, generator=g).to(tdt)
    b = torch.randn(4, 19, 6, generator=g).to(tdt)
    c = torch.randn(9, 6, generator=g).to(tdt)
    want = (a.float() @ b.float()).to(tdt)
    assert_product_close(e2t(ember.bmm(t2e(a), t2e(b))), want, 19, tdt, 5)
    assert_product_close(e2t(ember.matmul(t2e(a), t2e(b))), want, 19, tdt, 5)
    # broadcast batch (stride 0)
    want_b = (a.float() @ b[0].float()).to(tdt)
    assert_product_close(e2t(ember.matmul(t2e(a), t2e(b[0]))), want_b, 19, tdt, 5)
    # addmm: beta * C + alpha * A·B
    want_add = (0.5 * c.float() + 2.0 * (a[0].float() @ b[0].float())).to(tdt)
    got = ember.addmm(t2e(c), t2e(a[0]), t2e(b[0]), beta=0.5, alpha=2.0)
    assert_product_close(e2t(got), want_add, 19, tdt, 10)
    # linear: x W^T + b
    w = torch.randn(6, 19, generator=g).to(tdt)
    bias = torch.randn(6, generator=g).to(tdt)
    want_lin = (a.float() @ w.float().t() + bias.float()).to(tdt)
    got = F.linear(t2e(a), t2e(w), t2e(bias))
    assert got.dtype == edt
    assert_product_close(e2t(got), want_lin, 19, tdt, 5)


@pytest.mark.parametrize("edt,tdt", DTYPES)
def test_mm_16bit_zero_size(edt, tdt):
    assert ember.mm(ember.ones(0, 3, dtype=edt), ember.ones(3, 4, dtype=edt)).shape == (0, 4)
    z = ember.mm(ember.ones(2, 0, dtype=edt), ember.ones(0, 4, dtype=edt))
    assert z.dtype == edt and z.shape == (2, 4) and (z.float().numpy() == 0).all()


@pytest.mark.skipif(not hasattr(ember, "set_float32_matmul_precision"),
                    reason="set_float32_matmul_precision not bound")
@pytest.mark.parametrize("n", [8, 200, 300])
def test_float32_matmul_precision(n):
    g = torch.Generator().manual_seed(n)
    a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
    exact = (a.double() @ b.double()).float()
    old = ember.get_float32_matmul_precision()
    try:
        for p in ("highest", "high"):
            ember.set_float32_matmul_precision(p)
            torch.testing.assert_close(e2t(ember.mm(t2e(a), t2e(b))), exact, rtol=1e-5,
                                       atol=1e-5 * n ** 0.5)
        ember.set_float32_matmul_precision("medium")
        got = e2t(ember.mm(t2e(a), t2e(b)))
        assert got.dtype == torch.float32
        # bfloat16 inputs with float32 accumulation at most: errors of bfloat16 input rounding
        torch.testing.assert_close(got, exact, rtol=0, atol=4 * 2.0 ** -8 * n ** 0.5 * 3)
    finally:
        ember.set_float32_matmul_precision(old)


# ---------------------------------------------------------------------------------------------
# Convolution in bfloat16: float32 compute of the rounded inputs, one rounding.


@pytest.mark.parametrize("shape,wshape,kw", [
    ((2, 3, 9, 11), (4, 3, 3, 3), dict(padding=1)),
    ((4, 8, 14, 14), (16, 8, 3, 3), dict(padding=1, stride=2)),
    ((1, 4, 7, 7), (4, 1, 3, 3), dict(groups=4)),
    ((3, 5, 17), (6, 5, 4), dict(padding=2, dilation=2)),
])
def test_conv_bf16(shape, wshape, kw):
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(*shape, generator=g).bfloat16()
    w = (torch.randn(*wshape, generator=g) * 0.3).bfloat16()
    b = torch.randn(wshape[0], generator=g).bfloat16()
    conv_t = TF.conv2d if len(shape) == 4 else TF.conv1d
    conv_e = F.conv2d if len(shape) == 4 else F.conv1d
    want = conv_t(x.float(), w.float(), b.float(), **kw).bfloat16()
    got = conv_e(t2e(x), t2e(w), t2e(b), **kw)
    assert got.dtype == ember.bfloat16 and got.shape == tuple(want.shape)
    fan = int(np.prod(wshape[1:]))
    assert_product_close(e2t(got), want, fan, torch.bfloat16, 0.3 * fan ** 0.5)
    # strided (non-contiguous) input
    xs = torch.cat([x, x], -1)[..., ::2]
    got_s = conv_e(t2e(torch.cat([x, x], -1))[..., ::2], t2e(w), t2e(b), **kw)
    assert_product_close(e2t(got_s), conv_t(xs.float(), w.float(), b.float(), **kw).bfloat16(),
                         fan, torch.bfloat16, 0.3 * fan ** 0.5)


def test_conv_bf16_backward():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 8, 8, generator=g).bfloat16()
    w = (torch.randn(5, 3, 3, 3, generator=g) * 0.3).bfloat16()
    gy = torch.randn(2, 5, 8, 8, generator=g).bfloat16()
    xf, wf = x.float().requires_grad_(), w.float().requires_grad_()
    TF.conv2d(xf, wf, padding=1).backward(gy.float())
    ex, ew = t2e(x).requires_grad_(), t2e(w).requires_grad_()
    F.conv2d(ex, ew, padding=1).backward(t2e(gy))
    assert ex.grad.dtype == ember.bfloat16 and ew.grad.dtype == ember.bfloat16
    assert_product_close(e2t(ex.grad), xf.grad.bfloat16(), 45, torch.bfloat16, 3)
    assert_product_close(e2t(ew.grad), wf.grad.bfloat16(), 128, torch.bfloat16, 12)


# ---------------------------------------------------------------------------------------------
# layer_norm, softmax, log_softmax in 16-bit floats: float32 accumulation.


@pytest.mark.parametrize("edt,tdt", DTYPES)
@pytest.mark.parametrize("rows,d", [(1, 1), (3, 7), (5, 8), (4, 33), (64, 256), (2, 1000)])
def test_layer_norm_16bit(edt, tdt, rows, d):
    g = torch.Generator().manual_seed(rows * d)
    x = (torch.randn(rows, d, generator=g) * 3 + 1).to(tdt)
    w = torch.randn(d, generator=g).to(tdt)
    b = torch.randn(d, generator=g).to(tdt)
    want = TF.layer_norm(x.float(), (d,), w.float(), b.float()).to(tdt).float()
    got = F.layer_norm(t2e(x), (d,), t2e(w), t2e(b))
    assert got.dtype == edt
    torch.testing.assert_close(e2t(got).float(), want, rtol=2 * ULP[edt], atol=4 * ULP[edt])
    got_nw = F.layer_norm(t2e(x), (d,))
    want_nw = TF.layer_norm(x.float(), (d,)).to(tdt).float()
    torch.testing.assert_close(e2t(got_nw).float(), want_nw, rtol=2 * ULP[edt],
                               atol=4 * ULP[edt])
    # a strided input
    xt = t2e(x.t().contiguous()).t()
    torch.testing.assert_close(e2t(F.layer_norm(xt, (d,), t2e(w), t2e(b))).float(), want,
                               rtol=2 * ULP[edt], atol=4 * ULP[edt])


@pytest.mark.parametrize("edt,tdt", DTYPES)
@pytest.mark.parametrize("shape,dim", [((1,), 0), ((3, 7), 1), ((4, 33), -1), ((64, 256), 1),
                                       ((5, 9, 6), 1), ((2, 3, 1000), 2), ((0, 4), 1), ((), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_16bit(edt, tdt, shape, dim, log):
    g = torch.Generator().manual_seed(len(shape) + 7)
    x = (torch.randn(shape, generator=g) * 4).to(tdt)
    tf_ = torch.log_softmax if log else torch.softmax
    ef = ember.log_softmax if log else ember.softmax
    want = tf_(x.float(), dim).to(tdt).float()
    got = ef(t2e(x), dim)
    assert got.dtype == edt and got.shape == tuple(want.shape)
    torch.testing.assert_close(e2t(got).float(), want, rtol=2 * ULP[edt], atol=2 * ULP[edt])
    if len(shape) >= 2:
        xt = t2e(x.transpose(0, 1).contiguous()).transpose(0, 1)
        torch.testing.assert_close(e2t(ef(xt, dim)).float(), want, rtol=2 * ULP[edt],
                                   atol=2 * ULP[edt])
    # dtype= rounds a float32 input to the 16-bit type first, then computes in float32
    xf = torch.randn(shape, generator=g)
    want_d = tf_(xf.to(tdt).float(), dim).to(tdt).float()
    torch.testing.assert_close(e2t(ef(t2e(xf), dim, dtype=edt)).float(), want_d,
                               rtol=2 * ULP[edt], atol=2 * ULP[edt])


def test_softmax_16bit_nan_inf():
    x = torch.tensor([[0.0, float("inf"), 1.0], [float("nan"), 1.0, 2.0],
                      [-float("inf"), 0.0, 0.0]]).bfloat16()
    got = e2t(ember.softmax(t2e(x), 1)).float()
    want = torch.softmax(x.float(), 1).bfloat16().float()
    torch.testing.assert_close(got, want, equal_nan=True)
