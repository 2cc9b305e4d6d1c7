"""ember.distributions.kl_divergence against torch.distributions.kl_divergence (1.13): every
pair torch registers, dispatch rules and gradients.
"""

import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.distributions as TD
from torch.distributions.kl import _KL_REGISTRY as TORCH_KL_REGISTRY

import ember
import ember.distributions as ED
from ember.distributions.kl import _KL_REGISTRY as EMBER_KL_REGISTRY
from test_distributions import Lib, assert_close, to_np

HAS_GAMMA_OPS = all(hasattr(ember, n) for n in ("lgamma", "digamma"))
# Families whose KL formulas or entropies need lgamma/digamma.
NEEDS_GAMMA = {"Beta", "Gamma", "Dirichlet", "Chi2"}

_rng = np.random.default_rng(11)
U = lambda lo, hi, n=3: _rng.uniform(lo, hi, size=(n,))  # noqa: E731

# Each family has two parameter sets ("p" and "q" sides) chosen so that the pairs with
# support restrictions mix finite and infinite results.
FAMILIES = {
    "Bernoulli": lambda L, s: L.D.Bernoulli(probs=L.P([0.2, 0.0, 0.7] if s else [0.5, 0.3, 1.0])),
    "Beta": lambda L, s: L.D.Beta(L.P(U(0.5, 3)), L.P(U(0.5, 3))),
    "Binomial": lambda L, s: L.D.Binomial(L.P([5.0, 7.0, 5.0] if s else [5.0, 5.0, 5.0]),
                                          L.P(U(0.1, 0.9))),
    "Categorical": lambda L, s: L.D.Categorical(probs=L.P(
        [[0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25]] if s else
        [[0.4, 0.3, 0.2, 0.1], [0.1, 0.0, 0.4, 0.5], [0.7, 0.1, 0.1, 0.1]])),
    "Cauchy": lambda L, s: L.D.Cauchy(L.P(U(-1, 1)), L.P(U(0.5, 2))),
    "ContinuousBernoulli": lambda L, s: L.D.ContinuousBernoulli(
        probs=L.P([0.2, 0.4999, 0.8] if s else [0.7, 0.5, 0.1])),
    "Dirichlet": lambda L, s: L.D.Dirichlet(L.P(_rng.uniform(0.5, 3, size=(3, 4)))),
    "Exponential": lambda L, s: L.D.Exponential(L.P(U(0.5, 2))),
    "Gamma": lambda L, s: L.D.Gamma(L.P(U(0.5, 3)), L.P(U(0.5, 2))),
    "Geometric": lambda L, s: L.D.Geometric(probs=L.P(U(0.1, 0.9))),
    "Gumbel": lambda L, s: L.D.Gumbel(L.P(U(-1, 1)), L.P(U(0.5, 2))),
    "HalfNormal": lambda L, s: L.D.HalfNormal(L.P(U(0.5, 2))),
    "Laplace": lambda L, s: L.D.Laplace(L.P(U(-1, 1)), L.P(U(0.5, 2))),
    "LowRankMultivariateNormal": lambda L, s: L.D.LowRankMultivariateNormal(
        L.P(_rng.normal(size=(3, 2))), L.P(_rng.normal(size=(3, 2, 2))),
        L.P(_rng.uniform(0.5, 1.5, size=(3, 2)))),
    "MultivariateNormal": lambda L, s: L.D.MultivariateNormal(
        L.P(_rng.normal(size=(3, 2))), scale_tril=L.P(np.tril(_rng.normal(size=(3, 2, 2)), -1)
                                                      + np.eye(2) * U(0.5, 2)[:, None, None])),
    "Normal": lambda L, s: L.D.Normal(L.P(U(-1, 1)), L.P(U(0.5, 2))),
    "OneHotCategorical": lambda L, s: L.D.OneHotCategorical(probs=L.P(
        [[0.1, 0.2, 0.7], [0.0, 0.5, 0.5], [0.3, 0.3, 0.4]] if s else
        [[0.2, 0.2, 0.6], [0.5, 0.0, 0.5], [0.1, 0.1, 0.8]])),
    "Pareto": lambda L, s: L.D.Pareto(L.P([0.5, 1.0, 0.2] if s else [0.8, 0.3, 0.1]),
                                      L.P([2.5, 0.8, 3.5] if s else [1.5, 2.0, 4.0])),
    "Poisson": lambda L, s: L.D.Poisson(L.P(U(0.5, 3))),
    "Uniform": lambda L, s: L.D.Uniform(L.P([0.1, -0.5, 0.3] if s else [-1.0, 0.2, 0.0]),
                                        L.P([0.8, 0.5, 2.0] if s else [1.5, 0.9, 1.0])),
    "Independent": lambda L, s: L.D.Independent(
        L.D.Normal(L.P(_rng.normal(size=(3, 2))), L.P(_rng.uniform(0.5, 2, size=(3, 2)))), 1),
    "TransformedDistribution": lambda L, s: L.D.LogNormal(L.P(U(-1, 1)), L.P(U(0.5, 2))),
}


