"""``ExponentialFamily``: distributions whose density is
``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))`` (as torch.distributions.ExponentialFamily).
"""

import ember
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _sum_rightmost

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Adds the natural parameters, the log normalizer ``F`` and the carrier measure ``k``;
    entropy and KL between members of one family follow from them by autograd.
    """

    @property
    def _natural_params(self):
        """The natural parameters ``theta``, one tensor each."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """``F(theta)``."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """``E[k(x)]``."""
        raise NotImplementedError

    def entropy(self):
        """Entropy through the Bregman divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = ember.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - _sum_rightmost(np_ * g, len(self.event_shape))
        return result
