"""The distribution samplers (ember._standard_gamma, _sample_dirichlet, poisson, binomial) and the
reparameterisation gradients (_standard_gamma_grad, _dirichlet_grad).

Samples are checked statistically with fixed seeds and bounds of at least 5 standard errors (so
a run never fails by chance), against SciPy's distributions (moments, Kolmogorov-Smirnov, CDF
frequencies); gradients against finite differences of SciPy's inverse CDFs and against torch
1.13 (whose own values are approximations, good to about 0.2%); dtypes and errors against
torch 1.13."""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st
import torch

import ember
import ember.autograd.forward_ad as efwAD
from _oracle import to_ember


def gen(seed):
    return ember.Generator().manual_seed(seed)


def full(value, n, dtype=ember.float64):
    return ember.full((n,), value, dtype=dtype)


# ---- Gamma ----

@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 10.0, 400.0])
def test_gamma_moments_and_ks(alpha):
    n = 20000
    x = ember._standard_gamma(full(alpha, n), generator=gen(1)).numpy()
    assert (x > 0).all()
    se_mean = math.sqrt(alpha / n)
    assert abs(x.mean() - alpha) < 6 * se_mean
    # Var of the sample variance: (mu4 - sigma^4) / n with mu4 = 3a^2 + 6a for Gamma(a, 1).
    se_var = math.sqrt((3 * alpha**2 + 6 * alpha - alpha**2) / n)
    assert abs(x.var() - alpha) < 6 * se_var
    assert st.kstest(x, st.gamma(alpha).cdf).pvalue > 1e-6


def test_gamma_float32_and_layouts():
    a = ember.tensor([[0.5, 2.0, 9.0]] * 4000, dtype=ember.float32).t()  # transposed
    x = ember._standard_gamma(a, generator=gen(2))
    assert x.dtype == ember.float32 and tuple(x.shape) == (3, 4000)
    m = x.double().mean(1).tolist()
    for got, alpha in zip(m, (0.5, 2.0, 9.0)):
        assert abs(got - alpha) < 6 * math.sqrt(alpha / 4000)
    assert ember._standard_gamma(ember.empty(0, 3)).shape == (0, 3)
    s = ember._standard_gamma(ember.tensor(3.0, dtype=ember.float64), generator=gen(3))
    assert s.dim() == 0 and s.item() > 0


def test_gamma_edge_values_as_torch():
    # alpha <= 0 or NaN gives the smallest normal value (torch clamps); inf gives inf; tiny
    # alpha underflows to that value too.
    for dt, tdt in ((ember.float32, torch.float32), (ember.float64, torch.float64)):
        vals = [0.0, -1.0, float("nan"), float("inf"), 1e-30]
        e = ember._standard_gamma(ember.tensor(vals, dtype=dt)).tolist()
        t = torch._standard_gamma(torch.tensor(vals, dtype=tdt)).tolist()
        assert e == t


def test_gamma_reproducible_and_independent_of_threads():
    a = ember.rand(5000, generator=gen(0), dtype=ember.float64) * 5 + 0.01
    x1 = ember._standard_gamma(a, generator=gen(7))
    x2 = ember._standard_gamma(a, generator=gen(7))
    assert ember.equal(x1, x2)
    assert not ember.equal(x1, ember._standard_gamma(a, generator=gen(8)))
    old = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        x3 = ember._standard_gamma(a, generator=gen(7))
    finally:
        ember.set_num_threads(old)
    assert ember.equal(x1, x3)
    # The default generator follows manual_seed.
    ember.manual_seed(11)
    y1 = ember._standard_gamma(a)
    ember.manual_seed(11)
    assert ember.equal(y1, ember._standard_gamma(a))
    # A generator advances: two draws differ.
    g = gen(5)
    assert not ember.equal(ember._standard_gamma(a, g), ember._standard_gamma(a, g))