def _torch_pairs():
    return sorted((p.__name__, q.__name__) for p, q in TORCH_KL_REGISTRY)


def test_registered_pairs_match_torch():
    ember_pairs = sorted((p.__name__, q.__name__) for p, q in EMBER_KL_REGISTRY)
    assert ember_pairs == _torch_pairs()


def _build_pair(pname, qname, edt, tdt):
    seed = zlib.crc32(f"{pname}|{qname}".encode())
    out = []
    for mod, dt in ((ED, edt), (TD, tdt)):
        global _rng
        _rng = np.random.default_rng(seed)
        p = FAMILIES[pname](Lib(mod, dt), True)
        q = FAMILIES[qname](Lib(mod, dt), False)
        out.append((p, q))
    return out


@pytest.mark.parametrize("edt,tdt", [(ember.float32, torch.float32),
                                     (ember.float64, torch.float64)], ids=["float32", "float64"])
@pytest.mark.parametrize("pname,qname", [pq for pq in _torch_pairs() if pq[0] in FAMILIES
                                         and pq[1] in FAMILIES])
def test_kl_against_torch(pname, qname, edt, tdt):
    if (pname in NEEDS_GAMMA or qname in NEEDS_GAMMA or (pname, qname) in {
            ("Exponential", "Gamma"), ("Gumbel", "Gumbel"), ("Uniform", "Beta"),
            ("Uniform", "Gamma"), ("Pareto", "Gamma"), ("Gamma", "Gumbel")}) \
            and not HAS_GAMMA_OPS:
        pytest.skip("ember.lgamma/digamma not built")
    (ep, eq), (tp, tq) = _build_pair(pname, qname, edt, tdt)
    try:
        tv = TD.kl_divergence(tp, tq)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ED.kl_divergence(ep, eq)
        return
    ev = ED.kl_divergence(ep, eq)
    rtol = 1e-3 if edt == ember.float32 else 1e-8
    assert_close(ev, tv, edt, f"KL({pname} || {qname})", rtol=rtol, atol=rtol * 1e-2)


def test_kl_same_distribution_is_zero():
    for name in ["Normal", "Laplace", "Exponential", "Categorical", "Bernoulli", "Uniform",
                 "MultivariateNormal", "LowRankMultivariateNormal", "Independent", "Cauchy",
                 "Geometric", "Poisson", "TransformedDistribution"]:
        d = FAMILIES[name](Lib(ED, ember.float64), True)
        np.testing.assert_allclose(to_np(ED.kl_divergence(d, d)), 0.0, atol=1e-10,
                                   err_msg=name)


def test_binomial_kl_larger_q_count_not_implemented():
    p = ED.Binomial(ember.tensor([3.0]), ember.tensor([0.5]))
    q = ED.Binomial(ember.tensor([5.0]), ember.tensor([0.5]))
    with pytest.raises(NotImplementedError):
        ED.kl_divergence(p, q)


