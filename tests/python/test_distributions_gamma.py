"""ember.distributions families built on the gamma-function ops and the gamma, Dirichlet,
Poisson and binomial samplers: Gamma, Chi2, Beta, Dirichlet, StudentT, Poisson, Binomial,
Multinomial, NegativeBinomial, FisherSnedecor, Kumaraswamy, Weibull,
RelaxedOneHotCategorical.
"""

import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st
import torch
import torch.distributions as TD

import ember
import ember.distributions as ED
from test_distributions import (DTYPE_IDS, DTYPES, Lib, assert_close, check_against_torch,
                                check_sample_mean, expand_check, grad_check, pair,
                                sample_shapes_check, to_np)

HAS_LGAMMA = all(hasattr(ember, n) for n in ("lgamma", "digamma"))
HAS_SAMPLERS = all(hasattr(ember, n) or hasattr(ember._C, n)
                   for n in ("_standard_gamma", "_sample_dirichlet", "poisson", "binomial"))
needs_lgamma = pytest.mark.skipif(not HAS_LGAMMA, reason="ember.lgamma/digamma not built")
needs_samplers = pytest.mark.skipif(not (HAS_LGAMMA and HAS_SAMPLERS),
                                    reason="ember gamma/Dirichlet/Poisson/binomial samplers "
                                           "not built")
# torch's own Wishart sampler warns about singular float32 draws; not ember's concern here.
pytestmark = pytest.mark.filterwarnings("ignore:Singular sample detected")

_rng = np.random.default_rng(99)
CONC = _rng.uniform(0.3, 4.0, size=(3, 2))
RATE = _rng.uniform(0.5, 2.0, size=(2,))
CONC_K = _rng.uniform(0.3, 4.0, size=(3, 4))
PROBS = _rng.uniform(0.1, 0.9, size=(3,))
LOGITS = _rng.normal(size=(3, 4))
_B = _rng.normal(size=(2, 3, 3))
COV3 = _B @ np.swapaxes(_B, -1, -2) + np.eye(3)

