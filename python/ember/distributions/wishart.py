"""The Wishart distribution over positive-definite matrices."""

import math
import warnings
from numbers import Number

import ember
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.multivariate_normal import _precision_to_scale_tril
from ember.distributions.utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """Multivariate digamma: ``sum_i digamma(x - i/2)`` for ``i < p``."""
    offsets = ember.arange(p, dtype=x.dtype, device=x.device) / 2
    return ember.digamma(x.unsqueeze(-1) - offsets.expand(tuple(x.shape) + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=ember.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart with ``df`` degrees of freedom and scale matrix given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``; samples by the Bartlett
    decomposition.
    """

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.Size(ember.broadcast_shapes(tuple(param.shape[:-2]),
                                                            tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        # df > p - 1 depends on the event size: a per-instance table.
        self.arg_constraints = dict(type(self).arg_constraints)
        self.arg_constraints["df"] = constraints.greater_than(p - 1)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]

        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._make_chi2()

    def _make_chi2(self):
        # Bartlett decomposition: the squared diagonal of the factor is Chi2(df - i).
        p = self._event_shape[-1]
        offsets = ember.arange(p, dtype=self._unbroadcasted_scale_tril.dtype,
                               device=self._unbroadcasted_scale_tril.device)
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1) - offsets.expand(
            tuple(self._batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        cov_shape = tuple(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new.arg_constraints = self.arg_constraints
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._make_chi2()
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return ember.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    def _df_matrix(self):
        # df is 0-dim when given as a number: expand it over the batch first.
        return self.df.expand(tuple(self._batch_shape)).reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, ember.full_like(factor, float("nan")), factor)
        factor = factor.expand(tuple(self._batch_shape))
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(0, -2, -1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=ember.Size()):
        p = self._event_shape[-1]
        # A = lower triangular: sqrt(Chi2(df - i)) on the diagonal, N(0, 1) below it.
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        lead = tuple(ember.Size(sample_shape) + self._batch_shape)
        rows, cols = ember.tril_indices(p, p, offset=-1, device=diag.device)
        below = ember.zeros(lead + (p, p), dtype=diag.dtype, device=diag.device)
        below[..., rows, cols] = ember.randn(lead + (p * (p - 1) // 2,), dtype=diag.dtype,
                                             device=diag.device)
        noise = below + ember.diag_embed(diag)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """Bartlett samples; draws that come out singular (possible for df near p - 1) are
        redrawn up to ``max_try_correction`` times (default 10).
        """
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                ok = self.support.check(sample_new)
                if self._batch_shape:
                    ok = ok.amin(self._batch_dims)
                replace = is_singular & ok
                mask = replace.reshape(tuple(replace.shape) + (1,) * (
                    sample.dim() - replace.dim()))
                sample = ember.where(mask, sample_new, sample)
                is_singular = is_singular & ~replace
                if not bool(is_singular.any()):
                    break
            else:
                warnings.warn("Singular samples occurred after "
                              f"{max_try_correction} tries of correction.")
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + L.diagonal(0, -2, -1).log().sum(-1))
                - ember.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value)[1]
                - ember.cholesky_solve(value, L).diagonal(0, -2, -1).sum(-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + L.diagonal(0, -2, -1).log().sum(-1))
                + ember.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-ember.linalg.slogdet(-2 * x)[1] + _LOG_2 * p)
                + ember.mvlgamma(y + (p + 1) / 2, p))
