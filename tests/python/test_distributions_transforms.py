"""ember.distributions.transforms, constraints and biject_to/transform_to against torch 1.13."""

import math
import weakref

import numpy as np
import pytest
import torch
import torch.distributions as TD
from torch.distributions import constraints as TC

import ember
import ember.distributions as ED
from ember.distributions import constraints as EC
from test_distributions import assert_close, to_np

_rng = np.random.default_rng(7)
X = _rng.normal(size=(3, 4))
POS = _rng.uniform(0.2, 3.0, size=(3, 4))
UNIT = _rng.uniform(0.05, 0.95, size=(3, 4))
OPEN = _rng.uniform(-0.95, 0.95, size=(3, 4))
SQ = _rng.normal(size=(2, 3, 3))
CORR_VEC = _rng.normal(size=(2, 6))  # 6 = 4 * 3 / 2: 4x4 correlation factors
LOC4 = _rng.normal(size=(4,))
SCALE4 = _rng.uniform(0.5, 2.0, size=(4,)) * np.array([1, -1, 1, -1])


def E(a, dtype=ember.float64):
    return ember.tensor(np.asarray(a), dtype=dtype)


def T(a, dtype=torch.float64):
    return torch.tensor(np.asarray(a), dtype=dtype)


# name -> (builder(mod, P), input x (domain), has inverse, has log_abs_det_jacobian)
TRANSFORMS = {
    "Exp": (lambda M, P: M.ExpTransform(), X, True, True),
    "Affine_numbers": (lambda M, P: M.AffineTransform(1.5, -2.0), X, True, True),
    "Affine_tensors": (lambda M, P: M.AffineTransform(P(LOC4), P(SCALE4)), X, True, True),
    "Affine_event1": (lambda M, P: M.AffineTransform(P(LOC4), P(SCALE4), event_dim=1), X,
                      True, True),
    "Affine_event2": (lambda M, P: M.AffineTransform(0.5, 3.0, event_dim=2), X, True, True),
    "Sigmoid": (lambda M, P: M.SigmoidTransform(), X, True, True),
    "Softplus": (lambda M, P: M.SoftplusTransform(), X, True, True),
    "Tanh": (lambda M, P: M.TanhTransform(), X, True, True),
    "Power": (lambda M, P: M.PowerTransform(P(2.5)), POS, True, True),
    "Power_tensor": (lambda M, P: M.PowerTransform(P(LOC4)), POS, True, True),
    "Abs": (lambda M, P: M.AbsTransform(), X, True, False),
    "StickBreaking": (lambda M, P: M.StickBreakingTransform(), X, True, True),
    "Softmax": (lambda M, P: M.SoftmaxTransform(), X, True, False),
    "LowerCholesky": (lambda M, P: M.LowerCholeskyTransform(), SQ, True, False),
    "CorrCholesky": (lambda M, P: M.CorrCholeskyTransform(), CORR_VEC, True, True),
    "Reshape": (lambda M, P: M.ReshapeTransform((4,), (2, 2)), X, True, True),
    "Independent_Exp": (lambda M, P: M.IndependentTransform(M.ExpTransform(), 1), X, True, True),
    "Independent_Sigmoid2": (lambda M, P: M.IndependentTransform(M.SigmoidTransform(), 2), X,
                             True, True),
    "Compose": (lambda M, P: M.ComposeTransform([M.AffineTransform(P(LOC4), P(SCALE4)),
                                                 M.ExpTransform(), M.PowerTransform(P(0.5))]),
                X, True, True),
    "Compose_stickbreaking": (lambda M, P: M.ComposeTransform(
        [M.ExpTransform().inv.inv, M.AffineTransform(0.0, 0.5), M.StickBreakingTransform()]),
        X, True, True),
    "Compose_empty": (lambda M, P: M.ComposeTransform([]), X, True, True),
    "Inverse_Exp": (lambda M, P: M.ExpTransform().inv, POS, True, True),
    "Inverse_Sigmoid": (lambda M, P: M.SigmoidTransform().inv, UNIT, True, True),
    "Inverse_Tanh": (lambda M, P: M.TanhTransform().inv, OPEN, True, True),
    "Cat": (lambda M, P: M.CatTransform([M.ExpTransform(), M.AffineTransform(1.0, 2.0),
                                         M.SigmoidTransform()], dim=1, lengths=[1, 2, 1]),
            X, True, True),
    "Cat_dim0": (lambda M, P: M.CatTransform([M.ExpTransform(), M.TanhTransform()], dim=0,
                                             lengths=[2, 1]), X, True, True),
    "Stack": (lambda M, P: M.StackTransform([M.ExpTransform(), M.AffineTransform(1.0, 2.0),
                                             M.SigmoidTransform(), M.TanhTransform()], dim=1),
              X, True, True),
    "CDF_Normal": (lambda M, P: M.CumulativeDistributionTransform(
        (ED if M is ED else TD).Normal(P(LOC4), P(np.abs(SCALE4)))), X, True, True),
}