def test_mvn_kl_event_shape_mismatch():
    p = ED.MultivariateNormal(ember.zeros(2), ember.eye(2))
    q = ED.MultivariateNormal(ember.zeros(3), ember.eye(3))
    with pytest.raises(ValueError):
        ED.kl_divergence(p, q)
    q = ED.LowRankMultivariateNormal(ember.zeros(3), ember.ones(3, 1), ember.ones(3))
    with pytest.raises(ValueError):
        ED.kl_divergence(p, q)
    with pytest.raises(ValueError):
        ED.kl_divergence(q, p)


def test_mvn_kl_broadcasts_batches():
    rng = np.random.default_rng(0)
    lp = rng.normal(size=(4, 1, 3))
    Lp = np.tril(rng.normal(size=(2, 3, 3)), -1) + 2 * np.eye(3)
    lq = rng.normal(size=(3,))
    A = rng.normal(size=(3, 3))
    cq = A @ A.T + np.eye(3)
    W = rng.normal(size=(2, 3, 2))
    D = rng.uniform(0.5, 1.5, size=(3,))
    for M, P in ((ED, ember.tensor), (TD, torch.tensor)):
        q = M.MultivariateNormal(P(lq), covariance_matrix=P(cq))
        kl1 = M.kl_divergence(M.MultivariateNormal(P(lp), scale_tril=P(Lp)), q)
        kl2 = M.kl_divergence(M.LowRankMultivariateNormal(P(lp), P(W), P(D)), q)
        kl3 = M.kl_divergence(q, M.LowRankMultivariateNormal(P(lp), P(W), P(D)))
        if M is ED:
            e = (kl1, kl2, kl3)
        else:
            t = (kl1, kl2, kl3)
    for a, b in zip(e, t):
        assert tuple(a.shape) == (4, 2)
        assert_close(a, b, ember.float64)


def test_unregistered_pair_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="No KL"):
        ED.kl_divergence(ED.Normal(0.0, 1.0), ED.Categorical(probs=ember.ones(3)))
    with pytest.raises(NotImplementedError):
        ED.kl_divergence(ED.Cauchy(0.0, 1.0), ED.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError):
        ED.kl_divergence(ED.Independent(ED.Normal(ember.zeros(2, 2), 1.0), 1),
                         ED.Independent(ED.Normal(ember.zeros(2, 2), 1.0), 2))
    with pytest.raises(NotImplementedError):
        ED.kl_divergence(ED.LogNormal(0.0, 1.0), ED.HalfNormal(1.0))


def test_exponential_family_bregman_fallback():
    from ember.distributions.kl import _kl_expfamily_expfamily
    p, q = ED.Normal(ember.tensor([0.3, -1.0]), ember.tensor([1.2, 0.4])), \
        ED.Normal(ember.tensor([0.0, 0.5]), ember.tensor([0.7, 2.0]))
    assert_close(_kl_expfamily_expfamily(p, q), ED.kl_divergence(p, q), ember.float32)
    p, q = ED.Poisson(ember.tensor([1.5, 3.0])), ED.Poisson(ember.tensor([0.5, 4.0]))
    assert_close(_kl_expfamily_expfamily(p, q), ED.kl_divergence(p, q), ember.float32)
    with pytest.raises(NotImplementedError):
        _kl_expfamily_expfamily(ED.Normal(0.0, 1.0), ED.Exponential(1.0))