def _gamma_grad_fd(a, x):
    """d x / d a at fixed CDF by central differences of SciPy's inverse (float64)."""
    u = sp.gammainc(a, x)
    h = 1e-5 * a
    return (sp.gammaincinv(a + h, u) - sp.gammaincinv(a - h, u)) / (2 * h)


def test_standard_gamma_grad_vs_inverse_cdf():
    a_list, x_list = [], []
    for a in (0.01, 0.1, 0.5, 1.0, 2.0, 7.5, 30.0, 200.0, 5000.0):
        for u in (0.001, 0.05, 0.3, 0.5, 0.7, 0.95, 0.999):
            a_list.append(a)
            x_list.append(float(sp.gammaincinv(a, u)))
    a, x = np.array(a_list), np.array(x_list)
    keep = x > 1e-250  # the FD reference needs a representable sample
    g = ember._standard_gamma_grad(ember.tensor(a.tolist(), dtype=ember.float64),
                                   ember.tensor(x.tolist(), dtype=ember.float64)).numpy()
    np.testing.assert_allclose(g[keep], _gamma_grad_fd(a, x)[keep], rtol=2e-5)
    # torch 1.13 approximates the same derivative to about 0.2%.
    tg = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(g[keep], tg[keep], rtol=5e-3)
    # Exact at a = 1 (Exp(1)): dP/da = ∫_0^x (log t + γ) e^-t dt with
    # ∫_0^x log t e^-t dt = -γ - e^-x log x + Ei(-x), and dx/da = -(dP/da) / e^-x.
    xs = np.array([0.1, 1.0, 3.0])
    dP = -np.euler_gamma - np.exp(-xs) * np.log(xs) + sp.expi(-xs) + np.euler_gamma * (
        1 - np.exp(-xs))
    ref = -dP / np.exp(-xs)
    e = ember._standard_gamma_grad(ember.ones(3, dtype=ember.float64),
                                   ember.tensor(xs.tolist(), dtype=ember.float64)).numpy()
    np.testing.assert_allclose(e, ref, rtol=1e-10)


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
def test_standard_gamma_grad_broadcast_dtype_and_edges():
    a = ember.tensor([[1.0], [2.0]])
    x = ember.tensor([0.5, 1.5, 3.0])
    r = ember._standard_gamma_grad(a, x)
    t = torch._standard_gamma_grad(torch.tensor([[1.0], [2.0]]), torch.tensor([0.5, 1.5, 3.0]))
    assert r.shape == (2, 3) and r.dtype == ember.float32
    np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=5e-3)
    # x <= 0 gives 0, alpha <= 0 or x = inf gives NaN, as torch.
    e = ember._standard_gamma_grad(ember.tensor([1.0, 1.0, 0.0, -1.0, 1.0]),
                                   ember.tensor([0.0, -1.0, 1.0, 1.0, float("inf")])).tolist()
    assert e[0] == 0 and e[1] == 0 and all(math.isnan(v) for v in e[2:])


def test_gamma_rsample_backward_and_forward_ad():
    alpha = ember.tensor([0.3, 1.0, 4.0, 50.0], dtype=ember.float64, requires_grad=True)
    x = ember._standard_gamma(alpha, generator=gen(3))
    assert x.grad_fn is not None and "StandardGamma" in type(x.grad_fn).__name__ + str(
        x.grad_fn.name())
    w = ember.tensor([1.0, -2.0, 0.5, 3.0], dtype=ember.float64)
    (x * w).sum().backward()
    xd = x.detach().numpy()
    ref = _gamma_grad_fd(alpha.detach().numpy(), xd) * w.numpy()
    np.testing.assert_allclose(alpha.grad.numpy(), ref, rtol=2e-5)
    # Forward AD: tangent = v * dx/dalpha.
    a2 = alpha.detach()
    v = ember.tensor([1.0, 0.5, -1.0, 2.0], dtype=ember.float64)
    with efwAD.dual_level():
        d = efwAD.make_dual(a2, v)
        out = ember._standard_gamma(d, generator=gen(3))
        p, tan = efwAD.unpack_dual(out)
    assert ember.equal(p, x.detach())
    np.testing.assert_allclose(tan.numpy(), _gamma_grad_fd(a2.numpy(), xd) * v.numpy(),
                               rtol=2e-5)