def build(name):
    make = TRANSFORMS[name][0]
    return make(ED, E), make(TD, T)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_against_torch(name):
    e, t = build(name)
    _, x, has_inv, has_ladj = TRANSFORMS[name]
    ex, tx = E(x), T(x)
    ey, ty = e(ex), t(tx)
    assert_close(ey, ty, ember.float64, "forward")
    if has_inv:
        assert_close(e.inv(ey), t.inv(ty), ember.float64, "inverse", rtol=1e-7, atol=1e-9)
    if has_ladj:
        assert_close(e.log_abs_det_jacobian(ex, ey), t.log_abs_det_jacobian(tx, ty),
                     ember.float64, "log_abs_det_jacobian", rtol=1e-8, atol=1e-10)
        assert_close(e.inv.log_abs_det_jacobian(ey, ex), t.inv.log_abs_det_jacobian(ty, tx),
                     ember.float64, "inverse log_abs_det_jacobian", rtol=1e-8, atol=1e-10)
    else:
        with pytest.raises(NotImplementedError):
            e.log_abs_det_jacobian(ex, ey)
    assert e.domain.event_dim == t.domain.event_dim
    assert e.codomain.event_dim == t.codomain.event_dim
    assert bool(e.bijective) == bool(t.bijective)
    assert type(e.domain).__name__ == type(t.domain).__name__
    assert type(e.codomain).__name__ == type(t.codomain).__name__
    assert tuple(e.forward_shape(ex.shape)) == tuple(t.forward_shape(tx.shape))
    assert tuple(e.inverse_shape(ey.shape)) == tuple(t.inverse_shape(ty.shape))
    try:
        ts = t.sign
        if name == "Power_tensor":
            # torch 1.13 answers 1 even for negative exponents; ember gives the elementwise
            # sign of the derivative (see test_power_transform_sign).
            ts = T(np.sign(LOC4))
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            e.sign
    else:
        es = e.sign
        if isinstance(ts, torch.Tensor):
            assert_close(es, ts, ember.float64, "sign")
        else:
            assert es == ts
    # the image lies in the codomain
    assert bool(e.codomain.check(ey).all())
    assert repr(e).replace("ember.", "torch.") == repr(t)


@pytest.mark.parametrize("name", ["Exp", "Sigmoid", "Softplus", "Tanh", "Power",
                                  "Affine_tensors", "Inverse_Tanh", "CDF_Normal"])
def test_elementwise_log_abs_det_jacobian_is_log_derivative(name):
    e, _ = build(name)
    x = E(TRANSFORMS[name][1]).requires_grad_()
    y = e(x)
    (dy,) = ember.autograd.grad(y.sum(), [x])
    np.testing.assert_allclose(to_np(e.log_abs_det_jacobian(x, y)), np.log(np.abs(to_np(dy))),
                               rtol=1e-9, atol=1e-10)


def test_stick_breaking_log_abs_det_jacobian_by_autograd_jacobian():
    # The map onto the first K-1 coordinates of the simplex is square: compare with the
    # determinant of its Jacobian.
    t = ED.StickBreakingTransform()
    x0 = _rng.normal(size=(3,))
    jac = np.zeros((3, 3))
    for i in range(3):
        x = E(x0).requires_grad_()
        (g,) = ember.autograd.grad(t(x)[i], [x])
        jac[i] = to_np(g)
    x = E(x0)
    ladj = float(t.log_abs_det_jacobian(x, t(x)))
    assert ladj == pytest.approx(math.log(abs(np.linalg.det(jac))), rel=1e-9)


