"""ember.optim.NAdam (torch.optim.NAdam's API and update)."""

import ember
from ember import _C
from ember.optim.adam import _check_adam_args
from ember.optim.optimizer import Optimizer, _check_sparse

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""Implements NAdam (Adam with Nesterov momentum); torch.optim.NAdam's arguments (plus
    ``maximize``, default False)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, foreach=None, *, maximize=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError("Invalid momentum_decay value: {}".format(momentum_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, foreach=foreach)
        if maximize:
            defaults["maximize"] = True
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        loss = self._run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                params, grads, exp_avgs, exp_avg_sqs, mu_products, steps = [], [], [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    _check_sparse(p, "NAdam")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = ember.tensor(0.0)
                        state["mu_product"] = ember.tensor(1.0)
                        state["exp_avg"] = ember.zeros_like(p)
                        state["exp_avg_sq"] = ember.zeros_like(p)
                    params.append(p)
                    grads.append(p.grad)
                    exp_avgs.append(state["exp_avg"])
                    exp_avg_sqs.append(state["exp_avg_sq"])
                    mu_products.append(state["mu_product"])
                    steps.append(state["step"])
                beta1, beta2 = group["betas"]
                _C._optim.nadam_step(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps,
                                     lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"],
                                     weight_decay=group["weight_decay"],
                                     momentum_decay=group["momentum_decay"],
                                     maximize=group.get("maximize", False))
        return loss
