"""ember.distributions against torch.distributions (1.13): densities, moments, shapes,
sampling statistics, reparameterised gradients, argument validation.

This file holds the families that need no gamma-function ops and the shared harness;
test_distributions_gamma.py, _transforms.py and _kl.py import the harness from here.
"""

import math
import warnings

import numpy as np
import pytest
import torch
import torch.distributions as TD
from torch.distributions import constraints as TC

import ember
import ember.distributions as ED

DTYPES = [(ember.float32, torch.float32), (ember.float64, torch.float64)]
DTYPE_IDS = ["float32", "float64"]


# ---- harness ----

def to_np(x):
    """A NumPy copy of an ember or torch tensor (or a number)."""
    if isinstance(x, (int, float)):
        return np.asarray(x)
    x = x.detach()
    if isinstance(x, torch.Tensor):
        return x.numpy()
    return np.asarray(x.numpy())


def tol(dtype):
    """(rtol, atol) for comparing ember with torch in ``dtype``."""
    if dtype in (ember.float32, torch.float32):
        return 2e-4, 2e-5
    return 1e-9, 1e-11


def assert_close(e, t, dtype, what="", rtol=None, atol=None):
    en, tn = to_np(e), to_np(t)
    if np.float32 in (en.dtype, tn.dtype):  # parameters given as numbers: default dtype
        dtype = ember.float32
    r, a = tol(dtype)
    assert en.shape == tn.shape, f"{what}: shape {en.shape} vs {tn.shape}"
    np.testing.assert_allclose(en, tn, rtol=rtol or r, atol=atol or a, equal_nan=True,
                               err_msg=what)


class Lib:
    """Builds parameters for one library: ``P(array)`` makes a tensor of the chosen dtype
    (a leaf requiring grad when ``grad``; the leaves are kept in ``leaves``).
    """

    def __init__(self, mod, dtype, grad=False):
        self.D = mod
        self.dtype = dtype
        self.torch = mod is TD
        self.tensor_mod = torch if self.torch else ember
        self.grad = grad
        self.leaves = []

    def P(self, a, dtype=None):
        t = self.tensor_mod.tensor(np.asarray(a), dtype=dtype or self.dtype)
        if self.grad:
            t.requires_grad_()
            self.leaves.append(t)
        return t

    def L(self, a):
        return self.tensor_mod.tensor(np.asarray(a), dtype=self.tensor_mod.int64)


def pair(build, edt, tdt):
    """The (ember, torch) distributions that ``build(lib)`` makes."""
    return build(Lib(ED, edt)), build(Lib(TD, tdt))


def torch_values(t_dist, shape=(5,), seed=0):
    """Support points drawn from the torch distribution (fixed seed), as float64 NumPy."""
    torch.manual_seed(seed)
    return to_np(t_dist.sample(shape))


def as_ember(a, dtype):
    return ember.tensor(np.asarray(a), dtype=dtype)


def as_torch(a, dtype):
    return torch.tensor(np.asarray(a), dtype=dtype)


def _attr(d, name):
    try:
        v = getattr(d, name)
        return v() if name in ("entropy", "perplexity") else v
    except NotImplementedError:
        return NotImplemented


def check_against_torch(build, edt, tdt, attrs=("mean", "variance", "stddev", "mode",
                                                "entropy", "perplexity"),
                        cdf=False, icdf=False, rtol=None, atol=None):
    """Compares shapes, log_prob at torch samples, the listed attributes and cdf/icdf."""
    e, t = pair(build, edt, tdt)
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    assert e.has_rsample == t.has_rsample
    assert e.has_enumerate_support == t.has_enumerate_support
    x = torch_values(t)
    xt = as_torch(x, t.sample().dtype)
    xe = ember.tensor(x, dtype=e.sample().dtype)
    assert_close(e.log_prob(xe), t.log_prob(xt), edt, "log_prob", rtol, atol)
    for name in attrs:
        tv = _attr(t, name)
        ev = _attr(e, name)
        if tv is NotImplemented:
            assert ev is NotImplemented, f"{name}: torch raises NotImplementedError"
            continue
        assert_close(ev, tv, edt, name, rtol, atol)
    if cdf:
        assert_close(e.cdf(xe), t.cdf(xt), edt, "cdf", rtol, atol)
    if icdf:
        q = np.linspace(0.05, 0.95, 7).reshape((7,) + (1,) * len(t.batch_shape))
        assert_close(e.icdf(as_ember(q, edt)), t.icdf(as_torch(q, tdt)), edt, "icdf", rtol, atol)
    return e, t