# ---- Dirichlet ----

def test_dirichlet_rows_moments_and_marginals():
    alpha = [0.3, 1.0, 2.5, 6.0]
    n = 10000
    a = ember.tensor([alpha] * n, dtype=ember.float64)
    x = ember._sample_dirichlet(a, generator=gen(4)).numpy()
    assert x.shape == (n, 4)
    np.testing.assert_allclose(x.sum(1), 1.0, rtol=1e-12)
    a0 = sum(alpha)
    for i, ai in enumerate(alpha):
        mean, var = ai / a0, ai * (a0 - ai) / (a0 * a0 * (a0 + 1))
        assert abs(x[:, i].mean() - mean) < 6 * math.sqrt(var / n)
        assert st.kstest(x[:, i], st.beta(ai, a0 - ai).cdf).pvalue > 1e-6


def test_dirichlet_dtypes_shapes_and_edges():
    x = ember._sample_dirichlet(ember.tensor([[1.0, 2.0, 3.0], [0.1, 0.1, 0.1]]), generator=gen(1))
    assert x.dtype == ember.float32 and x.shape == (2, 3)
    np.testing.assert_allclose(x.sum(1).numpy(), 1.0, rtol=1e-6)
    # One category: the largest value below 1 (torch clamps to it).
    for dt in ("float32", "float64"):
        assert ember._sample_dirichlet(ember.tensor(2.0, dtype=getattr(ember, dt))).item() == (
            torch._sample_dirichlet(torch.tensor(2.0, dtype=getattr(torch, dt))).item())
    assert ember._sample_dirichlet(ember.empty(0, 3)).shape == (0, 3)
    assert ember._sample_dirichlet(ember.empty(3, 0)).shape == (3, 0)
    # Tiny concentrations: gammas in double, results clamped to the dtype's smallest normal.
    t = ember._sample_dirichlet(ember.tensor([1e-3, 1e-3, 1e-3]), generator=gen(2))
    assert (t.numpy() >= np.finfo(np.float32).tiny).all()
    np.testing.assert_allclose(t.sum().item(), 1.0, rtol=1e-6)
    # Non-positive concentrations are clamped like torch's gammas.
    e = ember._sample_dirichlet(ember.tensor([1.0, 0.0, -1.0])).tolist()
    tt = torch._sample_dirichlet(torch.tensor([1.0, 0.0, -1.0])).tolist()
    assert e == tt


def _beta_grad_fd(x, a, total):
    b = total - a
    u = sp.betainc(a, b, x)
    h = 1e-5 * a
    return (sp.betaincinv(a + h, b, u) - sp.betaincinv(a - h, b, u)) / (2 * h) / (1 - x)


def test_dirichlet_grad_vs_inverse_cdf_and_torch():
    xs, als, tots = [], [], []
    for a in (0.1, 0.5, 1.0, 3.0, 20.0):
        for b in (0.2, 1.0, 4.0, 50.0):
            for u in (0.02, 0.3, 0.5, 0.8, 0.98):
                x = float(sp.betaincinv(a, b, u))
                if 1e-200 < x < 1 - 1e-9:
                    xs.append(x)
                    als.append(a)
                    tots.append(a + b)
    x, a, t = np.array(xs), np.array(als), np.array(tots)
    e = ember._dirichlet_grad(*(ember.tensor(v.tolist(), dtype=ember.float64)
                                for v in (x, a, t))).numpy()
    # The finite differences lose accuracy where the inverse CDF is steep (x near 1).
    ok = x < 1 - 1e-4
    np.testing.assert_allclose(e[ok], _beta_grad_fd(x, a, t)[ok], rtol=1e-4)
    tg = torch._dirichlet_grad(torch.tensor(x), torch.tensor(a), torch.tensor(t)).numpy()
    np.testing.assert_allclose(e, tg, rtol=3e-3)
    # torch's values at a few points (they agree with the exact derivative to 1e-9 here).
    np.testing.assert_allclose(
        ember._dirichlet_grad(ember.tensor([0.2, 0.3, 0.5]), ember.tensor([1.0, 2.0, 3.0]),
                              ember.tensor([6.0, 6.0, 6.0])).numpy(),
        [0.22684161, 0.18116777, 0.18634516], rtol=1e-6)