def test_float32_transforms():
    for name in ["Exp", "Sigmoid", "Tanh", "StickBreaking", "Affine_tensors", "Softplus"]:
        make = TRANSFORMS[name][0]
        e = make(ED, lambda a: E(a, ember.float32))
        t = make(TD, lambda a: T(a, torch.float32))
        x = TRANSFORMS[name][1]
        ex, tx = E(x, ember.float32), T(x, torch.float32)
        assert_close(e(ex), t(tx), ember.float32, name)
        assert_close(e.log_abs_det_jacobian(ex, e(ex)), t.log_abs_det_jacobian(tx, t(tx)),
                     ember.float32, name)


def test_sigmoid_clipping_and_extreme_inputs():
    e, t = ED.SigmoidTransform(), TD.SigmoidTransform()
    x = np.array([-200.0, -50.0, 0.0, 50.0, 200.0])
    for edt, tdt in [(ember.float32, torch.float32), (ember.float64, torch.float64)]:
        ey, ty = e(E(x, edt)), t(T(x, tdt))
        assert_close(ey, ty, edt, "clipped sigmoid")
        assert np.all(to_np(ey) > 0) and np.all(to_np(ey) < 1)
        assert_close(e.inv(ey), t.inv(ty), edt, "clipped logit")
        assert np.all(np.isfinite(to_np(e.log_abs_det_jacobian(E(x, edt), ey))))
    tanh = ED.TanhTransform()
    ladj = to_np(tanh.log_abs_det_jacobian(E(x), tanh(E(x))))
    assert np.all(np.isfinite(ladj))


def test_power_transform_sign():
    t = ED.PowerTransform(E([2.0, -0.5]))
    np.testing.assert_array_equal(to_np(t.sign), [1.0, -1.0])
    # a decreasing power map turns the cdf around: P(X^-1 <= v) = 1 - F(1/v)
    d = ED.TransformedDistribution(ED.Exponential(E([1.5])), [ED.PowerTransform(E([-1.0]))])
    v = np.array([0.5, 2.0])
    np.testing.assert_allclose(to_np(d.cdf(E(v[:, None]))).ravel(), np.exp(-1.5 / v), rtol=1e-12)


def test_cache():
    t = ED.ExpTransform(cache_size=1)
    x = E(X)
    y = t(x)
    assert t(x) is y
    assert t.inv(y) is x
    t0 = ED.ExpTransform()
    y0 = t0(x)
    assert t0(x) is not y0
    tanh = ED.TanhTransform(cache_size=1)
    big = E([30.0])
    assert float(tanh.inv(tanh(big))) == 30.0  # atanh(1.0) would be inf
    with pytest.raises(ValueError):
        ED.ExpTransform(cache_size=2)