def sample_shapes_check(e, t, edt):
    """sample/rsample shapes and dtypes match torch for several sample shapes."""
    for shape in [(), (2,), (2, 3)]:
        s = e.sample(shape)
        ts = t.sample(shape)
        assert tuple(s.shape) == tuple(ts.shape), (shape, s.shape, ts.shape)
        assert str(s.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
        assert not s.requires_grad
        if t.has_rsample:
            r = e.rsample(shape)
            assert tuple(r.shape) == tuple(t.rsample(shape).shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tuple(e.sample_n(4).shape) == tuple(t.sample((4,)).shape)


def expand_check(build, edt, tdt, new_batch):
    """expand() gives the same batch/event shapes and log_probs as torch's."""
    e, t = pair(build, edt, tdt)
    ee, te = e.expand(new_batch), t.expand(new_batch)
    assert type(ee) is type(e)
    assert tuple(ee.batch_shape) == tuple(te.batch_shape) == tuple(new_batch)
    assert tuple(ee.event_shape) == tuple(te.event_shape)
    x = torch_values(te, (2,))
    assert_close(ee.log_prob(ember.tensor(x, dtype=e.sample().dtype)),
                 te.log_prob(torch.tensor(x, dtype=t.sample().dtype)), edt, "expanded log_prob")
    assert tuple(ee.sample((3,)).shape) == (3,) + tuple(new_batch) + tuple(te.event_shape)


def check_sample_mean(d, n=20000, seed=0, sigmas=6.0, mean=None, var=None):
    """The sample mean (and variance, when ``var``) agree with the true moments within
    ``sigmas`` standard errors; the errors are estimated from the samples themselves.
    """
    ember.manual_seed(seed)
    s = to_np(d.sample((n,))).astype(np.float64)
    mu = to_np(d.mean if mean is None else mean).astype(np.float64)
    se = s.std(0) / math.sqrt(n)
    assert np.all(np.abs(s.mean(0) - mu) <= sigmas * se + 1e-12), (s.mean(0), mu, se)
    if var is not None:
        v = to_np(var).astype(np.float64)
        dev2 = (s - mu) ** 2
        se_v = dev2.std(0) / math.sqrt(n)
        assert np.all(np.abs(dev2.mean(0) - v) <= sigmas * se_v + 1e-12), (dev2.mean(0), v)


def fd_rsample_grad(make, params, seed=0, shape=(3,), eps=1e-6):
    """Autograd of ``sum(w * rsample)`` w.r.t. float64 NumPy ``params`` versus central
    differences, drawing with the same seed (so the noise is fixed).
    """
    rng = np.random.default_rng(1)
    leaves = [ember.tensor(p, dtype=ember.float64, requires_grad=True) for p in params]
    ember.manual_seed(seed)
    x = make(*leaves).rsample(shape)
    w = ember.tensor(rng.normal(size=tuple(x.shape)), dtype=ember.float64)
    grads = ember.autograd.grad((x * w).sum(), leaves)
    wn = to_np(w)
    for i, p in enumerate(params):
        p = np.asarray(p, dtype=np.float64)
        num = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            vals = []
            for sgn in (1, -1):
                q = p.copy()
                q[idx] += sgn * eps
                args = [ember.tensor(a, dtype=ember.float64) for a in params]
                args[i] = ember.tensor(q, dtype=ember.float64)
                ember.manual_seed(seed)
                vals.append(float((to_np(make(*args).rsample(shape)) * wn).sum()))
            num[idx] = (vals[0] - vals[1]) / (2 * eps)
        np.testing.assert_allclose(to_np(grads[i]), num, rtol=1e-5, atol=1e-6,
                                   err_msg=f"grad of parameter {i}")


# ---- parameters shared by the specs ----

_rng = np.random.default_rng(1234)
LOC = _rng.normal(size=(3, 2))
SCALE = _rng.uniform(0.5, 2.0, size=(2,))
LOC_COL = _rng.normal(size=(3, 1))
SCALE_ROW = _rng.uniform(0.5, 2.0, size=(4,))
RATE = _rng.uniform(0.5, 2.0, size=(3,))
PROBS = _rng.uniform(0.1, 0.9, size=(4,))
PROBS_2D = _rng.uniform(0.1, 0.9, size=(3, 4))
LOGITS_2D = _rng.normal(size=(3, 4))
LOW = _rng.normal(size=(3,))
HIGH = LOW + _rng.uniform(0.5, 3.0, size=(3,))
_A = _rng.normal(size=(2, 3, 3))
COV = _A @ np.swapaxes(_A, -1, -2) + np.eye(3)
MVN_LOC = _rng.normal(size=(4, 1, 3))
W = _rng.normal(size=(2, 3, 2))
DIAG = _rng.uniform(0.5, 1.5, size=(3,))

# name -> (builder, has cdf, has icdf)
SPECS = {
    "Normal": (lambda L: L.D.Normal(L.P(LOC), L.P(SCALE)), True, True),
    "Normal_broadcast": (lambda L: L.D.Normal(L.P(LOC_COL), L.P(SCALE_ROW)), True, True),
    "Normal_number": (lambda L: L.D.Normal(0.5, 2.0), True, True),
    "Normal_0dim": (lambda L: L.D.Normal(L.P(0.3), L.P(1.5)), True, True),
    "Normal_mixed": (lambda L: L.D.Normal(L.P(LOC), 2.0), True, True),
    "Laplace": (lambda L: L.D.Laplace(L.P(LOC), L.P(SCALE)), True, True),
    "Laplace_number": (lambda L: L.D.Laplace(-1.0, 0.5), True, True),
    "Cauchy": (lambda L: L.D.Cauchy(L.P(LOC), L.P(SCALE)), True, True),
    "Exponential": (lambda L: L.D.Exponential(L.P(RATE)), True, True),
    "Exponential_number": (lambda L: L.D.Exponential(1.5), True, True),
    "Uniform": (lambda L: L.D.Uniform(L.P(LOW), L.P(HIGH)), True, True),
    "Uniform_number": (lambda L: L.D.Uniform(-1.0, 2.0), True, True),
    "Bernoulli_probs": (lambda L: L.D.Bernoulli(probs=L.P(PROBS)), False, False),
    "Bernoulli_logits": (lambda L: L.D.Bernoulli(logits=L.P(LOGITS_2D)), False, False),
    "Bernoulli_number": (lambda L: L.D.Bernoulli(0.3), False, False),
    "Geometric_probs": (lambda L: L.D.Geometric(probs=L.P(PROBS)), False, False),
    "Geometric_logits": (lambda L: L.D.Geometric(logits=L.P(LOGITS_2D)), False, False),
    "Categorical_probs": (lambda L: L.D.Categorical(probs=L.P(PROBS_2D)), False, False),
    "Categorical_logits": (lambda L: L.D.Categorical(logits=L.P(LOGITS_2D)), False, False),
    "Categorical_1d": (lambda L: L.D.Categorical(probs=L.P(PROBS)), False, False),
    "OneHotCategorical": (lambda L: L.D.OneHotCategorical(probs=L.P(PROBS_2D)), False, False),
    "OneHotCategorical_logits": (lambda L: L.D.OneHotCategorical(logits=L.P(LOGITS_2D)),
                                 False, False),
    "HalfNormal": (lambda L: L.D.HalfNormal(L.P(RATE)), True, True),
    "HalfCauchy": (lambda L: L.D.HalfCauchy(L.P(RATE)), True, True),
    "Gumbel": (lambda L: L.D.Gumbel(L.P(LOW), L.P(RATE)), True, True),
    "Gumbel_number": (lambda L: L.D.Gumbel(0.5, 2.0), True, True),
    "LogNormal": (lambda L: L.D.LogNormal(L.P(LOW), L.P(RATE)), True, True),
    "Pareto": (lambda L: L.D.Pareto(L.P(RATE), L.P(RATE + 2.0)), True, True),
    "ContinuousBernoulli": (lambda L: L.D.ContinuousBernoulli(
        probs=L.P([0.1, 0.3, 0.4995, 0.5, 0.5005, 0.8])), True, True),
    "ContinuousBernoulli_logits": (lambda L: L.D.ContinuousBernoulli(logits=L.P(LOGITS_2D)),
                                   True, True),
    "LogisticNormal": (lambda L: L.D.LogisticNormal(L.P(LOC), L.P(SCALE)), False, False),
    "MVN_cov": (lambda L: L.D.MultivariateNormal(L.P(MVN_LOC), covariance_matrix=L.P(COV)),
                False, False),
    "MVN_prec": (lambda L: L.D.MultivariateNormal(L.P(MVN_LOC), precision_matrix=L.P(COV)),
                 False, False),
    "MVN_tril": (lambda L: L.D.MultivariateNormal(L.P(MVN_LOC[0, 0]),
                                                   scale_tril=L.P(np.linalg.cholesky(COV))),
                 False, False),
    "LowRankMVN": (lambda L: L.D.LowRankMultivariateNormal(L.P(MVN_LOC), L.P(W), L.P(DIAG)),
                   False, False),
    "Independent_Normal": (lambda L: L.D.Independent(L.D.Normal(L.P(LOC), L.P(SCALE)), 1),
                           False, False),
    "Independent_Bernoulli2": (lambda L: L.D.Independent(
        L.D.Bernoulli(probs=L.P(PROBS_2D)), 2), False, False),
    "Mixture_Normal": (lambda L: L.D.MixtureSameFamily(
        L.D.Categorical(logits=L.P(LOGITS_2D)), L.D.Normal(L.P(LOGITS_2D), L.P(PROBS_2D + 0.5))),
        True, False),
    "Mixture_MVNdiag": (lambda L: L.D.MixtureSameFamily(
        L.D.Categorical(probs=L.P(PROBS)),
        L.D.Independent(L.D.Normal(L.P(LOGITS_2D.T[:, :2]),
                                   L.P(PROBS_2D.T[:, :2] + 0.5)), 1)), False, False),
    "RelaxedBernoulli": (lambda L: L.D.RelaxedBernoulli(L.P(0.7), probs=L.P(PROBS)),
                         False, False),
    "RelaxedBernoulli_logits": (lambda L: L.D.RelaxedBernoulli(L.P(1.3), logits=L.P(LOGITS_2D)),
                                False, False),
    "TransformedAffineExp": (lambda L: L.D.TransformedDistribution(
        L.D.Normal(L.P(LOW), L.P(RATE)),
        [L.D.AffineTransform(L.P(LOW), -L.P(RATE)), L.D.ExpTransform()]), True, True),
    "VonMises": (lambda L: L.D.VonMises(L.P(LOW), L.P([0.05, 1.0, 6.0])), False, False),
}


@pytest.mark.parametrize("edt,tdt", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_against_torch(name, edt, tdt):
    build, cdf, icdf = SPECS[name]
    e, t = check_against_torch(build, edt, tdt, cdf=cdf, icdf=icdf)
    sample_shapes_check(e, t, edt)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_expand(name):
    build = SPECS[name][0]
    e, t = pair(build, ember.float64, torch.float64)
    expand_check(build, ember.float64, torch.float64, (5,) + tuple(t.batch_shape))
    expand_check(build, ember.float64, torch.float64, (2, 1) + tuple(t.batch_shape))


def grad_check(build, new_batch=None):
    """Gradients of log_prob (+ entropy where torch has it) w.r.t. every tensor parameter,
    optionally after expand(), match torch's.
    """
    le, lt = Lib(ED, ember.float64, grad=True), Lib(TD, torch.float64, grad=True)
    e, t = build(le), build(lt)
    if new_batch is not None:
        e, t = e.expand(new_batch), t.expand(new_batch)
    x = torch_values(t, (2,))
    el = e.log_prob(ember.tensor(x, dtype=e.sample().dtype)).sum()
    tl = t.log_prob(torch.tensor(x, dtype=t.sample().dtype)).sum()
    try:
        te = t.entropy().sum()
    except (NotImplementedError, AttributeError):  # torch 1.13's expanded Multinomial
        te = None
    if te is not None:
        tl = tl + te
        el = el + e.entropy().sum()
    if not lt.leaves:
        return
    tg = torch.autograd.grad(tl, lt.leaves, allow_unused=True)
    eg = ember.autograd.grad(el, le.leaves, allow_unused=True)
    for i, (a, b) in enumerate(zip(eg, tg)):
        if b is None:
            assert a is None or np.all(to_np(a) == 0)
            continue
        assert_close(a, b, ember.float64, f"grad of parameter {i}", rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("expand", [False, True])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_log_prob_entropy_gradients(name, expand):
    build = SPECS[name][0]
    t = build(Lib(TD, torch.float64))
    grad_check(build, (2,) + tuple(t.batch_shape) if expand else None)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_repr(name):
    e, t = pair(SPECS[name][0], ember.float64, torch.float64)
    assert repr(e).replace("ember.", "torch.") == repr(t)


def test_strided_parameters():
    # Non-contiguous parameters: a transposed loc and a stride-2 scale.
    loc = np.ascontiguousarray(_rng.normal(size=(4, 3)))
    scale = _rng.uniform(0.5, 2, size=(3, 8))
    el = ember.tensor(loc, dtype=ember.float64).T
    es = ember.tensor(scale, dtype=ember.float64)[:, ::2]
    tl = torch.tensor(loc).T
    ts = torch.tensor(scale)[:, ::2]
    assert not el.is_contiguous() and not es.is_contiguous()
    x = _rng.normal(size=(2, 3, 4))
    for cls in ("Normal", "Laplace", "Cauchy"):
        e = getattr(ED, cls)(el, es)
        t = getattr(TD, cls)(tl, ts)
        assert_close(e.log_prob(ember.tensor(x)), t.log_prob(torch.tensor(x)), ember.float64, cls)
        assert_close(e.entropy(), t.entropy(), ember.float64, cls)


def test_zero_size_batch():
    e = ED.Normal(ember.zeros(0, 3), ember.ones(0, 3))
    assert tuple(e.batch_shape) == (0, 3)
    assert tuple(e.sample((2,)).shape) == (2, 0, 3)
    assert tuple(e.log_prob(ember.zeros(0, 3)).shape) == (0, 3)
    c = ED.Categorical(logits=ember.zeros(0, 4))
    assert tuple(c.sample((2,)).shape) == (2, 0)
    assert tuple(c.entropy().shape) == (0,)
    # an empty sample shape draws nothing (torch 1.13 raises from multinomial)
    c = ED.Categorical(probs=ember.ones(2, 3))
    s = c.sample((0,))
    assert tuple(s.shape) == (0, 2) and s.dtype == ember.int64
    assert tuple(ED.Normal(0.0, 1.0).sample((0, 2)).shape) == (0, 2)


# ---- enumerate_support ----

@pytest.mark.parametrize("name", ["Bernoulli_probs", "Bernoulli_logits", "Categorical_probs",
                                  "Categorical_1d", "OneHotCategorical"])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support(name, expand):
    e, t = pair(SPECS[name][0], ember.float64, torch.float64)
    ev, tv = e.enumerate_support(expand), t.enumerate_support(expand)
    assert_close(ev, tv, ember.float64, "support")
    assert str(ev.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1]
    # every enumerated value lies in the support and has log_prob as torch's
    assert_close(e.log_prob(ev), t.log_prob(tv), ember.float64, "log_prob(support)")


def test_enumerate_support_independent():
    e = ED.Independent(ED.Bernoulli(probs=ember.full((3,), 0.5)), 1)
    assert not e.has_enumerate_support
    with pytest.raises(NotImplementedError):
        e.enumerate_support()


# ---- sample statistics (fixed seeds, 6 standard errors) ----

# Heavy-tailed families get parameters with a finite fourth moment for the variance check.
MOMENT_SPECS = {
    "LogNormal": lambda L: L.D.LogNormal(L.P(LOW), L.P([0.1, 0.3, 0.5])),
    "Pareto": lambda L: L.D.Pareto(L.P(RATE), L.P([5.0, 6.5, 9.0])),
}


@pytest.mark.parametrize("name", ["Normal", "Normal_broadcast", "Laplace", "Exponential",
                                  "Uniform", "Bernoulli_probs", "Geometric_probs",
                                  "HalfNormal", "Gumbel", "LogNormal", "ContinuousBernoulli",
                                  "OneHotCategorical", "MVN_cov", "LowRankMVN",
                                  "Mixture_Normal", "Pareto"])
def test_sample_moments(name):
    e = MOMENT_SPECS.get(name, SPECS[name][0])(Lib(ED, ember.float64))
    check_sample_mean(e, var=e.variance)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Exponential", "Uniform", "Gumbel",
                                  "LowRankMVN", "MVN_tril", "LogisticNormal"])
def test_rsample_moments(name):
    e = SPECS[name][0](Lib(ED, ember.float64))
    ember.manual_seed(3)
    s = to_np(e.rsample((20000,)))
    mean = s.mean(0)
    if name == "LogisticNormal":  # no closed-form mean: compare with torch's sampler
        t = SPECS[name][0](Lib(TD, torch.float64))
        torch.manual_seed(3)
        ts = to_np(t.rsample((20000,)))
        se = np.sqrt(s.var(0) / 20000 + ts.var(0) / 20000)
        assert np.all(np.abs(mean - ts.mean(0)) <= 6 * se)
        return
    se = s.std(0) / math.sqrt(20000)
    assert np.all(np.abs(mean - to_np(e.mean)) <= 6 * se)


def test_categorical_sample_frequencies():
    probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.0, 0.2, 0.1]])
    d = ED.Categorical(probs=ember.tensor(probs))
    ember.manual_seed(0)
    n = 40000
    s = to_np(d.sample((n,)))
    assert s.dtype == np.int64
    for b in range(2):
        freq = np.bincount(s[:, b], minlength=4) / n
        se = np.sqrt(probs[b] * (1 - probs[b]) / n)
        assert np.all(np.abs(freq - probs[b]) <= 6 * se + 1e-12)
    assert not np.any(s[:, 1] == 1)  # zero probability never drawn