def test_dirichlet_grad_shapes_and_errors():
    r = ember._dirichlet_grad(ember.tensor([0.2]), ember.tensor([1.0, 2.0, 3.0]),
                              ember.tensor([6.0]))
    assert r.shape == (3,)
    for args in ((torch.tensor([0.2]).double(), torch.tensor([1.0]), torch.tensor([2.0])),
                 (torch.tensor([0.2]).long(),) * 3,
                 (torch.tensor([0.2]).bfloat16(),) * 3):
        with pytest.raises(RuntimeError):
            torch._dirichlet_grad(*args)
        with pytest.raises(RuntimeError):
            ember._dirichlet_grad(*(to_ember(v) for v in args))


def test_dirichlet_rsample_backward():
    alpha = ember.tensor([[0.7, 2.0, 5.0], [3.0, 3.0, 0.4]], dtype=ember.float64,
                         requires_grad=True)
    x = ember._sample_dirichlet(alpha, generator=gen(9))
    w = ember.tensor([[1.0, -1.0, 2.0], [0.5, 0.0, -3.0]], dtype=ember.float64)
    (x * w).sum().backward()
    xt, at, wt = (torch.from_numpy(v.detach().numpy()) for v in (x, alpha, w))
    total = at.sum(-1, True).expand_as(at)
    ref = torch._dirichlet_grad(xt, at, total) * (wt - (xt * wt).sum(-1, True))
    np.testing.assert_allclose(alpha.grad.numpy(), ref.numpy(), rtol=3e-3, atol=1e-12)
    # Against finite differences of the marginal inverse CDFs (each Beta marginal).
    xd, ad = x.detach().numpy(), alpha.detach().numpy()
    tot = ad.sum(-1, keepdims=True) + 0 * ad
    exact = _beta_grad_fd(xd, ad, tot) * (w.numpy() - (xd * w.numpy()).sum(-1, keepdims=True))
    np.testing.assert_allclose(alpha.grad.numpy(), exact, rtol=1e-4, atol=1e-12)


# ---- Poisson ----

@pytest.mark.parametrize("rate", [1e-3, 0.7, 4.0, 9.99, 10.0, 37.5, 2000.0, 1e7])
def test_poisson_moments_and_cdf(rate):
    n = 20000
    x = ember.poisson(full(rate, n), generator=gen(5)).numpy()
    assert (x == np.floor(x)).all() and (x >= 0).all()
    assert abs(x.mean() - rate) < 6 * math.sqrt(rate / n)
    se_var = math.sqrt((rate + 2 * rate * rate) / n)  # (mu4 - sigma^4) / n, Poisson
    assert abs(x.var() - rate) < 6 * se_var
    for q in (0.1, 0.5, 0.9):
        k = st.poisson(rate).ppf(q)
        p = st.poisson(rate).cdf(k)
        assert abs((x <= k).mean() - p) < 6 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_poisson_dtypes_and_edges():
    r = ember.tensor([0.0, 3.0, 50.0], dtype=ember.bfloat16)
    assert ember.poisson(r).dtype == ember.bfloat16
    z = ember.poisson(ember.zeros(5))
    assert z.tolist() == [0.0] * 5 and z.dtype == ember.float32
    assert ember.poisson(ember.empty(0)).shape == (0,)
    assert ember.poisson(ember.tensor(2.0)).dim() == 0
    big = ember.poisson(full(1e10, 100), generator=gen(1)).numpy()
    assert abs(big.mean() - 1e10) < 6 * math.sqrt(1e10 / 100)
    s = ember.poisson(full(5.0, 100).reshape(10, 10).t(), generator=gen(2))
    assert s.shape == (10, 10)


