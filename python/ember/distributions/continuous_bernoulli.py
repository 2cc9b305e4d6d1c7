"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019)."""

import math
from numbers import Number

import ember
import ember.nn.functional as F
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import (broadcast_all, clamp_probs, lazy_property,
                                       logits_to_probs, probs_to_logits)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Density proportional to ``p^x (1-p)^(1-x)`` on [0, 1]. Near ``p = 1/2`` (inside
    ``lims``) the normalizer and moments switch to Taylor expansions to stay accurate.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            self.probs, = broadcast_all(probs)
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            self.logits, = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = ember.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = ember.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    def _outside_unstable_region(self):
        return ember.le(self.probs, self._lims[0]) | ember.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        return ember.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * ember.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """Log of the normalizing constant as a function of ``probs``."""
        cut_probs = self._cut_probs()
        below_half = ember.where(ember.le(cut_probs, 0.5), cut_probs,
                                 ember.zeros_like(cut_probs))
        above_half = ember.where(ember.ge(cut_probs, 0.5), cut_probs,
                                 ember.ones_like(cut_probs))
        log_norm = ember.log(ember.abs(ember.log1p(-cut_probs) - ember.log(cut_probs))) - \
            ember.where(ember.le(cut_probs, 0.5), ember.log1p(-2.0 * below_half),
                        ember.log(2.0 * above_half - 1.0))
        x = ember.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + \
            1.0 / (ember.log1p(-cut_probs) - ember.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * ember.pow(x, 2)) * x
        return ember.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return ember.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / ember.pow(1.0 - 2.0 * cut_probs, 2) + \
            1.0 / ember.pow(ember.log1p(-cut_probs) - ember.log(cut_probs), 2)
        x = ember.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=ember.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with ember.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=ember.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + \
            self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (ember.pow(cut_probs, value) * ember.pow(1.0 - cut_probs, 1.0 - value)
                + cut_probs - 1.0) / (2.0 * cut_probs - 1.0)
        unbounded_cdfs = ember.where(self._outside_unstable_region(), cdfs, value)
        return ember.where(ember.le(value, 0.0), ember.zeros_like(value),
                           ember.where(ember.ge(value, 1.0), ember.ones_like(value),
                                       unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return ember.where(
            self._outside_unstable_region(),
            (ember.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0))
             - ember.log1p(-cut_probs)) / (ember.log(cut_probs) - ember.log1p(-cut_probs)),
            value)

    def entropy(self):
        log_probs0 = ember.log1p(-self.probs)
        log_probs1 = ember.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """Log of the normalizing constant as a function of the natural parameter."""
        out_unst_reg = ember.le(x, self._lims[0] - 0.5) | ember.gt(x, self._lims[1] - 0.5)
        cut_nat_params = ember.where(out_unst_reg, x,
                                     (self._lims[0] - 0.5) * ember.ones_like(x))
        log_norm = ember.log(ember.abs(ember.exp(cut_nat_params) - 1.0)) - \
            ember.log(ember.abs(cut_nat_params))
        taylor = 0.5 * x + ember.pow(x, 2) / 24.0 - ember.pow(x, 4) / 2880.0
        return ember.where(out_unst_reg, log_norm, taylor)
