"""The LKJ distribution over Cholesky factors of correlation matrices."""

import math

import ember
from ember.distributions import constraints
from ember.distributions.beta import Beta
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ(concentration) over ``dim x dim`` correlation matrices, on their lower Cholesky
    factors (Lewandowski, Kurowicka and Joe, 2009); sampled by the onion method.
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = ember.Size((dim, dim))
        # Onion method: row i >= 1 of the factor has off-diagonal squared norm
        # y_i ~ Beta(i/2, conc + (d-2)/2 - (i-1)/2). (Row 0 has no off-diagonal part; its
        # entry is unused.) PyTorch 1.13 uses i - 1/2 for the first parameter, which skews
        # the correlations of rows i >= 2; this follows Lewandowski et al. (2009), Sec. 3.2.
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = ember.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = 0.5 * offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(batch_shape + ember.Size((self.dim,)))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            u_normal = ember.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            norm = u_normal.square().sum(-1, keepdim=True).sqrt()
            # the first row has no off-diagonal entries: 0 / 0, set to zero
            u_hypersphere = ember.where(norm > 0, u_normal / norm, ember.zeros_like(u_normal))
            w = ember.sqrt(y) * u_hypersphere
            tiny = ember.finfo(w.dtype).tiny
            diag_elems = ember.clamp(1 - ember.sum(w ** 2, dim=-1), min=tiny).sqrt()
            return w + ember.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(0, -1, -2)[..., 1:]
        order = ember.arange(2, self.dim + 1, device=self.concentration.device).to(
            self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = ember.sum(order * diag_elems.log(), dim=-1)
        # The normalizing constant (Lewandowski et al., p. 1999), with mvlgamma's pi term
        # (d-1)(d-2)/4 log(pi) topped up to d(d-1)/4 log(pi).
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ember.lgamma(alpha) * dm1
        numerator = ember.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