def test_with_cache():
    assert ED.ExpTransform().with_cache(1)._cache_size == 1
    e = ED.ExpTransform(cache_size=1)
    assert e.with_cache(1) is e
    a = ED.AffineTransform(1.0, 2.0, event_dim=1).with_cache(1)
    assert a._cache_size == 1 and a.event_dim == 1 and a.loc == 1.0
    c = ED.ComposeTransform([ED.ExpTransform(), ED.AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in c.parts)
    assert ED.ExpTransform().inv.with_cache(1)._cache_size == 1
    for t in [ED.IndependentTransform(ED.ExpTransform(), 1), ED.ReshapeTransform((2,), (2, 1)),
              ED.PowerTransform(2.0), ED.StackTransform([ED.ExpTransform()]),
              ED.CatTransform([ED.ExpTransform()]),
              ED.CumulativeDistributionTransform(ED.Normal(0.0, 1.0))]:
        assert t.with_cache(1)._cache_size == 1

    class NoCache(ED.Transform):
        def __init__(self, k):
            super().__init__()

    with pytest.raises(NotImplementedError):
        NoCache(1).with_cache(1)


def test_inverse_identity_and_equality():
    t = ED.ExpTransform()
    assert t.inv.inv is t
    assert t.inv is t.inv  # held weakly but kept while alive
    assert ED.ExpTransform() == ED.ExpTransform()
    assert ED.ExpTransform() != ED.SigmoidTransform()
    assert ED.ExpTransform().inv == ED.ExpTransform().inv
    assert ED.AffineTransform(1.0, 2.0) == ED.AffineTransform(1.0, 2.0)
    assert ED.AffineTransform(1.0, 2.0) != ED.AffineTransform(1.0, 3.0)
    assert ED.AffineTransform(E([1.0]), E([2.0])) == ED.AffineTransform(E([1.0]), E([2.0]))
    assert ED.PowerTransform(2.0) == ED.PowerTransform(2.0)
    assert ED.ComposeTransform([ED.ExpTransform()]) == ED.ComposeTransform([ED.ExpTransform()])
    c = ED.ComposeTransform([ED.ExpTransform(), ED.SigmoidTransform()])
    assert c.inv.inv is c
    assert isinstance(ED.identity_transform, ED.ComposeTransform)
    r = weakref.ref(ED.ExpTransform().inv)
    assert r() is None or isinstance(r(), ED.Transform)


def test_event_dim_mismatch_raises():
    with pytest.raises(ValueError):
        ED.CorrCholeskyTransform().event_dim
    assert ED.StickBreakingTransform().event_dim == 1
    with pytest.raises(ValueError):
        ED.ReshapeTransform((4,), (2, 3))
    with pytest.raises(ValueError):
        ED.ReshapeTransform((4,), (2, 2)).forward_shape((3, 5))
    with pytest.raises(ValueError):
        ED.CorrCholeskyTransform().forward_shape((5,))
    with pytest.raises(ValueError):
        ED.CorrCholeskyTransform().inverse_shape((3, 4))
    with pytest.raises(ValueError):
        ED.IndependentTransform(ED.ExpTransform(), 2)(E([1.0]))
    with pytest.raises(ValueError):
        ED.CatTransform([ED.ExpTransform()], dim=0, lengths=[1])(E([1.0, 2.0]))
    with pytest.raises(ValueError):
        ED.StackTransform([ED.ExpTransform()], dim=0)(E([1.0, 2.0]))
    with pytest.raises(TypeError):
        ED.CatTransform([ED.ExpTransform(), "exp"])


def test_compose_domain_codomain_event_dims():
    c = ED.ComposeTransform([ED.ExpTransform(), ED.StickBreakingTransform()])
    tc = TD.ComposeTransform([TD.ExpTransform(), TD.StickBreakingTransform()])
    assert c.domain.event_dim == tc.domain.event_dim == 1
    assert c.codomain.event_dim == tc.codomain.event_dim == 1
    c = ED.ComposeTransform([ED.ReshapeTransform((4,), (2, 2)), ED.ExpTransform()])
    tc = TD.ComposeTransform([TD.ReshapeTransform((4,), (2, 2)), TD.ExpTransform()])
    assert c.domain.event_dim == tc.domain.event_dim
    assert c.codomain.event_dim == tc.codomain.event_dim
    x = E(X)
    assert_close(c.log_abs_det_jacobian(x, c(x)), tc.log_abs_det_jacobian(T(X), tc(T(X))),
                 ember.float64)


def test_transform_gradients_match_torch():
    for name in ["StickBreaking", "CorrCholesky", "Compose", "Tanh"]:
        make, x = TRANSFORMS[name][0], TRANSFORMS[name][1]
        e, t = make(ED, E), make(TD, T)
        ex, tx = E(x).requires_grad_(), T(x).requires_grad_()
        ey, ty = e(ex), t(tx)
        (ey.sum() + e.log_abs_det_jacobian(ex, ey).sum()).backward()
        (ty.sum() + t.log_abs_det_jacobian(tx, ty).sum()).backward()
        assert_close(ex.grad, tx.grad, ember.float64, name, rtol=1e-8, atol=1e-10)


# ---- constraints ----

CONSTRAINT_VALUES = [
    np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan, np.inf, -np.inf]),
    np.array([[0.2, 0.8], [0.5, 0.6], [1.0, 0.0], [-0.1, 1.1]]),
    np.array([0.0, 1.0, 2.0, 3.0, 2.5, -1.0]),
]
CONSTRAINTS = {
    "real": lambda C: C.real,
    "positive": lambda C: C.positive,
    "nonnegative": lambda C: C.nonnegative,
    "unit_interval": lambda C: C.unit_interval,
    "boolean": lambda C: C.boolean,
    "nonnegative_integer": lambda C: C.nonnegative_integer,
    "positive_integer": lambda C: C.positive_integer,
    "integer_interval": lambda C: C.integer_interval(0, 2),
    "greater_than": lambda C: C.greater_than(0.5),
    "greater_than_eq": lambda C: C.greater_than_eq(0.5),
    "less_than": lambda C: C.less_than(0.5),
    "interval": lambda C: C.interval(0.0, 1.0),
    "half_open_interval": lambda C: C.half_open_interval(0.0, 1.0),
    "real_vector": lambda C: C.real_vector,
    "simplex": lambda C: C.simplex,
    "one_hot": lambda C: C.one_hot,
    "multinomial": lambda C: C.multinomial(2),
    "independent_positive": lambda C: C.independent(C.positive, 1),
}


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("vi", range(len(CONSTRAINT_VALUES)))
def test_constraint_check_against_torch(name, vi):
    e, t = CONSTRAINTS[name](EC), CONSTRAINTS[name](TC)
    v = CONSTRAINT_VALUES[vi]
    if e.event_dim > v.ndim:
        pytest.skip("value has too few dims for the event")
    er, tr = e.check(E(v)), t.check(T(v))
    assert er.dtype == ember.bool
    np.testing.assert_array_equal(to_np(er), tr.numpy())
    assert e.event_dim == t.event_dim
    assert e.is_discrete == t.is_discrete
    assert repr(e) == repr(t)