@pytest.mark.parametrize("bad", [[-1.0], [float("nan")], [1.0, -0.5]])
def test_poisson_bad_rates(bad):
    with pytest.raises(RuntimeError):
        torch.poisson(torch.tensor(bad))
    g = gen(3)
    state = g.get_state()
    with pytest.raises(RuntimeError, match="rate"):
        ember.poisson(ember.tensor(bad), generator=g)
    assert ember.equal(g.get_state(), state)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float16", "bool"])
def test_poisson_bad_dtypes(dtype):
    t = torch.ones(3, dtype=getattr(torch, dtype))
    with pytest.raises(RuntimeError):
        torch.poisson(t)
    with pytest.raises(RuntimeError, match="not implemented"):
        ember.poisson(ember.ones(3, dtype=getattr(ember, dtype)))


# ---- Binomial ----

@pytest.mark.parametrize("count,prob", [(1, 0.3), (10, 0.5), (20, 0.2), (100, 0.05),
                                        (60, 0.4), (1000, 0.9), (5, 0.97), (1e6, 0.3),
                                        (37, 0.999)])
def test_binomial_moments_and_cdf(count, prob):
    n = 20000
    x = ember.binomial(full(count, n), full(prob, n), generator=gen(6)).numpy()
    assert (x == np.floor(x)).all() and (x >= 0).all() and (x <= count).all()
    mean, var = count * prob, count * prob * (1 - prob)
    assert abs(x.mean() - mean) < 6 * math.sqrt(var / n)
    mu4 = var * (1 + 3 * (count - 2) * prob * (1 - prob))  # Binomial fourth central moment
    assert abs(x.var() - var) < 6 * math.sqrt(max(mu4 - var * var, 1e-12) / n)
    for q in (0.1, 0.5, 0.9):
        k = st.binom(count, prob).ppf(q)
        p = st.binom(count, prob).cdf(k)
        assert abs((x <= k).mean() - p) < 6 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_binomial_edges_as_torch():
    # torch 1.13 does not range-check prob: p >= 1 gives the count, p <= 0 and count <= 0 give 0.
    c = ember.tensor([10.0, 10.0, 0.0, -10.0, 10.0, 7.0])
    p = ember.tensor([1.5, -0.5, 0.5, 0.5, 0.0, 1.0])
    assert ember.binomial(c, p).tolist() == [10.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    assert ember.binomial(c, p).tolist() == torch.binomial(
        torch.tensor(c.tolist()), torch.tensor(p.tolist())).tolist()
    assert math.isnan(ember.binomial(ember.tensor([5.0]), ember.tensor([float("nan")])).item())
    assert math.isnan(ember.binomial(ember.tensor([float("nan")]), ember.tensor([0.5])).item())


def test_binomial_broadcast_dtypes_reproducible():
    c = ember.tensor([[10.0], [20.0]], dtype=ember.float64)
    p = ember.tensor([0.1, 0.5, 0.9], dtype=ember.float64)
    r = ember.binomial(c, p, generator=gen(1))
    assert r.shape == (2, 3) and r.dtype == ember.float64
    assert ember.equal(r, ember.binomial(c, p, generator=gen(1)))
    assert ember.binomial(ember.empty(0), ember.empty(0)).shape == (0,)
    for cd, pd in (("int64", "int64"), ("float32", "float64"), ("int64", "float32"),
                   ("bfloat16", "bfloat16"), ("float16", "float16")):
        ct = torch.ones(2, dtype=getattr(torch, cd))
        pt = torch.full((2,), 0.5).to(getattr(torch, pd))
        with pytest.raises(RuntimeError):
            torch.binomial(ct, pt)
        with pytest.raises(RuntimeError):
            ember.binomial(to_ember(ct), to_ember(pt))
    with pytest.raises(RuntimeError):
        ember.binomial(ember.ones(2), ember.ones(3))


# ---- dtype errors and argument types shared by the samplers ----

@pytest.mark.parametrize("op,dtype", [("_standard_gamma", "int64"), ("_standard_gamma", "bfloat16"),
                                      ("_standard_gamma", "float16"),
                                      ("_sample_dirichlet", "int64"),
                                      ("_sample_dirichlet", "bfloat16")])
def test_sampler_dtype_errors(op, dtype):
    with pytest.raises(RuntimeError):
        getattr(torch, op)(torch.ones(3, dtype=getattr(torch, dtype)))
    with pytest.raises(RuntimeError, match="not implemented"):
        getattr(ember, op)(ember.ones(3, dtype=getattr(ember, dtype)))


def test_grad_dtype_errors():
    for args in ((torch.ones(2), torch.ones(2).double()), (torch.ones(2).long(),) * 2,
                 (torch.ones(2).bfloat16(),) * 2):
        with pytest.raises(RuntimeError):
            torch._standard_gamma_grad(*args)
        with pytest.raises(RuntimeError):
            ember._standard_gamma_grad(*(to_ember(a) for a in args))


def test_argument_types():
    with pytest.raises(TypeError):
        ember.poisson([1.0, 2.0])
    with pytest.raises(TypeError):
        torch.poisson([1.0, 2.0])
    with pytest.raises(TypeError):
        ember._standard_gamma(ember.ones(2), generator=3)
    with pytest.raises(TypeError):
        torch._standard_gamma(torch.ones(2), generator=3)
    with pytest.raises(TypeError):
        ember.binomial(ember.ones(2), 0.5)
    with pytest.raises(TypeError):
        torch.binomial(torch.ones(2), 0.5)


# ---- vmap ----

def test_vmap_samplers_and_grads():
    from ember.func import vmap
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]], dtype=ember.float64)
    with pytest.raises(RuntimeError):
        vmap(ember._standard_gamma)(a)
    with pytest.raises(RuntimeError):
        vmap(ember.poisson, randomness="same")(a)
    for f in (ember._standard_gamma, ember.poisson, ember._sample_dirichlet):
        r = vmap(f, randomness="different")(a)
        assert r.shape == (3, 2) and (r.numpy() >= 0).all()
    d = vmap(ember._sample_dirichlet, randomness="different")(a)
    np.testing.assert_allclose(d.sum(1).numpy(), 1.0, rtol=1e-12)
    b = vmap(lambda p: ember.binomial(ember.full((2,), 10.0, dtype=ember.float64), p),
             randomness="different")(a / 5)
    assert b.shape == (3, 2)
    x = ember.tensor([[0.5, 1.0], [2.0, 3.0], [0.1, 0.2]], dtype=ember.float64)
    np.testing.assert_allclose(vmap(ember._standard_gamma_grad)(a, x).numpy(),
                               ember._standard_gamma_grad(a, x).numpy(), rtol=1e-14)
    xs = ember.tensor([[0.3, 0.7], [0.5, 0.5], [0.9, 0.1]], dtype=ember.float64)
    tot = a.sum(1, keepdim=True).expand(3, 2)
    np.testing.assert_allclose(vmap(ember._dirichlet_grad)(xs, a, tot).numpy(),
                               ember._dirichlet_grad(xs, a, tot).numpy(), rtol=1e-14)