# name -> (builder, has cdf, has icdf)
SPECS = {
    "Gamma": (lambda L: L.D.Gamma(L.P(CONC), L.P(RATE)), False, False),
    "Gamma_number": (lambda L: L.D.Gamma(2.5, 0.5), False, False),
    "Gamma_small_conc": (lambda L: L.D.Gamma(L.P([0.05, 0.5, 1.0]), L.P([1.0, 2.0, 3.0])),
                         False, False),
    "Chi2": (lambda L: L.D.Chi2(L.P(CONC * 2)), False, False),
    "Chi2_number": (lambda L: L.D.Chi2(3.0), False, False),
    "Beta": (lambda L: L.D.Beta(L.P(CONC), L.P(CONC[::-1].copy())), False, False),
    "Beta_number": (lambda L: L.D.Beta(0.5, 2.0), False, False),
    "Beta_broadcast": (lambda L: L.D.Beta(L.P(CONC[:, :1]), L.P(RATE)), False, False),
    "Dirichlet": (lambda L: L.D.Dirichlet(L.P(CONC_K)), False, False),
    "Dirichlet_1d": (lambda L: L.D.Dirichlet(L.P(CONC_K[0])), False, False),
    "Dirichlet_below_one": (lambda L: L.D.Dirichlet(L.P([[0.5, 0.3, 0.9], [2.0, 0.5, 0.5]])),
                            False, False),
    "StudentT": (lambda L: L.D.StudentT(L.P([0.8, 1.5, 2.5, 6.0]), L.P(0.5), L.P(2.0)),
                 False, False),
    "StudentT_number": (lambda L: L.D.StudentT(3.0), False, False),
    "Poisson": (lambda L: L.D.Poisson(L.P(CONC)), False, False),
    "Poisson_zero_rate": (lambda L: L.D.Poisson(L.P([0.0, 1.0, 3.0])), False, False),
    "Binomial": (lambda L: L.D.Binomial(L.P([10.0, 5.0, 1.0]), probs=L.P(PROBS)), False, False),
    "Binomial_logits": (lambda L: L.D.Binomial(7, logits=L.P(LOGITS)), False, False),
    "Binomial_int_tensor_count": (lambda L: L.D.Binomial(L.L([4, 4, 4]), probs=L.P(PROBS)),
                                  False, False),
    "Multinomial": (lambda L: L.D.Multinomial(10, probs=L.P(CONC_K)), False, False),
    "Multinomial_logits": (lambda L: L.D.Multinomial(3, logits=L.P(LOGITS)), False, False),
    "NegativeBinomial": (lambda L: L.D.NegativeBinomial(L.P([2.0, 5.5, 0.7]), probs=L.P(PROBS)),
                         False, False),
    "NegativeBinomial_logits": (lambda L: L.D.NegativeBinomial(3.0, logits=L.P(LOGITS)),
                                False, False),
    "FisherSnedecor": (lambda L: L.D.FisherSnedecor(L.P([1.5, 3.0, 8.0]),
                                                    L.P([1.5, 3.0, 9.0])), False, False),
    "Kumaraswamy": (lambda L: L.D.Kumaraswamy(L.P(CONC), L.P(CONC[::-1].copy())), False, False),
    "Weibull": (lambda L: L.D.Weibull(L.P(RATE), L.P(CONC)), False, False),
    "RelaxedOneHotCategorical": (lambda L: L.D.RelaxedOneHotCategorical(
        L.P(0.8), logits=L.P(LOGITS)), False, False),
    "RelaxedOneHotCategorical_probs": (lambda L: L.D.RelaxedOneHotCategorical(
        L.P(1.7), probs=L.P(np.exp(LOGITS))), False, False),
    "Wishart_cov": (lambda L: L.D.Wishart(L.P([4.0, 5.5]), covariance_matrix=L.P(COV3)),
                    False, False),
    "Wishart_prec": (lambda L: L.D.Wishart(L.P(6.0), precision_matrix=L.P(COV3[0])),
                     False, False),
    "Wishart_tril_number": (lambda L: L.D.Wishart(5.0, scale_tril=L.P(
        np.linalg.cholesky(COV3[1]))), False, False),
    "LKJCholesky": (lambda L: L.D.LKJCholesky(3, L.P([0.5, 1.0, 2.0])), False, False),
    "LKJCholesky_number": (lambda L: L.D.LKJCholesky(4, 1.5), False, False),
}

# Attributes torch 1.13 computes differently from the closed form ember uses.
SKIP_ATTRS = {"Kumaraswamy": {"mode"}}
# torch 1.13's Multinomial entropy takes lgamma(total_count + 1) in float32 whatever the
# dtype of the probabilities; ember uses their dtype.
RTOL64 = {"Multinomial": 1e-6, "Multinomial_logits": 1e-6}