def test_cauchy_sample_median():
    d = ED.Cauchy(ember.tensor([1.0, -2.0], dtype=ember.float64),
                  ember.tensor([0.5, 2.0], dtype=ember.float64))
    ember.manual_seed(0)
    s = to_np(d.sample((40000,)))
    # the sample median has standard error pi * scale / (2 sqrt(n))
    se = math.pi * np.array([0.5, 2.0]) / (2 * math.sqrt(40000))
    assert np.all(np.abs(np.median(s, 0) - np.array([1.0, -2.0])) <= 6 * se)
    # the sample quartiles: loc -+ scale
    q = np.quantile(s, [0.25, 0.75], axis=0)
    assert np.all(np.abs(q[1] - q[0] - 2 * np.array([0.5, 2.0])) <= 0.1 * np.array([0.5, 2.0]))


def test_von_mises_sample_moments():
    loc = np.array([0.5, -2.0, 3.0])
    kappa = np.array([0.05, 1.0, 6.0])
    d = ED.VonMises(ember.tensor(loc), ember.tensor(kappa))
    ember.manual_seed(0)
    n = 20000
    s = to_np(d.sample((n,)))
    assert np.all((s >= -math.pi) & (s < math.pi))
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - circular variance
    c = np.cos(s - loc)
    expect = 1 - to_np(d.variance)
    assert np.all(np.abs(c.mean(0) - expect) <= 6 * c.std(0) / math.sqrt(n))
    sn = np.sin(s - loc)
    assert np.all(np.abs(sn.mean(0)) <= 6 * sn.std(0) / math.sqrt(n))