MATRICES = {
    "pd": np.array([[2.0, 0.5], [0.5, 1.0]]),
    "psd_singular": np.array([[1.0, 1.0], [1.0, 1.0]]),
    "indefinite": np.array([[1.0, 2.0], [2.0, 1.0]]),
    "asymmetric": np.array([[1.0, 0.5], [0.0, 1.0]]),
    "lower_chol": np.array([[1.0, 0.0], [0.5, 2.0]]),
    "lower_negdiag": np.array([[1.0, 0.0], [0.5, -2.0]]),
    "corr_chol": np.array([[1.0, 0.0], [0.6, 0.8]]),
}


@pytest.mark.parametrize("cname", ["lower_triangular", "lower_cholesky", "corr_cholesky",
                                   "square", "symmetric", "positive_semidefinite",
                                   "positive_definite"])
def test_matrix_constraints_against_torch(cname):
    e, t = getattr(EC, cname), getattr(TC, cname)
    for mname, m in MATRICES.items():
        np.testing.assert_array_equal(to_np(e.check(E(m))), t.check(T(m)).numpy(),
                                      err_msg=mname)
    batch = np.stack([MATRICES["pd"], MATRICES["lower_chol"], MATRICES["corr_chol"]])
    np.testing.assert_array_equal(to_np(e.check(E(batch))), t.check(T(batch)).numpy())
    assert e.event_dim == t.event_dim == 2
    rect = np.ones((2, 3, 2))
    if cname in ("square", "symmetric", "positive_semidefinite", "positive_definite"):
        np.testing.assert_array_equal(to_np(e.check(E(rect))), t.check(T(rect)).numpy())


def test_cat_and_stack_constraints():
    v = np.array([[-1.0, 0.5, 2.0], [1.0, 1.5, -0.5]])
    e = EC.cat([EC.positive, EC.unit_interval], dim=1, lengths=[1, 2])
    t = TC.cat([TC.positive, TC.unit_interval], dim=1, lengths=[1, 2])
    np.testing.assert_array_equal(to_np(e.check(E(v))), t.check(T(v)).numpy())
    e = EC.stack([EC.positive, EC.real, EC.unit_interval], dim=1)
    t = TC.stack([TC.positive, TC.real, TC.unit_interval], dim=1)
    np.testing.assert_array_equal(to_np(e.check(E(v))), t.check(T(v)).numpy())
    assert e.event_dim == t.event_dim and e.is_discrete == t.is_discrete
    with pytest.raises(ValueError):
        EC.stack([EC.positive], dim=0).check(E(v))


def test_dependent_constraints():
    assert EC.is_dependent(EC.dependent)
    assert not EC.is_dependent(EC.real)
    with pytest.raises(ValueError):
        EC.dependent.check(E([1.0]))
    with pytest.raises(NotImplementedError):
        EC.dependent.event_dim
    d = EC.dependent(is_discrete=True, event_dim=1)
    assert d.is_discrete and d.event_dim == 1
    assert EC.is_dependent(ED.Uniform.support)
    assert ED.Uniform.support.event_dim == 0
    assert isinstance(ED.Uniform(0.0, 1.0).support, EC.Constraint)