@needs_lgamma
@pytest.mark.parametrize("edt,tdt", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_against_torch(name, edt, tdt):
    build, cdf, icdf = SPECS[name]
    attrs = [a for a in ("mean", "variance", "stddev", "mode", "entropy", "perplexity")
             if a not in SKIP_ATTRS.get(name, ())]
    rtol = 2e-3 if edt == ember.float32 else RTOL64.get(name)  # lgamma of float32 sums
    check_against_torch(build, edt, tdt, attrs=attrs, cdf=cdf, icdf=icdf, rtol=rtol,
                        atol=rtol)


@needs_samplers
@pytest.mark.parametrize("edt,tdt", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_sample_shapes(name, edt, tdt):
    e, t = pair(SPECS[name][0], edt, tdt)
    sample_shapes_check(e, t, edt)


@needs_lgamma
@pytest.mark.parametrize("name", sorted(SPECS))
def test_expand(name):
    e, t = pair(SPECS[name][0], ember.float64, torch.float64)
    if not HAS_SAMPLERS and name not in ("RelaxedOneHotCategorical",
                                         "RelaxedOneHotCategorical_probs", "Kumaraswamy",
                                         "Weibull"):
        pytest.skip("sampling needs the ember samplers")
    expand_check(SPECS[name][0], ember.float64, torch.float64, (2,) + tuple(t.batch_shape))


@needs_lgamma
@pytest.mark.parametrize("expand", [False, True])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_log_prob_entropy_gradients(name, expand):
    build = SPECS[name][0]
    if name.startswith("Wishart") and not hasattr(ember, "mvlgamma"):
        pytest.skip("ember.mvlgamma not built")
    t = build(Lib(TD, torch.float64))
    grad_check(build, (2,) + tuple(t.batch_shape) if expand else None)


@needs_lgamma
def test_kumaraswamy_mode_closed_form():
    a = np.array([2.0, 3.0, 0.5])
    b = np.array([5.0, 1.5, 2.0])
    m = to_np(ED.Kumaraswamy(ember.tensor(a), ember.tensor(b)).mode)
    expect = ((a[:2] - 1) / (a[:2] * b[:2] - 1)) ** (1 / a[:2])
    np.testing.assert_allclose(m[:2], expect, rtol=1e-12)
    assert np.isnan(m[2])
    # it is the maximiser of the density
    d = ED.Kumaraswamy(ember.tensor(a[:2]), ember.tensor(b[:2]))
    for dx in (-1e-3, 1e-3):
        assert np.all(to_np(d.log_prob(ember.tensor(m[:2]))) >
                      to_np(d.log_prob(ember.tensor(m[:2] + dx))))


@needs_lgamma
def test_gamma_cdf_against_scipy():
    if not hasattr(ember.special, "gammainc"):
        with pytest.raises(NotImplementedError, match="gammainc"):
            ED.Gamma(ember.tensor([1.0]), ember.tensor([1.0])).cdf(ember.tensor([1.0]))
        pytest.skip("ember.special.gammainc not built")
    c, r = np.array([0.5, 2.0, 7.0]), np.array([1.0, 0.5, 3.0])
    x = np.array([0.3, 4.0, 2.0])
    d = ED.Gamma(ember.tensor(c), ember.tensor(r))
    np.testing.assert_allclose(to_np(d.cdf(ember.tensor(x))), st.gamma.cdf(x, c, scale=1 / r),
                               rtol=1e-10)


@needs_lgamma
def test_log_prob_against_scipy():
    x = np.array([0.2, 1.0, 3.5])
    a, b = np.array([0.5, 2.0, 3.0]), np.array([1.5, 1.0, 0.7])
    d = ED.Gamma(ember.tensor(a), ember.tensor(b))
    np.testing.assert_allclose(to_np(d.log_prob(ember.tensor(x))),
                               st.gamma.logpdf(x, a, scale=1 / b), rtol=1e-12)
    u = np.array([0.1, 0.5, 0.9])
    d = ED.Beta(ember.tensor(a), ember.tensor(b))
    np.testing.assert_allclose(to_np(d.log_prob(ember.tensor(u))), st.beta.logpdf(u, a, b),
                               rtol=1e-12)
    k = np.array([0.0, 3.0, 7.0])
    d = ED.Poisson(ember.tensor(b))
    np.testing.assert_allclose(to_np(d.log_prob(ember.tensor(k))), st.poisson.logpmf(k, b),
                               rtol=1e-12)
    d = ED.Binomial(ember.tensor(np.array([7.0, 7.0, 7.0])),
                    ember.tensor(np.array([0.2, 0.5, 0.9])))
    np.testing.assert_allclose(to_np(d.log_prob(ember.tensor(k))),
                               st.binom.logpmf(k, 7, [0.2, 0.5, 0.9]), rtol=1e-11)
    d = ED.StudentT(ember.tensor(a), ember.tensor(b), ember.tensor(a))
    np.testing.assert_allclose(to_np(d.log_prob(ember.tensor(x))),
                               st.t.logpdf(x, a, loc=b, scale=a), rtol=1e-12)


@needs_lgamma
def test_binomial_enumerate_support_and_entropy():
    e, t = pair(SPECS["Binomial_logits"][0], ember.float64, torch.float64)
    for expand in (True, False):
        assert_close(e.enumerate_support(expand), t.enumerate_support(expand), ember.float64)
    inhomogeneous = ED.Binomial(ember.tensor([3.0, 4.0]), ember.tensor([0.5, 0.5]))
    with pytest.raises(NotImplementedError):
        inhomogeneous.enumerate_support()
    with pytest.raises(NotImplementedError):
        inhomogeneous.entropy()
    d = ED.Binomial(ember.tensor([6.0, 6.0]), ember.tensor([0.3, 0.8]))
    assert tuple(d.support.upper_bound.shape) == (2,)


# ---- sample statistics ----

MOMENT_CASES = ["Wishart_cov", "Gamma", "Gamma_small_conc", "Chi2", "Beta", "Dirichlet", "Poisson",
                "Poisson_zero_rate", "Binomial", "Binomial_logits", "Multinomial",
                "NegativeBinomial", "Kumaraswamy", "Weibull"]


# Parameters with a moderate fourth moment, so the variance check is reliable.
MOMENT_SPECS = {
    "Weibull": lambda L: L.D.Weibull(L.P([0.5, 1.0, 2.0]), L.P([1.0, 2.0, 4.0])),
    "Wishart_cov": lambda L: L.D.Wishart(L.P([8.0, 12.0]), covariance_matrix=L.P(COV3)),
}


@needs_samplers
@pytest.mark.parametrize("name", MOMENT_CASES)
def test_sample_moments(name):
    e = MOMENT_SPECS.get(name, SPECS[name][0])(Lib(ED, ember.float64))
    check_sample_mean(e, var=e.variance)


@needs_samplers
def test_lkj_sample_correlations():
    # Off-diagonal correlations of LKJ(d, eta) are 2 Beta(a, a) - 1, a = eta - 1 + d/2:
    # mean 0, variance 1 / (2 eta + d - 1).
    d, eta = 4, np.array([0.5, 2.0])
    dist = ED.LKJCholesky(d, ember.tensor(eta))
    ember.manual_seed(0)
    n = 20000
    L = to_np(dist.sample((n,)))
    assert L.shape == (n, 2, d, d)
    C = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(C, 0, -2, -1), 1.0, rtol=1e-5)
    assert np.all(np.triu(L, 1) == 0)
    r = C[..., 1, 0], C[..., 3, 2]
    var = 1 / (2 * eta + d - 1)
    for x in r:
        assert np.all(np.abs(x.mean(0)) <= 6 * x.std(0) / math.sqrt(n))
        dev2 = x ** 2
        assert np.all(np.abs(dev2.mean(0) - var) <= 6 * dev2.std(0) / math.sqrt(n))


@needs_lgamma
def test_wishart_number_df_with_batch():
    # torch 1.13 fails here (it views the 0-dim df as the batch); ember broadcasts it.
    cov = ember.tensor(COV3)
    d = ED.Wishart(5.0, covariance_matrix=cov)
    np.testing.assert_allclose(to_np(d.mean), 5.0 * COV3, rtol=1e-6)
    assert tuple(d.variance.shape) == (2, 3, 3)
    t = TD.Wishart(torch.tensor([5.0, 5.0], dtype=torch.float64),
                   covariance_matrix=torch.tensor(COV3))
    assert_close(d.variance, t.variance, ember.float64)
    assert_close(d.mode, t.mode, ember.float64)


@needs_samplers
def test_wishart_rsample_gradient_and_retry():
    L = ember.tensor(np.linalg.cholesky(COV3[0]), requires_grad=True)
    ember.manual_seed(0)
    s = ED.Wishart(ember.tensor(4.0, dtype=ember.float64), scale_tril=L).rsample((3,))
    assert tuple(s.shape) == (3, 3, 3)
    assert bool(ED.constraints.positive_definite.check(s).all())
    s.sum().backward()
    assert np.all(np.isfinite(to_np(L.grad)))
    with pytest.raises(ValueError):
        ED.Wishart(ember.tensor(1.5), covariance_matrix=ember.eye(3))
    with pytest.warns(UserWarning, match="Low df"):
        ED.Wishart(ember.tensor(2.5), covariance_matrix=ember.eye(3))
    with pytest.raises(ValueError):
        ED.Wishart(4.0)
    with pytest.raises(ValueError):
        ED.LKJCholesky(1)


@needs_samplers
def test_student_t_and_fisher_sample_moments():
    d = ED.StudentT(ember.tensor([5.0, 9.0]), ember.tensor([0.5, -1.0]), ember.tensor([2.0, 0.5]))
    check_sample_mean(d, n=40000)
    d = ED.FisherSnedecor(ember.tensor([3.0, 10.0]), ember.tensor([12.0, 20.0]))
    check_sample_mean(d, n=40000, var=d.variance)


@needs_samplers
def test_sample_distribution_kolmogorov_smirnov():
    # Whole-distribution checks: KS statistic below the 1e-6 critical value.
    n = 5000
    crit = math.sqrt(-0.5 * math.log(1e-6 / 2) / n)
    ember.manual_seed(0)
    for a in (0.1, 0.7, 3.0):
        s = to_np(ED.Gamma(ember.tensor(a, dtype=ember.float64), 1.0).sample((n,)))
        assert st.kstest(s, st.gamma(a).cdf).statistic < crit, a
    s = to_np(ED.Beta(ember.tensor(0.4, dtype=ember.float64),
                      ember.tensor(2.5, dtype=ember.float64)).sample((n,)))
    assert st.kstest(s, st.beta(0.4, 2.5).cdf).statistic < crit
    s = to_np(ED.StudentT(ember.tensor(2.5, dtype=ember.float64)).sample((n,)))
    assert st.kstest(s, st.t(2.5).cdf).statistic < crit


@needs_samplers
def test_discrete_samples_are_integers_in_support():
    ember.manual_seed(0)
    s = to_np(ED.Poisson(ember.tensor([0.0, 0.5, 30.0])).sample((1000,)))
    assert np.all(s == np.round(s)) and np.all(s >= 0) and np.all(s[:, 0] == 0)
    s = to_np(ED.Binomial(ember.tensor([0.0, 3.0, 100.0]),
                          ember.tensor([0.5, 1.0, 0.3])).sample((1000,)))
    assert np.all(s == np.round(s)) and np.all(s[:, 0] == 0) and np.all(s[:, 1] == 3)
    assert np.all((s[:, 2] >= 0) & (s[:, 2] <= 100))
    m = ED.Multinomial(7, probs=ember.tensor([[0.2, 0.0, 0.8], [1.0, 1.0, 1.0]]))
    s = to_np(m.sample((500,)))
    assert s.shape == (500, 2, 3)
    assert np.all(s.sum(-1) == 7) and np.all(s[:, 0, 1] == 0)


@needs_samplers
def test_dirichlet_samples_on_simplex():
    ember.manual_seed(0)
    for dt in (ember.float32, ember.float64):
        s = ED.Dirichlet(ember.tensor([[0.01, 0.05, 0.1], [5.0, 1.0, 0.5]], dtype=dt)).sample(
            (2000,))
        assert s.dtype == dt
        s = to_np(s)
        assert np.all(s >= 0) and np.all(np.isfinite(s))
        np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5)