def test_relaxed_bernoulli_low_temperature_approaches_bernoulli():
    probs = np.array([0.2, 0.7])
    d = ED.RelaxedBernoulli(ember.tensor(0.05, dtype=ember.float64), probs=ember.tensor(probs))
    ember.manual_seed(0)
    s = to_np(d.sample((20000,)))
    assert np.all((s > 0) & (s < 1))
    frac = (s > 0.5).mean(0)
    assert np.all(np.abs(frac - probs) <= 6 * np.sqrt(probs * (1 - probs) / 20000))


# ---- reparameterised gradients ----

RSAMPLE_GRAD_CASES = {
    "Normal": (lambda loc, scale: ED.Normal(loc, scale), [LOC[0], SCALE]),
    "Laplace": (lambda loc, scale: ED.Laplace(loc, scale), [LOC[0], SCALE]),
    "Cauchy": (lambda loc, scale: ED.Cauchy(loc, scale), [LOC[0], SCALE]),
    "Exponential": (lambda rate: ED.Exponential(rate), [RATE]),
    "Uniform": (lambda lo, hi: ED.Uniform(lo, hi), [LOW, HIGH]),
    "LogNormal": (lambda loc, scale: ED.LogNormal(loc, scale), [LOW, RATE]),
    "Gumbel": (lambda loc, scale: ED.Gumbel(loc, scale), [LOW, RATE]),
    "HalfNormal": (lambda scale: ED.HalfNormal(scale), [RATE]),
    "MVN_tril": (lambda loc, tril: ED.MultivariateNormal(loc, scale_tril=tril.tril()),
                 [MVN_LOC[0, 0], np.linalg.cholesky(COV[0])]),
    "MVN_cov": (lambda loc, a: ED.MultivariateNormal(
        loc, covariance_matrix=a @ a.mT + ember.eye(3, dtype=ember.float64)),
        [MVN_LOC[0, 0], _A[0]]),
    "MVN_prec": (lambda loc, a: ED.MultivariateNormal(
        loc, precision_matrix=a @ a.mT + ember.eye(3, dtype=ember.float64)),
        [MVN_LOC[0, 0], _A[0]]),
    "LowRankMVN": (lambda loc, w, d: ED.LowRankMultivariateNormal(loc, w, d),
                   [MVN_LOC[0, 0], W[0], DIAG]),
    "RelaxedBernoulli": (lambda t, p: ED.RelaxedBernoulli(t, probs=p),
                         [np.array(0.7), PROBS]),
    "ContinuousBernoulli": (lambda p: ED.ContinuousBernoulli(probs=p),
                            [np.array([0.2, 0.45, 0.8])]),
    "Pareto": (lambda s, a: ED.Pareto(s, a), [RATE, RATE + 2.0]),
    "HalfCauchy": (lambda s: ED.HalfCauchy(s), [RATE]),
    "LogisticNormal": (lambda loc, s: ED.LogisticNormal(loc, s), [LOW, RATE]),
    "Kumaraswamy": (lambda a, b: ED.Kumaraswamy(a, b), [RATE, RATE[::-1].copy()]),
    "Weibull": (lambda s, k: ED.Weibull(s, k), [RATE, RATE + 0.5]),
    "RelaxedOneHotCategorical": (lambda t, lg: ED.RelaxedOneHotCategorical(t, logits=lg),
                                 [np.array(0.6), LOGITS_2D[0]]),
    "Independent_Normal": (lambda loc, s: ED.Independent(ED.Normal(loc, s), 1), [LOC[0], SCALE]),
}


