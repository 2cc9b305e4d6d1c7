"""ember.optim.Adamax (torch.optim.Adamax's API and update)."""

import ember
from ember import _C
from ember.optim.optimizer import Optimizer, _check_sparse

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Implements Adamax (Adam with the infinity norm); torch.optim.Adamax's arguments."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)

    def step(self, closure=None):
        """Performs a single optimization step (``closure`` re-evaluates the loss)."""
        loss = self._run_closure(closure)
        with ember.no_grad():
            for group in self.param_groups:
                params, grads, exp_avgs, exp_infs, steps = [], [], [], [], []
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    _check_sparse(p, "Adamax")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = ember.tensor(0.0)
                        state["exp_avg"] = ember.zeros_like(p)
                        state["exp_inf"] = ember.zeros_like(p)
                    params.append(p)
                    grads.append(p.grad)
                    exp_avgs.append(state["exp_avg"])
                    exp_infs.append(state["exp_inf"])
                    steps.append(state["step"])
                beta1, beta2 = group["betas"]
                _C._optim.adamax_step(params, grads, exp_avgs, exp_infs, steps, lr=group["lr"],
                                      beta1=beta1, beta2=beta2, eps=group["eps"],
                                      weight_decay=group["weight_decay"],
                                      maximize=group["maximize"])
        return loss
