"""The von Mises (circular normal) distribution."""

import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Polynomial approximations of the exponentially scaled modified Bessel functions
# I0(x) e^-x and I1(x) e^-x (Abramowitz and Stegun 9.8.1-9.8.4), in Horner form.
_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
             0.02635537, -0.01647633, 0.00392377]
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
             -0.02895312, 0.01787654, -0.00420059]


def _horner(y, coefs):
    result = ember.full_like(y, coefs[-1])
    for c in reversed(coefs[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """``log I_order(x)`` for ``x > 0`` and order 0 or 1."""
    if order not in (0, 1):
        raise ValueError(f"_log_modified_bessel_fn: order must be 0 or 1, got {order}")
    # |x| < 3.75: I(x) = poly((x / 3.75)^2) (times x for order 1).
    y = x / 3.75
    y = y * y
    small = _horner(y, _I0_SMALL if order == 0 else _I1_SMALL)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    # x >= 3.75: I(x) = e^x / sqrt(x) * poly(3.75 / x).
    y = 3.75 / x
    large = x - 0.5 * x.log() + _horner(y, _I0_LARGE if order == 0 else _I1_LARGE).log()
    return ember.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    # Best and Fisher (1979): wrapped-Cauchy proposal with acceptance test.
    done = ember.zeros(tuple(x.shape), dtype=ember.bool, device=loc.device)
    while not bool(done.all()):
        u = ember.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = ember.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = ember.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Von Mises distribution on the circle, with mean direction ``loc`` and
    ``concentration``; samples lie in [-pi, pi).
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        event_shape = ember.Size()
        super().__init__(batch_shape, event_shape, validate_args)

    @lazy_property
    def _proposal_r(self):
        # Computed in float64: rho loses all precision for small concentration in float32.
        kappa = self.concentration.detach().to(ember.float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        # Tiny concentration: the proposal degenerates to the uniform (r -> 1/kappa).
        r = ember.where(kappa < 1e-5, 1 / kappa, r)
        return r.to(self.loc.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ember.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - \
            _log_modified_bessel_fn(self.concentration, order=0)

    def sample(self, sample_shape=ember.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with ember.no_grad():
            x = ember.zeros(shape, dtype=self.loc.dtype, device=self.loc.device)
            return _rejection_sample(self.loc.detach(), self.concentration.detach(),
                                     self._proposal_r, x)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(VonMises, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        # Circular variance 1 - I1(k) / I0(k).
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