@pytest.mark.parametrize("name", sorted(RSAMPLE_GRAD_CASES))
def test_rsample_gradient_finite_differences(name):
    make, params = RSAMPLE_GRAD_CASES[name]
    fd_rsample_grad(make, params)


def test_normal_rsample_gradient_is_pathwise():
    loc = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    scale = ember.tensor([2.0, 0.3], dtype=ember.float64, requires_grad=True)
    x = ED.Normal(loc, scale).rsample((7,))
    x.sum().backward()
    eps = (to_np(x) - to_np(loc)) / to_np(scale)
    np.testing.assert_allclose(to_np(loc.grad), [7.0, 7.0])
    np.testing.assert_allclose(to_np(scale.grad), eps.sum(0), rtol=1e-12)


def test_sample_has_no_grad():
    loc = ember.zeros(3, requires_grad=True)
    s = ED.Normal(loc, 1.0).sample()
    assert not s.requires_grad
    assert ED.Normal(loc, 1.0).rsample().requires_grad


def test_log_prob_gradient_matches_torch():
    for cls, args in [("Normal", (LOC[0], SCALE)), ("Laplace", (LOC[0], SCALE)),
                      ("Cauchy", (LOC[0], SCALE)), ("Gumbel", (LOC[0], SCALE))]:
        ea = [ember.tensor(a, requires_grad=True) for a in args]
        ta = [torch.tensor(a, requires_grad=True) for a in args]
        x = np.array([0.3, -0.2])
        getattr(ED, cls)(*ea).log_prob(ember.tensor(x)).sum().backward()
        getattr(TD, cls)(*ta).log_prob(torch.tensor(x)).sum().backward()
        for e, t in zip(ea, ta):
            assert_close(e.grad, t.grad, ember.float64, cls)


def test_straight_through_gradient():
    logits = ember.tensor([[0.1, 0.5, -0.3]], dtype=ember.float64, requires_grad=True)
    d = ED.OneHotCategoricalStraightThrough(logits=logits)
    s = d.rsample((2,))
    assert tuple(s.shape) == (2, 1, 3)
    assert np.all(to_np(s).sum(-1) == 1)
    w = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    (s * w).sum().backward()
    tl = torch.tensor([[0.1, 0.5, -0.3]], dtype=torch.float64, requires_grad=True)
    p = torch.softmax(tl, -1)
    (2 * (p * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))).sum().backward()
    assert_close(logits.grad, tl.grad, ember.float64)


# ---- validation ----