# ---- the C++ distributions (_C._distributions) against torch.distributions ----

def _pairs(*arrays):
    return [(ember.tensor(a, dtype=ember.float64), torch.tensor(a, dtype=torch.float64))
            for a in arrays]


def _close(e, t, rtol=1e-10):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-12)


def test_cpp_distributions_match_torch():
    D, TD = ember._C._distributions, torch.distributions
    (loc, tloc), (scale, tscale), (v, tv) = _pairs([0.5, -1.0], [2.0, 0.3], [1.0, -0.7])
    cases = [(D.Normal(loc, scale), TD.Normal(tloc, tscale), v, tv)]
    (lo, tlo), (hi, thi), (u, tu) = _pairs([-1.0, 0.0], [2.0, 5.0], [0.5, 4.9])
    cases.append((D.Uniform(lo, hi), TD.Uniform(tlo, thi), u, tu))
    (p, tp), (b, tb) = _pairs([0.2, 0.9], [1.0, 0.0])
    cases.append((D.Bernoulli(p), TD.Bernoulli(tp), b, tb))
    cases.append((D.Bernoulli(logits=p), TD.Bernoulli(logits=tp), b, tb))
    (r, tr), (k, tk) = _pairs([3.0, 0.4], [2.0, 0.0])
    cases.append((D.Poisson(r), TD.Poisson(tr), k, tk))
    (c, tc), (x, tx) = _pairs([0.5, 3.0], [0.7, 2.5])
    cases.append((D.Gamma(c, r), TD.Gamma(tc, tr), x, tx))
    (al, tal), (s, ts) = _pairs([[0.5, 2.0, 3.0], [1.0, 1.0, 1.0]], [0.1, 0.3, 0.6])
    cases.append((D.Dirichlet(al), TD.Dirichlet(tal), s, ts))
    (pr, tpr) = _pairs([[0.1, 0.2, 0.7], [3.0, 1.0, 0.0]])[0]
    idx, tidx = ember.tensor([2, 1]), torch.tensor([2, 1])
    cases.append((D.Categorical(pr), TD.Categorical(tpr), idx, tidx))
    cases.append((D.Categorical(logits=pr), TD.Categorical(logits=tpr), idx, tidx))
    (mu, tmu), (cov, tcov), (y, ty) = _pairs([1.0, -1.0], [[2.0, 0.5], [0.5, 1.0]], [0.3, 0.2])
    cases.append((D.MultivariateNormal(mu, cov), TD.MultivariateNormal(tmu, tcov), y, ty))
    cases.append((D.MultivariateNormal(mu, precision_matrix=cov),
                  TD.MultivariateNormal(tmu, precision_matrix=tcov), y, ty))
    cases.append((D.MultivariateNormal(mu, scale_tril=ember.linalg.cholesky(cov)),
                  TD.MultivariateNormal(tmu, scale_tril=torch.linalg.cholesky(tcov)), y, ty))
    for e, t, ev, tv_ in cases:
        what = type(t).__name__
        assert tuple(e.batch_shape) == tuple(t.batch_shape), what
        assert tuple(e.event_shape) == tuple(t.event_shape), what
        _close(e.log_prob(ev), t.log_prob(tv_))
        if not isinstance(t, (TD.Poisson, TD.Categorical)):
            _close(e.mean, t.mean)
            _close(e.variance, t.variance)
            _close(e.stddev, t.stddev)
        if not isinstance(t, TD.Poisson):
            _close(e.entropy(), t.entropy())
        assert e.has_rsample == t.has_rsample, what
        smp = e.sample((4,), generator=gen(0))
        assert tuple(smp.shape) == (4,) + tuple(t.batch_shape) + tuple(t.event_shape), what


def test_cpp_distributions_validation_and_rsample():
    D = ember._C._distributions
    with pytest.raises(ValueError):
        D.Normal(ember.zeros(2), ember.tensor([1.0, -1.0]))
    with pytest.raises(ValueError):
        D.Categorical()
    with pytest.raises(ValueError):
        D.MultivariateNormal(ember.zeros(2))
    with pytest.raises(ValueError):
        D.Normal(ember.zeros(2), ember.ones(2)).log_prob(ember.zeros(3))
    with pytest.raises(NotImplementedError):
        D.Poisson(ember.ones(2)).rsample()
    loc = ember.zeros(3, dtype=ember.float64, requires_grad=True)
    d = D.Normal(loc, ember.ones(3, dtype=ember.float64))
    d.rsample((10,), generator=gen(1)).sum().backward()
    assert loc.grad.tolist() == [10.0] * 3