def test_register_kl_dispatch_and_errors():
    class MyNormal(ED.Normal):
        pass

    class MyOther(ED.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), MyNormal(1.0, 1.0)
    # subclasses dispatch to the parent registration
    assert float(ED.kl_divergence(p, q)) == pytest.approx(0.5)

    @ED.register_kl(MyNormal, MyNormal)
    def _kl_mine(p, q):
        return ember.tensor(42.0)

    assert float(ED.kl_divergence(p, q)) == 42.0  # more specific wins, memo cleared
    assert float(ED.kl_divergence(MyOther(0.0, 1.0), MyOther(1.0, 1.0))) == pytest.approx(0.5)

    @ED.register_kl(MyNormal, ED.Normal)
    def _kl_left(p, q):
        return ember.tensor(1.0)

    @ED.register_kl(ED.Normal, MyOther)
    def _kl_right(p, q):
        return ember.tensor(2.0)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ED.kl_divergence(MyNormal(0.0, 1.0), MyOther(0.0, 1.0))
    assert any(issubclass(x.category, RuntimeWarning) and "Ambiguous" in str(x.message)
               for x in w)
    with pytest.raises(TypeError):
        ED.register_kl(int, ED.Normal)
    with pytest.raises(TypeError):
        ED.register_kl(ED.Normal, "Normal")


@pytest.mark.parametrize("pname,qname", [("Normal", "Normal"), ("MultivariateNormal",
                                                               "MultivariateNormal"),
                                         ("LowRankMultivariateNormal", "MultivariateNormal"),
                                         ("Categorical", "Categorical"),
                                         ("Laplace", "Normal"), ("Uniform", "Normal")])
def test_kl_gradients_match_torch(pname, qname):
    (ep, eq), (tp, tq) = _build_pair(pname, qname, ember.float64, torch.float64)

    def leaves(d, mod):
        names = {"Normal": ["loc", "scale"], "Laplace": ["loc", "scale"],
                 "Uniform": ["low", "high"], "Categorical": ["logits"],
                 "MultivariateNormal": ["loc", "scale_tril"],
                 "LowRankMultivariateNormal": ["loc", "cov_factor", "cov_diag"]}[type(d).__name__]
        return {n: getattr(d, n).detach().clone().requires_grad_() for n in names}

    def rebuild(d, mod, params):
        cls = getattr(mod, type(d).__name__)
        if isinstance(d, (ED.MultivariateNormal, TD.MultivariateNormal)):
            return cls(params["loc"], scale_tril=params["scale_tril"])
        if isinstance(d, (ED.Categorical, TD.Categorical)):
            return cls(logits=params["logits"])
        return cls(*params.values())

    ew = [leaves(ep, ED), leaves(eq, ED)]
    tw = [leaves(tp, TD), leaves(tq, TD)]
    ekl = ED.kl_divergence(rebuild(ep, ED, ew[0]), rebuild(eq, ED, ew[1])).sum()
    tkl = TD.kl_divergence(rebuild(tp, TD, tw[0]), rebuild(tq, TD, tw[1])).sum()
    ekl.backward()
    tkl.backward()
    for ed, tdd in zip(ew, tw):
        for n in ed:
            assert_close(ed[n].grad, tdd[n].grad, ember.float64, n, rtol=1e-7, atol=1e-9)


@pytest.mark.skipif(not (HAS_GAMMA_OPS and hasattr(ember, "mvlgamma")),
                    reason="ember.mvlgamma not built")
def test_wishart_kl_through_bregman_divergence():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(2, 3, 3))
    c1 = A @ np.swapaxes(A, -1, -2) + np.eye(3)
    c2 = np.eye(3) * np.array([[[1.5]], [[0.7]]])
    e = ED.kl_divergence(
        ED.Wishart(ember.tensor([4.0, 6.0]).double(), covariance_matrix=ember.tensor(c1)),
        ED.Wishart(ember.tensor([5.0, 3.5]).double(), covariance_matrix=ember.tensor(c2)))
    t = TD.kl_divergence(
        TD.Wishart(torch.tensor([4.0, 6.0]).double(), covariance_matrix=torch.tensor(c1)),
        TD.Wishart(torch.tensor([5.0, 3.5]).double(), covariance_matrix=torch.tensor(c2)))
    assert_close(e, t, ember.float64, rtol=1e-8)
