"""ember.optim.AdamW (torch.optim.AdamW's API and update: decoupled weight decay)."""

from ember.optim.adam import _adam_family_step, _check_adam_args
from ember.optim.optimizer import Optimizer

__all__ = ["AdamW"]


class AdamW(Optimizer):
    r"""Implements AdamW (Loshchilov & Hutter); torch.optim.AdamW's arguments."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        foreach=foreach, maximize=maximize, capturable=capturable)
        if differentiable:  # accepted for newer torch code; the update is not differentiable
            defaults["differentiable"] = True
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        return _adam_family_step(self, closure, "AdamW", True)