@pytest.mark.parametrize("make", [
    lambda: ED.Normal(0.0, -1.0),
    lambda: ED.Normal(ember.zeros(3), ember.tensor([1.0, 0.0, 1.0])),
    lambda: ED.Normal(float("nan"), 1.0),
    lambda: ED.Exponential(ember.tensor([-1.0])),
    lambda: ED.Laplace(0.0, 0.0),
    lambda: ED.Bernoulli(probs=ember.tensor([1.5])),
    lambda: ED.Categorical(probs=ember.tensor([0.5, -0.1])),
    lambda: ED.Uniform(1.0, 1.0),
    lambda: ED.Uniform(ember.tensor([0.0, 2.0]), ember.tensor([1.0, 1.0])),
    lambda: ED.Geometric(probs=ember.tensor([0.0, 0.5])),
    lambda: ED.MultivariateNormal(ember.zeros(2), covariance_matrix=ember.tensor(
        [[1.0, 2.0], [2.0, 1.0]])),
    lambda: ED.MultivariateNormal(ember.zeros(2), covariance_matrix=ember.tensor(
        [[1.0, 0.5], [0.0, 1.0]])),
    lambda: ED.MultivariateNormal(ember.zeros(2), scale_tril=ember.tensor(
        [[1.0, 0.0], [0.5, -1.0]])),
    lambda: ED.LowRankMultivariateNormal(ember.zeros(2), ember.ones(2, 1), ember.zeros(2)),
    lambda: ED.Pareto(ember.tensor([1.0]), ember.tensor([-1.0])),
    lambda: ED.HalfNormal(ember.tensor([-1.0])),
    lambda: ED.Gumbel(0.0, -1.0),
    lambda: ED.ContinuousBernoulli(probs=ember.tensor([1.5]), validate_args=True),
])
def test_invalid_parameters_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("make", [
    lambda: ED.Bernoulli(),
    lambda: ED.Bernoulli(probs=ember.tensor(0.5), logits=ember.tensor(0.0)),
    lambda: ED.Categorical(),
    lambda: ED.Categorical(probs=ember.tensor(0.5)),
    lambda: ED.Categorical(logits=ember.tensor(0.5)),
    lambda: ED.Geometric(),
    lambda: ED.MultivariateNormal(ember.zeros(2)),
    lambda: ED.MultivariateNormal(ember.zeros(2), covariance_matrix=ember.eye(2),
                                  scale_tril=ember.eye(2)),
    lambda: ED.MultivariateNormal(ember.tensor(0.0), covariance_matrix=ember.eye(2)),
    lambda: ED.MultivariateNormal(ember.zeros(2), covariance_matrix=ember.ones(2)),
    lambda: ED.LowRankMultivariateNormal(ember.zeros(2), ember.ones(3, 1), ember.ones(2)),
    lambda: ED.LowRankMultivariateNormal(ember.zeros(2), ember.ones(2, 1), ember.ones(3)),
    lambda: ED.LowRankMultivariateNormal(ember.zeros(2), ember.ones(2), ember.ones(2)),
    lambda: ED.Independent(ED.Normal(ember.zeros(3), 1.0), 2),
    lambda: ED.MixtureSameFamily(ED.Normal(0.0, 1.0), ED.Normal(ember.zeros(3), 1.0)),
    lambda: ED.MixtureSameFamily(ED.Categorical(logits=ember.zeros(3)), "not a distribution"),
    lambda: ED.MixtureSameFamily(ED.Categorical(logits=ember.zeros(4)),
                                 ED.Normal(ember.zeros(3), 1.0)),
    lambda: ED.MixtureSameFamily(ED.Categorical(logits=ember.zeros(2, 3)),
                                 ED.Normal(ember.zeros(4, 3), 1.0)),
    lambda: ED.TransformedDistribution(ED.Normal(0.0, 1.0), "exp"),
    lambda: ED.TransformedDistribution(ED.Normal(0.0, 1.0), ["exp"]),
    lambda: ED.TransformedDistribution(ED.Normal(0.0, 1.0), ED.StickBreakingTransform()),
])
def test_bad_arguments_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("make,value", [
    (lambda: ED.Exponential(1.0), ember.tensor(-1.0)),
    (lambda: ED.Bernoulli(0.3), ember.tensor(0.5)),
    (lambda: ED.Categorical(probs=ember.full((4,), 0.25)), ember.tensor(4)),
    (lambda: ED.Categorical(probs=ember.full((4,), 0.25)), ember.tensor(-1)),
    (lambda: ED.OneHotCategorical(probs=ember.full((3,), 1 / 3)), ember.tensor([1.0, 1.0, 0.0])),
    (lambda: ED.Uniform(0.0, 1.0), ember.tensor(1.5)),
    (lambda: ED.Geometric(0.5), ember.tensor(1.5)),
    (lambda: ED.HalfNormal(1.0), ember.tensor(-0.5)),
    (lambda: ED.Pareto(ember.tensor(2.0), ember.tensor(1.0)), ember.tensor(1.0)),
    (lambda: ED.Normal(0.0, 1.0), ember.tensor(float("nan"))),
    (lambda: ED.LogisticNormal(ember.zeros(2), ember.ones(2)), ember.tensor([0.5, 0.6, 0.2])),
    (lambda: ED.Normal(ember.zeros(3), 1.0), ember.zeros(2)),  # not broadcastable
    (lambda: ED.MultivariateNormal(ember.zeros(3), ember.eye(3)), ember.zeros(2)),  # event
    (lambda: ED.Normal(0.0, 1.0), 0.5),  # not a tensor
])
def test_log_prob_outside_support_raises_value_error(make, value):
    d = make()
    with pytest.raises(ValueError):
        d.log_prob(value)


def test_validate_args_false_skips_checks():
    d = ED.Normal(0.0, -1.0, validate_args=False)
    assert math.isnan(float(d.log_prob(ember.tensor(0.0))))
    d = ED.Exponential(1.0, validate_args=False)
    assert float(d.log_prob(ember.tensor(-1.0))) == pytest.approx(1.0)
    d = ED.Uniform(1.0, 0.0, validate_args=False)
    # an expanded distribution keeps the flag
    assert ED.Exponential(1.0, validate_args=False).expand((2,))._validate_args is False


def test_set_default_validate_args():
    assert ED.Distribution._validate_args is True
    try:
        ED.Distribution.set_default_validate_args(False)
        ED.Normal(0.0, -1.0)  # no error
        ED.Exponential(1.0).log_prob(ember.tensor(-1.0))
        with pytest.raises(ValueError):
            ED.Normal(0.0, -1.0, validate_args=True)
    finally:
        ED.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        ED.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        ED.Distribution.set_default_validate_args("yes")