def test_independent_constraint_too_few_dims():
    with pytest.raises(ValueError):
        EC.independent(EC.real, 2).check(E([1.0]))


def test_integer_constraints_on_integer_tensors():
    v = ember.tensor([0, 1, 2, 5], dtype=ember.int64)
    np.testing.assert_array_equal(to_np(EC.integer_interval(0, 2).check(v)),
                                  [True, True, True, False])
    np.testing.assert_array_equal(to_np(EC.boolean.check(v)), [True, True, False, False])


# ---- biject_to / transform_to ----

REGISTRY_CASES = {
    "real": (lambda C: C.real, (3,)),
    "positive": (lambda C: C.positive, (3,)),
    "nonnegative": (lambda C: C.nonnegative, (3,)),
    "greater_than": (lambda C: C.greater_than(1.5), (3,)),
    "greater_than_tensor": (lambda C: C.greater_than(
        (torch if C is TC else ember).tensor([0.0, 1.0, -1.0], dtype=(
            torch if C is TC else ember).float64)), (3,)),
    "less_than": (lambda C: C.less_than(-0.5), (3,)),
    "unit_interval": (lambda C: C.unit_interval, (3,)),
    "interval": (lambda C: C.interval(-2.0, 3.0), (3,)),
    "half_open_interval": (lambda C: C.half_open_interval(0.0, 5.0), (3,)),
    "simplex": (lambda C: C.simplex, (2, 3)),
    "real_vector": (lambda C: C.real_vector, (2, 3)),
    "independent_positive": (lambda C: C.independent(C.positive, 1), (2, 3)),
    "corr_cholesky": (lambda C: C.corr_cholesky, (2, 3)),
    "lower_cholesky": (lambda C: C.lower_cholesky, (2, 3, 3)),
    "cat": (lambda C: C.cat([C.positive, C.real, C.unit_interval], 0, [1, 1, 1]), (3,)),
    "stack": (lambda C: C.stack([C.positive, C.unit_interval], 0), (2, 4)),
}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(REGISTRY_CASES))
def test_registry_against_torch(registry, name):
    make, shape = REGISTRY_CASES[name]
    ec, tc = make(EC), make(TC)
    ereg, treg = getattr(ED, registry), getattr(TD, registry)
    try:
        tt = treg(tc)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ereg(ec)
        return
    et = ereg(ec)
    assert repr(et) == repr(tt)
    u = _rng.normal(size=shape)
    ey, ty = et(E(u)), tt(T(u))
    assert_close(ey, ty, ember.float64, "forward")
    assert bool(ec.check(ey).all())
    if registry == "biject_to":
        assert et.bijective
        assert_close(et.inv(ey), E(u), ember.float64, "round trip", rtol=1e-6, atol=1e-8)
        assert_close(et.log_abs_det_jacobian(E(u), ey), tt.log_abs_det_jacobian(T(u), ty),
                     ember.float64, "log_abs_det_jacobian")


def test_registry_errors_and_registration():
    with pytest.raises(NotImplementedError):
        ED.biject_to(EC.boolean)
    with pytest.raises(NotImplementedError):
        ED.biject_to(EC.lower_cholesky)
    with pytest.raises(TypeError):
        ED.biject_to.register(int, lambda c: ED.ExpTransform())
    from ember.distributions.constraint_registry import ConstraintRegistry
    reg = ConstraintRegistry()

    @reg.register(EC.positive)
    def _pos(constraint):
        return ED.SoftplusTransform()

    assert isinstance(reg(EC.greater_than(3.0)), ED.SoftplusTransform)
    with pytest.raises(NotImplementedError):
        reg(EC.real)


def test_transformed_distribution_from_biject_to():
    # A "positive" reparameterisation as in Pyro: log_prob via biject_to(support).
    base = ED.Normal(E([0.2, -0.4]), E([1.0, 0.5]))
    d = ED.TransformedDistribution(base, [ED.biject_to(EC.positive)])
    tb = TD.Normal(T([0.2, -0.4]), T([1.0, 0.5]))
    td = TD.TransformedDistribution(tb, [TD.biject_to(TC.positive)])
    v = np.array([0.5, 3.0])
    assert_close(d.log_prob(E(v)), td.log_prob(T(v)), ember.float64)