# ---- reparameterised gradients (implicit reparameterisation) ----

@needs_samplers
def test_gamma_rsample_gradient_implicit():
    conc = ember.tensor([0.2, 1.0, 4.5], dtype=ember.float64, requires_grad=True)
    rate = ember.tensor([2.0, 0.5, 1.0], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    x = ED.Gamma(conc, rate).rsample((4,))
    x.sum().backward()
    xs = to_np(x) * to_np(rate)  # standard gamma draws
    a = to_np(conc)
    # d x / d alpha at a fixed cdf value: -(dF/dalpha) / f, for the standard gamma
    h = 1e-6
    dF = (sp.gammainc(a + h, xs) - sp.gammainc(a - h, xs)) / (2 * h)
    dxs = -dF / st.gamma.pdf(xs, a)
    np.testing.assert_allclose(to_np(conc.grad), (dxs / to_np(rate)).sum(0), rtol=1e-4)
    np.testing.assert_allclose(to_np(rate.grad), (-xs / to_np(rate) ** 2).sum(0), rtol=1e-9)
    # torch's own gradient formula on the same draws
    tg = torch._standard_gamma_grad(torch.tensor(np.broadcast_to(a, xs.shape).copy()),
                                    torch.tensor(xs))
    np.testing.assert_allclose((tg.numpy() / to_np(rate)).sum(0), to_np(conc.grad), rtol=1e-4)


@needs_samplers
def test_dirichlet_and_beta_rsample_gradient_against_torch():
    alpha = np.array([[0.5, 1.5, 3.0], [2.0, 0.3, 1.0]])
    a = ember.tensor(alpha, requires_grad=True)
    ember.manual_seed(0)
    x = ED.Dirichlet(a).rsample((3,))
    w = np.random.default_rng(0).normal(size=tuple(x.shape))
    (x * ember.tensor(w)).sum().backward()
    # torch's Dirichlet reparameterisation on the same draws: the implicit gradient
    # _dirichlet_grad(x, alpha, total) times the vjp through the simplex constraint.
    xt = torch.tensor(to_np(x))
    at = torch.tensor(np.broadcast_to(alpha, xt.shape).copy())
    grad = torch._dirichlet_grad(xt, at, at.sum(-1, True).expand_as(at))
    wt = torch.tensor(w)
    expected = (grad * (wt - (xt * wt).sum(-1, True))).sum(0).numpy()
    # the kernels approximate the Beta-cdf derivative independently: agree to ~1e-3
    np.testing.assert_allclose(to_np(a.grad), expected, rtol=5e-3, atol=1e-5)
    # Beta(c1, c0) is the first coordinate of Dirichlet([c1, c0]); also after expand
    c1 = ember.tensor([0.7, 2.0], requires_grad=True)
    c0 = ember.tensor([1.5, 0.4], requires_grad=True)
    ember.manual_seed(1)
    b = ED.Beta(c1, c0).expand((3, 2)).rsample()
    b.sum().backward()
    ember.manual_seed(1)
    c1d = c1.detach().clone().requires_grad_()
    c0d = c0.detach().clone().requires_grad_()
    d = ED.Dirichlet(ember.stack([c1d, c0d], -1).expand((3, 2, 2))).rsample()
    d.select(-1, 0).sum().backward()
    np.testing.assert_allclose(to_np(b), to_np(d.select(-1, 0)))
    np.testing.assert_allclose(to_np(c1.grad), to_np(c1d.grad), rtol=1e-12)
    np.testing.assert_allclose(to_np(c0.grad), to_np(c0d.grad), rtol=1e-12)


def _per_sample_grad_mean(make, params, f, n, seed=0):
    """Mean and standard error over n draws of d f(x) / d params, one parameter copy per
    draw (so each draw's gradient is separate).
    """
    leaves = [ember.tensor(np.broadcast_to(p, (n,) + p.shape).copy(), requires_grad=True)
              for p in params]
    ember.manual_seed(seed)
    x = make(*leaves).rsample()
    grads = ember.autograd.grad(f(x).sum(), leaves)
    out = []
    for g in grads:
        g = to_np(g)
        out.append((g.mean(0), g.std(0) / math.sqrt(n)))
    return out


@needs_samplers
def test_rsample_gradients_are_unbiased():
    # d/dtheta E[f(X)] equals E[d f(X) / dtheta] for reparameterised samples: checked against
    # the closed-form derivative of the mean, within 6 standard errors.
    n = 20000
    a, r = np.array([0.3, 1.0, 4.0]), np.array([2.0, 0.5, 1.0])
    (ga, sa), (gr, sr) = _per_sample_grad_mean(lambda a, r: ED.Gamma(a, r), [a, r],
                                               lambda x: x, n)
    assert np.all(np.abs(ga - 1 / r) <= 6 * sa)
    assert np.all(np.abs(gr + a / r ** 2) <= 6 * sr)
    # E[X^2] = a (a + 1) / r^2
    (ga, sa), _ = _per_sample_grad_mean(lambda a, r: ED.Gamma(a, r), [a, r],
                                        lambda x: x ** 2, n, seed=1)
    assert np.all(np.abs(ga - (2 * a + 1) / r ** 2) <= 6 * sa)
    # Dirichlet: E[X_0] = alpha_0 / sum(alpha)
    al = np.array([0.5, 1.5, 3.0])
    ((g, s),) = _per_sample_grad_mean(lambda c: ED.Dirichlet(c), [al], lambda x: x[..., 0], n)
    tot = al.sum()
    expect = np.array([1 / tot - al[0] / tot ** 2, -al[0] / tot ** 2, -al[0] / tot ** 2])
    assert np.all(np.abs(g - expect) <= 6 * s)
    # Beta: E[X] = a / (a + b)
    b1, b0 = np.array([0.7, 3.0]), np.array([2.0, 0.4])
    (g1, s1), (g0, s0) = _per_sample_grad_mean(lambda p, q: ED.Beta(p, q), [b1, b0],
                                               lambda x: x, n)
    assert np.all(np.abs(g1 - b0 / (b1 + b0) ** 2) <= 6 * s1)
    assert np.all(np.abs(g0 + b1 / (b1 + b0) ** 2) <= 6 * s0)
    # Chi2: E[X] = df
    ((g, s),) = _per_sample_grad_mean(lambda d: ED.Chi2(d), [np.array([1.0, 5.0])],
                                      lambda x: x, n)
    assert np.all(np.abs(g - 1) <= 6 * s)


@needs_samplers
def test_student_t_and_chi2_rsample_have_grad():
    df = ember.tensor([3.0, 7.0], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    ED.StudentT(df).rsample((5,)).sum().backward()
    assert df.grad is not None and np.all(np.isfinite(to_np(df.grad)))
    df.grad = None
    ED.Chi2(df).rsample((5,)).sum().backward()
    assert np.all(to_np(df.grad) != 0)


@needs_lgamma
def test_log_prob_and_entropy_gradients_match_torch():
    cases = [("Gamma", (CONC[0], RATE), np.array([0.5, 2.0])),
             ("Beta", (CONC[0], RATE), np.array([0.3, 0.6])),
             ("StudentT", (CONC[0] + 1, RATE, RATE), np.array([0.3, -2.0])),
             ("Poisson", (RATE,), np.array([0.0, 3.0])),
             ("Dirichlet", (CONC_K[0],), np.array([0.1, 0.2, 0.3, 0.4])),
             ("Kumaraswamy", (CONC[0], RATE), np.array([0.3, 0.6]))]
    for cls, args, x in cases:
        ea = [ember.tensor(a, requires_grad=True) for a in args]
        ta = [torch.tensor(a, requires_grad=True) for a in args]
        ed, td = getattr(ED, cls)(*ea), getattr(TD, cls)(*ta)
        el, tl = ed.log_prob(ember.tensor(x)).sum(), td.log_prob(torch.tensor(x)).sum()
        if cls != "Poisson":  # no entropy in torch 1.13
            el, tl = el + ed.entropy().sum(), tl + td.entropy().sum()
        el.backward()
        tl.backward()
        for e, t in zip(ea, ta):
            assert_close(e.grad, t.grad, ember.float64, cls, rtol=1e-8, atol=1e-10)


# ---- validation ----

@needs_lgamma
@pytest.mark.parametrize("make", [
    lambda: ED.Gamma(ember.tensor([1.0, -1.0]), 1.0),
    lambda: ED.Gamma(1.0, 0.0),
    lambda: ED.Chi2(ember.tensor([0.0])),
    lambda: ED.Beta(ember.tensor([1.0]), ember.tensor([-0.5])),
    lambda: ED.Dirichlet(ember.tensor([1.0, 0.0])),
    lambda: ED.Dirichlet(ember.tensor(1.0)),
    lambda: ED.StudentT(ember.tensor([-1.0])),
    lambda: ED.Poisson(ember.tensor([-0.1])),
    lambda: ED.Binomial(ember.tensor([2.5]), probs=ember.tensor([0.5])),
    lambda: ED.Binomial(ember.tensor([-1.0]), probs=ember.tensor([0.5])),
    lambda: ED.Binomial(3, probs=ember.tensor([1.5])),
    lambda: ED.Binomial(3),
    lambda: ED.Multinomial(3, probs=ember.tensor([0.5, -0.5])),
    lambda: ED.NegativeBinomial(ember.tensor([2.0]), probs=ember.tensor([1.0])),
    lambda: ED.FisherSnedecor(ember.tensor([1.0]), ember.tensor([0.0])),
    lambda: ED.Kumaraswamy(ember.tensor([1.0]), ember.tensor([-1.0])),
    lambda: ED.Weibull(ember.tensor([1.0]), ember.tensor([0.0])),
])
def test_invalid_parameters_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


@needs_lgamma
def test_multinomial_requires_int_total_count():
    with pytest.raises(NotImplementedError):
        ED.Multinomial(ember.tensor(3), probs=ember.ones(3))
    s = ED.Multinomial(0, probs=ember.ones(2, 3)).sample((4,))
    assert tuple(s.shape) == (4, 2, 3) and not bool(s.any())


@needs_lgamma
@pytest.mark.parametrize("make,value", [
    (lambda: ED.Gamma(1.0, 1.0), ember.tensor(-1.0)),
    (lambda: ED.Beta(1.0, 1.0), ember.tensor(1.5)),
    (lambda: ED.Dirichlet(ember.ones(3)), ember.tensor([0.5, 0.6, 0.2])),
    (lambda: ED.Dirichlet(ember.ones(3)), ember.tensor([0.5, 0.5])),
    (lambda: ED.Poisson(ember.tensor(2.0)), ember.tensor(1.5)),
    (lambda: ED.Binomial(ember.tensor(3.0), ember.tensor(0.5)), ember.tensor(4.0)),
    (lambda: ED.Multinomial(3, probs=ember.ones(3)), ember.tensor([2.0, 2.0, 0.0])),
    (lambda: ED.Multinomial(3, probs=ember.ones(3)), ember.tensor([-1.0, 2.0, 0.0])),
    (lambda: ED.NegativeBinomial(2.0, probs=ember.tensor(0.5)), ember.tensor(-1.0)),
    (lambda: ED.Chi2(ember.tensor(2.0)), ember.tensor(-0.1)),
])
def test_log_prob_outside_support_raises_value_error(make, value):
    d = make()
    with pytest.raises(ValueError):
        d.log_prob(value)


@needs_lgamma
def test_multinomial_log_prob_zero_probability_category():
    p = np.array([0.0, 0.5, 0.5])
    e = ED.Multinomial(4, probs=ember.tensor(p))
    t = TD.Multinomial(4, probs=torch.tensor(p))
    v = np.array([[0.0, 1.0, 3.0], [1.0, 1.0, 2.0]])
    assert_close(e.log_prob(ember.tensor(v)), t.log_prob(torch.tensor(v)), ember.float64)


@needs_lgamma
def test_relaxed_one_hot_categorical_on_simplex():
    d = ED.RelaxedOneHotCategorical(ember.tensor(0.5), logits=ember.tensor(LOGITS))
    ember.manual_seed(0)
    s = to_np(d.rsample((100,)))
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5)
    assert np.all(s > 0)


@needs_lgamma
def test_beta_parameters_after_expand_carry_exact_gradients():
    # concentration1/0 are slices of a stride-0 (expanded) parameter
    c = np.array([0.7, 2.0])
    grads = []
    for lib, D in ((ember, ED), (torch, TD)):
        c1 = lib.tensor(c, requires_grad=True)
        c0 = lib.tensor(c[::-1].copy(), requires_grad=True)
        d = D.Beta(c1, c0).expand((3, 2))
        q = D.Beta(lib.tensor(c0.detach().numpy()), lib.tensor(c1.detach().numpy()))
        (d.mean.sum() + d.variance.sum() + D.kl_divergence(d, q).sum()).backward()
        grads.append((to_np(c1.grad), to_np(c0.grad)))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-8)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-8)