def test_error_message_names_parameter_and_constraint():
    with pytest.raises(ValueError, match=r"Expected parameter scale .* GreaterThan"):
        ED.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"within the support \(GreaterThanEq"):
        ED.Exponential(1.0).log_prob(ember.tensor(-1.0))


def test_unimplemented_base_methods():
    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        d = ED.Distribution()
    for fn in (lambda: d.sample(), lambda: d.log_prob(ember.zeros(1)), lambda: d.entropy(),
               lambda: d.cdf(ember.zeros(1)), lambda: d.icdf(ember.zeros(1)),
               lambda: d.enumerate_support(), lambda: d.mean, lambda: d.variance,
               lambda: d.mode, lambda: d.expand((2,)), lambda: d.support,
               lambda: d.arg_constraints):
        with pytest.raises(NotImplementedError):
            fn()


def test_subclass_with_custom_init_needs_custom_expand():
    class MyNormal(ED.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    with pytest.raises(NotImplementedError):
        MyNormal(ember.zeros(2)).expand((3, 2))


# ---- specific behaviour ----

def test_categorical_zero_probability_entropy_and_log_prob():
    p = np.array([0.0, 0.5, 0.5])
    e, t = ED.Categorical(probs=ember.tensor(p)), TD.Categorical(probs=torch.tensor(p))
    assert_close(e.entropy(), t.entropy(), ember.float64)
    assert_close(e.log_prob(ember.tensor([0, 1, 2])), t.log_prob(torch.tensor([0, 1, 2])),
                 ember.float64)
    # -inf logits
    lg = np.array([-np.inf, 0.0, 1.0])
    e, t = ED.Categorical(logits=ember.tensor(lg)), TD.Categorical(logits=torch.tensor(lg))
    assert_close(e.entropy(), t.entropy(), ember.float64)


def test_categorical_log_prob_broadcasts_values():
    lg = _rng.normal(size=(3, 4))
    v = np.array([[0], [3]])  # (2, 1) against batch (3,)
    e, t = ED.Categorical(logits=ember.tensor(lg)), TD.Categorical(logits=torch.tensor(lg))
    assert_close(e.log_prob(ember.tensor(v)), t.log_prob(torch.tensor(v)), ember.float64)


def test_categorical_normalises_probs_and_logits():
    e = ED.Categorical(probs=ember.tensor([1.0, 3.0]))
    np.testing.assert_allclose(to_np(e.probs), [0.25, 0.75])
    e = ED.Categorical(logits=ember.tensor([1.0, 3.0]))
    np.testing.assert_allclose(np.exp(to_np(e.logits)).sum(), 1.0, rtol=1e-6)


def test_bernoulli_mode_half_is_nan():
    m = to_np(ED.Bernoulli(probs=ember.tensor([0.2, 0.5, 0.9])).mode)
    assert m[0] == 0 and np.isnan(m[1]) and m[2] == 1


def test_uniform_log_prob_outside_without_validation():
    d = ED.Uniform(0.0, 2.0, validate_args=False)
    lp = to_np(d.log_prob(ember.tensor([-1.0, 1.0, 2.0])))
    assert lp[0] == -np.inf and lp[1] == pytest.approx(-math.log(2)) and lp[2] == -np.inf


def test_lazy_probs_logits_gradients():
    logits = ember.tensor([0.3, -1.2], dtype=ember.float64, requires_grad=True)
    d = ED.Bernoulli(logits=logits)
    d.probs.sum().backward()
    s = 1 / (1 + np.exp(-to_np(logits)))
    np.testing.assert_allclose(to_np(logits.grad), s * (1 - s), rtol=1e-12)
    # computed under no_grad, the lazy value still carries grad
    logits.grad = None
    d = ED.Bernoulli(logits=logits)
    with ember.no_grad():
        p = d.probs
    assert p.requires_grad


def test_mixture_sample_picks_components():
    # Well-separated components: each sample lies near the chosen mean.
    means = np.array([-100.0, 0.0, 100.0])
    d = ED.MixtureSameFamily(ED.Categorical(probs=ember.tensor([0.2, 0.3, 0.5])),
                             ED.Normal(ember.tensor(means), ember.tensor([1.0, 1.0, 1.0])))
    ember.manual_seed(0)
    s = to_np(d.sample((20000,)))
    k = np.argmin(np.abs(s[:, None] - means), 1)
    freq = np.bincount(k, minlength=3) / 20000
    p = np.array([0.2, 0.3, 0.5])
    assert np.all(np.abs(freq - p) <= 6 * np.sqrt(p * (1 - p) / 20000))


def test_transformed_distribution_shapes_with_event_changing_transforms():
    base = ED.Normal(ember.zeros(5, 3), ember.ones(5, 3))
    tbase = TD.Normal(torch.zeros(5, 3), torch.ones(5, 3))
    e = ED.TransformedDistribution(base, [ED.StickBreakingTransform()])
    t = TD.TransformedDistribution(tbase, [TD.StickBreakingTransform()])
    assert tuple(e.batch_shape) == tuple(t.batch_shape) == (5,)
    assert tuple(e.event_shape) == tuple(t.event_shape) == (4,)
    x = torch_values(t)
    assert_close(e.log_prob(ember.tensor(x)), t.log_prob(torch.tensor(x)), ember.float32)
    e = ED.TransformedDistribution(base, [ED.ReshapeTransform((3,), (3, 1))])
    t = TD.TransformedDistribution(tbase, [TD.ReshapeTransform((3,), (3, 1))])
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    # a transform whose parameters broadcast the base distribution's batch
    e = ED.TransformedDistribution(ED.Normal(0.0, 1.0),
                                   [ED.AffineTransform(ember.zeros(4), ember.ones(4))])
    assert tuple(e.batch_shape) == (4,)
    assert tuple(e.sample((2,)).shape) == (2, 4)


def test_transformed_cdf_of_decreasing_chain():
    # y = -x: cdf_y(v) = 1 - cdf_x(-v)
    e = ED.TransformedDistribution(ED.Normal(0.5, 2.0), [ED.AffineTransform(0.0, -1.0)])
    t = TD.TransformedDistribution(TD.Normal(0.5, 2.0), [TD.AffineTransform(0.0, -1.0)])
    v = np.array([-1.0, 0.0, 2.0])
    assert_close(e.cdf(ember.tensor(v, dtype=ember.float32)),
                 t.cdf(torch.tensor(v, dtype=torch.float32)), ember.float32)
    assert_close(e.icdf(ember.tensor([0.1, 0.6])), t.icdf(torch.tensor([0.1, 0.6])),
                 ember.float32)


def test_support_and_constraints_attributes():
    assert ED.Categorical.support.is_discrete and ED.Categorical.support.event_dim == 0
    assert ED.Multinomial.support.event_dim == 1
    d = ED.Categorical(probs=ember.full((3, 5), 0.2))
    assert d.support.upper_bound == 4
    assert repr(ED.Uniform(0.0, 1.0).support).startswith("Interval(")
    assert ED.Independent(ED.Normal(ember.zeros(3), 1.0), 1).support.event_dim == 1
    ln = ED.LogNormal(0.0, 1.0)
    assert ln.support is ED.constraints.positive
    assert ED.LogisticNormal(ember.zeros(2), ember.ones(2)).support is ED.constraints.simplex


def test_independent_properties():
    base = ED.Normal(ember.zeros(2, 3), ember.ones(2, 3))
    d = ED.Independent(base, 1)
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    assert d.has_rsample
    assert tuple(d.mean.shape) == (2, 3)
    assert tuple(d.entropy().shape) == (2,)
    assert repr(d).startswith("Independent(Normal(")
    d0 = ED.Independent(base, 0)
    assert tuple(d0.batch_shape) == (2, 3)


def test_mvn_precision_and_cov_agree():
    cov = COV[0]
    a = ED.MultivariateNormal(ember.zeros(3, dtype=ember.float64),
                              covariance_matrix=ember.tensor(cov))
    b = ED.MultivariateNormal(ember.zeros(3, dtype=ember.float64),
                              precision_matrix=ember.tensor(np.linalg.inv(cov)))
    x = ember.tensor(_rng.normal(size=(4, 3)))
    assert_close(a.log_prob(x), b.log_prob(x), ember.float64, rtol=1e-8)
    assert_close(b.covariance_matrix, ember.tensor(cov), ember.float64, rtol=1e-8)


def test_entropy_exp_family_fallback():
    # ExponentialFamily.entropy through the log normalizer gives the closed form.
    loc, scale = ember.tensor([0.3, 1.0]), ember.tensor([0.5, 2.0])
    d = ED.Normal(loc, scale)
    generic = ED.ExponentialFamily.entropy(d)
    assert_close(generic, d.entropy(), ember.float32)
    d = ED.Exponential(ember.tensor([0.5, 3.0]))
    assert_close(ED.ExponentialFamily.entropy(d), d.entropy(), ember.float32)
    d = ED.Bernoulli(probs=ember.tensor([0.2, 0.6]))
    assert_close(ED.ExponentialFamily.entropy(d), d.entropy(), ember.float32)


def test_public_names_match_torch():
    assert [n for n in TD.__all__ if not hasattr(ED, n)] == []
    assert sorted(ED.__all__) == sorted(TD.__all__)
    assert sorted(ED.constraints.__all__) == sorted(set(TC.__all__) | {"nonnegative",
                                                                           "one_hot"})
    assert sorted(ED.transforms.__all__) == sorted(TD.transforms.__all__)


# ---- typical programs (`import ember as torch` style) ----

def test_vae_style_reparameterised_kl_backward():
    ember.manual_seed(0)
    enc = ember.nn.Linear(4, 6)
    x = ember.randn(8, 4)
    h = enc(x)
    mu, log_std = h[:, :3], h[:, 3:]
    q = ED.Normal(mu, log_std.exp())
    p = ED.Normal(ember.zeros_like(mu), ember.ones_like(mu))
    z = q.rsample()
    recon = (z ** 2).sum()
    loss = recon + ED.kl_divergence(q, p).sum()
    loss.backward()
    g = to_np(enc.weight.grad)
    assert g.shape == (6, 4) and np.all(np.isfinite(g)) and np.abs(g).sum() > 0
    # the same program in torch on the same weights and noise gives the same gradient
    tw = torch.tensor(to_np(enc.weight), requires_grad=True)
    tb = torch.tensor(to_np(enc.bias), requires_grad=True)
    th = torch.tensor(to_np(x)) @ tw.T + tb
    tq = TD.Normal(th[:, :3], th[:, 3:].exp())
    eps = (to_np(z) - to_np(mu)) / to_np(log_std.exp())
    tz = tq.loc + torch.tensor(eps) * tq.scale
    tloss = (tz ** 2).sum() + TD.kl_divergence(tq, TD.Normal(0.0, 1.0)).sum()
    tloss.backward()
    np.testing.assert_allclose(g, tw.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_policy_gradient_categorical():
    ember.manual_seed(0)
    policy = ember.nn.Linear(3, 4)
    obs = ember.randn(16, 3)
    logits = policy(obs)
    dist = ED.Categorical(logits=logits)
    actions = dist.sample()
    assert tuple(actions.shape) == (16,) and actions.dtype == ember.int64
    rewards = ember.randn(16)
    loss = -(dist.log_prob(actions) * rewards).mean() - 0.01 * dist.entropy().mean()
    loss.backward()
    tw = torch.tensor(to_np(policy.weight), requires_grad=True)
    tb = torch.tensor(to_np(policy.bias), requires_grad=True)
    tl = torch.tensor(to_np(obs)) @ tw.T + tb
    td = TD.Categorical(logits=tl)
    ta = torch.tensor(to_np(actions))
    tloss = -(td.log_prob(ta) * torch.tensor(to_np(rewards))).mean() - 0.01 * td.entropy().mean()
    tloss.backward()
    np.testing.assert_allclose(to_np(policy.weight.grad), tw.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert float(dist.perplexity().min()) >= 1.0
